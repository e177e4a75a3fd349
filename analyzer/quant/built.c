/*
 * built.c: loading a built model's files and checking them against the ONNX model and the command line,
 * how its tensor names map to ONNX names, and applying its decisions to a simulation (built.h).
 *
 * Names: a stored tensor is an ONNX tensor by its exact name; compiler suffixes are stripped to find the
 * ONNX tensor a variant stands for (rknn-compiler.md, "Naming conventions"): dtype conversions
 * (X__float16, X_int8, X__cvt_int8_float16), generations (X#1), inserted layout ops (X_rs, X-rs, X_tp,
 * X_sw), rewrites (X_2swish, X_2reshape, ...). Compiler buffers (X_exSecondary) and constants
 * (X_BScfgTensor, X_weight_N, tempMC*, fenceConv*) are recognised and ignored with a note.
 */
#include "built_internal.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- names ------------------------------------------------------------------------------------------ */

/* Suffixes the compiler appends to a tensor it converts, copies or reshapes; longest first where one
   ends another. */
static const char *const variant_suffixes[] = {
    "_int8__cvt_float16_int8",
    "__cvt_int8_to_float16",
    "__cvt_int8_float16",
    "__cvt_float16_int8",
    "__float16",
    "__int8",
    "_int8",
    "_float16",
    "_before_conv",
    "_before",
    "_gemm_conv",
    "_conv",
    "_mm",
    "_shape4",
    "-rs",
    "_rs",
    "_tp",
    "_sw",
    "_2swish",
    "_2reshape",
    "_2global",
    "_2gemm",
    "_2conv",
    "_2layer_norm",
    "_2split",
    "_2deconv",
    "_2sdpa",
    "_2leakyrelu",
    "_2mul",
    "_0_unsqueeze0",
    "_0_unsqueeze1",
    "_0_squeeze0",
    "_0_squeeze1",
};

static bool ends_with(const char *s, size_t n, const char *suffix, size_t *base_len)
{
    size_t k = strlen(suffix);
    if (n <= k || memcmp(s + n - k, suffix, k) != 0)
        return false;
    *base_len = n - k;
    return true;
}

/* "X#12" -> length of X; 0 when there is no generation suffix. */
static size_t generation_base(const char *s, size_t n)
{
    size_t i = n;
    while (i > 0 && isdigit((unsigned char)s[i - 1]))
        i--;
    return i < n && i > 1 && s[i - 1] == '#' ? i - 1 : 0;
}

/* The ONNX value named s[0..n): exact, or RKNN's sanitised form ('/' -> '_') of an ONNX name. */
static bool onnx_name(const rd_model *m, const char *s, size_t n, char *out, size_t len)
{
    if (n + 1 > len)
        return false;
    memcpy(out, s, n);
    out[n] = '\0';
    return rd_model_find_value(m, out) >= 0;
}

/* A compiler buffer or constant: "_exSecondary[N]" (aux of a tensor), "_BScfgTensor", "_weight_N", ... */
static bt_kind compiler_kind(const char *s, size_t n, size_t *base_len)
{
    const char *p = strstr(s, "_exSecondary");
    if (p) {
        const char *q = p + strlen("_exSecondary");
        while (isdigit((unsigned char)*q))
            q++;
        if (*q == '\0' || strncmp(q, "_weight_", 8) == 0) {
            *base_len = (size_t)(p - s);
            return *q ? BT_COMPILER : BT_AUX;
        }
    }
    size_t k;
    if (ends_with(s, n, "_BScfgTensor", &k) || strncmp(s, "tempMC", 6) == 0 || strncmp(s, "fenceConv", 9) == 0) {
        *base_len = 0;
        return BT_COMPILER;
    }
    const char *w = strstr(s, "_weight_");
    if (w && w[8] && strspn(w + 8, "0123456789") == strlen(w + 8)) {
        *base_len = 0;
        return BT_COMPILER;
    }
    return BT_NONE;
}

bt_kind an_bt_classify(const rd_model *m, const char *name, int role, char *base, size_t len)
{
    base[0] = '\0';
    if (role != RD_RKNN_ROLE_INPUT && role != RD_RKNN_ROLE_OUTPUT && role != RD_RKNN_ROLE_INTERNAL)
        return BT_NONE;
    if (!name || !name[0])
        return BT_NONE;
    size_t n = strlen(name);
    if (onnx_name(m, name, n, base, len))
        return BT_ONNX;
    size_t k = 0;
    bt_kind ck = compiler_kind(name, n, &k);
    if (ck == BT_AUX && onnx_name(m, name, k, base, len))
        return BT_AUX;
    if (ck != BT_NONE) {
        base[0] = '\0';
        return BT_COMPILER;
    }
    /* strip compiler suffixes, a few at a time, until an ONNX name appears */
    size_t cur = n;
    for (int round = 0; round < 6 && cur > 0; round++) {
        size_t next = generation_base(name, cur);
        for (size_t i = 0; !next && i < sizeof variant_suffixes / sizeof variant_suffixes[0]; i++)
            if (ends_with(name, cur, variant_suffixes[i], &k))
                next = k;
        if (!next)
            break;
        cur = next;
        if (onnx_name(m, name, cur, base, len))
            return BT_VARIANT;
    }
    base[0] = '\0';
    return BT_UNMATCHED;
}

/* ---- small helpers -------------------------------------------------------------------------------- */

rd_status an_bt_note(an_built *b, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    for (size_t i = 0; i < b->n_notes; i++)
        if (strcmp(b->notes[i], buf) == 0)
            return RD_OK;
    char **grown = realloc(b->notes, (b->n_notes + 1) * sizeof *grown);
    if (!grown)
        return RD_E_NOMEM;
    b->notes = grown;
    if (!(b->notes[b->n_notes] = strdup(buf)))
        return RD_E_NOMEM;
    b->n_notes++;
    return RD_OK;
}

bt_decision *an_bt_decision(an_built *b, const char *name, rd_error *err)
{
    for (size_t i = 0; i < b->n_decisions; i++)
        if (strcmp(b->decisions[i].name, name) == 0)
            return &b->decisions[i];
    bt_decision *grown = realloc(b->decisions, (b->n_decisions + 1) * sizeof *grown);
    if (!grown) {
        rd_errorf(err, RD_E_NOMEM, "out of memory");
        return NULL;
    }
    b->decisions = grown;
    bt_decision *d = &b->decisions[b->n_decisions];
    memset(d, 0, sizeof *d);
    if (!(d->name = strdup(name))) {
        rd_errorf(err, RD_E_NOMEM, "out of memory");
        return NULL;
    }
    d->prec = RD_PREC_INT8;
    b->n_decisions++;
    return d;
}

rd_prec an_bt_prec_of_dtype(int onnx_dtype, bool *known)
{
    *known = true;
    switch (onnx_dtype) {
    case RD_DT_I8:
    case RD_DT_U8:
        return RD_PREC_INT8;
    case RD_DT_F16:
        return RD_PREC_FP16;
    case RD_DT_I16:
        return RD_PREC_INT16;
    case RD_DT_F32:
        return RD_PREC_FP32;
    default:
        *known = false;
        return RD_PREC_INT8;
    }
}

rd_prec an_bt_prec_of_text(const char *t, bool *known)
{
    *known = true;
    if (strcasecmp(t, "INT8") == 0 || strcasecmp(t, "UINT8") == 0)
        return RD_PREC_INT8;
    if (strcasecmp(t, "FLOAT16") == 0)
        return RD_PREC_FP16;
    if (strcasecmp(t, "INT16") == 0)
        return RD_PREC_INT16;
    if (strcasecmp(t, "FLOAT") == 0 || strcasecmp(t, "FLOAT32") == 0)
        return RD_PREC_FP32;
    *known = false;
    return RD_PREC_INT8;
}

/* ---- the backward search of a group --------------------------------------------------------------- */

#define BT_MAX_GROUP_NODES 256 /* a fused op covering more ONNX nodes than this is not reproduced */

static bool in_set(const int *v, size_t n, int x)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == x)
            return true;
    return false;
}

rd_status an_bt_inner_of(const rd_model *m, int out, const int *reads, size_t n_reads, const bool *stored, int **inner,
                         size_t *n_inner, char *why, size_t why_len, rd_error *err)
{
    *inner = NULL;
    *n_inner = 0;
    why[0] = '\0';
    rd_value_info ov;
    rd_model_value(m, (size_t)out, &ov);
    if (ov.producer < 0) {
        snprintf(why, why_len, "'%s' is %s in the ONNX graph", ov.name,
                 ov.is_constant ? "a constant" : "not computed by a node");
        return RD_OK;
    }
    int nodes[BT_MAX_GROUP_NODES];
    size_t n_nodes = 0, cap = 16;
    int *found = malloc(cap * sizeof *found);
    if (!found)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    nodes[n_nodes++] = ov.producer;
    for (size_t k = 0; k < n_nodes && !why[0]; k++) {
        rd_node_info ni;
        rd_model_node(m, (size_t)nodes[k], &ni);
        for (int i = 0; i < ni.n_inputs && !why[0]; i++) {
            int x = ni.inputs[i];
            if (x < 0 || in_set(reads, n_reads, x) || in_set(found, *n_inner, x))
                continue;
            rd_value_info xi;
            rd_model_value(m, (size_t)x, &xi);
            if (xi.is_constant)
                continue;
            if (xi.producer < 0) {
                snprintf(why, why_len, "the ONNX graph computes it from '%s', which the op does not read", xi.name);
                break;
            }
            if (stored[x]) {
                snprintf(why, why_len,
                         "the ONNX graph computes it from '%s', which the built model stores but "
                         "this op does not read",
                         xi.name);
                break;
            }
            if (n_nodes == BT_MAX_GROUP_NODES) {
                snprintf(why, why_len, "it would cover more than %d ONNX nodes", BT_MAX_GROUP_NODES);
                break;
            }
            if (*n_inner == cap) {
                int *grown = realloc(found, (cap *= 2) * sizeof *grown);
                if (!grown) {
                    free(found);
                    return rd_errorf(err, RD_E_NOMEM, "out of memory");
                }
                found = grown;
            }
            found[(*n_inner)++] = x;
            nodes[n_nodes++] = xi.producer;
        }
    }
    if (why[0]) {
        free(found);
        *n_inner = 0;
        return RD_OK;
    }
    *inner = found;
    return RD_OK;
}

/* ---- applying ------------------------------------------------------------------------------------- */

static const char *value_name(const rd_sim *s, int v)
{
    rd_value_info vi;
    rd_model_value(rd_sim_model(s), (size_t)v, &vi);
    return vi.name;
}

rd_status an_bt_apply_groups(an_built *b, rd_sim *s, rd_error *err)
{
    const rd_model *m = rd_sim_model(s);
    size_t nv = rd_model_value_count(m);
    int *owner = malloc((nv + 1) * sizeof *owner);
    if (!owner)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    for (size_t v = 0; v < nv; v++)
        owner[v] = -1;
    /* a tensor inside two groups (two ops of the built model read it, neither stores it) stays materialised */
    for (size_t gi = 0; gi < b->n_groups; gi++)
        for (size_t k = 0; k < b->groups[gi].n_inner; k++) {
            int v = b->groups[gi].inner[k];
            owner[v] = owner[v] == -1 ? (int)gi : -2;
        }
    rd_status st = rd_sim_clear_groups(s, err);
    for (size_t gi = 0; gi < b->n_groups && st == RD_OK; gi++) {
        bt_group *g = &b->groups[gi];
        if (g->out < 0)
            continue;
        const char **names = calloc(g->n_inner + 1, sizeof *names);
        if (!names) {
            st = rd_errorf(err, RD_E_NOMEM, "out of memory");
            break;
        }
        size_t n = 0;
        for (size_t k = 0; k < g->n_inner; k++) {
            if (owner[g->inner[k]] == -2) {
                an_bt_note(b, "'%s' is read by two ops of the built model and stored by none: kept materialised",
                           value_name(s, g->inner[k]));
                continue;
            }
            names[n++] = value_name(s, g->inner[k]);
        }
        rd_error e = {0};
        rd_status gs = rd_sim_set_group(s, g->op, value_name(s, g->out), names, n, &e);
        free(names);
        if (gs == RD_E_NOMEM)
            st = rd_errorf(err, RD_E_NOMEM, "out of memory");
        else if (gs != RD_OK)
            snprintf(g->note, sizeof g->note, "group not reproduced (%s): our passes' decision kept", e.msg);
        else
            g->applied = true;
    }
    free(owner);
    return st;
}

rd_status an_bt_apply_decisions(an_built *b, rd_sim *s, bool params, rd_error *err)
{
    rd_status st = RD_OK;
    for (size_t i = 0; i < b->n_decisions && st == RD_OK; i++) {
        const bt_decision *d = &b->decisions[i];
        rd_sim_tensor t;
        if (rd_sim_tensor_get(s, d->name, &t, NULL) != RD_OK || !t.materialized)
            continue; /* fused away in this simulation: the group carries it */
        if (!params) {
            st = rd_sim_set_precision(s, d->name, d->prec, err);
            if (st == RD_OK && d->via_f16)
                st = rd_sim_set_via_float16(s, d->name, true, err);
        }
        if (st == RD_OK && params && d->has_q16)
            st = rd_sim_set_qparams16(s, d->name, d->scale, d->zp, err);
        else if (st == RD_OK && params && d->has_q8)
            st = rd_sim_set_qparams(s, d->name, d->scale, d->zp, err);
        if (st != RD_OK)
            rd_error_prefix(err, "%s: tensor '%s' (%s)", an_built_path(b), d->name, d->why);
    }
    return st;
}

bt_convert *an_bt_add_convert(an_built *b, const rd_model *m, int value, const char *name, rd_error *err)
{
    bt_convert *grown = realloc(b->converts, (b->n_converts + 1) * sizeof *grown);
    if (!grown) {
        rd_errorf(err, RD_E_NOMEM, "out of memory");
        return NULL;
    }
    b->converts = grown;
    bt_convert *c = &b->converts[b->n_converts++];
    memset(c, 0, sizeof *c);
    c->name = name;
    rd_value_info vi;
    rd_model_value(m, (size_t)value, &vi);
    snprintf(c->value, sizeof c->value, "%s", vi.name);
    return c;
}

void an_bt_clear_mapping(an_built *b)
{
    for (size_t i = 0; i < b->n_groups; i++)
        free(b->groups[i].inner);
    free(b->groups);
    b->groups = NULL;
    b->n_groups = 0;
    for (size_t i = 0; i < b->n_decisions; i++)
        free(b->decisions[i].name);
    free(b->decisions);
    b->decisions = NULL;
    b->n_decisions = 0;
    free(b->converts);
    b->converts = NULL;
    b->n_converts = 0;
    free(b->weights);
    b->weights = NULL;
    b->n_weights = 0;
    for (size_t i = 0; i < b->n_calibrated; i++)
        free(b->calibrated[i]);
    free(b->calibrated);
    b->calibrated = NULL;
    b->n_calibrated = 0;
    b->n_io_ops = 0;
}

/* Materialised float tensors of s without parameters from the files: calibration's. */
static rd_status list_uncovered(an_built *b, rd_sim *s, rd_error *err)
{
    const rd_model *m = rd_sim_model(s);
    for (size_t v = 0; v < rd_model_value_count(m); v++) {
        rd_value_info vi;
        rd_model_value(m, v, &vi);
        rd_sim_tensor t;
        if (vi.is_constant || rd_sim_tensor_get(s, vi.name, &t, NULL) != RD_OK || !t.materialized ||
            t.value != (int)v || t.precision == RD_PREC_FP16 || t.precision == RD_PREC_FP32)
            continue;
        bool covered = false;
        for (size_t i = 0; i < b->n_decisions && !covered; i++)
            covered = strcmp(b->decisions[i].name, vi.name) == 0 && (b->decisions[i].has_q8 || b->decisions[i].has_q16);
        if (covered)
            continue;
        char **grown = realloc(b->calibrated, (b->n_calibrated + 1) * sizeof *grown);
        if (!grown)
            return rd_errorf(err, RD_E_NOMEM, "out of memory");
        b->calibrated = grown;
        if (!(b->calibrated[b->n_calibrated] = strdup(vi.name)))
            return rd_errorf(err, RD_E_NOMEM, "out of memory");
        b->n_calibrated++;
    }
    return RD_OK;
}

rd_status an_built_apply(an_built *b, rd_sim *s, size_t *n_uncovered, rd_error *err)
{
    *n_uncovered = 0;
    an_bt_clear_mapping(b);
    rd_status st = b->rknn ? an_bt_rknn_map(b, s, err) : an_bt_log_map(b, s, err);
    if (st == RD_OK)
        st = an_bt_apply_groups(b, s, err);
    if (st == RD_OK)
        st = an_bt_apply_decisions(b, s, false, err);
    if (st == RD_OK)
        st = an_bt_apply_decisions(b, s, true, err);
    if (st == RD_OK && b->rknn)
        st = an_bt_rknn_weights(b, s, err);
    if (st == RD_OK)
        st = list_uncovered(b, s, err);
    *n_uncovered = b->n_calibrated;
    return st;
}

rd_status an_built_reapply(an_built *b, rd_sim *s, rd_error *err)
{
    return an_bt_apply_decisions(b, s, true, err);
}

/* ---- loading and checks --------------------------------------------------------------------------- */

/* Platforms one build serves (RKNN names its files RK3566_RK3568, and its rv1106 target covers rv1103). */
static const char *platform_family(const char *p)
{
    if (strcasecmp(p, "rk3566") == 0 || strcasecmp(p, "rk3568") == 0)
        return "rk3566";
    if (strcasecmp(p, "rv1103") == 0 || strcasecmp(p, "rv1106") == 0)
        return "rv1106";
    return p;
}

static bool same_platform(const char *a, const char *b)
{
    return strcasecmp(platform_family(a), platform_family(b)) == 0;
}

static rd_status check_platform(const an_built *b, const char *what, const char *theirs, rd_error *err)
{
    if (!b->req.platform || !theirs || !theirs[0] || same_platform(b->req.platform, theirs))
        return RD_OK;
    return rd_errorf(err, RD_E_PARSE,
                     "%s was built for %s, the analysis is for %s (--platform/--target): "
                     "give the file built for %s, or --platform %s",
                     what, theirs, b->req.platform, b->req.platform, theirs);
}

static bool same_values(const rd_channel_values *cv, const double *v, size_t n)
{
    if (cv->n != n && !(cv->n == 1 && n > 0))
        return false;
    for (size_t i = 0; i < n; i++) {
        double mine = cv->v[cv->n == 1 ? 0 : i];
        if (!(mine == v[i] || (v[i] != 0 && fabs(mine - v[i]) <= 1e-6 * fabs(v[i]))))
            return false;
    }
    return true;
}

static void list_values(const double *v, size_t n, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && used + 16 < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%g", i ? "," : "", v[i]);
}

/* mean/std of the .rknn's attrs into cfg, or a refusal when cfg already has others. */
static rd_status take_mean_std(an_built *b, const rd_model *m, rd_rknn_config *cfg, rd_error *err)
{
    const rd_rknn_info *info = rd_rknn_info_get(b->rknn);
    size_t n_in = rd_model_input_count(m);
    const bool given = cfg->n_mean || cfg->n_std;
    for (size_t i = 0; i < n_in && i < RD_MAX_MODEL_INPUTS; i++) {
        rd_value_info vi;
        rd_model_value(m, (size_t)rd_model_input(m, i), &vi);
        const rd_rknn_io_attr *at = NULL;
        for (size_t k = 0; k < info->n_io_attrs && !at; k++)
            if (!info->io_attrs[k].is_output && strcmp(info->io_attrs[k].name, vi.name) == 0)
                at = &info->io_attrs[k];
        if (!at || (!at->n_mean && !at->n_std) || at->n_mean > RD_MAX_INPUT_CHANNELS ||
            at->n_std > RD_MAX_INPUT_CHANNELS)
            continue;
        if (given) { /* an input the flags or the config leave out has mean 0 and std 1 */
            const rd_channel_values zero = {.n = 1, .v = {0.0f}}, one = {.n = 1, .v = {1.0f}};
            const rd_channel_values *um = i < cfg->n_mean && cfg->mean[i].n ? &cfg->mean[i] : &zero;
            const rd_channel_values *us = i < cfg->n_std && cfg->std[i].n ? &cfg->std[i] : &one;
            bool ok = (!at->n_mean || same_values(um, at->mean, at->n_mean)) &&
                      (!at->n_std || same_values(us, at->std, at->n_std));
            if (!ok) {
                char mb[256], sb[256];
                list_values(at->mean, at->n_mean, mb, sizeof mb);
                list_values(at->std, at->n_std, sb, sizeof sb);
                return rd_errorf(err, b->req.mean_std_from_flags ? RD_E_USAGE : RD_E_PARSE,
                                 "%s was built with mean %s and std %s for input '%s'; %s gives other values: the "
                                 "simulation would not be the built model. Drop them (the .rknn's are used) or give "
                                 "--mean %s --std %s",
                                 b->rknn_path, mb, sb, vi.name,
                                 b->req.mean_std_from_flags ? "--mean/--std" : "the config's mean_values/std_values",
                                 mb, sb);
            }
            continue;
        }
        rd_channel_values *mv = &cfg->mean[i], *sv = &cfg->std[i];
        memset(mv, 0, sizeof *mv);
        memset(sv, 0, sizeof *sv);
        for (size_t k = 0; k < at->n_mean; k++)
            mv->v[mv->n++] = (float)at->mean[k];
        for (size_t k = 0; k < at->n_std; k++) {
            if (at->std[k] == 0)
                return rd_errorf(err, RD_E_PARSE, "%s: input '%s': a std value of 0 in attrs", b->rknn_path, vi.name);
            sv->v[sv->n++] = (float)at->std[k];
        }
        cfg->n_mean = cfg->n_std = n_in < RD_MAX_MODEL_INPUTS ? n_in : RD_MAX_MODEL_INPUTS;
        b->n_mean_from_attrs++;
    }
    /* inputs without attrs keep mean 0 / std 1 */
    for (size_t i = 0; b->n_mean_from_attrs && i < cfg->n_mean; i++) {
        if (!cfg->mean[i].n)
            cfg->mean[i] = (rd_channel_values){.n = 1, .v = {0.0f}};
        if (!cfg->std[i].n)
            cfg->std[i] = (rd_channel_values){.n = 1, .v = {1.0f}};
    }
    return RD_OK;
}

/* The dtype a .rknn was built with, from its activations: int16 ones mean w16a16i, int8 ones w8a8, only
   float16 ones float16. */
static rd_qdtype rknn_dtype(const rd_rknn_graph *g)
{
    bool i8 = false, i16 = false, f16 = false;
    for (size_t i = 0; i < g->n_tensors; i++) {
        const rd_rknn_tensor *t = &g->tensors[i];
        if (t->role != RD_RKNN_ROLE_INTERNAL && t->role != RD_RKNN_ROLE_OUTPUT)
            continue;
        i8 = i8 || t->dtype == RD_DT_I8 || t->dtype == RD_DT_U8;
        i16 = i16 || t->dtype == RD_DT_I16;
        f16 = f16 || t->dtype == RD_DT_F16;
    }
    return i16 ? RD_QDT_W16A16I : i8 ? RD_QDT_W8A8 : f16 ? RD_QDT_FLOAT16 : RD_QDT_W8A8;
}

static rd_status take_dtype(an_built *b, rd_qdtype dt, rd_rknn_config *cfg, rd_error *err)
{
    b->dtype = dt;
    if (b->req.dtype_given && cfg->dtype != dt)
        return rd_errorf(err, RD_E_PARSE,
                         "%s was built as %s; --dtype / quantized_dtype says %s: drop it (the built "
                         "model's is used)",
                         an_built_path(b), rd_qdtype_name(dt), rd_qdtype_name(cfg->dtype));
    b->dtype_from_file = !b->req.dtype_given;
    cfg->dtype = dt;
    cfg->quantize = dt != RD_QDT_FLOAT16 && dt != RD_QDT_FLOAT32;
    cfg->method = RD_QMETHOD_CHANNEL;
    return RD_OK;
}

rd_status an_built_load(const an_built_request *req, const rd_model *m, rd_rknn_config *cfg, an_built **out,
                        rd_error *err)
{
    *out = NULL;
    an_built *b = calloc(1, sizeof *b);
    if (!b)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    b->req = *req;
    b->target = b->toolkit = b->compiler = "";
    rd_status st = RD_OK;
    if (req->rknn_path && !(b->rknn_path = strdup(req->rknn_path)))
        st = rd_errorf(err, RD_E_NOMEM, "out of memory");
    if (st == RD_OK && !(b->model_path = strdup(req->model_path ? req->model_path : "the model")))
        st = rd_errorf(err, RD_E_NOMEM, "out of memory");
    if (st == RD_OK && req->log_path && !(b->log_path = strdup(req->log_path)))
        st = rd_errorf(err, RD_E_NOMEM, "out of memory");
    if (st == RD_OK && req->rknn_path) {
        st = rd_rknn_load(req->rknn_path, NULL, &b->rknn, err);
        if (st == RD_OK && rd_rknn_graph_count(b->rknn) != 1)
            st = rd_errorf(err, RD_E_UNSUPPORTED, "%s has %zu graphs: only one-graph models are simulated",
                           req->rknn_path, rd_rknn_graph_count(b->rknn));
        if (st == RD_OK) {
            const rd_rknn_info *info = rd_rknn_info_get(b->rknn);
            b->g = rd_rknn_graph_at(b->rknn, 0);
            b->target = info->target_platform ? info->target_platform : "";
            b->toolkit = info->toolkit_version ? info->toolkit_version : "";
            b->compiler = info->compiler_version ? info->compiler_version : "";
            st = check_platform(b, req->rknn_path, b->target, err);
        }
        if (st == RD_OK)
            st = an_bt_rknn_check(b, m, err);
        if (st == RD_OK)
            st = take_mean_std(b, m, cfg, err);
        if (st == RD_OK)
            st = take_dtype(b, rknn_dtype(b->g), cfg, err);
    }
    if (st == RD_OK && req->log_path) {
        st = rd_rknn_log_load(req->log_path, &b->log, err);
        if (st == RD_OK) {
            b->bl = rd_rknn_log_get(b->log);
            st = check_platform(b, req->log_path, b->bl->target_platform, err);
        }
        if (st == RD_OK)
            st = an_bt_log_check(b, m, err);
        if (st == RD_OK && !b->rknn) {
            b->target = b->bl->target_platform ? b->bl->target_platform : "";
            b->toolkit = b->bl->toolkit_version ? b->bl->toolkit_version : "";
            b->compiler = b->bl->librknnc_version ? b->bl->librknnc_version : "";
        }
    }
    if (st != RD_OK) {
        an_built_destroy(b);
        return st;
    }
    *out = b;
    return RD_OK;
}

void an_built_destroy(an_built *b)
{
    if (!b)
        return;
    an_bt_clear_mapping(b);
    for (size_t i = 0; i < b->n_notes; i++)
        free(b->notes[i]);
    free(b->notes);
    free(b->tensors);
    rd_rknn_destroy(b->rknn);
    rd_rknn_log_destroy(b->log);
    free(b->rknn_path);
    free(b->log_path);
    free(b->model_path);
    free(b);
}

const char *an_built_path(const an_built *b)
{
    return b->rknn_path ? b->rknn_path : b->log_path ? b->log_path : "";
}

bool an_built_has_rknn(const an_built *b)
{
    return b->rknn != NULL;
}

const char *an_built_platform(const an_built *b)
{
    return b->target;
}

bool an_built_precision(const an_built *b, const char *tensor, rd_prec *out, bool *via_f16, const char **why)
{
    for (size_t i = 0; i < b->n_decisions; i++) {
        const bt_decision *d = &b->decisions[i];
        if (strcmp(d->name, tensor) != 0)
            continue;
        *out = d->prec;
        *via_f16 = d->via_f16;
        *why = d->why;
        return true;
    }
    return false;
}
