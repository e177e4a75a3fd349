/*
 * det_annot.c: COCO instances JSON (through cJSON) and YOLO txt labels into ground-truth boxes, with
 * every check a wrong or hostile file needs: sizes bounded before parsing, types checked member by
 * member, ids unique and resolved, boxes finite and inside their image.
 */
#include "det_annot.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define YOLO_MAX_LINE 4096

void an_annot_fini(an_annot *a)
{
    for (size_t i = 0; i < a->n_images; i++)
        free(a->images[i].file_name);
    for (size_t i = 0; i < a->n_categories; i++)
        free(a->categories[i].name);
    free(a->images);
    free(a->categories);
    free(a->gts);
    memset(a, 0, sizeof *a);
}

/* A member that must be an integer (a JSON number with no fraction, within int64 / int). */
static bool json_int(const cJSON *o, const char *key, int64_t min, int64_t max, int64_t *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble != floor(v->valuedouble) ||
        v->valuedouble < (double)min || v->valuedouble > (double)max || v->valuedouble >= 0x1p63)
        return false; /* (double)INT64_MAX is 2^63, beyond int64: refused whatever max says */
    *out = (int64_t)v->valuedouble;
    return true;
}

static int cmp_cat(const void *a, const void *b)
{
    const an_annot_category *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

static int cmp_img(const void *a, const void *b)
{
    const an_annot_image *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s);
    char *d = malloc(n + 1);
    if (d)
        memcpy(d, s, n + 1);
    return d;
}

/* The list key of a COCO file (name), what: "an array of {...}": at most max entries (RD_E_LIMIT), at least one
   when non_empty; items (a T **) gets room for them, elem bytes each, zeroed. */
static rd_status coco_list(const cJSON *arr, const char *name, const char *key, const char *what, bool non_empty,
                           size_t max, size_t elem, void *items, rd_error *err)
{
    if (!cJSON_IsArray(arr) || (non_empty && cJSON_GetArraySize(arr) == 0))
        return rd_errorf(err, RD_E_PARSE, "%s: \"%s\" must be %s", name, key, what);
    size_t n = (size_t)cJSON_GetArraySize(arr);
    if (n > max)
        return rd_errorf(err, RD_E_LIMIT, "%s: %zu %s, more than the %zu allowed", name, n, key, max);
    void *room = calloc(n + 1, elem);
    if (!room)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    memcpy(items, &room, sizeof room); /* items is a T **: written without aliasing it as void ** */
    return RD_OK;
}

static rd_status parse_images(const cJSON *arr, const char *name, an_annot *out, rd_error *err)
{
    rd_status st = coco_list(arr, name, "images", "an array of {id, file_name, width, height}", false,
                             AN_ANNOT_MAX_OBJECTS, sizeof *out->images, &out->images, err);
    if (st != RD_OK)
        return st;
    size_t i = 0;
    const cJSON *o;
    cJSON_ArrayForEach(o, arr)
    {
        an_annot_image *im = &out->images[i];
        const cJSON *fn = cJSON_GetObjectItemCaseSensitive(o, "file_name");
        if (!cJSON_IsObject(o) || !json_int(o, "id", INT64_MIN / 2, INT64_MAX / 2, &im->id))
            return rd_errorf(err, RD_E_PARSE, "%s: images[%zu].id: expected an integer", name, i);
        if (!cJSON_IsString(fn) || !fn->valuestring[0])
            return rd_errorf(err, RD_E_PARSE, "%s: images[%zu].file_name: expected a non-empty string", name, i);
        if (!json_int(o, "width", 1, 1 << 20, &im->width) || !json_int(o, "height", 1, 1 << 20, &im->height))
            return rd_errorf(err, RD_E_PARSE, "%s: images[%zu] (%s): width and height must be integers 1..1048576",
                             name, i, fn->valuestring);
        if (!(im->file_name = dup_str(fn->valuestring)))
            return rd_errorf(err, RD_E_NOMEM, "out of memory");
        out->n_images = ++i;
    }
    qsort(out->images, out->n_images, sizeof *out->images, cmp_img);
    for (size_t k = 1; k < out->n_images; k++)
        if (out->images[k].id == out->images[k - 1].id)
            return rd_errorf(err, RD_E_PARSE, "%s: image id %lld appears twice (%s, %s)", name,
                             (long long)out->images[k].id, out->images[k - 1].file_name, out->images[k].file_name);
    return RD_OK;
}

static rd_status parse_categories(const cJSON *arr, const char *name, an_annot *out, rd_error *err)
{
    rd_status st = coco_list(arr, name, "categories", "a non-empty array of {id, name}", true, 100000,
                             sizeof *out->categories, &out->categories, err);
    if (st != RD_OK)
        return st;
    size_t i = 0;
    const cJSON *o;
    cJSON_ArrayForEach(o, arr)
    {
        int64_t id;
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(o, "name");
        if (!cJSON_IsObject(o) || !json_int(o, "id", -1000000000, 1000000000, &id))
            return rd_errorf(err, RD_E_PARSE, "%s: categories[%zu].id: expected an integer", name, i);
        out->categories[i].id = (int)id;
        if (!(out->categories[i].name = dup_str(cJSON_IsString(nm) ? nm->valuestring : "")))
            return rd_errorf(err, RD_E_NOMEM, "out of memory");
        out->n_categories = ++i;
    }
    qsort(out->categories, out->n_categories, sizeof *out->categories, cmp_cat);
    for (size_t k = 1; k < out->n_categories; k++)
        if (out->categories[k].id == out->categories[k - 1].id)
            return rd_errorf(err, RD_E_PARSE, "%s: category id %d appears twice", name, out->categories[k].id);
    return RD_OK;
}

static rd_status parse_annotations(const cJSON *arr, const char *name, an_annot *out, rd_error *err)
{
    rd_status st =
        coco_list(arr, name, "annotations", "an array", false, AN_ANNOT_MAX_OBJECTS, sizeof *out->gts, &out->gts, err);
    if (st != RD_OK)
        return st;
    size_t i = 0;
    const cJSON *o;
    cJSON_ArrayForEach(o, arr)
    {
        an_gt *g = &out->gts[i];
        int64_t cat, crowd = 0;
        if (!cJSON_IsObject(o) || !json_int(o, "image_id", INT64_MIN / 2, INT64_MAX / 2, &g->image))
            return rd_errorf(err, RD_E_PARSE, "%s: annotations[%zu].image_id: expected an integer", name, i);
        if (!json_int(o, "category_id", -1000000000, 1000000000, &cat))
            return rd_errorf(err, RD_E_PARSE, "%s: annotations[%zu].category_id: expected an integer", name, i);
        g->category = (int)cat;
        const cJSON *bb = cJSON_GetObjectItemCaseSensitive(o, "bbox");
        double v[4];
        bool ok = cJSON_IsArray(bb) && cJSON_GetArraySize(bb) == 4;
        for (int k = 0; ok && k < 4; k++) {
            const cJSON *x = cJSON_GetArrayItem(bb, k);
            ok = cJSON_IsNumber(x) && isfinite(x->valuedouble);
            v[k] = ok ? x->valuedouble : 0;
        }
        if (!ok || v[2] < 0 || v[3] < 0)
            return rd_errorf(err, RD_E_PARSE,
                             "%s: annotations[%zu].bbox: expected [x, y, width, height], four finite "
                             "numbers with width and height >= 0",
                             name, i);
        g->box = (an_box){v[0], v[1], v[2], v[3]};
        const cJSON *area = cJSON_GetObjectItemCaseSensitive(o, "area");
        g->area = cJSON_IsNumber(area) && isfinite(area->valuedouble) ? area->valuedouble : v[2] * v[3];
        if (cJSON_GetObjectItemCaseSensitive(o, "iscrowd") && !json_int(o, "iscrowd", 0, 1, &crowd))
            return rd_errorf(err, RD_E_PARSE, "%s: annotations[%zu].iscrowd: expected 0 or 1", name, i);
        g->crowd = crowd == 1;
        an_annot_category key = {.id = g->category};
        if (!bsearch(&key, out->categories, out->n_categories, sizeof key, cmp_cat))
            return rd_errorf(err, RD_E_PARSE, "%s: annotations[%zu].category_id %d is not in \"categories\"", name, i,
                             g->category);
        an_annot_image ikey = {.id = g->image};
        const an_annot_image *im = bsearch(&ikey, out->images, out->n_images, sizeof ikey, cmp_img);
        if (!im)
            return rd_errorf(err, RD_E_PARSE, "%s: annotations[%zu].image_id %lld is not in \"images\"", name, i,
                             (long long)g->image);
        const double s = AN_ANNOT_BOX_SLACK;
        if (v[0] < -s || v[1] < -s || v[0] + v[2] > (double)im->width + s || v[1] + v[3] > (double)im->height + s)
            return rd_errorf(err, RD_E_PARSE,
                             "%s: annotations[%zu].bbox [%g, %g, %g, %g] lies outside image %lld "
                             "(%s, %lldx%lld)",
                             name, i, v[0], v[1], v[2], v[3], (long long)im->id, im->file_name, (long long)im->width,
                             (long long)im->height);
        out->n_gts = ++i;
    }
    return RD_OK;
}

rd_status an_coco_annot_parse(const char *buf, size_t len, const char *name, an_annot *out, rd_error *err)
{
    memset(out, 0, sizeof *out);
    if (len > AN_ANNOT_MAX_BYTES)
        return rd_errorf(err, RD_E_LIMIT, "%s: %zu bytes, more than the %llu allowed", name, len,
                         (unsigned long long)AN_ANNOT_MAX_BYTES);
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(buf, len, &end, false);
    if (!root) {
        if (rd_json_well_formed(buf, len, CJSON_NESTING_LIMIT))
            return rd_errorf(err, RD_E_NOMEM, "out of memory reading %s", name);
        size_t at = end && end >= buf ? (size_t)(end - buf) : 0;
        return rd_errorf(err, RD_E_PARSE, "%s: not valid JSON (near byte %zu)", name, at);
    }
    rd_status st = RD_OK;
    if (!cJSON_IsObject(root))
        st = rd_errorf(err, RD_E_PARSE,
                       "%s: expected a JSON object with images, annotations and categories "
                       "(COCO instances format)",
                       name);
    if (st == RD_OK)
        st = parse_images(cJSON_GetObjectItemCaseSensitive(root, "images"), name, out, err);
    if (st == RD_OK)
        st = parse_categories(cJSON_GetObjectItemCaseSensitive(root, "categories"), name, out, err);
    if (st == RD_OK)
        st = parse_annotations(cJSON_GetObjectItemCaseSensitive(root, "annotations"), name, out, err);
    cJSON_Delete(root);
    if (st != RD_OK)
        an_annot_fini(out);
    return st;
}

rd_status an_coco_annot_load(const char *path, an_annot *out, rd_error *err)
{
    memset(out, 0, sizeof *out);
    char *buf = NULL;
    size_t len = 0;
    rd_status st = rd_file_read_all(NULL, path, AN_ANNOT_MAX_BYTES, &buf, &len, err);
    if (st != RD_OK)
        return st;
    st = an_coco_annot_parse(buf, len, path, out, err);
    free(buf);
    return st;
}

/* True when path ends with name at a component boundary ("a/b/c.jpg" ends with "c.jpg" and "b/c.jpg"). */
static bool path_ends_with(const char *path, const char *name)
{
    size_t lp = strlen(path), ln = strlen(name);
    if (ln > lp || strcmp(path + lp - ln, name) != 0)
        return false;
    return ln == lp || path[lp - ln - 1] == '/';
}

const an_annot_image *an_annot_find_image(const an_annot *a, const char *path)
{
    const an_annot_image *found = NULL;
    for (size_t i = 0; i < a->n_images; i++)
        if (path_ends_with(path, a->images[i].file_name)) {
            /* the longest file_name that matches wins ("val/1.jpg" over "1.jpg") */
            if (!found || strlen(a->images[i].file_name) > strlen(found->file_name))
                found = &a->images[i];
        }
    return found;
}

/* One number of a YOLO line: strtod over a NUL-terminated field. */
static bool field_double(char **cur, double *out)
{
    char *p = *cur;
    while (*p == ' ' || *p == '\t')
        p++;
    if (!*p)
        return false;
    char *end = NULL;
    double v = strtod(p, &end);
    if (end == p || (*end && *end != ' ' && *end != '\t') || !isfinite(v))
        return false;
    *cur = end;
    *out = v;
    return true;
}

rd_status an_yolo_labels_parse(const char *buf, size_t len, const char *name, int64_t img_w, int64_t img_h,
                               int n_classes, int64_t image, an_gt **gts, size_t *n_gts, rd_error *err)
{
    if (len > AN_YOLO_LABEL_MAX_BYTES)
        return rd_errorf(err, RD_E_LIMIT, "%s: %zu bytes, more than the %llu allowed for one label file", name, len,
                         (unsigned long long)AN_YOLO_LABEL_MAX_BYTES);
    char line[YOLO_MAX_LINE];
    size_t pos = 0;
    int lineno = 0;
    while (pos < len) {
        size_t start = pos;
        while (pos < len && buf[pos] != '\n')
            pos++;
        size_t n = pos - start;
        pos++; /* past '\n' */
        lineno++;
        if (n && buf[start + n - 1] == '\r')
            n--;
        if (n >= sizeof line)
            return rd_errorf(err, RD_E_PARSE, "%s:%d: line longer than %d bytes", name, lineno, YOLO_MAX_LINE - 1);
        memcpy(line, buf + start, n);
        line[n] = '\0';
        if (memchr(line, '\0', n))
            return rd_errorf(err, RD_E_PARSE, "%s:%d: a NUL byte in a text file", name, lineno);
        char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            continue;
        double v[5];
        int k = 0;
        while (k < 5 && field_double(&p, &v[k]))
            k++;
        while (*p == ' ' || *p == '\t')
            p++;
        if (k < 5 || *p)
            return rd_errorf(err, RD_E_PARSE,
                             "%s:%d: expected \"class cx cy w h\" (five numbers, normalised to the "
                             "image), got \"%.60s\"",
                             name, lineno, line);
        if (v[0] != floor(v[0]) || v[0] < 0 || v[0] >= n_classes)
            return rd_errorf(err, RD_E_PARSE, "%s:%d: class %g is not an integer in 0..%d (--classes %d)", name, lineno,
                             v[0], n_classes - 1, n_classes);
        const double s = AN_YOLO_BOX_SLACK;
        double x0 = v[1] - v[3] / 2, y0 = v[2] - v[4] / 2, x1 = v[1] + v[3] / 2, y1 = v[2] + v[4] / 2;
        if (v[3] < 0 || v[4] < 0 || x0 < -s || y0 < -s || x1 > 1 + s || y1 > 1 + s)
            return rd_errorf(err, RD_E_PARSE,
                             "%s:%d: box (cx %g, cy %g, w %g, h %g) lies outside the image (normalised "
                             "coordinates must stay within 0..1)",
                             name, lineno, v[1], v[2], v[3], v[4]);
        if (*n_gts >= AN_ANNOT_MAX_OBJECTS)
            return rd_errorf(err, RD_E_LIMIT, "%s: more than %zu objects", name, AN_ANNOT_MAX_OBJECTS);
        if ((*n_gts & (*n_gts + 1)) == 0 || *n_gts == 0) { /* grow at 0, 1, 3, 7, ...: powers of two */
            an_gt *g = realloc(*gts, (2 * *n_gts + 2) * sizeof *g);
            if (!g)
                return rd_errorf(err, RD_E_NOMEM, "out of memory");
            *gts = g;
        }
        an_gt *g = &(*gts)[(*n_gts)++];
        double w = (double)img_w, h = (double)img_h;
        g->image = image;
        g->category = (int)v[0];
        g->box = (an_box){x0 * w, y0 * h, v[3] * w, v[4] * h};
        g->area = g->box.w * g->box.h;
        g->crowd = false;
    }
    return RD_OK;
}
