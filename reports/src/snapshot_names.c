/*
 * snapshot_names.c: unique file stems for the tensors of one snapshot folder (rd_stem_set). Tensors `x/y`
 * and `x_y` share the RKNN-style stem `x_y`; the first one written keeps it (as RKNN-Toolkit2 names it)
 * and the next gets `x_y~2`. Stems are compared ignoring ASCII case, so a folder copied to a
 * case-insensitive file system keeps every file.
 *
 * An open-addressing table keyed by the lower-cased stem, holding the tensor it was given to; grown at
 * half load, so a take costs O(1) on average. Workload: one take per dumped tensor (thousands).
 */
#include "rknn_diag/reports.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SUFFIX 1000000 /* clashes of one stem before giving up */

typedef struct stem_slot {
    char *key;     /* lower-cased stem; NULL for an empty slot */
    char *tensor;  /* the tensor it was given to */
    unsigned next; /* for a plain stem: the first suffix not yet tried */
} stem_slot;

struct rd_stem_set {
    stem_slot *slots;
    size_t cap, n; /* cap is a power of two */
};

static uint64_t hash_key(const char *k)
{
    uint64_t h = 1469598103934665603u; /* FNV-1a */
    for (; *k; k++)
        h = (h ^ (unsigned char)*k) * 1099511628211u;
    return h;
}

static void lower_ascii(char *s)
{
    for (; *s; s++)
        if (*s >= 'A' && *s <= 'Z')
            *s = (char)(*s - 'A' + 'a');
}

/* The slot holding key, or the empty slot where it would go. */
static stem_slot *find_slot(const rd_stem_set *s, const char *key)
{
    size_t i = (size_t)hash_key(key) & (s->cap - 1);
    while (s->slots[i].key && strcmp(s->slots[i].key, key) != 0)
        i = (i + 1) & (s->cap - 1);
    return &s->slots[i];
}

static bool grow(rd_stem_set *s)
{
    size_t cap = s->cap ? s->cap * 2 : 64;
    stem_slot *old = s->slots;
    size_t old_cap = s->cap;
    s->slots = calloc(cap, sizeof *s->slots);
    if (!s->slots) {
        s->slots = old;
        return false;
    }
    s->cap = cap;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].key)
            *find_slot(s, old[i].key) = old[i];
    free(old);
    return true;
}

rd_status rd_stem_set_create(rd_stem_set **out, rd_error *err)
{
    *out = calloc(1, sizeof **out);
    if (!*out || !grow(*out)) {
        free(*out);
        *out = NULL;
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    return RD_OK;
}

void rd_stem_set_destroy(rd_stem_set *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->cap; i++) {
        free(s->slots[i].key);
        free(s->slots[i].tensor);
    }
    free(s->slots);
    free(s);
}

static bool utf8_continuation(char c)
{
    return ((unsigned char)c & 0xc0) == 0x80;
}

/* Cuts stem to at most max bytes without splitting a UTF-8 sequence (at most 3 bytes go back: a longer run of
   continuation bytes is no sequence, and going back over it could leave nothing; fuzz_snapshot_names). */
static void cut_stem(char *stem, size_t max)
{
    size_t n = strlen(stem);
    if (n <= max)
        return;
    n = max;
    for (int back = 0; back < 3 && n > 0 && utf8_continuation(stem[n]); back++)
        n--;
    if (n == 0 || utf8_continuation(stem[n]))
        n = max;
    stem[n] = '\0';
}

/* Records key (a stem, lower-cased) as tensor's; the slot is where find_slot put it. */
static rd_status claim(rd_stem_set *s, stem_slot **slot, const char *key, const char *tensor, rd_error *err)
{
    if ((s->n + 1) * 2 > s->cap) {
        if (!grow(s))
            return rd_errorf(err, RD_E_NOMEM, "out of memory");
        *slot = find_slot(s, key);
    }
    char *kcopy = strdup(key), *tcopy = strdup(tensor);
    if (!kcopy || !tcopy) {
        free(kcopy);
        free(tcopy);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    (*slot)->key = kcopy;
    (*slot)->tensor = tcopy;
    (*slot)->next = 2;
    s->n++;
    return RD_OK;
}

rd_status rd_stem_set_take(rd_stem_set *s, const char *tensor, char *buf, size_t len, rd_error *err)
{
    char base[RD_SNAPSHOT_STEM_MAX * 2 + 8], cand[sizeof base + 16], key[sizeof cand];
    if (len < RD_SNAPSHOT_STEM_MAX + 16)
        return rd_errorf(err, RD_E_INVAL, "rd_stem_set_take: a buffer of %zu bytes is too small", len);
    rd_snapshot_file_stem(tensor, base, sizeof base);
    cut_stem(base, RD_SNAPSHOT_STEM_MAX);
    snprintf(key, sizeof key, "%s", base);
    lower_ascii(key);
    stem_slot *slot = find_slot(s, key);
    if (!slot->key) {
        rd_status st = claim(s, &slot, key, tensor, err);
        if (st == RD_OK)
            snprintf(buf, len, "%s", base);
        return st;
    }
    /* taken: the suffixes from where the last clash of this stem stopped (no rescan from ~2) */
    for (unsigned k = slot->next; k <= MAX_SUFFIX; k++) {
        snprintf(cand, sizeof cand, "%s~%u", base, k);
        snprintf(key, sizeof key, "%s", cand);
        lower_ascii(key);
        stem_slot *c = find_slot(s, key);
        if (c->key)
            continue;
        rd_status st = claim(s, &c, key, tensor, err);
        if (st != RD_OK)
            return st;
        snprintf(key, sizeof key, "%s", base); /* the table may have moved: find the base again */
        lower_ascii(key);
        find_slot(s, key)->next = k + 1;
        snprintf(buf, len, "%s", cand);
        return RD_OK;
    }
    return rd_errorf(err, RD_E_LIMIT, "tensor '%s': more than %d tensors share the file stem '%s'", tensor, MAX_SUFFIX,
                     base);
}
