/*
 * dump_names.c: librknnrt's dump file names (docs/dumps.md, "File names"):
 *
 *     NNN_<RuntimeOpType>_<sanitised tensor name>_shape_<d0>_<d1>..._<dtype>.npy   (or .txt)
 *
 * Read from the ends inwards, since only the middle (the tensor name) is free text: the extension, the
 * dtype after the last '_', the dims after the LAST "_shape_" (a name may contain "shape", even
 * "_shape_"; dims never do), then from the front the index up to the first '_' and the op type up to
 * the next '_'. Runtime op types are CamelCase identifiers without '_' (ConvClip, InputOperator, ...)
 * while tensor names may contain and even start with '_' ("__backbone_Conv_output_0"), so the op type
 * ends at its first '_' and everything after that one separator is the name.
 */
#include "dumps.h"

#include <string.h>

#define MAX_INDEX 999999999
#define MAX_DIM ((int64_t)1 << 40)

static const struct {
    const char *name;
    rd_dtype dtype;
} dtype_names[] = {
    {"float", RD_DT_F32}, {"float16", RD_DT_F16}, {"uint8", RD_DT_U8},
    {"int8", RD_DT_I8},   {"int16", RD_DT_I16},   {"int32", RD_DT_I32},
};

static const char *dtype_name(rd_dtype dt)
{
    for (size_t i = 0; i < sizeof dtype_names / sizeof dtype_names[0]; i++)
        if (dtype_names[i].dtype == dt)
            return dtype_names[i].name;
    return NULL;
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_alnum(char c)
{
    return is_digit(c) || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

/* Decimal digits in [p, end) into *out, at most max. */
static bool parse_uint(const char *p, const char *end, int64_t max, int64_t *out)
{
    if (p >= end)
        return false;
    int64_t v = 0;
    for (; p < end; p++) {
        if (!is_digit(*p))
            return false;
        v = v * 10 + (*p - '0');
        if (v > max)
            return false;
    }
    *out = v;
    return true;
}

/* The last occurrence of needle in [s, end), or NULL. */
static const char *find_last(const char *s, const char *end, const char *needle)
{
    size_t n = strlen(needle);
    if ((size_t)(end - s) < n)
        return NULL;
    for (size_t i = (size_t)(end - s) - n + 1; i-- > 0;)
        if (memcmp(s + i, needle, n) == 0)
            return s + i;
    return NULL;
}

static rd_status parse_dims(const char *file, const char *p, const char *end, an_dump_name *out, rd_error *err)
{
    out->rank = 0;
    while (p <= end) {
        const char *sep = memchr(p, '_', (size_t)(end - p));
        const char *tok_end = sep ? sep : end;
        int64_t d = 0;
        if (out->rank == RD_MAX_RANK)
            return rd_errorf(err, RD_E_PARSE, "%s: more than %d dims after '_shape_'", file, RD_MAX_RANK);
        if (!parse_uint(p, tok_end, MAX_DIM, &d))
            return rd_errorf(err, RD_E_PARSE, "%s: dim %d after '_shape_' is '%.*s', not a number", file, out->rank,
                             (int)(tok_end - p), p);
        out->dims[out->rank++] = d;
        if (!sep)
            break;
        p = sep + 1;
    }
    return RD_OK;
}

rd_status an_dump_name_parse(const char *file_name, an_dump_name *out, rd_error *err)
{
    memset(out, 0, sizeof *out);
    const char *slash = strrchr(file_name, '/');
    const char *base = slash ? slash + 1 : file_name;
    const char *file = base; /* for messages */
    size_t len = strlen(base);
    if (len > 4 && strcmp(base + len - 4, ".npy") == 0) {
        out->is_txt = false;
    } else if (len > 4 && strcmp(base + len - 4, ".txt") == 0) {
        out->is_txt = true;
    } else {
        return rd_errorf(err, RD_E_PARSE,
                         "%s: not a dump file name (NNN_<OpType>_<name>_shape_<dims>_<dtype>.npy or .txt)", file);
    }
    const char *end = base + len - 4;

    /* dtype: after the last '_' */
    const char *us = find_last(base, end, "_");
    if (!us)
        return rd_errorf(err, RD_E_PARSE, "%s: no '_<dtype>' before the extension", file);
    size_t dlen = (size_t)(end - us - 1);
    out->dtype = RD_DT_UNDEFINED;
    for (size_t i = 0; i < sizeof dtype_names / sizeof dtype_names[0]; i++)
        if (strlen(dtype_names[i].name) == dlen && memcmp(dtype_names[i].name, us + 1, dlen) == 0)
            out->dtype = dtype_names[i].dtype;
    if (out->dtype == RD_DT_UNDEFINED)
        return rd_errorf(err, RD_E_PARSE, "%s: dtype '%.*s' is not float, float16, uint8, int8, int16 or int32", file,
                         (int)dlen, us + 1);

    /* dims: after the last "_shape_" */
    const char *shape = find_last(base, us, "_shape_");
    if (!shape)
        return rd_errorf(err, RD_E_PARSE, "%s: no '_shape_' before the dtype", file);
    rd_status st = parse_dims(file, shape + 7, us, out, err);
    if (st != RD_OK)
        return st;

    /* index: digits up to the first '_' */
    const char *p = base;
    const char *idx_end = memchr(p, '_', (size_t)(shape - p));
    int64_t index = 0;
    if (!idx_end || !parse_uint(p, idx_end, MAX_INDEX, &index))
        return rd_errorf(err, RD_E_PARSE, "%s: does not start with the op index 'NNN_'", file);
    out->index = (int)index;

    /* op type: an identifier up to the next '_', then the name */
    p = idx_end + 1;
    const char *op_end = p < shape ? memchr(p, '_', (size_t)(shape - p)) : NULL;
    if (!op_end || op_end == p)
        return rd_errorf(err, RD_E_PARSE, "%s: no '<OpType>_<name>' between the index and '_shape_'", file);
    size_t op_len = (size_t)(op_end - p);
    if (op_len >= sizeof out->op_type)
        return rd_errorf(err, RD_E_PARSE, "%s: op type longer than %zu characters", file, sizeof out->op_type - 1);
    for (const char *q = p; q < op_end; q++)
        if (!is_alnum(*q))
            return rd_errorf(err, RD_E_PARSE, "%s: op type '%.*s' is not an identifier", file, (int)op_len, p);
    memcpy(out->op_type, p, op_len);
    out->op_type[op_len] = '\0';

    const char *name = op_end + 1;
    size_t name_len = (size_t)(shape - name);
    if (name_len == 0)
        return rd_errorf(err, RD_E_PARSE, "%s: empty tensor name", file);
    if (name_len >= sizeof out->name)
        return rd_errorf(err, RD_E_PARSE, "%s: tensor name longer than %zu characters", file, sizeof out->name - 1);
    memcpy(out->name, name, name_len);
    out->name[name_len] = '\0';
    return RD_OK;
}

int an_dump_name_format(const an_dump_name *d, char *buf, size_t len)
{
    const char *dt = dtype_name(d->dtype);
    size_t op_len = strnlen(d->op_type, sizeof d->op_type);
    size_t name_len = strnlen(d->name, sizeof d->name);
    if (!dt || d->index < 0 || d->index > MAX_INDEX || d->rank < 1 || d->rank > RD_MAX_RANK || op_len == 0 ||
        op_len == sizeof d->op_type || name_len == 0 || name_len == sizeof d->name || memchr(d->name, '/', name_len))
        return -1;
    for (size_t i = 0; i < op_len; i++)
        if (!is_alnum(d->op_type[i]))
            return -1;
    char dims[RD_MAX_RANK * 16];
    size_t used = 0;
    for (int i = 0; i < d->rank; i++) {
        if (d->dims[i] < 0 || d->dims[i] > MAX_DIM)
            return -1;
        int w = snprintf(dims + used, sizeof dims - used, "_%lld", (long long)d->dims[i]);
        if (w < 0 || (size_t)w >= sizeof dims - used)
            return -1;
        used += (size_t)w;
    }
    return snprintf(buf, len, "%03d_%s_%s_shape%s_%s.%s", d->index, d->op_type, d->name, dims, dt,
                    d->is_txt ? "txt" : "npy");
}

void an_dump_sanitise(const char *tensor_name, char *buf, size_t len)
{
    if (len == 0)
        return;
    size_t i = 0;
    for (; tensor_name[i] && i + 1 < len; i++)
        buf[i] = tensor_name[i] == '/' ? '_' : tensor_name[i];
    buf[i] = '\0';
}
