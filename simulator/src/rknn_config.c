/* rknn_config.c: the rknn_convert model config (model_config.yml), read with libyaml, and its checks.
 *
 * Layout (docs/config.md): models: {name, platform, model_file_path, quantize, dataset, configs: {...},
 * subgraphs: {input_size_list, inputs, outputs}}. configs holds rknn.config() options. Every option
 * RKNN-Toolkit2 2.x knows is read: the ones the simulation applies into the struct, the ones that cannot
 * change a result as notes saying why, the ones set to something not simulated refused with the reason
 * (RD_E_UNSUPPORTED). A key nobody knows is a note too ("ignored", with the closest known key), so an
 * option never goes unapplied without a word. */
#include "internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#define MAX_CONFIG_BYTES ((size_t)1 << 20)

void rd_rknn_config_init(rd_rknn_config *c)
{
    memset(c, 0, sizeof *c);
    c->dtype = RD_QDT_W8A8;
    c->algorithm = RD_QALGO_NORMAL;
    c->method = RD_QMETHOD_CHANNEL;
    c->optimization_level = 3;
}

static void free_strings(char **s, size_t n)
{
    for (size_t i = 0; s && i < n; i++)
        free(s[i]);
    free(s);
}

void rd_rknn_config_fini(rd_rknn_config *c)
{
    if (!c)
        return;
    free(c->path);
    free(c->name);
    free(c->framework);
    free(c->model_file_path);
    free(c->dataset);
    free(c->target_platform);
    free(c->custom_string);
    free(c->input_size_list);
    free(c->dynamic_input);
    free_strings(c->notes, c->n_notes);
    free_strings(c->sub_inputs, c->n_sub_inputs);
    free_strings(c->sub_outputs, c->n_sub_outputs);
    rd_rknn_config_init(c);
}

typedef struct reader {
    const char *name; /* file name for messages */
    char *dir;        /* its folder, for relative paths */
    rd_rknn_config *c;
    rd_error *err;
    bool have_dtype;
} reader;

/* Errors name the file and the node's line: "file:line: message". */
#define bad(r, at, code, ...) sim_yaml_err((r)->err, code, (r)->name, at, __VA_ARGS__)

static rd_status note(const reader *r, const sim_ynode *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Keeps a "file:line: ..." note for the caller to show (library code never prints). */
static rd_status note(const reader *r, const sim_ynode *at, const char *fmt, ...)
{
    rd_rknn_config *c = r->c;
    if (c->n_notes >= RD_RKNN_CONFIG_MAX_NOTES)
        return RD_OK;
    char msg[RD_ERROR_MSG_MAX], full[RD_ERROR_MSG_MAX + 256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(full, sizeof full, "%s:%d: %s", r->name, at ? at->line : 0, msg);
    char **grown = realloc(c->notes, (c->n_notes + 1) * sizeof *grown);
    if (!grown)
        return bad(r, at, RD_E_NOMEM, "out of memory");
    c->notes = grown;
    if (!(c->notes[c->n_notes] = sim_strdup(full)))
        return bad(r, at, RD_E_NOMEM, "out of memory");
    c->n_notes++;
    return RD_OK;
}

/* Levenshtein distance of a and b, capped at 9 (close enough to suggest when small). */
static int edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 40 || lb > 40)
        return 9;
    int prev[41], cur[41];
    for (size_t j = 0; j <= lb; j++)
        prev[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
            int del = prev[j] + 1, ins = cur[j - 1] + 1;
            cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
        memcpy(prev, cur, sizeof prev);
    }
    return prev[lb] < 9 ? prev[lb] : 9;
}

/* An unknown key: a note with the known keys of its section and the closest one. */
static rd_status unknown_key(const reader *r, const sim_ynode *k, const char *key, const char *section,
                             const char *const *known, size_t n_known)
{
    const char *best = NULL;
    int best_d = 4; /* a suggestion only within 3 edits */
    char list[900] = "";
    size_t used = 0;
    for (size_t i = 0; i < n_known; i++) {
        int d = edit_distance(key, known[i]);
        if (d < best_d) {
            best_d = d;
            best = known[i];
        }
        if (used < sizeof list)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", known[i]);
    }
    if (best)
        return note(r, k, "unknown key '%s' in %s: ignored; did you mean '%s'? (known: %s)", key, section, best, list);
    return note(r, k, "unknown key '%s' in %s: ignored (known: %s)", key, section, list);
}

static rd_status get_string(const reader *r, const char *key, const sim_ynode *v, char **out)
{
    const char *s;
    if (!sim_yscalar_str(v, &s))
        return bad(r, v, RD_E_PARSE, "%s must be a string, not %s", key,
                   v->kind == SIM_Y_SCALAR ? "null" : sim_ynode_kind_name(v));
    free(*out);
    if (!(*out = sim_strdup(s)))
        return bad(r, v, RD_E_NOMEM, "out of memory");
    return RD_OK;
}

static rd_status get_path(const reader *r, const char *key, const sim_ynode *v, char **out)
{
    char *rel = NULL;
    rd_status st = get_string(r, key, v, &rel);
    if (st != RD_OK)
        return st;
    free(*out);
    *out = sim_path_join(r->dir, rel);
    free(rel);
    return *out ? RD_OK : bad(r, v, RD_E_NOMEM, "out of memory");
}

static rd_status get_bool(const reader *r, const char *key, const sim_ynode *v, bool *out)
{
    if (!sim_yscalar_bool(v, out))
        return bad(r, v, RD_E_PARSE, "%s must be true or false, not %s%s%s", key, v->kind == SIM_Y_SCALAR ? "'" : "",
                   v->kind == SIM_Y_SCALAR ? v->str : sim_ynode_kind_name(v), v->kind == SIM_Y_SCALAR ? "'" : "");
    return RD_OK;
}

/* One list of numbers (per-channel values of one input). */
static rd_status get_channels(const reader *r, const char *key, size_t input, const sim_ynode *v,
                              rd_channel_values *out)
{
    if (v->kind != SIM_Y_SEQ)
        return bad(r, v, RD_E_PARSE, "%s for input %zu must be a list of numbers, not %s", key, input,
                   sim_ynode_kind_name(v));
    if (v->n > RD_MAX_INPUT_CHANNELS)
        return bad(r, v, RD_E_LIMIT, "%s for input %zu has %zu values, more than %d", key, input, v->n,
                   RD_MAX_INPUT_CHANNELS);
    out->n = v->n;
    for (size_t i = 0; i < v->n; i++) {
        double d;
        if (!sim_yscalar_double(v->items[i], &d))
            return bad(r, v->items[i], RD_E_PARSE, "%s for input %zu: value %zu is not a number ('%s')", key, input, i,
                       v->items[i]->kind == SIM_Y_SCALAR ? v->items[i]->str : sim_ynode_kind_name(v->items[i]));
        out->v[i] = (float)d;
    }
    return RD_OK;
}

/* mean_values / std_values: a flat list (one input) or a list of lists (one per input). */
static rd_status get_per_input(const reader *r, const char *key, const sim_ynode *v, size_t *n_out,
                               rd_channel_values *out)
{
    if (sim_ynode_is_null(v)) {
        *n_out = 0;
        return RD_OK;
    }
    if (v->kind != SIM_Y_SEQ)
        return bad(r, v, RD_E_PARSE, "%s must be a list (one per channel) or a list of lists (one per input), not %s",
                   key, sim_ynode_kind_name(v));
    bool nested = v->n > 0 && v->items[0]->kind == SIM_Y_SEQ;
    if (!nested) {
        *n_out = 1;
        return get_channels(r, key, 0, v, &out[0]);
    }
    if (v->n > RD_MAX_MODEL_INPUTS)
        return bad(r, v, RD_E_LIMIT, "%s lists %zu inputs, more than %d", key, v->n, RD_MAX_MODEL_INPUTS);
    for (size_t i = 0; i < v->n; i++) {
        rd_status st = get_channels(r, key, i, v->items[i], &out[i]);
        if (st != RD_OK)
            return st;
    }
    *n_out = v->n;
    return RD_OK;
}

/* A shape written as the guide writes it: "1,3,512,512" (commas, optional spaces). */
static rd_status get_dims_text(const reader *r, const char *key, const sim_ynode *v, const char *text, rd_dims *out)
{
    const char *p = text;
    out->rank = 0;
    for (;;) {
        while (*p == ' ')
            p++;
        char *end = NULL;
        errno = 0;
        long long d = strtoll(p, &end, 10);
        if (end == p || errno || d < 0)
            return bad(r, v, RD_E_PARSE, "%s: '%s' is not a shape (integers separated by commas, like 1,3,224,224)",
                       key, text);
        if (out->rank == RD_MAX_RANK)
            return bad(r, v, RD_E_LIMIT, "%s: the shape '%s' has a rank above the limit of %d", key, text, RD_MAX_RANK);
        out->dims[out->rank++] = d;
        p = end;
        while (*p == ' ')
            p++;
        if (!*p)
            return RD_OK;
        if (*p++ != ',')
            return bad(r, v, RD_E_PARSE, "%s: '%s' is not a shape (integers separated by commas, like 1,3,224,224)",
                       key, text);
    }
}

static rd_status get_dims(const reader *r, const char *key, const sim_ynode *v, rd_dims *out)
{
    const char *text;
    if (v->kind == SIM_Y_SCALAR && sim_yscalar_str(v, &text) && !strchr(text, ','))
        return bad(r, v, RD_E_PARSE,
                   "%s: '%s' is not a shape: give a list of shapes, one per input, as [[1,3,224,224]] "
                   "or as lines '- 1,3,224,224'",
                   key, text);
    if (v->kind == SIM_Y_SCALAR && sim_yscalar_str(v, &text))
        return get_dims_text(r, key, v, text, out);
    if (v->kind != SIM_Y_SEQ)
        return bad(r, v, RD_E_PARSE, "%s: each shape must be a list of integers or a string like 1,3,224,224, not %s",
                   key, sim_ynode_kind_name(v));
    if (v->n > RD_MAX_RANK)
        return bad(r, v, RD_E_LIMIT, "%s: a shape of rank %zu is above the limit of %d", key, v->n, RD_MAX_RANK);
    out->rank = (int)v->n;
    for (size_t i = 0; i < v->n; i++) {
        int64_t d;
        if (!sim_yscalar_int(v->items[i], &d) || d < 0)
            return bad(r, v->items[i], RD_E_PARSE, "%s: dimension %zu is not a non-negative integer", key, i);
        out->dims[i] = d;
    }
    return RD_OK;
}

static rd_status get_dims_list(const reader *r, const char *key, const sim_ynode *v, rd_dims **out, size_t *n)
{
    if (v->kind != SIM_Y_SEQ)
        return bad(r, v, RD_E_PARSE, "%s must be a list of shapes, not %s", key, sim_ynode_kind_name(v));
    free(*out);
    *out = sim_calloc_array(v->n, sizeof **out);
    *n = 0;
    if (!*out)
        return bad(r, v, RD_E_NOMEM, "out of memory");
    for (size_t i = 0; i < v->n; i++) {
        rd_status st = get_dims(r, key, v->items[i], &(*out)[i]);
        if (st != RD_OK)
            return st;
        (*n)++;
    }
    return RD_OK;
}

static rd_status get_strings(const reader *r, const char *key, const sim_ynode *v, char ***out, size_t *n)
{
    if (v->kind != SIM_Y_SEQ)
        return bad(r, v, RD_E_PARSE, "%s must be a list of names, not %s", key, sim_ynode_kind_name(v));
    free_strings(*out, *n);
    *n = 0;
    *out = sim_calloc_array(v->n, sizeof **out);
    if (!*out)
        return bad(r, v, RD_E_NOMEM, "out of memory");
    for (size_t i = 0; i < v->n; i++) {
        rd_status st = get_string(r, key, v->items[i], &(*out)[i]);
        if (st != RD_OK)
            return st;
        (*n)++;
    }
    return RD_OK;
}

/* dynamic_input: [[[1,3,224,224]], [[1,3,192,192]]]: sets of per-input shapes, all sets the same size. */
static rd_status get_dynamic(const reader *r, const sim_ynode *v)
{
    rd_rknn_config *c = r->c;
    free(c->dynamic_input); /* given twice: the last one wins, as PyYAML reads it (it leaked; fuzz_yaml_config) */
    c->dynamic_input = NULL;
    c->n_dynamic_sets = c->n_dynamic_per_set = 0;
    if (sim_ynode_is_null(v))
        return RD_OK;
    if (v->kind != SIM_Y_SEQ || v->n == 0 || v->items[0]->kind != SIM_Y_SEQ)
        return bad(r, v, RD_E_PARSE, "dynamic_input must be a list of shape sets ([[[1,3,224,224]], ...])");
    size_t per = v->items[0]->n;
    size_t total;
    if (!sim_mul_ok(v->n, per, &total) || total > 65536)
        return bad(r, v, RD_E_LIMIT, "dynamic_input has too many shapes");
    c->dynamic_input = sim_calloc_array(total, sizeof *c->dynamic_input);
    if (!c->dynamic_input)
        return bad(r, v, RD_E_NOMEM, "out of memory");
    for (size_t s = 0; s < v->n; s++) {
        const sim_ynode *set = v->items[s];
        if (set->kind != SIM_Y_SEQ || set->n != per)
            return bad(r, set, RD_E_PARSE, "dynamic_input: shape set %zu must list %zu shapes (one per input)", s, per);
        for (size_t i = 0; i < per; i++) {
            rd_status st = get_dims(r, "dynamic_input", set->items[i], &c->dynamic_input[s * per + i]);
            if (st != RD_OK)
                return st;
        }
    }
    c->n_dynamic_sets = v->n;
    c->n_dynamic_per_set = per;
    return RD_OK;
}

/* Looks up the name of a mapping key; every caller refuses a non-string key the same way. */
static rd_status key_name(const reader *r, const sim_ynode *k, const char *where, const char **out)
{
    if (!sim_yscalar_str(k, out))
        return bad(r, k, RD_E_PARSE, "%s: keys must be names, not %s", where, sim_ynode_kind_name(k));
    return RD_OK;
}

/* The keys each section knows, for the unknown-key notes. */
static const char *const config_keys[] = {"quantized_dtype",
                                          "quantized_algorithm",
                                          "quantized_method",
                                          "mean_values",
                                          "std_values",
                                          "quant_img_RGB2BGR",
                                          "optimization_level",
                                          "target_platform",
                                          "custom_string",
                                          "dynamic_input",
                                          "model_pruning",
                                          "float_dtype",
                                          "quantized_hybrid_level",
                                          "quantize_weight",
                                          "remove_reshape",
                                          "inputs_yuv_fmt",
                                          "op_target",
                                          "sparse_infer",
                                          "remove_weight",
                                          "compress_weight",
                                          "single_core_mode",
                                          "enable_flash_attention",
                                          "auto_hybrid_cos_thresh",
                                          "auto_hybrid_euc_thresh"};
static const char *const model_keys[] = {"name",    "platform", "model_file_path", "quantize",
                                         "dataset", "configs",  "subgraphs"};
static const char *const subgraph_keys[] = {"input_size_list", "inputs", "outputs"};
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* rknn.config() options the simulation has no use for: with no effect on any result (a note says why), or
   accepted only at their default (another value is refused, saying why). */
static const struct other_key {
    const char *name;
    bool default_only;
    const char *why;
} other_keys[] = {
    {"remove_weight", false, "it leaves the weights out of the .rknn file (weight sharing between models)"},
    {"compress_weight", false, "the .rknn file's weight compression is lossless"},
    {"single_core_mode", false, "it chooses the NPU cores a layer runs on, not what the layer computes"},
    {"enable_flash_attention", false,
     "the simulator computes attention as its ONNX operators whether or not the "
     "NPU fuses them"},
    {"auto_hybrid_cos_thresh", false,
     "it steers RKNN's automatic hybrid quantization (rknn.build(auto_hybrid=True)), "
     "which rknn_convert does not run"},
    {"auto_hybrid_euc_thresh", false,
     "it steers RKNN's automatic hybrid quantization (rknn.build(auto_hybrid=True)), "
     "which rknn_convert does not run"},
    {"quantized_hybrid_level", true,
     "RKNN's automatic hybrid levels are not simulated: find the layers to keep in "
     "float16 with `rknn-diag hybrid suggest` and give them with --cfg"},
    {"quantize_weight", true, "weight-only quantization of an unquantized build is not simulated"},
    {"remove_reshape", true,
     "it removes Reshape layers at the model's inputs and outputs, changing their shapes: "
     "cut the model with subgraphs or `rknn-diag onnx-edit` instead"},
    {"inputs_yuv_fmt", true,
     "YUV inputs (nv12, ...) and their conversion on the NPU are not simulated: give RGB "
     "images or .npy files"},
    {"op_target", true,
     "placing operators on the CPU or the NPU is not simulated (which dtype a CPU operator "
     "computes in is not documented)"},
    {"sparse_infer", true, "sparse inference is not simulated"},
};

/* The value an option has by default: null, false, 0, or an empty list or mapping. */
static bool is_default_value(const sim_ynode *v)
{
    bool b;
    int64_t i;
    if (sim_ynode_is_null(v))
        return true;
    if (v->kind != SIM_Y_SCALAR)
        return v->n == 0;
    return (sim_yscalar_bool(v, &b) && !b) || (sim_yscalar_int(v, &i) && i == 0);
}

/* A configs key other than those the simulation applies: noted, refused or unknown. */
static rd_status other_option(const reader *r, const sim_ynode *k, const sim_ynode *v, const char *key)
{
    for (size_t i = 0; i < N_OF(other_keys); i++) {
        const struct other_key *o = &other_keys[i];
        if (strcmp(key, o->name) != 0)
            continue;
        if (!o->default_only)
            return note(r, k, "configs.%s: accepted, no effect on the analysis: %s", key, o->why);
        if (is_default_value(v))
            return RD_OK;
        return bad(r, v, RD_E_UNSUPPORTED, "configs.%s: %s (leave it out, or at its default)", key, o->why);
    }
    return unknown_key(r, k, key, "configs", config_keys, N_OF(config_keys));
}

static rd_status read_configs(reader *r, const sim_ynode *m)
{
    rd_rknn_config *c = r->c;
    if (sim_ynode_is_null(m))
        return RD_OK;
    if (m->kind != SIM_Y_MAP)
        return bad(r, m, RD_E_PARSE, "configs must be a mapping, not %s", sim_ynode_kind_name(m));
    for (size_t i = 0; i < m->n; i++) {
        const sim_ynode *k = m->items[2 * i], *v = m->items[2 * i + 1];
        const char *key;
        rd_status st = key_name(r, k, "configs", &key);
        if (st != RD_OK)
            return st;
        char *s = NULL;
        if (!strcmp(key, "quantized_dtype") || !strcmp(key, "quantized_algorithm") ||
            !strcmp(key, "quantized_method")) {
            if ((st = get_string(r, key, v, &s)) != RD_OK)
                return st;
            if (key[10] == 'd') {
                st = rd_qdtype_parse(s, &c->dtype, r->err);
                c->line_dtype = v->line;
                r->have_dtype = true;
            } else if (key[10] == 'a') {
                st = rd_qalgo_parse(s, &c->algorithm, r->err);
                c->line_algorithm = v->line;
            } else {
                st = rd_qmethod_parse(s, &c->method, &c->group_size, r->err);
                c->line_method = v->line;
            }
            free(s);
            if (st != RD_OK) {
                if (r->err)
                    r->err->code = RD_E_PARSE; /* a bad name in a file: exit code 3, not a usage error */
                rd_error_prefix(r->err, "%s:%d: %s", r->name, v->line, key);
                return RD_E_PARSE;
            }
        } else if (!strcmp(key, "mean_values")) {
            st = get_per_input(r, key, v, &c->n_mean, c->mean);
            c->line_mean = v->line;
        } else if (!strcmp(key, "std_values")) {
            st = get_per_input(r, key, v, &c->n_std, c->std);
            c->line_std = v->line;
        } else if (!strcmp(key, "quant_img_RGB2BGR")) {
            c->line_rgb2bgr = v->line;
            if (v->kind == SIM_Y_SEQ) {
                if (v->n > RD_MAX_MODEL_INPUTS)
                    return bad(r, v, RD_E_LIMIT, "quant_img_RGB2BGR lists more than %d inputs", RD_MAX_MODEL_INPUTS);
                for (size_t j = 0; j < v->n && st == RD_OK; j++)
                    st = get_bool(r, key, v->items[j], &c->rgb2bgr[j]);
                c->n_rgb2bgr = v->n;
            } else if ((st = get_bool(r, key, v, &c->rgb2bgr[0])) == RD_OK) {
                c->n_rgb2bgr = 1; /* one bool for every input */
                c->rgb2bgr_all = true;
                for (size_t j = 1; j < RD_MAX_MODEL_INPUTS; j++)
                    c->rgb2bgr[j] = c->rgb2bgr[0];
            }
        } else if (!strcmp(key, "optimization_level")) {
            int64_t lv;
            if (!sim_yscalar_int(v, &lv) || lv < 0 || lv > 3)
                return bad(r, v, RD_E_PARSE, "optimization_level must be an integer from 0 to 3");
            c->optimization_level = (int)lv;
            c->line_optimization_level = v->line;
        } else if (!strcmp(key, "target_platform")) {
            st = get_string(r, key, v, &c->target_platform);
            c->line_target_platform = v->line;
        } else if (!strcmp(key, "custom_string")) {
            st = sim_ynode_is_null(v) ? RD_OK : get_string(r, key, v, &c->custom_string);
        } else if (!strcmp(key, "dynamic_input")) {
            st = get_dynamic(r, v);
            c->line_dynamic_input = v->line;
        } else if (!strcmp(key, "model_pruning")) {
            st = sim_ynode_is_null(v) ? RD_OK : get_bool(r, key, v, &c->model_pruning);
            c->line_model_pruning = v->line;
        } else if (!strcmp(key, "float_dtype")) {
            if ((st = sim_ynode_is_null(v) ? RD_OK : get_string(r, key, v, &s)) == RD_OK && s &&
                strcmp(s, "float16") != 0)
                st = bad(r, v, RD_E_UNSUPPORTED,
                         "float_dtype '%s' is not simulated: the float layers of an RKNN "
                         "build run in float16 here (float_dtype: float16)",
                         s);
            free(s);
        } else {
            st = other_option(r, k, v, key);
        }
        if (st != RD_OK)
            return st;
    }
    return RD_OK;
}

static rd_status read_subgraphs(reader *r, const sim_ynode *m)
{
    rd_rknn_config *c = r->c;
    if (sim_ynode_is_null(m))
        return RD_OK;
    if (m->kind != SIM_Y_MAP)
        return bad(r, m, RD_E_PARSE, "subgraphs must be a mapping, not %s", sim_ynode_kind_name(m));
    for (size_t i = 0; i < m->n; i++) {
        const sim_ynode *k = m->items[2 * i], *v = m->items[2 * i + 1];
        const char *key;
        rd_status st = key_name(r, k, "subgraphs", &key);
        if (st != RD_OK)
            return st;
        if (!strcmp(key, "input_size_list")) {
            st = get_dims_list(r, key, v, &c->input_size_list, &c->n_input_size_list);
            c->line_input_size_list = v->line;
        } else if (!strcmp(key, "inputs")) {
            st = get_strings(r, key, v, &c->sub_inputs, &c->n_sub_inputs);
        } else if (!strcmp(key, "outputs")) {
            st = get_strings(r, key, v, &c->sub_outputs, &c->n_sub_outputs);
        } else {
            st = unknown_key(r, k, key, "subgraphs", subgraph_keys, N_OF(subgraph_keys));
        }
        if (st != RD_OK)
            return st;
    }
    return RD_OK;
}

static rd_status read_model(reader *r, const sim_ynode *m)
{
    rd_rknn_config *c = r->c;
    if (m->kind != SIM_Y_MAP)
        return bad(r, m, RD_E_PARSE, "models must be a mapping (name, platform, model_file_path, ...), not %s",
                   sim_ynode_kind_name(m));
    for (size_t i = 0; i < m->n; i++) {
        const sim_ynode *k = m->items[2 * i], *v = m->items[2 * i + 1];
        const char *key;
        rd_status st = key_name(r, k, "models", &key);
        if (st != RD_OK)
            return st;
        if (!strcmp(key, "name"))
            st = get_string(r, key, v, &c->name);
        else if (!strcmp(key, "platform"))
            st = get_string(r, key, v, &c->framework);
        else if (!strcmp(key, "model_file_path"))
            st = get_path(r, key, v, &c->model_file_path);
        else if (!strcmp(key, "quantize"))
            st = get_bool(r, key, v, &c->quantize);
        else if (!strcmp(key, "dataset")) {
            st = sim_ynode_is_null(v) ? RD_OK : get_path(r, key, v, &c->dataset);
            c->line_dataset = v->line;
        } else if (!strcmp(key, "configs"))
            st = read_configs(r, v);
        else if (!strcmp(key, "subgraphs")) {
            st = read_subgraphs(r, v);
            c->line_subgraphs = k->line;
        } else
            st = unknown_key(r, k, key, "models", model_keys, N_OF(model_keys));
        if (st != RD_OK)
            return st;
    }
    return RD_OK;
}

rd_status rd_rknn_config_parse(const char *buf, size_t len, const char *name, rd_rknn_config *out, rd_error *err)
{
    rd_rknn_config_init(out);
    reader r = {.name = name, .c = out, .err = err};
    out->path = sim_strdup(name);
    r.dir = sim_path_dir(name);
    if (!out->path || !r.dir) {
        free(r.dir);
        rd_rknn_config_fini(out);
        return rd_errorf(err, RD_E_NOMEM, "%s: out of memory", name);
    }
    sim_ynode *root = NULL;
    rd_status st = sim_yaml_parse(buf, len, name, &root, err);
    if (st != RD_OK)
        goto out;
    const sim_ynode *models = NULL;
    if (!root || root->kind != SIM_Y_MAP) {
        st = rd_errorf(err, RD_E_PARSE, "%s:%d: expected a mapping with the key 'models'", name, root ? root->line : 1);
        goto out;
    }
    for (size_t i = 0; i < root->n; i++) {
        const sim_ynode *k = root->items[2 * i];
        const char *key;
        if ((st = key_name(&r, k, "top level", &key)) != RD_OK)
            goto out;
        if (strcmp(key, "models")) {
            static const char *const top_keys[] = {"models"};
            if ((st = unknown_key(&r, k, key, "the top level", top_keys, 1)) != RD_OK)
                goto out;
            continue;
        }
        if (models) {
            st = bad(&r, k, RD_E_PARSE, "key 'models' given twice (first at line %d)", models->line);
            goto out;
        }
        models = root->items[2 * i + 1];
        out->line_models = k->line;
    }
    if (!models) {
        st = rd_errorf(err, RD_E_PARSE, "%s:%d: the key 'models' is missing", name, root->line);
        goto out;
    }
    st = read_model(&r, models);
    if (st == RD_OK && !r.have_dtype && !out->quantize)
        out->dtype = RD_QDT_FLOAT16; /* an unquantized RKNN build runs in float16 */
out:
    sim_ynode_free(root);
    free(r.dir);
    if (st != RD_OK) {
        rd_rknn_config_fini(out);
        out->path = NULL;
    }
    return st;
}

rd_status rd_rknn_config_load(const char *path, rd_rknn_config *out, rd_error *err)
{
    rd_rknn_config_init(out);
    sim_file_bytes f;
    rd_status st = sim_file_bytes_read(path, MAX_CONFIG_BYTES, &f, err);
    if (st == RD_OK)
        st = rd_rknn_config_parse(f.buf, f.len, path, out, err);
    sim_file_bytes_free(&f);
    return st;
}

/* Position prefix "file:line" or just "file" when the key was not in the file. */
static void where(const rd_rknn_config *c, int line, char *buf, size_t cap)
{
    if (line > 0)
        snprintf(buf, cap, "%s:%d", c->path ? c->path : "config", line);
    else
        snprintf(buf, cap, "%s", c->path ? c->path : "config");
}

static rd_status check_lengths(const rd_rknn_config *c, const char *key, int line, size_t n_lists,
                               const rd_channel_values *v, const int64_t *channels, size_t n_inputs, rd_error *err)
{
    char at[1100];
    where(c, line, at, sizeof at);
    if (n_lists == 0)
        return RD_OK;
    if (n_inputs > 0 && n_lists != n_inputs)
        return rd_errorf(err, RD_E_PARSE, "%s: %s lists %zu input%s, the model has %zu", at, key, n_lists,
                         n_lists == 1 ? "" : "s", n_inputs);
    for (size_t i = 0; channels && i < n_lists && i < n_inputs; i++)
        if (channels[i] > 0 && v[i].n != (size_t)channels[i])
            return rd_errorf(err, RD_E_PARSE, "%s: %s for input %zu has %zu value%s, the input has %lld channel%s", at,
                             key, i, v[i].n, v[i].n == 1 ? "" : "s", (long long)channels[i],
                             channels[i] == 1 ? "" : "s");
    return RD_OK;
}

rd_status rd_rknn_config_validate(const rd_rknn_config *c, const char *platform, const int64_t *channels,
                                  size_t n_inputs, rd_error *err)
{
    char at[1100];
    const char *pname = platform ? platform : c->target_platform;
    if (pname) {
        const rd_platform_info *p = rd_platform_find(pname);
        where(c, platform ? 0 : c->line_target_platform, at, sizeof at);
        if (!p) {
            char list[256] = "";
            size_t k = 0;
            for (size_t i = 0; i < rd_platform_count(); i++)
                k += (size_t)snprintf(list + k, k < sizeof list ? sizeof list - k : 0, "%s%s", i ? ", " : "",
                                      rd_platform_get(i)->name);
            return rd_errorf(err, RD_E_PARSE, "%s: unknown target platform '%s' (expected one of %s)", at, pname, list);
        }
        if (!rd_platform_supports(p, c->dtype)) {
            where(c, c->line_dtype, at, sizeof at);
            char list[256] = "";
            size_t k = 0;
            for (int i = RD_QDT_W8A8; i < RD_QDT_COUNT; i++)
                if (rd_platform_supports(p, (rd_qdtype)i))
                    k += (size_t)snprintf(list + k, k < sizeof list ? sizeof list - k : 0, "%s%s", k ? ", " : "",
                                          rd_qdtype_name((rd_qdtype)i));
            return rd_errorf(err, RD_E_UNSUPPORTED,
                             "%s: target platform %s does not support quantized_dtype %s (it supports %s)", at, p->name,
                             rd_qdtype_name(c->dtype), list);
        }
    }
    if (c->algorithm == RD_QALGO_GDQ && c->dtype != RD_QDT_W4A16 && c->dtype != RD_QDT_W8A16) {
        where(c, c->line_algorithm, at, sizeof at);
        return rd_errorf(err, RD_E_UNSUPPORTED,
                         "%s: quantized_algorithm gdq needs quantized_dtype w4a16 or w8a16, not %s", at,
                         rd_qdtype_name(c->dtype));
    }
    if (c->method == RD_QMETHOD_GROUP && c->dtype != RD_QDT_W4A16) {
        where(c, c->line_method, at, sizeof at);
        return rd_errorf(err, RD_E_UNSUPPORTED, "%s: quantized_method group%d needs quantized_dtype w4a16, not %s", at,
                         c->group_size, rd_qdtype_name(c->dtype));
    }
    rd_status st = check_lengths(c, "mean_values", c->line_mean, c->n_mean, c->mean, channels, n_inputs, err);
    if (st == RD_OK)
        st = check_lengths(c, "std_values", c->line_std, c->n_std, c->std, channels, n_inputs, err);
    if (st == RD_OK && !c->rgb2bgr_all && c->n_rgb2bgr > 0 && n_inputs > 0 && c->n_rgb2bgr != n_inputs) {
        where(c, c->line_rgb2bgr, at, sizeof at);
        st = rd_errorf(err, RD_E_PARSE, "%s: quant_img_RGB2BGR lists %zu inputs, the model has %zu", at, c->n_rgb2bgr,
                       n_inputs);
    }
    for (size_t i = 0; st == RD_OK && i < c->n_std; i++)
        for (size_t j = 0; j < c->std[i].n; j++)
            if (c->std[i].v[j] == 0.0f) {
                where(c, c->line_std, at, sizeof at);
                return rd_errorf(err, RD_E_PARSE, "%s: std_values for input %zu: value %zu is 0", at, i, j);
            }
    return st;
}

rd_status rd_rknn_config_input_spec(const rd_rknn_config *c, size_t input, rd_input_spec *spec, rd_error *err)
{
    char at[1100];
    if (c->n_mean > 0) {
        if (input >= c->n_mean) {
            where(c, c->line_mean, at, sizeof at);
            return rd_errorf(err, RD_E_PARSE, "%s: mean_values has no entry for input %zu", at, input);
        }
        spec->n_mean = c->mean[input].n;
        memcpy(spec->mean, c->mean[input].v, sizeof spec->mean);
    }
    if (c->n_std > 0) {
        if (input >= c->n_std) {
            where(c, c->line_std, at, sizeof at);
            return rd_errorf(err, RD_E_PARSE, "%s: std_values has no entry for input %zu", at, input);
        }
        spec->n_std = c->std[input].n;
        memcpy(spec->std, c->std[input].v, sizeof spec->std);
    }
    if (c->n_rgb2bgr > 0 && input < RD_MAX_MODEL_INPUTS)
        spec->rgb2bgr = (c->rgb2bgr_all || input < c->n_rgb2bgr) ? c->rgb2bgr[input] : false;
    return RD_OK;
}
