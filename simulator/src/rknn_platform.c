/* rknn_platform.c: RKNN's target platforms, quantization dtypes, algorithms and methods as tables.
 *
 * Facts come from docs/rknn-formats.md sections 4, 5 and 8 (RKNN-Toolkit2 2.x user guide and
 * runtime). Where that document does not state a fact for a chip (dump folder, C2), the entry says
 * so (dump_dir_inferred, C2 0) rather than guessing silently. */
#include "internal.h"

#include <stdio.h>
#include <strings.h>

#define DT(x) (1u << RD_QDT_##x)
/* Every RKNPU2 chip runs w8a8 and float16 models; float32 is our reference, accepted everywhere. */
#define DT_BASE (DT(FLOAT32) | DT(W8A8) | DT(FLOAT16))

static const rd_platform_info platforms[] = {
    {.name = "rv1103",
     .dtypes = DT_BASE | DT(W16A16I) | DT(W16A16I_DFP),
     .dump_dir = "/tmp/dumps",
     .c2_int8 = 16,
     .c2_f16 = 8},
    {.name = "rv1103b", .dtypes = DT_BASE, .dump_dir = "/tmp/dumps"},
    {.name = "rv1106",
     .dtypes = DT_BASE | DT(W16A16I) | DT(W16A16I_DFP),
     .dump_dir = "/tmp/dumps",
     .c2_int8 = 16,
     .c2_f16 = 8},
    {.name = "rv1106b", .dtypes = DT_BASE, .dump_dir = "/tmp/dumps", .dump_dir_inferred = true},
    {.name = "rv1126b", .dtypes = DT_BASE | DT(W4A16), .dump_dir = "/userdata/dumps", .dump_dir_inferred = true},
    {.name = "rk2118", .dtypes = DT_BASE, .dump_dir = "/userdata/dumps", .dump_dir_inferred = true},
    {.name = "rk3562", .dtypes = DT_BASE | DT(W8A16), .dump_dir = "/userdata/dumps", .c2_int8 = 16, .c2_f16 = 8},
    {.name = "rk3566", .dtypes = DT_BASE, .dump_dir = "/userdata/dumps", .c2_int8 = 8, .c2_f16 = 4},
    {.name = "rk3568", .dtypes = DT_BASE, .dump_dir = "/userdata/dumps", .c2_int8 = 8, .c2_f16 = 4},
    {.name = "rk3576", .dtypes = DT_BASE | DT(W4A16), .dump_dir = "/userdata/dumps"},
    {.name = "rk3588", .dtypes = DT_BASE, .dump_dir = "/userdata/dumps", .c2_int8 = 16, .c2_f16 = 8},
};

size_t rd_platform_count(void)
{
    return sizeof platforms / sizeof platforms[0];
}

const rd_platform_info *rd_platform_get(size_t i)
{
    return i < rd_platform_count() ? &platforms[i] : NULL;
}

const rd_platform_info *rd_platform_find(const char *name)
{
    for (size_t i = 0; name && i < rd_platform_count(); i++)
        if (!strcasecmp(platforms[i].name, name))
            return &platforms[i];
    return NULL;
}

bool rd_platform_supports(const rd_platform_info *p, rd_qdtype dt)
{
    return p && (unsigned)dt < RD_QDT_COUNT && (p->dtypes & (1u << dt));
}

typedef struct qdtype_info {
    const char *name;
    const char *alias; /* the RKNN-Toolkit 1.x name, or NULL */
} qdtype_info;

static const qdtype_info qdtypes[RD_QDT_COUNT] = {
    [RD_QDT_FLOAT32] = {.name = "float32"},
    [RD_QDT_W8A8] = {.name = "w8a8", .alias = "asymmetric_quantized-8"},
    [RD_QDT_FLOAT16] = {.name = "float16"},
    [RD_QDT_W8A16] = {.name = "w8a16"},
    [RD_QDT_W4A16] = {.name = "w4a16"},
    [RD_QDT_W16A16I] = {.name = "w16a16i"},
    [RD_QDT_W16A16I_DFP] = {.name = "w16a16i_dfp"},
};

static const char *const qalgos[RD_QALGO_COUNT] = {
    [RD_QALGO_NORMAL] = "normal",
    [RD_QALGO_KL_DIVERGENCE] = "kl_divergence",
    [RD_QALGO_MMSE] = "mmse",
    [RD_QALGO_GDQ] = "gdq",
};

static const char *const qmethods[RD_QMETHOD_COUNT] = {
    [RD_QMETHOD_CHANNEL] = "channel",
    [RD_QMETHOD_LAYER] = "layer",
    [RD_QMETHOD_GROUP] = "group",
};

const char *rd_qdtype_name(rd_qdtype dt)
{
    return (unsigned)dt < RD_QDT_COUNT ? qdtypes[dt].name : "unknown";
}

const char *rd_qalgo_name(rd_qalgo a)
{
    return (unsigned)a < RD_QALGO_COUNT ? qalgos[a] : "unknown";
}

const char *rd_qmethod_name(rd_qmethod m)
{
    return (unsigned)m < RD_QMETHOD_COUNT ? qmethods[m] : "unknown";
}

rd_status rd_qdtype_parse(const char *name, rd_qdtype *out, rd_error *err)
{
    /* float32 is not an RKNN quantized_dtype: only rd_precision_parse takes it */
    for (int i = RD_QDT_W8A8; i < RD_QDT_COUNT; i++)
        if (!strcmp(name, qdtypes[i].name) || (qdtypes[i].alias && !strcmp(name, qdtypes[i].alias))) {
            *out = (rd_qdtype)i;
            return RD_OK;
        }
    return rd_errorf(err, RD_E_INVAL,
                     "unknown quantized dtype '%s' (expected w8a8, float16, w8a16, w4a16, w16a16i, w16a16i_dfp; "
                     "asymmetric_quantized-8 means w8a8)",
                     name);
}

rd_status rd_precision_parse(const char *name, rd_qdtype *out, rd_error *err)
{
    if (!strcmp(name, "fp32") || !strcmp(name, "float32")) {
        *out = RD_QDT_FLOAT32;
        return RD_OK;
    }
    if (!strcmp(name, "fp16")) {
        *out = RD_QDT_FLOAT16;
        return RD_OK;
    }
    if (!strcmp(name, "int8")) {
        *out = RD_QDT_W8A8;
        return RD_OK;
    }
    if (!strcmp(name, "int16")) {
        *out = RD_QDT_W16A16I;
        return RD_OK;
    }
    rd_status st = rd_qdtype_parse(name, out, err);
    if (st != RD_OK)
        rd_errorf(err, st,
                  "unknown precision '%s' (expected fp32, fp16, int8, int16 or a dtype: w8a8, float16, w8a16, "
                  "w4a16, w16a16i, w16a16i_dfp)",
                  name);
    return st;
}

rd_status rd_qalgo_parse(const char *name, rd_qalgo *out, rd_error *err)
{
    for (int i = 0; i < RD_QALGO_COUNT; i++)
        if (!strcmp(name, qalgos[i])) {
            *out = (rd_qalgo)i;
            return RD_OK;
        }
    return rd_errorf(err, RD_E_INVAL, "unknown quantized algorithm '%s' (expected normal, kl_divergence, mmse, gdq)",
                     name);
}

rd_status rd_qmethod_parse(const char *name, rd_qmethod *out, int *out_group_size, rd_error *err)
{
    if (out_group_size)
        *out_group_size = 0;
    if (!strcmp(name, "channel") || !strcmp(name, "layer")) {
        *out = name[0] == 'c' ? RD_QMETHOD_CHANNEL : RD_QMETHOD_LAYER;
        return RD_OK;
    }
    if (!strncmp(name, "group", 5)) {
        const char *d = name + 5;
        long size = 0;
        size_t nd = 0;
        while (d[nd] >= '0' && d[nd] <= '9' && nd < 6)
            size = size * 10 + (d[nd++] - '0');
        if (nd > 0 && d[nd] == '\0' && size > 0 && size <= 65536) {
            *out = RD_QMETHOD_GROUP;
            if (out_group_size)
                *out_group_size = (int)size;
            return RD_OK;
        }
    }
    return rd_errorf(err, RD_E_INVAL,
                     "unknown quantized method '%s' (expected channel, layer or group{SIZE} such as "
                     "group32)",
                     name);
}
