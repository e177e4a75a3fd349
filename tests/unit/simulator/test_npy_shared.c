/*
 * test_npy_shared.c: the .npy files under ../shared/models, all written by numpy: every
 * inputs/NAME.npy and golden/SET/NAME.npy. Each loads; its dtype and shape match
 * golden/SET/index.json; and rd_npy_write reproduces the file byte for byte, which checks the
 * writer against numpy's output.
 */
#include "rd_test.h"
#include "rknn_diag/simulator.h"

#include <cjson/cJSON.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Loads path, checks the byte-exact rewrite; returns the tensor (caller finalises) or false. */
static bool load_and_rewrite(const char *path, rd_tensor *t)
{
    rd_error err;
    if (rd_npy_load(path, t, &err) != RD_OK) {
        fprintf(stderr, "\n%s\n", err.msg);
        CU_FAIL("shared .npy does not load");
        return false;
    }
    size_t len = 0;
    void *file = rd_test_read_file(path, &len);
    void *img = NULL;
    size_t img_len = 0;
    CU_ASSERT_EQUAL(rd_npy_write(t, &img, &img_len, &err), RD_OK);
    bool same = file && img && len == img_len && memcmp(file, img, len) == 0;
    if (!same)
        fprintf(stderr, "\n%s: rd_npy_write gives %zu bytes that differ from the file's %zu\n", path, img_len, len);
    CU_ASSERT_TRUE(same);
    free(file);
    free(img);
    return true;
}

/* The files of ../shared that match pattern (relative to it); there must be some. */
static void shared_glob(const char *pattern, glob_t *g)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", rd_test_shared_dir(), pattern);
    int rc = glob(path, 0, NULL, g);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
}

static void test_inputs_load(void)
{
    glob_t g;
    shared_glob("models/*/inputs/*.npy", &g);
    CU_ASSERT_TRUE(g.gl_pathc > 0);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        rd_tensor t;
        if (!load_and_rewrite(g.gl_pathv[i], &t))
            continue;
        CU_ASSERT_TRUE(t.rank >= 1);
        CU_ASSERT_TRUE(rd_tensor_numel(&t) > 0);
        rd_tensor_fini(&t);
    }
    globfree(&g);
}

/* One golden set: every entry of index.json against its file. Returns the number of files checked.
 */
static size_t check_golden_set(const char *index_path)
{
    size_t len = 0;
    char *text = rd_test_read_file(index_path, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    cJSON *root = cJSON_ParseWithLength(text, len);
    free(text);
    CU_ASSERT_TRUE_FATAL(cJSON_IsArray(root));
    char dir[4200];
    snprintf(dir, sizeof dir, "%s", index_path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    size_t checked = 0;
    const cJSON *entry;
    cJSON_ArrayForEach(entry, root)
    {
        const cJSON *file = cJSON_GetObjectItemCaseSensitive(entry, "file");
        const cJSON *dtype = cJSON_GetObjectItemCaseSensitive(entry, "dtype");
        const cJSON *shape = cJSON_GetObjectItemCaseSensitive(entry, "shape");
        CU_ASSERT_TRUE_FATAL(cJSON_IsString(file) && cJSON_IsString(dtype) && cJSON_IsArray(shape));
        char path[8500];
        snprintf(path, sizeof path, "%s/%s", dir, file->valuestring);
        rd_tensor t;
        if (!load_and_rewrite(path, &t))
            continue;
        bool ok = strcmp(rd_dtype_name(t.dtype), dtype->valuestring) == 0 && t.rank == cJSON_GetArraySize(shape);
        for (int d = 0; ok && d < t.rank; d++)
            ok = t.dims[d] == (int64_t)cJSON_GetArrayItem(shape, d)->valuedouble;
        if (!ok) {
            char buf[128];
            fprintf(stderr, "\n%s: %s %s does not match index.json\n", path, rd_dtype_name(t.dtype),
                    rd_shape_str(&t, buf, sizeof buf));
        }
        CU_ASSERT_TRUE(ok);
        rd_tensor_fini(&t);
        checked++;
    }
    cJSON_Delete(root);
    return checked;
}

static void test_golden_match_index(void)
{
    glob_t g;
    shared_glob("models/*/golden/*/index.json", &g);
    size_t checked = 0;
    for (size_t i = 0; i < g.gl_pathc; i++)
        checked += check_golden_set(g.gl_pathv[i]);
    globfree(&g);
    CU_ASSERT_TRUE(checked > 0);
}

RD_TEST_REGISTER(register_npy_shared)
{
    rd_test_shared_dir(); /* skips the binary when ../shared is absent */
    RD_SUITE("npy_shared", {"model inputs load", test_inputs_load},
             {"golden dumps match index.json", test_golden_match_index});
}
