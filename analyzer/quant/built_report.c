/*
 * built_report.c: what applying a built model did, for people: the mapping report (rknn_mapping.txt, in
 * the manner of the board dumps' runtime/mapping.txt: one line per node or row, "-> none: why" for the
 * ones that map to nothing), the one-line summary and the fidelity notes of report.json / report.html.
 */
#include "built_internal.h"
#include "rknn_diag/reports.h"

#include <stdlib.h>
#include <string.h>

static const char *source_name(const an_built *b)
{
    return b->rknn ? "the .rknn" : "the build log";
}

static size_t groups_applied(const an_built *b, size_t *fused, size_t *not_applied)
{
    size_t n = 0;
    *fused = *not_applied = 0;
    for (size_t i = 0; i < b->n_groups; i++) {
        if (b->groups[i].out < 0 || !b->groups[i].applied) {
            *not_applied += b->groups[i].note[0] != '\0' && strncmp(b->groups[i].note, "writes no", 9) != 0;
            continue;
        }
        n++;
        *fused += b->groups[i].n_inner > 0;
    }
    return n;
}

static size_t decisions_with_params(const an_built *b)
{
    size_t n = 0;
    for (size_t i = 0; i < b->n_decisions; i++)
        n += b->decisions[i].has_q8 || b->decisions[i].has_q16;
    return n;
}

void an_built_summary(const an_built *b, FILE *f)
{
    size_t fused, bad;
    size_t ok = groups_applied(b, &fused, &bad);
    fprintf(f,
            "built model: %s (%s%s%s): %zu ops reproduced (%zu fused), %zu not; %zu tensors with its scales, "
            "%zu calibrated\n",
            an_built_path(b), b->target[0] ? b->target : "platform not given", b->toolkit[0] ? ", toolkit " : "",
            b->toolkit, ok, fused, bad, decisions_with_params(b), b->n_calibrated);
    for (size_t i = 0; i < b->n_notes && i < 8; i++)
        fprintf(f, "note: %s\n", b->notes[i]);
    if (b->n_notes > 8)
        fprintf(f, "note: ... and %zu more (rknn_mapping.txt)\n", b->n_notes - 8);
}

/* "6, 7" for a value list, shortened. */
static void names_of(FILE *f, const rd_model *m, const int *v, size_t n)
{
    for (size_t i = 0; i < n && i < 16; i++) {
        rd_value_info vi;
        rd_model_value(m, (size_t)v[i], &vi);
        fprintf(f, "%s%s", i ? ", " : "", vi.name);
    }
    if (n > 16)
        fprintf(f, ", ... (%zu)", n);
}

static const bt_decision *decision_of(const an_built *b, const char *name)
{
    for (size_t i = 0; i < b->n_decisions; i++)
        if (strcmp(b->decisions[i].name, name) == 0)
            return &b->decisions[i];
    return NULL;
}

static void decision_text(FILE *f, const bt_decision *d)
{
    if (!d)
        return;
    fprintf(f, " [%s%s", d->via_f16 ? "computed in float16, held " : "", rd_prec_name(d->prec));
    if (d->has_q8 || d->has_q16)
        fprintf(f, " scale %.9g zp %d", (double)d->scale, (int)d->zp);
    fprintf(f, "]");
}

static void write_groups(const an_built *b, const rd_model *m, FILE *f)
{
    for (size_t i = 0; i < b->n_groups; i++) {
        const bt_group *g = &b->groups[i];
        if (b->rknn)
            fprintf(f, "#%d %s '%s' (%s)", g->src, g->op, g->name ? g->name : "", g->target ? g->target : "");
        else
            fprintf(f, "line %d %s '%s' (%s)", g->line, g->op, g->name ? g->name : "", g->target ? g->target : "");
        if (g->out < 0) {
            fprintf(f, " -> none: %s\n", g->note[0] ? g->note : "no ONNX tensor");
            continue;
        }
        rd_value_info vi;
        rd_model_value(m, (size_t)g->out, &vi);
        fprintf(f, " -> %s", vi.name);
        decision_text(f, decision_of(b, vi.name));
        if (g->n_inner) {
            fprintf(f, ", fused inside: ");
            names_of(f, m, g->inner, g->n_inner);
        }
        if (g->note[0])
            fprintf(f, " (%s)", g->note);
        fputc('\n', f);
    }
}

static rd_status report_write(const an_built *b, const rd_model *m, FILE *f, rd_error *err)
{
    size_t fused, bad;
    size_t ok = groups_applied(b, &fused, &bad);
    fprintf(f, "# rknn-diag built-model mapping: %s (target %s, toolkit %s, compiler %s) on %s\n", an_built_path(b),
            b->target[0] ? b->target : "?", b->toolkit[0] ? b->toolkit : "?", b->compiler[0] ? b->compiler : "?",
            b->model_path);
    fprintf(f,
            "# %zu ops reproduced as groups (%zu with tensors fused inside), %zu not reproduced, %zu I/O "
            "operators, %zu conversions; %zu tensors with the file's scale and zero point, %zu calibrated\n",
            ok, fused, bad, b->n_io_ops, b->n_converts, decisions_with_params(b), b->n_calibrated);
    write_groups(b, m, f);
    fprintf(f, "# conversions (exDataConvert)\n");
    for (size_t i = 0; i < b->n_converts; i++) {
        const bt_convert *c = &b->converts[i];
        if (b->rknn)
            fprintf(f, "#%d exDataConvert '%s' -> %s, %s to %s\n", c->src, c->name, c->value, rd_prec_name(c->from),
                    rd_prec_name(c->to));
        else
            fprintf(f, "line %d exDataConvert '%s' -> %s, %s to %s\n", c->line, c->name, c->value,
                    rd_prec_name(c->from), rd_prec_name(c->to));
    }
    fprintf(f, "# tensors: precisions and parameters\n");
    for (size_t i = 0; i < b->n_decisions; i++) {
        fprintf(f, "%s", b->decisions[i].name);
        decision_text(f, &b->decisions[i]);
        fprintf(f, " from %s\n", b->decisions[i].why);
    }
    if (b->n_weights)
        fprintf(f, "# weights (int8 codes of the .rknn against the per-channel asymmetric quantization of the ONNX "
                   "weights)\n");
    for (size_t i = 0; i < b->n_weights; i++) {
        const bt_weight *w = &b->weights[i];
        if (w->note[0]) {
            fprintf(f, "%s (node '%s'): %s\n", w->name, w->node, w->note);
            continue;
        }
        fprintf(f,
                "%s (node '%s'): %lld codes, %lld equal to ours, %lld one step off, %lld further; padding lane "
                "= our zero point on %d of %d channels%s\n",
                w->name, w->node, (long long)w->n_codes, (long long)w->n_equal, (long long)w->n_off1,
                (long long)w->n_far, w->n_pad_equal, w->n_pad, w->used_file_codes ? ": the file's codes are used" : "");
    }
    fprintf(f, "# materialised by the simulation without parameters from %s (calibrated)\n", source_name(b));
    for (size_t i = 0; i < b->n_calibrated; i++)
        fprintf(f, "%s -> none: %s\n", b->calibrated[i],
                b->rknn ? "the .rknn stores no int8 parameters for it" : "a build log has no scales");
    fprintf(f, "# notes\n");
    for (size_t i = 0; i < b->n_notes; i++)
        fprintf(f, "%s\n", b->notes[i]);
    if (ferror(f))
        return rd_errorf(err, RD_E_IO, "writing the built-model mapping report failed");
    return RD_OK;
}

rd_status an_built_fidelity(const an_built *b, rd_result *r, rd_error *err)
{
    char d[600];
    size_t fused, bad, w_file = 0;
    size_t ok = groups_applied(b, &fused, &bad);
    const char *src = source_name(b);
    snprintf(d, sizeof d,
             "%zu ops of the built model reproduced (%zu with tensors fused inside); %zu not reproduced, "
             "where our passes decide (rknn_mapping.txt says which and why)",
             ok, fused, bad);
    rd_status st = rd_result_add_fidelity(r, "fusion groups (which tensors exist)", src, d, err);
    if (st == RD_OK) {
        size_t f16 = 0, i16 = 0;
        for (size_t i = 0; i < b->n_decisions; i++) {
            f16 += b->decisions[i].prec == RD_PREC_FP16 || b->decisions[i].via_f16;
            i16 += b->decisions[i].prec == RD_PREC_INT16;
        }
        snprintf(d, sizeof d, "%zu tensors (%zu in or through float16, %zu int16), %zu conversions (exDataConvert)",
                 b->n_decisions, f16, i16, b->n_converts);
        st = rd_result_add_fidelity(r, "precisions", src, d, err);
    }
    if (st == RD_OK) {
        snprintf(d, sizeof d, "%zu tensors from %s; %zu by calibration%s", decisions_with_params(b), src,
                 b->n_calibrated, b->rknn ? " (the tensors the .rknn does not store)" : " (a build log has no scales)");
        st = rd_result_add_fidelity(r, "activation scales and zero points",
                                    b->rknn ? "the .rknn and calibration" : "calibration", d, err);
    }
    for (size_t i = 0; i < b->n_weights; i++)
        w_file += b->weights[i].used_file_codes;
    if (st == RD_OK && b->rknn) {
        snprintf(d, sizeof d,
                 "asymmetric per output channel as the .rknn holds them; %zu layers compared code by code, "
                 "%zu with the file's codes where they differ from ours; scales derived from the ONNX weights (the "
                 "file stores none)",
                 b->n_weights, w_file);
        st = rd_result_add_fidelity(r, "weights", "the .rknn (codes) and the ONNX weights (scales)", d, err);
    } else if (st == RD_OK) {
        st = rd_result_add_fidelity(r, "weights", "our rule",
                                    "a build log has no weights: symmetric per channel "
                                    "(docs/numerics.md, \"Weights\")",
                                    err);
    }
    if (st == RD_OK)
        st = rd_result_add_fidelity(r, "biases", "our rule",
                                    "quantized to int32 at input scale x weight scale (the "
                                    ".rknn's bias words are not decoded)",
                                    err);
    if (st == RD_OK && b->rknn) {
        snprintf(d, sizeof d, "%zu inputs from the .rknn's attrs", b->n_mean_from_attrs);
        st = rd_result_add_fidelity(r, "mean/std", b->n_mean_from_attrs ? "the .rknn" : "the command line", d, err);
    }
    if (st == RD_OK)
        st =
            rd_result_add_fidelity(r, "inside fused ops", "our guess",
                                   "nothing rounded inside a group, a ConvAdd's residual at its own scale, activations "
                                   "computed exactly (RKNN's LUTs and internal rescaling are not public: "
                                   "docs/numerics.md)",
                                   err);
    size_t via_f16 = 0;
    for (size_t i = 0; i < b->n_decisions; i++)
        via_f16 += b->decisions[i].via_f16;
    if (st == RD_OK && via_f16) {
        snprintf(d, sizeof d,
                 "%zu tensors computed in float16 and held in int8 have one row each, with their int8 "
                 "values (RKNN prints the float16 row and an X__int8 exDataConvert row)",
                 via_f16);
        st = rd_result_add_fidelity(r, "rows of float16 ops", "our simplification", d, err);
    }
    return st;
}

rd_status an_built_report_save(const an_built *b, const rd_sim *s, const char *path, rd_error *err)
{
    rd_atomic_file *f;
    rd_status st = rd_atomic_file_open(path, NULL, &f, err);
    if (st != RD_OK)
        return st;
    st = report_write(b, rd_sim_model(s), rd_atomic_file_stream(f), err);
    if (st != RD_OK) {
        rd_atomic_file_abort(f);
        return st;
    }
    return rd_atomic_file_commit(f, err);
}
