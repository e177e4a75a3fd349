/*
 * darknet_synth.c: the Darknet test model and its .weights writer (darknet_synth.h).
 */
#include "darknet_synth.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

const char dns_tiny_cfg[] =
    "# a small YOLOv3-tiny: every layer kind rknn-diag reads\n"
    "[net]\nbatch=1\nsubdivisions=1\nwidth=32\nheight=32\nchannels=3\n\n"
    "[convolutional]\nbatch_normalize=1\nfilters=8\nsize=3\nstride=1\npad=1\nactivation=leaky\n\n"  /* 0: 8x32x32 */
    "[maxpool]\nsize=2\nstride=2\n\n"                                                               /* 1: 8x16x16 */
    "[convolutional]\nbatch_normalize=1\nfilters=16\nsize=3\nstride=1\npad=1\nactivation=leaky\n\n" /* 2 */
    "[maxpool]\nsize=2\nstride=2\n\n"                                                               /* 3: 16x8x8 */
    "[convolutional]\nbatch_normalize=1\nfilters=16\nsize=3\nstride=1\npad=1\nactivation=leaky\n\n" /* 4 */
    "[maxpool]\nsize=2\nstride=1\n\n"                                                               /* 5: 16x8x8 */
    "[convolutional]\nbatch_normalize=1\nfilters=16\nsize=1\nstride=1\npad=1\nactivation=relu\n\n"  /* 6 */
    "[shortcut]\nfrom=-3\nactivation=linear\n\n"                                                    /* 7 */
    "[convolutional]\nsize=1\nstride=1\npad=1\nfilters=21\nactivation=linear\n\n"                   /* 8 */
    "[yolo]\nmask = 3,4,5\nanchors = 10,14,  23,27,  37,58,  81,82,  135,169,  344,319\nclasses=2\nnum=6\n\n" /* 9 */
    "[route]\nlayers = -4\n\n"                                                                                /* 10 */
    "[convolutional]\nbatch_normalize=1\nfilters=8\nsize=1\nstride=1\npad=1\nactivation=leaky\n\n"            /* 11 */
    "[upsample]\nstride=2\n\n"                                                     /* 12: 8x16x16 */
    "[route]\nlayers = -1, 2\n\n"                                                  /* 13: 24x16x16 */
    "[convolutional]\nsize=3\nstride=2\npad=1\nfilters=8\nactivation=logistic\n\n" /* 14: 8x8x8 */
    "[convolutional]\nsize=1\nstride=1\npad=1\nfilters=21\nactivation=linear\n\n"  /* 15 */
    "[yolo]\nmask = 0,1,2\nanchors = 10,14,  23,27,  37,58,  81,82,  135,169,  344,319\nclasses=2\nnum=6\n"; /* 16 */

const dns_layer dns_tiny_layers[] = {
    {8, 1, 8 * 3 * 9}, {16, 1, 16 * 8 * 9}, {16, 1, 16 * 16 * 9}, {16, 1, 16 * 16}, {21, 0, 21 * 16},
    {8, 1, 8 * 16},    {8, 0, 8 * 24 * 9},  {21, 0, 21 * 8},      {0, 0, 0},
};

static float next(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return (float)(*s >> 8) / 16777216.0f - 0.5f;
}

uint8_t *dns_weights(const dns_layer *layers, int major, int minor, uint32_t seed, size_t *len)
{
    size_t floats = 0;
    for (const dns_layer *l = layers; l->n; l++)
        floats += l->n * (l->bn ? 4 : 1) + l->weights;
    bool wide = major * 10 + minor >= 2;
    size_t head = wide ? 20 : 16;
    uint8_t *buf = calloc(1, head + 4 * floats);
    if (!buf)
        return NULL;
    int32_t v[3] = {major, minor, 0};
    memcpy(buf, v, 12);
    uint64_t seen = 32013312;
    memcpy(buf + 12, &seen, wide ? 8 : 4);
    uint8_t *p = buf + head; /* not float-aligned after a 20-byte header: memcpy each value */
    for (const dns_layer *l = layers; l->n; l++) {
        for (size_t i = 0; i < l->n * (l->bn ? 4 : 1) + l->weights; i++, p += 4) {
            size_t block = i / l->n; /* biases, scales, means, variances (bn), then weights */
            float x = next(&seed);
            if (l->bn && (block == 1 || block == 3) && i < 4 * l->n)
                x += 1.0f; /* scales around 1; variances in [0.5, 1.5) */
            memcpy(p, &x, 4);
        }
    }
    *len = head + 4 * floats;
    return buf;
}
