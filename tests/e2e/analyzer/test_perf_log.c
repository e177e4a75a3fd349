/*
 * test_perf_log.c: the board's per-layer table read from logs (perf_log.c) in both public layouts, the
 * malformed cases, and the mapping of its rows onto a small model's candidates (latency_table.c).
 */
#include "find_named.h"
#include "calibrated_sim.h"
#include "rd_test.h"
#include "text_check.h"
#include "hybrid.h"
#include "latency_fixtures.h"
#include "perf_log.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Renders a fixture into memory (open_memstream): caller frees. */
typedef void (*fx_writer)(FILE *f, const lat_fx_row *rows, int n);
static char *render(fx_writer w, const lat_fx_row *rows, int n, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    w(f, rows, n);
    fclose(f);
    return buf;
}

/* Renders rows with w, checks the text is taken for a perf log and parses it as name into log: the caller frees
   the text and finalises log. */
static char *render_and_parse(fx_writer w, const lat_fx_row *rows, int n, const char *name, an_perf_log *log)
{
    size_t len;
    char *text = render(w, rows, n, &len);
    CU_ASSERT(an_perf_log_detect(text, len));
    an_perf_log_init(log);
    rd_error err = {0};
    CU_ASSERT_EQUAL_FATAL(an_perf_log_parse(text, len, name, log, &err), RD_OK);
    return text;
}

static const lat_fx_row small_int8[] = {
    {"InputOperator", "INT8", "CPU", "\\", "(1,3,8,8)", 12, "InputOperator:x"},
    {"ConvRelu", "INT8", "NPU", "(1,3,8,8),(8,3,3,3),(8)", "(1,8,8,8)", 100, "Conv:Conv_0"},
    {"ConvAdd", "INT8", "NPU", "(1,8,8,8),(8,8,3,3),(8),...", "(1,8,8,8)", 200, "Conv:Conv_2"},
    {"Reshape", "INT8", "NPU", "(1,8,8,8),(4)", "(1,8,64,1)", 7, "Reshape:a3_rs_sw"},
    {"Conv", "INT8", "NPU", "(1,8,64,1),(4,8,1,1),(4)", "(1,4,64,1)", 50, "Conv:Conv_4#2"},
    {"exDataConvert", "INT8", "NPU", "(1,4,8,8)", "(1,4,8,8)", 9, "exDataConvert:y__float16"},
    {"OutputOperator", "FLOAT", "CPU", "(1,4,8,8)", "\\", 3, "OutputOperator:y"},
};

static void test_v2_layout(void)
{
    an_perf_log log;
    char *text = render_and_parse(lat_fx_write_v2, small_int8, 7, "v2.log", &log);
    CU_ASSERT_EQUAL(log.n_tables, 1);
    CU_ASSERT_EQUAL_FATAL(log.n_rows, 7); /* the summary and ranking table are not rows */
    CU_ASSERT_STRING_EQUAL(log.rows[0].full_name, "InputOperator:x");
    CU_ASSERT_FALSE(log.rows[0].on_npu);
    CU_ASSERT_EQUAL(log.rows[0].us, 12);
    CU_ASSERT_STRING_EQUAL(log.rows[1].op_type, "ConvRelu");
    CU_ASSERT_EQUAL(log.rows[1].prec, AN_PERF_INT8);
    CU_ASSERT(log.rows[1].on_npu);
    CU_ASSERT_EQUAL(log.rows[1].us, 100);
    CU_ASSERT_EQUAL(log.rows[1].id, 2);
    CU_ASSERT_EQUAL(log.rows[1].line, 8); /* runtime line, 3 rule/title lines, header, rule, row 1 */
    CU_ASSERT_STRING_EQUAL(log.rows[2].full_name, "Conv:Conv_2");
    CU_ASSERT_EQUAL(log.rows[2].us, 200);
    CU_ASSERT_STRING_EQUAL(log.rows[4].full_name, "Conv:Conv_4#2");
    CU_ASSERT_EQUAL(log.rows[6].prec, AN_PERF_OTHER);
    an_perf_log_fini(&log);
    free(text);
}

static void test_old_layout(void)
{
    static const lat_fx_row rows[] = {
        {"InputOperator", "UINT8", "CPU", "\\", "(1,3,224,224)", 7, "InputOperator:data"},
        {"ConvRelu", "UINT8", "NPU", "(1,3,224,224),(32,3,3,3),(32)", "(1,32,112,112)", 428, "Conv:conv1"},
        {"Conv", "FLOAT16", "NPU", "(1,32,112,112),(1,32,3,3),(32)", "(1,32,112,112)", 1310, "Conv:conv2/dw"},
    };
    an_perf_log log;
    char *text = render_and_parse(lat_fx_write_old, rows, 3, "old.log", &log);
    CU_ASSERT_EQUAL_FATAL(log.n_rows, 3);
    CU_ASSERT_EQUAL(log.rows[1].us, 428); /* not the DDR/NPU/Total Cycles before it */
    CU_ASSERT_EQUAL(log.rows[1].prec, AN_PERF_INT8);
    CU_ASSERT_EQUAL(log.rows[2].us, 1310);
    CU_ASSERT_EQUAL(log.rows[2].prec, AN_PERF_FLOAT16);
    CU_ASSERT_STRING_EQUAL(log.rows[2].full_name, "Conv:conv2/dw"); /* after "0.0%/0.0%/0.0% - Up:0.0%" */
    an_perf_log_fini(&log);
    free(text);
}

/* Two runs, and the toolkit's build-time table (all times 0) before them: the runs are kept, it is not. */
static void test_runs_and_build_table(void)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    fprintf(f,
            "D RKNN: [04:33:42.488] RKNNModelBuildPass: [Statistics]\n"
            "D RKNN: [04:33:42.488] ID   OpType           DataType Target InputShape     OutputShape    DDR Cycles  "
            "   NPU Cycles     Total Cycles   Time(us)       MacUsage(%%)    RW(KB)         FullName\n"
            "D RKNN: [04:33:42.488] 0    InputOperator    INT8     CPU    \\              (1,3,8,8)      0           "
            "   0              0              0              \\              0.75           InputOperator:x\n"
            "D RKNN: [04:33:42.488] 1    ConvRelu         INT8     NPU    (1,3,8,8)      (1,8,8,8)      0           "
            "   0              0              0              \\              3.00           Conv:Conv_0\n"
            "D RKNN: [04:33:42.490] <<<<<<<< end: rknn::RKNNModelBuildPass\n");
    lat_fx_write_v2(f, small_int8, 3);
    lat_fx_row second[3];
    memcpy(second, small_int8, sizeof second);
    second[1].us = 300; /* the second run of Conv_0 */
    lat_fx_write_v2(f, second, 3);
    fclose(f);
    an_perf_log log;
    an_perf_log_init(&log);
    rd_error err = {0};
    CU_ASSERT_EQUAL_FATAL(an_perf_log_parse(buf, len, "runs.log", &log, &err), RD_OK);
    CU_ASSERT_EQUAL(log.n_tables, 2);
    CU_ASSERT_EQUAL(log.n_untimed, 1);
    CU_ASSERT_EQUAL(log.first_untimed_line, 2);
    CU_ASSERT_EQUAL_FATAL(log.n_rows, 6);
    CU_ASSERT_EQUAL(log.rows[1].table, 0);
    CU_ASSERT_EQUAL(log.rows[4].table, 1);
    CU_ASSERT_EQUAL(log.rows[4].us, 300);
    an_perf_log_fini(&log);
    free(buf);
}

/* A blank FullName (seen on a Conv row of a public build log) is blank, not the RW(KB) value. */
static void test_blank_full_name(void)
{
    const char *text = "ID   OpType   DataType Target Time(us)   RW(KB)     FullName\n"
                       "1    Conv     FLOAT16  NPU    120        1408.05    \n"
                       "2    Relu     FLOAT16  NPU    30         10.00      Relu:relu_1\n";
    an_perf_log log;
    an_perf_log_init(&log);
    rd_error err = {0};
    CU_ASSERT_EQUAL_FATAL(an_perf_log_parse(text, strlen(text), "blank.log", &log, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(log.n_rows, 2);
    CU_ASSERT_STRING_EQUAL(log.rows[0].full_name, "");
    CU_ASSERT_STRING_EQUAL(log.rows[1].full_name, "Relu:relu_1");
    an_perf_log_fini(&log);
}

/* Parses text expecting failure with a message containing want. */
static void expect_error(const char *text, size_t len, const char *want)
{
    an_perf_log log;
    an_perf_log_init(&log);
    rd_error err = {0};
    rd_status st = an_perf_log_parse(text, len, "bad.log", &log, &err);
    CU_ASSERT_NOT_EQUAL(st, RD_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, want));
    if (!strstr(err.msg, want))
        fprintf(stderr, "expected '%s' in: %s\n", want, err.msg);
    an_perf_log_fini(&log);
}

static void test_malformed(void)
{
    const char *hdr = "ID   OpType     DataType Target Time(us)     FullName\n";
    char text[4096];
    /* empty, text without a table, a CSV */
    expect_error("", 0, "no layer table");
    expect_error("I RKNN: librknnrt version 2.3.0\nhello\n", 37, "no layer table");
    CU_ASSERT_FALSE(an_perf_log_detect("tensor,milliseconds_int8,milliseconds_float16\nc1,0.1,0.2\n", 56));
    /* a truncated header (no FullName) is no header */
    expect_error("ID   OpType     DataType Target Time(us)\n1    Conv     INT8     NPU    12\n", 72, "no layer table");
    /* no Time(us) column: the pure-CPU build table */
    snprintf(text, sizeof text,
             "D RKNN: Network Layer Information Table\nD RKNN: ID   OpType         DataType Target "
             "InputShape OutputShape FullName\nD RKNN: 0    InputOperator  FLOAT16  CPU    \\          (1,5)       "
             "InputOperator:input\n");
    expect_error(text, strlen(text), "bad.log:2: the layer table there has no times");
    /* no DataType column */
    expect_error("ID   OpType     Time(us)     FullName\n1    Conv     12           Conv:c\n", 70,
                 "without a DataType");
    /* garbage number, a negative time, too few fields, a truncated row */
    snprintf(text, sizeof text, "%s1    Conv       INT8     NPU    12abc        Conv:c\n", hdr);
    expect_error(text, strlen(text), "bad.log:2: Time(us) '12abc' is not a number");
    snprintf(text, sizeof text,
             "%s1    Conv       INT8     NPU    5            Conv:a\n2    Conv       INT8     NPU    "
             "-3           Conv:c\n",
             hdr);
    expect_error(text, strlen(text), "bad.log:3: Time(us) '-3'");
    snprintf(text, sizeof text, "%s1    Conv       INT8     NPU    nan          Conv:c\n", hdr);
    expect_error(text, strlen(text), "not a number");
    snprintf(text, sizeof text, "%s1    Conv       INT8\n", hdr);
    expect_error(text, strlen(text), "bad.log:2: table row with 3 fields");
    snprintf(text, sizeof text, "%s1    Conv       INT8     NPU    12\n", hdr);
    expect_error(text, strlen(text), "bad.log:2: table row without FullName");
    /* binary */
    static const char bin[] = "ID OpType DataType Time(us) FullName\n1 Conv INT8 \0\x01\x02 Conv:c\n";
    expect_error(bin, sizeof bin - 1, "bad.log:2: binary data");
    /* a huge line inside the table; outside it one is skipped */
    size_t huge = AN_PERF_LOG_MAX_LINE + 10, hl = strlen(hdr);
    char *big = malloc(hl + huge + 200);
    memcpy(big, hdr, hl);
    memset(big + hl, 'x', huge);
    big[hl] = '1';
    big[hl + 1] = ' ';
    big[hl + huge] = '\n';
    expect_error(big, hl + huge + 1, "bad.log:2: a line of");
    memset(big, 'y', huge);
    big[huge] = '\n';
    snprintf(big + huge + 1, 199, "%s1    Conv       INT8     NPU    5            Conv:a\n", hdr);
    an_perf_log log;
    an_perf_log_init(&log);
    CU_ASSERT_EQUAL(an_perf_log_parse(big, strlen(big), "big.log", &log, NULL), RD_OK);
    CU_ASSERT_EQUAL(log.n_rows, 1);
    an_perf_log_fini(&log);
    free(big);
}

static void test_node_name(void)
{
    CU_ASSERT_STRING_EQUAL(an_perf_node_name("Conv:Conv_12"), "Conv_12");
    CU_ASSERT_STRING_EQUAL(an_perf_node_name("Conv:/model/conv/Conv"), "/model/conv/Conv");
    CU_ASSERT_STRING_EQUAL(an_perf_node_name("exDataConvert:a:b"), "a:b");
    CU_ASSERT_STRING_EQUAL(an_perf_node_name("/a/b:0"), "/a/b:0"); /* the colon is the name's */
    CU_ASSERT_STRING_EQUAL(an_perf_node_name("plain"), "plain");
    CU_ASSERT_STRING_EQUAL(an_perf_node_name("Conv:"), "Conv:");
}

/* ---- mapping onto a model --------------------------------------------------------------------------- */

/*
 * x -> Conv_0 (c0) -> Relu_1 (r1) -> Conv_2 (c2) -> Add_3 (a3 = c2 + r1) -> Conv_4 (y). Node names differ
 * from tensor names, as in exported models; the simulation fuses c0 into r1.
 */
static char model_path[256];

static rd_sim *small_sim(rd_model **m)
{
    snprintf(model_path, sizeof model_path, "/tmp/rd_test_perf_log_%d.onnx", (int)getpid());
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "x", RD_DT_F32, 4, (const int64_t[]){1, 3, 8, 8}, NULL);
    const char *ws[] = {"w0", "w2", "w4"};
    const int64_t shapes[3][4] = {{8, 3, 3, 3}, {8, 8, 3, 3}, {4, 8, 1, 1}};
    for (int i = 0; i < 3; i++) {
        rd_tensor t;
        rd_tensor_alloc(&t, RD_DT_F32, 4, shapes[i], NULL);
        for (int64_t k = 0; k < rd_tensor_numel(&t); k++)
            ((float *)t.data)[k] = (float)((k * 37 % 17) - 8) / 40.0f;
        rd_onnx_add_initializer(b, ws[i], &t, RD_ONNX_RAW);
        rd_tensor_fini(&t);
    }
    rd_onnx_node *n =
        rd_onnx_add_node(b, "Conv", "Conv_0", (const char *const[]){"x", "w0"}, 2, (const char *const[]){"c0"}, 1);
    rd_onnx_attr_ints(n, "pads", (const int64_t[]){1, 1, 1, 1}, 4);
    rd_onnx_add_node(b, "Relu", "Relu_1", (const char *const[]){"c0"}, 1, (const char *const[]){"r1"}, 1);
    n = rd_onnx_add_node(b, "Conv", "Conv_2", (const char *const[]){"r1", "w2"}, 2, (const char *const[]){"c2"}, 1);
    rd_onnx_attr_ints(n, "pads", (const int64_t[]){1, 1, 1, 1}, 4);
    rd_onnx_add_node(b, "Add", "Add_3", (const char *const[]){"c2", "r1"}, 2, (const char *const[]){"a3"}, 1);
    rd_onnx_add_node(b, "Conv", "Conv_4", (const char *const[]){"a3", "w4"}, 2, (const char *const[]){"y"}, 1);
    rd_onnx_add_output(b, "y", RD_DT_F32, 4, (const int64_t[]){1, 4, 8, 8}, NULL);
    CU_ASSERT_EQUAL(rd_onnx_builder_save(b, model_path, NULL), RD_OK);
    rd_onnx_builder_destroy(b);
    rd_error err = {0};
    CU_ASSERT_EQUAL_FATAL(rd_model_load(model_path, NULL, m, &err), RD_OK);
    rd_sim *s = rd_test_sim(*m, RD_PREC_INT8);
    return s;
}

/* The candidates the latency tables may time: the group tensors, as an_hyb_candidates lists them. */
static void small_cands(rd_sim *s, an_hyb_cand *c, size_t *n)
{
    static const char *const names[] = {"r1", "c2", "a3", "y"};
    *n = 0;
    for (size_t i = 0; i < 4; i++) {
        rd_sim_tensor t;
        if (rd_sim_tensor_get(s, names[i], &t, NULL) != RD_OK || t.fused_into >= 0 || t.value < 0)
            continue;
        memset(&c[*n], 0, sizeof c[*n]);
        c[*n].name = names[i];
        c[*n].allowed = true;
        (*n)++;
    }
}

static long cand_index(const an_hyb_cand *c, size_t n, const char *name)
{
    const an_hyb_cand *found = RD_FIND_NAMED(an_hyb_cand, c, n, name, name);
    return found ? (long)(found - c) : -1;
}

/* Writes a fixture (or the text) to a temporary file; returns its path (caller unlinks and frees). */
static char *write_tmp(const char *tag, fx_writer w, const lat_fx_row *rows, int n, const char *text)
{
    char p[256];
    snprintf(p, sizeof p, "/tmp/rd_test_perf_log_%d_%s", (int)getpid(), tag);
    FILE *f = fopen(p, "w");
    if (w)
        w(f, rows, n);
    else
        fputs(text, f);
    fclose(f);
    return strdup(p);
}

static void drop_tmp(const char *path)
{
    unlink(path);
    free((char *)path);
}

/* The float16 build of the same model: same layers, FLOAT16, slower. */
static void to_fp16(const lat_fx_row *in, lat_fx_row *out, int n, double factor)
{
    for (int i = 0; i < n; i++) {
        out[i] = in[i];
        out[i].dtype = "FLOAT16";
        out[i].us = in[i].us * factor;
    }
}

static void test_map_and_merge(void)
{
    rd_model *m = NULL;
    rd_sim *s = small_sim(&m);
    an_hyb_cand c[4];
    size_t n;
    small_cands(s, c, &n);
    long r1 = cand_index(c, n, "r1"), y = cand_index(c, n, "y");
    CU_ASSERT_FATAL(r1 >= 0 && y >= 0);
    lat_fx_row fp16[7];
    to_fp16(small_int8, fp16, 7, 3.0);
    const char *paths[] = {write_tmp("int8.log", lat_fx_write_v2, small_int8, 7, NULL),
                           write_tmp("fp16.log", lat_fx_write_old, fp16, 7, NULL)};
    char *errs_text = NULL;
    size_t errs_len = 0;
    FILE *errs = open_memstream(&errs_text, &errs_len);
    rd_error err = {0};
    rd_status st = an_hyb_latency_load(paths, 2, s, c, n, errs, &err);
    fclose(errs);
    CU_ASSERT_EQUAL(st, RD_OK);
    if (st != RD_OK)
        fprintf(stderr, "%s\n", err.msg);
    /* Conv_0 is the ConvRelu group whose tensor is r1: 100 us int8, 300 us float16 */
    CU_ASSERT_DOUBLE_EQUAL(c[r1].cost, 0.2, 1e-9);
    CU_ASSERT_FALSE(c[r1].cost_estimated);
    /* "Conv_4#2" is a piece of Conv_4 */
    CU_ASSERT_DOUBLE_EQUAL(c[y].cost, 0.1, 1e-9);
    /* Conv_2 (and Add_3 when the simulation fuses them): 200 us -> 600 us */
    long a3 = cand_index(c, n, "a3"), c2 = cand_index(c, n, "c2");
    CU_ASSERT_DOUBLE_EQUAL(c[c2 >= 0 ? c2 : a3].cost, 0.4, 1e-9);
    /* the report: matched and ignored, with the ignored rows named */
    RD_ASSERT_HAS_TEXTS(errs_text, "3 rows matched (3 int8 and 0 float16 times", "4 ignored",
                        "exDataConvert:y__float16 (line 12: conversion the runtime inserted)",
                        "Reshape:a3_rs_sw (line 10: no such node or tensor", "InputOperator:x",
                        "through the node before '#'");
    free(errs_text);

    /* a float16 log missing Conv_4: its cost is estimated from the others' ratio (3), and says so */
    const char *partial[] = {paths[0], write_tmp("fp16_partial.log", lat_fx_write_old, fp16, 4, NULL)};
    errs = open_memstream(&errs_text, &errs_len);
    CU_ASSERT_EQUAL(an_hyb_latency_load(partial, 2, s, c, n, errs, &err), RD_OK);
    fclose(errs);
    CU_ASSERT(c[y].cost_estimated);
    CU_ASSERT_DOUBLE_EQUAL(c[y].cost, 0.05 * (3.0 - 1.0), 1e-9);
    CU_ASSERT_FALSE(c[r1].cost_estimated);
    CU_ASSERT_PTR_NOT_NULL(strstr(errs_text, "estimated cost of 1 candidates timed one way only (y)"));
    free(errs_text);

    /* the int8 log alone: nothing to estimate from -> the error says which log to add */
    CU_ASSERT_EQUAL(an_hyb_latency_load(paths, 1, s, c, n, NULL, &err), RD_E_PARSE);
    RD_ASSERT_HAS_TEXTS(err.msg, "run the float16 (do_quantization=False) build", "r1");

    /* a CSV merged with a log: the CSV gives both sides of r1 */
    const char *mixed[] = {
        paths[0], write_tmp("t.csv", NULL, NULL, 0, "tensor,milliseconds_int8,milliseconds_float16\nr1,1.0,1.5\n")};
    CU_ASSERT_EQUAL(an_hyb_latency_load(mixed, 2, s, c, n, NULL, &err), RD_OK);
    /* r1: int8 = mean(0.1 log, 1.0 csv) = 0.55, float16 = 1.5 (csv only) */
    CU_ASSERT_DOUBLE_EQUAL(c[r1].cost, 1.5 - 0.55, 1e-9);
    CU_ASSERT(c[y].cost_estimated); /* y: int8 only, ratio 1.5/0.55 of r1 */
    drop_tmp(mixed[1]);

    /* a log of another model: nothing matches -> error; a binary file -> error */
    static const lat_fx_row other[] = {{"ConvRelu", "INT8", "NPU", "(1,3,8,8)", "(1,8,8,8)", 10, "Conv:elsewhere"}};
    const char *wrong[] = {write_tmp("other.log", lat_fx_write_v2, other, 1, NULL)};
    CU_ASSERT_EQUAL(an_hyb_latency_load(wrong, 1, s, c, n, NULL, &err), RD_E_NOTFOUND);
    RD_ASSERT_HAS_TEXTS(err.msg, "none of the 1 layer rows", "Conv:elsewhere");
    FILE *f = fopen(wrong[0], "wb");
    fwrite("\x7f"
           "ELF\0\0\x01",
           1, 7, f);
    fclose(f);
    CU_ASSERT_EQUAL(an_hyb_latency_load(wrong, 1, s, c, n, NULL, &err), RD_E_PARSE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "binary data"));
    drop_tmp(wrong[0]);
    drop_tmp(paths[0]);
    drop_tmp(paths[1]);
    drop_tmp(partial[1]);
    rd_sim_destroy(s);
    rd_model_destroy(m);
    unlink(model_path);
}

RD_TEST_REGISTER(perf_log)
{
    RD_SUITE("perf_log", {"RKNN 2.x layout with log prefix", test_v2_layout},
             {"older layout: DDR/NPU/Total Cycles columns, cells with spaces", test_old_layout},
             {"several runs averaged apart, the build-time table skipped", test_runs_and_build_table},
             {"a blank FullName", test_blank_full_name},
             {"malformed: empty, no header, no Time(us), garbage, truncated, binary, huge line", test_malformed},
             {"FullName's node part", test_node_name},
             {"rows mapped to candidates, logs and CSV merged, estimate and its errors", test_map_and_merge});
}
