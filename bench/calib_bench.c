/*
 * calib_bench.c: times rd_calibrate on a model and a dataset made from a few .npy inputs (not a test).
 *
 *     calib_bench MODEL N_SAMPLES THREADS METHOD INPUT.npy [INPUT.npy ...]
 *
 * Sample k is input k % n_files plus a small deterministic perturbation (up to +-0.05), so every sample
 * differs. METHOD is normal, kl_divergence or mmse. Prints the wall time of the calibration alone.
 */
#include "rknn_diag/simulator.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct bench_data {
    rd_tensor *files;
    size_t n_files;
} bench_data;

static rd_status get_sample(void *user, size_t k, rd_tensor *inputs, rd_error *err)
{
    const bench_data *d = user;
    rd_status st = rd_tensor_to_f32(&inputs[0], &d->files[k % d->n_files], err);
    if (st != RD_OK)
        return st;
    float *x = inputs[0].data;
    int64_t n = rd_tensor_numel(&inputs[0]);
    uint32_t h = (uint32_t)k * 2654435761u + 1u;
    for (int64_t i = 0; i < n; i++) {
        h = h * 1664525u + 1013904223u;
        x[i] += ((float)(h >> 8) / 16777216.0f - 0.5f) * 0.1f;
    }
    return RD_OK;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void progress(void *user, size_t done, size_t total)
{
    double *t0 = user;
    fprintf(stderr, "\r  %zu/%zu sample-passes, %.1f s", done, total, now() - *t0);
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: %s MODEL N_SAMPLES THREADS normal|kl_divergence|mmse INPUT.npy...\n", argv[0]);
        return 2;
    }
    char *end;
    long n = strtol(argv[2], &end, 10);
    long threads = strtol(argv[3], &end, 10);
    rd_calib_method method = !strcmp(argv[4], "kl_divergence") ? RD_CALIB_KL
                             : !strcmp(argv[4], "mmse")        ? RD_CALIB_MMSE
                                                               : RD_CALIB_NORMAL;
    rd_error err;
    rd_model *m = NULL;
    if (rd_model_load(argv[1], NULL, &m, &err) != RD_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return 3;
    }
    bench_data d = {.n_files = (size_t)(argc - 5)};
    d.files = calloc(d.n_files, sizeof *d.files);
    for (size_t i = 0; i < d.n_files; i++)
        if (rd_npy_load(argv[5 + i], &d.files[i], &err) != RD_OK) {
            fprintf(stderr, "%s\n", err.msg);
            return 3;
        }
    rd_sim_options so = {.precision = RD_PREC_INT8, .optimization_level = 3};
    rd_sim *s = NULL;
    if (rd_sim_create(m, &so, &s, &err) != RD_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return 3;
    }
    double t0 = now();
    rd_calib_options co = {.method = method, .threads = (int)threads, .progress = progress, .progress_user = &t0};
    rd_status st = rd_calibrate(s, get_sample, &d, (size_t)n, &co, &err);
    double t = now() - t0;
    fprintf(stderr, "\n");
    if (st != RD_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return 3;
    }
    size_t calibrated = 0, nv = rd_model_value_count(rd_sim_model(s));
    uint64_t hash = 1469598103934665603ull; /* FNV-1a over every range's bits: equal across thread counts */
    for (size_t v = 0; v < nv; v++) {
        rd_value_info vi;
        rd_model_value(rd_sim_model(s), v, &vi);
        rd_sim_tensor ti = {0};
        if (rd_sim_tensor_get(s, vi.name, &ti, NULL) == RD_OK && ti.quantized) {
            calibrated++;
            unsigned char bits[2 * sizeof(float)];
            memcpy(bits, &ti.min, sizeof(float));
            memcpy(bits + sizeof(float), &ti.max, sizeof(float));
            for (size_t b = 0; b < sizeof bits; b++)
                hash = (hash ^ bits[b]) * 1099511628211ull;
        }
    }
    printf("%s: %s calibration, %ld samples, %ld threads: %.2f s (%.1f samples/s), %zu tensors, ranges hash %016llx\n",
           argv[1], argv[4], n, threads, t, (double)n / t, calibrated, (unsigned long long)hash);
    rd_sim_destroy(s);
    for (size_t i = 0; i < d.n_files; i++)
        rd_tensor_fini(&d.files[i]);
    free(d.files);
    rd_model_destroy(m);
    return 0;
}
