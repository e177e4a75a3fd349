/*
 * qgemm_bench.c: throughput of the INT8 simulator's integer GEMM next to OpenBLAS sgemm on the same shape.
 *
 * Default shape: a 3x3 conv of 64 input and 64 output channels on 56x56 (M = 64, N = 3136, K = 576), the
 * im2col product the simulator runs for such a layer. Both single-threaded. Not a test: prints a table.
 *   qgemm_bench [M N K [repeats]]
 */
#include "kernels/qgemm.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long arg_or(int argc, char **argv, int i, long def)
{
    if (i >= argc)
        return def;
    char *end = NULL;
    long v = strtol(argv[i], &end, 10);
    return end && *end == '\0' && v > 0 && v <= 100000 ? v : def;
}

int main(int argc, char **argv)
{
    const int64_t m = arg_or(argc, argv, 1, 64), n = arg_or(argc, argv, 2, 3136), k = arg_or(argc, argv, 3, 576);
    const int reps = (int)arg_or(argc, argv, 4, 20);
    int8_t *a = malloc((size_t)(m * k)), *b = malloc((size_t)(k * n));
    int32_t *c = malloc((size_t)(m * n) * sizeof(int32_t));
    float *af = malloc((size_t)(m * k) * sizeof(float)), *bf = malloc((size_t)(k * n) * sizeof(float));
    float *cf = malloc((size_t)(m * n) * sizeof(float));
    void *work = aligned_alloc(64, (qgemm_workspace_bytes(m, n, k) + 63) / 64 * 64 + 64);
    if (!a || !b || !c || !af || !bf || !cf || !work) {
        fprintf(stderr, "qgemm_bench: out of memory\n");
        return 3;
    }
    unsigned s = 12345;
    for (int64_t i = 0; i < m * k; i++) {
        s = s * 1103515245u + 12345u;
        a[i] = (int8_t)(s >> 24);
        af[i] = a[i];
    }
    for (int64_t i = 0; i < k * n; i++) {
        s = s * 1103515245u + 12345u;
        b[i] = (int8_t)(s >> 24);
        bf[i] = b[i];
    }
    openblas_set_num_threads(1);
    const qgemm_mat am = {.data = a, .rs = k, .cs = 1, .zp = 0}, bm = {.data = b, .rs = n, .cs = 1, .zp = -3};
    const double ops = 2.0 * (double)m * (double)n * (double)k;
    double best_q = 1e30, best_p = 1e30, best_s = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = now_s();
        sim_qgemm_s8s8s32(m, n, k, &am, &bm, NULL, QGEMM_BIAS_NONE, c, n, work);
        double t1 = now_s();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0f, af, (int)k, bf, (int)n,
                    0.0f, cf, (int)n);
        double t2 = now_s();
        if (r < 3) {
            sim_qgemm_s8s8s32_portable(m, n, k, &am, &bm, NULL, QGEMM_BIAS_NONE, c, n, work);
            double t3 = now_s();
            best_p = t3 - t2 < best_p ? t3 - t2 : best_p;
        }
        best_q = t1 - t0 < best_q ? t1 - t0 : best_q;
        best_s = t2 - t1 < best_s ? t2 - t1 : best_s;
    }
    printf("shape M=%lld N=%lld K=%lld, best of %d, 1 thread\n", (long long)m, (long long)n, (long long)k, reps);
    printf("%-34s %10s %10s\n", "kernel", "ms", "GOP/s");
    printf("%-34s %10.3f %10.1f\n", "sim_qgemm_s8s8s32 (dispatched)", best_q * 1e3, ops / best_q * 1e-9);
    printf("%-34s %10.3f %10.1f\n", "sim_qgemm_s8s8s32 (portable)", best_p * 1e3, ops / best_p * 1e-9);
    printf("%-34s %10.3f %10.1f\n", "OpenBLAS cblas_sgemm", best_s * 1e3, ops / best_s * 1e-9);
    free(a);
    free(b);
    free(c);
    free(af);
    free(bf);
    free(cf);
    free(work);
    return 0;
}
