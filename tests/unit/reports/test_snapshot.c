/* test_snapshot.c: snapshot text files (float32 round trip), file stems, map_name_to_file.txt, result builders. */
#include "rd_test.h"
#include "rknn_diag/reports.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void test_values_round_trip(void)
{
    char *dir = rd_test_tmpdir("snapshot");
    char path[1024];
    snprintf(path, sizeof path, "%s/t.txt", dir);
    const float v[] = {0.1f, -1e-5f, 3.4028235e38f, 1e-45f, 0.0f, -0.0f, 1.0f, 16777216.0f, 0.3333333f, NAN, INFINITY};
    const int64_t n = sizeof v / sizeof v[0];
    rd_error err = {0};
    CU_ASSERT_EQUAL_FATAL(rd_snapshot_txt_save(path, v, n, &err), RD_OK);
    size_t len;
    char *text = rd_test_read_file(path, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_EQUAL(
        strncmp(text, "0.1\n-1e-05\n3.4028235e+38\n1.4013e-45\n0\n-0\n1\n16777216\n0.33333331\nnan\ninf\n", len), 0);
    free(text);
    float *back;
    int64_t nb;
    CU_ASSERT_EQUAL_FATAL(rd_snapshot_txt_load(path, &back, &nb, &err), RD_OK);
    CU_ASSERT_EQUAL(nb, n);
    for (int64_t i = 0; i < n && i < nb; i++)
        CU_ASSERT(isnan(v[i]) ? isnan(back[i]) : memcmp(&v[i], &back[i], sizeof v[i]) == 0);
    free(back);
    /* numpy's np.savetxt default and blank lines read too; garbage names the line */
    FILE *f = fopen(path, "w");
    fputs("1.000000000000000000e+00\n\n-2.5\n# comment\n", f);
    fclose(f);
    CU_ASSERT_EQUAL(rd_snapshot_txt_load(path, &back, &nb, &err), RD_OK);
    CU_ASSERT_EQUAL(nb, 2);
    free(back);
    f = fopen(path, "w");
    fputs("1.0\n2.0 3.0\n", f);
    fclose(f);
    CU_ASSERT_EQUAL(rd_snapshot_txt_load(path, &back, &nb, &err), RD_E_PARSE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "t.txt:2:"));
    unlink(path);
    snprintf(path, sizeof path, "%s/t.txt.tmp", dir);
    CU_ASSERT_NOT_EQUAL(access(path, F_OK), 0); /* no temporary left behind */
    free(dir);
}

static void test_file_stems(void)
{
    char b[64];
    rd_snapshot_file_stem("/FC/Gemm_output_0:0", b, sizeof b);
    CU_ASSERT_STRING_EQUAL(b, "_FC_Gemm_output_0_0");
    rd_snapshot_file_stem("..", b, sizeof b);
    CU_ASSERT_STRING_EQUAL(b, "_..");
    rd_snapshot_file_stem("", b, sizeof b);
    CU_ASSERT_STRING_EQUAL(b, "_");
    rd_snapshot_file_stem("a b\\c*d", b, sizeof b);
    CU_ASSERT_STRING_EQUAL(b, "a_b_c_d");
}

static void test_name_map(void)
{
    char *dir = rd_test_tmpdir("namemap");
    char path[1024];
    snprintf(path, sizeof path, "%s/map_name_to_file.txt", dir);
    rd_name_map m = {0}, back = {0};
    rd_error err = {0};
    CU_ASSERT_EQUAL(rd_name_map_add(&m, "conv/out:0", "golden/conv_out_0.txt", "simulator/conv_out_0.txt", NULL, &err),
                    RD_OK);
    CU_ASSERT_EQUAL(rd_name_map_add(&m, "odd\tname\nwith\\escapes", "-", NULL, NULL, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(rd_name_map_save(&m, path, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(rd_name_map_load(path, &back, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(back.n, 2);
    CU_ASSERT_STRING_EQUAL(back.entries[0].simulator, "simulator/conv_out_0.txt");
    CU_ASSERT_PTR_NULL(back.entries[0].runtime);
    CU_ASSERT_STRING_EQUAL(back.entries[1].name, "odd\tname\nwith\\escapes");
    CU_ASSERT_STRING_EQUAL(back.entries[1].golden, "-");
    CU_ASSERT_PTR_NULL(back.entries[1].simulator);
    rd_name_map_fini(&back);
    const char *bad = "a\tb\tc\n";
    CU_ASSERT_EQUAL(rd_name_map_parse(bad, strlen(bad), "m.txt", &back, &err), RD_E_PARSE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "m.txt:1: expected 4"));
    const char *bad2 = "# c\na\\q\tb\tc\td\n";
    CU_ASSERT_EQUAL(rd_name_map_parse(bad2, strlen(bad2), "m.txt", &back, &err), RD_E_PARSE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "m.txt:2:"));
    CU_ASSERT_EQUAL(back.n, 0);
    rd_name_map_fini(&m);
    unlink(path);
    free(dir);
}

static void test_result_builders(void)
{
    rd_result r;
    rd_result_init(&r);
    rd_error err = {0};
    for (int i = 0; i < 40; i++) {
        char name[16];
        snprintf(name, sizeof name, "t%d", i);
        rd_layer_result *l;
        CU_ASSERT_EQUAL(rd_result_add_layer(&r, name, "Conv", &l, &err), RD_OK);
        CU_ASSERT_FALSE(l->groups[0].present);
        CU_ASSERT(isnan(l->groups[0].mean.cos));
    }
    CU_ASSERT_EQUAL(r.n_layers, 40);
    CU_ASSERT_EQUAL(rd_result_find_layer(&r, "t33"), 33);
    CU_ASSERT_EQUAL(rd_result_find_layer(&r, "nope"), -1);
    CU_ASSERT_EQUAL(rd_result_set_config(&r, "dtype", "w8a8", &err), RD_OK);
    CU_ASSERT_EQUAL(rd_result_set_config(&r, "dtype", "fp16", &err), RD_OK);
    CU_ASSERT_EQUAL(rd_result_set_config(&r, "target", NULL, &err), RD_OK);
    CU_ASSERT_EQUAL(r.n_config, 2);
    CU_ASSERT_STRING_EQUAL(r.config[0].value, "fp16");
    CU_ASSERT_STRING_EQUAL(r.config[1].value, "");
    rd_finding f = {.kind = RD_FIND_LOSSY_LAYER, .severity = RD_SEV_ERROR, .layer = "t3", .title = "lossy", .score = 2};
    CU_ASSERT_EQUAL(rd_result_add_finding(&r, &f, &err), RD_OK);
    CU_ASSERT_STRING_EQUAL(r.findings[0].layer, "t3");
    CU_ASSERT_PTR_NULL(r.findings[0].advice);
    CU_ASSERT_PTR_NOT_EQUAL(r.findings[0].title, f.title);
    CU_ASSERT_EQUAL(rd_result_set_string(&r.model, "m.onnx", &err), RD_OK);
    CU_ASSERT_EQUAL(rd_result_add_layer(&r, NULL, NULL, NULL, &err), RD_E_INVAL);
    CU_ASSERT_STRING_EQUAL(rd_degenerate_name(RD_DEG_TEST_ZERO), "test_zero");
    rd_result_fini(&r);
    CU_ASSERT_EQUAL(r.n_layers, 0);
    rd_result_fini(&r); /* twice is fine */
}

RD_TEST_REGISTER(register_snapshot)
{
    RD_SUITE("snapshot", {"values round trip", test_values_round_trip}, {"file stems", test_file_stems},
             {"map_name_to_file", test_name_map}, {"result builders", test_result_builders});
}
