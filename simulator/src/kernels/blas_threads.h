/*
 * blas_threads.h: keeps OpenBLAS single-threaded for the simulator's dgemm calls.
 *
 * The int16 layers call OpenBLAS dgemm (conv_f64.c, quant16_eval.c) from tasks of our own pool, on
 * integer-valued doubles whose sums are exact (quant.h), so the split inside dgemm never changes a bit;
 * the float kernels use our own GEMM (sgemm_f32.h). Left alone OpenBLAS would start one spinning thread
 * per core for every call made from every worker of the pool, multiplying the threads the user asked for
 * with --threads. The setting is process-wide, so it is made once per process: the first BLAS-calling
 * kernel (and calibration, before its workers start) asks for it, later calls cost one pthread_once check.
 */
#ifndef RD_KERNELS_BLAS_THREADS_H
#define RD_KERNELS_BLAS_THREADS_H

/** Makes OpenBLAS use one thread, once per process (thread-safe; later calls do nothing). */
void blas_use_one_thread(void);

#endif
