/* tensor_dump.c: numbered .npy files plus index.json, written as tensors are produced. */
#include "json_out.h"
#include "tensor_dump.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

rd_status an_mkdirs(const char *path, rd_error *err)
{
    return rd_dir_make(path, RD_DIR_PARENTS, err);
}

rd_status an_dump_open(an_dump *d, const char *dir, rd_error *err)
{
    memset(d, 0, sizeof *d);
    rd_status st = an_mkdirs(dir, err);
    if (st != RD_OK)
        return st;
    d->dir = strdup(dir);
    if (!d->dir)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    return RD_OK;
}

rd_status an_dump_add(an_dump *d, const char *name, const rd_tensor *t, rd_error *err)
{
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 64;
        an_dump_entry *grown = realloc(d->entries, cap * sizeof *grown);
        if (!grown)
            return rd_errorf(err, RD_E_NOMEM, "out of memory");
        d->entries = grown;
        d->cap = cap;
    }
    an_dump_entry *e = &d->entries[d->n];
    memset(e, 0, sizeof *e);
    snprintf(e->file, sizeof e->file, "%zu.npy", d->n);
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", d->dir, e->file);
    rd_status st = rd_npy_save(path, t, err);
    if (st != RD_OK)
        return rd_error_prefix(err, "tensor '%s'", name);
    e->name = strdup(name);
    if (!e->name)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    e->dtype = t->dtype;
    e->rank = t->rank;
    memcpy(e->dims, t->dims, sizeof e->dims);
    d->n++;
    return RD_OK;
}

rd_status an_dump_close(an_dump *d, rd_error *err)
{
    cJSON *list = cJSON_CreateArray();
    if (!list)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    for (size_t i = 0; i < d->n; i++) {
        const an_dump_entry *e = &d->entries[i];
        cJSON *o = cJSON_CreateObject();
        cJSON *shape = cJSON_CreateArray();
        cJSON_AddItemToArray(list, o);
        cJSON_AddStringToObject(o, "name", e->name);
        cJSON_AddStringToObject(o, "file", e->file);
        cJSON_AddStringToObject(o, "dtype", rd_dtype_name(e->dtype));
        for (int k = 0; k < e->rank; k++)
            cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)e->dims[k]));
        cJSON_AddItemToObject(o, "shape", shape);
    }
    char *text = an_json_text(list);
    cJSON_Delete(list);
    if (!text)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    char path[4200];
    snprintf(path, sizeof path, "%s/index.json", d->dir);
    rd_status st = rd_file_write_atomic(path, text, strlen(text), NULL, err);
    free(text);
    return st;
}

void an_dump_fini(an_dump *d)
{
    for (size_t i = 0; i < d->n; i++)
        free(d->entries[i].name);
    free(d->entries);
    free(d->dir);
    memset(d, 0, sizeof *d);
}
