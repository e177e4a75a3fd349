/*
 * eval_segment.c: `eval --task segment`: output 0 is [1, classes, h, w] scores; its per-pixel argmax is
 * compared with a label mask per image (--masks DIR: DIR/<image name>.png, one channel of class indices,
 * --ignore-index not scored), each mask pixel looking up the output pixel its centre falls on through
 * the stretch or letterbox. Records hold per-class intersection and union counts, so shards add up
 * exactly; the report gives mIoU (mean over classes present in prediction or truth) and pixel accuracy.
 */
#include "eval_image.h"
#include "eval_task.h"
#include "json_out.h"
#include "term_text.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SEG_MAX_CLASSES 4096

static void mask_path(const an_eval_ctx *c, size_t k, char *buf, size_t len)
{
    an_eval_sibling_path(c, k, c->o->masks, ".png", buf, len);
}

static rd_status segment_open(an_eval_ctx *c, rd_error *err)
{
    for (size_t k = 0; k < c->n; k++) {
        char path[4200];
        mask_path(c, k, path, sizeof path);
        int fd;
        rd_status st = rd_file_open_read(path, 0, RD_MAX_IMAGE_FILE_BYTES, &fd, NULL, err);
        if (st != RD_OK)
            return rd_error_prefix(err, "%s line %d (%s): its mask", c->ds.path, c->ds.lines[k],
                                   rd_dataset_path(&c->ds, k, 0));
        close(fd);
    }
    return RD_OK;
}

static rd_status segment_input(an_eval_ctx *c, size_t k, rd_tensor *in, an_eval_geom *g, rd_error *err)
{
    rd_status st = an_eval_image_input(c, k, c->o->letterbox, in, g, err);
    if (st == RD_OK && !g->orig_w) {
        g->sx = g->sy = 1; /* a .npy sample: the mask is taken at the input's size */
        g->orig_w = c->in_w;
        g->orig_h = c->in_h;
    }
    return st;
}

static rd_status segment_sample(an_eval_ctx *c, size_t k, const an_eval_geom *g, rd_tensor *const *outs, cJSON *rec,
                                rd_error *err)
{
    char path[4200];
    mask_path(c, k, path, sizeof path);
    rd_tensor mask;
    rd_status st = rd_image_load_max(path, c->q->max_image_pixels, &mask, err);
    if (st != RD_OK)
        return st;
    const int64_t mh = mask.dims[0], mw = mask.dims[1];
    if (mask.dims[2] != 1)
        st = rd_errorf(err, RD_E_PARSE,
                       "%s: a mask must be one channel of class indices (this PNG has %lld channels; "
                       "a palette PNG's colours are not indices: save the index image as greyscale)",
                       path, (long long)mask.dims[2]);
    else if (mw != g->orig_w || mh != g->orig_h)
        st = rd_errorf(err, RD_E_PARSE, "%s: mask is %lldx%lld, its image %lldx%lld", path, (long long)mw,
                       (long long)mh, (long long)g->orig_w, (long long)g->orig_h);
    const rd_tensor *o0 = &outs[0][0];
    int64_t C = 0, oh = 0, ow = 0;
    if (st == RD_OK) {
        if (o0->rank != 4 || o0->dims[0] != 1 || o0->dims[1] < 1 || o0->dims[1] > SEG_MAX_CLASSES)
            st = rd_errorf(err, RD_E_INVAL, "output 0 ('%s') is not [1, classes, H, W] with 1..%d classes",
                           c->output_names[0], SEG_MAX_CLASSES);
        else
            C = o0->dims[1], oh = o0->dims[2], ow = o0->dims[3];
    }
    uint64_t *cnt = st == RD_OK ? calloc((size_t)(3 * C * (int64_t)c->n_cols) + 1, sizeof *cnt) : NULL;
    if (st == RD_OK && !cnt)
        st = rd_errorf(err, RD_E_NOMEM, "out of memory");
    uint64_t valid = 0, correct[AN_EVAL_MAX_COLS] = {0};
    const uint8_t *mv = mask.data;
    for (int64_t y = 0; y < mh && st == RD_OK; y++)
        for (int64_t x = 0; x < mw && st == RD_OK; x++) {
            int truth = mv[y * mw + x];
            if (truth == c->o->ignore_index)
                continue;
            if (truth >= C) {
                st = rd_errorf(err, RD_E_PARSE,
                               "%s: pixel (%lld, %lld) is class %d but output 0 has %lld classes "
                               "(--ignore-index %d is not scored)",
                               path, (long long)x, (long long)y, truth, (long long)C, c->o->ignore_index);
                break;
            }
            /* the output pixel under this mask pixel's centre */
            double ix = ((double)x + 0.5) * g->sx + g->pad_x, iy = ((double)y + 0.5) * g->sy + g->pad_y;
            int64_t ox = (int64_t)floor(ix * (double)ow / (double)c->in_w),
                    oy = (int64_t)floor(iy * (double)oh / (double)c->in_h);
            ox = ox < 0 ? 0 : ox >= ow ? ow - 1 : ox;
            oy = oy < 0 ? 0 : oy >= oh ? oh - 1 : oy;
            valid++;
            for (size_t j = 0; j < c->n_cols; j++) {
                const float *s = (const float *)outs[j][0].data + oy * ow + ox;
                int64_t best = 0;
                for (int64_t cl = 1; cl < C; cl++)
                    if (s[cl * oh * ow] > s[best * oh * ow])
                        best = cl;
                uint64_t *inter = cnt + 3 * C * (int64_t)j, *pred = inter + C, *gt = pred + C;
                correct[j] += best == truth;
                inter[truth] += best == truth;
                pred[best]++;
                gt[truth]++;
            }
        }
    rd_tensor_fini(&mask);
    if (st == RD_OK) {
        bool ok = true;
        an_json_add_num(rec, "pixels", (double)valid, &ok);
        cJSON *cor = an_json_add_array(rec, "correct", &ok), *in = an_json_add_array(rec, "inter", &ok),
              *un = an_json_add_array(rec, "union", &ok);
        for (size_t j = 0; j < c->n_cols; j++) {
            const uint64_t *inter = cnt + 3 * C * (int64_t)j, *pred = inter + C, *gt = pred + C;
            an_json_push(cor, cJSON_CreateNumber((double)correct[j]), &ok);
            cJSON *a = cJSON_CreateArray(), *b = cJSON_CreateArray();
            for (int64_t cl = 0; cl < C; cl++) {
                an_json_push(a, cJSON_CreateNumber((double)inter[cl]), &ok);
                an_json_push(b, cJSON_CreateNumber((double)(pred[cl] + gt[cl] - inter[cl])), &ok);
            }
            an_json_push(in, a, &ok);
            an_json_push(un, b, &ok);
        }
        st = an_json_status(ok, "the sample's record", err);
    }
    free(cnt);
    return st;
}

static rd_status segment_report(const cJSON *partial, cJSON *const *recs, size_t n, size_t show, cJSON *report,
                                rd_error *err)
{
    const char *cols[AN_EVAL_MAX_COLS];
    size_t nc = an_eval_columns(partial, cols);
    int C = n ? cJSON_GetArraySize(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(recs[0], "inter"), 0)) : 0;
    if (C < 1 || C > SEG_MAX_CLASSES)
        return rd_errorf(err, RD_E_PARSE, "partial.json: segmentation records need inter/union counts per class");
    double *sum = calloc((size_t)(2 * C) * nc + 1, sizeof *sum);
    double *acc = calloc(n * nc + 1, sizeof *acc);
    if (!sum || !acc) {
        free(sum);
        free(acc);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    double pixels = 0, correct[AN_EVAL_MAX_COLS] = {0};
    rd_status st = RD_OK;
    for (size_t i = 0; i < n && st == RD_OK; i++) {
        const cJSON *px = cJSON_GetObjectItemCaseSensitive(recs[i], "pixels");
        const cJSON *cor = cJSON_GetObjectItemCaseSensitive(recs[i], "correct");
        const cJSON *in = cJSON_GetObjectItemCaseSensitive(recs[i], "inter");
        const cJSON *un = cJSON_GetObjectItemCaseSensitive(recs[i], "union");
        if (!cJSON_IsNumber(px) || cJSON_GetArraySize(cor) != (int)nc || cJSON_GetArraySize(in) != (int)nc ||
            cJSON_GetArraySize(un) != (int)nc) {
            st = rd_errorf(err, RD_E_PARSE, "record %zu: expected pixels, correct, inter and union for %zu columns", i,
                           nc);
            break;
        }
        pixels += px->valuedouble;
        for (size_t j = 0; j < nc && st == RD_OK; j++) {
            double cj = cJSON_GetArrayItem(cor, (int)j)->valuedouble;
            correct[j] += cj;
            acc[i * nc + j] = px->valuedouble > 0 ? cj / px->valuedouble : 1;
            const cJSON *a = cJSON_GetArrayItem(in, (int)j), *b = cJSON_GetArrayItem(un, (int)j);
            if (cJSON_GetArraySize(a) != C || cJSON_GetArraySize(b) != C) {
                st =
                    rd_errorf(err, RD_E_PARSE, "record %zu: inter/union of column %zu do not have %d classes", i, j, C);
                break;
            }
            int cl = 0;
            const cJSON *x;
            cJSON_ArrayForEach(x, a) sum[(2 * (size_t)C) * j + (size_t)cl++] += x->valuedouble;
            cl = 0;
            cJSON_ArrayForEach(x, b) sum[(2 * (size_t)C) * j + (size_t)C + (size_t)cl++] += x->valuedouble;
        }
    }
    if (st == RD_OK) {
        bool ok = true;
        an_json_add_num(report, "classes", C, &ok);
        an_json_add_num(report, "pixels", pixels, &ok);
        cJSON *m = an_json_add_object(report, "metrics", &ok);
        double miou0 = 0, acc0 = 0;
        for (size_t j = 0; j < nc; j++) {
            double s = 0;
            int present = 0;
            cJSON *o = an_json_add_object(m, cols[j], &ok);
            cJSON *per = cJSON_CreateArray();
            for (int cl = 0; cl < C; cl++) {
                double u = sum[2 * (size_t)C * j + (size_t)C + (size_t)cl];
                double iou = u > 0 ? sum[2 * (size_t)C * j + (size_t)cl] / u : -1;
                if (u > 0) {
                    s += iou;
                    present++;
                }
                an_json_push(per, cJSON_CreateNumber(iou), &ok);
            }
            double miou = present ? s / present : -1, pa = pixels > 0 ? correct[j] / pixels : -1;
            if (j == 0)
                miou0 = miou, acc0 = pa;
            an_json_add_num(o, "miou", miou, &ok);
            an_json_add_num(o, "pixel_accuracy", pa, &ok);
            an_json_add_num(o, "drop_miou", miou0 - miou, &ok);
            an_json_add_num(o, "drop_pixel_accuracy", acc0 - pa, &ok);
            an_json_add(o, "iou_per_class", per, &ok);
        }
        /* images whose pixel accuracy falls most */
        cJSON *list = an_json_add_array(report, "changed_images", &ok);
        size_t listed = 0;
        bool *used = calloc(n + 1, sizeof *used);
        ok = ok && used;
        while (used && listed < show) {
            size_t best = SIZE_MAX;
            double bd = 0;
            for (size_t i = 0; i < n; i++) {
                double d = 0;
                for (size_t j = 1; j < nc; j++)
                    d = fmax(d, acc[i * nc] - acc[i * nc + j]);
                if (!used[i] && d > bd)
                    bd = d, best = i;
            }
            if (best == SIZE_MAX)
                break;
            used[best] = true;
            cJSON *o = cJSON_CreateObject();
            an_json_add_num(o, "sample", cJSON_GetObjectItemCaseSensitive(recs[best], "sample")->valuedouble, &ok);
            const cJSON *inp = cJSON_GetObjectItemCaseSensitive(recs[best], "input");
            an_json_add_str(o, "input", cJSON_IsString(inp) ? inp->valuestring : "", &ok);
            cJSON *a = an_json_add_object(o, "pixel_accuracy", &ok);
            for (size_t j = 0; j < nc; j++)
                an_json_add_num(a, cols[j], acc[best * nc + j], &ok);
            an_json_push(list, o, &ok);
            listed++;
        }
        free(used);
        st = an_json_status(ok, "the segmentation report", err);
    }
    free(sum);
    free(acc);
    return st;
}

static void segment_print(FILE *out, const cJSON *r, size_t show)
{
    (void)show;
    const char *cols[AN_EVAL_MAX_COLS];
    size_t nc = an_eval_columns(r, cols);
    an_eval_print_model(out, r);
    fprintf(out, ": %.0f images, %.0f classes, %.0f scored pixels\n\n%-14s %9s %9s %10s %10s\n",
            an_json_num(r, "samples"), an_json_num(r, "classes"), an_json_num(r, "pixels"), "precision", "mIoU",
            "pixel acc", "drop mIoU", "drop acc");
    static const an_eval_figure figs[] = {
        {"miou", 9, false}, {"pixel_accuracy", 9, false}, {"drop_miou", 10, true}, {"drop_pixel_accuracy", 10, true}};
    an_eval_print_metric_rows(out, r, figs, sizeof figs / sizeof figs[0]);
    const cJSON *c, *list = cJSON_GetObjectItemCaseSensitive(r, "changed_images");
    if (cJSON_GetArraySize(list))
        fprintf(out, "\nimages whose pixel accuracy falls most:\n");
    cJSON_ArrayForEach(c, list)
    {
        fprintf(out, "%8.0f  ", an_json_num(c, "sample"));
        an_put_name(out, an_json_str(c, "input"));
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(c, "pixel_accuracy");
        for (size_t j = 0; j < nc; j++)
            fprintf(out, " %s %.4f", cols[j], an_json_num(a, cols[j]));
        fputc('\n', out);
    }
}

const an_eval_task an_eval_segment = {
    .name = "segment",
    .open = segment_open,
    .input = segment_input,
    .sample = segment_sample,
    .report = segment_report,
    .print = segment_print,
};
