/* blas_threads.c: OpenBLAS thread count (see blas_threads.h). */
#include "blas_threads.h"

#include <cblas.h>

void blas_use_threads(int n)
{
    if (n < 1)
        n = 1;
    if (openblas_get_num_threads() != n)
        openblas_set_num_threads(n);
}
