/*
 * eval_detect_report.c: the detection report from records (partial.json, checked member by member since
 * shards come from outside): the COCO protocol per column, per-class AP, drops against the first
 * column (fp32), and the images whose F1 at IoU 0.5 falls most; and its text form.
 */
#include "det_metrics.h"
#include "eval_task.h"
#include "json_out.h"
#include "ranked.h"
#include "term_text.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct parsed {
    int64_t *images;
    an_gt *gts;
    size_t n_gts;
    an_det *dets[AN_EVAL_MAX_COLS];
    size_t n_dets[AN_EVAL_MAX_COLS];
    size_t *gt_at, *det_at[AN_EVAL_MAX_COLS]; /* per record: first index (records are in order) */
} parsed;

static void parsed_fini(parsed *p, size_t nc)
{
    free(p->images);
    free(p->gts);
    free(p->gt_at);
    for (size_t j = 0; j < nc; j++) {
        free(p->dets[j]);
        free(p->det_at[j]);
    }
}

/* A row [cat, x, y, w, h, v5(, v6)] of numbers. */
static bool row(const cJSON *a, int len, double *v)
{
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != len)
        return false;
    int i = 0;
    const cJSON *x;
    cJSON_ArrayForEach(x, a)
    {
        if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble))
            return false;
        v[i++] = x->valuedouble;
    }
    return v[0] == floor(v[0]) && fabs(v[0]) < 1e9;
}

static rd_status parse_records(cJSON *const *recs, size_t n, size_t nc, parsed *p, rd_error *err)
{
    memset(p, 0, sizeof *p);
    size_t total_g = 0, total_d[AN_EVAL_MAX_COLS] = {0};
    for (size_t i = 0; i < n; i++) {
        const cJSON *g = cJSON_GetObjectItemCaseSensitive(recs[i], "gt");
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(recs[i], "det");
        const cJSON *im = cJSON_GetObjectItemCaseSensitive(recs[i], "image");
        if (!cJSON_IsArray(g) || !cJSON_IsArray(d) || cJSON_GetArraySize(d) != (int)nc || !cJSON_IsNumber(im) ||
            im->valuedouble != floor(im->valuedouble) || fabs(im->valuedouble) > 9e15)
            return rd_errorf(err, RD_E_PARSE, "record %zu: expected an integer image, gt and det for %zu columns", i,
                             nc);
        total_g += (size_t)cJSON_GetArraySize(g);
        for (size_t j = 0; j < nc; j++) {
            const cJSON *col = cJSON_GetArrayItem(d, (int)j);
            if (!cJSON_IsArray(col))
                return rd_errorf(err, RD_E_PARSE, "record %zu: det[%zu] is not an array", i, j);
            total_d[j] += (size_t)cJSON_GetArraySize(col);
        }
    }
    p->images = calloc(n + 1, sizeof *p->images);
    p->gts = calloc(total_g + 1, sizeof *p->gts);
    p->gt_at = calloc(n + 2, sizeof *p->gt_at);
    bool ok = p->images && p->gts && p->gt_at;
    for (size_t j = 0; j < nc; j++) {
        p->dets[j] = calloc(total_d[j] + 1, sizeof *p->dets[j]);
        p->det_at[j] = calloc(n + 2, sizeof *p->det_at[j]);
        ok = ok && p->dets[j] && p->det_at[j];
    }
    if (!ok)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        int64_t img = (int64_t)cJSON_GetObjectItemCaseSensitive(recs[i], "image")->valuedouble;
        p->images[i] = img;
        p->gt_at[i] = p->n_gts;
        const cJSON *r;
        cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(recs[i], "gt"))
        {
            double v[7];
            if (!row(r, 7, v) || v[3] < 0 || v[4] < 0)
                return rd_errorf(err, RD_E_PARSE, "record %zu: a gt row is not [category, x, y, w, h, area, crowd]", i);
            p->gts[p->n_gts++] = (an_gt){
                .image = img, .category = (int)v[0], .box = {v[1], v[2], v[3], v[4]}, .area = v[5], .crowd = v[6] != 0};
        }
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(recs[i], "det");
        for (size_t j = 0; j < nc; j++) {
            p->det_at[j][i] = p->n_dets[j];
            cJSON_ArrayForEach(r, cJSON_GetArrayItem(d, (int)j))
            {
                double v[6];
                if (!row(r, 6, v) || v[3] < 0 || v[4] < 0)
                    return rd_errorf(err, RD_E_PARSE, "record %zu: a det row is not [category, x, y, w, h, score]", i);
                p->dets[j][p->n_dets[j]++] =
                    (an_det){.image = img, .category = (int)v[0], .box = {v[1], v[2], v[3], v[4]}, .score = v[5]};
            }
        }
    }
    p->gt_at[n] = p->n_gts;
    for (size_t j = 0; j < nc; j++)
        p->det_at[j][n] = p->n_dets[j];
    return RD_OK;
}

/* F1 at IoU 0.5 of one image's detections scoring >= min_score (greedy by score, same category). */
static double image_f1(const an_gt *g, size_t ng, const an_det *d, size_t nd, double min_score)
{
    size_t tp = 0, n_det = 0, n_gt = 0;
    bool small[256] = {false};
    bool *taken = ng <= 256 ? small : calloc(ng, sizeof *taken);
    if (!taken)
        return -1; /* out of memory: the image is not ranked */
    for (size_t i = 0; i < ng; i++)
        n_gt += !g[i].crowd;
    /* detections are in descending score order (NMS output) */
    for (size_t i = 0; i < nd; i++) {
        if (d[i].score < min_score)
            continue;
        n_det++;
        double best = 0.5;
        size_t m = SIZE_MAX;
        for (size_t k = 0; k < ng; k++) {
            if (taken[k] || g[k].crowd || g[k].category != d[i].category)
                continue;
            double iou = an_box_iou(&d[i].box, &g[k].box, false);
            if (iou >= best) {
                best = iou;
                m = k;
            }
        }
        if (m != SIZE_MAX) {
            taken[m] = true;
            tp++;
        }
    }
    if (taken != small)
        free(taken);
    size_t denom = 2 * tp + (n_det - tp) + (n_gt - tp);
    return denom ? 2.0 * (double)tp / (double)denom : 1.0;
}

rd_status an_eval_detect_report(const cJSON *partial, cJSON *const *recs, size_t n, size_t show, cJSON *report,
                                rd_error *err)
{
    const char *cols[AN_EVAL_MAX_COLS];
    size_t nc = an_eval_columns(partial, cols);
    const cJSON *cats = cJSON_GetObjectItemCaseSensitive(partial, "categories");
    int n_cat = cJSON_GetArraySize(cats);
    if (!nc || !cJSON_IsArray(cats) || n_cat < 1)
        return rd_errorf(err, RD_E_PARSE, "partial.json: detection needs \"columns\" and \"categories\"");
    int *cat_ids = calloc((size_t)n_cat + 1, sizeof *cat_ids);
    an_ranked *ch = calloc(n + 1, sizeof *ch); /* (drop, record) */
    parsed p;
    bool ok = true;
    rd_status st = cat_ids && ch ? parse_records(recs, n, nc, &p, err) : rd_errorf(err, RD_E_NOMEM, "out of memory");
    for (int i = 0; st == RD_OK && i < n_cat; i++) {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(cats, i), "id");
        if (!cJSON_IsNumber(id) || !(id->valuedouble >= INT_MIN && id->valuedouble <= INT_MAX))
            st = rd_errorf(err, RD_E_PARSE, "partial.json: categories[%d].id is not a number in the int range", i);
        else
            cat_ids[i] = (int)id->valuedouble;
    }
    const cJSON *ss = cJSON_GetObjectItemCaseSensitive(partial, "show_score");
    const double show_score = cJSON_IsNumber(ss) ? ss->valuedouble : 0.25;
    static const char *const copied[] = {"decoder", "ground_truth"};
    for (size_t k = 0; k < 2 && st == RD_OK; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(partial, copied[k]);
        if (v)
            an_json_add(report, copied[k], cJSON_Duplicate(v, true), &ok);
    }
    an_coco_result res[AN_EVAL_MAX_COLS];
    memset(res, 0, sizeof res);
    for (size_t j = 0; j < nc && st == RD_OK; j++) {
        an_coco_input in = {p.images, n, cat_ids, (size_t)n_cat, p.gts, p.n_gts, p.dets[j], p.n_dets[j]};
        st = an_coco_evaluate(&in, &res[j], err);
        if (st != RD_OK)
            rd_error_prefix(err, "column %s", cols[j]);
    }
    if (st == RD_OK) {
        size_t objects = 0;
        for (size_t i = 0; i < p.n_gts; i++)
            objects += !p.gts[i].crowd;
        an_json_add_num(report, "objects", (double)objects, &ok);
        an_json_add_num(report, "show_score", show_score, &ok);
        cJSON *m = an_json_add_object(report, "metrics", &ok);
        for (size_t j = 0; j < nc; j++) {
            cJSON *o = an_json_add_object(m, cols[j], &ok);
            an_json_add_num(o, "map", res[j].map, &ok);
            an_json_add_num(o, "map50", res[j].map50, &ok);
            an_json_add_num(o, "map75", res[j].map75, &ok);
            an_json_add_num(o, "mar100", res[j].mar100, &ok);
            an_json_add_num(o, "drop_map", res[0].map - res[j].map, &ok);
            an_json_add_num(o, "drop_map50", res[0].map50 - res[j].map50, &ok);
        }
        cJSON *pc = an_json_add_array(report, "per_class", &ok);
        for (size_t k = 0; k < res[0].n_categories; k++) {
            if (!res[0].n_gt[k])
                continue; /* no objects: undefined AP */
            cJSON *o = cJSON_CreateObject();
            an_json_add_num(o, "id", res[0].categories[k], &ok);
            for (int i = 0; i < n_cat; i++)
                if (cat_ids[i] == res[0].categories[k]) {
                    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(cats, i), "name");
                    an_json_add_str(o, "name", cJSON_IsString(nm) ? nm->valuestring : "", &ok);
                }
            an_json_add_num(o, "objects", (double)res[0].n_gt[k], &ok);
            cJSON *ap = an_json_add_object(o, "ap", &ok), *ap50 = an_json_add_object(o, "ap50", &ok);
            for (size_t j = 0; j < nc; j++) {
                an_json_add_num(ap, cols[j], res[j].ap[k], &ok);
                an_json_add_num(ap50, cols[j], res[j].ap50[k], &ok);
            }
            an_json_push(pc, o, &ok);
        }
        /* images whose F1 falls most against the first column */
        size_t n_ch = 0;
        double f1[AN_EVAL_MAX_COLS];
        for (size_t i = 0; i < n; i++) {
            double worst = 0;
            for (size_t j = 0; j < nc; j++) {
                f1[j] = image_f1(p.gts + p.gt_at[i], p.gt_at[i + 1] - p.gt_at[i], p.dets[j] + p.det_at[j][i],
                                 p.det_at[j][i + 1] - p.det_at[j][i], show_score);
                if (f1[0] - f1[j] > worst)
                    worst = f1[0] - f1[j];
            }
            if (worst > 0)
                ch[n_ch++] = (an_ranked){worst, i};
        }
        qsort(ch, n_ch, sizeof *ch, an_ranked_cmp);
        an_json_add_num(report, "images_changed", (double)n_ch, &ok);
        cJSON *list = an_json_add_array(report, "changed_images", &ok);
        for (size_t c = 0; c < n_ch && c < show; c++) {
            size_t i = ch[c].pos;
            cJSON *o = cJSON_CreateObject();
            an_json_add_num(o, "sample", cJSON_GetObjectItemCaseSensitive(recs[i], "sample")->valuedouble, &ok);
            const cJSON *inp = cJSON_GetObjectItemCaseSensitive(recs[i], "input");
            an_json_add_str(o, "input", cJSON_IsString(inp) ? inp->valuestring : "", &ok);
            an_json_add_num(o, "image", (double)p.images[i], &ok);
            cJSON *fo = an_json_add_object(o, "f1", &ok);
            for (size_t j = 0; j < nc; j++)
                an_json_add_num(fo, cols[j],
                                image_f1(p.gts + p.gt_at[i], p.gt_at[i + 1] - p.gt_at[i], p.dets[j] + p.det_at[j][i],
                                         p.det_at[j][i + 1] - p.det_at[j][i], show_score),
                                &ok);
            an_json_push(list, o, &ok);
        }
        st = an_json_status(ok, "the detection report", err);
    }
    for (size_t j = 0; j < nc; j++)
        an_coco_result_fini(&res[j]);
    if (cat_ids && ch)
        parsed_fini(&p, nc);
    free(cat_ids);
    free(ch);
    return st;
}

void an_eval_detect_print(FILE *out, const cJSON *r, size_t show)
{
    (void)show;
    const char *cols[AN_EVAL_MAX_COLS];
    size_t nc = an_eval_columns(r, cols);
    an_eval_print_model(out, r);
    fprintf(out, ": %.0f images, %.0f objects (", an_json_num(r, "samples"), an_json_num(r, "objects"));
    an_put_name(out, an_json_str(r, "ground_truth"));
    fputs("), decoder ", out);
    an_put_name(out, an_json_str(r, "decoder"));
    fputs("\n\n", out);
    fprintf(out, "%-14s %9s %9s %9s %9s %11s %9s\n", "precision", "mAP50-95", "mAP50", "mAP75", "AR100", "drop50-95",
            "drop50");
    static const an_eval_figure figs[] = {{"map", 9, false},    {"map50", 9, false},    {"map75", 9, false},
                                          {"mar100", 9, false}, {"drop_map", 11, true}, {"drop_map50", 9, true}};
    an_eval_print_metric_rows(out, r, figs, sizeof figs / sizeof figs[0]);
    fprintf(out, "\nAP50-95 per class (classes with objects):\n%-24s %7s", "class", "objects");
    for (size_t j = 0; j < nc; j++)
        fprintf(out, " %9.9s", cols[j]);
    fputc('\n', out);
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(r, "per_class"))
    {
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(c, "name");
        char id[24];
        snprintf(id, sizeof id, "%.0f ", an_json_num(c, "id"));
        fputs(id, out);
        an_put_name(out, cJSON_IsString(nm) ? nm->valuestring : "");
        int used = (int)strlen(id) + (cJSON_IsString(nm) ? (int)strlen(nm->valuestring) : 0);
        fprintf(out, "%*s %7.0f", used < 24 ? 24 - used : 0, "", an_json_num(c, "objects"));
        const cJSON *ap = cJSON_GetObjectItemCaseSensitive(c, "ap");
        for (size_t j = 0; j < nc; j++)
            an_eval_print_metric(out, 9, an_json_num(ap, cols[j]));
        fputc('\n', out);
    }
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(r, "changed_images");
    fprintf(out, "\nimages whose F1 (IoU 0.5, score >= %g) falls against %s: %.0f%s\n", an_json_num(r, "show_score"),
            nc ? cols[0] : "fp32", an_json_num(r, "images_changed"), cJSON_GetArraySize(list) ? ", most first:" : "");
    if (cJSON_GetArraySize(list)) {
        fprintf(out, "%8s  %-32s", "sample", "input");
        for (size_t j = 0; j < nc; j++)
            fprintf(out, " %7.7s", cols[j]);
        fputc('\n', out);
    }
    cJSON_ArrayForEach(c, list)
    {
        const cJSON *inp = cJSON_GetObjectItemCaseSensitive(c, "input");
        const char *s = cJSON_IsString(inp) ? inp->valuestring : "";
        size_t len = strlen(s);
        fprintf(out, "%8.0f  ", an_json_num(c, "sample"));
        an_put_name(out, len > 32 ? s + len - 32 : s);
        fprintf(out, "%*s", len < 32 ? (int)(32 - len) : 0, "");
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(c, "f1");
        for (size_t j = 0; j < nc; j++)
            fprintf(out, " %7.3f", an_json_num(f, cols[j]));
        fputc('\n', out);
    }
}
