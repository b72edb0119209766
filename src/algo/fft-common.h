/*
 * fft-common.h — what the two FFT algorithms share: fast transform sizes, FFTW planning
 * behind one mutex, complex pointwise loops, and the overlap-save driver for filter2d and
 * conv1d (fft.c runs it with one tile covering the whole image, fft-tiled.c with many).
 *
 * Invariants: every FFTW plan is made with FFTW_ESTIMATE on 64-byte aligned, out-of-place
 * arrays, and executed only through the new-array functions on other 64-byte aligned
 * arrays (so FFTW's alignment rule for new-array execution holds); spectra are interleaved
 * complex float (re, im), T0 x (T1/2 + 1) of them for a T0 x T1 real transform.
 */
#ifndef FCONV_FFT_COMMON_H
#define FCONV_FFT_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include <fftw3.h>

#include "core/dispatch.h"
#include "core/internal.h"

/* Workspaces need not be aligned (fastconv.h); the FFT algorithms ask for this much extra
 * and round the base up to 64 bytes, so every buffer FFTW sees is 64-byte aligned. */
#define FCONV_FFT_ALIGN_SLACK 64

static inline void *fconv_fft_align(void *workspace) {
    uintptr_t p = (uintptr_t)workspace;
    return (void *)((p + 63) & ~(uintptr_t)63);
}

/* Largest transform extent accepted (FFTW takes int sizes). */
#define FCONV_FFT_MAX_EXTENT ((int64_t)1 << 30)

/* Smallest 2^a 3^b 5^c 7^d >= n (n >= 1): sizes FFTW transforms fastest. */
int64_t fconv_fft_fast_size(int64_t n);

/* Bytes of a T0 x T1 real buffer and of its spectrum, each rounded up to 64. */
size_t fconv_fft_real_bytes(int64_t t0, int64_t t1);
size_t fconv_fft_spectrum_bytes(int64_t t0, int64_t t1);

/* Plans for a T0 x T1 real <-> half-complex transform (rank 1 when T0 == 1), unnormalized
 * (inverse(forward(x)) = T0*T1*x). Planner calls are serialized by one mutex because the
 * FFTW planner is not thread-safe; execution (fftwf_execute_dft_*) is. NULL on failure. */
fftwf_plan fconv_fft_plan_forward(int64_t t0, int64_t t1);
fftwf_plan fconv_fft_plan_inverse(int64_t t0, int64_t t1);
void fconv_fft_destroy_plan(fftwf_plan p); /* NULL is allowed */

/* Pointwise complex products on n interleaved complex values:
 * y = a * b, y *= b, y += a * b. */
void fconv_fft_cmul(size_t n, const float *restrict a, const float *restrict b,
                    float *restrict y);
void fconv_fft_cmul_inplace(size_t n, float *restrict y, const float *restrict b);
void fconv_fft_cmac(size_t n, const float *restrict a, const float *restrict b,
                    float *restrict y);

/* Crude cost of one T0 x T1 real transform in seconds on one core (measured, see
 * docs/algorithms/fft.md). */
double fconv_fft_transform_seconds(int64_t t0, int64_t t1);

/* ---- overlap-save filter2d / conv1d ------------------------------------------------------
 * The lowered problem (filter-lowering.h): y[i][j] = sum_{a,b} kc[a][b] P[i+a][j+b] over the
 * border-extended image P (PH x PW). A tile is a T0 x T1 window of P starting at output
 * (ti*step0, tj*step1); its circular convolution with the kernel is exact on the first
 * step = T - K + 1 outputs per axis (overlap-save), which the tile writes to y. */

struct fconv_fft_tiling {
    int64_t t0, t1;          /* transform size of one tile */
    int64_t step0, step1;    /* outputs per tile: T - K + 1 */
    int64_t tiles0, tiles1;  /* tiles per axis */
    int64_t tasks;           /* channels * tiles0 * tiles1 */
    int64_t slots;           /* workers with their own buffers: min(threads, tasks) */
};

/* Tiling for tiles of T0 x T1 (each >= the kernel's extent on its axis). */
struct fconv_fft_tiling fconv_fft_filter_tiling(const fconv_plan *plan, int64_t t0, int64_t t1);

/* FCONV_OK, or FCONV_EUNSUPPORTED with why ("<name> ...") if the tiling is too large. */
fconv_status fconv_fft_filter_supports(const fconv_plan *plan, const struct fconv_fft_tiling *t,
                                       const char *name, char *why, size_t why_len);

/* Exact workspace: slack + (kernel spectrum unless pre-transformed) + slots * (real + spectrum). */
size_t fconv_fft_filter_workspace(const fconv_plan *plan, const struct fconv_fft_tiling *t);

/* Estimated seconds for one tile (load, transform, product, inverse), on one core. */
double fconv_fft_tile_seconds(int64_t t0, int64_t t1);

/* Estimated seconds (transforms, products, copies; tasks shared out on the plan's threads). */
double fconv_fft_filter_cost(const fconv_plan *plan, const struct fconv_fft_tiling *t);

/* Plan-time state: the FFTW plans, and the kernel spectrum when the weights were given. */
fconv_status fconv_fft_filter_prepare(fconv_plan *plan, const struct fconv_fft_tiling *t,
                                      const char *name);
void fconv_fft_filter_release(fconv_plan *plan);
void fconv_fft_filter_execute(const fconv_plan *plan, const float *x, const float *w, float *y,
                              void *workspace);

/* ---- the segment transforms' kernel spectra (fft-rows, fft-cols) -------------------------
 * taps + r*n (r < count): the spectrum of kernel line r (kc[r*len .. r*len + len), len <= n)
 * as the kernels of core/dispatch.h (fconv_fft_rows_inverse_fn) take it: slot 0 holds
 * K[0] / n and K[n/2] / n, slot k the conjugate (correlation) of K[k] over 2n. Computed in
 * float64. */
void fconv_fft_segment_spectra(const float *kc, int64_t count, int64_t len, int64_t n, float *taps);

/* Seconds per output of one thread (AVX-512) with transforms of n points across a kernel
 * `span` long (hop = n - span + 1 outputs per segment) and `sums` spectra summed per output
 * (fft-rows: KH kernel rows across KW; fft-cols: KW columns across KH): 2 sums n / hop
 * multiply-adds for the products, a forward and an inverse transform (radix-2 butterflies
 * and the split step, ~n (2.5 log2(n/2) + 6) operations each) shared by the hop outputs,
 * over the rate each size reaches: 64 and 128 points no longer fit in registers. Measured
 * (Zen 4 VM, one thread, 1024^2, fft-rows, all sizes each kernel allows): about 55 G
 * units/s up to 32 points, 45 G at 64, 36 G at 128; fft-cols runs at the same rate. */
double fconv_fft_segment_seconds(int64_t n, int64_t sums, int64_t span);

/* The segment transforms' speed on an ISA relative to AVX-512, which
 * fconv_fft_segment_seconds assumes: AVX2 measured ~0.93x on Zen 4, scalar ~0.15x. */
double fconv_fft_segment_isa_speed(fconv_isa isa);

/* The transform size (16..FCONV_FFT_ROWS_MAX_N) with the least fconv_fft_segment_seconds
 * keeping a hop of at least a quarter of it; 0 when the span is longer than
 * FCONV_FFT_SEGMENT_MAX_SPAN (the largest transform would keep less than a quarter). */
#define FCONV_FFT_SEGMENT_MAX_SPAN (FCONV_FFT_ROWS_MAX_N - FCONV_FFT_ROWS_MAX_N / 4 + 1)
int64_t fconv_fft_segment_size(int64_t sums, int64_t span);

#endif
