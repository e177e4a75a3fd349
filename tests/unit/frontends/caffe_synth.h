/*
 * caffe_synth.h: small Caffe models for tests and fuzz seeds: a .prototxt using the layers rknn-diag reads
 * and .caffemodel files written with protobuf-c from frontends/proto/caffe.proto (the same generated code the
 * reader uses, but the encoding is protobuf-c's: what Caffe's own writer produces on the wire).
 */
#ifndef RD_TESTS_CAFFE_SYNTH_H
#define RD_TESTS_CAFFE_SYNTH_H

#include <stddef.h>
#include <stdint.h>

#define CSY_MAX_BLOBS 4

/** One weight blob: its shape (rank 0: the legacy num/channels/height/width form of dims[0..3]) and values. */
typedef struct csy_blob {
    int rank;
    int64_t dims[4];
    const float *data;
} csy_blob;

/** One layer of a .caffemodel: its name, type and blobs. */
typedef struct csy_layer {
    const char *name, *type;
    int n_blobs;
    csy_blob blobs[CSY_MAX_BLOBS];
} csy_layer;

/** A serialized NetParameter holding layers (malloc'ed; NULL when out of memory). */
uint8_t *csy_pack(const csy_layer *layers, size_t n, size_t *len);

/**
 * The test net on a 1x3x8x8 input "data": Convolution + in-place BatchNorm, Scale and ReLU, Pooling MAX
 * (ceil: 4x4, floor would give 3x3) and AVE with pad (ceil: 5x5), Deconvolution + PReLU, Upsample, Interp,
 * Concat, Slice, Eltwise with coeff, InnerProduct, Softmax, Permute, Flatten, Reshape. Outputs: "prob" (1x5),
 * "interp1" (1x4x9x9), "reshape1" (1x8x8).
 */
extern const char csy_net[];

/** The weighted layers of csy_net, in order: name, type, blob shapes (data NULL). */
extern const csy_layer csy_net_layers[];
extern const size_t csy_net_n_layers;

/** Deterministic values of blob b of csy_net_layers[l] (BatchNorm variances and the scale factor positive). */
void csy_values(size_t l, int b, float *out, size_t n);
/** The .caffemodel of csy_net with csy_values (malloc'ed). */
uint8_t *csy_net_weights(size_t *len);

#endif
