/*
 * blas_threads.h: keeps OpenBLAS single-threaded for the simulator's sgemm calls.
 *
 * Results must not depend on the run's thread count, and OpenBLAS's own threading does change them:
 * measured with OpenBLAS 0.3.21 (Zen kernels), the super_resolution 1->64 5x5 conv differs by 1 ulp in
 * 15% of its outputs between 1 and 2 BLAS threads (the M/N split changes the kernel's edge paths).
 * Left alone OpenBLAS also starts one spinning thread per core. So every op that calls BLAS asks for
 * one thread here first; parallelism, when added, must split whole sgemm calls (im2col tiles, batch,
 * groups) across our own threads so each call sees the same operands whatever the count.
 * The kernels run on one thread today; parallel tiles are future work.
 */
#ifndef RD_KERNELS_BLAS_THREADS_H
#define RD_KERNELS_BLAS_THREADS_H

/** Makes OpenBLAS use one thread (process-wide setting; cheap when already set). */
void blas_use_one_thread(void);

#endif
