/*
 * test_rknn_model.c: the .rknn reader on files written by rknn_synth.c: every field it decodes, the
 * format-2 and version-1 layouts, guessed parameter fields, weights and the packed conv layout.
 */
#include "rd_test.h"
#include "rknn_synth.h"
#include "rknn_diag/rknn_model.h"

#include <stdlib.h>
#include <string.h>

static rd_rknn_model *load(const rs_model *sm, rd_status want, rd_error *err)
{
    uint8_t *buf;
    size_t len;
    CU_ASSERT_EQUAL_FATAL(rs_write(sm, &buf, &len, err), RD_OK);
    rd_rknn_model *m = NULL;
    rd_status st = rd_rknn_parse(buf, len, "synth.rknn", NULL, &m, err);
    free(buf);
    CU_ASSERT_EQUAL(st, want);
    if (st != want)
        fprintf(stderr, "unexpected: %s\n", err->msg);
    return m;
}

static void test_demo_fields(void)
{
    rs_model sm;
    rs_demo(&sm);
    rd_error err;
    rd_rknn_model *m = load(&sm, RD_OK, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    const rd_rknn_info *in = rd_rknn_info_get(m);
    CU_ASSERT_EQUAL(in->format_version, 6);
    CU_ASSERT_EQUAL(in->header_bytes, 64);
    CU_ASSERT_EQUAL(in->schema_version, 6);
    CU_ASSERT_STRING_EQUAL(in->format, "RKNPU lite");
    CU_ASSERT_STRING_EQUAL(in->target_platform, "rk3566");
    CU_ASSERT_STRING_EQUAL(in->toolkit_version, "1.6.2-test"); /* the JSON's version */
    CU_ASSERT_STRING_EQUAL(in->compiler_version, "1.6.2b0");
    CU_ASSERT_EQUAL(in->compiler_version_number, 10602);
    CU_ASSERT_STRING_EQUAL(in->source_framework, "ONNX");
    CU_ASSERT_STRING_EQUAL(in->shape_mode, "static_shape");
    CU_ASSERT_PTR_NULL(in->generator);
    CU_ASSERT(in->has_json && in->n_json_targets == 1 && strcmp(in->json_targets[0], "rk3566") == 0);
    CU_ASSERT_STRING_EQUAL(in->network_platform, "ONNX");
    CU_ASSERT_EQUAL_FATAL(in->n_json_io, 2);
    CU_ASSERT(!in->json_io[0].is_output && strcmp(in->json_io[0].name, "x") == 0 && in->json_io[0].rank == 4);
    CU_ASSERT(in->json_io[1].is_output && strcmp(in->json_io[1].name, "y") == 0 && in->json_io[1].shape[1] == 8);
    CU_ASSERT_STRING_EQUAL(in->json_io[1].qnt_type, "int8");
    CU_ASSERT_EQUAL_FATAL(in->n_runtime_io, 2);
    CU_ASSERT(strcmp(in->runtime_io[0].layout, "NHWC") == 0 && !in->runtime_io[0].is_output);
    CU_ASSERT(strcmp(in->runtime_io[1].layout, "NCHW") == 0 && in->runtime_io[1].is_output);
    CU_ASSERT(in->has_dict && in->dict && in->dynamic_shapes && in->dynamic_shapes->kind == RD_RKNN_V_MAP);
    CU_ASSERT_EQUAL_FATAL(in->n_io_attrs, 2);
    const rd_rknn_io_attr *a = &in->io_attrs[0];
    CU_ASSERT(strcmp(a->name, "x") == 0 && !a->is_output && a->idx == 0 && strcmp(a->layout, "nchw") == 0);
    CU_ASSERT(a->n_mean == 3 && a->mean[0] == 127.5 && a->n_std == 3 && a->std[1] == 57.0);
    CU_ASSERT(a->reorder && a->reorder->kind == RD_RKNN_V_STRING && strcmp(a->reorder->s, "2 1 0") == 0);
    const rd_rknn_io_attr *y = &in->io_attrs[1];
    CU_ASSERT(y->is_output && y->shape && y->shape->n == 2 && y->shape->items[0].kind == RD_RKNN_V_STRING);
    CU_ASSERT_EQUAL_FATAL(in->n_quant_tab, 1);
    const rd_rknn_quant_entry *q = &in->quant_tab[0];
    CU_ASSERT(strcmp(q->qtype, "asym") == 0 && q->n_min == 1 && q->min[0] == -2.17 && q->n_scale == 0);
    CU_ASSERT(rd_rknn_value_get(q->raw, "ori_max")->items[0].f == 2.5e-05);
    CU_ASSERT_EQUAL(rd_rknn_warning_count(m), 0);

    CU_ASSERT_EQUAL_FATAL(rd_rknn_graph_count(m), 1);
    const rd_rknn_graph *g = rd_rknn_graph_at(m, 0);
    CU_ASSERT_PTR_NULL(rd_rknn_graph_at(m, 1));
    CU_ASSERT_EQUAL_FATAL(g->n_tensors, 6);
    CU_ASSERT(g->n_inputs == 1 && g->inputs[0] == 1 && g->n_outputs == 1 && g->outputs[0] == 5);
    const rd_rknn_tensor *t = rd_rknn_find_tensor(g, "y");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT(t->index == 5 && t->dtype == RD_DT_I8 && t->layout == RD_RKNN_LAYOUT_NC1HWC2 && t->role == 2);
    CU_ASSERT(t->rank == 4 && t->shape[1] == 8 && t->native_rank == 5 && t->native_shape[4] == 8);
    CU_ASSERT(strcmp(t->qmethod, "channel") == 0 && t->n_scale == 4 && t->scale[3] == 0.4f && t->zero_point[1] == -2);
    CU_ASSERT(t->n_min == 4 && t->min[2] == -3 && t->max[3] == 4);
    CU_ASSERT(t->size == 128 && t->mem_offset == 192 && t->blob == -1 && t->producer == 2 && t->n_consumers == 1);
    CU_ASSERT_PTR_NULL(rd_rknn_find_tensor(g, "nope"));
    CU_ASSERT_EQUAL(rd_rknn_find_tensor(g, "x")->index, 1);
    CU_ASSERT_EQUAL(rd_rknn_find_tensor(g, "")->index, 0);
    CU_ASSERT_STRING_EQUAL(rd_rknn_tensor_name(g, 4), "r");
    CU_ASSERT_STRING_EQUAL(rd_rknn_tensor_name(g, 99), "");
    CU_ASSERT_EQUAL(rd_rknn_find_tensor(g, "r")->n_consumers, 1);

    CU_ASSERT_EQUAL_FATAL(g->n_nodes, 4);
    const rd_rknn_node *n = &g->nodes[1];
    CU_ASSERT(strcmp(n->op_type, "Conv") == 0 && strcmp(n->name, "Conv:conv_r") == 0);
    CU_ASSERT(n->target == RD_RKNN_TARGET_NPU && n->has_target_code && n->target_code == 2);
    CU_ASSERT(n->n_inputs == 3 && n->inputs[1] == 2 && n->n_outputs == 1 && n->outputs[0] == 4);
    CU_ASSERT(n->param_type == 1 && strcmp(n->param_type_name, "Conv") == 0 && n->n_params == 5);
    CU_ASSERT(strcmp(n->params[0].name, "auto_pad") == 0 && strcmp(n->params[0].value.s, "NOTSET") == 0);
    CU_ASSERT(strcmp(n->params[3].name, "pads") == 0 && n->params[3].value.n == 4 && !n->params[3].guessed);
    CU_ASSERT_PTR_NOT_NULL_FATAL(n->attrs);
    CU_ASSERT_EQUAL(n->attrs->kind, RD_RKNN_V_MAP);
    const rd_rknn_value *dil = rd_rknn_value_get(n->attrs, "dilations"); /* {dtype, value} collapsed */
    CU_ASSERT(dil && dil->kind == RD_RKNN_V_LIST && dil->n == 2 && dil->items[0].i == 2 && dil->items[1].i == 1);
    CU_ASSERT(rd_rknn_value_get(n->attrs, "group")->i == 1);
    CU_ASSERT(rd_rknn_value_get(n->attrs, "alpha")->f == 0.5);
    CU_ASSERT(!n->attrs_partial && n->n_task_counts == 1 && n->task_counts[0] == 1);
    CU_ASSERT(g->nodes[0].target == RD_RKNN_TARGET_CPU && !g->nodes[0].has_target_code);
    const rd_rknn_node *out = &g->nodes[3];
    CU_ASSERT(out->attrs && out->attrs->kind == RD_RKNN_V_BYTES && out->attrs->len == 16);
    CU_ASSERT_EQUAL(rd_rknn_node_dtype(g, &g->nodes[0]), RD_DT_I8);
    CU_ASSERT_EQUAL(g->nodes[2].n_inputs, 4);

    CU_ASSERT_EQUAL_FATAL(g->n_ops, 4);
    for (size_t i = 0; i < g->n_ops; i++) {
        CU_ASSERT_EQUAL(g->ops[i].total, 1);
        CU_ASSERT_EQUAL(g->ops[i].int8, 1);
        if (strcmp(g->ops[i].op_type, "InputOperator") == 0)
            CU_ASSERT_EQUAL(g->ops[i].on_cpu, 1);
    }
    CU_ASSERT_STRING_EQUAL(g->ops[0].op_type, "Conv"); /* equal counts: by name */
    char buf[32];
    CU_ASSERT_STRING_EQUAL(rd_rknn_layout_name(65, buf, sizeof buf), "conv_weight_packed");
    CU_ASSERT_STRING_EQUAL(rd_rknn_layout_name(7, buf, sizeof buf), "layout(7)");
    CU_ASSERT_STRING_EQUAL(rd_rknn_role_name(8, buf, sizeof buf), "compiler_const");
    CU_ASSERT_STRING_EQUAL(rd_rknn_role_name(6, buf, sizeof buf), "role(6)");
    CU_ASSERT_STRING_EQUAL(rd_rknn_dtype_name(13, buf, sizeof buf), "uint64");
    CU_ASSERT_STRING_EQUAL(rd_rknn_dtype_name(99, buf, sizeof buf), "dtype(99)");
    rd_rknn_destroy(m);
}

static void test_weights(void)
{
    rs_model sm;
    rs_demo(&sm);
    rd_error err;
    rd_rknn_model *m = load(&sm, RD_OK, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    const rd_rknn_graph *g = rd_rknn_graph_at(m, 0);
    CU_ASSERT_EQUAL(rd_rknn_blob_count(m), 3);
    const uint8_t *data;
    size_t len;
    CU_ASSERT(rd_rknn_tensor_data(m, rd_rknn_find_tensor(g, "b"), &data, &len, &err) == RD_OK && len == 128 &&
              data[5] == 5);
    CU_ASSERT_EQUAL(rd_rknn_tensor_data(m, rd_rknn_find_tensor(g, "x"), &data, &len, &err), RD_E_NOTFOUND);
    CU_ASSERT_EQUAL(rd_rknn_blob(m, 3, &data, &len, &err), RD_E_INVAL);
    CU_ASSERT(rd_rknn_blob(m, 0, &data, &len, &err) == RD_OK && len == 0);
    int8_t w[8 * 3 * 3 * 3];
    int32_t pad[8];
    CU_ASSERT_EQUAL_FATAL(rd_rknn_unpack_conv_weight(m, rd_rknn_find_tensor(g, "w"), w, sizeof w, pad, &err), RD_OK);
    int bad = 0;
    for (int o = 0; o < 8; o++) {
        for (int i = 0; i < 27; i++)
            bad += w[o * 27 + i] != o * 27 + i - 100;
        bad += pad[o] != o - 4;
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_EQUAL(rd_rknn_unpack_conv_weight(m, rd_rknn_find_tensor(g, "w"), w, 10, NULL, &err), RD_E_INVAL);
    CU_ASSERT_EQUAL(rd_rknn_unpack_conv_weight(m, rd_rknn_find_tensor(g, "b"), w, sizeof w, NULL, &err),
                    RD_E_UNSUPPORTED);
    rd_rknn_destroy(m);

    sm.blob_len[1] = 100; /* blob shorter than the native shape */
    m = load(&sm, RD_OK, &err);
    CU_ASSERT_EQUAL(
        rd_rknn_unpack_conv_weight(m, rd_rknn_find_tensor(rd_rknn_graph_at(m, 0), "w"), w, sizeof w, NULL, &err),
        RD_E_PARSE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "needs 576"));
    rd_rknn_destroy(m);
}

static void test_layouts(void)
{
    rs_model sm;
    rd_error err;
    rs_demo(&sm);
    sm.version = 2; /* format 2: weight blobs in Model slot 4 */
    rd_rknn_model *m = load(&sm, RD_OK, &err);
    CU_ASSERT(m && rd_rknn_blob_count(m) == 3 && rd_rknn_info_get(m)->header_bytes == 64);
    rd_rknn_destroy(m);

    rs_demo(&sm);
    sm.version = 1; /* toolkit1: 24-byte header, as Netron reads it */
    m = load(&sm, RD_OK, &err);
    CU_ASSERT(m && rd_rknn_info_get(m)->header_bytes == 24 && rd_rknn_graph_at(m, 0)->n_nodes == 4);
    rd_rknn_destroy(m);

    rs_demo(&sm);
    sm.no_json = true; /* a file that ends after the model data: the JSON section is missing */
    rd_rknn_model *none = load(&sm, RD_E_PARSE, &err);
    CU_ASSERT_PTR_NULL(none);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "u64 JSON length was expected"));

    rs_demo(&sm); /* the 1.3.0 file's slot 3: a generator text, not the dict */
    sm.dict = "Generated from compiler version: 1.3.0 (test)";
    sm.compiler = "";
    sm.json = "{\"target_platform\": \"rk3588\"}";
    m = load(&sm, RD_OK, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT(rd_rknn_info_get(m)->has_json && !rd_rknn_info_get(m)->has_dict);
    CU_ASSERT_STRING_EQUAL(rd_rknn_info_get(m)->generator, "Generated from compiler version: 1.3.0 (test)");
    CU_ASSERT_STRING_EQUAL(rd_rknn_info_get(m)->toolkit_version, "");
    CU_ASSERT(rd_rknn_info_get(m)->n_json_targets == 1 && rd_rknn_info_get(m)->n_json_io == 0);
    CU_ASSERT_EQUAL(rd_rknn_warning_count(m), 0);
    rd_rknn_destroy(m);

    rs_demo(&sm); /* parameter unions: Concat, Split, Resize, and a type this reader does not know */
    int types[] = {19, 20, 26, 77};
    for (int k = 0; k < 4; k++) {
        sm.nodes[2].param_type = types[k];
        m = load(&sm, RD_OK, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(m);
        const rd_rknn_node *n = &rd_rknn_graph_at(m, 0)->nodes[2];
        CU_ASSERT_EQUAL(n->param_type, types[k]);
        if (types[k] == 20)
            CU_ASSERT(n->n_params == 2 && strcmp(n->params[1].name, "split") == 0 &&
                      n->params[1].value.items[0].i == 4);
        if (types[k] == 26)
            CU_ASSERT(n->n_params == 3 && strcmp(n->params[2].value.s, "round_prefer_floor") == 0);
        if (types[k] == 77) {
            CU_ASSERT_PTR_NULL(n->param_type_name);
            CU_ASSERT_EQUAL_FATAL(n->n_params, 4);
            CU_ASSERT(n->params[0].guessed && n->params[0].value.kind == RD_RKNN_V_INT && n->params[0].value.i == 7);
            CU_ASSERT(n->params[1].value.kind == RD_RKNN_V_STRING && strcmp(n->params[1].value.s, "guess") == 0);
            CU_ASSERT(n->params[2].value.kind == RD_RKNN_V_LIST && n->params[2].value.n == 4);
        }
        rd_rknn_destroy(m);
    }
}

static void test_attr_blobs(void)
{
    rs_model sm;
    rd_error err;
    uint8_t blob[128];
    rs_ab a;
    rs_demo(&sm);
    rs_ab_init(&a, blob, sizeof blob);
    rs_ab_int(&a, "axis", 1);
    rs_ab_str(&a, "mode", "nearest");
    size_t n = rs_ab_finish(&a);
    blob[n - 1] = 0x07; /* the end tag becomes an unknown tag with no key end: runs past the blob */
    sm.nodes[2].attrs = blob;
    sm.nodes[2].attrs_len = n;
    rd_rknn_model *m = load(&sm, RD_E_PARSE, &err);
    CU_ASSERT_PTR_NULL(m);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "attribute blob"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "node #2"));

    rs_ab_init(&a, blob, sizeof blob); /* an unknown tag with a key: decoding stops, with a warning */
    rs_ab_int(&a, "axis", 1);
    blob[a.n++] = 0x09;
    memcpy(blob + a.n, "k\0", 2);
    a.n += 2;
    n = rs_ab_finish(&a);
    sm.nodes[2].attrs_len = n;
    m = load(&sm, RD_OK, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    const rd_rknn_node *node = &rd_rknn_graph_at(m, 0)->nodes[2];
    CU_ASSERT(node->attrs_partial && node->attrs->n == 1 && rd_rknn_value_get(node->attrs, "axis")->i == 1);
    CU_ASSERT(rd_rknn_warning_count(m) == 1 && strstr(rd_rknn_warning(m, 0), "unknown record tag 0x09"));
    rd_rknn_destroy(m);

    rs_ab_init(&a, blob, sizeof blob); /* a nested map whose length runs past the blob */
    rs_ab_open(&a, 3, "m");
    rs_ab_int(&a, "x", 1);
    rs_ab_close(&a);
    n = rs_ab_finish(&a);
    blob[7] = 200; /* the u32 length after tag 0x03 and "m\0" */
    sm.nodes[2].attrs_len = n;
    m = load(&sm, RD_E_PARSE, &err);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "runs past its container"));
}

RD_TEST_REGISTER(reg_rknn_model)
{
    RD_SUITE("rknn_model", {"every field of a synthetic model", test_demo_fields}, {"weights", test_weights},
             {"format 2, version 1, no JSON, generator text, parameter unions", test_layouts},
             {"attribute blobs: corrupt and unknown tags", test_attr_blobs});
}
