/* ranked.c: the order of ranked.h. */
#include "ranked.h"

int an_ranked_cmp(const void *a, const void *b)
{
    const an_ranked *x = a, *y = b;
    if (x->key != y->key)
        return x->key > y->key ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}
