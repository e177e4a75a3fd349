/*
 * test_hybrid_blocks.c: hybrid sweep, accuracy --sweep and the block search on a model made by our own ONNX
 * writer in which the error compounds (issue 13): a residual chain of 32 Conv+SiLU blocks whose stream carries
 * one outlier channel (x20), so each stream tensor quantizes to about 0.999 single cosine and the next int8
 * layer quantizes a float16 stream tensor again: no single float16 tensor helps, a window of the chain does.
 * Four clean blocks before and after it quantize well (0.9999+). The assertions hold whether or not the
 * simulator fuses Conv+Sigmoid+Mul into ConvExSwish (every block keeps its Add output as an int8 tensor
 * either way).
 * Also: the objectives, --over, and --score-cmd (a scorer that works, and ones that fail, hang or print no
 * number).
 */
#include "rd_test.h"
#include "files_in.h"
#include "cli_expect.h"
#include "text_check.h"
#include "paths_in.h"
#include "cli_capture.h"
#include "rknn_diag/analyzer.h"
#include "rknn_diag/reports.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define C 64     /* channels of the stream */
#define HW 8     /* spatial size */
#define HEAD 4   /* clean blocks before the chain */
#define CHAIN 32 /* blocks whose stream carries the outlier channel */
#define TAIL 4   /* clean blocks after it */
#define OUTLIER 20.0f

static uint32_t rng;
static float rnd(void)
{
    rng = rng * 1664525u + 1013904223u;
    return (float)(rng >> 8) / (float)(1u << 24) * 2.0f - 1.0f;
}

static void constant(rd_onnx_builder *b, const char *name, int rank, const int64_t *dims, float amp, float in0_scale)
{
    rd_tensor t;
    CU_ASSERT_EQUAL_FATAL(rd_tensor_alloc(&t, RD_DT_F32, rank, dims, NULL), RD_OK);
    for (int64_t i = 0; i < rd_tensor_numel(&t); i++) /* rank 4 weights: input channel 0 scaled by in0_scale */
        ((float *)t.data)[i] = amp * rnd() * (rank == 4 && i % C == 0 ? in0_scale : 1.0f);
    rd_onnx_add_initializer(b, name, &t, RD_ONNX_RAW);
    rd_tensor_fini(&t);
}

/* stream * g, g = OUTLIER (or 1/OUTLIER) on channel 0 and 1 elsewhere */
static void outlier_scale(rd_onnx_builder *b, const char *in, const char *out, float g0)
{
    char gname[32];
    snprintf(gname, sizeof gname, "%s_g", out);
    rd_tensor g;
    rd_tensor_alloc(&g, RD_DT_F32, 4, (const int64_t[]){1, C, 1, 1}, NULL);
    for (int c = 0; c < C; c++)
        ((float *)g.data)[c] = c == 0 ? g0 : 1.0f;
    rd_onnx_add_initializer(b, gname, &g, RD_ONNX_RAW);
    rd_tensor_fini(&g);
    rd_onnx_add_node(b, "Mul", out, (const char *const[]){in, gname}, 2, (const char *const[]){out}, 1);
}

static void conv1x1(rd_onnx_builder *b, int i, const char *in, const char *out, int co, float amp, float in0_scale)
{
    char w[32], bias[32];
    snprintf(w, sizeof w, "w%d", i);
    snprintf(bias, sizeof bias, "b%d", i);
    constant(b, w, 4, (const int64_t[]){co, C, 1, 1}, amp, in0_scale);
    constant(b, bias, 1, (const int64_t[]){co}, 0.05f, 1.0f);
    rd_onnx_add_node(b, "Conv", out, (const char *const[]){in, w, bias}, 3, (const char *const[]){out}, 1);
}

/*
 * x -> HEAD clean blocks -> scale_in (channel 0 x20) -> CHAIN blocks (convs read channel 0 /20) -> scale_out
 * -> TAIL clean blocks -> y (4 channels); y2: a clean head output read from the stream before the chain.
 * Block i: conv_i = Conv1x1(s), sig_i = Sigmoid(conv_i), silu_i = conv_i * sig_i, add_i = s + silu_i.
 */
static void write_chain_model(const char *path)
{
    rng = 4242;
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "x", RD_DT_F32, 4, (const int64_t[]){1, C, HW, HW}, NULL);
    char prev[32] = "x";
    float amp = 0.3f * sqrtf(3.0f / C);
    for (int i = 0; i < HEAD + CHAIN + TAIL; i++) {
        if (i == HEAD || i == HEAD + CHAIN) {
            const char *s = i == HEAD ? "scale_in" : "scale_out";
            outlier_scale(b, prev, s, i == HEAD ? OUTLIER : 1.0f / OUTLIER);
            snprintf(prev, sizeof prev, "%s", s);
        }
        if (i == HEAD) /* the second output: a clean head */
            conv1x1(b, 1000, "add3", "y2", 4, sqrtf(3.0f / C), 1.0f);
        char cn[32], sn[32], mn[32], an[32];
        snprintf(cn, sizeof cn, "conv%d", i);
        snprintf(sn, sizeof sn, "sig%d", i);
        snprintf(mn, sizeof mn, "silu%d", i);
        snprintf(an, sizeof an, "add%d", i);
        conv1x1(b, i, prev, cn, C, amp, i >= HEAD && i < HEAD + CHAIN ? 1.0f / OUTLIER : 1.0f);
        rd_onnx_add_node(b, "Sigmoid", sn, (const char *const[]){cn}, 1, (const char *const[]){sn}, 1);
        rd_onnx_add_node(b, "Mul", mn, (const char *const[]){cn, sn}, 2, (const char *const[]){mn}, 1);
        rd_onnx_add_node(b, "Add", an, (const char *const[]){prev, mn}, 2, (const char *const[]){an}, 1);
        snprintf(prev, sizeof prev, "%s", an);
    }
    conv1x1(b, 999, prev, "y", 4, sqrtf(3.0f / C), 1.0f);
    rd_onnx_add_output(b, "y", RD_DT_F32, 4, (const int64_t[]){1, 4, HW, HW}, NULL);
    rd_onnx_add_output(b, "y2", RD_DT_F32, 4, (const int64_t[]){1, 4, HW, HW}, NULL);
    CU_ASSERT_EQUAL_FATAL(rd_onnx_builder_save(b, path, NULL), RD_OK);
    rd_onnx_builder_destroy(b);
}

static char *dir, model[4200], ds[4200], out_cfg[4200];

/* The model, four samples (the dataset: calibration; the first one or two are analysed). */
static void setup(void)
{
    dir = rd_test_tmpdir("hybrid_blocks");
    rd_test_paths_in(dir, sizeof ds, model, "chain.onnx", ds, "dataset.txt", out_cfg, "out/h.quantization.cfg", NULL);
    write_chain_model(model);
    FILE *f = fopen(ds, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    for (int k = 0; k < 4; k++) {
        rd_tensor t;
        rd_tensor_alloc(&t, RD_DT_F32, 4, (const int64_t[]){1, C, HW, HW}, NULL);
        for (int64_t i = 0; i < rd_tensor_numel(&t); i++)
            ((float *)t.data)[i] = 1.7f * rnd();
        char p[4300];
        snprintf(p, sizeof p, "%s/s%d.npy", dir, k);
        CU_ASSERT_EQUAL(rd_npy_save(p, &t, NULL), RD_OK);
        rd_tensor_fini(&t);
        fprintf(f, "s%d.npy\n", k);
    }
    fclose(f);
}

static void cleanup(void)
{
    char cmd[4300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CU_ASSERT_EQUAL(system(cmd), 0);
    free(dir);
    dir = NULL;
}

/* The number after key in text (NAN when absent). */
static double number_after(const char *text, const char *key)
{
    const char *p = strstr(text, key);
    return p ? strtod(p + strlen(key), NULL) : NAN;
}

/* The block a tensor belongs to: N of convN, sigN, siluN, addN; the chain's ends for the outlier scales. */
static int block_of(const char *name)
{
    if (strcmp(name, "scale_in") == 0)
        return HEAD;
    if (strcmp(name, "scale_out") == 0)
        return HEAD + CHAIN;
    const char *digits = strpbrk(name, "0123456789");
    return digits ? atoi(digits) : -1;
}

/* Index of "addN" in the block numbering, -1 for other names. */
static int add_index(const char *name)
{
    int i = -1;
    char rest = 0;
    return sscanf(name, "add%d%c", &i, &rest) == 1 ? i : -1;
}

/* The JSON a command printed (it must have succeeded); the caller deletes it. */
static cJSON *json_out(const rd_cli_result *r)
{
    CU_ASSERT_EQUAL(r->code, 0);
    if (r->code != 0)
        fprintf(stderr, "%s\n", r->errs);
    cJSON *j = cJSON_Parse(r->out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    return j;
}

/* prefix_cos of point i of a sweep's JSON */
static double prefix_cos(const cJSON *sw, int i)
{
    return cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(sw, "points"), i), "prefix_cos")->valuedouble;
}

/* The sweep's block lies in the chain and explains the loss; checked on the JSON of hybrid sweep. */
static void test_sweep_finds_block(void)
{
    setup();
    rd_cli_result r = rd_test_cli("hybrid", "sweep", model, "--dataset", ds, "--input-layout", "nchw", "--json",
                                  "--sweep-points", "17", NULL);
    cJSON *sw = json_out(&r), *block = cJSON_GetObjectItem(sw, "block");
    CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItem(sw, "points")), 17);
    double int8 = prefix_cos(sw, 0), all = prefix_cos(sw, 16);
    CU_ASSERT(int8 < 0.98);  /* the chain's small errors add up */
    CU_ASSERT(all > 0.9995); /* float16 everywhere recovers them */
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(sw, "objective")->valuestring, "min-cos-over-outputs");
    /* the prefix curve climbs: float16 on more of the chain is better, at both ends of the range */
    double mid = prefix_cos(sw, 8);
    CU_ASSERT(mid > int8 + 0.005 && mid < all - 0.005);
    CU_ASSERT_FATAL(cJSON_IsObject(block));
    const char *first = cJSON_GetObjectItem(block, "first_tensor")->valuestring,
               *last = cJSON_GetObjectItem(block, "last_tensor")->valuestring;
    double bcos = cJSON_GetObjectItem(block, "cos")->valuedouble;
    fprintf(stderr, "sweep block: %s .. %s, cos %.5f (int8 %.5f, all %.5f)\n", first, last, bcos, int8, all);
    CU_ASSERT(bcos >= int8 + 0.7 * (all - int8));
    /* inside the chain (give or take one tensor at the edges), covering most of it */
    int a = block_of(first), z = block_of(last);
    CU_ASSERT(a >= HEAD - 1 && z <= HEAD + CHAIN && z - a >= CHAIN / 2);
    cJSON_Delete(sw);
    rd_test_cli_free(&r);

    /* the table and the finding */
    r = rd_test_cli("hybrid", "sweep", model, "--dataset", ds, "--input-layout", "nchw", "--sweep-points", "9", NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    RD_ASSERT_HAS_TEXTS(r.out, "pre_cos", "The error builds up in a block");
    CU_ASSERT_PTR_NULL(strstr(r.out, "likely configuration"));
    rd_test_cli_free(&r);
    cleanup();
}

static bool has_kind(const rd_result *r, rd_finding_kind k)
{
    for (size_t i = 0; i < r->n_findings; i++)
        if (r->findings[i].kind == k)
            return true;
    return false;
}

/* accuracy: without --sweep the loss looks like configuration; with it, the block finding replaces that. */
static void test_accuracy_sweep_finding(void)
{
    setup();
    char snap[4300], json[4400], html[4400];
    snprintf(snap, sizeof snap, "%s/snap", dir);
    snprintf(json, sizeof json, "%s/report.json", snap);
    snprintf(html, sizeof html, "%s/report.html", snap);
    rd_cli_result r =
        rd_test_cli("accuracy", model, "--dataset", ds, "--input-layout", "nchw", "-o", snap, "-q", "--no-txt", NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    rd_test_cli_free(&r);
    rd_result rep;
    CU_ASSERT_EQUAL_FATAL(rd_report_json_load(json, &rep, NULL), RD_OK);
    CU_ASSERT(has_kind(&rep, RD_FIND_CONFIG));
    CU_ASSERT(!has_kind(&rep, RD_FIND_ERROR_BLOCK));
    CU_ASSERT_EQUAL(rep.sweep.n_candidates, 0);
    rd_result_fini(&rep);

    r = rd_test_cli("accuracy", model, "--dataset", ds, "--input-layout", "nchw", "-o", snap, "-q", "--no-txt",
                    "--sweep", "--sweep-points", "9", NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "The error builds up in a block"));
    CU_ASSERT_PTR_NULL(strstr(r.out, "likely configuration"));
    rd_test_cli_free(&r);
    CU_ASSERT_EQUAL_FATAL(rd_report_json_load(json, &rep, NULL), RD_OK);
    CU_ASSERT(!has_kind(&rep, RD_FIND_CONFIG));
    CU_ASSERT(has_kind(&rep, RD_FIND_ERROR_BLOCK));
    CU_ASSERT(rep.sweep.n_candidates > CHAIN);
    CU_ASSERT_EQUAL(rep.sweep.n_points, 9);
    CU_ASSERT(rep.sweep.block_end > rep.sweep.block_start);
    for (size_t i = 0; i < rep.n_findings; i++)
        if (rep.findings[i].kind == RD_FIND_ERROR_BLOCK) {
            CU_ASSERT_PTR_NOT_NULL(strstr(rep.findings[i].evidence, "lifts the output cosine from"));
            CU_ASSERT_PTR_NOT_NULL(strstr(rep.findings[i].evidence, "% of the int8 layers' MACs"));
        }
    /* written and read back, the same bytes (the sweep included) */
    char *again = NULL;
    size_t len = 0, file_len = 0;
    CU_ASSERT_EQUAL(rd_report_json_write(&rep, &again, &len, NULL), RD_OK);
    char *file = rd_test_read_file(json, &file_len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(file);
    CU_ASSERT(len == file_len && again && memcmp(again, file, len) == 0);
    free(again);
    free(file);
    rd_result_fini(&rep);
    char *page = rd_test_read_file(html, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(page);
    RD_ASSERT_HAS_TEXTS(page, "<section id=\"sweep\">", "Output cosine with float16 on a prefix or a suffix",
                        "data-kind=\"error_block\"");
    free(page);
    cleanup();
}

/* No single float16 tensor helps; the search reaches 0.99 with a window and its cfg keeps the promise. */
static void test_search_window(void)
{
    setup();
    rd_cli_result r = rd_test_cli("hybrid", "suggest", model, "--dataset", ds, "--input-layout", "nchw", "--json",
                                  "--measure", "8", NULL);
    cJSON *sg = json_out(&r);
    double int8 = cJSON_GetObjectItem(sg, "output_cos_int8")->valuedouble, best_gain = 0;
    cJSON *layers = cJSON_GetObjectItem(sg, "layers");
    for (cJSON *l = layers->child; l; l = l->next) {
        cJSON *g = cJSON_GetObjectItem(l, "output_cos_gain");
        if (cJSON_IsNumber(g) && g->valuedouble > best_gain)
            best_gain = g->valuedouble;
    }
    fprintf(stderr, "int8 output cosine %.5f, best single float16 gain %.5f\n", int8, best_gain);
    /* one tensor alone: a small part of what the target needs (with Conv+Sigmoid+Mul fused, the gains are
       noise of either sign, up to a quarter of the way) */
    CU_ASSERT(best_gain < 0.4 * (0.99 - int8));
    cJSON_Delete(sg);
    rd_test_cli_free(&r);

    r = rd_test_cli("hybrid", "search", model, "--dataset", ds, "--input-layout", "nchw", "--target-cos", "0.99",
                    "--max-float", "100", "-o", out_cfg, NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    if (r.code != 0)
        fprintf(stderr, "%s\n%s\n", r.out, r.errs);
    RD_ASSERT_HAS_TEXTS(r.out, "\nprefix ", "\nstart ");
    CU_ASSERT_PTR_NULL(strstr(r.out, "target not reached"));
    double promised = number_after(r.out, "output cosine ");
    CU_ASSERT(promised >= 0.99);
    /* the set is a stretch of the chain's stream: consecutive add tensors, most of the chain */
    int lo = 1 << 30, hi = -1, n_add = 0, n_float = 0;
    for (const char *p = r.out; (p = strstr(p, "  float16: ")); p++) {
        char name[64] = "";
        sscanf(p + 11, "%63s", name);
        n_float++;
        int i = add_index(name);
        if (i >= 0) {
            n_add++;
            lo = i < lo ? i : lo;
            hi = i > hi ? i : hi;
        }
    }
    fprintf(stderr, "search: %d float16 tensors, adds %d..%d (%d)\n", n_float, lo, hi, n_add);
    CU_ASSERT(n_add >= CHAIN / 2 && hi - lo + 1 <= n_add + 4);
    CU_ASSERT(lo >= HEAD - 2 && hi <= HEAD + CHAIN + 1);
    rd_test_cli_free(&r);

    /* search.json holds the path and the result */
    size_t len = 0;
    char *text = rd_test_read_in(dir, "out/search.json", &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    cJSON *js = cJSON_Parse(text);
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(js, "status")->valuestring, "reached");
    CU_ASSERT(cJSON_GetArraySize(cJSON_GetObjectItem(js, "steps")) > 10);
    CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(js, "result"), "float16")), n_float);
    cJSON_Delete(js);
    free(text);

    /* the cfg reloads and reaches the promised cosine */
    char snap[4300];
    snprintf(snap, sizeof snap, "%s/snap", dir);
    RD_CLI_EXPECT(0, NULL, NULL, "accuracy", model, "--dataset", ds, "--input-layout", "nchw", "--cfg", out_cfg, "-o",
                  snap, "-q", "--no-txt", "--fail-under-cos", "0.99");
    cleanup();
}

/* --objective and --over: what the outputs and samples make, reported both ways. */
static void test_objectives(void)
{
    setup();
    /* the clean second output lifts the cosine of all outputs together above the lowest one's */
    rd_cli_result a = rd_test_cli("hybrid", "sweep", model, "--dataset", ds, "--input-layout", "nchw", "--json",
                                  "--sweep-points", "2", NULL);
    rd_cli_result b = rd_test_cli("hybrid", "sweep", model, "--dataset", ds, "--input-layout", "nchw", "--json",
                                  "--sweep-points", "2", "--objective", "cos", NULL);
    cJSON *ja = json_out(&a), *jb = json_out(&b);
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(jb, "objective")->valuestring, "cos");
    CU_ASSERT(prefix_cos(jb, 0) > prefix_cos(ja, 0));
    cJSON_Delete(ja);
    cJSON_Delete(jb);
    rd_test_cli_free(&a);
    rd_test_cli_free(&b);

    /* two samples: worst and mean reported; the SQNR objective needs its target */
    rd_cli_result r =
        rd_test_cli("hybrid", "search", model, "--dataset", ds, "--input-layout", "nchw", "--samples", "2",
                    "--objective", "sqnr", "--target-sqnr", "20", "--over", "mean", "-o", out_cfg, NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    if (r.code != 0)
        fprintf(stderr, "%s\n%s\n", r.out, r.errs);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "mean_cos"));
    const char *over = strstr(r.out, "over the 2 samples: worst cosine ");
    CU_ASSERT_PTR_NOT_NULL_FATAL(over);
    CU_ASSERT(number_after(over, "worst SQNR ") <= number_after(over, "dB, mean ") + 1e-9);
    CU_ASSERT(number_after(over, "dB, mean ") >= 20.0);
    CU_ASSERT_PTR_NOT_NULL(strstr(over, "the target holds for the mean"));
    rd_test_cli_free(&r);
    RD_CLI_EXPECT(2, NULL, NULL, "hybrid", "search", model, "--dataset", ds, "--input-layout", "nchw", "--objective",
                  "sqnr", "--target-cos", "0.99", "-o", out_cfg);
    RD_CLI_EXPECT(2, NULL, NULL, "hybrid", "search", model, "--dataset", ds, "--input-layout", "nchw", "--objective",
                  "best", "--target-cos", "0.99", "-o", out_cfg);
    cleanup();
}

/* --score-cmd: the test scorer's mean output cosine drives the search to its target. */
static void test_score_cmd(void)
{
    setup();
    char cmd[4400];
    snprintf(cmd, sizeof cmd, "%s cos", RD_TEST_SCORER);
    rd_cli_result r =
        rd_test_cli("hybrid", "search", model, "--dataset", ds, "--input-layout", "nchw", "--samples", "2",
                    "--score-cmd", cmd, "--target-score", "0.985", "--max-float", "120", "-o", out_cfg, NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    if (r.code != 0)
        fprintf(stderr, "%s\n%s\n", r.out, r.errs);
    double score = number_after(r.out, "\nscore: ");
    CU_ASSERT(score >= 0.985 && score < 1.0);
    CU_ASSERT(number_after(r.out, "; int8 ") < 0.985);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "--score-cmd ran "));
    /* the candidates' folders are removed once scored; the golden outputs stay */
    char p[4400];
    snprintf(p, sizeof p, "%s/out/candidates/0001", dir);
    CU_ASSERT_NOT_EQUAL(access(p, F_OK), 0);
    snprintf(p, sizeof p, "%s/out/candidates/golden/s000001_o1.npy", dir);
    CU_ASSERT_EQUAL(access(p, R_OK), 0);
    snprintf(p, sizeof p, "%s/out/candidates/golden/index.json", dir);
    CU_ASSERT_EQUAL(access(p, R_OK), 0);
    rd_test_cli_free(&r);
    /* usage: a score without its target, a target without a scorer */
    RD_CLI_EXPECT(2, NULL, NULL, "hybrid", "search", model, "--dataset", ds, "--input-layout", "nchw", "--score-cmd",
                  cmd, "-o", out_cfg);
    RD_CLI_EXPECT(2, NULL, NULL, "hybrid", "search", model, "--dataset", ds, "--input-layout", "nchw", "--target-score",
                  "1", "-o", out_cfg);
    cleanup();
}

/* A scorer that fails, prints no number or hangs: exit 3 naming the candidate and its output, steps kept. */
static void test_score_cmd_bad(void)
{
    setup();
    char counter[4300], script[4300], cmd[9000], sj[4400];
    snprintf(counter, sizeof counter, "%s/count", dir);
    snprintf(script, sizeof script, "%s/score.sh", dir);
    snprintf(cmd, sizeof cmd, "sh %s", script);
    snprintf(sj, sizeof sj, "%s/out/search.json", dir);
    /* a scorer script (the folder comes as its argument) that works three times, then fails with a message */
    char body[9000];
    snprintf(body, sizeof body,
             "test -f \"$1/index.json\" || exit 9\n"
             "test \"$RD_OUTPUTS\" = \"$1\" && test \"$RKNN_DIAG_OUTPUTS\" = \"$1\" || exit 8\n"
             "n=$(cat '%s' 2>/dev/null || echo 0); n=$((n+1)); echo $n > '%s'\n"
             "if [ $n -gt 3 ]; then echo 'mAP script: labels missing' >&2; exit 7; fi\n"
             "if grep -q '\"float16\":[[:space:]]*\\[\\]' \"$1/index.json\"; then echo 0.1; else echo 0.95; fi\n",
             counter, counter);
    rd_test_write_text(script, body);
    rd_cli_result r = rd_test_cli("hybrid", "search", model, "--dataset", ds, "--input-layout", "nchw", "--score-cmd",
                                  cmd, "--target-score", "0.9", "-o", out_cfg, NULL);
    CU_ASSERT_EQUAL(r.code, 3);
    RD_ASSERT_HAS_TEXTS(r.errs, "candidate 4 (", "exited with status 7", "mAP script: labels missing", "search.json");
    size_t len = 0;
    char *text = rd_test_read_file(sj, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    cJSON *js = cJSON_Parse(text);
    CU_ASSERT_STRING_EQUAL(cJSON_GetStringValue(cJSON_GetObjectItem(js, "status")), "failed");
    const char *error = cJSON_GetStringValue(cJSON_GetObjectItem(js, "error"));
    CU_ASSERT(error && strstr(error, "candidate 4"));
    CU_ASSERT(cJSON_GetArraySize(cJSON_GetObjectItem(js, "steps")) >= 2); /* int8 and float16 everywhere at least */
    cJSON_Delete(js);
    free(text);
    rd_test_cli_free(&r);
    /* the failing candidate's folder stays for the user */
    char kept[4400];
    snprintf(kept, sizeof kept, "%s/out/candidates/0004/index.json", dir);
    CU_ASSERT_EQUAL(access(kept, R_OK), 0);

    /* no number; {outputs} marks where the folder goes in a command line */
    RD_CLI_EXPECT(3, NULL, RD_TEXTS("candidate 1 (", "is not a finite number", "accuracy: high"), "hybrid", "search",
                  model, "--dataset", ds, "--input-layout", "nchw", "--score-cmd",
                  "ls {outputs} > /dev/null && echo 'accuracy: high'", "--target-score", "0.9", "-o", out_cfg);

    /* a hang, bounded by --score-timeout (what it started is killed too) */
    rd_test_write_text(script, "echo started\nsleep 60 &\nsleep 60\n");
    double t0 = rd_test_seconds();
    r = rd_test_cli("hybrid", "search", model, "--dataset", ds, "--input-layout", "nchw", "--score-cmd", cmd,
                    "--score-timeout", "1", "--target-score", "0.9", "-o", out_cfg, NULL);
    double took = rd_test_seconds() - t0;
    CU_ASSERT_EQUAL(r.code, 3);
    RD_ASSERT_HAS_TEXTS(r.errs, "candidate 1 (", "did not finish within 1 s", "started");
    CU_ASSERT(took < 30);
    rd_test_cli_free(&r);
    cleanup();
}

RD_TEST_REGISTER(hybrid_blocks)
{
    RD_SUITE("hybrid_blocks", {"sweep: the block of a compounding chain", test_sweep_finds_block},
             {"accuracy --sweep: the block finding replaces the configuration one", test_accuracy_sweep_finding},
             {"search: no single tensor helps, a window reaches 0.99", test_search_window},
             {"objectives: cos, sqnr, min over outputs; worst and mean", test_objectives},
             {"--score-cmd drives the search", test_score_cmd},
             {"--score-cmd that fails, prints no number or hangs", test_score_cmd_bad});
}
