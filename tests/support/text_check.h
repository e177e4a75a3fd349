/* text_check.h: asserting that a text holds each of several texts, with the caller's line on failure (tests only). */
#ifndef RD_TEST_TEXT_CHECK_H
#define RD_TEST_TEXT_CHECK_H

#include <CUnit/CUnit.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/** A NULL-terminated list of texts: RD_TEXTS("layers", "probs"). */
#define RD_TEXTS(...) ((const char *const[]){__VA_ARGS__, NULL})

/** Asserts at file:line that what (named name in a failure; NULL fails) holds every text of texts (NULL: none);
    returns whether all were found. */
static inline bool rd_test_has_texts_at(const char *file, int line, const char *name, const char *what,
                                        const char *const *texts)
{
    bool all = true;
    for (int i = 0; texts && texts[i]; i++) {
        char cond[512];
        snprintf(cond, sizeof cond, "%s holds \"%s\"", name, texts[i]);
        bool found = what && strstr(what, texts[i]) != NULL;
        CU_assertImplementation(found, (unsigned)line, cond, file, "", CU_FALSE);
        all = all && found;
    }
    return all;
}

/** RD_ASSERT_HAS_TEXTS(errs, "4 ignored", "InputOperator:x"): each text stands somewhere in errs. */
#define RD_ASSERT_HAS_TEXTS(what, ...) rd_test_has_texts_at(__FILE__, __LINE__, #what, (what), RD_TEXTS(__VA_ARGS__))

#endif
