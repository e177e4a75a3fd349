/*
 * fuzz_coco_annot.c: libFuzzer target for COCO instances JSON (an_coco_annot_parse, no file system
 * access). Oracle: on success every ground truth names a listed image and category and lies inside its
 * image within the slack; then the COCO protocol run with the ground truths as their own detections must
 * succeed with figures in [-1, 1]. Failures must carry a message naming the file. Inputs capped at 256 KiB.
 */
#include "det_annot.h"
#include "fuzz_input.h"

#include <stdlib.h>
#include <string.h>

#define FUZZ_MAX_INPUT ((size_t)256 << 10)
#define FUZZ_NAME "fuzz/instances.json"

/* A refusal leaves no ground truths and no images. */
static rd_status parse_annot(const char *buf, size_t size, const char *name, void *out, rd_error *err)
{
    rd_status st = an_coco_annot_parse(buf, size, name, out, err);
    const an_annot *a = out;
    return fuzz_refused_empty(st, !(a->n_gts || a->n_images));
}

static void check_annot(void *parsed)
{
    an_annot *a = parsed;
    int64_t *imgs = malloc((a->n_images + 1) * sizeof *imgs);
    int *cats = malloc((a->n_categories + 1) * sizeof *cats);
    an_det *dets = malloc((a->n_gts + 1) * sizeof *dets);
    if (!imgs || !cats || !dets)
        __builtin_trap();
    for (size_t i = 0; i < a->n_images; i++)
        imgs[i] = a->images[i].id;
    for (size_t i = 0; i < a->n_categories; i++)
        cats[i] = a->categories[i].id;
    for (size_t i = 0; i < a->n_gts; i++) {
        const an_gt *g = &a->gts[i];
        bool img_ok = false;
        for (size_t k = 0; k < a->n_images; k++)
            if (a->images[k].id == g->image && g->box.x + g->box.w <= (double)a->images[k].width + AN_ANNOT_BOX_SLACK &&
                g->box.y + g->box.h <= (double)a->images[k].height + AN_ANNOT_BOX_SLACK)
                img_ok = true;
        if (!img_ok || g->box.w < 0 || g->box.h < 0)
            __builtin_trap();
        dets[i] = (an_det){.image = g->image, .category = g->category, .box = g->box, .score = 1.0};
    }
    an_coco_input in = {imgs, a->n_images, cats, a->n_categories, a->gts, a->n_gts, dets, a->n_gts};
    an_coco_result r;
    rd_error err;
    if (an_coco_evaluate(&in, &r, &err) != RD_OK || r.map < -1 || r.map > 1 || r.map50 < -1 || r.map50 > 1)
        __builtin_trap();
    an_coco_result_fini(&r);
    free(imgs);
    free(cats);
    free(dets);
    an_annot_fini(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    an_annot a;
    return fuzz_parse_input(data, size, FUZZ_MAX_INPUT, FUZZ_NAME, parse_annot, check_annot, &a);
}
