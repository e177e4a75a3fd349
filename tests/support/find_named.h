/*
 * find_named.h: looking an element of a result array up by one of its string members, and requiring that a
 * load or a parse succeeded, naming the input when it did not (tests only).
 */
#ifndef RD_TEST_FIND_NAMED_H
#define RD_TEST_FIND_NAMED_H

#include "rknn_diag/simulator.h"

#include <CUnit/CUnit.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/** The first of the n elements of size bytes at base whose string member at name_offset (a char pointer; NULL
    matches nothing) equals name, or NULL. */
static inline const void *rd_test_find_named(const void *base, size_t n, size_t size, size_t name_offset,
                                             const char *name)
{
    for (size_t i = 0; i < n; i++) {
        const char *elem = (const char *)base + i * size;
        const char *member;
        memcpy(&member, elem + name_offset, sizeof member);
        if (member && strcmp(member, name) == 0)
            return elem;
    }
    return NULL;
}

/** RD_FIND_NAMED(rd_rknn_node, g->nodes, g->n_nodes, name, "conv1"): the first node named "conv1", or NULL. */
#define RD_FIND_NAMED(type, array, n, member, key) \
    ((const type *)rd_test_find_named((array), (n), sizeof(type), offsetof(type, member), (key)))

/** Fails the test (CUnit's fatal assert) unless status, what loading or parsing what returned, is RD_OK, after
    printing what and the error message msg. */
static inline void rd_test_require_ok(rd_status status, const char *what, const char *msg)
{
    if (status != RD_OK)
        fprintf(stderr, "%s: %s\n", what, msg);
    CU_ASSERT_EQUAL_FATAL(status, RD_OK);
}

#endif
