/*
 * name_index.c: the model's value-name hash table (open addressing, linear probing).
 *
 * Every value of a model has a unique name; sim_model_find and sim_model_intern look names up here
 * instead of scanning the value array, so loading a graph of N nodes costs O(N) lookups of O(1) each
 * (a 100k-node chain took minutes with the scan: docs/benchmarks.md).
 *
 * Invariants: the table holds exactly the values 0..n_values-1 of its model; a slot is 0 (empty) or
 * (hash << 32) | (value index + 1); the capacity is a power of two at least twice the entry count, so
 * probes stay short and always end at an empty slot. Names come from hostile files, so the hash is
 * SipHash-1-3 under a key drawn from getrandom() once per table: a file cannot be crafted to make every
 * name collide. Lookups never depend on the key's value, so results stay identical from run to run.
 */
#include "internal.h"

#include <sys/random.h>
#include <time.h>

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

#define SIP_ROUND(v0, v1, v2, v3) \
    do {                          \
        v0 += v1;                 \
        v1 = ROTL(v1, 13);        \
        v1 ^= v0;                 \
        v0 = ROTL(v0, 32);        \
        v2 += v3;                 \
        v3 = ROTL(v3, 16);        \
        v3 ^= v2;                 \
        v0 += v3;                 \
        v3 = ROTL(v3, 21);        \
        v3 ^= v0;                 \
        v2 += v1;                 \
        v1 = ROTL(v1, 17);        \
        v1 ^= v2;                 \
        v2 = ROTL(v2, 32);        \
    } while (0)

/* SipHash-1-3 (Aumasson and Bernstein; the variant Python and Rust use for their dict keys) of s. */
static uint64_t siphash13(const uint64_t key[2], const char *s, size_t len)
{
    uint64_t v0 = 0x736f6d6570736575ULL ^ key[0], v1 = 0x646f72616e646f6dULL ^ key[1];
    uint64_t v2 = 0x6c7967656e657261ULL ^ key[0], v3 = 0x7465646279746573ULL ^ key[1];
    const unsigned char *p = (const unsigned char *)s;
    size_t full = len & ~(size_t)7;
    for (size_t i = 0; i < full; i += 8) {
        uint64_t m = 0;
        for (int b = 7; b >= 0; b--)
            m = (m << 8) | p[i + (size_t)b];
        v3 ^= m;
        SIP_ROUND(v0, v1, v2, v3);
        v0 ^= m;
    }
    uint64_t last = (uint64_t)(len & 0xff) << 56;
    for (size_t i = full; i < len; i++)
        last |= (uint64_t)p[i] << (8 * (i - full));
    v3 ^= last;
    SIP_ROUND(v0, v1, v2, v3);
    v0 ^= last;
    v2 ^= 0xff;
    for (int r = 0; r < 3; r++)
        SIP_ROUND(v0, v1, v2, v3);
    return v0 ^ v1 ^ v2 ^ v3;
}

/* A fresh random key; without getrandom (a seccomp'd sandbox) the clock and an address still vary it. */
static void draw_key(uint64_t key[2])
{
    if (getrandom(key, 2 * sizeof key[0], GRND_NONBLOCK) == (ssize_t)(2 * sizeof key[0]))
        return;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    key[0] = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ULL ^ (uint64_t)(uintptr_t)key;
    key[1] = (uint64_t)ts.tv_sec * 0xc2b2ae3d27d4eb4fULL ^ (uint64_t)(uintptr_t)&draw_key;
}

static uint32_t name_hash(const sim_name_index *ix, const char *name)
{
    return (uint32_t)siphash13(ix->key, name, strlen(name));
}

int sim_name_index_find(const sim_name_index *ix, const sim_value *values, const char *name)
{
    if (!ix->slots || !name)
        return -1;
    uint32_t h = name_hash(ix, name);
    for (size_t i = h & ix->mask;; i = (i + 1) & ix->mask) {
        uint64_t s = ix->slots[i];
        if (!s)
            return -1;
        if ((uint32_t)(s >> 32) == h) {
            int v = (int)(uint32_t)s - 1;
            if (strcmp(values[v].name, name) == 0)
                return v;
        }
    }
}

/* Places an entry whose name is known to be absent. */
static void place(uint64_t *slots, size_t mask, uint32_t h, int value)
{
    size_t i = h & mask;
    while (slots[i])
        i = (i + 1) & mask;
    slots[i] = (uint64_t)h << 32 | (uint32_t)(value + 1);
}

bool sim_name_index_add(sim_name_index *ix, const sim_value *values, int value)
{
    if (!ix->slots) {
        draw_key(ix->key);
        ix->mask = 63;
        ix->slots = calloc(ix->mask + 1, sizeof *ix->slots);
        if (!ix->slots)
            return false;
    }
    if ((size_t)value + 1 > (ix->mask + 1) / 2) { /* keep the load at or below one half */
        size_t cap = (ix->mask + 1) * 2;
        uint64_t *grown = sim_calloc_array(cap, sizeof *grown);
        if (!grown)
            return false;
        for (size_t i = 0; i <= ix->mask; i++)
            if (ix->slots[i])
                place(grown, cap - 1, (uint32_t)(ix->slots[i] >> 32), (int)(uint32_t)ix->slots[i] - 1);
        free(ix->slots);
        ix->slots = grown;
        ix->mask = cap - 1;
    }
    place(ix->slots, ix->mask, name_hash(ix, values[value].name), value);
    return true;
}

void sim_name_index_fini(sim_name_index *ix)
{
    free(ix->slots);
    memset(ix, 0, sizeof *ix);
}
