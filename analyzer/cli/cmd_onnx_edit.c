/*
 * cmd_onnx_edit.c: `rknn-diag onnx-edit MODEL -o OUT --input NAME=FORMULA ... --output NAME=FORMULA ...
 * [--dataset FILE]`: RKNN's onnx_edit. Inputs and outputs take the layouts the formulas describe
 * (edit_formula.h), the model is rewritten so that it computes what the original did (edit_model.h),
 * and a dataset can be carried over into the new layouts. docs/onnx-edit.md is the user doc.
 */
#include "cmd_spec.h"
#include "config_model.h"
#include "edit_model.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { OPT_INPUT = 1, OPT_OUTPUT, OPT_DATASET, OPT_LAYOUT, OPT_MAX_PIXELS };

static const an_optspec edit_opts[] = {
    {OPT_INPUT, "input", 0, "NAME=FORMULA", "new layout of a graph input, as 'a,b,c,d->a,c,d,b' (repeat)"},
    {OPT_OUTPUT, "output", 0, "NAME=FORMULA", "new layout of a graph output (repeat)"},
    {OPT_DATASET, "dataset", 0, "FILE", "dataset.txt to carry over: writes dataset.txt and dataset/ beside OUT"},
    {OPT_LAYOUT, "input-layout", 0, "L", "how the dataset's .npy files are read: nhwc (default, as RKNN) or nchw"},
    {OPT_MAX_PIXELS, "max-image-pixels", 0, "N", "refuse larger dataset images (default 67108864 = 8192x8192)"},
};

#define MAX_EDITS 64

typedef struct edit_args {
    const char *model, *out, *dataset;
    rd_input_layout layout;
    uint64_t max_image_pixels; /* 0: the default bound */
    const char *specs[MAX_EDITS];
    bool spec_is_output[MAX_EDITS];
    int n_specs;
    an_cmd_args cmd;
} edit_args;

static const char *const edit_about =
    "Rewrites the layouts of a model's inputs and outputs with RKNN's onnx_edit formulas, so that the\n"
    "converted model needs fewer Reshape/Transpose layers. Left of '->' one group of letters per original\n"
    "dim (a 1 for a dim of size 1), right of it the new dims; within a group the first letter is the\n"
    "outermost; splits are sized in brackets at the end of the left side:\n"
    "  --input 'x=a,b,c,d->a,c,d,b'              NCHW input taken as NHWC\n"
    "  --input 'x=ab,c,d,qk[a=2,k=8]->aq,cd,1,kb' split, transpose and merge\n"
    "The edited model computes exactly what the original did: the inverse layouts are inserted at the\n"
    "boundary and merged with the model's own Reshape/Transpose layers next to them. With --dataset each\n"
    "sample is converted too; the new dataset.txt starts with '# rknn-diag: layout=graph' so that its\n"
    ".npy files are read as graph tensors (docs/onnx-edit.md). With --graph-inputs/--graph-outputs the\n"
    "subgraph between those tensors is edited and written: the formulas name its inputs and outputs.";

static int take_option(an_cmd_ctx *ctx, void *user, int id, const char *v)
{
    edit_args *a = user;
    rd_error err = {0};
    switch (id) {
    case OPT_INPUT:
    case OPT_OUTPUT:
        if (a->n_specs == MAX_EDITS)
            return an_usage(ctx, "more than %d --input/--output formulas", MAX_EDITS);
        if (!strchr(v, '='))
            return an_usage(ctx, "--%s expects NAME=FORMULA, got '%s'", id == OPT_INPUT ? "input" : "output", v);
        a->spec_is_output[a->n_specs] = id == OPT_OUTPUT;
        a->specs[a->n_specs++] = v;
        break;
    case OPT_DATASET:
        a->dataset = v;
        break;
    case OPT_LAYOUT:
    case OPT_MAX_PIXELS:
        if ((id == OPT_LAYOUT ? an_parse_input_layout("--input-layout", v, &a->layout, &err)
                              : an_parse_pixel_count("--max-image-pixels", v, &a->max_image_pixels, &err)) != RD_OK)
            return an_usage(ctx, "%s", err.msg);
        break;
    }
    return AN_GO;
}

/* Returns AN_GO to go on, else the exit code. */
/* What the parser leaves to the command: something to edit. */
static int check_args(an_cmd_ctx *ctx, edit_args *a)
{
    a->model = a->cmd.model;
    a->out = a->cmd.output;
    if (!a->n_specs)
        return an_usage(ctx, "nothing to edit: give --input NAME=FORMULA or --output NAME=FORMULA");
    return AN_GO;
}

/* The folder of path ("." when it has none), malloc'ed. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 1;
    if (slash && n == 0)
        n = 1; /* "/model.onnx" */
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, slash ? path : ".", n);
        d[n] = '\0';
    }
    return d;
}

static int describe_io(FILE *out, const rd_model *m, const an_edit_io *io, bool output)
{
    size_t n = output ? rd_model_output_count(m) : rd_model_input_count(m);
    int edited = 0;
    for (size_t i = 0; i < n; i++) {
        if (!io[i].edited)
            continue;
        rd_value_info vi;
        rd_model_value(m, (size_t)(output ? rd_model_output(m, i) : rd_model_input(m, i)), &vi);
        char from[128], to[128];
        rd_tensor a = {.rank = io[i].plan.in_rank}, b = {.rank = io[i].plan.out_rank};
        memcpy(a.dims, io[i].plan.in_dims, (size_t)a.rank * sizeof *a.dims);
        memcpy(b.dims, io[i].plan.out_dims, (size_t)b.rank * sizeof *b.dims);
        fprintf(out, "%-6s %-24s %s -> %s\n", output ? "output" : "input", RD_TEXT_SHOWN(vi.name),
                rd_shape_str(&a, from, sizeof from), rd_shape_str(&b, to, sizeof to));
        edited++;
    }
    return edited;
}

/*
 * --dataset: each sample read as RKNN reads it (images decoded and resized, .npy per --input-layout,
 * no mean/std), converted into the edited layouts and saved as float32 .npy under DIR/dataset/, listed
 * in DIR/dataset.txt after the layout=graph marker.
 */
static rd_status convert_dataset(const edit_args *a, const rd_model *m, const an_edit_io *ins, size_t *n_written,
                                 rd_error *err)
{
    rd_dataset ds;
    size_t n_in = rd_model_input_count(m);
    rd_status st = rd_dataset_load(a->dataset, n_in, &ds, err);
    if (st != RD_OK)
        return st;
    char *dir = dir_of(a->out);
    size_t cap = dir ? strlen(dir) + 64 : 0;
    char *list = malloc(cap), *sub = malloc(cap), *file = malloc(cap + 32);
    rd_atomic_file *af = NULL;
    if (!dir || !list || !sub || !file) {
        st = rd_errorf(err, RD_E_NOMEM, "out of memory");
        goto out;
    }
    snprintf(list, cap, "%s/dataset.txt", dir);
    snprintf(sub, cap, "%s/dataset", dir);
    char *src_real = realpath(a->dataset, NULL), *dst_real = realpath(list, NULL);
    bool same = src_real && dst_real && strcmp(src_real, dst_real) == 0;
    free(src_real);
    free(dst_real);
    if (same) {
        st = rd_errorf(err, RD_E_USAGE, "%s would overwrite the --dataset list itself: write OUT in another folder",
                       list);
        goto out;
    }
    st = rd_dir_make(sub, RD_DIR_OWN, err);
    if (st == RD_OK)
        st = rd_atomic_file_open(list, NULL, &af, err);
    if (st != RD_OK)
        goto out;
    FILE *f = rd_atomic_file_stream(af);
    fprintf(f,
            "# rknn-diag: layout=graph\n# written by rknn-diag onnx-edit from %s: float32 .npy in the edited "
            "model's own input layouts\n",
            a->dataset);
    for (size_t k = 0; k < ds.n_samples && st == RD_OK; k++) {
        for (size_t i = 0; i < n_in && st == RD_OK; i++) {
            rd_value_info vi;
            rd_model_value(m, (size_t)rd_model_input(m, i), &vi);
            int64_t dims[RD_MAX_RANK];
            for (int d = 0; d < vi.rank; d++)
                dims[d] = vi.dims[d] < 0 ? 1 : vi.dims[d];
            rd_input_spec spec = RD_INPUT_SPEC_DEFAULT;
            spec.layout = a->layout;
            spec.max_image_pixels = a->max_image_pixels;
            rd_tensor t, e;
            memset(&e, 0, sizeof e);
            st = rd_input_prepare(rd_dataset_path(&ds, k, i), &spec, vi.rank, dims, NULL, &t, err);
            if (st != RD_OK) {
                rd_error_prefix(err, "%s:%d", ds.path, ds.lines[k]);
                break;
            }
            const rd_tensor *save = &t;
            if (ins[i].edited) {
                st = rd_tensor_alloc(&e, RD_DT_F32, ins[i].plan.out_rank, ins[i].plan.out_dims, err);
                if (st == RD_OK)
                    an_layout_apply(&ins[i].plan, t.data, e.data, sizeof(float));
                save = &e;
            }
            snprintf(file, cap + 32, "%s/%06zu_%zu.npy", sub, k, i);
            if (st == RD_OK)
                st = rd_npy_save(file, save, err);
            fprintf(f, "%sdataset/%06zu_%zu.npy", i ? " " : "", k, i);
            rd_tensor_fini(&t);
            rd_tensor_fini(&e);
        }
        fprintf(f, "\n");
    }
    if (st == RD_OK)
        st = rd_atomic_file_commit(af, err);
    else
        rd_atomic_file_abort(af);
    af = NULL;
    *n_written = ds.n_samples;
out:
    rd_atomic_file_abort(af);
    free(dir);
    free(list);
    free(sub);
    free(file);
    rd_dataset_fini(&ds);
    return st;
}

/* Plans every --input/--output; a bad formula or name is a usage error (exit 2). */
static int plan_all(an_cmd_ctx *ctx, const edit_args *a, const rd_model *m, an_edit_io *ins, an_edit_io *outs)
{
    for (int k = 0; k < a->n_specs; k++) {
        const char *eq = strchr(a->specs[k], '=');
        an_name_buf name;
        size_t len = (size_t)(eq - a->specs[k]);
        if (len == 0 || len >= sizeof name.name)
            return an_usage(ctx, "--%s '%s': the name before '=' is empty or too long",
                            a->spec_is_output[k] ? "output" : "input", a->specs[k]);
        memcpy(name.name, a->specs[k], len);
        name.name[len] = '\0';
        rd_error err = {0};
        rd_status st =
            an_edit_plan_io(m, name.name, eq + 1, a->spec_is_output[k], a->spec_is_output[k] ? outs : ins, &err);
        if (st != RD_OK) {
            an_fail(ctx, &err);
            return st == RD_E_UNSUPPORTED || st == RD_E_NOMEM ? AN_EXIT_INPUT : AN_EXIT_USAGE;
        }
    }
    return AN_GO;
}

static int onnx_edit_main(an_cmd_ctx *ctx, an_cmd_args *cmd, void *args)
{
    edit_args *a = args;
    int rc = check_args(ctx, a);
    rd_error err = {0};
    rd_model *m = NULL, *edited = NULL;
    an_edit_io *ins = NULL, *outs = NULL;
    void *buf = NULL;
    size_t len = 0;
    an_edit_stats stats = {0};
    rd_status st = RD_OK;
    if (rc != AN_GO)
        goto out;
    if (an_cmd_open_model(ctx, cmd, false, NULL, &m, &err) != RD_OK) {
        rc = an_fail(ctx, &err);
        goto out;
    }
    ins = calloc(rd_model_input_count(m) + 1, sizeof *ins);
    outs = calloc(rd_model_output_count(m) + 1, sizeof *outs);
    if (!ins || !outs) {
        rc = an_fail(ctx, &(rd_error){.code = RD_E_NOMEM, .msg = "out of memory"});
        goto out;
    }
    if ((rc = plan_all(ctx, a, m, ins, outs)) != AN_GO)
        goto out;
    st = an_edit_write(m, ins, outs, &buf, &len, &stats, &err);
    /* the reader is the checker: the edited model must load and run as written */
    if (st == RD_OK && (st = rd_model_load_mem(buf, len, a->out, NULL, NULL, &edited, &err)) != RD_OK)
        rd_error_prefix(&err, "the edited model does not load (a bug: please report it)");
    if (st == RD_OK)
        st = rd_file_write_atomic(a->out, buf, len, NULL, &err);
    size_t n_samples = 0;
    if (st == RD_OK && a->dataset)
        st = convert_dataset(a, m, ins, &n_samples, &err);
    if (st != RD_OK) {
        rc = an_fail(ctx, &err);
        goto out;
    }
    describe_io(ctx->out, m, ins, false);
    describe_io(ctx->out, m, outs, true);
    fprintf(ctx->out,
            "layout layers (Reshape/Transpose): %d before, %d after (%d inserted at the boundary, %d of the "
            "model's merged into them)\nwrote %s\n",
            an_layout_layer_count(m), an_layout_layer_count(edited), stats.inserted, stats.absorbed, a->out);
    if (a->dataset) {
        char *dir = dir_of(a->out);
        fprintf(ctx->out, "wrote %s/dataset.txt (%zu samples, .npy in the edited layouts)\n", dir ? dir : ".",
                n_samples);
        free(dir);
    }
    rc = AN_EXIT_OK;
out:
    free(buf);
    free(ins);
    free(outs);
    rd_model_destroy(edited);
    rd_model_destroy(m);
    return rc;
}

const an_cmd_spec an_cmd_onnx_edit = {
    .usage = "rknn-diag onnx-edit MODEL.onnx -o OUT.onnx [--input NAME=FORMULA]... [--output NAME=FORMULA]... "
             "[--dataset FILE] [--graph-inputs NAME,..] [--graph-outputs NAME,..]",
    .about = edit_about,
    .output = {0, "out", 'o', "OUT.onnx", "the edited model (required)"},
    .output_missing = "missing -o OUT.onnx",
    AN_SPEC_OPTS(edit_opts),
    .groups = AN_OG_SHAPE | AN_OG_CUT,
    .model = "MODEL.onnx",
    AN_SPEC_ARGS_CMD(edit_args, cmd, &(const edit_args){.layout = RD_LAYOUT_NHWC}),
    .take = take_option,
    .main = onnx_edit_main,
};
