/*
 * inspect_rknn_text.c: the text of `rknn-diag inspect MODEL.rknn`: header facts, inputs and outputs with
 * layouts, quantization and mean/std, per-op-type counts, then nodes and tensors (bounded by --max).
 */
#include "term_text.h"
#include "inspect_rknn.h"

#include <string.h>

/* Names in a .rknn file or a build log are shown, not sent: the project's one escaper (term_text.h). */
void an_rk_put(FILE *out, const char *s)
{
    an_put_name(out, s);
}

static void put_dims(FILE *out, const int64_t *d, size_t n)
{
    fputc('[', out);
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s%lld", i ? ", " : "", (long long)d[i]);
    fputc(']', out);
}

/* Up to 4 numbers of a float ('f'), double ('d') or int32 ('i') array, then the count when longer. */
static void put_nums(FILE *out, const void *v, size_t n, char kind)
{
    fputc('[', out);
    for (size_t i = 0; i < n && i < 4; i++) {
        double x = kind == 'f'   ? (double)((const float *)v)[i]
                   : kind == 'd' ? ((const double *)v)[i]
                                 : (double)((const int32_t *)v)[i];
        fprintf(out, "%s%g", i ? ", " : "", x);
    }
    if (n > 4)
        fprintf(out, ", ...(%zu)", n);
    fputc(']', out);
}

/* "  layer int8": the quantization method and type, "-" for an empty one. */
static void put_method(FILE *out, const char *qmethod, const char *qtype)
{
    fputs("  ", out);
    an_rk_put(out, qmethod[0] ? qmethod : "-");
    fputc(' ', out);
    an_rk_put(out, qtype[0] ? qtype : "-");
}

/* " range MIN..MAX", each a list of put_nums. */
static void put_range(FILE *out, const void *min, size_t n_min, const void *max, size_t n_max, char kind)
{
    fputs(" range ", out);
    put_nums(out, min, n_min, kind);
    fputs("..", out);
    put_nums(out, max, n_max, kind);
}

static void put_quant(FILE *out, const rd_rknn_tensor *t)
{
    if (!t->n_scale && !t->n_zero_point && !t->n_min)
        return;
    put_method(out, t->qmethod, t->qtype);
    fputs(" scale ", out);
    put_nums(out, t->scale, t->n_scale, 'f');
    fputs(" zp ", out);
    put_nums(out, t->zero_point, t->n_zero_point, 'i');
    put_range(out, t->min, t->n_min, t->max, t->n_max, 'f');
}

static const rd_rknn_runtime_io *runtime_io(const rd_rknn_info *in, const char *name, bool is_output)
{
    for (size_t i = 0; i < in->n_runtime_io; i++)
        if (in->runtime_io[i].is_output == is_output && strcmp(in->runtime_io[i].name, name) == 0)
            return &in->runtime_io[i];
    return NULL;
}

static const rd_rknn_io_attr *io_attr(const rd_rknn_info *in, const char *name)
{
    for (size_t i = 0; i < in->n_io_attrs; i++)
        if (strcmp(in->io_attrs[i].name, name) == 0)
            return &in->io_attrs[i];
    return NULL;
}

static void print_io(FILE *out, const rd_rknn_info *in, const rd_rknn_graph *g, bool outputs)
{
    size_t n = outputs ? g->n_outputs : g->n_inputs;
    fprintf(out, "%s:\n", outputs ? "outputs" : "inputs");
    for (size_t i = 0; i < n; i++) {
        const rd_rknn_tensor *t = &g->tensors[outputs ? g->outputs[i] : g->inputs[i]];
        char buf[32];
        fputs("  ", out);
        an_rk_put(out, t->name);
        fprintf(out, "  %s ", rd_rknn_dtype_name(t->dtype, buf, sizeof buf));
        put_dims(out, t->shape, t->rank);
        fprintf(out, " (%s ", rd_rknn_layout_name(t->layout, buf, sizeof buf));
        put_dims(out, t->native_shape, t->native_rank);
        fputc(')', out);
        const rd_rknn_runtime_io *rio = runtime_io(in, t->name, outputs);
        if (rio) {
            fputs("  runtime ", out);
            an_rk_put(out, rio->dtype);
            fputc(' ', out);
            an_rk_put(out, rio->layout);
        }
        put_quant(out, t);
        const rd_rknn_io_attr *a = io_attr(in, t->name);
        if (a && (a->n_mean || a->n_std)) {
            fputs("  mean ", out);
            put_nums(out, a->mean, a->n_mean, 'd');
            fputs(" std ", out);
            put_nums(out, a->std, a->n_std, 'd');
        }
        if (a && a->reorder && a->reorder->kind == RD_RKNN_V_STRING) {
            fputs(" reorder ", out);
            an_rk_put(out, a->reorder->s);
        }
        fputc('\n', out);
    }
}

void an_rk_put_pad(FILE *out, const char *s, int width)
{
    an_rk_put(out, s);
    int pad = width - (int)strlen(s);
    fprintf(out, "%*s", pad > 0 ? pad : 0, "");
}

void an_rk_print_ops(FILE *out, const rd_rknn_op_count *ops, size_t n_ops)
{
    fprintf(out, "  %-22s %6s %5s %5s %8s %5s\n", "OpType", "count", "NPU", "CPU", "float16", "int8");
    for (size_t i = 0; i < n_ops; i++) {
        fputs("  ", out);
        an_rk_put_pad(out, ops[i].op_type, 22);
        fprintf(out, " %6zu %5zu %5zu %8zu %5zu\n", ops[i].total, ops[i].on_npu, ops[i].on_cpu, ops[i].float16,
                ops[i].int8);
    }
}

static void put_tensor_list(FILE *out, const rd_rknn_graph *g, const int32_t *idx, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ", " : "", out);
        an_rk_put(out, rd_rknn_tensor_name(g, idx[i]));
    }
}

static void print_nodes(FILE *out, const rd_rknn_graph *g, size_t max)
{
    size_t shown = g->n_nodes < max ? g->n_nodes : max;
    fprintf(out, "\nnodes: %zu", g->n_nodes);
    if (shown < g->n_nodes)
        fprintf(out, " (the first %zu; --all or --max N for more)", shown);
    fprintf(out, "\n  %-4s %-18s %-6s %-8s %s\n", "#", "OpType", "target", "dtype", "FullName | inputs -> outputs");
    for (size_t i = 0; i < shown; i++) {
        const rd_rknn_node *n = &g->nodes[i];
        char buf[32];
        fprintf(out, "  %-4zu ", i);
        an_rk_put_pad(out, n->op_type, 18);
        fprintf(out, " %-6s %-8s ", rd_rknn_target_name(n->target),
                rd_rknn_dtype_name(rd_rknn_node_dtype(g, n), buf, sizeof buf));
        an_rk_put(out, n->name[0] ? n->name : "-");
        fputs(" | ", out);
        put_tensor_list(out, g, n->inputs, n->n_inputs);
        fputs(" -> ", out);
        put_tensor_list(out, g, n->outputs, n->n_outputs);
        fputc('\n', out);
    }
}

static void print_tensors(FILE *out, const rd_rknn_graph *g, size_t max)
{
    size_t shown = g->n_tensors < max ? g->n_tensors : max;
    fprintf(out, "\ntensors: %zu", g->n_tensors);
    if (shown < g->n_tensors)
        fprintf(out, " (the first %zu; --all or --max N for more)", shown);
    fprintf(out, "\n  %-4s %s\n", "#", "name  dtype role layout shape (native)  quantization  size@offset blob");
    for (size_t i = 0; i < shown; i++) {
        const rd_rknn_tensor *t = &g->tensors[i];
        char b1[32], b2[32], b3[32];
        fprintf(out, "  %-4zu ", i);
        an_rk_put(out, t->name[0] ? t->name : "-");
        fprintf(out, "  %s %s %s ", rd_rknn_dtype_name(t->dtype, b1, sizeof b1),
                rd_rknn_role_name(t->role, b2, sizeof b2), rd_rknn_layout_name(t->layout, b3, sizeof b3));
        put_dims(out, t->shape, t->rank);
        fputs(" (", out);
        put_dims(out, t->native_shape, t->native_rank);
        fputc(')', out);
        put_quant(out, t);
        fprintf(out, "  %llu@%llu", (unsigned long long)t->size, (unsigned long long)t->mem_offset);
        if (t->blob >= 0)
            fprintf(out, " blob %d", t->blob);
        fputc('\n', out);
    }
}

void an_rk_put_fields(FILE *out, const void *base, const an_rk_field *fields, size_t n, const char *before,
                      const char *after)
{
    for (size_t i = 0; i < n; i++) {
        const char *v = *(const char *const *)((const char *)base + fields[i].off);
        fputs(before, out);
        fputs(fields[i].label, out);
        an_rk_put(out, v && v[0] ? v : "-");
        fputs(after, out);
    }
}

void an_rk_print_model(FILE *out, const rd_rknn_model *m, const an_rk_text_opts *o)
{
    const rd_rknn_info *in = rd_rknn_info_get(m);
    fputs("model        ", out);
    an_rk_put(out, in->path);
    fprintf(out, " (%llu bytes)\n", (unsigned long long)in->file_bytes);
    fprintf(out, "container    RKNN format version %llu, %llu-byte header, model data %llu bytes, JSON %llu bytes\n",
            (unsigned long long)in->format_version, (unsigned long long)in->header_bytes,
            (unsigned long long)in->model_bytes, (unsigned long long)in->json_bytes);
    static const an_rk_field rows[] = {
        {"format       ", offsetof(rd_rknn_info, format)},
        {"target       ", offsetof(rd_rknn_info, target_platform)},
        {"toolkit      ", offsetof(rd_rknn_info, toolkit_version)},
        {"source       ", offsetof(rd_rknn_info, source_framework)},
        {"shape mode   ", offsetof(rd_rknn_info, shape_mode)},
    };
    an_rk_put_fields(out, in, rows, sizeof rows / sizeof rows[0], "", "\n");
    fputs("compiler     ", out);
    an_rk_put(out, in->compiler_version[0] ? in->compiler_version : "-");
    fprintf(out, " (number %d): ", in->compiler_version_number);
    an_rk_put(out, in->compiler);
    fputc('\n', out);
    if (in->generator) {
        fputs("generator    ", out);
        an_rk_put(out, in->generator);
        fputc('\n', out);
    }
    for (size_t gi = 0; gi < rd_rknn_graph_count(m); gi++) {
        const rd_rknn_graph *g = rd_rknn_graph_at(m, gi);
        if (rd_rknn_graph_count(m) > 1)
            fprintf(out, "\ngraph %zu of %zu\n", gi, rd_rknn_graph_count(m));
        fputc('\n', out);
        print_io(out, in, g, false);
        print_io(out, in, g, true);
        fprintf(out, "\nop types (%zu nodes):\n", g->n_nodes);
        an_rk_print_ops(out, g->ops, g->n_ops);
        print_nodes(out, g, o->max_rows);
        print_tensors(out, g, o->max_rows);
    }
    if (in->n_quant_tab) {
        fprintf(out, "\nquant_tab: %zu entries\n", in->n_quant_tab);
        for (size_t i = 0; i < in->n_quant_tab; i++) {
            const rd_rknn_quant_entry *q = &in->quant_tab[i];
            fputs("  ", out);
            an_rk_put(out, q->name);
            fputs("  ", out);
            an_rk_put(out, q->dtype);
            put_method(out, q->qmethod, q->qtype);
            put_range(out, q->min, q->n_min, q->max, q->n_max, 'd');
            fputc('\n', out);
        }
    }
}
