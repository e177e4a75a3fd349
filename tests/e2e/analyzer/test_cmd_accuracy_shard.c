/*
 * test_cmd_accuracy_shard.c: `accuracy --shard K/N` and `merge` of its parts on the demo model
 * (docs/sharding.md): 1, 2 and 4 shards give the one-process snapshot byte for byte; a finished shard is
 * skipped; bad merges (missing, twice, other runs, cut short, files changed since) exit 3 naming the parts;
 * the partial parser refuses malformed files.
 */
#include "accuracy_partial.h"
#include "cli_capture.h"
#include "cli_expect.h"
#include "rd_test.h"
#include "shard_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char model[4200], ds[4200];

static const char *const *demo_args(int *n)
{
    static const char *args[16];
    int k = 0;
    args[k++] = model;
    args[k++] = "--dataset";
    args[k++] = ds;
    args[k++] = "--input-layout";
    args[k++] = "nchw";
    args[k++] = "--samples";
    args[k++] = "7";
    args[k++] = "--dump-sample";
    args[k++] = "3";
    args[k++] = "-q";
    *n = k;
    return args;
}

static char *setup(const char *tag)
{
    char *dir = rd_test_demo_dir(tag);
    snprintf(model, sizeof model, "%s/demo.onnx", dir);
    snprintf(ds, sizeof ds, "%s/dataset.txt", dir);
    return dir;
}

static void test_merge_equals_one_run(void)
{
    char *dir = setup("acc-shard-eq");
    int n = 0;
    const char *const *args = demo_args(&n);
    rd_check_accuracy_shards(dir, n, args, 1);
    rd_check_accuracy_shards(dir, n, args, 2);
    rd_check_accuracy_shards(dir, n, args, 4);
    /* more shards than samples: the empty ones merge too */
    const char *few[16];
    memcpy(few, args, (size_t)n * sizeof *few);
    few[6] = "3";
    few[8] = "0";
    rd_check_accuracy_shards(dir, n, few, 4);
    free(dir);
}

static rd_cli_result shard(const char *spec, const char *out, const char *samples)
{
    return rd_test_cli("accuracy", model, "--dataset", ds, "--input-layout", "nchw", "--samples", samples,
                       "--dump-sample", "3", "-q", "--shard", spec, "-o", out, NULL);
}

static void expect_merge_error(const char *what, const char *const *parts, int n, const char *out)
{
    const char *args[16] = {"merge"};
    int k = 1;
    for (int i = 0; i < n; i++)
        args[k++] = parts[i];
    args[k++] = "-o";
    args[k++] = out;
    rd_cli_result r = rd_test_cli_argv(k, args);
    CU_ASSERT_EQUAL(r.code, 3);
    if (!strstr(r.errs, what))
        fprintf(stderr, "\nexpected '%s' in: %s\n", what, r.errs);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.errs, what));
    rd_test_cli_free(&r);
}

static void test_resume_and_bad_merges(void)
{
    char *dir = setup("acc-shard-bad");
    char s[4][4300], other[4300], out[4300], cut[4300];
    const char *spec[4] = {"0/4", "1/4", "2/4", "3/4"};
    for (int k = 0; k < 4; k++) {
        snprintf(s[k], sizeof s[k], "%s/s/%d", dir, k);
        rd_cli_result r = shard(spec[k], s[k], "7");
        CU_ASSERT_EQUAL(r.code, 0);
        rd_test_cli_free(&r);
    }
    /* a finished shard of the same run is skipped; another run's shard in the same folder is not */
    rd_cli_result r = shard("1/4", s[1], "7");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "skipped"));
    rd_test_cli_free(&r);
    snprintf(other, sizeof other, "%s/other", dir);
    r = shard("1/4", other, "8"); /* --samples 8: another run */
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NULL(strstr(r.out, "skipped"));
    rd_test_cli_free(&r);
    snprintf(out, sizeof out, "%s/merged", dir);
    expect_merge_error("shard 2/4 is missing", (const char *const[]){s[0], s[1], s[3]}, 3, out);
    expect_merge_error("shard 1/4 is given twice", (const char *const[]){s[0], s[1], s[1], s[2], s[3]}, 5, out);
    expect_merge_error("not shards of one run", (const char *const[]){s[0], other, s[2], s[3]}, 4, out);
    /* a partial cut short (a copy that did not finish) */
    snprintf(cut, sizeof cut, "%s/cut.json", dir);
    char p2[4400];
    snprintf(p2, sizeof p2, "%s/partial.json", s[2]);
    size_t len = 0;
    char *text = rd_test_read_file(p2, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    text[len / 2] = '\0';
    rd_test_write_text(cut, text);
    free(text);
    expect_merge_error("cut.json: not valid JSON", (const char *const[]){s[0], s[1], cut, s[3]}, 4, out);
    /* an eval partial among accuracy parts */
    rd_test_write_text(cut, "{\"format\": \"rknn-diag-eval-partial/1\", \"complete\": true}");
    expect_merge_error("\"format\" is not", (const char *const[]){s[0], s[1], cut, s[3]}, 4, out);
    /* the dataset changed since the shards ran: the merge sees it */
    char list[4300];
    snprintf(list, sizeof list, "%s", ds);
    text = rd_test_read_file(list, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    char *changed = malloc(len + 32);
    snprintf(changed, len + 32, "%s# edited\n", text);
    rd_test_write_text(list, changed);
    expect_merge_error("differ from what the shards analysed", (const char *const[]){s[0], s[1], s[2], s[3]}, 4, out);
    rd_test_write_text(list, text);
    free(changed);
    free(text);
    /* usage: no -o for an accuracy merge, --shard with --inputs or --sweep, a bad K/N */
    RD_CLI_EXPECT(2, NULL, NULL, "merge", s[0], s[1], s[2], s[3]);
    char image[4300];
    snprintf(image, sizeof image, "%s/image.npy", dir);
    RD_CLI_EXPECT(2, NULL, NULL, "accuracy", model, "--inputs", image, "--input-layout", "nchw", "--shard", "0/2", "-o",
                  out);
    RD_CLI_EXPECT(2, NULL, NULL, "accuracy", model, "--dataset", ds, "--sweep", "--shard", "0/2", "-o", out);
    static const char *const bad_specs[] = {"4/4", "1", "1/0", " 1/4", "-1/4", "1/+4", "1/4x", "a/4"};
    for (size_t i = 0; i < sizeof bad_specs / sizeof bad_specs[0]; i++) {
        r = shard(bad_specs[i], out, "7");
        CU_ASSERT_EQUAL(r.code, 2);
        rd_test_cli_free(&r);
    }
    free(dir);
}

/* A valid partial with one layer, then every field broken in turn. */
static void test_partial_malformed(void)
{
    static const char head[] =
        "{\"format\":\"rknn-diag-accuracy-partial/1\",\"model\":\"m.onnx\",\"argv\":[\"accuracy\",\"m.onnx\"],"
        "\"run_hash\":\"%s\",\"shard_hash\":\"%s\",\"shard\":{\"index\":%s,\"count\":2},\"samples_total\":4,"
        "\"sample_range\":[%s],\"dump_sample\":0,\"layers\":[{\"layer\":0,\"name\":\"x\",\"groups\":[[%s],[],[],[]]}],"
        "\"complete\":%s}";
    const char *hash = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    const char *entry = "[2,0.5,1,1,\"inf\",0,0,1,0,\"nan\",0,0,0,0,0,10,0,0,0,0,0]";
    struct {
        const char *run_hash, *index, *range, *entries, *complete, *what;
    } cases[] = {
        {hash, "1", "2,4", entry, "true", NULL}, /* the valid one */
        {hash, "1", "2,4", entry, "false", "did not finish"},
        {"0123", "1", "2,4", entry, "true", "64 lowercase hex"},
        {hash, "2", "2,4", entry, "true", "\"shard\" must be"},
        {hash, "1", "0,2", entry, "true", "sample_range"},
        {hash, "1", "2,4", "[1,0.5,1,1,0,0,0,1,0,0,0,0,0,0,0,10,0,0,0,0,0]", "true", "entry 0"},   /* sample outside */
        {hash, "1", "2,4", "[2,0.5,1]", "true", "entry 0"},                                        /* too short */
        {hash, "1", "2,4", "[2,0.5,1,1,0,0,0,1,0,0,0,0,0,0,0,10,9,0,0,0,0]", "true", "entry 0"},   /* degenerate 9 */
        {hash, "1", "2,4", "[2,0.5,1,1,0,0,0,1,0,0,0,0,0,-1,0,10,0,0,0,0,0]", "true", "entry 0"},  /* negative count */
        {hash, "1", "2,4", "[2,\"x\",1,1,0,0,0,1,0,0,0,0,0,0,0,10,0,0,0,0,0]", "true", "entry 0"}, /* text */
        {hash, "1", "2,4",
         "[3,0.5,1,1,0,0,0,1,0,0,0,0,0,0,0,10,0,0,0,0,0],[2,0.5,1,1,0,0,0,1,0,0,0,0,0,0,0,10,0,0,0,0,0]", "true",
         "entry 1"}, /* decreasing */
        /* the layer listed twice (the entries close the first and open a second): its samples were added twice,
           out of order, and the merge wrote a file it could not read back (fuzz_accuracy_partial) */
        {hash, "1", "2,4",
         "[2,0.5,1,1,0,0,0,1,0,0,0,0,0,0,0,10,0,0,0,0,0]],[],[],[]]},{\"layer\":0,\"name\":\"x\",\"groups\":[["
         "[2,0.5,1,1,0,0,0,1,0,0,0,0,0,0,0,10,0,0,0,0,0]",
         "true", "listed twice"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[4096];
        snprintf(text, sizeof text, head, cases[i].run_hash, hash, cases[i].index, cases[i].range, cases[i].entries,
                 cases[i].complete);
        an_acc_parts *p = NULL;
        an_acc_header h;
        rd_error err = {0};
        CU_ASSERT_EQUAL_FATAL(an_acc_parts_create(&p, &err), RD_OK);
        rd_status st = an_acc_partial_parse(text, strlen(text), "t.json", &h, p, &err);
        if (!cases[i].what) {
            CU_ASSERT_EQUAL(st, RD_OK);
            CU_ASSERT_EQUAL(h.lo, 2);
            CU_ASSERT_EQUAL(h.hi, 4);
            an_acc_header_fini(&h);
        } else {
            CU_ASSERT_EQUAL(st, RD_E_PARSE);
            if (st == RD_OK)
                an_acc_header_fini(&h);
            CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "t.json"));
            if (!strstr(err.msg, cases[i].what))
                fprintf(stderr, "\ncase %zu: expected '%s' in: %s\n", i, cases[i].what, err.msg);
            CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, cases[i].what));
        }
        an_acc_parts_destroy(p);
    }
    static const char *const junk[] = {"", "{", "[]", "{\"format\": 3}", "null"};
    for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++) {
        an_acc_header h;
        rd_error err = {0};
        CU_ASSERT_EQUAL(an_acc_partial_parse(junk[i], strlen(junk[i]), "j.json", &h, NULL, &err), RD_E_PARSE);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "j.json"));
    }
}

RD_TEST_REGISTER(register_cmd_accuracy_shard)
{
    RD_SUITE("cmd_accuracy_shard", {"merge of 1, 2, 4 shards = one run", test_merge_equals_one_run},
             {"resume, bad merges, usage", test_resume_and_bad_merges},
             {"malformed partial.json", test_partial_malformed});
}
