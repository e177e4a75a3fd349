/* array_grow.h: room for one more element at the end of a growing array (doubling its capacity). */
#ifndef RD_AN_ARRAY_GROW_H
#define RD_AN_ARRAY_GROW_H

#include "rknn_diag/simulator.h"

/**
 * Makes (*items)[n] writable: when n == *cap, reallocates the array items points to (a T **) to twice its
 * capacity (first when it has none) of elements of elem bytes and updates *cap. RD_E_NOMEM ("out of
 * memory"), the array untouched, when that cannot be had.
 */
rd_status an_array_grow(void *items, size_t *cap, size_t n, size_t elem, size_t first, rd_error *err);

#endif
