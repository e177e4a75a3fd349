/*
 * onnx_tensor.c: ONNX TensorProto to rd_tensor: raw_data, every typed field, external data files;
 * and the public TensorProto readers for test_data_set_*.pb files.
 *
 * Sizes are checked against the dims (rd_shape_bytes) before anything is allocated or read, so a
 * tensor claiming terabytes fails with RD_E_LIMIT whatever its data fields hold.
 */
#include "onnx_pb.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "raw_data is little-endian; add byte swaps");

/* Parses a non-negative decimal string (external data offset/length); false if not one. */
static bool parse_u64(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    if (!s || !*s)
        return false;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return false;
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, (uint64_t)(*s - '0'), &v))
            return false;
    }
    *out = v;
    return true;
}

/* Reads `bytes` bytes of external data described by tp's external_data entries into data. */
/* Reads tp's external data (bytes > 0) into out, shaped dt x tp->dims. The file is found and its size
   checked before out is allocated: a small model claiming a huge tensor costs no memory. */
static rd_status read_external(const Onnx__TensorProto *tp, const char *base_dir, rd_dtype dt, size_t bytes,
                               rd_tensor *out, rd_error *err)
{
    const char *location = NULL;
    uint64_t offset = 0, length = bytes;
    bool has_length = false;
    for (size_t i = 0; i < tp->n_external_data; i++) {
        const Onnx__StringStringEntryProto *e = tp->external_data[i];
        const char *key = e->key ? e->key : "";
        if (!strcmp(key, "location")) {
            location = e->value ? e->value : "";
        } else if (!strcmp(key, "offset") || !strcmp(key, "length")) {
            uint64_t *dst = key[0] == 'o' ? &offset : &length;
            if (!parse_u64(e->value, dst))
                return rd_errorf(err, RD_E_PARSE, "external data %s '%s' is not a byte count", key,
                                 e->value ? e->value : "");
            has_length |= key[0] == 'l';
        }
    }
    if (!location)
        return rd_errorf(err, RD_E_PARSE, "external data has no 'location'");
    if (!base_dir)
        return rd_errorf(err, RD_E_IO, "external data file '%s' cannot be read: the model was loaded without a folder",
                         location);
    if (has_length && length != bytes)
        return rd_errorf(err, RD_E_PARSE, "external data length is %llu bytes, expected %zu",
                         (unsigned long long)length, bytes);

    /* confined to the model's folder: no absolute path, no '..', no symbolic link followed */
    int fd;
    uint64_t size;
    rd_status st = rd_file_open_within(base_dir, location, UINT64_MAX, &fd, &size, err);
    if (st != RD_OK)
        return rd_error_prefix(err, "external data");
    if (offset > size || bytes > size - offset) {
        st =
            rd_errorf(err, RD_E_PARSE, "external data file '%s' in %s has %llu bytes, too short for %zu at offset %llu",
                      location, base_dir, (unsigned long long)size, bytes, (unsigned long long)offset);
    } else if ((st = sim_tensor_alloc(out, dt, (int)tp->n_dims, tp->dims, false, err)) == RD_OK) {
        char *data = out->data;
        size_t got = 0;
        while (got < bytes) {
            ssize_t r = pread(fd, data + got, bytes - got, (off_t)(offset + got));
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0) {
                st = rd_errorf(err, RD_E_IO, "cannot read %zu bytes at offset %llu of '%s' in %s", bytes,
                               (unsigned long long)offset, location, base_dir);
                break;
            }
            got += (size_t)r;
        }
        if (st != RD_OK)
            rd_tensor_fini(out);
    }
    close(fd);
    return st;
}

/* Number of values in the typed field the spec assigns to dt, or -1 when dt has none. */
static int64_t typed_count(const Onnx__TensorProto *tp, rd_dtype dt, const char **field)
{
    switch (dt) {
    case RD_DT_F32:
        *field = "float_data";
        return (int64_t)tp->n_float_data;
    case RD_DT_F64:
        *field = "double_data";
        return (int64_t)tp->n_double_data;
    case RD_DT_I64:
        *field = "int64_data";
        return (int64_t)tp->n_int64_data;
    case RD_DT_U32:
    case RD_DT_U64:
        *field = "uint64_data";
        return (int64_t)tp->n_uint64_data;
    case RD_DT_I32:
    case RD_DT_I16:
    case RD_DT_I8:
    case RD_DT_U16:
    case RD_DT_U8:
    case RD_DT_BOOL:
    case RD_DT_F16:
    case RD_DT_BF16:
        *field = "int32_data";
        return (int64_t)tp->n_int32_data;
    default:
        *field = "?";
        return -1;
    }
}

/* Copies n values from the typed field into data, narrowing as the spec's storage rules say. */
static void copy_typed(const Onnx__TensorProto *tp, rd_dtype dt, void *data, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        switch (dt) {
        case RD_DT_F32:
            ((float *)data)[i] = tp->float_data[i];
            break;
        case RD_DT_F64:
            ((double *)data)[i] = tp->double_data[i];
            break;
        case RD_DT_I64:
            ((int64_t *)data)[i] = tp->int64_data[i];
            break;
        case RD_DT_U64:
            ((uint64_t *)data)[i] = tp->uint64_data[i];
            break;
        case RD_DT_U32:
            ((uint32_t *)data)[i] = (uint32_t)tp->uint64_data[i];
            break;
        case RD_DT_I32:
            ((int32_t *)data)[i] = tp->int32_data[i];
            break;
        case RD_DT_I16:
            ((int16_t *)data)[i] = (int16_t)tp->int32_data[i];
            break;
        case RD_DT_I8:
            ((int8_t *)data)[i] = (int8_t)tp->int32_data[i];
            break;
        case RD_DT_U8:
            ((uint8_t *)data)[i] = (uint8_t)tp->int32_data[i];
            break;
        case RD_DT_BOOL:
            ((uint8_t *)data)[i] = tp->int32_data[i] != 0;
            break;
        /* half and bfloat16 keep their bit pattern in the low 16 bits */
        case RD_DT_U16:
        case RD_DT_F16:
        case RD_DT_BF16:
            ((uint16_t *)data)[i] = (uint16_t)tp->int32_data[i];
            break;
        default:
            break;
        }
    }
}

rd_status sim_onnx_tensor(const Onnx__TensorProto *tp, const char *base_dir, rd_tensor *out, rd_error *err)
{
    memset(out, 0, sizeof *out);
    if (!tp->has_data_type || tp->data_type == 0)
        return rd_errorf(err, RD_E_PARSE, "tensor has no data_type");
    if (tp->data_type < 0)
        return rd_errorf(err, RD_E_PARSE, "invalid data_type %d", (int)tp->data_type);
    rd_dtype dt = (rd_dtype)tp->data_type;
    const rd_dtype_info *info = rd_dtype_get(dt);
    if (!info->supported)
        return rd_errorf(err, RD_E_UNSUPPORTED, "unsupported dtype %s (%d)", info->name, (int)tp->data_type);
    if (tp->segment)
        return rd_errorf(err, RD_E_UNSUPPORTED, "tensor segments are not supported");
    if (tp->n_dims > RD_MAX_RANK)
        return rd_errorf(err, RD_E_LIMIT, "rank %zu exceeds the maximum of %d", tp->n_dims, RD_MAX_RANK);
    int rank = (int)tp->n_dims;
    size_t bytes;
    rd_status st = rd_shape_bytes(dt, rank, tp->dims, &bytes, err);
    if (st != RD_OK)
        return st;
    int64_t numel = 1;
    for (int i = 0; i < rank; i++)
        numel *= tp->dims[i]; /* bounded by rd_shape_bytes */

    bool external = tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    const char *field = NULL;
    int64_t count = 0;
    if (!external && tp->has_raw_data) {
        if (tp->raw_data.len != bytes)
            return rd_errorf(err, RD_E_PARSE, "raw_data has %zu bytes, expected %zu (%lld x %s)", tp->raw_data.len,
                             bytes, (long long)numel, info->name);
    } else if (!external) {
        count = typed_count(tp, dt, &field);
        if (count != numel)
            return rd_errorf(err, RD_E_PARSE, "%s has %lld values, expected %lld (%s) and no raw_data is given", field,
                             (long long)count, (long long)numel, info->name);
    }

    if (external && bytes)
        return read_external(tp, base_dir, dt, bytes, out, err);
    st = rd_tensor_alloc(out, dt, rank, tp->dims, err);
    if (st != RD_OK || !bytes)
        return st;
    if (tp->has_raw_data)
        memcpy(out->data, tp->raw_data.data, bytes);
    else
        copy_typed(tp, dt, out->data, numel);
    return RD_OK;
}

static rd_status tensorproto_parse(const void *buf, size_t len, const char *name, const char *base_dir, rd_tensor *out,
                                   char **out_name, rd_error *err)
{
    if (out_name)
        *out_name = NULL;
    sim_pb_budget budget;
    sim_pb_budget_init(&budget, SIM_PB_BUDGET(len));
    ProtobufCMessage *msg;
    rd_status st = sim_pb_unpack(&onnx__tensor_proto__descriptor, buf, len, &budget, &msg, err);
    if (st != RD_OK) {
        rd_error_prefix(err, "%s", name);
        return st;
    }
    Onnx__TensorProto *tp = (Onnx__TensorProto *)msg;
    const char *tname = tp->name ? tp->name : "";
    st = sim_onnx_tensor(tp, base_dir, out, err);
    if (st != RD_OK) {
        rd_error_prefix(err, "%s: tensor '%s'", name, tname);
    } else if (out_name && !(*out_name = sim_strdup(tname))) {
        rd_tensor_fini(out);
        st = rd_errorf(err, RD_E_NOMEM, "%s: out of memory", name);
    }
    protobuf_c_message_free_unpacked(&tp->base, &budget.alloc);
    return st;
}

rd_status rd_tensorproto_parse(const void *buf, size_t len, const char *name, rd_tensor *out, char **out_name,
                               rd_error *err)
{
    if (!buf && len)
        return rd_errorf(err, RD_E_INVAL, "rd_tensorproto_parse: NULL buffer");
    return tensorproto_parse(buf ? buf : "", len, name ? name : "<memory>", NULL, out, out_name, err);
}

rd_status rd_tensorproto_load(const char *path, rd_tensor *out, char **out_name, rd_error *err)
{
    if (out_name)
        *out_name = NULL;
    sim_file_bytes f; /* external data of a .pb file is relative to its folder */
    rd_status st = sim_file_bytes_read(path, RD_MAX_MODEL_BYTES, &f, err);
    if (st == RD_OK)
        st = tensorproto_parse(f.buf, f.len, path, f.dir, out, out_name, err);
    sim_file_bytes_free(&f);
    return st;
}
