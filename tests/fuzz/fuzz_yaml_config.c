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
    if (st == RD_OK || st >= RD_STATUS_COUNT || !fuzz_refusal_names(st, err, FUZZ_NAME))
        __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = fuzz_copy(data, size, FUZZ_MAX_INPUT);
    if (!buf)
        return 0;
    rd_rknn_config c;
    rd_error err;
    rd_error_clear(&err);
    rd_status st = rd_rknn_config_parse(buf, size, FUZZ_NAME, &c, &err);
    free(buf);
    if (st != RD_OK) {
        check_error(st, &err);
        rd_rknn_config_fini(&c);
        return 0;
    }
    int64_t channels[RD_MAX_MODEL_INPUTS];
    for (size_t i = 0; i < RD_MAX_MODEL_INPUTS; i++)
        channels[i] = (int64_t)(i % 4) + 1;
    for (size_t p = 0; p <= rd_platform_count(); p++) {
        const rd_platform_info *info = rd_platform_get(p);
        st = rd_rknn_config_validate(&c, info ? info->name : NULL, channels, c.n_mean ? c.n_mean : 1, &err);
        if (st != RD_OK)
            check_error(st, &err);
    }
    for (size_t i = 0; i < 3; i++) {
        rd_input_spec spec = RD_INPUT_SPEC_DEFAULT;
        st = rd_rknn_config_input_spec(&c, i, &spec, &err);
        if (st != RD_OK)
            check_error(st, &err);
        else if (spec.n_mean > RD_MAX_INPUT_CHANNELS || spec.n_std > RD_MAX_INPUT_CHANNELS)
            __builtin_trap();
    }
    rd_rknn_config_fini(&c);
    return 0;
}
