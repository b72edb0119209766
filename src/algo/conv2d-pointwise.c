/*
 * conv2d-pointwise.c — the 1x1 conv2d as one GEMM per image and group, that per-group
 * product with its epilogue, and its packed weights (see the header).
 */
#include "algo/conv2d-pointwise.h"

#include "core/cost-model.h"
#include "core/dispatch.h"
#include "core/parallel.h"
#include "kernels/gemm/gemm.h"

int fconv_conv2d_is_pointwise(const fconv_plan *plan) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    return plan->kind == FCONV_KIND_CONV2D && d->r == 1 && d->s == 1 && d->stride_h == 1 &&
           d->stride_w == 1 && d->pad_top == 0 && d->pad_left == 0 && d->pad_bottom == 0 &&
           d->pad_right == 0;
}

static size_t group_floats(const fconv_plan *plan, int64_t depth) {
    return fconv_gemm_packed_a_floats(plan->kernels, (size_t)(plan->conv2d.k / plan->conv2d.groups),
                                      (size_t)depth);
}

fconv_status fconv_conv2d_pack_weights(fconv_plan *plan, int64_t depth) {
    if (!plan->weights) return FCONV_OK;
    const int64_t groups = plan->conv2d.groups, kg = plan->conv2d.k / groups;
    const size_t per_group = group_floats(plan, depth);
    float *p = fconv_alloc_aligned(per_group * (size_t)groups * sizeof *p);
    if (!p)
        return fconv_fail(FCONV_ENOMEM, "conv2d: cannot allocate %zu bytes of packed weights",
                          per_group * (size_t)groups * sizeof *p);
    for (int64_t g = 0; g < groups; g++)
        fconv_gemm_pack_a(plan->kernels, (size_t)kg, (size_t)depth, plan->weights + g * kg * depth, (size_t)depth,
                          p + (size_t)g * per_group);
    plan->algo_state = p;
    return FCONV_OK;
}

size_t fconv_conv2d_packed_group_bytes(const fconv_plan *plan, int64_t depth) {
    return plan->weights ? 0 : fconv_round_up_64(group_floats(plan, depth) * sizeof(float));
}

const float *fconv_conv2d_group_weights(const fconv_plan *plan, int64_t g, int64_t depth, const float *w,
                                        const float *packed, float *scratch) {
    if (packed) return packed + (size_t)g * group_floats(plan, depth);
    const int64_t kg = plan->conv2d.k / plan->conv2d.groups;
    fconv_gemm_pack_a(plan->kernels, (size_t)kg, (size_t)depth, w + g * kg * depth, (size_t)depth, scratch);
    return scratch;
}

/* Measured, 2 threads, streamed against not: 8 x 64 x 56^2 -> 256 1x1 (25.7 MB) 5.0 -> 4.2
 * ms, -> 64 1.5 -> 1.08, 8 x 128 x 28^2 -> 512 4.6 -> 3.9-4.3; from a smaller output on
 * Intel (fconv_cpu_info.gemm_stream_output_bytes). */
int fconv_conv2d_gemm_streams(const fconv_plan *plan, int64_t pixels) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    return 4.0 * (double)d->n * (double)d->k * (double)pixels >= fconv_cpu()->gemm_stream_output_bytes &&
           pixels % (int64_t)plan->kernels->lanes == 0;
}

/* fconv_conv2d_gemm_group on `threads` threads; b_from_memory: cols is a 1x1 layer's input
 * read in place, a batch too large to stay in the caches from one run to the next
 * (input_from_memory). */
static void gemm_group_on(const fconv_plan *plan, int threads, int64_t n, int64_t g, const float *cols,
                          int64_t depth, int64_t pixels, const float *wg, const float *bias, float *y,
                          int b_from_memory) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    int64_t kg = d->k / d->groups;
    int relu = d->activation == FCONV_ACTIVATION_RELU;
    float *yg = y + (n * d->k + g * kg) * pixels;
    const unsigned flags = (fconv_conv2d_gemm_streams(plan, pixels) ? FCONV_PREPACKED_STREAM_C : 0u) |
                           (b_from_memory ? FCONV_PREPACKED_B_FROM_MEMORY : 0u);
    fconv_gemm_prepacked(plan->kernels, threads, (size_t)kg, (size_t)pixels, (size_t)depth, wg, cols,
                         (size_t)pixels, yg, (size_t)pixels, flags, bias ? bias + g * kg : NULL, relu);
}

void fconv_conv2d_gemm_group(const fconv_plan *plan, int64_t n, int64_t g, const float *cols, int64_t depth,
                             int64_t pixels, const float *wg, const float *bias, float *y) {
    gemm_group_on(plan, plan->threads, n, g, cols, depth, pixels, wg, bias, y, 0);
}

/* Whether a 1x1 layer's input comes from memory at every run: the batch's, past the bytes that
 * stay cached from one run to the next (as implicit-gemm's FCONV_IG_INPUT_STREAMS). */
static int input_from_memory(const fconv_plan *plan) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    return 4.0 * (double)d->n * (double)d->c * (double)(d->h * d->w) > FCONV_CACHED_BYTES;
}

/* An image per thread at a time (fconv_conv2d_pointwise): each image's GEMM on one thread,
 * one parallel region for the batch. Split over 2 threads, every image paid a region's
 * start and end and each thread wrote half of every output plane: 2 threads, Zen 5, 9
 * alternated rounds, im2col 8 x 64 x 56^2 -> 64 0.628 -> 0.597 ms, -> 256 2.20 -> 2.16,
 * 8 x 128 x 28^2 -> 512 2.10 -> 2.02. The GEMM's bits do not depend on its threads. */
static int image_per_thread(const fconv_plan *plan) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    return d->groups == 1 && plan->threads > 1 && d->n % plan->threads == 0;
}

/* An input this small stays in L2 from one run to the next and while every sliver of
 * weights passes over it (a Zen 4 core's L2). */
#define POINTWISE_INPUT_L2_BYTES (1024.0 * 1024)

/* On the wide tile's cores (fconv_cpu_info.gemm_wide_tile) the 1x1 products ran 1.03-1.30x
 * faster than on the 8 x 32 tile the rates below were fitted to, and on 56^2 to 14^2 maps,
 * where this model had them tie with implicit-gemm, 1.02-1.23x faster than implicit-gemm (7^2
 * maps 0.88-0.97x: left to it). Ice Lake VM, 2 threads, ResNet-50's NCHW 1x1 layers at batch
 * 1 and 8, 7-21 alternated rounds in one process. (Where 512-bit loads issue two a cycle the
 * products of depth 128 and more later went back to the 8 x 32 tile, which ran them as fast or
 * faster there: gemm-packed.c's wide_tile().) */
#define POINTWISE_WIDE_TILE_SPEEDUP 1.11
/* At every depth: on an Emerald Rapids VM (two 512-bit loads a cycle) implicit-gemm had run
 * the NCHW 1x1 layers of 512 and 1024 input channels 1.02-1.20x faster than im2col, and the
 * factor was kept to depths below 512 there; after the packed GEMM's changes of 2026-11-30 (the
 * 8 x 32 tile from depth 128, C streamed off a line, the next B sliver asked for ahead) im2col
 * ran them faster: 2 threads, 21 alternated rounds in one process, 512 -> 128 on 28^2 1.21x,
 * -> 256 1.18x, 1024 -> 256 on 14^2 1.11x, -> 512 1.14x, batch 8 1.05, 1.04, 1.06, 1.00x; one
 * thread, 9 rounds, 1.02-1.13x. On 7^2 maps (2048 -> 512, 512 -> 2048) the model still takes
 * implicit-gemm, which ran them 1.04-1.15x faster at batch 1 and 0.92x at batch 8. */

double fconv_conv2d_pointwise_seconds(const fconv_plan *plan) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    const double kg = (double)(d->k / d->groups), depth = (double)(d->c / d->groups), pixels = (double)(d->h * d->w);
    const double bytes = 4.0 * (double)d->n * pixels * (double)(d->c + d->k);
    /* A cached batch whose input (B) sits in L2: the stores of C go on behind the
     * multiply-adds (2 threads, 64 -> 256 on 56^2 ran in 0.47 ms, its products alone at 110
     * GFLOP/s per core; the copy-rate charge for its 3.2 MB of C had put it 0.15 ms above
     * implicit-gemm, which took 0.51). A batch of 8 images of 256 x 14^2 (1.6 MB of input)
     * read B from L3 and lost 8% to implicit-gemm. */
    const double input_bytes = 4.0 * (double)d->n * (double)d->c * pixels;
    const enum fconv_gemm_c_write c_write =
        fconv_conv2d_gemm_streams(plan, d->h * d->w)                                     ? FCONV_GEMM_C_STREAMED
        : bytes <= FCONV_CACHED_BYTES && input_bytes <= POINTWISE_INPUT_L2_BYTES ? FCONV_GEMM_C_HIDDEN
                                                                                     : FCONV_GEMM_C_COPIED;
    const int threads = image_per_thread(plan) ? 1 : plan->threads;
    double per_block = fconv_gemm_prepacked_seconds(plan->kernels, kg, pixels, depth, threads, c_write);
    /* The micro-kernel reads the input (B) in place, depth rows at once, too many streams for
     * the hardware prefetchers; it asks for them ahead (PACK_PREFETCH_ROWS), which hides the
     * read from L3 but not always from memory (implicit-gemm prefetches its input further and
     * keeps its speed). A batch's input and output stay in L3 from one run to the next below
     * FCONV_LLC_BYTES: there the charge, once taken from 8 MiB, had kept AUTO on
     * implicit-gemm for 8 x 64 x 56^2 -> 64 (12.8 MB: 0.68 ms against im2col's 0.62; 2
     * threads, Zen 5), while 8 x 256 x 56^2 -> 128 (38.5 MB) ran im2col in 5.0-7.0 ms against
     * implicit-gemm's 5.1. */
    if (bytes > FCONV_LLC_BYTES) per_block += fconv_stream_seconds(4.0 * depth * pixels);
    if (plan->kernels->gemm_ukernel_wide && fconv_cpu()->gemm_wide_tile) per_block /= POINTWISE_WIDE_TILE_SPEEDUP;
    return (double)d->n * (double)d->groups * per_block / (double)(plan->threads / threads);
}

struct image_ctx {
    const fconv_plan *plan;
    const float *x, *wg, *bias;
    float *y;
};

static void image_task(const void *vctx, size_t n) {
    const struct image_ctx *c = vctx;
    const fconv_conv2d_desc *d = &c->plan->conv2d;
    const int64_t pixels = d->h * d->w;
    gemm_group_on(c->plan, 1, (int64_t)n, 0, c->x + (int64_t)n * d->c * pixels, d->c, pixels, c->wg, c->bias, c->y,
                  input_from_memory(c->plan));
}

void fconv_conv2d_pointwise(const fconv_plan *plan, const float *x, const float *w, const float *packed,
                            const float *bias, float *y, void *scratch) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    int64_t cg = d->c / d->groups, pixels = d->h * d->w;
    if (image_per_thread(plan)) {
        struct image_ctx c = {plan, x, fconv_conv2d_group_weights(plan, 0, cg, w, packed, scratch), bias, y};
        /* each thread's share of the images, then the other's not begun */
        fconv_parallel_1d_steal(plan->threads, (size_t)d->n, image_task, &c);
        return;
    }
    for (int64_t g = 0; g < d->groups; g++) {
        const float *wg = fconv_conv2d_group_weights(plan, g, cg, w, packed, scratch);
        for (int64_t n = 0; n < d->n; n++)
            gemm_group_on(plan, plan->threads, n, g, x + (n * d->c + g * cg) * pixels, cg, pixels, wg, bias, y,
                          input_from_memory(plan));
    }
}
