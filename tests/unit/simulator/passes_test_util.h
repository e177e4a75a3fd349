/*
 * passes_test_util.h: what the compiler-pass tests share (test_passes.c, test_passes_rknn.c): seeded
 * initializers, one- and two-input nodes, a model loaded twice with the passes applied to one copy, the
 * two copies' outputs compared, and checks of the pass annotations (fused_into, virtual_out, producers).
 */
#ifndef RD_PASSES_TEST_UTIL_H
#define RD_PASSES_TEST_UTIL_H

#include "internal.h"
#include "rd_test.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- model building -------------------------------------------------------------------------- */

/* Deterministic values in [lo, hi) from a seed (LCG). */
static inline void fill(float *d, int64_t n, unsigned seed, float lo, float hi)
{
    uint32_t s = 2463534242u ^ (seed * 2654435761u);
    for (int64_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        d[i] = lo + (hi - lo) * (float)(s >> 8) / 16777216.0f;
    }
}

/* Adds a float32 initializer of the given shape with values in [lo, hi). */
static inline void init_f32(rd_onnx_builder *b, const char *name, int rank, const int64_t *dims, unsigned seed,
                            float lo, float hi)
{
    rd_tensor t;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_tensor_alloc(&t, RD_DT_F32, rank, dims, &err), RD_OK);
    fill(t.data, rd_tensor_numel(&t), seed, lo, hi);
    rd_onnx_add_initializer(b, name, &t, RD_ONNX_RAW);
    rd_tensor_fini(&t);
}

static inline void init_bool(rd_onnx_builder *b, const char *name, bool v)
{
    rd_tensor t = {.dtype = RD_DT_BOOL, .rank = 0, .data = &v};
    rd_onnx_add_initializer(b, name, &t, RD_ONNX_RAW);
}

/* The four BatchNormalization parameters <p>_s, <p>_b, <p>_m, <p>_v of c channels (var > 0). */
static inline void bn_params(rd_onnx_builder *b, const char *p, int64_t c, unsigned seed)
{
    char name[64];
    const int64_t dims[1] = {c};
    snprintf(name, sizeof name, "%s_s", p);
    init_f32(b, name, 1, dims, seed, 0.5f, 2.0f);
    snprintf(name, sizeof name, "%s_b", p);
    init_f32(b, name, 1, dims, seed + 1, -1.0f, 1.0f);
    snprintf(name, sizeof name, "%s_m", p);
    init_f32(b, name, 1, dims, seed + 2, -0.5f, 0.5f);
    snprintf(name, sizeof name, "%s_v", p);
    init_f32(b, name, 1, dims, seed + 3, 0.25f, 3.0f);
}

/* A BatchNormalization node x -> y with parameters prefixed p (see bn_params). */
static inline rd_onnx_node *bn_node(rd_onnx_builder *b, const char *name, const char *x, const char *p, const char *y)
{
    char s[64], bb[64], m[64], v[64];
    snprintf(s, sizeof s, "%s_s", p);
    snprintf(bb, sizeof bb, "%s_b", p);
    snprintf(m, sizeof m, "%s_m", p);
    snprintf(v, sizeof v, "%s_v", p);
    return rd_onnx_add_node(b, "BatchNormalization", name, (const char *const[]){x, s, bb, m, v}, 5,
                            (const char *const[]){y}, 1);
}

static inline rd_onnx_node *node1(rd_onnx_builder *b, const char *op, const char *name, const char *x, const char *y)
{
    return rd_onnx_add_node(b, op, name, (const char *const[]){x}, 1, (const char *const[]){y}, 1);
}

static inline rd_onnx_node *node2(rd_onnx_builder *b, const char *op, const char *name, const char *x0, const char *x1,
                                  const char *y)
{
    return rd_onnx_add_node(b, op, name, (const char *const[]){x0, x1}, 2, (const char *const[]){y}, 1);
}

/* ---- load twice, optimise one, compare ------------------------------------------------------- */

typedef struct pair {
    rd_model *ref, *opt;
} pair;

/* Serialises b (destroyed here), loads it twice and applies `level` to the second copy. */
static inline pair load_pair(rd_onnx_builder *b, int level)
{
    pair p = {0};
    rd_error err;
    void *buf = NULL;
    size_t len = 0;
    rd_status st = rd_onnx_builder_write(b, &buf, &len, &err);
    rd_onnx_builder_destroy(b);
    if (st != RD_OK) {
        fprintf(stderr, "\nwrite: %s\n", err.msg);
        CU_FAIL_FATAL("the test model does not serialise");
    }
    st = rd_model_load_mem(buf, len, "passes.onnx", ".", NULL, &p.ref, &err);
    if (st == RD_OK)
        st = rd_model_load_mem(buf, len, "passes.onnx", ".", NULL, &p.opt, &err);
    free(buf);
    if (st == RD_OK)
        st = sim_passes_apply(p.opt, level, &err);
    if (st != RD_OK) {
        fprintf(stderr, "\nload/passes: %s\n", err.msg);
        rd_model_destroy(p.ref);
        rd_model_destroy(p.opt);
        CU_FAIL_FATAL("the test model does not load or optimise");
    }
    return p;
}

static inline void pair_free(pair *p)
{
    rd_model_destroy(p->ref);
    rd_model_destroy(p->opt);
}

/* Runs both copies on seeded float inputs (every input of the test models is a fixed-shape float32) and
   compares every output: bit for bit when exact, else within 1e-5 relative to the output's range. */
static inline void check_same_outputs(const pair *p, bool exact)
{
    rd_error err;
    size_t n_in = rd_model_input_count(p->ref), n_out = rd_model_output_count(p->ref);
    CU_ASSERT_EQUAL_FATAL(n_in, rd_model_input_count(p->opt));
    CU_ASSERT_EQUAL_FATAL(n_out, rd_model_output_count(p->opt));
    rd_tensor in[4], out_ref[8], out_opt[8];
    CU_ASSERT_FATAL(n_in <= 4 && n_out <= 8);
    for (size_t k = 0; k < n_in; k++) {
        rd_value_info vi;
        rd_model_value(p->ref, (size_t)rd_model_input(p->ref, k), &vi);
        CU_ASSERT_EQUAL_FATAL(rd_tensor_alloc(&in[k], RD_DT_F32, vi.rank, vi.dims, &err), RD_OK);
        fill(in[k].data, rd_tensor_numel(&in[k]), 100 + (unsigned)k, -2.0f, 2.0f);
    }
    rd_status st_ref = rd_model_run(p->ref, in, n_in, NULL, out_ref, n_out, &err);
    if (st_ref != RD_OK)
        fprintf(stderr, "\nreference run: %s\n", err.msg);
    rd_status st_opt = rd_model_run(p->opt, in, n_in, NULL, out_opt, n_out, &err);
    if (st_opt != RD_OK)
        fprintf(stderr, "\noptimised run: %s\n", err.msg);
    CU_ASSERT_EQUAL(st_ref, RD_OK);
    CU_ASSERT_EQUAL(st_opt, RD_OK);
    for (size_t o = 0; o < n_out && st_ref == RD_OK && st_opt == RD_OK; o++) {
        const rd_tensor *a = &out_ref[o], *b = &out_opt[o];
        CU_ASSERT_EQUAL(a->dtype, b->dtype);
        CU_ASSERT_EQUAL(rd_tensor_numel(a), rd_tensor_numel(b));
        if (a->dtype != b->dtype || rd_tensor_numel(a) != rd_tensor_numel(b))
            continue;
        if (exact || a->dtype != RD_DT_F32) {
            CU_ASSERT_EQUAL(memcmp(a->data, b->data, rd_tensor_nbytes(a)), 0);
            continue;
        }
        const float *x = a->data, *y = b->data;
        double range = 0, worst = 0;
        for (int64_t i = 0; i < rd_tensor_numel(a); i++) {
            range = fmax(range, fabs((double)x[i]));
            worst = fmax(worst, fabs((double)x[i] - (double)y[i]));
        }
        if (worst > 1e-5 * fmax(range, 1.0))
            fprintf(stderr, "\noutput %zu: max difference %g for a range of %g\n", o, worst, range);
        CU_ASSERT(worst <= 1e-5 * fmax(range, 1.0));
    }
    for (size_t k = 0; k < n_in; k++)
        rd_tensor_fini(&in[k]);
    for (size_t o = 0; o < n_out; o++) {
        if (st_ref == RD_OK)
            rd_tensor_fini(&out_ref[o]);
        if (st_opt == RD_OK)
            rd_tensor_fini(&out_opt[o]);
    }
}

/* Nodes of the given op type. */
static inline int count_op(const rd_model *m, const char *op)
{
    int n = 0;
    for (int i = 0; i < m->n_nodes; i++)
        n += strcmp(m->nodes[i].op_type, op) == 0;
    return n;
}

static inline const sim_value *value(const rd_model *m, const char *name)
{
    int v = sim_model_find(m, name);
    CU_ASSERT_FATAL(v >= 0);
    return &m->values[v];
}

/* The name of the value `name` was fused into, "" when none. */
static inline const char *fused_into(const rd_model *m, const char *name)
{
    const sim_value *v = value(m, name);
    return v->fused_into >= 0 ? m->values[v->fused_into].name : "";
}

/* Checks a value's pass annotations and that the model's producer indices and liveness are coherent. */
static inline void check_value(const rd_model *m, const char *name, const char *into, bool virt)
{
    CU_ASSERT_STRING_EQUAL(fused_into(m, name), into);
    CU_ASSERT_EQUAL(value(m, name)->virtual_out, virt);
}

static inline void check_consistent(const rd_model *m)
{
    for (int v = 0; v < m->n_values; v++) {
        const sim_value *val = &m->values[v];
        int prod = -1, last = -1;
        for (int i = 0; i < m->n_nodes; i++) {
            for (int k = 0; k < m->nodes[i].n_out; k++)
                if (m->nodes[i].out[k] == v)
                    prod = i;
            for (int k = 0; k < m->nodes[i].n_in; k++)
                if (m->nodes[i].in[k] == v)
                    last = i;
        }
        CU_ASSERT_EQUAL(val->producer, prod);
        CU_ASSERT_EQUAL(val->last_use, last);
        if (last >= 0) /* anything read has a source */
            CU_ASSERT(prod >= 0 || val->konst || val->is_graph_input);
        if (prod >= 0) /* nodes stay in topological order */
            CU_ASSERT(last < 0 || last > prod);
    }
}

/* Groups by NPU op type: one per node writing a materialised tensor (a group's last node). */
static inline int groups_of(const rd_model *m, const char *npu)
{
    int n = 0;
    for (int i = 0; i < m->n_nodes; i++) {
        const sim_node *nd = &m->nodes[i];
        n += nd->npu_op && strcmp(nd->npu_op, npu) == 0 && nd->out[0] >= 0 && !m->values[nd->out[0]].virtual_out;
    }
    return n;
}

/* The end of most pass tests: the model still coherent, the outputs bit for bit, the pair freed. */
static inline void check_and_free(pair *p)
{
    check_consistent(p->opt);
    check_same_outputs(p, true);
    pair_free(p);
}

#endif
