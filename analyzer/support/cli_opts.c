/* cli_opts.c: option parsing shared by all commands (long options anywhere, --a=b and --a b). */
#include "term_text.h"
#include "cli_internal.h"
#include "json_out.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void an_opts_init(an_opts *p, const an_cmd_ctx *ctx, const an_optspec *spec, int n_spec)
{
    memset(p, 0, sizeof *p);
    p->spec = spec;
    p->n_spec = n_spec;
    p->argc = ctx->argc;
    p->argv = ctx->argv;
    p->i = 1;
    p->errs = ctx->errs;
    p->cmd = ctx->argv[0];
}

static int take_value(an_opts *p, const an_optspec *s, const char *inline_val, const char **value)
{
    if (!s->arg) {
        if (inline_val) {
            fprintf(p->errs, "rknn-diag %s: option --%s takes no value\n", p->cmd, s->name);
            return AN_OPT_BAD;
        }
        *value = NULL;
        return s->id;
    }
    if (inline_val) {
        *value = inline_val;
        return s->id;
    }
    if (p->i >= p->argc) {
        fprintf(p->errs, "rknn-diag %s: option --%s needs a value (%s)\n", p->cmd, s->name, s->arg);
        return AN_OPT_BAD;
    }
    *value = p->argv[p->i++];
    return s->id;
}

int an_opts_next(an_opts *p, const char **value)
{
    if (p->i >= p->argc)
        return AN_OPT_END;
    const char *a = p->argv[p->i++];
    if (p->only_positional || a[0] != '-' || a[1] == '\0') {
        *value = a;
        return AN_OPT_POSITIONAL;
    }
    if (strcmp(a, "--") == 0) {
        p->only_positional = true;
        return an_opts_next(p, value);
    }
    if (a[1] == '-') {
        const char *name = a + 2;
        const char *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        for (int k = 0; k < p->n_spec; k++) {
            const an_optspec *s = &p->spec[k];
            if (strlen(s->name) == len && strncmp(s->name, name, len) == 0)
                return take_value(p, s, eq ? eq + 1 : NULL, value);
        }
        fprintf(p->errs, "rknn-diag %s: unknown option '%s' (see rknn-diag %s --help)\n", p->cmd, a, p->cmd);
        return AN_OPT_BAD;
    }
    for (int k = 0; k < p->n_spec; k++) {
        const an_optspec *s = &p->spec[k];
        if (s->shrt && s->shrt == a[1]) {
            if (a[2] != '\0' && s->arg) { /* -ofile */
                *value = a + 2;
                return s->id;
            }
            if (a[2] != '\0') {
                fprintf(p->errs, "rknn-diag %s: unknown option '%s'\n", p->cmd, a);
                return AN_OPT_BAD;
            }
            return take_value(p, s, NULL, value);
        }
    }
    /* a negative number is a positional value */
    if ((a[1] >= '0' && a[1] <= '9') || a[1] == '.') {
        *value = a;
        return AN_OPT_POSITIONAL;
    }
    fprintf(p->errs, "rknn-diag %s: unknown option '%s' (see rknn-diag %s --help)\n", p->cmd, a, p->cmd);
    return AN_OPT_BAD;
}

void an_print_help(FILE *f, const char *usage, const char *about, const an_optspec *spec, int n_spec)
{
    fprintf(f, "usage: %s\n\n%s\n", usage, about);
    if (n_spec)
        fprintf(f, "\noptions:\n");
    an_print_opts(f, spec, n_spec);
}

void an_print_opts(FILE *f, const an_optspec *spec, int n_spec)
{
    for (int k = 0; k < n_spec; k++) {
        const an_optspec *s = &spec[k];
        char left[96];
        if (s->shrt)
            snprintf(left, sizeof left, "-%c, --%s%s%s", s->shrt, s->name, s->arg ? " " : "", s->arg ? s->arg : "");
        else
            snprintf(left, sizeof left, "    --%s%s%s", s->name, s->arg ? " " : "", s->arg ? s->arg : "");
        fprintf(f, "  %-30s %s\n", left, s->help);
    }
}

bool an_parse_int(const char *cmd, const char *opt, const char *text, long min, long max, long *out, FILE *errs)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || !end || end == text || *end != '\0' || v < min || v > max) {
        fprintf(errs, "rknn-diag %s: %s expects an integer in %ld..%ld, got '%s'\n", cmd, opt, min, max, text);
        return false;
    }
    *out = v;
    return true;
}

/* A decimal number of at most 12 digits at *p, advancing p; false when there is none. */
static bool read_count(const char **p, uint64_t *out)
{
    uint64_t v = 0;
    int n = 0;
    for (; **p >= '0' && **p <= '9' && n < 12; (*p)++, n++)
        v = v * 10 + (uint64_t)(**p - '0');
    *out = v;
    return n > 0 && !(**p >= '0' && **p <= '9');
}

rd_status an_parse_pixel_count(const char *opt, const char *text, uint64_t *out, rd_error *err)
{
    const char *p = text;
    uint64_t v = 0, h = 0;
    bool ok = read_count(&p, &v);
    if (ok && (*p == 'x' || *p == 'X')) {
        p++;
        ok = read_count(&p, &h);
        v *= h;
    } else if (ok && (*p == 'K' || *p == 'k' || *p == 'M' || *p == 'm')) {
        v *= (*p == 'K' || *p == 'k') ? 1000 : 1000000;
        p++;
    }
    if (!ok || *p || v == 0 || v > RD_MAX_IMAGE_PIXELS)
        return rd_errorf(err, RD_E_USAGE,
                         "%s expects a pixel count in 1..%llu (N, 120M or WxH such as 16000x16000), got '%s'", opt,
                         (unsigned long long)RD_MAX_IMAGE_PIXELS, text);
    *out = v;
    return RD_OK;
}

int an_fail(const an_cmd_ctx *ctx, const rd_error *err)
{
    fprintf(ctx->errs, "%srknn-diag %s: error:%s ", ctx->color ? "\033[1;31m" : "", ctx->argv[0],
            ctx->color ? "\033[0m" : "");
    an_put_text(ctx->errs, err->msg[0] ? err->msg : rd_status_str(err->code)); /* it names things from outside */
    if (err->code == RD_E_USAGE) /* the command line is wrong: say where the right one is */
        fprintf(ctx->errs, " (see rknn-diag %s --help)", ctx->argv[0]);
    fputc('\n', ctx->errs);
    return rd_status_exit_code(err->code);
}

int an_fail_nomem(const an_cmd_ctx *ctx, const char *what)
{
    rd_error err = {0};
    rd_errorf(&err, RD_E_NOMEM, "out of memory (%s)", what);
    return an_fail(ctx, &err);
}

int an_emit_json(const an_cmd_ctx *ctx, cJSON *root, bool ok)
{
    if (!ok) {
        cJSON_Delete(root);
        return an_fail_nomem(ctx, "the JSON output");
    }
    return an_json_print(ctx->out, root) ? AN_EXIT_OK : an_fail_nomem(ctx, "the JSON output");
}

int an_usage(const an_cmd_ctx *ctx, const char *fmt, ...)
{
    fprintf(ctx->errs, "rknn-diag %s: ", ctx->argv[0]);
    char msg[RD_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    an_put_text(ctx->errs, msg); /* may quote a model's names */
    fprintf(ctx->errs, " (see rknn-diag %s --help)\n", ctx->argv[0]);
    return AN_EXIT_USAGE;
}

rd_status an_parse_input_layout(const char *opt, const char *text, rd_input_layout *out, rd_error *err)
{
    if (strcmp(text, "nhwc") == 0)
        *out = RD_LAYOUT_NHWC;
    else if (strcmp(text, "nchw") == 0)
        *out = RD_LAYOUT_NCHW;
    else
        return rd_errorf(err, RD_E_USAGE, "%s expects nhwc or nchw, got '%s'", opt, text);
    return RD_OK;
}
