/*
 * built_rknn.c: a .rknn's decisions on our graph (built.h).
 *
 * Check (against the ONNX model): every stored activation is an ONNX tensor, a variant of one or a
 * compiler-made tensor; shapes agree; inputs and outputs are the model's. Map (on a simulation's optimised
 * graph): each compute node is one group materialising the ONNX tensor it writes, with every ONNX tensor
 * between the tensors it reads and that one inside; each ONNX tensor takes the precision of the node
 * computing it (float16 compute before an exDataConvert to int8 is RKNN's float16 op) and the scale and
 * zero point stored with it. Weights: per-channel asymmetric parameters derived from the ONNX weights,
 * the codes compared with the file's (the file's are used where they differ, another model refused).
 */
#include "built_internal.h"

#include <stdlib.h>
#include <string.h>

static const char *node_label(const rd_rknn_node *n, char *buf, size_t len)
{
    snprintf(buf, len, "node #%d %s '%s'", n->index, n->op_type ? n->op_type : "?", n->name ? n->name : "");
    return buf;
}

/* Same dims; unknown ONNX dims (-1) match anything, and dims of 1 may be added or dropped (RKNN lifts
   tensors to 4-D). */
static bool same_shape(const rd_rknn_tensor *t, const rd_value_info *vi)
{
    if (vi->rank < 0)
        return true;
    bool exact = (int)t->rank == vi->rank;
    for (int d = 0; exact && d < vi->rank; d++)
        exact = vi->dims[d] < 0 || vi->dims[d] == t->shape[d];
    if (exact)
        return true;
    int64_t a[RD_RKNN_MAX_RANK], b[RD_MAX_RANK];
    int na = 0, nb = 0;
    for (size_t d = 0; d < t->rank; d++)
        if (t->shape[d] != 1)
            a[na++] = t->shape[d];
    for (int d = 0; d < vi->rank; d++) {
        if (vi->dims[d] < 0)
            return true; /* a symbolic dim: the squeezed forms cannot be compared */
        if (vi->dims[d] != 1)
            b[nb++] = vi->dims[d];
    }
    if (na != nb)
        return false;
    for (int d = 0; d < na; d++)
        if (a[d] != b[d])
            return false;
    return true;
}

static void shape_text(const int64_t *dims, int rank, char *buf, size_t len)
{
    size_t used = (size_t)snprintf(buf, len, "[");
    for (int d = 0; d < rank && used + 24 < len; d++)
        used += (size_t)snprintf(buf + used, len - used, "%s%lld", d ? ", " : "", (long long)dims[d]);
    snprintf(buf + used, len - used, "]");
}

static rd_status check_io(an_built *b, const rd_model *m, rd_error *err)
{
    const rd_rknn_graph *g = b->g;
    size_t n_in = rd_model_input_count(m);
    if (g->n_inputs != n_in)
        return rd_errorf(err, RD_E_PARSE, "%s has %zu inputs, %s has %zu: built from another model?", b->rknn_path,
                         g->n_inputs, b->model_path, n_in);
    for (size_t i = 0; i < g->n_inputs; i++) {
        const char *name = rd_rknn_tensor_name(g, g->inputs[i]);
        bool found = false;
        for (size_t k = 0; k < n_in && !found; k++) {
            rd_value_info vi;
            rd_model_value(m, (size_t)rd_model_input(m, k), &vi);
            found = strcmp(vi.name, name) == 0;
        }
        if (!found)
            return rd_errorf(err, RD_E_PARSE, "%s: input '%s' is not an input of %s: built from another model?",
                             b->rknn_path, name, b->model_path);
    }
    for (size_t o = 0; o < rd_model_output_count(m); o++) {
        rd_value_info vi;
        rd_model_value(m, (size_t)rd_model_output(m, o), &vi);
        bool found = false;
        for (size_t k = 0; k < g->n_outputs && !found; k++)
            found = strcmp(b->tensors[g->outputs[k]].base, vi.name) == 0;
        if (!found)
            return rd_errorf(err, RD_E_PARSE,
                             "%s: output '%s' of %s is not an output of the .rknn: built from "
                             "another model (or another subgraph: give the same subgraphs.outputs)?",
                             b->rknn_path, vi.name, b->model_path);
    }
    return RD_OK;
}

/* An unmatched tensor the compiler made as a copy of a tensor it reads: written by a layout op (or an
   identity conv it names New_input_N, [file] dual_residual) from exactly one ONNX tensor of the same element
   count. It stands for that tensor. */
static bool compiler_copy(an_built *b, size_t i)
{
    const rd_rknn_graph *g = b->g;
    const rd_rknn_tensor *t = &g->tensors[i];
    if (t->producer < 0)
        return false;
    const rd_rknn_node *n = &g->nodes[t->producer];
    static const char *const layout_ops[] = {"Reshape", "Transpose", "exDataConvert",
                                             "Squeeze", "Unsqueeze", "Flatten"};
    bool layout = strncmp(t->name, "New_input_", 10) == 0;
    for (size_t k = 0; !layout && k < sizeof layout_ops / sizeof layout_ops[0]; k++)
        layout = n->op_type && strcmp(n->op_type, layout_ops[k]) == 0;
    int32_t src = -1;
    for (size_t k = 0; k < n->n_inputs; k++) {
        const bt_tensor *in = &b->tensors[n->inputs[k]];
        if (in->kind != BT_ONNX && in->kind != BT_VARIANT)
            continue;
        if (src >= 0)
            return false;
        src = n->inputs[k];
    }
    if (!layout || src < 0 || (size_t)src == i) /* a node reading what it writes (a malformed file) */
        return false;
    int64_t a = 1, c = 1;
    for (size_t d = 0; d < t->rank; d++)
        a *= t->shape[d];
    for (size_t d = 0; d < g->tensors[src].rank; d++)
        c *= g->tensors[src].shape[d];
    if (a != c)
        return false;
    b->tensors[i].kind = BT_VARIANT;
    /* src != i (checked above), so the two names do not overlap; base is always NUL-terminated */
    const char *from = b->tensors[src].base;
    memcpy(b->tensors[i].base, from, strnlen(from, sizeof b->tensors[i].base - 1) + 1);
    b->tensors[i].base[sizeof b->tensors[i].base - 1] = '\0';
    return true;
}

rd_status an_bt_rknn_check(an_built *b, const rd_model *m, rd_error *err)
{
    const rd_rknn_graph *g = b->g;
    b->tensors = calloc(g->n_tensors + 1, sizeof *b->tensors);
    if (!b->tensors)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    for (size_t i = 0; i < g->n_tensors; i++)
        b->tensors[i].kind =
            an_bt_classify(m, g->tensors[i].name, g->tensors[i].role, b->tensors[i].base, sizeof b->tensors[i].base);
    for (bool changed = true; changed;) { /* copies of copies: until nothing changes */
        changed = false;
        for (size_t i = 0; i < g->n_tensors; i++)
            changed = (b->tensors[i].kind == BT_UNMATCHED && compiler_copy(b, i)) || changed;
    }
    size_t unmatched = 0;
    char first[3][700];
    for (size_t i = 0; i < g->n_tensors; i++) {
        const rd_rknn_tensor *t = &g->tensors[i];
        const bt_tensor *bt = &b->tensors[i];
        char lb[600];
        if (bt->kind == BT_UNMATCHED) {
            if (unmatched < 3)
                snprintf(first[unmatched], sizeof first[0], "'%s'%s%s", t->name, t->producer >= 0 ? " written by " : "",
                         t->producer >= 0 ? node_label(&g->nodes[t->producer], lb, sizeof lb) : "");
            unmatched++;
            continue;
        }
        if (bt->kind != BT_ONNX)
            continue;
        rd_value_info vi;
        rd_model_value(m, (size_t)rd_model_find_value(m, bt->base), &vi);
        if (!same_shape(t, &vi)) {
            char ts[160], os[160];
            shape_text(t->shape, (int)t->rank, ts, sizeof ts);
            shape_text(vi.dims, vi.rank, os, sizeof os);
            return rd_errorf(err, RD_E_PARSE,
                             "%s: tensor '%s' has shape %s, %s has %s: built from another model (or "
                             "with other input shapes)?",
                             b->rknn_path, t->name, ts, b->model_path, os);
        }
    }
    if (unmatched)
        return rd_errorf(err, RD_E_PARSE,
                         "%s stores %zu tensor%s that %s does not have (%s%s%s%s%s): built from "
                         "another model?",
                         b->rknn_path, unmatched, unmatched == 1 ? "" : "s", b->model_path, first[0],
                         unmatched > 1 ? ", " : "", unmatched > 1 ? first[1] : "", unmatched > 2 ? ", " : "",
                         unmatched > 2 ? first[2] : "");
    return check_io(b, m, err);
}

/* ---- mapping on a simulation ---------------------------------------------------------------------- */

static bool is_op(const rd_rknn_node *n, const char *op)
{
    return n->op_type && strcmp(n->op_type, op) == 0;
}

/* The value a .rknn tensor stands for in s's graph (-1: none). */
static int value_of(const an_built *b, const rd_model *m, int32_t t)
{
    if (t < 0 || (size_t)t >= b->g->n_tensors)
        return -1;
    const bt_tensor *bt = &b->tensors[t];
    if (bt->kind != BT_ONNX && bt->kind != BT_VARIANT && bt->kind != BT_AUX)
        return -1;
    return rd_model_find_value(m, bt->base);
}

static rd_status add_group(an_built *b, const bt_group *g, rd_error *err)
{
    bt_group *grown = realloc(b->groups, (b->n_groups + 1) * sizeof *grown);
    if (!grown)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    b->groups = grown;
    b->groups[b->n_groups++] = *g;
    return RD_OK;
}

/* A compute node: one group per ONNX tensor it writes. */
static rd_status map_compute(an_built *b, const rd_model *m, const bool *stored, const rd_rknn_node *n, rd_error *err)
{
    int reads[64];
    size_t n_reads = 0;
    for (size_t k = 0; k < n->n_inputs && n_reads < 64; k++) {
        int v = value_of(b, m, n->inputs[k]);
        if (v >= 0)
            reads[n_reads++] = v;
    }
    bool any = false;
    for (size_t k = 0; k < n->n_outputs; k++) {
        const bt_tensor *bt = &b->tensors[n->outputs[k]];
        if (bt->kind != BT_ONNX && bt->kind != BT_VARIANT)
            continue;
        int out = rd_model_find_value(m, bt->base);
        if (out < 0 || (bt->kind == BT_VARIANT && n_reads == 1 && reads[0] == out))
            continue; /* a layout copy of a tensor it reads */
        bt_group g = {
            .src = n->index, .op = n->op_type, .name = n->name, .target = rd_rknn_target_name(n->target), .out = out};
        char why[300];
        rd_status st = an_bt_inner_of(m, out, reads, n_reads, stored, &g.inner, &g.n_inner, why, sizeof why, err);
        if (st != RD_OK)
            return st;
        if (why[0]) {
            snprintf(g.note, sizeof g.note, "not reproduced: %s", why);
            g.out = -1;
        }
        if ((st = add_group(b, &g, err)) != RD_OK) {
            free(g.inner);
            return st;
        }
        any = true;
    }
    if (!any) {
        bt_group g = {
            .src = n->index, .op = n->op_type, .name = n->name, .target = rd_rknn_target_name(n->target), .out = -1};
        snprintf(g.note, sizeof g.note, "writes no ONNX tensor (a compiler-made op): nothing to simulate");
        return add_group(b, &g, err);
    }
    return RD_OK;
}

/* What writes a .rknn tensor: 'c' compute, 'x' exDataConvert, 'i' InputOperator, 0 nothing. */
static char writer(const an_built *b, int32_t t)
{
    int p = b->g->tensors[t].producer;
    if (p < 0)
        return 0;
    const rd_rknn_node *n = &b->g->nodes[p];
    return is_op(n, "exDataConvert") ? 'x' : is_op(n, "InputOperator") ? 'i' : 'c';
}

/* The precision and parameters of ONNX tensor v from the .rknn tensors standing for it. */
static rd_status decide(an_built *b, const rd_model *m, int v, rd_error *err)
{
    const rd_rknn_graph *g = b->g;
    rd_value_info vi;
    rd_model_value(m, (size_t)v, &vi);
    int32_t exact = -1, computed = -1, q_any = -1;
    for (size_t i = 0; i < g->n_tensors; i++) {
        const bt_tensor *bt = &b->tensors[i];
        if ((bt->kind != BT_ONNX && bt->kind != BT_VARIANT) || strcmp(bt->base, vi.name) != 0)
            continue;
        if (bt->kind == BT_ONNX)
            exact = (int32_t)i;
        if (writer(b, (int32_t)i) == 'c' && (computed < 0 || bt->kind == BT_ONNX))
            computed = (int32_t)i;
        const rd_rknn_tensor *t = &g->tensors[i];
        if (t->n_scale == 1 && t->n_zero_point == 1 &&
            (t->dtype == RD_DT_I8 || t->dtype == RD_DT_U8 || t->dtype == RD_DT_I16))
            q_any = q_any < 0 || bt->kind == BT_ONNX ? (int32_t)i : q_any;
    }
    if (exact < 0 && computed < 0)
        return RD_OK;
    bt_decision *d = an_bt_decision(b, vi.name, err);
    if (!d)
        return RD_E_NOMEM;
    int32_t held = exact >= 0 ? exact : computed;
    bool known;
    rd_prec compute = an_bt_prec_of_dtype(g->tensors[computed >= 0 ? computed : held].dtype, &known);
    d->prec = an_bt_prec_of_dtype(g->tensors[held].dtype, &known);
    if (exact >= 0 && computed >= 0 && exact != computed && writer(b, exact) == 'x') {
        d->via_f16 = compute == RD_PREC_FP16 && d->prec != RD_PREC_FP16;
        if (compute == RD_PREC_INT8 && d->prec == RD_PREC_FP16)
            d->prec = RD_PREC_INT8; /* int8 then converted for float16 readers: the readers convert */
    } else if (computed >= 0) {
        d->prec = compute;
    }
    int32_t q = g->tensors[held].n_scale == 1 && g->tensors[held].n_zero_point == 1 ? held : q_any;
    if (q >= 0 && d->prec != RD_PREC_FP32) {
        const rd_rknn_tensor *t = &g->tensors[q];
        d->scale = t->scale[0];
        d->zp = t->zero_point[0];
        d->has_q16 = t->dtype == RD_DT_I16;
        d->has_q8 = !d->has_q16;
        if (t->dtype == RD_DT_U8) { /* uint8 codes: the int8 grid is the same shifted by 128 */
            d->zp -= 128;
        }
    }
    char lb[600];
    int p = g->tensors[computed >= 0 ? computed : held].producer;
    snprintf(d->why, sizeof d->why, "%s", p >= 0 ? node_label(&g->nodes[p], lb, sizeof lb) : "the .rknn's inputs");
    return RD_OK;
}

static rd_status add_convert(an_built *b, const rd_model *m, const rd_rknn_node *n, rd_error *err)
{
    if (n->n_inputs < 1 || n->n_outputs < 1)
        return RD_OK;
    int v = value_of(b, m, n->inputs[0]);
    if (v < 0)
        v = value_of(b, m, n->outputs[0]);
    if (v < 0)
        return an_bt_note(b, "%s converts no ONNX tensor", n->name) == RD_OK
                   ? RD_OK
                   : rd_errorf(err, RD_E_NOMEM, "out of memory");
    bt_convert *c = an_bt_add_convert(b, m, v, rd_rknn_tensor_name(b->g, n->outputs[0]), err);
    if (!c)
        return RD_E_NOMEM;
    c->src = n->index;
    bool known;
    c->from = an_bt_prec_of_dtype(b->g->tensors[n->inputs[0]].dtype, &known);
    c->to = an_bt_prec_of_dtype(b->g->tensors[n->outputs[0]].dtype, &known);
    return RD_OK;
}

rd_status an_bt_rknn_map(an_built *b, rd_sim *s, rd_error *err)
{
    const rd_model *m = rd_sim_model(s);
    const rd_rknn_graph *g = b->g;
    size_t nv = rd_model_value_count(m);
    bool *stored = calloc(nv + 1, sizeof *stored);
    if (!stored)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    for (size_t i = 0; i < g->n_tensors; i++) {
        int v = value_of(b, m, (int32_t)i);
        if (v >= 0 && b->tensors[i].kind != BT_AUX)
            stored[v] = true;
    }
    rd_status st = RD_OK;
    for (size_t i = 0; i < g->n_nodes && st == RD_OK; i++) {
        const rd_rknn_node *n = &g->nodes[i];
        if (is_op(n, "InputOperator") || is_op(n, "OutputOperator"))
            b->n_io_ops++;
        else if (is_op(n, "exDataConvert"))
            st = add_convert(b, m, n, err);
        else
            st = map_compute(b, m, stored, n, err);
    }
    for (size_t v = 0; v < nv && st == RD_OK; v++)
        if (stored[v])
            st = decide(b, m, (int)v, err);
    free(stored);
    for (size_t i = 0; i < g->n_tensors && st == RD_OK; i++) {
        const rd_rknn_tensor *t = &g->tensors[i];
        if (b->tensors[i].kind == BT_AUX || b->tensors[i].kind == BT_COMPILER)
            st = an_bt_note(b, "tensor '%s' is a compiler %s%s%s: ignored", t->name,
                            b->tensors[i].kind == BT_AUX ? "buffer of '" : "constant",
                            b->tensors[i].kind == BT_AUX ? b->tensors[i].base : "",
                            b->tensors[i].kind == BT_AUX ? "'" : "") == RD_OK
                     ? RD_OK
                     : rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    return st;
}

/* ---- weights ---------------------------------------------------------------------------------------- */

static const char *value_name(const rd_model *m, int v)
{
    rd_value_info vi;
    rd_model_value(m, (size_t)v, &vi);
    return vi.name;
}

/* The member of group g with constant int8 weights of numel elements: its node index, or -1. */
static int weight_node(rd_sim *s, const bt_group *g, int64_t numel, rd_sim_weights *sw)
{
    const rd_model *m = rd_sim_model(s);
    for (size_t k = 0; k <= g->n_inner; k++) {
        int v = k < g->n_inner ? g->inner[k] : g->out;
        rd_value_info vi;
        rd_model_value(m, (size_t)v, &vi);
        if (vi.producer < 0 || rd_sim_weights_get(s, vi.producer, sw, NULL) != RD_OK || sw->bits != 8)
            continue;
        const rd_tensor *w = rd_model_constant(m, (size_t)sw->value);
        if (w && rd_tensor_numel(w) == numel)
            return vi.producer;
    }
    return -1;
}

/* Our code index of the .rknn's OIHW element i: the same for Conv-like weights, transposed for a 2-D weight
   with its output channels on the last axis (Gemm transB = 0, MatMul). */
static int64_t our_index(const rd_tensor *w, const rd_sim_weights *sw, int64_t i, int64_t per)
{
    if (w->rank == 2 && sw->axis == 1)
        return (i % per) * w->dims[1] + i / per;
    return i;
}

static rd_status compare_weights(an_built *b, rd_sim *s, const bt_group *g, const rd_rknn_node *n, rd_error *err)
{
    const rd_rknn_tensor *t = &b->g->tensors[n->inputs[1]];
    if (t->layout != RD_RKNN_LAYOUT_CONV_WEIGHT || t->dtype != RD_DT_I8 || t->rank != 4)
        return RD_OK; /* float16 weights, or a layout whose codes are not read */
    const int64_t O = t->shape[0], per = t->shape[1] * t->shape[2] * t->shape[3], numel = O * per;
    rd_sim_weights sw;
    int node = weight_node(s, g, numel, &sw);
    if (node < 0)
        return an_bt_note(b,
                          "weights '%s' of %s: no int8 layer of ours with %lld weights in its group: derived "
                          "from the ONNX weights",
                          t->name, n->name, (long long)numel) == RD_OK
                   ? RD_OK
                   : rd_errorf(err, RD_E_NOMEM, "out of memory");
    const rd_model *m = rd_sim_model(s);
    const rd_tensor *w = rd_model_constant(m, (size_t)sw.value);
    int8_t *file = malloc((size_t)numel + 1), *codes = malloc((size_t)numel + 1);
    int32_t *pad = malloc(((size_t)O + 1) * sizeof *pad), *zps = malloc(((size_t)sw.n_scale + 1) * sizeof *zps);
    if (!file || !codes || !pad || !zps) {
        free(file), free(codes), free(pad), free(zps);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    bt_weight bw = {0};
    rd_node_info ni;
    rd_model_node(m, (size_t)node, &ni);
    snprintf(bw.name, sizeof bw.name, "%s", t->name);
    snprintf(bw.node, sizeof bw.node, "%s", ni.name);
    rd_error e = {0};
    rd_status st = rd_rknn_unpack_conv_weight(b->rknn, t, file, (size_t)numel, pad, &e);
    if (st != RD_OK) {
        snprintf(bw.note, sizeof bw.note, "codes not read (%s): derived from the ONNX weights", e.msg);
        st = RD_OK;
        goto record;
    }
    bool per_channel = sw.n_scale == O;
    for (int c = 0; c < sw.n_scale; c++)
        zps[c] = sw.zero_point ? sw.zero_point[c] : 0;
    for (int64_t o = 0; per_channel && o < O; o++) {
        if (pad[o] == INT32_MIN)
            continue;
        bw.n_pad++;
        bw.n_pad_equal += pad[o] == zps[o];
        zps[o] = pad[o]; /* the padding lane holds the channel's zero point: the file's codes are relative to it */
    }
    for (int64_t i = 0; i < numel; i++) {
        int64_t k = our_index(w, &sw, i, per);
        int d = (int)file[i] - (int)sw.q[k];
        bw.n_equal += d == 0;
        bw.n_off1 += d == 1 || d == -1;
        bw.n_far += d > 1 || d < -1;
        codes[k] = file[i];
    }
    bw.n_codes = numel;
    if (bw.n_far * 100 > numel) {
        st = rd_errorf(err, RD_E_PARSE,
                       "%s: weights '%s' of %s: %lld of %lld codes differ from the int8 "
                       "quantization of %s's weights of node '%s' by more than one step: built from another model "
                       "(or other weights)?",
                       b->rknn_path, t->name, n->name, (long long)bw.n_far, (long long)numel, b->model_path, ni.name);
        goto out;
    }
    if (bw.n_equal < numel || bw.n_pad_equal < bw.n_pad) {
        st = rd_sim_set_weight_quant(s, ni.name[0] ? ni.name : value_name(m, sw.value), sw.scale, zps, sw.n_scale,
                                     codes, (size_t)numel, err);
        bw.used_file_codes = st == RD_OK;
    }
record:
    if (st == RD_OK) {
        bt_weight *grown = realloc(b->weights, (b->n_weights + 1) * sizeof *grown);
        if (!grown)
            st = rd_errorf(err, RD_E_NOMEM, "out of memory");
        else {
            b->weights = grown;
            b->weights[b->n_weights++] = bw;
        }
    }
out:
    free(file), free(codes), free(pad), free(zps);
    return st;
}

rd_status an_bt_rknn_weights(an_built *b, rd_sim *s, rd_error *err)
{
    rd_status st = RD_OK;
    for (size_t i = 0; i < b->n_groups && st == RD_OK; i++) {
        const bt_group *g = &b->groups[i];
        const rd_rknn_node *n = &b->g->nodes[g->src];
        if (g->out < 0 || n->n_inputs < 2 || n->inputs[1] <= 0)
            continue;
        int role = b->g->tensors[n->inputs[1]].role;
        if (role == RD_RKNN_ROLE_CONST || role == RD_RKNN_ROLE_CONST_OTHER)
            st = compare_weights(b, s, g, n, err);
    }
    return st;
}
