/* test_eval_shared.c: the SSD-style decoder on ../shared/models/ultraface_rfb320 finds the faces of the shared
   photos (fixtures/shared_photos_faces.json, boxed by hand) at fp32 and int8: AP at IoU 0.5 is 1 in both, and
   the two faces are detected at IoU >= 0.5 by each column. */
#include "cli_capture.h"
#include "rd_test.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const photos[] = {"astronaut.png", "camera.png", "chelsea.png", "china.jpg",
                                     "coffee.png",    "dog.jpg",    "flower.jpg",  "hubble_deep_field.jpg",
                                     "raccoon.png",   "rocket.jpg"};

static void test_ultraface_faces(void)
{
    const char *shared = rd_test_shared_dir();
    char *dir = rd_test_tmpdir("eval_ultraface");
    char ds[4200], model[4200], annot[4200], out[4200], list[8192] = "";
    snprintf(ds, sizeof ds, "%s/photos.txt", dir);
    snprintf(model, sizeof model, "%s/models/ultraface_rfb320/model.onnx", shared);
    snprintf(annot, sizeof annot, "%s/fixtures/shared_photos_faces.json", rd_test_source_dir());
    snprintf(out, sizeof out, "%s/out", dir);
    for (size_t i = 0; i < sizeof photos / sizeof photos[0]; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s/images/%s\n", shared, photos[i]);
    rd_test_write_text(ds, list);
    rd_cli_result r = rd_test_cli("eval", model, "--task", "detect", "--decoder", "ssd", "--annotations", annot,
                                  "--dataset", ds, "--mean", "127,127,127", "--std", "128,128,128", "-o", out, NULL);
    CU_ASSERT_EQUAL_FATAL(r.code, 0);
    fputs(r.out, stderr);
    rd_test_cli_free(&r);
    char path[4300];
    snprintf(path, sizeof path, "%s/report.json", out);
    size_t len = 0;
    char *text = rd_test_read_file(path, &len);
    cJSON *rep = text ? cJSON_Parse(text) : NULL;
    CU_ASSERT_PTR_NOT_NULL_FATAL(rep);
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(rep, "metrics");
    static const char *const cols[] = {"fp32", "fp16", "int8"};
    for (int j = 0; j < 3; j++) {
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(m, cols[j]);
        double ap50 = cJSON_GetObjectItemCaseSensitive(o, "map50")->valuedouble;
        double ap = cJSON_GetObjectItemCaseSensitive(o, "map")->valuedouble;
        CU_ASSERT_DOUBLE_EQUAL(ap50, 1.0, 1e-9);
        CU_ASSERT(ap > 0.5 && ap <= 1.0);
    }
    cJSON_Delete(rep);
    free(text);
    /* each face found by each column in the records (a box of category 1 at IoU >= 0.5, score >= 0.5) */
    snprintf(path, sizeof path, "%s/partial.json", out);
    text = rd_test_read_file(path, &len);
    cJSON *p = text ? cJSON_Parse(text) : NULL;
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    const cJSON *rec;
    int faces_found = 0;
    cJSON_ArrayForEach(rec, cJSON_GetObjectItemCaseSensitive(p, "records"))
    {
        const cJSON *g;
        cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(rec, "gt"))
        {
            double gx = cJSON_GetArrayItem(g, 1)->valuedouble, gy = cJSON_GetArrayItem(g, 2)->valuedouble;
            double gw = cJSON_GetArrayItem(g, 3)->valuedouble, gh = cJSON_GetArrayItem(g, 4)->valuedouble;
            for (int j = 0; j < 3; j++) {
                bool hit = false;
                const cJSON *d;
                cJSON_ArrayForEach(d, cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(rec, "det"), j))
                {
                    double x = cJSON_GetArrayItem(d, 1)->valuedouble, y = cJSON_GetArrayItem(d, 2)->valuedouble;
                    double w = cJSON_GetArrayItem(d, 3)->valuedouble, h = cJSON_GetArrayItem(d, 4)->valuedouble;
                    double s = cJSON_GetArrayItem(d, 5)->valuedouble;
                    double iw = (x + w < gx + gw ? x + w : gx + gw) - (x > gx ? x : gx);
                    double ih = (y + h < gy + gh ? y + h : gy + gh) - (y > gy ? y : gy);
                    double inter = iw > 0 && ih > 0 ? iw * ih : 0;
                    if (s >= 0.5 && inter / (w * h + gw * gh - inter) >= 0.5)
                        hit = true;
                }
                CU_ASSERT(hit);
                faces_found += hit;
            }
        }
    }
    CU_ASSERT_EQUAL(faces_found, 2 * 3);
    cJSON_Delete(p);
    free(text);
    free(dir);
}

RD_TEST_REGISTER(reg_eval_shared)
{
    RD_SUITE("eval_shared",
             {"ultraface finds the faces of the shared photos at fp32, fp16, int8", test_ultraface_faces});
}
