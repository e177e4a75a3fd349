/*
 * onnx_pb.c: guarded protobuf-c unpacking (a byte budget for allocations, a nesting depth check run
 * on the wire bytes before protobuf-c recurses).
 */
#include "onnx_pb.h"

#include <stdio.h>

/* Each block carries its size in a header so that free can give the budget back. */
typedef union budget_header {
    size_t size;
    max_align_t align;
} budget_header;

static void *budget_alloc(void *data, size_t size)
{
    sim_pb_budget *b = data;
    size_t total = size + sizeof(budget_header);
    if (total < size || total > b->limit - b->used) {
        b->exceeded = true;
        return NULL;
    }
    budget_header *h = malloc(total);
    if (!h) {
        b->out_of_memory = true; /* protobuf-c then fails as if the input were corrupt */
        return NULL;
    }
    h->size = total;
    b->used += total;
    return h + 1;
}

static void budget_free(void *data, void *ptr)
{
    sim_pb_budget *b = data;
    if (!ptr)
        return;
    budget_header *h = (budget_header *)ptr - 1;
    b->used -= h->size;
    free(h);
}

void sim_pb_budget_init(sim_pb_budget *b, size_t limit)
{
    memset(b, 0, sizeof *b);
    b->alloc.alloc = budget_alloc;
    b->alloc.free = budget_free;
    b->alloc.allocator_data = b;
    b->limit = limit;
}

/* Reads a varint at *pos; false when truncated or longer than 10 bytes. */
static bool read_varint(const uint8_t *p, size_t len, size_t *pos, uint64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 70 && *pos < len; shift += 7) {
        uint8_t byte = p[(*pos)++];
        v |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            *out = v;
            return true;
        }
    }
    return false;
}

/*
 * Walks the wire format and descends only into fields the descriptor declares as messages. Malformed
 * bytes end the walk quietly: protobuf-c then rejects them with its own checks. Each byte is parsed
 * once per level it is nested in, and the levels are bounded, so this is linear in len.
 */
static rd_status check_depth(const ProtobufCMessageDescriptor *desc, const uint8_t *p, size_t len, int depth,
                             rd_error *err)
{
    if (depth > SIM_PB_MAX_DEPTH)
        return rd_errorf(err, RD_E_LIMIT, "messages nest deeper than %d levels", SIM_PB_MAX_DEPTH);
    size_t pos = 0;
    while (pos < len) {
        uint64_t key, v;
        if (!read_varint(p, len, &pos, &key))
            return RD_OK;
        switch (key & 7) {
        case 0:
            if (!read_varint(p, len, &pos, &v))
                return RD_OK;
            break;
        case 1:
            if (len - pos < 8)
                return RD_OK;
            pos += 8;
            break;
        case 5:
            if (len - pos < 4)
                return RD_OK;
            pos += 4;
            break;
        case 2: {
            if (!read_varint(p, len, &pos, &v) || v > len - pos)
                return RD_OK;
            uint64_t number = key >> 3;
            const ProtobufCFieldDescriptor *f =
                number <= UINT32_MAX ? protobuf_c_message_descriptor_get_field(desc, (unsigned)number) : NULL;
            if (f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
                rd_status st = check_depth(f->descriptor, p + pos, (size_t)v, depth + 1, err);
                if (st != RD_OK)
                    return st;
            }
            pos += (size_t)v;
            break;
        }
        default:
            return RD_OK; /* groups and invalid wire types: protobuf-c refuses them */
        }
    }
    return RD_OK;
}

static rd_status unpack_as(const ProtobufCMessageDescriptor *desc, const void *buf, size_t len, sim_pb_budget *b,
                           const char *what, ProtobufCMessage **out, rd_error *err)
{
    *out = NULL;
    if (len > RD_MAX_MODEL_BYTES)
        return rd_errorf(err, RD_E_LIMIT, "%zu bytes exceed the %llu-byte limit", len,
                         (unsigned long long)RD_MAX_MODEL_BYTES);
    rd_status st = check_depth(desc, buf, len, 1, err);
    if (st != RD_OK)
        return st;
    *out = protobuf_c_message_unpack(desc, &b->alloc, len, buf);
    if (*out)
        return RD_OK;
    if (b->out_of_memory)
        return rd_errorf(err, RD_E_NOMEM, "out of memory while unpacking the protobuf (%zu bytes)", len);
    if (b->exceeded)
        return rd_errorf(err, RD_E_LIMIT, "unpacking needs more than %zu bytes of memory (input of %zu bytes)",
                         b->limit, len);
    return rd_errorf(err, RD_E_PARSE, "not a valid %s protobuf (truncated or corrupt)", what);
}

rd_status sim_pb_unpack(const ProtobufCMessageDescriptor *desc, const void *buf, size_t len, sim_pb_budget *b,
                        ProtobufCMessage **out, rd_error *err)
{
    return unpack_as(desc, buf, len, b, "ONNX", out, err);
}

/* A message unpacked by rd_pb_unpack with the budget that allocated it (freed together). */
struct rd_pb_msg {
    sim_pb_budget budget;
    ProtobufCMessage *msg;
};

rd_status rd_pb_unpack(const struct ProtobufCMessageDescriptor *desc, const void *buf, size_t len, const char *what,
                       rd_pb_msg **out, rd_error *err)
{
    *out = NULL;
    rd_pb_msg *m = calloc(1, sizeof *m);
    if (!m)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    sim_pb_budget_init(&m->budget, SIM_PB_BUDGET(len));
    rd_status st = unpack_as(desc, len ? buf : "", len, &m->budget, what, &m->msg, err);
    if (st != RD_OK) {
        free(m);
        return st;
    }
    *out = m;
    return RD_OK;
}

const struct ProtobufCMessage *rd_pb_msg_get(const rd_pb_msg *m)
{
    return m ? m->msg : NULL;
}

void rd_pb_msg_free(rd_pb_msg *m)
{
    if (!m)
        return;
    protobuf_c_message_free_unpacked(m->msg, &m->budget.alloc);
    free(m);
}

const char *sim_node_label(const char *name, int index, const char *op_type, char *buf, size_t len)
{
    if (name && *name)
        snprintf(buf, len, "node '%s' (#%d, %s)", name, index, op_type ? op_type : "?");
    else
        snprintf(buf, len, "node #%d (%s)", index, op_type ? op_type : "?");
    return buf;
}
