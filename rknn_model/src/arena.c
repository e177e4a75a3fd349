/*
 * arena.c: the allocation arena of a model or a log (one lifetime, one free), its growable arrays and
 * the warning list.
 */
#include "internal.h"

#include <stdarg.h>

#define CHUNK_BYTES ((size_t)64 << 10)

struct rk_chunk {
    rk_chunk *next;
    size_t cap, used;
    _Alignas(16) unsigned char data[];
};

void rk_arena_init(rk_arena *a, size_t budget)
{
    memset(a, 0, sizeof *a);
    a->budget = budget;
}

void rk_arena_fini(rk_arena *a)
{
    rk_chunk *c = a->head;
    while (c) {
        rk_chunk *next = c->next;
        free(c);
        c = next;
    }
    memset(a, 0, sizeof *a);
}

void *rk_alloc(rk_arena *a, size_t n, const char *what, rd_error *err)
{
    size_t need = (n + 15) & ~(size_t)15;
    if (need < n || (a->budget && (need > a->budget || a->used > a->budget - need))) {
        rd_errorf(err, RD_E_LIMIT, "%s: %zu more bytes of decoded data would pass the limit of %zu bytes", what, n,
                  a->budget);
        return NULL;
    }
    rk_chunk *c = a->head;
    if (!c || c->cap - c->used < need) {
        size_t cap = need > CHUNK_BYTES ? need : CHUNK_BYTES;
        c = malloc(sizeof *c + cap);
        if (!c) {
            rd_errorf(err, RD_E_NOMEM, "%s: out of memory (%zu bytes)", what, cap);
            return NULL;
        }
        c->cap = cap;
        c->used = 0;
        if (a->head && need > CHUNK_BYTES) { /* a big block: keep filling the current chunk afterwards */
            c->next = a->head->next;
            a->head->next = c;
        } else {
            c->next = a->head;
            a->head = c;
        }
    }
    void *p = c->data + c->used;
    c->used += need;
    a->used += need;
    memset(p, 0, need);
    return p;
}

void *rk_alloc_array(rk_arena *a, size_t n, size_t size, const char *what, rd_error *err)
{
    if (size && n > SIZE_MAX / size) {
        rd_errorf(err, RD_E_LIMIT, "%s: %zu elements of %zu bytes overflow", what, n, size);
        return NULL;
    }
    size_t bytes = n * size;
    return rk_alloc(a, bytes ? bytes : 1, what, err);
}

char *rk_strndup(rk_arena *a, const char *s, size_t n, rd_error *err)
{
    char *d = rk_alloc(a, n + 1, "string", err);
    if (d && n)
        memcpy(d, s, n);
    return d;
}

void *rk_vec_push(rk_arena *a, rk_vec *v, size_t max, const char *what, rd_error *err)
{
    if (v->n >= max) {
        rd_errorf(err, RD_E_LIMIT, "%s: more than %zu entries", what, max);
        return NULL;
    }
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 16;
        void *grown = rk_alloc_array(a, cap, v->size, what, err);
        if (!grown)
            return NULL;
        if (v->n)
            memcpy(grown, v->items, v->n * v->size);
        v->items = grown;
        v->cap = cap;
    }
    void *p = (char *)v->items + v->n++ * v->size;
    memset(p, 0, v->size);
    return p;
}

void rk_warn(rd_rknn_model *m, const char *fmt, ...)
{
    if (m->n_warnings == RK_MAX_WARNINGS) {
        m->n_warn_dropped++;
        return;
    }
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char *copy = rk_strndup(&m->arena, buf, strlen(buf), NULL);
    if (copy)
        m->warnings[m->n_warnings++] = copy;
    else
        m->n_warn_dropped++;
}
