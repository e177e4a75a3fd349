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
