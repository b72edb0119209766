/*
 * winograd.h — Winograd minimal filtering F(m x m, 3 x 3) for m = 2, 4, 6, and F(3x3, 4x4)
 * for the stride-2 phases (winograd.c), private to winograd.c (the driver),
 * winograd-transforms.c (the matrices) and the per-ISA tile kernels (kernels/winograd:
 * transforms, gather, scatter; contracts in core/dispatch.h).
 *
 * For an alpha x alpha input tile d (alpha = m + r - 1) and an r x r kernel g, the m x m
 * 'valid' correlation of d with g is  Y = A^T [ (G g G^T) ⊙ (B^T d B) ] A.
 * The transforms work on many tiles at once: element (i, j) of a tile transform is a
 * vector of `ld` floats, one per tile ("tile-minor" layout), so every inner loop runs over
 * tiles with unit stride. ncols (a multiple of FCONV_WINO_STRIP, <= ld) tiles are computed.
 */
#ifndef FCONV_WINOGRAD_H
#define FCONV_WINOGRAD_H

#include <stddef.h>

#include "fastconv.h"

/* Tiles processed together in the transforms' inner loops; tile blocks are padded to it. */
#define FCONV_WINO_STRIP 16

struct fconv_wino_matrices {
    int m, r, alpha;
    /* The exact matrices (as float64, row-major): B^T alpha x alpha, G alpha x r,
     * A^T m x alpha. The tests check them; the filter transform uses them. */
    const double *bt, *g, *at;
    /* Which of the dispatch table's wino_input[] / wino_output[] transform its tiles: B^T
     * depends on the interpolation points alone, so F(3x3,4x4) shares F(4x4,3x3)'s. */
    int input_slot, output_slot;
};

/* The matrix set for F(m x m, 3 x 3), m in {2, 4, 6}, or F(3x3, 4x4) for m = 3; NULL for
 * any other m. */
const struct fconv_wino_matrices *fconv_wino_matrices_for(int m);

/*
 * U = G g G^T for one r x r kernel g (row-major, correlation orientation), computed in
 * float64 and rounded once; U[ξ][ν] is written to u[(ξ*alpha + ν) * u_step].
 */
void fconv_wino_transform_filter(const struct fconv_wino_matrices *mat, const float *g,
                                 float *u, size_t u_step);

/*
 * The 1D algorithms' (winograd-rows, winograd-cols) plan-time weights: with plan->weights set,
 * `floats` of transformed weights made once by transform into plan->algo_state
 * (FCONV_ENOMEM, naming `name`, where they cannot be allocated); without, nothing (their
 * execute transforms into the workspace). fconv_wino_1d_release frees them.
 */
typedef void (*fconv_wino_1d_transform_fn)(const fconv_plan *plan, const float *w, float *gw);
fconv_status fconv_wino_1d_prepare(fconv_plan *plan, size_t floats, fconv_wino_1d_transform_fn transform,
                                   const char *name);
void fconv_wino_1d_release(fconv_plan *plan);
/* Their estimate from t, one thread's seconds for all `tasks`: shared among the plan's threads
 * (no more than there are tasks), bounded below by the store bandwidth of both cores where y
 * outgrows the last-level cache. */
double fconv_wino_1d_seconds(const fconv_plan *plan, double t, double tasks);

/*
 * The channels-last driver (winograd-channels-last.c) for F(m x m, 3 x 3), m = 2, 4, 6: whether
 * it can run the plan (conv2d, one group, C and K multiples of 16; winograd.c decides whether it
 * does: NHWC plans but those of one NCHW strip with U past the last-level cache, NCHW ones by
 * their tile columns and output size), and its workspace, prepare (plan-time weights
 * transformed into plan->algo_state, freed by fconv_free_aligned) and execute, the same
 * contracts as fconv_algorithm's.
 */
int fconv_wino_channels_last_serves(const fconv_plan *plan, int m);
/* Whether winograd.c hands this plan (of winograd-2x2/4x4/6x6, m) to the channels-last driver. */
int fconv_wino_channels_last_runs(const fconv_plan *plan, int m);
size_t fconv_wino_channels_last_workspace(const fconv_plan *plan, int m);
fconv_status fconv_wino_channels_last_prepare(fconv_plan *plan, int m);
/* For the cost model: the tiles the transforms run (the real ones, no strip padding); in
 * *product_columns the tile columns the products compute, and in *whole_tile_columns those
 * of the blocks rounded up to whole register tiles (either pointer may be NULL). */
double fconv_wino_channels_last_columns(const fconv_plan *plan, int m, double *product_columns,
                                        double *whole_tile_columns);
void fconv_wino_channels_last_execute(const fconv_plan *plan, int m, const float *x, const float *w,
                                      const float *bias, float *y, void *workspace);

#endif
