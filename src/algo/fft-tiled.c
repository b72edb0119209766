/*
 * fft-tiled.c — overlap-save FFT convolution for filter2d and conv1d: T0 x T1 windows of the
 * border-extended image, read straight from x, each yield (T0-KH+1) x (T1-KW+1) exact
 * outputs after one transform, a product with the plan's kernel spectrum and an inverse.
 * Memory stays a few tiles per thread; the tiling depends on the problem, never on threads.
 */
#include <math.h>

#include "algo/fft-common.h"
#include "algo/filter-lowering.h"

/* Largest tile extent considered: 2D tiles stay cache-sized, 1D tiles may be long. */
#define MAX_TILE_2D 512
#define MAX_TILE_1D 65536
/* Candidate extents per axis (there are 614 fast sizes up to 65536). */
#define MAX_CANDIDATES 1024

/* Fast sizes from `lo` to `hi` (inclusive bounds already fast or not), written to out. */
static int fast_sizes(int64_t lo, int64_t hi, int64_t *out, int max) {
    int n = 0;
    for (int64_t t = fconv_fft_fast_size(lo); t <= hi && n < max; t = fconv_fft_fast_size(t + 1))
        out[n++] = t;
    return n;
}

/* Candidate extents for one axis with kernel extent k and padded extent p: fast sizes from
 * k (a tile must hold the kernel) to the smallest one covering all of p, within the cap
 * (which yields to 2k for kernels beyond it). */
static int axis_candidates(int64_t k, int64_t p, int64_t cap, int64_t *out, int max) {
    int64_t whole = fconv_fft_fast_size(p);
    int64_t hi = cap > 2 * k ? cap : 2 * k;
    if (hi > whole) hi = whole;
    int n = fast_sizes(k, hi, out, max);
    if (n == 0) out[n++] = fconv_fft_fast_size(k);
    return n;
}

/* The tile size with the lowest modelled single-core time for the whole problem (small
 * tiles waste the overlap of K-1, large ones pay log T and cache misses). It must not
 * depend on the thread count: a different tiling rounds differently. */
static struct fconv_fft_tiling choose_tiling(const fconv_plan *plan) {
    const fconv_filter2d_desc *d = &plan->filter;
    int64_t c0[MAX_CANDIDATES], c1[MAX_CANDIDATES];
    int cap0 = d->h == 1 && d->kh == 1 ? 1 : MAX_TILE_2D;
    int cap1 = plan->kind == FCONV_KIND_CONV1D || cap0 == 1 ? MAX_TILE_1D : MAX_TILE_2D;
    int n0 = axis_candidates(d->kh, fconv_filter_padded_h(plan), cap0, c0, MAX_CANDIDATES);
    int n1 = axis_candidates(d->kw, fconv_filter_padded_w(plan), cap1, c1, MAX_CANDIDATES);
    struct fconv_fft_tiling best = {0};
    double best_cost = 0.0;
    for (int i = 0; i < n0; i++)
        for (int j = 0; j < n1; j++) {
            int64_t t0 = c0[i], t1 = c1[j];
            double tiles = ceil((double)plan->out_h / (double)(t0 - d->kh + 1)) *
                           ceil((double)plan->out_w / (double)(t1 - d->kw + 1));
            double cost = tiles * fconv_fft_tile_seconds(t0, t1);
            if (i + j == 0 || cost < best_cost) {
                best_cost = cost;
                best = fconv_fft_filter_tiling(plan, t0, t1);
            }
        }
    return best;
}

static fconv_status fft_tiled_supports(const fconv_plan *plan, char *why, size_t why_len) {
    struct fconv_fft_tiling t = choose_tiling(plan);
    return fconv_fft_filter_supports(plan, &t, "fft-tiled", why, why_len);
}

static size_t fft_tiled_workspace(const fconv_plan *plan) {
    struct fconv_fft_tiling t = choose_tiling(plan);
    return fconv_fft_filter_workspace(plan, &t);
}

static double fft_tiled_cost(const fconv_plan *plan) {
    struct fconv_fft_tiling t = choose_tiling(plan);
    return fconv_fft_filter_cost(plan, &t);
}

static fconv_status fft_tiled_prepare(fconv_plan *plan) {
    struct fconv_fft_tiling t = choose_tiling(plan);
    return fconv_fft_filter_prepare(plan, &t, "fft-tiled");
}

static void fft_tiled_execute(const fconv_plan *plan, const float *x, const float *w,
                              const float *bias, float *y, void *workspace) {
    (void)bias;
    fconv_fft_filter_execute(plan, x, w, y, workspace);
}

const struct fconv_algorithm fconv_algorithm_fft_tiled = {
    .id = FCONV_ALGO_FFT_TILED,
    .name = "fft-tiled",
    .summary = "overlap-save FFT tiles (FFTW), bounded memory for large images and signals",
    .serves = FCONV_SERVES_FILTER2D | FCONV_SERVES_CONV1D,
    .error_bound = 3e-6,
    .supports = fft_tiled_supports,
    .workspace = fft_tiled_workspace,
    .cost = fft_tiled_cost,
    .prepare = fft_tiled_prepare,
    .release = fconv_fft_filter_release,
    .execute = fft_tiled_execute,
};
