/*
 * node_fb.c: the nodes of a graph (section 4.3 of ../shared/docs/rknn-model-format.md): op type (slot 1),
 * FullName (2), target byte (3), input and output tensor indices (4, 5), the parameter union (type in 7,
 * table in 8), the attribute blob (9) and the per-configuration task counts (10).
 *
 * Parameter tables are read by a table of the (union type, slot) pairs the format notes verified; a slot
 * not in it is decoded by its width and content and marked guessed, as the reference decoder does.
 */
#include "internal.h"

enum {
    N_TYPE = 1,
    N_NAME = 2,
    N_TARGET = 3,
    N_INPUTS = 4,
    N_OUTPUTS = 5,
    N_PARAM_TYPE = 7,
    N_PARAM = 8,
    N_ATTRS = 9,
    N_TASKS = 10
};

#define MAX_PARAM_SLOTS 256

typedef enum { PK_STR, PK_INTS, PK_INT } param_kind;

typedef struct param_field {
    unsigned slot;
    const char *name;
    param_kind kind;
} param_field;

typedef struct param_layout {
    uint8_t type;
    const char *type_name;
    param_field fields[6];
} param_layout;

/* [verified] on the real files (format notes 4.3); ConvTranspose's fields were never seen decoded */
static const param_layout PARAM_LAYOUTS[] = {
    {1,
     "Conv",
     {{0, "auto_pad", PK_STR},
      {1, "dilations", PK_INTS},
      {3, "kernel_shape", PK_INTS},
      {4, "pads", PK_INTS},
      {5, "strides", PK_INTS}}},
    {2, "ConvTranspose", {{0}}},
    {3,
     "MaxPool",
     {{0, "auto_pad", PK_STR}, {3, "kernel_shape", PK_INTS}, {4, "pads", PK_INTS}, {6, "strides", PK_INTS}}},
    {19, "Concat", {{0, "axis", PK_INT}}},
    {20, "Split", {{0, "axis", PK_INT}, {1, "split", PK_INTS}}},
    {26, "Resize", {{0, "coordinate_transformation_mode", PK_STR}, {4, "mode", PK_STR}, {5, "nearest_mode", PK_STR}}},
    {51, "ArgMax", {{0, "axis", PK_INT}}},
};

static const param_layout *layout_of(uint8_t type)
{
    for (size_t i = 0; i < sizeof PARAM_LAYOUTS / sizeof PARAM_LAYOUTS[0]; i++)
        if (PARAM_LAYOUTS[i].type == type)
            return &PARAM_LAYOUTS[i];
    return NULL;
}

static const param_field *field_of(const param_layout *l, unsigned slot)
{
    for (size_t i = 0; l && i < sizeof l->fields / sizeof l->fields[0] && l->fields[i].name; i++)
        if (l->fields[i].slot == slot)
            return &l->fields[i];
    return NULL;
}

static rd_status int_list(rd_rknn_model *m, const rd_fb_vec *v, rd_rknn_value *out, rd_error *err)
{
    rd_rknn_value *items = rk_alloc_array(&m->arena, v->n, sizeof *items, "parameter list", err);
    if (!items)
        return err->code;
    for (uint32_t i = 0; i < v->n; i++) {
        items[i].kind = RD_RKNN_V_INT;
        items[i].i = rd_fb_vec_i32(v, i);
        items[i].f = (double)items[i].i;
    }
    out->kind = RD_RKNN_V_LIST;
    out->items = items;
    out->n = v->n;
    return RD_OK;
}

static bool printable(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f)
            return false;
    return n > 0;
}

/* A field of unknown type: 1-2 bytes wide is a small integer; 4 or more: a string if it leads to printable
   text, an [int] if it leads to a short vector inside the buffer, else an int32. */
static rd_status guess_field(rd_rknn_model *m, const rd_fb_table *t, unsigned slot, rd_rknn_value *out, rd_error *err)
{
    size_t span = rd_fb_field_span(t, slot);
    size_t at = rd_fb_field_offset(t, slot) - t->fb->base;
    rd_error scratch;
    out->kind = RD_RKNN_V_INT;
    if (span == 1 || (span < 4 && at % 4 != 0)) {
        uint8_t v;
        rd_status st = rd_fb_u8(t, slot, 0, &v, err);
        out->i = v;
        out->f = v;
        return st;
    }
    if (span == 2 || span == 3) {
        uint16_t v;
        rd_status st = rd_fb_u16(t, slot, 0, &v, err);
        out->i = v;
        out->f = v;
        return st;
    }
    const char *s;
    size_t n;
    if (rd_fb_string(t, slot, &s, &n, &scratch) == RD_OK && s && printable(s, n)) {
        out->kind = RD_RKNN_V_STRING;
        out->s = s;
        out->len = n;
        return RD_OK;
    }
    rd_fb_vec v;
    if (rd_fb_vector(t, slot, 4, &v, &scratch) == RD_OK && v.n < 4096)
        return int_list(m, &v, out, err);
    int32_t i;
    rd_status st = rd_fb_i32(t, slot, 0, &i, err);
    out->i = i;
    out->f = i;
    return st;
}

static rd_status known_field(rd_rknn_model *m, const rd_fb_table *t, const param_field *f, rd_rknn_value *out,
                             rd_error *err)
{
    if (f->kind == PK_STR) {
        size_t n;
        rd_status st = rd_fb_string(t, f->slot, &out->s, &n, err);
        out->kind = RD_RKNN_V_STRING;
        out->len = n;
        return st;
    }
    if (f->kind == PK_INT) {
        int32_t i;
        rd_status st = rd_fb_i32(t, f->slot, 0, &i, err);
        out->kind = RD_RKNN_V_INT;
        out->i = i;
        out->f = i;
        return st;
    }
    rd_fb_vec v;
    rd_status st = rd_fb_vector(t, f->slot, 4, &v, err);
    if (st != RD_OK)
        return st;
    if (v.n > m->lim.max_vector)
        return rd_errorf(err, RD_E_LIMIT, "%u entries, more than the %zu allowed", v.n, m->lim.max_vector);
    return int_list(m, &v, out, err);
}

static rd_status read_params(rd_rknn_model *m, const rd_fb_table *t, rd_rknn_node *x, rd_error *err)
{
    rd_fb_table p;
    bool present;
    rd_status st = rd_fb_union(t, N_PARAM_TYPE, N_PARAM, &x->param_type, &p, &present, err);
    if (st != RD_OK || !present)
        return st;
    const param_layout *l = layout_of(x->param_type);
    x->param_type_name = l ? l->type_name : NULL;
    unsigned slots = rd_fb_slot_count(&p);
    if (slots > MAX_PARAM_SLOTS) /* real tables have at most 7; guessing each is linear in the slots */
        return rd_errorf(err, RD_E_LIMIT, "parameter table (type %u) with %u slots, more than the %d allowed",
                         x->param_type, slots, MAX_PARAM_SLOTS);
    size_t n = 0;
    for (unsigned s = 0; s < slots; s++)
        n += rd_fb_has(&p, s);
    rd_rknn_param *ps = rk_alloc_array(&m->arena, n, sizeof *ps, "parameters", err);
    if (!ps)
        return err->code;
    size_t k = 0;
    for (unsigned s = 0; s < slots && k < n; s++) {
        if (!rd_fb_has(&p, s))
            continue;
        const param_field *f = field_of(l, s);
        ps[k].slot = s;
        ps[k].name = f ? f->name : NULL;
        ps[k].guessed = !f;
        st = f ? known_field(m, &p, f, &ps[k].value, err) : guess_field(m, &p, s, &ps[k].value, err);
        if (st != RD_OK)
            return rd_error_prefix(err, "parameter table (type %u%s%s), slot %u%s%s", x->param_type, l ? " " : "",
                                   l ? l->type_name : "", s, f ? " " : "", f ? f->name : "");
        k++;
    }
    x->params = ps;
    x->n_params = k;
    return RD_OK;
}

static rd_status read_attrs(rd_rknn_model *m, const rd_fb_table *t, rd_rknn_node *x, rd_error *err)
{
    rd_fb_vec v;
    rd_status st = rd_fb_vector(t, N_ATTRS, 1, &v, err);
    if (st != RD_OK || v.n == 0)
        return st;
    if (v.n > m->lim.max_text_bytes)
        return rd_errorf(err, RD_E_LIMIT, "attribute blob of %u bytes, more than the %zu allowed", v.n,
                         m->lim.max_text_bytes);
    rd_rknn_value *a = rk_alloc(&m->arena, sizeof *a, "attributes", err);
    if (!a)
        return err->code;
    char why[200];
    size_t off = (size_t)(rd_fb_vec_data(&v) - m->file);
    st = rk_attr_blob_decode(&m->arena, rd_fb_vec_data(&v), v.n, off, m->lim.max_depth, a, &x->attrs_partial, why,
                             sizeof why, err);
    if (st != RD_OK)
        return st;
    if (x->attrs_partial)
        rk_warn(m, "node #%d '%s' (%s): attribute blob: %s", x->index, x->name, x->op_type, why);
    x->attrs = a;
    return RD_OK;
}

static rd_status read_node(rd_rknn_model *m, const rd_fb_table *t, const rd_rknn_graph *g, rd_rknn_node *x,
                           rd_error *err)
{
    size_t n;
    rd_status st = rd_fb_string(t, N_TYPE, &x->op_type, &n, err);
    if (st == RD_OK)
        st = rd_fb_string(t, N_NAME, &x->name, &n, err);
    if (st != RD_OK)
        return st;
    if (!x->op_type)
        x->op_type = "";
    if (!x->name)
        x->name = "";
    x->has_target_code = rd_fb_has(t, N_TARGET);
    if ((st = rd_fb_u8(t, N_TARGET, 0, &x->target_code, err)) != RD_OK)
        return st;
    x->target = !x->has_target_code   ? RD_RKNN_TARGET_CPU
                : x->target_code == 2 ? RD_RKNN_TARGET_NPU
                                      : RD_RKNN_TARGET_OTHER;
    if ((st = rk_index_list(m, t, N_INPUTS, m->lim.max_node_io, g->n_tensors, "inputs", &x->inputs, &x->n_inputs,
                            err)) != RD_OK ||
        (st = rk_index_list(m, t, N_OUTPUTS, m->lim.max_node_io, g->n_tensors, "outputs", &x->outputs, &x->n_outputs,
                            err)) != RD_OK)
        return st;
    if ((st = read_params(m, t, x, err)) != RD_OK || (st = read_attrs(m, t, x, err)) != RD_OK)
        return st;
    rd_fb_vec tasks;
    if ((st = rd_fb_vector(t, N_TASKS, 4, &tasks, err)) != RD_OK)
        return st;
    int32_t *tc = rk_alloc_array(&m->arena, tasks.n < 64 ? tasks.n : 64, sizeof *tc, "task counts", err);
    if (!tc)
        return err->code;
    x->n_task_counts = tasks.n < 64 ? tasks.n : 64;
    for (size_t i = 0; i < x->n_task_counts; i++)
        tc[i] = rd_fb_vec_i32(&tasks, (uint32_t)i);
    x->task_counts = tc;
    return RD_OK;
}

rd_status rk_read_nodes(rd_rknn_model *m, const rd_fb_table *graph, rd_rknn_graph *g, size_t gi, rd_error *err)
{
    rd_fb_vec nv;
    rd_status st = rd_fb_vector(graph, 1, RD_FB_REF, &nv, err);
    if (st != RD_OK)
        return rd_error_prefix(err, "graph %zu: nodes (slot 1)", gi);
    if (nv.n > m->lim.max_nodes)
        return rd_errorf(err, RD_E_LIMIT, "graph %zu: %u nodes, more than the %zu allowed", gi, nv.n, m->lim.max_nodes);
    rd_rknn_node *ns = rk_alloc_array(&m->arena, nv.n, sizeof *ns, "nodes", err);
    if (!ns)
        return err->code;
    g->nodes = ns;
    g->n_nodes = nv.n;
    for (uint32_t i = 0; i < nv.n; i++) {
        rd_fb_table t;
        ns[i].index = (int)i;
        ns[i].op_type = ns[i].name = "";
        if ((st = rd_fb_vec_table(&nv, i, &t, err)) != RD_OK || (st = read_node(m, &t, g, &ns[i], err)) != RD_OK)
            return rd_error_prefix(err, "graph %zu: node #%u '%.64s' (%.32s)", gi, i, ns[i].name, ns[i].op_type);
    }
    return RD_OK;
}
