/* array_grow.c: array_grow.h. */
#include "array_grow.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

rd_status an_array_grow(void *items, size_t *cap, size_t n, size_t elem, size_t first, rd_error *err)
{
    if (n < *cap)
        return RD_OK;
    size_t grown_cap = *cap ? *cap * 2 : first;
    void *old, *grown = NULL;
    memcpy(&old, items, sizeof old); /* items is a T **: its pointer, read without aliasing it as void ** */
    if (grown_cap > *cap && grown_cap <= SIZE_MAX / elem)
        grown = realloc(old, grown_cap * elem);
    if (!grown)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    memcpy(items, &grown, sizeof grown);
    *cap = grown_cap;
    return RD_OK;
}
