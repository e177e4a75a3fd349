/*
 * flatbuf_build.c: the minimal FlatBuffers builder of rknn_diag/flatbuf.h (tests and fuzz seeds).
 *
 * Objects are recorded as they are made; rd_fbb_finish orders the ones reachable from the root so that
 * every parent comes before its children (reverse post-order of a depth-first walk: offsets in
 * FlatBuffers only point forward), places them (a table right after its vtable, scalars aligned to their
 * size, vector elements to their alignment) and writes them. A reference cycle is an error.
 */
#include "rknn_diag/flatbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OBJ_STRING, OBJ_VECTOR, OBJ_REFS, OBJ_TABLE };

typedef struct fbb_field {
    unsigned slot;
    bool is_ref;
    uint8_t bytes[8]; /* scalar value */
    size_t size;      /* scalar size; 4 for a ref */
    rd_fbb_ref ref;
    size_t off; /* offset inside the table, set at layout */
} fbb_field;

typedef struct fbb_obj {
    int kind;
    uint8_t *data;       /* string bytes, vector elements */
    size_t n, elem_size; /* element count and size (strings: n bytes of 1) */
    size_t align;
    rd_fbb_ref *refs;  /* OBJ_REFS */
    fbb_field *fields; /* OBJ_TABLE */
    size_t n_fields, cap_fields;
    size_t pos, vt_pos; /* layout: object start (table start, first element, string length) and vtable */
    uint16_t vt_len, obj_len;
    int mark; /* walk state: 0 new, 1 on the stack, 2 done */
} fbb_obj;

struct rd_fbb {
    fbb_obj *objs; /* objs[0] is unused: ref 0 means "none" */
    size_t n, cap;
    bool failed;
    char why[160];
};

rd_fbb *rd_fbb_create(void)
{
    rd_fbb *b = calloc(1, sizeof *b);
    if (b)
        b->n = 1;
    return b;
}

void rd_fbb_destroy(rd_fbb *b)
{
    if (!b)
        return;
    for (size_t i = 1; i < b->n; i++) {
        free(b->objs[i].data);
        free(b->objs[i].refs);
        free(b->objs[i].fields);
    }
    free(b->objs);
    free(b);
}

static rd_fbb_ref fail(rd_fbb *b, const char *why)
{
    if (b && !b->failed) {
        b->failed = true;
        snprintf(b->why, sizeof b->why, "%s", why);
    }
    return 0;
}

/* Room for entry n of the array *items (capacity *cap entries of size bytes, doubling from first); false and the
   builder failed when out of memory. */
static bool reserve(rd_fbb *b, void **items, size_t *cap, size_t n, size_t size, size_t first)
{
    if (n < *cap)
        return true;
    size_t grown_cap = *cap ? *cap * 2 : first;
    void *grown = realloc(*items, grown_cap * size);
    if (!grown) {
        fail(b, "out of memory");
        return false;
    }
    *items = grown;
    *cap = grown_cap;
    return true;
}

static fbb_obj *new_obj(rd_fbb *b, int kind, rd_fbb_ref *ref)
{
    *ref = 0;
    if (!b || b->failed)
        return NULL;
    /* objs[0] is reserved, so n starts at 1 */
    if (!reserve(b, (void **)&b->objs, &b->cap, b->n, sizeof *b->objs, 16))
        return NULL;
    if (b->n > UINT32_MAX - 1) {
        fail(b, "too many objects");
        return NULL;
    }
    fbb_obj *o = &b->objs[b->n];
    memset(o, 0, sizeof *o);
    o->kind = kind;
    *ref = (rd_fbb_ref)b->n++;
    return o;
}

static fbb_obj *get(rd_fbb *b, rd_fbb_ref r)
{
    return b && !b->failed && r > 0 && r < b->n ? &b->objs[r] : NULL;
}

rd_fbb_ref rd_fbb_string_n(rd_fbb *b, const char *s, size_t n)
{
    rd_fbb_ref r;
    fbb_obj *o = new_obj(b, OBJ_STRING, &r);
    if (!o)
        return 0;
    o->data = malloc(n + 1);
    if (!o->data)
        return fail(b, "out of memory");
    if (n)
        memcpy(o->data, s, n);
    o->n = n;
    o->elem_size = 1;
    o->align = 4;
    return r;
}

rd_fbb_ref rd_fbb_string(rd_fbb *b, const char *s)
{
    return rd_fbb_string_n(b, s ? s : "", s ? strlen(s) : 0);
}

rd_fbb_ref rd_fbb_vector(rd_fbb *b, const void *elems, size_t n, size_t elem_size, size_t align)
{
    if (elem_size != 1 && elem_size != 2 && elem_size != 4 && elem_size != 8)
        return fail(b, "vector element size must be 1, 2, 4 or 8");
    if (align == 0)
        align = elem_size;
    if (align < elem_size || align > 256 || (align & (align - 1)) != 0)
        return fail(b, "vector alignment must be a power of two from the element size to 256");
    if (n > UINT32_MAX / elem_size)
        return fail(b, "vector too long");
    rd_fbb_ref r;
    fbb_obj *o = new_obj(b, OBJ_VECTOR, &r);
    if (!o)
        return 0;
    o->data = malloc(n * elem_size + 1);
    if (!o->data)
        return fail(b, "out of memory");
    if (n)
        memcpy(o->data, elems, n * elem_size);
    o->n = n;
    o->elem_size = elem_size;
    o->align = align < 4 ? 4 : align;
    return r;
}

rd_fbb_ref rd_fbb_vector_refs(rd_fbb *b, const rd_fbb_ref *items, size_t n)
{
    if (n > UINT32_MAX / 4)
        return fail(b, "vector too long");
    rd_fbb_ref r;
    fbb_obj *o = new_obj(b, OBJ_REFS, &r);
    if (!o)
        return 0;
    o->refs = malloc((n ? n : 1) * sizeof *o->refs);
    if (!o->refs)
        return fail(b, "out of memory");
    for (size_t i = 0; i < n; i++) {
        if (!items[i] || items[i] >= r)
            return fail(b, "vector of refs holds a ref that was not made before it");
        o->refs[i] = items[i];
    }
    o->n = n;
    o->elem_size = 4;
    o->align = 4;
    return r;
}

rd_fbb_ref rd_fbb_table(rd_fbb *b)
{
    rd_fbb_ref r;
    fbb_obj *o = new_obj(b, OBJ_TABLE, &r);
    if (o)
        o->align = 4;
    return o ? r : 0;
}

static fbb_field *add_field(rd_fbb *b, rd_fbb_ref table, unsigned slot)
{
    fbb_obj *t = get(b, table);
    if (!t || t->kind != OBJ_TABLE) {
        fail(b, "field added to something that is not a table");
        return NULL;
    }
    if (slot > 1000) {
        fail(b, "slot above 1000");
        return NULL;
    }
    for (size_t i = 0; i < t->n_fields; i++)
        if (t->fields[i].slot == slot)
            return &t->fields[i];
    if (!reserve(b, (void **)&t->fields, &t->cap_fields, t->n_fields, sizeof *t->fields, 8))
        return NULL;
    fbb_field *f = &t->fields[t->n_fields++];
    memset(f, 0, sizeof *f);
    f->slot = slot;
    return f;
}

/* Sets field slot of the table to a ref to target (is_ref) or else to the scalar of size bytes at value. */
static void set_field(rd_fbb *b, rd_fbb_ref table, unsigned slot, bool is_ref, const void *value, size_t size,
                      rd_fbb_ref target)
{
    fbb_field *f = add_field(b, table, slot);
    if (!f)
        return;
    f->is_ref = is_ref;
    f->size = size;
    if (is_ref)
        f->ref = target;
    else
        memcpy(f->bytes, value, size);
}

void rd_fbb_add_scalar(rd_fbb *b, rd_fbb_ref table, unsigned slot, const void *value, size_t size)
{
    if (size != 1 && size != 2 && size != 4 && size != 8)
        fail(b, "scalar size must be 1, 2, 4 or 8");
    else
        set_field(b, table, slot, false, value, size, 0);
}

void rd_fbb_add_ref(rd_fbb *b, rd_fbb_ref table, unsigned slot, rd_fbb_ref target)
{
    if (!get(b, target))
        fail(b, "field refers to an object that does not exist");
    else
        set_field(b, table, slot, true, NULL, 4, target);
}

static size_t align_up(size_t x, size_t a)
{
    return (x + a - 1) / a * a;
}

/* Depth-first walk from r appending objects to order in post-order; false (and b failed) on a cycle. */
static bool walk(rd_fbb *b, rd_fbb_ref r, rd_fbb_ref *order, size_t *n_order, unsigned depth)
{
    fbb_obj *o = &b->objs[r];
    if (o->mark == 2)
        return true;
    if (o->mark == 1 || depth > 10000) {
        fail(b, o->mark == 1 ? "reference cycle" : "objects nested too deep");
        return false;
    }
    o->mark = 1;
    if (o->kind == OBJ_REFS)
        for (size_t i = 0; i < o->n; i++)
            if (!walk(b, o->refs[i], order, n_order, depth + 1))
                return false;
    if (o->kind == OBJ_TABLE)
        for (size_t i = 0; i < o->n_fields; i++)
            if (o->fields[i].is_ref && !walk(b, o->fields[i].ref, order, n_order, depth + 1))
                return false;
    o->mark = 2;
    order[(*n_order)++] = r; /* post-order; reversed by the caller */
    return true;
}

/* Places a table's fields (largest first, each aligned to its size) and returns its inline length. */
static size_t layout_table(fbb_obj *t, size_t *table_align)
{
    size_t off = 4, al = 4;
    for (size_t size = 8; size >= 1; size /= 2)
        for (size_t i = 0; i < t->n_fields; i++) {
            fbb_field *f = &t->fields[i];
            if (f->size != size)
                continue;
            off = align_up(off, size);
            f->off = off;
            off += size;
            if (size > al)
                al = size;
        }
    *table_align = al;
    return align_up(off, al);
}

static void put32(uint8_t *p, uint32_t v)
{
    memcpy(p, &v, 4);
}

rd_status rd_fbb_finish(rd_fbb *b, rd_fbb_ref root, const char *ident, uint8_t **out, size_t *out_len, rd_error *err)
{
    *out = NULL;
    *out_len = 0;
    if (!b)
        return rd_errorf(err, RD_E_NOMEM, "flatbuffer builder: out of memory");
    fbb_obj *r = get(b, root);
    if (!b->failed && (!r || r->kind != OBJ_TABLE))
        fail(b, "the root must be a table");
    rd_fbb_ref *order = b->failed ? NULL : malloc(b->n * sizeof *order);
    if (!b->failed && !order)
        fail(b, "out of memory");
    size_t n_order = 0;
    if (!b->failed) {
        for (size_t i = 1; i < b->n; i++)
            b->objs[i].mark = 0;
        walk(b, root, order, &n_order, 0);
    }
    if (b->failed) {
        free(order);
        return rd_errorf(err, strcmp(b->why, "out of memory") == 0 ? RD_E_NOMEM : RD_E_INVAL, "flatbuffer builder: %s",
                         b->why);
    }
    /* layout, parents first: reverse post-order */
    size_t pos = 8, max_align = 8;
    for (size_t k = n_order; k-- > 0;) {
        fbb_obj *o = &b->objs[order[k]];
        if (o->kind == OBJ_TABLE) {
            unsigned max_slot = 0;
            for (size_t i = 0; i < o->n_fields; i++)
                if (o->fields[i].slot + 1 > max_slot)
                    max_slot = o->fields[i].slot + 1;
            size_t al;
            size_t obj_len = layout_table(o, &al);
            o->vt_pos = align_up(pos, 2);
            o->vt_len = (uint16_t)(4 + 2 * max_slot);
            o->pos = align_up(o->vt_pos + o->vt_len, al);
            o->obj_len = (uint16_t)obj_len;
            pos = o->pos + obj_len;
            if (al > max_align)
                max_align = al;
        } else {
            o->pos = align_up(pos + 4, o->align);
            pos = o->pos + o->n * o->elem_size + (o->kind == OBJ_STRING ? 1 : 0);
            if (o->align > max_align)
                max_align = o->align;
        }
        if (pos > UINT32_MAX - 512) {
            free(order);
            return rd_errorf(err, RD_E_LIMIT, "flatbuffer builder: more than 4 GiB");
        }
    }
    size_t len = align_up(pos, max_align);
    uint8_t *buf = calloc(1, len);
    if (!buf) {
        free(order);
        return rd_errorf(err, RD_E_NOMEM, "flatbuffer builder: out of memory (%zu bytes)", len);
    }
    put32(buf, (uint32_t)r->pos);
    if (ident)
        memcpy(buf + 4, ident, 4);
    for (size_t k = 0; k < n_order; k++) {
        fbb_obj *o = &b->objs[order[k]];
        if (o->kind == OBJ_TABLE) {
            uint16_t v16 = o->vt_len;
            memcpy(buf + o->vt_pos, &v16, 2);
            memcpy(buf + o->vt_pos + 2, &o->obj_len, 2);
            int32_t soff = (int32_t)(o->pos - o->vt_pos);
            memcpy(buf + o->pos, &soff, 4);
            for (size_t i = 0; i < o->n_fields; i++) {
                fbb_field *f = &o->fields[i];
                uint16_t off16 = (uint16_t)f->off;
                memcpy(buf + o->vt_pos + 4 + 2 * f->slot, &off16, 2);
                size_t at = o->pos + f->off;
                if (f->is_ref)
                    put32(buf + at, (uint32_t)(b->objs[f->ref].pos - (b->objs[f->ref].kind == OBJ_TABLE ? 0 : 4) - at));
                else
                    memcpy(buf + at, f->bytes, f->size);
            }
        } else {
            put32(buf + o->pos - 4, (uint32_t)o->n);
            if (o->kind == OBJ_REFS) {
                for (size_t i = 0; i < o->n; i++) {
                    const fbb_obj *t = &b->objs[o->refs[i]];
                    size_t at = o->pos + 4 * i;
                    put32(buf + at, (uint32_t)(t->pos - (t->kind == OBJ_TABLE ? 0 : 4) - at));
                }
            } else if (o->n) {
                memcpy(buf + o->pos, o->data, o->n * o->elem_size);
            }
        }
    }
    free(order);
    *out = buf;
    *out_len = len;
    return RD_OK;
}
