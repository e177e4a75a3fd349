/*
 * caffe_synth.c: the Caffe test net and the .caffemodel writer (caffe_synth.h).
 */
#include "caffe_synth.h"

#include "caffe.pb-c.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

const char csy_net[] =
    "# the Caffe test net: every layer kind the oracle test covers\n"
    "name: \"csy\"\n"
    "layer { name: \"data\" type: \"Input\" top: \"data\" input_param { shape { dim: 1 dim: 3 dim: 8 dim: 8 } } }\n"
    "layer { name: \"conv1\" type: \"Convolution\" bottom: \"data\" top: \"conv1\"\n"
    "  convolution_param { num_output: 4 kernel_size: 3 pad: 1 } }\n"
    "layer { name: \"bn1\" type: \"BatchNorm\" bottom: \"conv1\" top: \"conv1\" batch_norm_param { eps: 0.001 } }\n"
    "layer { name: \"scale1\" type: \"Scale\" bottom: \"conv1\" top: \"conv1\" scale_param { bias_term: true } }\n"
    "layer { name: \"relu1\" type: \"ReLU\" bottom: \"conv1\" top: \"conv1\" }\n"
    "layer { name: \"pool1\" type: \"Pooling\" bottom: \"conv1\" top: \"pool1\"\n"
    "  pooling_param { pool: MAX kernel_size: 3 stride: 2 } }\n"
    "layer { name: \"pool2\" type: \"Pooling\" bottom: \"conv1\" top: \"pool2\"\n"
    "  pooling_param { pool: AVE kernel_size: 3 stride: 2 pad: 1 } }\n"
    "layer { name: \"deconv1\" type: \"Deconvolution\" bottom: \"pool1\" top: \"deconv1\"\n"
    "  convolution_param { num_output: 2 kernel_size: 4 stride: 2 pad: 1 } }\n"
    "layer { name: \"prelu1\" type: \"PReLU\" bottom: \"deconv1\" top: \"deconv1\" }\n"
    "layer { name: \"up1\" type: \"Upsample\" bottom: \"pool1\" top: \"up1\" upsample_param { scale: 2 } }\n"
    "layer { name: \"interp1\" type: \"Interp\" bottom: \"pool2\" top: \"interp1\" interp_param { zoom_factor: 2 } }\n"
    "layer { name: \"concat1\" type: \"Concat\" bottom: \"deconv1\" bottom: \"up1\" top: \"concat1\" }\n"
    "layer { name: \"slice1\" type: \"Slice\" bottom: \"concat1\" top: \"s_a\" top: \"s_b\"\n"
    "  slice_param { axis: 1 slice_point: 3 } }\n"
    "layer { name: \"elt1\" type: \"Eltwise\" bottom: \"s_a\" bottom: \"s_b\" top: \"elt1\"\n"
    "  eltwise_param { operation: SUM coeff: 1 coeff: -0.5 } }\n"
    "layer { name: \"ip1\" type: \"InnerProduct\" bottom: \"elt1\" top: \"ip1\" inner_product_param { num_output: 5 } "
    "}\n"
    "layer { name: \"prob\" type: \"Softmax\" bottom: \"ip1\" top: \"prob\" }\n"
    "layer { name: \"perm1\" type: \"Permute\" bottom: \"pool1\" top: \"perm1\" permute_param { order: 0 order: 2 "
    "order: 3 order: 1 } }\n"
    "layer { name: \"flat1\" type: \"Flatten\" bottom: \"perm1\" top: \"flat1\" }\n"
    "layer { name: \"reshape1\" type: \"Reshape\" bottom: \"flat1\" top: \"reshape1\"\n"
    "  reshape_param { shape { dim: 0 dim: -1 dim: 8 } } }\n";

const csy_layer csy_net_layers[] = {
    {"conv1", "Convolution", 2, {{4, {4, 3, 3, 3}, NULL}, {1, {4}, NULL}}},
    {"bn1", "BatchNorm", 3, {{1, {4}, NULL}, {1, {4}, NULL}, {1, {1}, NULL}}},
    {"scale1", "Scale", 2, {{1, {4}, NULL}, {1, {4}, NULL}}},
    {"deconv1", "Deconvolution", 2, {{4, {4, 2, 4, 4}, NULL}, {1, {2}, NULL}}},
    {"prelu1", "PReLU", 1, {{1, {2}, NULL}}},
    {"ip1", "InnerProduct", 2, {{0, {1, 1, 5, 192}, NULL}, {1, {5}, NULL}}}, /* legacy 4-D blob */
};
const size_t csy_net_n_layers = sizeof csy_net_layers / sizeof csy_net_layers[0];

void csy_values(size_t l, int b, float *out, size_t n)
{
    uint32_t s = (uint32_t)(l * 16 + (size_t)b + 1) * 2654435761u;
    bool positive = !strcmp(csy_net_layers[l].type, "BatchNorm") && b > 0;
    for (size_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        float u = (float)(s >> 8) / 16777216.0f; /* [0, 1) */
        out[i] = positive ? 0.5f + u : u - 0.5f;
    }
    if (positive && b == 2)
        out[0] = 2.0f; /* the scale factor the moving averages were stored multiplied by */
}

static size_t blob_numel(const csy_blob *b)
{
    size_t n = 1;
    for (int i = 0; i < (b->rank ? b->rank : 4); i++)
        n *= (size_t)b->dims[i];
    return n;
}

uint8_t *csy_pack(const csy_layer *layers, size_t n, size_t *len)
{
    Rdcaffe__NetParameter net = RDCAFFE__NET_PARAMETER__INIT;
    Rdcaffe__LayerParameter *lp = calloc(n ? n : 1, sizeof *lp), **lpp = calloc(n ? n : 1, sizeof *lpp);
    Rdcaffe__BlobProto *bp = calloc(n * CSY_MAX_BLOBS + 1, sizeof *bp),
                       **bpp = calloc(n * CSY_MAX_BLOBS + 1, sizeof *bpp);
    Rdcaffe__BlobShape *sh = calloc(n * CSY_MAX_BLOBS + 1, sizeof *sh);
    uint8_t *out = NULL;
    if (!lp || !lpp || !bp || !bpp || !sh)
        goto done;
    net.name = "csy";
    net.n_layer = n;
    net.layer = lpp;
    for (size_t i = 0; i < n; i++) {
        rdcaffe__layer_parameter__init(&lp[i]);
        lpp[i] = &lp[i];
        lp[i].name = (char *)layers[i].name;
        lp[i].type = (char *)layers[i].type;
        lp[i].n_blobs = (size_t)layers[i].n_blobs;
        lp[i].blobs = bpp + i * CSY_MAX_BLOBS;
        for (int b = 0; b < layers[i].n_blobs; b++) {
            const csy_blob *cb = &layers[i].blobs[b];
            size_t k = i * CSY_MAX_BLOBS + (size_t)b;
            rdcaffe__blob_proto__init(&bp[k]);
            bpp[k] = &bp[k];
            if (cb->rank) {
                rdcaffe__blob_shape__init(&sh[k]);
                sh[k].n_dim = (size_t)cb->rank;
                sh[k].dim = (int64_t *)cb->dims;
                bp[k].shape = &sh[k];
            } else {
                bp[k].has_num = bp[k].has_channels = bp[k].has_height = bp[k].has_width = 1;
                bp[k].num = (int32_t)cb->dims[0];
                bp[k].channels = (int32_t)cb->dims[1];
                bp[k].height = (int32_t)cb->dims[2];
                bp[k].width = (int32_t)cb->dims[3];
            }
            bp[k].n_data = cb->data ? blob_numel(cb) : 0;
            bp[k].data = (float *)cb->data;
        }
    }
    *len = rdcaffe__net_parameter__get_packed_size(&net);
    out = malloc(*len ? *len : 1);
    if (out)
        rdcaffe__net_parameter__pack(&net, out);
done:
    free(lp);
    free(lpp);
    free(bp);
    free(bpp);
    free(sh);
    return out;
}

uint8_t *csy_net_weights(size_t *len)
{
    csy_layer layers[sizeof csy_net_layers / sizeof csy_net_layers[0]];
    float *data[sizeof layers / sizeof layers[0]][CSY_MAX_BLOBS] = {{0}};
    uint8_t *out = NULL;
    bool ok = true;
    for (size_t l = 0; l < csy_net_n_layers; l++) {
        layers[l] = csy_net_layers[l];
        for (int b = 0; b < layers[l].n_blobs; b++) {
            size_t n = blob_numel(&layers[l].blobs[b]);
            data[l][b] = malloc(n * sizeof(float));
            ok &= data[l][b] != NULL;
            if (data[l][b])
                csy_values(l, b, data[l][b], n);
            layers[l].blobs[b].data = data[l][b];
        }
    }
    if (ok)
        out = csy_pack(layers, csy_net_n_layers, len);
    for (size_t l = 0; l < csy_net_n_layers; l++)
        for (int b = 0; b < CSY_MAX_BLOBS; b++)
            free(data[l][b]);
    return out;
}
