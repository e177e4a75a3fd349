/*
 * inspect_build_log.c: `rknn-diag inspect --build-log FILE [--json]`: what a verbose RKNN-Toolkit2 build
 * log or a board's layer table says (versions, options, fusion rewrites, hybrid tensors, per-op-type
 * counts of each layer table). JSON schema "rknn-diag/inspect-build-log/1" (docs/rknn-model.md).
 */
#include "inspect_rknn.h"
#include "json_out.h"

#include <stdlib.h>
#include <string.h>

static const char *kind_name(rd_rknn_table_kind k)
{
    return k == RD_RKNN_TABLE_BUILD ? "build" : k == RD_RKNN_TABLE_RUNTIME ? "runtime" : "unknown";
}

static void put_names(FILE *out, const char *const *names, size_t n, size_t max)
{
    fputc('[', out);
    for (size_t i = 0; i < n && i < max; i++) {
        fputs(i ? ", " : "", out);
        an_rk_put(out, names[i]);
    }
    if (n > max)
        fprintf(out, ", ...(%zu)", n);
    fputc(']', out);
}

typedef struct rule_count {
    const char *rule;
    size_t first, count;
} rule_count;

static int cmp_rule(const void *x, const void *y)
{
    const rule_count *a = x, *b = y;
    int c = strcmp(a->rule, b->rule);
    return c ? c : (a->first > b->first) - (a->first < b->first);
}

static int cmp_first(const void *x, const void *y)
{
    const rule_count *a = x, *b = y;
    return (a->first > b->first) - (a->first < b->first);
}

static void print_fuses(FILE *out, const rd_rknn_build_log *b, bool passes, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < b->n_fuses; i++)
        n += b->fuses[i].with_passes == passes;
    if (!n)
        return;
    fprintf(out, "\n%s: %zu rewrites\n", passes ? "fuse_ops with passes" : "fuse_ops", n);
    /* per rule, in order of first appearance: sort (rule, first index) pairs, count runs */
    rule_count *rc = malloc(n * sizeof *rc);
    size_t k = 0;
    for (size_t i = 0; rc && i < b->n_fuses; i++)
        if (b->fuses[i].with_passes == passes)
            rc[k++] = (rule_count){b->fuses[i].rule, i, 1};
    if (rc) {
        qsort(rc, k, sizeof *rc, cmp_rule);
        size_t runs = 0;
        for (size_t i = 0; i < k; i++) {
            if (runs && strcmp(rc[runs - 1].rule, rc[i].rule) == 0)
                rc[runs - 1].count++;
            else
                rc[runs++] = rc[i];
        }
        qsort(rc, runs, sizeof *rc, cmp_first);
        for (size_t i = 0; i < runs; i++) {
            fputs("  ", out);
            an_rk_put(out, rc[i].rule);
            fprintf(out, " x%zu\n", rc[i].count);
        }
        free(rc);
    }
    size_t shown = 0;
    for (size_t i = 0; i < b->n_fuses && shown < max; i++) {
        const rd_rknn_fuse *f = &b->fuses[i];
        if (f->with_passes != passes)
            continue;
        fprintf(out, "    line %d ", f->line);
        an_rk_put(out, f->rule);
        fputs(": ", out);
        put_names(out, f->removed, f->n_removed, 8);
        fputs(" -> ", out);
        put_names(out, f->added, f->n_added, 8);
        fputc('\n', out);
        shown++;
    }
    if (shown < n)
        fprintf(out, "    ... %zu more (--all or --max N)\n", n - shown);
}

static void print_table(FILE *out, const rd_rknn_build_log *b, size_t t, size_t max)
{
    const rd_rknn_layer_table *tab = &b->tables[t];
    fprintf(out, "\nlayer table %zu: %s, %zu rows", t + 1, kind_name(tab->kind), tab->n_rows);
    if (tab->header_line)
        fprintf(out, ", header at line %d", tab->header_line);
    else if (tab->n_rows)
        fprintf(out, " from line %d (no header)", b->rows[tab->first_row].line);
    fprintf(out, "%s\n", tab->elided ? " (elided in the log: rows are missing)" : "");
    an_rk_print_ops(out, tab->ops, tab->n_ops);
    size_t shown = tab->n_rows < max ? tab->n_rows : max;
    for (size_t i = 0; i < shown; i++) {
        const rd_rknn_layer_row *r = &b->rows[tab->first_row + i];
        fprintf(out, "    %-4ld ", r->id);
        an_rk_put(out, r->op_type);
        fputc(' ', out);
        an_rk_put(out, r->data_type);
        fputc(' ', out);
        an_rk_put(out, r->target);
        fputc(' ', out);
        an_rk_put(out, r->input_shape.text);
        fputs(" -> ", out);
        an_rk_put(out, r->output_shape.text);
        if (r->has_time)
            fprintf(out, " %gus", r->time_us);
        fputc(' ', out);
        an_rk_put(out, r->full_name[0] ? r->full_name : "-");
        fputc('\n', out);
    }
    if (shown < tab->n_rows)
        fprintf(out, "    ... %zu more rows (--all or --max N)\n", tab->n_rows - shown);
}

void an_rk_print_log(FILE *out, const rd_rknn_build_log *b, const an_rk_text_opts *o)
{
    fputs("log          ", out);
    an_rk_put(out, b->what);
    static const an_rk_field rows[] = {
        {"toolkit      ", offsetof(rd_rknn_build_log, toolkit_version)},
        {"librknnc     ", offsetof(rd_rknn_build_log, librknnc_version)},
        {"runtime      ", offsetof(rd_rknn_build_log, runtime_version)},
        {"target       ", offsetof(rd_rknn_build_log, target_platform)},
    };
    an_rk_put_fields(out, b, rows, sizeof rows / sizeof rows[0], "\n", "");
    fputc('\n', out);
    if (b->option_line) {
        fprintf(out, "options      (line %d) ", b->option_line);
        an_rk_put(out, b->option_text);
        fputc('\n', out);
    }
    if (b->n_fold_constant) {
        fprintf(out, "\nfold_constant removed %zu nodes: ", b->n_fold_constant);
        put_names(out, b->fold_constant, b->n_fold_constant, o->max_rows);
        fputc('\n', out);
    }
    print_fuses(out, b, false, o->max_rows);
    print_fuses(out, b, true, o->max_rows);
    for (size_t i = 0; i < b->n_quant_opts; i++) {
        fputs(i ? "" : "\nquant_optimizer:\n", out);
        fputs("  ", out);
        an_rk_put(out, b->quant_opts[i].rule);
        fprintf(out, " (%zu): ", b->quant_opts[i].n_names);
        put_names(out, b->quant_opts[i].names, b->quant_opts[i].n_names, o->max_rows);
        fputc('\n', out);
    }
    if (b->n_hybrid)
        fprintf(out, "\nhybrid (Meet hybrid type): %zu tensors\n", b->n_hybrid);
    for (size_t i = 0; i < b->n_hybrid && i < o->max_rows; i++) {
        fputs("  ", out);
        an_rk_put(out, b->hybrid[i].dtype);
        fputc(' ', out);
        an_rk_put(out, b->hybrid[i].tensor);
        fputc('\n', out);
    }
    for (size_t t = 0; t < b->n_tables; t++)
        print_table(out, b, t, o->max_rows);
    if (b->n_rank_rows)
        fprintf(out, "\nranking: %zu op types\n  %-18s %6s %10s %10s %10s %7s\n", b->n_rank_rows, "OpType", "calls",
                "CPU us", "NPU us", "total us", "ratio%");
    for (size_t i = 0; i < b->n_rank_rows; i++) {
        const rd_rknn_rank_row *r = &b->rank_rows[i];
        fputs("  ", out);
        an_rk_put_pad(out, r->op_type, 18);
        fprintf(out, " %6ld %10g %10g %10g %7g\n", r->calls, r->cpu_us, r->npu_us, r->total_us, r->ratio_pct);
    }
}

static cJSON *names_json(const char *const *names, size_t n, bool *ok)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++)
        an_json_push(a, cJSON_CreateString(names[i]), ok);
    return a;
}

static cJSON *shape_json(const rd_rknn_shape_list *l, bool *ok)
{
    cJSON *o = cJSON_CreateObject();
    an_json_add_str(o, "text", l->text, ok);
    cJSON *shapes = an_json_add_array(o, "shapes", ok);
    for (size_t i = 0; i < l->n; i++) {
        cJSON *d = cJSON_CreateArray();
        for (size_t k = 0; k < l->rank[i]; k++)
            an_json_push(d, cJSON_CreateNumber((double)l->dims[i][k]), ok);
        an_json_push(shapes, d, ok);
    }
    an_json_add_bool(o, "truncated", l->truncated, ok);
    return o;
}

static cJSON *table_json(const rd_rknn_build_log *b, const rd_rknn_layer_table *tab, bool *ok)
{
    cJSON *o = cJSON_CreateObject();
    an_json_add_num(o, "header_line", tab->header_line, ok);
    an_json_add_str(o, "kind", kind_name(tab->kind), ok);
    an_json_add_bool(o, "elided", tab->elided, ok);
    an_json_add(o, "op_summary", an_rk_ops_json(tab->ops, tab->n_ops, ok), ok);
    cJSON *rows = an_json_add_array(o, "rows", ok);
    for (size_t i = 0; i < tab->n_rows; i++) {
        const rd_rknn_layer_row *r = &b->rows[tab->first_row + i];
        cJSON *x = cJSON_CreateObject();
        an_json_add_num(x, "line", r->line, ok);
        an_json_add_num(x, "id", (double)r->id, ok);
        an_json_add_str(x, "op_type", r->op_type, ok);
        an_json_add_str(x, "data_type", r->data_type, ok);
        an_json_add_str(x, "target", r->target, ok);
        an_json_add(x, "input_shape", shape_json(&r->input_shape, ok), ok);
        an_json_add(x, "output_shape", shape_json(&r->output_shape, ok), ok);
        if (r->has_time)
            an_json_add_num(x, "time_us", r->time_us, ok);
        else
            an_json_add_null(x, "time_us", ok);
        an_json_add_str(x, "full_name", r->full_name, ok);
        an_json_push(rows, x, ok);
    }
    return o;
}

/* A ranking cell: null when the table has no such column. */
static cJSON *cell(double v)
{
    return v < 0 ? cJSON_CreateNull() : cJSON_CreateNumber(v);
}

cJSON *an_rk_log_json(const rd_rknn_build_log *b)
{
    bool ok = true;
    cJSON *root = cJSON_CreateObject();
    an_json_add_str(root, "schema", "rknn-diag/inspect-build-log/1", &ok);
    an_json_add_str(root, "log", b->what, &ok);
    an_json_add_str(root, "toolkit_version", b->toolkit_version, &ok);
    an_json_add_str(root, "librknnc_version", b->librknnc_version, &ok);
    an_json_add_str(root, "runtime_version", b->runtime_version, &ok);
    an_json_add_str(root, "target_platform", b->target_platform, &ok);
    an_json_add_num(root, "option_line", b->option_line, &ok);
    cJSON *opts = an_json_add_object(root, "options", &ok);
    for (size_t i = 0; i < b->n_options; i++)
        an_json_add_str(opts, b->options[i].key, b->options[i].value, &ok);
    an_json_add(root, "fold_constant", names_json(b->fold_constant, b->n_fold_constant, &ok), &ok);
    cJSON *fuses = an_json_add_array(root, "fuse_ops", &ok);
    for (size_t i = 0; i < b->n_fuses; i++) {
        const rd_rknn_fuse *f = &b->fuses[i];
        cJSON *o = cJSON_CreateObject();
        an_json_add_num(o, "line", f->line, &ok);
        an_json_add_str(o, "rule", f->rule, &ok);
        an_json_add_bool(o, "with_passes", f->with_passes, &ok);
        an_json_add(o, "removed", names_json(f->removed, f->n_removed, &ok), &ok);
        an_json_add(o, "added", names_json(f->added, f->n_added, &ok), &ok);
        an_json_push(fuses, o, &ok);
    }
    cJSON *qo = an_json_add_array(root, "quant_optimizer", &ok);
    for (size_t i = 0; i < b->n_quant_opts; i++) {
        cJSON *o = cJSON_CreateObject();
        an_json_add_num(o, "line", b->quant_opts[i].line, &ok);
        an_json_add_str(o, "rule", b->quant_opts[i].rule, &ok);
        an_json_add(o, "names", names_json(b->quant_opts[i].names, b->quant_opts[i].n_names, &ok), &ok);
        an_json_push(qo, o, &ok);
    }
    cJSON *hy = an_json_add_array(root, "hybrid", &ok);
    for (size_t i = 0; i < b->n_hybrid; i++) {
        cJSON *o = cJSON_CreateObject();
        an_json_add_num(o, "line", b->hybrid[i].line, &ok);
        an_json_add_str(o, "dtype", b->hybrid[i].dtype, &ok);
        an_json_add_str(o, "tensor", b->hybrid[i].tensor, &ok);
        an_json_push(hy, o, &ok);
    }
    cJSON *tables = an_json_add_array(root, "tables", &ok);
    for (size_t t = 0; t < b->n_tables; t++)
        an_json_push(tables, table_json(b, &b->tables[t], &ok), &ok);
    cJSON *rank = an_json_add_array(root, "ranking", &ok);
    for (size_t i = 0; i < b->n_rank_rows; i++) {
        const rd_rknn_rank_row *r = &b->rank_rows[i];
        cJSON *o = cJSON_CreateObject();
        an_json_add_num(o, "line", r->line, &ok);
        an_json_add_str(o, "op_type", r->op_type, &ok);
        an_json_add_num(o, "calls", (double)r->calls, &ok);
        an_json_add(o, "cpu_us", cell(r->cpu_us), &ok);
        an_json_add(o, "gpu_us", cell(r->gpu_us), &ok);
        an_json_add(o, "npu_us", cell(r->npu_us), &ok);
        an_json_add(o, "total_us", cell(r->total_us), &ok);
        an_json_add(o, "ratio_pct", cell(r->ratio_pct), &ok);
        an_json_push(rank, o, &ok);
    }
    if (!ok) {
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}
