/*
 * det_decode_yolo.c: the YOLO families.
 *
 *  yolov5 / yolov7  one output [1, N, 5+nc] of decoded boxes (cx, cy, w, h in input pixels, objectness,
 *                   class scores: Ultralytics' export), or one output per level [1, na*(5+nc), H, W] (or
 *                   [1, na, H, W, 5+nc]) of grid cells (Rockchip's model zoo): xy = (2s - 0.5 + cell) *
 *                   stride, wh = (2s)^2 * anchor, where s are the (sigmoid) outputs.
 *  yolov8 / yolo11  one output [1, 4+nc, N] or [1, N, 4+nc] (cx, cy, w, h, class scores), or per level
 *                   a box output [1, 4*reg_max, H, W] (DFL: softmax over reg_max bins, expectation) or
 *                   [1, 4, H, W] (distances) followed by a class output [1, nc, H, W] (a [1, 1, H, W]
 *                   score-sum output of the model zoo is skipped): x0 = (cell + 0.5 - left) * stride, ...
 *  yolox            one output [1, N, 5+nc] raw (decoded=0: xy = (s + cell) * stride, wh = exp(s) * stride
 *                   over the grids of strides 8, 16, 32) or decoded (decoded=1), or one output per level
 *                   [1, 5+nc, H, W] (the model zoo's heads, decoded the raw way).
 * Scores are taken as probabilities unless sigmoid=1 (outputs are logits).
 */
#include "det_decode.h"

#include <math.h>
#include <string.h>

static const float yolov5_anchors[18] = {10, 13, 16, 30, 33, 23, 30, 61, 62, 45, 59, 119, 116, 90, 156, 198, 373, 326};
static const float yolov7_anchors[18] = {12, 16, 19, 36, 40, 28, 36, 75, 76, 55, 72, 146, 142, 110, 192, 243, 459, 401};

static float prob(const an_det_opts *o, float v)
{
    return o->sigmoid == 1 ? an_det_sigmoid(v) : v;
}

/* One grid level: output index, channels, height, width. */
typedef struct level {
    size_t out;
    int64_t c, h, w;
    int stride;
} level;

/* Stride of a level: --strides (by level order) or the input size over the grid size. */
static rd_status level_stride(const an_det_opts *o, const an_det_frame *f, level *lv, int k, rd_error *err)
{
    if (o->n_strides) {
        if (k >= o->n_strides)
            return rd_errorf(err, RD_E_INVAL, "output %zu ('%s') is level %d but --strides gives %d", lv->out,
                             f->names[lv->out], k + 1, o->n_strides);
        lv->stride = o->strides[k];
        return RD_OK;
    }
    if (lv->h <= 0 || lv->w <= 0 || f->in_h % lv->h || f->in_w % lv->w || f->in_h / lv->h != f->in_w / lv->w)
        return rd_errorf(err, RD_E_INVAL,
                         "output %zu ('%s'): grid %lldx%lld does not divide the %dx%d input evenly; "
                         "give --strides",
                         lv->out, f->names[lv->out], (long long)lv->h, (long long)lv->w, f->in_h, f->in_w);
    lv->stride = (int)(f->in_h / lv->h);
    return RD_OK;
}

/* Sorts levels by stride (largest grid first), keeping graph order on ties. */
static void sort_levels(level *lv, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && lv[j].h > lv[j - 1].h; j--) {
            level t = lv[j];
            lv[j] = lv[j - 1];
            lv[j - 1] = t;
        }
}

/* Picks the best class of a row of n scores (times obj) and adds the box if it clears the threshold. */
static rd_status add_best(const an_det_opts *o, const float *cls, int64_t step, int nc, float obj, float cx, float cy,
                          float w, float h, an_det_list *out, rd_error *err)
{
    if (obj < o->score_threshold)
        return RD_OK;
    int best = 0;
    float bs = prob(o, cls[0]);
    for (int c = 1; c < nc; c++) {
        float s = prob(o, cls[c * step]);
        if (s > bs) {
            bs = s;
            best = c;
        }
    }
    float score = bs * obj;
    if (!(score >= o->score_threshold) || !isfinite(cx) || !isfinite(cy) || !isfinite(w) || !isfinite(h))
        return RD_OK;
    an_det_box b = {cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2, score, best};
    return an_det_list_add(out, &b, err);
}

static rd_status check_classes(const an_det_opts *o, const an_det_frame *f, size_t i, int dim, int64_t got, int extra,
                               rd_error *err)
{
    if (got <= extra)
        return rd_errorf(err, RD_E_INVAL, "output %zu ('%s') dimension %d is %lld: expected %d + the class count", i,
                         f->names[i], dim, (long long)got, extra);
    if (o->n_classes && got != extra + o->n_classes)
        return rd_errorf(err, RD_E_INVAL,
                         "output %zu ('%s') dimension %d is %lld: expected %d + %d classes "
                         "(--classes %d)",
                         i, f->names[i], dim, (long long)got, extra, o->n_classes, o->n_classes);
    return RD_OK;
}

/* [N, 5+nc] rows: cx cy w h obj cls... in pixels (raw: grid offsets over strides 8, 16, 32 for yolox). */
static rd_status decode_rows(const an_det_opts *o, const an_det_frame *f, bool yolox_raw, an_det_list *out,
                             rd_error *err)
{
    int64_t d[2];
    if (an_det_squeeze(&f->outs[0], d, 2) != 2)
        return rd_errorf(err, RD_E_INVAL, "output 0 ('%s') has rank %d: expected [1, N, 5+classes]", f->names[0],
                         f->outs[0].rank);
    rd_status st = check_classes(o, f, 0, f->outs[0].rank - 1, d[1], 5, err);
    if (st != RD_OK)
        return st;
    const int nc = (int)(d[1] - 5);
    const float *x = f->outs[0].data;
    int64_t cells = 0;
    static const int yolox_strides[3] = {8, 16, 32};
    const int *strides = o->n_strides ? o->strides : yolox_strides;
    int n_strides = o->n_strides ? o->n_strides : 3;
    if (yolox_raw) {
        for (int k = 0; k < n_strides; k++)
            cells += (int64_t)(f->in_h / strides[k]) * (f->in_w / strides[k]);
        if (cells != d[0])
            return rd_errorf(err, RD_E_INVAL,
                             "output 0 ('%s') dimension %d is %lld rows: the grids of strides %d.. of "
                             "a %dx%d input have %lld cells (raw YOLOX; decoded=1 if the boxes are in pixels)",
                             f->names[0], f->outs[0].rank - 2, (long long)d[0], strides[0], f->in_w, f->in_h,
                             (long long)cells);
    }
    int k = 0;
    int64_t level_start = 0, gw = yolox_raw ? f->in_w / strides[0] : 0;
    for (int64_t r = 0; r < d[0] && st == RD_OK; r++) {
        const float *row = x + r * d[1];
        float cx = row[0], cy = row[1], w = row[2], h = row[3];
        if (yolox_raw) {
            int64_t gh = f->in_h / strides[k];
            if (r - level_start >= gw * gh) {
                level_start += gw * gh;
                k++;
                gw = f->in_w / strides[k];
            }
            int64_t cell = r - level_start;
            float s = (float)strides[k];
            cx = (row[0] + (float)(cell % gw)) * s;
            cy = (row[1] + (float)(cell / gw)) * s;
            w = expf(row[2]) * s;
            h = expf(row[3]) * s;
        }
        st = add_best(o, row + 5, 1, nc, prob(o, row[4]), cx, cy, w, h, out, err);
    }
    return st;
}

/* Grid outputs [C, H, W] (after the batch) as levels sorted by stride. */
static rd_status grid_levels(const an_det_opts *o, const an_det_frame *f, level *lv, int *n, rd_error *err)
{
    if (f->n_outs > AN_DET_MAX_LEVELS)
        return rd_errorf(err, RD_E_INVAL, "%zu outputs: at most %d levels", f->n_outs, AN_DET_MAX_LEVELS);
    *n = 0;
    for (size_t i = 0; i < f->n_outs; i++) {
        int64_t d[3];
        if (an_det_squeeze(&f->outs[i], d, 3) != 3)
            return rd_errorf(err, RD_E_INVAL, "output %zu ('%s') has rank %d: expected [1, C, H, W]", i, f->names[i],
                             f->outs[i].rank);
        lv[(*n)++] = (level){.out = i, .c = d[0], .h = d[1], .w = d[2]};
    }
    sort_levels(lv, *n);
    for (int k = 0; k < *n; k++) {
        rd_status st = level_stride(o, f, &lv[k], k, err);
        if (st != RD_OK)
            return st;
    }
    return RD_OK;
}

static rd_status decode_anchor_grid(const an_det_opts *o, const an_det_frame *f, const float *def_anchors,
                                    an_det_list *out, rd_error *err)
{
    level lv[AN_DET_MAX_LEVELS];
    int n = 0;
    bool rank5 = f->outs[0].rank == 5;
    if (rank5) { /* [1, na, H, W, 5+nc] */
        if (f->n_outs > AN_DET_MAX_LEVELS)
            return rd_errorf(err, RD_E_INVAL, "%zu outputs: at most %d levels", f->n_outs, AN_DET_MAX_LEVELS);
        for (size_t i = 0; i < f->n_outs; i++) {
            const rd_tensor *t = &f->outs[i];
            if (t->rank != 5 || t->dims[0] != 1)
                return rd_errorf(err, RD_E_INVAL,
                                 "output %zu ('%s') has rank %d: expected [1, anchors, H, W, 5+classes] "
                                 "like output 0",
                                 i, f->names[i], t->rank);
            lv[n++] = (level){.out = i, .c = t->dims[1] * t->dims[4], .h = t->dims[2], .w = t->dims[3]};
        }
        sort_levels(lv, n);
        for (int k = 0; k < n; k++) {
            rd_status st = level_stride(o, f, &lv[k], k, err);
            if (st != RD_OK)
                return st;
        }
    } else {
        rd_status st = grid_levels(o, f, lv, &n, err);
        if (st != RD_OK)
            return st;
    }
    const float *anchors = o->n_anchors ? o->anchors : def_anchors;
    int n_pairs = o->n_anchors ? o->n_anchors : 9;
    if (n_pairs % n)
        return rd_errorf(err, RD_E_INVAL, "%d anchor pairs do not split over %d output levels (--anchors)", n_pairs, n);
    const int na = n_pairs / n;
    for (int k = 0; k < n; k++) {
        const level *L = &lv[k];
        const rd_tensor *t = &f->outs[L->out];
        if (L->c % na)
            return rd_errorf(err, RD_E_INVAL, "output %zu ('%s') dimension 1 is %lld: not %d anchors x (5 + classes)",
                             L->out, f->names[L->out], (long long)L->c, na);
        if (rank5 && t->dims[1] != na)
            return rd_errorf(err, RD_E_INVAL, "output %zu ('%s') dimension 1 is %lld: expected %d anchors", L->out,
                             f->names[L->out], (long long)t->dims[1], na);
        rd_status st = check_classes(o, f, L->out, rank5 ? 4 : 1, L->c / na, 5, err);
        if (st != RD_OK)
            return rd_error_prefix(err, "%d anchors per level", na);
        const int64_t per = L->c / na, hw = L->h * L->w;
        const int nc = (int)(per - 5);
        const float *x = t->data;
        for (int a = 0; a < na && st == RD_OK; a++) {
            const float aw = anchors[2 * (k * na + a)], ah = anchors[2 * (k * na + a) + 1];
            for (int64_t cell = 0; cell < hw && st == RD_OK; cell++) {
                /* NCHW: channel stride hw; rank 5: the row of this anchor and cell */
                const float *p = rank5 ? x + ((int64_t)a * hw + cell) * per : x + (int64_t)a * per * hw + cell;
                const int64_t step = rank5 ? 1 : hw;
                float sx = prob(o, p[0]), sy = prob(o, p[step]), sw = prob(o, p[2 * step]), sh = prob(o, p[3 * step]);
                float cx = (sx * 2 - 0.5f + (float)(cell % L->w)) * (float)L->stride;
                float cy = (sy * 2 - 0.5f + (float)(cell / L->w)) * (float)L->stride;
                float w = (sw * 2) * (sw * 2) * aw, h = (sh * 2) * (sh * 2) * ah;
                st = add_best(o, p + 5 * step, step, nc, prob(o, p[4 * step]), cx, cy, w, h, out, err);
            }
        }
        if (st != RD_OK)
            return st;
    }
    return RD_OK;
}

static rd_status yolov5_decode_with(const an_det_opts *o, const an_det_frame *f, const float *anchors, an_det_list *out,
                                    rd_error *err)
{
    if (f->n_outs == 1 && f->outs[0].rank <= 3)
        return decode_rows(o, f, false, out, err);
    return decode_anchor_grid(o, f, anchors, out, err);
}

static rd_status yolov5_decode(const an_det_opts *o, const an_det_frame *f, an_det_list *out, rd_error *err)
{
    return yolov5_decode_with(o, f, yolov5_anchors, out, err);
}

static rd_status yolov7_decode(const an_det_opts *o, const an_det_frame *f, an_det_list *out, rd_error *err)
{
    return yolov5_decode_with(o, f, yolov7_anchors, out, err);
}

/* YOLOv8 single output: [4+nc, N] (Ultralytics) or [N, 4+nc]. */
static rd_status yolov8_rows(const an_det_opts *o, const an_det_frame *f, an_det_list *out, rd_error *err)
{
    int64_t d[2];
    if (an_det_squeeze(&f->outs[0], d, 2) != 2)
        return rd_errorf(err, RD_E_INVAL, "output 0 ('%s') has rank %d: expected [1, 4+classes, N]", f->names[0],
                         f->outs[0].rank);
    /* which axis holds 4 + classes: the one --classes names, else the shorter (84 against 8400) */
    bool chan_first = o->n_classes ? d[0] == 4 + o->n_classes : d[0] <= d[1];
    int64_t width = chan_first ? d[0] : d[1], n = chan_first ? d[1] : d[0];
    rd_status st = check_classes(o, f, 0, chan_first ? 1 : 2, width, 4, err);
    if (st != RD_OK)
        return st;
    const int nc = (int)(width - 4);
    const float *x = f->outs[0].data;
    const int64_t step = chan_first ? n : 1;
    for (int64_t r = 0; r < n && st == RD_OK; r++) {
        const float *p = chan_first ? x + r : x + r * width;
        st = add_best(o, p + 4 * step, step, nc, 1.0f, p[0], p[step], p[2 * step], p[3 * step], out, err);
    }
    return st;
}

static rd_status yolov8_decode(const an_det_opts *o, const an_det_frame *f, an_det_list *out, rd_error *err)
{
    if (f->n_outs == 1)
        return yolov8_rows(o, f, out, err);
    /* per level: box then class outputs (score-sum outputs of one channel skipped), grouped by grid size */
    level all[AN_DET_MAX_LEVELS * 3];
    int n_all = 0;
    if (f->n_outs > AN_DET_MAX_LEVELS * 3)
        return rd_errorf(err, RD_E_INVAL, "%zu outputs: at most %d", f->n_outs, AN_DET_MAX_LEVELS * 3);
    for (size_t i = 0; i < f->n_outs; i++) {
        int64_t d[3];
        if (an_det_squeeze(&f->outs[i], d, 3) != 3)
            return rd_errorf(err, RD_E_INVAL, "output %zu ('%s') has rank %d: expected [1, C, H, W] per level", i,
                             f->names[i], f->outs[i].rank);
        if (d[0] == 1 && !(o->n_classes == 1 && n_all % 2 == 1))
            continue; /* the model zoo's score sum */
        all[n_all++] = (level){.out = i, .c = d[0], .h = d[1], .w = d[2]};
    }
    if (n_all % 2)
        return rd_errorf(err, RD_E_INVAL,
                         "%d box/class outputs: expected pairs (a box output then a class output per "
                         "level)",
                         n_all);
    level lv[AN_DET_MAX_LEVELS], cls[AN_DET_MAX_LEVELS];
    int n = n_all / 2;
    for (int k = 0; k < n; k++) {
        lv[k] = all[2 * k];
        cls[k] = all[2 * k + 1];
        if (cls[k].h != lv[k].h || cls[k].w != lv[k].w)
            return rd_errorf(err, RD_E_INVAL, "output %zu ('%s') is %lldx%lld but its box output %zu is %lldx%lld",
                             cls[k].out, f->names[cls[k].out], (long long)cls[k].h, (long long)cls[k].w, lv[k].out,
                             (long long)lv[k].h, (long long)lv[k].w);
        lv[k].c = cls[k].out; /* remember the class output (c is unused for the box level) */
    }
    /* sort pairs by grid size; level_stride per pair */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && lv[j].h > lv[j - 1].h; j--) {
            level t = lv[j];
            lv[j] = lv[j - 1];
            lv[j - 1] = t;
        }
    rd_status st = RD_OK;
    for (int k = 0; k < n && st == RD_OK; k++) {
        level *L = &lv[k];
        if ((st = level_stride(o, f, L, k, err)) != RD_OK)
            return st;
        const rd_tensor *bt = &f->outs[L->out], *ct = &f->outs[(size_t)L->c];
        int64_t bd[3], cd[3];
        an_det_squeeze(bt, bd, 3);
        an_det_squeeze(ct, cd, 3);
        const bool dfl = bd[0] != 4;
        if (dfl && bd[0] != 4 * o->reg_max)
            return rd_errorf(err, RD_E_INVAL,
                             "output %zu ('%s') dimension 1 is %lld: a box output has 4 (distances) or "
                             "4 x reg_max = %d (DFL) channels (--decoder-opt reg_max=N)",
                             L->out, f->names[L->out], (long long)bd[0], 4 * o->reg_max);
        if ((st = check_classes(o, f, (size_t)L->c, 1, cd[0] + 4, 4, err)) != RD_OK)
            return st;
        const int nc = (int)cd[0];
        const int64_t hw = L->h * L->w;
        const float *bx = bt->data, *cx = ct->data;
        for (int64_t cell = 0; cell < hw && st == RD_OK; cell++) {
            float dist[4];
            for (int s = 0; s < 4; s++) {
                if (!dfl) {
                    dist[s] = bx[s * hw + cell];
                    continue;
                }
                /* DFL: softmax over the reg_max bins of this side, then the expected bin */
                const float *bin = bx + (int64_t)s * o->reg_max * hw + cell;
                float mx = bin[0];
                for (int b = 1; b < o->reg_max; b++)
                    mx = fmaxf(mx, bin[b * hw]);
                float sum = 0, acc = 0;
                for (int b = 0; b < o->reg_max; b++) {
                    float e = expf(bin[b * hw] - mx);
                    sum += e;
                    acc += e * (float)b;
                }
                dist[s] = acc / sum;
            }
            const float gx = (float)(cell % L->w) + 0.5f, gy = (float)(cell / L->w) + 0.5f, s = (float)L->stride;
            float x0 = (gx - dist[0]) * s, y0 = (gy - dist[1]) * s, x1 = (gx + dist[2]) * s, y1 = (gy + dist[3]) * s;
            st = add_best(o, cx + cell, hw, nc, 1.0f, (x0 + x1) / 2, (y0 + y1) / 2, x1 - x0, y1 - y0, out, err);
        }
    }
    return st;
}

static rd_status yolox_decode(const an_det_opts *o, const an_det_frame *f, an_det_list *out, rd_error *err)
{
    if (f->n_outs == 1 && f->outs[0].rank <= 3)
        return decode_rows(o, f, o->decoded != 1, out, err);
    level lv[AN_DET_MAX_LEVELS];
    int n = 0;
    rd_status st = grid_levels(o, f, lv, &n, err);
    for (int k = 0; k < n && st == RD_OK; k++) {
        const level *L = &lv[k];
        if ((st = check_classes(o, f, L->out, 1, L->c, 5, err)) != RD_OK)
            return st;
        const int nc = (int)(L->c - 5);
        const int64_t hw = L->h * L->w;
        const float *x = f->outs[L->out].data;
        const float s = (float)L->stride;
        for (int64_t cell = 0; cell < hw && st == RD_OK; cell++) {
            const float *p = x + cell;
            float cx = (p[0] + (float)(cell % L->w)) * s, cy = (p[hw] + (float)(cell / L->w)) * s;
            float w = expf(p[2 * hw]) * s, h = expf(p[3 * hw]) * s;
            st = add_best(o, p + 5 * hw, hw, nc, prob(o, p[4 * hw]), cx, cy, w, h, out, err);
        }
    }
    return st;
}

const an_decoder an_decoder_yolov5 = {
    .name = "yolov5",
    .layouts = "[1, N, 5+nc] decoded, or per level [1, 3*(5+nc), H, W] / [1, 3, H, W, 5+nc] with anchors",
    .decode = yolov5_decode,
};
const an_decoder an_decoder_yolov7 = {
    .name = "yolov7",
    .layouts = "as yolov5, with YOLOv7's default anchors",
    .decode = yolov7_decode,
};
const an_decoder an_decoder_yolov8 = {
    .name = "yolov8",
    .layouts = "[1, 4+nc, N] decoded, or per level a box [1, 4*reg_max or 4, H, W] and a class [1, nc, H, W] output "
               "(also yolo11)",
    .decode = yolov8_decode,
};
const an_decoder an_decoder_yolox = {
    .name = "yolox",
    .layouts = "[1, N, 5+nc] raw (decoded=1: in pixels), or per level [1, 5+nc, H, W]",
    .decode = yolox_decode,
};
