/*
 * test_convert.c: `rknn-diag convert` with RKNN's model_config.yml (../shared/rknn) pointed at the shared
 * mobilenet_v2: quantization cfg, QDQ model and accuracy snapshot; subgraphs cuts; refused keys.
 */
#include "rd_test.h"
#include "files_in.h"
#include "cli_capture.h"
#include "cli_expect.h"
#include "rknn_diag/simulator.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FEAT2 "/features/features.2/conv/conv.2/Conv_output_0"
#define FEAT3 "/features/features.3/Add_output_0"

typedef struct paths {
    char *dir;
    bool cut_inputs;
    char yml[512], out[512], model[512], image[512];
} paths;

/*
 * ../shared/rknn/model_config.yml with model_file_path and dataset pointed at shared files, mean/std those
 * of mobilenet_v2/SOURCE.md (none with a cut at inputs), and `extra` lines added after quantize.
 */
static void setup(paths *p, const char *tag, const char *quantize, const char *extra)
{
    const char *shared = rd_test_shared_dir();
    p->dir = rd_test_tmpdir(tag);
    p->cut_inputs = extra && strstr(extra, "inputs:");
    snprintf(p->yml, sizeof p->yml, "%s/model_config.yml", p->dir);
    snprintf(p->out, sizeof p->out, "%s/out", p->dir);
    snprintf(p->model, sizeof p->model, "%s/models/mobilenet_v2/model.onnx", shared);
    snprintf(p->image, sizeof p->image, "%s/images/dog.jpg", shared);
    char src[512], ds[512];
    snprintf(src, sizeof src, "%s/rknn/model_config.yml", shared);
    snprintf(ds, sizeof ds, "%s/dataset.txt", p->dir);
    FILE *f = fopen(ds, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fprintf(f, "%s/images/dog.jpg\n%s/images/chelsea.png\n", shared, shared);
    fclose(f);
    /* the shared file's keys, line by line, with the paths, the name and the statistics replaced */
    size_t len = 0;
    char *text = rd_test_read_file(src, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    f = fopen(p->yml, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (strstr(line, "model_file_path:"))
            fprintf(f, "    model_file_path: %s\n", p->model);
        else if (strstr(line, "dataset:"))
            fprintf(f, "    dataset: ./dataset.txt\n");
        else if (strstr(line, "name:"))
            fprintf(f, "    name: mobilenet_v2\n");
        else if (strstr(line, "quantize:"))
            fprintf(f, "    quantize: %s\n%s", quantize, extra ? extra : "");
        else if (strstr(line, "_values:") && p->cut_inputs)
            continue; /* image statistics do not fit an intermediate tensor */
        else if (strstr(line, "std_values:"))
            fprintf(f, "      std_values: [58.395, 57.12, 57.375]\n");
        else
            fprintf(f, "%s\n", line);
    }
    fclose(f);
    free(text);
}

static void test_end_to_end(void)
{
    paths p;
    setup(&p, "convert_e2e", "true", NULL);
    RD_CLI_EXPECT(0, RD_TEXTS("snapshot:"), NULL, "convert", "-t", "rk3588", "-i", p.yml, "-o", p.out, "-a", p.image);
    RD_ASSERT_ALL_IN(p.out, "mobilenet_v2.onnx", "snapshot/error_analysis.txt", "snapshot/report.json");
    char path[1024];
    snprintf(path, sizeof path, "%s/mobilenet_v2.quantization.cfg", p.out);
    rd_qcfg q;
    CU_ASSERT_EQUAL(rd_qcfg_load(path, &q, NULL), RD_OK);
    CU_ASSERT(q.n_params > 100);
    CU_ASSERT_PTR_NOT_NULL(rd_qcfg_find(&q, "input"));
    rd_qcfg_fini(&q);
    snprintf(path, sizeof path, "%s/mobilenet_v2.qdq.onnx", p.out);
    rd_model *m = NULL;
    CU_ASSERT_EQUAL(rd_model_load(path, NULL, &m, NULL), RD_OK);
    rd_model_destroy(m);
    free(p.dir);
}

typedef struct grab {
    const char *names[2];
    rd_tensor t[2];
} grab;

static rd_status grab_tensor(void *user, const rd_observed *ev, rd_error *err)
{
    grab *g = user;
    for (int k = 0; k < 2; k++)
        if (!strcmp(ev->name, g->names[k]))
            return rd_tensor_clone(&g->t[k], ev->tensor, err);
    return RD_OK;
}

/* inputs/outputs cut the graph: the cut model computes exactly what the original computes there. */
static void test_subgraph_cut(void)
{
    paths p;
    setup(&p, "convert_cut", "false", "    subgraphs:\n      inputs: ['" FEAT2 "']\n      outputs: ['" FEAT3 "']\n");
    RD_CLI_EXPECT(0, NULL, NULL, "convert", "-t", "rk3588", "-i", p.yml, "-o", p.out);
    CU_ASSERT(!rd_test_exists_in(p.out, "mobilenet_v2.quantization.cfg")); /* quantize: false */
    char path[1024];
    snprintf(path, sizeof path, "%s/mobilenet_v2.onnx", p.out);
    rd_model *cut = NULL, *orig = NULL;
    CU_ASSERT_EQUAL_FATAL(rd_model_load(path, NULL, &cut, NULL), RD_OK);
    CU_ASSERT_EQUAL(rd_model_input_count(cut), 1);
    CU_ASSERT_EQUAL(rd_model_output_count(cut), 1);
    rd_value_info in, out;
    rd_model_value(cut, (size_t)rd_model_input(cut, 0), &in);
    rd_model_value(cut, (size_t)rd_model_output(cut, 0), &out);
    CU_ASSERT_STRING_EQUAL(in.name, FEAT2);
    CU_ASSERT_STRING_EQUAL(out.name, FEAT3);
    CU_ASSERT_EQUAL(in.rank, 4);
    CU_ASSERT_EQUAL(in.dims[1], 24);
    CU_ASSERT(rd_model_node_count(cut) < 10);

    CU_ASSERT_EQUAL_FATAL(rd_model_load(p.model, NULL, &orig, NULL), RD_OK);
    rd_tensor x, y;
    int64_t dims[4] = {1, 3, 224, 224};
    rd_tensor_alloc(&x, RD_DT_F32, 4, dims, NULL);
    for (int64_t i = 0; i < rd_tensor_numel(&x); i++)
        ((float *)x.data)[i] = (float)((i * 7919) % 255) / 64.0f - 2.0f;
    grab g = {.names = {FEAT2, FEAT3}};
    rd_run_options ro = {.observer = grab_tensor, .user = &g};
    CU_ASSERT_EQUAL_FATAL(rd_model_run(orig, &x, 1, &ro, NULL, 0, NULL), RD_OK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g.t[0].data);
    CU_ASSERT_EQUAL_FATAL(rd_model_run(cut, &g.t[0], 1, NULL, &y, 1, NULL), RD_OK);
    CU_ASSERT_EQUAL_FATAL(rd_tensor_nbytes(&y), rd_tensor_nbytes(&g.t[1]));
    CU_ASSERT(memcmp(y.data, g.t[1].data, rd_tensor_nbytes(&y)) == 0);
    rd_tensor_fini(&x);
    rd_tensor_fini(&y);
    rd_tensor_fini(&g.t[0]);
    rd_tensor_fini(&g.t[1]);
    rd_model_destroy(orig);
    rd_model_destroy(cut);
    free(p.dir);
}

/* --integer writes NAME.qdq.onnx in export-qdq's integer form: ConvInteger nodes, and it loads back. */
static void test_integer_form(void)
{
    paths p;
    setup(&p, "convert_int", "true", NULL);
    RD_CLI_EXPECT(0, NULL, NULL, "convert", "-t", "rk3588", "-i", p.yml, "-o", p.out, "--integer");
    char path[1024];
    snprintf(path, sizeof path, "%s/mobilenet_v2.qdq.onnx", p.out);
    size_t len = 0;
    char *bytes = rd_test_read_file(path, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(bytes);
    bool found = false;
    for (size_t i = 0; !found && i + 11 <= len; i++)
        found = memcmp(bytes + i, "ConvInteger", 11) == 0;
    CU_ASSERT_TRUE(found);
    free(bytes);
    rd_model *m = NULL;
    CU_ASSERT_EQUAL(rd_model_load(path, NULL, &m, NULL), RD_OK);
    rd_model_destroy(m);
    free(p.dir);
}

/* What convert cannot honour is refused by name; -d is refused with the way to compare with a board
   (exit 2). */
static void test_refusals(void)
{
    paths p;
    setup(&p, "convert_dyn", "true", "    configs:\n      dynamic_input: [[[1,3,224,224]], [[1,3,160,160]]]\n");
    /* a second configs block would be a YAML duplicate: write dynamic_input into the shared one instead */
    size_t len = 0;
    char *text = rd_test_read_file(p.yml, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    FILE *f = fopen(p.yml, "w");
    char *second = strstr(text, "    configs:\n      dynamic_input");
    CU_ASSERT_PTR_NOT_NULL_FATAL(second);
    fwrite(text, 1, (size_t)(second - text), f);
    fputs(second + strlen("    configs:\n      dynamic_input: [[[1,3,224,224]], [[1,3,160,160]]]\n"), f);
    fputs("      dynamic_input: [[[1,3,224,224]], [[1,3,160,160]]]\n", f);
    fclose(f);
    free(text);
    RD_CLI_EXPECT(3, NULL, RD_TEXTS("dynamic_input"), "convert", "-t", "rk3588", "-i", p.yml, "-o", p.out);

    RD_CLI_EXPECT(2, NULL, RD_TEXTS("--target"), "convert", "-t", "rk3588", "-i", p.yml, "-o", p.out, "-d", "abc123");
    RD_CLI_EXPECT(2, NULL, RD_TEXTS("rk9999"), "convert", "-t", "rk9999", "-i", p.yml, "-o", p.out);
    RD_CLI_EXPECT(2, NULL, NULL, "convert", "-i", p.yml, "-o", p.out);
    free(p.dir);

    /* a cut at a tensor the model does not have */
    setup(&p, "convert_badcut", "false", "    subgraphs:\n      outputs: ['no_such_tensor']\n");
    RD_CLI_EXPECT(3, NULL, RD_TEXTS("no_such_tensor"), "convert", "-t", "rk3588", "-i", p.yml, "-o", p.out);
    free(p.dir);
}

RD_TEST_REGISTER(convert_tests)
{
    RD_SUITE("convert", {"refused keys and options", test_refusals}, {"subgraph cut", test_subgraph_cut},
             {"--integer form", test_integer_form}, {"model_config.yml end to end", test_end_to_end});
}
