/*
 * test_exit_codes.c: which exit code each kind of mistake gives (issue 16 item 15, docs/user-guide.md).
 *
 * 2 only when the command line is wrong (an unknown, malformed, missing, extra or conflicting option or
 * argument, including one that does not fit the model it applies to), with a pointer to --help; 3 for every
 * problem inside an input (a model, a .npy, a dataset, a config), naming the file and the field, never
 * with "see --help". A table of bad command lines and bad inputs, each with its code and message.
 */
#include "cli_capture.h"
#include "rd_test.h"
#include "rknn_diag/simulator.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct exit_case {
    const char *args; /* space-separated; '@' stands for the test folder */
    int code;
    const char *msg[3]; /* substrings of stderr */
} exit_case;

static const exit_case cases[] = {
    /* the command line */
    {"run", 2, {"missing MODEL", "(see rknn-diag run --help)"}},
    {"run @/demo/demo.onnx --bench zero", 2, {"--bench"}},
    {"run @/demo/demo.onnx --input nosuch=@/demo/image.npy",
     2,
     {"--input names 'nosuch', which is not a graph input", "(see rknn-diag run --help)"}},
    {"run @/demo/demo.onnx --input-shape image=1,3,16,16 --input image=@/demo/image.npy",
     2,
     {"demo.onnx: --input-shape image: dim 2 is 16 but the model fixes it to 32", "(see rknn-diag run --help)"}},
    {"run @/demo/demo.onnx --input-shape image=1,x", 2, {"--input-shape image=1,x: '1,x' is not a list"}},
    {"accuracy @/demo/demo.onnx --inputs @/demo/image.npy --inputs @/demo/image.npy -o @/snap -q",
     2,
     {"--inputs gives 2 files, the model has 1 inputs", "(see rknn-diag accuracy --help)"}},
    {"accuracy @/demo/demo.onnx --mean 1,x --inputs @/demo/image.npy -o @/snap -q",
     2,
     {"--mean expects numbers separated by commas, got '1,x'"}},
    {"accuracy @/demo/demo.onnx --dtype w9a9 --inputs @/demo/image.npy -o @/snap -q", 2, {"--dtype: "}},
    {"accuracy @/demo/demo.onnx -o @/snap -q", 2, {"nothing to analyse: give --inputs FILE"}},
    {"quantize @/demo/demo.onnx --dtype float16 -o @/q.cfg", 2, {"--dtype must be w8a8"}},
    /* the inputs: file and field named, no pointer to --help */
    {"run @/conv_group.onnx --input x=@/demo/image.npy",
     3,
     {"conv_group.onnx: node 'conv_bad_group' (Conv)", "channels do not match"}},
    {"run @/perm.onnx --input x=@/demo/image.npy", 3, {"perm.onnx: node 'tr_bad' (Transpose): perm repeats axis 0"}},
    {"accuracy @/demo/demo.onnx --dataset @/ds_inf.txt -o @/snap -q",
     3,
     {"ds_inf.txt: calibration: tensor 'image' has no finite range over the dataset"}},
    {"convert -t rk3566 -i @/big.yml -o @/converted",
     3,
     {"big.yml:7: subgraphs.input_size_list", "node 'conv1' (Conv)", "exceeds"}},
    {"run @/demo/demo.onnx --input image=@/truncated.npy", 3, {"truncated.npy", "truncated data"}},
    {"run @/missing.onnx --input x=@/demo/image.npy", 3, {"missing.onnx: cannot open"}},
    {"accuracy @/demo/demo.onnx -c @/bad.yml --inputs @/demo/image.npy -o @/snap -q", 3, {"bad.yml:"}},
    {"accuracy @/demo/demo.onnx --cfg @/bad.cfg --inputs @/demo/image.npy --input-layout nchw -o @/snap -q",
     3,
     {"bad.cfg:"}},
};

static void save_text(const char *dir, const char *name, const char *text)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    rd_test_write_text(path, text);
}

static void save_model(rd_onnx_builder *b, const char *dir, const char *name)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_onnx_builder_save(b, path, &err), RD_OK);
    rd_onnx_builder_destroy(b);
}

/* The bad inputs of the table, in dir. */
static void make_inputs(const char *dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/demo", dir);
    rd_cli_result r = rd_test_cli("demo", "-o", path, NULL);
    CU_ASSERT_EQUAL_FATAL(r.code, 0);
    rd_test_cli_free(&r);

    /* a Conv whose weight has 2 input channels for a 3-channel input (group 1) */
    rd_onnx_builder *b = rd_onnx_builder_create(8, 17);
    rd_onnx_add_input(b, "x", RD_DT_F32, 4, (const int64_t[]){1, 3, 32, 32}, NULL);
    float w[4 * 2 * 3 * 3] = {0};
    rd_tensor wt = {.dtype = RD_DT_F32, .rank = 4, .dims = {4, 2, 3, 3}, .data = w};
    rd_onnx_add_initializer(b, "w", &wt, RD_ONNX_RAW);
    rd_onnx_add_node(b, "Conv", "conv_bad_group", (const char *const[]){"x", "w"}, 2, (const char *const[]){"y"}, 1);
    rd_onnx_add_output(b, "y", RD_DT_F32, -1, NULL, NULL);
    save_model(b, dir, "conv_group.onnx");

    /* a Transpose whose perm repeats an axis */
    b = rd_onnx_builder_create(8, 17);
    rd_onnx_add_input(b, "x", RD_DT_F32, 4, (const int64_t[]){1, 3, 32, 32}, NULL);
    rd_onnx_node *n =
        rd_onnx_add_node(b, "Transpose", "tr_bad", (const char *const[]){"x"}, 1, (const char *const[]){"y"}, 1);
    rd_onnx_attr_ints(n, "perm", (const int64_t[]){0, 0, 1, 2}, 4);
    rd_onnx_add_output(b, "y", RD_DT_F32, -1, NULL, NULL);
    save_model(b, dir, "perm.onnx");

    /* a calibration sample that is all infinity */
    rd_tensor inf;
    CU_ASSERT_EQUAL_FATAL(rd_tensor_alloc(&inf, RD_DT_F32, 4, (const int64_t[]){1, 32, 32, 3}, NULL), RD_OK);
    for (int64_t i = 0; i < rd_tensor_numel(&inf); i++)
        ((float *)inf.data)[i] = 1.0f / 0.0f;
    snprintf(path, sizeof path, "%s/inf.npy", dir);
    CU_ASSERT_EQUAL_FATAL(rd_npy_save(path, &inf, NULL), RD_OK);
    rd_tensor_fini(&inf);
    save_text(dir, "ds_inf.txt", "inf.npy\n");

    /* an input cut in the middle of its data */
    snprintf(path, sizeof path, "%s/demo/image.npy", dir);
    size_t len;
    char *bytes = rd_test_read_file(path, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(bytes);
    snprintf(path, sizeof path, "%s/truncated.npy", dir);
    FILE *f = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fwrite(bytes, 1, len - 100, f);
    fclose(f);
    free(bytes);

    save_text(dir, "big.yml",
              "models:\n  name: demo\n  platform: onnx\n  model_file_path: demo/demo.onnx\n"
              "  subgraphs:\n    input_size_list:\n      - [1, 3, 4000000, 4000000]\n"
              "  quantize: false\n  configs:\n    quantized_dtype: float16\n");
    save_text(dir, "bad.yml", "models:\n  name: [unclosed\n");
    save_text(dir, "bad.cfg", "custom_quantize_layers: {\nquantize_parameters\n");
}

/* Splits text at spaces into args, each '@' replaced by dir (the strings live in store). */
static int split_args(const char *text, const char *dir, char store[][4300], const char **args, int max)
{
    int n = 0;
    for (const char *p = text; *p && n < max; n++) {
        size_t o = 0;
        for (; *p && *p != ' '; p++) {
            const char *piece = *p == '@' ? dir : (const char[]){*p, '\0'};
            size_t k = strlen(piece);
            if (o + k < sizeof store[n]) {
                memcpy(store[n] + o, piece, k);
                o += k;
            }
        }
        store[n][o] = '\0';
        args[n] = store[n];
        while (*p == ' ')
            p++;
    }
    return n;
}

static void test_exit_code_table(void)
{
    char *dir = rd_test_tmpdir("exit-codes");
    make_inputs(dir);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        static char store[16][4300];
        const char *args[16];
        int n = split_args(cases[k].args, dir, store, args, 16);
        rd_cli_result r = rd_test_cli_argv(n, args);
        bool ok = r.code == cases[k].code;
        for (int m = 0; m < 3 && cases[k].msg[m]; m++)
            ok = ok && strstr(r.errs, cases[k].msg[m]) != NULL;
        /* an input problem never sends the user to --help */
        if (cases[k].code == 3)
            ok = ok && strstr(r.errs, "--help") == NULL;
        if (!ok)
            fprintf(stderr, "\n  case '%s': exit %d (want %d), stderr:\n%s\n", cases[k].args, r.code, cases[k].code,
                    r.errs);
        CU_ASSERT(ok);
        rd_test_cli_free(&r);
    }
    free(dir);
}

RD_TEST_REGISTER(register_exit_codes)
{
    RD_SUITE("exit_codes", {"bad command lines exit 2, bad inputs 3", test_exit_code_table});
}
