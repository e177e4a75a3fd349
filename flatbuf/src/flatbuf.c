/*
 * flatbuf.c: the bounds-checked FlatBuffers reader (rknn_diag/flatbuf.h).
 *
 * Invariants: every position computed from buffer data is checked against fb->len before it is read,
 * with 64-bit arithmetic on size_t values that are at most UINT32_MAX, so no sum can wrap. Alignment is
 * checked relative to the start of the buffer, which is where FlatBuffers builders align (they align
 * from the end of a buffer whose size is a multiple of the largest alignment).
 */
#include "rknn_diag/flatbuf.h"

#include <string.h>

static uint16_t rd16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
}

static uint32_t rd32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* True when [pos, pos + n) lies inside the buffer. */
static bool inside(const rd_fb *fb, size_t pos, size_t n)
{
    return pos <= fb->len && n <= fb->len - pos;
}

rd_status rd_fb_init(rd_fb *fb, const void *buf, size_t len, const char *what, size_t base, rd_error *err)
{
    memset(fb, 0, sizeof *fb);
    fb->what = what ? what : "flatbuffer";
    fb->base = base;
    fb->max_depth = RD_FB_DEFAULT_MAX_DEPTH;
    fb->max_elems = RD_FB_DEFAULT_MAX_ELEMS;
    if (len > UINT32_MAX)
        return rd_errorf(err, RD_E_LIMIT,
                         "%s: byte %zu: a FlatBuffer of %zu bytes, more than the 4 GiB its 32-bit "
                         "offsets can address",
                         fb->what, base, len);
    if (!buf || len < 8)
        return rd_errorf(err, RD_E_PARSE,
                         "%s: byte %zu: a FlatBuffer of %zu bytes, expected at least 8 (root offset "
                         "and file identifier)",
                         fb->what, base, len);
    fb->buf = buf;
    fb->len = len;
    return RD_OK;
}

bool rd_fb_has_identifier(const rd_fb *fb, const char *ident)
{
    return fb->len >= 8 && ident && memcmp(fb->buf + 4, ident, 4) == 0;
}

/* Opens the table starting at pos, depth levels below the root. */
static rd_status table_at(const rd_fb *fb, size_t pos, unsigned depth, rd_fb_table *out, rd_error *err)
{
    memset(out, 0, sizeof *out);
    size_t at = fb->base + pos;
    if (depth > fb->max_depth)
        return rd_errorf(err, RD_E_LIMIT, "%s: byte %zu: tables nested %u deep, more than the %u allowed", fb->what, at,
                         depth, fb->max_depth);
    if (pos % 4 != 0)
        return rd_errorf(err, RD_E_PARSE, "%s: byte %zu: a table must start on a 4-byte boundary", fb->what, at);
    if (!inside(fb, pos, 4))
        return rd_errorf(err, RD_E_PARSE, "%s: byte %zu: a table starts past the end of the %zu-byte buffer", fb->what,
                         at, fb->len);
    int32_t soff;
    memcpy(&soff, fb->buf + pos, 4);
    int64_t vt = (int64_t)pos - (int64_t)soff;
    if (vt < 0 || vt % 2 != 0 || !inside(fb, (size_t)vt, 4))
        return rd_errorf(err, RD_E_PARSE,
                         "%s: byte %zu: the table's vtable offset %d leads to byte %lld, expected "
                         "a 2-byte aligned position inside the buffer (%zu bytes)",
                         fb->what, at, soff, (long long)vt + (long long)fb->base, fb->len);
    uint16_t vt_len = rd16(fb->buf + vt), obj_len = rd16(fb->buf + vt + 2);
    if (vt_len < 4 || vt_len % 2 != 0 || !inside(fb, (size_t)vt, vt_len))
        return rd_errorf(err, RD_E_PARSE,
                         "%s: byte %lld: vtable of %u bytes, expected an even size >= 4 that fits "
                         "the buffer",
                         fb->what, (long long)vt + (long long)fb->base, vt_len);
    if (obj_len < 4 || !inside(fb, pos, obj_len))
        return rd_errorf(err, RD_E_PARSE, "%s: byte %zu: table of %u bytes, expected >= 4 bytes inside the buffer",
                         fb->what, at, obj_len);
    *out = (rd_fb_table){fb, pos, (size_t)vt, vt_len, obj_len, depth};
    return RD_OK;
}

rd_status rd_fb_root(const rd_fb *fb, const char *ident, rd_fb_table *out, rd_error *err)
{
    memset(out, 0, sizeof *out);
    if (!fb->buf)
        return rd_errorf(err, RD_E_INVAL, "%s: FlatBuffer not initialised", fb->what);
    if (ident && !rd_fb_has_identifier(fb, ident)) {
        char seen[5];
        for (int i = 0; i < 4; i++) {
            char c = (char)fb->buf[4 + i];
            seen[i] = c >= 0x20 && c < 0x7f ? c : '.';
        }
        seen[4] = '\0';
        return rd_errorf(err, RD_E_PARSE, "%s: byte %zu: file identifier '%s', expected '%.4s'", fb->what, fb->base + 4,
                         seen, ident);
    }
    uint32_t root = rd32(fb->buf);
    if (root < 4 || !inside(fb, root, 4))
        return rd_errorf(err, RD_E_PARSE, "%s: byte %zu: root offset %u, expected a table inside the %zu-byte buffer",
                         fb->what, fb->base, root, fb->len);
    return table_at(fb, root, 0, out, err);
}

/* Field offset inside the table (0 when absent). */
static uint16_t field_off(const rd_fb_table *t, unsigned slot)
{
    if (!t->fb || slot > 32767u || 4 + 2 * (size_t)slot + 2 > t->vt_len)
        return 0;
    return rd16(t->fb->buf + t->vt + 4 + 2 * (size_t)slot);
}

bool rd_fb_has(const rd_fb_table *t, unsigned slot)
{
    return field_off(t, slot) != 0;
}

unsigned rd_fb_slot_count(const rd_fb_table *t)
{
    return t->fb ? (unsigned)((t->vt_len - 4) / 2) : 0;
}

size_t rd_fb_field_span(const rd_fb_table *t, unsigned slot)
{
    uint16_t off = field_off(t, slot);
    if (!off || off >= t->obj_len)
        return 0;
    size_t next = t->obj_len;
    for (unsigned s = 0; s < rd_fb_slot_count(t); s++) {
        uint16_t o = field_off(t, s);
        if (o > off && o < next)
            next = o;
    }
    return next - off;
}

size_t rd_fb_field_offset(const rd_fb_table *t, unsigned slot)
{
    if (!t->fb)
        return 0;
    return t->fb->base + t->pos + field_off(t, slot);
}

/* Position of slot's field of size bytes, checked: *pos = 0 when absent. */
static rd_status field_pos(const rd_fb_table *t, unsigned slot, size_t size, size_t *pos, rd_error *err)
{
    *pos = 0;
    uint16_t off = field_off(t, slot);
    if (!off)
        return RD_OK;
    const rd_fb *fb = t->fb;
    size_t p = t->pos + off;
    if (off < 4 || (size_t)off + size > t->obj_len || !inside(fb, p, size))
        return rd_errorf(err, RD_E_PARSE,
                         "%s: byte %zu: field %u (%zu bytes at table offset %u) lies outside its "
                         "%u-byte table",
                         fb->what, fb->base + p, slot, size, off, t->obj_len);
    if (p % size != 0)
        return rd_errorf(err, RD_E_PARSE, "%s: byte %zu: field %u of %zu bytes is not aligned to its size", fb->what,
                         fb->base + p, slot, size);
    *pos = p;
    return RD_OK;
}

#define RD_FB_SCALAR(name, type)                                                                    \
    rd_status rd_fb_##name(const rd_fb_table *t, unsigned slot, type def, type *out, rd_error *err) \
    {                                                                                               \
        size_t p;                                                                                   \
        *out = def;                                                                                 \
        rd_status st = field_pos(t, slot, sizeof(type), &p, err);                                   \
        if (st == RD_OK && p)                                                                       \
            memcpy(out, t->fb->buf + p, sizeof(type));                                              \
        return st;                                                                                  \
    }
RD_FB_SCALAR(u8, uint8_t)
RD_FB_SCALAR(i8, int8_t)
RD_FB_SCALAR(u16, uint16_t)
RD_FB_SCALAR(i16, int16_t)
RD_FB_SCALAR(u32, uint32_t)
RD_FB_SCALAR(i32, int32_t)
RD_FB_SCALAR(u64, uint64_t)
RD_FB_SCALAR(i64, int64_t)
RD_FB_SCALAR(f32, float)
RD_FB_SCALAR(f64, double)
#undef RD_FB_SCALAR

rd_status rd_fb_bool(const rd_fb_table *t, unsigned slot, bool def, bool *out, rd_error *err)
{
    uint8_t v;
    rd_status st = rd_fb_u8(t, slot, def ? 1 : 0, &v, err);
    *out = v != 0;
    return st;
}

/* Follows the uoffset stored at p (inside the buffer, 4-aligned): *target. */
static rd_status follow(const rd_fb *fb, size_t p, const char *what, size_t *target, rd_error *err)
{
    *target = 0; /* set on failure too: callers read it only on success, but -O3 cannot tell */
    uint32_t u = rd32(fb->buf + p);
    if (u == 0 || !inside(fb, p + u, 4))
        return rd_errorf(err, RD_E_PARSE,
                         "%s: byte %zu: offset %u to a %s leads to byte %zu, expected a position "
                         "inside the %zu-byte buffer",
                         fb->what, fb->base + p, u, what, fb->base + p + u, fb->len);
    *target = p + u;
    return RD_OK;
}

/* A string whose length prefix is at s. */
static rd_status string_at(const rd_fb *fb, size_t s, const char **out, size_t *out_len, rd_error *err)
{
    if (s % 4 != 0)
        return rd_errorf(err, RD_E_PARSE, "%s: byte %zu: a string must start on a 4-byte boundary", fb->what,
                         fb->base + s);
    uint32_t n = rd32(fb->buf + s);
    if (!inside(fb, s + 4, (size_t)n + 1))
        return rd_errorf(err, RD_E_PARSE,
                         "%s: byte %zu: string of %u bytes runs past the end of the buffer "
                         "(%zu bytes)",
                         fb->what, fb->base + s, n, fb->len);
    if (fb->buf[s + 4 + n] != 0)
        return rd_errorf(err, RD_E_PARSE, "%s: byte %zu: string of %u bytes is not NUL-terminated", fb->what,
                         fb->base + s + 4 + n, n);
    *out = (const char *)fb->buf + s + 4;
    if (out_len)
        *out_len = n;
    return RD_OK;
}

rd_status rd_fb_string(const rd_fb_table *t, unsigned slot, const char **out, size_t *out_len, rd_error *err)
{
    *out = NULL;
    if (out_len)
        *out_len = 0;
    size_t p, s;
    rd_status st = field_pos(t, slot, 4, &p, err);
    if (st != RD_OK || !p)
        return st;
    st = follow(t->fb, p, "string", &s, err);
    return st != RD_OK ? st : string_at(t->fb, s, out, out_len, err);
}

rd_status rd_fb_table_field(const rd_fb_table *t, unsigned slot, rd_fb_table *out, bool *present, rd_error *err)
{
    memset(out, 0, sizeof *out);
    *present = false;
    size_t p, s;
    rd_status st = field_pos(t, slot, 4, &p, err);
    if (st != RD_OK || !p)
        return st;
    st = follow(t->fb, p, "table", &s, err);
    if (st == RD_OK)
        st = table_at(t->fb, s, t->depth + 1, out, err);
    *present = st == RD_OK;
    return st;
}

rd_status rd_fb_vector(const rd_fb_table *t, unsigned slot, size_t elem_size, rd_fb_vec *out, rd_error *err)
{
    memset(out, 0, sizeof *out);
    out->fb = t->fb;
    out->depth = t->depth;
    out->refs = elem_size == RD_FB_REF;
    out->elem_size = out->refs ? 4 : elem_size;
    if (elem_size != RD_FB_REF && elem_size != 1 && elem_size != 2 && elem_size != 4 && elem_size != 8)
        return rd_errorf(err, RD_E_INVAL, "rd_fb_vector: element size %zu (expected 1, 2, 4, 8 or RD_FB_REF)",
                         elem_size);
    size_t p, v;
    rd_status st = field_pos(t, slot, 4, &p, err);
    if (st != RD_OK || !p)
        return st;
    const rd_fb *fb = t->fb;
    st = follow(fb, p, "vector", &v, err);
    if (st != RD_OK)
        return st;
    if (v % 4 != 0 || (v + 4) % out->elem_size != 0)
        return rd_errorf(err, RD_E_PARSE,
                         "%s: byte %zu: a vector of %zu-byte elements must have its length on a "
                         "4-byte boundary and its elements aligned to their size",
                         fb->what, fb->base + v, out->elem_size);
    uint32_t n = rd32(fb->buf + v);
    if (n > fb->max_elems)
        return rd_errorf(err, RD_E_LIMIT, "%s: byte %zu: vector of %u elements, more than the %u allowed", fb->what,
                         fb->base + v, n, fb->max_elems);
    if ((fb->len - v - 4) / out->elem_size < n)
        return rd_errorf(err, RD_E_PARSE,
                         "%s: byte %zu: vector of %u elements of %zu bytes runs past the end of the "
                         "buffer (%zu bytes)",
                         fb->what, fb->base + v, n, out->elem_size, fb->len);
    out->pos = v + 4;
    out->n = n;
    return RD_OK;
}

/* Target of reference i of a vector of refs. */
static rd_status vec_ref(const rd_fb_vec *v, uint32_t i, const char *what, size_t *target, rd_error *err)
{
    *target = 0;
    if (!v->fb || !v->refs || i >= v->n)
        return rd_errorf(err, RD_E_INVAL, "%s: element %u of a vector of %u %s", v->fb ? v->fb->what : "flatbuffer", i,
                         v->n, v->refs ? "offsets" : "scalars (not offsets)");
    return follow(v->fb, v->pos + 4 * (size_t)i, what, target, err);
}

rd_status rd_fb_vec_table(const rd_fb_vec *v, uint32_t i, rd_fb_table *out, rd_error *err)
{
    memset(out, 0, sizeof *out);
    size_t s;
    rd_status st = vec_ref(v, i, "table", &s, err);
    return st != RD_OK ? st : table_at(v->fb, s, v->depth + 1, out, err);
}

rd_status rd_fb_vec_string(const rd_fb_vec *v, uint32_t i, const char **out, size_t *out_len, rd_error *err)
{
    *out = NULL;
    if (out_len)
        *out_len = 0;
    size_t s;
    rd_status st = vec_ref(v, i, "string", &s, err);
    return st != RD_OK ? st : string_at(v->fb, s, out, out_len, err);
}

/* Address of element i when it has elem_size bytes, else NULL. */
static const uint8_t *vec_elem(const rd_fb_vec *v, uint32_t i, size_t elem_size)
{
    if (!v->fb || v->refs || v->elem_size != elem_size || i >= v->n)
        return NULL;
    return v->fb->buf + v->pos + (size_t)i * elem_size;
}

#define RD_FB_VEC_GET(name, type)                         \
    type rd_fb_vec_##name(const rd_fb_vec *v, uint32_t i) \
    {                                                     \
        type x = 0;                                       \
        const uint8_t *p = vec_elem(v, i, sizeof(type));  \
        if (p)                                            \
            memcpy(&x, p, sizeof(type));                  \
        return x;                                         \
    }
RD_FB_VEC_GET(u8, uint8_t)
RD_FB_VEC_GET(i32, int32_t)
RD_FB_VEC_GET(u32, uint32_t)
RD_FB_VEC_GET(i64, int64_t)
RD_FB_VEC_GET(u64, uint64_t)
RD_FB_VEC_GET(f32, float)
RD_FB_VEC_GET(f64, double)
#undef RD_FB_VEC_GET

const uint8_t *rd_fb_vec_data(const rd_fb_vec *v)
{
    return v->fb && v->n ? v->fb->buf + v->pos : NULL;
}

rd_status rd_fb_union(const rd_fb_table *t, unsigned type_slot, unsigned value_slot, uint8_t *type, rd_fb_table *out,
                      bool *present, rd_error *err)
{
    memset(out, 0, sizeof *out);
    *present = false;
    rd_status st = rd_fb_u8(t, type_slot, 0, type, err);
    if (st != RD_OK)
        return st;
    bool has_value = rd_fb_has(t, value_slot);
    if (*type == 0 && !has_value)
        return RD_OK;
    if (*type == 0 || !has_value)
        return rd_errorf(err, RD_E_PARSE, "%s: byte %zu: union with type %u %s a value in field %u", t->fb->what,
                         rd_fb_field_offset(t, type_slot), *type, has_value ? "(NONE) but" : "but without", value_slot);
    return rd_fb_table_field(t, value_slot, out, present, err);
}

rd_status rd_fb_nested(const rd_fb_vec *bytes, rd_fb *out, rd_error *err)
{
    memset(out, 0, sizeof *out);
    if (!bytes->fb || bytes->refs || bytes->elem_size != 1)
        return rd_errorf(err, RD_E_INVAL, "rd_fb_nested: expected a [ubyte] vector");
    const rd_fb *fb = bytes->fb;
    if (bytes->depth + 1 > fb->max_depth)
        return rd_errorf(err, RD_E_LIMIT, "%s: byte %zu: nested FlatBuffer %u levels deep, more than the %u allowed",
                         fb->what, fb->base + bytes->pos, bytes->depth + 1, fb->max_depth);
    rd_status st = rd_fb_init(out, fb->buf + bytes->pos, bytes->n, fb->what, fb->base + bytes->pos, err);
    out->max_depth = fb->max_depth - bytes->depth - 1;
    out->max_elems = fb->max_elems;
    return st;
}
