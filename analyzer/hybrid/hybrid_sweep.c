/*
 * hybrid_sweep.c: the float16 sweep (accuracy --sweep, hybrid sweep; docs/hybrid.md): the output accuracy
 * with float16 on the first k int8 tensors in execution order (prefix) and on the rest (suffix), for k over
 * the whole model, and the block the error builds up in.
 *
 * Cost: a prefix step adds the candidates between two k to the float16 set, so prefix reuse resumes each
 * run at the first of them (docs/hybrid.md, "Speed"); the suffix steps, taken from the end backwards, do the
 * same. Each point is about half a run per sample on average; --sweep-points bounds the points.
 */
#include "hybrid.h"
#include "progress.h"

#include <math.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The share of the prefix [0,k) that the block must reach: 3/4 of what float16 everywhere gains. */
#define BLOCK_SHARE 0.75

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Measures float16 on candidates [a, b) (indices into cands). */
static rd_status measure_range(an_hyb_ctx *c, const an_hyb_cand *cands, size_t a, size_t b, const char **names,
                               an_hyb_score *out, rd_error *err)
{
    for (size_t i = a; i < b; i++)
        names[i - a] = cands[i].name;
    return an_hyb_measure(c, names, b - a, out, err);
}

/* The k measured: every k, or max_points spread evenly (first 0, last n). */
static size_t grid(size_t n, size_t max_points, int *ks)
{
    if (max_points == 0 || n + 1 <= max_points) {
        for (size_t k = 0; k <= n; k++)
            ks[k] = (int)k;
        return n + 1;
    }
    size_t m = 0;
    for (size_t j = 0; j < max_points; j++) {
        int k = (int)llround((double)j * (double)n / (double)(max_points - 1));
        if (m == 0 || ks[m - 1] != k)
            ks[m++] = k;
    }
    return m;
}

static double share(const double *cum, size_t a, size_t b, size_t n)
{
    return cum[n] > 0 ? (cum[b] - cum[a]) / cum[n] : NAN;
}

/* A window [a, b) of the block search with its score. */
typedef struct window {
    size_t a, b;
    an_hyb_score s;
} window;

static bool reaches(const an_hyb_score *s, double goal)
{
    return s->cos >= goal;
}

/*
 * Shrinks a window that reaches goal from one side by bisection, keeping what reaches it: from the end
 * (move_end) down to lo, or from the start up. w is updated; invariants: w reaches, the side beyond fails.
 */
static rd_status shrink(an_hyb_ctx *c, const an_hyb_cand *cands, const char **names, double goal, bool move_end,
                        size_t limit, window *w, rd_error *err)
{
    /* move_end: the end moves in (limit, w->b]; otherwise the start moves in [w->a, limit) */
    size_t good = move_end ? w->b : w->a, bad = limit;
    rd_status st = RD_OK;
    while ((move_end ? good - bad : bad - good) > 1 && st == RD_OK) {
        size_t mid = move_end ? bad + (good - bad) / 2 : good + (bad - good) / 2;
        an_hyb_score s;
        st = move_end ? measure_range(c, cands, w->a, mid, names, &s, err)
                      : measure_range(c, cands, mid, w->b, names, &s, err);
        if (st == RD_OK && reaches(&s, goal)) {
            good = mid;
            if (move_end)
                w->b = mid;
            else
                w->a = mid;
            w->s = s;
            an_hyb_keep(c);
        } else {
            bad = mid;
        }
    }
    return st;
}

/*
 * The block: the prefix and the suffix that first reach the goal, each narrowed from both sides by
 * bisection; the one with fewer MACs (then fewer tensors) wins.
 */
static rd_status find_block(an_hyb_ctx *c, const an_hyb_cand *cands, size_t n, const double *cum, const int *ks,
                            const rd_sweep_point *pts, size_t m, const char **names, rd_sweep *out, rd_error *err)
{
    double lo = pts[0].prefix_cos, hi = pts[m - 1].prefix_cos;
    if (!(hi - lo > 1e-6))
        return RD_OK; /* float16 everywhere gains nothing: no block */
    double goal = lo + BLOCK_SHARE * (hi - lo);
    size_t jp = m - 1, js = 0;
    for (size_t j = 0; j < m; j++)
        if (pts[j].prefix_cos >= goal) {
            jp = j;
            break;
        }
    for (size_t j = m; j-- > 0;)
        if (pts[j].suffix_cos >= goal) {
            js = j;
            break;
        }
    window p = {.a = 0, .b = (size_t)ks[jp]}, s = {.a = (size_t)ks[js], .b = n};
    p.s.cos = pts[jp].prefix_cos;
    p.s.sqnr_db = pts[jp].prefix_sqnr_db;
    s.s.cos = pts[js].suffix_cos;
    s.s.sqnr_db = pts[js].suffix_sqnr_db;
    /* the grid's neighbours bound the bisection of the side the grid stepped over */
    size_t p_limit = jp > 0 ? (size_t)ks[jp - 1] : 0, s_limit = js + 1 < m ? (size_t)ks[js + 1] : n;
    rd_status st = shrink(c, cands, names, goal, true, p_limit, &p, err);
    if (st == RD_OK)
        st = shrink(c, cands, names, goal, false, p.b, &p, err);
    if (st == RD_OK)
        st = shrink(c, cands, names, goal, false, s_limit, &s, err);
    if (st == RD_OK)
        st = shrink(c, cands, names, goal, true, s.a, &s, err);
    if (st != RD_OK)
        return st;
    double mp = cum[p.b] - cum[p.a], ms = cum[s.b] - cum[s.a];
    const window *w = ms < mp || (ms == mp && s.b - s.a < p.b - p.a) ? &s : &p;
    out->block_start = (int)w->a;
    out->block_end = (int)w->b;
    out->block_first_layer = cands[w->a].position;
    out->block_last_layer = cands[w->b - 1].position;
    out->block_cos = w->s.cos;
    out->block_sqnr_db = w->s.sqnr_db;
    out->block_mac_share = share(cum, w->a, w->b, n);
    return RD_OK;
}

rd_status an_hyb_sweep(an_hyb_ctx *c, const an_hyb_cand *cands, size_t n, const an_hyb_sweep_opts *o, rd_sweep *out,
                       rd_error *err)
{
    memset(out, 0, sizeof *out);
    if (n == 0)
        return RD_OK;
    double t0 = now_s();
    size_t runs0 = c->n_runs;
    int *ks = calloc(n + 2, sizeof *ks);
    double *cum = calloc(n + 2, sizeof *cum);
    const char **names = calloc(n + 1, sizeof *names);
    rd_sweep_point *pts = calloc(n + 2, sizeof *pts);
    out->objective = strdup(an_hyb_objective_name(c->objective));
    if (!ks || !cum || !names || !pts || !out->objective) {
        free(ks), free(cum), free(names), free(pts);
        free(out->objective);
        out->objective = NULL;
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        cum[i + 1] = cum[i] + cands[i].macs;
    size_t m = grid(n, o->max_points, ks);
    rd_status st = RD_OK;
    an_progress pr;
    an_progress_init(&pr, o->progress, o->progress && isatty(fileno(o->progress)), "sweep");
    size_t steps = 2 * m; /* the prefix points, then the suffix points */
    /* prefix: k ascending, each set the baseline of the next */
    for (size_t j = 0; j < m && st == RD_OK; j++) {
        size_t k = (size_t)ks[j];
        an_hyb_score s;
        st = measure_range(c, cands, 0, k, names, &s, err);
        an_hyb_keep(c);
        pts[j].k = (int)k;
        pts[j].layer = k < n ? cands[k].position : -1;
        pts[j].prefix_cos = s.cos;
        pts[j].prefix_sqnr_db = s.sqnr_db;
        pts[j].prefix_mac_share = share(cum, 0, k, n);
        pts[j].suffix_mac_share = share(cum, k, n, n);
        an_progress_update(&pr, j + 1, steps);
    }
    /* suffix: k descending from the end; the two ends are the prefix's (int8, float16 everywhere) */
    for (size_t j = m; j-- > 0 && st == RD_OK;) {
        size_t k = (size_t)ks[j];
        an_hyb_score s;
        if (k == n || k == 0) {
            const rd_sweep_point *same = &pts[k == n ? 0 : m - 1];
            s.cos = same->prefix_cos;
            s.sqnr_db = same->prefix_sqnr_db;
        } else {
            st = measure_range(c, cands, k, n, names, &s, err);
            an_hyb_keep(c);
        }
        pts[j].suffix_cos = s.cos;
        pts[j].suffix_sqnr_db = s.sqnr_db;
        an_progress_update(&pr, 2 * m - j, steps);
    }
    an_progress_done(&pr);
    out->n_candidates = (int)n;
    out->points = pts;
    out->n_points = m;
    if (st == RD_OK)
        st = find_block(c, cands, n, cum, ks, pts, m, names, out, err);
    if (o->progress && st == RD_OK)
        fprintf(o->progress, "sweep: %zu points over %zu int8 tensors, %zu simulator runs in %.1f s\n", m, n,
                c->n_runs - runs0, now_s() - t0);
    free(ks);
    free(cum);
    free(names);
    return st;
}
