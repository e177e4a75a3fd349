/*
 * built_log.c: a verbose build log's (or a board's layer table's) decisions on our graph (built.h).
 *
 * A layer-table row names the ONNX node heading its op (FullName "Conv:Conv_0": a fused conv keeps the
 * conv's name) and its RKNN op type (ConvAdd, ConvExSwish, ...). The group is read forward from that node:
 * each part of the op type after the head (Add, Relu, Clip, LeakyRelu, Sigmoid, ExSwish = Sigmoid + Mul,
 * ...) is the one unit reading the tensor so far; every tensor before the last is inside. A node a
 * fuse_ops rule added stands for the nodes it removed (replace_exswish, replace_torch_layernorm, ...).
 * DataType gives the precision; exDataConvert rows and `Meet hybrid type` lines the float16 islands. The
 * log has no scales: calibration supplies them.
 */
#include "built_internal.h"

#include <stdlib.h>
#include <string.h>

/* The layer table used: the first build-time one, else the first runtime one, else any. */
static const rd_rknn_layer_table *pick_table(const an_built *b)
{
    const rd_rknn_build_log *l = b->bl;
    /* the build-time table first, then the board's (same groups and precisions), then rows without a header */
    static const rd_rknn_table_kind order[] = {RD_RKNN_TABLE_BUILD, RD_RKNN_TABLE_RUNTIME, RD_RKNN_TABLE_UNKNOWN};
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++)
        for (size_t i = 0; i < l->n_tables; i++)
            if (l->tables[i].kind == order[k])
                return &l->tables[i];
    return NULL;
}

static bool compiler_op(const char *op)
{
    return strcmp(op, "InputOperator") == 0 || strcmp(op, "OutputOperator") == 0 || strcmp(op, "exDataConvert") == 0;
}

static int find_node(const rd_model *m, const char *name, size_t len)
{
    for (size_t i = 0; i < rd_model_node_count(m); i++) {
        rd_node_info ni;
        rd_model_node(m, i, &ni);
        if (strlen(ni.name) == len && memcmp(ni.name, name, len) == 0)
            return (int)i;
    }
    return -1;
}

/* The ONNX node a FullName's name part stands for: the node itself, the producer of the tensor of that
   name, the same after compiler suffixes are stripped, or the last node a fuse_ops rule removed when it
   added this one. *first receives the first removed node of such a rule (the group's start), else the node. */
static int resolve_node(const an_built *b, const rd_model *m, const char *full, int *first)
{
    const char *name = strchr(full, ':');
    name = name ? name + 1 : full;
    *first = -1;
    int n = find_node(m, name, strlen(name));
    if (n < 0) {
        char base[512];
        bt_kind k = an_bt_classify(m, name, RD_RKNN_ROLE_INTERNAL, base, sizeof base);
        if (k == BT_ONNX || k == BT_VARIANT) {
            rd_value_info vi;
            rd_model_value(m, (size_t)rd_model_find_value(m, base), &vi);
            n = vi.producer;
        }
    }
    for (size_t f = 0; n < 0 && f < b->bl->n_fuses; f++) {
        const rd_rknn_fuse *fu = &b->bl->fuses[f];
        bool added = false;
        for (size_t a = 0; a < fu->n_added && !added; a++)
            added = strcmp(fu->added[a], name) == 0;
        for (size_t r = 0; added && r < fu->n_removed; r++) {
            int k = find_node(m, fu->removed[r], strlen(fu->removed[r]));
            if (k >= 0 && (*first < 0 || k < *first))
                *first = k;
            if (k > n)
                n = k;
        }
    }
    if (n < 0) { /* "Sigmoid_2_2swish" when the log has no fuse_ops lines: strip the suffix */
        size_t len = strlen(name);
        const char *cut = strstr(name, "_2");
        while (cut && n < 0) {
            n = find_node(m, name, (size_t)(cut - name));
            cut = strstr(cut + 2, "_2");
        }
        (void)len;
    }
    if (*first < 0)
        *first = n;
    return n;
}

/* The unit after tensor t for one part of an op type: its last tensor, adding the tensors it fuses to inner. */
static int follow_part(const rd_model *m, int t, const char *part, int *inner, size_t *n_inner, size_t cap)
{
    int readers[4], n_readers = 0;
    for (size_t i = 0; i < rd_model_node_count(m) && n_readers < 4; i++) {
        rd_node_info ni;
        rd_model_node(m, i, &ni);
        for (int k = 0; k < ni.n_inputs; k++)
            if (ni.inputs[k] == t) {
                readers[n_readers++] = (int)i;
                break;
            }
    }
    rd_node_info a, b;
    if (strcmp(part, "ExSwish") == 0 || strcmp(part, "Swish") == 0) { /* Sigmoid(t) and Mul(t, sigmoid) */
        if (n_readers != 2 || *n_inner + 2 > cap)
            return -1;
        rd_model_node(m, (size_t)readers[0], &a);
        rd_model_node(m, (size_t)readers[1], &b);
        if (strcmp(a.op_type, "Mul") == 0) {
            rd_node_info tmp = a;
            a = b;
            b = tmp;
        }
        if (strcmp(a.op_type, "Sigmoid") != 0 || strcmp(b.op_type, "Mul") != 0 || b.n_inputs != 2 ||
            (b.inputs[0] != a.outputs[0] && b.inputs[1] != a.outputs[0]))
            return -1;
        inner[(*n_inner)++] = t;
        inner[(*n_inner)++] = a.outputs[0];
        return b.outputs[0];
    }
    if (n_readers != 1 || *n_inner + 1 > cap)
        return -1;
    rd_model_node(m, (size_t)readers[0], &a);
    const char *want = strcmp(part, "ExGelu") == 0 ? "Gelu" : part;
    if (strcmp(a.op_type, want) != 0 && !(strcmp(part, "Add") == 0 && strcmp(a.op_type, "Sum") == 0))
        return -1;
    inner[(*n_inner)++] = t;
    return a.outputs[0];
}

/* Parts of fused op types, longest first where one starts another. */
static const char *const parts[] = {"ConvTranspose", "Conv",   "ExSwish", "LeakyRelu", "HardSwish",
                                    "HardSigmoid",   "ExGelu", "Gelu",    "Sigmoid",   "Relu",
                                    "Clip",          "Add",    "Swish"};

static const char *next_part(const char *op)
{
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if (strncmp(op, parts[i], strlen(parts[i])) == 0)
            return parts[i];
    return NULL;
}

/* A row's group: from its head node through the parts of its op type. */
static rd_status row_group(an_built *b, const rd_model *m, const rd_rknn_layer_row *row, int head, int first,
                           bt_group *g, rd_error *err)
{
    rd_node_info hn;
    rd_model_node(m, (size_t)head, &hn);
    g->out = hn.n_outputs > 0 ? hn.outputs[0] : -1;
    size_t cap = 64;
    g->inner = malloc(cap * sizeof *g->inner);
    if (!g->inner)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    /* a rule's replacement: every node it removed is inside, the last one's output materialised */
    for (int i = first; i >= 0 && i < head && g->n_inner < cap; i++) {
        rd_node_info ni;
        rd_model_node(m, (size_t)i, &ni);
        if (ni.n_outputs > 0 && ni.outputs[0] >= 0)
            g->inner[g->n_inner++] = ni.outputs[0];
    }
    if (first != head)
        return RD_OK;
    const char *op = row->op_type;
    const char *p = next_part(op);
    if (!p || strncmp(hn.op_type, p, strlen(p)) != 0)
        return RD_OK; /* an op of its own (Concat, exSoftmax13, Resize, ...) */
    for (op += strlen(p); *op && g->out >= 0;) {
        p = next_part(op);
        if (!p) {
            snprintf(g->note, sizeof g->note, "not reproduced: '%s' in %s is no part this reader knows", op,
                     row->op_type);
            g->out = -1;
            break;
        }
        int next = follow_part(m, g->out, p, g->inner, &g->n_inner, cap);
        if (next < 0) {
            rd_value_info vi;
            rd_model_value(m, (size_t)g->out, &vi);
            snprintf(g->note, sizeof g->note, "not reproduced: no single %s reads '%s' in the ONNX graph", p, vi.name);
            g->out = -1;
            break;
        }
        g->out = next;
        op += strlen(p);
    }
    (void)b;
    return RD_OK;
}

/* The row's output shape against the ONNX tensor its group materialises. */
static rd_status check_shape(const an_built *b, const rd_model *m, const rd_rknn_layer_row *row, int out, rd_error *err)
{
    if (out < 0 || row->output_shape.n < 1 || row->output_shape.truncated)
        return RD_OK;
    rd_value_info vi;
    rd_model_value(m, (size_t)out, &vi);
    if (vi.rank < 0)
        return RD_OK;
    int64_t a[RD_RKNN_MAX_RANK], c[RD_MAX_RANK];
    int na = 0, nc = 0;
    for (size_t d = 0; d < row->output_shape.rank[0]; d++)
        if (row->output_shape.dims[0][d] != 1)
            a[na++] = row->output_shape.dims[0][d];
    for (int d = 0; d < vi.rank; d++) {
        if (vi.dims[d] < 0)
            return RD_OK;
        if (vi.dims[d] != 1)
            c[nc++] = vi.dims[d];
    }
    bool same = na == nc;
    for (int d = 0; same && d < na; d++)
        same = a[d] == c[d];
    if (same)
        return RD_OK;
    return rd_errorf(err, RD_E_PARSE,
                     "%s line %d: %s '%s' outputs %s, but '%s' of %s has another shape: a log of "
                     "another model (or of other input shapes)?",
                     b->log_path, row->line, row->op_type, row->full_name, row->output_shape.text, vi.name,
                     b->model_path);
}

/* Toolkit versions printed as "1.6.2", "1.6.2+81f21f4d", "1.6.2-source_code": the leading release. */
static size_t release_len(const char *v)
{
    size_t n = 0;
    while (v[n] && (v[n] == '.' || (v[n] >= '0' && v[n] <= '9') || v[n] == 'b'))
        n++;
    return n;
}

static bool same_release(const char *a, const char *c)
{
    size_t na = release_len(a), nc = release_len(c);
    return !na || !nc || (na == nc && memcmp(a, c, na) == 0);
}

rd_status an_bt_log_check(an_built *b, const rd_model *m, rd_error *err)
{
    const rd_rknn_build_log *l = b->bl;
    if (b->rknn) {
        const char *lt = l->toolkit_version ? l->toolkit_version : "";
        const char *lc = l->librknnc_version ? l->librknnc_version : "";
        if (!same_release(lt, b->toolkit) || !same_release(lc, b->compiler))
            return rd_errorf(err, RD_E_PARSE,
                             "%s is a log of toolkit %s (librknnc %s), %s was built by toolkit %s "
                             "(compiler %s): not the log of this build",
                             b->log_path, lt[0] ? lt : "?", lc[0] ? lc : "?", b->rknn_path, b->toolkit, b->compiler);
    }
    const rd_rknn_layer_table *t = pick_table(b);
    if (!t && !l->n_hybrid)
        return rd_errorf(err, RD_E_PARSE,
                         "%s has no layer table and no 'Meet hybrid type' line: nothing says how "
                         "the model was built (log a verbose build: RKNN(verbose=True), or the board's "
                         "RKNN_LOG_LEVEL=4 / eval_perf output)",
                         b->log_path);
    size_t unknown = 0;
    char first[3][400];
    for (size_t r = 0; t && r < t->n_rows; r++) {
        const rd_rknn_layer_row *row = &l->rows[t->first_row + r];
        if (compiler_op(row->op_type) || !row->full_name[0])
            continue;
        int f;
        if (resolve_node(b, m, row->full_name, &f) >= 0)
            continue;
        if (unknown < 3)
            snprintf(first[unknown], sizeof first[0], "line %d: %s '%s'", row->line, row->op_type, row->full_name);
        unknown++;
    }
    if (unknown)
        return rd_errorf(err, RD_E_PARSE,
                         "%s: %zu layer-table row%s name%s no node of %s (%s%s%s%s%s): a log of "
                         "another model?",
                         b->log_path, unknown, unknown == 1 ? "" : "s", unknown == 1 ? "s" : "", b->model_path,
                         first[0], unknown > 1 ? "; " : "", unknown > 1 ? first[1] : "", unknown > 2 ? "; " : "",
                         unknown > 2 ? first[2] : "");
    return RD_OK;
}

/* The ONNX tensor an exDataConvert row or a hybrid line names ("X__cvt_int8_float16" -> X); -1 if none.
 *exact (may be NULL): the name is the ONNX tensor's own, not a converted variant of it. */
static int tensor_of(const rd_model *m, const char *name, bool *exact)
{
    const char *p = strchr(name, ':');
    char base[512];
    bt_kind k = an_bt_classify(m, p ? p + 1 : name, RD_RKNN_ROLE_INTERNAL, base, sizeof base);
    if (exact)
        *exact = k == BT_ONNX;
    return k == BT_ONNX || k == BT_VARIANT ? rd_model_find_value(m, base) : -1;
}

static rd_status add_convert_row(an_built *b, const rd_model *m, const rd_rknn_layer_row *row, size_t idx,
                                 rd_error *err)
{
    int v = tensor_of(m, row->full_name, NULL);
    if (v < 0)
        return RD_OK;
    bt_convert *c = an_bt_add_convert(b, m, v, row->full_name, err);
    if (!c)
        return RD_E_NOMEM;
    c->src = (int)idx;
    c->line = row->line;
    bool to_f16 = strstr(row->full_name, "_float16") != NULL && strstr(row->full_name, "float16_int8") == NULL;
    c->from = to_f16 ? RD_PREC_INT8 : RD_PREC_FP16;
    c->to = to_f16 ? RD_PREC_FP16 : RD_PREC_INT8;
    return RD_OK;
}

static bool converted_to_int8(const an_built *b, const char *name)
{
    for (size_t i = 0; i < b->n_converts; i++)
        if (strcmp(b->converts[i].value, name) == 0 && b->converts[i].from == RD_PREC_FP16)
            return true;
    return false;
}

rd_status an_bt_log_map(an_built *b, rd_sim *s, rd_error *err)
{
    const rd_model *m = rd_sim_model(s);
    const rd_rknn_build_log *l = b->bl;
    const rd_rknn_layer_table *t = pick_table(b);
    b->table = t ? (size_t)(t - l->tables) : 0;
    rd_status st = RD_OK;
    for (size_t r = 0; t && r < t->n_rows && st == RD_OK; r++) /* conversions first: the rows use them */
        if (strcmp(l->rows[t->first_row + r].op_type, "exDataConvert") == 0)
            st = add_convert_row(b, m, &l->rows[t->first_row + r], t->first_row + r, err);
    for (size_t r = 0; t && r < t->n_rows && st == RD_OK; r++) {
        const rd_rknn_layer_row *row = &l->rows[t->first_row + r];
        if (compiler_op(row->op_type)) {
            b->n_io_ops += strcmp(row->op_type, "exDataConvert") != 0;
            continue;
        }
        bt_group g = {.src = (int)(t->first_row + r),
                      .line = row->line,
                      .op = row->op_type,
                      .name = row->full_name,
                      .target = row->target,
                      .out = -1};
        int first;
        int head = row->full_name[0] ? resolve_node(b, m, row->full_name, &first) : -1;
        if (head < 0)
            snprintf(g.note, sizeof g.note, "names no node of the model: nothing to simulate");
        else
            st = row_group(b, m, row, head, first, &g, err);
        if (st == RD_OK)
            st = check_shape(b, m, row, g.out, err);
        bt_group *grown = st == RD_OK ? realloc(b->groups, (b->n_groups + 1) * sizeof *grown) : NULL;
        if (!grown) {
            free(g.inner);
            return st != RD_OK ? st : rd_errorf(err, RD_E_NOMEM, "out of memory");
        }
        b->groups = grown;
        b->groups[b->n_groups++] = g;
        if (g.out < 0)
            continue;
        bool known;
        rd_prec p = an_bt_prec_of_text(row->data_type, &known);
        if (!known)
            continue;
        rd_value_info vi;
        rd_model_value(m, (size_t)g.out, &vi);
        bt_decision *d = an_bt_decision(b, vi.name, err);
        if (!d)
            return RD_E_NOMEM;
        d->prec = p;
        if (p == RD_PREC_FP16 && converted_to_int8(b, vi.name)) {
            d->prec = RD_PREC_INT8;
            d->via_f16 = true;
        }
        snprintf(d->why, sizeof d->why, "log line %d: %s %s", row->line, row->op_type, row->data_type);
    }
    for (size_t i = 0; i < l->n_hybrid && st == RD_OK; i++) {
        bool exact;
        int v = tensor_of(m, l->hybrid[i].tensor, &exact);
        if (v < 0 || !exact || strcmp(l->hybrid[i].dtype, "float16") != 0)
            continue; /* X__float16: int8 X converted for a float16 reader, which the readers do */
        rd_value_info vi;
        rd_model_value(m, (size_t)v, &vi);
        bt_decision *d = an_bt_decision(b, vi.name, err);
        if (!d)
            return RD_E_NOMEM;
        if (!(d->prec == RD_PREC_INT8 && d->via_f16)) /* an exSoftmax13's float16 output converted back stays so */
            d->prec = converted_to_int8(b, vi.name) ? RD_PREC_INT8 : RD_PREC_FP16;
        d->via_f16 = d->prec == RD_PREC_INT8;
        snprintf(d->why, sizeof d->why, "log line %d: Meet hybrid type, dtype float16", l->hybrid[i].line);
    }
    return st;
}
