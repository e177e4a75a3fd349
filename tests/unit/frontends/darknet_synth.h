/*
 * darknet_synth.h: small Darknet models for tests and fuzz seeds: a YOLOv3-tiny-shaped .cfg (every layer kind
 * the frontend reads) and .weights of deterministic values.
 */
#ifndef RD_TESTS_DARKNET_SYNTH_H
#define RD_TESTS_DARKNET_SYNTH_H

#include <stddef.h>
#include <stdint.h>

/** The floats one layer reads: n biases, with bn n scales, means and (positive) variances, then weights. */
typedef struct dns_layer {
    size_t n;
    int bn;
    size_t weights;
} dns_layer;

/** A YOLOv3-tiny-like network on a 3 x 32 x 32 input: conv+BN+leaky, maxpools of stride 2 and 1 (Darknet's
    padding), convs with bias and linear or logistic activations, route (one and two layers), upsample,
    shortcut, two yolo heads. */
extern const char dns_tiny_cfg[];
/** Its layers that read weights, in order, ending with n == 0. */
extern const dns_layer dns_tiny_layers[];

/** .weights for layers (ending with n == 0): header major.minor.0 (seen: uint64 from 0.2 on, int32 before),
    then values in [-0.5, 0.5) from seed (variances in [0.5, 1.5)). Returns a malloc'ed buffer. */
uint8_t *dns_weights(const dns_layer *layers, int major, int minor, uint32_t seed, size_t *len);

#endif
