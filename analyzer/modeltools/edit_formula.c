/*
 * edit_formula.c: parsing RKNN's onnx_edit formulas and the layout plans of Reshape/Transpose chains.
 *
 * Plan invariant: the atoms are factors (> 1) of the input's flat index, outermost first, and order[]
 * is the output's flat index order over the same atoms; every input and output dim boundary falls
 * between atoms (a dim of size 1 holds none). Splitting an atom into (outer, inner) keeps this true on
 * both sides, which is all a Reshape needs. Formulas are at most 256 characters; plans at most 64 atoms.
 */
#include "edit_formula.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- errors with a caret --------------------------------------------------------------------- */

/* RD_E_PARSE "why (character N)" then the formula and a caret under byte pos. */
static rd_status caret_error(rd_error *err, const char *text, int pos, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static rd_status caret_error(rd_error *err, const char *text, int pos, const char *fmt, ...)
{
    char why[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    int len = (int)strnlen(text, AN_FORMULA_MAX_LEN);
    if (pos > len)
        pos = len;
    /* control characters would break the caret's alignment: show them as '?' */
    char shown[AN_FORMULA_MAX_LEN + 1];
    for (int i = 0; i < len; i++)
        shown[i] = (unsigned char)text[i] < 0x20 || (unsigned char)text[i] >= 0x7f ? '?' : text[i];
    shown[len] = '\0';
    return rd_errorf(err, RD_E_PARSE, "%s (character %d)\n    %s\n    %*s^", why, pos + 1, shown, pos, "");
}

/* ---- parsing ----------------------------------------------------------------------------------- */

typedef struct parser {
    const char *s;
    int len;
    int i;
    an_formula *f;
    int first_pos[2][AN_FORMULA_LETTERS]; /* where each letter was seen on each side, -1 if not */
    rd_error *err;
} parser;

static bool is_space(char c)
{
    return c == ' ' || c == '\t';
}

static void skip_spaces(parser *p)
{
    while (p->i < p->len && is_space(p->s[p->i]))
        p->i++;
}

/* Why a character outside the brackets is refused. */
static rd_status bad_char(parser *p, int pos)
{
    char c = p->s[pos];
    if (c >= '0' && c <= '9')
        return caret_error(p->err, p->s, pos,
                           "digit '%c' outside the brackets: only 1 (a dimension of size 1) is allowed there; "
                           "sizes go in brackets at the end of the left side, as [a=%c]",
                           c, c == '0' ? '2' : c);
    if (c >= 'A' && c <= 'Z')
        return caret_error(p->err, p->s, pos, "upper-case '%c': dimensions are named with the letters a-z", c);
    if (c == '>')
        return caret_error(p->err, p->s, pos, "'>' without '-' before it: the sides are separated by '->'");
    if ((unsigned char)c < 0x20 || (unsigned char)c >= 0x7f)
        return caret_error(p->err, p->s, pos, "unexpected byte 0x%02x: only a-z, 1, ',', '->', spaces and [...]",
                           (unsigned char)c);
    return caret_error(p->err, p->s, pos, "unexpected character '%c': only a-z, 1, ',', '->', spaces and [...]", c);
}

/* Closes the group being read on side (0 left, 1 right); an empty one is an error at pos. */
static rd_status end_group(parser *p, int side, an_formula_group *g, bool *open, int pos, const char *before)
{
    if (!*open)
        return caret_error(p->err, p->s, pos, "empty group before %s: each group is letters or a 1", before);
    int *n = side ? &p->f->n_right : &p->f->n_left;
    if (*n >= RD_MAX_RANK)
        return caret_error(p->err, p->s, g->start,
                           "more than %d groups on the %s side: rknn-diag tensors have at most "
                           "%d dimensions",
                           RD_MAX_RANK, side ? "right" : "left", RD_MAX_RANK);
    (side ? p->f->right : p->f->left)[(*n)++] = *g;
    memset(g, 0, sizeof *g);
    *open = false;
    return RD_OK;
}

/* Parses "[a=2, k=8]" starting at '['; leaves p->i after ']'. */
static rd_status parse_brackets(parser *p)
{
    int open_pos = p->i++;
    for (;;) {
        skip_spaces(p);
        if (p->i >= p->len)
            return caret_error(p->err, p->s, p->len, "missing ']' to close the '[' at character %d", open_pos + 1);
        char c = p->s[p->i];
        if (c < 'a' || c > 'z')
            return caret_error(p->err, p->s, p->i, "expected a letter to assign (as a=2) inside the brackets");
        int letter = c - 'a', lpos = p->i++;
        if (p->first_pos[0][letter] < 0)
            return caret_error(p->err, p->s, lpos, "'%c' is assigned but is not a letter of the left side", c);
        if (p->f->assigned[letter])
            return caret_error(p->err, p->s, lpos, "'%c' is assigned twice", c);
        skip_spaces(p);
        if (p->i >= p->len || p->s[p->i] != '=')
            return caret_error(p->err, p->s, p->i, "expected '=' after '%c' (as %c=2)", c, c);
        p->i++;
        skip_spaces(p);
        int npos = p->i;
        int64_t v = 0;
        while (p->i < p->len && p->s[p->i] >= '0' && p->s[p->i] <= '9') {
            v = v * 10 + (p->s[p->i] - '0');
            if (v > AN_FORMULA_MAX_SIZE)
                return caret_error(p->err, p->s, npos, "size of '%c' is too large (more than %lld)", c,
                                   (long long)AN_FORMULA_MAX_SIZE);
            p->i++;
        }
        if (p->i == npos)
            return caret_error(p->err, p->s, npos, "expected a positive integer after '%c='", c);
        if (v == 0)
            return caret_error(p->err, p->s, npos, "'%c=0': a size must be at least 1", c);
        p->f->assigned[letter] = v;
        p->f->assign_pos[letter] = lpos;
        skip_spaces(p);
        if (p->i < p->len && p->s[p->i] == ',') {
            p->i++;
            continue;
        }
        if (p->i < p->len && p->s[p->i] == ']') {
            p->i++;
            return RD_OK;
        }
        if (p->i >= p->len)
            return caret_error(p->err, p->s, p->len, "missing ']' to close the '[' at character %d", open_pos + 1);
        return caret_error(p->err, p->s, p->i, "expected ',' or ']' after the size of '%c'", c);
    }
}

rd_status an_formula_parse(const char *text, an_formula *out, rd_error *err)
{
    memset(out, 0, sizeof *out);
    if (!text)
        return rd_errorf(err, RD_E_INVAL, "no formula");
    size_t tlen = strlen(text);
    if (tlen > AN_FORMULA_MAX_LEN)
        return caret_error(err, text, AN_FORMULA_MAX_LEN, "formula longer than %d characters", AN_FORMULA_MAX_LEN);
    memcpy(out->text, text, tlen + 1);
    parser p = {.s = out->text, .len = (int)tlen, .f = out, .err = err};
    memset(p.first_pos, -1, sizeof p.first_pos);
    out->arrow = -1;
    int side = 0;
    an_formula_group g;
    memset(&g, 0, sizeof g);
    bool open = false, one = false, after_brackets = false;
    rd_status st = RD_OK;
    while (p.i < p.len && st == RD_OK) {
        int pos = p.i;
        char c = p.s[pos];
        if (is_space(c)) {
            p.i++;
            continue;
        }
        if (after_brackets && c != '-')
            return caret_error(err, p.s, pos, "expected '->' after the brackets: they end the left side");
        if (c >= 'a' && c <= 'z') {
            int letter = c - 'a';
            if (one)
                return caret_error(err, p.s, pos, "'%c' after a 1 in the same group: a 1 is a group of its own", c);
            if (p.first_pos[side][letter] >= 0)
                return caret_error(err, p.s, pos, "letter '%c' appears twice on the %s side (first at character %d)", c,
                                   side ? "right" : "left", p.first_pos[side][letter] + 1);
            p.first_pos[side][letter] = pos;
            if (!open)
                g.start = pos;
            g.letter[g.n_letters] = letter;
            g.pos[g.n_letters++] = pos;
            open = true;
            p.i++;
        } else if (c == '1') {
            if (open)
                return caret_error(err, p.s, pos,
                                   "a 1 inside a group: it marks a dimension of size 1 and stands alone "
                                   "between commas");
            g.start = pos;
            open = one = true;
            p.i++;
        } else if (c == ',') {
            st = end_group(&p, side, &g, &open, pos, "','");
            one = false;
            p.i++;
        } else if (c == '-') {
            if (pos + 1 >= p.len || p.s[pos + 1] != '>')
                return caret_error(err, p.s, pos, "'-' must be followed by '>': the sides are separated by '->'");
            if (side)
                return caret_error(err, p.s, pos, "a second '->': a formula has one left and one right side");
            if (!after_brackets) {
                if (!open && out->n_left == 0)
                    return caret_error(err, p.s, pos, "the left side is empty: one group per dimension of the tensor");
                st = end_group(&p, side, &g, &open, pos, "'->'");
            }
            one = after_brackets = false;
            out->arrow = pos;
            side = 1;
            p.i += 2;
        } else if (c == '[') {
            if (side)
                return caret_error(err, p.s, pos,
                                   "assignments in brackets go at the end of the left side, before '->'");
            if (!open && out->n_left == 0)
                return caret_error(err, p.s, pos, "the brackets come after the groups of the left side");
            st = end_group(&p, side, &g, &open, pos, "'['");
            one = false;
            if (st == RD_OK)
                st = parse_brackets(&p);
            after_brackets = true;
        } else if (c == ']') {
            return caret_error(err, p.s, pos, "']' without '['");
        } else {
            return bad_char(&p, pos);
        }
    }
    if (st != RD_OK)
        return st;
    if (!side)
        return caret_error(err, p.s, p.len, "missing '->' between the original dims and the new ones");
    if (!open && out->n_right == 0)
        return caret_error(err, p.s, p.len, "the right side is empty: it lists the new dims");
    if ((st = end_group(&p, side, &g, &open, p.len, "the end")) != RD_OK)
        return st;
    for (int k = 0; k < out->n_right; k++)
        for (int j = 0; j < out->right[k].n_letters; j++) {
            int letter = out->right[k].letter[j];
            if (p.first_pos[0][letter] < 0)
                return caret_error(err, p.s, out->right[k].pos[j], "letter '%c' is not on the left side", 'a' + letter);
        }
    for (int k = 0; k < out->n_left; k++)
        for (int j = 0; j < out->left[k].n_letters; j++) {
            int letter = out->left[k].letter[j];
            if (p.first_pos[1][letter] < 0)
                return caret_error(
                    err, p.s, out->left[k].pos[j],
                    "letter '%c' is missing on the right side: every letter of the left side must appear "
                    "there (only a 1 may be dropped)",
                    'a' + letter);
        }
    return RD_OK;
}

/* ---- plans ------------------------------------------------------------------------------------ */

int64_t an_layout_numel(const an_layout *l)
{
    int64_t n = 1;
    for (int i = 0; i < l->n_atoms; i++)
        n *= l->atom[i];
    return n;
}

static rd_status check_dims(int rank, const int64_t *dims, int64_t *numel, rd_error *err)
{
    if (rank < 0 || rank > AN_LAYOUT_MAX_ATOMS)
        return rd_errorf(err, RD_E_INVAL, "rank %d is out of range", rank);
    int64_t n = 1;
    for (int d = 0; d < rank; d++) {
        if (dims[d] < 1)
            return rd_errorf(err, RD_E_INVAL, "dim %d is %lld: layouts need known dims of at least 1", d,
                             (long long)dims[d]);
        if (__builtin_mul_overflow(n, dims[d], &n) || n > (int64_t)RD_MAX_TENSOR_BYTES)
            return rd_errorf(err, RD_E_LIMIT, "shape has more than %llu elements",
                             (unsigned long long)RD_MAX_TENSOR_BYTES);
    }
    *numel = n;
    return RD_OK;
}

rd_status an_layout_init(an_layout *l, int rank, const int64_t *dims, rd_error *err)
{
    memset(l, 0, sizeof *l);
    int64_t n;
    rd_status st = check_dims(rank, dims, &n, err);
    if (st != RD_OK)
        return st;
    l->in_rank = l->out_rank = rank;
    for (int d = 0; d < rank; d++) {
        l->in_dims[d] = l->out_dims[d] = dims[d];
        if (dims[d] > 1) {
            l->order[l->n_atoms] = l->n_atoms;
            l->atom[l->n_atoms++] = dims[d];
        }
    }
    return RD_OK;
}

/* Splits atom a into (outer, atom[a] / outer): the inner part becomes atom a + 1 on both sides. */
static void split_atom(an_layout *l, int a, int64_t outer)
{
    int64_t inner = l->atom[a] / outer;
    for (int k = l->n_atoms; k > a + 1; k--)
        l->atom[k] = l->atom[k - 1];
    l->atom[a] = outer;
    l->atom[a + 1] = inner;
    int at = 0;
    for (int j = 0; j < l->n_atoms; j++) {
        if (l->order[j] > a)
            l->order[j]++;
        if (l->order[j] == a)
            at = j;
    }
    for (int j = l->n_atoms; j > at + 1; j--)
        l->order[j] = l->order[j - 1];
    l->order[at + 1] = a + 1;
    l->n_atoms++;
}

rd_status an_layout_reshape(an_layout *l, int rank, const int64_t *dims, rd_error *err)
{
    int64_t n = 0;
    rd_status st = check_dims(rank, dims, &n, err);
    if (st != RD_OK)
        return st;
    if (n != an_layout_numel(l))
        return rd_errorf(err, RD_E_INVAL, "reshape to %lld elements from %lld", (long long)n,
                         (long long)an_layout_numel(l));
    an_layout t = *l; /* work on a copy: a failure leaves l as it was */
    int j = 0;
    for (int d = 0; d < rank; d++) {
        int64_t need = dims[d];
        while (need > 1) {
            int64_t s = t.atom[t.order[j]];
            if (s <= need) {
                if (need % s)
                    return rd_errorf(err, RD_E_UNSUPPORTED, "reshape dim %d (%lld) cuts across a factor of %lld", d,
                                     (long long)dims[d], (long long)s);
                need /= s;
            } else {
                if (s % need)
                    return rd_errorf(err, RD_E_UNSUPPORTED, "reshape dim %d (%lld) cuts across a factor of %lld", d,
                                     (long long)dims[d], (long long)s);
                if (t.n_atoms >= AN_LAYOUT_MAX_ATOMS)
                    return rd_errorf(err, RD_E_UNSUPPORTED, "the chain needs more than %d factors",
                                     AN_LAYOUT_MAX_ATOMS);
                split_atom(&t, t.order[j], need);
                need = 1;
            }
            j++;
        }
    }
    t.out_rank = rank;
    memcpy(t.out_dims, dims, (size_t)rank * sizeof *dims);
    *l = t;
    return RD_OK;
}

/* first[d]..first[d+1]: the positions in order[] of output dim d's atoms. */
static void dim_ranges(const an_layout *l, int first[AN_LAYOUT_MAX_ATOMS + 1])
{
    int j = 0;
    for (int d = 0; d < l->out_rank; d++) {
        first[d] = j;
        for (int64_t need = l->out_dims[d]; need > 1; j++)
            need /= l->atom[l->order[j]];
    }
    first[l->out_rank] = j;
}

rd_status an_layout_transpose(an_layout *l, const int64_t *perm, int rank, rd_error *err)
{
    if (rank != l->out_rank)
        return rd_errorf(err, RD_E_INVAL, "perm has %d entries for a tensor of rank %d", rank, l->out_rank);
    bool seen[AN_LAYOUT_MAX_ATOMS] = {false};
    for (int d = 0; d < rank; d++) {
        if (perm[d] < 0 || perm[d] >= rank || seen[perm[d]])
            return rd_errorf(err, RD_E_INVAL, "perm is not a permutation of 0..%d", rank - 1);
        seen[perm[d]] = true;
    }
    int first[AN_LAYOUT_MAX_ATOMS + 1];
    dim_ranges(l, first);
    int order[AN_LAYOUT_MAX_ATOMS];
    int64_t dims[AN_LAYOUT_MAX_ATOMS];
    int j = 0;
    for (int d = 0; d < rank; d++) {
        int src = (int)perm[d];
        dims[d] = l->out_dims[src];
        for (int k = first[src]; k < first[src + 1]; k++)
            order[j++] = l->order[k];
    }
    memcpy(l->order, order, (size_t)l->n_atoms * sizeof *order);
    memcpy(l->out_dims, dims, (size_t)rank * sizeof *dims);
    return RD_OK;
}

void an_layout_inverse(const an_layout *l, an_layout *out)
{
    memset(out, 0, sizeof *out);
    out->in_rank = l->out_rank;
    memcpy(out->in_dims, l->out_dims, (size_t)l->out_rank * sizeof *l->out_dims);
    out->out_rank = l->in_rank;
    memcpy(out->out_dims, l->in_dims, (size_t)l->in_rank * sizeof *l->in_dims);
    out->n_atoms = l->n_atoms;
    /* new atom j is old order[j]; the new output visits old atoms 0, 1, ... i.e. new atom pos(old i) */
    for (int j = 0; j < l->n_atoms; j++) {
        out->atom[j] = l->atom[l->order[j]];
        out->order[l->order[j]] = j;
    }
}

bool an_layout_is_reshape(const an_layout *l)
{
    for (int j = 0; j < l->n_atoms; j++)
        if (l->order[j] != j)
            return false;
    return true;
}

/* ---- plans as ONNX layers ------------------------------------------------------------------------ */

static bool same_dims(int ra, const int64_t *a, int rb, const int64_t *b)
{
    return ra == rb && (ra == 0 || memcmp(a, b, (size_t)ra * sizeof *a) == 0);
}

static an_layout_op reshape_op(int rank, const int64_t *dims)
{
    an_layout_op op = {.transpose = false, .rank = rank};
    memcpy(op.v, dims, (size_t)rank * sizeof *dims);
    return op;
}

/*
 * Blocks of dims (of size > 1) whose atoms are a run of consecutive ids, visited in order by the
 * output: then the dims move as wholes and one Transpose of them suffices. For the input side (out
 * false): the input's dims, ranked by where the output visits them; for the output side: the output's
 * dims, ranked by where they sit in the input. rank_of[d] is that rank for dims of size > 1.
 */
static bool dims_are_blocks(const an_layout *l, bool out_side, int rank_of[RD_MAX_RANK], int *n_blocks)
{
    int pos[AN_LAYOUT_MAX_ATOMS]; /* position of atom id in the output's order */
    for (int j = 0; j < l->n_atoms; j++)
        pos[l->order[j]] = j;
    int rank = out_side ? l->out_rank : l->in_rank;
    const int64_t *dims = out_side ? l->out_dims : l->in_dims;
    int lo[RD_MAX_RANK], k = 0, nb = 0;
    for (int d = 0; d < rank; d++) {
        rank_of[d] = -1;
        if (dims[d] == 1)
            continue;
        int64_t need = dims[d];
        int start = k;
        int prev = -1;
        for (; need > 1; k++) {
            /* input side: atom ids k..; output side: atoms at output positions k.. */
            int here = out_side ? l->order[k] : pos[k];
            if (prev >= 0 && here != prev + 1)
                return false;
            prev = here;
            need /= l->atom[out_side ? l->order[k] : k];
        }
        lo[nb] = out_side ? l->order[start] : pos[start];
        rank_of[d] = nb++;
    }
    /* rank the blocks by lo */
    for (int d = 0; d < rank; d++) {
        if (rank_of[d] < 0)
            continue;
        int r = 0;
        for (int e = 0; e < nb; e++)
            if (lo[e] < lo[rank_of[d]])
                r++;
        rank_of[d] = r;
    }
    for (int d = 0; d < rank; d++)
        if (rank_of[d] >= 0)
            lo[rank_of[d]] = d; /* reuse: block r is dim lo[r] */
    *n_blocks = nb;
    return true;
}

/*
 * Where the r dims of one side (dims; rank_of: the block each dim is, -1 for a 1) stand when the other side's
 * (other_rank, other_dims) blocks are in the same order: order[d] is this side's dim at position d, the
 * blocks in rank order with the 1s where the other side has its 1s when both shapes match that way (returns
 * true), else the 1s first (returns false).
 */
static bool block_order(int r, const int64_t *dims, const int rank_of[RD_MAX_RANK], int nb, int other_rank,
                        const int64_t *other_dims, int order[RD_MAX_RANK])
{
    int by_rank[RD_MAX_RANK], n_ones = 0, ones[RD_MAX_RANK];
    for (int d = 0; d < r; d++) {
        if (rank_of[d] >= 0)
            by_rank[rank_of[d]] = d;
        else
            ones[n_ones++] = d;
    }
    int64_t non1[RD_MAX_RANK];
    int n_non1 = 0, other_ones = 0;
    bool match = other_rank == r;
    for (int d = 0; match && d < other_rank; d++) {
        if (other_dims[d] == 1)
            other_ones++;
        else
            non1[n_non1++] = other_dims[d];
    }
    match = match && n_non1 == nb && other_ones == n_ones;
    for (int b = 0; match && b < nb; b++)
        match = non1[b] == dims[by_rank[b]];
    int b = 0, o = 0;
    for (int d = 0; d < r; d++) {
        if (match)
            order[d] = other_dims[d] == 1 ? ones[o++] : by_rank[b++];
        else
            order[d] = d < n_ones ? ones[d] : by_rank[d - n_ones];
    }
    return match;
}

static bool is_identity(const an_layout_op *t)
{
    for (int d = 0; d < t->rank; d++)
        if (t->v[d] != d)
            return false;
    return true;
}

/* Input dims move as blocks: Transpose of the input [+ Reshape]. */
static int ops_transpose_first(const an_layout *l, const int rank_of[RD_MAX_RANK], int nb, an_layout_op *ops)
{
    int r = l->in_rank, order[RD_MAX_RANK];
    /* the transposed dims: blocks in output order; 1s where the output has its 1s if that matches */
    bool match = block_order(r, l->in_dims, rank_of, nb, l->out_rank, l->out_dims, order);
    an_layout_op t = {.transpose = true, .rank = r};
    for (int d = 0; d < r; d++)
        t.v[d] = order[d];
    int n = 0;
    if (!is_identity(&t))
        ops[n++] = t;
    if (!match)
        ops[n++] = reshape_op(l->out_rank, l->out_dims);
    return n;
}

/* Output dims are blocks of the input: [Reshape +] Transpose into the output. */
static int ops_transpose_last(const an_layout *l, const int rank_of[RD_MAX_RANK], int nb, an_layout_op *ops)
{
    int r = l->out_rank, src_of[RD_MAX_RANK]; /* output dim held at each pre-transpose position */
    /* the pre-transpose dims: output blocks in input order, 1s placed as in the input when it matches */
    bool match = block_order(r, l->out_dims, rank_of, nb, l->in_rank, l->in_dims, src_of);
    an_layout_op pre = {.transpose = false, .rank = r};
    an_layout_op t = {.transpose = true, .rank = r};
    for (int d = 0; d < r; d++) {
        pre.v[d] = l->out_dims[src_of[d]];
        t.v[src_of[d]] = d;
    }
    int n = 0;
    if (!match)
        ops[n++] = pre;
    if (!is_identity(&t))
        ops[n++] = t;
    return n;
}

rd_status an_layout_ops(const an_layout *l, an_layout_op ops[3], int *n_ops, rd_error *err)
{
    *n_ops = 0;
    if (l->in_rank > RD_MAX_RANK || l->out_rank > RD_MAX_RANK)
        return rd_errorf(err, RD_E_UNSUPPORTED, "a layer of rank %d (at most %d)",
                         l->in_rank > l->out_rank ? l->in_rank : l->out_rank, RD_MAX_RANK);
    if (an_layout_is_reshape(l)) {
        if (!same_dims(l->in_rank, l->in_dims, l->out_rank, l->out_dims))
            ops[(*n_ops)++] = reshape_op(l->out_rank, l->out_dims);
        return RD_OK;
    }
    /* best of: Transpose [+ Reshape], [Reshape +] Transpose, Reshape -> Transpose -> Reshape */
    an_layout_op cand[2][3];
    int n_cand[2] = {4, 4}, rank_of[RD_MAX_RANK], nb;
    if (dims_are_blocks(l, false, rank_of, &nb))
        n_cand[0] = ops_transpose_first(l, rank_of, nb, cand[0]);
    if (dims_are_blocks(l, true, rank_of, &nb))
        n_cand[1] = ops_transpose_last(l, rank_of, nb, cand[1]);
    int best = n_cand[1] < n_cand[0] ? 1 : 0;
    if (n_cand[best] <= 3) {
        memcpy(ops, cand[best], (size_t)n_cand[best] * sizeof *ops);
        *n_ops = n_cand[best];
        return RD_OK;
    }
    /* general: merge atoms adjacent on both sides, then split, transpose and merge */
    int64_t atom[AN_LAYOUT_MAX_ATOMS];
    int group_of[AN_LAYOUT_MAX_ATOMS], n = 0;
    for (int a = 0; a < l->n_atoms; a++) {
        bool joins = false;
        if (a > 0)
            for (int j = 1; j < l->n_atoms; j++)
                if (l->order[j] == a && l->order[j - 1] == a - 1)
                    joins = true;
        if (joins) {
            atom[n - 1] *= l->atom[a];
        } else {
            atom[n++] = l->atom[a];
        }
        group_of[a] = n - 1;
    }
    if (n > RD_MAX_RANK)
        return rd_errorf(err, RD_E_UNSUPPORTED, "the layout needs a Transpose of rank %d (at most %d)", n, RD_MAX_RANK);
    an_layout_op t = {.transpose = true, .rank = n};
    int64_t tdims[RD_MAX_RANK];
    int k = 0;
    for (int j = 0; j < l->n_atoms; j++) {
        int gi = group_of[l->order[j]];
        if (k > 0 && t.v[k - 1] == gi)
            continue;
        t.v[k] = gi;
        tdims[k++] = atom[gi];
    }
    if (!same_dims(l->in_rank, l->in_dims, n, atom))
        ops[(*n_ops)++] = reshape_op(n, atom);
    ops[(*n_ops)++] = t;
    if (!same_dims(n, tdims, l->out_rank, l->out_dims))
        ops[(*n_ops)++] = reshape_op(l->out_rank, l->out_dims);
    return RD_OK;
}

void an_layout_apply(const an_layout *l, const void *src, void *dst, size_t esize)
{
    int n = l->n_atoms;
    int64_t stride[AN_LAYOUT_MAX_ATOMS], idx[AN_LAYOUT_MAX_ATOMS] = {0};
    int64_t s = 1;
    for (int a = n - 1; a >= 0; a--) {
        stride[a] = s;
        s *= l->atom[a];
    }
    int64_t total = s, off = 0;
    const char *in = src;
    char *out = dst;
    for (int64_t o = 0; o < total; o++) {
        memcpy(out + (size_t)o * esize, in + (size_t)off * esize, esize);
        /* odometer over the output's atoms, innermost last */
        for (int j = n - 1; j >= 0; j--) {
            int a = l->order[j];
            off += stride[a];
            if (++idx[j] < l->atom[a])
                break;
            off -= stride[a] * l->atom[a];
            idx[j] = 0;
        }
    }
}

/* ---- formulas on shapes --------------------------------------------------------------------------- */

/* The letter sizes of group g on a dim of size dim, inferred where not assigned. */
static rd_status group_sizes(const an_formula *f, const an_formula_group *g, int d, int64_t dim,
                             int64_t size[AN_FORMULA_LETTERS], rd_error *err)
{
    int64_t prod = 1;
    int unknown = -1;
    for (int j = 0; j < g->n_letters; j++) {
        int64_t v = f->assigned[g->letter[j]];
        if (!v) {
            if (unknown >= 0)
                return caret_error(err, f->text, g->pos[j],
                                   "cannot infer both '%c' and '%c' from dimension %d (size %lld): assign all but one "
                                   "in brackets",
                                   'a' + g->letter[unknown < 0 ? j : unknown], 'a' + g->letter[j], d, (long long)dim);
            unknown = j;
            continue;
        }
        if (__builtin_mul_overflow(prod, v, &prod) || prod > dim) {
            return caret_error(err, f->text, f->assign_pos[g->letter[j]],
                               "the sizes assigned to this group exceed dimension %d (size %lld)", d, (long long)dim);
        }
        size[g->letter[j]] = v;
    }
    if (unknown < 0) {
        if (prod != dim)
            return caret_error(err, f->text, g->start,
                               "the sizes assigned in this group multiply to %lld but dimension %d "
                               "has size %lld",
                               (long long)prod, d, (long long)dim);
        return RD_OK;
    }
    if (dim % prod)
        return caret_error(err, f->text, g->pos[unknown], "'%c' would be %lld/%lld = %.4g, not an integer",
                           'a' + g->letter[unknown], (long long)dim, (long long)prod, (double)dim / (double)prod);
    size[g->letter[unknown]] = dim / prod;
    return RD_OK;
}

rd_status an_formula_plan(const an_formula *f, int rank, const int64_t *dims, an_layout *out, rd_error *err)
{
    if (rank != f->n_left)
        return caret_error(err, f->text, f->arrow,
                           "the left side has %d group%s but the tensor has rank %d (one group "
                           "per dimension)",
                           f->n_left, f->n_left == 1 ? "" : "s", rank);
    rd_status st = an_layout_init(out, rank, dims, err);
    if (st != RD_OK)
        return st;
    int64_t size[AN_FORMULA_LETTERS] = {0};
    int64_t split[AN_FORMULA_LETTERS];
    int pos_of[AN_FORMULA_LETTERS]; /* letter -> index in the split order */
    int n_split = 0;
    for (int d = 0; d < rank; d++) {
        const an_formula_group *g = &f->left[d];
        if (g->n_letters == 0) {
            if (dims[d] != 1)
                return caret_error(err, f->text, g->start,
                                   "a 1 marks a dimension of size 1, but dimension %d has size "
                                   "%lld",
                                   d, (long long)dims[d]);
            continue;
        }
        if ((st = group_sizes(f, g, d, dims[d], size, err)) != RD_OK)
            return st;
        for (int j = 0; j < g->n_letters; j++) {
            pos_of[g->letter[j]] = n_split;
            split[n_split++] = size[g->letter[j]];
        }
    }
    int64_t perm[AN_FORMULA_LETTERS], merged[RD_MAX_RANK];
    int n_perm = 0;
    for (int k = 0; k < f->n_right; k++) {
        const an_formula_group *g = &f->right[k];
        merged[k] = 1;
        for (int j = 0; j < g->n_letters; j++) {
            perm[n_perm++] = pos_of[g->letter[j]];
            merged[k] *= size[g->letter[j]];
        }
    }
    if ((st = an_layout_reshape(out, n_split, split, err)) == RD_OK &&
        (st = an_layout_transpose(out, perm, n_perm, err)) == RD_OK)
        st = an_layout_reshape(out, f->n_right, merged, err);
    return st; /* cannot fail for a parsed formula on a fitting shape */
}
