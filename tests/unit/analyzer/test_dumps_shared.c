/*
 * test_dumps_shared.c: every name of ../shared/rknn/dump_names.txt (file names written by librknnrt,
 * from public RKNN issue logs), read in place, parses to the fields listed here, and formats back to
 * the same file name.
 */
#include "dumps.h"
#include "find_named.h"
#include "rd_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct expected {
    int index;
    const char *op_type, *name;
    int rank;
    int64_t dims[4];
    rd_dtype dtype;
} expected;

static const expected want[] = {
    {0, "InputOperator", "input", 4, {1, 3, 224, 224}, RD_DT_U8},
    {25, "ConvClip", "385", 4, {1, 384, 14, 14}, RD_DT_F32},
    {53, "Conv", "464", 4, {1, 1280, 1, 1}, RD_DT_F32},
    {54, "Conv", "output_mm", 4, {1, 1000, 1, 1}, RD_DT_F32},
    {55, "Reshape", "output", 2, {1, 1000}, RD_DT_F32},
    {56, "OutputOperator", "output", 2, {1, 1000}, RD_DT_F32},
};

static void check_line(const char *line, const expected *w)
{
    an_dump_name d;
    rd_error err;
    rd_test_require_ok(an_dump_name_parse(line, &d, &err), line, err.msg);
    CU_ASSERT_EQUAL(d.index, w->index);
    CU_ASSERT_STRING_EQUAL(d.op_type, w->op_type);
    CU_ASSERT_STRING_EQUAL(d.name, w->name);
    CU_ASSERT_EQUAL_FATAL(d.rank, w->rank);
    for (int i = 0; i < w->rank; i++)
        CU_ASSERT_EQUAL(d.dims[i], w->dims[i]);
    CU_ASSERT_EQUAL(d.dtype, w->dtype);
    CU_ASSERT_FALSE(d.is_txt);
    char buf[1200];
    CU_ASSERT(an_dump_name_format(&d, buf, sizeof buf) > 0);
    const char *base = strrchr(line, '/');
    CU_ASSERT_STRING_EQUAL(buf, base ? base + 1 : line);
}

static void test_shared_names(void)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/rknn/dump_names.txt", rd_test_shared_dir());
    size_t len = 0;
    char *text = rd_test_read_file(path, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    char *copy = malloc(len + 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(copy);
    memcpy(copy, text, len);
    copy[len] = '\0';
    free(text);
    size_t n = 0;
    for (char *line = copy; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        size_t l = strlen(line);
        if (l && line[l - 1] == '\r')
            line[l - 1] = '\0';
        if (line[0] && line[0] != '#') {
            CU_ASSERT_FATAL(n < sizeof want / sizeof want[0]);
            check_line(line, &want[n++]);
        }
        line = nl ? nl + 1 : NULL;
    }
    CU_ASSERT_EQUAL(n, sizeof want / sizeof want[0]);
    free(copy);
}

RD_TEST_REGISTER(register_dumps_shared)
{
    RD_SUITE("dumps_shared", {"names of dump_names.txt", test_shared_names});
}
