/*
 * test_build_log.c: the build-log reader on log text written here, in the shapes public logs have
 * (../shared/docs/rknn-compiler.md sections 0-2): prefixes, colour codes, wrapped rewrites, both table
 * layouts with and without a header, the ranking table, and logs it must refuse.
 */
#include "rd_test.h"
#include "rknn_diag/rknn_model.h"

#include <string.h>

static const char BUILD_LOG[] =
    "I rknn-toolkit2 version: 2.1.0+test\n"
    "Configuring with {'target_platform': 'rk3588', 'mean_values': [[0, 0, 0]]}\n"
    "\x1b[1;32mD\x1b[0m fold_constant remove nodes = ['Identity_0', \"it's\"]\n"
    "D fuse_ops results:\n"
    "D     replace_exswish: remove node = ['Sigmoid_1', 'Mul_2'], add node = ['Sigmoid_1_2swish']\n"
    "D     unsqueeze_to_4d_clip: remove node = [],\n"
    "D     add node = ['in_rs', 'out-rs']\n"
    "convert_abs_to_leakyrelu:\n"
    "remove node = ['abs_0']\n"
    "add node = ['abs_0_2leakyrelu']\n"
    "D     fuse_two_reshape: remove node = ['Reshape_9', \n"
    "D         'Reshape_10']\n"
    "D fuse_ops done.\n"
    "I fuse_ops with passes results:\n"
    "I     fuse_two_dataconvert: remove node = ['a_cvt', 'b_cvt'], add node = ['a_cvt']\n"
    "I     remove_invalid_dataconvert: remove node = ['a_cvt']\n"
    "I quant_optimizer results:\n"
    "I     adjust_relu: ['Relu6__1', 'Relu6__3']\n"
    "I quant_optimizer done.\n"
    "I RKNN: [10:00:00.001] compress = 0, conv_eltwise_activation_fuse = 1, global_fuse = 1, safe_fuse = 0\n"
    "I RKNN: librknnc version: 2.1.0 (abcdef@2024-01-01T00:00:00)\n"
    "I RKNN: [10:00:00.002] Meet hybrid type, dtype: float16, tensor: soft_out__float16\n"
    "D RKNN: [10:00:00.003] ID   OpType           DataType Target InputShape               OutputShape    "
    "Cycles(DDR/NPU/Total)    RW(KB)       FullName        \n"
    "D RKNN: [10:00:00.003] 0    InputOperator    INT8     CPU    \\                        (1,3,8,8)      "
    "0/0/0                    0            InputOperator:x\n"
    "D RKNN: [10:00:00.003] 1    ConvExSwish      INT8     NPU    (1,3,8,8),(8,3,3,3),(8)  (1,8,8,8)      "
    "0/0/0                    2            Conv:conv_0\n"
    "D RKNN: [10:00:00.003] 2    ConvAdd          INT8     NPU    (1,8,8,8),(8,8,1,1),...  (1,8,8,8)      "
    "0/0/0                    2                        \n"
    "D RKNN: [10:00:00.003] 3    exSoftmax13      FLOAT16  NPU    (1,8,8,8),(16,8,1,1)     (1,8,8,8)      "
    "0/0/0                    1            exSoftmax13:soft\n"
    "D RKNN: [10:00:00.003] 4    OutputOperator   FLOAT16  CPU    (1,8,8,8)                \\              "
    "0/0/0                    1            OutputOperator:y\n"
    "D RKNN: [10:00:00.004] <<<<<<<< end: N4rknn18RKNNModelBuildPassE\n";

static const char BOARD_LOG[] =
    "2024-07-18 10:11:12.345 rknnrt: 2.1.0 (test)\n"
    "---------------------------------------------------------------------------------------------\n"
    "ID   OpType           DataType Target InputShape         OutputShape    Cycles(DDR/NPU/Total)    "
    "Time(us)     MacUsage(%)          WorkLoad(0/1/2)      RW(KB)       FullName        \n"
    "---------------------------------------------------------------------------------------------\n"
    "1    InputOperator    UINT8    CPU    \\                  (1,3,8,8)      0/0/0                    "
    "9            \\                    0.0%/0.0%/0.0%       0            InputOperator:x\n"
    "\n"
    "2    ConvExSwish      UINT8    NPU    (1,3,8,8),(8,3,3,3),(8) (1,8,8,8) 10/20/20               "
    "15           0.77/0.77/0.77       100.0%/0.0%/0.0%     6            Conv:conv_0\n"
    "...\n"
    "3    OutputOperator   INT8     CPU    (1,8,8,8)          \\              0/0/0                    "
    "4            \\                    0.0%/0.0%/0.0%       1            OutputOperator:y\n"
    "---------------------------------------------------------------------------------------------\n"
    "Total Operator Elapsed Per Frame Time(us): 28\n"
    "OpType             CallNumber   CPUTime(us)  GPUTime(us)  NPUTime(us)  TotalTime(us)  TimeRatio(%)  \n"
    "ConvExSwish        1            0            0            15           15             53.57%        \n"
    "InputOperator      1            9            0            0            9              32.14%        \n"
    "---------------------------------------------------------------------------------------------\n"
    "17   ConvRelu         INT8     NPU    (1,8,8,8),(8,8,1,1),(8) (1,8,8,8) 1/2/2 5 1.0/0.0/0.0 "
    "100.0%/0.0%/0.0% 3 Conv:Conv_17\n";

static rd_rknn_log *parse(const char *text, rd_status want, const char *msg_part)
{
    rd_rknn_log *log = NULL;
    rd_error err;
    rd_error_clear(&err);
    rd_status st = rd_rknn_log_parse(text, strlen(text), "test.log", &log, &err);
    CU_ASSERT_EQUAL(st, want);
    if (st != want)
        fprintf(stderr, "log: %s\n", err.msg);
    if (msg_part)
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, msg_part));
    return log;
}

static void test_build_log(void)
{
    rd_rknn_log *log = parse(BUILD_LOG, RD_OK, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    const rd_rknn_build_log *b = rd_rknn_log_get(log);
    CU_ASSERT_STRING_EQUAL(b->toolkit_version, "2.1.0+test");
    CU_ASSERT_STRING_EQUAL(b->librknnc_version, "2.1.0");
    CU_ASSERT_STRING_EQUAL(b->target_platform, "rk3588");
    CU_ASSERT_EQUAL(b->option_line, 20);
    CU_ASSERT_EQUAL_FATAL(b->n_options, 4);
    CU_ASSERT(strcmp(b->options[1].key, "conv_eltwise_activation_fuse") == 0 && strcmp(b->options[1].value, "1") == 0);
    CU_ASSERT_EQUAL_FATAL(b->n_fold_constant, 2);
    CU_ASSERT_STRING_EQUAL(b->fold_constant[1], "it's");
    CU_ASSERT_EQUAL_FATAL(b->n_fuses, 6);
    const rd_rknn_fuse *f = b->fuses;
    CU_ASSERT(strcmp(f[0].rule, "replace_exswish") == 0 && f[0].n_removed == 2 && f[0].n_added == 1 && f[0].line == 5);
    CU_ASSERT_STRING_EQUAL(f[0].added[0], "Sigmoid_1_2swish");
    CU_ASSERT(strcmp(f[1].rule, "unsqueeze_to_4d_clip") == 0 && f[1].n_removed == 0 && f[1].n_added == 2);
    CU_ASSERT(strcmp(f[2].rule, "convert_abs_to_leakyrelu") == 0 && f[2].n_removed == 1 && f[2].n_added == 1 &&
              f[2].line == 8);
    CU_ASSERT(strcmp(f[3].rule, "fuse_two_reshape") == 0 && f[3].n_removed == 2 && f[3].n_added == 0);
    CU_ASSERT_STRING_EQUAL(f[3].removed[1], "Reshape_10");
    CU_ASSERT(!f[3].with_passes && f[4].with_passes && f[5].with_passes && f[5].n_added == 0);
    CU_ASSERT_EQUAL_FATAL(b->n_quant_opts, 1);
    CU_ASSERT(strcmp(b->quant_opts[0].rule, "adjust_relu") == 0 && b->quant_opts[0].n_names == 2);
    CU_ASSERT_EQUAL_FATAL(b->n_hybrid, 1);
    CU_ASSERT(strcmp(b->hybrid[0].dtype, "float16") == 0 && strcmp(b->hybrid[0].tensor, "soft_out__float16") == 0);
    CU_ASSERT_EQUAL_FATAL(b->n_tables, 1);
    const rd_rknn_layer_table *t = &b->tables[0];
    CU_ASSERT(t->kind == RD_RKNN_TABLE_BUILD && t->header_line == 23 && t->n_rows == 5 && !t->elided);
    const rd_rknn_layer_row *r = b->rows;
    CU_ASSERT(r[1].id == 1 && strcmp(r[1].op_type, "ConvExSwish") == 0 && strcmp(r[1].full_name, "Conv:conv_0") == 0);
    CU_ASSERT(r[1].input_shape.n == 3 && r[1].input_shape.rank[1] == 4 && r[1].input_shape.dims[1][0] == 8);
    CU_ASSERT(r[2].input_shape.truncated && r[2].input_shape.n == 2 && strcmp(r[2].full_name, "") == 0);
    CU_ASSERT(r[0].input_shape.n == 0 && r[4].output_shape.n == 0 && !r[1].has_time);
    CU_ASSERT_EQUAL_FATAL(t->n_ops, 5);
    size_t cpu = 0, f16 = 0;
    for (size_t i = 0; i < t->n_ops; i++) {
        cpu += t->ops[i].on_cpu;
        f16 += t->ops[i].float16;
    }
    CU_ASSERT(cpu == 2 && f16 == 2);
    rd_rknn_log_destroy(log);
}

static void test_board_log(void)
{
    rd_rknn_log *log = parse(BOARD_LOG, RD_OK, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    const rd_rknn_build_log *b = rd_rknn_log_get(log);
    CU_ASSERT_STRING_EQUAL(b->runtime_version, "2.1.0");
    CU_ASSERT_EQUAL_FATAL(b->n_tables, 2);
    const rd_rknn_layer_table *t = &b->tables[0];
    CU_ASSERT(t->kind == RD_RKNN_TABLE_RUNTIME && t->n_rows == 3 && t->elided && t->header_line == 3);
    CU_ASSERT(b->rows[1].has_time && b->rows[1].time_us == 15 && strcmp(b->rows[1].full_name, "Conv:conv_0") == 0);
    CU_ASSERT(strcmp(b->rows[2].full_name, "OutputOperator:y") == 0 && b->rows[2].time_us == 4);
    /* the row after the ranking table: its own table, without a header, told a board's by WorkLoad */
    CU_ASSERT(b->tables[1].header_line == 0 && b->tables[1].n_rows == 1 && b->tables[1].kind == RD_RKNN_TABLE_RUNTIME);
    CU_ASSERT_EQUAL(b->rows[3].id, 17);
    CU_ASSERT_STRING_EQUAL(b->rows[3].full_name, "Conv:Conv_17");
    CU_ASSERT_EQUAL_FATAL(b->n_rank_rows, 2);
    const rd_rknn_rank_row *k = &b->rank_rows[0];
    CU_ASSERT(strcmp(k->op_type, "ConvExSwish") == 0 && k->calls == 1 && k->npu_us == 15 && k->gpu_us == 0 &&
              k->ratio_pct == 53.57);
    rd_rknn_log_destroy(log);
}

static void test_refused(void)
{
    parse("hello\nworld\n", RD_E_PARSE, "nothing read");
    parse("", RD_E_PARSE, "nothing read");
    rd_rknn_log *log = NULL;
    rd_error err;
    CU_ASSERT_EQUAL(rd_rknn_log_parse("I fuse_ops\0x", 12, "bin.log", &log, &err), RD_E_PARSE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "byte 10: a NUL byte"));
    CU_ASSERT_PTR_NULL(log);
    /* a broken name list is named with its line */
    parse("I fuse_ops results:\nI     replace_exswish: remove node = ['a', 'b'], add node = ['c'\n", RD_E_PARSE,
          "test.log:2: name list");
    /* a table row whose shape cell does not parse is kept with its text */
    log = parse("5 Conv INT8 NPU (1,3,x) (1,3) 0 Conv:c\n", RD_OK, NULL);
    CU_ASSERT(log && rd_rknn_log_get(log)->n_rows == 1 && rd_rknn_log_get(log)->rows[0].input_shape.n == 0);
    rd_rknn_log_destroy(log);
    /* rows that only look like rows are not taken */
    parse("12 apples FRESH NOW (1) (2)\n", RD_E_PARSE, "nothing read");
}

RD_TEST_REGISTER(reg_build_log)
{
    RD_SUITE("build_log", {"a verbose build log", test_build_log},
             {"a board's layer and ranking tables", test_board_log},
             {"logs that say nothing, binary data, broken lists", test_refused});
}
