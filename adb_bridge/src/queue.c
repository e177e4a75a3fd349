/*
 * queue.c: room at the end of a byte queue (adb_internal.h), doubling its capacity.
 */
#include "adb_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

uint8_t *adb_queue_room(uint8_t **buf, size_t *off, size_t *len, size_t *cap, size_t n, size_t first)
{
    if (*off == *len)
        *off = *len = 0;
    if (*len + n > *cap && *off) {
        memmove(*buf, *buf + *off, *len - *off);
        *len -= *off;
        *off = 0;
    }
    if (*len + n > *cap) {
        size_t grown_cap = *cap ? *cap : first;
        while (grown_cap < *len + n)
            grown_cap *= 2;
        uint8_t *grown = realloc(*buf, grown_cap);
        if (!grown)
            return NULL;
        *buf = grown;
        *cap = grown_cap;
    }
    return *buf + *len;
}
