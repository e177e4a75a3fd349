/*
 * run_buffers.c: the memory a caller keeps from one run to the next (rd_run_buffers, simulator.h).
 *
 * Without it every run mallocs each layer's output and the kernels' scratch and frees them at the end;
 * glibc hands large blocks back to the kernel (munmap, heap trimming), so the next run faults the same pages
 * in again, zero-filled. Here freed blocks are kept by size and taken again by an allocation of exactly that
 * size: the shapes of a model's tensors are the same from run to run, so from the second run on nothing is
 * allocated. The bound keeps memory honest: the blocks held never exceed the most one run has taken in all
 * (so a caller that changes models or shapes does not hoard), and a block that does not fit is freed.
 */
#include "internal.h"

#define BUFFERS_MAX_BLOCKS 4096 /* beyond this the search per allocation would cost more than a page fault */

typedef struct kept_block {
    void *p;
    size_t bytes;
} kept_block;

struct rd_run_buffers {
    kept_block *blocks; /* oldest first */
    size_t n, cap_blocks;
    size_t held;      /* bytes in blocks[] */
    size_t bound;     /* held never exceeds it (or run_bytes, when larger): the largest run_bytes so far */
    size_t run_bytes; /* bytes taken in this run */
    void *scratch;    /* the kernels' scratch between runs */
    size_t scratch_cap;
};

rd_status rd_run_buffers_create(rd_run_buffers **out, rd_error *err)
{
    *out = calloc(1, sizeof **out);
    return *out ? RD_OK : rd_errorf(err, RD_E_NOMEM, "out of memory for the run buffers");
}

void rd_run_buffers_destroy(rd_run_buffers *b)
{
    if (!b)
        return;
    for (size_t i = 0; i < b->n; i++)
        free(b->blocks[i].p);
    free(b->blocks);
    free(b->scratch);
    free(b);
}

size_t rd_run_buffers_bytes(const rd_run_buffers *b)
{
    return b ? b->held + b->scratch_cap : 0;
}

static size_t current_bound(const rd_run_buffers *b)
{
    return b->bound > b->run_bytes ? b->bound : b->run_bytes;
}

/* Frees the oldest blocks until held fits `limit`. */
static void trim_to(rd_run_buffers *b, size_t limit)
{
    size_t drop = 0;
    while (drop < b->n && b->held > limit) {
        b->held -= b->blocks[drop].bytes;
        free(b->blocks[drop].p);
        drop++;
    }
    if (drop) {
        memmove(b->blocks, b->blocks + drop, (b->n - drop) * sizeof *b->blocks);
        b->n -= drop;
    }
}

void sim_buffers_begin_run(rd_run_buffers *b, sim_scratch *scratch)
{
    if (!b)
        return;
    b->run_bytes = 0;
    scratch->buf = b->scratch;
    scratch->cap = b->scratch_cap;
    scratch->buffers = b;
    b->scratch = NULL;
    b->scratch_cap = 0;
}

void sim_buffers_end_run(rd_run_buffers *b, sim_scratch *scratch)
{
    if (!b)
        return;
    free(b->scratch); /* none: begin_run lent it out */
    b->scratch = scratch->buf;
    b->scratch_cap = scratch->cap;
    *scratch = (sim_scratch){0};
    b->bound = current_bound(b);
    b->run_bytes = 0;
    trim_to(b, b->bound);
}

void *sim_buffers_take(rd_run_buffers *b, size_t bytes, bool zero)
{
    if (!b)
        return zero ? calloc(bytes, 1) : malloc(bytes);
    b->run_bytes += bytes;
    for (size_t i = b->n; i-- > 0;) { /* the most recently freed first: likelier in cache */
        if (b->blocks[i].bytes != bytes)
            continue;
        void *p = b->blocks[i].p;
        memmove(b->blocks + i, b->blocks + i + 1, (b->n - i - 1) * sizeof *b->blocks);
        b->n--;
        b->held -= bytes;
        return zero ? memset(p, 0, bytes) : p;
    }
    return zero ? calloc(bytes, 1) : malloc(bytes);
}

void sim_buffers_give(rd_run_buffers *b, void *block, size_t bytes)
{
    if (!block)
        return;
    if (!b || bytes == 0 || bytes > current_bound(b)) {
        free(block);
        return;
    }
    if (b->n == b->cap_blocks) {
        size_t want = b->cap_blocks ? 2 * b->cap_blocks : 64;
        kept_block *grown = want <= BUFFERS_MAX_BLOCKS ? realloc(b->blocks, want * sizeof *grown) : NULL;
        if (!grown) {
            free(block); /* full: keeping it is not worth a failure */
            return;
        }
        b->blocks = grown;
        b->cap_blocks = want;
    }
    b->blocks[b->n++] = (kept_block){block, bytes};
    b->held += bytes;
    trim_to(b, current_bound(b));
}
