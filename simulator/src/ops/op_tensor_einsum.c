/*
 * op_tensor_einsum.c: Einsum (12) by direct summation over every label combination. Handles explicit
 * ("ij,jk->ik") and implicit ("ij,jk") outputs, repeated labels (diagonals), and "..." broadcast dims.
 * Accumulates in double; the iteration space is bounded (EINSUM_MAX_ITERS) so a hostile equation cannot
 * spin for hours. This is a reference, not a fast path.
 */
#include "tensor_common.h"

#define EINSUM_MAX_TERMS 8
#define EINSUM_LETTERS 52                                /* a-z, A-Z */
#define EINSUM_MAX_LABELS (EINSUM_LETTERS + RD_MAX_RANK) /* letters, then ellipsis dims */
#define EINSUM_MAX_ITERS ((int64_t)1 << 32)

struct einsum_params {
    char eq[256];
};

static rd_status einsum_parse(const sim_node *n, void *params, rd_error *err)
{
    struct einsum_params *p = params;
    const char *eq = sim_attr_str(n, "equation", NULL);
    if (!eq)
        return tc_node_err(n, err, RD_E_PARSE, "attribute 'equation' is required");
    size_t j = 0;
    for (const char *c = eq; *c; c++) {
        if (*c == ' ')
            continue;
        if (j + 1 >= sizeof p->eq)
            return tc_node_err(n, err, RD_E_UNSUPPORTED, "equation longer than %zu characters", sizeof p->eq - 1);
        p->eq[j++] = *c;
    }
    p->eq[j] = '\0';
    return RD_OK;
}

/* The equation resolved against the input ranks. */
struct einsum_plan {
    int n_labels;
    int64_t dim[EINSUM_MAX_LABELS];
    int n_terms;
    int term_rank[EINSUM_MAX_TERMS];
    int term_label[EINSUM_MAX_TERMS][RD_MAX_RANK];
    int out_rank;
    int out_label[RD_MAX_RANK];
};

static int letter_id(char c)
{
    if (c >= 'a' && c <= 'z')
        return c - 'a';
    if (c >= 'A' && c <= 'Z')
        return 26 + c - 'A';
    return -1;
}

/* Parses one term (letters and at most one "..."), given the rank of its operand (-1 for the output). */
static rd_status parse_term(const sim_op_ctx *ctx, const char *s, size_t len, int rank, int ell_rank, int *labels,
                            int *n_out, int *ell_seen, rd_error *err)
{
    int letters = 0, ell = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '.') {
            if (i + 2 >= len || s[i + 1] != '.' || s[i + 2] != '.' || ell)
                return tc_err(ctx, err, RD_E_PARSE, "bad ellipsis in equation");
            ell = 1;
            i += 2;
        } else if (letter_id(s[i]) >= 0) {
            letters++;
        } else {
            return tc_err(ctx, err, RD_E_PARSE, "bad character '%c' in equation", s[i]);
        }
    }
    int e = rank < 0 ? ell_rank : rank - letters; /* dims the ellipsis stands for */
    if (!ell)
        e = 0;
    if (e < 0 || (rank >= 0 && letters + e != rank))
        return tc_err(ctx, err, RD_E_INVAL, "equation term has %d labels for a rank-%d input", letters, rank);
    if (letters + e > RD_MAX_RANK)
        return tc_err(ctx, err, RD_E_LIMIT, "equation term has too many dims");
    int k = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '.') {
            /* ellipsis dims are right-aligned across operands */
            for (int j = 0; j < e; j++)
                labels[k++] = EINSUM_LETTERS + (ell_rank - e) + j;
            i += 2;
        } else {
            labels[k++] = letter_id(s[i]);
        }
    }
    *n_out = k;
    if (ell)
        *ell_seen = 1;
    return RD_OK;
}

static rd_status einsum_plan_make(const sim_op_ctx *ctx, struct einsum_plan *pl, rd_error *err)
{
    const struct einsum_params *p = ctx->params;
    const char *eq = p->eq, *arrow = strstr(eq, "->");
    size_t lhs_len = arrow ? (size_t)(arrow - eq) : strlen(eq);
    if (ctx->n_in > EINSUM_MAX_TERMS)
        return tc_err(ctx, err, RD_E_UNSUPPORTED, "more than %d operands", EINSUM_MAX_TERMS);
    /* first pass: the ellipsis rank is the largest any operand gives it */
    int ell_rank = 0;
    {
        size_t start = 0;
        for (int t = 0; t < ctx->n_in; t++) {
            size_t end = start;
            while (end < lhs_len && eq[end] != ',')
                end++;
            int letters = 0;
            bool ell = false;
            for (size_t i = start; i < end; i++) {
                letters += letter_id(eq[i]) >= 0;
                ell |= eq[i] == '.';
            }
            if (ell && ctx->in[t]->rank - letters > ell_rank)
                ell_rank = ctx->in[t]->rank - letters;
            start = end + 1;
        }
    }
    pl->n_labels = EINSUM_LETTERS + ell_rank;
    for (int l = 0; l < EINSUM_MAX_LABELS; l++)
        pl->dim[l] = -1;
    int count[EINSUM_MAX_LABELS] = {0};
    size_t start = 0;
    int t = 0, ell_seen = 0;
    for (; start <= lhs_len; t++) {
        size_t end = start;
        while (end < lhs_len && eq[end] != ',')
            end++;
        if (t >= ctx->n_in)
            return tc_err(ctx, err, RD_E_INVAL, "equation has more terms than the %d inputs", ctx->n_in);
        const rd_tensor *x = ctx->in[t];
        rd_status st = parse_term(ctx, eq + start, end - start, x->rank, ell_rank, pl->term_label[t], &pl->term_rank[t],
                                  &ell_seen, err);
        if (st != RD_OK)
            return st;
        for (int i = 0; i < x->rank; i++) {
            int l = pl->term_label[t][i];
            int64_t d = x->dims[i];
            count[l]++;
            if (pl->dim[l] < 0 || (l >= EINSUM_LETTERS && pl->dim[l] == 1))
                pl->dim[l] = d;
            else if (pl->dim[l] != d && !(l >= EINSUM_LETTERS && d == 1))
                return tc_err(ctx, err, RD_E_INVAL, "label dims disagree: %lld vs %lld", (long long)pl->dim[l],
                              (long long)d);
        }
        start = end + 1;
    }
    pl->n_terms = t;
    if (t != ctx->n_in)
        return tc_err(ctx, err, RD_E_INVAL, "equation has %d terms for %d inputs", t, ctx->n_in);
    if (arrow) {
        const char *rhs = arrow + 2;
        int dummy = 0;
        rd_status st = parse_term(ctx, rhs, strlen(rhs), -1, ell_rank, pl->out_label, &pl->out_rank, &dummy, err);
        if (st != RD_OK)
            return st;
        bool used[EINSUM_MAX_LABELS] = {false};
        for (int i = 0; i < pl->out_rank; i++) {
            int l = pl->out_label[i];
            if (pl->dim[l] < 0 || used[l])
                return tc_err(ctx, err, RD_E_INVAL, "output label repeated or absent from the inputs");
            used[l] = true;
        }
    } else {
        int k = 0;
        for (int l = EINSUM_LETTERS; l < pl->n_labels; l++)
            pl->out_label[k++] = l;
        /* implicit output: labels seen once, in alphabetical (ASCII) order: uppercase first */
        for (int l = 26; l < 52; l++)
            if (count[l] == 1 && k < RD_MAX_RANK)
                pl->out_label[k++] = l;
        for (int l = 0; l < 26; l++)
            if (count[l] == 1 && k < RD_MAX_RANK)
                pl->out_label[k++] = l;
        pl->out_rank = k;
    }
    for (int l = 0; l < pl->n_labels; l++)
        if (pl->dim[l] < 0)
            pl->dim[l] = 1; /* unused ellipsis slot */
    int64_t iters = 1;
    for (int l = 0; l < pl->n_labels; l++) {
        if (pl->dim[l] == 0) {
            iters = 0;
            break;
        }
        if (iters > EINSUM_MAX_ITERS / pl->dim[l])
            return tc_err(ctx, err, RD_E_LIMIT, "equation needs more than %lld products", (long long)EINSUM_MAX_ITERS);
        iters *= pl->dim[l];
    }
    return RD_OK;
}

static bool einsum_dtype_ok(rd_dtype dt)
{
    return dt == RD_DT_F32 || dt == RD_DT_F64 || dt == RD_DT_F16 || dt == RD_DT_I32 || dt == RD_DT_I64;
}

static rd_status einsum_infer(sim_op_ctx *ctx, rd_error *err)
{
    for (int k = 0; k < ctx->n_in; k++)
        if (!tc_has(ctx, k) || !einsum_dtype_ok(ctx->in[k]->dtype) || ctx->in[k]->dtype != ctx->in[0]->dtype)
            return sim_err_dtype(ctx, k, err);
    struct einsum_plan pl;
    rd_status st = einsum_plan_make(ctx, &pl, err);
    if (st != RD_OK)
        return st;
    int64_t d[RD_MAX_RANK];
    for (int i = 0; i < pl.out_rank; i++)
        d[i] = pl.dim[pl.out_label[i]];
    if ((st = tc_check_shape(ctx, ctx->in[0]->dtype, pl.out_rank, d, err)) != RD_OK)
        return st;
    sim_set_shape(&ctx->out[0], ctx->in[0]->dtype, pl.out_rank, d);
    return RD_OK;
}

static rd_status einsum_eval(sim_op_ctx *ctx, rd_error *err)
{
    struct einsum_plan pl;
    rd_status st = einsum_plan_make(ctx, &pl, err);
    if (st != RD_OK)
        return st;
    rd_tensor *o = &ctx->out[0];
    int64_t n_out = rd_tensor_numel(o);
    double *acc = sim_scratch_get(ctx, (size_t)(n_out ? n_out : 1) * sizeof *acc, err);
    if (!acc)
        return err ? err->code : RD_E_NOMEM;
    for (int64_t i = 0; i < n_out; i++)
        acc[i] = 0.0;
    /* per label: element stride in each operand (summed for repeated labels, 0 where broadcast) */
    static const int64_t zero_strides[EINSUM_MAX_LABELS] = {0};
    int64_t st_in[EINSUM_MAX_TERMS][EINSUM_MAX_LABELS], st_out[EINSUM_MAX_LABELS];
    memcpy(st_out, zero_strides, sizeof st_out);
    for (int t = 0; t < pl.n_terms; t++) {
        const rd_tensor *x = ctx->in[t];
        int64_t str[RD_MAX_RANK];
        tc_strides(x->rank, x->dims, str);
        memcpy(st_in[t], zero_strides, sizeof st_in[t]);
        for (int i = 0; i < x->rank; i++)
            if (x->dims[i] != 1 || pl.dim[pl.term_label[t][i]] == 1)
                st_in[t][pl.term_label[t][i]] += str[i];
    }
    int64_t ostr[RD_MAX_RANK];
    tc_strides(pl.out_rank, o->dims, ostr);
    for (int i = 0; i < pl.out_rank; i++)
        st_out[pl.out_label[i]] = ostr[i];
    /* walk only labels longer than 1 (the rest contribute a single index 0) */
    int act[EINSUM_MAX_LABELS], nl = 0;
    for (int l = 0; l < pl.n_labels; l++) {
        if (pl.dim[l] == 0)
            goto store;
        if (pl.dim[l] > 1)
            act[nl++] = l;
    }
    int64_t idx[EINSUM_MAX_LABELS] = {0}, off[EINSUM_MAX_TERMS] = {0}, ooff = 0;
    for (;;) {
        double v = 1.0;
        for (int t = 0; t < pl.n_terms; t++)
            v *= sim_get_f64(ctx->in[t], off[t]);
        acc[ooff] += v;
        int k = nl - 1;
        for (; k >= 0; k--) {
            int l = act[k];
            idx[k]++;
            for (int t = 0; t < pl.n_terms; t++)
                off[t] += st_in[t][l];
            ooff += st_out[l];
            if (idx[k] < pl.dim[l])
                break;
            for (int t = 0; t < pl.n_terms; t++)
                off[t] -= st_in[t][l] * pl.dim[l];
            ooff -= st_out[l] * pl.dim[l];
            idx[k] = 0;
        }
        if (k < 0)
            break;
    }
store:
    for (int64_t i = 0; i < n_out; i++)
        sim_set_f64(o, i, acc[i]);
    return RD_OK;
}

const sim_op_def op_einsum = {.name = "Einsum",
                              .domain = "",
                              .since = 12,
                              .min_in = 1,
                              .max_in = EINSUM_MAX_TERMS,
                              .min_out = 1,
                              .max_out = 1,
                              .params_size = sizeof(struct einsum_params),
                              .parse = einsum_parse,
                              .infer = einsum_infer,
                              .eval = {[SIM_PREC_F32] = einsum_eval}};
