/*
 * test_hostile_names.c: tensor and node names chosen to attack the outputs (issue 16 item 13).
 *
 * A model made by our ONNX writer names its tensors with an OSC sequence (terminal title), a CSI clear,
 * a newline that would forge a table row, an invalid UTF-8 byte, a C1 control, a right-to-left override,
 * HTML, a leading quote, a trailing blank and a backslash. Run and analysed end to end, the terminal must
 * see no control byte and no invalid UTF-8, error_analysis.txt must read back (report --from-rknn and
 * the parser) to exactly the same names, report.json must be valid UTF-8 with every name intact but the
 * invalid byte (U+FFFD, docs/report-schema.md), and report.html must show the names escaped.
 */
#include "cli_capture.h"
#include "rd_test.h"
#include "text_check.h"
#include "rknn_diag/reports.h"
#include "rknn_diag/simulator.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const hostile[] = {
    "title\x1b]0;pwned\x07",      /* OSC: sets the terminal's title */
    "clear\x1b[2J\x1b[H",         /* CSI: clears the screen */
    "row\n[Conv] forged 1.00000", /* a newline forging a table row */
    "bad\xffutf8",                /* invalid UTF-8 */
    "c1\xc2\x9b"
    "31m",                            /* C1 CSI (8-bit terminals) */
    "rlo\xe2\x80\xaetxt.exe",         /* right-to-left override */
    "<script>alert(1)</script>&amp;", /* HTML */
    "\"quoted\"",                     /* a leading quote */
    "trailing  ",                     /* trailing blanks */
    "back\\slash\ttab",               /* a backslash and a tab */
};
#define N_HOSTILE (sizeof hostile / sizeof hostile[0])

/* x -> Relu -> Add(c) -> Relu -> ... one node per hostile name, which names its output (and the node). */
static void make_model(const char *path)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 17);
    const int64_t dims[2] = {1, 4};
    rd_onnx_add_input(b, "x", RD_DT_F32, 2, dims, NULL);
    float c[4] = {0.5f, -0.25f, 0.125f, 1.0f};
    rd_tensor ct = {.dtype = RD_DT_F32, .rank = 2, .dims = {1, 4}, .data = c};
    rd_onnx_add_initializer(b, "c", &ct, RD_ONNX_RAW);
    const char *prev = "x";
    for (size_t i = 0; i < N_HOSTILE; i++) {
        if (i % 2)
            rd_onnx_add_node(b, "Relu", hostile[i], (const char *const[]){prev}, 1, (const char *const[]){hostile[i]},
                             1);
        else
            rd_onnx_add_node(b, "Add", hostile[i], (const char *const[]){prev, "c"}, 2,
                             (const char *const[]){hostile[i]}, 1);
        prev = hostile[i];
    }
    rd_onnx_add_output(b, prev, RD_DT_F32, 2, dims, NULL);
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_onnx_builder_save(b, path, &err), RD_OK);
    rd_onnx_builder_destroy(b);
}

/* No C0 control but newline and tab, no DEL, no C1 control, no bidirectional control, valid UTF-8. */
static bool terminal_safe(const char *s)
{
    size_t n = strlen(s);
    char *fixed = rd_text_utf8_repaired(s, n, NULL);
    bool ok = fixed && strcmp(fixed, s) == 0;
    free(fixed);
    for (size_t i = 0; ok && i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        ok = !(c < 0x20 && c != '\n' && c != '\t') && c != 0x7f && !(c == 0xc2 && (unsigned char)s[i + 1] < 0xa0) &&
             !(c == 0xe2 && (unsigned char)s[i + 1] == 0x80 && (unsigned char)s[i + 2] == 0xae);
    }
    return ok;
}

/* The layer named name in r, or NULL. */
static const rd_layer_result *find_layer(const rd_result *r, const char *name)
{
    for (size_t i = 0; i < r->n_layers; i++)
        if (r->layers[i].name && strcmp(r->layers[i].name, name) == 0)
            return &r->layers[i];
    return NULL;
}

static void check_cli(rd_cli_result *r, const char *what)
{
    if (r->code != 0)
        fprintf(stderr, "\n  %s: exit %d\n%s\n", what, r->code, r->errs);
    CU_ASSERT_EQUAL(r->code, 0);
    CU_ASSERT_TRUE(terminal_safe(r->out));
    CU_ASSERT_TRUE(terminal_safe(r->errs));
    /* a forged row would start a line */
    CU_ASSERT_PTR_NULL(strstr(r->out, "\n[Conv] forged"));
    rd_test_cli_free(r);
}

static void test_hostile_names_end_to_end(void)
{
    char *dir = rd_test_tmpdir("hostile-names");
    char model[4200], input[4200], named[4300], snap[4200], path[4300], again[4200];
    snprintf(model, sizeof model, "%s/hostile.onnx", dir);
    snprintf(input, sizeof input, "%s/x.npy", dir);
    snprintf(named, sizeof named, "x=%s", input);
    snprintf(snap, sizeof snap, "%s/snap", dir);
    snprintf(again, sizeof again, "%s/again", dir);
    make_model(model);
    rd_tensor x;
    CU_ASSERT_EQUAL_FATAL(rd_tensor_alloc(&x, RD_DT_F32, 2, (const int64_t[]){1, 4}, NULL), RD_OK);
    for (int i = 0; i < 4; i++)
        ((float *)x.data)[i] = (float)i - 1.5f;
    CU_ASSERT_EQUAL_FATAL(rd_npy_save(input, &x, NULL), RD_OK);
    rd_tensor_fini(&x);

    /* the terminal: run's layer table, inspect, accuracy's table and findings */
    rd_cli_result r = rd_test_cli("run", model, "--input", named, NULL);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "title\\x1b]0;pwned\\x07"));
    check_cli(&r, "run");
    r = rd_test_cli("inspect", model, NULL);
    check_cli(&r, "inspect");
    r = rd_test_cli("accuracy", model, "--dtype", "float16", "--inputs", input, "--input-layout", "nchw", "-o", snap,
                    NULL);
    check_cli(&r, "accuracy");
    r = rd_test_cli("run", model, "--input", named, "--json", NULL);
    check_cli(&r, "run --json");

    /* error_analysis.txt reads back to the same names, as does report --from-rknn */
    rd_result txt;
    rd_error err;
    snprintf(path, sizeof path, "%s/error_analysis.txt", snap);
    rd_status st = rd_rknn_txt_load(path, &txt, NULL, &err);
    if (st != RD_OK)
        fprintf(stderr, "\n  %s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(st, RD_OK);
    for (size_t i = 0; i < N_HOSTILE; i++) {
        const rd_layer_result *l = find_layer(&txt, hostile[i]);
        if (!l)
            fprintf(stderr, "\n  error_analysis.txt lost name %zu\n", i);
        CU_ASSERT_PTR_NOT_NULL(l);
    }
    rd_result_fini(&txt);
    r = rd_test_cli("report", "--from-rknn", snap, "-o", again, NULL);
    check_cli(&r, "report --from-rknn");

    /* report.json: valid UTF-8; every name exact but the invalid byte, which is U+FFFD */
    const char *jsons[2] = {snap, again};
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/report.json", jsons[k]);
        size_t len;
        char *text = rd_test_read_file(path, &len);
        CU_ASSERT_PTR_NOT_NULL_FATAL(text);
        char *fixed = rd_text_utf8_repaired(text, len, NULL);
        CU_ASSERT_STRING_EQUAL(fixed, text);
        free(fixed);
        free(text);
        rd_result json;
        CU_ASSERT_EQUAL_FATAL(rd_report_json_load(path, &json, &err), RD_OK);
        for (size_t i = 0; i < N_HOSTILE; i++) {
            const char *want = strcmp(hostile[i], "bad\xffutf8") == 0 ? "bad\xef\xbf\xbdutf8" : hostile[i];
            CU_ASSERT_PTR_NOT_NULL(find_layer(&json, want));
        }
        rd_result_fini(&json);
    }

    /* report.html: escaped, valid UTF-8, no control byte */
    snprintf(path, sizeof path, "%s/report.html", snap);
    size_t len;
    char *html = rd_test_read_file(path, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(html);
    CU_ASSERT_TRUE(terminal_safe(html));
    CU_ASSERT_PTR_NULL(strstr(html, "<script>alert"));
    RD_ASSERT_HAS_TEXTS(html, "&lt;script&gt;alert(1)&lt;/script&gt;&amp;amp;", "title\\x1b]0;pwned\\x07",
                        "rlo\\u202etxt.exe", "bad\\xffutf8");
    free(html);
    free(dir);
}

RD_TEST_REGISTER(register_hostile_names)
{
    RD_SUITE("hostile_names", {"hostile names through run, accuracy and every report", test_hostile_names_end_to_end});
}
