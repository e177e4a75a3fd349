/*
 * rknn_diag/flatbuf.h: a small bounds-checked FlatBuffers reader (and a minimal builder for tests).
 *
 * Schema-less: the caller names fields by slot (the n-th vtable entry, 0-based) and says what type it
 * expects. Every offset, length and alignment is checked against the buffer before it is followed; table
 * nesting depth and vector lengths are bounded (rd_fb.max_depth, rd_fb.max_elems); nothing is allocated.
 * Errors name the byte offset (in the file: rd_fb.base is added) and what was expected there.
 *
 *     rd_fb fb;
 *     rd_fb_table root, t;
 *     rd_fb_vec v;
 *     if (rd_fb_init(&fb, buf, len, "model.rknn", 64, &err) != RD_OK ||
 *         rd_fb_root(&fb, "RKNN", &root, &err) != RD_OK)
 *         return err.code;
 *     const char *s; size_t n;
 *     rd_fb_string(&root, 1, &s, &n, &err);                    // s == NULL when the field is absent
 *     rd_fb_vector(&root, 2, RD_FB_REF, &v, &err);              // a vector of tables
 *     for (uint32_t i = 0; i < v.n; i++)
 *         rd_fb_vec_table(&v, i, &t, &err);
 *
 * Conventions: functions return rd_status and fill rd_error (may be NULL); RD_E_PARSE for a malformed
 * buffer, RD_E_LIMIT when a bound is passed. An absent field is not an error: scalars get the default,
 * strings NULL, vectors n == 0, tables present == false. Handles are plain values that point into the
 * caller's buffer; they stay valid as long as the buffer does. No global state; little-endian data is
 * read with memcpy, so the buffer needs no particular alignment in memory.
 *
 * Nothing here knows a schema (RKNN, TFLite): that is the callers' business.
 */
#ifndef RKNN_DIAG_FLATBUF_H
#define RKNN_DIAG_FLATBUF_H

#include "rknn_diag/simulator.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Default bounds (rd_fb_init sets them; callers and fuzzers may lower them afterwards). */
#define RD_FB_DEFAULT_MAX_DEPTH 64u
#define RD_FB_DEFAULT_MAX_ELEMS (64u << 20)

/** A buffer being read. Fill with rd_fb_init. */
typedef struct rd_fb {
    const uint8_t *buf;
    size_t len;         /* bytes; at most UINT32_MAX (FlatBuffers offsets are 32-bit) */
    const char *what;   /* names the buffer in messages (a file name); never NULL after init */
    size_t base;        /* offset of buf[0] in the file, added to every offset a message names */
    unsigned max_depth; /* deepest table nesting followed (the root is depth 0) */
    uint32_t max_elems; /* longest vector accepted (elements) */
} rd_fb;

/** A table: position of its start and its vtable, both checked. */
typedef struct rd_fb_table {
    const rd_fb *fb;
    size_t pos;       /* table start (its soffset to the vtable) */
    size_t vt;        /* vtable start */
    uint16_t vt_len;  /* vtable bytes (4 + 2 per slot) */
    uint16_t obj_len; /* inline bytes of the table */
    unsigned depth;   /* 0 for the root */
} rd_fb_table;

/** Element kinds of a vector: the element size, or RD_FB_REF for offsets to tables or strings. */
enum { RD_FB_REF = 0 };

/** A vector: its elements start at pos (after the u32 length). */
typedef struct rd_fb_vec {
    const rd_fb *fb;
    size_t pos;       /* first element */
    uint32_t n;       /* element count (0 when the field is absent) */
    size_t elem_size; /* 1, 2, 4 or 8; 4 for RD_FB_REF */
    bool refs;        /* elements are offsets to tables or strings */
    unsigned depth;   /* of the table that holds the vector */
} rd_fb_vec;

/**
 * Starts reading buf (len bytes; not copied). what names it in messages, base is its offset in the file
 * (0 for a whole file). RD_E_PARSE when len < 8 (root offset and identifier), RD_E_LIMIT above 4 GiB.
 */
rd_status rd_fb_init(rd_fb *fb, const void *buf, size_t len, const char *what, size_t base, rd_error *err);

/** True when bytes 4..7 are the 4-character file identifier ident. */
bool rd_fb_has_identifier(const rd_fb *fb, const char *ident);

/**
 * The root table. ident (4 characters, or NULL for none) is checked first: RD_E_PARSE naming what was
 * found. The root offset, the table and its vtable are checked as every table is.
 */
rd_status rd_fb_root(const rd_fb *fb, const char *ident, rd_fb_table *out, rd_error *err);

/** True when slot is present in t (a vtable entry exists and is not 0). */
bool rd_fb_has(const rd_fb_table *t, unsigned slot);

/** Number of slots t's vtable has room for (present or not). */
unsigned rd_fb_slot_count(const rd_fb_table *t);

/**
 * Schema-less help: the inline bytes from slot's field to the next field of t (or the table end), i.e. an
 * upper bound of its width including padding; 0 when absent. For reading tables whose schema is guessed.
 */
size_t rd_fb_field_span(const rd_fb_table *t, unsigned slot);

/** Byte offset (in the file) of slot's field in t, or of the table when slot is absent: for messages. */
size_t rd_fb_field_offset(const rd_fb_table *t, unsigned slot);

/*
 * Scalars: def when absent. RD_E_PARSE when the field lies outside the table or the buffer, or is not
 * aligned to its size.
 */
rd_status rd_fb_u8(const rd_fb_table *t, unsigned slot, uint8_t def, uint8_t *out, rd_error *err);
rd_status rd_fb_i8(const rd_fb_table *t, unsigned slot, int8_t def, int8_t *out, rd_error *err);
rd_status rd_fb_bool(const rd_fb_table *t, unsigned slot, bool def, bool *out, rd_error *err);
rd_status rd_fb_u16(const rd_fb_table *t, unsigned slot, uint16_t def, uint16_t *out, rd_error *err);
rd_status rd_fb_i16(const rd_fb_table *t, unsigned slot, int16_t def, int16_t *out, rd_error *err);
rd_status rd_fb_u32(const rd_fb_table *t, unsigned slot, uint32_t def, uint32_t *out, rd_error *err);
rd_status rd_fb_i32(const rd_fb_table *t, unsigned slot, int32_t def, int32_t *out, rd_error *err);
rd_status rd_fb_u64(const rd_fb_table *t, unsigned slot, uint64_t def, uint64_t *out, rd_error *err);
rd_status rd_fb_i64(const rd_fb_table *t, unsigned slot, int64_t def, int64_t *out, rd_error *err);
rd_status rd_fb_f32(const rd_fb_table *t, unsigned slot, float def, float *out, rd_error *err);
rd_status rd_fb_f64(const rd_fb_table *t, unsigned slot, double def, double *out, rd_error *err);

/**
 * A string field: *out points into the buffer (NUL-terminated: the terminator is checked), *out_len is
 * its length without the terminator (it may hold NUL bytes: compare with strlen when that matters).
 * *out = NULL and *out_len = 0 when absent. out_len may be NULL.
 */
rd_status rd_fb_string(const rd_fb_table *t, unsigned slot, const char **out, size_t *out_len, rd_error *err);

/** A sub-table field. *present = false (and *out zeroed) when absent. */
rd_status rd_fb_table_field(const rd_fb_table *t, unsigned slot, rd_fb_table *out, bool *present, rd_error *err);

/**
 * A vector field of elem_size-byte scalars (1, 2, 4 or 8) or of RD_FB_REF offsets. Checks the length
 * prefix, the alignment of the elements and that all of them lie inside the buffer; n == 0 when absent.
 */
rd_status rd_fb_vector(const rd_fb_table *t, unsigned slot, size_t elem_size, rd_fb_vec *out, rd_error *err);

/** Table i of a vector of RD_FB_REF (one level deeper than the vector's table). */
rd_status rd_fb_vec_table(const rd_fb_vec *v, uint32_t i, rd_fb_table *out, rd_error *err);

/** String i of a vector of RD_FB_REF; as rd_fb_string. */
rd_status rd_fb_vec_string(const rd_fb_vec *v, uint32_t i, const char **out, size_t *out_len, rd_error *err);

/*
 * Element i of a scalar vector. The vector was checked when it was opened, so these cannot fail; an
 * index >= n or an element size other than the getter's returns 0.
 */
uint8_t rd_fb_vec_u8(const rd_fb_vec *v, uint32_t i);
int32_t rd_fb_vec_i32(const rd_fb_vec *v, uint32_t i);
uint32_t rd_fb_vec_u32(const rd_fb_vec *v, uint32_t i);
int64_t rd_fb_vec_i64(const rd_fb_vec *v, uint32_t i);
uint64_t rd_fb_vec_u64(const rd_fb_vec *v, uint32_t i);
float rd_fb_vec_f32(const rd_fb_vec *v, uint32_t i);
double rd_fb_vec_f64(const rd_fb_vec *v, uint32_t i);

/** The elements of a vector as raw bytes (n * elem_size of them), e.g. a [ubyte] blob. */
const uint8_t *rd_fb_vec_data(const rd_fb_vec *v);

/**
 * A union: type_slot holds the u8 type, value_slot the offset of the value table. *type = 0 (NONE) and
 * *present = false when both are absent; RD_E_PARSE when only one of them is there.
 */
rd_status rd_fb_union(const rd_fb_table *t, unsigned type_slot, unsigned value_slot, uint8_t *type, rd_fb_table *out,
                      bool *present, rd_error *err);

/**
 * A nested FlatBuffer stored in a [ubyte] vector: *out reads those bytes (offsets in its messages stay
 * file offsets), with the bounds of v's buffer and one level less depth to spend.
 */
rd_status rd_fb_nested(const rd_fb_vec *bytes, rd_fb *out, rd_error *err);

/* ---------------------------------------------------------------------------------------------------
 * A minimal builder, for tests and fuzz seeds: objects are made children first (as with flatc's
 * builders) and laid out at rd_fbb_finish, parents before children, each aligned as a reader checks.
 *
 *     rd_fbb *b = rd_fbb_create();
 *     rd_fbb_ref name = rd_fbb_string(b, "conv1");
 *     rd_fbb_ref t = rd_fbb_table(b);
 *     rd_fbb_add_ref(b, t, 0, name);
 *     rd_fbb_add_scalar(b, t, 1, &(int32_t){7}, 4);
 *     uint8_t *buf; size_t len;
 *     rd_fbb_finish(b, t, "TEST", &buf, &len, &err);           // buf is malloc'ed: free() it
 *     rd_fbb_destroy(b);
 *
 * Errors (allocation, a bad ref or slot) are remembered and reported by rd_fbb_finish; refs returned
 * after an error are 0 (invalid), so calls can be chained without checks.
 */
typedef struct rd_fbb rd_fbb;
typedef uint32_t rd_fbb_ref; /* 0 is "no object" */

rd_fbb *rd_fbb_create(void);
void rd_fbb_destroy(rd_fbb *b);

/** A string (a copy of s, n bytes; rd_fbb_string takes strlen). */
rd_fbb_ref rd_fbb_string(rd_fbb *b, const char *s);
rd_fbb_ref rd_fbb_string_n(rd_fbb *b, const char *s, size_t n);

/** A vector of n scalars of elem_size bytes (copied), its elements aligned to align (>= elem_size, a
 *  power of two up to 256; 0 for elem_size). */
rd_fbb_ref rd_fbb_vector(rd_fbb *b, const void *elems, size_t n, size_t elem_size, size_t align);

/** A vector of n offsets to tables or strings made earlier. */
rd_fbb_ref rd_fbb_vector_refs(rd_fbb *b, const rd_fbb_ref *items, size_t n);

/** An empty table; fields are added with the calls below (a slot set twice keeps the last value). */
rd_fbb_ref rd_fbb_table(rd_fbb *b);
void rd_fbb_add_scalar(rd_fbb *b, rd_fbb_ref table, unsigned slot, const void *value, size_t size);
void rd_fbb_add_ref(rd_fbb *b, rd_fbb_ref table, unsigned slot, rd_fbb_ref target);

/** Serializes with root as the root table and ident (4 characters or NULL) as the file identifier. */
rd_status rd_fbb_finish(rd_fbb *b, rd_fbb_ref root, const char *ident, uint8_t **out, size_t *out_len, rd_error *err);

#ifdef __cplusplus
}
#endif

#endif
