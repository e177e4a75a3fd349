/* blas_threads.c: OpenBLAS kept single-threaded (see blas_threads.h for why). */
#include "blas_threads.h"

#include <cblas.h>

void blas_use_one_thread(void)
{
    if (openblas_get_num_threads() != 1)
        openblas_set_num_threads(1);
}

const char *rd_blas_kernel(void)
{
    return openblas_get_corename();
}
