/*
 * test_built_shared.c: `--rknn` / `--rknn-build-log` (analyzer/quant/built.h) on ../shared's
 * multiple_input_demo (test.onnx and its two .rknn builds, read in place): the simulation
 * materialises exactly the tensors the .rknn stores, with its scales and zero points; the accuracy
 * table has the ConvAdd group as the toolkit prints it; a .rknn or a log of another model, a
 * renamed tensor, another shape and an encrypted file are refused with the reason (exit 3). No
 * public log is of a model we have: the build-log cases write the log a verbose RKNN-Toolkit2 1.6.2
 * build of test.onnx prints (its layer table).
 */
#include "cli_capture.h"
#include "cli_expect.h"
#include "config_model.h"
#include "quant_setup.h"
#include "rd_test.h"
#include "text_check.h"
#include "paths_in.h"
#include "rknn_diag/rknn_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char dir[4096], onnx[4200], rk3566[4200], rk3562[4200], other_rknn[4200], in_a[4300], in_b[4300];

static void need(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        char why[4400];
        snprintf(why, sizeof why, "needs %s", path);
        rd_test_skip_all(why);
    }
}

/* Once, before the first case: the paths, and two NHWC .npy inputs of test.onnx (input.1
 * 1x1x128x128, input 1x3x128x128), values 0..255. */
static void setup(void)
{
    if (dir[0])
        return;
    const char *shared = rd_test_shared_dir();
    rd_test_paths_in(shared, sizeof onnx, onnx, "rknn/models/multiple_input_demo/test.onnx", rk3566,
                     "rknn/models/multiple_input_demo/RK3566_RK3568.rknn", rk3562,
                     "rknn/models/multiple_input_demo/RK3562.rknn", other_rknn,
                     "rknn/models/pp_human_segv2/RK3566_RK3568.rknn", NULL);
    need(onnx);
    need(rk3566);
    need(rk3562);
    need(other_rknn);
    char *d = rd_test_tmpdir("built_shared");
    snprintf(dir, sizeof dir, "%s", d);
    free(d);
    snprintf(in_a, sizeof in_a, "%s/a.npy", dir);
    snprintf(in_b, sizeof in_b, "%s/b.npy", dir);
    const char *paths[2] = {in_a, in_b};
    const int64_t ch[2] = {1, 3};
    rd_error err = {0};
    for (int k = 0; k < 2; k++) {
        rd_tensor t;
        const int64_t dims[4] = {1, 128, 128, ch[k]};
        CU_ASSERT_EQUAL_FATAL(rd_tensor_alloc(&t, RD_DT_F32, 4, dims, &err), RD_OK);
        float *x = t.data;
        for (int64_t i = 0; i < rd_tensor_numel(&t); i++)
            x[i] = (float)((i * 37 + k * 11) % 256);
        CU_ASSERT_EQUAL_FATAL(rd_npy_save(paths[k], &t, &err), RD_OK);
        rd_tensor_fini(&t);
    }
}

/* ---- the simulation against the file
 * ------------------------------------------------------------------ */

static bool stored_activation(const rd_rknn_tensor *t)
{
    return (t->role == RD_RKNN_ROLE_INPUT || t->role == RD_RKNN_ROLE_OUTPUT || t->role == RD_RKNN_ROLE_INTERNAL) &&
           !strstr(t->name, "_exSecondary");
}

/* Builds the simulation accuracy builds from test.onnx and rknn, and compares every tensor with the
 * file. */
static void check_materialised(const char *rknn)
{
    an_quant_opts q;
    an_quant_opts_init(&q);
    q.model_path = onnx;
    CU_ASSERT_TRUE(an_quant_take(&q, AN_QOPT_RKNN, rknn));
    an_model_request req = {.command = "accuracy", .path = onnx};
    rd_model *m = NULL;
    rd_sim *s = NULL;
    rd_rknn_model *rm = NULL;
    rd_error err = {0};
    rd_status st = an_model_load_configured(&q, &req, &m, &err);
    if (st == RD_OK)
        st = an_quant_build_sim(&q, m, NULL, NULL, false, &s, &err);
    if (st == RD_OK)
        st = rd_rknn_load(rknn, NULL, &rm, &err);
    if (st != RD_OK)
        fprintf(stderr, "%s: %s\n", rknn, err.msg);
    CU_ASSERT_EQUAL_FATAL(st, RD_OK);
    const rd_rknn_graph *g = rd_rknn_graph_at(rm, 0);
    size_t n_stored = 0, n_materialised = 0;
    for (size_t i = 0; i < g->n_tensors; i++) {
        const rd_rknn_tensor *t = &g->tensors[i];
        if (!stored_activation(t))
            continue;
        n_stored++;
        rd_sim_tensor st_t;
        CU_ASSERT_EQUAL_FATAL(rd_sim_tensor_get(s, t->name, &st_t, &err), RD_OK);
        CU_ASSERT_TRUE(st_t.materialized);
        CU_ASSERT_EQUAL(st_t.precision, RD_PREC_INT8);
        CU_ASSERT_TRUE(st_t.quantized);
        CU_ASSERT_FATAL(t->n_scale == 1 && t->n_zero_point == 1);
        CU_ASSERT_DOUBLE_EQUAL(st_t.scale, t->scale[0], 1e-6 * t->scale[0]);
        CU_ASSERT_EQUAL(st_t.zero_point, t->zero_point[0]);
    }
    /* and nothing else: every activation of the graph that the file does not store is fused away */
    for (size_t v = 0; v < rd_model_value_count(m); v++) {
        rd_value_info vi;
        rd_model_value(m, v, &vi);
        rd_sim_tensor t;
        if (rd_model_constant(m, v) || rd_sim_tensor_get(s, vi.name, &t, &err) != RD_OK || t.value < 0)
            continue;
        if (!t.materialized)
            continue;
        n_materialised++;
        bool in_file = false;
        for (size_t i = 0; i < g->n_tensors && !in_file; i++)
            in_file = stored_activation(&g->tensors[i]) && strcmp(g->tensors[i].name, vi.name) == 0;
        if (!in_file)
            fprintf(stderr, "materialised but not in %s: %s\n", rknn, vi.name);
        CU_ASSERT_TRUE(in_file);
    }
    CU_ASSERT_EQUAL(n_stored, 4); /* input.1, input, 7, 8 */
    CU_ASSERT_EQUAL(n_materialised, n_stored);
    rd_sim_tensor conv0;
    CU_ASSERT_EQUAL(rd_sim_tensor_get(s, "6", &conv0, &err), RD_OK);
    CU_ASSERT_FALSE(conv0.materialized);
    CU_ASSERT_STRING_EQUAL(conv0.npu_op, "ConvAdd");
    rd_rknn_destroy(rm);
    rd_sim_destroy(s);
    rd_model_destroy(m);
    an_quant_opts_fini(&q);
}

static void test_materialised_rk3566(void)
{
    setup();
    check_materialised(rk3566);
}

static void test_materialised_rk3562(void)
{
    setup();
    check_materialised(rk3562);
}

/* ---- the command line
 * --------------------------------------------------------------------------------- */

static char *read_text(const char *folder, const char *name)
{
    char path[4500];
    snprintf(path, sizeof path, "%s/%s", folder, name);
    size_t len = 0;
    char *text = rd_test_read_file(path, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    return text;
}

/* True when folder/name holds text (the file must exist). */
static bool file_has(const char *folder, const char *name, const char *text)
{
    char *content = read_text(folder, name);
    bool found = strstr(content, text) != NULL;
    if (!found)
        fprintf(stderr, "%s/%s lacks '%s'\n", folder, name, text);
    free(content);
    return found;
}

/* The line of text starting with prefix, copied into line (empty when none). */
static void line_of(const char *text, const char *prefix, char *line, size_t cap)
{
    line[0] = '\0';
    for (const char *p = text; p && *p;) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        if (strncmp(p, prefix, strlen(prefix)) == 0) {
            snprintf(line, cap, "%.*s", (int)(len < cap ? len : cap - 1), p);
            return;
        }
        p = eol ? eol + 1 : NULL;
    }
}

/* The table of test.onnx shows the ConvAdd group as accuracy_analysis prints a fused group: the
   conv inside without figures, the Add with them. */
static void expect_convadd_rows(const char *table)
{
    char line[512];
    line_of(table, "[Conv] 6 ", line, sizeof line);
    CU_ASSERT_STRING_NOT_EQUAL(line, "");
    CU_ASSERT_PTR_NULL(strchr(line, '|'));
    line_of(table, "[Add] 8 ", line, sizeof line);
    CU_ASSERT_PTR_NOT_NULL(strchr(line, '|'));
}

static void test_accuracy_table(void)
{
    setup();
    char out[4300];
    snprintf(out, sizeof out, "%s/acc_rknn", dir);
    rd_cli_result r =
        rd_test_cli("accuracy", onnx, "--rknn", rk3566, "--inputs", in_a, "--inputs", in_b, "-o", out, "--quiet", NULL);
    if (r.code != 0)
        fprintf(stderr, "%s\n", r.errs);
    CU_ASSERT_EQUAL_FATAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(
        strstr(r.errs, "2 ops reproduced (1 fused), 0 not; 4 tensors with its scales, 0 calibrated"));
    char *table = read_text(out, "error_analysis.txt");
    char line[512];
    expect_convadd_rows(table);
    line_of(table, "[Conv] 7 ", line, sizeof line);
    CU_ASSERT_PTR_NOT_NULL(strchr(line, '|'));
    line_of(table, "[exDataConvert] input.1_int8 ", line, sizeof line);
    CU_ASSERT_PTR_NOT_NULL(strchr(line, '|'));
    free(table);
    char *json = read_text(out, "report.json");
    RD_ASSERT_HAS_TEXTS(json, "\"npu_op\":\t\"ConvAdd\"", "\"fidelity\"");
    free(json);
    char *map = read_text(out, "rknn_mapping.txt");
    CU_ASSERT_PTR_NOT_NULL(
        strstr(map, "#3 ConvAdd 'Conv:Conv_0' (NPU) -> 8 [int8 scale 4.14237452 zp 20], fused inside: 6"));
    RD_ASSERT_HAS_TEXTS(map, "7 [int8 scale 2.61823416 zp 16] from node #2 Conv 'Conv:Conv_1'",
                        "72 codes, 72 equal to ours");
    free(map);
    rd_test_cli_free(&r);
}

/* accuracy with extra arguments must exit 3 with every piece of `why` in its message */
static void expect_refused(const char *flag, const char *file, const char *model, const char *why1, const char *why2)
{
    rd_cli_result r = rd_test_cli("accuracy", model, flag, file, "--inputs", in_a, "--inputs", in_b, "--quiet", NULL);
    CU_ASSERT_EQUAL(r.code, 3);
    bool ok = strstr(r.errs, why1) && (!why2 || strstr(r.errs, why2));
    if (!ok)
        fprintf(stderr, "expected '%s' / '%s' in: %s\n", why1, why2 ? why2 : "", r.errs);
    CU_ASSERT_TRUE(ok);
    rd_test_cli_free(&r);
}

static void test_other_model_refused(void)
{
    setup();
    expect_refused("--rknn", other_rknn, onnx, "stores 101 tensors that", "built from another model?");
}

/* test.onnx written again with one tensor renamed or its inputs at another size */
static void write_variant(const char *path, const char *rename_from, const char *rename_to, int64_t size)
{
    rd_model *m = NULL;
    rd_error err = {0};
    CU_ASSERT_EQUAL_FATAL(rd_model_load(onnx, NULL, &m, &err), RD_OK);
    size_t nv = rd_model_value_count(m);
    const char **names = calloc(nv, sizeof *names);
    if (rename_from)
        names[rd_model_find_value(m, rename_from)] = rename_to;
    rd_onnx_builder *b = rd_onnx_builder_create(rd_model_ir_version(m), 0);
    rd_onnx_copy_options opt = {.value_names = names, .no_io = size > 0};
    CU_ASSERT_EQUAL_FATAL(rd_onnx_builder_add_model(b, m, &opt, &err), RD_OK);
    if (size > 0) {
        rd_onnx_add_input(b, "input.1", RD_DT_F32, 4, (const int64_t[]){1, 1, size, size}, NULL);
        rd_onnx_add_input(b, "input", RD_DT_F32, 4, (const int64_t[]){1, 3, size, size}, NULL);
        rd_onnx_add_output(b, "8", RD_DT_F32, -1, NULL, NULL);
    }
    CU_ASSERT_EQUAL_FATAL(rd_onnx_builder_save(b, path, &err), RD_OK);
    rd_onnx_builder_destroy(b);
    free(names);
    rd_model_destroy(m);
}

static void test_renamed_tensor_refused(void)
{
    setup();
    char path[4300];
    snprintf(path, sizeof path, "%s/renamed.onnx", dir);
    write_variant(path, "7", "shortcut", 0);
    expect_refused("--rknn", rk3566, path, "'7' written by node #2 Conv 'Conv:Conv_1'", "built from another model?");
}

static void test_other_shape_refused(void)
{
    setup();
    char path[4300], a[4400], b[4400];
    snprintf(path, sizeof path, "%s/small.onnx", dir);
    write_variant(path, NULL, NULL, 64);
    /* the inputs of the small model */
    snprintf(a, sizeof a, "%s/a64.npy", dir);
    snprintf(b, sizeof b, "%s/b64.npy", dir);
    rd_error err = {0};
    const char *paths[2] = {a, b};
    for (int k = 0; k < 2; k++) {
        rd_tensor t;
        CU_ASSERT_EQUAL_FATAL(rd_tensor_alloc(&t, RD_DT_F32, 4, (const int64_t[]){1, 64, 64, k ? 3 : 1}, &err), RD_OK);
        memset(t.data, 0, (size_t)rd_tensor_numel(&t) * sizeof(float));
        CU_ASSERT_EQUAL_FATAL(rd_npy_save(paths[k], &t, &err), RD_OK);
        rd_tensor_fini(&t);
    }
    rd_cli_result r = rd_test_cli("accuracy", path, "--rknn", rk3566, "--inputs", a, "--inputs", b, "--quiet", NULL);
    CU_ASSERT_EQUAL(r.code, 3);
    RD_ASSERT_HAS_TEXTS(r.errs, "has shape [1, 1, 128, 128]", "[1, 1, 64, 64]");
    if (r.code != 3 || !strstr(r.errs, "[1, 1, 64, 64]"))
        fprintf(stderr, "%s\n", r.errs);
    rd_test_cli_free(&r);
}

static void test_encrypted_refused(void)
{
    setup();
    size_t len = 0;
    unsigned char *bytes = rd_test_read_file(rk3566, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(bytes);
    memcpy(bytes, "CYPTRKNN", 8);
    char path[4300];
    snprintf(path, sizeof path, "%s/encrypted.rknn", dir);
    FILE *f = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(fwrite(bytes, 1, len, f), len);
    fclose(f);
    free(bytes);
    expect_refused("--rknn", path, onnx, "encrypted", NULL);
}

/* ---- build logs
 * --------------------------------------------------------------------------------------- */

/* The layer table a verbose 1.6.2 build of test.onnx prints, in the build-time form (IDs from 0).
 */
static const char *const demo_rows[] = {
    "0 InputOperator INT8 CPU \\ (1,1,128,128) 0 0 0 0 \\ 0 0 16.00 InputOperator:input.1",
    "1 InputOperator INT8 CPU \\ (1,3,128,128) 0 0 0 0 \\ 0 0 48.00 InputOperator:input",
    "2 Conv INT8 NPU (1,3,128,128),(8,3,3,3),(8) (1,8,128,128) 0 0 0 0 \\ 1 0 176.00 Conv:Conv_1",
    "3 ConvAdd INT8 NPU (1,1,128,128),(8,1,3,3),(8),(1,8,128,128) (1,8,128,128) 0 0 0 0 \\ 1 0 "
    "272.00 "
    "Conv:Conv_0",
    "4 OutputOperator INT8 NPU (1,8,128,128),(1,1,128,128) \\ 0 0 0 0 \\ 0 0 256.00 "
    "OutputOperator:8",
};

/* Writes a verbose-build log: the toolkit version, librknnc's table header, then rows (RKNN:
 * prefixed). */
static void write_log(const char *path, const char *const *rows, size_t n)
{
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fprintf(f, "I rknn-toolkit2 version: 1.6.2-source_code\n"
               "D RKNN: [10:00:00.001] ID OpType DataType Target InputShape OutputShape DDR Cycles "
               "NPU Cycles Total Cycles Time(us) MacUsage(%%) Task Number Lut Number RW(KB) FullName\n");
    for (size_t i = 0; i < n; i++)
        fprintf(f, "D RKNN: [10:00:00.001] %s\n", rows[i]);
    fclose(f);
}

static void test_build_log(void)
{
    setup();
    char log[4300], out[4300];
    snprintf(log, sizeof log, "%s/build.log", dir);
    write_log(log, demo_rows, sizeof demo_rows / sizeof demo_rows[0]);
    snprintf(out, sizeof out, "%s/acc_log", dir);
    rd_cli_result r = rd_test_cli("accuracy", onnx, "--rknn-build-log", log, "--inputs", in_a, "--inputs", in_b, "-o",
                                  out, "--quiet", NULL);
    if (r.code != 0)
        fprintf(stderr, "%s\n", r.errs);
    CU_ASSERT_EQUAL_FATAL(r.code, 0);
    char *table = read_text(out, "error_analysis.txt");
    expect_convadd_rows(table);
    free(table);
    char *map = read_text(out, "rknn_mapping.txt");
    RD_ASSERT_HAS_TEXTS(map, "ConvAdd 'Conv:Conv_0'", "fused inside: 6");
    free(map);
    rd_test_cli_free(&r);
    /* the same log with a node test.onnx does not have */
    const char *bad[5];
    memcpy(bad, demo_rows, sizeof bad);
    bad[2] = "2 Conv INT8 NPU (1,3,128,128),(8,3,3,3),(8) (1,8,128,128) 0 0 0 0 \\ 1 0 176.00 "
             "Conv:Conv_9";
    write_log(log, bad, 5);
    expect_refused("--rknn-build-log", log, onnx, "(line 5: Conv 'Conv:Conv_9')", "a log of another model?");
}

/* A public log of another model (MobileNetV1 built for rv1106) is refused by name. */
static void test_public_log_refused(void)
{
    setup();
    char log[4300];
    snprintf(log, sizeof log, "%s/rknn/logs/log-mobilenetv1-tflite-rv1106-build-1.5.2.txt", rd_test_shared_dir());
    need(log);
    expect_refused("--rknn-build-log", log, onnx, "31 layer-table rows name no node of", "a log of another model?");
}

/* ---- run, quantize, hybrid: the same options through the same handler
 * ------------------------------- */

/* Graph tensors of test.onnx for run -i (NCHW, as stored). */
static void graph_inputs(char *ga, char *gb, size_t cap)
{
    snprintf(ga, cap, "%s/ga.npy", dir);
    snprintf(gb, cap, "%s/gb.npy", dir);
    const char *paths[2] = {ga, gb};
    rd_error err = {0};
    for (int k = 0; k < 2; k++) {
        rd_tensor t;
        CU_ASSERT_EQUAL_FATAL(rd_tensor_alloc(&t, RD_DT_F32, 4, (const int64_t[]){1, k ? 3 : 1, 128, 128}, &err),
                              RD_OK);
        float *x = t.data;
        for (int64_t i = 0; i < rd_tensor_numel(&t); i++)
            x[i] = (float)((i * 53 + k * 7) % 256);
        CU_ASSERT_EQUAL_FATAL(rd_npy_save(paths[k], &t, &err), RD_OK);
        rd_tensor_fini(&t);
    }
}

static void test_run(void)
{
    setup();
    char ga[4300], gb[4300], ia[4400], ib[4400], out[4300];
    graph_inputs(ga, gb, sizeof ga);
    snprintf(ia, sizeof ia, "input.1=%s", ga);
    snprintf(ib, sizeof ib, "input=%s", gb);
    snprintf(out, sizeof out, "%s/run_rknn", dir);
    rd_cli_result r = rd_test_cli("run", onnx, "--rknn", rk3566, "-i", ia, "-i", ib, "-o", out, NULL);
    if (r.code != 0)
        fprintf(stderr, "%s\n", r.errs);
    CU_ASSERT_EQUAL_FATAL(r.code, 0);
    /* the table lists the materialised tensors only: 6 is inside the ConvAdd */
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, " 7 "));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.errs, "4 tensors with its scales, 0 calibrated"));
    CU_ASSERT_PTR_NULL(strstr(r.errs, "calibrating on the analysed input"));
    CU_ASSERT_TRUE(file_has(out, "rknn_mapping.txt", "fused inside: 6"));
    CU_ASSERT_TRUE(file_has(out, "fused.json", "\"6\""));
    rd_test_cli_free(&r);
    RD_CLI_EXPECT(2, NULL, RD_TEXTS("drop one of them"), "run", onnx, "--rknn", rk3566, "-p", "fp32", "-i", ia, "-i",
                  ib);
}

static void test_quantize(void)
{
    setup();
    char cfg[4300];
    snprintf(cfg, sizeof cfg, "%s/built.quantization.cfg", dir);
    rd_cli_result r = rd_test_cli("quantize", onnx, "--rknn", rk3566, "-o", cfg, NULL);
    if (r.code != 0)
        fprintf(stderr, "%s\n", r.errs);
    CU_ASSERT_EQUAL_FATAL(r.code, 0);
    rd_test_cli_free(&r);
    /* the .rknn's scales and zero points, not a calibration's (there is no --dataset) */
    rd_qcfg q;
    rd_error err = {0};
    CU_ASSERT_EQUAL_FATAL(rd_qcfg_load(cfg, &q, &err), RD_OK);
    const rd_qcfg_param *p7 = rd_qcfg_find(&q, "7"), *p8 = rd_qcfg_find(&q, "8");
    CU_ASSERT_FATAL(p7 && p8 && p7->n == 1 && p8->n == 1);
    CU_ASSERT_DOUBLE_EQUAL(p7->scale[0], 2.61823416, 1e-6);
    CU_ASSERT_EQUAL(p7->zero_point[0], 16);
    CU_ASSERT_DOUBLE_EQUAL(p8->scale[0], 4.14237452, 1e-6);
    CU_ASSERT_EQUAL(p8->zero_point[0], 20);
    CU_ASSERT_PTR_NULL(rd_qcfg_find(&q, "6")); /* inside the ConvAdd */
    rd_qcfg_fini(&q);
}

static void test_hybrid(void)
{
    setup();
    rd_cli_result r = rd_test_cli("hybrid", "suggest", onnx, "--rknn", rk3562, "-i", in_a, "-i", in_b, NULL);
    if (r.code != 0)
        fprintf(stderr, "%s\n", r.errs);
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.errs, "built model: "));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "int8 outputs: cosine"));
    for (const char *line = r.out; line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        int rank;
        char tensor[64];
        if (sscanf(line, "%d %63s", &rank, tensor) == 2)
            CU_ASSERT_STRING_NOT_EQUAL(tensor, "6"); /* inside the ConvAdd: no candidate */
    }
    rd_test_cli_free(&r);
    char cfg[4300];
    snprintf(cfg, sizeof cfg, "%s/search/out.quantization.cfg", dir);
    r = rd_test_cli("hybrid", "search", onnx, "--rknn", rk3566, "-i", in_a, "-i", in_b, "--target-cos", "0.9", "-o",
                    cfg, NULL);
    if (r.code != 0)
        fprintf(stderr, "%s\n", r.errs);
    CU_ASSERT_EQUAL(r.code, 0);
    rd_test_cli_free(&r);
    char sdir[4300];
    snprintf(sdir, sizeof sdir, "%s/search", dir);
    CU_ASSERT_TRUE(file_has(sdir, "rknn_mapping.txt", "#3 ConvAdd"));
    CU_ASSERT_TRUE(file_has(sdir, "report.json", "\"fidelity\""));
    RD_CLI_EXPECT(2, NULL, RD_TEXTS("a .rknn's scales are fixed"), "hybrid", "diagnose", onnx, "--rknn", rk3566, "-i",
                  in_a, "-i", in_b);
}

/* test_build_log's table with Conv_1 built in float16 (hybrid), the exDataConvert rows around it */
static const char *const hybrid_rows[] = {
    "0 InputOperator INT8 CPU \\ (1,1,128,128) 0 0 0 0 \\ 0 0 16.00 InputOperator:input.1",
    "1 InputOperator INT8 CPU \\ (1,3,128,128) 0 0 0 0 \\ 0 0 48.00 InputOperator:input",
    "2 exDataConvert INT8 NPU (1,3,128,128) (1,3,128,128) 0 0 0 0 \\ 0 0 48.00 "
    "exDataConvert:input__cvt_int8_float16",
    "3 Conv FLOAT16 NPU (1,3,128,128),(8,3,3,3),(8) (1,8,128,128) 0 0 0 0 \\ 1 0 176.00 "
    "Conv:Conv_1",
    "4 exDataConvert FLOAT16 NPU (1,8,128,128) (1,8,128,128) 0 0 0 0 \\ 0 0 48.00 "
    "exDataConvert:7__cvt_float16_int8",
    "5 ConvAdd INT8 NPU (1,1,128,128),(8,1,3,3),(8),(1,8,128,128) (1,8,128,128) 0 0 0 0 \\ 1 0 "
    "272.00 "
    "Conv:Conv_0",
    "6 OutputOperator INT8 NPU (1,8,128,128),(1,1,128,128) \\ 0 0 0 0 \\ 0 0 256.00 "
    "OutputOperator:8",
};
#define N_HYBRID_ROWS (sizeof hybrid_rows / sizeof hybrid_rows[0])

/* A cfg for test.onnx asking for `float16` tensors in custom_quantize_layers (parameters from the
 * .rknn). */
static void write_cfg(const char *path, const char *float16)
{
    rd_cli_result r = rd_test_cli("quantize", onnx, "--rknn", rk3566, "-o", path, NULL);
    CU_ASSERT_EQUAL_FATAL(r.code, 0);
    rd_test_cli_free(&r);
    size_t len = 0;
    char *text = rd_test_read_file(path, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    const char *head = "custom_quantize_layers: {}\n";
    CU_ASSERT_FATAL(strncmp(text, head, strlen(head)) == 0);
    char *out = malloc(len + 256);
    snprintf(out, len + 256, "custom_quantize_layers:\n    %s: float16\n%s", float16, text + strlen(head));
    rd_test_write_text(path, out);
    free(out);
    free(text);
}

static void test_hybrid_verify(void)
{
    setup();
    char cfg7[4300], cfg8[4300], log[4300];
    rd_test_paths_in(dir, sizeof cfg7, cfg7, "ask7.cfg", cfg8, "ask8.cfg", log, "hybrid.log", NULL);
    write_cfg(cfg7, "'7'");
    write_cfg(cfg8, "'8'");
    write_log(log, hybrid_rows, N_HYBRID_ROWS);
    /* the w8a8 .rknn runs 7 in int8 */
    RD_CLI_EXPECT(1, RD_TEXTS("NOT float16: int8 in the build: node #2 Conv 'Conv:Conv_1'"), NULL, "hybrid", "verify",
                  onnx, "--cfg", cfg7, "--rknn", rk3566);
    /* the hybrid build runs 7 in float16, as asked */
    RD_CLI_EXPECT(0, RD_TEXTS("result: all 1 requested tensors are built in float16"), NULL, "hybrid", "verify", onnx,
                  "--cfg", cfg7, "--rknn-build-log", log);
    /* asked 8, built 7: both directions named */
    rd_cli_result r = rd_test_cli("hybrid", "verify", onnx, "--cfg", cfg8, "--rknn-build-log", log, "--json", NULL);
    CU_ASSERT_EQUAL(r.code, 1);
    RD_ASSERT_HAS_TEXTS(r.out, "\"evidence\":\t\"int8 in the build: log line 8: ConvAdd INT8\"", "\"tensor\":\t\"7\"");
    CU_ASSERT_PTR_NOT_NULL(
        strstr(r.out, "float16 in the build (held in int8 for its readers: exDataConvert): log line 6"));
    rd_test_cli_free(&r);
    RD_CLI_EXPECT(2, NULL, RD_TEXTS("--rknn MODEL.rknn or --rknn-build-log FILE"), "hybrid", "verify", onnx, "--cfg",
                  cfg7);
}

/* The exDataConvert rows RKNN prints around a float16 island: X__float16 where an int8 tensor goes
   into a float16 layer, X__int8 where a float16 tensor goes into an int8 one; from a hybrid cfg and
   from a build. */
static void test_convert_rows(void)
{
    setup();
    char cfg7[4300], log[4300], out[4300];
    snprintf(cfg7, sizeof cfg7, "%s/rows7.cfg", dir);
    snprintf(log, sizeof log, "%s/rows.log", dir);
    write_cfg(cfg7, "'7'");
    write_log(log, hybrid_rows, N_HYBRID_ROWS);
    snprintf(out, sizeof out, "%s/acc_cfg16", dir);
    rd_cli_result r =
        rd_test_cli("accuracy", onnx, "--cfg", cfg7, "--inputs", in_a, "--inputs", in_b, "-o", out, "--quiet", NULL);
    CU_ASSERT_EQUAL_FATAL(r.code, 0);
    rd_test_cli_free(&r);
    char *table = read_text(out, "error_analysis.txt");
    const char *f16 = strstr(table, "[exDataConvert] input__float16 "), *c7 = strstr(table, "[Conv] 7 "),
               *i8 = strstr(table, "[exDataConvert] 7__int8 "), *add = strstr(table, "[Add] 8 ");
    CU_ASSERT_FATAL(f16 && c7 && i8 && add);
    CU_ASSERT(f16 < c7 && c7 < i8 && i8 < add); /* each after the tensor it converts, as the toolkit prints them */
    CU_ASSERT_PTR_NULL(strstr(table, "input.1__float16")); /* read by the int8 ConvAdd only */
    free(table);
    CU_ASSERT_TRUE(file_has(out, "report.json", "\"name\":\t\"7__int8\""));
    snprintf(out, sizeof out, "%s/acc_log16", dir);
    r = rd_test_cli("accuracy", onnx, "--rknn-build-log", log, "--inputs", in_a, "--inputs", in_b, "-o", out, "--quiet",
                    NULL);
    CU_ASSERT_EQUAL_FATAL(r.code, 0);
    rd_test_cli_free(&r);
    table = read_text(out, "error_analysis.txt");
    char line[512];
    line_of(table, "[exDataConvert] input__float16 ", line, sizeof line);
    CU_ASSERT_PTR_NOT_NULL(strchr(line, '|'));
    free(table);
    CU_ASSERT_TRUE(
        file_has(out, "rknn_mapping.txt", "exDataConvert 'exDataConvert:7__cvt_float16_int8' -> 7, float16 to int8"));
    CU_ASSERT_TRUE(file_has(out, "report.json", "1 tensors computed in float16 and held in int8 have one row each"));
}

RD_TEST_REGISTER(built_shared_tests)
{
    static const rd_test_case cases[] = {
        {"materialised_rk3566", test_materialised_rk3566},
        {"materialised_rk3562", test_materialised_rk3562},
        {"accuracy_table", test_accuracy_table},
        {"other_model_refused", test_other_model_refused},
        {"renamed_tensor_refused", test_renamed_tensor_refused},
        {"other_shape_refused", test_other_shape_refused},
        {"encrypted_refused", test_encrypted_refused},
        {"build_log", test_build_log},
        {"public_log_refused", test_public_log_refused},
        {"run", test_run},
        {"quantize", test_quantize},
        {"hybrid", test_hybrid},
        {"hybrid_verify", test_hybrid_verify},
        {"convert_rows", test_convert_rows},
    };
    rd_test_add_suite("built_shared", cases, (int)(sizeof cases / sizeof cases[0]));
}
