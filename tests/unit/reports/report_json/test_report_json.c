/* test_report_json.c: report.json round trips and clear errors on mangled files. */
#include "rd_test.h"
#include "sample_result.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool same_double(double a, double b)
{
    return (isnan(a) && isnan(b)) || a == b;
}

static void test_round_trip(void)
{
    rd_result r, back;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_sample_result(&r, 40, true, 3, &err), RD_OK);
    char *text = NULL, *text2 = NULL;
    size_t len, len2;
    CU_ASSERT_EQUAL_FATAL(rd_report_json_write(&r, &text, &len, &err), RD_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"schema_version\":\t1"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"nan\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"inf\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"nonfinite\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"both_zero\""));
    CU_ASSERT_EQUAL_FATAL(rd_report_json_parse(text, len, "t.json", &back, &err), RD_OK);
    CU_ASSERT_EQUAL(back.n_layers, r.n_layers);
    CU_ASSERT_EQUAL(back.n_findings, r.n_findings);
    CU_ASSERT_EQUAL(back.n_config, r.n_config);
    CU_ASSERT_EQUAL(back.n_samples, 3);
    CU_ASSERT(back.has_runtime);
    CU_ASSERT_STRING_EQUAL(back.layers[7].name, RD_SAMPLE_EVIL_NAME);
    for (size_t i = 0; i < r.n_layers; i++) {
        const rd_layer_result *a = &r.layers[i], *b = &back.layers[i];
        CU_ASSERT_STRING_EQUAL(a->name, b->name);
        CU_ASSERT_EQUAL((a->fused_into == NULL), (b->fused_into == NULL));
        CU_ASSERT_EQUAL(a->rank, b->rank);
        CU_ASSERT_EQUAL(a->hist.n_bins, b->hist.n_bins);
        CU_ASSERT_EQUAL(a->channels.n, b->channels.n);
        for (int g = 0; g < RD_GROUP_COUNT; g++) {
            CU_ASSERT_EQUAL(a->groups[g].present, b->groups[g].present);
            if (!a->groups[g].present)
                continue;
            CU_ASSERT(same_double(a->groups[g].mean.cos, b->groups[g].mean.cos));
            CU_ASSERT(same_double(a->groups[g].mean.sqnr_db, b->groups[g].mean.sqnr_db));
            CU_ASSERT(same_double(a->groups[g].mean.gain, b->groups[g].mean.gain));
            CU_ASSERT(same_double(a->groups[g].cos_p5, b->groups[g].cos_p5));
            CU_ASSERT_EQUAL(a->groups[g].mean.degenerate, b->groups[g].mean.degenerate);
            CU_ASSERT_EQUAL(a->groups[g].worst_sample, b->groups[g].worst_sample);
        }
    }
    CU_ASSERT_PTR_NULL(back.findings[3].layer);
    CU_ASSERT_EQUAL(back.findings[0].kind, RD_FIND_LOSSY_LAYER);
    CU_ASSERT_EQUAL(back.findings[0].severity, RD_SEV_ERROR);
    CU_ASSERT_EQUAL_FATAL(rd_report_json_write(&back, &text2, &len2, &err), RD_OK);
    CU_ASSERT_EQUAL(len, len2);
    CU_ASSERT(len == len2 && memcmp(text, text2, len) == 0);
    /* a loaded result can still be appended to (the appenders assume their capacity rule) */
    for (int i = 0; i < 30; i++)
        CU_ASSERT_EQUAL(rd_result_add_layer(&back, "extra", "Conv", NULL, &err), RD_OK);
    free(text);
    free(text2);
    rd_result_fini(&back);
    rd_result_fini(&r);
}

static void test_empty_result(void)
{
    rd_result r, back;
    rd_error err;
    rd_result_init(&r);
    char *text;
    size_t len;
    CU_ASSERT_EQUAL_FATAL(rd_report_json_write(&r, &text, &len, &err), RD_OK);
    CU_ASSERT_EQUAL(rd_report_json_parse(text, len, "e.json", &back, &err), RD_OK);
    CU_ASSERT_EQUAL(back.n_layers, 0);
    CU_ASSERT_PTR_NULL(back.tool);
    free(text);
    rd_result_fini(&back);
}

static void test_save_load(void)
{
    rd_result r, back;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_sample_result(&r, 12, false, 1, &err), RD_OK);
    char *dir = rd_test_tmpdir("report_json");
    char path[1024];
    snprintf(path, sizeof path, "%s/report.json", dir);
    CU_ASSERT_EQUAL(rd_report_json_save(&r, path, &err), RD_OK);
    CU_ASSERT_EQUAL(rd_report_json_load(path, &back, &err), RD_OK);
    CU_ASSERT_EQUAL(back.n_layers, 12);
    rd_result_fini(&back);
    snprintf(path, sizeof path, "%s/missing.json", dir);
    CU_ASSERT_EQUAL(rd_report_json_load(path, &back, &err), RD_E_NOTFOUND);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "missing.json"));
    snprintf(path, sizeof path, "%s/no/such/dir/report.json", dir);
    CU_ASSERT_EQUAL(rd_report_json_save(&r, path, &err), RD_E_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "report.json"));
    free(dir);
    rd_result_fini(&r);
}

/* Parses text, expects code and a message containing want. */
static void expect_error(const char *text, rd_status code, const char *want)
{
    rd_result r;
    rd_error err;
    rd_error_clear(&err);
    rd_status st = rd_report_json_parse(text, strlen(text), "bad.json", &r, &err);
    CU_ASSERT_EQUAL(st, code);
    if (!strstr(err.msg, want) || strncmp(err.msg, "bad.json", 8) != 0) {
        fprintf(stderr, "\n  message '%s' lacks '%s'\n", err.msg, want);
        CU_FAIL("error message");
    }
    CU_ASSERT_EQUAL(r.n_layers, 0);
    rd_result_fini(&r);
}

#define HEAD "{\"schema_version\":1,\"tool\":null,\"model\":\"m\",\"config\":[],\"n_samples\":1,\"has_runtime\":false,"
#define GROUP(cos)                                                                                \
    "{\"n_samples\":1,\"cos\":" cos ",\"euc\":0,\"euc_rel\":0,\"sqnr_db\":\"inf\",\"max_abs\":0," \
    "\"mean_abs\":0,\"gain\":1,\"offset\":0,\"sqnr_affine_db\":\"inf\",\"err_steps\":\"nan\","    \
    "\"saturated_share\":0,\"zero_share\":0,\"fp16_overflow\":0,\"fp16_max_abs\":1,\"count\":4,"  \
    "\"degenerate\":\"none\",\"cos_min\":1,\"cos_p5\":1,\"worst_sample\":0}"
#define LAYER(name, cos)                                                                                  \
    "{\"name\":" name ",\"op_type\":\"Conv\",\"fused_into\":null,\"precision\":\"int8\",\"shape\":[1,2]," \
    "\"groups\":{\"simulator_single\":" GROUP(cos) "}}"

static void test_errors(void)
{
    /* the template itself is valid */
    rd_result r;
    rd_error err;
    const char *ok = HEAD "\"layers\":[" LAYER("\"a\"", "1") "],\"findings\":[]}";
    CU_ASSERT_EQUAL_FATAL(rd_report_json_parse(ok, strlen(ok), "ok.json", &r, &err), RD_OK);
    CU_ASSERT(isinf(r.layers[0].groups[RD_GROUP_SIM_SINGLE].mean.sqnr_db));
    CU_ASSERT(isnan(r.layers[0].groups[RD_GROUP_SIM_SINGLE].mean.err_steps));
    rd_result_fini(&r);

    expect_error("", RD_E_PARSE, "empty");
    expect_error("{\"schema_version\":1,\n  \"tool\": nul}", RD_E_PARSE, "bad.json:2:");
    expect_error("[1,2]", RD_E_PARSE, "$: expected an object, got an array");
    expect_error("{\"tool\":1}", RD_E_PARSE, "$.schema_version: missing");
    expect_error("{\"schema_version\":2}", RD_E_UNSUPPORTED, "version 2 is not supported");
    expect_error("{\"schema_version\":\"1\"}", RD_E_PARSE, "$.schema_version: expected a number");
    expect_error(HEAD "\"layers\":[" LAYER("\"a\"", "\"high\"") "],\"findings\":[]}", RD_E_PARSE,
                 "$.layers[0].groups.simulator_single.cos: expected a number or \"nan\"");
    expect_error(HEAD "\"layers\":[" LAYER("\"a\"", "1") "," LAYER("7", "1") "],\"findings\":[]}", RD_E_PARSE,
                 "$.layers[1].name: expected a string, got a number");
    expect_error(HEAD "\"layers\":[{\"op_type\":\"Conv\"}],\"findings\":[]}", RD_E_PARSE, "$.layers[0].name: missing");
    expect_error(HEAD "\"layers\":{},\"findings\":[]}", RD_E_PARSE, "$.layers: expected an array, got an object");
    expect_error(HEAD "\"layers\":[],\"findings\":[{\"kind\":\"x\",\"severity\":\"fatal\"}]}", RD_E_PARSE,
                 "$.findings[0].severity: unknown value \"fatal\"");
    expect_error(HEAD "\"layers\":[],\"findings\":[]} trailing", RD_E_PARSE, "unexpected data after");
    expect_error("{\"schema_version\":1,\"tool\":null,\"model\":\"m\",\"config\":[],\"n_samples\":1.5}", RD_E_PARSE,
                 "$.n_samples: an integer");
    expect_error("{\"schema_version\":1,\"tool\":null,\"model\":\"m\",\"config\":[],\"n_samples\":1,"
                 "\"has_runtime\":0}",
                 RD_E_PARSE, "$.has_runtime: expected a boolean, got a number");
    expect_error(HEAD "\"layers\":[{\"name\":\"a\",\"op_type\":null,\"fused_into\":null,\"precision\":null,"
                      "\"shape\":[1,2,3,4,5,6,7,8,9],\"groups\":{}}],\"findings\":[]}",
                 RD_E_PARSE, "$.layers[0].shape: more than 8 dimensions");
    expect_error(HEAD "\"layers\":[{\"name\":\"a\",\"op_type\":null,\"fused_into\":null,\"precision\":null,"
                      "\"shape\":[],\"groups\":{},\"histogram\":{\"lo\":0,\"hi\":1,\"golden\":[1,2],"
                      "\"tested\":[1]}}],\"findings\":[]}",
                 RD_E_PARSE, "$.layers[0].histogram.tested: 1 counts");
    expect_error(HEAD "\"layers\":[{\"name\":\"a\",\"op_type\":null,\"fused_into\":null,\"precision\":null,"
                      "\"shape\":[],\"groups\":{},\"channel_cos\":[1,\"x\"]}],\"findings\":[]}",
                 RD_E_PARSE, "$.layers[0].channel_cos[1]: expected a number");
}

/* A sweep over the sample result's layers: read back, written again, the same bytes; NaN shares kept. */
static void test_sweep_round_trip(void)
{
    rd_result r, back;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_sample_result(&r, 12, false, 1, &err), RD_OK);
    rd_sweep *sw = &r.sweep;
    sw->n_candidates = 10;
    sw->objective = strdup("cos");
    sw->n_points = 4;
    sw->points = calloc(4, sizeof *sw->points);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sw->points);
    static const int ks[4] = {0, 3, 7, 10};
    for (int i = 0; i < 4; i++) {
        rd_sweep_point *p = &sw->points[i];
        p->k = ks[i];
        p->layer = i < 3 ? ks[i] + 1 : -1;
        p->prefix_cos = 0.9 + 0.03 * i;
        p->suffix_cos = 0.99 - 0.03 * i;
        p->prefix_sqnr_db = i == 3 ? INFINITY : 10.0 * i;
        p->suffix_sqnr_db = 30.0 - i;
        p->prefix_mac_share = i == 0 ? 0.0 : NAN;
        p->suffix_mac_share = 1.0 / 3.0;
    }
    sw->block_start = 2;
    sw->block_end = 6;
    sw->block_first_layer = 3;
    sw->block_last_layer = 7;
    sw->block_cos = 0.985;
    sw->block_sqnr_db = 18.25;
    sw->block_mac_share = 0.125;
    char *text = NULL, *text2 = NULL;
    size_t len, len2;
    CU_ASSERT_EQUAL_FATAL(rd_report_json_write(&r, &text, &len, &err), RD_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"sweep\":"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"first_tensor\":"));
    CU_ASSERT_EQUAL_FATAL(rd_report_json_parse(text, len, "s.json", &back, &err), RD_OK);
    CU_ASSERT_EQUAL(back.sweep.n_candidates, 10);
    CU_ASSERT_STRING_EQUAL(back.sweep.objective, "cos");
    CU_ASSERT_EQUAL_FATAL(back.sweep.n_points, 4);
    CU_ASSERT_EQUAL(back.sweep.points[3].layer, -1);
    CU_ASSERT(isnan(back.sweep.points[2].prefix_mac_share));
    CU_ASSERT(isinf(back.sweep.points[3].prefix_sqnr_db));
    CU_ASSERT_EQUAL(back.sweep.block_end, 6);
    CU_ASSERT_EQUAL(back.sweep.block_last_layer, 7);
    CU_ASSERT_EQUAL_FATAL(rd_report_json_write(&back, &text2, &len2, &err), RD_OK);
    CU_ASSERT(len == len2 && memcmp(text, text2, len) == 0);
    char *obj = NULL;
    CU_ASSERT_EQUAL(rd_report_json_sweep_write(&back, &obj, &len2, &err), RD_OK);
    CU_ASSERT(obj && strncmp(obj, "{", 1) == 0 && strstr(obj, "\"block\":"));
    free(obj);
    free(text);
    free(text2);
    rd_result_fini(&back);
    rd_result_fini(&r);
    /* without a sweep: no member, and the object alone is null */
    CU_ASSERT_EQUAL_FATAL(rd_sample_result(&r, 3, false, 1, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(rd_report_json_write(&r, &text, &len, &err), RD_OK);
    CU_ASSERT_PTR_NULL(strstr(text, "\"sweep\""));
    CU_ASSERT_EQUAL(rd_report_json_sweep_write(&r, &obj, &len2, &err), RD_OK);
    CU_ASSERT(obj && strcmp(obj, "null") == 0);
    free(obj);
    free(text);
    rd_result_fini(&r);
}

#define POINT(k, layer)                                                                                 \
    "{\"k\":" k ",\"layer\":" layer ",\"prefix_cos\":0.9,\"prefix_sqnr_db\":10,\"prefix_mac_share\":0," \
    "\"suffix_cos\":1,\"suffix_sqnr_db\":\"inf\",\"suffix_mac_share\":1}"
#define SWEEP_HEAD HEAD "\"layers\":[" LAYER("\"a\"", "1") "," LAYER("\"b\"", "1") "],\"findings\":[],\"sweep\":"

static void test_sweep_errors(void)
{
    rd_result r;
    rd_error err;
    const char *ok = SWEEP_HEAD "{\"n_candidates\":2,\"objective\":null,\"points\":[" POINT("0", "0") "," POINT(
        "2", "-1") "],\"block\":{\"start\":0,\"end\":1,\"first_layer\":0,\"last_layer\":0,"
                   "\"cos\":0.95,\"sqnr_db\":12,\"mac_share\":0.5}}}";
    CU_ASSERT_EQUAL_FATAL(rd_report_json_parse(ok, strlen(ok), "ok.json", &r, &err), RD_OK);
    CU_ASSERT_EQUAL(r.sweep.block_end, 1);
    rd_result_fini(&r);
    const char *null_sweep = SWEEP_HEAD "null}";
    CU_ASSERT_EQUAL_FATAL(rd_report_json_parse(null_sweep, strlen(null_sweep), "n.json", &r, &err), RD_OK);
    CU_ASSERT_EQUAL(r.sweep.n_candidates, 0);
    rd_result_fini(&r);
    /* the sweep's object after SWEEP_HEAD, and the message it must give */
    static const char *const bad[][2] = {
        {"[]}", "$.sweep: expected an object or null"},
        {"{\"n_candidates\":0,\"objective\":null,\"points\":[],\"block\":null}}",
         "$.sweep.n_candidates: an integer in [1,"},
        {"{\"n_candidates\":2,\"objective\":null,\"points\":[" POINT("0", "0") "],\"block\":null}}",
         "$.sweep: expected a points array of 2 to n_candidates + 1 points"},
        {"{\"n_candidates\":2,\"objective\":null,\"points\":[" POINT("0", "0") "," POINT("3",
                                                                                         "-1") "],\"block\":null}}",
         "$.sweep.points[1].k: an integer in [0, 2]"},
        {"{\"n_candidates\":2,\"objective\":null,\"points\":[" POINT("1", "0") "," POINT("1", "5") "],\"block\":null}}",
         "$.sweep.points[1].layer: an integer in [-1, 1]"},
        {"{\"n_candidates\":2,\"objective\":null,\"points\":[" POINT("1", "0") "," POINT("1", "1") "],\"block\":null}}",
         "$.sweep.points[1]: expected points in increasing k"},
        {"{\"n_candidates\":2,\"objective\":null,\"points\":[" POINT("0", "0") "," POINT("2", "-1") "]}}",
         "$.sweep.block: missing"},
        {"{\"n_candidates\":2,\"objective\":null,\"points\":[" POINT("0", "0") "," POINT(
             "2", "-1") "],\"block\":{\"start\":1,\"end\":1,\"first_layer\":0,\"last_layer\":0,\"cos\":1,\"sqnr_db\":1,"
                        "\"mac_share\":0}}}",
         "$.sweep.block.end: expected an end above the start 1, got 1"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[2048];
        snprintf(text, sizeof text, "%s%s", SWEEP_HEAD, bad[i][0]);
        expect_error(text, RD_E_PARSE, bad[i][1]);
    }
}

static void test_unknown_kind_reads_as_other(void)
{
    const char *t = HEAD "\"layers\":[],\"findings\":[{\"kind\":\"future_kind\",\"severity\":\"info\","
                         "\"layer\":null,\"title\":\"t\",\"evidence\":\"e\",\"advice\":null,\"score\":\"-inf\"}],"
                         "\"new_field\":{\"ignored\":true}}";
    rd_result r;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_report_json_parse(t, strlen(t), "k.json", &r, &err), RD_OK);
    CU_ASSERT_EQUAL(r.findings[0].kind, RD_FIND_OTHER);
    CU_ASSERT(isinf(r.findings[0].score) && r.findings[0].score < 0);
    rd_result_fini(&r);
}

RD_TEST_REGISTER(register_report_json)
{
    RD_SUITE("report_json", {"round trip of a realistic result", test_round_trip}, {"empty result", test_empty_result},
             {"save and load files", test_save_load}, {"mangled files give JSON paths", test_errors},
             {"unknown finding kinds and keys", test_unknown_kind_reads_as_other},
             {"sweep round trip", test_sweep_round_trip}, {"mangled sweeps give JSON paths", test_sweep_errors});
}
