/* error.c: status names, error formatting and the exit codes the design gives each status. */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>

static const char *const status_names[RD_STATUS_COUNT] = {
    [RD_OK] = "ok",
    [RD_E_INVAL] = "invalid argument",
    [RD_E_PARSE] = "parse error",
    [RD_E_UNSUPPORTED] = "unsupported",
    [RD_E_NOMEM] = "out of memory",
    [RD_E_IO] = "i/o error",
    [RD_E_DEVICE] = "device error",
    [RD_E_TIMEOUT] = "timeout",
    [RD_E_LIMIT] = "size limit exceeded",
    [RD_E_AUTH] = "authentication refused",
    [RD_E_NOTFOUND] = "not found",
    [RD_E_GATE] = "accuracy gate failed",
    [RD_E_USAGE] = "command-line usage error",
};

const char *rd_status_str(rd_status code)
{
    if ((unsigned)code < RD_STATUS_COUNT && status_names[code])
        return status_names[code];
    return "unknown status";
}

rd_status rd_errorf(rd_error *err, rd_status code, const char *fmt, ...)
{
    if (!err)
        return code;
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return code;
}

rd_status rd_error_prefix(rd_error *err, const char *fmt, ...)
{
    if (!err) /* called on a failure path whose code went nowhere: still a failure, never RD_OK */
        return RD_E_INVAL;
    char prefix[RD_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    char joined[RD_ERROR_MSG_MAX];
    snprintf(joined, sizeof joined, "%s: %s", prefix, err->msg);
    memcpy(err->msg, joined, sizeof err->msg);
    return err->code;
}

void rd_error_clear(rd_error *err)
{
    if (!err)
        return;
    err->code = RD_OK;
    err->msg[0] = '\0';
}

int rd_status_exit_code(rd_status code)
{
    switch (code) {
    case RD_OK:
        return 0;
    case RD_E_GATE:
        return 1;
    case RD_E_USAGE:
        return 2;
    default:
        return 3;
    }
}

const char *rd_version(void)
{
    return RD_VERSION;
}
