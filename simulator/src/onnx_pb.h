/*
 * onnx_pb.h: the protobuf-c side of ONNX reading and writing, shared by the onnx_*.c files only.
 *
 * Everything that touches the generated Onnx__* structs lives behind this header; the rest of the
 * simulator sees rd_model, sim_node and rd_tensor only.
 */
#ifndef RD_SIM_ONNX_PB_H
#define RD_SIM_ONNX_PB_H

#include "internal.h"

#include "onnx.pb-c.h"

/* Deepest message nesting accepted. A model is Model>Graph>Node>Attribute>Tensor>Entry (6); nested
 * TypeProtos add a few more. protobuf-c 1.4 unpacks recursively without a limit, so hostile input
 * could otherwise exhaust the stack. */
#define SIM_PB_MAX_DEPTH 48

/* Bytes protobuf-c may allocate to unpack an input of n bytes: the unpacked structs of small messages
 * are larger than their wire form (an empty attribute is 2 wire bytes and ~250 unpacked). */
#define SIM_PB_BUDGET(n) ((n) * (size_t)16 + ((size_t)64 << 20))

/** A ProtobufCAllocator with a byte budget, so that unpacking hostile bytes is bounded. */
typedef struct sim_pb_budget {
    ProtobufCAllocator alloc; /* .allocator_data points back at this struct */
    size_t used;              /* bytes currently allocated (headers included) */
    size_t limit;
    bool exceeded;      /* an allocation was refused for the budget */
    bool out_of_memory; /* an allocation within the budget failed */
} sim_pb_budget;

void sim_pb_budget_init(sim_pb_budget *b, size_t limit);

/**
 * Unpacks one message of type desc from buf with a budget, after checking its nesting depth.
 * Messages do not name the input (the caller prefixes it). Fails with
 * RD_E_PARSE "not a valid ONNX protobuf (truncated or corrupt)", RD_E_LIMIT for size or depth,
 * RD_E_NOMEM when an allocation failed.
 * The result is freed with protobuf_c_message_free_unpacked(msg, &b->alloc).
 */
rd_status sim_pb_unpack(const ProtobufCMessageDescriptor *desc, const void *buf, size_t len, sim_pb_budget *b,
                        ProtobufCMessage **out, rd_error *err);

/**
 * Converts a TensorProto into out (which then owns its data). Messages carry no tensor name: the
 * caller prefixes its own context ("initializer 'w'"). base_dir (may be NULL) is where external
 * data files are looked up.
 */
rd_status sim_onnx_tensor(const Onnx__TensorProto *tp, const char *base_dir, rd_tensor *out, rd_error *err);

/** Converts one AttributeProto into out (zeroed by the caller, freed with sim_attr_fini). */
rd_status sim_onnx_attr(const Onnx__AttributeProto *ap, const char *base_dir, sim_attr *out, rd_error *err);

/** The tensor a Constant node defines (value, value_float(s), value_int(s)). */
rd_status sim_onnx_constant(const Onnx__NodeProto *np, const char *base_dir, rd_tensor *out, rd_error *err);

/** Copies a loaded node attribute onto a builder node (onnx_save.c). */
void sim_onnx_add_attr(rd_onnx_node *n, const sim_attr *a);

/** A short label for a node in messages: "node 'conv1' (#3, Conv)" or "node #3 (Conv)". */
const char *sim_node_label(const char *name, int index, const char *op_type, char *buf, size_t len);

#endif /* RD_SIM_ONNX_PB_H */
