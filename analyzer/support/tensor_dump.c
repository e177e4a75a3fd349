/* tensor_dump.c: numbered .npy files plus index.json, written as tensors are produced. */
#include "array_grow.h"
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
    if (an_array_grow(&d->entries, &d->cap, d->n, sizeof *d->entries, 64, err) != RD_OK)
        return RD_E_NOMEM; /* err says so */
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
    bool ok = true;
    cJSON *list = cJSON_CreateArray();
    for (size_t i = 0; list && ok && i < d->n; i++) {
        const an_dump_entry *e = &d->entries[i];
        cJSON *o = cJSON_CreateObject();
        if (!an_json_push(list, o, &ok))
            break;
        an_json_add(o, "name", cJSON_CreateString(e->name), &ok);
        an_json_add(o, "file", cJSON_CreateString(e->file), &ok);
        an_json_add(o, "dtype", cJSON_CreateString(rd_dtype_name(e->dtype)), &ok);
        cJSON *shape = cJSON_CreateArray();
        if (!an_json_add(o, "shape", shape, &ok))
            break;
        for (int k = 0; k < e->rank; k++)
            an_json_push(shape, cJSON_CreateNumber((double)e->dims[k]), &ok);
    }
    if (!list || !ok) { /* a tree missing entries is never written */
        cJSON_Delete(list);
        return rd_errorf(err, RD_E_NOMEM, "%s/index.json: out of memory", d->dir);
    }
    return an_json_save_in(list, d->dir, "index.json", err);
}

void an_dump_fini(an_dump *d)
{
    for (size_t i = 0; i < d->n; i++)
        free(d->entries[i].name);
    free(d->entries);
    free(d->dir);
    memset(d, 0, sizeof *d);
}
