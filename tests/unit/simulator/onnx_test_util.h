/*
 * onnx_test_util.h: helpers shared by the ONNX loader and writer tests: load a builder's model
 * through sim_onnx_parse, assert error codes and messages, and a tiny protobuf encoder for the
 * hand-made malformed inputs the builder cannot express.
 */
#ifndef RD_ONNX_TEST_UTIL_H
#define RD_ONNX_TEST_UTIL_H

#include "internal.h"
#include "rd_test.h"

#include <stdio.h>
#include <string.h>

/* Parses len bytes into m (zeroed here; free with sim_model_free_contents). */
static inline rd_status ot_parse(const void *buf, size_t len, const char *base_dir, rd_model *m, rd_error *err)
{
    memset(m, 0, sizeof *m);
    m->path = sim_strdup("test.onnx");
    m->base_dir = sim_strdup(base_dir);
    return sim_onnx_parse(m, buf, len, err);
}

/* Serialises the builder, destroys it and parses the bytes into m. */
static inline rd_status ot_load(rd_onnx_builder *b, const char *base_dir, rd_model *m, rd_error *err)
{
    void *buf = NULL;
    size_t len = 0;
    rd_status st = rd_onnx_builder_write(b, &buf, &len, err);
    rd_onnx_builder_destroy(b);
    if (st != RD_OK) {
        memset(m, 0, sizeof *m);
        return st;
    }
    st = ot_parse(buf, len, base_dir, m, err);
    free(buf);
    return st;
}

/* Serialises the builder, destroys it and loads the bytes as a user would (rd_model_load_mem: inference,
   folding); asserts both steps and prints the loader's message on failure. */
static inline rd_model *ot_model_load(rd_onnx_builder *b, const char *name)
{
    void *buf = NULL;
    size_t len = 0;
    rd_error err;
    rd_status st = rd_onnx_builder_write(b, &buf, &len, &err);
    CU_ASSERT_EQUAL(st, RD_OK);
    rd_onnx_builder_destroy(b);
    rd_model *m = NULL;
    if (st == RD_OK)
        st = rd_model_load_mem(buf, len, name, NULL, NULL, &m, &err);
    free(buf);
    if (st != RD_OK)
        fprintf(stderr, "\n  %s: %s\n", name, err.msg);
    CU_ASSERT_EQUAL(st, RD_OK);
    return m;
}

/* Asserts a status and that the message contains every given substring. */
#define OT_ASSERT_ERR(st, err, want, ...)                                                \
    do {                                                                                 \
        CU_ASSERT_EQUAL(st, want);                                                       \
        const char *subs_[] = {__VA_ARGS__};                                             \
        for (size_t k_ = 0; k_ < sizeof subs_ / sizeof subs_[0]; k_++) {                 \
            if (!strstr((err)->msg, subs_[k_])) {                                        \
                fprintf(stderr, "\n  message '%s' lacks '%s'\n", (err)->msg, subs_[k_]); \
                CU_FAIL("error message lacks an expected part");                         \
            }                                                                            \
        }                                                                                \
    } while (0)

/* A growable byte buffer with protobuf wire encoders. */
typedef struct ot_pb {
    uint8_t *d;
    size_t n, cap;
} ot_pb;

static inline void ot_put(ot_pb *p, const void *src, size_t len)
{
    if (p->n + len > p->cap) {
        p->cap = (p->n + len) * 2 + 64;
        p->d = realloc(p->d, p->cap);
    }
    memcpy(p->d + p->n, src, len);
    p->n += len;
}

static inline void ot_varint(ot_pb *p, uint64_t v)
{
    uint8_t b[10];
    size_t n = 0;
    do {
        b[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    ot_put(p, b, n);
}

/* field with wire type 0 (varint) */
static inline void ot_field_int(ot_pb *p, unsigned field, uint64_t v)
{
    ot_varint(p, (uint64_t)field << 3);
    ot_varint(p, v);
}

/* field with wire type 2 (length-delimited) */
static inline void ot_field_bytes(ot_pb *p, unsigned field, const void *data, size_t len)
{
    ot_varint(p, ((uint64_t)field << 3) | 2);
    ot_varint(p, len);
    if (len)
        ot_put(p, data, len);
}

static inline void ot_field_str(ot_pb *p, unsigned field, const char *s)
{
    ot_field_bytes(p, field, s, strlen(s));
}

/* Appends sub as a message field and frees it. */
static inline void ot_field_msg(ot_pb *p, unsigned field, ot_pb *sub)
{
    ot_field_bytes(p, field, sub->d, sub->n);
    free(sub->d);
    memset(sub, 0, sizeof *sub);
}

#endif
