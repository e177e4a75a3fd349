/*
 * onnx_attr.c: ONNX AttributeProto to sim_attr, and the tensor a Constant node defines.
 *
 * Graph-valued attributes (If, Loop, Scan bodies) are refused: the simulator has no control flow.
 */
#include "onnx_pb.h"

typedef Onnx__AttributeProto__AttributeType pb_attr_type;

/* Files written before IR 2 may leave `type` unset: guess it from the one field that is filled. */
static pb_attr_type attr_type(const Onnx__AttributeProto *ap)
{
    if (ap->has_type)
        return ap->type;
    if (ap->has_f)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
    if (ap->has_i)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    if (ap->has_s)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
    if (ap->t)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
    if (ap->g)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
    if (ap->n_floats)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
    if (ap->n_ints)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    if (ap->n_strings)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS;
    if (ap->n_graphs)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS;
    return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED;
}

static const char *attr_type_name(pb_attr_type t)
{
    const ProtobufCEnumValue *v =
        protobuf_c_enum_descriptor_get_value(&onnx__attribute_proto__attribute_type__descriptor, (int)t);
    return v ? v->name : "UNKNOWN";
}

/* A NUL-terminated copy of protobuf bytes (which may hold NULs of their own). */
static char *bytes_dup(const ProtobufCBinaryData *b)
{
    char *s = malloc(b->len + 1);
    if (!s)
        return NULL;
    if (b->len)
        memcpy(s, b->data, b->len);
    s[b->len] = '\0';
    return s;
}

rd_status sim_onnx_attr(const Onnx__AttributeProto *ap, const char *base_dir, sim_attr *out, rd_error *err)
{
    memset(out, 0, sizeof *out);
    if (!ap->name || !*ap->name)
        return rd_errorf(err, RD_E_PARSE, "an attribute has no name");
    out->name = sim_strdup(ap->name);
    if (!out->name)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    pb_attr_type t = attr_type(ap);
    switch (t) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT:
        out->type = SIM_ATTR_FLOAT;
        out->f = ap->f;
        return RD_OK;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT:
        out->type = SIM_ATTR_INT;
        out->i = ap->i;
        return RD_OK;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING:
        out->type = SIM_ATTR_STRING;
        out->s = bytes_dup(&ap->s);
        out->s_len = ap->s.len;
        return out->s ? RD_OK : rd_errorf(err, RD_E_NOMEM, "out of memory");
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: {
        out->type = SIM_ATTR_TENSOR;
        if (!ap->t)
            return rd_errorf(err, RD_E_PARSE, "attribute '%s' of type TENSOR holds no tensor", ap->name);
        rd_status st = sim_onnx_tensor(ap->t, base_dir, &out->t, err);
        if (st != RD_OK)
            rd_error_prefix(err, "attribute '%s'", ap->name);
        return st;
    }
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS:
        out->type = SIM_ATTR_FLOATS;
        out->floats = sim_malloc_array(ap->n_floats, sizeof(float));
        if (!out->floats)
            return rd_errorf(err, RD_E_NOMEM, "out of memory");
        if (ap->n_floats)
            memcpy(out->floats, ap->floats, ap->n_floats * sizeof(float));
        out->n_floats = ap->n_floats;
        return RD_OK;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS:
        out->type = SIM_ATTR_INTS;
        out->ints = sim_malloc_array(ap->n_ints, sizeof(int64_t));
        if (!out->ints)
            return rd_errorf(err, RD_E_NOMEM, "out of memory");
        if (ap->n_ints)
            memcpy(out->ints, ap->ints, ap->n_ints * sizeof(int64_t));
        out->n_ints = ap->n_ints;
        return RD_OK;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS:
        out->type = SIM_ATTR_STRINGS;
        out->strings = sim_calloc_array(ap->n_strings, sizeof(char *));
        if (!out->strings)
            return rd_errorf(err, RD_E_NOMEM, "out of memory");
        for (size_t i = 0; i < ap->n_strings; i++) {
            out->strings[i] = bytes_dup(&ap->strings[i]);
            if (!out->strings[i])
                return rd_errorf(err, RD_E_NOMEM, "out of memory");
            out->n_strings = i + 1;
        }
        return RD_OK;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS:
        return rd_errorf(err, RD_E_UNSUPPORTED, "attribute '%s' holds a subgraph (%s): control flow is not supported",
                         ap->name, attr_type_name(t));
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED:
        return rd_errorf(err, RD_E_PARSE, "attribute '%s' has no type and no value", ap->name);
    default:
        return rd_errorf(err, RD_E_UNSUPPORTED, "attribute '%s' has type %s (%d), which is not supported", ap->name,
                         attr_type_name(t), (int)t);
    }
}

/* A 1-D tensor (or a scalar when rank is 0) of n values copied from src. */
static rd_status small_tensor(rd_tensor *out, rd_dtype dt, int rank, const void *src, size_t n, rd_error *err)
{
    int64_t dims[1] = {(int64_t)n};
    rd_status st = rd_tensor_alloc(out, dt, rank, dims, err);
    if (st == RD_OK && out->data)
        memcpy(out->data, src, n * rd_dtype_get(dt)->size);
    return st;
}

rd_status sim_onnx_constant(const Onnx__NodeProto *np, const char *base_dir, rd_tensor *out, rd_error *err)
{
    memset(out, 0, sizeof *out);
    if (np->n_attribute != 1)
        return rd_errorf(err, RD_E_PARSE, "a Constant needs exactly one value attribute, found %zu", np->n_attribute);
    const Onnx__AttributeProto *ap = np->attribute[0];
    const char *name = ap->name ? ap->name : "";
    if (!strcmp(name, "value")) {
        if (!ap->t)
            return rd_errorf(err, RD_E_PARSE, "attribute 'value' holds no tensor");
        rd_status st = sim_onnx_tensor(ap->t, base_dir, out, err);
        if (st != RD_OK)
            rd_error_prefix(err, "attribute 'value'");
        return st;
    }
    if (!strcmp(name, "value_float"))
        return small_tensor(out, RD_DT_F32, 0, &ap->f, 1, err);
    if (!strcmp(name, "value_int"))
        return small_tensor(out, RD_DT_I64, 0, &ap->i, 1, err);
    if (!strcmp(name, "value_floats"))
        return small_tensor(out, RD_DT_F32, 1, ap->floats, ap->n_floats, err);
    if (!strcmp(name, "value_ints"))
        return small_tensor(out, RD_DT_I64, 1, ap->ints, ap->n_ints, err);
    if (!strcmp(name, "value_string") || !strcmp(name, "value_strings"))
        return rd_errorf(err, RD_E_UNSUPPORTED, "attribute '%s': unsupported dtype string", name);
    if (!strcmp(name, "sparse_value"))
        return rd_errorf(err, RD_E_UNSUPPORTED, "attribute 'sparse_value': sparse tensors are not supported");
    return rd_errorf(err, RD_E_PARSE, "unknown Constant attribute '%s'", name);
}
