/*
 * det_decode_ssd.c: SSD-style detectors whose graph already decodes the boxes: a box output [1, N, 4]
 * and a score output [1, N, C] (in either order; UltraFace, MobileNet-SSD exports, RetinaFace-style
 * heads after their decode). Boxes are x0 y0 x1 y1 (box=yxyx, box=cxcywh for the others), in 0..1 of
 * the input (normalized=0: in input pixels). Score column `background` (default 0) is not a class, so
 * class c of the model is score column c+1; background=none keeps every column. Scores are probabilities
 * (sigmoid=1 for logits). Boxes still encoded against prior boxes are not decoded here.
 */
#include "det_decode.h"

#include <math.h>

static rd_status ssd_decode(const an_det_opts *o, const an_det_frame *f, an_det_list *out, rd_error *err)
{
    if (f->n_outs != 2)
        return rd_errorf(err, RD_E_INVAL,
                         "the model has %zu outputs: expected two, boxes [1, N, 4] and scores "
                         "[1, N, classes]",
                         f->n_outs);
    int64_t d[2][2];
    for (int i = 0; i < 2; i++)
        if (an_det_squeeze(&f->outs[i], d[i], 2) != 2)
            return rd_errorf(err, RD_E_INVAL, "output %d ('%s') has rank %d: expected [1, N, 4] or [1, N, classes]", i,
                             f->names[i], f->outs[i].rank);
    /* the box output is the one whose last dimension is 4; when both are, the second (scores come first in
       UltraFace and most exports) */
    int bi = d[1][1] == 4 ? 1 : d[0][1] == 4 ? 0 : -1;
    if (bi < 0)
        return rd_errorf(err, RD_E_INVAL,
                         "neither output has a last dimension of 4 ('%s' %lld, '%s' %lld): expected "
                         "boxes [1, N, 4]",
                         f->names[0], (long long)d[0][1], f->names[1], (long long)d[1][1]);
    int si = 1 - bi;
    if (d[si][0] != d[bi][0])
        return rd_errorf(err, RD_E_INVAL, "output %d ('%s') has %lld boxes but output %d ('%s') %lld score rows", bi,
                         f->names[bi], (long long)d[bi][0], si, f->names[si], (long long)d[si][0]);
    const int64_t n = d[bi][0], cols = d[si][1];
    const int bg = o->background;
    if (bg >= cols)
        return rd_errorf(err, RD_E_INVAL,
                         "output %d ('%s') dimension %d has %lld score columns: background column %d "
                         "does not exist (--decoder-opt background=none?)",
                         si, f->names[si], f->outs[si].rank - 1, (long long)cols, bg);
    const int64_t nc = bg >= 0 ? cols - 1 : cols;
    if (nc < 1 || (o->n_classes && nc != o->n_classes))
        return rd_errorf(err, RD_E_INVAL, "output %d ('%s') dimension %d is %lld: expected %s%d classes", si,
                         f->names[si], f->outs[si].rank - 1, (long long)cols, bg >= 0 ? "background + " : "",
                         o->n_classes ? o->n_classes : 1);
    const float *bx = f->outs[bi].data, *sc = f->outs[si].data;
    const float sx = o->normalized ? (float)f->in_w : 1.0f, sy = o->normalized ? (float)f->in_h : 1.0f;
    rd_status st = RD_OK;
    for (int64_t r = 0; r < n && st == RD_OK; r++) {
        const float *b = bx + r * 4, *s = sc + r * cols;
        float x0, y0, x1, y1;
        if (o->box_order == 1) {
            y0 = b[0], x0 = b[1], y1 = b[2], x1 = b[3];
        } else if (o->box_order == 2) {
            x0 = b[0] - b[2] / 2, y0 = b[1] - b[3] / 2, x1 = b[0] + b[2] / 2, y1 = b[1] + b[3] / 2;
        } else {
            x0 = b[0], y0 = b[1], x1 = b[2], y1 = b[3];
        }
        if (!isfinite(x0) || !isfinite(y0) || !isfinite(x1) || !isfinite(y1) || x1 < x0 || y1 < y0)
            continue;
        for (int64_t c = 0, k = 0; c < cols && st == RD_OK; c++) {
            if (c == bg)
                continue;
            float p = o->sigmoid == 1 ? an_det_sigmoid(s[c]) : s[c];
            if (p >= o->score_threshold) {
                an_det_box box = {x0 * sx, y0 * sy, x1 * sx, y1 * sy, p, (int)k};
                st = an_det_list_add(out, &box, err);
            }
            k++;
        }
    }
    return st;
}

const an_decoder an_decoder_ssd = {
    .name = "ssd",
    .layouts = "boxes [1, N, 4] (x0 y0 x1 y1 in 0..1) and scores [1, N, background + classes]",
    .decode = ssd_decode,
};
