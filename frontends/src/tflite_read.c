/*
 * tflite_read.c: a .tflite FlatBuffer into tfl_model (tflite.h), through the bounds-checked reader of flatbuf/.
 * Every offset is checked by rd_fb; here the schema's meaning is checked: tensor indices inside the subgraph,
 * buffer sizes equal to the tensor's bytes, quantization arrays of one length, ranks and dims in range.
 */
#include "tflite.h"

#include <stdio.h>

/* Model */
enum { M_VERSION = 0, M_OPCODES = 1, M_SUBGRAPHS = 2, M_DESCRIPTION = 3, M_BUFFERS = 4 };
/* OperatorCode */
enum { OC_DEPRECATED_CODE = 0, OC_CUSTOM = 1, OC_VERSION = 2, OC_CODE = 3 };
/* SubGraph */
enum { SG_TENSORS = 0, SG_INPUTS = 1, SG_OUTPUTS = 2, SG_OPERATORS = 3 };
/* Buffer */
enum { B_DATA = 0, B_OFFSET = 1, B_SIZE = 2 };
/* Tensor */
enum { T_SHAPE = 0, T_TYPE = 1, T_BUFFER = 2, T_NAME = 3, T_QUANT = 4, T_IS_VARIABLE = 5, T_SPARSITY = 6 };
/* QuantizationParameters */
enum { Q_SCALE = 2, Q_ZERO_POINT = 3, Q_DETAILS_TYPE = 4, Q_DIM = 6 };
/* Operator */
enum { O_OPCODE = 0, O_INPUTS = 1, O_OUTPUTS = 2, O_OPT_TYPE = 3, O_OPT = 4 };

static const struct {
    int code;
    const char *name;
} op_names[] = {
    {0, "ADD"},
    {1, "AVERAGE_POOL_2D"},
    {2, "CONCATENATION"},
    {3, "CONV_2D"},
    {4, "DEPTHWISE_CONV_2D"},
    {5, "DEPTH_TO_SPACE"},
    {6, "DEQUANTIZE"},
    {7, "EMBEDDING_LOOKUP"},
    {8, "FLOOR"},
    {9, "FULLY_CONNECTED"},
    {10, "HASHTABLE_LOOKUP"},
    {11, "L2_NORMALIZATION"},
    {12, "L2_POOL_2D"},
    {13, "LOCAL_RESPONSE_NORMALIZATION"},
    {14, "LOGISTIC"},
    {15, "LSH_PROJECTION"},
    {16, "LSTM"},
    {17, "MAX_POOL_2D"},
    {18, "MUL"},
    {19, "RELU"},
    {20, "RELU_N1_TO_1"},
    {21, "RELU6"},
    {22, "RESHAPE"},
    {23, "RESIZE_BILINEAR"},
    {24, "RNN"},
    {25, "SOFTMAX"},
    {26, "SPACE_TO_DEPTH"},
    {27, "SVDF"},
    {28, "TANH"},
    {31, "CALL"},
    {32, "CUSTOM"},
    {34, "PAD"},
    {36, "GATHER"},
    {37, "BATCH_TO_SPACE_ND"},
    {38, "SPACE_TO_BATCH_ND"},
    {39, "TRANSPOSE"},
    {40, "MEAN"},
    {41, "SUB"},
    {42, "DIV"},
    {43, "SQUEEZE"},
    {44, "UNIDIRECTIONAL_SEQUENCE_LSTM"},
    {45, "STRIDED_SLICE"},
    {47, "EXP"},
    {48, "TOPK_V2"},
    {49, "SPLIT"},
    {50, "LOG_SOFTMAX"},
    {53, "CAST"},
    {54, "PRELU"},
    {55, "MAXIMUM"},
    {56, "ARG_MAX"},
    {57, "MINIMUM"},
    {58, "LESS"},
    {59, "NEG"},
    {60, "PADV2"},
    {61, "GREATER"},
    {64, "SELECT"},
    {65, "SLICE"},
    {66, "SIN"},
    {67, "TRANSPOSE_CONV"},
    {69, "TILE"},
    {70, "EXPAND_DIMS"},
    {71, "EQUAL"},
    {73, "LOG"},
    {74, "SUM"},
    {75, "SQRT"},
    {76, "RSQRT"},
    {77, "SHAPE"},
    {78, "POW"},
    {79, "ARG_MIN"},
    {81, "REDUCE_PROD"},
    {82, "REDUCE_MAX"},
    {83, "PACK"},
    {88, "UNPACK"},
    {89, "REDUCE_MIN"},
    {92, "SQUARE"},
    {97, "RESIZE_NEAREST_NEIGHBOR"},
    {98, "LEAKY_RELU"},
    {99, "SQUARED_DIFFERENCE"},
    {100, "MIRROR_PAD"},
    {101, "ABS"},
    {102, "SPLIT_V"},
    {104, "CEIL"},
    {106, "ADD_N"},
    {107, "GATHER_ND"},
    {108, "COS"},
    {111, "ELU"},
    {114, "QUANTIZE"},
    {116, "ROUND"},
    {117, "HARD_SWISH"},
    {118, "IF"},
    {119, "WHILE"},
    {126, "BATCH_MATMUL"},
    {150, "GELU"},
};

const char *tfl_op_name(int code, char *buf, size_t len)
{
    for (size_t i = 0; i < sizeof op_names / sizeof op_names[0]; i++)
        if (op_names[i].code == code)
            return op_names[i].name;
    snprintf(buf, len, "BUILTIN_%d", code);
    return buf;
}

/* TensorType -> dtype; RD_DT_UNDEFINED for STRING, COMPLEX*, RESOURCE, VARIANT, INT4 and unknown types. */
static rd_dtype dtype_of(int type)
{
    static const rd_dtype map[] = {
        [0] = RD_DT_F32, [1] = RD_DT_F16, [2] = RD_DT_I32,  [3] = RD_DT_U8,   [4] = RD_DT_I64,  [6] = RD_DT_BOOL,
        [7] = RD_DT_I16, [9] = RD_DT_I8,  [10] = RD_DT_F64, [12] = RD_DT_U64, [15] = RD_DT_U32, [16] = RD_DT_U16,
    };
    return type >= 0 && (size_t)type < sizeof map / sizeof map[0] ? map[type] : RD_DT_UNDEFINED;
}

static rd_status read_quant(const tfl_model *m, const rd_fb_table *qt, tfl_tensor *t, size_t idx, rd_error *err)
{
    rd_fb_vec sc, zp;
    rd_status st = rd_fb_vector(qt, Q_SCALE, 4, &sc, err);
    if (st == RD_OK)
        st = rd_fb_vector(qt, Q_ZERO_POINT, 8, &zp, err);
    uint8_t details = 0;
    if (st == RD_OK)
        st = rd_fb_u8(qt, Q_DETAILS_TYPE, 0, &details, err);
    int32_t qdim = 0;
    if (st == RD_OK)
        st = rd_fb_i32(qt, Q_DIM, 0, &qdim, err);
    if (st != RD_OK)
        return st;
    if (details != 0)
        return rd_errorf(err, RD_E_UNSUPPORTED,
                         "%s: tensor #%zu '%s': custom quantization (details type %u) is not "
                         "supported",
                         m->path, idx, t->name, details);
    if (sc.n == 0)
        return RD_OK;
    if (zp.n != 0 && zp.n != sc.n)
        return rd_errorf(err, RD_E_PARSE, "%s: tensor #%zu '%s' (offset %zu): %u scales but %u zero points", m->path,
                         idx, t->name, t->offset, sc.n, zp.n);
    if (sc.n > 1 && t->rank == 1 && t->dims[0] == (int64_t)sc.n)
        qdim = 0; /* a per-channel bias: older converters wrote the filter's dim (3) here, TFLite ignores it */
    if (sc.n > 1 && (qdim < 0 || qdim >= t->rank || t->dims[qdim] != (int64_t)sc.n))
        return rd_errorf(err, RD_E_PARSE,
                         "%s: tensor #%zu '%s' (offset %zu): %u scales along dim %d of a %d-D "
                         "tensor",
                         m->path, idx, t->name, t->offset, sc.n, qdim, t->rank);
    t->scale = malloc(sc.n * sizeof *t->scale);
    t->zero_point = calloc(sc.n, sizeof *t->zero_point);
    if (!t->scale || !t->zero_point)
        return rd_errorf(err, RD_E_NOMEM, "%s: out of memory", m->path);
    t->n_q = sc.n;
    t->qdim = qdim;
    for (uint32_t i = 0; i < sc.n; i++) {
        t->scale[i] = rd_fb_vec_f32(&sc, i);
        t->zero_point[i] = zp.n ? rd_fb_vec_i64(&zp, i) : 0;
        if (!(t->scale[i] >= 0.0f) || t->scale[i] > 3.0e38f || t->zero_point[i] < -65536 || t->zero_point[i] > 65535)
            return rd_errorf(err, RD_E_PARSE,
                             "%s: tensor #%zu '%s' (offset %zu): quantization %u has scale %g, zero "
                             "point %lld",
                             m->path, idx, t->name, t->offset, i, (double)t->scale[i], (long long)t->zero_point[i]);
    }
    return RD_OK;
}

/* The bytes of buffer b: the [ubyte] data, or offset/size into the file (models above 2 GB). */
static rd_status buffer_bytes(const tfl_model *m, const rd_fb_vec *buffers, uint32_t b, const uint8_t **data,
                              size_t *len, rd_error *err)
{
    *data = NULL;
    *len = 0;
    if (b == 0)
        return RD_OK; /* buffer 0 is the empty one by convention */
    if (b >= buffers->n)
        return rd_errorf(err, RD_E_PARSE, "%s: buffer index %u is beyond the %u buffers", m->path, b, buffers->n);
    rd_fb_table bt;
    rd_fb_vec v;
    uint64_t off = 0, size = 0;
    rd_status st = rd_fb_vec_table(buffers, b, &bt, err);
    if (st == RD_OK)
        st = rd_fb_vector(&bt, B_DATA, 1, &v, err);
    if (st == RD_OK)
        st = rd_fb_u64(&bt, B_OFFSET, 0, &off, err);
    if (st == RD_OK)
        st = rd_fb_u64(&bt, B_SIZE, 0, &size, err);
    if (st != RD_OK)
        return st;
    if (v.n) {
        *data = rd_fb_vec_data(&v);
        *len = v.n;
    } else if (off > 1) {
        if (off > m->fb.len || size > m->fb.len - off)
            return rd_errorf(err, RD_E_PARSE, "%s: buffer %u claims bytes %llu..%llu, the file has %zu", m->path, b,
                             (unsigned long long)off, (unsigned long long)(off + size), m->fb.len);
        *data = m->fb.buf + off;
        *len = (size_t)size;
    }
    return RD_OK;
}

static rd_status read_tensor(tfl_model *m, const rd_fb_vec *tensors, const rd_fb_vec *buffers, uint32_t i,
                             rd_error *err)
{
    tfl_tensor *t = &m->tensors[i];
    rd_fb_table tt, qt;
    rd_fb_vec shape;
    int8_t type = 0;
    uint32_t buf = 0;
    bool has_q = false, has_sparse = false;
    rd_status st = rd_fb_vec_table(tensors, i, &tt, err);
    if (st != RD_OK)
        return st;
    t->offset = rd_fb_field_offset(&tt, T_SHAPE);
    size_t name_len = 0;
    if ((st = rd_fb_string(&tt, T_NAME, &t->name, &name_len, err)) != RD_OK ||
        (st = rd_fb_vector(&tt, T_SHAPE, 4, &shape, err)) != RD_OK ||
        (st = rd_fb_i8(&tt, T_TYPE, 0, &type, err)) != RD_OK ||
        (st = rd_fb_u32(&tt, T_BUFFER, 0, &buf, err)) != RD_OK ||
        (st = rd_fb_table_field(&tt, T_QUANT, &qt, &has_q, err)) != RD_OK)
        return st;
    rd_fb_table sp;
    if ((st = rd_fb_table_field(&tt, T_SPARSITY, &sp, &has_sparse, err)) != RD_OK)
        return st;
    if (!t->name)
        t->name = "";
    t->type = type;
    t->dtype = dtype_of(type);
    if (shape.n > RD_MAX_RANK)
        return rd_errorf(err, RD_E_UNSUPPORTED, "%s: tensor #%u '%s' (offset %zu) has rank %u (at most %d)", m->path, i,
                         t->name, t->offset, shape.n, RD_MAX_RANK);
    t->rank = (int)shape.n;
    for (uint32_t d = 0; d < shape.n; d++) {
        t->dims[d] = rd_fb_vec_i32(&shape, d);
        if (t->dims[d] < 0)
            return rd_errorf(err, RD_E_PARSE, "%s: tensor #%u '%s' (offset %zu): dim %u is %lld", m->path, i, t->name,
                             t->offset, d, (long long)t->dims[d]);
    }
    if (has_sparse)
        return rd_errorf(err, RD_E_UNSUPPORTED, "%s: tensor #%u '%s': sparse tensors are not supported", m->path, i,
                         t->name);
    size_t bytes = 0; /* every declared shape within RD_MAX_TENSOR_BYTES, activations too */
    if (t->dtype != RD_DT_UNDEFINED && (st = rd_shape_bytes(t->dtype, t->rank, t->dims, &bytes, err)) != RD_OK)
        return rd_error_prefix(err, "%s: tensor #%u '%s' (offset %zu)", m->path, i, t->name, t->offset);
    if (has_q && (st = read_quant(m, &qt, t, i, err)) != RD_OK)
        return st;
    if (t->n_q && (t->dtype == RD_DT_I8 || t->dtype == RD_DT_I16 || t->dtype == RD_DT_U8))
        m->quantized = true;
    if ((st = buffer_bytes(m, buffers, buf, &t->data, &t->data_len, err)) != RD_OK)
        return rd_error_prefix(err, "tensor #%u '%s'", i, t->name);
    if (t->data_len == 0) {
        t->data = NULL;
        return RD_OK;
    }
    size_t want = 0;
    if (t->dtype == RD_DT_UNDEFINED)
        return rd_errorf(err, RD_E_UNSUPPORTED,
                         "%s: tensor #%u '%s' holds constant data of TensorType %d, which "
                         "rknn-diag cannot hold",
                         m->path, i, t->name, type);
    if ((st = rd_shape_bytes(t->dtype, t->rank, t->dims, &want, err)) != RD_OK)
        return rd_error_prefix(err, "%s: tensor #%u '%s'", m->path, i, t->name);
    if (want != t->data_len)
        return rd_errorf(err, RD_E_PARSE,
                         "%s: tensor #%u '%s' (offset %zu): its buffer %u holds %zu bytes, the %s "
                         "shape needs %zu",
                         m->path, i, t->name, t->offset, buf, t->data_len, rd_dtype_name(t->dtype), want);
    return RD_OK;
}

/* A vector of tensor indices (subgraph inputs/outputs, operator inputs/outputs) into a new *out[0..*n). */
static rd_status read_indices(const tfl_model *m, const rd_fb_table *t, unsigned slot, bool allow_omitted, int **out_v,
                              size_t *n, const char *what, rd_error *err)
{
    rd_fb_vec v;
    rd_status st = rd_fb_vector(t, slot, 4, &v, err);
    if (st != RD_OK)
        return st;
    if (v.n > RD_FE_MAX_OP_IO)
        return rd_errorf(err, RD_E_LIMIT, "%s: %s lists %u tensors (at most %u)", m->path, what, v.n, RD_FE_MAX_OP_IO);
    int *out = *out_v = malloc((v.n ? v.n : 1) * sizeof *out);
    if (!out)
        return rd_errorf(err, RD_E_NOMEM, "%s: out of memory", m->path);
    for (uint32_t i = 0; i < v.n; i++) {
        int32_t k = rd_fb_vec_i32(&v, i);
        if ((k < 0 && !(allow_omitted && k == -1)) || (k >= 0 && (size_t)k >= m->n_tensors))
            return rd_errorf(err, RD_E_PARSE, "%s: %s: tensor index %d is outside 0..%zu (offset %zu)", m->path, what,
                             k, m->n_tensors - 1, v.pos + 4 * (size_t)i + m->fb.base);
        out[i] = k;
    }
    *n = v.n;
    return RD_OK;
}

static rd_status read_op(tfl_model *m, const rd_fb_vec *ops, const rd_fb_vec *codes, uint32_t i, rd_error *err)
{
    tfl_op *o = &m->ops[i];
    rd_fb_table ot, ct;
    uint32_t opcode = 0;
    rd_status st = rd_fb_vec_table(ops, i, &ot, err);
    if (st == RD_OK)
        st = rd_fb_u32(&ot, O_OPCODE, 0, &opcode, err);
    if (st != RD_OK)
        return st;
    o->offset = rd_fb_field_offset(&ot, O_OPCODE);
    if (opcode >= codes->n)
        return rd_errorf(err, RD_E_PARSE, "%s: operator #%u (offset %zu) uses operator code %u of %u", m->path, i,
                         o->offset, opcode, codes->n);
    int8_t dep = 0;
    int32_t code = 0, version = 1;
    if ((st = rd_fb_vec_table(codes, opcode, &ct, err)) != RD_OK ||
        (st = rd_fb_i8(&ct, OC_DEPRECATED_CODE, 0, &dep, err)) != RD_OK ||
        (st = rd_fb_i32(&ct, OC_CODE, 0, &code, err)) != RD_OK ||
        (st = rd_fb_i32(&ct, OC_VERSION, 1, &version, err)) != RD_OK ||
        (st = rd_fb_string(&ct, OC_CUSTOM, &o->custom, NULL, err)) != RD_OK)
        return st;
    o->code = code > dep ? code : dep; /* builtin_code supersedes the byte one from schema 3a on */
    o->version = version;
    char where[64];
    snprintf(where, sizeof where, "operator #%u inputs", i);
    size_t n = 0;
    if ((st = read_indices(m, &ot, O_INPUTS, true, &o->in, &n, where, err)) != RD_OK)
        return st;
    o->n_in = (int)n;
    snprintf(where, sizeof where, "operator #%u outputs", i);
    if ((st = read_indices(m, &ot, O_OUTPUTS, false, &o->out, &n, where, err)) != RD_OK)
        return st;
    o->n_out = (int)n;
    return rd_fb_union(&ot, O_OPT_TYPE, O_OPT, &o->opt_type, &o->opt, &o->has_opt, err);
}

rd_status tfl_model_parse(const void *buf, size_t len, const char *name, tfl_model *m, rd_error *err)
{
    memset(m, 0, sizeof *m);
    m->path = name;
    rd_fb_table root, sg;
    rd_fb_vec subgraphs, buffers, codes, tensors, ops;
    rd_status st = rd_fb_init(&m->fb, buf, len, name, 0, err);
    if (st == RD_OK)
        st = rd_fb_root(&m->fb, "TFL3", &root, err);
    if (st == RD_OK)
        st = rd_fb_u32(&root, M_VERSION, 0, &m->version, err);
    if (st == RD_OK && m->version != 3)
        st = rd_errorf(err, RD_E_UNSUPPORTED, "%s: TFLite schema version %u (rknn-diag reads version 3)", name,
                       m->version);
    if (st == RD_OK)
        st = rd_fb_vector(&root, M_SUBGRAPHS, RD_FB_REF, &subgraphs, err);
    if (st == RD_OK && subgraphs.n == 0)
        st = rd_errorf(err, RD_E_PARSE, "%s: the model has no subgraph", name);
    if (st == RD_OK)
        st = rd_fb_vector(&root, M_BUFFERS, RD_FB_REF, &buffers, err);
    if (st == RD_OK)
        st = rd_fb_vector(&root, M_OPCODES, RD_FB_REF, &codes, err);
    if (st == RD_OK)
        st = rd_fb_vec_table(&subgraphs, 0, &sg, err);
    if (st == RD_OK)
        st = rd_fb_vector(&sg, SG_TENSORS, RD_FB_REF, &tensors, err);
    if (st == RD_OK)
        st = rd_fb_vector(&sg, SG_OPERATORS, RD_FB_REF, &ops, err);
    if (st == RD_OK && (tensors.n > RD_FE_MAX_TENSORS || ops.n > RD_FE_MAX_TENSORS))
        st = rd_errorf(err, RD_E_LIMIT, "%s: %u tensors and %u operators (at most %u each)", name, tensors.n, ops.n,
                       RD_FE_MAX_TENSORS);
    if (st != RD_OK)
        return st;
    m->n_tensors = tensors.n;
    m->n_ops = ops.n;
    m->tensors = calloc(tensors.n ? tensors.n : 1, sizeof *m->tensors);
    m->ops = calloc(ops.n ? ops.n : 1, sizeof *m->ops);
    if (!m->tensors || !m->ops) {
        tfl_model_fini(m);
        return rd_errorf(err, RD_E_NOMEM, "%s: out of memory", name);
    }
    for (uint32_t i = 0; i < tensors.n && st == RD_OK; i++)
        st = read_tensor(m, &tensors, &buffers, i, err);
    if (st == RD_OK)
        st = read_indices(m, &sg, SG_INPUTS, false, &m->inputs, &m->n_inputs, "subgraph inputs", err);
    if (st == RD_OK)
        st = read_indices(m, &sg, SG_OUTPUTS, false, &m->outputs, &m->n_outputs, "subgraph outputs", err);
    for (uint32_t i = 0; i < ops.n && st == RD_OK; i++)
        st = read_op(m, &ops, &codes, i, err);
    if (st == RD_OK && m->n_outputs == 0)
        st = rd_errorf(err, RD_E_PARSE, "%s: subgraph 0 has no outputs", name);
    if (st != RD_OK)
        tfl_model_fini(m);
    return st;
}

void tfl_model_fini(tfl_model *m)
{
    for (size_t i = 0; m->tensors && i < m->n_tensors; i++) {
        free(m->tensors[i].scale);
        free(m->tensors[i].zero_point);
    }
    free(m->tensors);
    for (size_t i = 0; m->ops && i < m->n_ops; i++) {
        free(m->ops[i].in);
        free(m->ops[i].out);
    }
    free(m->ops);
    free(m->inputs);
    free(m->outputs);
    memset(m, 0, sizeof *m);
}
