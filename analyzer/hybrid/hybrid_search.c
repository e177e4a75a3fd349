/*
 * hybrid_search.c: the block search of `hybrid search` (docs/hybrid.md, "search").
 *
 * Why blocks: an int8 layer reading a float16 tensor quantizes it again, so float16 on one tensor inside a
 * run of int8 layers saves little; where the error builds up over many layers, only a window of consecutive
 * layers in float16 gains, and a search adding one tensor at a time never sees the gain. The search works on
 * the allowed candidates in execution order (the search space), with sets as flags over it:
 *
 *   1. singles: the candidates measured alone (an_hyb_rank) whose alone gain is real, added greedily while
 *      each cuts the deficit; enough for a few isolated lossy layers;
 *   2. windows (when the singles do not meet the target), on top of them: the shortest prefix that meets it
 *      (bisection, Polygraphy's `debug precision`), its start moved up by bisection; the shortest suffix, its
 *      end moved down; the cheaper window wins. Bisection keeps a meeting set on its "good" side, so the
 *      window always meets the target (float16 on everything does);
 *   3. removal: chunks of the set (halves, quarters, ... while a level removes something), then single
 *      tensors, costliest first, each dropped when the target still holds (a tensor that costs nothing is
 *      kept inside a window: dropping it saves nothing and splits the window);
 *   4. merging: a gap between two windows that costs nothing (e.g. an elementwise layer under --cost macs) is
 *      filled when the target still holds, sparing two int8/float16 conversions on the board;
 *   5. addition under --max-float: when the set is still larger than the cap, the best set measured within
 *      it grows by the ranked singles while they cut the deficit.
 *
 * Every measured set is cached by its flags, so the bisections never measure one set twice. A set that meets
 * the target becomes the prefix-reuse baseline (an_hyb_keep), so the next measurement resumes where it
 * differs from it.
 */
#include "hybrid.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A single's alone gain must cut this share of the all-int8 deficit to be tried, and each addition this share
   of the current one to be kept (smaller gains are noise next to what a window gains). */
#define SINGLE_MIN_CUT 0.05
/* Gaps merged: at most this many tensors, costing at most this share of the set. */
#define MERGE_MAX_GAP 8
#define MERGE_MAX_COST_SHARE 0.0

typedef struct cache_entry {
    uint64_t *bits; /* NULL: empty slot */
    uint64_t hash;
    an_hyb_score score;
} cache_entry;

typedef struct srch {
    an_hyb_ctx *c;
    const an_hyb_cand *cands;
    const an_hyb_search_opts *o;
    size_t *sp, m; /* the search space: allowed candidate indices in table order */
    const char **names;
    size_t words; /* uint64 words of a set's bits */
    uint64_t *tmp_bits;
    cache_entry *cache;
    size_t cache_cap, cache_n;
    size_t measurements, cached;
    bool *best_capped; /* the set with the lowest deficit measured within --max-float (phase 5) */
    double best_capped_deficit;
    an_hyb_score best_capped_score;
} srch;

static size_t count(const srch *s, const bool *f)
{
    size_t n = 0;
    for (size_t i = 0; i < s->m; i++)
        n += f[i];
    return n;
}

static double cost_of(const srch *s, const bool *f)
{
    double c = 0;
    for (size_t i = 0; i < s->m; i++)
        if (f[i])
            c += s->cands[s->sp[i]].cost;
    return c;
}

static uint64_t hash_bits(const uint64_t *b, size_t words)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < words; i++) {
        h ^= b[i];
        h *= 1099511628211ull;
        h ^= h >> 29;
    }
    return h;
}

static void to_bits(const srch *s, const bool *f, uint64_t *b)
{
    memset(b, 0, s->words * sizeof *b);
    for (size_t i = 0; i < s->m; i++)
        if (f[i])
            b[i / 64] |= (uint64_t)1 << (i % 64);
}

/* The slot of bits in the cache (an empty one when absent). */
static cache_entry *cache_slot(const srch *s, const uint64_t *bits, uint64_t h)
{
    size_t mask = s->cache_cap - 1;
    for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
        cache_entry *e = &s->cache[i];
        if (!e->bits || (e->hash == h && memcmp(e->bits, bits, s->words * sizeof *bits) == 0))
            return e;
    }
}

static rd_status cache_grow(srch *s, rd_error *err)
{
    size_t cap = s->cache_cap ? s->cache_cap * 2 : 256;
    cache_entry *old = s->cache, *fresh = calloc(cap, sizeof *fresh);
    if (!fresh)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    size_t old_cap = s->cache_cap;
    s->cache = fresh;
    s->cache_cap = cap;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].bits)
            *cache_slot(s, old[i].bits, old[i].hash) = old[i];
    free(old);
    return RD_OK;
}

/* Reports a measurement to the caller. */
static void report(srch *s, const char *phase, const char *what, const bool *f, const an_hyb_score *sc, bool kept,
                   bool cached)
{
    if (!s->o->on_step)
        return;
    an_hyb_step st = {.phase = phase,
                      .n_float = count(s, f),
                      .cost = cost_of(s, f),
                      .score = *sc,
                      .meets = an_hyb_meets(&s->o->target, sc),
                      .kept = kept,
                      .cached = cached};
    snprintf(st.what, sizeof st.what, "%s", what);
    s->o->on_step(s->o->user, &st);
}

/* The score of the set f: from the cache, or measured (and cached). */
static rd_status measure(srch *s, const bool *f, an_hyb_score *out, bool *was_cached, rd_error *err)
{
    to_bits(s, f, s->tmp_bits);
    uint64_t h = hash_bits(s->tmp_bits, s->words);
    cache_entry *e = s->cache_cap ? cache_slot(s, s->tmp_bits, h) : NULL;
    *was_cached = e && e->bits;
    if (*was_cached) {
        *out = e->score;
        s->cached++;
        return RD_OK;
    }
    size_t n = 0;
    for (size_t i = 0; i < s->m; i++)
        if (f[i])
            s->names[n++] = s->cands[s->sp[i]].name;
    rd_status st = an_hyb_measure(s->c, s->names, n, out, err);
    if (st != RD_OK)
        return st;
    s->measurements++;
    if (n <= s->o->max_float) {
        double d = an_hyb_deficit(&s->o->target, out);
        if (d < s->best_capped_deficit) {
            s->best_capped_deficit = d;
            s->best_capped_score = *out;
            memcpy(s->best_capped, f, s->m * sizeof *f);
        }
    }
    if ((s->cache_n + 1) * 2 > s->cache_cap && (st = cache_grow(s, err)) != RD_OK)
        return st;
    e = cache_slot(s, s->tmp_bits, h);
    e->bits = malloc(s->words * sizeof *e->bits);
    if (!e->bits)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    memcpy(e->bits, s->tmp_bits, s->words * sizeof *e->bits);
    e->hash = h;
    e->score = *out;
    s->cache_n++;
    return RD_OK;
}

/* Measures f and reports it; *ok tells whether it meets the target. kept_if_meets: a meeting set becomes the
   current one (the caller copies it) and the prefix-reuse baseline. */
static rd_status try_set(srch *s, const char *phase, const char *what, const bool *f, an_hyb_score *sc, bool *ok,
                         rd_error *err)
{
    bool hit;
    rd_status st = measure(s, f, sc, &hit, err);
    if (st != RD_OK)
        return st;
    *ok = an_hyb_meets(&s->o->target, sc);
    if (*ok && !hit)
        an_hyb_keep(s->c);
    report(s, phase, what, f, sc, *ok, hit);
    return RD_OK;
}

/* "first .. last (n)" of the window [a, b) of the search space. */
static void window_name(const srch *s, size_t a, size_t b, char *buf, size_t len)
{
    if (b <= a)
        snprintf(buf, len, "(empty)");
    else if (b - a == 1)
        snprintf(buf, len, "%.200s", s->cands[s->sp[a]].name);
    else
        snprintf(buf, len, "%.100s .. %.100s", s->cands[s->sp[a]].name, s->cands[s->sp[b - 1]].name);
}

/* f = base | [a, b) */
static void with_window(const srch *s, const bool *base, size_t a, size_t b, bool *f)
{
    for (size_t i = 0; i < s->m; i++)
        f[i] = base[i] || (i >= a && i < b);
}

/* ---- phase 1: singles ---- */

static rd_status singles(srch *s, const size_t *order, size_t n_cands, const an_hyb_score *base, bool *cur,
                         an_hyb_score *cur_score, rd_error *err)
{
    const an_hyb_target *t = &s->o->target;
    double d0 = an_hyb_deficit(t, base);
    size_t *pos = malloc((n_cands + 1) * sizeof *pos); /* candidate index -> search space index */
    bool *f = malloc((s->m + 1) * sizeof *f);
    if (!pos || !f) {
        free(pos);
        free(f);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < n_cands; i++)
        pos[i] = SIZE_MAX;
    for (size_t i = 0; i < s->m; i++)
        pos[s->sp[i]] = i;
    rd_status st = RD_OK;
    for (size_t r = 0; r < n_cands && st == RD_OK && !an_hyb_meets(t, cur_score); r++) {
        const an_hyb_cand *cd = &s->cands[order[r]];
        size_t i = pos[order[r]];
        if (i == SIZE_MAX || cur[i] || isnan(cd->alone_cos) ||
            !(an_hyb_deficit(t, &cd->alone) < d0 * (1 - SINGLE_MIN_CUT)))
            continue;
        if (count(s, cur) >= s->o->max_float)
            break;
        memcpy(f, cur, s->m * sizeof *f);
        f[i] = true;
        an_hyb_score sc;
        bool hit, keep;
        st = measure(s, f, &sc, &hit, err);
        if (st != RD_OK)
            break;
        keep = an_hyb_meets(t, &sc) || an_hyb_deficit(t, &sc) < an_hyb_deficit(t, cur_score) * (1 - SINGLE_MIN_CUT);
        if (keep) {
            memcpy(cur, f, s->m * sizeof *f);
            *cur_score = sc;
            if (!hit)
                an_hyb_keep(s->c);
        }
        report(s, "single", cd->name, f, &sc, keep, hit);
    }
    free(pos);
    free(f);
    return st;
}

/* ---- phase 2: windows ---- */

/*
 * Bisection for the side of a window: the window is [a, b) with one end fixed; the moving end runs between
 * good (meets) and bad (fails) until they are adjacent. Returns the good end.
 */
static rd_status bisect(srch *s, const char *phase, const bool *base, size_t fixed, bool moving_end, size_t good,
                        size_t bad, size_t *out, an_hyb_score *good_score, rd_error *err)
{
    bool *f = malloc((s->m + 1) * sizeof *f);
    if (!f)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    rd_status st = RD_OK;
    while ((good > bad ? good - bad : bad - good) > 1 && st == RD_OK) {
        size_t mid = (good + bad) / 2; /* strictly between: they are more than one apart */
        size_t a = moving_end ? fixed : mid, b = moving_end ? mid : fixed;
        with_window(s, base, a, b, f);
        char what[240];
        window_name(s, a, b, what, sizeof what);
        an_hyb_score sc;
        bool ok;
        st = try_set(s, phase, what, f, &sc, &ok, err);
        if (st == RD_OK && ok) {
            good = mid;
            *good_score = sc;
        } else {
            bad = mid;
        }
    }
    free(f);
    *out = good;
    return st;
}

/* The window on top of base: prefix then start, suffix then end; the cheaper one goes into cur. */
static rd_status windows(srch *s, bool *cur, an_hyb_score *cur_score, const an_hyb_score *full, rd_error *err)
{
    size_t m = s->m, pe, ps, se, ss;
    an_hyb_score p_score = *full, s_score = *full;
    /* prefix [0, pe): [0, 0) is the base (fails), [0, m) everything (meets) */
    rd_status st = bisect(s, "prefix", cur, 0, true, m, 0, &pe, &p_score, err);
    if (st == RD_OK)
        st = bisect(s, "start", cur, pe, false, 0, pe, &ps, &p_score, err);
    if (st == RD_OK)
        st = bisect(s, "suffix", cur, m, false, 0, m, &ss, &s_score, err);
    if (st == RD_OK)
        st = bisect(s, "end", cur, ss, true, m, ss, &se, &s_score, err);
    if (st != RD_OK)
        return st;
    bool *fp = malloc((m + 1) * sizeof *fp), *fs = malloc((m + 1) * sizeof *fs);
    if (!fp || !fs) {
        free(fp);
        free(fs);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    with_window(s, cur, ps, pe, fp);
    with_window(s, cur, ss, se, fs);
    double cp = cost_of(s, fp), cs = cost_of(s, fs);
    bool take_suffix = cs < cp || (cs == cp && count(s, fs) < count(s, fp));
    memcpy(cur, take_suffix ? fs : fp, m * sizeof *cur);
    *cur_score = take_suffix ? s_score : p_score;
    free(fp);
    free(fs);
    return RD_OK;
}

/* ---- phase 3: removal ---- */

typedef struct chunk {
    size_t from, to; /* members[from..to) */
    double cost;
} chunk;

static int by_cost_desc(const void *a, const void *b)
{
    const chunk *x = a, *y = b;
    if (x->cost != y->cost)
        return x->cost > y->cost ? -1 : 1;
    return x->from > y->from ? -1 : x->from < y->from; /* later first: the run resumes further on */
}

/* Tries to drop each chunk of `size` members of cur, costliest first; *removed counts what went. */
static rd_status remove_chunks(srch *s, size_t size, const char *phase, bool *cur, an_hyb_score *cur_score,
                               size_t *removed, rd_error *err)
{
    size_t n = 0, *members = malloc((s->m + 1) * sizeof *members);
    chunk *ch = malloc((s->m + 1) * sizeof *ch);
    bool *f = malloc((s->m + 1) * sizeof *f);
    rd_status st = members && ch && f ? RD_OK : rd_errorf(err, RD_E_NOMEM, "out of memory");
    for (size_t i = 0; st == RD_OK && i < s->m; i++)
        if (cur[i])
            members[n++] = i;
    size_t n_ch = 0;
    for (size_t from = 0; st == RD_OK && from < n; from += size) {
        chunk *c = &ch[n_ch++];
        c->from = from;
        c->to = from + size < n ? from + size : n;
        c->cost = 0;
        for (size_t j = c->from; j < c->to; j++)
            c->cost += s->cands[s->sp[members[j]]].cost;
    }
    if (st == RD_OK)
        qsort(ch, n_ch, sizeof *ch, by_cost_desc);
    for (size_t k = 0; k < n_ch && st == RD_OK; k++) {
        if (count(s, cur) <= ch[k].to - ch[k].from)
            continue; /* the empty set is all-int8, which fails */
        size_t i = members[ch[k].from];
        if (size == 1 && ch[k].cost == 0 && i > 0 && i + 1 < s->m && cur[i - 1] && cur[i + 1] &&
            count(s, cur) <= s->o->max_float)
            continue; /* free inside a window: dropping it would only add two conversions (merge() fills such
                         gaps), unless the count is above --max-float */
        memcpy(f, cur, s->m * sizeof *f);
        for (size_t j = ch[k].from; j < ch[k].to; j++)
            f[members[j]] = false;
        char what[240];
        window_name(s, members[ch[k].from], members[ch[k].to - 1] + 1, what, sizeof what);
        an_hyb_score sc;
        bool ok;
        st = try_set(s, phase, what, f, &sc, &ok, err);
        if (st == RD_OK && ok) {
            memcpy(cur, f, s->m * sizeof *cur);
            *cur_score = sc;
            *removed += ch[k].to - ch[k].from;
        }
    }
    free(members);
    free(ch);
    free(f);
    return st;
}

static rd_status removal(srch *s, bool *cur, an_hyb_score *cur_score, rd_error *err)
{
    rd_status st = RD_OK;
    for (size_t size = count(s, cur) / 2; size >= 2 && st == RD_OK; size /= 2) {
        size_t removed = 0;
        st = remove_chunks(s, size, "cut", cur, cur_score, &removed, err);
        if (removed == 0)
            break;
    }
    size_t removed = 0;
    return st == RD_OK ? remove_chunks(s, 1, "drop", cur, cur_score, &removed, err) : st;
}

/* ---- phase 4: merging ---- */

static rd_status merge(srch *s, bool *cur, an_hyb_score *cur_score, rd_error *err)
{
    bool *f = malloc((s->m + 1) * sizeof *f);
    if (!f)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    rd_status st = RD_OK;
    size_t i = 0;
    while (i < s->m && !cur[i])
        i++;
    while (i < s->m && st == RD_OK) {
        size_t gap_start = i;
        while (gap_start < s->m && cur[gap_start])
            gap_start++;
        size_t gap_end = gap_start;
        while (gap_end < s->m && !cur[gap_end])
            gap_end++;
        if (gap_end >= s->m)
            break; /* no window after this gap */
        double gap_cost = 0;
        for (size_t j = gap_start; j < gap_end; j++)
            gap_cost += s->cands[s->sp[j]].cost;
        if (gap_end - gap_start <= MERGE_MAX_GAP && gap_cost <= MERGE_MAX_COST_SHARE * cost_of(s, cur) &&
            count(s, cur) + (gap_end - gap_start) <= s->o->max_float) {
            with_window(s, cur, gap_start, gap_end, f);
            char what[240];
            window_name(s, gap_start, gap_end, what, sizeof what);
            an_hyb_score sc;
            bool ok;
            st = try_set(s, "merge", what, f, &sc, &ok, err);
            if (st == RD_OK && ok) {
                memcpy(cur, f, s->m * sizeof *cur);
                *cur_score = sc;
            }
        }
        i = gap_end;
    }
    free(f);
    return st;
}

/* ---- phase 5: addition under --max-float ---- */

static rd_status add_capped(srch *s, const size_t *order, size_t n_cands, bool *cur, an_hyb_score *cur_score,
                            rd_error *err)
{
    const an_hyb_target *t = &s->o->target;
    memcpy(cur, s->best_capped, s->m * sizeof *cur);
    *cur_score = s->best_capped_score;
    bool *f = malloc((s->m + 1) * sizeof *f);
    if (!f)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    rd_status st = RD_OK;
    for (size_t r = 0; r < n_cands && st == RD_OK && !an_hyb_meets(t, cur_score) && count(s, cur) < s->o->max_float;
         r++) {
        size_t i = 0;
        while (i < s->m && s->sp[i] != order[r])
            i++;
        if (i == s->m || cur[i])
            continue;
        memcpy(f, cur, s->m * sizeof *f);
        f[i] = true;
        an_hyb_score sc;
        bool hit;
        st = measure(s, f, &sc, &hit, err);
        bool keep = st == RD_OK && an_hyb_deficit(t, &sc) < an_hyb_deficit(t, cur_score) - 1e-12;
        if (keep) {
            memcpy(cur, f, s->m * sizeof *cur);
            *cur_score = sc;
            if (!hit)
                an_hyb_keep(s->c);
        }
        if (st == RD_OK)
            report(s, "add", s->cands[order[r]].name, f, &sc, keep, hit);
    }
    free(f);
    return st;
}

/* ---- the search ---- */

void an_hyb_search_result_fini(an_hyb_search_result *r)
{
    free(r->set);
    memset(r, 0, sizeof *r);
}

static void srch_fini(srch *s)
{
    for (size_t i = 0; i < s->cache_cap; i++)
        free(s->cache[i].bits);
    free(s->cache);
    free(s->sp);
    free(s->names);
    free(s->tmp_bits);
    free(s->best_capped);
}

rd_status an_hyb_search(an_hyb_ctx *c, const an_hyb_cand *cands, size_t n_cands, const size_t *order,
                        const an_hyb_score *base, const an_hyb_search_opts *o, an_hyb_search_result *out, rd_error *err)
{
    memset(out, 0, sizeof *out);
    srch s = {.c = c, .cands = cands, .o = o, .best_capped_deficit = INFINITY};
    s.sp = calloc(n_cands + 1, sizeof *s.sp);
    for (size_t i = 0; s.sp && i < n_cands; i++)
        if (cands[i].allowed)
            s.sp[s.m++] = i;
    s.words = s.m / 64 + 1;
    s.names = calloc(s.m + 1, sizeof *s.names);
    s.tmp_bits = calloc(s.words, sizeof *s.tmp_bits);
    s.best_capped = calloc(s.m + 1, sizeof *s.best_capped);
    bool *cur = calloc(s.m + 1, sizeof *cur), *all = calloc(s.m + 1, sizeof *all);
    out->set = calloc(s.m + 1, sizeof *out->set);
    rd_status st = s.sp && s.names && s.tmp_bits && s.best_capped && cur && all && out->set
                       ? cache_grow(&s, err)
                       : rd_errorf(err, RD_E_NOMEM, "out of memory");
    an_hyb_score cur_score = *base;
    bool hit;
    if (st == RD_OK) {
        report(&s, "int8", "(all int8)", cur, base, false, false);
        s.best_capped_deficit = an_hyb_deficit(&o->target, base);
        s.best_capped_score = *base;
        for (size_t i = 0; i < s.m; i++)
            all[i] = true;
        st = measure(&s, all, &out->full, &hit, err);
    }
    if (st == RD_OK)
        report(&s, "fp16", "(every candidate in float16)", all, &out->full, false, hit);
    out->unreachable = st == RD_OK && !an_hyb_meets(&o->target, &out->full);
    if (st == RD_OK && !out->unreachable && !an_hyb_meets(&o->target, base)) {
        st = singles(&s, order, n_cands, base, cur, &cur_score, err);
        if (st == RD_OK && !an_hyb_meets(&o->target, &cur_score))
            st = windows(&s, cur, &cur_score, &out->full, err);
        if (st == RD_OK)
            st = removal(&s, cur, &cur_score, err);
        if (st == RD_OK)
            st = merge(&s, cur, &cur_score, err);
        if (st == RD_OK && count(&s, cur) > o->max_float)
            st = add_capped(&s, order, n_cands, cur, &cur_score, err);
    }
    if (st == RD_OK && !out->unreachable) {
        for (size_t i = 0; i < s.m; i++)
            if (cur[i])
                out->set[out->n++] = s.sp[i];
        out->score = cur_score;
        out->reached = an_hyb_meets(&o->target, &cur_score);
    }
    out->measurements = s.measurements;
    out->cached = s.cached;
    srch_fini(&s);
    free(cur);
    free(all);
    return st;
}
