/*
 * umi-sad.h — the SAD cost volumes and arg-mins of `fastconv stereo` and `fastconv match`,
 * two ways with the same results: "direct" (one UMI SAD operator per strip, B^2 steps per
 * candidate and pixel) and "box" (the paper's decomposition: a UMI ABSDIFF plane per
 * candidate, B x B box sums by running sums, then the arg-min). docs/umi.md, "SAD cost".
 */
#ifndef FCONV_CLI_UMI_SAD_H
#define FCONV_CLI_UMI_SAD_H

#include <stdint.h>

#include "fastconv.h"

/* Is the box path bit-identical to the direct one for windows of `window` elements over a
 * and b (n floats each)? Yes when every value is an integer of magnitude <= 2^24 and
 * window * (max - min) <= 2^24 (every partial sum, in any order, is then an exact float),
 * e.g. any 8-bit data with windows up to 256 x 256. */
int cli_sad_box_exact(const float *a, const float *b, int64_t n, int64_t window);

/* Disparities disp[h][w] of a rectified pair (cmd-stereo.c has the definition: B x B window,
 * edges replicated, d <= min(x, maxd), ties to the smaller d). box: use the box path (only
 * where cli_sad_box_exact holds, else results may differ in the last bits). cost: NULL, or
 * h*w*(maxd+1) floats that receive the cost volume [y][x][d] (for tests). FCONV_OK,
 * FCONV_ENOMEM, or a UMI plan's status. */
fconv_status cli_stereo_disparity(const float *left, const float *right, int64_t h, int64_t w,
                                  int64_t block, int64_t maxd, int threads, int box, float *disp,
                                  float *cost);

/* Motion vectors vec[h/B][w/B][2] = (dx, dy) (cmd-match.c has the definition: candidates
 * inside FRAME1 only, ties to the smallest |motion|^2, then the first in (dy, dx) order).
 * cost: NULL or (h/B)*(w/B)*(2R+1)^2 floats, the volume [by][bx][dy+R][dx+R]; candidates
 * leaving FRAME1 read its replicated edges there. Returns as cli_stereo_disparity. */
fconv_status cli_match_vectors(const float *f0, const float *f1, int64_t h, int64_t w, int64_t block,
                               int64_t search, int threads, int box, float *vec, float *cost);

#endif
