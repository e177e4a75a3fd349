/*
 * test_scorer.c: the scorer the tests give `hybrid search --score-cmd` (docs/score-cmd.md, docs/hybrid.md
 * "Objectives"). It reads the candidate's folder as a user's script would, checks what the folder promises
 * (index.json's format and fields, every .npy it names, shapes as stated, the golden files in the reference
 * folder, whose own index.json lists the same files) and prints one number:
 *
 *   rd_test_scorer top1 LABELS DIR   share of samples whose output 0 argmax is the label (line k of LABELS)
 *   rd_test_scorer cos DIR           mean over samples of the cosine of output 0 against its golden
 *
 * Exit 2 with a message on stderr when the folder is not as documented.
 */
#include "rknn_diag/simulator.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bad(const char *what, const char *detail)
{
    fprintf(stderr, "rd_test_scorer: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    return 2;
}

/* Loads DIR/rel as float32 and checks its shape against the index entry. */
static int load(const char *dir, const char *rel, const cJSON *shape, rd_tensor *out)
{
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    rd_error err = {0};
    if (rd_npy_load(path, out, &err) != RD_OK)
        return bad("cannot load", err.msg);
    if (out->dtype != RD_DT_F32)
        return bad("not float32", path);
    if (!cJSON_IsArray(shape) || cJSON_GetArraySize(shape) != out->rank)
        return bad("shape rank differs from index.json", path);
    for (int d = 0; d < out->rank; d++)
        if ((int64_t)cJSON_GetArrayItem(shape, d)->valuedouble != out->dims[d])
            return bad("shape differs from index.json", path);
    return 0;
}

int main(int argc, char **argv)
{
    bool top1 = argc == 4 && strcmp(argv[1], "top1") == 0, cosm = argc == 3 && strcmp(argv[1], "cos") == 0;
    if (!top1 && !cosm)
        return bad("usage: rd_test_scorer top1 LABELS DIR | cos DIR", NULL);
    const char *dir = argv[argc - 1];
    char path[8192];
    snprintf(path, sizeof path, "%s/index.json", dir);
    char *text = NULL;
    size_t len = 0;
    rd_error err = {0};
    if (rd_file_read_all(NULL, path, 1u << 26, &text, &len, &err) != RD_OK)
        return bad("no index.json", err.msg);
    cJSON *root = cJSON_Parse(text);
    free(text);
    const cJSON *samples = cJSON_GetObjectItem(root, "samples"), *set = cJSON_GetObjectItem(root, "float16"),
                *outs = cJSON_GetObjectItem(root, "outputs"), *cand = cJSON_GetObjectItem(root, "candidate"),
                *format = cJSON_GetObjectItem(root, "format"), *ref = cJSON_GetObjectItem(root, "reference");
    if (!cJSON_IsArray(samples) || !cJSON_IsArray(set) || !cJSON_IsArray(outs) || !cJSON_IsNumber(cand) ||
        !cJSON_IsString(ref) || !cJSON_IsString(format) || strcmp(format->valuestring, "rknn-diag-outputs/1") != 0)
        return bad("index.json lacks format, samples, float16, outputs, candidate or reference", dir);
    char ref_dir[8192];
    snprintf(ref_dir, sizeof ref_dir, "%s/%s", dir, ref->valuestring);
    snprintf(path, sizeof path, "%s/index.json", ref_dir);
    if (rd_file_read_all(NULL, path, 1u << 26, &text, &len, &err) != RD_OK)
        return bad("no index.json in the reference folder", err.msg);
    cJSON *ref_root = cJSON_Parse(text);
    free(text);
    const cJSON *ref_samples = cJSON_GetObjectItem(ref_root, "samples");
    if (!cJSON_IsArray(ref_samples) || cJSON_GetArraySize(ref_samples) != cJSON_GetArraySize(samples))
        return bad("the reference folder's index.json does not list the same samples", ref_dir);
    cJSON_Delete(ref_root);
    int *labels = NULL;
    int n_samples = cJSON_GetArraySize(samples);
    if (top1) {
        FILE *f = fopen(argv[2], "r");
        if (!f)
            return bad("cannot open labels", argv[2]);
        labels = calloc((size_t)n_samples + 1, sizeof *labels);
        for (int k = 0; k < n_samples; k++)
            if (fscanf(f, "%d", &labels[k]) != 1)
                return bad("too few labels in", argv[2]);
        fclose(f);
    }
    double sum = 0;
    int k = 0;
    for (const cJSON *s = samples->child; s; s = s->next, k++) {
        const cJSON *files = cJSON_GetObjectItem(s, "files"), *shapes = cJSON_GetObjectItem(s, "shapes"),
                    *idx = cJSON_GetObjectItem(s, "sample");
        if (!cJSON_IsNumber(idx) || idx->valueint != k || !cJSON_IsArray(cJSON_GetObjectItem(s, "inputs")) ||
            !cJSON_IsString(cJSON_GetObjectItem(s, "input")) || !cJSON_IsArray(files) || !cJSON_IsArray(shapes) ||
            cJSON_GetArraySize(files) != cJSON_GetArraySize(outs) ||
            cJSON_GetArraySize(shapes) != cJSON_GetArraySize(outs))
            return bad("a sample entry is malformed in", dir);
        const cJSON *file = files->child, *shape = shapes->child;
        if (!cJSON_IsString(file))
            return bad("an output entry is malformed in", dir);
        char golden[8192];
        snprintf(golden, sizeof golden, "%s/%s", ref->valuestring, file->valuestring);
        rd_tensor t, g;
        if (load(dir, file->valuestring, shape, &t) || load(dir, golden, shape, &g))
            return 2;
        const float *y = t.data, *r = g.data;
        int64_t n = rd_tensor_numel(&t);
        if (top1) {
            int64_t best = 0;
            for (int64_t i = 1; i < n; i++)
                if (y[i] > y[best])
                    best = i;
            sum += best == labels[k];
        } else {
            double rt = 0, rr = 0, tt = 0;
            for (int64_t i = 0; i < n; i++) {
                rt += (double)r[i] * y[i];
                rr += (double)r[i] * r[i];
                tt += (double)y[i] * y[i];
            }
            sum += rr > 0 && tt > 0 ? rt / sqrt(rr * tt) : 0;
        }
        rd_tensor_fini(&t);
        rd_tensor_fini(&g);
    }
    cJSON_Delete(root);
    free(labels);
    printf("scored %d samples\n%.9g\n", n_samples, n_samples ? sum / n_samples : 0.0);
    return 0;
}
