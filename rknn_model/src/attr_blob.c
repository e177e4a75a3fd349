/*
 * attr_blob.c: a node's attribute blob (node slot 9; section 4.3 of ../shared/docs/rknn-model-format.md,
 * an own reading that Netron does not have): a u32 total length counting itself, then records
 * `tag, key\0, payload` ended by a 0x00 tag:
 *
 *   0x10 int32 | 0x01 float64 | 0x02 u32 length + bytes (a NUL-terminated string)
 *   0x03 map, 0x04 list (keys "0", "1", ...): u32 length counting its own 4 bytes, then nested records
 *
 * A blob whose first u32 is not its length is not a record list (OutputOperator keeps a fixed 16-byte
 * struct there) and is returned as BYTES. A record that runs past its container is corruption (an error);
 * a tag this reader does not know stops decoding with what was read so far (*partial).
 */
#include "internal.h"

typedef struct ab {
    rk_arena *a;
    const uint8_t *b;
    size_t file_off;
    unsigned max_depth;
    bool partial;
    char *why;
    size_t why_len;
    rd_error *err;
} ab;

static rd_status corrupt(ab *x, size_t pos, const char *what)
{
    return rd_errorf(x->err, RD_E_PARSE, "attribute blob: byte %zu: %s", x->file_off + pos, what);
}

static bool all_digits(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return false;
    return true;
}

typedef struct keyed {
    long key;
    size_t at;
} keyed;

static int cmp_keyed(const void *x, const void *y)
{
    const keyed *a = x, *b = y;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return a->at < b->at ? -1 : a->at > b->at;
}

/* A 0x04 record whose keys are all numbers becomes a LIST in key order (as the format notes read it). */
static rd_status as_list(ab *x, rd_rknn_value *v)
{
    for (size_t i = 0; i < v->n; i++)
        if (!all_digits(v->keys[i]))
            return RD_OK;
    keyed *order = rk_alloc_array(x->a, v->n, sizeof *order, "attribute list", x->err);
    rd_rknn_value *items = rk_alloc_array(x->a, v->n, sizeof *items, "attribute list", x->err);
    if (!order || !items)
        return x->err ? x->err->code : RD_E_NOMEM;
    for (size_t i = 0; i < v->n; i++)
        order[i] = (keyed){strtol(v->keys[i], NULL, 10), i};
    qsort(order, v->n, sizeof *order, cmp_keyed);
    for (size_t i = 0; i < v->n; i++)
        items[i] = v->items[order[i].at];
    v->kind = RD_RKNN_V_LIST;
    v->items = items;
    v->keys = NULL;
    return RD_OK;
}

/* Records in [pos, end) into a MAP; stops at a 0x00 tag. */
static rd_status records(ab *x, size_t pos, size_t end, unsigned depth, rd_rknn_value *out)
{
    if (depth > x->max_depth)
        return rd_errorf(x->err, RD_E_LIMIT,
                         "attribute blob: byte %zu: records nested %u deep, more than the %u "
                         "allowed",
                         x->file_off + pos, depth, x->max_depth);
    rk_vec items = {.size = sizeof(rd_rknn_value)}, keys = {.size = sizeof(const char *)};
    out->kind = RD_RKNN_V_MAP;
    while (pos < end && !x->partial) {
        uint8_t tag = x->b[pos];
        if (tag == 0)
            break;
        size_t rec = pos++;
        const uint8_t *nul = memchr(x->b + pos, 0, end - pos);
        if (!nul)
            return corrupt(x, rec, "record key not NUL-terminated inside its container");
        size_t klen = (size_t)(nul - (x->b + pos));
        const char *key = rk_strndup(x->a, (const char *)x->b + pos, klen, x->err);
        if (!key)
            return x->err ? x->err->code : RD_E_NOMEM;
        pos += klen + 1;
        rd_rknn_value v;
        memset(&v, 0, sizeof v);
        if (tag == 0x10 || tag == 0x01) {
            size_t n = tag == 0x10 ? 4 : 8;
            if (end - pos < n)
                return corrupt(x, rec,
                               tag == 0x10 ? "int32 record runs past its container"
                                           : "float64 record runs past its container");
            if (tag == 0x10) {
                int32_t i;
                memcpy(&i, x->b + pos, 4);
                v.kind = RD_RKNN_V_INT;
                v.i = i;
                v.f = i;
            } else {
                memcpy(&v.f, x->b + pos, 8);
                v.kind = RD_RKNN_V_FLOAT;
            }
            pos += n;
        } else if (tag == 0x02 || tag == 0x03 || tag == 0x04) {
            if (end - pos < 4)
                return corrupt(x, rec, "record length runs past its container");
            uint32_t n;
            memcpy(&n, x->b + pos, 4);
            if (tag == 0x02) {
                if (n > end - pos - 4)
                    return corrupt(x, rec, "string record runs past its container");
                size_t slen = n;
                while (slen && x->b[pos + 4 + slen - 1] == 0) /* the stored terminator(s) */
                    slen--;
                v.kind = RD_RKNN_V_STRING;
                v.s = rk_strndup(x->a, (const char *)x->b + pos + 4, slen, x->err);
                v.len = slen;
                if (!v.s)
                    return x->err ? x->err->code : RD_E_NOMEM;
                pos += 4 + (size_t)n;
            } else {
                if (n < 4 || n > end - pos)
                    return corrupt(x, rec, "map or list record length is below 4 or runs past its container");
                rd_status st = records(x, pos + 4, pos + n, depth + 1, &v);
                if (st == RD_OK && tag == 0x04)
                    st = as_list(x, &v);
                if (st != RD_OK)
                    return st;
                pos += n;
            }
        } else {
            x->partial = true;
            snprintf(x->why, x->why_len, "unknown record tag 0x%02x at byte %zu (key '%.40s'): decoding stopped", tag,
                     x->file_off + rec, key);
            break;
        }
        rd_rknn_value *slot = rk_vec_push(x->a, &items, SIZE_MAX, "attribute blob", x->err);
        const char **kslot = slot ? rk_vec_push(x->a, &keys, SIZE_MAX, "attribute blob", x->err) : NULL;
        if (!kslot)
            return x->err ? x->err->code : RD_E_NOMEM;
        *slot = v;
        *kslot = key;
    }
    out->n = items.n;
    out->items = items.items;
    out->keys = keys.items;
    return RD_OK;
}

rd_status rk_attr_blob_decode(rk_arena *a, const uint8_t *blob, size_t len, size_t file_off, unsigned max_depth,
                              rd_rknn_value *out, bool *partial, char *why, size_t why_len, rd_error *err)
{
    memset(out, 0, sizeof *out);
    *partial = false;
    if (why_len)
        why[0] = '\0';
    uint32_t total = 0;
    if (len >= 4)
        memcpy(&total, blob, 4);
    if (len < 5 || total != len) { /* not a record list: keep the bytes */
        out->kind = RD_RKNN_V_BYTES;
        out->s = (const char *)blob;
        out->len = len;
        return RD_OK;
    }
    ab x = {a, blob, file_off, max_depth, false, why, why_len, err};
    rd_status st = records(&x, 4, len, 0, out);
    *partial = x.partial;
    if (st != RD_OK)
        return st;
    /* attributes are stored as {dtype: 'is' | 'i' | 'f' | ..., value: ...}: keep the value */
    for (size_t i = 0; i < out->n; i++) {
        const rd_rknn_value *v = rd_rknn_value_get(&out->items[i], "value");
        if (v)
            ((rd_rknn_value *)out->items)[i] = *v;
    }
    return RD_OK;
}
