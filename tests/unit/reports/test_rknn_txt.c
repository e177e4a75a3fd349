/*
 * test_rknn_txt.c: error_analysis.txt. RKNN's own samples (../shared/rknn) are parsed and written back byte
 * for byte, apart from these quirks of the samples (also in docs/formats.md):
 *  - elision lines ("...", "....") and the blank lines around them are not written back;
 *  - simulator sample: the last row has no trailing spaces (the README's editor trimmed them);
 *  - legacy sample: the batchnorm0 row and the last row keep one trailing space of seven, and the file has no
 *    final newline;
 *  - hybrid sample: no comment block (written back with no_comments, which the parser reports).
 * Python's float repr and the cell geometry (nan, negative cosines, blank cells) are checked by hand.
 */
#include "rd_test.h"
#include "rknn_diag/reports.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sample_quirks {
    const char *file;
    const char *rstrip_rows[4]; /* rows compared without trailing spaces */
    bool no_final_newline;
} sample_quirks;

static const sample_quirks samples[] = {
    {"error_analysis_simulator.txt", {"[exDataConvert] resnetv24_dense0_fwd "}, false},
    {"error_analysis_runtime.txt", {NULL}, false},
    {"error_analysis_hybrid.txt", {NULL}, false},
    {"error_analysis_legacy_1.5.txt",
     {"[BatchNormalization] resnetv24_batchnorm0_fwd ", "[exDataConvert] resnetv24_dense0_fwd "},
     true},
};

typedef struct lines {
    char **v;
    size_t n;
} lines;

static lines split(const char *text)
{
    lines l = {0};
    const char *p = text;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        l.v = realloc(l.v, (l.n + 1) * sizeof *l.v);
        l.v[l.n++] = strndup(p, n);
        p += n + (nl ? 1 : 0);
    }
    return l;
}

static void lines_free(lines *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
}

static bool is_dots(const char *s)
{
    return s[0] == '.' && strspn(s, ".") == strlen(s);
}

/* Drops elision lines and the blank lines next to them. */
static void drop_elisions(lines *l)
{
    bool *drop = calloc(l->n + 1, 1);
    for (size_t i = 0; i < l->n; i++)
        drop[i] = is_dots(l->v[i]) ||
                  (l->v[i][0] == '\0' && ((i + 1 < l->n && is_dots(l->v[i + 1])) || (i > 0 && is_dots(l->v[i - 1]))));
    size_t o = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (drop[i])
            free(l->v[i]);
        else
            l->v[o++] = l->v[i];
    }
    l->n = o;
    free(drop);
}

static size_t rstrip(const char *s)
{
    size_t n = strlen(s);
    while (n && s[n - 1] == ' ')
        n--;
    return n;
}

static void check_sample(const sample_quirks *q)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/rknn/%s", rd_test_shared_dir(), q->file);
    size_t len;
    char *orig = rd_test_read_file(path, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(orig);
    char *orig_z = strndup(orig, len);
    rd_result r;
    rd_rknn_txt_info info;
    rd_error err = {0};
    rd_status st = rd_rknn_txt_parse_ex(orig, len, q->file, &r, &info, &err);
    if (st != RD_OK)
        fprintf(stderr, "%s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(st, RD_OK);
    CU_ASSERT(info.n_elisions > 0 || strstr(q->file, "runtime"));

    rd_rknn_txt_opts o = {.layout = info.layout, .no_comments = !info.has_comments, .label_width = info.label_width};
    char *ours = NULL;
    size_t ours_len = 0;
    FILE *f = open_memstream(&ours, &ours_len);
    CU_ASSERT_EQUAL(rd_rknn_txt_write(&r, &o, f, &err), RD_OK);
    fclose(f);

    lines a = split(orig_z), b = split(ours);
    drop_elisions(&a);
    CU_ASSERT_EQUAL(a.n, b.n);
    for (size_t i = 0; i < a.n && i < b.n; i++) {
        if (strcmp(a.v[i], b.v[i]) == 0)
            continue;
        bool quirk = false;
        for (int k = 0; k < 4 && q->rstrip_rows[k]; k++)
            if (strncmp(a.v[i], q->rstrip_rows[k], strlen(q->rstrip_rows[k])) == 0)
                quirk = true;
        bool same_stripped = rstrip(a.v[i]) == rstrip(b.v[i]) && strncmp(a.v[i], b.v[i], rstrip(a.v[i])) == 0;
        if (!(quirk && same_stripped))
            fprintf(stderr, "%s line %zu differs:\n  rknn: '%s'\n  ours: '%s'\n", q->file, i + 1, a.v[i], b.v[i]);
        CU_ASSERT(quirk && same_stripped);
    }
    CU_ASSERT_EQUAL(len > 0 && orig[len - 1] == '\n', !q->no_final_newline);
    CU_ASSERT(ours_len > 0 && ours[ours_len - 1] == '\n');
    lines_free(&a);
    lines_free(&b);
    free(ours);
    free(orig);
    free(orig_z);
    rd_result_fini(&r);
}

static void test_samples_round_trip(void)
{
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++)
        check_sample(&samples[i]);
}

static void test_sample_values(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/rknn/error_analysis_runtime.txt", rd_test_shared_dir());
    rd_result r;
    rd_rknn_txt_info info;
    rd_error err = {0};
    CU_ASSERT_EQUAL_FATAL(rd_rknn_txt_load(path, &r, &info, &err), RD_OK);
    CU_ASSERT_EQUAL(r.n_layers, 5);
    CU_ASSERT(r.has_runtime);
    CU_ASSERT_EQUAL(info.label_width, 45);
    CU_ASSERT_STRING_EQUAL(r.layers[1].op_type, "Reshape");
    CU_ASSERT_STRING_EQUAL(r.layers[1].name, "/FC/Gemm_2conv_reshape1_output");
    CU_ASSERT_DOUBLE_EQUAL(r.layers[0].groups[RD_GROUP_RT_ENTIRE].mean.euc, 0.01185, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(r.layers[1].groups[RD_GROUP_RT_SINGLE_SIM].mean.euc, 0.0, 0);
    CU_ASSERT_DOUBLE_EQUAL(r.layers[4].groups[RD_GROUP_SIM_SINGLE].mean.cos, 1.0, 0);
    rd_result_fini(&r);

    snprintf(path, sizeof path, "%s/rknn/error_analysis_hybrid.txt", rd_test_shared_dir());
    CU_ASSERT_EQUAL_FATAL(rd_rknn_txt_load(path, &r, &info, &err), RD_OK);
    CU_ASSERT_FALSE(info.has_comments);
    CU_ASSERT_PTR_NOT_NULL(r.layers[2].fused_into);
    CU_ASSERT_FALSE(r.layers[2].groups[0].present);
    CU_ASSERT_STRING_EQUAL(r.layers[2].name, "Conv__350:0");
    CU_ASSERT_PTR_NULL(r.layers[3].fused_into);
    rd_result_fini(&r);

    snprintf(path, sizeof path, "%s/rknn/error_analysis_legacy_1.5.txt", rd_test_shared_dir());
    CU_ASSERT_EQUAL_FATAL(rd_rknn_txt_load(path, &r, &info, &err), RD_OK);
    CU_ASSERT_EQUAL(info.layout, RD_RKNN_LAYOUT_LEGACY_15);
    CU_ASSERT_DOUBLE_EQUAL(r.layers[1].groups[0].mean.cos, 0.999973, 0);
    CU_ASSERT(isnan(r.layers[1].groups[0].mean.euc));
    rd_result_fini(&r);
}

static void check_repr(double v, const char *want)
{
    char buf[64];
    rd_py_float_repr(v, buf, sizeof buf);
    if (strcmp(buf, want) != 0)
        fprintf(stderr, "repr(%.17g): got '%s', want '%s'\n", v, buf, want);
    CU_ASSERT_STRING_EQUAL(buf, want);
}

static void test_python_repr(void)
{
    /* expected strings are what CPython 3 prints for repr(x) */
    check_repr(0.0, "0.0");
    check_repr(-0.0, "-0.0");
    check_repr(1.0, "1.0");
    check_repr(2.3275, "2.3275");
    check_repr(0.1, "0.1");
    check_repr(1.0 / 3.0, "0.3333333333333333");
    check_repr(41.49812, "41.49812");
    check_repr(0.0001, "0.0001");
    check_repr(0.00001, "1e-05");
    check_repr(1.2345e-05, "1.2345e-05");
    check_repr(1e16, "1e+16");
    check_repr(1e15, "1000000000000000.0");
    check_repr(123456789.0, "123456789.0");
    check_repr(1.5e300, "1.5e+300");
    check_repr(5e-324, "5e-324");
    check_repr(NAN, "nan");
    check_repr(-NAN, "nan");
    check_repr(INFINITY, "inf");
    check_repr(-INFINITY, "-inf");
    check_repr(-31.866, "-31.866");
    check_repr(100.0, "100.0");
    check_repr(0.05, "0.05");
    char buf[64];
    CU_ASSERT_STRING_EQUAL(rd_float32_repr(0.1f, buf, sizeof buf), "0.1");
    CU_ASSERT_STRING_EQUAL(rd_float32_repr(16777216.0f, buf, sizeof buf), "16777216.0");
    CU_ASSERT_STRING_EQUAL(rd_float32_repr(3.4028235e38f, buf, sizeof buf), "3.4028235e+38");
    CU_ASSERT_STRING_EQUAL(rd_float32_repr(1e-45f, buf, sizeof buf), "1e-45");
}

static char *write_to_string(const rd_result *r, const rd_rknn_txt_opts *o)
{
    char *s = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&s, &n);
    rd_error err = {0};
    CU_ASSERT_EQUAL(rd_rknn_txt_write(r, o, f, &err), RD_OK);
    fclose(f);
    return s;
}

static void set(rd_layer_result *l, int g, double cos, double euc)
{
    rd_metrics m;
    rd_metrics_unknown(&m);
    m.cos = cos;
    m.euc = euc;
    rd_metric_group_single(&l->groups[g], &m);
}

/* nan and negative cosines, long and exponent euc values, blank cells, rows without runtime, round trip. */
static void test_cells_by_hand(void)
{
    rd_result r;
    rd_result_init(&r);
    rd_error err = {0};
    rd_layer_result *l;
    r.has_runtime = true;
    CU_ASSERT_EQUAL(rd_result_add_layer(&r, "a", "Input", &l, &err), RD_OK);
    set(l, 0, NAN, 0.0);
    set(l, 1, -0.123456, 31.866123);
    set(l, 2, 1.0, 1.2345e-05);
    set(l, 3, 0.999995, 123456789.0);
    CU_ASSERT_EQUAL(rd_result_add_layer(&r, "fused", "Conv", &l, &err), RD_OK);
    CU_ASSERT_EQUAL(rd_result_add_layer(&r, "no_dump", "Relu", &l, &err), RD_OK);
    set(l, 0, 0.5, 0.05);
    set(l, 1, 0.25, 2.0);
    char *s = write_to_string(&r, NULL);
    /* W = len("[Relu] no_dump") + 5 = 19; 0.999995 is just below the tie in binary, like Python's */
    const char *want_rows = "[Input] a          nan | 0.0       -0.12346 | 31.866        "
                            "1.00000 | 1.2345    0.99999 | 123456        \n"
                            "[Conv] fused       \n"
                            "[Relu] no_dump     0.50000 | 0.05      0.25000 | 2.0           \n";
    CU_ASSERT_PTR_NOT_NULL(strstr(s, want_rows));
    if (!strstr(s, want_rows))
        fprintf(stderr, "got:\n%s\n", s);
    CU_ASSERT_PTR_NOT_NULL(strstr(
        s, "\n---------------------------------------------------------------------------------------------------\n"));

    rd_result back;
    CU_ASSERT_EQUAL_FATAL(rd_rknn_txt_parse(s, strlen(s), "mem", &back, &err), RD_OK);
    CU_ASSERT_EQUAL(back.n_layers, 3);
    CU_ASSERT(isnan(back.layers[0].groups[0].mean.cos));
    CU_ASSERT_DOUBLE_EQUAL(back.layers[0].groups[1].mean.cos, -0.12346, 1e-12);
    CU_ASSERT(back.layers[0].groups[3].present);
    CU_ASSERT_FALSE(back.layers[1].groups[0].present);
    CU_ASSERT(back.layers[2].groups[1].present);
    CU_ASSERT_FALSE(back.layers[2].groups[2].present);
    char *s2 = write_to_string(&back, NULL);
    CU_ASSERT_STRING_EQUAL(s, s2);
    free(s2);
    rd_result_fini(&back);

    /* euc cells whose six characters cut an exponent or a negative value read back to the same cells
       (fuzz_rknn_txt: "5.01e-" was refused, "-0.000" came back as "0.0005") */
    rd_result tiny;
    rd_result_init(&tiny);
    tiny.has_runtime = true;
    CU_ASSERT_EQUAL(rd_result_add_layer(&tiny, "t", "Conv", &l, &err), RD_OK);
    set(l, 0, 0.5, 5.01e-05);
    set(l, 1, 0.5, 5.1e-05);
    set(l, 2, 0.5, 1.234e-05);
    set(l, 3, 0.5, -0.0002);
    CU_ASSERT_EQUAL(rd_result_add_layer(&tiny, "u", "Conv", &l, &err), RD_OK);
    set(l, 0, 0.5, 3.2e-80); /* "3.2e-8": one exponent digit left */
    set(l, 1, 0.5, 1.5e+25); /* "1.5e+2" */
    set(l, 2, 0.5, -2e+140); /* "-2e+14": a cut three-digit exponent, not -2e+14 (Python writes that in full) */
    set(l, 3, 0.5, -2e-14);  /* "-2e-14": whole */
    char *t1 = write_to_string(&tiny, NULL);
    CU_ASSERT_PTR_NOT_NULL(strstr(t1, "[Conv] t     0.50000 | 5.01e-    0.50000 | 5.1e-0        0.50000 | 1.234e    "
                                      "0.50000 | -0.000        \n"));
    CU_ASSERT_EQUAL_FATAL(rd_rknn_txt_parse(t1, strlen(t1), "mem", &back, &err), RD_OK);
    CU_ASSERT_DOUBLE_EQUAL(back.layers[0].groups[0].mean.euc, 5.01e-05, 1e-18);
    CU_ASSERT(back.layers[0].groups[3].mean.euc < 0);
    CU_ASSERT_DOUBLE_EQUAL(back.layers[1].groups[2].mean.euc, -2e+140, 1e+126);
    CU_ASSERT_DOUBLE_EQUAL(back.layers[1].groups[3].mean.euc, -2e-14, 1e-28);
    char *t2 = write_to_string(&back, NULL);
    CU_ASSERT_STRING_EQUAL(t1, t2);
    free(t1);
    free(t2);
    rd_result_fini(&back);
    rd_result_fini(&tiny);

    /* a middle blank cell (entire absent, single present) keeps its place */
    r.layers[2].groups[0].present = false;
    free(s);
    s = write_to_string(&r, NULL);
    CU_ASSERT_EQUAL_FATAL(rd_rknn_txt_parse(s, strlen(s), "mem", &back, &err), RD_OK);
    CU_ASSERT_FALSE(back.layers[2].groups[0].present);
    CU_ASSERT(back.layers[2].groups[1].present);
    rd_result_fini(&back);

    /* legacy */
    rd_rknn_txt_opts o = {.layout = RD_RKNN_LAYOUT_LEGACY_15};
    free(s);
    s = write_to_string(&r, &o);
    CU_ASSERT_PTR_NOT_NULL(strstr(s, "[Input] a          nan  -0.123456       \n"));
    free(s);
    rd_result_fini(&r);
}

static void expect_parse_error(const char *text, const char *fragment)
{
    rd_result r;
    rd_error err = {0};
    rd_status st = rd_rknn_txt_parse(text, strlen(text), "bad.txt", &r, &err);
    CU_ASSERT_EQUAL(st, RD_E_PARSE);
    if (st == RD_E_PARSE && !strstr(err.msg, fragment))
        fprintf(stderr, "message '%s' lacks '%s'\n", err.msg, fragment);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, fragment));
    CU_ASSERT_EQUAL(r.n_layers, 0);
}

#define HDR                                                          \
    "layer_name               simulator_error                    \n" \
    "                     entire              single             \n" \
    "                  cos      euc        cos      euc          \n" \
    "-----------------------------------------------------------\n"

static void test_malformed(void)
{
    expect_parse_error("", "bad.txt:1: no 'layer_name' header");
    expect_parse_error("# comment\n\n", "no 'layer_name' header");
    expect_parse_error("hello\n", "bad.txt:1: expected the header line");
    expect_parse_error("layer_name               simulator_error                    \n",
                       "bad.txt:2: file ends inside the header");
    expect_parse_error(HDR, "bad.txt:5: no layer rows");
    expect_parse_error(HDR "[Input] a            1.00000 | 0.0       1.0000",
                       "bad.txt:5: cell '1.0000' is not 'cos | euc'");
    expect_parse_error(HDR "[Input] a            1.00000 | 0.0       1.00000 | 0.0       2.0 | 1.0\n",
                       "bad.txt:5: more cells");
    expect_parse_error(HDR "[Input] a            1.0x000 | 0.0\n", "bad.txt:5: cosine '1.0x000'");
    expect_parse_error(HDR "[Input] a            1.00000 | zz\n", "bad.txt:5: euc 'zz'");
    expect_parse_error(HDR "Input a              1.00000 | 0.0\n", "bad.txt:5: row label 'Input a'");
    expect_parse_error(HDR "[Input] a            1.00000 | 0.0       1.00000 | 0.0           \n[Conv] b",
                       "bad.txt:6: last row");
    expect_parse_error(HDR "[Input] averyveryverylonglabel 1.00000 | 0.0\n", "runs into the cells");
    expect_parse_error("layer_name               simulator_error                    \n"
                       "                     entire              single             \n"
                       "                  cos      euc        cos      euc          \n"
                       "----------------x------------------------------------------\n",
                       "bad.txt:4: expected the dash rule");
    expect_parse_error("layer_name            simulator_error                    \n"
                       "                     entire              single             \n"
                       "                  cos      euc        cos      euc          \n",
                       "header lines are not RKNN's");
    /* accepted: CRLF, no trailing spaces, no final newline, elisions */
    rd_result r;
    rd_error err = {0};
    const char *ok = "layer_name               simulator_error\r\n"
                     "                     entire              single\r\n"
                     "                  cos      euc        cos      euc\r\n"
                     "-----------------------------------------------------------\r\n"
                     "[Input] a            1.00000 | 0.0       1.00000 | 0.0\r\n\r\n...\r\n\r\n"
                     "[Conv] b             0.90000 | 1.5       1.00000 | 0.0";
    CU_ASSERT_EQUAL(rd_rknn_txt_parse(ok, strlen(ok), "ok.txt", &r, &err), RD_OK);
    CU_ASSERT_EQUAL(r.n_layers, 2);
    rd_result_fini(&r);
}

static void test_label_unicode_width(void)
{
    rd_result r;
    rd_result_init(&r);
    rd_error err = {0};
    rd_layer_result *l;
    rd_result_add_layer(&r, "\xC3\xA9t\xC3\xA9", "Conv", &l, &err); /* "été": 3 code points, 5 bytes */
    set(l, 0, 1.0, 0.0);
    set(l, 1, 1.0, 0.0);
    char *s = write_to_string(&r, NULL);
    /* W = len("[Conv] été") + 5 = 15 code points */
    CU_ASSERT_PTR_NOT_NULL(strstr(s, "[Conv] \xC3\xA9t\xC3\xA9     1.00000 | 0.0"));
    rd_result back;
    CU_ASSERT_EQUAL(rd_rknn_txt_parse(s, strlen(s), "u.txt", &back, &err), RD_OK);
    CU_ASSERT_STRING_EQUAL(back.layers[0].name, "\xC3\xA9t\xC3\xA9");
    rd_result_fini(&back);
    free(s);
    rd_result_fini(&r);
}

/* The fuzz seeds are valid files: the fuzzer starts from parsing ones. */
static void test_fuzz_seeds_parse(void)
{
    const char *seeds[] = {"seed_sim_fused_nan.txt", "seed_runtime_partial_rows.txt", "seed_legacy.txt"};
    for (size_t i = 0; i < 3; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/tests/fuzz/corpus/rknn_txt/%s", rd_test_source_dir(), seeds[i]);
        rd_result r;
        rd_error err = {0};
        rd_status st = rd_rknn_txt_load(path, &r, NULL, &err);
        if (st != RD_OK)
            fprintf(stderr, "%s\n", err.msg);
        CU_ASSERT_EQUAL(st, RD_OK);
        CU_ASSERT(r.n_layers >= 2);
        rd_result_fini(&r);
    }
}

RD_TEST_REGISTER(register_rknn_txt)
{
    RD_SUITE("rknn_txt", {"python float repr", test_python_repr}, {"cells by hand", test_cells_by_hand},
             {"malformed files", test_malformed}, {"unicode label width", test_label_unicode_width},
             {"RKNN samples round trip", test_samples_round_trip}, {"RKNN sample values", test_sample_values},
             {"fuzz seeds parse", test_fuzz_seeds_parse});
}
