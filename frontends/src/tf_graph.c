/*
 * tf_graph.c: a frozen TensorFlow GraphDef decoded (protobuf-c, the loader's memory budget) and written as
 * ONNX (tf_lower.h): constants, attributes, references to node outputs, graph inputs (Placeholder), the
 * nodes tf_plan chose written in its order, every unsupported op listed at once.
 */
#include "tf_lower.h"

#include <math.h>
#include <stdio.h>

/* A constant broadcast from one value may claim at most this many elements. */
#define TF_MAX_SPLAT ((int64_t)1 << 24)

const Rdtf__NodeDef *tf_node_def(const tf_ctx *C)
{
    return C->g->node[C->cur];
}

const char *tf_where(tf_ctx *C, char *buf, size_t len)
{
    const Rdtf__NodeDef *n = tf_node_def(C);
    snprintf(buf, len, "%s: node #%zu '%s' (%s)", C->path, C->cur, n->name, n->op);
    return buf;
}

const Rdtf__AttrValue *tf_attr(const tf_ctx *C, const char *key)
{
    const Rdtf__NodeDef *n = tf_node_def(C);
    for (size_t i = 0; i < n->n_attr; i++)
        if (n->attr[i]->key && strcmp(n->attr[i]->key, key) == 0)
            return n->attr[i]->value;
    return NULL;
}

static bool attr_is(tf_ctx *C, const Rdtf__AttrValue *a, Rdtf__AttrValue__ValueCase want, const char *key)
{
    if (a->value_case == want)
        return true;
    char w[300];
    tf_fail(C, RD_E_PARSE, "%s: attribute %s has the wrong kind (%d)", tf_where(C, w, sizeof w), key,
            (int)a->value_case);
    return false;
}

int64_t tf_attr_int(tf_ctx *C, const char *key, int64_t def)
{
    const Rdtf__AttrValue *a = tf_attr(C, key);
    return a && attr_is(C, a, RDTF__ATTR_VALUE__VALUE_I, key) ? a->i : def;
}

float tf_attr_float(tf_ctx *C, const char *key, float def)
{
    const Rdtf__AttrValue *a = tf_attr(C, key);
    if (!a || !attr_is(C, a, RDTF__ATTR_VALUE__VALUE_F, key))
        return def;
    if (!isfinite(a->f)) {
        char w[300];
        tf_fail(C, RD_E_PARSE, "%s: attribute %s is not finite", tf_where(C, w, sizeof w), key);
        return def;
    }
    return a->f;
}

bool tf_attr_bool(tf_ctx *C, const char *key, bool def)
{
    const Rdtf__AttrValue *a = tf_attr(C, key);
    return a && attr_is(C, a, RDTF__ATTR_VALUE__VALUE_B, key) ? a->b != 0 : def;
}

const char *tf_attr_str(tf_ctx *C, const char *key, const char *def, char *buf, size_t len)
{
    const Rdtf__AttrValue *a = tf_attr(C, key);
    if (!a || !attr_is(C, a, RDTF__ATTR_VALUE__VALUE_S, key))
        return def;
    snprintf(buf, len, "%.*s", (int)(a->s.len < len ? a->s.len : len - 1), a->s.data ? (const char *)a->s.data : "");
    return buf;
}

bool tf_attr_ints(tf_ctx *C, const char *key, int64_t *out, int max, int *n)
{
    *n = 0;
    const Rdtf__AttrValue *a = tf_attr(C, key);
    if (!a)
        return true;
    if (!attr_is(C, a, RDTF__ATTR_VALUE__VALUE_LIST, key))
        return false;
    if (a->list->n_i > (size_t)max) {
        char w[300];
        tf_fail(C, RD_E_PARSE, "%s: attribute %s has %zu values, at most %d expected", tf_where(C, w, sizeof w), key,
                a->list->n_i, max);
        return false;
    }
    for (size_t i = 0; i < a->list->n_i; i++)
        out[i] = a->list->i[i];
    *n = (int)a->list->n_i;
    return true;
}

int tf_attr_type(tf_ctx *C, const char *key, int def)
{
    const Rdtf__AttrValue *a = tf_attr(C, key);
    return a && attr_is(C, a, RDTF__ATTR_VALUE__VALUE_TYPE, key) ? (int)a->type : def;
}

int tf_n_inputs(const tf_ctx *C)
{
    const Rdtf__NodeDef *n = tf_node_def(C);
    int k = 0;
    while ((size_t)k < n->n_input && n->input[k][0] != '^')
        k++;
    return k;
}

int tf_resolve(tf_ctx *C, size_t node, const char *ref, int *port)
{
    char name[1024];
    ref += ref[0] == '^';
    const char *colon = strrchr(ref, ':');
    size_t len = colon ? (size_t)(colon - ref) : strlen(ref);
    if (len >= sizeof name)
        return tf_fail(C, RD_E_PARSE, "%s: node '%s' reads a name of %zu bytes", C->path, C->g->node[node]->name, len),
               -1;
    memcpy(name, ref, len);
    name[len] = '\0';
    *port = 0;
    for (const char *d = colon ? colon + 1 : ""; *d; d++)
        if (*d < '0' || *d > '9' || (*port = *port * 10 + (*d - '0')) > TF_MAX_PORT)
            return tf_fail(C, RD_E_PARSE, "%s: node '%s' reads '%s', whose output number is not one", C->path,
                           C->g->node[node]->name, ref),
                   -1;
    if (colon && !colon[1])
        return tf_fail(C, RD_E_PARSE, "%s: node '%s' reads '%s', without an output number", C->path,
                       C->g->node[node]->name, ref),
               -1;
    fe_map_slot *s = fe_map_get(&C->index, name);
    if (!s)
        return tf_fail(C, RD_E_PARSE, "%s: node '%s' reads '%s', which is no node of the graph", C->path,
                       C->g->node[node]->name, ref),
               -1;
    return (int)(intptr_t)s->val - 1;
}

static int input_node(tf_ctx *C, int k, int *port)
{
    char w[300];
    if (k >= tf_n_inputs(C))
        return tf_fail(C, RD_E_PARSE, "%s: has %d inputs, input %d expected", tf_where(C, w, sizeof w), tf_n_inputs(C),
                       k),
               -1;
    return tf_resolve(C, C->cur, tf_node_def(C)->input[k], port);
}

/* "name:K", the key of output K > 0 in C->ports, into buf. */
static const char *port_key(const tf_ctx *C, size_t node, int port, char *buf, size_t len)
{
    snprintf(buf, len, "%s:%d", C->g->node[node]->name, port);
    return buf;
}

const char *tf_port_value(tf_ctx *C, size_t node, int port)
{
    if (port == 0)
        return C->value[node];
    char key[1100];
    fe_map_slot *s = fe_map_get(&C->ports, port_key(C, node, port, key, sizeof key));
    return s ? s->val : NULL;
}

const char *tf_out_k(tf_ctx *C, int k)
{
    if (k == 0)
        return tf_out(C);
    const char *v = tf_port_value(C, C->cur, k);
    if (v || C->st != RD_OK)
        return v;
    char key[1100];
    port_key(C, C->cur, k, key, sizeof key);
    v = tf_fresh(C, key, "");
    fe_map_slot *s = v ? fe_map_put(&C->ports, key, NULL, NULL) : NULL;
    if (!s)
        return tf_fail(C, RD_E_NOMEM, "out of memory"), NULL;
    s->val = (void *)v;
    return v;
}

const char *tf_in(tf_ctx *C, int k)
{
    int port = 0;
    int n = C->st == RD_OK ? input_node(C, k, &port) : -1;
    if (n < 0)
        return NULL;
    if (port > 0) {
        const char *v = tf_port_value(C, (size_t)n, port);
        char w[300];
        if (!v)
            tf_fail(C, RD_E_UNSUPPORTED, "%s: reads output %d of '%s' (%s), which is not written (no such output)",
                    tf_where(C, w, sizeof w), port, C->g->node[n]->name, C->g->node[n]->op);
        return v;
    }
    int c = C->konst_of[n];
    if (c >= 0) { /* a constant read as data: its initializer, written once */
        if (!C->konst_value[c]) {
            rd_tensor t;
            if (rd_tensor_clone(&t, &C->konst[c], C->err) != RD_OK)
                return tf_fail(C, RD_E_NOMEM, "out of memory"), NULL;
            const char *nm = fe_names_fresh(&C->names, C->g->node[c]->name, "");
            if (!nm || rd_onnx_add_initializer(C->b, nm, &t, RD_ONNX_RAW) != RD_OK)
                tf_fail(C, RD_E_NOMEM, "out of memory");
            rd_tensor_fini(&t);
            C->konst_value[c] = nm;
        }
        return C->konst_value[c];
    }
    if (!C->value[n] && C->cut[n]) {
        char w[300];
        return tf_fail(C, RD_E_INVAL,
                       "%s: reads '%s', whose node is cut at another of its outputs (name this one "
                       "in the inputs)",
                       tf_where(C, w, sizeof w), C->g->node[n]->name),
               NULL;
    }
    if (!C->value[n]) {
        char w[300];
        return tf_fail(C, RD_E_UNSUPPORTED, "%s: reads '%s' (%s), which writes no value", tf_where(C, w, sizeof w),
                       C->g->node[n]->name, C->g->node[n]->op),
               NULL;
    }
    return C->value[n];
}

const rd_tensor *tf_const_in(tf_ctx *C, int k)
{
    if (C->st != RD_OK || k >= tf_n_inputs(C))
        return NULL;
    int port = 0;
    int n = input_node(C, k, &port);
    return n >= 0 && port == 0 && C->konst_of[n] >= 0 ? &C->konst[C->konst_of[n]] : NULL;
}

bool tf_const_ints(tf_ctx *C, int k, int64_t *out, int max, int *n)
{
    const rd_tensor *t = tf_const_in(C, k);
    char w[300];
    *n = 0;
    if (C->st != RD_OK)
        return false;
    if (!t || t->dtype != RD_DT_I64 || rd_tensor_numel(t) > max)
        return tf_fail(C, RD_E_UNSUPPORTED, "%s: input %d must be a constant integer tensor of at most %d values",
                       tf_where(C, w, sizeof w), k, max),
               false;
    *n = (int)rd_tensor_numel(t);
    if (*n)
        memcpy(out, t->data, (size_t)*n * sizeof *out);
    return true;
}

const char *tf_fresh(tf_ctx *C, const char *base, const char *suffix)
{
    const char *s = C->st == RD_OK ? fe_names_fresh(&C->names, base, suffix) : NULL;
    if (!s && C->st == RD_OK)
        tf_fail(C, RD_E_NOMEM, "out of memory");
    return s;
}

const char *tf_out(tf_ctx *C)
{
    if (!C->value[C->cur])
        C->value[C->cur] = tf_fresh(C, tf_node_def(C)->name, "");
    return C->value[C->cur];
}

const char *tf_init(tf_ctx *C, const char *base, const char *suffix, rd_tensor *t)
{
    const char *nm = tf_fresh(C, base, suffix);
    if (nm && rd_onnx_add_initializer(C->b, nm, t, RD_ONNX_RAW) != RD_OK)
        tf_fail(C, RD_E_NOMEM, "out of memory");
    rd_tensor_fini(t);
    return C->st == RD_OK ? nm : NULL;
}

const char *tf_init_i64(tf_ctx *C, const char *suffix, const int64_t *v, int n)
{
    rd_tensor t = {0};
    if (rd_tensor_alloc(&t, RD_DT_I64, 1, (const int64_t[]){n}, C->err) != RD_OK)
        return tf_fail(C, RD_E_NOMEM, "out of memory"), NULL;
    if (n)
        memcpy(t.data, v, (size_t)n * sizeof *v);
    return tf_init(C, tf_node_def(C)->name, suffix, &t);
}

const char *tf_init_scalar(tf_ctx *C, const char *suffix, float v)
{
    rd_tensor t = {0};
    if (rd_tensor_alloc(&t, RD_DT_F32, 0, NULL, C->err) != RD_OK)
        return tf_fail(C, RD_E_NOMEM, "out of memory"), NULL;
    *(float *)t.data = v;
    return tf_init(C, tf_node_def(C)->name, suffix, &t);
}

rd_onnx_node *tf_add(tf_ctx *C, const char *op, const char *const *in, int n_in, const char *const *out, int n_out)
{
    return fe_node(C->b, &C->st, C->err, op, tf_node_def(C)->name, in, n_in, out, n_out);
}

static const char *transpose(tf_ctx *C, const char *v, const char *out, const int64_t perm[4])
{
    rd_onnx_node *n = tf_add(C, "Transpose", &v, 1, &out, 1);
    if (n)
        rd_onnx_attr_ints(n, "perm", perm, 4);
    return out;
}

const char *tf_nchw(tf_ctx *C, const char *v)
{
    if (!v || C->st != RD_OK)
        return NULL;
    fe_map_slot *s = fe_map_get(&C->nchw, v);
    if (s)
        return s->val;
    const char *t = transpose(C, v, tf_fresh(C, v, ":nchw"), (const int64_t[]){0, 3, 1, 2});
    s = t ? fe_map_put(&C->nchw, v, NULL, NULL) : NULL;
    if (s)
        s->val = (void *)t;
    return t;
}

void tf_to_nhwc(tf_ctx *C, const char *y_nchw, const char *out)
{
    transpose(C, y_nchw, out, (const int64_t[]){0, 2, 3, 1});
    fe_map_slot *s = out && y_nchw && C->st == RD_OK ? fe_map_put(&C->nchw, out, NULL, NULL) : NULL;
    if (s) /* the next NCHW op reads y_nchw directly */
        s->val = (void *)y_nchw;
}

/* ---- constants --------------------------------------------------------------------------------------- */

/* For the dtypes read as constants: bytes per element of tensor_content and the length of the typed value list;
   false for the others. */
static bool const_layout(const Rdtf__TensorProto *tp, size_t *esize, size_t *n_vals)
{
    const struct {
        int dtype;
        size_t esize, n_vals;
    } kinds[] = {
        {DT_FLOAT, 4, tp->n_float_val}, {DT_DOUBLE, 8, tp->n_double_val}, {DT_HALF, 2, tp->n_half_val},
        {DT_INT32, 4, tp->n_int_val},   {DT_INT64, 8, tp->n_int64_val},
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (kinds[i].dtype == tp->dtype) {
            *esize = kinds[i].esize;
            *n_vals = kinds[i].n_vals;
            return true;
        }
    return false;
}

static rd_status const_tensor(tf_ctx *C, const Rdtf__TensorProto *tp, rd_tensor *out)
{
    char w[300];
    const Rdtf__TensorShapeProto *sh = tp->tensor_shape;
    int64_t dims[RD_MAX_RANK];
    int rank = sh ? (int)sh->n_dim : 0;
    if (rank > RD_MAX_RANK || (sh && sh->unknown_rank))
        return tf_fail(C, RD_E_PARSE, "%s: a constant of rank %d (at most %d)", tf_where(C, w, sizeof w), rank,
                       RD_MAX_RANK);
    int64_t numel = 1;
    for (int i = 0; i < rank; i++) {
        dims[i] = sh->dim[i]->size;
        if (dims[i] < 0 || dims[i] > ((int64_t)1 << 31) || (numel *= dims[i]) > ((int64_t)1 << 40))
            return tf_fail(C, RD_E_PARSE, "%s: constant dim %d is %lld", tf_where(C, w, sizeof w), i,
                           (long long)dims[i]);
    }
    size_t esize, n_vals;
    if (!const_layout(tp, &esize, &n_vals))
        return RD_E_UNSUPPORTED; /* left unread: refused only where a node uses it */
    bool from_bytes = tp->tensor_content.len > 0;
    if (from_bytes ? tp->tensor_content.len != (size_t)numel * esize : (n_vals > 1 && n_vals != (size_t)numel))
        return tf_fail(C, RD_E_PARSE, "%s: a constant of %lld elements holds %zu %s", tf_where(C, w, sizeof w),
                       (long long)numel, from_bytes ? tp->tensor_content.len : n_vals, from_bytes ? "bytes" : "values");
    if (!from_bytes && n_vals <= 1 && numel > TF_MAX_SPLAT)
        return tf_fail(C, RD_E_LIMIT, "%s: a constant of %lld elements from one value (at most %lld)",
                       tf_where(C, w, sizeof w), (long long)numel, (long long)TF_MAX_SPLAT);
    bool is_int = tp->dtype == DT_INT32 || tp->dtype == DT_INT64;
    if (rd_tensor_alloc(out, is_int ? RD_DT_I64 : RD_DT_F32, rank, dims, C->err) != RD_OK)
        return tf_fail(C, C->err ? C->err->code : RD_E_NOMEM, "%s: %s", tf_where(C, w, sizeof w),
                       C->err ? C->err->msg : "out of memory");
    const uint8_t *raw = tp->tensor_content.data;
    for (int64_t i = 0; i < numel; i++) {
        size_t j = n_vals == 1 ? 0 : (size_t)i; /* one value fills the tensor, as TensorFlow does */
        if (is_int) {
            int64_t v = 0;
            if (from_bytes && esize == 4) {
                int32_t x;
                memcpy(&x, raw + i * 4, 4);
                v = x;
            } else if (from_bytes) {
                memcpy(&v, raw + i * 8, 8);
            } else if (n_vals) {
                v = tp->dtype == DT_INT32 ? tp->int_val[j] : tp->int64_val[j];
            }
            ((int64_t *)out->data)[i] = v;
        } else {
            float f = 0.0f;
            if (from_bytes && tp->dtype == DT_FLOAT) {
                memcpy(&f, raw + i * 4, 4);
            } else if (from_bytes && tp->dtype == DT_DOUBLE) {
                double d;
                memcpy(&d, raw + i * 8, 8);
                f = (float)d;
            } else if (from_bytes) {
                uint16_t h;
                memcpy(&h, raw + i * 2, 2);
                f = rd_f16_to_f32(h);
            } else if (n_vals) {
                f = tp->dtype == DT_FLOAT    ? tp->float_val[j]
                    : tp->dtype == DT_DOUBLE ? (float)tp->double_val[j]
                                             : rd_f16_to_f32((uint16_t)tp->half_val[j]);
            }
            if (!isfinite(f)) {
                rd_tensor_fini(out);
                return tf_fail(C, RD_E_PARSE, "%s: constant value %lld is not finite", tf_where(C, w, sizeof w),
                               (long long)i);
            }
            ((float *)out->data)[i] = f;
        }
    }
    return RD_OK;
}

/* ---- the graph ---------------------------------------------------------------------------------------- */

/* Indexes names, reads constants and what forwards them. */
static rd_status index_nodes(tf_ctx *C)
{
    size_t n = C->g->n_node;
    for (size_t i = 0; i < n && C->st == RD_OK; i++) {
        const Rdtf__NodeDef *nd = C->g->node[i];
        bool added;
        fe_map_slot *s = fe_map_put(&C->index, nd->name, NULL, &added);
        if (!s)
            return tf_fail(C, RD_E_NOMEM, "out of memory");
        if (!added)
            return tf_fail(C, RD_E_PARSE, "%s: two nodes are named '%s' (#%zu and #%zu)", C->path, nd->name,
                           (size_t)(intptr_t)s->val - 1, i);
        s->val = (void *)(intptr_t)(i + 1);
        C->konst_of[i] = -1;
        if (strcmp(nd->op, "Const") == 0) {
            C->cur = i;
            const Rdtf__AttrValue *a = tf_attr(C, "value");
            char w[300];
            if (!a || a->value_case != RDTF__ATTR_VALUE__VALUE_TENSOR || !a->tensor)
                return tf_fail(C, RD_E_PARSE, "%s: a Const without a value tensor", tf_where(C, w, sizeof w));
            rd_status st = const_tensor(C, a->tensor, &C->konst[i]);
            if (st == RD_OK)
                C->konst_of[i] = (int)i;
            else if (st != RD_E_UNSUPPORTED)
                return st;
        }
    }
    return C->st;
}

/* Graph inputs: every Placeholder (float32), with its shape (-1 dims symbolic: --input-shape fixes them). */
void tf_placeholder(tf_ctx *C)
{
    char w[300];
    const Rdtf__AttrValue *dt = tf_attr(C, "dtype"), *sh = tf_attr(C, "shape");
    if (dt && dt->value_case == RDTF__ATTR_VALUE__VALUE_TYPE && dt->type != DT_FLOAT) {
        tf_fail(C, RD_E_UNSUPPORTED, "%s: an input of DataType %d (only float32 inputs)", tf_where(C, w, sizeof w),
                dt->type);
        return;
    }
    int rank = -1;
    int64_t dims[RD_MAX_RANK];
    char params[RD_MAX_RANK][16];
    const char *pp[RD_MAX_RANK];
    if (sh && sh->value_case == RDTF__ATTR_VALUE__VALUE_SHAPE && sh->shape && !sh->shape->unknown_rank) {
        if (sh->shape->n_dim > RD_MAX_RANK) {
            tf_fail(C, RD_E_PARSE, "%s: an input of rank %zu", tf_where(C, w, sizeof w), sh->shape->n_dim);
            return;
        }
        rank = (int)sh->shape->n_dim;
        for (int i = 0; i < rank; i++) {
            dims[i] = sh->shape->dim[i]->size < 0 ? -1 : sh->shape->dim[i]->size;
            snprintf(params[i], sizeof params[i], i ? "dim%d" : "batch", i);
            pp[i] = dims[i] < 0 ? params[i] : NULL; /* an unknown dim is symbolic: --input-shape fixes it */
        }
    }
    const char *v = tf_out(C);
    if (v && rd_onnx_add_input(C->b, v, RD_DT_F32, rank, dims, rank > 0 ? pp : NULL) != RD_OK)
        tf_fail(C, RD_E_NOMEM, "out of memory");
}

/* True when a data input of the current node was not written because an op is not supported. */
static bool reads_dead(tf_ctx *C)
{
    for (int k = 0; k < tf_n_inputs(C); k++) {
        int port, n = tf_resolve(C, C->cur, tf_node_def(C)->input[k], &port);
        if (n >= 0 && C->dead[n])
            return true;
    }
    return false;
}

static rd_status lower_graph(tf_ctx *C, size_t *n_nodes, size_t *n_read)
{
    size_t n = C->g->n_node, n_order = 0;
    size_t *order = malloc((n ? n : 1) * sizeof *order);
    C->value = calloc(n ? n : 1, sizeof *C->value);
    C->konst = calloc(n ? n : 1, sizeof *C->konst);
    C->konst_of = calloc(n ? n : 1, sizeof *C->konst_of);
    C->konst_value = calloc(n ? n : 1, sizeof *C->konst_value);
    C->read = calloc(n ? n : 1, sizeof *C->read);
    C->cut = calloc(n ? n : 1, sizeof *C->cut);
    C->dead = calloc(n ? n : 1, sizeof *C->dead);
    rd_status st =
        !order || !C->value || !C->konst || !C->konst_of || !C->konst_value || !C->read || !C->cut || !C->dead
            ? tf_fail(C, RD_E_NOMEM, "out of memory")
            : RD_OK;
    if (st == RD_OK && n == 0)
        st = tf_fail(C, RD_E_PARSE, "%s: a GraphDef without nodes", C->path);
    if (st == RD_OK)
        st = index_nodes(C);
    if (st == RD_OK)
        st = tf_plan(C, order, &n_order);
    for (size_t i = 0; i < n_order && C->st == RD_OK; i++) {
        C->cur = order[i];
        const char *op = tf_node_def(C)->op;
        if (C->cut[C->cur]) {
            /* a graph input (tf_plan) */
        } else if (reads_dead(C)) {
            C->dead[C->cur] = 1; /* what an unsupported op feeds is not written: the op alone is reported */
        } else if (!strcmp(op, "Placeholder")) {
            tf_placeholder(C);
        } else if (!strcmp(op, "Const") || !strcmp(op, "NoOp")) {
            /* constants are written where they are read */
        } else if ((!strcmp(op, "Identity") || !strcmp(op, "StopGradient")) && tf_n_inputs(C) == 1 &&
                   tf_const_in(C, 0)) {
            int port; /* weights/read: tf_const_in found the Const */
            C->konst_of[C->cur] = C->konst_of[tf_resolve(C, C->cur, tf_node_def(C)->input[0], &port)];
        } else if (!tf_lower_node(C, op)) {
            char where[300];
            snprintf(where, sizeof where, "node #%zu '%s'", C->cur, tf_node_def(C)->name);
            fe_unsupported_add(&C->unsup, op, where);
            C->dead[C->cur] = 1;
        }
    }
    *n_nodes = n;
    *n_read = n_order;
    if (C->st == RD_OK && !C->unsup.n_kinds)
        tf_outputs(C);
    free(order);
    return C->st;
}

bool tf_looks_like_graphdef(const void *buf, size_t len)
{
    const uint8_t *b = buf;
    if (len < 4 || b[0] != 0x0a) /* GraphDef field 1 (node), length-delimited */
        return false;
    size_t i = 1, shift = 0;
    uint64_t l = 0;
    while (i < len && i < 11 && (b[i] & 0x80)) {
        l |= (uint64_t)(b[i++] & 0x7f) << shift;
        shift += 7;
    }
    if (i >= len || i >= 11)
        return false;
    l |= (uint64_t)b[i++] << shift;
    return l >= 2 && l <= len - i && b[i] == 0x0a; /* NodeDef field 1 (name) first */
}

rd_status rd_tf_to_onnx(const void *buf, size_t len, const char *name, const rd_frontend_options *fo, void **out_buf,
                        size_t *out_len, rd_frontend_info *info, rd_error *err)
{
    *out_buf = NULL;
    *out_len = 0;
    tf_ctx C = {.path = name, .err = err, .fo = fo};
    rd_pb_msg *msg = NULL;
    C.st = rd_pb_unpack(&rdtf__graph_def__descriptor, buf, len, "TensorFlow GraphDef", &msg, err);
    if (C.st != RD_OK) {
        rd_error_prefix(err, "%s", name);
        return C.st;
    }
    C.g = (const Rdtf__GraphDef *)rd_pb_msg_get(msg);
    if (!(C.b = rd_onnx_builder_create(8, 13)))
        C.st = rd_errorf(err, RD_E_NOMEM, "out of memory");
    size_t n_nodes = 0, n_read = 0;
    if (C.st == RD_OK)
        lower_graph(&C, &n_nodes, &n_read);
    rd_status unsup = fe_unsupported_finish(&C.unsup, name, "node", C.st == RD_OK ? err : NULL);
    if (C.st == RD_OK && unsup != RD_OK)
        C.st = unsup;
    if (C.st == RD_OK) {
        rd_onnx_set_producer(C.b, "rknn-diag tensorflow frontend", "");
        if (rd_onnx_builder_write(C.b, out_buf, out_len, err) != RD_OK)
            C.st = err ? err->code : RD_E_NOMEM;
    }
    if (info) {
        memset(info, 0, sizeof *info);
        info->format = RD_FORMAT_TENSORFLOW;
        int w = snprintf(info->detail, sizeof info->detail, "TensorFlow GraphDef (producer %d), %zu nodes",
                         C.g && C.g->versions ? C.g->versions->producer : 0, n_nodes);
        if (n_read < n_nodes && w > 0 && (size_t)w < sizeof info->detail)
            snprintf(info->detail + w, sizeof info->detail - (size_t)w, " (%zu read for the outputs)", n_read);
    }
    for (size_t i = 0; C.konst && i < C.g->n_node; i++)
        rd_tensor_fini(&C.konst[i]);
    free(C.konst), free(C.konst_of), free(C.konst_value), free(C.value), free(C.read), free(C.cut), free(C.dead);
    fe_map_fini(&C.index);
    fe_map_fini(&C.ports);
    fe_map_fini(&C.nchw);
    fe_names_fini(&C.names);
    rd_onnx_builder_destroy(C.b);
    rd_pb_msg_free(msg);
    return C.st;
}
