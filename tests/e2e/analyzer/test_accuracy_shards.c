/*
 * test_accuracy_shards.c: the ground the accuracy shards stand on (accuracy.h's rows hook, docs/sharding.md):
 * the per-sample metrics of two shards of the samples, recorded through the hook, added to a run that
 * analyses the dump sample only, give the report of one run over every sample byte for byte (means,
 * minima, 5th percentiles, worst samples, the worst layers' details, the findings), whichever shard holds
 * the dump sample.
 */
#include "accuracy.h"
#include "demo_model.h"
#include "metrics.h"
#include "calibrated_sim.h"
#include "rd_test.h"
#include "rknn_diag/reports.h"

#include <stdlib.h>
#include <string.h>

enum { N_SAMPLES = 5, MAX_LAYERS = 256 };

/* What the shards recorded: per layer and group, (sample id, metrics) in arrival order. */
typedef struct record {
    an_group_acc groups[MAX_LAYERS][RD_GROUP_COUNT];
    char *names[MAX_LAYERS];
    int skip_sample; /* the merge analyses this one itself */
} record;

static rd_status record_rows(void *user, const rd_result *r, size_t layer, an_group_acc *groups, rd_error *err)
{
    record *rec = user;
    if (layer >= MAX_LAYERS)
        return rd_errorf(err, RD_E_LIMIT, "layer %zu", layer);
    if (!rec->names[layer])
        rec->names[layer] = strdup(r->layers[layer].name);
    for (int g = 0; g < RD_GROUP_COUNT; g++)
        for (size_t k = 0; k < groups[g].n; k++) {
            rd_status st =
                an_metric_group_add(&rec->groups[layer][g], &groups[g].samples[k], groups[g].sample_ids[k], err);
            if (st != RD_OK)
                return st;
        }
    return RD_OK;
}

/* The merge: every recorded sample but the one analysed again, added shard after shard. */
static rd_status merge_rows(void *user, const rd_result *r, size_t layer, an_group_acc *groups, rd_error *err)
{
    record *rec = user;
    if (layer >= MAX_LAYERS || !rec->names[layer] || strcmp(rec->names[layer], r->layers[layer].name) != 0)
        return rd_errorf(err, RD_E_PARSE, "layer %zu differs from the shards'", layer);
    for (int g = 0; g < RD_GROUP_COUNT; g++) {
        const an_group_acc *from = &rec->groups[layer][g];
        for (size_t k = 0; k < from->n; k++) {
            if (from->sample_ids[k] == rec->skip_sample)
                continue;
            rd_status st = an_metric_group_add(&groups[g], &from->samples[k], from->sample_ids[k], err);
            if (st != RD_OK)
                return st;
        }
    }
    return RD_OK;
}

static rd_status from_list(void *user, size_t k, rd_tensor *inputs, rd_error *err)
{
    return rd_tensor_clone(&inputs[0], &((const rd_tensor *)user)[k], err);
}

/* report.json's text of an analysis of n inputs whose first is sample `base`. */
static char *analyse(rd_sim *s, const rd_tensor *inputs, size_t n, int base, int dump, an_acc_rows_fn hook, record *rec)
{
    an_accuracy_opts o = {.warn_cos = 0.99,
                          .error_cos = 0.98,
                          .worst_layers = 6,
                          .dump_sample = dump,
                          .sample_base = base,
                          .rows = hook,
                          .rows_user = rec};
    rd_result res;
    rd_result_init(&res);
    rd_error err = {0};
    char *text = NULL;
    size_t len = 0;
    rd_status st = an_accuracy_run(s, inputs, 1, n, &o, &res, &err);
    if (st == RD_OK)
        st = an_findings_add(&res, &o, &err);
    if (st == RD_OK)
        st = rd_report_json_write(&res, &text, &len, &err);
    if (st != RD_OK)
        fprintf(stderr, "%s\n", err.msg);
    rd_result_fini(&res);
    return text;
}

static void shards_equal_one_run(rd_sim *s, const rd_tensor *inputs, int dump, size_t split)
{
    char *one = analyse(s, inputs, N_SAMPLES, 0, dump, NULL, NULL);
    record *rec = calloc(1, sizeof *rec);
    rec->skip_sample = dump;
    /* the shards, the second first (the order they finish in does not matter) */
    free(analyse(s, inputs + split, N_SAMPLES - split, (int)split, dump, record_rows, rec));
    free(analyse(s, inputs, split, 0, dump, record_rows, rec));
    char *merged = analyse(s, inputs + dump, 1, dump, dump, merge_rows, rec);
    CU_ASSERT_PTR_NOT_NULL_FATAL(one);
    CU_ASSERT_PTR_NOT_NULL_FATAL(merged);
    CU_ASSERT_STRING_EQUAL(merged, one);
    CU_ASSERT_PTR_NOT_NULL(strstr(one, "\"n_samples\":"));
    for (size_t l = 0; l < MAX_LAYERS; l++) {
        free(rec->names[l]);
        for (int g = 0; g < RD_GROUP_COUNT; g++)
            an_group_acc_fini(&rec->groups[l][g]);
    }
    free(rec);
    free(one);
    free(merged);
}

static void test_shards_equal_one_run(void)
{
    char *dir = rd_test_tmpdir("acc-shards");
    char path[4400];
    rd_error err;
    rd_model *m = NULL;
    snprintf(path, sizeof path, "%s/demo.onnx", dir);
    CU_ASSERT_EQUAL_FATAL(an_demo_model_write(path, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(rd_model_load(path, NULL, &m, &err), RD_OK);
    snprintf(path, sizeof path, "%s/image.npy", dir);
    CU_ASSERT_EQUAL_FATAL(an_demo_input_write(path, &err), RD_OK);
    /* five samples: the demo image scaled and shifted, so every sample's metrics differ */
    rd_tensor inputs[N_SAMPLES];
    for (int k = 0; k < N_SAMPLES; k++) {
        CU_ASSERT_EQUAL_FATAL(rd_npy_load(path, &inputs[k], &err), RD_OK);
        float *v = inputs[k].data;
        for (int64_t i = 0; i < rd_tensor_numel(&inputs[k]); i++)
            v[i] = v[i] * (1.0f + 0.37f * (float)k) + 0.05f * (float)((i * (k + 3)) % 11) - 0.2f;
    }
    rd_sim *s = rd_test_sim(m, RD_PREC_INT8);
    rd_calib_options co = {.threads = 1};
    CU_ASSERT_EQUAL_FATAL(rd_calibrate(s, from_list, inputs, 2, &co, &err), RD_OK);
    shards_equal_one_run(s, inputs, 0, 2); /* the dump sample in the first shard */
    shards_equal_one_run(s, inputs, 3, 2); /* in the second */
    shards_equal_one_run(s, inputs, 4, 4); /* the last sample alone in a shard */
    rd_sim_destroy(s);
    rd_model_destroy(m);
    for (int k = 0; k < N_SAMPLES; k++)
        rd_tensor_fini(&inputs[k]);
    free(dir);
}

RD_TEST_REGISTER(register_accuracy_shards)
{
    RD_SUITE("accuracy_shards", {"recorded shards + the dump sample = one run", test_shards_equal_one_run});
}
