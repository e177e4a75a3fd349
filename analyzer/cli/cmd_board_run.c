/*
 * cmd_board_run.c: `rknn-diag board-run MODEL --input FILE --cfg QCFG --target CHIP`: the application
 * the emulated board runs (docs/board.md). It plays librknnrt: RKNN_LOG_LEVEL, RKNN_DUMP_DIR and
 * RKNN_DUMP_QUANT from the environment, per-layer dumps named and laid out as the real runtime writes
 * them, computed by the INT8 simulator configured from the same .quantization.cfg the host uses (so the
 * host and the board agree bit for bit), with faults (--fault) and application mistakes
 * (--app-mistake) on demand.
 */
#include "term_text.h"
#include "board_app.h"
#include "board_dump.h"
#include "cmd_spec.h"
#include "quant_setup.h"
#include "config_model.h"
#include "runtime_io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { OPT_INPUT = 1, OPT_DUMP_DIR, OPT_FAULT, OPT_MISTAKE, OPT_OUTPUT_DIR, OPT_APP_API };

static const an_optspec board_run_opts[] = {
    {OPT_INPUT, "input", 'i', "FILE", "the application's input: an image or .npy (repeat per graph input, in order)"},
    {OPT_DUMP_DIR, "dump-dir", 0, "DIR", "dump folder (default: $RKNN_DUMP_DIR, else the target's, /userdata/dumps)"},
    {OPT_FAULT, "fault", 'f', "KIND:TENSOR",
     "the NPU computes TENSOR wrongly: gain, saturate, swap-channels, fp16 (repeat)"},
    {OPT_MISTAKE, "app-mistake", 0, "KIND",
     "rgb-bgr, double-norm, no-norm, nhwc-as-nchw, int8-clamp, wrong-size, "
     "output-dtype"},
    {OPT_APP_API, "app-api", 0, "API",
     "the application's API: normal (rknn_inputs_set: the InputOperator dump is the "
     "input after mean/std; default) or zero-copy (rknn_set_io_mem: the buffer before)"},
    {OPT_OUTPUT_DIR, "output-dir", 'o', "DIR", "write the outputs as the application received them (output_K.npy)"},
};

#define MAX_FAULTS 32
#define AN_MAX_INPUTS_BOARD RD_MAX_MODEL_INPUTS /* inputs, and outputs */

typedef struct board_args {
    const char *model_path, *dump_dir, *output_dir;
    const char *inputs[AN_MAX_INPUTS_BOARD];
    size_t n_inputs;
    const char *faults[MAX_FAULTS];
    size_t n_faults;
    an_app_mistake mistake;
    an_app_api api;
    an_cmd_args cmd;
} board_args;

/* librknnrt's environment */
typedef struct board_env {
    int log_level;   /* RKNN_LOG_LEVEL: 4 timing, 5 .npy dumps, 6 .txt too */
    bool dump_quant; /* RKNN_DUMP_QUANT=1 */
    const char *dump_dir;
} board_env;

static const an_optset board_run_sets[] = {AN_SET(OPT_DUMP_DIR, AN_SET_STR, board_args, dump_dir),
                                           AN_SET(OPT_OUTPUT_DIR, AN_SET_STR, board_args, output_dir)};

static int take_option(an_cmd_ctx *ctx, void *user, int id, const char *v)
{
    board_args *a = user;
    rd_error err = {0};
    switch (id) {
    case OPT_INPUT:
        return an_take_repeated(ctx, "--input", v, a->inputs, &a->n_inputs, AN_MAX_INPUTS_BOARD);
    case OPT_FAULT:
        return an_take_repeated(ctx, "--fault", v, a->faults, &a->n_faults, MAX_FAULTS);
    case OPT_MISTAKE:
        if (an_app_mistake_parse(v, &a->mistake, &err) != RD_OK)
            return an_usage(ctx, "--app-mistake: %s", err.msg);
        break;
    case OPT_APP_API:
        if (an_app_api_parse(v, &a->api, &err) != RD_OK)
            return an_usage(ctx, "--app-api: %s", err.msg);
        break;
    }
    return AN_GO;
}

/* What the parser leaves to the command: --target and --input are required. */
static int check_args(an_cmd_ctx *ctx, board_args *a)
{
    a->model_path = a->cmd.model;
    if (!a->cmd.target)
        return an_usage(ctx, "missing --target CHIP (rk3566, rk3588, ...)");
    if (!a->n_inputs)
        return an_usage(ctx, "missing --input FILE");
    return AN_GO;
}

static void read_env(const board_args *a, const rd_platform_info *plat, board_env *e, FILE *errs)
{
    const char *level = getenv("RKNN_LOG_LEVEL");
    e->log_level = 0;
    if (level && *level) {
        char *end = NULL;
        long l = strtol(level, &end, 10);
        if (*end || l < 0 || l > 9)
            fprintf(errs, "W RKNN: RKNN_LOG_LEVEL=%s is not a level 0..6: ignored\n", level);
        else
            e->log_level = (int)l;
    }
    const char *quant = getenv("RKNN_DUMP_QUANT");
    e->dump_quant = quant && strcmp(quant, "1") == 0;
    const char *dir = getenv("RKNN_DUMP_DIR");
    e->dump_dir = a->dump_dir ? a->dump_dir : dir && *dir ? dir : plat->dump_dir;
}

/* How the board holds value: the model's precision, or float16 where an fp16 fault says so. */
static void held_of(const rd_sim *s, int value, const char *name, an_held *h)
{
    rd_sim_tensor t;
    memset(h, 0, sizeof *h);
    h->prec = RD_PREC_FP32;
    if (rd_sim_tensor_get(s, name, &t, NULL) != RD_OK)
        return;
    h->prec = t.precision;
    if (h->prec == RD_PREC_INT8 && (!t.quantized || rd_sim_has_fault(s, value, RD_FAULT_FP16)))
        h->prec = RD_PREC_FP16;
    h->scale = t.scale;
    h->zero_point = t.zero_point;
}

static int c2_of(const rd_platform_info *plat, rd_prec p)
{
    return p == RD_PREC_INT8 ? plat->c2_int8 : plat->c2_f16;
}

static const char *dtype_label(rd_prec p)
{
    return p == RD_PREC_INT8 ? "INT8" : p == RD_PREC_FP16 ? "FLOAT16" : "FLOAT";
}

static void shape_paren(const rd_tensor *t, char *buf, size_t len)
{
    size_t used = 0;
    used += (size_t)snprintf(buf, len, "(");
    for (int k = 0; k < t->rank && used < len; k++)
        used += (size_t)snprintf(buf + used, len - used, "%s%lld", k ? "," : "", (long long)t->dims[k]);
    if (used < len)
        snprintf(buf + used, len - used, ")");
}

typedef struct board_run {
    const rd_sim *s;
    const rd_platform_info *plat;
    an_app_api api;
    board_env env;
    an_board_dumper dumper;
    FILE *log;
    int next_index, last_node, cur_index;
    struct timespec t_last;
    double pending_us; /* time of fused producers, counted with their group's layer */
    double total_us;
} board_run;

static double elapsed_us(struct timespec *since)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double us = (double)(now.tv_sec - since->tv_sec) * 1e6 + (double)(now.tv_nsec - since->tv_nsec) / 1e3;
    *since = now;
    return us;
}

static void log_prefix(FILE *f)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    time_t sec = ts.tv_sec;
    gmtime_r(&sec, &tm);
    fprintf(f, "D RKNN: [%02d:%02d:%02d.%03ld] ", tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
}

static rd_status dump_one(board_run *r, int index, const char *op_type, const char *name, int value,
                          const rd_tensor *values, rd_error *err)
{
    an_held held;
    held_of(r->s, value, name, &held);
    rd_tensor file = {0};
    rd_status st = an_board_encode(values, &held, r->env.dump_quant, &file, err);
    if (st == RD_OK)
        st = an_board_dump_write(&r->dumper, index, op_type, name, &file, c2_of(r->plat, held.prec), r->log, err);
    rd_tensor_fini(&file);
    return st;
}

/* The normal API's InputOperator dump: graph input value as the runtime feeds it to the first layer, after
   mean/std and on the input's own grid. Other values without a node (initializers) are not dumped. */
static rd_status dump_graph_input(board_run *r, const rd_observed *ev, rd_error *err)
{
    const rd_model *m = rd_sim_model(r->s);
    for (size_t k = 0; k < rd_model_input_count(m); k++)
        if (rd_model_input(m, k) == ev->value && r->env.log_level >= 5)
            return dump_one(r, (int)k, "InputOperator", ev->name, ev->value, ev->tensor, err);
    return RD_OK;
}

static rd_status observe_layer(void *user, const rd_observed *ev, rd_error *err)
{
    board_run *r = user;
    r->pending_us += elapsed_us(&r->t_last);
    if (ev->node < 0 && r->api == AN_API_NORMAL && ev->tensor->dtype == RD_DT_F32)
        return dump_graph_input(r, ev, err);
    if (ev->node < 0 || ev->tensor->dtype != RD_DT_F32)
        return RD_OK;
    rd_sim_tensor t;
    if (rd_sim_tensor_get(r->s, ev->name, &t, NULL) != RD_OK || !t.materialized)
        return RD_OK; /* a fused producer's output never leaves the NPU */
    double us = r->pending_us;
    r->pending_us = 0;
    if (ev->node != r->last_node) {
        r->cur_index = r->next_index++;
        r->last_node = ev->node;
    }
    char op[64]; /* the NPU op of the value's fused group, as RKNN names layers and dumps (ConvRelu, Conv) */
    snprintf(op, sizeof op, "%s", t.npu_op ? t.npu_op : "");
    r->total_us += us;
    if (r->env.log_level >= 4) {
        an_held held;
        held_of(r->s, ev->value, ev->name, &held);
        char shape[128];
        shape_paren(ev->tensor, shape, sizeof shape);
        log_prefix(r->log);
        fprintf(r->log, "%-4d %-18s %-8s %-6s %-28s %-10.0f %s\n", r->cur_index, RD_TEXT_SHOWN(op),
                dtype_label(held.prec), "NPU", shape, us, RD_TEXT_SHOWN(ev->name));
    }
    if (r->env.log_level < 5)
        return RD_OK;
    return dump_one(r, r->cur_index, op, ev->name, ev->value, ev->tensor, err);
}

/* The dump folder must exist and be writable, as librknnrt needs it: its message otherwise. */
static rd_status check_dump_dir(const board_run *r, const char *first_name, const rd_tensor *first, rd_error *err)
{
    struct stat st;
    /* AT_EACCESS: with this process's own rights (access() would drop the capability the emulated
       board may leave its commands to reach a folder under /root: docs/board.md) */
    if (stat(r->dumper.dir, &st) == 0 && S_ISDIR(st.st_mode) &&
        faccessat(AT_FDCWD, r->dumper.dir, W_OK, AT_EACCESS) == 0)
        return RD_OK;
    char path[4400];
    if (an_board_dump_path(&r->dumper, 0, "InputOperator", first_name, first, false, path, sizeof path, err) != RD_OK)
        snprintf(path, sizeof path, "%s/", r->dumper.dir);
    return rd_errorf(err, RD_E_IO, "failed open dump path: %s (create it: mkdir -p %s && chmod 777 %s)", path,
                     r->dumper.dir, r->dumper.dir);
}

/* Builds the simulation with its faults. */
static rd_status build_board_sim(an_cmd_ctx *ctx, board_args *a, const rd_model *m, rd_sim **out, rd_error *err)
{
    if (!a->cmd.q.qcfg_path && !a->cmd.q.cfg.dataset)
        return rd_errorf(err, RD_E_USAGE,
                         "give --cfg QCFG (the .quantization.cfg of `rknn-diag quantize`): the board "
                         "runs the quantized model the host analyses");
    rd_status st = an_quant_build_sim(&a->cmd.q, m, NULL, ctx->errs, ctx->color, out, err);
    for (size_t i = 0; st == RD_OK && i < a->n_faults; i++) {
        const char *colon = strchr(a->faults[i], ':');
        char kind[32];
        if (!colon || colon == a->faults[i] || !colon[1] || (size_t)(colon - a->faults[i]) >= sizeof kind)
            return rd_errorf(err, RD_E_USAGE, "--fault expects KIND:TENSOR (e.g. gain:/conv1/Conv_output_0), got '%s'",
                             a->faults[i]);
        memcpy(kind, a->faults[i], (size_t)(colon - a->faults[i]));
        kind[colon - a->faults[i]] = '\0';
        rd_sim_fault_kind k;
        st = rd_sim_fault_parse(kind, &k, err);
        if (st == RD_OK)
            st = rd_sim_add_fault(*out, colon + 1, k, err);
        if (st != RD_OK) { /* an unknown kind or tensor: the option is wrong, whatever the library's status */
            rd_error_prefix(err, "--fault %s", a->faults[i]);
            st = err ? (err->code = RD_E_USAGE) : RD_E_USAGE;
        }
    }
    return st;
}

/* Prepares input i as the application and the runtime would: raw (mistakes made), then normalised. */
static rd_status prepare_input(an_cmd_ctx *ctx, const board_args *a, const rd_model *m, size_t i, rd_tensor *raw,
                               rd_tensor *graph_in, rd_error *err)
{
    rd_value_info vi;
    rd_model_value(m, (size_t)rd_model_input(m, i), &vi);
    if (vi.rank < 0)
        return rd_errorf(err, RD_E_UNSUPPORTED, "input '%s' has no declared shape", vi.name);
    int64_t dims[RD_MAX_RANK];
    for (int d = 0; d < vi.rank; d++)
        dims[d] = vi.dims[d] < 0 ? 1 : vi.dims[d];
    rd_input_spec spec = RD_INPUT_SPEC_DEFAULT;
    spec.layout = a->cmd.q.layout;
    bool is_image = false;
    rd_status st = rd_rknn_config_input_spec(&a->cmd.q.cfg, i, &spec, err);
    if (st == RD_OK)
        st = an_app_raw_input(a->inputs[i], a->cmd.q.layout, a->cmd.q.max_image_pixels, vi.rank, dims, raw, &is_image,
                              err);
    if (st == RD_OK && an_app_mistake_on_input(a->mistake))
        st = an_app_apply_mistake(a->mistake, raw, is_image, &spec, a->inputs[i], ctx->errs, err);
    if (st == RD_OK && a->mistake == AN_MISTAKE_NO_NORM)
        st = rd_tensor_to_f32(graph_in, raw, err); /* pass_through: the first layer reads the data as it is */
    else if (st == RD_OK)
        st = an_app_normalise(raw, is_image, &spec, a->inputs[i], graph_in, err);
    return st;
}

static rd_status write_outputs(const board_args *a, const rd_sim *s, const rd_tensor *outs, size_t n, rd_error *err)
{
    rd_status made = rd_dir_make(a->output_dir, 0, err);
    if (made != RD_OK)
        return made;
    const rd_model *m = rd_sim_model(s);
    for (size_t k = 0; k < n; k++) {
        rd_value_info vi;
        rd_model_value(m, (size_t)rd_model_output(m, k), &vi);
        rd_sim_tensor info;
        bool have = rd_sim_tensor_get(s, vi.name, &info, NULL) == RD_OK;
        rd_tensor saved = {0};
        rd_status st = an_app_output(&outs[k], a->mistake, have ? &info : NULL, &saved, err);
        char path[4200];
        snprintf(path, sizeof path, "%s/output_%zu.npy", a->output_dir, k);
        if (st == RD_OK)
            st = rd_npy_save(path, &saved, err);
        rd_tensor_fini(&saved);
        if (st != RD_OK)
            return st;
    }
    return RD_OK;
}

static int run_board(an_cmd_ctx *ctx, board_args *a, rd_model *m, rd_sim *s, const rd_platform_info *plat)
{
    rd_error err = {0};
    size_t n_in = rd_model_input_count(m), n_out = rd_model_output_count(m);
    board_run r = {.s = s, .plat = plat, .api = a->api, .log = ctx->errs, .last_node = -1, .next_index = (int)n_in};
    read_env(a, plat, &r.env, ctx->errs);
    r.dumper =
        (an_board_dumper){.dir = r.env.dump_dir, .log_level = r.env.log_level, .quant = r.env.dump_quant, .plat = plat};
    rd_tensor raw[AN_MAX_INPUTS_BOARD], in[AN_MAX_INPUTS_BOARD], outs[AN_MAX_INPUTS_BOARD];
    memset(raw, 0, sizeof raw);
    memset(in, 0, sizeof in);
    memset(outs, 0, sizeof outs);
    rd_status st = RD_OK;
    for (size_t i = 0; i < n_in && st == RD_OK; i++)
        st = prepare_input(ctx, a, m, i, &raw[i], &in[i], &err);
    const rd_model *om = rd_sim_model(s);
    if (st == RD_OK && r.env.log_level >= 5) {
        rd_value_info vi;
        rd_model_value(om, (size_t)rd_model_input(om, 0), &vi);
        st = check_dump_dir(&r, vi.name, &raw[0], &err);
        /* zero-copy: InputOperator is the user's buffer as handed to the runtime (the normal API's is the
           normalised input, dumped as the run reaches it) */
        for (size_t i = 0; i < n_in && st == RD_OK && a->api == AN_API_ZERO_COPY; i++) {
            rd_model_value(om, (size_t)rd_model_input(om, i), &vi);
            int c2 = raw[i].dtype == RD_DT_U8 || raw[i].dtype == RD_DT_I8 ? plat->c2_int8 : plat->c2_f16;
            st = an_board_dump_write(&r.dumper, (int)i, "InputOperator", vi.name, &raw[i], c2, ctx->errs, &err);
        }
    }
    if (st == RD_OK && r.env.log_level >= 4) {
        log_prefix(ctx->errs);
        fprintf(ctx->errs, "%-4s %-18s %-8s %-6s %-28s %-10s %s\n", "ID", "OpType", "DataType", "Target", "OutputShape",
                "Time(us)", "FullName");
    }
    if (st == RD_OK) {
        rd_run_options ro = {.observer = observe_layer, .user = &r, .observe_inputs = a->api == AN_API_NORMAL};
        clock_gettime(CLOCK_MONOTONIC, &r.t_last);
        st = rd_sim_run(s, in, n_in, &ro, outs, n_out, &err);
    }
    if (st == RD_OK && r.env.log_level >= 4) {
        log_prefix(ctx->errs);
        fprintf(ctx->errs, "Total Operator Elapsed Per Frame Time(us): %.0f\n", r.total_us);
    }
    /* OutputOperator: what the runtime hands back */
    for (size_t k = 0; k < n_out && st == RD_OK && r.env.log_level >= 5; k++) {
        rd_value_info vi;
        int v = rd_model_output(om, k);
        rd_model_value(om, (size_t)v, &vi);
        st = dump_one(&r, r.next_index + (int)k, "OutputOperator", vi.name, v, &outs[k], &err);
    }
    if (st == RD_OK && a->output_dir)
        st = write_outputs(a, s, outs, n_out, &err);
    for (size_t i = 0; i < AN_MAX_INPUTS_BOARD; i++) {
        rd_tensor_fini(&raw[i]);
        rd_tensor_fini(&in[i]);
        rd_tensor_fini(&outs[i]);
    }
    if (st != RD_OK) {
        if (strncmp(err.msg, "failed open dump path", 21) == 0) {
            fputs("E RKNN: ", ctx->errs);
            an_put_text(ctx->errs, err.msg);
            fputc('\n', ctx->errs);
            return AN_EXIT_INPUT;
        }
        return an_fail(ctx, &err);
    }
    if (r.env.log_level >= 5)
        fprintf(ctx->errs, "I RKNN: %zu dump files written to %s\n", r.dumper.n_written, r.dumper.dir);
    return AN_EXIT_OK;
}

static int board_run_main(an_cmd_ctx *ctx, an_cmd_args *cmd, void *args)
{
    board_args *a = args;
    int rc = check_args(ctx, a);
    if (rc != AN_GO)
        return rc;
    rd_error err = {0};
    rd_model *m = NULL;
    rd_sim *s = NULL;
    const rd_platform_info *plat = rd_platform_find(cmd->target);
    an_model_request req = an_cmd_model_request(ctx, cmd,
                                                "the application runs one input shape: give it with "
                                                "subgraphs.input_size_list");
    rd_status st = an_model_load_configured(&cmd->q, &req, &m, &err);
    if (st != RD_OK) {
        rc = an_fail(ctx, &err);
        goto out;
    }
    size_t n_in = rd_model_input_count(m);
    if (n_in > AN_MAX_INPUTS_BOARD || rd_model_output_count(m) > AN_MAX_INPUTS_BOARD) {
        rd_errorf(&err, RD_E_UNSUPPORTED, "%s: more than %d inputs or outputs", a->model_path, AN_MAX_INPUTS_BOARD);
        rc = an_fail(ctx, &err);
        goto out;
    }
    if (a->n_inputs != n_in) {
        rc = an_usage(ctx, "%s has %zu input%s, got %zu --input", a->model_path, n_in, n_in == 1 ? "" : "s",
                      a->n_inputs);
        goto out;
    }
    st = an_quant_finish(&cmd->q, m, &err);
    if (st == RD_OK)
        st = build_board_sim(ctx, a, m, &s, &err);
    if (st != RD_OK) {
        rc = an_fail(ctx, &err);
        goto out;
    }
    rc = run_board(ctx, a, m, s, plat);
out:
    rd_sim_destroy(s);
    rd_model_destroy(m);
    return rc;
}

const an_cmd_spec an_cmd_board_run = {
    .usage = "rknn-diag board-run MODEL.onnx --input FILE --cfg QCFG --target CHIP [--fault KIND:TENSOR]... "
             "[--app-mistake KIND] [--app-api normal|zero-copy] [--output-dir DIR]",
    .about = "What the emulated board runs (rknn-diag board-emulate; docs/board.md): an application on a\n"
             "Rockchip board with librknnrt, played by the INT8 simulator configured from QCFG (the\n"
             ".quantization.cfg the host analysis uses too, so both agree bit for bit). Like librknnrt it\n"
             "reads RKNN_LOG_LEVEL (4: per-layer timing; 5: a .npy dump per layer; 6: also .txt in\n"
             "NC1HWC2), RKNN_DUMP_DIR (the dump folder, which must exist) and RKNN_DUMP_QUANT (1: dumps\n"
             "in the layer's own dtype). --fault makes the NPU compute one tensor wrongly; --app-mistake\n"
             "makes the application's classic mistakes before or after the model. --app-api says how the\n"
             "application feeds its input, which decides what the InputOperator dump holds: normal\n"
             "(rknn_inputs_set) the input after mean/std, zero-copy (rknn_set_io_mem) the buffer before.",
    AN_SPEC_OPTS(board_run_opts),
    AN_SPEC_SETS(board_run_sets),
    .groups = AN_OG_QUANT | AN_OG_TARGET,
    .model = "MODEL.onnx",
    AN_SPEC_ARGS_CMD(board_args, cmd, NULL),
    .take = take_option,
    .main = board_run_main,
};
