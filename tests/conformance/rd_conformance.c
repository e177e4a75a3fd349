/*
 * rd_conformance.c: runs ONNX backend test cases (model.onnx + test_data_set_N/{input,output}_K.pb)
 * through the FP32 reference and compares every output.
 *
 *   rd_conformance [--dir DIR]... [--markdown FILE] [--strict] [-q] [FILTER]
 *
 * A case is UNSUPPORTED when loading or running it stops with RD_E_UNSUPPORTED (an operator or dtype
 * this build does not implement); it FAILS on any other error or on a mismatch. Tolerance per element:
 * |actual - expected| <= atol + rtol * |expected| with ONNX's runner defaults (atol 1e-7, rtol 1e-3);
 * a case that only passes with the project's documented bound (atol 1e-5, rtol 1e-3) counts as passed
 * and is listed as "loose". NaN matches NaN, infinities must match exactly, integers and bools exactly.
 * Exit status: 0 when no case failed, 1 otherwise, 2 on usage errors; with --strict a skipped case
 * (unsupported or bad reference) also fails the run, for folders such as fixtures/opset18_21 where every
 * case is meant to pass. The last line of output is "N passed, N failed, N skipped" (skipped =
 * unsupported).
 */
#include "rknn_diag/simulator.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_IO 32

enum verdict { V_PASS, V_LOOSE, V_FAIL, V_UNSUPPORTED, V_BADCASE };

/* Cases whose reference data is wrong by today's ONNX semantics (counted as skipped, listed in docs). */
static const struct {
    const char *name;
    const char *why;
} bad_references[] = {
    {"test_cast_FLOAT_to_BFLOAT16",
     "reference made by truncation; ONNX 1.14+ and ONNX Runtime round to nearest even, as we do"},
};

/* True (with a reason) when an input of the test data contradicts the shape the model declares. */
static bool data_contradicts_model(const rd_model *m, const rd_tensor *in, int n_in, char *why, size_t len)
{
    for (int k = 0; k < n_in && (size_t)k < rd_model_input_count(m); k++) {
        rd_value_info vi;
        rd_model_value(m, (size_t)rd_model_input(m, (size_t)k), &vi);
        if (vi.rank < 0)
            continue;
        bool differ = vi.rank != in[k].rank;
        for (int d = 0; d < vi.rank && !differ; d++)
            differ = vi.dims[d] >= 0 && !vi.dim_params[d] && vi.dims[d] != in[k].dims[d];
        if (differ) {
            char got[64];
            snprintf(why, len, "test data for input '%s' has shape %s, which the model's declaration forbids", vi.name,
                     rd_shape_str(&in[k], got, sizeof got));
            return true;
        }
    }
    return false;
}

typedef struct op_stat {
    char name[64];
    int pass, fail, unsupported;
} op_stat;

typedef struct tally {
    op_stat *ops;
    int n_ops, cap_ops;
    int pass, loose, fail, unsupported, badcase;
    char badcases[2048];
} tally;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static op_stat *op_entry(tally *t, const char *name)
{
    for (int i = 0; i < t->n_ops; i++)
        if (strcmp(t->ops[i].name, name) == 0)
            return &t->ops[i];
    if (t->n_ops == t->cap_ops) {
        t->cap_ops = t->cap_ops ? t->cap_ops * 2 : 128;
        t->ops = realloc(t->ops, (size_t)t->cap_ops * sizeof *t->ops);
        if (!t->ops)
            exit(2);
    }
    op_stat *s = &t->ops[t->n_ops++];
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    return s;
}

static bool is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* Compares one output; returns V_PASS, V_LOOSE or V_FAIL with a description of the worst element. */
static enum verdict compare(const rd_tensor *got, const rd_tensor *want, char *why, size_t len)
{
    if (got->dtype != want->dtype) {
        snprintf(why, len, "dtype %s, expected %s", rd_dtype_name(got->dtype), rd_dtype_name(want->dtype));
        return V_FAIL;
    }
    char gs[128], ws[128];
    if (got->rank != want->rank || memcmp(got->dims, want->dims, sizeof(int64_t) * (size_t)got->rank) != 0) {
        snprintf(why, len, "shape %s, expected %s", rd_shape_str(got, gs, sizeof gs),
                 rd_shape_str(want, ws, sizeof ws));
        return V_FAIL;
    }
    int64_t n = rd_tensor_numel(want);
    if (n == 0)
        return V_PASS;
    if (!rd_dtype_get(want->dtype)->is_float) {
        if (memcmp(got->data, want->data, rd_tensor_nbytes(want)) != 0) {
            size_t es = rd_dtype_get(want->dtype)->size;
            for (int64_t i = 0; i < n; i++)
                if (memcmp((const char *)got->data + i * es, (const char *)want->data + i * es, es) != 0) {
                    rd_tensor g, w;
                    rd_tensor_to_f32(&g, got, NULL);
                    rd_tensor_to_f32(&w, want, NULL);
                    snprintf(why, len, "element %lld is %g, expected %g", (long long)i, ((float *)g.data)[i],
                             ((float *)w.data)[i]);
                    rd_tensor_fini(&g);
                    rd_tensor_fini(&w);
                    break;
                }
            return V_FAIL;
        }
        return V_PASS;
    }
    rd_tensor g, w;
    if (rd_tensor_to_f32(&g, got, NULL) != RD_OK || rd_tensor_to_f32(&w, want, NULL) != RD_OK) {
        snprintf(why, len, "cannot convert for comparison");
        return V_FAIL;
    }
    /* float64 outputs are compared in float: the reference tolerances are far above float's precision */
    enum verdict v = V_PASS;
    double worst = 0;
    int64_t worst_i = -1;
    for (int64_t i = 0; i < n; i++) {
        float a = ((float *)g.data)[i], e = ((float *)w.data)[i];
        if (isnan(e) && isnan(a))
            continue;
        if (isinf(e) || isinf(a)) {
            if (a != e) {
                v = V_FAIL;
                worst_i = i;
                break;
            }
            continue;
        }
        double diff = fabs((double)a - (double)e);
        double strict = 1e-7 + 1e-3 * fabs((double)e);
        double loose = 1e-5 + 1e-3 * fabs((double)e);
        if (!(diff <= loose)) {
            v = V_FAIL;
            if (worst_i < 0 || diff > worst) {
                worst = diff;
                worst_i = i;
            }
        } else if (diff > strict && v == V_PASS) {
            v = V_LOOSE;
        }
    }
    if (v == V_FAIL && worst_i >= 0)
        snprintf(why, len, "element %lld is %.9g, expected %.9g (|diff| %.3g)", (long long)worst_i,
                 ((float *)g.data)[worst_i], ((float *)w.data)[worst_i],
                 fabs((double)((float *)g.data)[worst_i] - ((float *)w.data)[worst_i]));
    rd_tensor_fini(&g);
    rd_tensor_fini(&w);
    return v;
}

static void free_tensors(rd_tensor *t, int n)
{
    for (int i = 0; i < n; i++)
        rd_tensor_fini(&t[i]);
}

/* Loads input_K.pb or output_K.pb files of one data set in order. Returns the count, -1 on error. */
static int load_set(const char *set_dir, const char *prefix, rd_tensor *out, rd_error *err)
{
    int n = 0;
    for (; n < MAX_IO; n++) {
        char p[4096];
        snprintf(p, sizeof p, "%s/%s_%d.pb", set_dir, prefix, n);
        if (!is_file(p))
            break;
        if (rd_tensorproto_load(p, &out[n], NULL, err) != RD_OK) {
            free_tensors(out, n);
            return -1;
        }
    }
    return n;
}

/*
 * numpy has no bfloat16, so ONNX's generator stored bfloat16 test data as uint16 bit patterns: take them
 * as bfloat16 wherever the model declares bfloat16.
 */
static void relabel_bfloat16(const rd_model *m, rd_tensor *in, int n_in, rd_tensor *want, int n_out)
{
    for (int k = 0; k < n_in && (size_t)k < rd_model_input_count(m); k++) {
        rd_value_info vi;
        rd_model_value(m, (size_t)rd_model_input(m, (size_t)k), &vi);
        if (vi.dtype == RD_DT_BF16 && in[k].dtype == RD_DT_U16)
            in[k].dtype = RD_DT_BF16;
    }
    for (int k = 0; k < n_out && (size_t)k < rd_model_output_count(m); k++) {
        rd_value_info vi;
        rd_model_value(m, (size_t)rd_model_output(m, (size_t)k), &vi);
        if (vi.dtype == RD_DT_BF16 && want[k].dtype == RD_DT_U16)
            want[k].dtype = RD_DT_BF16;
    }
}

static enum verdict run_case(const char *case_dir, char *why, size_t len)
{
    char model_path[4096];
    snprintf(model_path, sizeof model_path, "%s/model.onnx", case_dir);
    const char *base = strrchr(case_dir, '/');
    base = base ? base + 1 : case_dir;
    for (size_t i = 0; i < sizeof bad_references / sizeof bad_references[0]; i++)
        if (strcmp(base, bad_references[i].name) == 0) {
            snprintf(why, len, "%s", bad_references[i].why);
            return V_BADCASE;
        }
    rd_error err = {0};
    rd_model *m = NULL;
    if (rd_model_load(model_path, NULL, &m, &err) != RD_OK) {
        snprintf(why, len, "load: %s", err.msg);
        return err.code == RD_E_UNSUPPORTED ? V_UNSUPPORTED : V_FAIL;
    }
    enum verdict worst = V_PASS;
    for (int set = 0; set < 64; set++) {
        char set_dir[4200];
        snprintf(set_dir, sizeof set_dir, "%s/test_data_set_%d", case_dir, set);
        struct stat set_st;
        if (stat(set_dir, &set_st) != 0)
            break;
        rd_tensor in[MAX_IO], want[MAX_IO], got[MAX_IO];
        int n_in = load_set(set_dir, "input", in, &err);
        if (n_in < 0) {
            snprintf(why, len, "set %d inputs: %s", set, err.msg);
            rd_model_destroy(m);
            return err.code == RD_E_UNSUPPORTED ? V_UNSUPPORTED : V_FAIL;
        }
        int n_out = load_set(set_dir, "output", want, &err);
        if (n_out < 0) {
            snprintf(why, len, "set %d outputs: %s", set, err.msg);
            free_tensors(in, n_in);
            rd_model_destroy(m);
            return err.code == RD_E_UNSUPPORTED ? V_UNSUPPORTED : V_FAIL;
        }
        if (n_out == 0) { /* nothing to compare would otherwise count as a pass */
            snprintf(why, len, "set %d has no output_K.pb reference", set);
            free_tensors(in, n_in);
            rd_model_destroy(m);
            return V_FAIL;
        }
        relabel_bfloat16(m, in, n_in, want, n_out);
        if (data_contradicts_model(m, in, n_in, why, len)) {
            free_tensors(in, n_in);
            free_tensors(want, n_out);
            rd_model_destroy(m);
            return V_BADCASE;
        }
        rd_status st = RD_OK;
        if ((size_t)n_out > rd_model_output_count(m)) {
            st = rd_errorf(&err, RD_E_PARSE, "%d expected outputs but the model has %zu", n_out,
                           rd_model_output_count(m));
        } else {
            st = rd_model_run(m, in, (size_t)n_in, NULL, got, (size_t)n_out, &err);
        }
        enum verdict v = V_PASS;
        if (st != RD_OK) {
            snprintf(why, len, "set %d run: %s", set, err.msg);
            v = st == RD_E_UNSUPPORTED ? V_UNSUPPORTED : V_FAIL;
        } else {
            for (int o = 0; o < n_out && v != V_FAIL; o++) {
                char detail[512] = "";
                enum verdict ov = compare(&got[o], &want[o], detail, sizeof detail);
                if (ov == V_FAIL) {
                    rd_value_info vi;
                    rd_model_value(m, (size_t)rd_model_output(m, (size_t)o), &vi);
                    snprintf(why, len, "set %d output %d '%s': %s", set, o, vi.name, detail);
                }
                if (ov > v)
                    v = ov;
            }
            free_tensors(got, n_out);
        }
        free_tensors(in, n_in);
        free_tensors(want, n_out);
        if (v > worst)
            worst = v;
        if (worst >= V_FAIL)
            break;
    }
    /* attribute the verdict to each op type of the graph */
    rd_model_destroy(m);
    return worst;
}

/* Op types used by a case (loads with unsupported ops allowed). */
static int case_ops(const char *case_dir, char names[][64], int max)
{
    char model_path[4096];
    snprintf(model_path, sizeof model_path, "%s/model.onnx", case_dir);
    rd_load_options opt = {.allow_unsupported_ops = true};
    rd_model *m = NULL;
    rd_error err;
    int n = 0;
    if (rd_model_load(model_path, &opt, &m, &err) != RD_OK) {
        /* fall back to the case name: test_<op>_... */
        const char *base = strrchr(case_dir, '/');
        base = base ? base + 1 : case_dir;
        snprintf(names[0], 64, "(unloadable: %s)", base);
        return 1;
    }
    for (size_t i = 0; i < rd_model_node_count(m) && n < max; i++) {
        rd_node_info ni;
        rd_model_node(m, i, &ni);
        char full[64];
        snprintf(full, sizeof full, "%s%s%s", ni.domain, ni.domain[0] ? "." : "", ni.op_type);
        bool seen = false;
        for (int k = 0; k < n; k++)
            if (strcmp(names[k], full) == 0)
                seen = true;
        if (!seen)
            snprintf(names[n++], 64, "%s", full);
    }
    rd_model_destroy(m);
    return n;
}

static int cmp_op(const void *a, const void *b)
{
    return strcmp(((const op_stat *)a)->name, ((const op_stat *)b)->name);
}

static int write_markdown(const char *path, tally *t)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return 2;
    }
    qsort(t->ops, (size_t)t->n_ops, sizeof *t->ops, cmp_op);
    fprintf(f, "# Operators\n\n"
               "Generated by `tools/gen-operators-doc.sh` (the conformance driver `rd_conformance`); do not edit.\n\n"
               "Implemented: every ONNX operator of the operator table (docs/internals/ops.md), in its order:\n"
               "the opset versions covered (`1-` means up to the newest, all versions up to 21 are handled; a\n"
               "last version where ONNX dropped the op), the precisions with kernels of their own (the others run\n"
               "the float32 kernel on values held at their precision: docs/numerics.md), the int8 rule of its\n"
               "outputs, the op RKNN's compiler makes of it where that differs, and the conformance cases whose\n"
               "graph uses the operator: passed / unsupported / failed. The cases are ONNX's backend tests as\n"
               "Debian's `libonnx-testdata` ships them (`node`, `pytorch-converted`, `pytorch-operator`; ONNX\n"
               "1.12, opsets up to 17) and the project's own opset 18-21 cases in `fixtures/opset18_21`\n"
               "(`docs/opset18_21.md`).\n"
               "A case is unsupported when it needs an operator or dtype this build does not implement.\n\n"
               "| operator | opsets | kernels | int8 rule | RKNN | cases passed | unsupported | failed |\n"
               "|---|---|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < rd_op_count(); i++) {
        rd_op_info info;
        rd_op_get(i, &info);
        char full[64];
        snprintf(full, sizeof full, "%s%s%s", info.domain, info.domain[0] ? "." : "", info.name);
        op_stat *s = NULL;
        for (int k = 0; k < t->n_ops; k++)
            if (strcmp(t->ops[k].name, full) == 0)
                s = &t->ops[k];
        static const char *const qrule[] = {[RD_OP_Q_REQUANT] = "requantize",
                                            [RD_OP_Q_PASS] = "input's",
                                            [RD_OP_Q_UNION] = "union of inputs",
                                            [RD_OP_Q_FLOAT16] = "float16",
                                            [RD_OP_Q_NONE] = "none"};
        fprintf(f, "| %s | %d-", full, info.since);
        if (info.until)
            fprintf(f, "%d", info.until);
        fprintf(f, " | fp32%s%s%s | %s | %s | %d | %d | %d |\n", info.fp16_kernel ? " fp16" : "",
                info.int8_kernel ? " int8" : "", info.int16_kernel ? " int16" : "", qrule[info.qrule],
                strcmp(info.npu_op, info.name) ? info.npu_op : "", s ? s->pass : 0, s ? s->unsupported : 0,
                s ? s->fail : 0);
    }
    fprintf(f,
            "\nTotals: %d cases passed (%d of them only within the project's bound atol 1e-5 + rtol 1e-3 instead\n"
            "of ONNX's atol 1e-7 + rtol 1e-3), %d unsupported, %d failed.\n\n",
            t->pass + t->loose, t->loose, t->unsupported, t->fail);
    if (t->badcase)
        fprintf(f, "Cases left out because their reference data contradicts the model or today's ONNX:\n\n%s\n",
                t->badcases);
    fprintf(f, "Operators seen in the conformance cases and not implemented:\n\n");
    for (int k = 0; k < t->n_ops; k++) {
        const char *name = t->ops[k].name;
        const char *dot = strrchr(name, '.');
        char domain[64] = "";
        if (dot)
            snprintf(domain, sizeof domain, "%.*s", (int)(dot - name), name);
        if (name[0] != '(' && !rd_op_supported(domain, dot ? dot + 1 : name))
            fprintf(f, "- %s (%d case%s)\n", name, t->ops[k].unsupported + t->ops[k].fail,
                    t->ops[k].unsupported + t->ops[k].fail == 1 ? "" : "s");
    }
    fclose(f);
    return 0;
}

int main(int argc, char **argv)
{
    const char *dirs[8];
    int n_dirs = 0;
    const char *markdown = NULL, *filter = NULL;
    bool quiet = false, strict = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc && n_dirs < 8)
            dirs[n_dirs++] = argv[++i];
        else if (strcmp(argv[i], "--markdown") == 0 && i + 1 < argc)
            markdown = argv[++i];
        else if (strcmp(argv[i], "-q") == 0)
            quiet = true;
        else if (strcmp(argv[i], "--strict") == 0)
            strict = true;
        else if (argv[i][0] == '-') {
            fprintf(stderr, "usage: rd_conformance [--dir DIR]... [--markdown FILE] [--strict] [-q] [FILTER]\n");
            return 2;
        } else
            filter = argv[i];
    }
    if (n_dirs == 0) {
        dirs[n_dirs++] = "/usr/share/libonnx-testdata/data/node";
        dirs[n_dirs++] = "/usr/share/libonnx-testdata/data/pytorch-converted";
        dirs[n_dirs++] = "/usr/share/libonnx-testdata/data/pytorch-operator";
    }
    tally t = {0};
    int seen = 0;
    for (int d = 0; d < n_dirs; d++) {
        DIR *dir = opendir(dirs[d]);
        if (!dir) {
            fprintf(stderr, "rd_conformance: cannot open %s (install Debian's libonnx-testdata)\n", dirs[d]);
            return 2;
        }
        char **names = NULL;
        size_t n = 0, cap = 0;
        struct dirent *e;
        while ((e = readdir(dir))) {
            if (e->d_name[0] == '.')
                continue;
            if (filter && !strstr(e->d_name, filter))
                continue;
            if (n == cap) {
                cap = cap ? cap * 2 : 256;
                names = realloc(names, cap * sizeof *names);
            }
            names[n++] = strdup(e->d_name);
        }
        closedir(dir);
        if (n)
            qsort(names, n, sizeof *names, cmp_str);
        for (size_t i = 0; i < n; i++) {
            char case_dir[4096];
            snprintf(case_dir, sizeof case_dir, "%s/%s", dirs[d], names[i]);
            char model[4200];
            snprintf(model, sizeof model, "%s/model.onnx", case_dir);
            if (!is_file(model)) {
                free(names[i]);
                continue;
            }
            seen++;
            char why[1200] = "";
            enum verdict v = run_case(case_dir, why, sizeof why);
            char ops[32][64];
            int n_ops = case_ops(case_dir, ops, 32);
            for (int k = 0; k < n_ops; k++) {
                op_stat *s = op_entry(&t, ops[k]);
                if (v == V_PASS || v == V_LOOSE)
                    s->pass++;
                else if (v == V_FAIL)
                    s->fail++;
                else if (v == V_UNSUPPORTED)
                    s->unsupported++;
            }
            static const char *const label[] = {"PASS", "PASS (loose)", "FAIL", "UNSUPPORTED", "BAD CASE"};
            if (v == V_PASS)
                t.pass++;
            else if (v == V_LOOSE)
                t.loose++;
            else if (v == V_FAIL)
                t.fail++;
            else if (v == V_BADCASE) {
                t.badcase++;
                size_t used = strlen(t.badcases);
                snprintf(t.badcases + used, sizeof t.badcases - used, "- `%s`: %s\n", names[i], why);
            } else
                t.unsupported++;
            if (!quiet || v == V_FAIL || (strict && v != V_PASS && v != V_LOOSE))
                printf("%-12s %s%s%s\n", label[v], names[i], why[0] ? ": " : "", why);
            free(names[i]);
        }
        free(names);
    }
    if (seen == 0) {
        fprintf(stderr, "rd_conformance: no case matched\n");
        return 2;
    }
    int rc = 0;
    if (markdown)
        rc = write_markdown(markdown, &t);
    printf("%d passed, %d failed, %d skipped\n", t.pass + t.loose, t.fail, t.unsupported + t.badcase);
    free(t.ops);
    return rc ? rc : (t.fail || (strict && t.unsupported + t.badcase) ? 1 : 0);
}
