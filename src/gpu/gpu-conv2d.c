/*
 * gpu-conv2d.c - conv2d on the GPU (stride, padding, dilation, groups, bias, ReLU): a tiled
 * GEMM per group (8 x 8 outputs per thread in 64 x 64, 64 x 128 or 128 x 128 block tiles,
 * split-K where the tiles are too few) whose right operand is gathered from x on the fly
 * (gpu-implicit-gemm) or written first by im2col into a plan-time device buffer
 * (gpu-im2col-gemm), either reading x as it lies for 1x1 stride-1 layers; Winograd
 * F(2x2,3x3) and F(4x4,3x3) through the same GEMM (3x3, stride 1, dilation 1; filters
 * transformed once per plan on the device); or one thread per output (gpu-naive, and the fallback where a device cannot run
 * 256-thread blocks, lacks the local memory a tiled kernel needs, or sizes exceed the GEMM
 * kernels' 32-bit offsets).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu-driver.h"

fconv_status fconv_gpu_conv2d_run(const fconv_plan *plan, const fconv_gpu_io *io);

/* gpu-im2col-gemm's column buffer: at most this many floats (128 MiB) unless one group's
 * 128 columns need more; the groups and columns are walked in chunks that fit. Split-K's
 * partial sums and Winograd's transformed inputs and products are held to the same cap. */
#define SCRATCH_CAP_FLOATS ((int64_t)32 << 20)

/* Rows of the column buffer per thread of conv2d_im2col. */
#define IM2COL_ROWS 32

/* The largest GEMM kernel's: As 16 x 132 and Bs 16 x 128 floats. */
#define GEMM_LOCAL_BYTES ((16 * 132 + 16 * 128) * 4)

/* The GEMM kernels' tiles (gpu-kernels.h GM_KERNEL). resident: blocks per SM that the
 * registers ptxas gives them on sm_90 allow (64 x 64: 200 (capped) / 239 registers x 64
 * threads; 64 x 128: 229 / 239 x 128; 128 x 128: 231 / 231 x 256). step_seconds: fitted to
 * H200 kernel times of the 64 conv2d layers of the suite with each tile forced (bench/
 * gpu_gemm_tiles.c; docs/gpu.md, median errors 9-16%). */
const fconv_gpu_gemm_tile fconv_gpu_gemm_tiles[FCONV_GPU_GEMM_TILES] = {
    {"64x64", 64, 64, 64, {5, 4}, {0.188e-6, 0.172e-6}},
    {"64x128", 64, 128, 128, {2, 2}, {0.143e-6, 0.157e-6}},
    {"128x128", 128, 128, 256, {1, 1}, {0.155e-6, 0.165e-6}},
};

/* The tile FCONV_GPU_GEMM_TILE names, or -1 (unset or unknown: the model chooses). */
static int forced_tile(void) {
    const char *env = getenv("FCONV_GPU_GEMM_TILE");
    for (int i = 0; env && i < FCONV_GPU_GEMM_TILES; i++)
        if (strcmp(env, fconv_gpu_gemm_tiles[i].name) == 0) return i;
    return -1;
}

/* Split-K and the modelled GEMM time of geometry c (columns and groups per pass set) with
 * tile t, for `groups` GEMMs of kg rows: a wave is the device's resident blocks, each
 * stepping through its range. */
static void split_and_time(fconv_gpu_gemm_geometry *c, int64_t kg, int64_t groups,
                           int64_t compute_units, int t) {
    const fconv_gpu_gemm_tile *tile = &fconv_gpu_gemm_tiles[t];
    int64_t outputs = c->gchunk * kg * c->ncc;
    int64_t resident = tile->resident[c->gather] * compute_units;
    int64_t blocks = fconv_gpu_div_up(c->ncc, tile->cols) * fconv_gpu_div_up(kg, tile->rows) *
                     c->gchunk;
    int64_t steps = fconv_gpu_div_up(c->kd, FCONV_GPU_GEMM_STEP);
    int64_t splits = 5 * blocks >= 2 * resident ? 1 : fconv_gpu_div_up(4 * resident, 5 * blocks);
    if (splits > steps / 8) splits = steps / 8;
    if (splits > SCRATCH_CAP_FLOATS / outputs) splits = SCRATCH_CAP_FLOATS / outputs;
    if (splits < 1) splits = 1;
    c->tile = t;
    c->kchunk = fconv_gpu_div_up(steps, splits) * FCONV_GPU_GEMM_STEP;
    c->splits = fconv_gpu_div_up(c->kd, c->kchunk); /* no empty range */
    c->part_floats = c->splits > 1 ? c->splits * outputs : 0;
    c->passes = fconv_gpu_div_up(c->nc, c->ncc) * fconv_gpu_div_up(groups, c->gchunk);
    double waves = (double)(blocks * c->splits) / (double)resident;
    c->gemm_seconds = (double)c->passes * (waves < 1.0 ? 1.0 : waves) * (double)c->kchunk *
                      tile->step_seconds[c->gather];
}

/* The tile FCONV_GPU_GEMM_TILE forces, else the one of least modelled time. */
static fconv_gpu_gemm_geometry choose_tile(fconv_gpu_gemm_geometry c, int64_t kg,
                                           int64_t groups, int64_t compute_units) {
    int forced = forced_tile();
    fconv_gpu_gemm_geometry best = c;
    for (int t = 0; t < FCONV_GPU_GEMM_TILES; t++) {
        if (forced >= 0 && t != forced) continue;
        fconv_gpu_gemm_geometry g = c;
        split_and_time(&g, kg, groups, compute_units, t);
        if (t == forced || t == 0 || g.gemm_seconds < best.gemm_seconds) best = g;
    }
    return best;
}

fconv_gpu_gemm_geometry fconv_gpu_gemm_geometry_of(const fconv_plan *plan, int64_t compute_units,
                                                   int gather) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    fconv_gpu_gemm_geometry c;
    memset(&c, 0, sizeof c);
    c.kd = d->c / d->groups * d->r * d->s;
    c.nc = d->n * plan->out_h * plan->out_w;
    c.direct = d->r == 1 && d->s == 1 && d->stride_h == 1 && d->stride_w == 1 &&
               d->pad_top == 0 && d->pad_bottom == 0 && d->pad_left == 0 && d->pad_right == 0;
    c.gather = gather && !c.direct;
    c.ncc = c.nc;
    c.gchunk = d->groups;
    if (!c.direct && !c.gather) {
        if (c.kd * c.nc > SCRATCH_CAP_FLOATS) {
            c.ncc = SCRATCH_CAP_FLOATS / c.kd / 128 * 128;
            if (c.ncc < 128) c.ncc = 128;
            if (c.ncc > c.nc) c.ncc = c.nc;
        }
        c.gchunk = SCRATCH_CAP_FLOATS / (c.kd * c.ncc);
        if (c.gchunk < 1) c.gchunk = 1;
        if (c.gchunk > d->groups) c.gchunk = d->groups;
        c.cols_floats = c.gchunk * c.kd * c.ncc;
    }
    return choose_tile(c, d->k / d->groups, d->groups, compute_units);
}

fconv_gpu_gemm_geometry fconv_gpu_winograd_geometry_of(const fconv_plan *plan,
                                                       int64_t compute_units, int m) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    int64_t e = (m + 2) * (m + 2);
    fconv_gpu_gemm_geometry c;
    memset(&c, 0, sizeof c);
    c.kd = d->c / d->groups;
    c.nc = d->n * fconv_gpu_div_up(plan->out_h, m) * fconv_gpu_div_up(plan->out_w, m);
    c.ncc = SCRATCH_CAP_FLOATS / (e * (d->c + d->k)) / 128 * 128;
    if (c.ncc < 128) c.ncc = 128;
    if (c.ncc > c.nc) c.ncc = c.nc;
    c.gchunk = e * d->groups;
    c.cols_floats = e * (d->c + d->k) * c.ncc;
    return choose_tile(c, d->k / d->groups, e * d->groups, compute_units);
}

/* The GEMM kernels keep offsets and depths in 32 bits (64-bit ones cost registers): the
 * depth, one input plane, the padded image's extent and the column stride must fit. */
static int gemm_fits_32bit(const fconv_plan *plan, const fconv_gpu_gemm_geometry *c) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    int64_t lim = (int64_t)1 << 30;
    return c->kd < ((int64_t)1 << 26) && d->h * d->w < INT32_MAX &&
           d->h + d->pad_top + d->pad_bottom < lim && d->w + d->pad_left + d->pad_right < lim &&
           (c->direct ? plan->out_h * plan->out_w : c->ncc) < INT32_MAX;
}

/* gpu-winograd-2x2 / -4x4's output tile: m x m. */
static int winograd_m(const fconv_plan *plan) {
    return plan->algo->id == FCONV_ALGO_GPU_WINOGRAD_4X4 ? 4 : 2;
}

static int is_winograd(const fconv_plan *plan) {
    return plan->algo->id == FCONV_ALGO_GPU_WINOGRAD_2X2 ||
           plan->algo->id == FCONV_ALGO_GPU_WINOGRAD_4X4;
}

/* Floats of the transformed filters: (m + 2)^2 per (output, input channel). */
static int64_t winograd_u_floats(const fconv_plan *plan) {
    int64_t alpha = winograd_m(plan) + 2;
    return alpha * alpha * plan->conv2d.k * (plan->conv2d.c / plan->conv2d.groups);
}

static int tiled_ok(const fconv_gpu_io *io, size_t local_bytes) {
    return io->limits.max_group_size >= 256 && io->limits.local_mem_bytes >= local_bytes;
}

static fconv_status winograd_filter(const fconv_plan *plan, const fconv_gpu_io *io,
                                    fconv_gpu_buf *w, fconv_gpu_buf *u) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    fconv_gpu_arg args[] = {fconv_gpu_buf_arg(w), fconv_gpu_buf_arg(u), fconv_gpu_i64_arg(d->k),
                            fconv_gpu_i64_arg(d->c / d->groups)};
    int64_t groups[3] = {fconv_gpu_div_up(d->k * (d->c / d->groups), 256), 1, 1};
    int64_t local[3] = {256, 1, 1};
    return io->ops->launch(io->gpu,
                           winograd_m(plan) == 4 ? "conv2d_winograd_4x4_filter"
                                                 : "conv2d_winograd_2x2_filter",
                           groups, local, args, 4, io->timing);
}

static int is_gemm(const fconv_plan *plan) {
    return plan->algo->id == FCONV_ALGO_GPU_IMPLICIT_GEMM ||
           plan->algo->id == FCONV_ALGO_GPU_IM2COL_GEMM;
}

fconv_status fconv_gpu_conv2d_prepare(const fconv_plan *plan, const fconv_gpu_io *io,
                                      fconv_gpu_conv2d_state *st) {
    memset(st, 0, sizeof *st);
    if (!tiled_ok(io, GEMM_LOCAL_BYTES)) return FCONV_OK; /* one thread per output */
    fconv_gpu_gemm_geometry *c = &st->gemm;
    fconv_status status = FCONV_OK;
    if (is_winograd(plan)) {
        *c = fconv_gpu_winograd_geometry_of(plan, io->limits.compute_units, winograd_m(plan));
        if (!gemm_fits_32bit(plan, c)) return FCONV_OK;
        st->has_gemm = 1;
        st->work_bytes = (size_t)winograd_u_floats(plan) * sizeof(float);
        st->scratch_bytes = (size_t)(c->cols_floats + c->part_floats) * sizeof(float);
        status = io->ops->alloc(io->gpu, st->work_bytes, &st->work);
        if (status == FCONV_OK) status = io->ops->alloc(io->gpu, st->scratch_bytes, &st->scratch);
        if (status == FCONV_OK && io->w) {
            status = winograd_filter(plan, io, io->w, st->work);
            st->work_ready = status == FCONV_OK;
        }
    } else if (is_gemm(plan)) {
        *c = fconv_gpu_gemm_geometry_of(plan, io->limits.compute_units,
                                        plan->algo->id == FCONV_ALGO_GPU_IMPLICIT_GEMM);
        if (!gemm_fits_32bit(plan, c)) return FCONV_OK;
        st->has_gemm = 1;
        st->work_bytes = (size_t)(c->cols_floats + c->part_floats) * sizeof(float);
        if (st->work_bytes) status = io->ops->alloc(io->gpu, st->work_bytes, &st->work);
    }
    return status;
}

/* One GEMM launch of walk c (and split-K's reduction): A = a, B = bsrc (a matrix or x),
 * Y = y, partial sums in part; ints are the kernels' integer arguments in GM_PARAMS order,
 * bias NULL or applied with ReLU in the epilogue. */
static fconv_status launch_gemm(const fconv_gpu_io *io, const fconv_gpu_gemm_geometry *c,
                                fconv_gpu_buf *bsrc, fconv_gpu_buf *a, fconv_gpu_buf *bias,
                                fconv_gpu_buf *y, fconv_gpu_buf *part, const int64_t ints[30]) {
    static const char *const kernels[2][FCONV_GPU_GEMM_TILES] = {
        {"conv2d_gemm_64x64", "conv2d_gemm_64x128", "conv2d_gemm_128x128"},
        {"conv2d_igemm_64x64", "conv2d_igemm_64x128", "conv2d_igemm_128x128"}};
    enum { PART_OFF, K, KD, PQ, G, G0, GCOUNT, N0, NCC, SPLITS = 27, RELU = 29 };
    const fconv_gpu_gemm_tile *tile = &fconv_gpu_gemm_tiles[c->tile];
    fconv_gpu_arg args[35];
    int n = 0;
    args[n++] = fconv_gpu_buf_arg(bsrc);
    args[n++] = fconv_gpu_buf_arg(a);
    args[n++] = fconv_gpu_buf_arg(bias);
    args[n++] = fconv_gpu_buf_arg(y);
    args[n++] = fconv_gpu_buf_arg(part);
    for (int i = 0; i < 30; i++) args[n++] = fconv_gpu_i64_arg(ints[i]);
    int64_t groups[3] = {fconv_gpu_div_up(ints[NCC], tile->cols),
                         fconv_gpu_div_up(ints[K] / ints[G], tile->rows), ints[GCOUNT] * c->splits};
    int64_t local[3] = {tile->threads, 1, 1};
    fconv_status st = io->ops->launch(io->gpu, kernels[c->gather][c->tile], groups, local, args,
                                      n, io->timing);
    if (st != FCONV_OK || c->splits == 1) return st;
    fconv_gpu_arg rargs[] = {
        fconv_gpu_buf_arg(part), fconv_gpu_buf_arg(bias), fconv_gpu_buf_arg(y),
        fconv_gpu_i64_arg(ints[PART_OFF]), fconv_gpu_i64_arg(ints[K]), fconv_gpu_i64_arg(ints[PQ]),
        fconv_gpu_i64_arg(ints[G]), fconv_gpu_i64_arg(ints[G0]), fconv_gpu_i64_arg(ints[GCOUNT]),
        fconv_gpu_i64_arg(ints[N0]), fconv_gpu_i64_arg(ints[NCC]), fconv_gpu_i64_arg(ints[SPLITS]),
        fconv_gpu_i64_arg(ints[RELU])};
    int64_t rgroups[3] = {fconv_gpu_div_up(ints[GCOUNT] * (ints[K] / ints[G]) * ints[NCC], 256),
                          1, 1};
    int64_t rlocal[3] = {256, 1, 1};
    return io->ops->launch(io->gpu, "conv2d_gemm_reduce", rgroups, rlocal, rargs,
                           (int)(sizeof rargs / sizeof rargs[0]), io->timing);
}

/* gpu-winograd-2x2 / -4x4 (gpu-kernels.h): per chunk of output tiles, the input transform
 * into scratch's V, the E G GEMMs into its M (E = (m + 2)^2; U in work: A's groups e G + grp
 * are its rows (e K + ko) Cg apart), the output transform into y. scratch holds M (E K ncc
 * floats), then V (E C ncc), then split-K's partial sums. */
static fconv_status run_winograd(const fconv_plan *plan, const fconv_gpu_io *io) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    const fconv_gpu_gemm_geometry *c = io->gemm;
    fconv_gpu_buf *u = io->work, *tmp = NULL;
    fconv_status st = FCONV_OK;
    if (!io->work_ready) {
        /* Weights at execute time: transform them now, into the plan's buffer unless that
         * holds the plan's own weights (then into a temporary one). */
        if (plan->weights) {
            st = io->ops->alloc(io->gpu, (size_t)winograd_u_floats(plan) * sizeof(float), &tmp);
            u = tmp;
        }
        if (st == FCONV_OK) st = winograd_filter(plan, io, io->w, u);
    }
    static const char *const kernels[2][2] = {
        {"conv2d_winograd_2x2_input", "conv2d_winograd_2x2_output"},
        {"conv2d_winograd_4x4_input", "conv2d_winograd_4x4_output"}};
    int m = winograd_m(plan);
    int64_t e = (m + 2) * (m + 2), cg = d->c / d->groups;
    int64_t th = fconv_gpu_div_up(plan->out_h, m), tw = fconv_gpu_div_up(plan->out_w, m);
    int64_t relu = d->activation == FCONV_ACTIVATION_RELU;
    for (int64_t t0 = 0; t0 < c->nc && st == FCONV_OK; t0 += c->ncc) {
        int64_t ntc = c->nc - t0 < c->ncc ? c->nc - t0 : c->ncc;
        int64_t v_off = e * d->k * ntc;
        int64_t in_ints[] = {v_off, d->c, d->h, d->w, d->pad_top, d->pad_left, th, tw, t0, ntc};
        fconv_gpu_arg in_args[12];
        int n = 0;
        in_args[n++] = fconv_gpu_buf_arg(io->x);
        in_args[n++] = fconv_gpu_buf_arg(io->scratch);
        for (int i = 0; i < 10; i++) in_args[n++] = fconv_gpu_i64_arg(in_ints[i]);
        int64_t groups[3] = {fconv_gpu_div_up(d->c * ntc, 256), 1, 1}, local[3] = {256, 1, 1};
        st = io->ops->launch(io->gpu, kernels[m == 4][0], groups, local, in_args, n, io->timing);
        if (st != FCONV_OK) break;
        /* M's rows: group z = e G + grp, row m of it is M[(z Kg + m) ntc + t]. */
        int64_t ints[30] = {c->cols_floats, e * d->k, cg, ntc, e * d->groups, 0,
                            e * d->groups, 0, ntc, v_off, cg * ntc, ntc, 0, ntc, 0,
                            1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, c->splits, c->kchunk, 0};
        st = launch_gemm(io, c, io->scratch, u, NULL, io->scratch, io->scratch, ints);
        if (st != FCONV_OK) break;
        int64_t out_ints[] = {d->k, plan->out_h, plan->out_w, th, tw, t0, ntc, relu};
        fconv_gpu_arg out_args[11];
        n = 0;
        out_args[n++] = fconv_gpu_buf_arg(io->scratch);
        out_args[n++] = fconv_gpu_buf_arg(io->bias);
        out_args[n++] = fconv_gpu_buf_arg(io->y);
        for (int i = 0; i < 8; i++) out_args[n++] = fconv_gpu_i64_arg(out_ints[i]);
        groups[0] = fconv_gpu_div_up(d->k * ntc, 256);
        st = io->ops->launch(io->gpu, kernels[m == 4][1], groups, local, out_args, n, io->timing);
    }
    if (tmp) {
        if (st == FCONV_OK) st = io->ops->finish(io->gpu, io->timing);
        io->ops->free(tmp);
    }
    return st;
}

/* One chunk's GEMM (and split-K's reduction): columns n0 .. n0 + ncc of groups g0 .. g0 +
 * gcount, B gathered from x, read from the column buffer or, for c->direct, from x. */
static fconv_status run_gemm_chunk(const fconv_plan *plan, const fconv_gpu_io *io,
                                   const fconv_gpu_gemm_geometry *c, int64_t g0, int64_t gcount,
                                   int64_t n0, int64_t ncc) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    int64_t pq = plan->out_h * plan->out_w, relu = d->activation == FCONV_ACTIVATION_RELU;
    int64_t cg = d->c / d->groups;
    /* B's addressing as a matrix (conv2d_gemm_*): x's channels of group g0 + gl, images
     * C PQ apart; or the chunk's columns, one group's KD x ncc after another. */
    int64_t b_off = c->direct ? g0 * cg * pq : 0, b_gstride = c->direct ? cg * pq : c->kd * ncc;
    int64_t ldb = c->direct ? pq : ncc, b_col0 = c->direct ? n0 : 0;
    int64_t b_cols = c->direct ? pq : ncc, b_imgstride = c->direct ? d->c * pq : 0;
    int64_t ints[30] = {c->cols_floats, d->k, c->kd, pq, d->groups, g0, gcount, n0, ncc, b_off,
                        b_gstride, ldb, b_col0, b_cols, b_imgstride, d->c, d->h, d->w, d->r, d->s,
                        plan->out_w, d->stride_h, d->stride_w, d->pad_top, d->pad_left,
                        d->dilation_h, d->dilation_w, c->splits, c->kchunk, relu};
    return launch_gemm(io, c, c->direct || c->gather ? io->x : io->work, io->w, io->bias, io->y,
                       io->work, ints);
}

/* gpu-implicit-gemm and gpu-im2col-gemm: chunk by chunk, im2col (where B is the column
 * buffer) then the GEMM. */
static fconv_status run_gemm(const fconv_plan *plan, const fconv_gpu_io *io) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    const fconv_gpu_gemm_geometry *c = io->gemm;
    fconv_status st = FCONV_OK;
    for (int64_t g0 = 0; g0 < d->groups && st == FCONV_OK; g0 += c->gchunk) {
        int64_t gcount = d->groups - g0 < c->gchunk ? d->groups - g0 : c->gchunk;
        for (int64_t n0 = 0; n0 < c->nc && st == FCONV_OK; n0 += c->ncc) {
            int64_t ncc = c->nc - n0 < c->ncc ? c->nc - n0 : c->ncc;
            if (!c->direct && !c->gather) {
                int64_t ints[] = {d->c, d->h, d->w, d->r, d->s, plan->out_h, plan->out_w,
                                  d->stride_h, d->stride_w, d->pad_top, d->pad_left,
                                  d->dilation_h, d->dilation_w, d->groups, g0, gcount, n0, ncc,
                                  IM2COL_ROWS};
                fconv_gpu_arg args[24];
                int n = 0;
                args[n++] = fconv_gpu_buf_arg(io->x);
                args[n++] = fconv_gpu_buf_arg(io->work);
                for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
                    args[n++] = fconv_gpu_i64_arg(ints[i]);
                int64_t groups[3] = {fconv_gpu_div_up(ncc, 256),
                                     gcount * fconv_gpu_div_up(c->kd, IM2COL_ROWS), 1};
                int64_t local[3] = {256, 1, 1};
                st = io->ops->launch(io->gpu, "conv2d_im2col", groups, local, args, n, io->timing);
                if (st != FCONV_OK) break;
            }
            st = run_gemm_chunk(plan, io, c, g0, gcount, n0, ncc);
        }
    }
    return st;
}

fconv_status fconv_gpu_conv2d_run(const fconv_plan *plan, const fconv_gpu_io *io) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    /* Where the device is too small for a tiled kernel (or the sizes for the GEMMs' 32-bit
     * offsets), prepare set up nothing and the one-thread-per-output kernel runs instead. */
    if (is_winograd(plan) && io->gemm) return run_winograd(plan, io);
    if (is_gemm(plan) && io->gemm) return run_gemm(plan, io);
    fconv_gpu_arg args[24];
    int n = 0;
    args[n++] = fconv_gpu_buf_arg(io->x);
    args[n++] = fconv_gpu_buf_arg(io->w);
    args[n++] = fconv_gpu_buf_arg(io->bias); /* NULL buffer: no bias */
    args[n++] = fconv_gpu_buf_arg(io->y);
    int64_t ints[] = {d->n, d->c, d->h, d->w, d->k, d->r, d->s, plan->out_h, plan->out_w,
                      d->stride_h, d->stride_w, d->pad_top, d->pad_left, d->dilation_h,
                      d->dilation_w, d->groups, d->activation == FCONV_ACTIVATION_RELU};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) args[n++] = fconv_gpu_i64_arg(ints[i]);
    int64_t T = io->limits.max_group_size < 256 ? (int64_t)io->limits.max_group_size : 256;
    int64_t groups[3] = {fconv_gpu_div_up(plan->y_elems, T), 1, 1}, local[3] = {T, 1, 1};
    return io->ops->launch(io->gpu, "conv2d_naive", groups, local, args, n, io->timing);
}
