/*
 * fuzz_yaml_config.c: libFuzzer target for the rknn_convert model config (rd_rknn_config_parse) and
 * its validation against every platform. Failures must carry a real status and a message that names
 * the file; nothing may crash, leak or hang. Inputs are capped at 64 KiB (configs are a few lines).
 */
#include "fuzz_input.h"
#include "rknn_diag/simulator.h"

#include <stdlib.h>
#include <string.h>

#define FUZZ_MAX_INPUT ((size_t)64 << 10)
#define FUZZ_NAME "fuzz/model_config.yml"

static void check_error(rd_status st, const rd_error *err)
{
    if (st == RD_OK || !fuzz_refusal_names(st, err, FUZZ_NAME))
        __builtin_trap();
}

/* A refusal may leave what it read so far in c: it is freed here. */
static rd_status parse_config(const char *buf, size_t size, const char *name, void *out, rd_error *err)
{
    rd_status st = rd_rknn_config_parse(buf, size, name, out, err);
    if (st != RD_OK)
        rd_rknn_config_fini(out);
    return st;
}

static void check_config(void *parsed)
{
    rd_rknn_config *c = parsed;
    rd_error err;
    rd_status st;
    int64_t channels[RD_MAX_MODEL_INPUTS];
    for (size_t i = 0; i < RD_MAX_MODEL_INPUTS; i++)
        channels[i] = (int64_t)(i % 4) + 1;
    for (size_t p = 0; p <= rd_platform_count(); p++) {
        const rd_platform_info *info = rd_platform_get(p);
        st = rd_rknn_config_validate(c, info ? info->name : NULL, channels, c->n_mean ? c->n_mean : 1, &err);
        if (st != RD_OK)
            check_error(st, &err);
    }
    for (size_t i = 0; i < 3; i++) {
        rd_input_spec spec = RD_INPUT_SPEC_DEFAULT;
        st = rd_rknn_config_input_spec(c, i, &spec, &err);
        if (st != RD_OK)
            check_error(st, &err);
        else if (spec.n_mean > RD_MAX_INPUT_CHANNELS || spec.n_std > RD_MAX_INPUT_CHANNELS)
            __builtin_trap();
    }
    rd_rknn_config_fini(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rd_rknn_config c;
    return fuzz_parse_input(data, size, FUZZ_MAX_INPUT, FUZZ_NAME, parse_config, check_config, &c);
}
