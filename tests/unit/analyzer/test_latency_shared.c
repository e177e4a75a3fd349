/*
 * test_latency_shared.c: a board per-layer log written for ../shared's ultraface_rfb320 mapped onto its
 * candidates. The exported model's nodes have no names, so the log's FullNames carry the Conv outputs'
 * tensor names ("Conv:<tensor>"); those tensors disappear when BatchNormalization is folded, and the
 * time must land on the tensor the group materialises: the Relu after Conv -> BatchNormalization.
 */
#include "rd_test.h"
#include "hybrid.h"
#include "latency_fixtures.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N_CONV 4

/* The first N_CONV Conv -> BatchNormalization -> Relu chains of the original graph: conv output, relu output. */
static size_t conv_chains(const rd_model *m, const char *conv_out[N_CONV], const char *relu_out[N_CONV])
{
    size_t found = 0;
    for (size_t i = 0; i < rd_model_node_count(m) && found < N_CONV; i++) {
        rd_node_info conv, next;
        rd_model_node(m, i, &conv);
        if (strcmp(conv.op_type, "Conv") != 0 || i + 2 >= rd_model_node_count(m))
            continue;
        rd_model_node(m, i + 1, &next);
        if (strcmp(next.op_type, "BatchNormalization") != 0 || next.inputs[0] != conv.outputs[0])
            continue;
        rd_node_info bn = next;
        rd_model_node(m, i + 2, &next);
        if (strcmp(next.op_type, "Relu") != 0 || next.inputs[0] != bn.outputs[0])
            continue;
        rd_value_info a, b;
        rd_model_value(m, (size_t)conv.outputs[0], &a);
        rd_model_value(m, (size_t)next.outputs[0], &b);
        conv_out[found] = a.name;
        relu_out[found] = b.name;
        found++;
    }
    return found;
}

static void test_ultraface_log(void)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/models/ultraface_rfb320/model.onnx", rd_test_shared_dir());
    rd_error err = {0};
    rd_model *m = NULL;
    CU_ASSERT_EQUAL_FATAL(rd_model_load(path, NULL, &m, &err), RD_OK);
    rd_sim_options so = {.precision = RD_PREC_INT8, .optimization_level = 3};
    rd_sim *s = NULL;
    CU_ASSERT_EQUAL_FATAL(rd_sim_create(m, &so, &s, &err), RD_OK);
    const char *conv_out[N_CONV], *relu_out[N_CONV];
    CU_ASSERT_EQUAL_FATAL(conv_chains(m, conv_out, relu_out), N_CONV);
    rd_sim_tensor t;
    CU_ASSERT_EQUAL(rd_sim_tensor_get(s, conv_out[0], &t, NULL), RD_OK);
    CU_ASSERT(t.fused_into >= 0); /* the Conv's own tensor is gone: the path under test */

    /* candidates: the relu outputs (what an_hyb_candidates lists for these groups) */
    an_hyb_cand c[N_CONV];
    memset(c, 0, sizeof c);
    char names[N_CONV][64];
    lat_fx_row rows8[N_CONV + 3], rows16[N_CONV + 3];
    rows8[0] = (lat_fx_row){"InputOperator", "INT8", "CPU", "\\", "(1,3,240,320)", 40, "InputOperator:input"};
    for (int i = 0; i < N_CONV; i++) {
        c[i].name = relu_out[i];
        c[i].allowed = true;
        snprintf(names[i], sizeof names[i], "Conv:%s", conv_out[i]);
        rows8[i + 1] = (lat_fx_row){"ConvRelu",       "INT8",          "NPU",   "(1,16,120,160),(16,1,3,3),(16)",
                                    "(1,16,120,160)", 100.0 * (i + 1), names[i]};
    }
    rows8[N_CONV + 1] = (lat_fx_row){"Reshape", "INT8", "NPU", "(1,4420,2)", "(1,4420,2,1)", 20, "Reshape:scores_rs"};
    rows8[N_CONV + 2] = (lat_fx_row){"OutputOperator", "FLOAT", "CPU", "(1,4420,2)", "\\", 5, "OutputOperator:scores"};
    for (int i = 0; i < N_CONV + 3; i++) {
        rows16[i] = rows8[i];
        rows16[i].dtype = "FLOAT16";
        rows16[i].us = rows8[i].us * 2.5;
    }
    char log8[256], log16[256];
    snprintf(log8, sizeof log8, "/tmp/rd_test_latency_shared_%d_int8.log", (int)getpid());
    snprintf(log16, sizeof log16, "/tmp/rd_test_latency_shared_%d_fp16.log", (int)getpid());
    FILE *f = fopen(log8, "w");
    lat_fx_write_v2(f, rows8, N_CONV + 3);
    fclose(f);
    f = fopen(log16, "w");
    lat_fx_write_old(f, rows16, N_CONV + 3);
    fclose(f);
    const char *paths[] = {log8, log16};
    rd_status st = an_hyb_latency_load(paths, 2, s, c, N_CONV, NULL, &err);
    CU_ASSERT_EQUAL(st, RD_OK);
    if (st != RD_OK)
        fprintf(stderr, "%s\n", err.msg);
    for (int i = 0; i < N_CONV; i++) {
        /* float16 2.5x the int8 time: 1.5 x (i+1) x 100 us */
        CU_ASSERT_DOUBLE_EQUAL(c[i].cost, 0.15 * (i + 1), 1e-9);
        CU_ASSERT_FALSE(c[i].cost_estimated);
    }
    unlink(log8);
    unlink(log16);
    rd_sim_destroy(s);
    rd_model_destroy(m);
}

RD_TEST_REGISTER(latency_shared)
{
    RD_SUITE("latency log on shared models",
             {"ultraface_rfb320: Conv tensor names through folded BN", test_ultraface_log});
}
