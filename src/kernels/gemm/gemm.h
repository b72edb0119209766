/*
 * gemm.h — the single-precision matrix product every GEMM-based algorithm calls
 * (im2col, MEC, Winograd, FFT-free lowering paths). Row-major:
 *   C[m][n] = sum_k op(A)[m][k] * op(B)[k][n]  (+ C when accumulate)
 * op(A) is A or A^T (trans_a), likewise B. Leading dimensions are in elements.
 * Products of at least 512 columns run on our own packed GEMM (gemm-packed.c), narrower ones
 * on OpenBLAS's cblas_sgemm over fixed tiles of C shared out on the caller's threads (each
 * measured the faster on its side, docs/kernels.md); FCONV_GEMM=packed, a size beyond
 * BLAS's int, or an OpenBLAS running no AVX2 kernels under our AVX2 or AVX-512 ones (a CPU
 * model it does not know: gemm-blas.c), sends everything to ours. Neither the backend nor
 * any summation order depends on the thread count, so results are identical for any count.
 */
#ifndef FCONV_GEMM_H
#define FCONV_GEMM_H

#include <stddef.h>

void fconv_gemm(int threads, int trans_a, int trans_b, size_t m, size_t n, size_t k,
                const float *a, size_t lda, const float *b, size_t ldb, int accumulate, float *c,
                size_t ldc);

/* Estimated seconds of one single-threaded backend call of m x n x k, and of fconv_gemm on
 * `threads` threads (its fixed tiles shared out): for the algorithms' cost models. */
double fconv_gemm_call_seconds(double m, double n, double k);
double fconv_gemm_seconds(double m, double n, double k, int threads);

/* Set the BLAS up once, before fastconv's threads run: single-threaded, its idle thread pool
 * shut down (gemm-blas.c says why). Every plan calls it; later calls cost a pthread_once. */
void fconv_gemm_init(void);

/* fconv_gemm on fastconv's own packed micro-kernel of the given ISA table (gemm-packed.c):
 * same contract, fixed tiles, results independent of the thread count. */
struct fconv_kernels;
void fconv_gemm_packed(const struct fconv_kernels *kern, int threads, int trans_a, int trans_b, size_t m,
                       size_t n, size_t k, const float *a, size_t lda, const float *b, size_t ldb,
                       int accumulate, float *c, size_t ldc);

/* A matrix packed once for many products (a convolution's weights, at plan time):
 * fconv_gemm_pack_a writes the m x k row-major a (leading dimension lda) into `packed`,
 * fconv_gemm_packed_a_floats(kern, m, k) floats (64-byte aligned, caller's), in the
 * micro-kernel's panels of that ISA table; fconv_gemm_prepacked then computes
 * C = A B (m x n, no accumulate) from it as fconv_gemm_packed would, bit for bit, without
 * packing A again. flags: FCONV_PREPACKED_STREAM_C, C's vector-aligned tiles leave through
 * non-temporal stores (fenced before it returns) where k takes one pass: for a C that is not
 * read again soon and would only push everything else out of the caches;
 * FCONV_PREPACKED_B_FROM_MEMORY, B is not in the caches (read once, as a batch's input past
 * them): the tiles ask for the next B sliver's rows ahead. Neither changes a bit of C.
 * Epilogue: C[i][j] = act(C[i][j] + bias[i]) (bias NULL: none; relu: max(0, .);
 * fconv_bias_relu_rows' bits), applied by the micro-kernel as it stores C on the last k
 * step, streamed or not. */
enum { FCONV_PREPACKED_STREAM_C = 1, FCONV_PREPACKED_B_FROM_MEMORY = 2 };
size_t fconv_gemm_packed_a_floats(const struct fconv_kernels *kern, size_t m, size_t k);
/* How fconv_gemm_prepacked's write of C is charged by its cost. */
enum fconv_gemm_c_write {
    FCONV_GEMM_C_COPIED,   /* at the rate of a copy (fconv_stream_seconds) */
    FCONV_GEMM_C_HIDDEN,   /* not at all: it goes on behind the products (the caller knows C
                              and the B it reads stay cached) */
    FCONV_GEMM_C_STREAMED, /* streamed (FCONV_PREPACKED_STREAM_C): behind the products
                              up to the bandwidth of non-temporal stores, where k allows
                              streaming (else as COPIED) */
};
/* Estimated seconds of fconv_gemm_prepacked on `threads` threads, for cost models. */
double fconv_gemm_prepacked_seconds(const struct fconv_kernels *kern, double m, double n, double k, int threads,
                                    enum fconv_gemm_c_write c_write);
void fconv_gemm_pack_a(const struct fconv_kernels *kern, size_t m, size_t k, const float *a, size_t lda,
                       float *packed);
void fconv_gemm_prepacked(const struct fconv_kernels *kern, int threads, size_t m, size_t n, size_t k,
                          const float *a_packed, const float *b, size_t ldb, float *c, size_t ldc, unsigned flags,
                          const float *bias, int relu);

#endif
