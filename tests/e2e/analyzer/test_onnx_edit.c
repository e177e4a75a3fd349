/*
 * test_onnx_edit.c: onnx-edit's formulas (every example of the issue, random valid ones, every malformed
 * kind), the layout plans against a direct reading of the formula, and edited models against the
 * originals bit for bit in FP32 (Conv, MatMul, element-wise, with Reshape/Transpose at the boundary).
 */
#include "rd_test.h"
#include "text_check.h"
#include "cli_capture.h"
#include "cli_expect.h"
#include "edit_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static uint32_t rng = 20240611u;
static uint32_t rnd_u32(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
}
static int rnd_int(int n)
{
    return (int)(rnd_u32() % (uint32_t)n);
}
static float rnd_float(void)
{
    return (float)(rnd_u32() >> 8) / (float)(1u << 24) * 4.0f - 2.0f;
}

static void fill_random(rd_tensor *t, int rank, const int64_t *dims)
{
    CU_ASSERT_EQUAL_FATAL(rd_tensor_alloc(t, RD_DT_F32, rank, dims, NULL), RD_OK);
    for (int64_t i = 0; i < rd_tensor_numel(t); i++)
        ((float *)t->data)[i] = rnd_float();
}

/* ---- the formula read directly: where each input element goes -------------------------------------- */

/*
 * Checks that the plan of formula on dims sends input element i to the output position the formula
 * says: letter values from the input index (first letter outermost), output index from the letters.
 * Sizes are inferred here independently of edit_formula.c.
 */
static void check_oracle(const char *formula, int rank, const int64_t *dims)
{
    an_formula f;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(an_formula_parse(formula, &f, &err), RD_OK);
    an_layout l;
    if (an_formula_plan(&f, rank, dims, &l, &err) != RD_OK) {
        fprintf(stderr, "\n%s: %s\n", formula, err.msg);
        CU_FAIL_FATAL("plan failed");
    }
    int64_t size[26] = {0};
    for (int d = 0; d < rank; d++) {
        const an_formula_group *g = &f.left[d];
        int64_t prod = 1;
        int unknown = -1;
        for (int j = 0; j < g->n_letters; j++) {
            if (f.assigned[g->letter[j]])
                prod *= size[g->letter[j]] = f.assigned[g->letter[j]];
            else
                unknown = g->letter[j];
        }
        if (unknown >= 0)
            size[unknown] = dims[d] / prod;
    }
    int64_t numel = 1;
    for (int d = 0; d < rank; d++)
        numel *= dims[d];
    CU_ASSERT_EQUAL_FATAL(an_layout_numel(&l), numel);
    CU_ASSERT_EQUAL_FATAL(l.out_rank, f.n_right);
    for (int k = 0; k < f.n_right; k++) {
        int64_t want = 1;
        for (int j = 0; j < f.right[k].n_letters; j++)
            want *= size[f.right[k].letter[j]];
        CU_ASSERT_EQUAL(l.out_dims[k], want);
    }
    int32_t *src = malloc((size_t)numel * 4), *dst = malloc((size_t)numel * 4), *back = malloc((size_t)numel * 4);
    for (int64_t i = 0; i < numel; i++)
        src[i] = (int32_t)i;
    an_layout_apply(&l, src, dst, 4);
    bool ok = true;
    for (int64_t i = 0; i < numel && ok; i++) {
        int64_t val[26] = {0}, rest = i;
        for (int d = rank - 1; d >= 0; d--) {
            int64_t idx = rest % dims[d];
            rest /= dims[d];
            const an_formula_group *g = &f.left[d];
            for (int j = g->n_letters - 1; j >= 0; j--) {
                val[g->letter[j]] = idx % size[g->letter[j]];
                idx /= size[g->letter[j]];
            }
        }
        int64_t o = 0;
        for (int k = 0; k < f.n_right; k++) {
            int64_t idx = 0;
            for (int j = 0; j < f.right[k].n_letters; j++)
                idx = idx * size[f.right[k].letter[j]] + val[f.right[k].letter[j]];
            o = o * l.out_dims[k] + idx;
        }
        ok = dst[o] == (int32_t)i;
    }
    if (!ok)
        fprintf(stderr, "\nformula %s moves elements wrongly\n", formula);
    CU_ASSERT(ok);
    an_layout inv;
    an_layout_inverse(&l, &inv);
    an_layout_apply(&inv, dst, back, 4);
    CU_ASSERT(memcmp(back, src, (size_t)numel * 4) == 0);
    free(src);
    free(dst);
    free(back);
}

typedef struct example {
    const char *formula;
    int rank;
    int64_t dims[6];
    int out_rank;
    int64_t out[6];
} example;

/* The formulas, on shapes they fit. */
static const example examples[] = {
    {"a,b,c,d->1,ad,b,c", 4, {2, 3, 4, 5}, 4, {1, 10, 3, 4}},
    {"a,b->b,a", 2, {3, 5}, 2, {5, 3}},
    {"c,a->a,c", 2, {3, 5}, 2, {5, 3}},
    {"a,b,c->a,1,cb,1,1", 3, {2, 3, 4}, 5, {2, 1, 12, 1, 1}},
    {"ab,c,d,qk[a=2,k=8]->aq,cd,1,kb", 4, {32, 4, 1, 64}, 4, {16, 4, 1, 128}},
    {"a,b,c->a,b,1,c", 3, {2, 3, 4}, 4, {2, 3, 1, 4}},
    {"a,b,c,d,e->ab,c,d,e", 5, {2, 3, 4, 5, 6}, 4, {6, 4, 5, 6}},
    {"a,b,c,d->a,d,b,c", 4, {1, 3, 4, 5}, 4, {1, 5, 3, 4}},
    {"a,b,c,d->d,acb,1", 4, {2, 3, 4, 5}, 3, {5, 24, 1}},
    {"a,bc,de,f[b=2,d=4]->ab,fe,dc,1", 4, {2, 6, 8, 3}, 4, {4, 6, 12, 1}},
    {" a , b c [ b = 2 ] ->  c , 1 , b a", 2, {3, 8}, 3, {4, 1, 6}},
};
#define N_EXAMPLES ((int)(sizeof examples / sizeof examples[0]))

static void test_examples(void)
{
    for (int k = 0; k < N_EXAMPLES; k++) {
        const example *e = &examples[k];
        an_formula f;
        rd_error err;
        CU_ASSERT_EQUAL_FATAL(an_formula_parse(e->formula, &f, &err), RD_OK);
        an_layout l;
        CU_ASSERT_EQUAL_FATAL(an_formula_plan(&f, e->rank, e->dims, &l, &err), RD_OK);
        CU_ASSERT_EQUAL(l.out_rank, e->out_rank);
        for (int d = 0; d < e->out_rank; d++)
            CU_ASSERT_EQUAL(l.out_dims[d], e->out[d]);
        check_oracle(e->formula, e->rank, e->dims);
    }
}

static void test_letters_independent(void)
{
    an_formula f1, f2;
    an_layout l1, l2;
    const int64_t dims[2] = {3, 5};
    CU_ASSERT_EQUAL(an_formula_parse("a,b->b,a", &f1, NULL), RD_OK);
    CU_ASSERT_EQUAL(an_formula_parse("c,a->a,c", &f2, NULL), RD_OK);
    CU_ASSERT_EQUAL(an_formula_plan(&f1, 2, dims, &l1, NULL), RD_OK);
    CU_ASSERT_EQUAL(an_formula_plan(&f2, 2, dims, &l2, NULL), RD_OK);
    CU_ASSERT_EQUAL(l1.n_atoms, l2.n_atoms);
    CU_ASSERT(memcmp(l1.order, l2.order, sizeof l1.order) == 0);
    CU_ASSERT(memcmp(l1.out_dims, l2.out_dims, sizeof l1.out_dims) == 0);
}

/* The layers a plan becomes: a transpose stays one Transpose, a pure regrouping one Reshape. */
static void test_fewest_layers(void)
{
    struct {
        const char *formula;
        int rank;
        int64_t dims[4];
        int n_ops;
        bool first_is_transpose;
    } cases[] = {
        {"a,b,c,d->a,c,d,b", 4, {1, 3, 4, 5}, 1, true},
        {"a,b,c,d->a,d,b,c", 4, {1, 3, 4, 5}, 1, true},
        {"a,b,c->a,b,1,c", 3, {2, 3, 4}, 1, false},
        {"a,b,c,d,e->ab,c,d,e", 4, {2, 3, 4, 5}, 0, false}, /* wrong rank: skipped below */
        {"a,b,c->a,1,cb,1,1", 3, {2, 3, 4}, 2, true},
        {"a,b->a,b", 2, {2, 3}, 0, false},
        {"ab,c,d,qk[a=2,k=8]->aq,cd,1,kb", 4, {32, 4, 1, 64}, 3, false},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        an_formula f;
        an_layout l;
        CU_ASSERT_EQUAL_FATAL(an_formula_parse(cases[k].formula, &f, NULL), RD_OK);
        if (an_formula_plan(&f, cases[k].rank, cases[k].dims, &l, NULL) != RD_OK)
            continue;
        an_layout_op ops[3];
        int n;
        CU_ASSERT_EQUAL(an_layout_ops(&l, ops, &n, NULL), RD_OK);
        CU_ASSERT_EQUAL(n, cases[k].n_ops);
        if (n > 0 && n == cases[k].n_ops)
            CU_ASSERT_EQUAL(ops[0].transpose, cases[k].first_is_transpose);
    }
}

/* ---- malformed formulas: why, and a caret under the character ------------------------------------- */

typedef struct bad_case {
    const char *formula;
    int rank;
    int64_t dims[4];
    int pos;         /* byte offset the caret must point at */
    const char *why; /* a phrase of the message */
} bad_case;

static const bad_case bad[] = {
    {"a,b->b,2a", 2, {2, 3}, 7, "digit '2' outside the brackets"},
    {"a,b->b,0a", 2, {2, 3}, 7, "digit '0'"},
    {"a,B->B,a", 2, {2, 3}, 2, "upper-case"},
    {"a;b->b,a", 2, {2, 3}, 1, "unexpected character ';'"},
    {"a,b->b", 2, {2, 3}, 0, "'a' is missing on the right side"},
    {"a,b->b,a,c", 2, {2, 3}, 9, "'c' is not on the left side"},
    {"a,a->a", 2, {2, 3}, 2, "appears twice on the left side"},
    {"a,b->b,a,a", 2, {2, 3}, 9, "appears twice on the right side"},
    {"a,,b->a,b", 3, {2, 1, 3}, 2, "empty group"},
    {"a,b,->a,b", 2, {2, 3}, 4, "empty group before '->'"},
    {"a,b->a,b,", 2, {2, 3}, 9, "empty group"},
    {"a,b", 2, {2, 3}, 3, "missing '->'"},
    {"a,b->", 2, {2, 3}, 5, "the right side is empty"},
    {"->a", 1, {2}, 0, "the left side is empty"},
    {"a,b->a->b", 2, {2, 3}, 6, "a second '->'"},
    {"a-b->ab", 2, {2, 3}, 1, "'-' must be followed by '>'"},
    {"a>b", 2, {2, 3}, 1, "'>' without '-'"},
    {"a1,b->a,b", 2, {2, 3}, 1, "a 1 inside a group"},
    {"1a,b->a,b", 2, {1, 3}, 1, "after a 1 in the same group"},
    {"ab,c[a=5]->abc", 2, {32, 4}, 1, "'b' would be 32/5 = 6.4, not an integer"},
    {"ab,c->abc", 2, {32, 4}, 1, "cannot infer both 'a' and 'b'"},
    {"ab,c[a=3,b=3]->abc", 2, {32, 4}, 0, "multiply to 9 but dimension 0 has size 32"},
    {"a,b[a=3]->b,a", 2, {4, 5}, 0, "multiply to 3 but dimension 0 has size 4"},
    {"ab,c[a=64]->abc", 2, {32, 4}, 5, "exceed dimension 0"},
    {"ab,c[b=4,a=16]->abc", 2, {32, 4}, 5, "exceed dimension 0"},
    {"a,b,c->abc", 2, {2, 3}, 5, "the left side has 3 groups but the tensor has rank 2"},
    {"1,b->b", 2, {3, 4}, 0, "a 1 marks a dimension of size 1, but dimension 0 has size 3"},
    {"ab,c[a=2->abc", 2, {32, 4}, 8, "expected ',' or ']'"},
    {"ab,c[a=2", 2, {32, 4}, 8, "missing ']'"},
    {"ab,c[a2]->abc", 2, {32, 4}, 6, "expected '=' after 'a'"},
    {"ab,c[a=]->abc", 2, {32, 4}, 7, "expected a positive integer"},
    {"ab,c[a=0]->abc", 2, {32, 4}, 7, "a size must be at least 1"},
    {"ab,c[a=99999999999999]->abc", 2, {32, 4}, 7, "too large"},
    {"ab,c[x=2]->abc", 2, {32, 4}, 5, "not a letter of the left side"},
    {"ab,c[a=2,a=2]->abc", 2, {32, 4}, 9, "assigned twice"},
    {"ab,c[=2]->abc", 2, {32, 4}, 5, "expected a letter"},
    {"ab,c->abc[a=2]", 2, {32, 4}, 9, "go at the end of the left side"},
    {"[a=2]->a", 1, {2}, 0, "after the groups of the left side"},
    {"ab,c[a=2]x->abc", 2, {32, 4}, 9, "expected '->' after the brackets"},
    {"a,b->b,a]", 2, {2, 3}, 8, "']' without '['"},
    {"a->1,1,1,1,1,1,1,1,a", 1, {2}, 19, "more than 8 groups on the right side"},
    {"a,b,c,d,e,f,g,h,i->a", 1, {2}, 16, "more than 8 groups on the left side"},
};
#define N_BAD ((int)(sizeof bad / sizeof bad[0]))

/* The caret line of a message: the offset of '^' after the 4-space indent. */
static int caret_pos(const char *msg)
{
    const char *line = strrchr(msg, '\n');
    if (!line || !strchr(line, '^'))
        return -1;
    return (int)(strchr(line, '^') - (line + 1)) - 4;
}

static void test_malformed(void)
{
    for (int k = 0; k < N_BAD; k++) {
        const bad_case *c = &bad[k];
        an_formula f;
        an_layout l;
        rd_error err = {0};
        rd_status st = an_formula_parse(c->formula, &f, &err);
        if (st == RD_OK)
            st = an_formula_plan(&f, c->rank, c->dims, &l, &err);
        bool ok =
            st == RD_E_PARSE && strstr(err.msg, c->why) && caret_pos(err.msg) == c->pos && strstr(err.msg, c->formula);
        if (!ok)
            fprintf(stderr, "\n'%s': status %d, caret %d (want %d), message:\n%s\n", c->formula, st, caret_pos(err.msg),
                    c->pos, err.msg);
        CU_ASSERT(ok);
    }
    char long_formula[300];
    memset(long_formula, 'a', sizeof long_formula - 1);
    long_formula[sizeof long_formula - 1] = '\0';
    rd_error err;
    an_formula f;
    CU_ASSERT_EQUAL(an_formula_parse(long_formula, &f, &err), RD_E_PARSE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "longer than 256"));
    CU_ASSERT_EQUAL(an_formula_parse("a,b\x01->b,a", &f, &err), RD_E_PARSE);
    CU_ASSERT_EQUAL(caret_pos(err.msg), 3);
}

/* ---- random valid formulas ---------------------------------------------------------------------------- */

/* A random valid formula for dims into buf; at most 7 letters so every plan fits rank 8. */
static void random_formula(int rank, const int64_t *dims, char *buf, size_t len)
{
    int letters[26];
    for (int k = 0; k < 26; k++)
        letters[k] = k;
    for (int k = 25; k > 0; k--) {
        int j = rnd_int(k + 1), t = letters[k];
        letters[k] = letters[j];
        letters[j] = t;
    }
    int used = 0, order[26], n_order = 0;
    char left[128] = "", assign[128] = "";
    size_t ll = 0, al = 0;
    int budget = 7;
    for (int d = 0; d < rank; d++) {
        if (d)
            ll += (size_t)snprintf(left + ll, sizeof left - ll, ",");
        if (dims[d] == 1 && rnd_int(2)) {
            ll += (size_t)snprintf(left + ll, sizeof left - ll, "1");
            continue;
        }
        int remaining_dims = rank - d - 1;
        int max_k = budget - remaining_dims;
        int k = 1 + rnd_int(max_k < 3 ? (max_k < 1 ? 1 : max_k) : 3);
        budget -= k;
        int64_t rest = dims[d];
        int unassigned = rnd_int(k + 1); /* k: every size assigned */
        for (int j = 0; j < k; j++) {
            int64_t factor = rest;
            if (j + 1 < k) {
                int64_t divs[64];
                int nd = 0;
                for (int64_t v = 1; v <= rest && nd < 64; v++)
                    if (rest % v == 0)
                        divs[nd++] = v;
                factor = divs[rnd_int(nd)];
            }
            rest /= factor;
            int letter = letters[used++];
            order[n_order++] = letter;
            ll += (size_t)snprintf(left + ll, sizeof left - ll, "%c", 'a' + letter);
            if (j != unassigned)
                al += (size_t)snprintf(assign + al, sizeof assign - al, "%s%c=%lld", al ? "," : "", 'a' + letter,
                                       (long long)factor);
        }
    }
    for (int k = n_order - 1; k > 0; k--) {
        int j = rnd_int(k + 1), t = order[k];
        order[k] = order[j];
        order[j] = t;
    }
    /* right: the shuffled letters in consecutive groups, with some 1s, at most 8 groups */
    char right[128] = "";
    size_t rl = 0;
    int groups = 0;
    for (int k = 0; k < n_order;) {
        if (groups < 7 && rnd_int(4) == 0) {
            rl += (size_t)snprintf(right + rl, sizeof right - rl, "%s1", groups ? "," : "");
            groups++;
            continue;
        }
        int g = 1 + rnd_int(n_order - k);
        if (groups == 7)
            g = n_order - k;
        rl += (size_t)snprintf(right + rl, sizeof right - rl, "%s", groups ? "," : "");
        for (int j = 0; j < g; j++)
            rl += (size_t)snprintf(right + rl, sizeof right - rl, "%s%c", rnd_int(5) ? "" : " ", 'a' + order[k + j]);
        k += g;
        groups++;
    }
    if (groups == 0)
        snprintf(right, sizeof right, "1");
    snprintf(buf, len, "%s%s%s%s->%s", left, al ? "[" : "", assign, al ? "]" : "", right);
}

static void random_shape(int *rank, int64_t *dims)
{
    static const int64_t sizes[] = {1, 2, 3, 4, 6, 8, 12};
    *rank = 1 + rnd_int(4);
    for (int d = 0; d < *rank; d++)
        dims[d] = sizes[rnd_int(7)];
}

static void test_random_formulas(void)
{
    for (int k = 0; k < 300; k++) {
        int rank;
        int64_t dims[RD_MAX_RANK];
        random_shape(&rank, dims);
        char formula[256];
        random_formula(rank, dims, formula, sizeof formula);
        check_oracle(formula, rank, dims);
    }
}

/* ---- edited models against the originals ------------------------------------------------------------------ */

static void add_const(rd_onnx_builder *b, const char *name, int rank, const int64_t *dims)
{
    rd_tensor t;
    fill_random(&t, rank, dims);
    rd_onnx_add_initializer(b, name, &t, RD_ONNX_RAW);
    rd_tensor_fini(&t);
}

static void add_shape(rd_onnx_builder *b, const char *name, int rank, const int64_t *dims)
{
    rd_tensor t;
    const int64_t n = rank;
    rd_tensor_alloc(&t, RD_DT_I64, 1, &n, NULL);
    memcpy(t.data, dims, (size_t)rank * sizeof *dims);
    rd_onnx_add_initializer(b, name, &t, RD_ONNX_RAW);
    rd_tensor_fini(&t);
}

static void save_builder(rd_onnx_builder *b, void **buf, size_t *len)
{
    CU_ASSERT_EQUAL_FATAL(rd_onnx_builder_write(b, buf, len, NULL), RD_OK);
    rd_onnx_builder_destroy(b);
}

/* x -> [Transpose pre] -> Mul(w) -> Add(c) -> Relu -> [Transpose back] -> y: element-wise, so y has x's shape. */
static void eltwise_model(int rank, const int64_t *dims, const int64_t *pre, void **buf, size_t *len)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "x", RD_DT_F32, rank, dims, NULL);
    int64_t mid[RD_MAX_RANK];
    for (int d = 0; d < rank; d++)
        mid[d] = pre ? dims[pre[d]] : dims[d];
    add_const(b, "w", rank, mid);
    add_const(b, "c", 0, NULL);
    const char *in = "x";
    if (pre) {
        rd_onnx_attr_ints(
            rd_onnx_add_node(b, "Transpose", "pre", (const char *const[]){"x"}, 1, (const char *const[]){"xt"}, 1),
            "perm", pre, (size_t)rank);
        in = "xt";
    }
    rd_onnx_add_node(b, "Mul", "mul", (const char *const[]){in, "w"}, 2, (const char *const[]){"m"}, 1);
    rd_onnx_add_node(b, "Add", "add", (const char *const[]){"m", "c"}, 2, (const char *const[]){"a"}, 1);
    rd_onnx_add_node(b, "Relu", "relu", (const char *const[]){"a"}, 1, (const char *const[]){pre ? "r" : "y"}, 1);
    if (pre) {
        int64_t back[RD_MAX_RANK];
        for (int d = 0; d < rank; d++)
            back[pre[d]] = d;
        rd_onnx_attr_ints(
            rd_onnx_add_node(b, "Transpose", "post", (const char *const[]){"r"}, 1, (const char *const[]){"y"}, 1),
            "perm", back, (size_t)rank);
    }
    rd_onnx_add_output(b, "y", RD_DT_F32, rank, dims, NULL);
    save_builder(b, buf, len);
}

/* NHWC x [1,6,5,4] -> Transpose to NCHW -> Conv 3x3 -> Relu -> Transpose to NHWC -> y [1,6,5,3] */
static void conv_model(bool nhwc, void **buf, size_t *len)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    const int64_t xn[4] = {1, 6, 5, 4}, xc[4] = {1, 4, 6, 5}, yn[4] = {1, 6, 5, 3}, yc[4] = {1, 3, 6, 5};
    rd_onnx_add_input(b, "x", RD_DT_F32, 4, nhwc ? xn : xc, NULL);
    add_const(b, "w", 4, (const int64_t[]){3, 4, 3, 3});
    add_const(b, "bias", 1, (const int64_t[]){3});
    if (nhwc)
        rd_onnx_attr_ints(
            rd_onnx_add_node(b, "Transpose", "to_nchw", (const char *const[]){"x"}, 1, (const char *const[]){"xc"}, 1),
            "perm", (const int64_t[]){0, 3, 1, 2}, 4);
    rd_onnx_node *n = rd_onnx_add_node(b, "Conv", "conv", (const char *const[]){nhwc ? "xc" : "x", "w", "bias"}, 3,
                                       (const char *const[]){"cv"}, 1);
    rd_onnx_attr_ints(n, "pads", (const int64_t[]){1, 1, 1, 1}, 4);
    rd_onnx_add_node(b, "Relu", "relu", (const char *const[]){"cv"}, 1, (const char *const[]){nhwc ? "r" : "y"}, 1);
    if (nhwc)
        rd_onnx_attr_ints(
            rd_onnx_add_node(b, "Transpose", "to_nhwc", (const char *const[]){"r"}, 1, (const char *const[]){"y"}, 1),
            "perm", (const int64_t[]){0, 2, 3, 1}, 4);
    rd_onnx_add_output(b, "y", RD_DT_F32, 4, nhwc ? yn : yc, NULL);
    save_builder(b, buf, len);
}

/* x [2,3,4] -> Reshape [6,4] -> MatMul [4,5] -> Reshape [2,3,5] -> y */
static void matmul_model(void **buf, size_t *len)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "x", RD_DT_F32, 3, (const int64_t[]){2, 3, 4}, NULL);
    add_const(b, "w", 2, (const int64_t[]){4, 5});
    add_shape(b, "s1", 2, (const int64_t[]){6, 4});
    add_shape(b, "s2", 3, (const int64_t[]){2, 3, 5});
    rd_onnx_add_node(b, "Reshape", "flat", (const char *const[]){"x", "s1"}, 2, (const char *const[]){"x2"}, 1);
    rd_onnx_add_node(b, "MatMul", "mm", (const char *const[]){"x2", "w"}, 2, (const char *const[]){"m"}, 1);
    rd_onnx_add_node(b, "Reshape", "unflat", (const char *const[]){"m", "s2"}, 2, (const char *const[]){"y"}, 1);
    rd_onnx_add_output(b, "y", RD_DT_F32, 3, (const int64_t[]){2, 3, 5}, NULL);
    save_builder(b, buf, len);
}

static rd_model *load(const void *buf, size_t len)
{
    rd_model *m = NULL;
    rd_error err;
    if (rd_model_load_mem(buf, len, "edited.onnx", NULL, NULL, &m, &err) != RD_OK)
        fprintf(stderr, "\nload: %s\n", err.msg);
    return m;
}

static void run1(rd_model *m, const rd_tensor *x, rd_tensor *y)
{
    rd_error err;
    rd_run_options opt = {0};
    if (rd_model_run(m, x, 1, &opt, y, 1, &err) != RD_OK) {
        fprintf(stderr, "\nrun: %s\n", err.msg);
        CU_FAIL_FATAL("run failed");
    }
}

static void apply_plan(const an_edit_io *io, const rd_tensor *src, rd_tensor *dst)
{
    if (!io->edited) {
        rd_tensor_clone(dst, src, NULL);
        return;
    }
    CU_ASSERT_EQUAL_FATAL(rd_tensor_alloc(dst, RD_DT_F32, io->plan.out_rank, io->plan.out_dims, NULL), RD_OK);
    an_layout_apply(&io->plan, src->data, dst->data, sizeof(float));
}

/*
 * Edits x and/or y of the model with the formulas and checks: the edited model loads, gives bit for bit
 * the transformed outputs of the original on the transformed input, and so does its ONNX round trip.
 * Returns the edited model's layout layer count (-1 on failure).
 */
static int check_edit(const void *buf, size_t len, const char *fin, const char *fout)
{
    rd_model *m = load(buf, len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    an_edit_io ins[1] = {{0}}, outs[1] = {{0}};
    rd_error err;
    int layers = -1;
    if (fin && an_edit_plan_io(m, "x", fin, false, ins, &err) != RD_OK)
        fprintf(stderr, "\n%s\n", err.msg);
    if (fout && an_edit_plan_io(m, "y", fout, true, outs, &err) != RD_OK)
        fprintf(stderr, "\n%s\n", err.msg);
    CU_ASSERT_EQUAL(ins[0].edited, fin != NULL);
    CU_ASSERT_EQUAL(outs[0].edited, fout != NULL);
    void *ebuf = NULL;
    size_t elen = 0;
    an_edit_stats stats;
    if (an_edit_write(m, ins, outs, &ebuf, &elen, &stats, &err) != RD_OK) {
        fprintf(stderr, "\nedit: %s\n", err.msg);
        CU_FAIL("edit failed");
        rd_model_destroy(m);
        return -1;
    }
    rd_model *e = load(ebuf, elen);
    CU_ASSERT_PTR_NOT_NULL(e);
    if (e) {
        rd_value_info vi;
        rd_model_value(m, (size_t)rd_model_input(m, 0), &vi);
        rd_tensor x, ex, y, ey, want, ry;
        fill_random(&x, vi.rank, vi.dims);
        run1(m, &x, &y);
        apply_plan(&ins[0], &x, &ex);
        run1(e, &ex, &ey);
        apply_plan(&outs[0], &y, &want);
        bool same = ey.rank == want.rank && memcmp(ey.dims, want.dims, sizeof ey.dims) == 0 &&
                    memcmp(ey.data, want.data, rd_tensor_nbytes(&want)) == 0;
        if (!same)
            fprintf(stderr, "\nedited model differs: in '%s' out '%s'\n", fin ? fin : "", fout ? fout : "");
        CU_ASSERT(same);
        /* ONNX round trip of the edited model */
        void *rbuf = NULL;
        size_t rlen = 0;
        CU_ASSERT_EQUAL(rd_onnx_model_write(e, &rbuf, &rlen, NULL), RD_OK);
        rd_model *r = load(rbuf, rlen);
        CU_ASSERT_PTR_NOT_NULL(r);
        if (r) {
            run1(r, &ex, &ry);
            CU_ASSERT(memcmp(ry.data, ey.data, rd_tensor_nbytes(&ey)) == 0);
            rd_tensor_fini(&ry);
            rd_model_destroy(r);
        }
        free(rbuf);
        layers = an_layout_layer_count(e);
        if (getenv("RD_TEST_VERBOSE"))
            fprintf(stderr, "\n'%s' / '%s': %d layout layers (%d inserted, %d merged)\n", fin ? fin : "",
                    fout ? fout : "", layers, stats.inserted, stats.absorbed);
        rd_tensor_fini(&x);
        rd_tensor_fini(&ex);
        rd_tensor_fini(&y);
        rd_tensor_fini(&ey);
        rd_tensor_fini(&want);
        rd_model_destroy(e);
    }
    free(ebuf);
    rd_model_destroy(m);
    return layers;
}

static void test_models_examples(void)
{
    for (int k = 0; k < N_EXAMPLES; k++) {
        const example *e = &examples[k];
        void *buf;
        size_t len;
        eltwise_model(e->rank, e->dims, NULL, &buf, &len);
        check_edit(buf, len, e->formula, NULL);
        check_edit(buf, len, NULL, e->formula);
        check_edit(buf, len, e->formula, e->formula);
        free(buf);
    }
}

static void test_conv_cancels(void)
{
    void *buf;
    size_t len;
    /* an NHWC model taking NCHW: the inserted Transposes cancel the model's own */
    conv_model(true, &buf, &len);
    CU_ASSERT_EQUAL(check_edit(buf, len, "a,b,c,d->a,d,b,c", "a,b,c,d->a,d,b,c"), 0);
    CU_ASSERT_EQUAL(check_edit(buf, len, "a,b,c,d->a,d,b,c", NULL), 1);
    CU_ASSERT_EQUAL(check_edit(buf, len, "a,b,c,d->1,ad,b,c", NULL), 1); /* the merged map is a Reshape: gone */
    free(buf);
    /* an NCHW model taking NHWC: one Transpose each side */
    conv_model(false, &buf, &len);
    CU_ASSERT_EQUAL(check_edit(buf, len, "a,b,c,d->a,c,d,b", "a,b,c,d->a,c,d,b"), 2);
    CU_ASSERT_EQUAL(check_edit(buf, len, "a,bc,d,e[b=2]->a,b,de,c", "a,b,c,d->d,acb,1"), 4);
    free(buf);
}

static void test_matmul_reshapes_merge(void)
{
    void *buf;
    size_t len;
    matmul_model(&buf, &len);
    /* the inserted Reshape back to [2,3,4] merges with the model's Reshape to [6,4]: none left */
    CU_ASSERT_EQUAL(check_edit(buf, len, "a,b,c->ab,c", "a,b,c->ab,c"), 0);
    CU_ASSERT_EQUAL(check_edit(buf, len, "a,b,c->1,a,b,c", "a,b,c->a,b,1,c"), 2);
    /* a transpose each side; the output one cannot be a single Transpose (c, then b outer of a) */
    CU_ASSERT_EQUAL(check_edit(buf, len, "a,b,c->c,b,a", "a,b,c->c,ba"), 5);
    free(buf);
}

static void test_random_models(void)
{
    for (int k = 0; k < 60; k++) {
        int rank;
        int64_t dims[RD_MAX_RANK], pre[RD_MAX_RANK];
        random_shape(&rank, dims);
        for (int d = 0; d < rank; d++)
            pre[d] = d;
        for (int d = rank - 1; d > 0; d--) {
            int j = rnd_int(d + 1);
            int64_t t = pre[d];
            pre[d] = pre[j];
            pre[j] = t;
        }
        void *buf;
        size_t len;
        eltwise_model(rank, dims, k % 2 ? pre : NULL, &buf, &len);
        char fin[256], fout[256];
        random_formula(rank, dims, fin, sizeof fin);
        random_formula(rank, dims, fout, sizeof fout);
        CU_ASSERT(check_edit(buf, len, fin, fout) >= 0);
        free(buf);
    }
}

static void test_plan_errors(void)
{
    void *buf;
    size_t len;
    conv_model(false, &buf, &len);
    rd_model *m = load(buf, len);
    an_edit_io io[1] = {{0}};
    rd_error err;
    CU_ASSERT_EQUAL(an_edit_plan_io(m, "nope", "a->a", false, io, &err), RD_E_NOTFOUND);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "'x'"));
    CU_ASSERT_EQUAL(an_edit_plan_io(m, "x", "a,b,c->a,b,c", false, io, &err), RD_E_PARSE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "input 'x' (1x4x6x5)"));
    CU_ASSERT_EQUAL(an_edit_plan_io(m, "x", "a,b,c,d->a,c,d,b", false, io, &err), RD_OK);
    CU_ASSERT_EQUAL(an_edit_plan_io(m, "x", "a,b,c,d->a,c,d,b", false, io, &err), RD_E_INVAL);
    rd_model_destroy(m);
    free(buf);
}

/* ---- the command ---------------------------------------------------------------------------------------- */

static void test_cli(void)
{
    char *dir = rd_test_tmpdir("onnx_edit");
    char model[512], out[512], list[512], npy[512], newlist[512];
    snprintf(model, sizeof model, "%s/conv.onnx", dir);
    snprintf(out, sizeof out, "%s/out/conv_nchw.onnx", dir);
    void *buf;
    size_t len;
    conv_model(true, &buf, &len);
    FILE *f = fopen(model, "wb");
    fwrite(buf, 1, len, f);
    fclose(f);
    free(buf);
    char outdir[512];
    snprintf(outdir, sizeof outdir, "%s/out", dir);
    CU_ASSERT_EQUAL(mkdir(outdir, 0777), 0);
    /* a dataset of two NHWC samples of the model's input (1x6x5x4: its graph layout is NHWC already) */
    snprintf(list, sizeof list, "%s/dataset.txt", dir);
    f = fopen(list, "w");
    rd_tensor s[2];
    for (int k = 0; k < 2; k++) {
        fill_random(&s[k], 4, (const int64_t[]){1, 6, 5, 4});
        snprintf(npy, sizeof npy, "%s/s%d.npy", dir, k);
        rd_npy_save(npy, &s[k], NULL);
        fprintf(f, "s%d.npy\n", k);
    }
    fclose(f);

    rd_cli_result r = rd_test_cli("onnx-edit", model, "-o", out, "--input", "x=a,b,c,d->a,d,b,c", "--output",
                                  "y=a,b,c,d->a,d,b,c", "--dataset", list, "--input-layout", "nchw", NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    RD_ASSERT_HAS_TEXTS(r.out, "layout layers (Reshape/Transpose): 2 before, 0 after",
                        "input  x                        1x6x5x4 -> 1x4x6x5");
    if (r.code)
        fprintf(stderr, "\n%s%s\n", r.out, r.errs);
    rd_test_cli_free(&r);

    /* the new dataset: marked, and holding the samples in the edited layout */
    snprintf(newlist, sizeof newlist, "%s/out/dataset.txt", dir);
    rd_dataset ds;
    CU_ASSERT_EQUAL_FATAL(rd_dataset_load(newlist, 1, &ds, NULL), RD_OK);
    CU_ASSERT(ds.graph_layout);
    CU_ASSERT_EQUAL(ds.n_samples, 2);
    for (size_t k = 0; k < ds.n_samples && k < 2; k++) {
        rd_tensor t;
        CU_ASSERT_EQUAL_FATAL(rd_npy_load(rd_dataset_path(&ds, k, 0), &t, NULL), RD_OK);
        CU_ASSERT(t.rank == 4 && t.dims[1] == 4 && t.dims[2] == 6 && t.dims[3] == 5);
        const float *a = s[k].data, *b = t.data;
        bool same = true;
        for (int h = 0; h < 6; h++)
            for (int w = 0; w < 5; w++)
                for (int c = 0; c < 4; c++)
                    same = same && a[(h * 5 + w) * 4 + c] == b[(c * 6 + h) * 5 + w];
        CU_ASSERT(same);
        rd_tensor_fini(&t);
    }
    rd_dataset_fini(&ds);
    rd_tensor_fini(&s[0]);
    rd_tensor_fini(&s[1]);

    RD_CLI_EXPECT(0, RD_TEXTS("layout layers (Reshape/Transpose) 0"), NULL, "inspect", out);

    /* a malformed formula: usage error with the caret */
    RD_CLI_EXPECT(2, NULL, RD_TEXTS("digit '2' outside the brackets", "\n    a,b,c,d->a,d,b,2c\n                   ^"),
                  "onnx-edit", model, "-o", out, "--input", "x=a,b,c,d->a,d,b,2c");
    RD_CLI_EXPECT(2, NULL, NULL, "onnx-edit", model, "-o", out);
    RD_CLI_EXPECT(2, NULL, RD_TEXTS("no output 'z'"), "onnx-edit", model, "-o", out, "--output", "z=a->a");
    RD_CLI_EXPECT(0, NULL, NULL, "onnx-edit", "--help");
    free(dir);
}

RD_TEST_REGISTER(register_onnx_edit)
{
    RD_SUITE("onnx_edit", {"issue formulas", test_examples}, {"letters are independent", test_letters_independent},
             {"fewest layers", test_fewest_layers}, {"malformed formulas", test_malformed},
             {"random formulas", test_random_formulas}, {"models: issue formulas", test_models_examples},
             {"models: Conv with Transposes cancel", test_conv_cancels},
             {"models: MatMul with Reshapes merge", test_matmul_reshapes_merge}, {"models: random", test_random_models},
             {"plan errors", test_plan_errors}, {"command", test_cli});
}
