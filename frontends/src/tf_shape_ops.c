/*
 * tf_shape_ops.c: the TensorFlow ops graphs use to compute shapes and to index tensors (Shape, StridedSlice,
 * Pack, Unpack, Split, SplitV, Fill, Range, Cast, IdentityN, Slice, Tile, GatherV2, FloorDiv, FloorMod, ...) as
 * ONNX ops (tf_lower.h). Nothing here needs the shapes: the loader evaluates Shape once the input shapes are
 * known (--input-shape) and folds every node whose inputs are then constant, so a Reshape whose shape a graph
 * computes gets a constant shape at load, and what depends on data runs as the ONNX op. Integers are int64
 * throughout (TensorFlow's int32 shapes included), floats float32, as the constants of this frontend.
 */
#include "tf_lower.h"

#include <stdio.h>

#define REFUSE false

/* ONNX TensorProto data types this frontend writes. */
enum { ONNX_FLOAT = 1, ONNX_INT64 = 7, ONNX_BOOL = 9 };

static const char *base(tf_ctx *C)
{
    const char *out = tf_out(C);
    return out ? out : "";
}

/* A node of op with one output named after the current node plus suffix (fresh); returns that name. */
static const char *step(tf_ctx *C, const char *op, const char *const *in, int n_in, const char *suffix,
                        rd_onnx_node **node)
{
    const char *y = tf_fresh(C, base(C), suffix);
    rd_onnx_node *n = tf_add(C, op, in, n_in, &y, 1);
    if (node)
        *node = n;
    return n ? y : NULL;
}

static bool cast(tf_ctx *C)
{
    int dst = tf_attr_type(C, "DstT", DT_FLOAT);
    int to = dst == DT_FLOAT || dst == DT_DOUBLE || dst == DT_HALF || dst == DT_BFLOAT16 ? ONNX_FLOAT
             : dst == DT_INT32 || dst == DT_INT64                                        ? ONNX_INT64
             : dst == DT_BOOL                                                            ? ONNX_BOOL
                                                                                         : 0;
    if (!to)
        return REFUSE; /* narrower integers wrap: not what this frontend's int64 would do */
    const char *x = tf_in(C, 0), *out = tf_out(C);
    rd_onnx_node *n = tf_add(C, "Cast", &x, 1, &out, 1);
    if (n)
        rd_onnx_attr_int(n, "to", to);
    return true;
}

/* Shape, ShapeN, Size, Rank. */
static bool shape(tf_ctx *C, const char *op)
{
    if (!strcmp(op, "ShapeN")) {
        for (int k = 0; k < tf_n_inputs(C) && k < TF_MAX_IO && C->st == RD_OK; k++) {
            const char *x = tf_in(C, k), *y = tf_out_k(C, k);
            tf_add(C, "Shape", &x, 1, &y, 1);
        }
        return true;
    }
    const char *x = tf_in(C, 0), *out = tf_out(C);
    if (!strcmp(op, "Rank"))
        x = step(C, "Shape", &x, 1, ":shape", NULL);
    tf_add(C, !strcmp(op, "Shape") ? "Shape" : "Size", &x, 1, &out, 1);
    return true;
}

/* StridedSlice with constant begin, end and strides: a Slice, a Squeeze of the shrunk axes, an Unsqueeze of the
   new ones. Entries after an ellipsis address the last axes (negative ONNX axes), so the rank is not needed. */
static bool strided_slice(tf_ctx *C)
{
    int64_t b[RD_MAX_RANK], e[RD_MAX_RANK], s[RD_MAX_RANK];
    int nb = 0, ne = 0, ns = 0;
    if (!tf_const_ints(C, 1, b, RD_MAX_RANK, &nb) || !tf_const_ints(C, 2, e, RD_MAX_RANK, &ne) ||
        !tf_const_ints(C, 3, s, RD_MAX_RANK, &ns))
        return true;
    uint64_t bm = (uint64_t)tf_attr_int(C, "begin_mask", 0), em = (uint64_t)tf_attr_int(C, "end_mask", 0),
             elm = (uint64_t)tf_attr_int(C, "ellipsis_mask", 0), nm = (uint64_t)tf_attr_int(C, "new_axis_mask", 0),
             sm = (uint64_t)tf_attr_int(C, "shrink_axis_mask", 0);
    if (nb != ne || nb != ns || (elm & (elm - 1)))
        return REFUSE; /* lengths that differ, or two ellipses: TensorFlow refuses them too */
    int ell = elm ? __builtin_ctzll(elm) : nb;
    int64_t st[RD_MAX_RANK], en[RD_MAX_RANK], ax[RD_MAX_RANK], sp[RD_MAX_RANK], sq[RD_MAX_RANK], nw[RD_MAX_RANK];
    int n_sl = 0, n_sq = 0, n_nw = 0, in_axis = 0, out_axis = 0;
    int after = 0; /* spec entries after the ellipsis that take an input axis */
    for (int i = ell + 1; i < nb; i++)
        after += !((nm >> i) & 1);
    for (int i = 0; i < nb; i++) {
        if (i == ell) {
            in_axis = -after; /* the rest counts from the end */
            continue;
        }
        if ((nm >> i) & 1) {
            if (i > ell)
                return REFUSE; /* a new axis after an ellipsis needs the rank */
            nw[n_nw++] = out_axis++;
            continue;
        }
        if (s[i] == 0)
            return REFUSE;
        int64_t lo = s[i] > 0 ? 0 : INT64_MAX, hi = s[i] > 0 ? INT64_MAX : INT64_MIN;
        if ((sm >> i) & 1) { /* one index, the axis dropped */
            st[n_sl] = b[i], en[n_sl] = b[i] == -1 || b[i] == INT64_MAX ? INT64_MAX : b[i] + 1, sp[n_sl] = 1;
            sq[n_sq++] = in_axis;
        } else {
            st[n_sl] = (bm >> i) & 1 ? lo : b[i], en[n_sl] = (em >> i) & 1 ? hi : e[i], sp[n_sl] = s[i];
            out_axis++;
        }
        ax[n_sl++] = in_axis++;
    }
    const char *x = tf_in(C, 0), *out = tf_out(C), *y = x;
    if (n_sl) {
        const char *sl[5] = {x, tf_init_i64(C, ":starts", st, n_sl), tf_init_i64(C, ":ends", en, n_sl),
                             tf_init_i64(C, ":axes", ax, n_sl), tf_init_i64(C, ":steps", sp, n_sl)};
        if (n_sq || n_nw)
            y = step(C, "Slice", sl, 5, ":slice", NULL);
        else
            tf_add(C, "Slice", sl, 5, &out, 1);
    }
    if (n_sq) {
        const char *q[2] = {y, tf_init_i64(C, ":shrink", sq, n_sq)};
        y = n_nw ? step(C, "Squeeze", q, 2, ":squeeze", NULL) : NULL;
        if (!n_nw)
            tf_add(C, "Squeeze", q, 2, &out, 1);
    }
    if (n_nw)
        tf_add(C, "Unsqueeze", (const char *const[]){y, tf_init_i64(C, ":new_axes", nw, n_nw)}, 2, &out, 1);
    else if (!n_sl && !n_sq)
        tf_add(C, "Identity", &x, 1, &out, 1);
    return true;
}

/* Pack: each value unsqueezed at axis, then one Concat. */
static bool pack(tf_ctx *C)
{
    int n = tf_n_inputs(C);
    int64_t axis = tf_attr_int(C, "axis", 0);
    if (n < 1 || n > TF_MAX_IO)
        return REFUSE;
    const char *part[TF_MAX_IO], *out = tf_out(C), *axes = tf_init_i64(C, ":axis", &axis, 1);
    if (n == 1) {
        tf_add(C, "Unsqueeze", (const char *const[]){tf_in(C, 0), axes}, 2, &out, 1);
        return true;
    }
    for (int i = 0; i < n; i++)
        part[i] = step(C, "Unsqueeze", (const char *const[]){tf_in(C, i), axes}, 2, ":part", NULL);
    rd_onnx_node *c = tf_add(C, "Concat", part, n, &out, 1);
    if (c)
        rd_onnx_attr_int(c, "axis", axis);
    return true;
}

/* Split (axis first), SplitV (sizes, one of them -1 the rest of the axis) and Unpack (squeezed parts). */
static bool split(tf_ctx *C, const char *op)
{
    bool v = !strcmp(op, "SplitV"), unpack = !strcmp(op, "Unpack");
    int64_t axis = 0, sizes[TF_MAX_IO];
    int na = 0, n_out = 0, rest = -1;
    int64_t count = 0;
    if (unpack)
        axis = tf_attr_int(C, "axis", 0), count = tf_attr_int(C, "num", 0);
    else if (!tf_const_ints(C, v ? 2 : 0, &axis, 1, &na))
        return true;
    if (!unpack)
        count = tf_attr_int(C, "num_split", 0);
    if (count < 1 || count > TF_MAX_IO)
        return REFUSE;
    n_out = (int)count;
    const char *x = tf_in(C, v || unpack ? 0 : 1), *split_sizes = NULL;
    if (v) {
        int n = 0;
        int64_t known = 0;
        if (!tf_const_ints(C, 1, sizes, TF_MAX_IO, &n))
            return true;
        if (n != n_out)
            return REFUSE;
        for (int i = 0; i < n; i++)
            if (sizes[i] < 0 && (rest >= 0 || sizes[i] != -1))
                return REFUSE;
            else if (sizes[i] < 0)
                rest = i;
            else if (__builtin_add_overflow(known, sizes[i], &known))
                return REFUSE;
        if (rest < 0) {
            split_sizes = tf_init_i64(C, ":split", sizes, n);
        } else { /* the axis length less the sizes given, computed (and folded at load) */
            rd_onnx_node *g;
            const char *shp = step(C, "Shape", &x, 1, ":shape", NULL);
            const char *dim =
                step(C, "Gather", (const char *const[]){shp, tf_init_i64(C, ":axis", &axis, 1)}, 2, ":dim", &g);
            const char *left =
                step(C, "Sub", (const char *const[]){dim, tf_init_i64(C, ":known", &known, 1)}, 2, ":rest", NULL);
            const char *parts[3] = {rest ? tf_init_i64(C, ":before", sizes, rest) : NULL, left,
                                    rest + 1 < n ? tf_init_i64(C, ":after", sizes + rest + 1, n - rest - 1) : NULL};
            const char *cat[3];
            int n_cat = 0;
            for (int i = 0; i < 3; i++)
                if (parts[i] || i == 1)
                    cat[n_cat++] = parts[i];
            rd_onnx_node *c;
            split_sizes = n_cat > 1 ? step(C, "Concat", cat, n_cat, ":split", &c) : left;
            if (n_cat > 1 && c)
                rd_onnx_attr_int(c, "axis", 0);
        }
    }
    const char *outs[TF_MAX_IO];
    for (int k = 0; k < n_out; k++)
        outs[k] = unpack ? tf_fresh(C, base(C), ":part") : tf_out_k(C, k);
    rd_onnx_node *s = tf_add(C, "Split", (const char *const[]){x, split_sizes}, split_sizes ? 2 : 1, outs, n_out);
    if (s)
        rd_onnx_attr_int(s, "axis", axis);
    for (int k = 0; unpack && k < n_out; k++) {
        const char *y = tf_out_k(C, k);
        tf_add(C, "Squeeze", (const char *const[]){outs[k], tf_init_i64(C, ":axes", &axis, 1)}, 2, &y, 1);
    }
    return true;
}

/* Slice(x, begin, size): ends are begin + size, or the end of the axis where size is -1. */
static bool slice(tf_ctx *C)
{
    int64_t b[RD_MAX_RANK], sz[RD_MAX_RANK], en[RD_MAX_RANK];
    int nb = 0, ns = 0;
    const rd_tensor *cb = tf_const_in(C, 1), *cs = tf_const_in(C, 2);
    const char *x = tf_in(C, 0), *out = tf_out(C);
    if (cb && cs) {
        if (!tf_const_ints(C, 1, b, RD_MAX_RANK, &nb) || !tf_const_ints(C, 2, sz, RD_MAX_RANK, &ns))
            return true;
        if (nb != ns)
            return REFUSE;
        for (int i = 0; i < nb; i++) /* past the end of any axis stays so */
            if (sz[i] < 0 || __builtin_add_overflow(b[i], sz[i], &en[i]))
                en[i] = INT64_MAX;
        tf_add(C, "Slice", (const char *const[]){x, tf_init_i64(C, ":starts", b, nb), tf_init_i64(C, ":ends", en, nb)},
               3, &out, 1);
        return true;
    }
    const char *begin = tf_in(C, 1), *size = tf_in(C, 2);
    const int64_t big = INT64_MAX, zero = 0;
    const char *sum = step(C, "Add", (const char *const[]){begin, size}, 2, ":sum", NULL);
    const char *open =
        step(C, "Less", (const char *const[]){size, tf_init_i64(C, ":zero", &zero, 1)}, 2, ":open", NULL);
    const char *ends =
        step(C, "Where", (const char *const[]){open, tf_init_i64(C, ":max", &big, 1), sum}, 3, ":ends", NULL);
    tf_add(C, "Slice", (const char *const[]){x, begin, ends}, 3, &out, 1);
    return true;
}

/* GatherV2 (constant axis, batch_dims 0) and Gather (axis 0). */
static bool gather(tf_ctx *C, bool v2)
{
    int64_t axis = 0;
    int na = 0;
    if (v2 && (tf_attr_int(C, "batch_dims", 0) != 0 || !tf_const_ints(C, 2, &axis, 1, &na)))
        return C->st != RD_OK;
    const char *in[2] = {tf_in(C, 0), tf_in(C, 1)}, *out = tf_out(C);
    rd_onnx_node *g = tf_add(C, "Gather", in, 2, &out, 1);
    if (g)
        rd_onnx_attr_int(g, "axis", axis);
    return true;
}

/* FloorDiv and FloorMod: integers exact (a - mod(a, b) divides by b), floats through Floor. */
static bool floor_op(tf_ctx *C, bool div)
{
    int t = tf_attr_type(C, "T", DT_FLOAT);
    bool ints = t == DT_INT32 || t == DT_INT64;
    const char *a = tf_in(C, 0), *b = tf_in(C, 1), *out = tf_out(C);
    rd_onnx_node *n;
    if (ints) {
        if (!div) {
            n = tf_add(C, "Mod", (const char *const[]){a, b}, 2, &out, 1);
            if (n)
                rd_onnx_attr_int(n, "fmod", 0);
            return true;
        }
        const char *m = step(C, "Mod", (const char *const[]){a, b}, 2, ":mod", &n);
        if (n)
            rd_onnx_attr_int(n, "fmod", 0);
        const char *d = step(C, "Sub", (const char *const[]){a, m}, 2, ":exact", NULL);
        tf_add(C, "Div", (const char *const[]){d, b}, 2, &out, 1);
        return true;
    }
    const char *q = step(C, "Div", (const char *const[]){a, b}, 2, ":quotient", NULL);
    if (div) {
        tf_add(C, "Floor", &q, 1, &out, 1);
        return true;
    }
    const char *f = step(C, "Floor", &q, 1, ":floor", NULL);
    const char *p = step(C, "Mul", (const char *const[]){f, b}, 2, ":product", NULL);
    tf_add(C, "Sub", (const char *const[]){a, p}, 2, &out, 1);
    return true;
}

bool tf_lower_shape_node(tf_ctx *C, const char *op, bool *handled)
{
    *handled = true;
    if (!strcmp(op, "Cast"))
        return cast(C);
    if (!strcmp(op, "Shape") || !strcmp(op, "ShapeN") || !strcmp(op, "Size") || !strcmp(op, "Rank"))
        return shape(C, op);
    if (!strcmp(op, "StridedSlice"))
        return strided_slice(C);
    if (!strcmp(op, "Pack"))
        return pack(C);
    if (!strcmp(op, "Split") || !strcmp(op, "SplitV") || !strcmp(op, "Unpack"))
        return split(C, op);
    if (!strcmp(op, "Slice"))
        return slice(C);
    if (!strcmp(op, "GatherV2") || !strcmp(op, "Gather"))
        return gather(C, op[6] == 'V');
    if (!strcmp(op, "FloorDiv") || !strcmp(op, "FloorMod"))
        return floor_op(C, op[5] == 'D');
    const char *out;
    if (!strcmp(op, "Fill")) { /* Fill(dims, value): the scalar broadcast to dims */
        out = tf_out(C);
        tf_add(C, "Expand", (const char *const[]){tf_in(C, 1), tf_in(C, 0)}, 2, &out, 1);
        return true;
    }
    if (!strcmp(op, "Range") || !strcmp(op, "Tile")) {
        const char *in[3] = {tf_in(C, 0), tf_in(C, 1), op[0] == 'R' ? tf_in(C, 2) : NULL};
        out = tf_out(C);
        tf_add(C, op, in, op[0] == 'R' ? 3 : 2, &out, 1);
        return true;
    }
    if (!strcmp(op, "IdentityN")) {
        for (int k = 0; k < tf_n_inputs(C) && k < TF_MAX_IO && C->st == RD_OK; k++) {
            const char *x = tf_in(C, k), *y = tf_out_k(C, k);
            tf_add(C, "Identity", &x, 1, &y, 1);
        }
        return true;
    }
    *handled = false;
    return false;
}
