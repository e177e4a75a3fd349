/* blas_threads.c: OpenBLAS kept single-threaded, set once per process (see blas_threads.h for why). */
#include "blas_threads.h"

#include <cblas.h>
#include <pthread.h>

static void set_one_thread(void)
{
    openblas_set_num_threads(1);
}

void blas_use_one_thread(void)
{
    /* a process-wide setting made once: pthread_once is the one guard that is safe when several workers
       reach their first dgemm together */
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, set_one_thread);
}

const char *rd_blas_kernel(void)
{
    return openblas_get_corename();
}
