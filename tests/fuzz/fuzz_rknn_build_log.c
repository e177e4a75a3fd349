/*
 * fuzz_rknn_build_log.c: log text through rd_rknn_log_parse (prefixes, colour codes, wrapped fuse_ops
 * rewrites, name lists, option line, layer and ranking tables). Inputs are capped at 1 MiB.
 *
 * Oracles (trap on failure):
 *  - a refusal is RD_E_PARSE or RD_E_LIMIT (RD_E_NOMEM) with a message, and no log;
 *  - a log: every row and rewrite names a line inside the input; table row ranges lie inside the rows;
 *    per-table op totals add up to the table's rows; shape lists keep at most 8 shapes of rank <= 16.
 * Seeds: tests/fuzz/corpus/rknn_build_log/ (log snippets written for this project).
 */
#include "fuzz_input.h"
#include "rknn_diag/rknn_model.h"

#include <stdlib.h>
#include <string.h>

#define FUZZ_LOG_MAX_INPUT ((size_t)1 << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_shapes(const rd_rknn_shape_list *l)
{
    if (!l->text || l->n > 8)
        __builtin_trap();
    for (size_t i = 0; i < l->n; i++)
        if (l->rank[i] > RD_RKNN_MAX_RANK)
            __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *copy = fuzz_copy(data, size, FUZZ_LOG_MAX_INPUT);
    if (!copy)
        return 0;
    size_t lines = 1;
    for (size_t i = 0; i < size; i++)
        lines += copy[i] == '\n';
    rd_rknn_log *log = NULL;
    rd_error err;
    rd_status st = rd_rknn_log_parse(copy, size, "fuzz.log", &log, &err);
    free(copy);
    if (st != RD_OK) {
        if ((st != RD_E_PARSE && st != RD_E_LIMIT && st != RD_E_NOMEM) || log || err.code != st || !err.msg[0])
            __builtin_trap();
        return 0;
    }
    const rd_rknn_build_log *b = rd_rknn_log_get(log);
    for (size_t i = 0; i < b->n_rows; i++) {
        const rd_rknn_layer_row *r = &b->rows[i];
        if (r->line < 1 || (size_t)r->line > lines || r->table >= b->n_tables || !r->full_name || !r->op_type)
            __builtin_trap();
        check_shapes(&r->input_shape);
        check_shapes(&r->output_shape);
    }
    for (size_t t = 0; t < b->n_tables; t++) {
        const rd_rknn_layer_table *tab = &b->tables[t];
        size_t total = 0;
        for (size_t k = 0; k < tab->n_ops; k++)
            total += tab->ops[k].total;
        if (tab->first_row + tab->n_rows > b->n_rows || total != tab->n_rows)
            __builtin_trap();
    }
    for (size_t i = 0; i < b->n_fuses; i++) {
        const rd_rknn_fuse *f = &b->fuses[i];
        if (!f->rule || f->line < 1 || (size_t)f->line > lines)
            __builtin_trap();
        for (size_t k = 0; k < f->n_removed; k++)
            if (!f->removed[k])
                __builtin_trap();
    }
    rd_rknn_log_destroy(log);
    return 0;
}
