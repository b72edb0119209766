/*
 * umi-sad.c — SAD cost volumes for `fastconv stereo` and `fastconv match` (umi-sad.h).
 *
 * Direct: one UMI SAD operator per strip of the cost volume (B^2 steps per candidate and
 * output), the arg-min afterwards.
 * Box: the paper's decomposition. Per candidate, a UMI ABSDIFF operator makes the plane
 * E = |shifted(A) - B| over the strip plus its window margins (the border rule applied
 * there, as the direct views do); B x B window sums of E follow — for stereo, a vertical
 * then a horizontal running sum (O(1) per pixel), for match, a column sum and a row sum per
 * block (the blocks do not overlap) — and the running arg-min is updated in place, so the
 * volume is never stored. Each task owns a strip of rows (stereo) or a row of blocks
 * (match) and walks the candidates in the direct path's order; tasks run through
 * fconv_parallel_1d, the UMI plans inside them serially.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "umi-sad.h"

#define STRIP_FLOATS ((int64_t)1 << 22) /* direct path: cost-volume floats per strip */
#define MATCH_PLANE_FLOATS ((int64_t)1 << 18) /* box match: |difference| floats per task */

int cli_sad_box_exact(const float *a, const float *b, int64_t n, int64_t window) {
    const float lim = 16777216.0f; /* 2^24 */
    float lo = INFINITY, hi = -INFINITY;
    for (int pass = 0; pass < 2; pass++) {
        const float *t = pass ? b : a;
        for (int64_t i = 0; i < n; i++) {
            float v = t[i];
            if (!(fabsf(v) <= lim) || floorf(v) != v) return 0; /* NaN, inf, too big, fraction */
            if (v < lo) lo = v;
            if (v > hi) hi = v;
        }
    }
    return n == 0 || (double)window * ((double)hi - (double)lo) <= 16777216.0;
}

static fconv_status run_umi(const fconv_umi_desc *d, int threads, const float *a, const float *b,
                            float *y) {
    fconv_options o = {.threads = threads};
    fconv_umi_plan *plan = NULL;
    fconv_status st = fconv_umi_plan_create(d, &o, &plan);
    if (st != FCONV_OK) return st;
    st = fconv_umi_execute(plan, a, b, NULL, y);
    fconv_umi_plan_destroy(plan);
    return st;
}

/* ---- stereo ------------------------------------------------------------------------------ */

/* The arg-min over d = 0..min(x, maxd) of cost[x][d], strict: ties keep the smaller d. */
static void stereo_argmin(const float *cost, int64_t w, int64_t maxd, float *disp) {
    const int64_t nd = maxd + 1;
    for (int64_t x = 0; x < w; x++) {
        const float *cv = cost + x * nd;
        int64_t dmax = x < maxd ? x : maxd, best = 0;
        for (int64_t k = 1; k <= dmax; k++)
            if (cv[k] < cv[best]) best = k;
        disp[x] = (float)best;
    }
}

static fconv_status stereo_direct(const float *left, const float *right, int64_t h, int64_t w,
                                  int64_t block, int64_t maxd, int threads, float *disp, float *cost_out) {
    const int64_t r = block / 2, nd = maxd + 1;
    int64_t strip = cost_out ? h : STRIP_FLOATS / (w * nd);
    if (strip < 1) strip = 1;
    if (strip > h) strip = h;
    float *cost = cost_out ? cost_out : malloc((size_t)(strip * w * nd) * sizeof *cost);
    if (!cost) return FCONV_ENOMEM;
    fconv_status st = FCONV_OK;
    for (int64_t y0 = 0; y0 < h && st == FCONV_OK; y0 += strip) {
        int64_t rows = h - y0 < strip ? h - y0 : strip;
        /* U(RIGHT)[y][x][d][i][j] = right[y0 + y - r + i][x - d - r + j];
         * U(LEFT) the same with stride 0 on d. */
        fconv_umi_desc d = {
            .n_par = 3, .par_extent = {rows, w, nd},
            .n_acc = 2, .acc_extent = {block, block},
            .a = {.ndim = 2, .shape = {h, w},
                  .par = {{0, 1, y0 - r}, {1, 1, -r}, {1, -1, 0}},
                  .acc = {{0, 1, 0}, {1, 1, 0}}, .border = FCONV_UMI_BORDER_REPLICATE},
            .b = {.ndim = 2, .shape = {h, w},
                  .par = {{0, 1, y0 - r}, {1, 1, -r}, {0, 0, 0}},
                  .acc = {{0, 1, 0}, {1, 1, 0}}, .border = FCONV_UMI_BORDER_REPLICATE},
            .has_b = 1, .strategy = FCONV_UMI_SAD};
        float *cy = cost_out ? cost_out + y0 * w * nd : cost;
        if ((st = run_umi(&d, threads, right, left, cy)) != FCONV_OK) break;
        for (int64_t y = 0; y < rows; y++) stereo_argmin(cy + y * w * nd, w, maxd, disp + (y0 + y) * w);
    }
    if (!cost_out) free(cost);
    return st;
}

struct stereo_ctx {
    const float *left, *right;
    int64_t h, w, block, maxd, strip;
    float *disp, *cost;
    fconv_status *status; /* per task */
};

/* Rows y0..y0+rows-1, all disparities: E (rows + 2r) x (w + 2r), its vertical window sums
 * V rows x (w + 2r), the window sums C rows x w, the best cost so far. */
static void stereo_task(const void *vctx, size_t t) {
    const struct stereo_ctx *c = vctx;
    const int64_t B = c->block, r = B / 2, w = c->w, h = c->h, nd = c->maxd + 1;
    const int64_t y0 = (int64_t)t * c->strip, rows = h - y0 < c->strip ? h - y0 : c->strip;
    const int64_t er = rows + 2 * r, ew = w + 2 * r;
    float *buf = malloc((size_t)(er * ew + rows * ew + 2 * rows * w) * sizeof *buf);
    if (!buf) {
        c->status[t] = FCONV_ENOMEM;
        return;
    }
    float *e = buf, *v = e + er * ew, *cs = v + rows * ew, *best = cs + rows * w;
    float *disp = c->disp + y0 * w;
    for (int64_t d = 0; d <= c->maxd; d++) {
        /* E[yy][u] = |right[y0 - r + yy][u - r - d] - left[y0 - r + yy][u - r]|, each
         * coordinate replicated into the image: the direct views' reads, one per pixel. */
        fconv_umi_desc desc = {
            .n_par = 2, .par_extent = {er, ew},
            .a = {.ndim = 2, .shape = {h, w}, .par = {{0, 1, y0 - r}, {1, 1, -r - d}},
                  .border = FCONV_UMI_BORDER_REPLICATE},
            .b = {.ndim = 2, .shape = {h, w}, .par = {{0, 1, y0 - r}, {1, 1, -r}},
                  .border = FCONV_UMI_BORDER_REPLICATE},
            .has_b = 1, .strategy = FCONV_UMI_ABSDIFF};
        fconv_status st = run_umi(&desc, 1, c->right, c->left, e);
        if (st != FCONV_OK) {
            c->status[t] = st;
            break;
        }
        /* Vertical: V[y] = E[y] + ... + E[y + B - 1], then V[y] = V[y - 1] + (E[y + B - 1] - E[y - 1]). */
        memcpy(v, e, (size_t)ew * sizeof *v);
        for (int64_t i = 1; i < B; i++)
            for (int64_t u = 0; u < ew; u++) v[u] += e[i * ew + u];
        for (int64_t y = 1; y < rows; y++) {
            const float *add = e + (y - 1 + B) * ew, *sub = e + (y - 1) * ew;
            const float *prev = v + (y - 1) * ew;
            float *cur = v + y * ew;
            for (int64_t u = 0; u < ew; u++) cur[u] = prev[u] + (add[u] - sub[u]);
        }
        /* Horizontal, eight rows at a time (independent running sums keep the adder busy):
         * C[x] = V[0] + ... + V[B - 1] at x = 0, then C[x] = C[x - 1] + (V[x + B - 1] - V[x - 1]). */
        for (int64_t y = 0; y < rows; y += 8) {
            const int64_t nr = rows - y < 8 ? rows - y : 8;
            float s[8] = {0};
            for (int64_t k = 0; k < nr; k++) {
                const float *vr = v + (y + k) * ew;
                for (int64_t j = 0; j < B; j++) s[k] += vr[j];
                cs[(y + k) * w] = s[k];
            }
            if (nr == 8) {
                for (int64_t x = 1; x < w; x++)
                    for (int64_t k = 0; k < 8; k++) {
                        const float *vr = v + (y + k) * ew;
                        s[k] += vr[x + B - 1] - vr[x - 1];
                        cs[(y + k) * w + x] = s[k];
                    }
            } else {
                for (int64_t k = 0; k < nr; k++) {
                    const float *vr = v + (y + k) * ew;
                    float *cr = cs + (y + k) * w;
                    for (int64_t x = 1; x < w; x++) cr[x] = s[k] += vr[x + B - 1] - vr[x - 1];
                }
            }
        }
        /* Arg-min, strict < in increasing d (ties keep the smaller d); only d <= x. */
        for (int64_t y = 0; y < rows; y++) {
            const float *cr = cs + y * w;
            float *br = best + y * w, *dr = disp + y * w;
            if (d == 0) {
                memcpy(br, cr, (size_t)w * sizeof *br);
                for (int64_t x = 0; x < w; x++) dr[x] = 0.0f;
            } else {
                const float fd = (float)d;
                for (int64_t x = d; x < w; x++) {
                    int better = cr[x] < br[x];
                    br[x] = better ? cr[x] : br[x];
                    dr[x] = better ? fd : dr[x];
                }
            }
            if (c->cost)
                for (int64_t x = 0; x < w; x++) c->cost[((y0 + y) * w + x) * nd + d] = cr[x];
        }
    }
    free(buf);
}

fconv_status cli_stereo_disparity(const float *left, const float *right, int64_t h, int64_t w,
                                  int64_t block, int64_t maxd, int threads, int box, float *disp,
                                  float *cost) {
    if (!box) return stereo_direct(left, right, h, w, block, maxd, threads, disp, cost);
    /* Strips: a few per thread for balance, but tall enough that the 2r margin rows
     * (computed by both neighbours) stay a small share. */
    int nt = threads > 0 ? threads : fconv_parallel_default_threads();
    int64_t strip = (h + 4 * nt - 1) / (4 * nt);
    if (strip < 4 * block) strip = 4 * block;
    if (strip < 16) strip = 16;
    if (strip > 128) strip = 128;
    if (strip > h) strip = h;
    size_t tasks = (size_t)((h + strip - 1) / strip);
    fconv_status *status = calloc(tasks, sizeof *status);
    if (!status) return FCONV_ENOMEM;
    struct stereo_ctx c = {.left = left, .right = right, .h = h, .w = w, .block = block, .maxd = maxd,
                           .strip = strip, .disp = disp, .cost = cost, .status = status};
    fconv_parallel_1d(threads, tasks, stereo_task, &c);
    fconv_status st = FCONV_OK;
    for (size_t t = 0; t < tasks && st == FCONV_OK; t++) st = status[t];
    free(status);
    return st;
}

/* ---- match ------------------------------------------------------------------------------- */

struct match_best {
    float cost;
    int64_t dx, dy, norm;
};

/* Candidate (dx, dy) with cost v for the block at (x0, y0): the direct rule — inside FRAME1
 * only, a smaller cost wins, an equal one with a smaller |motion|^2. */
static void match_update(struct match_best *b, float v, int64_t dx, int64_t dy) {
    int64_t norm = dx * dx + dy * dy;
    if (v < b->cost || (v == b->cost && norm < b->norm)) b->cost = v, b->dx = dx, b->dy = dy, b->norm = norm;
}

static int match_inside(int64_t x0, int64_t y0, int64_t dx, int64_t dy, int64_t block, int64_t h, int64_t w) {
    return !(y0 + dy < 0 || y0 + dy + block > h || x0 + dx < 0 || x0 + dx + block > w);
}

static fconv_status match_direct(const float *f0, const float *f1, int64_t h, int64_t w, int64_t block,
                                 int64_t search, int threads, float *vec, float *cost_out) {
    const int64_t nby = h / block, nbx = w / block, side = 2 * search + 1;
    const int64_t per_row = nbx * side * side;
    int64_t strip = cost_out ? nby : STRIP_FLOATS / per_row;
    if (strip < 1) strip = 1;
    if (strip > nby) strip = nby;
    float *cost = cost_out ? cost_out : malloc((size_t)(strip * per_row) * sizeof *cost);
    if (!cost) return FCONV_ENOMEM;
    fconv_status st = FCONV_OK;
    for (int64_t by0 = 0; by0 < nby; by0 += strip) {
        int64_t rows = nby - by0 < strip ? nby - by0 : strip;
        /* U(FRAME1)[by][bx][sy][sx][i][j] = f1[(by0+by)B + sy - R + i][bx B + sx - R + j];
         * U(FRAME0) is the same block without displacement (stride 0 on sy, sx). Candidates
         * that leave FRAME1 read replicated edges and are discarded below. */
        fconv_umi_desc d = {
            .n_par = 4, .par_extent = {rows, nbx, side, side},
            .n_acc = 2, .acc_extent = {block, block},
            .a = {.ndim = 2, .shape = {h, w},
                  .par = {{0, block, by0 * block}, {1, block, 0}, {0, 1, -search}, {1, 1, -search}},
                  .acc = {{0, 1, 0}, {1, 1, 0}}, .border = FCONV_UMI_BORDER_REPLICATE},
            .b = {.ndim = 2, .shape = {h, w},
                  .par = {{0, block, by0 * block}, {1, block, 0}, {0, 0, 0}, {0, 0, 0}},
                  .acc = {{0, 1, 0}, {1, 1, 0}}},
            .has_b = 1, .strategy = FCONV_UMI_SAD};
        float *cb = cost_out ? cost_out + by0 * per_row : cost;
        if ((st = run_umi(&d, threads, f1, f0, cb)) != FCONV_OK) break;
        for (int64_t by = 0; by < rows; by++)
            for (int64_t bx = 0; bx < nbx; bx++) {
                const float *cv = cb + (by * nbx + bx) * side * side;
                const int64_t y0 = (by0 + by) * block, x0 = bx * block;
                struct match_best b = {INFINITY, 0, 0, INT64_MAX};
                for (int64_t sy = 0; sy < side; sy++)
                    for (int64_t sx = 0; sx < side; sx++) {
                        int64_t dy = sy - search, dx = sx - search;
                        if (match_inside(x0, y0, dx, dy, block, h, w)) match_update(&b, cv[sy * side + sx], dx, dy);
                    }
                float *o = vec + ((by0 + by) * nbx + bx) * 2;
                o[0] = (float)b.dx;
                o[1] = (float)b.dy;
            }
    }
    if (!cost_out) free(cost);
    return st;
}

struct match_ctx {
    const float *f0, *f1;
    int64_t h, w, block, search;
    float *vec, *cost;
    fconv_status *status;
};

/* One row of blocks, all candidates: per dy, the planes E[sx][i][u] = |f1[y0 + dy + i][u + dx]
 * - f0[y0 + i][u]| (u < nbx B, dx = sx - R; one UMI ABSDIFF operator per chunk of dx: dx is
 * its first parallel component, broadcast over f0 by stride 0), then per dx the column sums
 * over i and per block the sum of its B columns. */
static void match_task(const void *vctx, size_t t) {
    const struct match_ctx *c = vctx;
    const int64_t B = c->block, R = c->search, h = c->h, w = c->w, side = 2 * R + 1;
    const int64_t nbx = w / B, wb = nbx * B, by = (int64_t)t, y0 = by * B;
    int64_t chunk = MATCH_PLANE_FLOATS / (B * wb); /* dx planes per UMI operator */
    if (chunk < 1) chunk = 1;
    if (chunk > side) chunk = side;
    float *buf = malloc((size_t)(chunk * B * wb + wb) * sizeof *buf);
    struct match_best *best = malloc((size_t)nbx * sizeof *best);
    if (!buf || !best) {
        free(buf);
        free(best);
        c->status[t] = FCONV_ENOMEM;
        return;
    }
    float *e = buf, *col = e + chunk * B * wb;
    for (int64_t bx = 0; bx < nbx; bx++) best[bx] = (struct match_best){INFINITY, 0, 0, INT64_MAX};
    for (int64_t sy = 0; sy < side; sy++) {
        const int64_t dy = sy - R;
        const int rows_inside = y0 + dy >= 0 && y0 + dy + B <= h;
        if (!rows_inside && !c->cost) continue; /* no candidate of this dy can win */
        for (int64_t sx = 0; sx < side; sx++) {
            const int64_t dx = sx - R;
            if (sx % chunk == 0) {
                const int64_t n = side - sx < chunk ? side - sx : chunk;
                fconv_umi_desc desc = {
                    .n_par = 3, .par_extent = {n, B, wb},
                    .a = {.ndim = 2, .shape = {h, w}, .par = {{1, 1, dx}, {0, 1, y0 + dy}, {1, 1, 0}},
                          .border = FCONV_UMI_BORDER_REPLICATE},
                    .b = {.ndim = 2, .shape = {h, w}, .par = {{0, 0, 0}, {0, 1, y0}, {1, 1, 0}}},
                    .has_b = 1, .strategy = FCONV_UMI_ABSDIFF};
                fconv_status st = run_umi(&desc, 1, c->f1, c->f0, e);
                if (st != FCONV_OK) {
                    c->status[t] = st;
                    sy = side; /* stop this task */
                    break;
                }
            }
            const float *es = e + (sx % chunk) * B * wb;
            memcpy(col, es, (size_t)wb * sizeof *col);
            for (int64_t i = 1; i < B; i++)
                for (int64_t u = 0; u < wb; u++) col[u] += es[i * wb + u];
            for (int64_t bx = 0; bx < nbx; bx++) {
                float v = 0.0f;
                for (int64_t j = 0; j < B; j++) v += col[bx * B + j];
                if (c->cost) c->cost[((by * nbx + bx) * side + sy) * side + sx] = v;
                if (rows_inside && match_inside(bx * B, y0, dx, dy, B, h, w)) match_update(&best[bx], v, dx, dy);
            }
        }
    }
    for (int64_t bx = 0; bx < nbx; bx++) {
        float *o = c->vec + (by * nbx + bx) * 2;
        o[0] = (float)best[bx].dx;
        o[1] = (float)best[bx].dy;
    }
    free(buf);
    free(best);
}

fconv_status cli_match_vectors(const float *f0, const float *f1, int64_t h, int64_t w, int64_t block,
                               int64_t search, int threads, int box, float *vec, float *cost) {
    if (!box) return match_direct(f0, f1, h, w, block, search, threads, vec, cost);
    const size_t tasks = (size_t)(h / block);
    fconv_status *status = calloc(tasks, sizeof *status);
    if (!status) return FCONV_ENOMEM;
    struct match_ctx c = {.f0 = f0, .f1 = f1, .h = h, .w = w, .block = block, .search = search,
                          .vec = vec, .cost = cost, .status = status};
    fconv_parallel_1d(threads, tasks, match_task, &c);
    fconv_status st = FCONV_OK;
    for (size_t t = 0; t < tasks && st == FCONV_OK; t++) st = status[t];
    free(status);
    return st;
}
