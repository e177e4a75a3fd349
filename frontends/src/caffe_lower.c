/*
 * caffe_lower.c: a Caffe net (.prototxt tree, caffe_text.c) with its weights (.caffemodel, protobuf-c from
 * proto/caffe.proto) written as ONNX. Caffe is NCHW, as ONNX. Layer parameters come from the .prototxt and
 * weights from the .caffemodel, matched by layer name, as RKNN's load_caffe takes them.
 *
 * Names: a layer's output keeps its top's name; a layer that writes a top again (Caffe's in-place ReLU, BatchNorm,
 * Scale on "conv1") names its output after the layer ("relu1"), since an ONNX value is written once. Later
 * layers reading that top read the newest value, as Caffe does.

 */
#include "caffe_lower.h"

#include <math.h>
#include <stdio.h>

bool cf_opt_fail(cf_ctx *C, const rd_error *le)
{
    cf_fail(C, le->code, "%s", le->msg);
    return true;
}

const char *cf_layer_name(const cf_ctx *C)
{
    return ct_str(C->d, C->layer, "name", "");
}

const char *cf_fresh(cf_ctx *C, const char *base, const char *suffix)
{
    const char *s = fe_names_fresh(&C->names, base, suffix);
    if (!s)
        cf_fail(C, RD_E_NOMEM, "out of memory");
    return s;
}

void cf_set_rank(cf_ctx *C, const char *v, int rank)
{
    fe_map_slot *s = fe_map_put(&C->rank, v, NULL, NULL);
    if (!s)
        cf_fail(C, RD_E_NOMEM, "out of memory");
    else
        s->val = (void *)(intptr_t)rank;
}

int cf_rank_of(const cf_ctx *C, const char *v)
{
    fe_map_slot *s = fe_map_get(&C->rank, v);
    return s ? (int)(intptr_t)s->val : 4;
}

rd_onnx_node *cf_node(cf_ctx *C, const char *op, const char *const *in, int n_in, const char *const *out, int n_out)
{
    return fe_node(C->b, &C->st, C->err, op, cf_layer_name(C), in, n_in, out, n_out);
}

const char *cf_init(cf_ctx *C, const char *base, const char *suffix, rd_tensor *t)
{
    const char *nm = C->st == RD_OK ? cf_fresh(C, base, suffix) : NULL;
    if (nm && rd_onnx_add_initializer(C->b, nm, t, RD_ONNX_RAW) != RD_OK)
        cf_fail(C, RD_E_NOMEM, "out of memory");
    rd_tensor_fini(t);
    return C->st == RD_OK ? nm : NULL;
}

const char *cf_init_i64(cf_ctx *C, const char *base, const char *suffix, const int64_t *v, int n)
{
    rd_tensor t = {0};
    rd_error e;
    if (rd_tensor_alloc(&t, RD_DT_I64, 1, (const int64_t[]){n}, &e) != RD_OK)
        return cf_fail(C, e.code, "%s", e.msg), NULL;
    if (n)
        memcpy(t.data, v, (size_t)n * sizeof *v);
    return cf_init(C, base, suffix, &t);
}

const char *cf_init_scalar(cf_ctx *C, const char *base, const char *suffix, float v)
{
    rd_tensor t = {0};
    rd_error e;
    if (rd_tensor_alloc(&t, RD_DT_F32, 0, NULL, &e) != RD_OK)
        return cf_fail(C, e.code, "%s", e.msg), NULL;
    *(float *)t.data = v;
    return cf_init(C, base, suffix, &t);
}

/* ---- weights ------------------------------------------------------------------------------------------- */

/* Blob k of the current layer as float32 with its own shape (legacy num/channels/height/width when it has no
   BlobShape); want_numel >= 0 checks the element count. */
bool cf_blob(cf_ctx *C, int k, int64_t want_numel, rd_tensor *out)
{
    memset(out, 0, sizeof *out);
    if (C->st != RD_OK)
        return false;
    const char *name = cf_layer_name(C);
    fe_map_slot *s = fe_map_get(&C->weights, name);
    const Rdcaffe__LayerParameter *lp = s ? s->val : NULL;
    if (!lp || (size_t)k >= lp->n_blobs)
        return cf_fail(C, RD_E_PARSE,
                       "%s: layer '%s' (%s line %d) has %zu weight blob%s, it needs blob %d: is it the "
                       ".caffemodel of this .prototxt?",
                       C->wname, name, C->d->path, C->d->nodes[C->layer].line, lp ? lp->n_blobs : 0,
                       lp && lp->n_blobs == 1 ? "" : "s", k),
               false;
    const Rdcaffe__BlobProto *bp = lp->blobs[k];
    int rank = 0;
    int64_t dims[RD_MAX_RANK];
    if (bp->shape) {
        if (bp->shape->n_dim > RD_MAX_RANK)
            return cf_fail(C, RD_E_PARSE, "%s: layer '%s' blob %d has rank %zu", C->wname, name, k, bp->shape->n_dim),
                   false;
        rank = (int)bp->shape->n_dim;
        for (int i = 0; i < rank; i++)
            dims[i] = bp->shape->dim[i];
    } else {
        rank = 4;
        dims[0] = bp->num;
        dims[1] = bp->channels;
        dims[2] = bp->height;
        dims[3] = bp->width;
    }
    rd_error e;
    if (rd_tensor_alloc(out, RD_DT_F32, rank, dims, &e) != RD_OK)
        return cf_fail(C, e.code, "%s: layer '%s' blob %d: %s", C->wname, name, k, e.msg), false;
    int64_t n = rd_tensor_numel(out);
    size_t have = bp->n_data ? bp->n_data : bp->n_double_data;
    if ((size_t)n != have || (want_numel >= 0 && n != want_numel)) {
        rd_tensor_fini(out);
        return cf_fail(C, RD_E_PARSE, "%s: layer '%s' blob %d holds %zu values for a shape of %lld%s%lld", C->wname,
                       name, k, have, (long long)n, want_numel >= 0 ? ", the .prototxt needs " : "",
                       (long long)(want_numel >= 0 ? want_numel : n)),
               false;
    }
    float *f = out->data;
    for (int64_t i = 0; i < n; i++) {
        f[i] = bp->n_data ? bp->data[i] : (float)bp->double_data[i];
        if (!isfinite(f[i])) {
            rd_tensor_fini(out);
            return cf_fail(C, RD_E_PARSE, "%s: layer '%s' blob %d value %lld is not finite", C->wname, name, k,
                           (long long)i),
                   false;
        }
    }
    return true;
}

/* A per-channel vector [c] shaped to broadcast on axis 1 of a rank-r tensor ([c, 1, 1] for 4-D). */
void cf_per_channel(rd_tensor *t, int r)
{
    int64_t c = rd_tensor_numel(t);
    t->rank = r > 1 ? r - 1 : 1;
    t->dims[0] = c;
    for (int i = 1; i < t->rank; i++)
        t->dims[i] = 1;
}

/* ---- layers --------------------------------------------------------------------------------------------- */

/* The node of the layer's k-th `key` line (bottom or top); -1 and a failure when it has fewer. */
static int nth_of_layer(cf_ctx *C, const char *key, int k)
{
    int at = -1;
    for (int i = 0; i <= k; i++)
        if ((at = ct_find(C->d, C->layer, key, at)) < 0) {
            cf_fail(C, RD_E_PARSE, "%s:%d: layer '%s' needs %d %s%s", C->d->path, C->d->nodes[C->layer].line,
                    cf_layer_name(C), k + 1, key, k ? "s" : "");
            return -1;
        }
    return at;
}

/* Bottom k's current value (NULL and a failure when the layer has no such bottom or it is unknown). */
const char *cf_bottom(cf_ctx *C, int k)
{
    int b = nth_of_layer(C, "bottom", k);
    if (b < 0)
        return NULL;
    const char *name = C->d->nodes[b].value ? C->d->nodes[b].value : "";
    fe_map_slot *s = fe_map_get(&C->blob, name);
    if (!s)
        return cf_fail(C, RD_E_PARSE, "%s:%d: layer '%s' reads '%s', which no earlier layer or input writes",
                       C->d->path, C->d->nodes[b].line, cf_layer_name(C), name),
               NULL;
    return s->val;
}

int cf_count(const cf_ctx *C, const char *key)
{
    int n = 0;
    for (int k = ct_find(C->d, C->layer, key, -1); k >= 0; k = ct_find(C->d, C->layer, key, k))
        n++;
    return n;
}

/* The value name top k of the layer is written to: the top's own name, or after the layer when the top exists
   (in place). */
const char *cf_top(cf_ctx *C, int k, int rank)
{
    int t = nth_of_layer(C, "top", k);
    if (t < 0)
        return NULL;
    const char *name = C->d->nodes[t].value ? C->d->nodes[t].value : "";
    bool exists = fe_map_get(&C->blob, name) != NULL;
    const char *v = cf_fresh(C, exists && cf_layer_name(C)[0] ? cf_layer_name(C) : name[0] ? name : "top", "");
    fe_map_slot *s = v ? fe_map_put(&C->blob, name, NULL, NULL) : NULL;
    if (v && !s)
        cf_fail(C, RD_E_NOMEM, "out of memory");
    if (s)
        s->val = (void *)v;
    if (v)
        cf_set_rank(C, v, rank);
    if (v && C->n_written == C->cap_written) {
        size_t cap = C->cap_written ? 2 * C->cap_written : 64;
        const char **g = realloc(C->written, cap * sizeof *g);
        if (!g)
            return cf_fail(C, RD_E_NOMEM, "out of memory"), NULL;
        C->written = g;
        C->cap_written = cap;
    }
    if (v)
        C->written[C->n_written++] = v;
    return v;
}

/* Net-level inputs: input + input_shape { dim } (or input_dim x 4 per input). */
static void net_inputs(cf_ctx *C)
{
    int k = -1, shape = -1, n_in = 0;
    int64_t legacy[4 * RD_MAX_RANK];
    int n_legacy = 0;
    rd_error le;
    if (ct_ints(C->d, 0, "input_dim", 0, 1 << 30, legacy, 4 * RD_MAX_RANK, &n_legacy, &le)) {
        cf_opt_fail(C, &le);
        return;
    }
    while ((k = ct_find(C->d, 0, "input", k)) >= 0 && C->st == RD_OK) {
        const char *name = C->d->nodes[k].value;
        int64_t dims[RD_MAX_RANK];
        int n = 0;
        shape = ct_find(C->d, 0, "input_shape", shape);
        if (shape >= 0) {
            if (ct_ints(C->d, shape, "dim", 0, 1 << 30, dims, RD_MAX_RANK, &n, &le)) {
                cf_opt_fail(C, &le);
                return;
            }
        } else if (n_legacy >= 4 * (n_in + 1)) {
            memcpy(dims, legacy + 4 * n_in, 4 * sizeof *dims);
            n = 4;
        } else {
            cf_fail(C, RD_E_PARSE, "%s:%d: input '%s' has no shape (input_shape or input_dim)", C->d->path,
                    C->d->nodes[k].line, name ? name : "");
            return;
        }
        const char *v = name ? cf_fresh(C, name, "") : NULL;
        fe_map_slot *s = v ? fe_map_put(&C->blob, name, NULL, NULL) : NULL;
        if (s)
            s->val = (void *)v;
        if (v)
            cf_set_rank(C, v, n);
        if (v && rd_onnx_add_input(C->b, v, RD_DT_F32, n, dims, NULL) != RD_OK)
            cf_fail(C, RD_E_NOMEM, "out of memory");
        n_in++;
    }
}

static rd_status load_weights(cf_ctx *C, const void *w, size_t wlen, rd_pb_msg **msg)
{
    rd_status st = rd_pb_unpack(&rdcaffe__net_parameter__descriptor, w, wlen, "Caffe NetParameter", msg, C->err);
    if (st != RD_OK)
        return rd_error_prefix(C->err, "%s", C->wname);
    C->net = (const Rdcaffe__NetParameter *)rd_pb_msg_get(*msg);
    if (C->net->n_layer == 0 && C->net->n_layers > 0)
        return rd_errorf(C->err, RD_E_UNSUPPORTED,
                         "%s: layers in Caffe's V1 format (before 2015): convert it with "
                         "Caffe's upgrade_net_proto_binary first",
                         C->wname);
    for (size_t i = 0; i < C->net->n_layer; i++) {
        const Rdcaffe__LayerParameter *lp = C->net->layer[i];
        fe_map_slot *s = fe_map_put(&C->weights, lp->name ? lp->name : "", NULL, NULL);
        if (!s)
            return rd_errorf(C->err, RD_E_NOMEM, "out of memory");
        if (!s->val || lp->n_blobs) /* the layer that carries blobs wins over a same-named one without */
            s->val = (void *)lp;
    }
    return RD_OK;
}

/* Graph outputs: tops that no later layer reads (Caffe's net outputs). */
static void net_outputs(cf_ctx *C, fe_map *read)
{
    size_t n = 0;
    for (size_t i = 0; i < C->n_written; i++) {
        if (fe_map_get(read, C->written[i]))
            continue;
        if (rd_onnx_add_output(C->b, C->written[i], RD_DT_F32, -1, NULL, NULL) != RD_OK)
            cf_fail(C, RD_E_NOMEM, "out of memory");
        n++;
    }
    if (n == 0)
        cf_fail(C, RD_E_PARSE, "%s: the net has no output (every top is read by a later layer)", C->d->path);
}

rd_status caffe_lower(const ct_doc *net, const void *weights, size_t wlen, const char *wname, void **out_buf,
                      size_t *out_len, char *detail, size_t detail_len, rd_error *err)
{
    *out_buf = NULL;
    *out_len = 0;
    cf_ctx C = {.d = net, .wname = wname, .err = err};
    rd_pb_msg *msg = NULL;
    C.st = load_weights(&C, weights, wlen, &msg);
    if (C.st == RD_OK && ct_find(net, 0, "layers", -1) >= 0)
        C.st = rd_errorf(err, RD_E_UNSUPPORTED,
                         "%s:%d: 'layers' in Caffe's V1 format (before 2015): convert it with "
                         "Caffe's upgrade_net_proto_text first",
                         net->path, ct_line(net, 0, "layers"));
    if (C.st == RD_OK && !(C.b = rd_onnx_builder_create(8, 13)))
        C.st = rd_errorf(err, RD_E_NOMEM, "out of memory");
    if (C.st == RD_OK)
        net_inputs(&C);
    fe_map read = {0};
    int n_layers = 0;
    for (int l = ct_find(net, 0, "layer", -1); l >= 0 && C.st == RD_OK; l = ct_find(net, 0, "layer", l), n_layers++) {
        C.layer = l;
        C.index = n_layers;
        const char *type = ct_str(net, l, "type", "");
        for (int b = ct_find(net, l, "bottom", -1); b >= 0; b = ct_find(net, l, "bottom", b)) {
            fe_map_slot *s = fe_map_get(&C.blob, net->nodes[b].value ? net->nodes[b].value : "");
            if (s && !fe_map_put(&read, s->val, NULL, NULL))
                cf_fail(&C, RD_E_NOMEM, "out of memory");
        }
        if (!cf_lower_layer(&C, type)) {
            char where[200], kind[96];
            snprintf(where, sizeof where, "layer '%s', %s line %d", cf_layer_name(&C), net->path, net->nodes[l].line);
            snprintf(kind, sizeof kind, "%s%s", type,
                     !strcmp(type, "PriorBox") || !strcmp(type, "DetectionOutput")
                         ? " (SSD post-processing: cut the "
                           "net before it with subgraphs.outputs)"
                         : "");
            fe_unsupported_add(&C.unsup, kind, where);
        }
    }
    if (C.st == RD_OK && n_layers == 0)
        cf_fail(&C, RD_E_PARSE, "%s: no layer { } (not a Caffe .prototxt?)", net->path);
    if (C.st == RD_OK && !C.unsup.n_kinds)
        net_outputs(&C, &read);
    rd_status unsup = fe_unsupported_finish(&C.unsup, net->path, "layer", C.st == RD_OK ? err : NULL);
    if (C.st == RD_OK && unsup != RD_OK)
        C.st = unsup;
    if (C.st == RD_OK) {
        snprintf(detail, detail_len, "Caffe, %d layers, weights %s", n_layers, wname);
        rd_onnx_set_producer(C.b, "rknn-diag caffe frontend", "");
        if (rd_onnx_builder_write(C.b, out_buf, out_len, err) != RD_OK)
            C.st = err ? err->code : RD_E_NOMEM;
    }
    fe_map_fini(&read);
    rd_onnx_builder_destroy(C.b);
    fe_names_fini(&C.names);
    fe_map_fini(&C.blob);
    fe_map_fini(&C.rank);
    fe_map_fini(&C.weights);
    free(C.written);
    rd_pb_msg_free(msg);
    return C.st;
}
