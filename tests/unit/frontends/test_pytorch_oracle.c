/*
 * test_pytorch_oracle.c: TorchScript models through the PyTorch frontend, with PyTorch itself as the oracle.
 * Debian's python3-torch (for /usr/bin/python3, tools/setup.sh installs it) builds two small models with fixed
 * seeds, saves them with torch.jit.trace(...).save, and computes their outputs on an input it saves as .npy:
 * rknn-diag exports the same .pt through that Python and its FP32 run must match torch's outputs. Also: the
 * inputs named after forward's arguments, tuple outputs, the messages for missing shapes, a state_dict saved
 * with torch.save, a Python without torch and one that does not exist; `run` through the command line; and
 * model_config.yml's input_size_list (load_pytorch's) for convert and run -c.
 * Without python3-torch the binary reports SKIP (and fails under CI).
 */
#include "cli_capture.h"
#include "rd_test.h"
#include "rknn_diag/frontends.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PYTHON "/usr/bin/python3"

static const char make_models[] =
    "import sys, torch, numpy as np\n"
    "d = sys.argv[1]\n"
    "torch.manual_seed(0)\n"
    "class Net(torch.nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.features = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8),\n"
    "                                            torch.nn.ReLU(), torch.nn.MaxPool2d(2, ceil_mode=True),\n"
    "                                            torch.nn.Conv2d(8, 8, 3, stride=2, groups=4), torch.nn.Hardswish())\n"
    "        self.head = torch.nn.Linear(8 * 2 * 2, 5)\n"
    "    def forward(self, image):\n"
    "        x = torch.nn.functional.interpolate(self.features(image), scale_factor=2.0, mode='bilinear')\n"
    "        x = torch.nn.functional.adaptive_avg_pool2d(x, 2)\n"
    "        return torch.softmax(self.head(torch.flatten(x, 1)), 1)\n"
    "class Two(torch.nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.conv = torch.nn.Conv2d(2, 4, 1)\n"
    "    def forward(self, left, right):\n"
    "        return self.conv(left + right), torch.sigmoid(left * right).mean(dim=(2, 3))\n"
    "net = Net().eval()\n"
    "with torch.no_grad():\n"
    "    bn = net.features[1]\n"
    "    bn.weight.uniform_(0.5, 1.5); bn.bias.uniform_(-0.5, 0.5)\n"
    "    bn.running_mean.uniform_(-0.5, 0.5); bn.running_var.uniform_(0.5, 1.5)\n"
    "x = torch.rand(1, 3, 9, 9) * 2 - 1\n"
    "t = torch.jit.trace(net, x)\n"
    "t.save(d + '/net.pt')\n"
    "np.save(d + '/image.npy', x.numpy())\n"
    "np.save(d + '/net_golden.npy', t(x).detach().numpy())\n"
    "two = Two().eval()\n"
    "a, b = torch.rand(1, 2, 3, 3), torch.rand(1, 2, 3, 3)\n"
    "t2 = torch.jit.trace(two, (a, b))\n"
    "t2.save(d + '/two.pt')\n"
    "np.save(d + '/left.npy', a.numpy())\n"
    "np.save(d + '/right.npy', b.numpy())\n"
    "y0, y1 = t2(a, b)\n"
    "np.save(d + '/two_golden_0.npy', y0.detach().numpy())\n"
    "np.save(d + '/two_golden_1.npy', y1.detach().numpy())\n"
    "torch.save(net.state_dict(), d + '/state_dict.pt')\n";

static char *dir;

static char *path_in(const char *name)
{
    return rd_test_join(dir, name);
}

static rd_tensor load_npy(const char *name)
{
    char *p = path_in(name);
    rd_tensor t = {0};
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_npy_load(p, &t, &err), RD_OK);
    free(p);
    return t;
}

static double max_diff(const rd_tensor *a, const rd_tensor *b)
{
    CU_ASSERT_EQUAL_FATAL(rd_tensor_numel(a), rd_tensor_numel(b));
    double m = 0.0;
    for (int64_t i = 0; i < rd_tensor_numel(a); i++)
        m = fmax(m, fabs((double)((const float *)a->data)[i] - ((const float *)b->data)[i]));
    return m;
}

static rd_status load(const char *name, const rd_input_shape *shapes, size_t n, const char *python, rd_model **m,
                      rd_frontend_info *info, rd_error *err)
{
    char *p = path_in(name);
    rd_frontend_options fo = {.python = python};
    rd_load_options lo = {.input_shapes = shapes, .n_input_shapes = n};
    rd_status st = rd_frontend_load(p, &fo, &lo, m, info, err);
    free(p);
    return st;
}

static void test_net_matches_torch(void)
{
    rd_input_shape s = {.name = "image", .rank = 4, .dims = {1, 3, 9, 9}};
    rd_model *m;
    rd_frontend_info info;
    rd_error err;
    rd_status st = load("net.pt", &s, 1, PYTHON, &m, &info, &err);
    if (st != RD_OK)
        fprintf(stderr, "\n%s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(st, RD_OK);
    CU_ASSERT_EQUAL(info.format, RD_FORMAT_PYTORCH);
    CU_ASSERT_PTR_NOT_NULL(strstr(info.detail, "TorchScript, exported to ONNX opset 13 by PyTorch 1."));
    rd_value_info vi;
    rd_model_value(m, (size_t)rd_model_input(m, 0), &vi);
    CU_ASSERT_STRING_EQUAL(vi.name, "image");
    rd_model_value(m, (size_t)rd_model_output(m, 0), &vi);
    CU_ASSERT_STRING_EQUAL(vi.name, "output");
    CU_ASSERT(rd_model_find_value(m, "/features/0/Conv_output_0") >= 0); /* the module path in every table */
    rd_tensor x = load_npy("image.npy"), golden = load_npy("net_golden.npy"), y = {0};
    CU_ASSERT_EQUAL_FATAL(rd_model_run(m, &x, 1, NULL, &y, 1, &err), RD_OK);
    double d = max_diff(&y, &golden);
    if (d >= 1e-6)
        fprintf(stderr, "\nnet.pt vs PyTorch: max |diff| %g (files in %s)\n", d, dir);
    CU_ASSERT(d < 1e-6);
    rd_tensor_fini(&x);
    rd_tensor_fini(&golden);
    rd_tensor_fini(&y);
    rd_model_destroy(m);
}

static void test_two_inputs_two_outputs(void)
{
    rd_input_shape s[2] = {{.name = "right", .rank = 4, .dims = {1, 2, 3, 3}},
                           {.name = "left", .rank = 4, .dims = {1, 2, 3, 3}}};
    rd_model *m;
    rd_error err;
    rd_status st = load("two.pt", s, 2, PYTHON, &m, NULL, &err);
    if (st != RD_OK)
        fprintf(stderr, "\n%s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(st, RD_OK);
    CU_ASSERT_EQUAL_FATAL(rd_model_input_count(m), 2);
    CU_ASSERT_EQUAL_FATAL(rd_model_output_count(m), 2);
    static const char *const ins[] = {"left", "right"}, *const outs[] = {"output_0", "output_1"};
    for (size_t i = 0; i < 2; i++) {
        rd_value_info vi;
        rd_model_value(m, (size_t)rd_model_input(m, i), &vi);
        CU_ASSERT_STRING_EQUAL(vi.name, ins[i]); /* forward's order, whatever the order of the shapes */
        rd_model_value(m, (size_t)rd_model_output(m, i), &vi);
        CU_ASSERT_STRING_EQUAL(vi.name, outs[i]);
    }
    rd_tensor x[2] = {load_npy("left.npy"), load_npy("right.npy")}, y[2] = {{0}};
    rd_tensor g[2] = {load_npy("two_golden_0.npy"), load_npy("two_golden_1.npy")};
    CU_ASSERT_EQUAL_FATAL(rd_model_run(m, x, 2, NULL, y, 2, &err), RD_OK);
    for (int i = 0; i < 2; i++) {
        CU_ASSERT(max_diff(&y[i], &g[i]) < 1e-6);
        rd_tensor_fini(&x[i]);
        rd_tensor_fini(&y[i]);
        rd_tensor_fini(&g[i]);
    }
    rd_model_destroy(m);
}

static void test_refusals(void)
{
    rd_model *m;
    rd_error err;
    /* no shapes: forward's arguments named, with the option to give */
    CU_ASSERT_EQUAL(load("two.pt", NULL, 0, PYTHON, &m, NULL, &err), RD_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "two.pt: forward(left, right) needs the shape of every argument: give "
                                           "--input-shape left=1,3,224,224 right=1,3,224,224 (missing: left, right)"));
    rd_input_shape s = {.name = "imagee", .rank = 4, .dims = {1, 3, 9, 9}};
    CU_ASSERT_EQUAL(load("net.pt", &s, 1, PYTHON, &m, NULL, &err), RD_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "(missing: image; not arguments of forward: imagee)"));
    /* a state_dict (torch.save's pickle in a ZIP): not TorchScript */
    CU_ASSERT_EQUAL(load("state_dict.pt", NULL, 0, PYTHON, &m, NULL, &err), RD_E_PARSE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "state_dict.pt: not a TorchScript model torch.jit.load reads"));
    /* a Python without torch (site-packages off) and no Python at all */
    char *wrapper = path_in("python_without_torch");
    rd_test_write_text(wrapper, "#!/bin/sh\nexec " PYTHON " -S \"$@\"\n");
    CU_ASSERT_EQUAL_FATAL(chmod(wrapper, 0700), 0);
    CU_ASSERT_EQUAL(load("net.pt", &s, 1, wrapper, &m, NULL, &err), RD_E_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "net.pt: a PyTorch model needs PyTorch to export it to ONNX"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "apt-get install python3-torch"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "No module named 'torch'"));
    free(wrapper);
    CU_ASSERT_EQUAL(load("net.pt", &s, 1, "/nonexistent/python3", &m, NULL, &err), RD_E_NOTFOUND);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "net.pt: exporting to ONNX: cannot run /nonexistent/python3"));
}

static void test_cli_run(void)
{
    setenv("RKNN_DIAG_PYTHON", PYTHON, 1);
    char *model = path_in("net.pt"), *x = path_in("image.npy"), in_arg[4200];
    snprintf(in_arg, sizeof in_arg, "image=%s", x);
    rd_cli_result r = rd_test_cli("run", model, "--input-shape", "image=1,3,9,9", "--input", in_arg, NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "/features/0/Conv_output_0"));
    rd_test_cli_free(&r);
    r = rd_test_cli("inspect", model, NULL);
    CU_ASSERT_NOT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.errs, "forward(image) needs the shape of every argument"));
    rd_test_cli_free(&r);
    unsetenv("RKNN_DIAG_PYTHON");
    free(model);
    free(x);
}

/* RKNN's input_size_list: shapes in forward's argument order (load_pytorch), from the API and from a config. */
static void test_input_size_list(void)
{
    rd_input_shape sizes[3] = {
        {.rank = 4, .dims = {1, 2, 3, 3}}, {.rank = 4, .dims = {1, 2, 3, 3}}, {.rank = 4, .dims = {1, 2, 3, 3}}};
    char *p = path_in("two.pt");
    rd_frontend_options fo = {.python = PYTHON, .input_sizes = sizes, .n_input_sizes = 2};
    rd_model *m;
    rd_error err;
    rd_status st = rd_frontend_load(p, &fo, NULL, &m, NULL, &err);
    if (st != RD_OK)
        fprintf(stderr, "\n%s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(st, RD_OK);
    CU_ASSERT_EQUAL(rd_model_input_count(m), 2);
    rd_model_destroy(m);
    fo.n_input_sizes = 3;
    CU_ASSERT_EQUAL(rd_frontend_load(p, &fo, NULL, &m, NULL, &err), RD_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "input_size_list gives shape 3; forward(left, right) takes 2 arguments"));
    free(p);

    setenv("RKNN_DIAG_PYTHON", PYTHON, 1);
    char *cfg = path_in("model_config.yml"), *out = path_in("converted"), *x = path_in("image.npy"), in_arg[4200];
    rd_test_write_text(cfg, "models:\n  name: net\n  platform: pytorch\n  model_file_path: ./net.pt\n"
                            "  quantize: false\n  subgraphs:\n    input_size_list:\n      - 1,3,9,9\n");
    rd_cli_result r = rd_test_cli("convert", "-t", "rk3588", "-i", cfg, "-o", out, NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    if (r.code)
        fprintf(stderr, "\n%s\n", r.errs);
    rd_test_cli_free(&r);
    char *onnx = rd_test_join(out, "net.onnx");
    struct stat sb;
    CU_ASSERT_EQUAL(stat(onnx, &sb), 0);
    snprintf(in_arg, sizeof in_arg, "image=%s", x);
    char *model = path_in("net.pt");
    r = rd_test_cli("run", model, "-c", cfg, "--input", in_arg, NULL); /* shaped by the config */
    free(model);
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "/features/0/Conv_output_0"));
    if (r.code)
        fprintf(stderr, "\n%s\n", r.errs);
    rd_test_cli_free(&r);
    unsetenv("RKNN_DIAG_PYTHON");
    free(onnx);
    free(x);
    free(out);
    free(cfg);
}

RD_TEST_REGISTER(register_pytorch_oracle)
{
    if (system(PYTHON " -c 'import torch, numpy' 2>/dev/null") != 0)
        rd_test_skip_all("needs Debian's python3-torch for " PYTHON " (tools/setup.sh installs it)");
    dir = rd_test_tmpdir("pytorch");
    char script[4300];
    snprintf(script, sizeof script, "%s/make_models.py", dir);
    FILE *f = fopen(script, "w"); /* not rd_test_write_text: no suite runs yet to take its assertions */
    if (!f || fputs(make_models, f) < 0 || fclose(f) != 0) {
        fprintf(stderr, "cannot write %s\n", script);
        exit(1);
    }
    char cmd[9000];
    snprintf(cmd, sizeof cmd, PYTHON " '%s' '%s'", script, dir);
    if (system(cmd) != 0) {
        fprintf(stderr, "%s failed\n", cmd);
        exit(1);
    }
    RD_SUITE("pytorch_oracle", {"a TorchScript net matches PyTorch", test_net_matches_torch},
             {"two inputs, tuple outputs", test_two_inputs_two_outputs}, {"refusals", test_refusals},
             {"run through the command line", test_cli_run},
             {"input_size_list (API, convert and run with -c)", test_input_size_list});
}
