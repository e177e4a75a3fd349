/*
 * config_model.c: the model a model_config.yml describes (config_model.h), in RKNN's order: load_onnx
 * with subgraphs.inputs/outputs and input_size_list, then the build's model_pruning. Each step writes the
 * model back and reads it again (rd_onnx_model_rewrite / rd_onnx_model_write, rd_model_load_mem), so
 * what every command analyses is an ordinary loaded model; a model already in that form (convert's
 * output given to accuracy with the same config) goes through unchanged.
 */
#include "term_text.h"
#include "config_model.h"
#include "prune.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reloads the model written into buf as m's replacement; the name stays the file's for messages. */
static rd_status reload(const char *path, void *buf, size_t len, const rd_load_options *lopt, rd_model **m,
                        rd_error *err)
{
    rd_model *fresh = NULL;
    rd_status st = rd_model_load_mem(buf, len, path, NULL, lopt, &fresh, err);
    free(buf);
    if (st != RD_OK)
        return st;
    rd_model_destroy(*m);
    *m = fresh;
    return RD_OK;
}

/* True when each name is a graph input (outputs: a graph output) of m and they are all of them. */
static bool is_io_set(const rd_model *m, bool inputs, char *const *names, size_t n)
{
    size_t n_io = inputs ? rd_model_input_count(m) : rd_model_output_count(m);
    if (n != n_io)
        return false;
    for (size_t i = 0; i < n; i++) {
        rd_value_info vi;
        rd_model_value(m, (size_t)(inputs ? rd_model_input(m, i) : rd_model_output(m, i)), &vi);
        bool found = false;
        for (size_t k = 0; k < n && !found; k++)
            found = strcmp(names[k], vi.name) == 0;
        if (!found)
            return false;
    }
    return true;
}

/* Where the cut comes from, for messages: the config's subgraphs, or --graph-inputs / --graph-outputs. */
static void cut_origin(const rd_rknn_config *c, char *buf, size_t len)
{
    if (c->line_subgraphs && c->path)
        snprintf(buf, len, "%s:%d: subgraphs", c->path, c->line_subgraphs);
    else
        snprintf(buf, len, "--graph-inputs/--graph-outputs");
}

/* The cut at ins / outs (the config's names as the model has them), the result read with lopt. */
static rd_status cut_at(const rd_rknn_config *c, char **ins, char **outs, const char *path, const rd_load_options *lopt,
                        rd_model **m, FILE *errs, rd_error *err)
{
    if (!ins || !outs)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    if ((!c->n_sub_inputs || is_io_set(*m, true, ins, c->n_sub_inputs)) &&
        (!c->n_sub_outputs || is_io_set(*m, false, outs, c->n_sub_outputs)))
        return RD_OK;
    rd_onnx_rewrite rw = {.inputs = (const char *const *)ins,
                          .n_inputs = c->n_sub_inputs,
                          .outputs = (const char *const *)outs,
                          .n_outputs = c->n_sub_outputs};
    void *buf = NULL;
    size_t len = 0;
    char origin[300];
    cut_origin(c, origin, sizeof origin);
    rd_status st = rd_onnx_model_rewrite(*m, &rw, &buf, &len, err);
    if (st != RD_OK)
        return rd_error_prefix(err, "%s", origin);
    st = reload(path, buf, len, lopt, m, err);
    if (st != RD_OK)
        return rd_error_prefix(err, "the model cut at %s", origin);
    if (errs)
        fprintf(errs, "%s at %s (%zu input%s, %zu output%s): %zu nodes kept\n",
                c->line_subgraphs ? "config: cut" : "cut",
                c->line_subgraphs ? "subgraphs" : "--graph-inputs/--graph-outputs", c->n_sub_inputs,
                c->n_sub_inputs == 1 ? "" : "s", c->n_sub_outputs, c->n_sub_outputs == 1 ? "" : "s",
                rd_model_node_count(*m));
    return RD_OK;
}

/* names as m names them: TensorFlow's "x:0" is the value the frontend named "x" (a converted graph given back
   with its config); a copy, NULL when out of memory. */
static char **model_names(const rd_model *m, char *const *names, size_t n)
{
    char **out = calloc(n ? n : 1, sizeof *out);
    for (size_t i = 0; out && i < n; i++) {
        size_t len = strlen(names[i]);
        bool port0 = len > 2 && !strcmp(names[i] + len - 2, ":0") && rd_model_find_value(m, names[i]) < 0;
        if (!(out[i] = strndup(names[i], port0 ? len - 2 : len)) || (port0 && rd_model_find_value(m, out[i]) < 0)) {
            free(out[i]); /* not that either: the name as given, for the cut's message */
            out[i] = strdup(names[i]);
        }
        if (!out[i]) {
            for (size_t k = 0; k < i; k++)
                free(out[k]);
            free(out);
            return NULL;
        }
    }
    return out;
}

static void free_names(char **names, size_t n)
{
    for (size_t i = 0; names && i < n; i++)
        free(names[i]);
    free(names);
}

/* subgraphs.inputs/outputs: the cut (nothing when m already is it). */
static rd_status cut(const rd_rknn_config *c, const char *path, const rd_load_options *lopt, rd_model **m, FILE *errs,
                     rd_error *err)
{
    char **ins = model_names(*m, c->sub_inputs, c->n_sub_inputs),
         **outs = model_names(*m, c->sub_outputs, c->n_sub_outputs);
    rd_status st = cut_at(c, ins, outs, path, lopt, m, errs, err);
    free_names(ins, c->n_sub_inputs);
    free_names(outs, c->n_sub_outputs);
    return st;
}

/* The config's shapes (input_size_list or dynamic_input set k) for m's inputs in order, --input-shape on
   top by name; reloads m when they change something. */
static rd_status fix_shapes(const an_quant_opts *q, const an_model_request *req, const char *path, rd_model **m,
                            rd_error *err)
{
    const rd_rknn_config *c = &q->cfg;
    const rd_dims *dims =
        c->n_dynamic_sets ? &c->dynamic_input[req->dynamic_set * c->n_dynamic_per_set] : c->input_size_list;
    size_t n_cfg = c->n_dynamic_sets ? c->n_dynamic_per_set : c->n_input_size_list;
    const char *key = c->n_dynamic_sets ? "configs.dynamic_input" : "subgraphs.input_size_list";
    int line = c->n_dynamic_sets ? c->line_dynamic_input : c->line_input_size_list;
    size_t n_in = rd_model_input_count(*m);
    if (n_cfg == 0)
        return RD_OK;
    for (size_t k = 0; k < req->n_shapes; k++) {
        bool known = false;
        for (size_t i = 0; i < n_in && !known; i++) {
            rd_value_info vi;
            rd_model_value(*m, (size_t)rd_model_input(*m, i), &vi);
            known = strcmp(req->shapes[k].name, vi.name) == 0;
        }
        if (!known)
            return rd_errorf(err, RD_E_USAGE, "--input-shape %s: the model has no input of that name",
                             req->shapes[k].name);
    }
    if (n_cfg != n_in)
        return rd_errorf(err, RD_E_PARSE, "%s:%d: %s gives %zu shape%s, the model%s has %zu input%s", c->path, line,
                         key, n_cfg, n_cfg == 1 ? "" : "s",
                         c->n_sub_inputs || c->n_sub_outputs ? " (cut at subgraphs)" : "", n_in, n_in == 1 ? "" : "s");
    if (n_in > RD_MAX_MODEL_INPUTS)
        return rd_errorf(err, RD_E_UNSUPPORTED, "the model has %zu inputs (at most %d)", n_in, RD_MAX_MODEL_INPUTS);
    rd_input_shape shapes[RD_MAX_MODEL_INPUTS];
    bool changes = false;
    for (size_t i = 0; i < n_in; i++) {
        rd_value_info vi;
        rd_model_value(*m, (size_t)rd_model_input(*m, i), &vi);
        shapes[i] = (rd_input_shape){.name = vi.name, .rank = dims[i].rank};
        memcpy(shapes[i].dims, dims[i].dims, sizeof shapes[i].dims);
        for (size_t k = 0; k < req->n_shapes; k++)
            if (strcmp(req->shapes[k].name, vi.name) == 0) {
                shapes[i] = req->shapes[k]; /* --input-shape wins */
                if (req->errs)
                    fprintf(req->errs, "config: --input-shape %s overrides %s\n", RD_TEXT_SHOWN(vi.name), key);
            }
        changes |= vi.rank != shapes[i].rank;
        for (int d = 0; d < vi.rank && !changes; d++)
            changes |= vi.dims[d] != shapes[i].dims[d];
    }
    if (!changes)
        return RD_OK;
    /* RKNN's input_size_list replaces even a fixed input shape: written without the intermediate shapes,
       which the new input shape changes, and inferred again */
    void *buf = NULL;
    size_t len = 0;
    rd_onnx_rewrite rw = {.drop_shapes = true};
    rd_status st = rd_onnx_model_rewrite(*m, &rw, &buf, &len, err);
    /* the config's list (mistakes in it are input errors, exit 3; its file and line prefix them) */
    rd_load_options lopt = {
        .input_shapes = shapes, .n_input_shapes = n_in, .replace_fixed_dims = true, .input_shapes_from = key};
    if (st == RD_OK)
        st = reload(path, buf, len, &lopt, m, err);
    if (st != RD_OK)
        return rd_error_prefix(err, "%s:%d: %s", c->path, line, key);
    return RD_OK;
}

/* configs.model_pruning: RKNN's lossless pruning before the analysis, with its summary. */
static rd_status prune(const rd_rknn_config *c, const char *path, rd_model **m, FILE *errs, rd_error *err)
{
    an_prune_plan plan = {0};
    void *buf = NULL;
    size_t len = 0;
    rd_status st = an_prune_analyze(*m, &plan, err);
    if (st == RD_OK && plan.n_channels)
        st = an_prune_write(*m, &plan, &buf, &len, err);
    if (st == RD_OK && plan.n_channels)
        st = reload(path, buf, len, NULL, m, err);
    if (st == RD_OK && errs && plan.n_channels) {
        fprintf(errs, "config: model_pruning (%s:%d): %zu all-zero channel%s pruned before the analysis\n", c->path,
                c->line_model_pruning, plan.n_channels, plan.n_channels == 1 ? "" : "s");
        an_prune_print_summary(errs, &plan);
    } else if (st == RD_OK && errs) {
        fprintf(errs,
                "config: model_pruning (%s:%d): nothing to prune (no Conv or Gemm output channel is all "
                "zero)\n",
                c->path, c->line_model_pruning);
    }
    an_prune_plan_fini(&plan);
    return st == RD_OK ? RD_OK : rd_error_prefix(err, "%s:%d: model_pruning", c->path, c->line_model_pruning);
}

/*
 * The model file through its frontend with what the config gives it before the ONNX exists: a TensorFlow graph is
 * cut at subgraphs.inputs/outputs while it is read (load_tensorflow's inputs and outputs: internal tensors,
 * "name:0"), a PyTorch model is exported with the shapes of input_size_list (forward's arguments in order) and
 * --input-shape by name (load_pytorch's input_size_list).
 */
static rd_status open_configured(const char *path, const rd_rknn_config *c, const an_model_request *req,
                                 const rd_load_options *lopt, rd_model **m, rd_frontend_info *info, rd_error *err)
{
    rd_frontend_options fo = {.model_precision = req->model_precision,
                              .inputs = (const char *const *)c->sub_inputs,
                              .n_inputs = c->n_sub_inputs,
                              .outputs = (const char *const *)c->sub_outputs,
                              .n_outputs = c->n_sub_outputs};
    if (c->framework && rd_model_format_parse(c->framework, &fo.expect, err) != RD_OK) {
        if (err)
            err->code = RD_E_PARSE;
        return rd_error_prefix(err, "%s:%d: models.platform", c->path, c->line_models);
    }
    const rd_dims *dims =
        c->n_dynamic_sets ? &c->dynamic_input[req->dynamic_set * c->n_dynamic_per_set] : c->input_size_list;
    size_t n_cfg = c->n_dynamic_sets ? c->n_dynamic_per_set : c->n_input_size_list;
    rd_input_shape sizes[2 * RD_MAX_MODEL_INPUTS];
    size_t n = 0;
    for (size_t i = 0; i < n_cfg && i < RD_MAX_MODEL_INPUTS; i++, n++) {
        sizes[n] = (rd_input_shape){.name = NULL, .rank = dims[i].rank};
        memcpy(sizes[n].dims, dims[i].dims, sizeof sizes[n].dims);
    }
    for (size_t k = 0; n_cfg && k < req->n_shapes && k < RD_MAX_MODEL_INPUTS; k++)
        sizes[n++] = req->shapes[k]; /* by name, over the config's */
    fo.input_sizes = sizes;
    fo.n_input_sizes = n;
    return rd_frontend_load(path, &fo, lopt, m, info, err);
}

rd_status an_model_load_configured(an_quant_opts *q, const an_model_request *req, rd_model **out, rd_error *err)
{
    *out = NULL;
    rd_status st = req->model_only ? an_quant_apply_cut(q, err) : an_quant_finish(q, NULL, err);
    if (st != RD_OK)
        return st;
    const rd_rknn_config *c = &q->cfg;
    for (size_t i = 0; req->errs && !q->notes_shown && i < c->n_notes; i++) {
        fputs("warning: ", req->errs); /* notes quote the config file */
        an_put_text(req->errs, c->notes[i]);
        fputc('\n', req->errs);
    }
    q->notes_shown = true;
    const char *path = req->path ? req->path : c->model_file_path;
    if (!path)
        return rd_errorf(err, RD_E_USAGE, "missing MODEL.onnx (or models.model_file_path in -c model_config.yml)");
    if (c->n_dynamic_sets && req->dynamic_refusal)
        return rd_errorf(err, RD_E_UNSUPPORTED, "%s:%d: dynamic_input (%zu shape sets) is not supported by %s: %s",
                         c->path, c->line_dynamic_input, c->n_dynamic_sets, req->command, req->dynamic_refusal);
    if (c->n_dynamic_sets && req->n_shapes)
        return rd_errorf(err, RD_E_USAGE,
                         "--input-shape and %s's dynamic_input both give the input shapes: give "
                         "one of them",
                         c->path);
    if (c->n_dynamic_sets && req->dynamic_set >= c->n_dynamic_sets)
        return rd_errorf(err, RD_E_INVAL, "dynamic_input set %zu of %zu", req->dynamic_set, c->n_dynamic_sets);
    bool reshaped = c->n_dynamic_sets || c->n_input_size_list;
    bool configured = reshaped || c->n_sub_inputs || c->n_sub_outputs || c->model_pruning;
    /* without a config step the shapes go straight to the loader, as before */
    rd_load_options lopt = {.input_shapes = reshaped ? NULL : req->shapes,
                            .n_input_shapes = reshaped ? 0 : req->n_shapes,
                            .allow_unsupported_ops = req->allow_unsupported_ops};
    const rd_load_options cut_lopt = {.allow_unsupported_ops = req->allow_unsupported_ops};
    rd_model *m = NULL;
    rd_frontend_info info = {0};
    st = open_configured(path, c, req, &lopt, &m, &info, err);
    if (st != RD_OK && info.format == RD_FORMAT_TENSORFLOW && err && err->code == RD_E_INVAL) {
        char origin[300]; /* a name the TensorFlow graph does not have: exit 3, as a cut ONNX model's */
        cut_origin(c, origin, sizeof origin);
        rd_error_prefix(err, "%s", origin);
        err->code = c->line_subgraphs ? RD_E_PARSE : RD_E_INVAL;
        st = err->code;
    }
    q->graph_nhwc = st == RD_OK && info.format == RD_FORMAT_TFLITE; /* TFLite keeps NHWC (docs/frontends.md) */
    if (st == RD_OK && req->info)
        *req->info = info;
    if (st == RD_OK && info.format == RD_FORMAT_TENSORFLOW && (c->n_sub_inputs || c->n_sub_outputs) && req->errs)
        fprintf(req->errs, "config: TensorFlow graph read cut at subgraphs (%zu input%s, %zu output%s): %s\n",
                c->n_sub_inputs, c->n_sub_inputs == 1 ? "" : "s", c->n_sub_outputs, c->n_sub_outputs == 1 ? "" : "s",
                info.detail);
    else if (st == RD_OK && configured) /* TensorFlow: cut while read */
        st = cut(c, path, &cut_lopt, &m, req->errs, err);
    if (st == RD_OK && reshaped)
        st = fix_shapes(q, req, path, &m, err);
    if (st == RD_OK && c->model_pruning)
        st = prune(c, path, &m, req->errs, err);
    if (st == RD_OK && !req->model_only)
        st = an_quant_finish(q, m, err);
    if (st != RD_OK) {
        rd_model_destroy(m);
        return st;
    }
    *out = m;
    return RD_OK;
}

size_t an_dynamic_sets(const an_quant_opts *q)
{
    return q->cfg.n_dynamic_sets;
}

int an_dynamic_prepare(an_cmd_ctx *ctx, an_quant_opts *q, size_t *n_sets)
{
    rd_error err = {0};
    *n_sets = 0;
    if (an_quant_finish(q, NULL, &err) != RD_OK)
        return an_fail(ctx, &err);
    *n_sets = an_dynamic_sets(q);
    return AN_GO;
}

void an_dynamic_set_name(const an_quant_opts *q, size_t k, char *buf, size_t len)
{
    const rd_rknn_config *c = &q->cfg;
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; k < c->n_dynamic_sets && i < c->n_dynamic_per_set && used < len; i++) {
        const rd_dims *d = &c->dynamic_input[k * c->n_dynamic_per_set + i];
        used += (size_t)snprintf(buf + used, len - used, "%s", i ? "+" : "");
        for (int r = 0; r < d->rank && used < len; r++)
            used += (size_t)snprintf(buf + used, len - used, "%s%lld", r ? "x" : "", (long long)d->dims[r]);
    }
}
