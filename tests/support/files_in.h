/* files_in.h: a file named inside a folder, written or looked for (tests only). */
#ifndef RD_TEST_FILES_IN_H
#define RD_TEST_FILES_IN_H

#include "rd_test.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

/** True when dir/name exists (a file or a folder). */
static inline bool rd_test_exists_in(const char *dir, const char *name)
{
    char *path = rd_test_join(dir, name);
    struct stat st;
    bool found = path && stat(path, &st) == 0;
    free(path);
    return found;
}

/** Writes text to dir/name (replacing it); a CUnit fatal failure if it cannot. */
static inline void rd_test_write_in(const char *dir, const char *name, const char *text)
{
    char *path = rd_test_join(dir, name);
    CU_ASSERT_PTR_NOT_NULL_FATAL(path);
    rd_test_write_text(path, text);
    free(path);
}

/** The whole of dir/name in a malloc'ed buffer (NUL-terminated, length in *len unless len is NULL); NULL if it
    cannot be read. */
static inline char *rd_test_read_in(const char *dir, const char *name, size_t *len)
{
    char *path = rd_test_join(dir, name);
    char *text = path ? rd_test_read_file(path, len) : NULL;
    free(path);
    return text;
}

/** Writes len bytes of buf to path (replacing it); a CUnit fatal failure if it cannot. */
static inline void rd_test_write_bytes(const char *path, const void *buf, size_t len)
{
    FILE *f = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fwrite(buf, 1, len, f);
    fclose(f);
}

/** Asserts at file:line that every name of names (NULL-terminated) exists in dir; failures name the file. */
static inline void rd_test_all_in_at(const char *file, int line, const char *dir, const char *const *names)
{
    for (int i = 0; names[i]; i++) {
        char cond[512];
        snprintf(cond, sizeof cond, "%s exists in the folder", names[i]);
        CU_assertImplementation(rd_test_exists_in(dir, names[i]), (unsigned)line, cond, file, "", CU_FALSE);
    }
}

/** RD_ASSERT_ALL_IN(snap, "report.json", "golden/x.npy"): each file exists in the folder snap. */
#define RD_ASSERT_ALL_IN(dir, ...) \
    rd_test_all_in_at(__FILE__, __LINE__, (dir), (const char *const[]){__VA_ARGS__, NULL})

#endif
