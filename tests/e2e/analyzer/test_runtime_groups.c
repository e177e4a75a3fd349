/*
 * test_runtime_groups.c: the runtime_error group and the runtime findings, with a "board" made here: a
 * second simulation of the demo model calibrated identically, with one layer altered (its output
 * clamped by a scale four times too small: a saturating layer), whose tensors play the board's dumps.
 */
#include "accuracy.h"
#include "calibrated_sim.h"
#include "cli_capture.h"
#include "demo_model.h"
#include "dumps.h"
#include "rknn_diag/adb.h"
#include "rknn_diag/analyzer.h"
#include "find_named.h"
#include "rd_test.h"
#include "files_in.h"
#include "text_check.h"
#include "paths_in.h"
#include "rknn_diag/reports.h"
#include "runtime_io.h"
#include "tensor_dump.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct fake_board {
    rd_tensor *vals; /* per optimised-graph value, data NULL when not "dumped" */
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
    r->sim = rd_test_int8_sim(r->m, &r->input);
    rd_sim *board = rd_test_int8_sim(r->m, &r->input);
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
    an_accuracy_opts o = {.output_dir = snap,
                          .warn_cos = 0.99,
                          .error_cos = 0.98,
                          .worst_layers = 6,
                          .runtime = fake_board_tensor,
                          .runtime_user = &r->board};
    return o;
}

static const rd_layer_result *layer(const rd_result *res, const char *name)
{
    return RD_FIND_NAMED(rd_layer_result, res->layers, res->n_layers, name, name);
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

/* A rig analysed with its board's tensors (an_accuracy_run_rt), for the tests below to read. */
typedef struct rt_case {
    rig r;
    char snap[4300];
    an_accuracy_opts o;
    rd_result res;
    an_layer_runtime *rt;
} rt_case;

static void rt_case_run(rt_case *c, const char *tag, const char *fault, const char *missing)
{
    rig_init(&c->r, tag, fault, missing);
    c->o = rig_opts(&c->r, c->snap, sizeof c->snap);
    rd_result_init(&c->res);
    c->rt = NULL;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(an_accuracy_run_rt(c->r.sim, &c->r.input, 1, 1, &c->o, &c->res, &c->rt, &err), RD_OK);
}

static void rt_case_fini(rt_case *c)
{
    free(c->rt);
    rd_result_fini(&c->res);
    rig_fini(&c->r);
}

/* A board that computes every layer as the simulator: both groups, single_sim exact, no runtime finding. */
static void test_faithful_board(void)
{
    rt_case c;
    rt_case_run(&c, "rt-faithful", NULL, NULL);
    rd_error err;
    CU_ASSERT(c.res.has_runtime);
    const rd_layer_result *l = layer(&c.res, "relu6_out");
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    CU_ASSERT(l->groups[RD_GROUP_RT_ENTIRE].present);
    CU_ASSERT(l->groups[RD_GROUP_RT_SINGLE_SIM].present);
    CU_ASSERT_DOUBLE_EQUAL(l->groups[RD_GROUP_RT_SINGLE_SIM].mean.cos, 1.0, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(l->groups[RD_GROUP_RT_SINGLE_SIM].mean.euc, 0.0, 1e-6);
    /* the board equals the simulator end to end: runtime entire is simulator entire */
    CU_ASSERT_DOUBLE_EQUAL(l->groups[RD_GROUP_RT_ENTIRE].mean.cos, l->groups[RD_GROUP_SIM_ENTIRE].mean.cos, 1e-9);
    /* a fused-away tensor stays blank in both groups */
    const rd_layer_result *fused = layer(&c.res, "dw_out");
    if (fused)
        CU_ASSERT_FALSE(fused->groups[RD_GROUP_RT_ENTIRE].present);
    CU_ASSERT_EQUAL(an_findings_add_rt(&c.res, &c.o, c.rt, &err), RD_OK);
    CU_ASSERT_EQUAL(count_kind(&c.res, RD_FIND_RUNTIME_DEPARTURE), 0);
    /* error_analysis.txt: six comment lines and the two-group header */
    char path[4400];
    snprintf(path, sizeof path, "%s/error_analysis.txt", c.snap);
    rd_rknn_txt_opts to = {0};
    CU_ASSERT_EQUAL(rd_rknn_txt_save(&c.res, &to, path, &err), RD_OK);
    size_t len = 0;
    char *text = rd_test_read_file(path, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    int comments = 0;
    for (const char *p = text; *p == '#'; p = strchr(p, '\n') + 1)
        comments++;
    CU_ASSERT_EQUAL(comments, 6);
    RD_ASSERT_HAS_TEXTS(text, "runtime_error", "     entire           single_sim            ");
    free(text);
    /* the board's tensors in runtime/, named in map_name_to_file.txt */
    snprintf(path, sizeof path, "%s/runtime/relu6_out.npy", c.snap);
    rd_tensor back;
    CU_ASSERT_EQUAL(rd_npy_load(path, &back, &err), RD_OK);
    rd_tensor_fini(&back);
    snprintf(path, sizeof path, "%s/map_name_to_file.txt", c.snap);
    text = rd_test_read_file(path, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "runtime/relu6_out.txt"));
    free(text);
    rt_case_fini(&c);
}

/* One saturating layer on the board: named as the first departure, nothing upstream, nothing downstream. */
static void test_fault_named_exactly(void)
{
    rt_case c;
    rt_case_run(&c, "rt-fault", "relu6_out", NULL);
    rd_error err;
    const rd_layer_result *l = layer(&c.res, "relu6_out");
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    CU_ASSERT(l->groups[RD_GROUP_RT_SINGLE_SIM].mean.cos < 0.99);
    CU_ASSERT_EQUAL(an_findings_add_rt(&c.res, &c.o, c.rt, &err), RD_OK);
    CU_ASSERT_EQUAL(count_kind(&c.res, RD_FIND_RUNTIME_DEPARTURE), 1);
    const rd_finding *f = first_kind(&c.res, RD_FIND_RUNTIME_DEPARTURE);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_STRING_EQUAL(f->layer, "relu6_out");
    CU_ASSERT_PTR_NOT_NULL(strstr(f->title, "first departure"));
    CU_ASSERT_PTR_NOT_NULL(strstr(f->evidence, "single_sim cosine"));
    /* the per-tensor outlier conv is lossy in the simulator too: quantization, not the runtime */
    for (size_t i = 0; i < c.res.n_findings; i++)
        if (c.res.findings[i].kind == RD_FIND_LOSSY_LAYER && strcmp(c.res.findings[i].layer, "relu6_out") != 0)
            CU_ASSERT_PTR_NULL(strstr(c.res.findings[i].evidence, "see the runtime finding"));
    rt_case_fini(&c);
}

/* A layer the board did not dump shows only the simulator group; the layer after it has no single_sim. */
static void test_missing_dump_blank(void)
{
    rt_case c;
    rt_case_run(&c, "rt-missing", NULL, "restored");
    rd_error err;
    const rd_layer_result *l = layer(&c.res, "restored");
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    CU_ASSERT(l->groups[RD_GROUP_SIM_ENTIRE].present);
    CU_ASSERT_FALSE(l->groups[RD_GROUP_RT_ENTIRE].present);
    CU_ASSERT_FALSE(l->groups[RD_GROUP_RT_SINGLE_SIM].present);
    l = layer(&c.res, "relu6_out");
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    CU_ASSERT(l->groups[RD_GROUP_RT_ENTIRE].present);
    CU_ASSERT_FALSE(l->groups[RD_GROUP_RT_SINGLE_SIM].present);
    CU_ASSERT_EQUAL(an_findings_add_rt(&c.res, &c.o, c.rt, &err), RD_OK);
    CU_ASSERT_EQUAL(count_kind(&c.res, RD_FIND_RUNTIME_DEPARTURE), 0);
    rt_case_fini(&c);
}

/* ---- the command line on dump folders written here ---- */

typedef enum input_mistake { MISTAKE_NONE, MISTAKE_BGR, MISTAKE_NHWC, MISTAKE_NORM_TWICE } input_mistake;

static void save_dump(const char *dir, int index, const char *op, const char *name, const rd_tensor *t)
{
    an_dump_name dn = {.index = index, .rank = t->rank, .dtype = t->dtype};
    snprintf(dn.op_type, sizeof dn.op_type, "%s", op);
    an_dump_sanitise(name, dn.name, sizeof dn.name);
    for (int d = 0; d < t->rank; d++)
        dn.dims[d] = t->dims[d];
    char file[2048], path[4400];
    CU_ASSERT_FATAL(an_dump_name_format(&dn, file, sizeof file) > 0);
    snprintf(path, sizeof path, "%s/%s", dir, file);
    rd_error err;
    CU_ASSERT_EQUAL(rd_npy_save(path, t, &err), RD_OK);
}

/* librknnrt-style dumps of the rig's board: InputOperator (the raw input, with a mistake), each layer,
   OutputOperator. */
static void write_dumps(rig *r, const char *dir, input_mistake mistake)
{
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(an_mkdirs(dir, &err), RD_OK);
    rd_tensor in;
    CU_ASSERT_EQUAL_FATAL(rd_tensor_clone(&in, &r->input, &err), RD_OK);
    float *x = in.data, *src = r->input.data;
    int64_t plane = 32 * 32;
    for (int64_t c = 0; c < 3; c++)
        for (int64_t p = 0; p < plane; p++) {
            if (mistake == MISTAKE_BGR)
                x[c * plane + p] = src[(2 - c) * plane + p];
            else if (mistake == MISTAKE_NHWC)
                x[p * 3 + c] = src[c * plane + p];
            else if (mistake == MISTAKE_NORM_TWICE)
                x[c * plane + p] = (src[c * plane + p] - 0.5f) / 2.0f;
        }
    save_dump(dir, 0, "InputOperator", "image", &in);
    rd_tensor_fini(&in);
    const rd_model *m = rd_sim_model(r->sim);
    int index = 1;
    for (size_t v = 0; v < r->board.n; v++) {
        if (!r->board.vals[v].data || rd_model_input(m, 0) == (int)v)
            continue;
        rd_value_info vi;
        rd_model_value(m, v, &vi);
        rd_node_info ni;
        rd_model_node(m, (size_t)vi.producer, &ni);
        save_dump(dir, index++, ni.op_type, vi.name, &r->board.vals[v]);
    }
    save_dump(dir, index, "OutputOperator", "probs", &r->board.vals[rd_model_output(m, 0)]);
}

/* argv: "rknn-diag" and its arguments, NULL-terminated. */
static rd_cli_result cli(char **argv)
{
    int argc = 0;
    while (argv[argc])
        argc++;
    return rd_test_cli_argv(argc - 1, (const char *const *)argv + 1);
}

static rd_cli_result accuracy_on_dumps(rig *r, const char *dumps, const char *snap, const char *extra1,
                                       const char *extra2)
{
    char model[4200], input[4200];
    snprintf(model, sizeof model, "%s/demo.onnx", r->dir);
    snprintf(input, sizeof input, "%s/image.npy", r->dir);
    char *argv[] = {"rknn-diag",      "accuracy", model,        "-i",      input,
                    "--input-layout", "nchw",     "--target",   "rk3566",  "--runtime-dumps",
                    (char *)dumps,    "-o",       (char *)snap, "--quiet", (char *)extra1,
                    (char *)extra2,   NULL};
    rd_cli_result o = cli(argv);
    if (o.code != 0)
        fprintf(stderr, "%s\n%s", o.out, o.errs);
    return o;
}

static void test_cli_runtime_dumps_fault(void)
{
    rig r;
    rig_init(&r, "rt-cli-fault", "relu6_out", NULL);
    char dumps[4300], snap[4300], path[4400];
    snprintf(dumps, sizeof dumps, "%s/dumps", r.dir);
    snprintf(snap, sizeof snap, "%s/snap", r.dir);
    write_dumps(&r, dumps, MISTAKE_NONE);
    rd_cli_result o = accuracy_on_dumps(&r, dumps, snap, NULL, NULL);
    CU_ASSERT_EQUAL(o.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(o.out, "Runtime fault, first departure: the board departs from the simulator at "
                                         "'relu6_out'"));
    CU_ASSERT_PTR_NULL(strstr(o.out, "Runtime fault:")); /* nothing else named */
    CU_ASSERT_PTR_NULL(strstr(o.out, "application's input"));
    CU_ASSERT_PTR_NOT_NULL(strstr(o.errs, "runtime:"));
    snprintf(path, sizeof path, "%s/runtime/mapping.txt", snap);
    size_t len = 0;
    char *text = rd_test_read_file(path, &len);
    CU_ASSERT_PTR_NOT_NULL(text);
    free(text);
    snprintf(path, sizeof path, "%s/error_analysis.txt", snap);
    text = rd_test_read_file(path, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "# runtime_error"));
    free(text);
    free(o.out);
    free(o.errs);
    rig_fini(&r);
}

static void test_cli_input_mistakes(void)
{
    static const struct {
        input_mistake m;
        const char *expect;
    } cases[] = {{MISTAKE_BGR, "colour channels 0 and 2 swapped"},
                 {MISTAKE_NHWC, "NHWC data read as NCHW"},
                 {MISTAKE_NORM_TWICE, "normalisation applied twice"}};
    rig r;
    rig_init(&r, "rt-cli-input", NULL, NULL);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char dumps[4300], snap[4300];
        snprintf(dumps, sizeof dumps, "%s/dumps%zu", r.dir, k);
        snprintf(snap, sizeof snap, "%s/snap%zu", r.dir, k);
        write_dumps(&r, dumps, cases[k].m);
        rd_cli_result o = accuracy_on_dumps(&r, dumps, snap, NULL, NULL);
        CU_ASSERT_EQUAL(o.code, 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(o.out, "The application's input 'image'"));
        if (!strstr(o.out, cases[k].expect)) {
            fprintf(stderr, "case %zu: %s\n", k, o.out);
            CU_FAIL("input mistake not named");
        }
        free(o.out);
        free(o.errs);
    }
    /* the application read its output with a wrong scale */
    char dumps[4300], snap[4300], app[4300];
    rd_test_paths_in(r.dir, sizeof app, dumps, "dumps_ok", snap, "snap_ok", app, "app_out.npy", NULL);
    write_dumps(&r, dumps, MISTAKE_NONE);
    rd_tensor out;
    rd_error err;
    const rd_model *m = rd_sim_model(r.sim);
    CU_ASSERT_EQUAL_FATAL(rd_tensor_clone(&out, &r.board.vals[rd_model_output(m, 0)], &err), RD_OK);
    for (int64_t i = 0; i < rd_tensor_numel(&out); i++)
        ((float *)out.data)[i] *= 0.5f;
    CU_ASSERT_EQUAL(rd_npy_save(app, &out, &err), RD_OK);
    rd_tensor_fini(&out);
    rd_cli_result o = accuracy_on_dumps(&r, dumps, snap, "--app-outputs", app);
    CU_ASSERT_EQUAL(o.code, 0);
    CU_ASSERT_PTR_NULL(strstr(o.out, "The application's input"));
    RD_ASSERT_HAS_TEXTS(o.out, "The application's output 'probs'", "times 0.5");
    CU_ASSERT_PTR_NULL(strstr(o.out, "Runtime fault"));
    free(o.out);
    free(o.errs);
    rig_fini(&r);
}

static void test_cli_bad_dumps(void)
{
    rig r;
    rig_init(&r, "rt-cli-bad", NULL, NULL);
    char dumps[4300], snap[4300], path[4400];
    snprintf(dumps, sizeof dumps, "%s/empty", r.dir);
    snprintf(snap, sizeof snap, "%s/snap", r.dir);
    rd_error err;
    CU_ASSERT_EQUAL(an_mkdirs(dumps, &err), RD_OK);
    rd_cli_result o = accuracy_on_dumps(&r, dumps, snap, NULL, NULL);
    CU_ASSERT_EQUAL(o.code, 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(o.errs, dumps));
    snprintf(path, sizeof path, "%s/error_analysis.txt", snap); /* the simulator's part is still written */
    size_t len = 0;
    char *text = rd_test_read_file(path, &len);
    CU_ASSERT_PTR_NOT_NULL(text);
    free(text);
    free(o.out);
    free(o.errs);
    /* usage: --run without --target, --target alone */
    char *argv1[] = {"rknn-diag", "accuracy", "m.onnx", "--run", "x", NULL};
    o = cli(argv1);
    CU_ASSERT_EQUAL(o.code, 2);
    free(o.out);
    free(o.errs);
    char *argv2[] = {"rknn-diag", "accuracy", "m.onnx", "--target", "rk3566", NULL};
    o = cli(argv2);
    CU_ASSERT_EQUAL(o.code, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(o.errs, "--run"));
    free(o.out);
    free(o.errs);
    rig_fini(&r);
}

/* ---- the whole --target --run path against the fake board over loopback ---- */

static void touch(const char *dir, const char *name)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("old\n", f);
    fclose(f);
}

static rd_cli_result accuracy_on_board(rig *r, int port, const char *run, const char *snap, const char *extra1,
                                       const char *extra2)
{
    char model[4200], input[4200], connect[64];
    snprintf(model, sizeof model, "%s/demo.onnx", r->dir);
    snprintf(input, sizeof input, "%s/image.npy", r->dir);
    snprintf(connect, sizeof connect, "127.0.0.1:%d", port);
    char *argv[] = {"rknn-diag",  "accuracy", model,          "-i",           input,   "--input-layout", "nchw",
                    "--target",   "rk3566",   "--connect",    connect,        "--run", (char *)run,      "-o",
                    (char *)snap, "--quiet",  (char *)extra1, (char *)extra2, NULL};
    return cli(argv);
}

static void test_board_end_to_end(void)
{
    rig r;
    rig_init(&r, "rt-board", "relu6_out", NULL);
    char root[4300], stash[4400], dump_dir[4400], home[4300], snap[4300];
    snprintf(root, sizeof root, "%s/board", r.dir);
    snprintf(stash, sizeof stash, "%s/stash", root);
    snprintf(dump_dir, sizeof dump_dir, "%s/userdata/dumps", root);
    snprintf(home, sizeof home, "%s/home", r.dir);
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(an_mkdirs(home, &err), RD_OK);
    setenv("HOME", home, 1); /* keys, if any, go to the test's folder */
    write_dumps(&r, stash, MISTAKE_NONE);
    /* the previous run's dumps go, the user's other files stay */
    CU_ASSERT_EQUAL_FATAL(an_mkdirs(dump_dir, &err), RD_OK);
    touch(dump_dir, "099_ConvRelu_stale_shape_1_8_float.npy");
    touch(dump_dir, "notes.txt");
    rd_board_options bo = {.port = 0, .root = root};
    rd_board *board = NULL;
    CU_ASSERT_EQUAL_FATAL(rd_board_start(&bo, &board, &err), RD_OK);
    int port = rd_board_port(board);
    snprintf(snap, sizeof snap, "%s/snap", r.dir);
    rd_cli_result o = accuracy_on_board(
        &r, port, "test -f {input0} && test -f {input0_preprocessed} && cp /stash/*.npy {dump_dir}/", snap, NULL, NULL);
    if (o.code != 0)
        fprintf(stderr, "%s\n%s", o.out, o.errs);
    CU_ASSERT_EQUAL(o.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(o.out, "first departure: the board departs from the simulator at 'relu6_out'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(o.errs, "removed 1 dump file"));
    CU_ASSERT(rd_test_exists_in(dump_dir, "notes.txt"));
    CU_ASSERT_FALSE(rd_test_exists_in(dump_dir, "099_ConvRelu_stale_shape_1_8_float.npy"));
    char pulled[4400];
    snprintf(pulled, sizeof pulled, "%s/runtime/board_dumps", snap);
    CU_ASSERT(rd_test_exists_in(pulled, "004_Clip_relu6_out_shape_1_8_32_32_float.npy"));
    free(o.out);
    free(o.errs);
    /* a dump folder that does not exist is created, and said so */
    snprintf(snap, sizeof snap, "%s/snap2", r.dir);
    o = accuracy_on_board(&r, port, "cp /stash/*.npy {dump_dir}/", snap, "--board-dump-dir", "/userdata/other");
    CU_ASSERT_EQUAL(o.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(o.errs, "does not exist on the board: creating it"));
    free(o.out);
    free(o.errs);
    /* a failing command: its status and output, exit 3, the simulator's part still written */
    snprintf(snap, sizeof snap, "%s/snap3", r.dir);
    o = accuracy_on_board(&r, port, "echo model not found >&2; exit 7", snap, NULL, NULL);
    CU_ASSERT_EQUAL(o.code, 3);
    RD_ASSERT_HAS_TEXTS(o.errs, "exit status 7", "model not found");
    CU_ASSERT(rd_test_exists_in(snap, "error_analysis.txt"));
    free(o.out);
    free(o.errs);
    rd_board_stop(board);
    /* no board at all: exit 3, simulator part written */
    snprintf(snap, sizeof snap, "%s/snap4", r.dir);
    o = accuracy_on_board(&r, port, "true", snap, "--timeout", "2");
    CU_ASSERT_EQUAL(o.code, 3);
    CU_ASSERT(rd_test_exists_in(snap, "error_analysis.txt"));
    free(o.out);
    free(o.errs);
    rig_fini(&r);
}

/* accuracy --run clears its local dump folder without following links: a subfolder left there (named as the
   board's dump folder, where the pull used to land a level down) and links to the user's files go, the
   files they point to stay; a dump folder that is itself a link is refused and its target left alone. */
static void test_board_local_dumps_cleared_safely(void)
{
    rig r;
    rig_init(&r, "rt-board-clear", "relu6_out", NULL);
    char root[4300], stash[4400], dump_dir[4400], home[4300], snap[4300], local[4400], victim[4300], path[4500];
    snprintf(root, sizeof root, "%s/board", r.dir);
    snprintf(stash, sizeof stash, "%s/stash", root);
    snprintf(dump_dir, sizeof dump_dir, "%s/userdata/dumps", root);
    rd_test_paths_in(r.dir, sizeof home, home, "home", victim, "victim", snap, "snap", NULL);
    snprintf(local, sizeof local, "%s/runtime/board_dumps", snap);
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(an_mkdirs(home, &err), RD_OK);
    setenv("HOME", home, 1);
    write_dumps(&r, stash, MISTAKE_NONE);
    CU_ASSERT_EQUAL_FATAL(an_mkdirs(dump_dir, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(an_mkdirs(victim, &err), RD_OK);
    touch(victim, "precious.npy");
    snprintf(path, sizeof path, "%s/dumps", local);
    CU_ASSERT_EQUAL_FATAL(an_mkdirs(path, &err), RD_OK);
    touch(path, "000_InputOperator_old_shape_1_3_32_32_uint8.npy");
    snprintf(path, sizeof path, "%s/to_victim", local);
    CU_ASSERT_EQUAL(symlink(victim, path), 0);
    snprintf(path, sizeof path, "%s/precious.npy", local);
    char target[4500];
    snprintf(target, sizeof target, "%s/precious.npy", victim);
    CU_ASSERT_EQUAL(symlink(target, path), 0);
    rd_board_options bo = {.port = 0, .root = root};
    rd_board *board = NULL;
    CU_ASSERT_EQUAL_FATAL(rd_board_start(&bo, &board, &err), RD_OK);
    int port = rd_board_port(board);
    rd_cli_result o = accuracy_on_board(&r, port, "cp /stash/*.npy {dump_dir}/", snap, NULL, NULL);
    if (o.code != 0)
        fprintf(stderr, "%s\n%s", o.out, o.errs);
    CU_ASSERT_EQUAL(o.code, 0);
    CU_ASSERT(rd_test_exists_in(victim, "precious.npy"));
    CU_ASSERT(rd_test_exists_in(local, "004_Clip_relu6_out_shape_1_8_32_32_float.npy")); /* at the right level */
    CU_ASSERT_FALSE(rd_test_exists_in(local, "dumps/000_InputOperator_old_shape_1_3_32_32_uint8.npy"));
    struct stat sb;
    snprintf(path, sizeof path, "%s/to_victim", local);
    CU_ASSERT_NOT_EQUAL(lstat(path, &sb), 0);
    free(o.out);
    free(o.errs);
    /* the folder itself a link: refused, exit 3, nothing of its target removed */
    CU_ASSERT_EQUAL_FATAL(rd_dir_remove_tree(local, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(symlink(victim, local), 0);
    o = accuracy_on_board(&r, port, "cp /stash/*.npy {dump_dir}/", snap, NULL, NULL);
    CU_ASSERT_EQUAL(o.code, 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(o.errs, "board_dumps: is a symbolic link"));
    CU_ASSERT(rd_test_exists_in(victim, "precious.npy"));
    free(o.out);
    free(o.errs);
    rd_board_stop(board);
    rig_fini(&r);
}

/* ---- the emulated board's application (board-run) with faults and mistakes ---- */

#ifdef RD_CLI_BINARY
typedef struct board_rig {
    char *dir;
    char root[4300], model[4400], cfg[4400], input[4300], connect[64];
    rd_board *board;
} board_rig;

static void board_rig_init(board_rig *b, const char *tag)
{
    memset(b, 0, sizeof *b);
    b->dir = rd_test_tmpdir(tag);
    char userdata[4400], dataset[4300], home[4300];
    snprintf(b->root, sizeof b->root, "%s/board", b->dir);
    snprintf(userdata, sizeof userdata, "%s/userdata", b->root);
    snprintf(b->model, sizeof b->model, "%s/demo.onnx", userdata);
    snprintf(b->cfg, sizeof b->cfg, "%s/demo.quantization.cfg", userdata);
    rd_test_paths_in(b->dir, sizeof b->input, b->input, "image.npy", dataset, "dataset.txt", home, "home", NULL);
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(an_mkdirs(userdata, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(an_mkdirs(home, &err), RD_OK);
    setenv("HOME", home, 1);
    rd_cli_result o = cli((char *[]){"rknn-diag", "demo", "-o", b->dir, "--quiet", NULL});
    CU_ASSERT_EQUAL_FATAL(o.code, 0);
    free(o.out);
    free(o.errs);
    CU_ASSERT_EQUAL_FATAL(an_demo_model_write(b->model, &err), RD_OK);
    o = cli((char *[]){"rknn-diag", "quantize", b->model, "--dataset", dataset, "--method", "layer", "--input-layout",
                       "nchw", "-o", b->cfg, NULL});
    CU_ASSERT_EQUAL_FATAL(o.code, 0);
    free(o.out);
    free(o.errs);
    rd_board_options bo = {.port = 0, .root = b->root};
    CU_ASSERT_EQUAL_FATAL(rd_board_start(&bo, &b->board, &err), RD_OK);
    snprintf(b->connect, sizeof b->connect, "127.0.0.1:%d", rd_board_port(b->board));
}

static void board_rig_fini(board_rig *b)
{
    rd_board_stop(b->board);
    free(b->dir);
}

/* accuracy --target rk3566 --run "rknn-diag board-run ... <board_args>" [extra...] */
static rd_cli_result board_accuracy(board_rig *b, const char *tag, const char *board_args, const char *extra1,
                                    const char *extra2, const char *extra3, const char *extra4)
{
    char run[9000], snap[4400];
    snprintf(run, sizeof run,
             "'%s' board-run /userdata/demo.onnx --input {input0} --input-layout nchw --cfg "
             "/userdata/demo.quantization.cfg --method layer --target rk3566 %s",
             RD_CLI_BINARY, board_args);
    snprintf(snap, sizeof snap, "%s/snap-%s", b->dir, tag);
    char *argv[] = {
        "rknn-diag", "accuracy", b->model, "-i",       b->input,       "--input-layout", "nchw",         "--cfg",
        b->cfg,      "--method", "layer",  "--target", "rk3566",       "--connect",      b->connect,     "--run",
        run,         "-o",       snap,     "--quiet",  (char *)extra1, (char *)extra2,   (char *)extra3, (char *)extra4,
        NULL};
    rd_cli_result o = cli(argv);
    if (o.code != 0)
        fprintf(stderr, "%s: exit %d\n%s\n%s", tag, o.code, o.out, o.errs);
    return o;
}

static size_t occurrences(const char *text, const char *needle)
{
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

static void test_board_run_faults(void)
{
    static const struct {
        const char *fault, *tensor;
    } cases[] = {{"gain", "relu6_out"}, {"saturate", "relu6_out"}, {"swap-channels", "pool_out"},
                 {"fp16", "restored"},  {"gain", "relu1_out"},     {"saturate", "logits"}};
    board_rig b;
    board_rig_init(&b, "rt-board-faults");
    /* a faithful board: no runtime finding at all */
    rd_cli_result o = board_accuracy(&b, "none", "", NULL, NULL, NULL, NULL);
    CU_ASSERT_EQUAL(o.code, 0);
    CU_ASSERT_PTR_NULL(strstr(o.out, "Runtime fault"));
    CU_ASSERT_PTR_NULL(strstr(o.out, "The application's"));
    free(o.out);
    free(o.errs);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char args[256], expect[512];
        snprintf(args, sizeof args, "--fault %s:%s", cases[k].fault, cases[k].tensor);
        snprintf(expect, sizeof expect, "first departure: the board departs from the simulator at '%s'",
                 cases[k].tensor);
        o = board_accuracy(&b, cases[k].fault, args, NULL, NULL, NULL, NULL);
        CU_ASSERT_EQUAL(o.code, 0);
        if (!strstr(o.out, expect) || occurrences(o.out, "Runtime fault") != 1) {
            fprintf(stderr, "fault %s:%s not named exactly once:\n%s\n", cases[k].fault, cases[k].tensor, o.out);
            CU_FAIL("fault not named exactly");
        }
        free(o.out);
        free(o.errs);
    }
    board_rig_fini(&b);
}

static void test_board_run_app_mistakes(void)
{
    static const struct {
        const char *mistake, *expect;
    } cases[] = {{"rgb-bgr", "colour channels 0 and 2 swapped"},
                 {"nhwc-as-nchw", "NHWC data read as NCHW"},
                 {"wrong-size", "fine detail lost"}};
    board_rig b;
    board_rig_init(&b, "rt-board-mistakes");
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char args[256];
        snprintf(args, sizeof args, "--app-mistake %s", cases[k].mistake);
        rd_cli_result o = board_accuracy(&b, cases[k].mistake, args, NULL, NULL, NULL, NULL);
        CU_ASSERT_EQUAL(o.code, 0);
        if (!strstr(o.out, "The application's input 'image'") || !strstr(o.out, cases[k].expect)) {
            fprintf(stderr, "mistake %s not named:\n%s\n", cases[k].mistake, o.out);
            CU_FAIL("input mistake not named");
        }
        CU_ASSERT_PTR_NULL(strstr(o.out, "Runtime fault"));
        free(o.out);
        free(o.errs);
    }
    /* normalisation twice: the model normalises (--mean/--std) and so does the application */
    rd_cli_result o = board_accuracy(&b, "double-norm", "--app-mistake double-norm --mean 0.5,0.5,0.5 --std 2,2,2",
                                     "--mean", "0.5,0.5,0.5", "--std", "2,2,2");
    CU_ASSERT_EQUAL(o.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(o.out, "normalisation applied twice"));
    free(o.out);
    free(o.errs);
    /* the application saved its output as int8 codes */
    char app[4400];
    snprintf(app, sizeof app, "%s/userdata/rknn-diag/out/output_0.npy", b.root);
    o = board_accuracy(&b, "output-dtype", "--app-mistake output-dtype --output-dir {work_dir}/out", "--app-outputs",
                       app, NULL, NULL);
    CU_ASSERT_EQUAL(o.code, 0);
    if (!strstr(o.out, "The application's output 'probs'")) {
        fprintf(stderr, "output mistake not named:\n%s\n", o.out);
        CU_FAIL("output mistake not named");
    }
    free(o.out);
    free(o.errs);
    board_rig_fini(&b);
}

/* int8-clamp needs uint8 data: the demo model's own input is float, so a uint8 .npy with values up to 255
   is given instead, normalised by the model (--std 255) to the demo's 0..1 range. */
static void test_board_run_int8_clamp(void)
{
    board_rig b;
    board_rig_init(&b, "rt-board-clamp");
    rd_error err;
    rd_tensor img;
    int64_t dims[4] = {1, 3, 32, 32};
    CU_ASSERT_EQUAL_FATAL(rd_tensor_alloc(&img, RD_DT_U8, 4, dims, &err), RD_OK);
    for (int64_t i = 0; i < rd_tensor_numel(&img); i++) /* a gradient per channel, half of it above 127 */
        ((uint8_t *)img.data)[i] = (uint8_t)((i * 7 + (i / 1024) * 40) % 256);
    snprintf(b.input, sizeof b.input, "%s/bytes.npy", b.dir);
    CU_ASSERT_EQUAL_FATAL(rd_npy_save(b.input, &img, &err), RD_OK);
    rd_tensor_fini(&img);
    /* the same bytes passed as uint8: no input finding */
    rd_cli_result o = board_accuracy(&b, "uint8-ok", "--std 255,255,255", "--std", "255,255,255", NULL, NULL);
    CU_ASSERT_EQUAL(o.code, 0);
    CU_ASSERT_PTR_NULL(strstr(o.out, "The application's input"));
    free(o.out);
    free(o.errs);
    o = board_accuracy(&b, "int8-clamp", "--app-mistake int8-clamp --std 255,255,255", "--std", "255,255,255", NULL,
                       NULL);
    CU_ASSERT_EQUAL(o.code, 0);
    if (!strstr(o.out, "The application's input 'image'") ||
        !strstr(o.out, "uint8 input values above 127 were clamped into int8 on the board")) {
        fprintf(stderr, "int8-clamp not named:\n%s\n%s\n", o.out, o.errs);
        CU_FAIL("int8-clamp not named");
    }
    CU_ASSERT_PTR_NULL(strstr(o.out, "Runtime fault"));
    free(o.out);
    free(o.errs);
    board_rig_fini(&b);
}
#endif

/* uint8 values above 127 clamped or wrapped into int8, and a wrong element count */
static void test_input_check_int8_and_size(void)
{
    rd_error err;
    rd_tensor raw, board;
    int64_t dims[4] = {1, 3, 4, 4};
    CU_ASSERT_EQUAL_FATAL(rd_tensor_alloc(&raw, RD_DT_F32, 4, dims, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(rd_tensor_alloc(&board, RD_DT_I8, 4, dims, &err), RD_OK);
    for (int i = 0; i < 48; i++) {
        ((float *)raw.data)[i] = (float)(i * 5);
        ((int8_t *)board.data)[i] = (int8_t)(i * 5 > 127 ? 127 : i * 5);
    }
    rd_input_spec spec = RD_INPUT_SPEC_DEFAULT;
    an_input_expect x = {.raw = &raw, .spec = &spec, .api = AN_API_ZERO_COPY};
    char why[1024];
    an_input_verdict v = AN_IN_OTHER;
    CU_ASSERT_EQUAL(an_check_input(&board, &x, &v, why, sizeof why, &err), RD_OK);
    CU_ASSERT_EQUAL(v, AN_IN_INT8_CLAMP);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "clamped"));
    rd_tensor_fini(&board);
    int64_t small[4] = {1, 3, 2, 2};
    CU_ASSERT_EQUAL_FATAL(rd_tensor_alloc(&board, RD_DT_U8, 4, small, &err), RD_OK);
    memset(board.data, 0, 12);
    CU_ASSERT_EQUAL(an_check_input(&board, &x, &v, why, sizeof why, &err), RD_OK);
    CU_ASSERT_EQUAL(v, AN_IN_SIZE);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "wrong size"));
    rd_tensor_fini(&board);
    /* the same data as uint8: no mismatch */
    CU_ASSERT_EQUAL_FATAL(rd_tensor_alloc(&board, RD_DT_U8, 4, dims, &err), RD_OK);
    for (int i = 0; i < 48; i++)
        ((uint8_t *)board.data)[i] = (uint8_t)(i * 5);
    CU_ASSERT_EQUAL(an_check_input(&board, &x, &v, why, sizeof why, &err), RD_OK);
    CU_ASSERT_EQUAL(v, AN_IN_OK);
    rd_tensor_fini(&board);
    rd_tensor_fini(&raw);
}

RD_TEST_REGISTER(register_runtime_groups)
{
#ifdef RD_CLI_BINARY
    /* `demo` run in-process (test_cli.c) has its board run the built rknn-diag, not this test binary */
    setenv("RKNN_DIAG_BINARY", RD_CLI_BINARY, 1);
#endif
    RD_SUITE("runtime_groups", {"a faithful board", test_faithful_board},
             {"a faulty layer is named exactly", test_fault_named_exactly},
             {"a layer not dumped is blank", test_missing_dump_blank},
             {"--runtime-dumps names the faulty layer", test_cli_runtime_dumps_fault},
             {"input and output mistakes are named", test_cli_input_mistakes},
             {"empty dump folder and usage", test_cli_bad_dumps},
             {"--target --connect --run against the fake board", test_board_end_to_end},
             {"--run clears its dump folder without following links", test_board_local_dumps_cleared_safely},
#ifdef RD_CLI_BINARY
             {"board-run faults are named exactly", test_board_run_faults},
             {"board-run application mistakes are named", test_board_run_app_mistakes},
             {"board-run int8-clamp on uint8 data is named", test_board_run_int8_clamp},
#endif
             {"input check: int8 clamp and size", test_input_check_int8_and_size});
}
