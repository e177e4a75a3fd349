/* free_all.h: freeing the many buffers a test made (paths, texts) in one line (tests only). */
#ifndef RD_TEST_FREE_ALL_H
#define RD_TEST_FREE_ALL_H

#include <stddef.h>
#include <stdlib.h>

static inline void rd_test_free_each(void *const *ptrs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(ptrs[i]);
}

/** RD_FREE_ALL(model, image, dir): free() on each, in that order (NULLs are fine). */
#define RD_FREE_ALL(...) \
    rd_test_free_each((void *const[]){__VA_ARGS__}, sizeof((void *const[]){__VA_ARGS__}) / sizeof(void *))

#endif
