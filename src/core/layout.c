/*
 * layout.c — conv2d's NHWC layout for the algorithms that read and write NCHW only: x is
 * transposed into an NCHW copy at the end of the workspace, the algorithm runs on it into an
 * NCHW copy of y, and that copy is transposed into y. Algorithms that run NHWC as it lies
 * (fconv_algorithm.runs_nhwc) skip both. select.c adds the copies' bytes to a candidate's
 * workspace and their time to its cost; plan.c runs them around the algorithm.
 */
#include "core/dispatch.h"
#include "core/internal.h"
#include "core/parallel.h"

/* Pixels a transpose task moves: at least 64, so that a task writes each channel's 256 bytes
 * (four whole lines) at once, and at least TASK_FLOATS floats: tasks of 64 three-channel pixels
 * had cost more to hand out than to move. */
#define PIXELS_PER_TASK 64
#define TASK_FLOATS 4096

/* What the copies cost per float of x and y (each read once and written once, transposed
 * in registers), on one thread. Measured as the NHWC run's time less the NCHW run's (2
 * threads, 5 alternated rounds, Zen 5): 0.135 ns a float with im2col on 64 -> 64 1x1 on
 * 56^2, 0.12 at batch 8 and on 256 -> 64, but 0.3 beside winograd-4x4 (64 x 56^2 3x3) and
 * 0.44 beside winograd-stride2 (the stem), whose own workspaces push the copies out of L2:
 * 0.24-0.88 ns per thread. The worst case, so that an algorithm which runs NHWC as it lies wins where it is close:
 * with 0.25 AUTO took winograd-stride2 through the copies for the NHWC stem (0.83 ms, 5 reps
 * in the suite) where implicit-gemm ran it in 0.61. */
#define COPY_SECONDS_PER_FLOAT 0.9e-9

/* A tensor of one channel lies the same in NHWC as in NCHW: the algorithm reads x (C = 1) or
 * writes y (K = 1) in place, with no copy. 2 threads, Ice Lake VM: 1 x 3 x 1024^2 -> 1 3x3
 * NHWC had spent more on transposing its one-channel output than on the layer. */
static int x_copied(const fconv_plan *plan) { return plan->conv2d.c > 1; }
static int y_copied(const fconv_plan *plan) { return plan->conv2d.k > 1; }

int fconv_layout_copies(const fconv_plan *plan, const struct fconv_algorithm *a) {
    return plan->kind == FCONV_KIND_CONV2D && plan->conv2d.layout == FCONV_LAYOUT_NHWC &&
           !(a->runs_nhwc && a->runs_nhwc(plan)) && (x_copied(plan) || y_copied(plan));
}

/* Bytes of x's copy, the copies' first bytes (none where x is read in place). */
static size_t x_copy_bytes(const fconv_plan *plan) {
    return x_copied(plan) ? fconv_round_up_64((size_t)plan->x_elems * sizeof(float)) : 0;
}

size_t fconv_layout_copy_bytes(const fconv_plan *plan) {
    return x_copy_bytes(plan) + (y_copied(plan) ? fconv_round_up_64((size_t)plan->y_elems * sizeof(float)) : 0);
}

double fconv_layout_copy_seconds(const fconv_plan *plan) {
    int tasks = plan->threads < 1 ? 1 : plan->threads;
    const double floats = (x_copied(plan) ? (double)plan->x_elems : 0.0) + (y_copied(plan) ? (double)plan->y_elems : 0.0);
    return floats * COPY_SECONDS_PER_FLOAT / tasks;
}

const char *fconv_layout_copies_named(const fconv_plan *plan) {
    return !x_copied(plan) ? "y" : !y_copied(plan) ? "x" : "x and y";
}

double fconv_algorithm_cost(const fconv_plan *plan, const struct fconv_algorithm *a) {
    return a->cost(plan) + (fconv_layout_copies(plan, a) ? fconv_layout_copy_seconds(plan) : 0.0);
}

/* One image's [pixels][channels] matrix to [channels][pixels] (to_nchw) or back, a task per
 * run of PIXELS_PER_TASK pixels of one image. */
struct transpose_ctx {
    const struct fconv_kernels *kern;
    const float *src;
    float *dst;
    int64_t pixels, channels, strip, strips; /* strip: pixels a task */
    int to_nchw;
};

static void transpose_task(const void *vctx, size_t task) {
    const struct transpose_ctx *t = vctx;
    int64_t image = (int64_t)task / t->strips, p0 = (int64_t)task % t->strips * t->strip;
    int64_t n = t->pixels - p0 < t->strip ? t->pixels - p0 : t->strip;
    size_t image_floats = (size_t)(t->pixels * t->channels);
    const float *src = t->src + (size_t)image * image_floats;
    float *dst = t->dst + (size_t)image * image_floats;
    if (t->to_nchw) /* [pixels][channels] rows p0.. -> columns p0.. of [channels][pixels] */
        t->kern->transpose(src + p0 * t->channels, (size_t)t->channels, (size_t)n, (size_t)t->channels, dst + p0,
                           (size_t)t->pixels);
    else /* columns p0.. of [channels][pixels] -> rows p0.. of [pixels][channels] */
        t->kern->transpose(src + p0, (size_t)t->pixels, (size_t)t->channels, (size_t)n, dst + p0 * t->channels,
                           (size_t)t->channels);
}

static void transpose_images(const fconv_plan *plan, const float *src, float *dst, int64_t pixels,
                             int64_t channels, int to_nchw) {
    int64_t strip = (TASK_FLOATS / channels + PIXELS_PER_TASK - 1) / PIXELS_PER_TASK * PIXELS_PER_TASK;
    if (strip < PIXELS_PER_TASK) strip = PIXELS_PER_TASK;
    int64_t strips = (pixels + strip - 1) / strip;
    struct transpose_ctx t = {plan->kernels, src, dst, pixels, channels, strip, strips, to_nchw};
    fconv_parallel_1d_steal(plan->threads, (size_t)(plan->conv2d.n * strips), transpose_task, &t);
}

void fconv_layout_to_nchw(const fconv_plan *plan, const float *x, float *y, void *workspace, const float **x_nchw,
                          float **y_nchw) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    float *copies = (float *)((char *)workspace + plan->algo_workspace_bytes - fconv_layout_copy_bytes(plan));
    *x_nchw = x_copied(plan) ? copies : x;
    *y_nchw = y_copied(plan) ? copies + x_copy_bytes(plan) / sizeof(float) : y;
    if (x_copied(plan)) transpose_images(plan, x, copies, d->h * d->w, d->c, 1);
}

void fconv_layout_to_nhwc(const fconv_plan *plan, const float *y_nchw, float *y) {
    if (y_copied(plan)) transpose_images(plan, y_nchw, y, plan->out_h * plan->out_w, plan->conv2d.k, 0);
}
