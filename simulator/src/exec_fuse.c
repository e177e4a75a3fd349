/*
 * exec_fuse.c: slices of elementwise work for the executor.
 *
 * Fusion (float32 reference only, no simulator hooks): a head op (SIM_OP_TILE_DONE: Conv, ConvTranspose)
 * reports each finished region of its output; the elementwise and channelwise nodes that follow it in the
 * graph order (BatchNormalization, Relu, Clip, Sigmoid, an Add of a residual, ...) are computed on that
 * region at once, on the same thread, while it is in cache. Every ONNX tensor is still written whole, so
 * the observer sees each of them as before, and each follower computes its elements with its own eval on
 * a view of the region: the bits are those of the unfused run.
 *
 * Splitting: an elementwise node on a large tensor computes in fixed slices over the pool. Slices change
 * no element's arithmetic, so results do not depend on the thread count either way. In a simulation a
 * float16 one goes in slices at any width, each rounded as soon as it is computed (sim_eval_f32_rounded).
 *
 * A tensor is viewed as [N, C, P] (batch, channels, positions); a slice is batch n, channels [c0, c1),
 * positions [p0, p1): one view [1, c1 - c0, P] when it holds whole channels, else one [1, 1, p1 - p0] per
 * channel. Inputs shaped like the output are sliced the same way, inputs of one element passed whole,
 * and the per-channel vectors of a channelwise op (BatchNormalization's scale, bias, mean, var) cut to
 * the slice's channels. An op with a region kernel (region_f32) takes the slice in one call instead of the
 * views: per channel they cost more than the work on a GEMM task's 256 positions.
 */
#include "internal.h"

#define FUSE_MAX_FOLLOWERS 8
/* A head whose output is larger runs alone: fused, its followers' outputs are live together with the head's
   input and output, which raises the peak by a whole tensor per follower (docs/benchmarks.md) */
#define FUSE_MAX_OUTPUT_BYTES ((size_t)8 << 20)
#define SPLIT_MIN_ELEMS 65536 /* a standalone elementwise node splits from this many outputs */
#define SPLIT_TARGET 32768    /* outputs per slice */

typedef enum { ARG_NONE, ARG_WHOLE, ARG_SLICE, ARG_CHANNEL } arg_kind;

/* One node computed slice by slice. */
typedef struct slice_op {
    const sim_node *node;
    arg_kind kind[SIM_MAX_NODE_IO];
    const rd_tensor *in[SIM_MAX_NODE_IO]; /* the whole inputs */
    rd_tensor *out;                       /* the whole output 0 */
    bool by_region;                       /* its region_f32 takes the slices: no view per channel */
} slice_op;

typedef struct view3 {
    int64_t n, c, p; /* [N, C, P] */
} view3;

static view3 view_of(const rd_tensor *t)
{
    if (t->rank == 0)
        return (view3){1, 1, 1};
    if (t->rank == 1)
        return (view3){1, 1, t->dims[0]};
    int64_t p = 1;
    for (int d = 2; d < t->rank; d++)
        p *= t->dims[d];
    return (view3){t->dims[0], t->dims[1], p};
}

static bool same_shape(const rd_tensor *a, const rd_tensor *b)
{
    if (a->rank != b->rank)
        return false;
    for (int d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d])
            return false;
    return true;
}

/*
 * How input t of node n slices against output shape `like`: chain tells whether t must be sliced (a tensor
 * of the fused chain or an activation). false when it cannot be sliced.
 */
static bool classify(const sim_node *n, int k, const rd_tensor *t, const rd_tensor *like, arg_kind *kind)
{
    if (!t) {
        *kind = ARG_NONE;
        return true;
    }
    if (t->dtype != RD_DT_F32 && k == 0)
        return false;
    if (same_shape(t, like) && t->dtype == RD_DT_F32) {
        *kind = ARG_SLICE;
        return true;
    }
    if (rd_tensor_numel(t) == 1) {
        *kind = ARG_WHOLE;
        return true;
    }
    const view3 v = view_of(like);
    if ((n->def->flags & SIM_OP_CHANNELWISE) && k >= 1 && t->rank == 1 && t->dims[0] == v.c && like->rank >= 2 &&
        t->dtype == RD_DT_F32) {
        *kind = ARG_CHANNEL;
        return true;
    }
    return false;
}

/* Whether node n can be computed in slices of its output 0 (one present output, float32). */
static bool sliceable(const sim_node *n)
{
    const sim_op_def *d = n->def;
    if (!d || !d->eval[SIM_PREC_F32] || !(d->flags & (SIM_OP_ELEMENTWISE | SIM_OP_CHANNELWISE)))
        return false;
    if (n->n_in > SIM_MAX_NODE_IO || n->n_out < 1 || n->n_out > SIM_MAX_NODE_IO || n->out[0] < 0)
        return false;
    for (int k = 1; k < n->n_out; k++)
        if (n->out[k] >= 0)
            return false;
    return true;
}

/* Whether op's region kernel may take the slice: input 0 shaped like the output, no other input so (those
   would be sliced too: an Add of a residual goes by views). */
static bool region_applies(const slice_op *op)
{
    if (!op->node->def->region_f32 || op->kind[0] != ARG_SLICE)
        return false;
    for (int k = 1; k < op->node->n_in; k++)
        if (op->kind[k] == ARG_SLICE)
            return false;
    return true;
}

/* Fills op for node n over whole inputs in and output out; false when some input cannot be sliced. */
static bool slice_op_make(const sim_node *n, const rd_tensor *const *in, rd_tensor *out, slice_op *op)
{
    op->node = n;
    op->out = out;
    if (out->dtype != RD_DT_F32 || out->rank < 1)
        return false;
    for (int k = 0; k < n->n_in; k++) {
        op->in[k] = in[k];
        if (!classify(n, k, in[k], out, &op->kind[k]))
            return false;
    }
    op->by_region = region_applies(op);
    return true;
}

/* Computes op on channels [c0, c1) x positions [p0, p1) of batch b. */
static rd_status slice_run(const slice_op *op, const view3 *v, int64_t b, int64_t c0, int64_t c1, int64_t p0,
                           int64_t p1, sim_scratch *scratch, rd_error *err)
{
    const sim_node *n = op->node;
    if (op->by_region) {
        const sim_region r = {.b = b, .c0 = c0, .c1 = c1, .p0 = p0, .p1 = p1, .view_c = v->c, .view_p = v->p};
        if (n->def->region_f32(n, op->in, op->out, &r))
            return RD_OK;
    }
    const bool whole = p0 == 0 && p1 == v->p;
    rd_status st = RD_OK;
    for (int64_t c = c0; c < c1 && st == RD_OK; c = whole ? c1 : c + 1) {
        const int64_t nc = whole ? c1 - c0 : 1, len = whole ? v->p : p1 - p0;
        const int64_t off = (b * v->c + c) * v->p + (whole ? 0 : p0);
        rd_tensor views[SIM_MAX_NODE_IO], out_view[SIM_MAX_NODE_IO];
        const rd_tensor *in[SIM_MAX_NODE_IO];
        bool present[SIM_MAX_NODE_IO];
        /* only the node's own outputs are set: the arrays hold 20 KB and this runs per channel of a region */
        memset(out_view, 0, (size_t)n->n_out * sizeof out_view[0]);
        for (int k = 0; k < n->n_out; k++)
            present[k] = k == 0;
        for (int k = 0; k < n->n_in; k++) {
            switch (op->kind[k]) {
            case ARG_NONE:
                in[k] = NULL;
                break;
            case ARG_WHOLE: /* one element: as a scalar, whatever its rank, so it broadcasts into the view */
                views[k] = (rd_tensor){.dtype = op->in[k]->dtype, .rank = 0, .data = op->in[k]->data};
                in[k] = &views[k];
                break;
            case ARG_SLICE:
                views[k] = (rd_tensor){
                    .dtype = RD_DT_F32, .rank = 3, .dims = {1, nc, len}, .data = (float *)op->in[k]->data + off};
                in[k] = &views[k];
                break;
            case ARG_CHANNEL:
                views[k] =
                    (rd_tensor){.dtype = RD_DT_F32, .rank = 1, .dims = {nc}, .data = (float *)op->in[k]->data + c};
                in[k] = &views[k];
                break;
            }
        }
        out_view[0] =
            (rd_tensor){.dtype = RD_DT_F32, .rank = 3, .dims = {1, nc, len}, .data = (float *)op->out->data + off};
        sim_op_ctx ctx = sim_node_ctx(n, in, out_view, present, scratch);
        st = n->def->eval[SIM_PREC_F32](&ctx, err);
    }
    return st;
}

/* ---- splitting one node ------------------------------------------------------------------------------ */

typedef struct split_job {
    const slice_op *op;
    view3 v;
    int64_t per;          /* SPLIT_TARGET / P channels per slice when P is small, else 0 */
    int64_t blocks;       /* slices per batch element */
    sim_scratch *scratch; /* one per worker */
    rd_status *st;        /* per worker, with its error */
    rd_error *err;
    const sim_exec_hooks *hooks; /* sim_eval_f32_rounded: each slice rounded by hooks->round_part */
    int value;
    sim_round_counts *counts; /* per worker */
} split_job;

static void split_task(void *arg, int64_t task, int worker)
{
    const split_job *j = arg;
    if (j->st[worker] != RD_OK)
        return;
    const int64_t b = task / j->blocks, t = task % j->blocks;
    int64_t c0, c1, p0, p1;
    if (j->per > 0) {
        c0 = t * j->per;
        c1 = c0 + j->per < j->v.c ? c0 + j->per : j->v.c;
        p0 = 0;
        p1 = j->v.p;
    } else {
        const int64_t pb = sim_blocks(j->v.p, SPLIT_TARGET);
        c0 = t / pb;
        c1 = c0 + 1;
        p0 = t % pb * SPLIT_TARGET;
        p1 = p0 + SPLIT_TARGET < j->v.p ? p0 + SPLIT_TARGET : j->v.p;
    }
    j->st[worker] = slice_run(j->op, &j->v, b, c0, c1, p0, p1, &j->scratch[worker], &j->err[worker]);
    if (j->hooks && j->st[worker] == RD_OK) /* whole channels, or positions of one channel: one run */
        j->hooks->round_part(j->hooks->user, j->value, j->op->out->data, (b * j->v.c + c0) * j->v.p + p0,
                             p0 == 0 && p1 == j->v.p ? (c1 - c0) * j->v.p : p1 - p0, &j->counts[worker]);
}

/* The first failing worker's status, its message copied to err. */
static rd_status first_failure(const rd_status *st, const rd_error *errs, int n, rd_error *err)
{
    for (int w = 0; w < n; w++)
        if (st[w] != RD_OK) {
            if (err)
                *err = errs[w];
            return st[w];
        }
    return RD_OK;
}

/* Per-worker scratch, status and error for w workers; NULL on allocation failure. */
typedef struct workers {
    int n;
    sim_scratch *scratch;
    rd_status *st;
    rd_error *err;
} workers;

static bool workers_init(workers *w, int n)
{
    w->n = n;
    w->scratch = calloc((size_t)n, sizeof *w->scratch);
    w->st = calloc((size_t)n, sizeof *w->st);
    w->err = calloc((size_t)n, sizeof *w->err);
    return w->scratch && w->st && w->err;
}

static void workers_fini(workers *w)
{
    for (int i = 0; w->scratch && i < w->n; i++)
        sim_scratch_fini(&w->scratch[i]);
    free(w->scratch);
    free(w->st);
    free(w->err);
}

/* Whether the node's output 0 goes in slices: op filled. */
static bool splits(const sim_op_ctx *ctx, slice_op *op)
{
    const sim_node *n = ctx->node;
    return sliceable(n) && ctx->out[0].data && rd_tensor_numel(&ctx->out[0]) >= SPLIT_MIN_ELEMS &&
           slice_op_make(n, ctx->in, &ctx->out[0], op);
}

/* Runs op's slices over the pool (with hooks: each rounded, the counts summed); *ran false without memory for
   the workers. */
static rd_status split_run(sim_op_ctx *ctx, const slice_op *op, const sim_exec_hooks *hooks, int value, bool *ran,
                           rd_error *err)
{
    const view3 v = view_of(&ctx->out[0]);
    const int width = sim_pool_width(ctx->pool);
    split_job j = {
        .op = op, .v = v, .per = v.p >= SPLIT_TARGET ? 0 : SPLIT_TARGET / v.p, .hooks = hooks, .value = value};
    j.blocks = j.per > 0 ? sim_blocks(v.c, j.per) : v.c * sim_blocks(v.p, SPLIT_TARGET);
    workers w;
    *ran = workers_init(&w, width) && (!hooks || (j.counts = calloc((size_t)width, sizeof *j.counts)) != NULL);
    if (!*ran) {
        workers_fini(&w);
        free(j.counts);
        return RD_OK;
    }
    j.scratch = w.scratch;
    j.st = w.st;
    j.err = w.err;
    for (int k = 0; hooks && k < width; k++)
        j.counts[k].first = -1;
    sim_parallel(ctx->pool, v.n * j.blocks, split_task, &j);
    rd_status st = first_failure(w.st, w.err, w.n, err);
    if (st == RD_OK && hooks) {
        sim_round_counts sum = {.first = -1};
        for (int k = 0; k < width; k++)
            sim_round_counts_add(&sum, &j.counts[k]);
        hooks->round_done(hooks->user, value, &ctx->out[0], &sum);
    }
    workers_fini(&w);
    free(j.counts);
    return st;
}

rd_status sim_eval_f32(sim_op_ctx *ctx, rd_error *err)
{
    sim_eval_fn fn = ctx->node->def->eval[SIM_PREC_F32];
    slice_op op;
    bool ran = false;
    rd_status st = RD_OK;
    if (sim_pool_width(ctx->pool) >= 2 && splits(ctx, &op))
        st = split_run(ctx, &op, NULL, -1, &ran, err);
    /* not sliced, or no room to split: the same bits on one thread */
    return ran ? st : fn(ctx, err);
}

rd_status sim_eval_f32_rounded(sim_op_ctx *ctx, const sim_exec_hooks *hooks, int value, bool *done, rd_error *err)
{
    slice_op op;
    *done = false;
    if (!splits(ctx, &op))
        return RD_OK;
    return split_run(ctx, &op, hooks, value, done, err);
}

/* ---- fusion ------------------------------------------------------------------------------------------ */

typedef struct fuse_job {
    slice_op ops[FUSE_MAX_FOLLOWERS];
    int n_ops;
    view3 v; /* of the head's output 0 */
    workers w;
    int64_t *covered; /* per worker: elements of the regions seen */
} fuse_job;

static void fuse_tile(void *user, const sim_tile *t, int worker)
{
    fuse_job *j = user;
    j->covered[worker] += (t->c1 - t->c0) * (t->p1 - t->p0);
    for (int i = 0; i < j->n_ops && j->w.st[worker] == RD_OK; i++)
        j->w.st[worker] =
            slice_run(&j->ops[i], &j->v, t->n, t->c0, t->c1, t->p0, t->p1, &j->w.scratch[worker], &j->w.err[worker]);
}

/* The whole of op at once (a head that did not report every region). */
static rd_status whole_run(const slice_op *op, sim_scratch *scratch, rd_error *err)
{
    const sim_node *n = op->node;
    rd_tensor out[SIM_MAX_NODE_IO];
    bool present[SIM_MAX_NODE_IO] = {true};
    memset(out, 0, sizeof out);
    out[0] = *op->out;
    sim_op_ctx ctx = sim_node_ctx(n, op->in, out, present, scratch);
    return n->def->eval[SIM_PREC_F32](&ctx, err);
}

/*
 * The followers of head: the nodes right after it (folded ones skipped) that slice like its output 0 and
 * read at least one tensor of the chain (the head's output 0 or an earlier follower's), every other input
 * being ready. Their outputs are shaped (infer) and allocated into outs[i][0]; *last is the last one's index.
 */
static int find_followers(sim_run_state *s, int head, const rd_tensor *like, fuse_job *j,
                          rd_tensor outs[][SIM_MAX_NODE_IO], int *last)
{
    rd_model *m = s->m;
    int chain_v[FUSE_MAX_FOLLOWERS + 1] = {m->nodes[head].out[0]};
    const rd_tensor *chain_t[FUSE_MAX_FOLLOWERS + 1] = {like};
    int count = 0;
    *last = head;
    if (rd_tensor_nbytes(like) > FUSE_MAX_OUTPUT_BYTES)
        return 0;
    for (int i = head + 1; i < m->n_nodes && count < FUSE_MAX_FOLLOWERS; i++) {
        const sim_node *n = &m->nodes[i];
        if (n->folded)
            continue;
        if (!sliceable(n))
            break;
        const rd_tensor *in[SIM_MAX_NODE_IO];
        bool reads_chain = false, ok = true;
        for (int k = 0; k < n->n_in && ok; k++) {
            const int v = n->in[k];
            in[k] = NULL;
            if (v < 0)
                continue;
            for (int c = 0; c <= count && !in[k]; c++)
                if (chain_v[c] == v)
                    in[k] = chain_t[c];
            reads_chain |= in[k] != NULL;
            if (!in[k]) {
                ok = s->ready[v] && m->values[v].producer < head; /* no other output of the head */
                in[k] = &s->vals[v];
            }
        }
        if (!ok || !reads_chain)
            break;
        sim_node_call call;
        rd_error ignored;
        if (sim_node_begin(m, i, in, outs[count], &s->scratch, NULL, &call, &ignored) != RD_OK) /* shape, data */
            break;
        if (!same_shape(&outs[count][0], like) || !slice_op_make(n, in, &outs[count][0], &j->ops[count])) {
            for (int k = 0; k < n->n_out; k++)
                rd_tensor_fini(&outs[count][k]);
            break;
        }
        count++;
        chain_v[count] = n->out[0];
        chain_t[count] = &outs[count - 1][0];
        *last = i;
    }
    return count;
}

/* Frees the outputs node idx has in the state (a failed head). */
static void drop_outputs(sim_run_state *s, int idx)
{
    const sim_node *h = &s->m->nodes[idx];
    for (int k = 0; k < h->n_out; k++)
        if (h->out[k] >= 0) {
            rd_tensor_fini(&s->vals[h->out[k]]);
            s->owned[h->out[k]] = s->ready[h->out[k]] = false;
        }
}

static void fuse_job_free(fuse_job *j, rd_tensor (*fouts)[SIM_MAX_NODE_IO], bool outputs_too)
{
    if (j) {
        for (int i = 0; outputs_too && fouts && i < j->n_ops; i++)
            rd_tensor_fini(&fouts[i][0]);
        workers_fini(&j->w);
        free(j->covered);
    }
    free(j);
    free(fouts);
}

rd_status sim_fused_compute(sim_run_state *s, int idx, rd_pool *pool, bool *computed, rd_error *err)
{
    *computed = false;
    rd_model *m = s->m;
    const sim_node *h = &m->nodes[idx];
    const rd_tensor *in[SIM_MAX_NODE_IO];
    rd_tensor outs[SIM_MAX_NODE_IO];
    sim_node_call call;
    rd_status st = sim_state_inputs(s, idx, in, err);
    if (st == RD_OK)
        st = sim_node_begin(m, idx, in, outs, &s->scratch, pool, &call, err);
    if (st != RD_OK)
        return st;
    if (h->out[0] < 0 || outs[0].dtype != RD_DT_F32 || !outs[0].data) {
        for (int k = 0; k < h->n_out; k++)
            rd_tensor_fini(&outs[k]);
        return RD_OK;
    }
    /* the head's outputs go to the state now (computed below): the followers' inputs point at them */
    sim_state_store(s, idx, outs);
    *computed = true;
    const rd_tensor *head_out = &s->vals[h->out[0]];
    fuse_job *j = calloc(1, sizeof *j);
    rd_tensor(*fouts)[SIM_MAX_NODE_IO] = calloc(FUSE_MAX_FOLLOWERS, sizeof *fouts);
    int last = idx;
    if (j && fouts)
        j->n_ops = find_followers(s, idx, head_out, j, fouts, &last);
    const int width = sim_pool_width(pool);
    const bool fused = j && fouts && j->n_ops > 0 && workers_init(&j->w, width) &&
                       (j->covered = calloc((size_t)width, sizeof *j->covered)) != NULL;
    if (!fused) { /* nothing follows (or no memory to fuse): the head alone */
        fuse_job_free(j, fouts, true);
        st = sim_eval_f32(&call.ctx, err);
        if (st != RD_OK) {
            rd_error_prefix(err, "%s", m->path);
            drop_outputs(s, idx);
        }
        return st;
    }
    j->v = view_of(head_out);
    call.ctx.tile_done = fuse_tile;
    call.ctx.tile_user = j;
    st = h->def->eval[SIM_PREC_F32](&call.ctx, err);
    if (st == RD_OK)
        st = first_failure(j->w.st, j->w.err, j->w.n, err);
    int64_t covered = 0;
    for (int w = 0; w < j->w.n; w++)
        covered += j->covered[w];
    /* a head that did not report every element (an empty input's shortcut): the followers whole */
    for (int i = 0; st == RD_OK && covered != rd_tensor_numel(head_out) && i < j->n_ops; i++)
        st = whole_run(&j->ops[i], &s->scratch, err);
    if (st != RD_OK) {
        rd_error_prefix(err, "%s", m->path);
        drop_outputs(s, idx);
        fuse_job_free(j, fouts, true);
        return st;
    }
    for (int i = 0, node = idx + 1; i < j->n_ops; node++)
        if (!m->nodes[node].folded)
            sim_state_store(s, node, fouts[i++]);
    s->fused_head = idx;
    s->fused_last = last;
    fuse_job_free(j, fouts, false);
    return RD_OK;
}
