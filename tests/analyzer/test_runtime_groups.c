/*
 * test_runtime_groups.c: the runtime_error group and the runtime findings, with a "board" made here: a
 * second simulation of the demo model calibrated identically, with one layer altered (its output
 * clamped by a scale four times too small: a saturating layer), whose tensors play the board's dumps.
 */
#include "accuracy.h"
#include "demo_model.h"
#include "rd_test.h"
#include "rknn_diag/reports.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fake_board {
    rd_tensor *vals;  /* per optimised-graph value, data NULL when not "dumped" */
    size_t n;
    const char *skip; /* a tensor left out of the dumps */
} fake_board;

static const rd_tensor *fake_board_tensor(void *user, int value)
{
    fake_board *b = user;
    return value >= 0 && (size_t)value < b->n && b->vals[value].data ? &b->vals[value] : NULL;
}

static rd_status collect(void *user, const rd_sim_event *ev, rd_error *err)
{
    fake_board *b = user;
    if (!ev->materialized || ev->golden->dtype != RD_DT_F32 || (b->skip && strcmp(ev->name, b->skip) == 0))
        return RD_OK;
    return rd_tensor_clone(&b->vals[ev->value], ev->entire, err);
}

static rd_status one_sample(void *user, size_t k, rd_tensor *inputs, rd_error *err)
{
    (void)k;
    return rd_tensor_clone(&inputs[0], user, err);
}

static rd_sim *make_sim(const rd_model *m, const rd_tensor *input)
{
    rd_error err;
    rd_sim *s = NULL;
    rd_sim_options so = {.precision = RD_PREC_INT8, .optimization_level = 3};
    CU_ASSERT_EQUAL_FATAL(rd_sim_create(m, &so, &s, &err), RD_OK);
    rd_calib_options co = {.threads = 1};
    CU_ASSERT_EQUAL_FATAL(rd_calibrate(s, one_sample, (void *)input, 1, &co, &err), RD_OK);
    return s;
}

typedef struct rig {
    char *dir;
    rd_model *m;
    rd_tensor input;
    rd_sim *sim;
    fake_board board;
} rig;

/* The demo model, the analysed simulation and a board whose layer `faulty` (NULL: none) saturates. */
static void rig_init(rig *r, const char *tag, const char *faulty, const char *skip)
{
    rd_error err;
    memset(r, 0, sizeof *r);
    r->dir = rd_test_tmpdir(tag);
    char path[4200];
    snprintf(path, sizeof path, "%s/demo.onnx", r->dir);
    CU_ASSERT_EQUAL_FATAL(an_demo_model_write(path, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(rd_model_load(path, NULL, &r->m, &err), RD_OK);
    snprintf(path, sizeof path, "%s/image.npy", r->dir);
    CU_ASSERT_EQUAL_FATAL(an_demo_input_write(path, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(rd_npy_load(path, &r->input, &err), RD_OK);
    r->sim = make_sim(r->m, &r->input);
    rd_sim *board = make_sim(r->m, &r->input);
    if (faulty) {
        rd_sim_tensor t;
        CU_ASSERT_EQUAL_FATAL(rd_sim_tensor_get(board, faulty, &t, &err), RD_OK);
        CU_ASSERT_EQUAL_FATAL(rd_sim_set_qparams(board, faulty, t.scale / 4, t.zero_point, &err), RD_OK);
    }
    r->board.n = rd_model_value_count(rd_sim_model(board));
    r->board.vals = calloc(r->board.n, sizeof *r->board.vals);
    r->board.skip = skip;
    CU_ASSERT_EQUAL_FATAL(rd_sim_analyze(board, &r->input, 1, collect, &r->board, &err), RD_OK);
    rd_sim_destroy(board);
}

static void rig_fini(rig *r)
{
    for (size_t v = 0; v < r->board.n; v++)
        rd_tensor_fini(&r->board.vals[v]);
    free(r->board.vals);
    rd_sim_destroy(r->sim);
    rd_model_destroy(r->m);
    rd_tensor_fini(&r->input);
    free(r->dir);
}

static an_accuracy_opts rig_opts(rig *r, char *snap, size_t len)
{
    snprintf(snap, len, "%s/snap", r->dir);
    an_accuracy_opts o = {.output_dir = snap, .warn_cos = 0.99, .error_cos = 0.98, .worst_layers = 6,
                          .runtime = fake_board_tensor, .runtime_user = &r->board};
    return o;
}

static const rd_layer_result *layer(const rd_result *res, const char *name)
{
    for (size_t i = 0; i < res->n_layers; i++)
        if (strcmp(res->layers[i].name, name) == 0)
            return &res->layers[i];
    return NULL;
}

static size_t count_kind(const rd_result *res, rd_finding_kind k)
{
    size_t n = 0;
    for (size_t i = 0; i < res->n_findings; i++)
        n += res->findings[i].kind == k;
    return n;
}

static const rd_finding *first_kind(const rd_result *res, rd_finding_kind k)
{
    for (size_t i = 0; i < res->n_findings; i++)
        if (res->findings[i].kind == k)
            return &res->findings[i];
    return NULL;
}

/* A board that computes every layer as the simulator: both groups, single_sim exact, no runtime finding. */
static void test_faithful_board(void)
{
    rig r;
    rig_init(&r, "rt-faithful", NULL, NULL);
    char snap[4300];
    an_accuracy_opts o = rig_opts(&r, snap, sizeof snap);
    rd_result res;
    rd_result_init(&res);
    an_layer_runtime *rt = NULL;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(an_accuracy_run_rt(r.sim, &r.input, 1, 1, &o, &res, &rt, &err), RD_OK);
    CU_ASSERT(res.has_runtime);
    const rd_layer_result *l = layer(&res, "relu6_out");
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    CU_ASSERT(l->groups[RD_GROUP_RT_ENTIRE].present);
    CU_ASSERT(l->groups[RD_GROUP_RT_SINGLE_SIM].present);
    CU_ASSERT_DOUBLE_EQUAL(l->groups[RD_GROUP_RT_SINGLE_SIM].mean.cos, 1.0, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(l->groups[RD_GROUP_RT_SINGLE_SIM].mean.euc, 0.0, 1e-6);
    /* the board equals the simulator end to end: runtime entire is simulator entire */
    CU_ASSERT_DOUBLE_EQUAL(l->groups[RD_GROUP_RT_ENTIRE].mean.cos, l->groups[RD_GROUP_SIM_ENTIRE].mean.cos, 1e-9);
    /* a fused-away tensor stays blank in both groups */
    const rd_layer_result *fused = layer(&res, "dw_out");
    if (fused)
        CU_ASSERT_FALSE(fused->groups[RD_GROUP_RT_ENTIRE].present);
    CU_ASSERT_EQUAL(an_findings_add_rt(&res, &o, rt, &err), RD_OK);
    CU_ASSERT_EQUAL(count_kind(&res, RD_FIND_RUNTIME_DEPARTURE), 0);
    /* error_analysis.txt: six comment lines and the two-group header */
    char path[4400];
    snprintf(path, sizeof path, "%s/error_analysis.txt", snap);
    rd_rknn_txt_opts to = {0};
    CU_ASSERT_EQUAL(rd_rknn_txt_save(&res, &to, path, &err), RD_OK);
    size_t len = 0;
    char *text = rd_test_read_file(path, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    int comments = 0;
    for (const char *p = text; *p == '#'; p = strchr(p, '\n') + 1)
        comments++;
    CU_ASSERT_EQUAL(comments, 6);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "runtime_error"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "     entire           single_sim            "));
    free(text);
    /* the board's tensors in runtime/, named in map_name_to_file.txt */
    snprintf(path, sizeof path, "%s/runtime/relu6_out.npy", snap);
    rd_tensor back;
    CU_ASSERT_EQUAL(rd_npy_load(path, &back, &err), RD_OK);
    rd_tensor_fini(&back);
    snprintf(path, sizeof path, "%s/map_name_to_file.txt", snap);
    text = rd_test_read_file(path, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "runtime/relu6_out.txt"));
    free(text);
    free(rt);
    rd_result_fini(&res);
    rig_fini(&r);
}

/* One saturating layer on the board: named as the first departure, nothing upstream, nothing downstream. */
static void test_fault_named_exactly(void)
{
    rig r;
    rig_init(&r, "rt-fault", "relu6_out", NULL);
    char snap[4300];
    an_accuracy_opts o = rig_opts(&r, snap, sizeof snap);
    rd_result res;
    rd_result_init(&res);
    an_layer_runtime *rt = NULL;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(an_accuracy_run_rt(r.sim, &r.input, 1, 1, &o, &res, &rt, &err), RD_OK);
    const rd_layer_result *l = layer(&res, "relu6_out");
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    CU_ASSERT(l->groups[RD_GROUP_RT_SINGLE_SIM].mean.cos < 0.99);
    CU_ASSERT_EQUAL(an_findings_add_rt(&res, &o, rt, &err), RD_OK);
    CU_ASSERT_EQUAL(count_kind(&res, RD_FIND_RUNTIME_DEPARTURE), 1);
    const rd_finding *f = first_kind(&res, RD_FIND_RUNTIME_DEPARTURE);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_STRING_EQUAL(f->layer, "relu6_out");
    CU_ASSERT_PTR_NOT_NULL(strstr(f->title, "first departure"));
    CU_ASSERT_PTR_NOT_NULL(strstr(f->evidence, "single_sim cosine"));
    /* the per-tensor outlier conv is lossy in the simulator too: quantization, not the runtime */
    for (size_t i = 0; i < res.n_findings; i++)
        if (res.findings[i].kind == RD_FIND_LOSSY_LAYER && strcmp(res.findings[i].layer, "relu6_out") != 0)
            CU_ASSERT_PTR_NULL(strstr(res.findings[i].evidence, "see the runtime finding"));
    free(rt);
    rd_result_fini(&res);
    rig_fini(&r);
}

/* A layer the board did not dump shows only the simulator group; the layer after it has no single_sim. */
static void test_missing_dump_blank(void)
{
    rig r;
    rig_init(&r, "rt-missing", NULL, "restored");
    char snap[4300];
    an_accuracy_opts o = rig_opts(&r, snap, sizeof snap);
    rd_result res;
    rd_result_init(&res);
    an_layer_runtime *rt = NULL;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(an_accuracy_run_rt(r.sim, &r.input, 1, 1, &o, &res, &rt, &err), RD_OK);
    const rd_layer_result *l = layer(&res, "restored");
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    CU_ASSERT(l->groups[RD_GROUP_SIM_ENTIRE].present);
    CU_ASSERT_FALSE(l->groups[RD_GROUP_RT_ENTIRE].present);
    CU_ASSERT_FALSE(l->groups[RD_GROUP_RT_SINGLE_SIM].present);
    l = layer(&res, "relu6_out");
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    CU_ASSERT(l->groups[RD_GROUP_RT_ENTIRE].present);
    CU_ASSERT_FALSE(l->groups[RD_GROUP_RT_SINGLE_SIM].present);
    CU_ASSERT_EQUAL(an_findings_add_rt(&res, &o, rt, &err), RD_OK);
    CU_ASSERT_EQUAL(count_kind(&res, RD_FIND_RUNTIME_DEPARTURE), 0);
    free(rt);
    rd_result_fini(&res);
    rig_fini(&r);
}

RD_TEST_REGISTER(register_runtime_groups)
{
    RD_SUITE("runtime_groups", {"a faithful board", test_faithful_board},
             {"a faulty layer is named exactly", test_fault_named_exactly},
             {"a layer not dumped is blank", test_missing_dump_blank});
}
