/*
 * passes_bias.c: level 2, a constant added after a Conv, ConvTranspose or Gemm folded into its bias, as NPU
 * compilers do (older exporters write the bias as a separate Add: mnist8's Conv -> Add -> Relu). A MatMul
 * with a constant 2-D weight followed by such an Add becomes a Gemm with that bias (RKNN runs it as one
 * fully connected layer). Without the fold the int8 simulation would requantize the sum before the bias,
 * a rounding the NPU does not have.
 *
 * y = op(x) + c, with c constant float32 holding one value per output channel (shape [C], [C,1,1],
 * [1,C,1,1], ... or a scalar), becomes op'(x) with bias' = bias + c (or bias - c for op(x) - c), computed
 * in double and stored as float32 in a new constant "<producer out>_folded_b". The producer then writes
 * y; its own output is recorded as fused into y and the Add node is dropped. docs/internals/passes.md has
 * the refusals.
 */
#include "passes.h"

/* Output channels of a Conv/ConvTranspose/Gemm that can take a new bias, with the output's channel axis
   and rank; 0 when it cannot. */
static int64_t bias_channels(const sim_pass *p, int prod, int *rank)
{
    const rd_model *m = p->m;
    const sim_node *n = &m->nodes[prod];
    if (n->n_in < 2 || n->in[1] < 0 || n->n_out < 1)
        return 0;
    const rd_tensor *w = m->values[n->in[1]].konst;
    *rank = m->values[n->out[0]].rank;
    int64_t c = 0;
    const rd_op_weight rule = sim_pass_weight_rule(p, prod);
    if (rule == RD_OP_WEIGHT_CONV && w && w->rank >= 3) {
        c = w->dims[0];
    } else if (rule == RD_OP_WEIGHT_CONV_T && w && w->rank >= 3) {
        c = w->dims[1] * sim_attr_int(n, "group", 1);
    } else if (rule == RD_OP_WEIGHT_GEMM && w && w->rank == 2) {
        if (sim_attr_float(n, "beta", 1.0f) != 1.0f) /* the new C would be scaled */
            return 0;
        c = sim_attr_int(n, "transB", 0) ? w->dims[0] : w->dims[1];
        *rank = 2;
    } else if (rule == RD_OP_WEIGHT_MATMUL && w && w->rank == 2 && w->dtype == RD_DT_F32 && n->in[0] >= 0 &&
               m->values[n->in[0]].rank == 2 && n->opset >= 7) {
        c = w->dims[1]; /* becomes a Gemm (transB = 0) */
        *rank = 2;
    }
    if (c <= 0 || *rank < 2)
        return 0;
    if (n->n_in > 2 && n->in[2] >= 0) { /* an existing bias must be a constant of one value per channel */
        const rd_tensor *b = m->values[n->in[2]].konst;
        if (!b || b->dtype != RD_DT_F32 || rd_tensor_numel(b) != c ||
            (b->rank != 1 && !(b->rank == 2 && b->dims[0] == 1)))
            return 0;
    }
    return c;
}

/* True when constant t adds one value per channel (axis 1 of a rank-`rank` output of c channels) or one
   value to everything, without broadcasting the output to a bigger shape. */
static bool per_channel(const rd_tensor *t, int rank, int64_t c)
{
    if (!t || t->dtype != RD_DT_F32 || t->rank > rank)
        return false;
    for (int j = 0; j < t->rank; j++) {
        int axis = rank - t->rank + j;
        if (t->dims[j] != 1 && !(axis == 1 && t->dims[j] == c))
            return false;
    }
    return rd_tensor_numel(t) == 1 || rd_tensor_numel(t) == c;
}

/* Turns MatMul node n into a Gemm (alpha 1, beta 1, no transposes), its parameters parsed again. */
static rd_status matmul_to_gemm(rd_model *m, sim_node *n, rd_error *err)
{
    const sim_op_def *gemm = sim_op_find("", "Gemm");
    char *name = sim_strdup("Gemm");
    void *params = gemm && gemm->params_size ? calloc(1, gemm->params_size) : NULL;
    if (!gemm || !name || (gemm->params_size && !params)) {
        free(name);
        free(params);
        return rd_errorf(err, RD_E_NOMEM, "%s: out of memory making node '%s' a Gemm", m->path, n->name);
    }
    rd_status st = gemm->parse ? gemm->parse(n, params, err) : RD_OK;
    if (st != RD_OK) {
        free(name);
        free(params);
        return rd_error_prefix(err, "%s: making node '%s' a Gemm", m->path, n->name);
    }
    free(n->op_type);
    free(n->params);
    n->op_type = name;
    n->params = params;
    n->def = gemm;
    return RD_OK;
}

/* Folds Add/Sub node `add` (constant operand k) into producer `prod` of c channels. Leaves the model
   unchanged on failure. */
static rd_status fold_one(sim_pass *p, int prod, int add, int k, int64_t c, rd_error *err)
{
    rd_model *m = p->m;
    const sim_node *a = &m->nodes[add];
    sim_node *n = &m->nodes[prod];
    const rd_tensor *addend = m->values[a->in[k]].konst;
    const double sign = strcmp(a->op_type, "Sub") == 0 ? -1.0 : 1.0;
    const float *old = n->n_in > 2 && n->in[2] >= 0 ? m->values[n->in[2]].konst->data : NULL;
    const float *add_data = addend->data;
    const bool scalar = rd_tensor_numel(addend) == 1;

    rd_tensor nb = {0};
    const int64_t bdims[1] = {c};
    rd_status st = rd_tensor_alloc(&nb, RD_DT_F32, 1, bdims, err);
    if (st == RD_OK)
        st = sim_pass_room_for_bias(n, err);
    if (st == RD_OK && strcmp(n->op_type, "MatMul") == 0)
        st = matmul_to_gemm(m, n, err);
    if (st != RD_OK) {
        rd_tensor_fini(&nb);
        return rd_error_prefix(err, "%s: folding node '%s' into '%s'", m->path, a->name, n->name);
    }
    float *nbd = nb.data;
    for (int64_t ch = 0; ch < c; ch++)
        nbd[ch] = (float)((old ? (double)old[ch] : 0.0) + sign * (double)add_data[scalar ? 0 : ch]);

    const int x = n->out[0];
    char *base = sim_strdup(m->values[x].name);
    int bv = -1;
    st = base ? sim_pass_add_constant(m, base, "_folded_b", &nb, &bv, err)
              : rd_errorf(err, RD_E_NOMEM, "%s: out of memory", m->path);
    free(base);
    rd_tensor_fini(&nb);
    if (st != RD_OK)
        return st; /* at worst an unread constant was added (and a MatMul is a Gemm without bias) */

    /* commit: the producer reads the new bias and writes the Add's output */
    if (n->n_in > 2)
        sim_pass_drop_use(p, n->in[2]);
    sim_pass_drop_use(p, a->in[k]);
    sim_pass_absorb(p, prod, add, bv);
    return RD_OK;
}

rd_status sim_pass_fold_biases(sim_pass *p, rd_error *err)
{
    rd_model *m = p->m;
    for (int i = 0; i < m->n_nodes; i++) {
        bool is_add = sim_pass_is_live_op(p, i, "Add");
        if ((!is_add && !sim_pass_is_live_op(p, i, "Sub")) || m->nodes[i].n_in != 2 || m->nodes[i].out[0] < 0)
            continue;
        if (m->nodes[i].opset < 7) /* legacy broadcast (`axis`) does not align as numpy's rules here assume */
            continue;
        const sim_node *a = &m->nodes[i];
        /* x + c, c + x, or x - c: k is the constant's slot */
        for (int k = is_add ? 0 : 1; k < 2; k++) {
            int xv = a->in[1 - k], cv = a->in[k];
            if (xv < 0 || cv < 0 || !m->values[cv].konst || m->values[xv].konst)
                continue;
            int prod = sim_pass_fusable_producer(p, xv), rank = 0;
            int64_t c = prod >= 0 && m->nodes[prod].out[0] == xv ? bias_channels(p, prod, &rank) : 0;
            if (c <= 0 || !per_channel(m->values[cv].konst, rank, c) || m->values[xv].dtype != RD_DT_F32)
                continue;
            rd_status st = fold_one(p, prod, i, k, c, err);
            if (st != RD_OK)
                return st;
            break;
        }
    }
    return RD_OK;
}
