/*
 * conv_direct_f32.c: direct float convolution for depthwise and small-channel convs (contract in
 * conv_f32.h): no im2col, each output row is computed along its length, eight lanes at a time.
 *
 * For output channel m and output row oh, the taps are the (c, kh, kw) of W's order whose input row lies
 * inside the input; each tap reads the input row at column ow * stride + kw * dil - pad. The element is
 * fma(w_t, x_t, ...) over those taps in order, starting from the bias, and a tap whose column falls in the
 * padding is skipped. With AVX2+FMA the columns go eight lanes at a time, the edges through masks that skip
 * the padding taps lane by lane, and rows whose taps are all inside four at a time; the portable path takes
 * them one by one with fmaf: the same chain, so the bits do not depend on the path.
 *
 * A strided conv first splits its group's input rows by column phase (x[i * s + ph] stored at
 * [ph][i]) so that every tap reads a contiguous run.
 */
#include "conv_f32.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define DIRECT_HAVE_AVX2 1
#endif

typedef struct tap {
    const float *row; /* input row (its column phase when strided): row[ow + off] is the input of column ow */
    int64_t off;
    float w;
    int64_t lo, hi; /* output columns whose input lies inside the row */
} tap;

/* Geometry of a 1-D or 2-D conv as 2-D. */
typedef struct geom2 {
    int64_t ih, iw, oh, ow, kh, kw, sh, sw, dh, dw, ph, pw;
    int64_t cg, mg, in_plane, out_plane;
    int64_t phase_len; /* elements of one phase of a row (iw split by sw) */
} geom2;

static geom2 geom2_of(const conv_geom *g)
{
    const bool two = g->nsp == 2;
    const int l = g->nsp - 1;
    geom2 q = {.ih = two ? g->in[0] : 1,
               .iw = g->in[l],
               .oh = two ? g->out[0] : 1,
               .ow = g->out[l],
               .kh = two ? g->k[0] : 1,
               .kw = g->k[l],
               .sh = two ? g->stride[0] : 1,
               .sw = g->stride[l],
               .dh = two ? g->dil[0] : 1,
               .dw = g->dil[l],
               .ph = two ? g->pad[0] : 0,
               .pw = g->pad[l]};
    q.cg = g->in_c / g->group;
    q.mg = g->out_c / g->group;
    q.in_plane = q.ih * q.iw;
    q.out_plane = q.oh * q.ow;
    q.phase_len = (q.iw + q.sw - 1) / q.sw;
    return q;
}

bool conv_direct_applies(const conv_geom *g)
{
    if (g->nsp > 2 || conv_is_pointwise(g))
        return false;
    const int64_t cg = g->in_c / g->group;
    /* the phase split writes stride x ceil(width / stride) values a row: a column stride wider than the
       input (a hostile model's, found by fuzz_tflite) would make it write and zero mostly nothing for
       seconds; im2col takes those, at the cost of the few outputs they have */
    const int l = g->nsp > 0 ? g->nsp - 1 : 0;
    if (g->nsp > 0 && g->stride[l] > g->in[l])
        return false;
    return cg >= 1 && cg * conv_prod(g->k, g->nsp) <= CONV_DIRECT_MAX_TAPS;
}

void conv_direct_plan(const conv_geom *g, conv_plan *out)
{
    const int64_t out_plane = conv_prod(g->out, g->nsp), per = out_plane > 0 ? CONV_DIRECT_ELEMS / out_plane : 1;
    const int64_t least = out_plane > 0 ? CONV_DIRECT_LEAST / out_plane : 1;
    out->kind = CONV_KIND_DEPTHWISE;
    out->ch_block = sim_even_block(g->out_c, per, sim_more_blocks(g->batch), least, 1);
    out->tasks = g->batch * sim_blocks(g->out_c, out->ch_block);
    out->scratch = (conv_direct_scratch(g) + 63) & ~(size_t)63; /* 64-byte aligned per worker */
    /* a small-channel strided conv of one group (a network's first layer, 3 channels): every task would split
       the same whole input, 32 times over for 32 tasks; split once per batch element instead */
    const int l = g->nsp > 0 ? g->nsp - 1 : 0;
    out->presplit = g->group == 1 && g->nsp > 0 && g->stride[l] > 1 && out->tasks > g->batch;
}

size_t conv_direct_scratch(const conv_geom *g)
{
    const geom2 q = geom2_of(g);
    if (q.sw == 1)
        return 0;
    return (size_t)(q.cg * q.ih * q.sw * q.phase_len) * sizeof(float);
}

/* Rows of cg channels split by column phase: dst[((c * ih + r) * sw + ph) * L + i] = x[c][r][i * sw + ph]. */
static void split_phases(const geom2 *q, const float *xg, float *dst)
{
    for (int64_t cr = 0; cr < q->cg * q->ih; cr++) {
        const float *src = xg + cr * q->iw;
        float *d = dst + cr * q->sw * q->phase_len;
        for (int64_t ph = 0; ph < q->sw; ph++) {
            float *dp = d + ph * q->phase_len;
            int64_t i = 0;
            for (int64_t col = ph; col < q->iw; col += q->sw)
                dp[i++] = src[col];
            for (; i < q->phase_len; i++)
                dp[i] = 0.0f; /* never read: the tap ranges stop at the input's edge */
        }
    }
}

#ifdef DIRECT_HAVE_AVX2
/* split_phases for stride 2: eight even and eight odd columns per two loads. */
__attribute__((target("avx2"))) static void split_phases2_avx2(const geom2 *q, const float *xg, float *dst)
{
    const int64_t pairs = q->iw / 2;
    for (int64_t cr = 0; cr < q->cg * q->ih; cr++) {
        const float *src = xg + cr * q->iw;
        float *even = dst + cr * 2 * q->phase_len, *odd = even + q->phase_len;
        int64_t i = 0;
        for (; i + 8 <= pairs; i += 8) {
            const __m256 a = _mm256_loadu_ps(src + 2 * i), b = _mm256_loadu_ps(src + 2 * i + 8);
            const __m256 e = _mm256_shuffle_ps(a, b, 0x88), o = _mm256_shuffle_ps(a, b, 0xdd);
            _mm256_storeu_ps(even + i, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), 0xd8)));
            _mm256_storeu_ps(odd + i, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(o), 0xd8)));
        }
        for (; 2 * i < q->iw; i++) {
            even[i] = src[2 * i];
            odd[i] = 2 * i + 1 < q->iw ? src[2 * i + 1] : 0.0f;
        }
    }
}
#endif

/* Where each kernel column kw reads: output columns [lo, hi) inside the input, at phase row + off. */
typedef struct col_info {
    int64_t lo, hi, off, phase;
} col_info;

static void col_infos(const geom2 *q, col_info *ci)
{
    for (int64_t kw = 0; kw < q->kw; kw++) {
        const int64_t koff = kw * q->dw - q->pw;
        int64_t lo = koff >= 0 ? 0 : (-koff + q->sw - 1) / q->sw;
        int64_t hi = q->iw - koff <= 0 ? 0 : (q->iw - koff - 1) / q->sw + 1;
        if (hi > q->ow)
            hi = q->ow;
        if (lo > hi)
            lo = hi;
        /* input column ow * sw + koff = (ow + off) * sw + phase, off = floor(koff / sw) */
        const int64_t phase = ((koff % q->sw) + q->sw) % q->sw;
        ci[kw] = (col_info){.lo = lo, .hi = hi, .off = (koff - phase) / q->sw, .phase = phase};
    }
}

/* The taps of output row oh of channel m (weights wm), inputs of its group at xg (phase-split when strided). */
static int row_taps(const geom2 *q, const col_info *ci, const float *xg, const float *wm, int64_t oh, tap *taps)
{
    int nt = 0;
    const int64_t row_stride = q->sw == 1 ? q->iw : q->sw * q->phase_len;
    for (int64_t c = 0; c < q->cg; c++) {
        for (int64_t kh = 0; kh < q->kh; kh++) {
            const int64_t ih = oh * q->sh + kh * q->dh - q->ph;
            if (ih < 0 || ih >= q->ih)
                continue;
            const float *row = xg + (c * q->ih + ih) * row_stride;
            const float *wr = wm + (c * q->kh + kh) * q->kw;
            for (int64_t kw = 0; kw < q->kw; kw++)
                taps[nt++] = (tap){.row = row + ci[kw].phase * q->phase_len,
                                   .off = ci[kw].off,
                                   .w = wr[kw],
                                   .lo = ci[kw].lo,
                                   .hi = ci[kw].hi};
        }
    }
    return nt;
}

/* Output columns [lo, hi) where every tap is inside, ow_n columns in all; the rest skip padding taps. */
typedef void (*row_fn)(const tap *taps, int nt, float bias, int64_t lo, int64_t hi, int64_t ow_n, float *yr);

static void row_portable(const tap *taps, int nt, float bias, int64_t lo, int64_t hi, int64_t ow_n, float *yr)
{
    for (int64_t ow = 0; ow < ow_n; ow++) {
        float acc = bias;
        const bool inside = ow >= lo && ow < hi;
        for (int t = 0; t < nt; t++)
            if (inside || (ow >= taps[t].lo && ow < taps[t].hi))
                acc = fmaf(taps[t].w, taps[t].row[ow + taps[t].off], acc);
        yr[ow] = acc;
    }
}

#ifdef DIRECT_HAVE_AVX2
/* Whether every kernel row of output row oh reads inside the input (so do the rows between such rows). */
static bool row_inside(const geom2 *q, int64_t oh)
{
    const int64_t top = oh * q->sh - q->ph;
    return top >= 0 && top + (q->kh - 1) * q->dh < q->ih;
}

/* The input of tap t for output column ow, delta floats further (ow + off may lie before the row: only masked
   loads read there, and the address is formed without pointer arithmetic outside the array). */
static inline const float *tap_at(const tap *t, int64_t ow, int64_t delta)
{
    return (const float *)((uintptr_t)t->row + (uintptr_t)((ow + t->off + delta) * (int64_t)sizeof(float)));
}

/*
 * R output rows at once (R = 1, or 4 rows with every tap inside: the same weights in the same order, row r
 * reading r * delta floats further), eight columns a lane each. Columns where every tap is inside go 32 (one
 * row) or 16 (four rows) at a time with plain loads; the blocks at the edges go through masks: a lane whose
 * tap falls in the padding keeps its accumulator (the tap is skipped, as the contract says) and its load is
 * masked off. Each lane is its element's one chain, in tap order, from the bias: the bits of row_portable.
 * Four rows give eight independent chains, where one row of a small map had one.
 */
__attribute__((target("avx2,fma"), always_inline)) static inline void rows_avx2(const tap *taps, const int R,
                                                                                int64_t delta, int nt, float bias,
                                                                                int64_t lo, int64_t hi, int64_t ow_n,
                                                                                float *y0, int64_t y_stride)
{
    const __m256 b = _mm256_set1_ps(bias);
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const int V = R == 1 ? 4 : 2; /* vectors per row in a wide block: four or eight accumulators in all */
    for (int64_t ow = 0; ow < ow_n;) {
        if (ow >= lo && ow + 8 * V <= hi) {
            __m256 a[4][4];
            for (int r = 0; r < R; r++)
                for (int v = 0; v < V; v++)
                    a[r][v] = b;
            for (int t = 0; t < nt; t++) {
                const __m256 w = _mm256_set1_ps(taps[t].w);
                const float *x0 = taps[t].row + (ow + taps[t].off);
                for (int r = 0; r < R; r++)
                    for (int v = 0; v < V; v++)
                        a[r][v] = _mm256_fmadd_ps(w, _mm256_loadu_ps(x0 + r * delta + 8 * v), a[r][v]);
            }
            for (int r = 0; r < R; r++)
                for (int v = 0; v < V; v++)
                    _mm256_storeu_ps(y0 + r * y_stride + ow + 8 * v, a[r][v]);
            ow += 8 * V;
            continue;
        }
        if (ow >= lo && ow + 8 <= hi) {
            __m256 a[4] = {b, b, b, b};
            for (int t = 0; t < nt; t++) {
                const __m256 w = _mm256_set1_ps(taps[t].w);
                const float *x0 = taps[t].row + (ow + taps[t].off);
                for (int r = 0; r < R; r++)
                    a[r] = _mm256_fmadd_ps(w, _mm256_loadu_ps(x0 + r * delta), a[r]);
            }
            for (int r = 0; r < R; r++)
                _mm256_storeu_ps(y0 + r * y_stride + ow, a[r]);
            ow += 8;
            continue;
        }
        const __m256i col = _mm256_add_epi32(lane, _mm256_set1_epi32((int)ow));
        const __m256i in_row = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)ow_n), col);
        __m256 a[4] = {b, b, b, b};
        for (int t = 0; t < nt; t++) {
            /* lanes whose column this tap reads inside the input: lo <= col < hi */
            const __m256i inside = _mm256_andnot_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32((int)taps[t].lo), col),
                                                       _mm256_cmpgt_epi32(_mm256_set1_epi32((int)taps[t].hi), col));
            const __m256i m = _mm256_and_si256(inside, in_row);
            const __m256 w = _mm256_set1_ps(taps[t].w), mf = _mm256_castsi256_ps(m);
            for (int r = 0; r < R; r++) {
                const __m256 x = _mm256_maskload_ps(tap_at(&taps[t], ow, r * delta), m);
                a[r] = _mm256_blendv_ps(a[r], _mm256_fmadd_ps(w, x, a[r]), mf);
            }
        }
        for (int r = 0; r < R; r++)
            _mm256_maskstore_ps(y0 + r * y_stride + ow, in_row, a[r]);
        ow += 8;
    }
}

__attribute__((target("avx2,fma"))) static void row_avx2(const tap *taps, int nt, float bias, int64_t lo, int64_t hi,
                                                         int64_t ow_n, float *yr)
{
    rows_avx2(taps, 1, 0, nt, bias, lo, hi, ow_n, yr, 0);
}

/* Output rows oh .. oh + 3 from the taps of row oh (row r reads r * delta floats further). */
__attribute__((target("avx2,fma"))) static void rows4_avx2(const tap *taps, int64_t delta, int nt, float bias,
                                                           int64_t lo, int64_t hi, int64_t ow_n, float *y0,
                                                           int64_t y_stride)
{
    rows_avx2(taps, 4, delta, nt, bias, lo, hi, ow_n, y0, y_stride);
}

static bool cpu_has_avx2_fma(void)
{
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#endif

void conv_direct_presplit(const conv_geom *g, const float *x, int64_t n, float *dst)
{
    const geom2 q = geom2_of(g);
#ifdef DIRECT_HAVE_AVX2
    if (q.sw == 2 && cpu_has_avx2_fma()) {
        split_phases2_avx2(&q, x + n * g->in_c * q.in_plane, dst);
        return;
    }
#endif
    split_phases(&q, x + n * g->in_c * q.in_plane, dst);
}

void conv_direct_f32(const conv_geom *g, const float *x, const float *w, const float *b, float *y, int64_t n,
                     int64_t m0, int64_t m1, float *scratch, const float *presplit)
{
    const geom2 q = geom2_of(g);
    const int64_t ksz = q.kh * q.kw;
    row_fn row = row_portable;
    void (*split)(const geom2 *, const float *, float *) = split_phases;
#ifdef DIRECT_HAVE_AVX2
    const bool four = cpu_has_avx2_fma() && q.ow < INT32_MAX / 2;     /* column indices in 32-bit lanes */
    const int64_t row_stride = q.sw == 1 ? q.iw : q.sw * q.phase_len; /* as row_taps */
    if (four) {
        row = row_avx2;
        if (q.sw == 2)
            split = split_phases2_avx2;
    }
#endif
    tap taps[CONV_DIRECT_MAX_TAPS];
    col_info ci[CONV_DIRECT_MAX_TAPS];
    col_infos(&q, ci);
    int64_t split_grp = -1;
    for (int64_t m = m0; m < m1; m++) {
        const int64_t grp = m / q.mg;
        const float *xg = x + (n * g->in_c + grp * q.cg) * q.in_plane;
        if (q.sw > 1 && presplit) { /* one group, split before the tasks */
            xg = presplit;
        } else if (q.sw > 1) { /* the group's input split by phase once for all its channels in this range */
            if (grp != split_grp)
                split(&q, xg, scratch);
            split_grp = grp;
            xg = scratch;
        }
        const float *wm = w + m * q.cg * ksz;
        const float bias = b ? b[m] : 0.0f;
        float *ym = y + (n * g->out_c + m) * q.out_plane;
        for (int64_t oh = 0; oh < q.oh;) {
            const int nt = row_taps(&q, ci, xg, wm, oh, taps);
            int64_t lo = 0, hi = q.ow;
            for (int t = 0; t < nt; t++) {
                lo = taps[t].lo > lo ? taps[t].lo : lo;
                hi = taps[t].hi < hi ? taps[t].hi : hi;
            }
            if (lo > hi)
                lo = hi;
#ifdef DIRECT_HAVE_AVX2
            /* four rows with every tap inside: the same taps, each row's inputs sh rows further down (lo and hi
               depend on columns only) */
            if (four && nt == q.cg * ksz && oh + 4 <= q.oh && row_inside(&q, oh + 3)) {
                rows4_avx2(taps, q.sh * row_stride, nt, bias, lo, hi, q.ow, ym + oh * q.ow, q.ow);
                oh += 4;
                continue;
            }
#endif
            row(taps, nt, bias, lo, hi, q.ow, ym + oh * q.ow);
            oh++;
        }
    }
}
