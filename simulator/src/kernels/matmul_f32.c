/*
 * matmul_f32.c: batched float products over the pool (contract in matmul_f32.h).
 *
 * Tasks: (batch element, block of rows, block of columns) of Y. A product with fewer rows than two
 * micro-tiles (a Gemm of batch 1 on a fully connected layer) runs transposed, Y^T = B^T A^T, so that the
 * weights are read in place as the rows of the left operand; each task then fills a block of Y's columns
 * through a small transposed tile.
 */
#include "matmul_f32.h"

#include <string.h>

#define MM_ROWS 96  /* rows of Y (or of Y^T) per task */
#define MM_COLS 256 /* columns of Y per task */

static size_t align64(size_t v)
{
    return (v + 63) & ~(size_t)63;
}

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

static bool transposed(const mm_f32 *p)
{
    return p->m < 2 * SGEMM_MR && p->n > p->m;
}

size_t mm_f32_scratch(const mm_f32 *p)
{
    if (transposed(p))
        return align64((size_t)(MM_ROWS * p->m) * sizeof(float)) + align64(sgemm_f32_work_bytes(p->k, p->m));
    return align64(sgemm_f32_work_bytes(p->k, min64(p->n, MM_COLS)));
}

typedef struct mm_job {
    const mm_f32 *p;
    char *scratch;
    size_t per_worker;
    int64_t row_blocks, col_blocks;
} mm_job;

/* The value an element's chain starts from, and what follows it (alpha != 1). */
static float init_of(const mm_f32 *p, int64_t i, int64_t j)
{
    return p->c && p->alpha == 1.0f ? p->beta * p->c[i * p->c_rs + j * p->c_cs] : 0.0f;
}

static float final_of(const mm_f32 *p, float acc, int64_t i, int64_t j)
{
    if (p->alpha == 1.0f)
        return acc;
    const float v = p->alpha * acc;
    return p->c ? v + p->beta * p->c[i * p->c_rs + j * p->c_cs] : v;
}

static sgemm_mat offset(sgemm_mat v, const int64_t *off, int64_t bi)
{
    if (off)
        v.data += off[bi];
    return v;
}

static void direct_task(void *arg, int64_t task, int worker)
{
    const mm_job *j = arg;
    const mm_f32 *p = j->p;
    const int64_t cb = task % j->col_blocks, rb = task / j->col_blocks % j->row_blocks;
    const int64_t bi = task / j->col_blocks / j->row_blocks;
    const int64_t r0 = rb * MM_ROWS, r1 = min64(r0 + MM_ROWS, p->m), c0 = cb * MM_COLS, c1 = min64(c0 + MM_COLS, p->n);
    float *y = p->y + bi * p->m * p->n;
    for (int64_t i = r0; i < r1; i++)
        for (int64_t c = c0; c < c1; c++)
            y[i * p->n + c] = init_of(p, i, c);
    sgemm_mat a = offset(p->a, p->a_off, bi), b = offset(p->b, p->b_off, bi);
    a.data += r0 * a.rs;
    b.data += c0 * b.cs;
    sim_sgemm_f32(r1 - r0, c1 - c0, p->k, &a, &b, y + r0 * p->n + c0, p->n,
                  (float *)(void *)(j->scratch ? j->scratch + (size_t)worker * j->per_worker : NULL), NULL);
    if (p->alpha != 1.0f)
        for (int64_t i = r0; i < r1; i++)
            for (int64_t c = c0; c < c1; c++)
                y[i * p->n + c] = final_of(p, y[i * p->n + c], i, c);
}

/* Y^T rows [r0, r1) (columns of Y) for all m rows of Y: T = B^T A^T in a tile, then copied into Y. */
static void transposed_task(void *arg, int64_t task, int worker)
{
    const mm_job *j = arg;
    const mm_f32 *p = j->p;
    const int64_t bi = task / j->row_blocks, r0 = task % j->row_blocks * MM_ROWS, r1 = min64(r0 + MM_ROWS, p->n);
    char *s = j->scratch ? j->scratch + (size_t)worker * j->per_worker : NULL;
    float *t = (float *)(void *)s; /* t[jj * m + i] = Y[i][r0 + jj] */
    float *work = (float *)(void *)(s + align64((size_t)(MM_ROWS * p->m) * sizeof(float)));
    for (int64_t jj = 0; jj < r1 - r0; jj++)
        for (int64_t i = 0; i < p->m; i++)
            t[jj * p->m + i] = init_of(p, i, r0 + jj);
    const sgemm_mat a = offset(p->a, p->a_off, bi), b = offset(p->b, p->b_off, bi);
    /* left operand B^T (n x k): row j of it is column j of B; right operand A^T (k x m) */
    const sgemm_mat bt = {.data = b.data + r0 * b.cs, .rs = b.cs, .cs = b.rs};
    const sgemm_mat at = {.data = a.data, .rs = a.cs, .cs = a.rs};
    sim_sgemm_f32(r1 - r0, p->m, p->k, &bt, &at, t, p->m, work, NULL);
    float *y = p->y + bi * p->m * p->n;
    for (int64_t i = 0; i < p->m; i++)
        for (int64_t jj = 0; jj < r1 - r0; jj++)
            y[i * p->n + r0 + jj] = final_of(p, t[jj * p->m + i], i, r0 + jj);
}

void mm_f32_run(const mm_f32 *p, float *scratch, struct rd_pool *pool)
{
    if (p->m <= 0 || p->n <= 0 || p->n_batch <= 0)
        return;
    mm_job j = {.p = p, .scratch = (char *)scratch, .per_worker = mm_f32_scratch(p)};
    if (transposed(p)) {
        j.row_blocks = sim_blocks(p->n, MM_ROWS);
        sim_parallel(pool, p->n_batch * j.row_blocks, transposed_task, &j);
        return;
    }
    j.row_blocks = sim_blocks(p->m, MM_ROWS);
    j.col_blocks = sim_blocks(p->n, MM_COLS);
    sim_parallel(pool, p->n_batch * j.row_blocks * j.col_blocks, direct_task, &j);
}
