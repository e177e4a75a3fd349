/* json_out.c: JSON text out of cJSON trees, always valid UTF-8. */
#include "json_out.h"

#include "rknn_diag/simulator.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

char *an_json_text(const cJSON *root)
{
    char *raw = root ? cJSON_Print(root) : NULL;
    if (!raw)
        return NULL;
    char *text = rd_text_json_safe(raw, strlen(raw), NULL);
    free(raw);
    return text;
}

bool an_json_add(cJSON *obj, const char *key, cJSON *item, bool *ok)
{
    if (!obj || !item || !cJSON_AddItemToObject(obj, key, item)) {
        cJSON_Delete(item);
        *ok = false;
    }
    return *ok;
}

bool an_json_push(cJSON *arr, cJSON *item, bool *ok)
{
    if (!arr || !item || !cJSON_AddItemToArray(arr, item)) {
        cJSON_Delete(item);
        *ok = false;
    }
    return *ok;
}

cJSON *an_json_number_or_null(double v)
{
    return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

bool an_json_add_str(cJSON *obj, const char *key, const char *s, bool *ok)
{
    return an_json_add(obj, key, cJSON_CreateString(s), ok);
}

bool an_json_add_num(cJSON *obj, const char *key, double v, bool *ok)
{
    return an_json_add(obj, key, cJSON_CreateNumber(v), ok);
}

bool an_json_add_finite(cJSON *obj, const char *key, double v, bool *ok)
{
    return an_json_add(obj, key, an_json_number_or_null(v), ok);
}

bool an_json_add_bool(cJSON *obj, const char *key, bool v, bool *ok)
{
    return an_json_add(obj, key, cJSON_CreateBool(v), ok);
}

bool an_json_add_null(cJSON *obj, const char *key, bool *ok)
{
    return an_json_add(obj, key, cJSON_CreateNull(), ok);
}

/* Created, attached, then returned: an_json_add deletes what it could not attach, so a container is only
   returned once it belongs to the tree (never a pointer to freed memory). */
static cJSON *attached(cJSON *parent, const char *key, cJSON *item, bool *ok)
{
    bool added = key ? an_json_add(parent, key, item, ok) : an_json_push(parent, item, ok);
    return added && *ok ? item : NULL;
}

cJSON *an_json_add_object(cJSON *obj, const char *key, bool *ok)
{
    return attached(obj, key, cJSON_CreateObject(), ok);
}

cJSON *an_json_add_array(cJSON *obj, const char *key, bool *ok)
{
    return attached(obj, key, cJSON_CreateArray(), ok);
}

cJSON *an_json_push_object(cJSON *arr, bool *ok)
{
    return attached(arr, NULL, cJSON_CreateObject(), ok);
}

cJSON *an_json_push_array(cJSON *arr, bool *ok)
{
    return attached(arr, NULL, cJSON_CreateArray(), ok);
}

rd_status an_json_status(bool ok, const char *what, rd_error *err)
{
    return ok ? RD_OK : rd_errorf(err, RD_E_NOMEM, "out of memory (%s)", what);
}

bool an_json_print(FILE *f, cJSON *root)
{
    char *text = an_json_text(root);
    cJSON_Delete(root);
    if (text)
        fprintf(f, "%s\n", text);
    free(text);
    return text != NULL;
}

rd_status an_json_save(const char *path, const cJSON *doc, rd_error *err)
{
    char *text = an_json_text(doc);
    if (!text)
        return rd_errorf(err, RD_E_NOMEM, "out of memory writing %s", path);
    size_t n = strlen(text);
    rd_atomic_file *f;
    rd_status st = rd_atomic_file_open(path, NULL, &f, err);
    if (st == RD_OK) {
        st = rd_atomic_file_write(f, text, n, err);
        if (st == RD_OK)
            st = rd_atomic_file_write(f, "\n", 1, err);
        if (st == RD_OK)
            st = rd_atomic_file_commit(f, err);
        else
            rd_atomic_file_abort(f);
    }
    free(text);
    return st;
}

rd_status an_json_save_in(cJSON *root, const char *dir, const char *name, rd_error *err)
{
    char path[4200];
    rd_status st = (size_t)snprintf(path, sizeof path, "%s/%s", dir, name) < sizeof path
                       ? an_json_save(path, root, err)
                       : rd_errorf(err, RD_E_INVAL, "path too long: %s/%s", dir, name);
    cJSON_Delete(root);
    return st;
}
