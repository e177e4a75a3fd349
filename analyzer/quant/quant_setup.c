/*
 * quant_setup.c: from RKNN's model config and flags to a calibrated simulation.
 *
 * Order of precedence: -c model_config.yml first, then every flag on top of it, whatever their order
 * on the command line. Calibration reads dataset.txt lines as RKNN does (images, NHWC .npy, mean/std,
 * RGB2BGR) through the simulator's input functions.
 */
#include "quant_setup.h"
#include "progress.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void an_quant_opts_init(an_quant_opts *q)
{
    memset(q, 0, sizeof *q);
    rd_rknn_config_init(&q->cfg);
    q->flag_opt_level = -1;
}

void an_quant_opts_fini(an_quant_opts *q)
{
    rd_rknn_config_fini(&q->cfg);
    an_built_destroy(q->built);
    q->built = NULL;
    rd_pool_destroy(q->pool);
    q->pool = NULL;
}

rd_status an_quant_pool(an_quant_opts *q, rd_pool **out, rd_error *err)
{
    if (!q->pool) {
        long threads = 0;
        if (q->flag_threads) {
            char *end = NULL;
            errno = 0;
            threads = strtol(q->flag_threads, &end, 10);
            if (errno || end == q->flag_threads || *end || threads < 1 || threads > 1024)
                return rd_errorf(err, RD_E_USAGE, "--threads expects a count from 1 to 1024, got '%s'",
                                 q->flag_threads);
        }
        rd_status st = rd_pool_create((int)threads, &q->pool, err);
        if (st != RD_OK)
            return st;
    }
    if (out)
        *out = q->pool;
    return RD_OK;
}

bool an_quant_take(an_quant_opts *q, int id, const char *value)
{
    switch (id) {
    case AN_QOPT_CONFIG:
        q->config_path = value; /* loaded in an_quant_finish, so flags apply on top whatever their order */
        q->config_loaded = false;
        return true;
    case AN_QOPT_DTYPE:
        q->flag_dtype = value;
        return true;
    case AN_QOPT_METHOD:
        q->flag_method = value;
        return true;
    case AN_QOPT_ALGORITHM:
        q->flag_algorithm = value;
        return true;
    case AN_QOPT_MEAN:
        if (q->n_flag_mean < RD_MAX_MODEL_INPUTS)
            q->flag_mean[q->n_flag_mean++] = value;
        return true;
    case AN_QOPT_STD:
        if (q->n_flag_std < RD_MAX_MODEL_INPUTS)
            q->flag_std[q->n_flag_std++] = value;
        return true;
    case AN_QOPT_RGB2BGR:
        q->flag_rgb2bgr = true;
        return true;
    case AN_QOPT_DATASET:
        q->flag_dataset = value;
        return true;
    case AN_QOPT_PLATFORM:
        q->platform = value;
        return true;
    case AN_QOPT_OPT_LEVEL:
        q->flag_opt_level = (value[0] >= '0' && value[0] <= '3' && value[1] == '\0') ? value[0] - '0' : 99;
        return true;
    case AN_QOPT_LAYOUT:
        q->flag_layout = value;
        return true;
    case AN_QOPT_CFG:
        q->qcfg_path = value;
        return true;
    case AN_QOPT_MAX_IMAGE_PIXELS:
        q->flag_max_pixels = value;
        return true;
    case AN_QOPT_RKNN:
        q->rknn_path = value;
        return true;
    case AN_QOPT_RKNN_LOG:
        q->rknn_log_path = value;
        return true;
    case AN_QOPT_THREADS:
        q->flag_threads = value;
        return true;
    case AN_QOPT_GRAPH_INPUTS:
    case AN_QOPT_GRAPH_OUTPUTS:
        q->flag_cut[id == AN_QOPT_GRAPH_OUTPUTS] = value;
        return true;
    default:
        return false;
    }
}

/* "123.675,116.28,103.53" into one input's values. */
static rd_status parse_channel_values(const char *opt, const char *text, rd_channel_values *out, rd_error *err)
{
    memset(out, 0, sizeof *out);
    const char *p = text;
    while (*p) {
        if (out->n == RD_MAX_INPUT_CHANNELS)
            return rd_errorf(err, RD_E_USAGE, "%s: more than %d values", opt, RD_MAX_INPUT_CHANNELS);
        char *end = NULL;
        errno = 0;
        double v = strtod(p, &end);
        if (errno || end == p || !isfinite(v) || (*end && *end != ','))
            return rd_errorf(err, RD_E_USAGE, "%s expects numbers separated by commas, got '%s'", opt, text);
        out->v[out->n++] = (float)v;
        p = *end ? end + 1 : end;
    }
    if (out->n == 0)
        return rd_errorf(err, RD_E_USAGE, "%s expects numbers separated by commas, got '%s'", opt, text);
    return RD_OK;
}

/* A flag's value the shared parsers refused (they also read model_config.yml, whose errors are input
   errors): on the command line it is a usage error. */
static rd_status flag_error(rd_error *err, const char *flag)
{
    rd_error_prefix(err, "%s", flag);
    if (err)
        err->code = RD_E_USAGE;
    return RD_E_USAGE;
}

/* "a,b:0,c" into a fresh list replacing *names (the config's subgraphs.inputs or outputs). */
static rd_status take_names(const char *flag, const char *text, char ***names, size_t *n, rd_error *err)
{
    size_t count = 1;
    for (const char *p = text; *p; p++)
        count += *p == ',';
    char **list = calloc(count, sizeof *list);
    if (!list)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    size_t k = 0;
    for (const char *p = text; k < count; k++) {
        size_t len = strcspn(p, ",");
        if (!len || !(list[k] = strndup(p, len))) {
            for (size_t i = 0; i < k; i++)
                free(list[i]);
            free(list);
            return len ? rd_errorf(err, RD_E_NOMEM, "out of memory")
                       : rd_errorf(err, RD_E_USAGE, "%s expects tensor names separated by commas, got '%s'", flag,
                                   text);
        }
        p += len + (p[len] == ',');
    }
    for (size_t i = 0; i < *n; i++)
        free((*names)[i]);
    free(*names);
    *names = list;
    *n = count;
    return RD_OK;
}

rd_status an_quant_apply_cut(an_quant_opts *q, rd_error *err)
{
    rd_rknn_config *c = &q->cfg;
    rd_status st;
    if (q->flag_cut[0] && (st = take_names("--graph-inputs", q->flag_cut[0], &c->sub_inputs, &c->n_sub_inputs, err)))
        return st;
    if (q->flag_cut[1] && (st = take_names("--graph-outputs", q->flag_cut[1], &c->sub_outputs, &c->n_sub_outputs, err)))
        return st;
    if (q->flag_cut[0] || q->flag_cut[1])
        c->line_subgraphs = 0; /* messages name the flags, not the config's line */
    return RD_OK;
}

static rd_status apply_flags(an_quant_opts *q, rd_error *err)
{
    rd_rknn_config *c = &q->cfg;
    rd_status st = an_quant_apply_cut(q, err);
    if (st != RD_OK)
        return st;
    if (q->flag_dtype) {
        st = rd_qdtype_parse(q->flag_dtype, &c->dtype, err);
        if (st != RD_OK)
            return flag_error(err, "--dtype");
        q->dtype_given = true;
        c->quantize = c->dtype != RD_QDT_FLOAT16 && c->dtype != RD_QDT_FLOAT32;
    }
    if (q->flag_method) {
        st = rd_qmethod_parse(q->flag_method, &c->method, &c->group_size, err);
        if (st != RD_OK)
            return flag_error(err, "--method");
    }
    if (q->flag_algorithm) {
        st = rd_qalgo_parse(q->flag_algorithm, &c->algorithm, err);
        if (st != RD_OK)
            return flag_error(err, "--algorithm");
    }
    if (q->n_flag_mean) {
        c->n_mean = q->n_flag_mean;
        for (size_t i = 0; i < q->n_flag_mean; i++)
            if ((st = parse_channel_values("--mean", q->flag_mean[i], &c->mean[i], err)) != RD_OK)
                return st;
    }
    if (q->n_flag_std) {
        c->n_std = q->n_flag_std;
        for (size_t i = 0; i < q->n_flag_std; i++) {
            if ((st = parse_channel_values("--std", q->flag_std[i], &c->std[i], err)) != RD_OK)
                return st;
            for (size_t k = 0; k < c->std[i].n; k++)
                if (c->std[i].v[k] == 0.0f)
                    return rd_errorf(err, RD_E_USAGE, "--std: a std value of 0 would divide by zero");
        }
    }
    if (q->flag_rgb2bgr) {
        c->n_rgb2bgr = 1;
        c->rgb2bgr_all = true;
        for (size_t i = 0; i < RD_MAX_MODEL_INPUTS; i++)
            c->rgb2bgr[i] = true;
    }
    if (q->flag_dataset) {
        free(c->dataset);
        c->dataset = strdup(q->flag_dataset);
        if (!c->dataset)
            return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    if (q->flag_opt_level >= 0) {
        if (q->flag_opt_level > 3)
            return rd_errorf(err, RD_E_USAGE, "--optimization-level expects 0, 1, 2 or 3");
        c->optimization_level = q->flag_opt_level;
    }
    if (q->flag_layout && (st = an_parse_input_layout("--input-layout", q->flag_layout, &q->layout, err)) != RD_OK)
        return st;
    if (q->flag_max_pixels)
        return an_parse_pixel_count("--max-image-pixels", q->flag_max_pixels, &q->max_image_pixels, err);
    return RD_OK;
}

/* Channel count of each graph input (dim 1 of a rank-4 input), 0 when unknown. */
static void input_channels(const rd_model *m, bool q_nhwc, int64_t *channels, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        rd_value_info vi;
        rd_model_value(m, (size_t)rd_model_input(m, i), &vi);
        int c = q_nhwc ? 3 : 1;
        channels[i] = vi.rank == 4 && vi.dims[c] > 0 ? vi.dims[c] : 0;
    }
}

bool an_quant_wants_built(const an_quant_opts *q)
{
    return q->rknn_path || q->rknn_log_path;
}

rd_status an_quant_finish(an_quant_opts *q, const rd_model *m, rd_error *err)
{
    rd_status st = RD_OK;
    if (q->config_path && !q->config_loaded) {
        rd_rknn_config_fini(&q->cfg);
        st = rd_rknn_config_load(q->config_path, &q->cfg, err);
        if (st != RD_OK)
            return st;
        q->config_loaded = true;
        if (!q->platform && q->cfg.target_platform)
            q->platform = q->cfg.target_platform;
    }
    st = apply_flags(q, err);
    if (st == RD_OK)
        st = an_quant_pool(q, NULL, err);
    if (st != RD_OK)
        return st;
    if (!m)
        return rd_rknn_config_validate(&q->cfg, q->platform, NULL, 0, err);
    int64_t channels[RD_MAX_MODEL_INPUTS];
    size_t n = rd_model_input_count(m);
    if (n > RD_MAX_MODEL_INPUTS)
        return rd_errorf(err, RD_E_UNSUPPORTED, "the model has %zu inputs (at most %d)", n, RD_MAX_MODEL_INPUTS);
    if (q->rknn_path || q->rknn_log_path) { /* again for each model: a dynamic_input set is another shape */
        an_built_destroy(q->built);
        q->built = NULL;
        const an_built_request req = {.rknn_path = q->rknn_path,
                                      .log_path = q->rknn_log_path,
                                      .model_path = q->model_path ? q->model_path : q->cfg.model_file_path,
                                      .platform = q->platform,
                                      .mean_std_from_flags = q->n_flag_mean || q->n_flag_std,
                                      .dtype_given = q->dtype_given || q->cfg.line_dtype > 0};
        if ((st = an_built_load(&req, m, &q->cfg, &q->built, err)) != RD_OK)
            return st;
        if (!q->platform && an_built_platform(q->built)[0]) {
            snprintf(q->built_platform, sizeof q->built_platform, "%s", an_built_platform(q->built));
            q->platform = q->built_platform;
        }
    }
    input_channels(m, q->graph_nhwc, channels, n);
    return rd_rknn_config_validate(&q->cfg, q->platform, channels, n, err);
}

rd_status an_quant_precision(const an_quant_opts *q, rd_prec *out, rd_error *err)
{
    rd_sim_options so = {0};
    rd_status st = rd_sim_options_for_dtype(q->cfg.dtype, &so, err);
    if (st == RD_OK)
        *out = so.precision;
    return st;
}

static rd_status prepare_input(const an_quant_opts *q, const rd_model *m, size_t input, const char *path,
                               rd_input_layout layout, FILE *errs, rd_tensor *out, rd_error *err);

rd_status an_quant_prepare_input(const an_quant_opts *q, const rd_model *m, size_t input, const char *path, FILE *errs,
                                 rd_tensor *out, rd_error *err)
{
    return prepare_input(q, m, input, path, q->layout, errs, out, err);
}

rd_status an_quant_prepare_sample(const an_quant_opts *q, const rd_model *m, const rd_dataset *ds, size_t sample,
                                  size_t input, FILE *errs, rd_tensor *out, rd_error *err)
{
    return prepare_input(q, m, input, rd_dataset_path(ds, sample, input), ds->graph_layout ? RD_LAYOUT_NCHW : q->layout,
                         errs, out, err);
}

static rd_status prepare_input(const an_quant_opts *q, const rd_model *m, size_t input, const char *path,
                               rd_input_layout layout, FILE *errs, rd_tensor *out, rd_error *err)
{
    rd_value_info vi;
    rd_model_value(m, (size_t)rd_model_input(m, input), &vi);
    if (vi.rank < 0)
        return rd_errorf(err, RD_E_UNSUPPORTED, "input '%s' has no declared shape: give --input-shape", vi.name);
    rd_input_spec spec = RD_INPUT_SPEC_DEFAULT;
    spec.layout = layout;
    spec.max_image_pixels = q->max_image_pixels;
    rd_status st = rd_rknn_config_input_spec(&q->cfg, input, &spec, err);
    if (st != RD_OK)
        return st;
    an_warn_ctx wctx = {.errs = errs};
    rd_warn_sink warn = {.fn = an_warn_print, .user = &wctx};
    int64_t dims[RD_MAX_RANK];
    for (int d = 0; d < vi.rank; d++)
        dims[d] = vi.dims[d] < 0 ? 1 : vi.dims[d]; /* symbolic batch: one sample */
    if (!q->graph_nhwc || vi.rank != 4)
        return rd_input_prepare(path, &spec, vi.rank, dims, &warn, out, err);
    /* an NHWC graph input: prepared as its NCHW twin, then transposed */
    const int64_t nchw[4] = {dims[0], dims[3], dims[1], dims[2]};
    rd_tensor t = {0};
    st = rd_input_prepare(path, &spec, 4, nchw, &warn, &t, err);
    if (st == RD_OK)
        st = rd_tensor_alloc(out, RD_DT_F32, 4, dims, err);
    if (st == RD_OK) {
        const float *src = t.data;
        float *dst = out->data;
        int64_t c_n = nchw[1], hw = nchw[2] * nchw[3];
        for (int64_t n = 0; n < nchw[0]; n++)
            for (int64_t c = 0; c < c_n; c++)
                for (int64_t i = 0; i < hw; i++)
                    dst[(n * hw + i) * c_n + c] = src[(n * c_n + c) * hw + i];
    }
    rd_tensor_fini(&t);
    return st;
}

/* ---- calibration samples from dataset.txt ------------------------------------------------------- */

typedef struct dataset_source {
    const an_quant_opts *q;
    const rd_model *m;
    const rd_dataset *ds;
    const rd_tensor *fallback; /* one sample: the analysed inputs */
    FILE *errs;
} dataset_source;

static rd_status get_dataset_sample(void *user, size_t k, rd_tensor *inputs, rd_error *err)
{
    dataset_source *src = user;
    size_t n = rd_model_input_count(src->m);
    if (!src->ds) {
        for (size_t i = 0; i < n; i++) {
            rd_status st = rd_tensor_clone(&inputs[i], &src->fallback[i], err);
            if (st != RD_OK)
                return st;
        }
        return RD_OK;
    }
    for (size_t i = 0; i < n; i++) {
        /* warnings (resizes) are dropped here: workers run concurrently and a resize is expected */
        rd_status st = an_quant_prepare_sample(src->q, src->m, src->ds, k, i, NULL, &inputs[i], err);
        if (st != RD_OK) {
            for (size_t j = 0; j < i; j++)
                rd_tensor_fini(&inputs[j]);
            return rd_error_prefix(err, "%s line %d", src->ds->path, src->ds->lines[k]);
        }
    }
    return RD_OK;
}

static rd_calib_method calib_method(rd_qalgo a)
{
    switch (a) {
    case RD_QALGO_KL_DIVERGENCE:
        return RD_CALIB_KL;
    case RD_QALGO_MMSE:
        return RD_CALIB_MMSE;
    default:
        return RD_CALIB_NORMAL;
    }
}

/* RKNN's sanitised form of a name: '/' becomes '_'. */
static bool same_sanitised(const char *ours, const char *key, size_t key_len)
{
    size_t i = 0;
    for (; ours[i] && i < key_len; i++)
        if ((ours[i] == '/' ? '_' : ours[i]) != key[i])
            return false;
    return !ours[i] && i == key_len;
}

const char *an_quant_match_name(const rd_sim *s, const char *key)
{
    const rd_model *m = rd_sim_model(s);
    int v = rd_model_find_value(m, key);
    size_t len = strlen(key);
    size_t stripped = len > 2 && strcmp(key + len - 2, ":0") == 0 ? len - 2 : len;
    char buf[1024];
    if (v < 0 && stripped < len && stripped < sizeof buf) {
        memcpy(buf, key, stripped);
        buf[stripped] = '\0';
        v = rd_model_find_value(m, buf);
    }
    for (size_t i = 0; v < 0 && i < rd_model_value_count(m); i++) {
        rd_value_info vi;
        rd_model_value(m, i, &vi);
        if (same_sanitised(vi.name, key, len) || same_sanitised(vi.name, key, stripped))
            v = (int)i;
    }
    if (v < 0)
        return NULL;
    rd_value_info vi;
    rd_model_value(m, (size_t)v, &vi);
    return vi.name;
}

bool an_quant_is_weight(rd_sim *s, int value, int *n_scale)
{
    const rd_model *m = rd_sim_model(s);
    for (size_t i = 0; i < rd_model_node_count(m); i++) {
        rd_sim_weights w;
        if (rd_sim_weights_get(s, (int)i, &w, NULL) == RD_OK && w.value == value) {
            if (n_scale)
                *n_scale = w.n_scale;
            return true;
        }
    }
    return false;
}

/* One quantize_parameters entry: an activation's scale and zero point, or a weight's scales. */
static rd_status import_param(rd_sim *s, const rd_qcfg_param *p, size_t *n_act, size_t *n_w, rd_error *err)
{
    const char *name = an_quant_match_name(s, p->name);
    rd_sim_tensor info;
    if (!name)
        return rd_sim_tensor_get(s, p->name, &info, err); /* RD_E_NOTFOUND with the closest names */
    rd_status st = rd_sim_tensor_get(s, name, &info, err);
    if (st != RD_OK)
        return st;
    if (p->dtype != RD_DT_I8 && p->dtype != RD_DT_I16)
        return RD_OK; /* float16 entries: the precision comes from custom_quantize_layers */
    const bool wide = p->dtype == RD_DT_I16;
    if (!(p->has & RD_QCFG_HAS_SCALE))
        return rd_errorf(err, RD_E_PARSE, "tensor '%s': no scale", p->name);
    if (info.value >= 0 && an_quant_is_weight(s, info.value, NULL)) {
        bool asymmetric = false;
        for (size_t k = 0; (p->has & RD_QCFG_HAS_ZERO_POINT) && k < p->n; k++)
            asymmetric = asymmetric || p->zero_point[k] != 0;
        if (asymmetric && wide)
            return rd_errorf(err, RD_E_UNSUPPORTED,
                             "weights '%s': int16 weights with zero points: int16 weights are simulated symmetric",
                             p->name);
        if (p->n > INT32_MAX)
            return rd_errorf(err, RD_E_LIMIT, "weights '%s': too many scales", p->name);
        (*n_w)++;
        if (!asymmetric)
            return rd_sim_set_weight_scales_bits(s, name, p->scale, (int)p->n, wide ? 16 : 8, err);
        return rd_sim_set_weight_quant(s, name, p->scale, p->zero_point, (int)p->n, NULL, 0, err);
    }
    if (!info.materialized) {
        if (info.fused_into >= 0) {
            rd_value_info into;
            rd_model_value(rd_sim_model(s), (size_t)info.fused_into, &into);
            return rd_errorf(err, RD_E_INVAL, "tensor '%s' is not quantizable: the compiler passes fused it into '%s'",
                             p->name, into.name);
        }
        return rd_errorf(err, RD_E_INVAL,
                         "tensor '%s' is not quantizable: neither a float activation nor the weight of an int8 "
                         "Conv/ConvTranspose/Gemm/MatMul",
                         p->name);
    }
    if (p->n != 1 || !(p->has & RD_QCFG_HAS_ZERO_POINT))
        return rd_errorf(
            err, RD_E_UNSUPPORTED,
            "activation '%s': %zu entries%s: activations are quantized per tensor (one scale and zero point)", p->name,
            p->n, (p->has & RD_QCFG_HAS_ZERO_POINT) ? "" : " and no zero_point");
    (*n_act)++;
    return wide ? rd_sim_set_qparams16(s, name, p->scale[0], p->zero_point[0], err)
                : rd_sim_set_qparams(s, name, p->scale[0], p->zero_point[0], err);
}

/* Imports a .quantization.cfg: activation and weight parameters and custom_quantize_layers. */
static rd_status import_qcfg(rd_sim *s, const char *path, FILE *errs, rd_error *err)
{
    rd_qcfg cfg;
    rd_status st = rd_qcfg_load(path, &cfg, err);
    if (st != RD_OK)
        return st;
    size_t n_act = 0, n_w = 0;
    for (size_t i = 0; i < cfg.n_params && st == RD_OK; i++) {
        st = import_param(s, &cfg.params[i], &n_act, &n_w, err);
        if (st != RD_OK)
            rd_error_prefix(err, "%s:%d: quantize_parameters", path, cfg.params[i].line);
    }
    for (size_t i = 0; i < cfg.n_layers && st == RD_OK; i++) {
        const rd_qcfg_layer *l = &cfg.layers[i];
        rd_prec p = l->dtype == RD_DT_F16 ? RD_PREC_FP16 : l->dtype == RD_DT_I16 ? RD_PREC_INT16 : RD_PREC_INT8;
        const char *name = an_quant_match_name(s, l->name);
        st = rd_sim_set_precision(s, name ? name : l->name, p, err);
        if (st != RD_OK)
            rd_error_prefix(err, "%s:%d: custom_quantize_layers", path, l->line);
    }
    if (st == RD_E_INVAL && err)
        err->code = st = RD_E_PARSE; /* a bad entry of an input file: exit code 3, not a usage error */
    if (st == RD_OK && errs)
        fprintf(errs, "cfg: %s: imported parameters of %zu activations and %zu weights, %zu custom layers\n", path,
                n_act, n_w, cfg.n_layers);
    rd_qcfg_fini(&cfg);
    return st;
}

/* True when every materialised float activation of s has int8 parameters. */
static bool fully_quantized(const rd_sim *s)
{
    const rd_model *m = rd_sim_model(s);
    for (size_t v = 0; v < rd_model_value_count(m); v++) {
        rd_value_info vi;
        rd_model_value(m, v, &vi);
        rd_sim_tensor t;
        if (rd_sim_tensor_get(s, vi.name, &t, NULL) != RD_OK)
            continue;
        if (t.materialized && (t.precision == RD_PREC_INT8 || t.precision == RD_PREC_INT16) && !t.quantized)
            return false;
    }
    return true;
}

rd_status an_quant_build_sim(const an_quant_opts *q, const rd_model *m, const rd_tensor *fallback_inputs, FILE *errs,
                             bool color, rd_sim **out, rd_error *err)
{
    return an_quant_build_sim_from(q, m, fallback_inputs, NULL, NULL, 0, errs, color, out, err);
}

/* The simulator options q describes (the built model's, when there is one). */
static rd_status sim_options(const an_quant_opts *q, rd_sim_options *so, rd_error *err)
{
    *so = (rd_sim_options){.optimization_level = q->cfg.optimization_level,
                           .per_tensor_weights = q->cfg.method == RD_QMETHOD_LAYER};
    if (q->built) { /* the built model's groups replace ours; its weights are asymmetric per channel */
        so->optimization_level = 3;
        so->per_tensor_weights = false;
        so->asymmetric_weights = an_built_has_rknn(q->built);
    }
    return rd_sim_options_for_dtype(q->cfg.dtype, so, err);
}

rd_status an_quant_built_graph(const an_quant_opts *q, const rd_model *m, rd_sim **out, rd_error *err)
{
    *out = NULL;
    if (!q->built)
        return rd_errorf(err, RD_E_INVAL, "no --rknn or --rknn-build-log given");
    rd_sim_options so;
    rd_status st = sim_options(q, &so, err);
    rd_sim *s = NULL;
    if (st == RD_OK)
        st = rd_sim_create(m, &so, &s, err);
    size_t uncovered = 0;
    if (st == RD_OK)
        st = an_built_apply(q->built, s, &uncovered, err);
    if (st != RD_OK) {
        rd_sim_destroy(s);
        return st;
    }
    *out = s;
    return RD_OK;
}

rd_status an_quant_build_sim_from(const an_quant_opts *q, const rd_model *m, const rd_tensor *fallback_inputs,
                                  rd_sample_fn samples, void *samples_user, size_t n_samples, FILE *errs, bool color,
                                  rd_sim **out, rd_error *err)
{
    *out = NULL;
    rd_sim_options so;
    rd_status st = sim_options(q, &so, err);
    if (st != RD_OK)
        return st;
    if (q->cfg.method == RD_QMETHOD_GROUP)
        return rd_errorf(err, RD_E_UNSUPPORTED,
                         "quantized_method group%d (weights in groups along the input) is not simulated: use channel "
                         "or layer",
                         q->cfg.group_size);
    if (q->cfg.algorithm == RD_QALGO_GDQ)
        return rd_errorf(err, RD_E_UNSUPPORTED,
                         "quantized_algorithm gdq is not simulated (RKNN does not document it): use normal, "
                         "kl_divergence or mmse");
    const rd_prec prec = so.precision;
    rd_sim *s = NULL;
    st = rd_sim_create(m, &so, &s, err);
    if (st != RD_OK)
        return st;
    rd_sim_set_pool(s, q->pool);
    if (q->qcfg_path)
        st = import_qcfg(s, q->qcfg_path, errs, err);
    size_t uncovered = 0;
    if (st == RD_OK && q->built) {
        st = an_built_apply(q->built, s, &uncovered, err);
        if (st == RD_OK && uncovered && errs)
            fprintf(errs, "built model: %zu tensors get their int8 parameters from calibration (%s)\n", uncovered,
                    an_built_has_rknn(q->built) ? "the .rknn stores none for them" : "a build log has no scales");
    }
    if (st == RD_OK && prec != RD_PREC_FP32 && !fully_quantized(s)) {
        rd_dataset ds;
        memset(&ds, 0, sizeof ds);
        bool have_ds = q->cfg.dataset != NULL && !samples;
        if (have_ds)
            st = rd_dataset_load(q->cfg.dataset, rd_model_input_count(m), &ds, err);
        if (st == RD_OK && !have_ds && !fallback_inputs && !samples)
            st = rd_errorf(err, RD_E_USAGE, "%s simulation needs calibration: give --dataset FILE (or --cfg FILE)",
                           rd_qdtype_name(q->cfg.dtype));
        if (st == RD_OK) {
            if (!have_ds && !samples && errs)
                fprintf(errs, "warning: no --dataset: calibrating on the analysed input itself, which flatters int8 "
                              "accuracy; give a calibration set of 20 to 100 samples\n");
            dataset_source src = {
                .q = q, .m = m, .ds = have_ds ? &ds : NULL, .fallback = fallback_inputs, .errs = errs};
            an_progress bar;
            an_progress_init(&bar, errs, color, "calibrating");
            rd_calib_options co = {.method = calib_method(q->cfg.algorithm),
                                   .threads = q->pool ? rd_pool_threads(q->pool) : 0,
                                   .progress = an_progress_update,
                                   .progress_user = &bar};
            if (samples)
                st = rd_calibrate(s, samples, samples_user, n_samples, &co, err);
            else
                st = rd_calibrate(s, get_dataset_sample, &src, have_ds ? ds.n_samples : 1, &co, err);
            an_progress_done(&bar);
            if (st == RD_E_INVAL && have_ds) /* the data cannot be calibrated: name the input file it came from */
                rd_error_prefix(err, "%s", q->cfg.dataset);
        }
        rd_dataset_fini(&ds);
        if (st == RD_OK && q->built) /* calibration set every tensor's: the built model's again */
            st = an_built_reapply(q->built, s, err);
    }
    if (st != RD_OK) {
        rd_sim_destroy(s);
        return st;
    }
    *out = s;
    return RD_OK;
}

rd_status an_quant_built_outputs(const an_quant_opts *q, const rd_sim *s, const char *dir, FILE *errs, rd_result *r,
                                 rd_error *err)
{
    if (!q->built)
        return RD_OK;
    rd_status st = RD_OK;
    char path[4200];
    if (dir) {
        snprintf(path, sizeof path, "%s/rknn_mapping.txt", dir);
        st = an_built_report_save(q->built, s, path, err);
    }
    if (st == RD_OK && errs) {
        an_built_summary(q->built, errs);
        if (dir)
            fprintf(errs, "built model: mapping written to %s\n", path);
        else
            fprintf(errs, "built model: mapping not written (accuracy -o DIR and run --dump-dir DIR write "
                          "rknn_mapping.txt)\n");
    }
    if (st == RD_OK && r)
        st = an_built_fidelity(q->built, r, err);
    return st;
}

rd_status an_quant_load_samples(const an_quant_opts *q, const rd_model *m, const char *const *inputs, size_t n_inputs,
                                size_t max_samples, FILE *errs, rd_tensor **out, size_t *n_samples, rd_error *err)
{
    size_t n_in = rd_model_input_count(m);
    rd_dataset ds;
    memset(&ds, 0, sizeof ds);
    rd_status st = RD_OK;
    if (n_inputs) {
        if (n_inputs != n_in)
            return rd_errorf(err, RD_E_USAGE,
                             "--inputs gives %zu files, the model has %zu inputs (one file each, in order)", n_inputs,
                             n_in);
        *n_samples = 1;
    } else {
        if (!q->cfg.dataset)
            return rd_errorf(err, RD_E_USAGE,
                             "nothing to analyse: give --inputs FILE (one per model input) or --dataset FILE");
        st = rd_dataset_load(q->cfg.dataset, n_in, &ds, err);
        if (st != RD_OK)
            return st;
        *n_samples = ds.n_samples < max_samples ? ds.n_samples : max_samples;
        if (max_samples > ds.n_samples)
            fprintf(errs, "warning: --samples %ld but %s has %zu samples: analysing %zu\n", (long)max_samples, ds.path,
                    ds.n_samples, ds.n_samples);
    }
    rd_tensor *t = calloc(*n_samples * n_in + 1, sizeof *t);
    if (!t) {
        rd_dataset_fini(&ds);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    for (size_t k = 0; k < *n_samples && st == RD_OK; k++)
        for (size_t i = 0; i < n_in && st == RD_OK; i++) {
            st = n_inputs ? an_quant_prepare_input(q, m, i, inputs[i], errs, &t[k * n_in + i], err)
                          : an_quant_prepare_sample(q, m, &ds, k, i, errs, &t[k * n_in + i], err);
        }
    rd_dataset_fini(&ds);
    if (st != RD_OK) {
        for (size_t k = 0; k < *n_samples * n_in; k++)
            rd_tensor_fini(&t[k]);
        free(t);
        return st;
    }
    *out = t;
    return RD_OK;
}
