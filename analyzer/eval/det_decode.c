/*
 * det_decode.c: the decoder table, their options, the bounded candidate list and non-maximum
 * suppression. The decoders themselves are in det_decode_yolo.c and det_decode_ssd.c.
 */
#include "det_decode.h"
#include "ranked.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const an_decoder *const decoders[] = {&an_decoder_yolov5, &an_decoder_yolov7, &an_decoder_yolov8,
                                             &an_decoder_yolox, &an_decoder_ssd};

size_t an_decoder_count(void)
{
    return sizeof decoders / sizeof decoders[0];
}

const an_decoder *an_decoder_get(size_t i)
{
    return i < an_decoder_count() ? decoders[i] : NULL;
}

const an_decoder *an_decoder_find(const char *name)
{
    for (size_t i = 0; i < an_decoder_count(); i++)
        if (strcmp(decoders[i]->name, name) == 0)
            return decoders[i];
    if (strcmp(name, "yolov11") == 0 || strcmp(name, "yolo11") == 0)
        return &an_decoder_yolov8; /* same head */
    return NULL;
}

void an_det_opts_init(an_det_opts *o)
{
    *o = (an_det_opts)AN_DET_OPTS_DEFAULTS;
}

static bool parse_long(const char *s, long min, long max, long *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min || v > max)
        return false;
    *out = v;
    return true;
}

rd_status an_det_opts_set(an_det_opts *o, const char *kv, rd_error *err)
{
    const char *eq = strchr(kv, '=');
    if (!eq || eq == kv)
        return rd_errorf(err, RD_E_INVAL,
                         "--decoder-opt '%s': expected KEY=VALUE (reg_max, sigmoid, decoded, "
                         "background, box, normalized, agnostic)",
                         kv);
    size_t klen = (size_t)(eq - kv);
    const char *v = eq + 1;
    long n;
#define KEY(s) (klen == strlen(s) && strncmp(kv, s, klen) == 0)
    if (KEY("reg_max")) {
        if (!parse_long(v, 1, 256, &n))
            return rd_errorf(err, RD_E_INVAL, "--decoder-opt reg_max=%s: expected 1..256 (DFL bins, 16 in YOLOv8)", v);
        o->reg_max = (int)n;
    } else if (KEY("sigmoid") || KEY("decoded") || KEY("normalized") || KEY("agnostic")) {
        if (!parse_long(v, 0, 1, &n))
            return rd_errorf(err, RD_E_INVAL, "--decoder-opt %.*s=%s: expected 0 or 1", (int)klen, kv, v);
        if (KEY("sigmoid"))
            o->sigmoid = (int)n;
        else if (KEY("decoded"))
            o->decoded = (int)n;
        else if (KEY("normalized"))
            o->normalized = (int)n;
        else
            o->agnostic = n == 1;
    } else if (KEY("background")) {
        if (strcmp(v, "none") == 0)
            o->background = -1;
        else if (parse_long(v, 0, 100000, &n))
            o->background = (int)n;
        else
            return rd_errorf(err, RD_E_INVAL, "--decoder-opt background=%s: expected a score column or none", v);
    } else if (KEY("box")) {
        if (strcmp(v, "xyxy") == 0)
            o->box_order = 0;
        else if (strcmp(v, "yxyx") == 0)
            o->box_order = 1;
        else if (strcmp(v, "cxcywh") == 0)
            o->box_order = 2;
        else
            return rd_errorf(err, RD_E_INVAL, "--decoder-opt box=%s: expected xyxy, yxyx or cxcywh", v);
    } else {
        return rd_errorf(err, RD_E_INVAL,
                         "--decoder-opt %.*s: unknown key (reg_max, sigmoid, decoded, background, box, "
                         "normalized, agnostic)",
                         (int)klen, kv);
    }
#undef KEY
    return RD_OK;
}

void an_det_list_fini(an_det_list *l)
{
    free(l->v);
    memset(l, 0, sizeof *l);
}

rd_status an_det_list_add(an_det_list *l, const an_det_box *b, rd_error *err)
{
    if (l->n == AN_DET_MAX_CANDIDATES) {
        /* replace the lowest score (a linear scan: reached only by pathological outputs) */
        size_t lo = 0;
        for (size_t i = 1; i < l->n; i++)
            if (l->v[i].score < l->v[lo].score)
                lo = i;
        l->dropped++;
        if (b->score > l->v[lo].score)
            l->v[lo] = *b;
        return RD_OK;
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 256;
        if (cap > AN_DET_MAX_CANDIDATES)
            cap = AN_DET_MAX_CANDIDATES;
        an_det_box *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return rd_errorf(err, RD_E_NOMEM, "out of memory (%zu boxes)", cap);
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = *b;
    return RD_OK;
}

float an_det_sigmoid(float x)
{
    return 1.0f / (1.0f + expf(-x));
}

int an_det_squeeze(const rd_tensor *t, int64_t *dims, int max_rank)
{
    int r = t->rank, off = 0;
    if (r >= 2 && t->dims[0] == 1) /* the batch */
        off = 1;
    if (r - off > max_rank)
        return -1;
    for (int i = off; i < r; i++)
        dims[i - off] = t->dims[i];
    return r - off;
}

static float box_iou(const an_det_box *a, const an_det_box *b)
{
    float w = fminf(a->x1, b->x1) - fmaxf(a->x0, b->x0);
    float h = fminf(a->y1, b->y1) - fmaxf(a->y0, b->y0);
    if (w <= 0 || h <= 0)
        return 0;
    float i = w * h;
    float u = (a->x1 - a->x0) * (a->y1 - a->y0) + (b->x1 - b->x0) * (b->y1 - b->y0) - i;
    return u > 0 ? i / u : 0;
}

rd_status an_det_run(const an_decoder *d, const an_det_opts *o, const an_det_frame *f, an_det_list *out, rd_error *err)
{
    an_det_list cand;
    memset(&cand, 0, sizeof cand);
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < f->n_outs; i++)
        if (f->outs[i].dtype != RD_DT_F32)
            return rd_errorf(err, RD_E_INVAL, "output %zu ('%s') is %s: decoders read float32", i, f->names[i],
                             rd_dtype_name(f->outs[i].dtype));
    rd_status st = d->decode(o, f, &cand, err);
    if (st != RD_OK) {
        an_det_list_fini(&cand);
        return rd_error_prefix(err, "--decoder %s (%s)", d->name, d->layouts);
    }
    an_ranked *order = malloc((cand.n + 1) * sizeof *order);
    bool *gone = calloc(cand.n + 1, sizeof *gone);
    if (!order || !gone) {
        free(order);
        free(gone);
        an_det_list_fini(&cand);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < cand.n; i++)
        order[i] = (an_ranked){cand.v[i].score, i};
    qsort(order, cand.n, sizeof *order, an_ranked_cmp);
    for (size_t a = 0; a < cand.n && st == RD_OK; a++) {
        if (gone[a])
            continue;
        const an_det_box *ka = &cand.v[order[a].pos];
        if (out->n < (size_t)o->max_det)
            st = an_det_list_add(out, ka, err);
        else
            break;
        for (size_t b = a + 1; b < cand.n; b++) {
            const an_det_box *kb = &cand.v[order[b].pos];
            if (!gone[b] && (o->agnostic || kb->cls == ka->cls) && box_iou(ka, kb) > o->nms_iou)
                gone[b] = true;
        }
    }
    free(order);
    free(gone);
    an_det_list_fini(&cand);
    if (st != RD_OK)
        an_det_list_fini(out);
    return st;
}
