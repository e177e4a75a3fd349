/*
 * cmd_inspect_rknn.c: `rknn-diag inspect MODEL.rknn [--json] [--all | --max N]` and
 * `rknn-diag inspect --build-log FILE [--json] [--all | --max N]` (cmd_inspect_rknn.h).
 */
#include "json_out.h"
#include "cmd_inspect_rknn.h"
#include "cmd_spec.h"
#include "inspect_rknn.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { OPT_JSON = 1, OPT_ALL, OPT_MAX, OPT_BUILD_LOG };

static const an_optspec rknn_opts[] = {
    {OPT_BUILD_LOG, "build-log", 0, "FILE", "read a verbose RKNN-Toolkit2 build log or a board's layer table"},
    {OPT_JSON, "json", 0, NULL, "print everything as JSON (docs/rknn-model.md)"},
    {OPT_ALL, "all", 0, NULL, "list every node, tensor and row (text)"},
    {OPT_MAX, "max", 0, "N", "list at most N nodes, tensors and rows (text; default 20)"},
};

#define DEFAULT_MAX_ROWS 20

/* Reads up to n bytes of a regular file (a FIFO is refused, not waited on); 0 when it cannot. */
static size_t peek(const char *path, unsigned char *buf, size_t n)
{
    int fd;
    if (rd_file_open_read(path, 0, UINT64_MAX, &fd, NULL, NULL) != RD_OK)
        return 0;
    ssize_t got = read(fd, buf, n);
    close(fd);
    return got > 0 ? (size_t)got : 0;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* True when the arguments name a file of the RKNN family (by magic or a .rknn name) or --build-log. */
static bool rknn_wanted(const an_cmd_ctx *ctx)
{
    for (int i = 1; i < ctx->argc; i++) {
        const char *a = ctx->argv[i];
        if (strcmp(a, "--build-log") == 0 || strncmp(a, "--build-log=", 12) == 0)
            return true;
        if (a[0] == '-')
            continue;
        unsigned char head[16];
        size_t n = peek(a, head, sizeof head);
        if (ends_with(a, ".rknn") || (n && rd_rknn_detect(head, n) != RD_RKNN_FILE_UNKNOWN))
            return true;
    }
    return false;
}

typedef struct rknn_args {
    const char *log_path;
    bool json;
    an_rk_text_opts to;
} rknn_args;

static const an_optset rknn_sets[] = {AN_SET(OPT_JSON, AN_SET_FLAG, rknn_args, json)};

static int take_option(an_cmd_ctx *ctx, void *user, int id, const char *v)
{
    rknn_args *a = user;
    long max;
    switch (id) {
    case OPT_ALL:
        a->to.max_rows = SIZE_MAX;
        break;
    case OPT_MAX:
        if (!an_parse_int(ctx->argv[0], "--max", v, 0, 100000000, &max, ctx->errs))
            return AN_EXIT_USAGE;
        a->to.max_rows = (size_t)max;
        break;
    case OPT_BUILD_LOG:
        if (a->log_path)
            return an_usage(ctx, "one --build-log only");
        a->log_path = v;
        break;
    }
    return AN_GO;
}

static int rknn_main(an_cmd_ctx *ctx, an_cmd_args *cmd, void *args)
{
    const rknn_args *a = args;
    const char *model = cmd->model, *log_path = a->log_path;
    bool json = a->json;
    an_rk_text_opts to = a->to;
    int rc;
    if (model && log_path)
        return an_usage(ctx, "give a .rknn model or --build-log FILE, not both");
    if (!model && !log_path)
        return an_usage(ctx, "missing MODEL.rknn or --build-log FILE");
    rd_error err = {0};
    if (log_path) {
        rd_rknn_log *log = NULL;
        if (rd_rknn_log_load(log_path, &log, &err) != RD_OK)
            return an_fail(ctx, &err);
        rc = AN_EXIT_OK;
        if (json) {
            cJSON *tree = an_rk_log_json(rd_rknn_log_get(log)); /* NULL: out of memory */
            rc = an_emit_json(ctx, tree, tree != NULL);
        } else {
            an_rk_print_log(ctx->out, rd_rknn_log_get(log), &to);
        }
        rd_rknn_log_destroy(log);
        return rc;
    }
    rd_rknn_model *m = NULL;
    if (rd_rknn_load(model, NULL, &m, &err) != RD_OK)
        return an_fail(ctx, &err);
    for (size_t i = 0; i < rd_rknn_warning_count(m); i++) {
        fprintf(ctx->errs, "rknn-diag inspect: warning: %s: ", model);
        an_rk_put(ctx->errs, rd_rknn_warning(m, i));
        fputc('\n', ctx->errs);
    }
    rc = AN_EXIT_OK;
    if (json) {
        cJSON *tree = an_rk_model_json(m);          /* NULL: out of memory */
        rc = an_emit_json(ctx, tree, tree != NULL); /* valid UTF-8, safe to print */
    } else {
        an_rk_print_model(ctx->out, m, &to);
    }
    rd_rknn_destroy(m);
    return rc;
}

static const an_cmd_spec rknn_spec = {
    .usage = "rknn-diag inspect MODEL.rknn [--json] [--all | --max N]\n"
             "       rknn-diag inspect --build-log FILE [--json] [--all | --max N]",
    .about = "A .rknn model (told by its first bytes): header and format versions, target platform,\n"
             "toolkit and compiler versions, inputs and outputs with runtime dtype and layout,\n"
             "quantization and mean/std, per-op-type counts (NPU, CPU, float16), then the nodes and\n"
             "tensors (the first 20 of each; --all or --max N for more). --json gives everything.\n"
             "Encrypted (CYPTRKNN), RKNX, OpenVX and header-less files are refused by name (exit 3).\n"
             "A build log: versions, option line, fold_constant and fuse_ops rewrites, quant_optimizer,\n"
             "hybrid float16 tensors, layer tables with their per-op-type counts, ranking table.",
    AN_SPEC_OPTS(rknn_opts),
    AN_SPEC_SETS(rknn_sets),
    .model = "MODEL.rknn",
    .model_optional = true, /* or --build-log */
    AN_SPEC_ARGS(rknn_args, &(const rknn_args){.to = {DEFAULT_MAX_ROWS}}),
    .take = take_option,
    .main = rknn_main,
};

void an_inspect_rknn_help(FILE *out)
{
    an_cmd_help(out, &rknn_spec);
}

const an_cmd_spec *an_inspect_rknn_form(const an_cmd_ctx *ctx)
{
    return rknn_wanted(ctx) ? &rknn_spec : NULL;
}
