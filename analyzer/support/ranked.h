/* ranked.h: items listed by a key, highest first, ties in their original order (detections by score, images
   by the accuracy they lost): one total order, so the list is the same whatever qsort does with ties. */
#ifndef RD_AN_RANKED_H
#define RD_AN_RANKED_H

#include <stddef.h>

/** An item's key and its position; it may begin a larger struct (sorted through it). */
typedef struct an_ranked {
    double key;
    size_t pos;
} an_ranked;

/**
 * qsort's comparator for an array of an_ranked, or of structs whose first member is one: the higher key
 * first, then the lower position.
 */
int an_ranked_cmp(const void *a, const void *b);

#endif
