/*
 * accuracy_runtime.c: the board's dumps in the accuracy analysis (accuracy_runtime.h).
 *
 * The input-dump rule (docs/runtime.md): with the normal API (rknn_inputs_set) the InputOperator dump is
 * the input after the model's mean/std, with zero-copy (rknn_set_io_mem) the application's buffer before
 * them. The input check reads each dump by the rule --app-api names; what the board fed its first layer
 * (the dump itself, or the dump normalised) stands in for the graph input, so the first layer's
 * single_sim runs on what the board really computed with.
 */
#include "accuracy_runtime.h"
#include "board_app.h"
#include "dump_read.h"
#include "metrics.h"
#include "runtime_io.h"
#include "tensor_dump.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static rd_status input_spec(const an_quant_opts *q, size_t i, rd_input_spec *spec, rd_error *err)
{
    *spec = RD_INPUT_SPEC_DEFAULT;
    spec->layout = q->layout;
    spec->max_image_pixels = q->max_image_pixels;
    return rd_rknn_config_input_spec(&q->cfg, i, spec, err);
}

rd_status an_runtime_raw_input(const an_quant_opts *q, const rd_model *m, size_t i, const char *path, rd_tensor *out,
                               rd_error *err)
{
    rd_value_info vi;
    rd_model_value(m, (size_t)rd_model_input(m, i), &vi);
    if (vi.rank < 0)
        return rd_errorf(err, RD_E_UNSUPPORTED, "input '%s' has no declared shape: give --input-shape", vi.name);
    rd_input_spec spec;
    rd_status st = input_spec(q, i, &spec, err);
    if (st != RD_OK)
        return st;
    spec.n_mean = spec.n_std = 0;
    spec.rgb2bgr = false;
    int64_t dims[RD_MAX_RANK];
    for (int d = 0; d < vi.rank; d++)
        dims[d] = vi.dims[d] < 0 ? 1 : vi.dims[d];
    return rd_input_prepare(path, &spec, vi.rank, dims, NULL, out, err);
}

/* uint8 when every value is an integer in 0..255 (an image, as an application passes it) */
static rd_status as_pushed(const rd_tensor *raw, rd_tensor *out, rd_error *err)
{
    const float *v = raw->data;
    int64_t n = rd_tensor_numel(raw);
    bool bytes = n > 0;
    for (int64_t i = 0; i < n && bytes; i++)
        bytes = v[i] >= 0 && v[i] <= 255 && v[i] == floorf(v[i]);
    if (!bytes)
        return rd_tensor_clone(out, raw, err);
    rd_status st = rd_tensor_alloc(out, RD_DT_U8, raw->rank, raw->dims, err);
    for (int64_t i = 0; st == RD_OK && i < n; i++)
        ((uint8_t *)out->data)[i] = (uint8_t)v[i];
    return st;
}

rd_status an_runtime_write_inputs(const an_quant_opts *q, const rd_model *m, const char *const *paths,
                                  const rd_tensor *preprocessed, const char *dir, rd_error *err)
{
    rd_status st = rd_dir_make(dir, RD_DIR_OWN, err);
    for (size_t i = 0; st == RD_OK && i < rd_model_input_count(m); i++) {
        char path[4400];
        rd_tensor raw = {0}, pushed = {0};
        st = an_runtime_raw_input(q, m, i, paths[i], &raw, err);
        if (st == RD_OK)
            st = as_pushed(&raw, &pushed, err);
        snprintf(path, sizeof path, "%s/input%zu.npy", dir, i);
        if (st == RD_OK)
            st = rd_npy_save(path, &pushed, err);
        snprintf(path, sizeof path, "%s/input%zu_preprocessed.npy", dir, i);
        if (st == RD_OK)
            st = rd_npy_save(path, &preprocessed[i], err);
        rd_tensor_fini(&raw);
        rd_tensor_fini(&pushed);
    }
    return st;
}

/* ---- the application's input: the input-dump rule ------------------------------------------------ */

/* The board's InputOperator dump of input i as float32 on the dump's side of the normalisation. Under
   the normal API an integer dump that is not the graph input's int8 codes can only be the data before
   the normalisation (the runtime folded mean/std into the first layer): *api becomes zero-copy. */
static rd_status dump_values(an_runtime *rt, size_t i, const rd_tensor *board, const rd_sim_tensor *t, an_app_api *api,
                             FILE *log, rd_tensor *out, rd_error *err)
{
    bool int8_codes = board->dtype == RD_DT_I8 && t->quantized && t->precision == RD_PREC_INT8;
    bool integer = board->dtype != RD_DT_F32 && board->dtype != RD_DT_F16;
    rd_value_info vi;
    rd_model_value(rd_sim_model(rt->sim), (size_t)rd_model_input(rd_sim_model(rt->sim), i), &vi);
    if (*api == AN_API_NORMAL && integer && !int8_codes) {
        *api = AN_API_ZERO_COPY;
        if (log)
            fprintf(log,
                    "rknn-diag accuracy: note: input '%s': its InputOperator dump holds %s data, which the normal "
                    "API would have normalised: the runtime folded mean/std into the first layer, so the dump is "
                    "read as the data before the normalisation\n",
                    vi.name, rd_dtype_name(board->dtype));
    }
    if (*api == AN_API_ZERO_COPY)
        return rd_tensor_to_f32(out, board, err);
    return an_dump_dequantize(board, t, vi.name, out, err);
}

/* f reshaped to graph input i's dims (the dump's name carries NCHW dims of the same count). */
static bool to_graph_shape(const an_runtime *rt, size_t i, rd_tensor *f)
{
    const rd_model *m = rd_sim_model(rt->sim);
    rd_value_info vi;
    rd_model_value(m, (size_t)rd_model_input(m, i), &vi);
    int64_t want = 1;
    for (int d = 0; d < vi.rank; d++)
        want *= vi.dims[d] < 0 ? 1 : vi.dims[d];
    if (vi.rank < 1 || rd_tensor_numel(f) != want)
        return false;
    f->rank = vi.rank;
    for (int d = 0; d < vi.rank; d++)
        f->dims[d] = vi.dims[d] < 0 ? 1 : vi.dims[d];
    return true;
}

/* The first layer after the graph inputs that the board dumped, as the simulator computes it from given
   inputs: the run stops there. */
typedef struct first_layer {
    const an_runtime *rt;
    int value; /* -1: the first dumped materialised layer, whichever it is */
    rd_tensor got;
} first_layer;

static rd_status first_layer_observe(void *user, const rd_observed *ev, rd_error *err)
{
    first_layer *p = user;
    rd_sim_tensor t;
    if (ev->node < 0 || p->got.data || ev->tensor->dtype != RD_DT_F32 || (p->value >= 0 && ev->value != p->value) ||
        !an_dump_set_tensor(p->rt->dumps, ev->value) || rd_sim_tensor_get(p->rt->sim, ev->name, &t, NULL) != RD_OK ||
        !t.materialized)
        return RD_OK;
    p->value = ev->value;
    rd_status st = rd_tensor_clone(&p->got, ev->tensor, err);
    return st == RD_OK ? rd_errorf(err, RD_E_INVAL, "stop after the first dumped layer") : st;
}

/* *cos: NaN when the run did not reach a dumped layer (a model that fails there is the analysis' to report);
   fails only when memory ran out, which would make the check's answer wrong. */
static rd_status first_layer_cos(an_runtime *rt, const rd_tensor *inputs, first_layer *p, double *cos, rd_error *err)
{
    rd_run_options ro = {.observer = first_layer_observe, .user = p};
    rd_error e;
    *cos = NAN;
    if (rd_sim_run(rt->sim, inputs, rt->n_in, &ro, NULL, 0, &e) == RD_E_NOMEM) {
        if (err)
            *err = e;
        return RD_E_NOMEM;
    }
    const rd_tensor *board = p->got.data ? an_dump_set_tensor(rt->dumps, p->value) : NULL;
    if (!board || rd_tensor_numel(board) != rd_tensor_numel(&p->got))
        return RD_OK;
    rd_metrics mt;
    an_metrics_compute(board->data, p->got.data, rd_tensor_numel(board), NULL, &mt);
    *cos = an_cos_effective(&mt);
    return RD_OK;
}

/* Zero-copy dumps are the data before the normalisation, so a runtime that skipped it (pass_through with
   raw data) leaves a perfect dump: its first layer tells. Compares the board's first dumped layer with the
   simulator's on the normalised input (fed) and on the data as dumped (raw); *skipped_norm when only raw
   agrees. */
static rd_status skipped_normalisation(an_runtime *rt, size_t i, const rd_tensor *inputs, const rd_tensor *raw,
                                       bool *skipped_norm, char *why, size_t why_len, rd_error *err)
{
    *skipped_norm = false;
    rd_tensor *in = calloc(rt->n_in + 1, sizeof *in);
    if (!in)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    for (size_t j = 0; j < rt->n_in; j++)
        in[j] = rt->fed[j].data ? rt->fed[j] : inputs[j];
    first_layer normal = {.rt = rt, .value = -1}, skipped = {.rt = rt};
    double c_norm, c_raw = NAN;
    rd_status st = first_layer_cos(rt, in, &normal, &c_norm, err);
    in[i] = *raw;
    skipped.value = normal.value;
    if (st == RD_OK && normal.value >= 0)
        st = first_layer_cos(rt, in, &skipped, &c_raw, err);
    *skipped_norm = st == RD_OK && c_raw >= 0.999 && !(c_norm >= 0.99);
    if (*skipped_norm) {
        rd_value_info vi;
        rd_model_value(rd_sim_model(rt->sim), (size_t)normal.value, &vi);
        snprintf(why, why_len,
                 "the board's input was not normalised: its InputOperator dump is right, but its first "
                 "layer '%s' is what the simulator computes from that data without the model's mean_values/"
                 "std_values (cosine %.5f; %.5f with them): the runtime skipped the normalisation (the input's "
                 "rknn_tensor_attr.pass_through = 1 hands the buffer to the NPU as it is: set pass_through = 0, or "
                 "normalise and quantize the data yourself)",
                 vi.name, c_raw, c_norm);
    }
    rd_tensor_fini(&normal.got);
    rd_tensor_fini(&skipped.got);
    free(in);
    return st;
}

/* Appends how the dump was read to the explanation. */
static rd_status keep_why(an_runtime *rt, size_t i, const char *why, an_app_api api, rd_error *err)
{
    char full[1600];
    snprintf(full, sizeof full, "%s [InputOperator dump read by the %s API's rule: %s]", why, an_app_api_name(api),
             api == AN_API_NORMAL ? "the input after mean/std, as rknn_inputs_set feeds it"
                                  : "the application's buffer, before mean/std");
    if (!(rt->why[i] = strdup(full)))
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    return RD_OK;
}

/* Checks graph input i and decides what the board fed the model through it. */
static rd_status check_input(an_runtime *rt, size_t i, const char *path, const rd_tensor *inputs, FILE *log,
                             rd_error *err)
{
    const rd_model *m = rd_sim_model(rt->sim);
    rd_value_info vi;
    rd_model_value(m, (size_t)rd_model_input(m, i), &vi);
    const rd_tensor *board = an_dump_set_input(rt->dumps, i);
    rd_sim_tensor t;
    if (!board || rd_sim_tensor_get(rt->sim, vi.name, &t, NULL) != RD_OK) {
        if (log)
            fprintf(log, "rknn-diag accuracy: note: no InputOperator dump for input '%s': its check is skipped\n",
                    vi.name);
        return RD_OK;
    }
    an_app_api api = rt->api;
    rd_tensor values = {0}, raw = {0}, normalised = {0};
    rd_input_spec spec;
    rd_status st = input_spec(rt->q, i, &spec, err);
    if (st == RD_OK)
        st = an_runtime_raw_input(rt->q, m, i, path, &raw, err);
    char why[1400] = "";
    rd_error derr;
    rd_status dst = st == RD_OK ? dump_values(rt, i, board, &t, &api, log, &values, &derr) : RD_OK;
    if (dst == RD_E_NOMEM) { /* this host's memory, not the dump */
        if (err)
            *err = derr;
        rd_tensor_fini(&raw);
        return dst;
    }
    if (dst != RD_OK) {
        rt->verdict[i] = AN_IN_OTHER; /* a dump the reader cannot take is the check's result, not a failure */
        snprintf(why, sizeof why, "the InputOperator dump cannot be read as the %s API's: %s", an_app_api_name(api),
                 derr.msg);
        rd_tensor_fini(&raw);
        return keep_why(rt, i, why, api, err);
    }
    bool is_image = rd_path_is_image(path);
    if (st == RD_OK) {
        an_input_expect x = {.raw = &raw, .spec = &spec, .is_image = is_image, .api = api};
        if (api == AN_API_NORMAL && t.quantized && t.precision == RD_PREC_INT8) {
            x.scale = t.scale;
            x.zero_point = t.zero_point;
        }
        st = an_check_input(api == AN_API_NORMAL ? &values : board, &x, &rt->verdict[i], why, sizeof why, err);
    }
    bool shaped = st == RD_OK && to_graph_shape(rt, i, &values);
    rd_error nerr;
    rd_status nst = RD_E_INVAL; /* the normalised input: none unless made below */
    if (shaped && api == AN_API_NORMAL) {
        rt->fed[i] = values; /* the normalised input itself */
        values = (rd_tensor){0};
    } else if (shaped) {
        nst = an_app_normalise(&values, is_image, &spec, path, &normalised, &nerr);
    }
    if (nst == RD_E_NOMEM) {
        st = nst;
        if (err)
            *err = nerr;
    } else if (nst == RD_OK) {
        rt->fed[i] = normalised;
        bool skipped = false;
        if (rt->verdict[i] == AN_IN_OK)
            st = skipped_normalisation(rt, i, inputs, &values, &skipped, why, sizeof why, err);
        if (skipped) {
            rt->verdict[i] = AN_IN_NORM_MISSING;
            rd_tensor_fini(&rt->fed[i]);
            rt->fed[i] = values; /* what the first layer really got */
            values = (rd_tensor){0};
        }
    }
    if (st == RD_OK && rt->verdict[i] != AN_IN_OK)
        st = keep_why(rt, i, why, api, err);
    rd_tensor_fini(&values);
    rd_tensor_fini(&raw);
    return st;
}

rd_status an_runtime_open(an_runtime *rt, const char *dir, const rd_platform_info *plat, rd_sim *s,
                          const an_quant_opts *q, an_app_api api, const char *const *paths, const rd_tensor *inputs,
                          FILE *log, rd_error *err)
{
    memset(rt, 0, sizeof *rt);
    rt->sim = s;
    rt->q = q;
    rt->api = api;
    rt->n_in = rd_model_input_count(rd_sim_model(s));
    rt->fed = calloc(rt->n_in + 1, sizeof *rt->fed);
    rt->verdict = calloc(rt->n_in + 1, sizeof *rt->verdict);
    rt->why = calloc(rt->n_in + 1, sizeof *rt->why);
    if (!rt->fed || !rt->verdict || !rt->why) {
        an_runtime_close(rt);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    rd_status st = an_dump_set_load(dir, plat, s, &rt->dumps, err); /* the message names the folder already */
    for (size_t i = 0; st == RD_OK && i < rt->n_in; i++)
        st = check_input(rt, i, paths[i], inputs, log, err);
    if (st != RD_OK)
        an_runtime_close(rt);
    return st;
}

const rd_tensor *an_runtime_tensor(void *user, int value)
{
    an_runtime *rt = user;
    const rd_tensor *t = an_dump_set_tensor(rt->dumps, value);
    if (t)
        return t;
    const rd_model *m = rd_sim_model(rt->sim);
    for (size_t i = 0; i < rt->n_in; i++)
        if (rd_model_input(m, i) == value)
            return rt->fed[i].data ? &rt->fed[i] : NULL;
    return NULL;
}

static rd_status input_findings(an_runtime *rt, rd_result *r, rd_error *err)
{
    const rd_model *m = rd_sim_model(rt->sim);
    rd_status st = RD_OK;
    for (size_t i = 0; i < rt->n_in && st == RD_OK; i++) {
        if (rt->verdict[i] == AN_IN_OK || !rt->why[i])
            continue;
        rd_value_info vi;
        rd_model_value(m, (size_t)rd_model_input(m, i), &vi);
        st = an_io_finding(r, RD_FIND_INPUT_MISMATCH, vi.name, an_input_verdict_name(rt->verdict[i]), rt->why[i], err);
    }
    return st;
}

static rd_status check_outputs(an_runtime *rt, const rd_tensor *inputs, const char *const *app_outputs, size_t n_app,
                               rd_result *r, rd_error *err)
{
    const rd_model *m = rd_sim_model(rt->sim);
    size_t n_out = rd_model_output_count(m);
    if (n_app == 0)
        return RD_OK;
    if (n_app != n_out)
        return rd_errorf(err, RD_E_USAGE,
                         "--app-outputs gives %zu files, the model has %zu outputs (one .npy each, in "
                         "output order)",
                         n_app, n_out);
    rd_tensor *sim_out = calloc(n_out + 1, sizeof *sim_out);
    if (!sim_out)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    rd_status st = rd_sim_run(rt->sim, inputs, rt->n_in, NULL, sim_out, n_out, err);
    for (size_t o = 0; st == RD_OK && o < n_out; o++) {
        rd_value_info vi;
        rd_model_value(m, (size_t)rd_model_output(m, o), &vi);
        const rd_tensor *board = an_dump_set_output(rt->dumps, o);
        if (!board)
            board = &sim_out[o];
        rd_tensor app = {0};
        st = rd_npy_load(app_outputs[o], &app, err);
        if (st != RD_OK)
            break;
        rd_sim_tensor t;
        float scale = 0;
        int32_t zp = 0;
        if (rd_sim_tensor_get(rt->sim, vi.name, &t, NULL) == RD_OK && t.quantized) {
            scale = t.scale;
            zp = t.zero_point;
        }
        char why[1024];
        bool mismatch = false;
        st = an_check_output(&app, board, scale, zp, &mismatch, why, sizeof why, err);
        if (st == RD_OK && mismatch) {
            char full[1400];
            snprintf(full, sizeof full, "%s (%s against the board's %s)", why, app_outputs[o],
                     board == &sim_out[o] ? "output as the simulator computes it" : "OutputOperator dump");
            st = an_io_finding(r, RD_FIND_OUTPUT_MISMATCH, vi.name, NULL, full, err);
        }
        rd_tensor_fini(&app);
    }
    for (size_t o = 0; o < n_out; o++)
        rd_tensor_fini(&sim_out[o]);
    free(sim_out);
    return st;
}

rd_status an_runtime_checks(an_runtime *rt, const rd_tensor *inputs, const char *const *app_outputs,
                            size_t n_app_outputs, rd_result *r, rd_error *err)
{
    rd_status st = input_findings(rt, r, err);
    if (st == RD_OK)
        st = check_outputs(rt, inputs, app_outputs, n_app_outputs, r, err);
    return st;
}

rd_status an_runtime_report(const an_runtime *rt, const char *path, rd_error *err)
{
    rd_atomic_file *f;
    rd_status st = rd_atomic_file_open(path, NULL, &f, err);
    if (st != RD_OK)
        return st;
    st = an_dump_set_report(rt->dumps, rd_atomic_file_stream(f), err);
    if (st != RD_OK) {
        rd_atomic_file_abort(f);
        return st;
    }
    return rd_atomic_file_commit(f, err);
}

void an_runtime_close(an_runtime *rt)
{
    if (rt->dumps)
        an_dump_set_destroy(rt->dumps);
    for (size_t i = 0; i < rt->n_in; i++) {
        if (rt->fed)
            rd_tensor_fini(&rt->fed[i]);
        if (rt->why)
            free(rt->why[i]);
    }
    free(rt->fed);
    free(rt->verdict);
    free(rt->why);
    memset(rt, 0, sizeof *rt);
}
