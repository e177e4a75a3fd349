/*
 * fuzz_qcfg.c: libFuzzer target for RKNN's .quantization.cfg (rd_qcfg_parse) with a write-then-read
 * oracle: whatever parses must be written (or refused with RD_E_INVAL for a name too long for a YAML
 * key), read back to identical parameters (floats bit-exact, NaN as NaN), and written again to the
 * same bytes. Any violation traps. Inputs are capped at 256 KiB.
 */
#include "fuzz_input.h"
#include "rknn_diag/simulator.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_MAX_INPUT ((size_t)256 << 10)
#define FUZZ_NAME "fuzz.quantization.cfg"

static bool same_floats(const float *a, const float *b, size_t n)
{
    if (!a || !b)
        return a == b;
    for (size_t i = 0; i < n; i++)
        if (!(isnan(a[i]) && isnan(b[i])) && memcmp(&a[i], &b[i], sizeof a[i]) != 0)
            return false;
    return true;
}

static bool same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

static bool same_cfg(const rd_qcfg *a, const rd_qcfg *b)
{
    if (a->n_params != b->n_params || a->n_layers != b->n_layers)
        return false;
    for (size_t i = 0; i < a->n_layers; i++)
        if (strcmp(a->layers[i].name, b->layers[i].name) || a->layers[i].dtype != b->layers[i].dtype)
            return false;
    for (size_t i = 0; i < a->n_params; i++) {
        const rd_qcfg_param *x = &a->params[i], *y = &b->params[i];
        if (strcmp(x->name, y->name) || !same_str(x->qtype, y->qtype) || x->method != y->method ||
            x->dtype != y->dtype || x->has != y->has || (x->has && x->n != y->n))
            return false;
        if (!same_floats(x->min, y->min, x->n) || !same_floats(x->max, y->max, x->n) ||
            !same_floats(x->scale, y->scale, x->n) || !same_floats(x->ori_min, y->ori_min, x->n) ||
            !same_floats(x->ori_max, y->ori_max, x->n))
            return false;
        if ((x->zero_point == NULL) != (y->zero_point == NULL) ||
            (x->zero_point && memcmp(x->zero_point, y->zero_point, x->n * sizeof *x->zero_point)))
            return false;
    }
    return true;
}

/* A refusal leaves no parameters and no layers. */
static rd_status parse_qcfg(const char *buf, size_t size, const char *name, void *out, rd_error *err)
{
    rd_qcfg *q = out;
    rd_status st = rd_qcfg_parse(buf, size, name, q, err);
    return fuzz_refused_empty(st, !(q->n_params || q->n_layers));
}

static void check_qcfg(void *parsed)
{
    rd_qcfg *q = parsed;
    rd_error err;
    char *out = NULL;
    size_t len = 0;
    rd_status st = rd_qcfg_write(q, &out, &len, &err);
    if (st == RD_E_INVAL) { /* a name longer than a YAML key may be */
        rd_qcfg_fini(q);
        return;
    }
    if (st != RD_OK)
        __builtin_trap();
    rd_qcfg back;
    if (rd_qcfg_parse(out, len, "rewrite.cfg", &back, &err) != RD_OK)
        __builtin_trap();
    if (!same_cfg(q, &back))
        __builtin_trap();
    char *out2 = NULL;
    size_t len2 = 0;
    if (rd_qcfg_write(&back, &out2, &len2, &err) != RD_OK || len2 != len || memcmp(out, out2, len) != 0)
        __builtin_trap();
    free(out2);
    free(out);
    rd_qcfg_fini(&back);
    rd_qcfg_fini(q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rd_qcfg q;
    return fuzz_parse_input(data, size, FUZZ_MAX_INPUT, FUZZ_NAME, parse_qcfg, check_qcfg, &q);
}
