/*
 * blas_threads.h: the thread count OpenBLAS uses for the simulator's sgemm calls.
 *
 * OpenBLAS keeps its pool size process-wide; left alone it starts one spinning thread per core, which
 * with the run's threads = 1 only costs time (sched_yield storms on a shared machine). Every op that
 * calls BLAS sets it from sim_op_ctx.threads first. OpenBLAS splits sgemm over M and N, never K, so
 * results are the same for any count.
 */
#ifndef RD_KERNELS_BLAS_THREADS_H
#define RD_KERNELS_BLAS_THREADS_H

/** Makes OpenBLAS use n threads (n < 1 means 1); cheap when already set. */
void blas_use_threads(int n);

#endif
