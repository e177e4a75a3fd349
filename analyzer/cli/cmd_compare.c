/*
 * cmd_compare.c: `rknn-diag compare A B`: two snapshots (error_analysis.txt, or a folder holding one), two
 * reports (report.json), or two `run --dump-dir` folders (index.json + .npy). Results are matched layer by
 * layer and group by group and the cos/euc deltas (B - A) printed with the layers that moved most; dump
 * folders are compared tensor by tensor (A as the reference).
 */
#include "json_out.h"
#include "cmd_spec.h"
#include "metrics.h"

#include "rknn_diag/reports.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { OPT_JSON = 1, OPT_TOP };

static const an_optspec compare_opts[] = {
    {OPT_JSON, "json", 0, NULL, "print the comparison as JSON"},
    {OPT_TOP, "top", 0, "N", "how many of the layers that moved most to list (default 10)"},
};

typedef struct compare_args {
    const char *paths[2];
    int n_paths;
    bool json;
    long top;
} compare_args;

static const an_optset compare_sets[] = {AN_SET(OPT_JSON, AN_SET_FLAG, compare_args, json),
                                         AN_SET_RANGE(OPT_TOP, compare_args, top, 0, 1000000)};

/* A path (the options are all in compare_sets). */
static int take_path(an_cmd_ctx *ctx, void *user, int id, const char *v)
{
    compare_args *a = user;
    if (a->n_paths == 2)
        return an_usage(ctx, "takes two paths, got a third: '%s'", v);
    a->paths[a->n_paths++] = v;
    return AN_GO;
}

/* The --json root both comparisons start with: the two sides, the mode, and the array of its rows. */
static cJSON *json_root(const char *pa, const char *pb, const char *mode, const char *rows, cJSON **list, bool *ok)
{
    cJSON *root = cJSON_CreateObject();
    an_json_add_str(root, "a", pa, ok);
    an_json_add_str(root, "b", pb, ok);
    an_json_add_str(root, "mode", mode, ok);
    *list = an_json_add_array(root, rows, ok);
    return root;
}

static const char *const group_names[RD_GROUP_COUNT] = {"sim.entire", "sim.single", "rt.entire", "rt.single_sim"};

typedef struct delta_row {
    const char *name;
    int group;
    double cos_a, cos_b, euc_a, euc_b;
    double moved; /* |cos_b - cos_a|, NaN-aware: a NaN on one side only counts as 2 */
} delta_row;

/* A folder, or (dir false) anything else that exists: the reader then refuses what is not a regular file
   (a FIFO) with a message saying what it is. */
static bool path_is(const char *path, bool dir)
{
    struct stat st;
    return stat(path, &st) == 0 && (dir ? S_ISDIR(st.st_mode) : !S_ISDIR(st.st_mode));
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Loads one side as a result; *is_dump is set (and nothing loaded) for a dump folder. */
static rd_status load_side(const char *path, rd_result *r, bool *is_dump, rd_error *err)
{
    char p[4200];
    *is_dump = false;
    rd_result_init(r);
    if (path_is(path, true)) {
        snprintf(p, sizeof p, "%s/index.json", path);
        if (path_is(p, false)) {
            *is_dump = true;
            return RD_OK;
        }
        snprintf(p, sizeof p, "%s/error_analysis.txt", path);
        if (path_is(p, false))
            return rd_rknn_txt_load(p, r, NULL, err);
        snprintf(p, sizeof p, "%s/report.json", path);
        if (path_is(p, false))
            return rd_report_json_load(p, r, err);
        return rd_errorf(err, RD_E_NOTFOUND, "%s: no index.json, error_analysis.txt or report.json in this folder",
                         path);
    }
    if (!path_is(path, false))
        return rd_errorf(err, RD_E_NOTFOUND, "%s: no such file or folder", path);
    if (ends_with(path, ".json"))
        return rd_report_json_load(path, r, err);
    return rd_rknn_txt_load(path, r, NULL, err);
}

static int cmp_moved(const void *a, const void *b)
{
    double x = ((const delta_row *)a)->moved, y = ((const delta_row *)b)->moved;
    return (x < y) - (x > y);
}

static double moved(double a, double b)
{
    if (isnan(a) && isnan(b))
        return 0;
    if (isnan(a) || isnan(b))
        return 2;
    return fabs(b - a);
}

static cJSON *num(double v)
{
    return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateString(isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
}

static void print_rows(an_cmd_ctx *ctx, const delta_row *rows, size_t n)
{
    fprintf(ctx->out, "%-48s %-13s %9s %9s %9s %11s %11s %11s\n", "layer", "group", "cos A", "cos B", "dcos", "euc A",
            "euc B", "deuc");
    for (size_t i = 0; i < n; i++) {
        const delta_row *d = &rows[i];
        fprintf(ctx->out, "%-48s %-13s %9.5f %9.5f %+9.5f %11.5g %11.5g %+11.5g\n", RD_TEXT_SHOWN(d->name),
                group_names[d->group], d->cos_a, d->cos_b, d->cos_b - d->cos_a, d->euc_a, d->euc_b,
                d->euc_b - d->euc_a);
    }
}

static int compare_results(an_cmd_ctx *ctx, const char *pa, const char *pb, const rd_result *a, const rd_result *b,
                           bool json, long top)
{
    delta_row *rows = calloc(a->n_layers * RD_GROUP_COUNT + 1, sizeof *rows);
    if (!rows) {
        rd_error err;
        rd_errorf(&err, RD_E_NOMEM, "out of memory");
        return an_fail(ctx, &err);
    }
    size_t n = 0, only_a = 0;
    for (size_t i = 0; i < a->n_layers; i++) {
        long j = rd_result_find_layer(b, a->layers[i].name);
        if (j < 0) {
            only_a++;
            continue;
        }
        for (int g = 0; g < RD_GROUP_COUNT; g++) {
            const rd_metric_group *ga = &a->layers[i].groups[g], *gb = &b->layers[j].groups[g];
            if (!ga->present || !gb->present)
                continue;
            rows[n] = (delta_row){a->layers[i].name, g, ga->mean.cos, gb->mean.cos, ga->mean.euc, gb->mean.euc, 0};
            rows[n].moved = moved(ga->mean.cos, gb->mean.cos);
            n++;
        }
    }
    size_t only_b = 0;
    for (size_t j = 0; j < b->n_layers; j++)
        only_b += rd_result_find_layer(a, b->layers[j].name) < 0;
    delta_row *sorted = malloc((n + 1) * sizeof *sorted);
    if (!sorted) {
        free(rows);
        return an_fail_nomem(ctx, "the sorted rows");
    }
    memcpy(sorted, rows, n * sizeof *rows);
    qsort(sorted, n, sizeof *sorted, cmp_moved);
    size_t k = n < (size_t)top ? n : (size_t)top;
    int rc = AN_EXIT_OK;
    if (json) {
        bool ok = true;
        cJSON *list = NULL, *root = json_root(pa, pb, "results", "layers", &list, &ok);
        for (size_t i = 0; i < n; i++) {
            cJSON *o = an_json_push_object(list, &ok);
            an_json_add_str(o, "name", rows[i].name, &ok);
            an_json_add_str(o, "group", group_names[rows[i].group], &ok);
            an_json_add(o, "cos_a", num(rows[i].cos_a), &ok);
            an_json_add(o, "cos_b", num(rows[i].cos_b), &ok);
            an_json_add(o, "d_cos", num(rows[i].cos_b - rows[i].cos_a), &ok);
            an_json_add(o, "euc_a", num(rows[i].euc_a), &ok);
            an_json_add(o, "euc_b", num(rows[i].euc_b), &ok);
            an_json_add(o, "d_euc", num(rows[i].euc_b - rows[i].euc_a), &ok);
        }
        cJSON *most = an_json_add_array(root, "moved_most", &ok);
        for (size_t i = 0; i < k; i++) {
            cJSON *o = an_json_push_object(most, &ok);
            an_json_add_str(o, "name", sorted[i].name, &ok);
            an_json_add_str(o, "group", group_names[sorted[i].group], &ok);
            an_json_add(o, "moved", num(sorted[i].moved), &ok);
        }
        an_json_add_num(root, "only_in_a", (double)only_a, &ok);
        an_json_add_num(root, "only_in_b", (double)only_b, &ok);
        rc = an_emit_json(ctx, root, ok);
    } else {
        fprintf(ctx->out, "A: %s\nB: %s\n%zu layer groups in both; %zu layers only in A, %zu only in B\n\n", pa, pb, n,
                only_a, only_b);
        print_rows(ctx, rows, n);
        fprintf(ctx->out, "\nmoved most (|dcos|):\n");
        print_rows(ctx, sorted, k);
    }
    free(sorted);
    free(rows);
    return rc;
}

/* Loads DIR/file (an .npy named in index.json) as float32; file must stay inside DIR (no '..', no absolute
   path, no symbolic link followed), whatever index.json says, and its header is checked before its data is
   read (a huge file is refused, not read). */
static rd_status load_npy_f32(const char *dir, const char *file, rd_tensor *out, rd_error *err)
{
    rd_tensor raw = {0};
    rd_status st = rd_npy_load_within(dir, file, NULL, &raw, err);
    if (st != RD_OK)
        return rd_error_prefix(err, "%s/index.json", dir);
    st = rd_tensor_to_f32(out, &raw, err);
    rd_tensor_fini(&raw);
    return st;
}

static rd_status load_index(const char *dir, cJSON **out, rd_error *err)
{
    char p[4200], *text;
    size_t len;
    snprintf(p, sizeof p, "%s/index.json", dir);
    rd_status st = rd_file_read_all(NULL, p, (size_t)64 << 20, &text, &len, err);
    if (st != RD_OK)
        return st;
    *out = cJSON_ParseWithLength(text, len);
    bool nomem = !*out && rd_json_well_formed(text, len, CJSON_NESTING_LIMIT);
    free(text);
    if (nomem)
        return rd_errorf(err, RD_E_NOMEM, "out of memory reading %s", p);
    if (!*out || !cJSON_IsArray(*out)) {
        cJSON_Delete(*out);
        return rd_errorf(err, RD_E_PARSE, "%s: not a JSON list of {name, file, ...}", p);
    }
    return RD_OK;
}

static const char *str_field(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Two dump folders: each tensor of A against the same-named tensor of B, as a result (group sim.entire). */
static rd_status compare_dumps(const char *da, const char *db, rd_result *r, rd_error *err)
{
    cJSON *ia = NULL, *ib = NULL;
    rd_status st = load_index(da, &ia, err);
    if (st == RD_OK)
        st = load_index(db, &ib, err);
    const cJSON *ea;
    cJSON_ArrayForEach(ea, ia)
    {
        if (st != RD_OK)
            break;
        const char *name = str_field(ea, "name"), *fa = str_field(ea, "file"), *fb = NULL;
        if (!name || !fa) {
            st = rd_errorf(err, RD_E_PARSE, "%s/index.json: an entry lacks 'name' or 'file'", da);
            break;
        }
        const cJSON *eb;
        cJSON_ArrayForEach(eb, ib)
        {
            const char *nb = str_field(eb, "name");
            if (nb && strcmp(nb, name) == 0)
                fb = str_field(eb, "file");
        }
        if (!fb)
            continue;
        rd_tensor ta = {0}, tb = {0};
        st = load_npy_f32(da, fa, &ta, err);
        if (st == RD_OK)
            st = load_npy_f32(db, fb, &tb, err);
        rd_layer_result *l = NULL;
        if (st == RD_OK)
            st = rd_result_add_layer(r, name, "Tensor", &l, err);
        if (st == RD_OK) {
            rd_metrics m;
            int64_t na = rd_tensor_numel(&ta), nb = rd_tensor_numel(&tb);
            if (na != nb)
                an_metrics_shape_mismatch(na, nb, &m);
            else
                an_metrics_compute(ta.data, tb.data, na, NULL, &m);
            rd_metric_group_single(&l->groups[RD_GROUP_SIM_ENTIRE], &m);
        }
        rd_tensor_fini(&ta);
        rd_tensor_fini(&tb);
    }
    cJSON_Delete(ia);
    cJSON_Delete(ib);
    return st;
}

static int print_dump_comparison(an_cmd_ctx *ctx, const char *pa, const char *pb, const rd_result *r, bool json,
                                 long top)
{
    size_t n = r->n_layers;
    size_t *order = malloc((n + 1) * sizeof *order);
    if (!order)
        return an_fail_nomem(ctx, "the tensor order");
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    /* lowest effective cosine first (simple insertion sort: dumps hold at most a few thousand tensors) */
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0; j--) {
            double x = an_cos_effective(&r->layers[order[j]].groups[0].mean);
            double y = an_cos_effective(&r->layers[order[j - 1]].groups[0].mean);
            if (!(isnan(x) && !isnan(y)) && !(x < y))
                break;
            size_t t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    size_t k = n < (size_t)top ? n : (size_t)top;
    int rc = AN_EXIT_OK;
    if (json) {
        bool ok = true;
        cJSON *list = NULL, *root = json_root(pa, pb, "tensors", "tensors", &list, &ok);
        for (size_t i = 0; i < n; i++) {
            const rd_metrics *m = &r->layers[i].groups[0].mean;
            cJSON *o = an_json_push_object(list, &ok);
            an_json_add_str(o, "name", r->layers[i].name, &ok);
            an_json_add(o, "cos", num(m->cos), &ok);
            an_json_add(o, "euc", num(m->euc), &ok);
            an_json_add(o, "euc_rel", num(m->euc_rel), &ok);
            an_json_add(o, "sqnr_db", num(m->sqnr_db), &ok);
            an_json_add(o, "max_abs", num(m->max_abs), &ok);
            an_json_add_str(o, "degenerate", rd_degenerate_name(m->degenerate), &ok);
        }
        cJSON *most = an_json_add_array(root, "moved_most", &ok);
        for (size_t i = 0; i < k; i++)
            an_json_push(most, cJSON_CreateString(r->layers[order[i]].name), &ok);
        rc = an_emit_json(ctx, root, ok);
    } else {
        fprintf(ctx->out, "A: %s (reference)\nB: %s\n%zu tensors in both\n\n%-48s %9s %11s %11s %9s %11s %s\n", pa, pb,
                n, "tensor", "cos", "euc", "euc_rel", "sqnr_db", "max_abs", "class");
        for (size_t i = 0; i < n; i++) {
            const rd_metrics *m = &r->layers[i].groups[0].mean;
            fprintf(ctx->out, "%-48s %9.5f %11.5g %11.5g %9.2f %11.5g %s\n", RD_TEXT_SHOWN(r->layers[i].name), m->cos,
                    m->euc, m->euc_rel, m->sqnr_db, m->max_abs, rd_degenerate_name(m->degenerate));
        }
        fprintf(ctx->out, "\nmoved most (lowest cosine):\n");
        for (size_t i = 0; i < k; i++)
            fprintf(ctx->out, "  %-48s %9.5f\n", RD_TEXT_SHOWN(r->layers[order[i]].name),
                    r->layers[order[i]].groups[0].mean.cos);
    }
    free(order);
    return rc;
}

static int compare_main(an_cmd_ctx *ctx, an_cmd_args *cmd, void *args)
{
    (void)cmd;
    const compare_args *opt = args;
    const char *const *paths = opt->paths;
    int n_paths = opt->n_paths;
    bool json = opt->json;
    long top = opt->top;
    if (n_paths != 2)
        return an_usage(ctx, "needs two paths A and B");
    rd_error err = {0};
    rd_result a, b;
    bool dump_a, dump_b;
    rd_status st = load_side(paths[0], &a, &dump_a, &err);
    if (st != RD_OK)
        return an_fail(ctx, &err);
    st = load_side(paths[1], &b, &dump_b, &err);
    if (st != RD_OK) {
        rd_result_fini(&a);
        return an_fail(ctx, &err);
    }
    int code;
    if (dump_a != dump_b) {
        rd_errorf(&err, RD_E_USAGE, "%s and %s are not the same kind: a dump folder compares only with a dump folder",
                  paths[0], paths[1]);
        code = an_fail(ctx, &err);
    } else if (dump_a) {
        rd_result r;
        rd_result_init(&r);
        st = compare_dumps(paths[0], paths[1], &r, &err);
        code = st == RD_OK ? print_dump_comparison(ctx, paths[0], paths[1], &r, json, top) : an_fail(ctx, &err);
        rd_result_fini(&r);
    } else {
        code = compare_results(ctx, paths[0], paths[1], &a, &b, json, top);
    }
    rd_result_fini(&a);
    rd_result_fini(&b);
    return code;
}

const an_cmd_spec an_cmd_compare = {
    .usage = "rknn-diag compare A B [--json] [--top N]",
    .about = "Compares two snapshots (error_analysis.txt or its folder), two reports (report.json) or two\n"
             "`run --dump-dir` folders (index.json + .npy, compared tensor by tensor with A as the\n"
             "reference), and prints per-layer cos/euc deltas (B - A) and the layers that moved most.\n"
             "Exit codes: 0 done, 2 usage, 3 unreadable or malformed input.",
    AN_SPEC_OPTS(compare_opts),
    AN_SPEC_SETS(compare_sets),
    AN_SPEC_ARGS(compare_args, &(const compare_args){.top = 10}),
    .take = take_path,
    .main = compare_main,
};
