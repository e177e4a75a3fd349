/*
 * onnx_write.c: the ONNX model builder. It fills protobuf-c structs directly, each field malloc'ed,
 * so that protobuf_c_message_free_unpacked(msg, NULL) releases the whole model; packing is
 * protobuf_c_message_pack. Errors are sticky in the builder (see simulator.h).
 */
#include "onnx_pb.h"

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

struct rd_onnx_builder {
    Onnx__ModelProto *model;
    Onnx__GraphProto *graph; /* model->graph */
    rd_error err;            /* the first failure; code RD_OK while none */
    rd_onnx_node **nodes;    /* handles, parallel to graph->node */
};

struct rd_onnx_node {
    rd_onnx_builder *b;
    Onnx__NodeProto *np;
};

/* Records the first failure and returns it (later failures keep the first message). */
static rd_status fail(rd_onnx_builder *b, rd_status code, const char *what)
{
    if (b && b->err.code == RD_OK)
        rd_errorf(&b->err, code, "onnx builder: %s", what);
    return b ? b->err.code : code;
}

static rd_status oom(rd_onnx_builder *b)
{
    return fail(b, RD_E_NOMEM, "out of memory");
}

/* Appends item to a protobuf-c repeated pointer field that only push grows. */
static bool push(void *arr_ptr, size_t *n, void *item)
{
    void ***arr = arr_ptr;
    if (!sim_grow_for(arr, *n, sizeof(void *)))
        return false;
    (*arr)[(*n)++] = item;
    return true;
}

static char *dup_or_empty(const char *s)
{
    return sim_strdup(s ? s : "");
}

rd_onnx_builder *rd_onnx_builder_create(int ir_version, int opset)
{
    rd_onnx_builder *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->model = malloc(sizeof *b->model);
    b->graph = malloc(sizeof *b->graph);
    if (!b->model || !b->graph) {
        free(b->model);
        free(b->graph);
        free(b);
        return NULL;
    }
    onnx__model_proto__init(b->model);
    onnx__graph_proto__init(b->graph);
    b->model->graph = b->graph;
    b->model->has_ir_version = true;
    b->model->ir_version = ir_version;
    rd_onnx_set_producer(b, "rknn-diag", rd_version());
    rd_onnx_set_graph_name(b, "main");
    if (opset > 0)
        rd_onnx_add_opset(b, "", opset);
    if (b->err.code != RD_OK) {
        rd_onnx_builder_destroy(b);
        return NULL;
    }
    return b;
}

void rd_onnx_builder_destroy(rd_onnx_builder *b)
{
    if (!b)
        return;
    for (size_t i = 0; i < b->graph->n_node; i++)
        free(b->nodes[i]);
    free(b->nodes);
    protobuf_c_message_free_unpacked(&b->model->base, NULL);
    free(b);
}

/* Replaces *field by a copy of s. */
static rd_status set_string(rd_onnx_builder *b, char **field, const char *s)
{
    char *d = dup_or_empty(s);
    if (!d)
        return oom(b);
    free(*field);
    *field = d;
    return RD_OK;
}

rd_status rd_onnx_set_producer(rd_onnx_builder *b, const char *name, const char *version)
{
    if (!b)
        return RD_E_INVAL;
    rd_status st = set_string(b, &b->model->producer_name, name);
    return st != RD_OK ? st : set_string(b, &b->model->producer_version, version);
}

rd_status rd_onnx_set_graph_name(rd_onnx_builder *b, const char *name)
{
    return b ? set_string(b, &b->graph->name, name) : RD_E_INVAL;
}

rd_status rd_onnx_add_opset(rd_onnx_builder *b, const char *domain, int version)
{
    if (!b)
        return RD_E_INVAL;
    Onnx__OperatorSetIdProto *op = malloc(sizeof *op);
    if (!op)
        return oom(b);
    onnx__operator_set_id_proto__init(op);
    op->has_version = true;
    op->version = version;
    if (!(op->domain = dup_or_empty(domain)) || !push(&b->model->opset_import, &b->model->n_opset_import, op)) {
        protobuf_c_message_free_unpacked(&op->base, NULL);
        return oom(b);
    }
    return RD_OK;
}

static Onnx__ValueInfoProto *make_value_info(const char *name, rd_dtype dtype, int rank, const int64_t *dims,
                                             const char *const *dim_params)
{
    Onnx__ValueInfoProto *vi = malloc(sizeof *vi);
    if (!vi)
        return NULL;
    onnx__value_info_proto__init(vi);
    Onnx__TypeProto *tp = vi->type = malloc(sizeof *tp);
    if (tp)
        onnx__type_proto__init(tp);
    vi->name = sim_strdup(name);
    if (!vi->name || !tp)
        goto fail;
    Onnx__TypeProto__Tensor *tt = malloc(sizeof *tt);
    if (!tt)
        goto fail;
    onnx__type_proto__tensor__init(tt);
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    tt->has_elem_type = true;
    tt->elem_type = (int32_t)dtype;
    if (rank < 0)
        return vi;
    if (!(tt->shape = malloc(sizeof *tt->shape)))
        goto fail;
    onnx__tensor_shape_proto__init(tt->shape);
    for (int i = 0; i < rank; i++) {
        Onnx__TensorShapeProto__Dimension *d = malloc(sizeof *d);
        if (!d)
            goto fail;
        onnx__tensor_shape_proto__dimension__init(d);
        if (!push(&tt->shape->dim, &tt->shape->n_dim, d)) {
            free(d);
            goto fail;
        }
        if (dim_params && dim_params[i]) {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
            if (!(d->dim_param = sim_strdup(dim_params[i])))
                goto fail;
        } else if (dims[i] >= 0) {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            d->dim_value = dims[i];
        }
    }
    return vi;
fail:
    protobuf_c_message_free_unpacked(&vi->base, NULL);
    return NULL;
}

static rd_status add_value_info(rd_onnx_builder *b, Onnx__ValueInfoProto ***arr, size_t *n, const char *name,
                                rd_dtype dtype, int rank, const int64_t *dims, const char *const *dim_params)
{
    if (!b)
        return RD_E_INVAL;
    if (!name || rank < -1 || (rank > 0 && !dims && !dim_params))
        return fail(b, RD_E_INVAL, "value info needs a name, a rank >= -1 and dims");
    if (rank > 0 && !dims) {
        for (int i = 0; i < rank; i++)
            if (!dim_params[i])
                return fail(b, RD_E_INVAL, "value info dims are NULL but a dim has no name");
    }
    static const int64_t no_dims[1] = {-1};
    Onnx__ValueInfoProto *vi = make_value_info(name, dtype, rank, dims ? dims : no_dims, dim_params);
    if (!vi)
        return oom(b);
    if (!push(arr, n, vi)) {
        protobuf_c_message_free_unpacked(&vi->base, NULL);
        return oom(b);
    }
    return RD_OK;
}

rd_status rd_onnx_add_input(rd_onnx_builder *b, const char *name, rd_dtype dtype, int rank, const int64_t *dims,
                            const char *const *dim_params)
{
    return add_value_info(b, b ? &b->graph->input : NULL, b ? &b->graph->n_input : NULL, name, dtype, rank, dims,
                          dim_params);
}

rd_status rd_onnx_add_output(rd_onnx_builder *b, const char *name, rd_dtype dtype, int rank, const int64_t *dims,
                             const char *const *dim_params)
{
    return add_value_info(b, b ? &b->graph->output : NULL, b ? &b->graph->n_output : NULL, name, dtype, rank, dims,
                          dim_params);
}

rd_status rd_onnx_add_value_info(rd_onnx_builder *b, const char *name, rd_dtype dtype, int rank, const int64_t *dims,
                                 const char *const *dim_params)
{
    return add_value_info(b, b ? &b->graph->value_info : NULL, b ? &b->graph->n_value_info : NULL, name, dtype, rank,
                          dims, dim_params);
}

/* A TensorProto with name, data_type and dims set and no data; NULL when out of memory. */
static Onnx__TensorProto *tensor_head(const char *name, int data_type, int rank, const int64_t *dims)
{
    Onnx__TensorProto *tp = malloc(sizeof *tp);
    if (!tp)
        return NULL;
    onnx__tensor_proto__init(tp);
    tp->has_data_type = true;
    tp->data_type = data_type;
    tp->name = name ? sim_strdup(name) : NULL;
    tp->dims = sim_malloc_array(rank > 0 ? (size_t)rank : 0, sizeof(int64_t));
    if ((name && !tp->name) || !tp->dims) {
        protobuf_c_message_free_unpacked(&tp->base, NULL);
        return NULL;
    }
    for (int i = 0; i < rank; i++)
        tp->dims[i] = dims[i];
    tp->n_dims = rank > 0 ? (size_t)rank : 0;
    return tp;
}

/* Fills the typed field the spec assigns to t's dtype; false when out of memory. */
static bool fill_typed(Onnx__TensorProto *tp, const rd_tensor *t)
{
    size_t n = (size_t)rd_tensor_numel(t);
    switch (t->dtype) {
    case RD_DT_F32:
        if (!(tp->float_data = sim_malloc_array(n, sizeof(float))))
            return false;
        tp->n_float_data = n;
        break;
    case RD_DT_F64:
        if (!(tp->double_data = sim_malloc_array(n, sizeof(double))))
            return false;
        tp->n_double_data = n;
        break;
    case RD_DT_I64:
        if (!(tp->int64_data = sim_malloc_array(n, sizeof(int64_t))))
            return false;
        tp->n_int64_data = n;
        break;
    case RD_DT_U32:
    case RD_DT_U64:
        if (!(tp->uint64_data = sim_malloc_array(n, sizeof(uint64_t))))
            return false;
        tp->n_uint64_data = n;
        break;
    default:
        if (!(tp->int32_data = sim_malloc_array(n, sizeof(int32_t))))
            return false;
        tp->n_int32_data = n;
        break;
    }
    for (size_t i = 0; i < n; i++) {
        switch (t->dtype) {
        case RD_DT_F32:
            tp->float_data[i] = ((const float *)t->data)[i];
            break;
        case RD_DT_F64:
            tp->double_data[i] = ((const double *)t->data)[i];
            break;
        case RD_DT_I64:
            tp->int64_data[i] = ((const int64_t *)t->data)[i];
            break;
        case RD_DT_U64:
            tp->uint64_data[i] = ((const uint64_t *)t->data)[i];
            break;
        case RD_DT_U32:
            tp->uint64_data[i] = ((const uint32_t *)t->data)[i];
            break;
        case RD_DT_I32:
            tp->int32_data[i] = ((const int32_t *)t->data)[i];
            break;
        case RD_DT_I16:
            tp->int32_data[i] = ((const int16_t *)t->data)[i];
            break;
        case RD_DT_I8:
            tp->int32_data[i] = ((const int8_t *)t->data)[i];
            break;
        case RD_DT_U8:
        case RD_DT_BOOL:
            tp->int32_data[i] = ((const uint8_t *)t->data)[i];
            break;
        default:
            tp->int32_data[i] = ((const uint16_t *)t->data)[i];
            break; /* u16, f16 and bf16 bits */
        }
    }
    return true;
}

/* A TensorProto copy of t; *st says why when NULL is returned. */
static Onnx__TensorProto *make_tensor(const char *name, const rd_tensor *t, rd_onnx_storage storage, rd_status *st)
{
    const rd_dtype_info *info = rd_dtype_get(t->dtype);
    *st = RD_E_UNSUPPORTED;
    if (!info->supported || t->rank < 0 || t->rank > RD_MAX_RANK)
        return NULL;
    *st = RD_E_NOMEM;
    Onnx__TensorProto *tp = tensor_head(name, (int)t->dtype, t->rank, t->dims);
    if (!tp)
        return NULL;
    size_t bytes = rd_tensor_nbytes(t);
    if (storage == RD_ONNX_TYPED) {
        if (!fill_typed(tp, t))
            goto fail;
    } else {
        tp->has_raw_data = true;
        tp->raw_data.len = bytes;
        if (!(tp->raw_data.data = malloc(bytes ? bytes : 1)))
            goto fail;
        if (bytes)
            memcpy(tp->raw_data.data, t->data, bytes);
    }
    *st = RD_OK;
    return tp;
fail:
    protobuf_c_message_free_unpacked(&tp->base, NULL);
    return NULL;
}

static rd_status push_initializer(rd_onnx_builder *b, Onnx__TensorProto *tp)
{
    if (!push(&b->graph->initializer, &b->graph->n_initializer, tp)) {
        protobuf_c_message_free_unpacked(&tp->base, NULL);
        return oom(b);
    }
    return RD_OK;
}

rd_status rd_onnx_add_initializer(rd_onnx_builder *b, const char *name, const rd_tensor *t, rd_onnx_storage storage)
{
    if (!b)
        return RD_E_INVAL;
    if (!name || !t)
        return fail(b, RD_E_INVAL, "an initializer needs a name and a tensor");
    rd_status st;
    Onnx__TensorProto *tp = make_tensor(name, t, storage, &st);
    if (!tp)
        return st == RD_E_NOMEM ? oom(b) : fail(b, st, "initializer dtype or rank cannot be written");
    return push_initializer(b, tp);
}

rd_status rd_onnx_add_initializer_raw(rd_onnx_builder *b, const char *name, int data_type, int rank,
                                      const int64_t *dims, const void *data, size_t len)
{
    if (!b)
        return RD_E_INVAL;
    if (!name || rank < 0 || (rank && !dims) || (len && !data))
        return fail(b, RD_E_INVAL, "a raw initializer needs a name, dims and data");
    Onnx__TensorProto *tp = tensor_head(name, data_type, rank, dims);
    if (!tp)
        return oom(b);
    tp->has_raw_data = true;
    tp->raw_data.len = len;
    if (!(tp->raw_data.data = malloc(len ? len : 1))) {
        protobuf_c_message_free_unpacked(&tp->base, NULL);
        return oom(b);
    }
    if (len)
        memcpy(tp->raw_data.data, data, len);
    return push_initializer(b, tp);
}

/* Appends a key/value entry to the tensor's external_data. */
static bool add_entry(Onnx__TensorProto *tp, const char *key, const char *value)
{
    Onnx__StringStringEntryProto *e = malloc(sizeof *e);
    if (!e)
        return false;
    onnx__string_string_entry_proto__init(e);
    e->key = sim_strdup(key);
    e->value = sim_strdup(value);
    if (!e->key || !e->value || !push(&tp->external_data, &tp->n_external_data, e)) {
        protobuf_c_message_free_unpacked(&e->base, NULL);
        return false;
    }
    return true;
}

rd_status rd_onnx_add_initializer_external(rd_onnx_builder *b, const char *name, rd_dtype dtype, int rank,
                                           const int64_t *dims, const char *location, int64_t offset, int64_t length)
{
    if (!b)
        return RD_E_INVAL;
    if (!name || !location || rank < 0 || (rank && !dims))
        return fail(b, RD_E_INVAL, "an external initializer needs a name, dims and a location");
    Onnx__TensorProto *tp = tensor_head(name, (int)dtype, rank, dims);
    if (!tp)
        return oom(b);
    tp->has_data_location = true;
    tp->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    char num[32];
    bool ok = add_entry(tp, "location", location);
    if (ok && offset >= 0) {
        snprintf(num, sizeof num, "%lld", (long long)offset);
        ok = add_entry(tp, "offset", num);
    }
    if (ok && length >= 0) {
        snprintf(num, sizeof num, "%lld", (long long)length);
        ok = add_entry(tp, "length", num);
    }
    if (!ok) {
        protobuf_c_message_free_unpacked(&tp->base, NULL);
        return oom(b);
    }
    return push_initializer(b, tp);
}

/* Copies names into a new array of strings, NULL entries as "". */
static bool dup_names(const char *const *names, int n, char ***out, size_t *out_n)
{
    *out = sim_calloc_array(n > 0 ? (size_t)n : 0, sizeof(char *));
    if (!*out)
        return false;
    for (int i = 0; i < n; i++) {
        if (!((*out)[i] = dup_or_empty(names[i])))
            return false;
        *out_n = (size_t)i + 1;
    }
    return true;
}

rd_onnx_node *rd_onnx_add_node(rd_onnx_builder *b, const char *op_type, const char *name, const char *const *inputs,
                               int n_inputs, const char *const *outputs, int n_outputs)
{
    if (!b)
        return NULL;
    if (!op_type || n_inputs < 0 || n_outputs < 0 || (n_inputs && !inputs) || (n_outputs && !outputs)) {
        fail(b, RD_E_INVAL, "a node needs an op_type and its input and output name arrays");
        return NULL;
    }
    rd_onnx_node *h = malloc(sizeof *h);
    Onnx__NodeProto *np = malloc(sizeof *np);
    if (!h || !np) {
        free(h);
        free(np);
        oom(b);
        return NULL;
    }
    onnx__node_proto__init(np);
    h->b = b;
    h->np = np;
    np->op_type = sim_strdup(op_type);
    np->name = dup_or_empty(name);
    bool handles = sim_grow_for(&b->nodes, b->graph->n_node, sizeof *b->nodes); /* parallel to graph->node */
    if (!np->op_type || !np->name || !dup_names(inputs, n_inputs, &np->input, &np->n_input) ||
        !dup_names(outputs, n_outputs, &np->output, &np->n_output) || !handles ||
        !push(&b->graph->node, &b->graph->n_node, np)) {
        protobuf_c_message_free_unpacked(&np->base, NULL);
        free(h);
        oom(b);
        return NULL;
    }
    b->nodes[b->graph->n_node - 1] = h;
    return h;
}

rd_status rd_onnx_node_set_domain(rd_onnx_node *n, const char *domain)
{
    return n ? set_string(n->b, &n->np->domain, domain) : RD_E_INVAL;
}

/* A new attribute of the given type appended to the node; NULL (sticky error) on failure. */
static Onnx__AttributeProto *new_attr(rd_onnx_node *n, const char *name, Onnx__AttributeProto__AttributeType type)
{
    if (!n)
        return NULL;
    if (!name) {
        fail(n->b, RD_E_INVAL, "an attribute needs a name");
        return NULL;
    }
    Onnx__AttributeProto *ap = malloc(sizeof *ap);
    if (!ap) {
        oom(n->b);
        return NULL;
    }
    onnx__attribute_proto__init(ap);
    ap->has_type = true;
    ap->type = type;
    if (!(ap->name = sim_strdup(name)) || !push(&n->np->attribute, &n->np->n_attribute, ap)) {
        protobuf_c_message_free_unpacked(&ap->base, NULL);
        oom(n->b);
        return NULL;
    }
    return ap;
}

static rd_status node_status(const rd_onnx_node *n)
{
    return n ? n->b->err.code : RD_E_INVAL;
}

rd_status rd_onnx_attr_int(rd_onnx_node *n, const char *name, int64_t v)
{
    Onnx__AttributeProto *ap = new_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    if (ap) {
        ap->has_i = true;
        ap->i = v;
    }
    return node_status(n);
}

rd_status rd_onnx_attr_float(rd_onnx_node *n, const char *name, float v)
{
    Onnx__AttributeProto *ap = new_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
    if (ap) {
        ap->has_f = true;
        ap->f = v;
    }
    return node_status(n);
}

/* Copies a C string into protobuf bytes; false when out of memory. */
static bool set_bytes(ProtobufCBinaryData *bd, const char *s)
{
    size_t len = strlen(s);
    bd->data = malloc(len ? len : 1);
    if (!bd->data)
        return false;
    memcpy(bd->data, s, len);
    bd->len = len;
    return true;
}

rd_status rd_onnx_attr_string(rd_onnx_node *n, const char *name, const char *v)
{
    Onnx__AttributeProto *ap = new_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
    if (ap) {
        ap->has_s = true;
        if (!set_bytes(&ap->s, v ? v : ""))
            return oom(n->b);
    }
    return node_status(n);
}

rd_status rd_onnx_attr_ints(rd_onnx_node *n, const char *name, const int64_t *v, size_t count)
{
    Onnx__AttributeProto *ap = new_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    if (ap) {
        if (!(ap->ints = sim_malloc_array(count, sizeof *ap->ints)))
            return oom(n->b);
        if (count)
            memcpy(ap->ints, v, count * sizeof *ap->ints);
        ap->n_ints = count;
    }
    return node_status(n);
}

rd_status rd_onnx_attr_floats(rd_onnx_node *n, const char *name, const float *v, size_t count)
{
    Onnx__AttributeProto *ap = new_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS);
    if (ap) {
        if (!(ap->floats = sim_malloc_array(count, sizeof *ap->floats)))
            return oom(n->b);
        if (count)
            memcpy(ap->floats, v, count * sizeof *ap->floats);
        ap->n_floats = count;
    }
    return node_status(n);
}

rd_status rd_onnx_attr_strings(rd_onnx_node *n, const char *name, const char *const *v, size_t count)
{
    Onnx__AttributeProto *ap = new_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS);
    if (ap) {
        if (!(ap->strings = sim_calloc_array(count, sizeof *ap->strings)))
            return oom(n->b);
        for (size_t i = 0; i < count; i++) {
            if (!set_bytes(&ap->strings[i], v[i] ? v[i] : ""))
                return oom(n->b);
            ap->n_strings = i + 1;
        }
    }
    return node_status(n);
}

rd_status rd_onnx_attr_tensor(rd_onnx_node *n, const char *name, const rd_tensor *t, rd_onnx_storage storage)
{
    if (n && !t)
        return fail(n->b, RD_E_INVAL, "a tensor attribute needs a tensor");
    Onnx__AttributeProto *ap = new_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
    if (ap) {
        rd_status st;
        if (!(ap->t = make_tensor(NULL, t, storage, &st)))
            return st == RD_E_NOMEM ? oom(n->b) : fail(n->b, st, "attribute tensor dtype cannot be written");
    }
    return node_status(n);
}

rd_status rd_onnx_builder_status(const rd_onnx_builder *b, rd_error *err)
{
    if (!b)
        return rd_errorf(err, RD_E_INVAL, "onnx builder: NULL (creation failed)");
    if (b->err.code == RD_OK) {
        rd_error_clear(err);
        return RD_OK;
    }
    return rd_errorf(err, b->err.code, "%s", b->err.msg);
}

/* Packs any message into a new buffer. */
static rd_status pack_message(const ProtobufCMessage *msg, void **out_buf, size_t *out_len, rd_error *err)
{
    size_t len = protobuf_c_message_get_packed_size(msg);
    if (len > RD_MAX_MODEL_BYTES)
        return rd_errorf(err, RD_E_LIMIT, "the serialised model would have %zu bytes, more than %llu", len,
                         (unsigned long long)RD_MAX_MODEL_BYTES);
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf)
        return rd_errorf(err, RD_E_NOMEM, "cannot allocate %zu bytes for the serialised model", len);
    protobuf_c_message_pack(msg, buf);
    *out_buf = buf;
    *out_len = len;
    return RD_OK;
}

rd_status rd_onnx_builder_write(const rd_onnx_builder *b, void **out_buf, size_t *out_len, rd_error *err)
{
    rd_status st = rd_onnx_builder_status(b, err);
    return st != RD_OK ? st : pack_message(&b->model->base, out_buf, out_len, err);
}

rd_status rd_onnx_builder_save(const rd_onnx_builder *b, const char *path, rd_error *err)
{
    void *buf = NULL;
    size_t len = 0;
    rd_status st = rd_onnx_builder_write(b, &buf, &len, err);
    return sim_save_written(st, path, buf, len, false, err);
}

rd_status rd_tensorproto_write(const rd_tensor *t, const char *name, void **out_buf, size_t *out_len, rd_error *err)
{
    rd_status st;
    Onnx__TensorProto *tp = make_tensor(name ? name : "", t, RD_ONNX_RAW, &st);
    if (!tp)
        return rd_errorf(err, st, "tensor '%s': %s", name ? name : "",
                         st == RD_E_NOMEM ? "out of memory" : "dtype or rank cannot be written");
    st = pack_message(&tp->base, out_buf, out_len, err);
    protobuf_c_message_free_unpacked(&tp->base, NULL);
    return st;
}

rd_status rd_tensorproto_save(const char *path, const rd_tensor *t, const char *name, rd_error *err)
{
    void *buf = NULL;
    size_t len = 0;
    rd_status st = rd_tensorproto_write(t, name, &buf, &len, err);
    return sim_save_written(st, path, buf, len, false, err);
}
