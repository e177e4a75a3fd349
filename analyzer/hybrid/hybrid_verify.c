/*
 * hybrid_verify.c: `rknn-diag hybrid verify MODEL --cfg FILE --runtime-dumps DIR`: did the board run in
 * float16 what the cfg's custom_quantize_layers asked for? Evidence per tensor, from its dump: the dtype
 * of an RKNN_DUMP_QUANT=1 dump (float16 vs int8), and for float32 dumps the values themselves (on the
 * tensor's int8 grid scale*(q-zp) for more than 99% of the non-zero values: it ran in int8). With --rknn or
 * --rknn-build-log instead of dumps, the evidence is what the toolkit built (built.h: each tensor's dtype in
 * the .rknn, the DataType of the log's layer table). docs/hybrid.md.
 */
#include "term_text.h"
#include "json_out.h"
#include "cli_internal.h"
#include "dumps.h"
#include "config_model.h"
#include "quant_setup.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int an_hybrid_verify(an_cmd_ctx *ctx, const char *model_path, an_quant_opts *q, const rd_load_options *lopt,
                     const char *dumps_dir, bool json);

#define GRID_TOL 1e-3   /* distance from an integer code, in quantization steps */
#define GRID_SHARE 0.99 /* share of non-zero values on the grid that means int8 */

typedef enum ran_kind { RAN_FP16, RAN_INT8, RAN_NO_DUMP, RAN_UNKNOWN } ran_kind;

typedef struct verdict {
    ran_kind ran;
    const char *file; /* the dump used, NULL when none */
    char evidence[300];
} verdict;

static const char *ran_name(ran_kind k)
{
    return k == RAN_FP16 ? "float16" : k == RAN_INT8 ? "int8" : k == RAN_NO_DUMP ? "no dump" : "unknown";
}

/* Share of the non-zero values of t on the int8 grid of (scale, zp); -1 when t has none. */
static double grid_share(const rd_tensor *t, float scale, int32_t zp)
{
    int64_t n = rd_tensor_numel(t), nonzero = 0, on = 0;
    const float *x = t->data;
    for (int64_t i = 0; i < n; i++) {
        if (x[i] == 0.0f || !isfinite(x[i]))
            continue;
        nonzero++;
        double code = (double)x[i] / (double)scale + (double)zp;
        if (fabs(code - nearbyint(code)) <= GRID_TOL)
            on++;
    }
    return nonzero ? (double)on / (double)nonzero : -1.0;
}

/* How value ran on the board, from its dump; s holds every tensor in int8 with the cfg's parameters. */
static void judge(const rd_sim *s, const an_dump_set *ds, int value, verdict *v)
{
    memset(v, 0, sizeof *v);
    const an_dump_name *dn = an_dump_set_name(ds, value, &v->file);
    if (!dn) {
        v->ran = RAN_NO_DUMP;
        snprintf(v->evidence, sizeof v->evidence,
                 "no dump of it was read (see the mapping: --json lists none; "
                 "`accuracy --runtime-dumps` writes map_name_to_file.txt)");
        return;
    }
    if (dn->dtype == RD_DT_F16) {
        v->ran = RAN_FP16;
        snprintf(v->evidence, sizeof v->evidence, "dumped as float16 (RKNN_DUMP_QUANT=1)");
        return;
    }
    if (dn->dtype == RD_DT_I8 || dn->dtype == RD_DT_U8) {
        v->ran = RAN_INT8;
        snprintf(v->evidence, sizeof v->evidence, "dumped as %s (RKNN_DUMP_QUANT=1)", rd_dtype_get(dn->dtype)->name);
        return;
    }
    if (dn->dtype != RD_DT_F32) {
        v->ran = RAN_UNKNOWN;
        snprintf(v->evidence, sizeof v->evidence, "dumped as %s: neither float16 nor int8",
                 rd_dtype_get(dn->dtype)->name);
        return;
    }
    rd_value_info vi;
    rd_model_value(rd_sim_model(s), (size_t)value, &vi);
    rd_sim_tensor info;
    const rd_tensor *t = an_dump_set_tensor((void *)ds, value);
    if (!t || rd_sim_tensor_get(s, vi.name, &info, NULL) != RD_OK || !info.quantized || !(info.scale > 0)) {
        v->ran = RAN_UNKNOWN;
        snprintf(v->evidence, sizeof v->evidence,
                 "float32 dump, but the cfg gives no int8 parameters to test it "
                 "against");
        return;
    }
    double share = grid_share(t, info.scale, info.zero_point);
    if (share < 0) {
        v->ran = RAN_UNKNOWN;
        snprintf(v->evidence, sizeof v->evidence, "float32 dump of zeros only: no evidence");
        return;
    }
    v->ran = share > GRID_SHARE ? RAN_INT8 : RAN_FP16;
    snprintf(v->evidence, sizeof v->evidence,
             "float32 dump: %.1f%% of the non-zero values on the int8 grid "
             "(scale %g, zero point %d)",
             100.0 * share, (double)info.scale, (int)info.zero_point);
}

/* How the built model holds value (s: the built model's graph, an_quant_built_graph). */
static void judge_built(const rd_sim *s, const an_built *b, int value, verdict *v)
{
    memset(v, 0, sizeof *v);
    rd_value_info vi;
    rd_model_value(rd_sim_model(s), (size_t)value, &vi);
    rd_prec p;
    bool via_f16 = false;
    const char *why = "";
    if (!an_built_precision(b, vi.name, &p, &via_f16, &why)) {
        v->ran = RAN_UNKNOWN;
        snprintf(v->evidence, sizeof v->evidence,
                 "%s says nothing of it (rknn_mapping.txt of `accuracy --rknn` "
                 "lists what it maps)",
                 an_built_path(b));
        return;
    }
    v->ran = p == RD_PREC_FP16 || via_f16 ? RAN_FP16 : p == RD_PREC_INT8 ? RAN_INT8 : RAN_UNKNOWN;
    if (via_f16)
        snprintf(v->evidence, sizeof v->evidence,
                 "float16 in the build (held in %s for its readers: exDataConvert): "
                 "%s",
                 rd_prec_name(p), why);
    else
        snprintf(v->evidence, sizeof v->evidence, "%s in the build: %s", rd_prec_name(p), why);
}

/* The verdict on value from the evidence given: the board's dumps or the built model. */
static void judge_any(const rd_sim *s, const an_dump_set *ds, const an_built *b, int value, verdict *v)
{
    if (ds)
        judge(s, ds, value, v);
    else
        judge_built(s, b, value, v);
}

typedef struct req {
    const char *key;      /* the cfg's name */
    const char *tensor;   /* the simulation's tensor */
    int value;            /* the value carrying its data (the fused group's last tensor), -1 if unknown */
    char carried_by[256]; /* set when another tensor carries it */
    verdict v;
} req;

/* Back to int8 with the cfg's parameters, so that int8 dumps dequantize and float32 dumps have a grid. */
static rd_status back_to_int8(rd_sim *s, const rd_qcfg *cfg, req *r, rd_error *err)
{
    rd_status st = rd_sim_set_precision(s, r->tensor, RD_PREC_INT8, err);
    rd_sim_tensor info;
    if (st == RD_OK)
        st = rd_sim_tensor_get(s, r->tensor, &info, err);
    if (st != RD_OK)
        return st;
    const rd_qcfg_param *p = rd_qcfg_find(cfg, r->key);
    if (!info.quantized && p && (p->has & RD_QCFG_HAS_SCALE) && (p->has & RD_QCFG_HAS_ZERO_POINT) && p->n == 1)
        st = rd_sim_set_qparams(s, r->tensor, p->scale[0], p->zero_point[0], err);
    return st;
}

static void locate(const rd_sim *s, req *r)
{
    rd_sim_tensor info;
    r->value = -1;
    if (rd_sim_tensor_get(s, r->tensor, &info, NULL) != RD_OK)
        return;
    r->value = info.value;
    if (!info.materialized && info.fused_into >= 0) {
        r->value = info.fused_into;
        rd_value_info vi;
        rd_model_value(rd_sim_model(s), (size_t)info.fused_into, &vi);
        snprintf(r->carried_by, sizeof r->carried_by, "%s", vi.name);
    }
}

static bool is_requested_value(const req *reqs, size_t n, int value)
{
    for (size_t i = 0; i < n; i++)
        if (reqs[i].value == value)
            return true;
    return false;
}

static void print_text(an_cmd_ctx *ctx, const char *cfg_path, const char *source, bool built, const req *reqs, size_t n,
                       const int *extra, const verdict *extra_v, size_t n_extra, const rd_sim *s)
{
    fprintf(ctx->out, "hybrid verify: %zu tensor%s asked to be float16 in %s; %s\n\n", n, n == 1 ? "" : "s", cfg_path,
            source);
    fprintf(ctx->out, "%-40s %-8s %s\n", "tensor", "ran", "evidence");
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        const req *r = &reqs[i];
        bad += r->v.ran != RAN_FP16;
        fprintf(ctx->out, "%-40s %-8s %s%s%s%s%s\n", RD_TEXT_SHOWN(r->key), ran_name(r->v.ran),
                r->v.ran == RAN_FP16 ? "" : "NOT float16: ", RD_TEXT_SHOWN(r->v.evidence), r->v.file ? " [" : "",
                r->v.file ? RD_TEXT_SHOWN(r->v.file) : "", r->v.file ? "]" : "");
        if (r->carried_by[0])
            fprintf(ctx->out, "%-40s %-8s fused: its data is %s with its group's last tensor '%s'\n", "", "",
                    built ? "held" : "dumped", RD_TEXT_SHOWN(r->carried_by));
    }
    if (n_extra) {
        fprintf(ctx->out, "\n%s in float16 although the cfg did not ask for it:\n", built ? "built" : "ran");
        for (size_t i = 0; i < n_extra; i++) {
            rd_value_info vi;
            rd_model_value(rd_sim_model(s), (size_t)extra[i], &vi);
            fprintf(ctx->out, "%-40s %-8s %s%s%s%s\n", RD_TEXT_SHOWN(vi.name), "float16",
                    RD_TEXT_SHOWN(extra_v[i].evidence), extra_v[i].file ? " [" : "",
                    extra_v[i].file ? RD_TEXT_SHOWN(extra_v[i].file) : "", extra_v[i].file ? "]" : "");
        }
    }
    fprintf(ctx->out, "\n");
    if (!n) {
        fprintf(ctx->out, "result: the cfg asks for no float16 tensor; %zu built in float16\n", n_extra);
        return;
    }
    if (!bad) {
        fprintf(ctx->out, "result: all %zu requested tensors %s float16\n", n, built ? "are built in" : "ran in");
        return;
    }
    fprintf(ctx->out, "result: %zu of %zu requested tensors not shown to %s float16:", bad, n,
            built ? "be built in" : "run in");
    for (size_t i = 0; i < n; i++)
        if (reqs[i].v.ran != RAN_FP16)
            fprintf(ctx->out, " %s (%s)", RD_TEXT_SHOWN(reqs[i].key), ran_name(reqs[i].v.ran));
    if (built)
        fprintf(ctx->out, "\n(the build did not take the cfg? rebuild with hybrid_quantization_step2 from this cfg, "
                          "under the toolkit's tensor names: `quantize --rknn-cfg` / `hybrid search --rknn-cfg`)\n");
    else
        fprintf(ctx->out, "\n(the board ignored the cfg? rebuild the .rknn with hybrid_quantization_step2 from this "
                          "cfg, and dump with RKNN_DUMP_QUANT=1 for the clearest evidence)\n");
}

/* Prints the verdicts as JSON; AN_EXIT_INPUT with the error when memory ran out. */
static int print_json(an_cmd_ctx *ctx, const char *cfg_path, const char *dir, const char *built_path, const req *reqs,
                      size_t n, const int *extra, const verdict *extra_v, size_t n_extra, const rd_sim *s)
{
    bool ok = true;
    cJSON *root = cJSON_CreateObject(), *arr = cJSON_CreateArray(), *ex = cJSON_CreateArray();
    an_json_add_str(root, "cfg", cfg_path, &ok);
    an_json_add(root, "runtime_dumps", dir ? cJSON_CreateString(dir) : cJSON_CreateNull(), &ok);
    an_json_add(root, "built_model", built_path ? cJSON_CreateString(built_path) : cJSON_CreateNull(), &ok);
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        const req *r = &reqs[i];
        cJSON *o = cJSON_CreateObject();
        bad += r->v.ran != RAN_FP16;
        an_json_add_str(o, "tensor", r->key, &ok);
        an_json_add_str(o, "ran", ran_name(r->v.ran), &ok);
        an_json_add_bool(o, "ok", r->v.ran == RAN_FP16, &ok);
        an_json_add_str(o, "evidence", r->v.evidence, &ok);
        an_json_add(o, "dump", r->v.file ? cJSON_CreateString(r->v.file) : cJSON_CreateNull(), &ok);
        if (r->carried_by[0])
            an_json_add_str(o, "carried_by", r->carried_by, &ok);
        an_json_push(arr, o, &ok);
    }
    for (size_t i = 0; i < n_extra; i++) {
        rd_value_info vi;
        rd_model_value(rd_sim_model(s), (size_t)extra[i], &vi);
        cJSON *o = cJSON_CreateObject();
        an_json_add_str(o, "tensor", vi.name, &ok);
        an_json_add_str(o, "evidence", extra_v[i].evidence, &ok);
        an_json_add(o, "dump", extra_v[i].file ? cJSON_CreateString(extra_v[i].file) : cJSON_CreateNull(), &ok);
        an_json_push(ex, o, &ok);
    }
    an_json_add(root, "requested", arr, &ok);
    an_json_add_num(root, "not_float16", (double)bad, &ok);
    an_json_add(root, "float16_not_requested", ex, &ok);
    return an_emit_json(ctx, root, ok);
}

int an_hybrid_verify(an_cmd_ctx *ctx, const char *model_path, an_quant_opts *q, const rd_load_options *lopt,
                     const char *dumps_dir, bool json)
{
    if (!q->qcfg_path)
        return an_usage(ctx, "verify needs --cfg FILE (the .quantization.cfg whose custom_quantize_layers to check)");
    const bool built = an_quant_wants_built(q);
    if (!dumps_dir && !built)
        return an_usage(ctx, "verify needs --runtime-dumps DIR (the board's dumps, pulled with `rknn-diag pull` or "
                             "written by `accuracy --target`), or what the toolkit built: --rknn MODEL.rknn or "
                             "--rknn-build-log FILE");
    if (dumps_dir && built)
        return an_usage(ctx, "verify takes one kind of evidence: --runtime-dumps DIR, or --rknn / --rknn-build-log "
                             "(run it twice for both)");
    rd_error err = {0};
    rd_qcfg cfg;
    rd_model *m = NULL;
    rd_sim *s = NULL;
    an_dump_set *ds = NULL;
    req *reqs = NULL;
    int *extra = NULL;
    verdict *extra_v = NULL;
    size_t n = 0, n_extra = 0;
    int rc = AN_EXIT_INPUT;
    rd_status st = rd_qcfg_load(q->qcfg_path, &cfg, &err);
    an_model_request mreq = {.command = "hybrid verify",
                             .path = model_path,
                             .shapes = lopt->input_shapes,
                             .n_shapes = lopt->n_input_shapes,
                             .errs = ctx->errs,
                             .dynamic_refusal = "the board's dumps are of one input shape: give it with --input-shape "
                                                "(or subgraphs.input_size_list)"};
    if (st == RD_OK)
        st = an_model_load_configured(q, &mreq, &m, &err);
    if (st == RD_OK) /* the built model's graph needs no parameters; the dumps are read with the cfg's */
        st = built ? an_quant_built_graph(q, m, &s, &err) : an_quant_build_sim(q, m, NULL, ctx->errs, false, &s, &err);
    if (st == RD_OK) {
        reqs = calloc(cfg.n_layers + 1, sizeof *reqs);
        if (!reqs)
            st = rd_errorf(&err, RD_E_NOMEM, "out of memory");
    }
    for (size_t i = 0; st == RD_OK && i < cfg.n_layers; i++) {
        if (cfg.layers[i].dtype != RD_DT_F16)
            continue;
        req *r = &reqs[n];
        r->key = cfg.layers[i].name;
        r->tensor = an_quant_match_name(s, r->key);
        if (!r->tensor) {
            st = rd_errorf(&err, RD_E_PARSE, "%s line %d: custom_quantize_layers names '%s', which %s does not have",
                           q->qcfg_path, cfg.layers[i].line, r->key, model_path);
            break;
        }
        n++;
    }
    if (st == RD_OK && n == 0 && !built) /* a build still answers the reverse question */
        st = rd_errorf(&err, RD_E_PARSE, "%s asks for no float16 tensor (custom_quantize_layers): nothing to verify",
                       q->qcfg_path);
    for (size_t i = 0; st == RD_OK && !built && i < n; i++)
        st = back_to_int8(s, &cfg, &reqs[i], &err);
    const rd_platform_info *plat = q->platform ? rd_platform_find(q->platform) : NULL;
    if (st == RD_OK && !built)
        st = an_dump_set_load(dumps_dir, plat, s, &ds, &err);
    if (st == RD_OK && !built && an_dump_set_mapped(ds) == 0)
        st = rd_errorf(&err, RD_E_PARSE, "no dump in %s maps to a tensor of %s (dumps of another model?)", dumps_dir,
                       model_path);
    if (st != RD_OK) {
        rc = an_fail(ctx, &err);
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        locate(s, &reqs[i]);
        judge_any(s, ds, q->built, reqs[i].value, &reqs[i].v);
    }
    /* int8 tensors of the cfg that ran (or were built) in float16 anyway */
    size_t n_values = rd_model_value_count(rd_sim_model(s));
    extra = calloc(n_values + 1, sizeof *extra);
    extra_v = calloc(n_values + 1, sizeof *extra_v);
    if (!extra || !extra_v) {
        rd_errorf(&err, RD_E_NOMEM, "out of memory");
        rc = an_fail(ctx, &err);
        goto out;
    }
    for (size_t v = 0; v < n_values; v++) {
        if ((ds && !an_dump_set_name(ds, (int)v, NULL)) || is_requested_value(reqs, n, (int)v))
            continue;
        rd_value_info vi;
        rd_model_value(rd_sim_model(s), v, &vi);
        rd_sim_tensor info;
        if (rd_sim_tensor_get(s, vi.name, &info, NULL) != RD_OK || info.value < 0 || !info.materialized ||
            (!built && (info.precision != RD_PREC_INT8 || !info.quantized)))
            continue;
        verdict vd;
        judge_any(s, ds, q->built, (int)v, &vd);
        if (vd.ran == RAN_FP16) {
            extra[n_extra] = (int)v;
            extra_v[n_extra++] = vd;
        }
    }
    char source[4400];
    if (built)
        snprintf(source, sizeof source, "the build %s", an_built_path(q->built));
    else
        snprintf(source, sizeof source, "board dumps %s (%zu read, %zu mapped)", dumps_dir, an_dump_set_count(ds),
                 an_dump_set_mapped(ds));
    rc = AN_EXIT_OK;
    if (json)
        rc = print_json(ctx, q->qcfg_path, dumps_dir, built ? an_built_path(q->built) : NULL, reqs, n, extra, extra_v,
                        n_extra, s);
    else
        print_text(ctx, q->qcfg_path, source, built, reqs, n, extra, extra_v, n_extra, s);
    for (size_t i = 0; rc == AN_EXIT_OK && i < n; i++)
        if (reqs[i].v.ran != RAN_FP16)
            rc = AN_EXIT_GATE;
out:
    free(extra);
    free(extra_v);
    free(reqs);
    an_dump_set_destroy(ds);
    rd_sim_destroy(s);
    rd_model_destroy(m);
    rd_qcfg_fini(&cfg);
    return rc;
}
