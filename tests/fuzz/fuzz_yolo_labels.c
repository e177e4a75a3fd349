/*
 * fuzz_yolo_labels.c: libFuzzer target for YOLO txt label files (an_yolo_labels_parse). The first byte
 * picks the class count (1..64); the image is 640x480. Oracle: on success every box has a class below
 * the count and lies inside the image within the slack; failures name the file. Inputs capped at 64 KiB.
 */
#include "det_annot.h"
#include "fuzz_input.h"

#include <stdlib.h>
#include <string.h>

#define FUZZ_MAX_INPUT ((size_t)64 << 10)
#define FUZZ_NAME "fuzz/labels.txt"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    int nc = data[0] % 64 + 1;
    char *buf = fuzz_copy(data + 1, size - 1, FUZZ_MAX_INPUT - 1);
    if (!buf)
        return 0;
    an_gt *gts = NULL;
    size_t n = 0;
    rd_error err;
    rd_error_clear(&err);
    rd_status st = an_yolo_labels_parse(buf, size - 1, FUZZ_NAME, 640, 480, nc, 7, &gts, &n, &err);
    free(buf);
    if (st != RD_OK && !fuzz_refusal_names(st, &err, FUZZ_NAME))
        __builtin_trap();
    const double sx = 640 * AN_YOLO_BOX_SLACK * 2, sy = 480 * AN_YOLO_BOX_SLACK * 2;
    for (size_t i = 0; st == RD_OK && i < n; i++) {
        const an_gt *g = &gts[i];
        if (g->category < 0 || g->category >= nc || g->image != 7 || g->box.w < 0 || g->box.h < 0 || g->box.x < -sx ||
            g->box.y < -sy || g->box.x + g->box.w > 640 + sx || g->box.y + g->box.h > 480 + sy)
            __builtin_trap();
    }
    free(gts);
    return 0;
}
