/* json_out.c: JSON text out of cJSON trees, always valid UTF-8. */
#include "json_out.h"

#include "rknn_diag/simulator.h"

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
