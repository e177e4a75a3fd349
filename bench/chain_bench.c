/*
 * chain_bench.c: how loading and running scale with the node count (docs/benchmarks.md, issue 16 item 5).
 *
 *     chain_bench N [MODEL.onnx]
 *
 * Writes a chain of N nodes with our ONNX writer (tests/support/chain_model.h: Add of a shared constant,
 * Relu and Identity in turn, on a 1x8 float tensor, tensors named "block_<i>/out"), then times: writing,
 * rd_model_load, rd_model_run (float32, every layer observed) and rd_sim_create + rd_sim_run at float16
 * (the compiler passes, which remove the Identity nodes and fuse each Relu into its Add, the copy of the
 * model and the simulator's per-value bookkeeping). Prints one line per step. With MODEL.onnx the model
 * is kept there; otherwise it goes to a temporary file.
 */
#include "chain_model.h"
#include "rknn_diag/simulator.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static rd_status count_layer(void *user, const rd_observed *ev, rd_error *err)
{
    (void)ev;
    (void)err;
    ++*(long *)user;
    return RD_OK;
}

static rd_status write_chain(long n, const char *path, rd_error *err)
{
    rd_onnx_builder *b = rd_chain_model(n);
    rd_status st = rd_onnx_builder_save(b, path, err);
    rd_onnx_builder_destroy(b);
    return st;
}

int main(int argc, char **argv)
{
    if (argc < 2 || atol(argv[1]) < 1) {
        fprintf(stderr, "usage: chain_bench N [MODEL.onnx]\n");
        return 2;
    }
    long n = atol(argv[1]);
    char tmp[] = "/tmp/chain_bench_XXXXXX.onnx";
    const char *path = argc > 2 ? argv[2] : NULL;
    if (!path) {
        int fd = mkstemps(tmp, 5);
        if (fd < 0) {
            perror("mkstemps");
            return 3;
        }
        close(fd);
        path = tmp;
    }
    rd_error err = {0};
    rd_model *m = NULL;
    rd_sim *s = NULL;
    rd_tensor x = {0}, y = {0}, ys = {0};
    int rc = 3;
    double t0 = now_s();
    if (write_chain(n, path, &err) != RD_OK)
        goto out;
    double t1 = now_s();
    printf("write  %ld nodes: %.3f s\n", n, t1 - t0);
    if (rd_model_load(path, NULL, &m, &err) != RD_OK)
        goto out;
    double t2 = now_s();
    printf("load   %ld nodes: %.3f s\n", n, t2 - t1);
    if (rd_tensor_alloc(&x, RD_DT_F32, 2, (const int64_t[]){1, 8}, &err) != RD_OK)
        goto out;
    long observed = 0;
    rd_run_options ro = {.observer = count_layer, .user = &observed};
    if (rd_model_run(m, &x, 1, &ro, &y, 1, &err) != RD_OK)
        goto out;
    double t3 = now_s();
    printf("run    %ld nodes: %.3f s (%ld tensors observed)\n", n, t3 - t2, observed);
    rd_sim_options so = {.precision = RD_PREC_FP16, .optimization_level = 3};
    if (rd_sim_create(m, &so, &s, &err) != RD_OK)
        goto out;
    double t4 = now_s();
    printf("sim    %ld nodes: %.3f s (create, float16)\n", n, t4 - t3);
    if (rd_sim_run(s, &x, 1, NULL, &ys, 1, &err) != RD_OK)
        goto out;
    printf("simrun %ld nodes: %.3f s\n", n, now_s() - t4);
    rc = 0;
out:
    if (rc)
        fprintf(stderr, "chain_bench: %s\n", err.msg);
    rd_tensor_fini(&x);
    rd_tensor_fini(&y);
    rd_tensor_fini(&ys);
    rd_sim_destroy(s);
    rd_model_destroy(m);
    if (path == tmp)
        unlink(tmp);
    return rc;
}
