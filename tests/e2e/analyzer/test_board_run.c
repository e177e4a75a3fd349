/* test_board_run.c: `rknn-diag board-run`, the emulated board's application: dumps as librknnrt names and
 * lays them out, equal to the simulator's tensors, the environment's effects, faults, application
 * mistakes, and the whole path through the fake board over loopback ADB. */
#include "cli_capture.h"
#include "cli_expect.h"
#include "dumps.h"
#include "quant_setup.h"
#include "rd_test.h"
#include "paths_in.h"
#include "text_check.h"
#include "rknn_diag/adb.h"
#include "rknn_diag/analyzer.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The demo model, its input and a .quantization.cfg in a fresh folder. */
typedef struct fixture {
    char *dir;
    char model[4200], image[4200], cfg[4200], dumps[4200], out[4200];
} fixture;

static bool fx_init(fixture *fx, const char *tag)
{
    memset(fx, 0, sizeof *fx);
    fx->dir = rd_test_tmpdir(tag);
    if (!fx->dir)
        return false;
    rd_test_paths_in(fx->dir, sizeof fx->cfg, fx->model, "demo.onnx", fx->image, "image.npy", fx->cfg,
                     "demo.quantization.cfg", fx->dumps, "dumps", fx->out, "out", NULL);
    mkdir(fx->dumps, 0777);
    rd_cli_result r = rd_test_cli("demo", "-o", fx->dir, "--quiet", NULL);
    bool ok = r.code == 0;
    rd_test_cli_free(&r);
    char dataset[4200];
    snprintf(dataset, sizeof dataset, "%s/dataset.txt", fx->dir);
    r = rd_test_cli("quantize", fx->model, "--dataset", dataset, "--input-layout", "nchw", "-o", fx->cfg, NULL);
    ok = ok && r.code == 0;
    if (r.code)
        fprintf(stderr, "%s", r.errs);
    rd_test_cli_free(&r);
    return ok;
}

static void fx_fini(fixture *fx)
{
    free(fx->dir);
}

/* board-run on the fixture with extra arguments (NULL-terminated), dumps to dump_dir. */
static rd_cli_result board_run(const fixture *fx, const char *dump_dir, const char *const *extra)
{
    char *argv[40] = {"rknn-diag",      "board-run", (char *)fx->model, "--input",       (char *)fx->image,
                      "--input-layout", "nchw",      "--cfg",           (char *)fx->cfg, "--target",
                      "rk3566",         "-o",        (char *)fx->out};
    int argc = 13;
    if (dump_dir) {
        argv[argc++] = "--dump-dir";
        argv[argc++] = (char *)dump_dir;
    }
    for (int i = 0; extra && extra[i] && argc < 39; i++)
        argv[argc++] = (char *)extra[i];
    return rd_test_cli_argv(argc - 1, (const char *const *)argv + 1);
}

/* Sorted file names of a folder. */
typedef struct listing {
    char **names;
    size_t n;
} listing;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static listing list_dir(const char *dir)
{
    listing l = {0};
    DIR *d = opendir(dir);
    if (!d)
        return l;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char **grown = realloc(l.names, (l.n + 1) * sizeof *grown);
        if (!grown)
            break;
        l.names = grown;
        l.names[l.n++] = strdup(e->d_name);
    }
    closedir(d);
    if (l.n)
        qsort(l.names, l.n, sizeof *l.names, cmp_str);
    return l;
}

static void listing_fini(listing *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->names[i]);
    free(l->names);
    memset(l, 0, sizeof *l);
}

static void clear_dir(const char *dir)
{
    listing l = list_dir(dir);
    for (size_t i = 0; i < l.n; i++) {
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", dir, l.names[i]);
        remove(path);
    }
    listing_fini(&l);
}

static const char *find_name(const listing *l, const char *needle)
{
    for (size_t i = 0; i < l->n; i++)
        if (strstr(l->names[i], needle))
            return l->names[i];
    return NULL;
}

static bool load_in(const char *dir, const char *name, rd_tensor *t)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    rd_error err;
    return rd_npy_load(path, t, &err) == RD_OK;
}

static void board_env(const char *level, const char *quant)
{
    if (level)
        setenv("RKNN_LOG_LEVEL", level, 1);
    else
        unsetenv("RKNN_LOG_LEVEL");
    if (quant)
        setenv("RKNN_DUMP_QUANT", quant, 1);
    else
        unsetenv("RKNN_DUMP_QUANT");
    unsetenv("RKNN_DUMP_DIR");
}

/* ---- the simulator's own tensors, for comparison --------------------------------------------- */

#define MAX_REF 32
typedef struct reference {
    rd_sim *s;
    int n;
    char *names[MAX_REF];
    rd_tensor t[MAX_REF];
} reference;

static rd_status keep(void *user, const rd_observed *ev, rd_error *err)
{
    reference *r = user;
    if (r->n == MAX_REF || ev->tensor->dtype != RD_DT_F32)
        return RD_OK;
    r->names[r->n] = strdup(ev->name);
    return rd_tensor_clone(&r->t[r->n++], ev->tensor, err);
}

/* The host's simulation from the same cfg, run on the same input. */
static bool reference_run(const fixture *fx, reference *ref)
{
    memset(ref, 0, sizeof *ref);
    rd_error err;
    rd_model *m = NULL;
    if (rd_model_load(fx->model, NULL, &m, &err) != RD_OK)
        return false;
    an_quant_opts q;
    an_quant_opts_init(&q);
    q.qcfg_path = fx->cfg;
    q.layout = RD_LAYOUT_NCHW;
    rd_tensor x = {0};
    bool ok = an_quant_finish(&q, m, &err) == RD_OK &&
              an_quant_build_sim(&q, m, NULL, NULL, false, &ref->s, &err) == RD_OK &&
              an_quant_prepare_input(&q, m, 0, fx->image, NULL, &x, &err) == RD_OK;
    rd_run_options ro = {.observer = keep, .user = ref, .observe_inputs = true}; /* the input as the model holds it */
    ok = ok && rd_sim_run(ref->s, &x, 1, &ro, NULL, 0, &err) == RD_OK;
    if (!ok)
        fprintf(stderr, "reference: %s\n", err.msg);
    rd_tensor_fini(&x);
    an_quant_opts_fini(&q);
    rd_model_destroy(m);
    return ok;
}

static const rd_tensor *reference_get(const reference *r, const char *name)
{
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->names[i], name) == 0)
            return &r->t[i];
    return NULL;
}

static void reference_fini(reference *r)
{
    for (int i = 0; i < r->n; i++) {
        free(r->names[i]);
        rd_tensor_fini(&r->t[i]);
    }
    rd_sim_destroy(r->s);
}

static bool same_f32(const rd_tensor *a, const rd_tensor *b)
{
    return a && b && a->dtype == RD_DT_F32 && b->dtype == RD_DT_F32 && rd_tensor_numel(a) == rd_tensor_numel(b) &&
           memcmp(a->data, b->data, (size_t)rd_tensor_numel(a) * 4) == 0;
}

/* ---- tests --------------------------------------------------------------------------------------- */

static const char *const expected_names[] = {
    "000_InputOperator_image_shape_1_3_32_32_float.npy", "001_ConvRelu_relu1_out_shape_1_8_32_32_float.npy",
    "002_Mul_amplified_shape_1_8_32_32_float.npy",       "003_Div_restored_shape_1_8_32_32_float.npy",
    "004_ConvClip_relu6_out_shape_1_8_32_32_float.npy",  "005_MaxPool_pool_out_shape_1_8_16_16_float.npy",
    "006_ConvRelu_relu2_out_shape_1_16_16_16_float.npy", "007_Conv_gap_out_shape_1_16_1_1_float.npy",
    "008_Flatten_features_shape_1_16_float.npy",         "009_Conv_logits_shape_1_10_float.npy",
    "010_exSoftmax13_probs_shape_1_10_float.npy",        "011_OutputOperator_probs_shape_1_10_float.npy",
};
#define N_EXPECTED (sizeof expected_names / sizeof expected_names[0])

static void test_dumps_equal_simulator(void)
{
    fixture fx;
    CU_ASSERT_FATAL(fx_init(&fx, "board_run_sim"));
    board_env("5", NULL);
    rd_cli_result r = board_run(&fx, fx.dumps, NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    if (r.code)
        fprintf(stderr, "%s", r.errs);
    listing l = list_dir(fx.dumps);
    CU_ASSERT_EQUAL(l.n, N_EXPECTED);
    for (size_t i = 0; i < l.n && i < N_EXPECTED; i++)
        CU_ASSERT_STRING_EQUAL(l.names[i], expected_names[i]);
    reference ref;
    CU_ASSERT_FATAL(reference_run(&fx, &ref));
    for (size_t i = 0; i < l.n; i++) {
        an_dump_name dn;
        rd_error err;
        CU_ASSERT_EQUAL_FATAL(an_dump_name_parse(l.names[i], &dn, &err), RD_OK);
        rd_tensor t;
        CU_ASSERT_FATAL(load_in(fx.dumps, l.names[i], &t));
        CU_ASSERT_EQUAL(t.dtype, dn.dtype);
        CU_ASSERT_EQUAL(t.rank, dn.rank);
        for (int k = 0; k < t.rank; k++)
            CU_ASSERT_EQUAL(t.dims[k], dn.dims[k]);
        if (strcmp(dn.op_type, "InputOperator") == 0) { /* the normal API's: the input as the model holds it */
            CU_ASSERT_TRUE(same_f32(&t, reference_get(&ref, "image")));
        } else { /* bit for bit the host's simulation */
            CU_ASSERT_TRUE(same_f32(&t, reference_get(&ref, dn.name)));
        }
        rd_tensor_fini(&t);
    }
    /* zero-copy: the InputOperator dump is the application's buffer, untouched */
    clear_dir(fx.dumps);
    rd_test_cli_free(&r);
    r = board_run(&fx, fx.dumps, (const char *const[]){"--app-api", "zero-copy", NULL});
    CU_ASSERT_EQUAL(r.code, 0);
    rd_tensor t, x;
    CU_ASSERT_FATAL(load_in(fx.dumps, "000_InputOperator_image_shape_1_3_32_32_float.npy", &t));
    CU_ASSERT_FATAL(load_in(fx.dir, "image.npy", &x));
    CU_ASSERT_TRUE(same_f32(&t, &x));
    rd_tensor_fini(&t);
    rd_tensor_fini(&x);
    /* what the application received */
    rd_tensor o;
    CU_ASSERT_FATAL(load_in(fx.out, "output_0.npy", &o));
    CU_ASSERT_TRUE(same_f32(&o, reference_get(&ref, "probs")));
    rd_tensor_fini(&o);
    /* the host's dump loader maps every dump to its tensor */
    an_dump_set *set = NULL;
    rd_error err;
    CU_ASSERT_EQUAL(an_dump_set_load(fx.dumps, rd_platform_find("rk3566"), ref.s, &set, &err), RD_OK);
    if (set) {
        CU_ASSERT_EQUAL(an_dump_set_count(set), N_EXPECTED);
        rd_sim_tensor st;
        CU_ASSERT_EQUAL(rd_sim_tensor_get(ref.s, "relu6_out", &st, &err), RD_OK);
        CU_ASSERT_TRUE(same_f32(an_dump_set_tensor(set, st.value), reference_get(&ref, "relu6_out")));
        an_dump_set_destroy(set);
    }
    reference_fini(&ref);
    listing_fini(&l);
    rd_test_cli_free(&r);
    board_env(NULL, NULL);
    fx_fini(&fx);
}

static void test_environment(void)
{
    fixture fx;
    CU_ASSERT_FATAL(fx_init(&fx, "board_run_env"));
    /* no RKNN_LOG_LEVEL: no dumps, the outputs only */
    board_env(NULL, NULL);
    rd_cli_result r = board_run(&fx, fx.dumps, NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    listing l = list_dir(fx.dumps);
    CU_ASSERT_EQUAL(l.n, 0);
    listing_fini(&l);
    rd_test_cli_free(&r);
    /* 4: per-layer timing, still no dumps */
    board_env("4", NULL);
    r = board_run(&fx, fx.dumps, NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    RD_ASSERT_HAS_TEXTS(r.errs, "ConvClip", "Total Operator Elapsed Per Frame Time(us)");
    l = list_dir(fx.dumps);
    CU_ASSERT_EQUAL(l.n, 0);
    listing_fini(&l);
    rd_test_cli_free(&r);
    /* 6 with RKNN_DUMP_QUANT=1: int8 codes, and .txt files in NC1HWC2 (rk3566: C2 8 for int8) */
    board_env("6", "1");
    setenv("RKNN_DUMP_DIR", fx.dumps, 1);
    r = board_run(&fx, NULL, NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    l = list_dir(fx.dumps);
    CU_ASSERT_EQUAL(l.n, 2 * N_EXPECTED);
    const char *npy = find_name(&l, "004_ConvClip_relu6_out_shape_1_8_32_32_int8.npy");
    const char *txt = find_name(&l, "004_ConvClip_relu6_out_shape_1_8_32_32_int8.txt");
    CU_ASSERT_PTR_NOT_NULL(find_name(&l, "000_InputOperator_image_shape_1_3_32_32_int8.npy")); /* normal API: codes */
    reference ref;
    CU_ASSERT_FATAL(reference_run(&fx, &ref));
    rd_sim_tensor st;
    rd_error err;
    CU_ASSERT_EQUAL(rd_sim_tensor_get(ref.s, "relu6_out", &st, &err), RD_OK);
    rd_tensor q;
    if (npy && txt && load_in(fx.dumps, npy, &q)) {
        CU_ASSERT_EQUAL(q.dtype, RD_DT_I8);
        const rd_tensor *f = reference_get(&ref, "relu6_out");
        CU_ASSERT_FATAL(f != NULL);
        for (int64_t i = 0; i < rd_tensor_numel(&q); i++) /* dequantizes back to the simulator's values */
            CU_ASSERT_EQUAL(st.scale * (float)(((int8_t *)q.data)[i] - st.zero_point), ((float *)f->data)[i]);
        /* the .txt holds the same codes in NC1HWC2: element (c, h, w) at (c/8)*H*W*8 + (h*W+w)*8 + c%8 */
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", fx.dumps, txt);
        size_t len = 0;
        char *text = rd_test_read_file(path, &len);
        CU_ASSERT_FATAL(text != NULL);
        float *native = calloc(8 * 32 * 32, sizeof *native);
        char *p = text;
        size_t n = 0;
        while (n < 8 * 32 * 32) {
            char *end;
            double v = strtod(p, &end);
            if (end == p)
                break;
            native[n++] = (float)v;
            p = end;
        }
        CU_ASSERT_EQUAL(n, 8 * 32 * 32);
        int8_t *codes = q.data;
        for (int c = 0; c < 8; c++)
            for (int hw = 0; hw < 32 * 32; hw++)
                CU_ASSERT_EQUAL(native[(c / 8) * 1024 * 8 + hw * 8 + c % 8], (float)codes[c * 1024 + hw]);
        free(native);
        free(text);
        rd_tensor_fini(&q);
    } else {
        CU_FAIL("no int8 .npy/.txt dump of relu6_out");
    }
    reference_fini(&ref);
    listing_fini(&l);
    rd_test_cli_free(&r);
    /* a missing folder: librknnrt's message, non-zero exit */
    board_env("5", NULL);
    char missing[4400];
    snprintf(missing, sizeof missing, "%s/nowhere", fx.dir);
    r = board_run(&fx, missing, NULL);
    CU_ASSERT_EQUAL(r.code, 3);
    RD_ASSERT_HAS_TEXTS(r.errs, "failed open dump path: ", "nowhere/000_InputOperator_image_shape_1_3_32_32_float.npy");
    rd_test_cli_free(&r);
    board_env(NULL, NULL);
    fx_fini(&fx);
}

/* Index of the first dump (in file order) whose contents differ between two folders; -1 if none. */
static int first_difference(const char *a, const char *b, char *name, size_t len)
{
    listing la = list_dir(a), lb = list_dir(b);
    int first = -1;
    for (size_t i = 0; i < la.n && i < lb.n && first < 0; i++) {
        rd_tensor ta, tb;
        bool ok = load_in(a, la.names[i], &ta) && load_in(b, lb.names[i], &tb);
        if (!ok)
            break;
        size_t bytes = (size_t)rd_tensor_numel(&ta) * rd_dtype_get(ta.dtype)->size;
        if (strcmp(la.names[i], lb.names[i]) != 0 || ta.dtype != tb.dtype ||
            rd_tensor_numel(&ta) != rd_tensor_numel(&tb) || memcmp(ta.data, tb.data, bytes) != 0) {
            first = (int)i;
            snprintf(name, len, "%s", lb.names[i]);
        }
        rd_tensor_fini(&ta);
        rd_tensor_fini(&tb);
    }
    listing_fini(&la);
    listing_fini(&lb);
    return first;
}

static void test_faults(void)
{
    fixture fx;
    CU_ASSERT_FATAL(fx_init(&fx, "board_run_faults"));
    board_env("5", "1");
    rd_cli_result r = board_run(&fx, fx.dumps, NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    rd_test_cli_free(&r);
    char faulty[4400];
    snprintf(faulty, sizeof faulty, "%s/faulty", fx.dir);
    mkdir(faulty, 0777);
    static const char *const faults[] = {"gain:relu6_out", "saturate:relu6_out", "swap-channels:relu6_out",
                                         "fp16:relu6_out"};
    for (size_t k = 0; k < sizeof faults / sizeof faults[0]; k++) {
        clear_dir(faulty);
        r = board_run(&fx, faulty, (const char *const[]){"--fault", faults[k], NULL});
        CU_ASSERT_EQUAL(r.code, 0);
        if (r.code)
            fprintf(stderr, "%s: %s", faults[k], r.errs);
        char name[1400] = "";
        int first = first_difference(fx.dumps, faulty, name, sizeof name);
        CU_ASSERT_EQUAL(first, 4); /* everything upstream identical, the faulty layer first to differ */
        CU_ASSERT_PTR_NOT_NULL(strstr(name, "_relu6_out_shape_1_8_32_32_"));
        if (k == 3) /* float16 where the model says int8: the RKNN_DUMP_QUANT=1 dump says so */
            CU_ASSERT_STRING_EQUAL(name, "004_ConvClip_relu6_out_shape_1_8_32_32_float16.npy");
        rd_test_cli_free(&r);
    }
    /* a fault on a tensor fused away or unknown: a usage error naming the right one */
    r = board_run(&fx, faulty, (const char *const[]){"--fault", "gain:conv1_out", NULL});
    CU_ASSERT_EQUAL(r.code, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.errs, "relu1_out"));
    rd_test_cli_free(&r);
    r = board_run(&fx, faulty, (const char *const[]){"--fault", "gain", NULL});
    CU_ASSERT_EQUAL(r.code, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.errs, "KIND:TENSOR"));
    rd_test_cli_free(&r);
    board_env(NULL, NULL);
    fx_fini(&fx);
}

/* The InputOperator dump of a run with one application mistake. */
static bool input_dump_with(const fixture *fx, const char *input, const char *const *extra, rd_tensor *out)
{
    clear_dir(fx->dumps);
    fixture f = *fx;
    snprintf(f.image, sizeof f.image, "%s", input);
    const char *args[16] = {"--app-api", "zero-copy"}; /* the buffer the application handed over */
    for (int i = 0; extra && extra[i] && i < 13; i++)
        args[2 + i] = extra[i];
    rd_cli_result r = board_run(&f, fx->dumps, args);
    CU_ASSERT_EQUAL(r.code, 0);
    if (r.code)
        fprintf(stderr, "%s", r.errs);
    rd_test_cli_free(&r);
    listing l = list_dir(fx->dumps);
    const char *name = find_name(&l, "000_InputOperator_");
    bool ok = name && load_in(fx->dumps, name, out);
    listing_fini(&l);
    return ok;
}

static void test_app_mistakes(void)
{
    fixture fx;
    CU_ASSERT_FATAL(fx_init(&fx, "board_run_mistakes"));
    board_env("5", NULL);
    rd_tensor x;
    CU_ASSERT_FATAL(load_in(fx.dir, "image.npy", &x));
    const float *px = x.data;
    const int64_t plane = 32 * 32;
    rd_tensor t;
    /* rgb-bgr: channels 0 and 2 exchanged */
    CU_ASSERT_FATAL(input_dump_with(&fx, fx.image, (const char *const[]){"--app-mistake", "rgb-bgr", NULL}, &t));
    CU_ASSERT_EQUAL(memcmp(t.data, px + 2 * plane, plane * 4), 0);
    CU_ASSERT_EQUAL(memcmp((float *)t.data + 2 * plane, px, plane * 4), 0);
    rd_tensor_fini(&t);
    /* double-norm: the application's own (x - mean) / std reaches the runtime */
    CU_ASSERT_FATAL(input_dump_with(
        &fx, fx.image,
        (const char *const[]){"--app-mistake", "double-norm", "--mean", "0.5,0.5,0.5", "--std", "2,2,2", NULL}, &t));
    for (int64_t i = 0; i < rd_tensor_numel(&t); i++)
        CU_ASSERT_EQUAL(((float *)t.data)[i], (px[i] - 0.5f) / 2.0f);
    rd_tensor_fini(&t);
    /* nhwc-as-nchw: the NHWC bytes under NCHW dims */
    CU_ASSERT_FATAL(input_dump_with(&fx, fx.image, (const char *const[]){"--app-mistake", "nhwc-as-nchw", NULL}, &t));
    CU_ASSERT_EQUAL(t.dims[1], 3);
    for (int64_t i = 0; i < plane; i++)
        for (int c = 0; c < 3; c++)
            CU_ASSERT_EQUAL(((float *)t.data)[i * 3 + c], px[c * plane + i]);
    rd_tensor_fini(&t);
    /* wrong-size: same shape, different (blurred) values */
    CU_ASSERT_FATAL(input_dump_with(&fx, fx.image, (const char *const[]){"--app-mistake", "wrong-size", NULL}, &t));
    CU_ASSERT_EQUAL(rd_tensor_numel(&t), rd_tensor_numel(&x));
    CU_ASSERT_NOT_EQUAL(memcmp(t.data, px, (size_t)rd_tensor_numel(&x) * 4), 0);
    rd_tensor_fini(&t);
    /* int8-clamp: a uint8 input; values above 127 clamped, the dump is int8 */
    rd_tensor u;
    CU_ASSERT_EQUAL_FATAL(rd_tensor_alloc(&u, RD_DT_U8, 4, (const int64_t[]){1, 3, 32, 32}, NULL), RD_OK);
    for (int64_t i = 0; i < rd_tensor_numel(&u); i++)
        ((uint8_t *)u.data)[i] = (uint8_t)(i * 7 % 256);
    char u8path[4400];
    snprintf(u8path, sizeof u8path, "%s/u8.npy", fx.dir);
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_npy_save(u8path, &u, &err), RD_OK);
    const char *const u8_args[] = {"--mean", "128,128,128", "--std", "128,128,128", NULL};
    CU_ASSERT_FATAL(input_dump_with(&fx, u8path, u8_args, &t));
    CU_ASSERT_EQUAL(t.dtype, RD_DT_U8);
    CU_ASSERT_EQUAL(memcmp(t.data, u.data, (size_t)rd_tensor_numel(&u)), 0);
    rd_tensor_fini(&t);
    CU_ASSERT_FATAL(input_dump_with(
        &fx, u8path,
        (const char *const[]){"--app-mistake", "int8-clamp", "--mean", "128,128,128", "--std", "128,128,128", NULL},
        &t));
    CU_ASSERT_EQUAL(t.dtype, RD_DT_I8);
    for (int64_t i = 0; i < rd_tensor_numel(&u); i++) {
        uint8_t v = ((uint8_t *)u.data)[i];
        CU_ASSERT_EQUAL(((int8_t *)t.data)[i], v > 127 ? 127 : v);
    }
    rd_tensor_fini(&t);
    rd_tensor_fini(&u);
    /* int8-clamp on float data cannot be made: said so */
    rd_cli_result r = board_run(&fx, fx.dumps, (const char *const[]){"--app-mistake", "int8-clamp", NULL});
    CU_ASSERT_EQUAL(r.code, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.errs, "uint8"));
    rd_test_cli_free(&r);
    /* output-dtype: the application saved int8 codes */
    r = board_run(&fx, fx.dumps, (const char *const[]){"--app-mistake", "output-dtype", NULL});
    CU_ASSERT_EQUAL(r.code, 0);
    rd_test_cli_free(&r);
    CU_ASSERT_FATAL(load_in(fx.out, "output_0.npy", &t));
    CU_ASSERT_EQUAL(t.dtype, RD_DT_I8);
    CU_ASSERT_EQUAL(t.dims[1], 10);
    rd_tensor_fini(&t);
    r = board_run(&fx, fx.dumps, (const char *const[]){"--app-mistake", "rgb", NULL});
    CU_ASSERT_EQUAL(r.code, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.errs, "nhwc-as-nchw"));
    rd_test_cli_free(&r);
    rd_tensor_fini(&x);
    board_env(NULL, NULL);
    fx_fini(&fx);
}

static void test_usage(void)
{
    RD_CLI_EXPECT(0, RD_TEXTS("emulated board"), NULL, "board-run", "--help");
    RD_CLI_EXPECT(2, NULL, RD_TEXTS("rk9999"), "board-run", "m.onnx", "--input", "x.npy", "--target", "rk9999");
    RD_CLI_EXPECT(2, NULL, RD_TEXTS("--target"), "board-run", "m.onnx", "--input", "x.npy");
    /* a tool's command: not in the main list */
    rd_cli_result r = rd_test_cli("--help", NULL);
    CU_ASSERT_PTR_NULL(strstr(r.out, "board-run"));
    rd_test_cli_free(&r);
}

/* ---- end to end: the fake board's shell runs the real binary ------------------------------------- */

static bool copy_file(const char *from, const char *to)
{
    size_t len = 0;
    void *buf = rd_test_read_file(from, &len);
    FILE *f = buf ? fopen(to, "wb") : NULL;
    bool ok = f && fwrite(buf, 1, len, f) == len;
    if (f)
        ok = fclose(f) == 0 && ok;
    free(buf);
    return ok;
}

static void test_through_fake_board(void)
{
    fixture fx;
    CU_ASSERT_FATAL(fx_init(&fx, "board_run_e2e"));
    board_env(NULL, NULL);
    char root[4400], work[4400], dumps[4400], pulled[4400];
    snprintf(root, sizeof root, "%s/root", fx.dir);
    snprintf(work, sizeof work, "%s/userdata", root);
    mkdir(root, 0777);
    mkdir(work, 0777);
    snprintf(dumps, sizeof dumps, "%s/userdata/dumps", root);
    mkdir(dumps, 0777);
    snprintf(work, sizeof work, "%s/userdata/app", root);
    mkdir(work, 0777);
    snprintf(pulled, sizeof pulled, "%s/pulled", fx.dir);
    mkdir(pulled, 0777);
    rd_board_options bo = {.root = root};
    rd_board *b = NULL;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_board_start(&bo, &b, &err), RD_OK);
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", rd_board_port(b));
    /* the application's files go to the board as a user would push them */
    RD_CLI_EXPECT(0, NULL, NULL, "push", "--connect", addr, fx.model, "/userdata/app/demo.onnx");
    RD_CLI_EXPECT(0, NULL, NULL, "push", "--connect", addr, fx.image, "/userdata/app/image.npy");
    char cfg_on_board[4400];
    snprintf(cfg_on_board, sizeof cfg_on_board, "%s/demo.quantization.cfg", work);
    CU_ASSERT(copy_file(fx.cfg, cfg_on_board));
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "RKNN_DUMP_DIR=/userdata/dumps RKNN_LOG_LEVEL=5 %s board-run /userdata/app/demo.onnx --input "
             "/userdata/app/image.npy --input-layout nchw --cfg /userdata/app/demo.quantization.cfg --target rk3566 "
             "--fault gain:relu6_out",
             RD_CLI_BINARY);
    rd_cli_result r = rd_test_cli("shell", "--connect", addr, cmd, NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    if (r.code)
        fprintf(stderr, "shell: %s%s", r.out, r.errs);
    rd_test_cli_free(&r);
    RD_CLI_EXPECT(0, NULL, NULL, "pull", "--connect", addr, "/userdata/dumps", pulled);
    char got[4400];
    snprintf(got, sizeof got, "%s/dumps", pulled);
    listing l = list_dir(got);
    CU_ASSERT_EQUAL(l.n, N_EXPECTED);
    for (size_t i = 0; i < l.n && i < N_EXPECTED; i++)
        CU_ASSERT_STRING_EQUAL(l.names[i], expected_names[i]);
    listing_fini(&l);
    /* the same run in-process without the fault: the faulty layer is the first to differ */
    board_env("5", NULL);
    r = board_run(&fx, fx.dumps, NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    rd_test_cli_free(&r);
    board_env(NULL, NULL);
    char name[1400] = "";
    CU_ASSERT_EQUAL(first_difference(fx.dumps, got, name, sizeof name), 4);
    /* no dump folder on the board: librknnrt's message, and the shell's status says it failed */
    snprintf(cmd, sizeof cmd,
             "RKNN_DUMP_DIR=/userdata/nowhere RKNN_LOG_LEVEL=5 %s board-run /userdata/app/demo.onnx --input "
             "/userdata/app/image.npy --input-layout nchw --cfg /userdata/app/demo.quantization.cfg --target rk3566",
             RD_CLI_BINARY);
    r = rd_test_cli("shell", "--connect", addr, cmd, NULL);
    CU_ASSERT_NOT_EQUAL(r.code, 0);
    CU_ASSERT_TRUE(strstr(r.out, "failed open dump path: ") || strstr(r.errs, "failed open dump path: "));
    rd_test_cli_free(&r);
    rd_board_stop(b);
    fx_fini(&fx);
}

RD_TEST_REGISTER(board_run_tests)
{
    RD_SUITE("board_run", {"dumps equal the simulator", test_dumps_equal_simulator}, {"environment", test_environment},
             {"faults", test_faults}, {"app mistakes", test_app_mistakes}, {"usage", test_usage},
             {"through the fake board", test_through_fake_board});
}
