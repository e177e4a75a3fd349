/*
 * test_logs_shared.c: the build-log reader on every file of ../shared/rknn/logs, with counts and rows
 * checked by hand (grep of the files; the ranking table of the YOLOv8n log cross-checks its layer table).
 */
#include "find_named.h"
#include "rd_test.h"
#include "rknn_diag/rknn_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rd_rknn_log *load_log(const char *name)
{
    char *path = rd_test_shared_file("rknn/logs/%s", name);
    rd_rknn_log *log = NULL;
    rd_error err;
    rd_status s = rd_rknn_log_load(path, &log, &err);
    free(path);
    rd_test_require_ok(s, name, err.msg);
    return log;
}

static const rd_rknn_op_count *count_of(const rd_rknn_layer_table *t, const char *op)
{
    return RD_FIND_NAMED(rd_rknn_op_count, t->ops, t->n_ops, op_type, op);
}

static size_t rule_count(const rd_rknn_build_log *b, const char *rule)
{
    size_t n = 0;
    for (size_t i = 0; i < b->n_fuses; i++)
        n += strcmp(b->fuses[i].rule, rule) == 0;
    return n;
}

static void test_mobilenetv1_build(void)
{
    rd_rknn_log *log = load_log("log-mobilenetv1-tflite-rv1106-build-1.5.2.txt");
    const rd_rknn_build_log *b = rd_rknn_log_get(log);
    CU_ASSERT_STRING_EQUAL(b->librknnc_version, "1.5.2");
    CU_ASSERT_STRING_EQUAL(b->toolkit_version, "");
    CU_ASSERT_EQUAL(b->option_line, 52);
    CU_ASSERT_EQUAL_FATAL(b->n_options, 6);
    CU_ASSERT(strcmp(b->options[5].key, "enable_argb_group") == 0 && strcmp(b->options[5].value, "0") == 0);
    CU_ASSERT_EQUAL_FATAL(b->n_fuses, 7);
    CU_ASSERT(strcmp(b->fuses[0].rule, "convert_squeeze_to_reshape") == 0 && b->fuses[0].line == 14);
    CU_ASSERT_STRING_EQUAL(b->fuses[0].removed[0], "MobilenetV1/Logits/SpatialSqueeze");
    CU_ASSERT_STRING_EQUAL(b->fuses[0].added[0], "MobilenetV1/Logits/SpatialSqueeze_2reshape");
    CU_ASSERT(b->fuses[1].n_removed == 2 && b->fuses[1].n_added == 2); /* swap_reshape_softmax */
    CU_ASSERT(!b->fuses[4].with_passes && strcmp(b->fuses[4].rule, "convert_global_avgpool_to_conv") == 0);
    CU_ASSERT(b->fuses[5].with_passes && strcmp(b->fuses[5].rule, "fuse_two_dataconvert") == 0);
    CU_ASSERT(b->fuses[6].with_passes && b->fuses[6].n_removed == 1 && b->fuses[6].n_added == 0);
    CU_ASSERT_EQUAL_FATAL(b->n_quant_opts, 1);
    CU_ASSERT(b->quant_opts[0].n_names == 27 && strcmp(b->quant_opts[0].names[0], "Relu6__57") == 0);
    CU_ASSERT_EQUAL_FATAL(b->n_hybrid, 3);
    CU_ASSERT_STRING_EQUAL(b->hybrid[1].tensor, "MobilenetV1/Predictions/Reshape_1");
    CU_ASSERT_EQUAL_FATAL(b->n_tables, 1);
    const rd_rknn_layer_table *t = &b->tables[0];
    CU_ASSERT(t->kind == RD_RKNN_TABLE_BUILD && t->header_line == 123 && t->n_rows == 34);
    CU_ASSERT(count_of(t, "ConvClip")->total == 27 && count_of(t, "Conv")->total == 2);
    CU_ASSERT(count_of(t, "exSoftmax13")->float16 == 1 && count_of(t, "OutputOperator")->on_npu == 1);
    CU_ASSERT(count_of(t, "InputOperator")->on_cpu == 1 && count_of(t, "exDataConvert")->int8 == 1);
    const rd_rknn_layer_row *r = &b->rows[31];
    CU_ASSERT(r->id == 31 && strcmp(r->op_type, "exSoftmax13") == 0 && strcmp(r->data_type, "FLOAT16") == 0);
    CU_ASSERT(r->input_shape.n == 2 && r->input_shape.dims[1][1] == 1008 && r->has_time && r->time_us == 0);
    CU_ASSERT_STRING_EQUAL(r->full_name, "exSoftmax13:MobilenetV1/Predictions/Reshape_1");
    CU_ASSERT(strcmp(b->rows[0].full_name, "InputOperator:input") == 0 && b->rows[0].input_shape.n == 0);
    rd_rknn_log_destroy(log);
}

static void test_mobilenetv2_official(void)
{
    rd_rknn_log *log = load_log("log-mobilenetv2-rk3588-npu_device_test-official.txt");
    const rd_rknn_build_log *b = rd_rknn_log_get(log);
    CU_ASSERT_STRING_EQUAL(b->runtime_version, "1.5.3b9");
    CU_ASSERT_EQUAL_FATAL(b->n_tables, 1);
    const rd_rknn_layer_table *t = &b->tables[0];
    CU_ASSERT(t->kind == RD_RKNN_TABLE_RUNTIME && t->n_rows == 2 && t->elided && t->header_line == 44);
    CU_ASSERT(b->rows[0].time_us == 7 && strcmp(b->rows[0].full_name, "InputOperator:data") == 0);
    CU_ASSERT(b->rows[1].time_us == 428 && strcmp(b->rows[1].full_name, "") == 0); /* cut in the README */
    CU_ASSERT_EQUAL_FATAL(b->n_rank_rows, 7);
    size_t calls = 0;
    for (size_t i = 0; i < b->n_rank_rows; i++)
        calls += (size_t)b->rank_rows[i].calls;
    CU_ASSERT_EQUAL(calls, 59);
    CU_ASSERT(strcmp(b->rank_rows[1].op_type, "ConvAdd") == 0 && b->rank_rows[1].calls == 10 &&
              b->rank_rows[1].npu_us == 2155 && b->rank_rows[1].gpu_us == -1 && b->rank_rows[1].ratio_pct == 15.23);
    rd_rknn_log_destroy(log);
}

static void test_yolov8n_runtime(void)
{
    rd_rknn_log *log = load_log("log-yolov8n-rk3588-runtime-layer-table.txt");
    const rd_rknn_build_log *b = rd_rknn_log_get(log);
    CU_ASSERT_EQUAL_FATAL(b->n_tables, 1);
    const rd_rknn_layer_table *t = &b->tables[0];
    CU_ASSERT(t->kind == RD_RKNN_TABLE_RUNTIME && t->n_rows == 108 && t->header_line == 5 && !t->elided);
    CU_ASSERT_EQUAL_FATAL(b->n_rank_rows, 11);
    /* the ranking table counts each op type's calls: it must agree with the layer table row by row */
    for (size_t i = 0; i < b->n_rank_rows; i++) {
        const rd_rknn_op_count *c = count_of(t, b->rank_rows[i].op_type);
        CU_ASSERT(c && (long)c->total == b->rank_rows[i].calls);
    }
    CU_ASSERT(count_of(t, "ConvExSwish")->total == 57 && count_of(t, "OutputOperator")->on_cpu == 9);
    CU_ASSERT(count_of(t, "ConvSigmoid")->total == 3 && count_of(t, "InputOperator")->on_cpu == 1);
    const rd_rknn_layer_row *r = &b->rows[1];
    CU_ASSERT(r->id == 2 && strcmp(r->data_type, "UINT8") == 0 && r->time_us == 9524);
    CU_ASSERT_STRING_EQUAL(r->full_name, "Conv:/model.0/conv/Conv");
    CU_ASSERT(b->rows[4].output_shape.truncated && b->rows[4].output_shape.n == 1); /* Split "(1,16,480,272),..." */
    CU_ASSERT(b->rows[107].id == 108 && strcmp(b->rows[107].full_name, "OutputOperator:374") == 0);
    rd_rknn_log_destroy(log);
}

static void test_excerpts(void)
{
    rd_rknn_log *log = load_log("log-excerpts-fuse_ops-and-layer-rows.txt");
    const rd_rknn_build_log *b = rd_rknn_log_get(log);
    CU_ASSERT_STRING_EQUAL(b->toolkit_version, "1.6.0+81f21f4d");
    CU_ASSERT_STRING_EQUAL(b->librknnc_version, "2.3.2");
    CU_ASSERT_STRING_EQUAL(b->target_platform, "rk3588");
    CU_ASSERT(b->option_line == 170 && b->n_options == 11);
    CU_ASSERT_EQUAL(b->n_fold_constant, 7);
    CU_ASSERT_EQUAL(b->n_fuses, 50);
    CU_ASSERT_EQUAL(rule_count(b, "replace_exswish"), 10);
    CU_ASSERT_EQUAL(rule_count(b, "fuse_two_reshape"), 9);
    CU_ASSERT_EQUAL(rule_count(b, "convert_squeeze_to_reshape"), 3);
    for (size_t i = 0; i < b->n_fuses; i++) {
        const rd_rknn_fuse *f = &b->fuses[i];
        if (strcmp(f->rule, "convert_abs_to_leakyrelu") == 0) /* rule, removed and added on three lines */
            CU_ASSERT(f->line == 124 && f->n_removed == 1 && f->n_added == 1 &&
                      strcmp(f->added[0], "unsupported_abs_node_2leakyrelu") == 0);
        if (strcmp(f->rule, "unsqueeze_to_4d_clip") == 0) /* wrapped after "remove node = []," */
            CU_ASSERT(f->n_removed == 0 && f->n_added == 2 && strcmp(f->added[1], "clipped_input-rs") == 0);
        if (strcmp(f->rule, "replace_torch_layernorm") == 0)
            CU_ASSERT(f->n_removed == 9 && strcmp(f->added[0], "ReduceMean_14_2layer_norm") == 0);
    }
    CU_ASSERT_EQUAL_FATAL(b->n_tables, 7);
    static const struct {
        int header_line;
        rd_rknn_table_kind kind;
        size_t rows;
    } want[] = {{0, RD_RKNN_TABLE_BUILD, 4},   {115, RD_RKNN_TABLE_BUILD, 6}, {131, RD_RKNN_TABLE_BUILD, 5},
                {139, RD_RKNN_TABLE_BUILD, 3}, {0, RD_RKNN_TABLE_RUNTIME, 7}, {0, RD_RKNN_TABLE_RUNTIME, 6},
                {0, RD_RKNN_TABLE_BUILD, 6}};
    for (size_t i = 0; i < 7; i++)
        CU_ASSERT(b->tables[i].header_line == want[i].header_line && b->tables[i].kind == want[i].kind &&
                  b->tables[i].n_rows == want[i].rows);
    CU_ASSERT(count_of(&b->tables[6], "ConvReluAdd")->total == 2);
    CU_ASSERT(count_of(&b->tables[5], "ConvAddRelu")->total == 1 && count_of(&b->tables[5], "ConvExSwish")->total == 1);
    CU_ASSERT(count_of(&b->tables[4], "ConvAdd")->float16 == 2 && count_of(&b->tables[4], "exSDPAttention"));
    CU_ASSERT(count_of(&b->tables[3], "Acos")->on_cpu == 1);
    const rd_rknn_layer_row *blank = &b->rows[b->tables[1].first_row + 1]; /* Conv row without FullName */
    CU_ASSERT(blank->id == 1 && strcmp(blank->full_name, "") == 0);
    CU_ASSERT_STRING_EQUAL(b->rows[b->tables[1].first_row + 3].full_name, "Conv:Gemm_1#2");
    rd_rknn_log_destroy(log);
}

RD_TEST_REGISTER(reg_logs_shared)
{
    RD_SUITE("logs_shared", {"MobileNetV1 RV1106 build log (1.5.2)", test_mobilenetv1_build},
             {"MobileNetV2 official README (RK3588)", test_mobilenetv2_official},
             {"YOLOv8n RK3588 runtime table", test_yolov8n_runtime}, {"public excerpts", test_excerpts});
}
