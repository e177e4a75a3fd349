/*
 * test_darknet_oracle.c: the Darknet frontend against Darknet itself. Debian's darknet package (libdarknet.so,
 * pjreddie's darknet of 2018-09) loads the same .cfg and .weights (written by darknet_synth.c, both header
 * versions) and runs the same input; every layer's output is compared with the tensor of the same layer in our
 * run ("<index>_<kind>"). Darknet's yolo layer applies the logistic to x, y, objectness and class scores of its
 * input; our yolo outputs are that input (the raw convolution, as RKNN's load_darknet gives it), so the test
 * applies the logistic to the same entries before comparing.
 */
#include "darknet_synth.h"
#include "rd_test.h"
#include "rknn_diag/frontends.h"

#include <darknet.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Darknet frees little of what it parses: its allocations are not ours to report. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:libdarknet.so\n";
}

typedef struct grab {
    rd_tensor t[64];
    char names[64][32];
    int n;
} grab;

static rd_status observe(void *user, const rd_observed *ev, rd_error *err)
{
    grab *g = user;
    (void)err;
    if (g->n < 64 && strchr(ev->name, '_') && !strchr(ev->name, ':') && ev->name[0] >= '0' && ev->name[0] <= '9') {
        snprintf(g->names[g->n], sizeof g->names[g->n], "%s", ev->name);
        if (rd_tensor_clone(&g->t[g->n], ev->tensor, NULL) == RD_OK)
            g->n++;
    }
    return RD_OK;
}

static const rd_tensor *ours(const grab *g, int index)
{
    char prefix[16];
    snprintf(prefix, sizeof prefix, "%d_", index);
    for (int i = 0; i < g->n; i++)
        if (strncmp(g->names[i], prefix, strlen(prefix)) == 0)
            return &g->t[i];
    return NULL;
}

static float logistic(float x)
{
    return 1.0f / (1.0f + expf(-x));
}

static void compare_with_darknet(int minor)
{
    char *dir = rd_test_tmpdir("darknet_oracle");
    char *cfg = rd_test_join(dir, "tiny.cfg"), *wpath = rd_test_join(dir, "tiny.weights");
    rd_test_write_text(cfg, dns_tiny_cfg);
    size_t wlen = 0;
    uint8_t *w = dns_weights(dns_tiny_layers, 0, minor, 11, &wlen);
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_file_write_atomic(wpath, w, wlen, NULL, &err), RD_OK);
    free(w);
    static float x[3 * 32 * 32];
    uint32_t s = 99;
    for (size_t i = 0; i < sizeof x / sizeof x[0]; i++) {
        s = s * 1664525u + 1013904223u;
        x[i] = (float)(s >> 8) / 16777216.0f;
    }
    /* ours */
    rd_model *m = NULL;
    rd_status st = rd_frontend_load(cfg, NULL, NULL, &m, NULL, &err);
    if (st != RD_OK)
        fprintf(stderr, "\n%s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(st, RD_OK);
    static grab g;
    memset(&g, 0, sizeof g);
    rd_tensor in = {.dtype = RD_DT_F32, .rank = 4, .dims = {1, 3, 32, 32}, .data = x};
    rd_run_options ro = {.observer = observe, .user = &g};
    CU_ASSERT_EQUAL_FATAL(rd_model_run(m, &in, 1, &ro, NULL, 0, &err), RD_OK);
    /* Darknet's */
    network *net = load_network(cfg, wpath, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(net);
    set_batch_network(net, 1);
    network_predict(net, x);
    CU_ASSERT_EQUAL(net->n, 17);
    double worst = 0.0;
    for (int i = 0; i < net->n; i++) {
        layer l = net->layers[i];
        const rd_tensor *t = ours(&g, i);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        CU_ASSERT_EQUAL_FATAL(rd_tensor_numel(t), l.outputs);
        const float *o = t->data;
        double max_ref = 0.0, max_diff = 0.0;
        for (int k = 0; k < l.outputs; k++) {
            float v = o[k];
            if (l.type == YOLO) { /* entries of anchor a: x, y, w, h, objectness, classes; each w*h long */
                int per = 4 + 1 + l.classes, entry = (k / (l.w * l.h)) % per;
                if (entry != 2 && entry != 3)
                    v = logistic(v);
            }
            max_ref = fmax(max_ref, fabs(l.output[k]));
            max_diff = fmax(max_diff, fabs(v - l.output[k]));
        }
        double rel = max_diff / (max_ref > 1e-6 ? max_ref : 1.0);
        if (rel > 1e-5)
            fprintf(stderr, "\nlayer %d (%s): max |diff| %g of max |value| %g\n", i, ours(&g, i) ? "" : "?", max_diff,
                    max_ref);
        worst = fmax(worst, rel);
    }
    fprintf(stderr, "\nweights 0.%d: %d layers, worst relative difference to Darknet %.3g\n", minor, net->n, worst);
    CU_ASSERT(worst <= 1e-5);
    free_network(net);
    for (int i = 0; i < g.n; i++)
        rd_tensor_fini(&g.t[i]);
    rd_model_destroy(m);
    free(cfg);
    free(wpath);
    free(dir);
}

static void test_weights_v01(void)
{
    compare_with_darknet(1);
}

static void test_weights_v02(void)
{
    compare_with_darknet(2);
}

RD_TEST_REGISTER(register_darknet_oracle)
{
    RD_SUITE("darknet_oracle", {"Darknet runs the same .cfg/.weights (0.1 header)", test_weights_v01},
             {"Darknet runs the same .cfg/.weights (0.2 header)", test_weights_v02});
}
