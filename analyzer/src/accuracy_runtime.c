/*
 * accuracy_runtime.c: the board's dumps in the accuracy analysis (accuracy_runtime.h).
 *
 * librknnrt dumps the user's raw input (InputOperator, uint8 for an image) but no normalised input, so
 * when the dump set has no float tensor for a graph input, its InputOperator dump normalised with the
 * model's mean/std stands in: the first layer's single_sim then runs on what the board really fed it.
 */
#include "accuracy_runtime.h"
#include "runtime_io.h"
#include "tensor_dump.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static rd_status input_spec(const an_quant_opts *q, size_t i, rd_input_spec *spec, rd_error *err)
{
    *spec = RD_INPUT_SPEC_DEFAULT;
    spec->layout = q->layout;
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
    rd_status st = an_mkdirs(dir, err);
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

rd_status an_runtime_open(an_runtime *rt, const char *dir, const rd_platform_info *plat, rd_sim *s,
                          const an_quant_opts *q, rd_error *err)
{
    memset(rt, 0, sizeof *rt);
    rt->sim = s;
    rt->q = q;
    rt->n_in = rd_model_input_count(rd_sim_model(s));
    rt->norm_inputs = calloc(rt->n_in + 1, sizeof *rt->norm_inputs);
    rt->norm_tried = calloc(rt->n_in + 1, sizeof *rt->norm_tried);
    if (!rt->norm_inputs || !rt->norm_tried) {
        an_runtime_close(rt);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    rd_status st = an_dump_set_load(dir, plat, s, &rt->dumps, err);
    if (st != RD_OK)
        an_runtime_close(rt); /* the message names the folder already */
    return st;
}

/* The InputOperator dump of graph input i, normalised with the model's mean/std; NULL when unusable. */
static const rd_tensor *normalised_input(an_runtime *rt, size_t i)
{
    if (rt->norm_tried[i])
        return rt->norm_inputs[i].data ? &rt->norm_inputs[i] : NULL;
    rt->norm_tried[i] = true;
    const rd_tensor *raw = an_dump_set_input(rt->dumps, i);
    const rd_model *m = rd_sim_model(rt->sim);
    rd_value_info vi;
    rd_model_value(m, (size_t)rd_model_input(m, i), &vi);
    rd_input_spec spec;
    rd_tensor f = {0};
    if (!raw || vi.rank < 1 || input_spec(rt->q, i, &spec, NULL) != RD_OK || rd_tensor_to_f32(&f, raw, NULL) != RD_OK)
        return NULL;
    int64_t want = 1;
    for (int d = 0; d < vi.rank; d++)
        want *= vi.dims[d] < 0 ? 1 : vi.dims[d];
    if (rd_tensor_numel(&f) != want) {
        rd_tensor_fini(&f);
        return NULL;
    }
    f.rank = vi.rank;
    for (int d = 0; d < vi.rank; d++)
        f.dims[d] = vi.dims[d] < 0 ? 1 : vi.dims[d];
    int64_t c_n = vi.rank >= 2 ? f.dims[1] : 1, plane = c_n ? want / (f.dims[0] * c_n) : 0;
    float *x = f.data;
    for (int64_t k = 0; k < want; k++) {
        int64_t c = plane ? (k / plane) % c_n : 0;
        float mean = spec.n_mean == (size_t)c_n ? spec.mean[c] : 0.0f;
        float sd = spec.n_std == (size_t)c_n ? spec.std[c] : 1.0f;
        x[k] = (x[k] - mean) / sd;
    }
    rt->norm_inputs[i] = f;
    return &rt->norm_inputs[i];
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
            return normalised_input(rt, i);
    return NULL;
}

static rd_status check_inputs(an_runtime *rt, const char *const *paths, rd_result *r, FILE *log, rd_error *err)
{
    const rd_model *m = rd_sim_model(rt->sim);
    for (size_t i = 0; i < rt->n_in; i++) {
        rd_value_info vi;
        rd_model_value(m, (size_t)rd_model_input(m, i), &vi);
        const rd_tensor *board = an_dump_set_input(rt->dumps, i);
        if (!board) {
            if (log)
                fprintf(log, "rknn-diag accuracy: note: no InputOperator dump for input '%s': its check is skipped\n",
                        RD_TEXT_SHOWN(vi.name));
            continue;
        }
        rd_tensor raw = {0};
        rd_input_spec spec;
        rd_status st = input_spec(rt->q, i, &spec, err);
        if (st == RD_OK)
            st = an_runtime_raw_input(rt->q, rd_sim_model(rt->sim), i, paths[i], &raw, err);
        if (st != RD_OK)
            return st;
        char why[1024];
        an_input_verdict v = an_check_input(board, &raw, &spec, why, sizeof why);
        rd_tensor_fini(&raw);
        if (v != AN_IN_OK && (st = an_io_finding(r, RD_FIND_INPUT_MISMATCH, vi.name, why, err)) != RD_OK)
            return st;
    }
    return RD_OK;
}

static rd_status check_outputs(an_runtime *rt, const rd_tensor *inputs, const char *const *app_outputs, size_t n_app,
                               rd_result *r, rd_error *err)
{
    const rd_model *m = rd_sim_model(rt->sim);
    size_t n_out = rd_model_output_count(m);
    if (n_app == 0)
        return RD_OK;
    if (n_app != n_out)
        return rd_errorf(err, RD_E_USAGE, "--app-outputs gives %zu files, the model has %zu outputs (one .npy each, in "
                         "output order)", n_app, n_out);
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
        if (an_check_output(&app, board, scale, zp, why, sizeof why)) {
            char full[1400];
            snprintf(full, sizeof full, "%s (%s against the board's %s)", why, app_outputs[o],
                     board == &sim_out[o] ? "output as the simulator computes it" : "OutputOperator dump");
            st = an_io_finding(r, RD_FIND_OUTPUT_MISMATCH, vi.name, full, err);
        }
        rd_tensor_fini(&app);
    }
    for (size_t o = 0; o < n_out; o++)
        rd_tensor_fini(&sim_out[o]);
    free(sim_out);
    return st;
}

rd_status an_runtime_checks(an_runtime *rt, const char *const *paths, const rd_tensor *inputs,
                            const char *const *app_outputs, size_t n_app_outputs, rd_result *r, FILE *log,
                            rd_error *err)
{
    rd_status st = check_inputs(rt, paths, r, log, err);
    if (st == RD_OK)
        st = check_outputs(rt, inputs, app_outputs, n_app_outputs, r, err);
    return st;
}

rd_status an_runtime_report(const an_runtime *rt, const char *path, rd_error *err)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return rd_errorf(err, RD_E_IO, "cannot write %s", path);
    rd_status st = an_dump_set_report(rt->dumps, f, err);
    if (fclose(f) != 0 && st == RD_OK)
        st = rd_errorf(err, RD_E_IO, "cannot write %s", path);
    return st;
}

void an_runtime_close(an_runtime *rt)
{
    if (rt->dumps)
        an_dump_set_destroy(rt->dumps);
    for (size_t i = 0; rt->norm_inputs && i < rt->n_in; i++)
        rd_tensor_fini(&rt->norm_inputs[i]);
    free(rt->norm_inputs);
    free(rt->norm_tried);
    memset(rt, 0, sizeof *rt);
}
