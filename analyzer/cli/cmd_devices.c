/* cmd_devices.c: `rknn-diag devices`: boards on every transport (USB, the adb server, --connect)
 * and their state. */
#include "term_text.h"
#include "json_out.h"
#include "cli_adb.h"
#include "cmd_spec.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

enum { OPT_JSON = 1 };

static const an_optspec devices_opts[] = {
    {OPT_JSON, "json", 0, NULL, "print a JSON array on stdout"},
};

typedef struct devices_args {
    bool json;
} devices_args;

static const an_optset devices_sets[] = {AN_SET(OPT_JSON, AN_SET_FLAG, devices_args, json)};

static int print_json(const an_cmd_ctx *ctx, const rd_adb_device_info *v, size_t n)
{
    bool ok = true;
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        cJSON *o = an_json_push_object(arr, &ok);
        an_json_add_str(o, "serial", v[i].serial, &ok);
        an_json_add_str(o, "state", v[i].state, &ok);
        an_json_add_str(o, "transport", v[i].transport, &ok);
        an_json_add_str(o, "description", v[i].description, &ok);
    }
    return an_emit_json(ctx, arr, ok);
}

static int devices_main(an_cmd_ctx *ctx, an_cmd_args *cmd, void *args)
{
    const devices_args *a = args;
    rd_adb_options opt = cmd->adb;
    if (opt.transport == RD_ADB_TCP)
        opt.transport = RD_ADB_AUTO; /* --connect adds a board to the list */
    rd_adb_device_info *list = NULL;
    size_t n = 0;
    rd_error err;
    if (rd_adb_devices(&opt, &list, &n, &err) != RD_OK)
        return an_fail(ctx, &err);
    int rc = AN_EXIT_OK;
    if (a->json) {
        rc = print_json(ctx, list, n);
    } else {
        fprintf(ctx->out, "List of devices attached\n");
        for (size_t i = 0; i < n; i++)
            fprintf(ctx->out, "%-24s %-13s %-7s %s\n", RD_TEXT_SHOWN(list[i].serial), RD_TEXT_SHOWN(list[i].state),
                    list[i].transport, RD_TEXT_SHOWN(list[i].description)); /* the board's own words */
    }
    free(list);
    return rc;
}

const an_cmd_spec an_cmd_devices = {
    .usage = "rknn-diag devices [--json] [--connect HOST:PORT]",
    .about = "Lists boards on USB, in the adb server (if one runs) and at --connect, with their "
             "state: device, unauthorized, offline, or busy (USB held by another program).",
    AN_SPEC_OPTS(devices_opts),
    AN_SPEC_SETS(devices_sets),
    .groups = AN_OG_BOARD,
    AN_SPEC_ARGS(devices_args, NULL),
    .main = devices_main,
};
