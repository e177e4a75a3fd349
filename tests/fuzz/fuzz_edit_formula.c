/*
 * fuzz_edit_formula.c: libFuzzer target for onnx-edit's formula parser and layout plans
 * (analyzer/modeltools/edit_formula.c).
 *
 * Input: the formula up to the first NUL (at most 300 bytes), then bytes that size the letters the
 * formula leaves unassigned (1..4 each) and, with the first of them odd, perturb one dim so that plan
 * errors are reached too. Oracles (abort on failure):
 *  - a refused formula is RD_E_PARSE with a caret line under a position inside the formula;
 *  - a plan moves every element exactly once, and its inverse restores the index map;
 *  - the layers an_layout_ops gives, replayed as Reshape/Transpose on the input dims, move the elements
 *    as the plan does.
 * Work is capped at 4096 elements per tensor.
 */
#include "edit_formula.h"

#include <stdlib.h>
#include <string.h>

#define FUZZ_MAX_FORMULA 300
#define FUZZ_MAX_NUMEL 4096

/* Checks a refused formula's message: the caret points inside (or just past) the formula. */
static void check_error(const char *text, rd_status st, const rd_error *err)
{
    if (st != RD_E_PARSE || err->code != st)
        __builtin_trap();
    const char *line = strrchr(err->msg, '\n');
    const char *caret = line ? strchr(line, '^') : NULL;
    if (!caret)
        __builtin_trap();
    size_t pos = (size_t)(caret - (line + 1)) - 4;
    size_t len = strlen(text);
    if (pos > (len < AN_FORMULA_MAX_LEN ? len : AN_FORMULA_MAX_LEN))
        __builtin_trap();
}

static void check_plan(const an_layout *l)
{
    int64_t n = an_layout_numel(l);
    if (n > FUZZ_MAX_NUMEL)
        return;
    int32_t *src = malloc((size_t)n * 4), *dst = malloc((size_t)n * 4), *back = malloc((size_t)n * 4),
            *replay = malloc((size_t)n * 4);
    char *seen = calloc((size_t)n, 1);
    if (!src || !dst || !back || !replay || !seen)
        goto out;
    for (int64_t i = 0; i < n; i++)
        src[i] = (int32_t)i;
    an_layout_apply(l, src, dst, 4);
    for (int64_t i = 0; i < n; i++) {
        if (dst[i] < 0 || dst[i] >= n || seen[dst[i]])
            __builtin_trap(); /* not a permutation */
        seen[dst[i]] = 1;
    }
    an_layout inv;
    an_layout_inverse(l, &inv);
    an_layout_apply(&inv, dst, back, 4);
    if (memcmp(back, src, (size_t)n * 4) != 0)
        __builtin_trap();
    an_layout_op ops[3];
    int n_ops;
    if (an_layout_ops(l, ops, &n_ops, NULL) == RD_OK) {
        /* replay the layers one by one, each as its own plan */
        memcpy(replay, src, (size_t)n * 4);
        an_layout step;
        int rank = l->in_rank;
        int64_t dims[AN_LAYOUT_MAX_ATOMS];
        memcpy(dims, l->in_dims, sizeof dims);
        for (int k = 0; k < n_ops; k++) {
            if (an_layout_init(&step, rank, dims, NULL) != RD_OK)
                __builtin_trap();
            rd_status st = ops[k].transpose ? an_layout_transpose(&step, ops[k].v, ops[k].rank, NULL)
                                            : an_layout_reshape(&step, ops[k].rank, ops[k].v, NULL);
            if (st != RD_OK)
                __builtin_trap();
            an_layout_apply(&step, replay, back, 4);
            memcpy(replay, back, (size_t)n * 4);
            rank = step.out_rank;
            memcpy(dims, step.out_dims, sizeof dims);
        }
        if (rank != l->out_rank || memcmp(dims, l->out_dims, (size_t)rank * sizeof *dims) != 0 ||
            memcmp(replay, dst, (size_t)n * 4) != 0)
            __builtin_trap();
    }
out:
    free(src);
    free(dst);
    free(back);
    free(replay);
    free(seen);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t flen = 0;
    while (flen < size && flen < FUZZ_MAX_FORMULA && data[flen])
        flen++;
    char text[FUZZ_MAX_FORMULA + 1];
    memcpy(text, data, flen);
    text[flen] = '\0';
    const uint8_t *rest = data + flen + (flen < size);
    size_t n_rest = size - flen - (flen < size);

    an_formula f;
    rd_error err;
    rd_error_clear(&err);
    rd_status st = an_formula_parse(text, &f, &err);
    if (st != RD_OK) {
        check_error(text, st, &err);
        return 0;
    }
    /* a compatible shape: assigned sizes, else 1..4 from the input bytes */
    int64_t dims[RD_MAX_RANK];
    size_t k = 0;
    for (int d = 0; d < f.n_left; d++) {
        int64_t dim = 1;
        for (int j = 0; j < f.left[d].n_letters; j++) {
            int64_t v = f.assigned[f.left[d].letter[j]];
            if (!v)
                v = 1 + (k < n_rest ? rest[k++] % 4 : 1);
            if (__builtin_mul_overflow(dim, v, &dim) || dim > ((int64_t)1 << 40))
                return 0;
        }
        dims[d] = dim;
    }
    if (n_rest && (rest[0] & 1) && f.n_left)
        dims[rest[0] / 2 % f.n_left] += 1; /* a shape that may not fit */
    an_layout l;
    st = an_formula_plan(&f, f.n_left, dims, &l, &err);
    if (st != RD_OK) {
        if (st != RD_E_INVAL && st != RD_E_LIMIT)
            check_error(text, st, &err);
        return 0;
    }
    check_plan(&l);
    return 0;
}
