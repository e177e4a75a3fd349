/*
 * gen_opset_fixtures.c: writes the opset 18..21 conformance fixtures of fixtures/opset18_21/ with the
 * project's ONNX writer, and converts ONNX Runtime's outputs into their expected outputs.
 *
 *   gen_opset_fixtures OUT_ROOT SCRATCH_ROOT [FILTER]
 *       writes OUT_ROOT/<case>/model.onnx and test_data_set_0/input_K.pb for every case, and the same
 *       inputs as SCRATCH_ROOT/<case>/input_K.npy with SCRATCH_ROOT/<case>/ort_args.txt (the
 *       "--input NAME=FILE" arguments for ort_golden.js, one per line)
 *   gen_opset_fixtures --convert CASE_DIR ORT_OUT_DIR
 *       turns ORT_OUT_DIR/<k>.npy into CASE_DIR/test_data_set_0/output_<k>.pb
 *
 * A development tool run by tools/gen-opset-fixtures.sh, never by CI. Inputs are pseudo-random from a
 * seed derived from the case name, so adding a case does not change the others. docs/opset18_21.md
 * says what each case covers.
 */
#include "rknn_diag/simulator.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_CASE_INPUTS 8

typedef struct gen {
    const char *out_root, *scratch_root, *filter;
    rd_status st;
    rd_error err;
    int n_cases;
    /* the case being built */
    bool active;
    char name[128];
    rd_onnx_builder *b;
    rd_tensor inputs[MAX_CASE_INPUTS];
    char input_names[MAX_CASE_INPUTS][64];
    int n_inputs;
    uint64_t rng;
} gen;

#define STRS(...) \
    ((const char *const[]){__VA_ARGS__}), (int)(sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))
#define I64S(...) ((const int64_t[]){__VA_ARGS__}), (sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t))
#define F32S(...) ((const float[]){__VA_ARGS__}), (sizeof((const float[]){__VA_ARGS__}) / sizeof(float))
#define DIMS(...) (int)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), ((const int64_t[]){__VA_ARGS__})

/* ---------------------------------------------------------------------------------------------------
 * Plumbing: files, random numbers, the current case.
 */

static rd_status make_dir(const char *path, rd_error *err)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return rd_errorf(err, RD_E_IO, "%s: cannot create: %s", buf, strerror(errno));
        *p = '/';
    }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST)
        return rd_errorf(err, RD_E_IO, "%s: cannot create: %s", buf, strerror(errno));
    return RD_OK;
}

/* splitmix64: small, deterministic on every platform */
static uint64_t next_u64(gen *g)
{
    uint64_t z = (g->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static float uniform(gen *g, float lo, float hi)
{
    double u = (double)(next_u64(g) >> 11) / (double)(1ull << 53);
    return (float)(lo + (hi - lo) * u);
}

static void fail_from(gen *g, rd_status st, const rd_error *e)
{
    if (g->st == RD_OK && st != RD_OK) {
        g->st = st;
        g->err = *e;
        rd_error_prefix(&g->err, "case %s", g->name);
    }
}

/* Starts a case; false when the filter leaves it out (then every helper is a no-op). IR follows opset. */
static bool begin(gen *g, const char *name, int opset)
{
    g->active = false;
    if (g->st != RD_OK || (g->filter && !strstr(name, g->filter)))
        return false;
    snprintf(g->name, sizeof g->name, "%s", name);
    int ir = opset >= 21 ? 10 : opset >= 19 ? 9 : 8;
    g->b = rd_onnx_builder_create(ir, opset);
    if (!g->b) {
        g->st = rd_errorf(&g->err, RD_E_NOMEM, "case %s: out of memory", name);
        return false;
    }
    rd_onnx_set_graph_name(g->b, name);
    g->n_inputs = 0;
    uint64_t seed = 1469598103934665603ull; /* FNV-1a of the name */
    for (const char *p = name; *p; p++)
        seed = (seed ^ (uint8_t)*p) * 1099511628211ull;
    g->rng = seed;
    g->active = true;
    return true;
}

/* Declares a graph input fed with t (ownership taken). */
static void input_tensor(gen *g, const char *name, rd_tensor *t)
{
    if (!g->active || g->n_inputs == MAX_CASE_INPUTS) {
        rd_tensor_fini(t);
        return;
    }
    rd_onnx_add_input(g->b, name, t->dtype, t->rank, t->dims, NULL);
    snprintf(g->input_names[g->n_inputs], sizeof g->input_names[0], "%s", name);
    g->inputs[g->n_inputs++] = *t;
}

/* A float32 graph input of uniform values in [lo, hi). */
static void input_f32(gen *g, const char *name, int rank, const int64_t *dims, float lo, float hi)
{
    if (!g->active)
        return;
    rd_tensor t;
    rd_error e;
    rd_status st = rd_tensor_alloc(&t, RD_DT_F32, rank, dims, &e);
    if (st != RD_OK) {
        fail_from(g, st, &e);
        return;
    }
    for (int64_t i = 0; i < rd_tensor_numel(&t); i++)
        ((float *)t.data)[i] = uniform(g, lo, hi);
    input_tensor(g, name, &t);
}

/* An integer-typed graph input of uniform integers in [lo, hi]. */
static void input_int(gen *g, const char *name, rd_dtype dt, int rank, const int64_t *dims, int64_t lo, int64_t hi)
{
    if (!g->active)
        return;
    rd_tensor t;
    rd_error e;
    rd_status st = rd_tensor_alloc(&t, dt, rank, dims, &e);
    if (st != RD_OK) {
        fail_from(g, st, &e);
        return;
    }
    for (int64_t i = 0; i < rd_tensor_numel(&t); i++) {
        int64_t v = lo + (int64_t)(next_u64(g) % (uint64_t)(hi - lo + 1));
        switch (dt) {
        case RD_DT_I64:
            ((int64_t *)t.data)[i] = v;
            break;
        case RD_DT_I32:
            ((int32_t *)t.data)[i] = (int32_t)v;
            break;
        case RD_DT_I8:
            ((int8_t *)t.data)[i] = (int8_t)v;
            break;
        case RD_DT_U8:
            ((uint8_t *)t.data)[i] = (uint8_t)v;
            break;
        case RD_DT_BOOL:
            ((uint8_t *)t.data)[i] = (uint8_t)(v != 0);
            break;
        default:
            break;
        }
    }
    input_tensor(g, name, &t);
}

/* An initializer of dtype dt from values given as doubles (converted to dt). */
static void init_vals(gen *g, const char *name, rd_dtype dt, int rank, const int64_t *dims, const double *v)
{
    if (!g->active)
        return;
    rd_tensor t;
    rd_error e;
    rd_status st = rd_tensor_alloc(&t, dt, rank, dims, &e);
    if (st != RD_OK) {
        fail_from(g, st, &e);
        return;
    }
    for (int64_t i = 0; i < rd_tensor_numel(&t); i++) {
        switch (dt) {
        case RD_DT_F32:
            ((float *)t.data)[i] = (float)v[i];
            break;
        case RD_DT_F16:
            ((uint16_t *)t.data)[i] = rd_f32_to_f16((float)v[i]);
            break;
        case RD_DT_I64:
            ((int64_t *)t.data)[i] = (int64_t)v[i];
            break;
        case RD_DT_I32:
            ((int32_t *)t.data)[i] = (int32_t)v[i];
            break;
        case RD_DT_I16:
            ((int16_t *)t.data)[i] = (int16_t)v[i];
            break;
        case RD_DT_U16:
            ((uint16_t *)t.data)[i] = (uint16_t)v[i];
            break;
        case RD_DT_I8:
            ((int8_t *)t.data)[i] = (int8_t)v[i];
            break;
        case RD_DT_U8:
            ((uint8_t *)t.data)[i] = (uint8_t)v[i];
            break;
        default:
            break;
        }
    }
    rd_onnx_add_initializer(g->b, name, &t, RD_ONNX_RAW);
    rd_tensor_fini(&t);
}

/* A 1-D int64 initializer (count 0 makes an empty one). */
static void init_i64(gen *g, const char *name, const int64_t *v, size_t count)
{
    double d[16] = {0};
    for (size_t i = 0; i < count && i < 16; i++)
        d[i] = (double)v[i];
    init_vals(g, name, RD_DT_I64, 1, (const int64_t[]){(int64_t)count}, d);
}

/* A float32 initializer of uniform values in [lo, hi). */
static void init_rand_f32(gen *g, const char *name, int rank, const int64_t *dims, float lo, float hi)
{
    if (!g->active)
        return;
    double v[512];
    int64_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= dims[i];
    for (int64_t i = 0; i < n && i < 512; i++)
        v[i] = uniform(g, lo, hi);
    init_vals(g, name, RD_DT_F32, rank, dims, v);
}

static rd_onnx_node *node(gen *g, const char *op, const char *const *in, int n_in, const char *const *out, int n_out)
{
    return g->active ? rd_onnx_add_node(g->b, op, NULL, in, n_in, out, n_out) : NULL;
}

static void output(gen *g, const char *name, rd_dtype dt)
{
    if (g->active)
        rd_onnx_add_output(g->b, name, dt, -1, NULL, NULL);
}

/* Saves the case: model, .pb inputs, .npy inputs and the ORT arguments. */
static void end(gen *g)
{
    if (!g->active)
        return;
    rd_error e;
    rd_status st = RD_OK;
    char dir[4096], sdir[4096], path[4300];
    snprintf(dir, sizeof dir, "%s/%s/test_data_set_0", g->out_root, g->name);
    snprintf(sdir, sizeof sdir, "%s/%s", g->scratch_root, g->name);
    if ((st = make_dir(dir, &e)) == RD_OK && (st = make_dir(sdir, &e)) == RD_OK) {
        snprintf(path, sizeof path, "%s/%s/model.onnx", g->out_root, g->name);
        st = rd_onnx_builder_save(g->b, path, &e);
    }
    FILE *args = NULL;
    if (st == RD_OK) {
        snprintf(path, sizeof path, "%s/ort_args.txt", sdir);
        args = fopen(path, "w");
        if (!args)
            st = rd_errorf(&e, RD_E_IO, "%s: cannot write: %s", path, strerror(errno));
    }
    for (int k = 0; k < g->n_inputs && st == RD_OK; k++) {
        snprintf(path, sizeof path, "%s/input_%d.pb", dir, k);
        st = rd_tensorproto_save(path, &g->inputs[k], g->input_names[k], &e);
        if (st == RD_OK) {
            snprintf(path, sizeof path, "%s/input_%d.npy", sdir, k);
            st = rd_npy_save(path, &g->inputs[k], &e);
        }
        if (st == RD_OK)
            fprintf(args, "--input\n%s=%s\n", g->input_names[k], path);
    }
    if (args && fclose(args) != 0 && st == RD_OK)
        st = rd_errorf(&e, RD_E_IO, "%s/ort_args.txt: write failed", sdir);
    fail_from(g, st, &e);
    for (int k = 0; k < g->n_inputs; k++)
        rd_tensor_fini(&g->inputs[k]);
    g->n_inputs = 0;
    rd_onnx_builder_destroy(g->b);
    g->b = NULL;
    g->active = false;
    if (st == RD_OK)
        g->n_cases++;
}

/* ---------------------------------------------------------------------------------------------------
 * Cases. Names say operator, opset and what is covered.
 */

static const char *const reduce_ops[][2] = {
    {"ReduceMean", "reduce_mean"},
    {"ReduceMax", "reduce_max"},
    {"ReduceMin", "reduce_min"},
    {"ReduceL1", "reduce_l1"},
    {"ReduceL2", "reduce_l2"},
    {"ReduceLogSum", "reduce_log_sum"},
    {"ReduceLogSumExp", "reduce_log_sum_exp"},
    {"ReduceProd", "reduce_prod"},
    {"ReduceSumSquare", "reduce_sum_square"},
    {"ReduceSum", "reduce_sum"},
};

/* Reduce* with axes as an input (opset 18; ReduceSum since 13). */
static void cases_reduce(gen *g)
{
    for (size_t i = 0; i < sizeof reduce_ops / sizeof reduce_ops[0]; i++) {
        const char *op = reduce_ops[i][0], *stem = reduce_ops[i][1];
        /* LogSum needs a positive sum, Prod stays near 1 so that 24 factors neither vanish nor explode */
        float lo = -2.0f, hi = 2.0f;
        if (strcmp(op, "ReduceLogSum") == 0)
            lo = 0.1f;
        if (strcmp(op, "ReduceProd") == 0)
            lo = 0.6f, hi = 1.5f;
        char name[128];

        snprintf(name, sizeof name, "%s18_axes_keepdims", stem);
        if (begin(g, name, 18)) {
            input_f32(g, "x", DIMS(2, 3, 4), lo, hi);
            init_i64(g, "axes", I64S(-1, 0));
            node(g, op, STRS("x", "axes"), STRS("y"));
            output(g, "y", RD_DT_F32);
            end(g);
        }
        snprintf(name, sizeof name, "%s18_axes_input_nokeepdims", stem);
        if (begin(g, name, 18)) {
            input_f32(g, "x", DIMS(2, 3, 4), lo, hi);
            input_int(g, "axes", RD_DT_I64, DIMS(1), 1, 1);
            rd_onnx_attr_int(node(g, op, STRS("x", "axes"), STRS("y")), "keepdims", 0);
            output(g, "y", RD_DT_F32);
            end(g);
        }
        snprintf(name, sizeof name, "%s18_no_axes_all", stem);
        if (begin(g, name, 18)) {
            input_f32(g, "x", DIMS(2, 3, 4), lo, hi);
            rd_onnx_attr_int(node(g, op, STRS("x"), STRS("y")), "keepdims", 0);
            output(g, "y", RD_DT_F32);
            end(g);
        }
        snprintf(name, sizeof name, "%s18_no_axes_noop", stem);
        if (begin(g, name, 18)) {
            input_f32(g, "x", DIMS(2, 3, 4), lo, hi);
            rd_onnx_attr_int(node(g, op, STRS("x"), STRS("y")), "noop_with_empty_axes", 1);
            output(g, "y", RD_DT_F32);
            end(g);
        }
        snprintf(name, sizeof name, "%s18_empty_axes_keepdims", stem);
        if (begin(g, name, 18)) {
            input_f32(g, "x", DIMS(2, 3, 4), lo, hi);
            init_i64(g, "axes", NULL, 0);
            node(g, op, STRS("x", "axes"), STRS("y"));
            output(g, "y", RD_DT_F32);
            end(g);
        }
        snprintf(name, sizeof name, "%s18_empty_axes_noop", stem);
        if (begin(g, name, 18)) {
            input_f32(g, "x", DIMS(2, 3, 4), lo, hi);
            init_i64(g, "axes", NULL, 0);
            rd_onnx_attr_int(node(g, op, STRS("x", "axes"), STRS("y")), "noop_with_empty_axes", 1);
            output(g, "y", RD_DT_F32);
            end(g);
        }
    }
    /* the attribute form just before the change, and ReduceSum's own change at 13 */
    if (begin(g, "reduce_mean17_axes_attribute", 17)) {
        input_f32(g, "x", DIMS(2, 3, 4), -2, 2);
        rd_onnx_attr_ints(node(g, "ReduceMean", STRS("x"), STRS("y")), "axes", I64S(1, -1));
        output(g, "y", RD_DT_F32);
        end(g);
    }
    if (begin(g, "reduce_sum11_axes_attribute", 11)) {
        input_f32(g, "x", DIMS(2, 3, 4), -2, 2);
        rd_onnx_attr_ints(node(g, "ReduceSum", STRS("x"), STRS("y")), "axes", I64S(0, 2));
        output(g, "y", RD_DT_F32);
        end(g);
    }
    if (begin(g, "reduce_sum13_axes_input", 13)) {
        input_f32(g, "x", DIMS(2, 3, 4), -2, 2);
        init_i64(g, "axes", I64S(0, 2));
        rd_onnx_attr_int(node(g, "ReduceSum", STRS("x", "axes"), STRS("y")), "keepdims", 0);
        output(g, "y", RD_DT_F32);
        end(g);
    }
    if (begin(g, "reduce_sum13_empty_axes_noop", 13)) {
        input_f32(g, "x", DIMS(2, 3, 4), -2, 2);
        init_i64(g, "axes", NULL, 0);
        rd_onnx_attr_int(node(g, "ReduceSum", STRS("x", "axes"), STRS("y")), "noop_with_empty_axes", 1);
        output(g, "y", RD_DT_F32);
        end(g);
    }
    /* reductions over an empty set (zero-size reduced axis): 0, 1, -inf, +inf, -inf as ONNX 1.15 settled */
    for (size_t i = 0; i < sizeof reduce_ops / sizeof reduce_ops[0]; i++) {
        char name[128];
        if (strcmp(reduce_ops[i][0], "ReduceMean") == 0)
            continue; /* undefined by the spec */
        snprintf(name, sizeof name, "%s18_empty_set", reduce_ops[i][1]);
        if (begin(g, name, 18)) {
            input_f32(g, "x", DIMS(2, 0, 4), -1, 1);
            init_i64(g, "axes", I64S(1));
            node(g, reduce_ops[i][0], STRS("x", "axes"), STRS("y"));
            output(g, "y", RD_DT_F32);
            end(g);
        }
    }
    if (begin(g, "reduce_log_sum_exp18_large", 18)) {
        input_f32(g, "x", DIMS(3, 4), 60, 100);
        init_i64(g, "axes", I64S(1));
        node(g, "ReduceLogSumExp", STRS("x", "axes"), STRS("y"));
        output(g, "y", RD_DT_F32);
        end(g);
    }
    if (begin(g, "reduce_max20_bool", 20)) {
        input_int(g, "x", RD_DT_BOOL, DIMS(3, 4), 0, 1);
        init_i64(g, "axes", I64S(1));
        node(g, "ReduceMax", STRS("x", "axes"), STRS("y"));
        output(g, "y", RD_DT_BOOL);
        end(g);
    }
    if (begin(g, "reduce_min20_bool", 20)) {
        input_int(g, "x", RD_DT_BOOL, DIMS(3, 4), 0, 3);
        init_i64(g, "axes", I64S(0));
        node(g, "ReduceMin", STRS("x", "axes"), STRS("y"));
        output(g, "y", RD_DT_BOOL);
        end(g);
    }
    /* left out: ReduceMax/Min of an empty bool set (ONNX Runtime 1.30 refuses it) */
    if (begin(g, "reduce_max18_int64", 18)) {
        input_int(g, "x", RD_DT_I64, DIMS(3, 4), -50, 50);
        init_i64(g, "axes", I64S(1));
        node(g, "ReduceMax", STRS("x", "axes"), STRS("y"));
        output(g, "y", RD_DT_I64);
        end(g);
    }
}

/* Pad with the axes input (18), wrap mode (19), negative pads. */
static void cases_pad(gen *g)
{
    if (begin(g, "pad18_axes_constant", 18)) {
        input_f32(g, "x", DIMS(2, 3, 4), -2, 2);
        init_i64(g, "pads", I64S(1, 2, 0, 1));
        init_vals(g, "value", RD_DT_F32, 0, NULL, (const double[]){1.5});
        init_i64(g, "axes", I64S(1, 2));
        node(g, "Pad", STRS("x", "pads", "value", "axes"), STRS("y"));
        output(g, "y", RD_DT_F32);
        end(g);
    }
    if (begin(g, "pad18_axes_negative_reflect", 18)) {
        input_f32(g, "x", DIMS(2, 3, 4), -2, 2);
        init_i64(g, "pads", I64S(2, 1));
        init_i64(g, "axes", I64S(-1));
        rd_onnx_attr_string(node(g, "Pad", STRS("x", "pads", NULL, "axes"), STRS("y")), "mode", "reflect");
        output(g, "y", RD_DT_F32);
        end(g);
    }
    if (begin(g, "pad18_axes_edge", 18)) {
        input_f32(g, "x", DIMS(2, 3, 4), -2, 2);
        init_i64(g, "pads", I64S(1, 0, 2, 3));
        init_i64(g, "axes", I64S(0, 2));
        rd_onnx_attr_string(node(g, "Pad", STRS("x", "pads", NULL, "axes"), STRS("y")), "mode", "edge");
        output(g, "y", RD_DT_F32);
        end(g);
    }
    if (begin(g, "pad19_wrap", 19)) {
        input_f32(g, "x", DIMS(2, 3, 4), -2, 2);
        init_i64(g, "pads", I64S(0, 1, 2, 1, 2, 3));
        rd_onnx_attr_string(node(g, "Pad", STRS("x", "pads"), STRS("y")), "mode", "wrap");
        output(g, "y", RD_DT_F32);
        end(g);
    }
    if (begin(g, "pad19_wrap_axes", 19)) {
        input_f32(g, "x", DIMS(1, 3, 4), -2, 2);
        init_i64(g, "pads", I64S(2, 1));
        init_i64(g, "axes", I64S(1));
        rd_onnx_attr_string(node(g, "Pad", STRS("x", "pads", NULL, "axes"), STRS("y")), "mode", "wrap");
        output(g, "y", RD_DT_F32);
        end(g);
    }
    /* left out: wrap pads longer than the axis (ONNX Runtime 1.30 fills zeros; see docs/opset18_21.md) */
    if (begin(g, "pad19_wrap_negative_pads", 19)) {
        input_f32(g, "x", DIMS(3, 5), -2, 2);
        init_i64(g, "pads", I64S(1, -1, 0, 2));
        rd_onnx_attr_string(node(g, "Pad", STRS("x", "pads"), STRS("y")), "mode", "wrap");
        output(g, "y", RD_DT_F32);
        end(g);
    }
    if (begin(g, "pad21_edge_int64_axes", 21)) {
        input_int(g, "x", RD_DT_I64, DIMS(2, 3), -100, 100);
        init_i64(g, "pads", I64S(2, 1));
        init_i64(g, "axes", I64S(0));
        rd_onnx_attr_string(node(g, "Pad", STRS("x", "pads", NULL, "axes"), STRS("y")), "mode", "edge");
        output(g, "y", RD_DT_I64);
        end(g);
    }
    if (begin(g, "pad21_constant_negative_pads", 21)) {
        input_f32(g, "x", DIMS(2, 3, 4), -2, 2);
        init_i64(g, "pads", I64S(-1, 2));
        init_i64(g, "axes", I64S(2));
        node(g, "Pad", STRS("x", "pads", NULL, "axes"), STRS("y"));
        output(g, "y", RD_DT_F32);
        end(g);
    }
}

/* Split with num_outputs (18), including a smaller last chunk. */
static void cases_split(gen *g)
{
    if (begin(g, "split18_num_outputs_uneven", 18)) {
        input_f32(g, "x", DIMS(7, 2), -2, 2);
        rd_onnx_node *n = node(g, "Split", STRS("x"), STRS("a", "b", "c"));
        rd_onnx_attr_int(n, "num_outputs", 3);
        rd_onnx_attr_int(n, "axis", 0);
        output(g, "a", RD_DT_F32);
        output(g, "b", RD_DT_F32);
        output(g, "c", RD_DT_F32);
        end(g);
    }
    if (begin(g, "split18_num_outputs_even", 18)) {
        input_f32(g, "x", DIMS(2, 6), -2, 2);
        rd_onnx_node *n = node(g, "Split", STRS("x"), STRS("a", "b", "c"));
        rd_onnx_attr_int(n, "num_outputs", 3);
        rd_onnx_attr_int(n, "axis", 1);
        output(g, "a", RD_DT_F32);
        output(g, "b", RD_DT_F32);
        output(g, "c", RD_DT_F32);
        end(g);
    }
    if (begin(g, "split18_num_outputs_last_axis", 18)) {
        input_f32(g, "x", DIMS(2, 3, 5), -2, 2);
        rd_onnx_node *n = node(g, "Split", STRS("x"), STRS("a", "b"));
        rd_onnx_attr_int(n, "num_outputs", 2);
        rd_onnx_attr_int(n, "axis", -1);
        output(g, "a", RD_DT_F32);
        output(g, "b", RD_DT_F32);
        end(g);
    }
    if (begin(g, "split18_split_input", 18)) {
        input_f32(g, "x", DIMS(5, 3), -2, 2);
        init_i64(g, "split", I64S(1, 4));
        node(g, "Split", STRS("x", "split"), STRS("a", "b"));
        output(g, "a", RD_DT_F32);
        output(g, "b", RD_DT_F32);
        end(g);
    }
}

/* A Resize node with roi omitted; scales or sizes given as an initializer. */
static rd_onnx_node *resize(gen *g, bool sizes, const char *mode)
{
    rd_onnx_node *n = sizes ? node(g, "Resize", STRS("x", NULL, NULL, "sizes"), STRS("y"))
                            : node(g, "Resize", STRS("x", NULL, "scales"), STRS("y"));
    rd_onnx_attr_string(n, "mode", mode);
    return n;
}

/* Resize 18/19: antialias, keep_aspect_ratio_policy, axes, half_pixel_symmetric. */
static void cases_resize(gen *g)
{
    if (begin(g, "resize18_linear_antialias_downsample", 18)) {
        input_f32(g, "x", DIMS(1, 1, 8, 8), -2, 2);
        init_vals(g, "scales", RD_DT_F32, DIMS(4), (const double[]){1, 1, 0.6, 0.35});
        rd_onnx_attr_int(resize(g, false, "linear"), "antialias", 1);
        output(g, "y", RD_DT_F32);
        end(g);
    }
    if (begin(g, "resize18_linear_antialias_sizes", 18)) {
        input_f32(g, "x", DIMS(1, 2, 9, 7), -2, 2);
        init_i64(g, "sizes", I64S(1, 2, 4, 3));
        rd_onnx_attr_int(resize(g, true, "linear"), "antialias", 1);
        output(g, "y", RD_DT_F32);
        end(g);
    }
    if (begin(g, "resize18_cubic_antialias_downsample", 18)) {
        input_f32(g, "x", DIMS(1, 1, 8, 8), -2, 2);
        init_vals(g, "scales", RD_DT_F32, DIMS(4), (const double[]){1, 1, 0.5, 0.7});
        rd_onnx_attr_int(resize(g, false, "cubic"), "antialias", 1);
        output(g, "y", RD_DT_F32);
        end(g);
    }
    if (begin(g, "resize18_cubic_antialias_sizes_a05", 18)) {
        input_f32(g, "x", DIMS(1, 1, 9, 10), -2, 2);
        init_i64(g, "sizes", I64S(1, 1, 4, 6));
        rd_onnx_node *n = resize(g, true, "cubic");
        rd_onnx_attr_int(n, "antialias", 1);
        rd_onnx_attr_float(n, "cubic_coeff_a", -0.5f);
        output(g, "y", RD_DT_F32);
        end(g);
    }
    if (begin(g, "resize18_linear_antialias_upsample", 18)) {
        input_f32(g, "x", DIMS(1, 1, 4, 4), -2, 2);
        init_vals(g, "scales", RD_DT_F32, DIMS(4), (const double[]){1, 1, 1.5, 2});
        rd_onnx_attr_int(resize(g, false, "linear"), "antialias", 1);
        output(g, "y", RD_DT_F32);
        end(g);
    }
    if (begin(g, "resize18_not_larger", 18)) {
        input_f32(g, "x", DIMS(1, 1, 6, 9), -2, 2);
        init_i64(g, "sizes", I64S(4, 7));
        rd_onnx_node *n = resize(g, true, "linear");
        rd_onnx_attr_ints(n, "axes", I64S(2, 3));
        rd_onnx_attr_string(n, "keep_aspect_ratio_policy", "not_larger");
        output(g, "y", RD_DT_F32);
        end(g);
    }
    if (begin(g, "resize18_not_smaller", 18)) {
        input_f32(g, "x", DIMS(1, 1, 6, 9), -2, 2);
        init_i64(g, "sizes", I64S(4, 7));
        rd_onnx_node *n = resize(g, true, "linear");
        rd_onnx_attr_ints(n, "axes", I64S(2, 3));
        rd_onnx_attr_string(n, "keep_aspect_ratio_policy", "not_smaller");
        output(g, "y", RD_DT_F32);
        end(g);
    }
    if (begin(g, "resize18_not_larger_nearest_full_sizes", 18)) {
        input_f32(g, "x", DIMS(1, 2, 5, 4), -2, 2);
        init_i64(g, "sizes", I64S(1, 2, 8, 8));
        rd_onnx_node *n = resize(g, true, "nearest");
        rd_onnx_attr_string(n, "keep_aspect_ratio_policy", "not_larger");
        output(g, "y", RD_DT_F32);
        end(g);
    }
    if (begin(g, "resize18_axes_scales", 18)) {
        input_f32(g, "x", DIMS(1, 2, 4, 6), -2, 2);
        init_vals(g, "scales", RD_DT_F32, DIMS(2), (const double[]){1.5, 0.5});
        rd_onnx_attr_ints(resize(g, false, "linear"), "axes", I64S(2, 3));
        output(g, "y", RD_DT_F32);
        end(g);
    }
    if (begin(g, "resize18_axes_last_nearest_sizes", 18)) {
        input_f32(g, "x", DIMS(1, 2, 3, 5), -2, 2);
        init_i64(g, "sizes", I64S(8));
        rd_onnx_attr_ints(resize(g, true, "nearest"), "axes", I64S(-1));
        output(g, "y", RD_DT_F32);
        end(g);
    }
    if (begin(g, "resize18_cubic_antialias_exclude_outside", 18)) {
        input_f32(g, "x", DIMS(1, 1, 8, 8), -2, 2);
        init_vals(g, "scales", RD_DT_F32, DIMS(4), (const double[]){1, 1, 0.4, 0.6});
        rd_onnx_node *n = resize(g, false, "cubic");
        rd_onnx_attr_int(n, "antialias", 1);
        rd_onnx_attr_int(n, "exclude_outside", 1);
        output(g, "y", RD_DT_F32);
        end(g);
    }
    if (begin(g, "resize18_tf_crop_and_resize_axes", 18)) {
        input_f32(g, "x", DIMS(1, 1, 6, 6), -2, 2);
        init_vals(g, "roi", RD_DT_F32, DIMS(4), (const double[]){0.2, 0.1, 0.8, 0.7});
        init_i64(g, "sizes", I64S(4, 3));
        rd_onnx_node *n = node(g, "Resize", STRS("x", "roi", NULL, "sizes"), STRS("y"));
        rd_onnx_attr_string(n, "mode", "linear");
        rd_onnx_attr_string(n, "coordinate_transformation_mode", "tf_crop_and_resize");
        rd_onnx_attr_ints(n, "axes", I64S(2, 3));
        rd_onnx_attr_float(n, "extrapolation_value", 0.5f);
        output(g, "y", RD_DT_F32);
        end(g);
    }
    if (begin(g, "resize19_linear_antialias_half_pixel_symmetric", 19)) {
        input_f32(g, "x", DIMS(1, 1, 9, 9), -2, 2);
        init_i64(g, "sizes", I64S(1, 1, 4, 5));
        rd_onnx_node *n = resize(g, true, "linear");
        rd_onnx_attr_int(n, "antialias", 1);
        rd_onnx_attr_string(n, "coordinate_transformation_mode", "half_pixel_symmetric");
        output(g, "y", RD_DT_F32);
        end(g);
    }
    if (begin(g, "resize19_half_pixel_symmetric_up", 19)) {
        input_f32(g, "x", DIMS(1, 1, 3, 4), -2, 2);
        init_i64(g, "sizes", I64S(1, 1, 7, 6));
        rd_onnx_attr_string(resize(g, true, "linear"), "coordinate_transformation_mode", "half_pixel_symmetric");
        output(g, "y", RD_DT_F32);
        end(g);
    }
    if (begin(g, "resize19_half_pixel_symmetric_down", 19)) {
        input_f32(g, "x", DIMS(1, 1, 8, 7), -2, 2);
        init_vals(g, "scales", RD_DT_F32, DIMS(4), (const double[]){1, 1, 0.6, 0.45});
        rd_onnx_attr_string(resize(g, false, "linear"), "coordinate_transformation_mode", "half_pixel_symmetric");
        output(g, "y", RD_DT_F32);
        end(g);
    }
    if (begin(g, "resize19_half_pixel_symmetric_cubic", 19)) {
        input_f32(g, "x", DIMS(1, 1, 4, 4), -2, 2);
        init_i64(g, "sizes", I64S(1, 1, 6, 7));
        rd_onnx_attr_string(resize(g, true, "cubic"), "coordinate_transformation_mode", "half_pixel_symmetric");
        output(g, "y", RD_DT_F32);
        end(g);
    }
    if (begin(g, "resize19_half_pixel_symmetric_nearest", 19)) {
        input_f32(g, "x", DIMS(1, 1, 4, 5), -2, 2);
        init_i64(g, "sizes", I64S(1, 1, 7, 3));
        rd_onnx_attr_string(resize(g, true, "nearest"), "coordinate_transformation_mode", "half_pixel_symmetric");
        output(g, "y", RD_DT_F32);
        end(g);
    }
}

/* Activations new or changed at 18..20, LayerNormalization 17. */
static void cases_activation(gen *g)
{
    if (begin(g, "gelu20_default", 20)) {
        input_f32(g, "x", DIMS(3, 5), -4, 4);
        node(g, "Gelu", STRS("x"), STRS("y"));
        output(g, "y", RD_DT_F32);
        end(g);
    }
    if (begin(g, "gelu20_tanh", 20)) {
        input_f32(g, "x", DIMS(3, 5), -4, 4);
        rd_onnx_attr_string(node(g, "Gelu", STRS("x"), STRS("y")), "approximate", "tanh");
        output(g, "y", RD_DT_F32);
        end(g);
    }
    if (begin(g, "gelu20_none", 20)) {
        input_f32(g, "x", DIMS(2, 3, 4), -6, 6);
        rd_onnx_attr_string(node(g, "Gelu", STRS("x"), STRS("y")), "approximate", "none");
        output(g, "y", RD_DT_F32);
        end(g);
    }
    if (begin(g, "mish18", 18)) {
        input_f32(g, "x", DIMS(3, 5), -6, 6);
        node(g, "Mish", STRS("x"), STRS("y"));
        output(g, "y", RD_DT_F32);
        end(g);
    }
    if (begin(g, "layer_norm17_last_axis", 17)) {
        input_f32(g, "x", DIMS(2, 3, 4), -2, 2);
        init_rand_f32(g, "scale", DIMS(4), 0.5f, 1.5f);
        init_rand_f32(g, "bias", DIMS(4), -0.5f, 0.5f);
        node(g, "LayerNormalization", STRS("x", "scale", "bias"), STRS("y"));
        output(g, "y", RD_DT_F32);
        end(g);
    }
    if (begin(g, "layer_norm17_axis1_mean_invstd", 17)) {
        input_f32(g, "x", DIMS(2, 3, 4), -2, 2);
        init_rand_f32(g, "scale", DIMS(3, 4), 0.5f, 1.5f);
        rd_onnx_node *n = node(g, "LayerNormalization", STRS("x", "scale"), STRS("y", "mean", "inv_std"));
        rd_onnx_attr_int(n, "axis", 1);
        rd_onnx_attr_float(n, "epsilon", 1e-3f);
        output(g, "y", RD_DT_F32);
        output(g, "mean", RD_DT_F32);
        output(g, "inv_std", RD_DT_F32);
        end(g);
    }
    if (begin(g, "layer_norm17_negative_axis", 17)) {
        input_f32(g, "x", DIMS(2, 3, 4), -2, 2);
        init_rand_f32(g, "scale", DIMS(3, 4), 0.5f, 1.5f);
        init_rand_f32(g, "bias", DIMS(3, 4), -0.5f, 0.5f);
        rd_onnx_attr_int(node(g, "LayerNormalization", STRS("x", "scale", "bias"), STRS("y")), "axis", -2);
        output(g, "y", RD_DT_F32);
        end(g);
    }
}

/* AveragePool with dilations (19). */
static void cases_pool(gen *g)
{
    if (begin(g, "average_pool19_dilations", 19)) {
        input_f32(g, "x", DIMS(1, 2, 8, 8), -2, 2);
        rd_onnx_node *n = node(g, "AveragePool", STRS("x"), STRS("y"));
        rd_onnx_attr_ints(n, "kernel_shape", I64S(3, 3));
        rd_onnx_attr_ints(n, "dilations", I64S(2, 2));
        output(g, "y", RD_DT_F32);
        end(g);
    }
    if (begin(g, "average_pool19_dilations_pads_count_include_pad", 19)) {
        input_f32(g, "x", DIMS(1, 1, 7, 7), -2, 2);
        rd_onnx_node *n = node(g, "AveragePool", STRS("x"), STRS("y"));
        rd_onnx_attr_ints(n, "kernel_shape", I64S(2, 3));
        rd_onnx_attr_ints(n, "dilations", I64S(2, 1));
        rd_onnx_attr_ints(n, "pads", I64S(1, 1, 1, 1));
        rd_onnx_attr_int(n, "count_include_pad", 1);
        output(g, "y", RD_DT_F32);
        end(g);
    }
    if (begin(g, "average_pool19_dilations_pads_exclude_pad", 19)) {
        input_f32(g, "x", DIMS(1, 1, 7, 7), -2, 2);
        rd_onnx_node *n = node(g, "AveragePool", STRS("x"), STRS("y"));
        rd_onnx_attr_ints(n, "kernel_shape", I64S(3, 2));
        rd_onnx_attr_ints(n, "dilations", I64S(2, 2));
        rd_onnx_attr_ints(n, "pads", I64S(2, 1, 2, 1));
        rd_onnx_attr_ints(n, "strides", I64S(2, 1));
        output(g, "y", RD_DT_F32);
        end(g);
    }
    if (begin(g, "average_pool19_dilations_1d", 19)) {
        input_f32(g, "x", DIMS(1, 3, 11), -2, 2);
        rd_onnx_node *n = node(g, "AveragePool", STRS("x"), STRS("y"));
        rd_onnx_attr_ints(n, "kernel_shape", I64S(3));
        rd_onnx_attr_ints(n, "dilations", I64S(3));
        rd_onnx_attr_ints(n, "pads", I64S(2, 1));
        output(g, "y", RD_DT_F32);
        end(g);
    }
    if (begin(g, "average_pool19_dilations_ceil", 19)) {
        input_f32(g, "x", DIMS(1, 1, 8, 8), -2, 2);
        rd_onnx_node *n = node(g, "AveragePool", STRS("x"), STRS("y"));
        rd_onnx_attr_ints(n, "kernel_shape", I64S(2, 2));
        rd_onnx_attr_ints(n, "dilations", I64S(2, 2));
        rd_onnx_attr_ints(n, "strides", I64S(2, 2));
        rd_onnx_attr_int(n, "ceil_mode", 1);
        output(g, "y", RD_DT_F32);
        end(g);
    }
}

/* ScatterElements / ScatterND with reduction max and min (18), duplicate indices included. */
static void cases_scatter(gen *g)
{
    static const char *const reductions[] = {"max", "min"};
    for (int r = 0; r < 2; r++) {
        char name[128];
        snprintf(name, sizeof name, "scatter_elements18_%s", reductions[r]);
        if (begin(g, name, 18)) {
            input_f32(g, "data", DIMS(3, 4), -2, 2);
            init_vals(g, "indices", RD_DT_I64, DIMS(2, 4), (const double[]){0, 2, 1, 0, 0, 1, 1, -1});
            input_f32(g, "updates", DIMS(2, 4), -2, 2);
            rd_onnx_node *n = node(g, "ScatterElements", STRS("data", "indices", "updates"), STRS("y"));
            rd_onnx_attr_int(n, "axis", 1);
            rd_onnx_attr_string(n, "reduction", reductions[r]);
            output(g, "y", RD_DT_F32);
            end(g);
        }
        snprintf(name, sizeof name, "scatter_elements18_%s_axis0", reductions[r]);
        if (begin(g, name, 18)) {
            input_f32(g, "data", DIMS(3, 4), -2, 2);
            init_vals(g, "indices", RD_DT_I64, DIMS(3, 2), (const double[]){1, 0, 1, 2, -1, 0});
            input_f32(g, "updates", DIMS(3, 2), -2, 2);
            rd_onnx_node *n = node(g, "ScatterElements", STRS("data", "indices", "updates"), STRS("y"));
            rd_onnx_attr_string(n, "reduction", reductions[r]);
            output(g, "y", RD_DT_F32);
            end(g);
        }
        snprintf(name, sizeof name, "scatter_nd18_%s", reductions[r]);
        if (begin(g, name, 18)) {
            input_f32(g, "data", DIMS(4, 3), -2, 2);
            init_vals(g, "indices", RD_DT_I64, DIMS(3, 1), (const double[]){1, 3, 1});
            input_f32(g, "updates", DIMS(3, 3), -2, 2);
            rd_onnx_attr_string(node(g, "ScatterND", STRS("data", "indices", "updates"), STRS("y")), "reduction",
                                reductions[r]);
            output(g, "y", RD_DT_F32);
            end(g);
        }
        snprintf(name, sizeof name, "scatter_nd18_%s_elements", reductions[r]);
        if (begin(g, name, 18)) {
            input_f32(g, "data", DIMS(2, 3, 2), -2, 2);
            init_vals(g, "indices", RD_DT_I64, DIMS(4, 2), (const double[]){0, 1, 1, 2, 0, 1, 1, 0});
            input_f32(g, "updates", DIMS(4, 2), -2, 2);
            rd_onnx_attr_string(node(g, "ScatterND", STRS("data", "indices", "updates"), STRS("y")), "reduction",
                                reductions[r]);
            output(g, "y", RD_DT_F32);
            end(g);
        }
    }
}

/* QuantizeLinear / DequantizeLinear 19 and 21: per-axis, blocked, int16/uint16, float16 scales. */
static void cases_quant(gen *g)
{
    if (begin(g, "quantize19_per_axis_uint8", 19)) {
        input_f32(g, "x", DIMS(2, 3, 4), -3, 3);
        init_vals(g, "scale", RD_DT_F32, DIMS(3), (const double[]){0.02, 0.03, 0.05});
        init_vals(g, "zp", RD_DT_U8, DIMS(3), (const double[]){128, 100, 140});
        rd_onnx_attr_int(node(g, "QuantizeLinear", STRS("x", "scale", "zp"), STRS("y")), "axis", 1);
        output(g, "y", RD_DT_U8);
        end(g);
    }
    if (begin(g, "quantize19_int8_saturation", 19)) {
        input_f32(g, "x", DIMS(3, 5), -8, 8);
        init_vals(g, "scale", RD_DT_F32, 0, NULL, (const double[]){0.04});
        init_vals(g, "zp", RD_DT_I8, 0, NULL, (const double[]){-3});
        node(g, "QuantizeLinear", STRS("x", "scale", "zp"), STRS("y"));
        output(g, "y", RD_DT_I8);
        end(g);
    }
    if (begin(g, "dequantize19_per_axis_int8", 19)) {
        input_int(g, "x", RD_DT_I8, DIMS(2, 3, 4), -128, 127);
        init_vals(g, "scale", RD_DT_F32, DIMS(4), (const double[]){0.02, 0.5, 0.125, 1});
        init_vals(g, "zp", RD_DT_I8, DIMS(4), (const double[]){0, -5, 7, 127});
        rd_onnx_attr_int(node(g, "DequantizeLinear", STRS("x", "scale", "zp"), STRS("y")), "axis", -1);
        output(g, "y", RD_DT_F32);
        end(g);
    }
    if (begin(g, "dequantize19_float16_scale", 19)) {
        input_int(g, "x", RD_DT_U8, DIMS(3, 4), 0, 255);
        init_vals(g, "scale", RD_DT_F16, 0, NULL, (const double[]){0.0625});
        init_vals(g, "zp", RD_DT_U8, 0, NULL, (const double[]){120});
        node(g, "DequantizeLinear", STRS("x", "scale", "zp"), STRS("y"));
        output(g, "y", RD_DT_F16);
        end(g);
    }
    if (begin(g, "quantize19_float16_input", 19)) {
        input_f32(g, "x32", DIMS(3, 4), -2, 2);
        rd_onnx_attr_int(node(g, "Cast", STRS("x32"), STRS("x")), "to", RD_DT_F16);
        init_vals(g, "scale", RD_DT_F16, 0, NULL, (const double[]){0.015625});
        init_vals(g, "zp", RD_DT_U8, 0, NULL, (const double[]){128});
        node(g, "QuantizeLinear", STRS("x", "scale", "zp"), STRS("y"));
        output(g, "y", RD_DT_U8);
        end(g);
    }
    if (begin(g, "quantize21_blocked_axis0", 21)) {
        input_f32(g, "x", DIMS(4, 6), -2, 2);
        init_rand_f32(g, "scale", DIMS(2, 6), 0.01f, 0.03f);
        init_vals(g, "zp", RD_DT_U8, DIMS(2, 6),
                  (const double[]){128, 120, 130, 110, 140, 128, 0, 255, 64, 128, 128, 100});
        rd_onnx_node *n = node(g, "QuantizeLinear", STRS("x", "scale", "zp"), STRS("y"));
        rd_onnx_attr_int(n, "axis", 0);
        rd_onnx_attr_int(n, "block_size", 2);
        output(g, "y", RD_DT_U8);
        end(g);
    }
    if (begin(g, "quantize21_blocked_ragged_int8", 21)) {
        input_f32(g, "x", DIMS(2, 7), -2, 2);
        init_rand_f32(g, "scale", DIMS(2, 3), 0.01f, 0.03f);
        init_vals(g, "zp", RD_DT_I8, DIMS(2, 3), (const double[]){0, -10, 10, 5, -5, 0});
        rd_onnx_node *n = node(g, "QuantizeLinear", STRS("x", "scale", "zp"), STRS("y"));
        rd_onnx_attr_int(n, "axis", 1);
        rd_onnx_attr_int(n, "block_size", 3);
        output(g, "y", RD_DT_I8);
        end(g);
    }
    if (begin(g, "dequantize21_blocked_axis1", 21)) {
        input_int(g, "x", RD_DT_I8, DIMS(4, 6), -128, 127);
        init_rand_f32(g, "scale", DIMS(4, 3), 0.01f, 0.1f);
        init_vals(g, "zp", RD_DT_I8, DIMS(4, 3), (const double[]){0, 1, -1, 3, 5, -7, 0, 0, 10, -10, 2, 2});
        rd_onnx_node *n = node(g, "DequantizeLinear", STRS("x", "scale", "zp"), STRS("y"));
        rd_onnx_attr_int(n, "axis", 1);
        rd_onnx_attr_int(n, "block_size", 2);
        output(g, "y", RD_DT_F32);
        end(g);
    }
    if (begin(g, "dequantize21_blocked_ragged_uint8", 21)) {
        input_int(g, "x", RD_DT_U8, DIMS(5, 3), 0, 255);
        init_rand_f32(g, "scale", DIMS(2, 3), 0.01f, 0.1f);
        init_vals(g, "zp", RD_DT_U8, DIMS(2, 3), (const double[]){128, 0, 255, 100, 128, 7});
        rd_onnx_node *n = node(g, "DequantizeLinear", STRS("x", "scale", "zp"), STRS("y"));
        rd_onnx_attr_int(n, "axis", 0);
        rd_onnx_attr_int(n, "block_size", 4);
        output(g, "y", RD_DT_F32);
        end(g);
    }
    if (begin(g, "quantize21_output_dtype_int8", 21)) {
        input_f32(g, "x", DIMS(3, 4), -3, 3);
        init_vals(g, "scale", RD_DT_F32, 0, NULL, (const double[]){0.025});
        rd_onnx_attr_int(node(g, "QuantizeLinear", STRS("x", "scale"), STRS("y")), "output_dtype", RD_DT_I8);
        output(g, "y", RD_DT_I8);
        end(g);
    }
    if (begin(g, "dequantize21_int32_no_zero_point", 21)) {
        input_int(g, "x", RD_DT_I32, DIMS(3, 4), -100000, 100000);
        init_vals(g, "scale", RD_DT_F32, 0, NULL, (const double[]){0.001});
        node(g, "DequantizeLinear", STRS("x", "scale"), STRS("y"));
        output(g, "y", RD_DT_F32);
        end(g);
    }
    /* ort_golden.js reads and writes no int16 .npy: int16 values enter and leave through Cast to/from int32 */
    if (begin(g, "quantize21_int16", 21)) {
        input_f32(g, "x", DIMS(3, 5), -300, 300);
        init_vals(g, "scale", RD_DT_F32, 0, NULL, (const double[]){0.01});
        init_vals(g, "zp", RD_DT_I16, 0, NULL, (const double[]){-100});
        node(g, "QuantizeLinear", STRS("x", "scale", "zp"), STRS("q"));
        rd_onnx_attr_int(node(g, "Cast", STRS("q"), STRS("q32")), "to", RD_DT_I32);
        node(g, "DequantizeLinear", STRS("q", "scale", "zp"), STRS("y"));
        output(g, "q32", RD_DT_I32);
        output(g, "y", RD_DT_F32);
        end(g);
    }
    if (begin(g, "dequantize21_int16_per_axis", 21)) {
        input_int(g, "x32", RD_DT_I32, DIMS(2, 3), -32768, 32767);
        rd_onnx_attr_int(node(g, "Cast", STRS("x32"), STRS("x")), "to", RD_DT_I16);
        init_vals(g, "scale", RD_DT_F32, DIMS(3), (const double[]){0.001, 0.01, 0.1});
        init_vals(g, "zp", RD_DT_I16, DIMS(3), (const double[]){0, 1000, -2000});
        rd_onnx_attr_int(node(g, "DequantizeLinear", STRS("x", "scale", "zp"), STRS("y")), "axis", 1);
        output(g, "y", RD_DT_F32);
        end(g);
    }
    if (begin(g, "quantize21_uint16", 21)) {
        input_f32(g, "x", DIMS(3, 4), -100, 700);
        init_vals(g, "scale", RD_DT_F32, 0, NULL, (const double[]){0.01});
        init_vals(g, "zp", RD_DT_U16, 0, NULL, (const double[]){30000});
        node(g, "QuantizeLinear", STRS("x", "scale", "zp"), STRS("q"));
        rd_onnx_attr_int(node(g, "Cast", STRS("q"), STRS("q32")), "to", RD_DT_I32);
        node(g, "DequantizeLinear", STRS("q", "scale", "zp"), STRS("y"));
        output(g, "q32", RD_DT_I32);
        output(g, "y", RD_DT_F32);
        end(g);
    }
}

/* Cast, Shape start/end and plain shape ops at 19..21 (IR 9 and 10 models). */
static void cases_misc(gen *g)
{
    static const struct {
        const char *name;
        int opset;
        rd_dtype from, to;
        float lo, hi;
    } casts[] = {
        {"cast19_float_to_int32", 19, RD_DT_F32, RD_DT_I32, -100, 100},
        {"cast19_float_to_uint8", 19, RD_DT_F32, RD_DT_U8, 0, 250},
        {"cast19_float_to_float16", 19, RD_DT_F32, RD_DT_F16, -70000, 70000},
        {"cast21_float_to_int64", 21, RD_DT_F32, RD_DT_I64, -1000, 1000},
        {"cast21_int64_to_float", 21, RD_DT_I64, RD_DT_F32, -100000, 100000},
        {"cast21_int32_to_bool", 21, RD_DT_I32, RD_DT_BOOL, -2, 2},
        {"cast21_float_to_double", 21, RD_DT_F32, RD_DT_F64, -5, 5},
        {"cast21_int32_to_int8_wrap", 21, RD_DT_I32, RD_DT_I8, -1000, 1000},
        {"cast21_int64_to_uint8_wrap", 21, RD_DT_I64, RD_DT_U8, -1000, 1000},
    };
    for (size_t i = 0; i < sizeof casts / sizeof casts[0]; i++) {
        if (!begin(g, casts[i].name, casts[i].opset))
            continue;
        if (casts[i].from == RD_DT_F32)
            input_f32(g, "x", DIMS(3, 4), casts[i].lo, casts[i].hi);
        else
            input_int(g, "x", casts[i].from, DIMS(3, 4), (int64_t)casts[i].lo, (int64_t)casts[i].hi);
        rd_onnx_attr_int(node(g, "Cast", STRS("x"), STRS("y")), "to", casts[i].to);
        output(g, "y", casts[i].to);
        end(g);
    }
    if (begin(g, "cast_like21_float_to_int8", 21)) {
        input_f32(g, "x", DIMS(3, 4), -100, 100);
        init_vals(g, "like", RD_DT_I8, DIMS(1), (const double[]){0});
        node(g, "CastLike", STRS("x", "like"), STRS("y"));
        output(g, "y", RD_DT_I8);
        end(g);
    }
    static const struct {
        const char *name;
        int opset;
        bool has_start, has_end;
        int64_t start, end;
    } shapes[] = {
        {"shape15_start_end", 15, true, true, 1, -1},       {"shape15_start_only", 15, true, false, 2, 0},
        {"shape19_negative_start", 19, true, false, -3, 0}, {"shape19_end_only", 19, false, true, 0, 2},
        {"shape21_clamped", 21, true, true, -10, 10},       {"shape21_empty_range", 21, true, true, 3, 1},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        if (!begin(g, shapes[i].name, shapes[i].opset))
            continue;
        input_f32(g, "x", DIMS(2, 3, 4, 5), -1, 1);
        rd_onnx_node *n = node(g, "Shape", STRS("x"), STRS("y"));
        if (shapes[i].has_start)
            rd_onnx_attr_int(n, "start", shapes[i].start);
        if (shapes[i].has_end)
            rd_onnx_attr_int(n, "end", shapes[i].end);
        output(g, "y", RD_DT_I64);
        end(g);
    }
    static const int chain_opsets[] = {19, 21};
    for (int i = 0; i < 2; i++) {
        char name[128];
        snprintf(name, sizeof name, "shape_ops%d_chain", chain_opsets[i]);
        if (!begin(g, name, chain_opsets[i]))
            continue;
        input_f32(g, "x", DIMS(2, 3, 4), -2, 2);
        init_i64(g, "shape", I64S(3, 8));
        init_i64(g, "axes", I64S(0));
        rd_onnx_attr_int(node(g, "Flatten", STRS("x"), STRS("f")), "axis", 1);
        node(g, "Reshape", STRS("f", "shape"), STRS("r"));
        rd_onnx_attr_ints(node(g, "Transpose", STRS("r"), STRS("t")), "perm", I64S(1, 0));
        node(g, "Unsqueeze", STRS("t", "axes"), STRS("u"));
        node(g, "Squeeze", STRS("u", "axes"), STRS("s"));
        node(g, "Identity", STRS("s"), STRS("y"));
        node(g, "Size", STRS("x"), STRS("n"));
        node(g, "Shape", STRS("u"), STRS("su"));
        rd_onnx_node *c = node(g, "ConstantOfShape", STRS("su"), STRS("z"));
        rd_tensor v;
        if (c && rd_tensor_alloc(&v, RD_DT_F32, 1, (const int64_t[]){1}, NULL) == RD_OK) {
            ((float *)v.data)[0] = 0.25f;
            rd_onnx_attr_tensor(c, "value", &v, RD_ONNX_RAW);
            rd_tensor_fini(&v);
        }
        output(g, "y", RD_DT_F32);
        output(g, "n", RD_DT_I64);
        output(g, "z", RD_DT_F32);
        end(g);
    }
    if (begin(g, "qlinear_matmul21_uint8", 21)) {
        input_int(g, "a", RD_DT_U8, DIMS(2, 3), 0, 255);
        init_vals(g, "a_scale", RD_DT_F32, 0, NULL, (const double[]){0.02});
        init_vals(g, "a_zp", RD_DT_U8, 0, NULL, (const double[]){113});
        init_vals(g, "b", RD_DT_U8, DIMS(3, 4), (const double[]){10, 200, 30, 40, 250, 60, 70, 128, 90, 100, 0, 120});
        init_vals(g, "b_scale", RD_DT_F32, 0, NULL, (const double[]){0.01});
        init_vals(g, "b_zp", RD_DT_U8, 0, NULL, (const double[]){114});
        init_vals(g, "y_scale", RD_DT_F32, 0, NULL, (const double[]){0.05});
        init_vals(g, "y_zp", RD_DT_U8, 0, NULL, (const double[]){118});
        node(g, "QLinearMatMul", STRS("a", "a_scale", "a_zp", "b", "b_scale", "b_zp", "y_scale", "y_zp"), STRS("y"));
        output(g, "y", RD_DT_U8);
        end(g);
    }
}

/* ---------------------------------------------------------------------------------------------------
 * Conversion of ONNX Runtime's outputs.
 */

static bool file_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* Converts ORT_OUT_DIR/<k>.npy for every output of the model, named as the model names them. */
static rd_status convert(const char *case_dir, const char *ort_dir, rd_error *err)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/model.onnx", case_dir);
    /* a model our loader rejects (the case is there to show it) still gets ORT's outputs, unnamed */
    rd_load_options opt = {.allow_unsupported_ops = true};
    rd_model *m = NULL;
    rd_error load_err;
    if (rd_model_load(path, &opt, &m, &load_err) != RD_OK)
        m = NULL;
    size_t n_out = m ? rd_model_output_count(m) : SIZE_MAX;
    rd_status st = RD_OK;
    size_t k = 0;
    for (; k < n_out && st == RD_OK; k++) {
        const char *name = "";
        if (m) {
            rd_value_info vi;
            rd_model_value(m, (size_t)rd_model_output(m, k), &vi);
            name = vi.name;
        }
        snprintf(path, sizeof path, "%s/%zu.npy", ort_dir, k);
        if (!file_exists(path)) {
            if (!m && k > 0)
                break;
            st = rd_errorf(err, RD_E_NOTFOUND, "%s: ONNX Runtime wrote no output %zu ('%s')", ort_dir, k, name);
            break;
        }
        rd_tensor t;
        if ((st = rd_npy_load(path, &t, err)) != RD_OK)
            break;
        snprintf(path, sizeof path, "%s/test_data_set_0/output_%zu.pb", case_dir, k);
        st = rd_tensorproto_save(path, &t, name, err);
        rd_tensor_fini(&t);
    }
    rd_model_destroy(m);
    return st;
}

int main(int argc, char **argv)
{
    rd_error err = {0};
    if (argc == 4 && strcmp(argv[1], "--convert") == 0) {
        if (convert(argv[2], argv[3], &err) != RD_OK) {
            fprintf(stderr, "gen_opset_fixtures: %s\n", err.msg);
            return 1;
        }
        return 0;
    }
    if (argc < 3 || argc > 4 || argv[1][0] == '-') {
        fprintf(stderr, "usage: gen_opset_fixtures OUT_ROOT SCRATCH_ROOT [FILTER]\n"
                        "       gen_opset_fixtures --convert CASE_DIR ORT_OUT_DIR\n");
        return 2;
    }
    gen g = {.out_root = argv[1], .scratch_root = argv[2], .filter = argc == 4 ? argv[3] : NULL};
    cases_reduce(&g);
    cases_pad(&g);
    cases_split(&g);
    cases_resize(&g);
    cases_activation(&g);
    cases_pool(&g);
    cases_scatter(&g);
    cases_quant(&g);
    cases_misc(&g);
    if (g.st != RD_OK) {
        fprintf(stderr, "gen_opset_fixtures: %s\n", g.err.msg);
        return 1;
    }
    printf("wrote %d cases to %s\n", g.n_cases, g.out_root);
    return 0;
}
