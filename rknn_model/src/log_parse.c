/*
 * log_parse.c: what a verbose RKNN-Toolkit2 build log says (section 0-2 of ../shared/docs/rknn-compiler.md):
 * toolkit, librknnc and runtime versions, the target platform where printed, librknnc's option line,
 * `fold_constant remove nodes = [...]`, the `fuse_ops results:` and `fuse_ops with passes results:`
 * rewrites (`rule: remove node = [...], add node = [...]`), `quant_optimizer results:` (`rule: [...]`),
 * `Meet hybrid type` lines; the layer and ranking tables are log_table.c's.
 *
 * Name lists are Python list literals, read with the literal parser (quotes and escapes included).
 */
#include "log_internal.h"

typedef enum { SEC_NONE, SEC_FUSE, SEC_FUSE_PASSES, SEC_QUANT } section;

typedef struct lp {
    rd_rknn_log *log;
    lg_tables *tables;
    section sec;
    const char *what;
} lp;

static const char *keep(rd_rknn_log *log, const char *s, size_t n, rd_error *err)
{
    return rk_strndup(&log->arena, s, n, err);
}

/* The word after key in s ("librknnc version: 1.5.2 (...)" -> "1.5.2") into *out; untouched when absent. */
static rd_status word_after(rd_rknn_log *log, const char *s, const char *key, const char **out, rd_error *err)
{
    const char *k = strstr(s, key);
    if (!k)
        return RD_OK;
    k += strlen(key);
    while (*k == ' ')
        k++;
    size_t n = strcspn(k, " \t,()'\"");
    if (!n)
        return RD_OK;
    const char *v = keep(log, k, n, err);
    if (!v)
        return err->code;
    *out = v;
    return RD_OK;
}

/* A Python list of strings at s: names into the arena; *end after it. RD_E_PARSE naming the line. */
static rd_status name_list(lp *p, const char *s, int line, const char *const **out, size_t *n, const char **end,
                           rd_error *err)
{
    char what[300];
    snprintf(what, sizeof what, "%s:%d: name list", p->what, line);
    rd_rknn_value v;
    size_t used = 0;
    rd_status st = rk_pylit_parse(&p->log->arena, s, strlen(s), what, 0, 8, &v, &used, err);
    if (st != RD_OK)
        return st;
    if (v.kind != RD_RKNN_V_LIST && v.kind != RD_RKNN_V_TUPLE)
        return rd_errorf(err, RD_E_PARSE, "%s: expected a list ['name', ...]", what);
    const char **names = rk_alloc_array(&p->log->arena, v.n, sizeof *names, what, err);
    if (!names)
        return err->code;
    for (size_t i = 0; i < v.n; i++) {
        if (v.items[i].kind != RD_RKNN_V_STRING)
            return rd_errorf(err, RD_E_PARSE, "%s: entry %zu is not a quoted name", what, i);
        names[i] = v.items[i].s;
    }
    *out = names;
    *n = v.n;
    if (end)
        *end = s + used;
    return RD_OK;
}

/* Length of a rule name ([A-Za-z0-9_]+) at s. */
static size_t ident_len(const char *s)
{
    return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
}

/* "rule: remove node = [...], add node = [...]" (either part may be missing); false when s is not one. */
static rd_status fuse_rule(lp *p, const char *s, int line, bool *matched, rd_error *err)
{
    size_t id = ident_len(s);
    const char *rm = id && s[id] == ':' ? strstr(s + id, "remove node = ") : NULL;
    const char *add = id && s[id] == ':' ? strstr(s + id, "add node = ") : NULL;
    *matched = false;
    if (!rm && !add)
        return RD_OK;
    /* nothing but blanks between "rule:" and the first part */
    const char *first = rm && (!add || rm < add) ? rm : add;
    for (const char *q = s + id + 1; q < first; q++)
        if (*q != ' ')
            return RD_OK;
    *matched = true;
    rd_rknn_fuse *f = rk_vec_push(&p->log->arena, &p->log->fuses, LG_MAX_ENTRIES, "fuse_ops rewrites", err);
    if (!f)
        return err->code;
    f->line = line;
    f->with_passes = p->sec == SEC_FUSE_PASSES;
    f->rule = keep(p->log, s, id, err);
    if (!f->rule)
        return err->code;
    static const char *const empty[1] = {""};
    f->removed = f->added = empty;
    const char *end = NULL;
    rd_status st = RD_OK;
    if (rm)
        st = name_list(p, rm + strlen("remove node = "), line, &f->removed, &f->n_removed, &end, err);
    if (st == RD_OK && add && (!end || add >= end))
        st = name_list(p, add + strlen("add node = "), line, &f->added, &f->n_added, NULL, err);
    return st;
}

/* In quant_optimizer results: "rule: [...]". */
static rd_status quant_rule(lp *p, const char *s, int line, bool *matched, rd_error *err)
{
    size_t id = ident_len(s);
    *matched = id && strncmp(s + id, ": [", 3) == 0;
    if (!*matched)
        return RD_OK;
    rd_rknn_quant_opt *q = rk_vec_push(&p->log->arena, &p->log->quant_opts, LG_MAX_ENTRIES, "quant_optimizer", err);
    if (!q || !(q->rule = keep(p->log, s, id, err)))
        return err->code;
    q->line = line;
    return name_list(p, s + id + 2, line, &q->names, &q->n_names, NULL, err);
}

/* librknnc's option line: "compress = 0, conv_eltwise_activation_fuse = 1, ..." */
static rd_status option_line(lp *p, const char *s, int line, bool *matched, rd_error *err)
{
    *matched = strncmp(s, "compress = ", 11) == 0 && strstr(s, "global_fuse");
    if (!*matched || p->log->pub.option_line)
        return RD_OK;
    rd_rknn_build_log *b = &p->log->pub;
    b->option_line = line;
    if (!(b->option_text = keep(p->log, s, strlen(s), err)))
        return err->code;
    for (const char *q = s; *q;) {
        size_t n = strcspn(q, ",");
        const char *eq = memchr(q, '=', n);
        if (eq) {
            const char *k = q, *ke = eq, *v = eq + 1, *ve = q + n;
            while (k < ke && *k == ' ')
                k++;
            while (ke > k && ke[-1] == ' ')
                ke--;
            while (v < ve && *v == ' ')
                v++;
            while (ve > v && ve[-1] == ' ')
                ve--;
            rd_rknn_option *o = rk_vec_push(&p->log->arena, &p->log->options, 256, "option line", err);
            if (!o || !(o->key = keep(p->log, k, (size_t)(ke - k), err)) ||
                !(o->value = keep(p->log, v, (size_t)(ve - v), err)))
                return err->code;
        }
        q += n;
        if (*q == ',')
            q++;
    }
    return RD_OK;
}

/* Versions and the target platform, wherever they are printed (first one wins). */
static rd_status versions(lp *p, const char *s, rd_error *err)
{
    rd_rknn_build_log *b = &p->log->pub;
    static const struct {
        const char *key;
        size_t off;
    } keys[] = {
        {"rknn-toolkit2 version:", offsetof(rd_rknn_build_log, toolkit_version)},
        {"librknnc version:", offsetof(rd_rknn_build_log, librknnc_version)},
        {"librknnrt version:", offsetof(rd_rknn_build_log, runtime_version)},
        {"rknnrt:", offsetof(rd_rknn_build_log, runtime_version)},
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const char **slot = (const char **)((char *)b + keys[i].off);
        rd_status st = (*slot)[0] ? RD_OK : word_after(p->log, s, keys[i].key, slot, err);
        if (st != RD_OK)
            return st;
    }
    /* 'target_platform': 'rk3588', target_platform='rk3588', target_platform: rk3588 */
    const char *tp = b->target_platform[0] ? NULL : strstr(s, "target_platform");
    if (tp) {
        tp += strlen("target_platform");
        tp += strspn(tp, "'\"");
        tp += strspn(tp, " :=[");
        tp += strspn(tp, "'\" ");
        size_t n = strspn(tp, "abcdefghijklmnopqrstuvwxyz0123456789_");
        if (n >= 4 && tp[0] == 'r' && !(b->target_platform = keep(p->log, tp, n, err)))
            return err->code;
    }
    return RD_OK;
}

static rd_status on_line(void *ctx, const lg_line *l, rd_error *err)
{
    lp *p = ctx;
    bool used = false;
    rd_status st = lg_tables_line(p->tables, l, &used, err);
    if (st != RD_OK || used)
        return st;
    const char *s = l->s + strspn(l->s, " \t");
    if ((st = versions(p, s, err)) != RD_OK)
        return st;
    if (strncmp(s, "fuse_ops with passes results:", 29) == 0) {
        p->sec = SEC_FUSE_PASSES;
        return RD_OK;
    }
    if (strncmp(s, "fuse_ops results:", 17) == 0) {
        p->sec = SEC_FUSE;
        return RD_OK;
    }
    if (strncmp(s, "quant_optimizer results:", 24) == 0) {
        p->sec = SEC_QUANT;
        return RD_OK;
    }
    if (strncmp(s, "fuse_ops done", 13) == 0 || strncmp(s, "quant_optimizer done", 20) == 0 ||
        strncmp(s, "fuse_ops check results", 22) == 0) {
        p->sec = SEC_NONE;
        return RD_OK;
    }
    const char *fc = strstr(s, "fold_constant remove nodes = ");
    if (fc) {
        const char *const *names;
        size_t n;
        st = name_list(p, fc + strlen("fold_constant remove nodes = "), l->line, &names, &n, NULL, err);
        for (size_t i = 0; st == RD_OK && i < n; i++) {
            const char **slot = rk_vec_push(&p->log->arena, &p->log->fold, LG_MAX_ENTRIES, "fold_constant", err);
            if (!slot)
                return err->code;
            *slot = names[i];
        }
        return st;
    }
    const char *hy = strstr(s, "Meet hybrid type, dtype: ");
    if (hy) {
        hy += strlen("Meet hybrid type, dtype: ");
        const char *t = strstr(hy, ", tensor: ");
        rd_rknn_hybrid *h = t ? rk_vec_push(&p->log->arena, &p->log->hybrid, LG_MAX_ENTRIES, "hybrid", err) : NULL;
        if (t && (!h || !(h->dtype = keep(p->log, hy, (size_t)(t - hy), err)) ||
                  !(h->tensor = keep(p->log, t + 10, strlen(t + 10), err))))
            return err->code;
        if (h)
            h->line = l->line;
        return RD_OK;
    }
    bool matched = false;
    if ((st = option_line(p, s, l->line, &matched, err)) != RD_OK || matched)
        return st;
    if ((st = fuse_rule(p, s, l->line, &matched, err)) != RD_OK || matched)
        return st;
    if (p->sec == SEC_QUANT)
        return quant_rule(p, s, l->line, &matched, err);
    return RD_OK;
}

/* Moves the vectors into the public struct. */
static void publish(rd_rknn_log *log)
{
    rd_rknn_build_log *b = &log->pub;
    b->options = log->options.items;
    b->n_options = log->options.n;
    b->fold_constant = log->fold.items;
    b->n_fold_constant = log->fold.n;
    b->fuses = log->fuses.items;
    b->n_fuses = log->fuses.n;
    b->quant_opts = log->quant_opts.items;
    b->n_quant_opts = log->quant_opts.n;
    b->hybrid = log->hybrid.items;
    b->n_hybrid = log->hybrid.n;
    b->tables = log->tables.items;
    b->n_tables = log->tables.n;
    b->rows = log->rows.items;
    b->n_rows = log->rows.n;
    b->rank_rows = log->rank_rows.items;
    b->n_rank_rows = log->rank_rows.n;
}

static bool read_anything(const rd_rknn_build_log *b)
{
    return b->toolkit_version[0] || b->librknnc_version[0] || b->runtime_version[0] || b->option_line ||
           b->n_fold_constant || b->n_fuses || b->n_quant_opts || b->n_hybrid || b->n_rows || b->n_rank_rows;
}

rd_status rd_rknn_log_parse(const char *text, size_t len, const char *what, rd_rknn_log **out, rd_error *err)
{
    rd_error local;
    err = rk_err(err, &local);
    *out = NULL;
    what = what ? what : "log";
    if (len > RD_RKNN_LOG_MAX_BYTES)
        return rd_errorf(err, RD_E_LIMIT, "%s: %zu bytes, more than the %zu a build log may have", what, len,
                         RD_RKNN_LOG_MAX_BYTES);
    const char *nul = memchr(text, '\0', len);
    if (nul)
        return rd_errorf(err, RD_E_PARSE,
                         "%s: byte %zu: a NUL byte: this is binary data, expected the text of an "
                         "RKNN-Toolkit2 build log or a board's layer table",
                         what, (size_t)(nul - text));
    rd_rknn_log *log = calloc(1, sizeof *log);
    if (!log)
        return rd_errorf(err, RD_E_NOMEM, "%s: out of memory", what);
    rk_arena_init(&log->arena, 4 * len + ((size_t)64 << 20));
    log->options.size = sizeof(rd_rknn_option);
    log->fold.size = sizeof(const char *);
    log->fuses.size = sizeof(rd_rknn_fuse);
    log->quant_opts.size = sizeof(rd_rknn_quant_opt);
    log->hybrid.size = sizeof(rd_rknn_hybrid);
    log->tables.size = sizeof(rd_rknn_layer_table);
    log->rows.size = sizeof(rd_rknn_layer_row);
    log->rank_rows.size = sizeof(rd_rknn_rank_row);
    rd_rknn_build_log *b = &log->pub;
    b->toolkit_version = b->librknnc_version = b->runtime_version = b->target_platform = "";
    b->what = keep(log, what, strlen(what), err);
    lp p = {log, b->what ? lg_tables_create(log, err) : NULL, SEC_NONE, b->what};
    rd_status st = p.tables ? lg_scan(text, len, what, on_line, &p, err) : err->code;
    if (st == RD_OK)
        st = lg_tables_finish(p.tables, err);
    publish(log);
    if (st == RD_OK && !read_anything(b))
        st = rd_errorf(err, RD_E_PARSE,
                       "%s: nothing read: no toolkit, librknnc or runtime version, no option line, no "
                       "'fold_constant remove nodes', no 'fuse_ops results', no 'Meet hybrid type', no layer table "
                       "(header 'ID OpType DataType Target ...' or rows like '12 ConvRelu INT8 NPU (..) (..) ...'), "
                       "no ranking table; give the verbose build output (RKNN(verbose=True)) or the board's "
                       "eval_perf / perf_debug log",
                       what);
    if (st != RD_OK) {
        rd_rknn_log_destroy(log);
        return st;
    }
    *out = log;
    return RD_OK;
}

rd_status rd_rknn_log_load(const char *path, rd_rknn_log **out, rd_error *err)
{
    rd_error local;
    err = rk_err(err, &local);
    *out = NULL;
    char *buf;
    size_t len;
    rd_status st = rd_file_read_all(NULL, path, RD_RKNN_LOG_MAX_BYTES, &buf, &len, err);
    if (st != RD_OK)
        return st;
    st = rd_rknn_log_parse(buf, len, path, out, err);
    free(buf);
    return st;
}

void rd_rknn_log_destroy(rd_rknn_log *log)
{
    if (!log)
        return;
    rk_arena_fini(&log->arena);
    free(log);
}

const rd_rknn_build_log *rd_rknn_log_get(const rd_rknn_log *log)
{
    return &log->pub;
}
