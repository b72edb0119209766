/*
 * gpu-conv2d.c - conv2d on the GPU (stride, padding, dilation, groups, bias, ReLU): the
 * tiled, register-blocked implicit GEMM (64 x 64 tiles of 16 x 16 threads), the fused
 * Winograd F(2x2,3x3) (3x3, stride 1, dilation 1; filters transformed once per plan on the
 * device), im2col into a plan-time device buffer + our tiled GEMM (8 x 8 per thread, split-K
 * where the tiles are too few; 1x1 stride-1 layers read x as it lies), or one thread per
 * output (gpu-naive, and the fallback where a device cannot run 256-thread blocks or lacks
 * the local memory a tiled kernel needs).
 */
#include "gpu/gpu-driver.h"

fconv_status fconv_gpu_conv2d_run(const fconv_plan *plan, const fconv_gpu_io *io);

/* gpu-im2col-gemm's column buffer: at most this many floats (128 MiB) unless one group's
 * 64 columns need more; the groups and columns are walked in chunks that fit. Split-K's
 * partial sums are held to the same cap. */
#define IM2COL_CAP_FLOATS ((int64_t)32 << 20)

/* Rows of the column buffer per thread of conv2d_im2col. */
#define IM2COL_ROWS 32

/* Shared memory of conv2d_winograd_2x2 (gpu-kernels.h): 8 x 240 + 16 x 8 x 32 + 16 x 8 x 16. */
#define WINOGRAD_LOCAL_BYTES ((8 * 240 + 16 * 8 * 32 + 16 * 8 * 16) * 4)
/* conv2d_gemm_cols: As 16 x 68 and Bs 16 x 64 floats. */
#define GEMM_LOCAL_BYTES ((16 * 68 + 16 * 64) * 4)

fconv_gpu_gemm_geometry fconv_gpu_gemm_geometry_of(const fconv_plan *plan, int64_t compute_units) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    fconv_gpu_gemm_geometry c;
    c.kd = d->c / d->groups * d->r * d->s;
    c.nc = d->n * plan->out_h * plan->out_w;
    c.direct = d->r == 1 && d->s == 1 && d->stride_h == 1 && d->stride_w == 1 &&
               d->pad_top == 0 && d->pad_bottom == 0 && d->pad_left == 0 && d->pad_right == 0;
    c.ncc = c.nc;
    c.gchunk = d->groups;
    c.cols_floats = 0;
    if (!c.direct) {
        if (c.kd * c.nc > IM2COL_CAP_FLOATS) {
            c.ncc = IM2COL_CAP_FLOATS / c.kd / FCONV_GPU_GEMM_TILE * FCONV_GPU_GEMM_TILE;
            if (c.ncc < FCONV_GPU_GEMM_TILE) c.ncc = FCONV_GPU_GEMM_TILE;
            if (c.ncc > c.nc) c.ncc = c.nc;
        }
        c.gchunk = IM2COL_CAP_FLOATS / (c.kd * c.ncc);
        if (c.gchunk < 1) c.gchunk = 1;
        if (c.gchunk > d->groups) c.gchunk = d->groups;
        c.cols_floats = c.gchunk * c.kd * c.ncc;
    }
    int64_t kg = d->k / d->groups, outputs = c.gchunk * kg * c.ncc;
    int64_t blocks = fconv_gpu_div_up(c.ncc, FCONV_GPU_GEMM_TILE) *
                     fconv_gpu_div_up(kg, FCONV_GPU_GEMM_TILE) * c.gchunk;
    int64_t steps = fconv_gpu_div_up(c.kd, FCONV_GPU_GEMM_STEP);
    int64_t splits = blocks >= 2 * compute_units ? 1 : fconv_gpu_div_up(4 * compute_units, blocks);
    if (splits > steps / 8) splits = steps / 8;
    if (splits > IM2COL_CAP_FLOATS / outputs) splits = IM2COL_CAP_FLOATS / outputs;
    if (splits < 1) splits = 1;
    c.kchunk = fconv_gpu_div_up(steps, splits) * FCONV_GPU_GEMM_STEP;
    c.splits = fconv_gpu_div_up(c.kd, c.kchunk); /* no empty range */
    c.part_floats = c.splits > 1 ? c.splits * outputs : 0;
    return c;
}

/* Floats of gpu-winograd-2x2's transformed filters: 16 per (output, input channel). */
static int64_t winograd_u_floats(const fconv_plan *plan) {
    return 16 * plan->conv2d.k * (plan->conv2d.c / plan->conv2d.groups);
}

static int tiled_ok(const fconv_gpu_io *io, size_t local_bytes) {
    return io->limits.max_group_size >= 256 && io->limits.local_mem_bytes >= local_bytes;
}

static fconv_status winograd_filter(const fconv_plan *plan, const fconv_gpu_io *io,
                                    fconv_gpu_buf *w, fconv_gpu_buf *u) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    fconv_gpu_arg args[] = {fconv_gpu_buf_arg(w), fconv_gpu_buf_arg(u), fconv_gpu_i64_arg(d->k),
                            fconv_gpu_i64_arg(d->c / d->groups), fconv_gpu_i64_arg(d->groups)};
    int64_t groups[3] = {fconv_gpu_div_up(d->k * (d->c / d->groups), 256), 1, 1};
    int64_t local[3] = {256, 1, 1};
    return io->ops->launch(io->gpu, "conv2d_winograd_filter", groups, local, args, 5, io->timing);
}

fconv_status fconv_gpu_conv2d_prepare(const fconv_plan *plan, const fconv_gpu_io *io,
                                      fconv_gpu_buf **work, int *ready) {
    *work = NULL;
    *ready = 0;
    fconv_status st = FCONV_OK;
    if (plan->algo->id == FCONV_ALGO_GPU_WINOGRAD_2X2 && tiled_ok(io, WINOGRAD_LOCAL_BYTES)) {
        st = io->ops->alloc(io->gpu, (size_t)winograd_u_floats(plan) * sizeof(float), work);
        if (st == FCONV_OK && io->w) {
            st = winograd_filter(plan, io, io->w, *work);
            *ready = st == FCONV_OK;
        }
    } else if (plan->algo->id == FCONV_ALGO_GPU_IM2COL_GEMM && tiled_ok(io, GEMM_LOCAL_BYTES)) {
        fconv_gpu_gemm_geometry c = fconv_gpu_gemm_geometry_of(plan, io->limits.compute_units);
        if (c.cols_floats + c.part_floats > 0)
            st = io->ops->alloc(io->gpu, (size_t)(c.cols_floats + c.part_floats) * sizeof(float),
                                work);
    }
    return st;
}

static fconv_status run_winograd(const fconv_plan *plan, const fconv_gpu_io *io) {
    const fconv_conv2d_desc *d = &plan->conv2d;
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
    if (st == FCONV_OK) {
        fconv_gpu_arg args[] = {
            fconv_gpu_buf_arg(io->x), fconv_gpu_buf_arg(u), fconv_gpu_buf_arg(io->bias),
            fconv_gpu_buf_arg(io->y), fconv_gpu_i64_arg(d->n), fconv_gpu_i64_arg(d->c),
            fconv_gpu_i64_arg(d->h), fconv_gpu_i64_arg(d->w), fconv_gpu_i64_arg(d->k),
            fconv_gpu_i64_arg(plan->out_h), fconv_gpu_i64_arg(plan->out_w),
            fconv_gpu_i64_arg(d->pad_top), fconv_gpu_i64_arg(d->pad_left),
            fconv_gpu_i64_arg(d->groups),
            fconv_gpu_i64_arg(d->activation == FCONV_ACTIVATION_RELU)};
        int64_t th = (plan->out_h + 1) / 2, tw = (plan->out_w + 1) / 2;
        int64_t groups[3] = {d->n * fconv_gpu_div_up(th, 2) * fconv_gpu_div_up(tw, 16),
                             fconv_gpu_div_up(d->k / d->groups, 16), d->groups};
        int64_t local[3] = {16, 16, 1};
        st = io->ops->launch(io->gpu, "conv2d_winograd_2x2", groups, local, args,
                             (int)(sizeof args / sizeof args[0]), io->timing);
    }
    if (tmp) {
        if (st == FCONV_OK) st = io->ops->finish(io->gpu, io->timing);
        io->ops->free(tmp);
    }
    return st;
}

/* One chunk's GEMM (and split-K's reduction): columns n0 .. n0 + ncc of groups g0 .. g0 +
 * gcount, B read from the column buffer or, for c.direct, from x. */
static fconv_status run_gemm_chunk(const fconv_plan *plan, const fconv_gpu_io *io,
                                   const fconv_gpu_gemm_geometry *c, int64_t g0, int64_t gcount,
                                   int64_t n0, int64_t ncc) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    int64_t pq = plan->out_h * plan->out_w, relu = d->activation == FCONV_ACTIVATION_RELU;
    int64_t cg = d->c / d->groups;
    /* B's addressing (conv2d_gemm_cols): x's channels of group g0 + gl, images C PQ apart;
     * or the chunk's columns, one group's KD x ncc after another. */
    int64_t b_off = c->direct ? g0 * cg * pq : 0, b_gstride = c->direct ? cg * pq : c->kd * ncc;
    int64_t ldb = c->direct ? pq : ncc, b_col0 = c->direct ? n0 : 0;
    int64_t b_cols = c->direct ? pq : ncc, b_imgstride = c->direct ? d->c * pq : 0;
    fconv_gpu_arg args[] = {
        fconv_gpu_buf_arg(c->direct ? io->x : io->work), fconv_gpu_buf_arg(io->w),
        fconv_gpu_buf_arg(io->bias), fconv_gpu_buf_arg(io->y), fconv_gpu_buf_arg(io->work),
        fconv_gpu_i64_arg(c->cols_floats), fconv_gpu_i64_arg(d->k), fconv_gpu_i64_arg(c->kd),
        fconv_gpu_i64_arg(pq), fconv_gpu_i64_arg(d->groups), fconv_gpu_i64_arg(g0),
        fconv_gpu_i64_arg(gcount), fconv_gpu_i64_arg(n0), fconv_gpu_i64_arg(ncc),
        fconv_gpu_i64_arg(b_off), fconv_gpu_i64_arg(b_gstride), fconv_gpu_i64_arg(ldb),
        fconv_gpu_i64_arg(b_col0), fconv_gpu_i64_arg(b_cols), fconv_gpu_i64_arg(b_imgstride),
        fconv_gpu_i64_arg(c->splits), fconv_gpu_i64_arg(c->kchunk), fconv_gpu_i64_arg(relu)};
    int64_t groups[3] = {fconv_gpu_div_up(ncc, FCONV_GPU_GEMM_TILE),
                         fconv_gpu_div_up(d->k / d->groups, FCONV_GPU_GEMM_TILE), gcount * c->splits};
    int64_t local[3] = {64, 1, 1};
    fconv_status st = io->ops->launch(io->gpu, "conv2d_gemm_cols", groups, local, args,
                                      (int)(sizeof args / sizeof args[0]), io->timing);
    if (st != FCONV_OK || c->splits == 1) return st;
    fconv_gpu_arg rargs[] = {
        fconv_gpu_buf_arg(io->work), fconv_gpu_buf_arg(io->bias), fconv_gpu_buf_arg(io->y),
        fconv_gpu_i64_arg(c->cols_floats), fconv_gpu_i64_arg(d->k), fconv_gpu_i64_arg(pq),
        fconv_gpu_i64_arg(d->groups), fconv_gpu_i64_arg(g0), fconv_gpu_i64_arg(gcount),
        fconv_gpu_i64_arg(n0), fconv_gpu_i64_arg(ncc), fconv_gpu_i64_arg(c->splits),
        fconv_gpu_i64_arg(relu)};
    int64_t rgroups[3] = {fconv_gpu_div_up(gcount * (d->k / d->groups) * ncc, 256), 1, 1};
    int64_t rlocal[3] = {256, 1, 1};
    return io->ops->launch(io->gpu, "conv2d_gemm_reduce", rgroups, rlocal, rargs,
                           (int)(sizeof rargs / sizeof rargs[0]), io->timing);
}

static fconv_status run_im2col_gemm(const fconv_plan *plan, const fconv_gpu_io *io) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    fconv_gpu_gemm_geometry c = fconv_gpu_gemm_geometry_of(plan, io->limits.compute_units);
    fconv_status st = FCONV_OK;
    for (int64_t g0 = 0; g0 < d->groups && st == FCONV_OK; g0 += c.gchunk) {
        int64_t gcount = d->groups - g0 < c.gchunk ? d->groups - g0 : c.gchunk;
        for (int64_t n0 = 0; n0 < c.nc && st == FCONV_OK; n0 += c.ncc) {
            int64_t ncc = c.nc - n0 < c.ncc ? c.nc - n0 : c.ncc;
            if (!c.direct) {
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
                                     gcount * fconv_gpu_div_up(c.kd, IM2COL_ROWS), 1};
                int64_t local[3] = {256, 1, 1};
                st = io->ops->launch(io->gpu, "conv2d_im2col", groups, local, args, n, io->timing);
                if (st != FCONV_OK) break;
            }
            st = run_gemm_chunk(plan, io, &c, g0, gcount, n0, ncc);
        }
    }
    return st;
}

fconv_status fconv_gpu_conv2d_run(const fconv_plan *plan, const fconv_gpu_io *io) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    /* Where the device is too small for a tiled kernel, prepare allocated nothing and the
     * one-thread-per-output kernel runs instead. */
    if (plan->algo->id == FCONV_ALGO_GPU_WINOGRAD_2X2 && io->work) return run_winograd(plan, io);
    if (plan->algo->id == FCONV_ALGO_GPU_IM2COL_GEMM && tiled_ok(io, GEMM_LOCAL_BYTES))
        return run_im2col_gemm(plan, io);
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
    if (plan->algo->id == FCONV_ALGO_GPU_IMPLICIT_GEMM && io->limits.max_group_size >= 256) {
        int64_t groups[3] = {fconv_gpu_div_up(d->n * plan->out_h * plan->out_w, 64),
                             fconv_gpu_div_up(d->k / d->groups, 64), d->groups};
        int64_t local[3] = {16, 16, 1};
        return io->ops->launch(io->gpu, "conv2d_implicit_gemm", groups, local, args, n, io->timing);
    }
    int64_t T = io->limits.max_group_size < 256 ? (int64_t)io->limits.max_group_size : 256;
    int64_t groups[3] = {fconv_gpu_div_up(plan->y_elems, T), 1, 1}, local[3] = {T, 1, 1};
    return io->ops->launch(io->gpu, "conv2d_naive", groups, local, args, n, io->timing);
}
