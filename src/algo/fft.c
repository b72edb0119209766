/*
 * fft.c — convolution by one whole-image FFT (FFTW single precision). filter2d and conv1d
 * run the overlap-save driver of fft-common.c with one tile covering the image; conv2d
 * (stride 1) transforms every input channel and filter once, sums X_c * W_kc over channels
 * per frequency and inverts once per output channel. Results never depend on threads.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo/fft-common.h"
#include "algo/filter-lowering.h"
#include "core/cost-model.h"
#include "core/parallel.h"

/* ---- geometry --------------------------------------------------------------------------- */

/* filter2d / conv1d: one tile of the fast size covering all of P. */
static struct fconv_fft_tiling whole_tiling(const fconv_plan *plan) {
    return fconv_fft_filter_tiling(plan, fconv_fft_fast_size(fconv_filter_padded_h(plan)),
                                   fconv_fft_fast_size(fconv_filter_padded_w(plan)));
}

/* conv2d: the image sits at the origin of a T0 x T1 buffer, zeros after it. Output p reads
 * padded rows p - pad_top + e (e < dilated kernel extent RE), i.e. buffer rows (mod T0) from
 * -pad_top to H + pad_bottom - 1; they alias no image row as long as T0 >= H + max(pads),
 * and the flipped kernel needs T0 >= RE. Same for columns. */
struct conv_geometry {
    int64_t t0, t1, re, se; /* transform size; dilated kernel extents */
    int64_t cg, kg;         /* channels and filters per group */
    int64_t slots;          /* workers with their own buffers */
    size_t real_bytes, spectrum_bytes;
};

static int64_t max_i64(int64_t a, int64_t b) { return a > b ? a : b; }

static struct conv_geometry conv_geometry(const fconv_plan *plan) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    struct conv_geometry g;
    g.re = d->dilation_h * (d->r - 1) + 1;
    g.se = d->dilation_w * (d->s - 1) + 1;
    g.t0 = fconv_fft_fast_size(max_i64(d->h + max_i64(d->pad_top, d->pad_bottom), g.re));
    g.t1 = fconv_fft_fast_size(max_i64(d->w + max_i64(d->pad_left, d->pad_right), g.se));
    g.cg = d->c / d->groups;
    g.kg = d->k / d->groups;
    /* Phases run over input channels, over filters x channels (weight transforms) and over
     * output channels; one set of buffers per worker that can be busy. */
    int64_t tasks = max_i64(d->c, d->k * g.cg);
    g.slots = plan->threads < tasks ? plan->threads : tasks;
    g.real_bytes = fconv_fft_real_bytes(g.t0, g.t1);
    g.spectrum_bytes = fconv_fft_spectrum_bytes(g.t0, g.t1);
    return g;
}

/* ---- table entry ------------------------------------------------------------------------ */

static fconv_status fft_supports(const fconv_plan *plan, char *why, size_t why_len) {
    if (plan->kind != FCONV_KIND_CONV2D) {
        struct fconv_fft_tiling t = whole_tiling(plan);
        return fconv_fft_filter_supports(plan, &t, "fft", why, why_len);
    }
    const fconv_conv2d_desc *d = &plan->conv2d;
    if (d->stride_h != 1 || d->stride_w != 1) {
        snprintf(why, why_len, "fft needs stride 1, got %lldx%lld (a strided layer would "
                 "transform outputs it throws away)", (long long)d->stride_h, (long long)d->stride_w);
        return FCONV_EUNSUPPORTED;
    }
    struct conv_geometry g = conv_geometry(plan);
    if (g.t0 > FCONV_FFT_MAX_EXTENT || g.t1 > FCONV_FFT_MAX_EXTENT ||
        (double)g.t0 * (double)g.t1 > (double)INT32_MAX) {
        snprintf(why, why_len, "fft needs a %lldx%lld transform, beyond FFTW's int sizes",
                 (long long)g.t0, (long long)g.t1);
        return FCONV_EUNSUPPORTED;
    }
    /* Workspace bytes must fit size_t: spectra of C inputs + K*C/G filters + slots. */
    double bytes = (double)g.spectrum_bytes * (double)(d->c + d->k * g.cg + g.slots) +
                   (double)g.real_bytes * (double)g.slots;
    if (bytes > (double)SIZE_MAX / 2) {
        snprintf(why, why_len, "fft would need %.3g bytes of spectra", bytes);
        return FCONV_EUNSUPPORTED;
    }
    return FCONV_OK;
}

/* conv2d: slack + C input spectra + (K*C/G filter spectra unless pre-transformed)
 *         + slots * (real buffer + output spectrum). */
static size_t fft_workspace(const fconv_plan *plan) {
    if (plan->kind != FCONV_KIND_CONV2D) {
        struct fconv_fft_tiling t = whole_tiling(plan);
        return fconv_fft_filter_workspace(plan, &t);
    }
    const fconv_conv2d_desc *d = &plan->conv2d;
    struct conv_geometry g = conv_geometry(plan);
    size_t filters = plan->weights ? 0 : (size_t)(d->k * g.cg);
    return FCONV_FFT_ALIGN_SLACK + ((size_t)d->c + filters) * g.spectrum_bytes +
           (size_t)g.slots * (g.real_bytes + g.spectrum_bytes);
}

static double fft_cost(const fconv_plan *plan) {
    if (plan->kind != FCONV_KIND_CONV2D) {
        struct fconv_fft_tiling t = whole_tiling(plan);
        return fconv_fft_filter_cost(plan, &t);
    }
    const fconv_conv2d_desc *d = &plan->conv2d;
    struct conv_geometry g = conv_geometry(plan);
    double transform = fconv_fft_transform_seconds(g.t0, g.t1);
    double transforms = (double)d->n * (double)(d->c + d->k) +
                        (plan->weights ? 0.0 : (double)(d->k * g.cg));
    /* The channel sum: about 2 ns per complex multiply-add, measured; it streams the K*C/G
     * filter spectra from memory once per image (64x56x56, 64 3x3 filters: 7.6M products
     * in about 15 ms). */
    double products = 2.0e-9 * (double)d->n * (double)d->k * (double)g.cg * (double)g.t0 *
                      (double)(g.t1 / 2 + 1);
    /* two parallel regions per image (input spectra, output channels), one more for the
     * filter spectra when they come at execute time */
    double regions = 2.0 * (double)d->n + (plan->weights ? 0.0 : 1.0);
    return (transforms * transform + products) / (double)g.slots +
           (g.slots > 1 ? regions * FCONV_PARALLEL_REGION_SECONDS : 0.0);
}

/* ---- conv2d ----------------------------------------------------------------------------- */

struct conv_state {
    fftwf_plan forward, inverse;
    float *filter_spectra; /* [K][C/G] spectra when the plan holds the weights, else NULL */
};

struct conv_ctx {
    const fconv_plan *plan;
    const struct conv_state *state;
    struct conv_geometry g;
    const float *x, *w, *bias; /* x: the current image n */
    float *y;                  /* the current image's output */
    float *x_spectra, *filter_spectra;
    char *buffers;             /* slot s: real buffer, then a spectrum */
};

static float *slot_real(const struct conv_ctx *c, size_t slot) {
    return (float *)(c->buffers + slot * (c->g.real_bytes + c->g.spectrum_bytes));
}
static float *slot_spectrum(const struct conv_ctx *c, size_t slot) {
    return (float *)((char *)slot_real(c, slot) + c->g.real_bytes);
}
static float *spectrum_at(float *base, const struct conv_geometry *g, int64_t i) {
    return (float *)((char *)base + (size_t)i * g->spectrum_bytes);
}

/* Spectrum of filter (k, c): the dilated kernel flipped (correlation -> convolution). */
static void filter_spectrum(const fconv_plan *plan, const struct conv_geometry *g,
                            const fftwf_plan forward, const float *w, int64_t kc, float *real,
                            float *spectrum) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    memset(real, 0, (size_t)g->t0 * (size_t)g->t1 * sizeof *real);
    const float *wk = w + kc * d->r * d->s;
    for (int64_t r = 0; r < d->r; r++)
        for (int64_t s = 0; s < d->s; s++)
            real[(g->re - 1 - r * d->dilation_h) * g->t1 + (g->se - 1 - s * d->dilation_w)] =
                wk[r * d->s + s];
    fftwf_execute_dft_r2c(forward, real, (fftwf_complex *)spectrum);
}

static void filter_spectra_task(const void *vctx, size_t slot) {
    const struct conv_ctx *c = vctx;
    int64_t count = c->plan->conv2d.k * c->g.cg;
    for (int64_t kc = (int64_t)slot; kc < count; kc += c->g.slots)
        filter_spectrum(c->plan, &c->g, c->state->forward, c->w, kc, slot_real(c, slot),
                        spectrum_at(c->filter_spectra, &c->g, kc));
}

static void input_spectra_task(const void *vctx, size_t slot) {
    const struct conv_ctx *c = vctx;
    const fconv_conv2d_desc *d = &c->plan->conv2d;
    float *real = slot_real(c, slot);
    for (int64_t ch = (int64_t)slot; ch < d->c; ch += c->g.slots) {
        const float *xc = c->x + ch * d->h * d->w;
        for (int64_t i = 0; i < c->g.t0; i++) {
            float *row = real + i * c->g.t1;
            int64_t filled = 0;
            if (i < d->h) {
                memcpy(row, xc + i * d->w, (size_t)d->w * sizeof *row);
                filled = d->w;
            }
            memset(row + filled, 0, (size_t)(c->g.t1 - filled) * sizeof *row);
        }
        fftwf_execute_dft_r2c(c->state->forward, real, (fftwf_complex *)spectrum_at(c->x_spectra, &c->g, ch));
    }
}

/* Frequencies per block of the channel sum: the block of Y stays in L1 while the
 * channels stream past it. */
#define FREQ_BLOCK 512

static void output_channels_task(const void *vctx, size_t slot) {
    const struct conv_ctx *c = vctx;
    const fconv_conv2d_desc *d = &c->plan->conv2d;
    const struct conv_geometry *g = &c->g;
    float *real = slot_real(c, slot), *yspec = slot_spectrum(c, slot);
    size_t freqs = (size_t)g->t0 * (size_t)(g->t1 / 2 + 1);
    float scale = (float)(1.0 / ((double)g->t0 * (double)g->t1));
    for (int64_t k = (int64_t)slot; k < d->k; k += g->slots) {
        int64_t first = k / g->kg * g->cg; /* the group's first input channel */
        for (size_t f0 = 0; f0 < freqs; f0 += FREQ_BLOCK) {
            size_t n = freqs - f0 < FREQ_BLOCK ? freqs - f0 : FREQ_BLOCK;
            float *yb = yspec + 2 * f0;
            for (int64_t ch = 0; ch < g->cg; ch++) {
                const float *xb = spectrum_at(c->x_spectra, g, first + ch) + 2 * f0;
                const float *wb = spectrum_at(c->filter_spectra, g, k * g->cg + ch) + 2 * f0;
                if (ch == 0)
                    fconv_fft_cmul(n, xb, wb, yb);
                else
                    fconv_fft_cmac(n, xb, wb, yb);
            }
        }
        fftwf_execute_dft_c2r(c->state->inverse, (fftwf_complex *)yspec, real);
        /* Output (p, q) is circular sample (p - pad_top + RE - 1, q - pad_left + SE - 1),
         * which may be negative (pad > RE - 1): wrap it. */
        float b = c->bias ? c->bias[k] : 0.0f;
        int relu = d->activation == FCONV_ACTIVATION_RELU;
        float *yk = c->y + k * c->plan->out_h * c->plan->out_w;
        for (int64_t p = 0; p < c->plan->out_h; p++) {
            int64_t row = p - d->pad_top + g->re - 1;
            if (row < 0) row += g->t0;
            const float *src = real + row * g->t1;
            float *dst = yk + p * c->plan->out_w;
            for (int64_t q = 0; q < c->plan->out_w; q++) {
                int64_t col = q - d->pad_left + g->se - 1;
                if (col < 0) col += g->t1;
                float v = src[col] * scale + b;
                dst[q] = relu && v < 0.0f ? 0.0f : v; /* NaN stays NaN */
            }
        }
    }
}

static fconv_status conv_prepare(fconv_plan *plan) {
    struct conv_state *s = calloc(1, sizeof *s);
    if (!s) return fconv_fail(FCONV_ENOMEM, "fft: out of memory for the plan state");
    plan->algo_state = s;
    struct conv_geometry g = conv_geometry(plan);
    s->forward = fconv_fft_plan_forward(g.t0, g.t1);
    s->inverse = fconv_fft_plan_inverse(g.t0, g.t1);
    if (!s->forward || !s->inverse)
        return fconv_fail(FCONV_ENOMEM, "fft: FFTW could not plan a %lldx%lld transform",
                          (long long)g.t0, (long long)g.t1);
    if (!plan->weights) return FCONV_OK;
    int64_t count = plan->conv2d.k * g.cg;
    s->filter_spectra = fconv_alloc_aligned((size_t)count * g.spectrum_bytes);
    float *real = fconv_alloc_aligned(g.real_bytes);
    if (s->filter_spectra && real)
        for (int64_t kc = 0; kc < count; kc++)
            filter_spectrum(plan, &g, s->forward, plan->weights, kc, real,
                            spectrum_at(s->filter_spectra, &g, kc));
    fconv_free_aligned(real);
    if (!s->filter_spectra || !real)
        return fconv_fail(FCONV_ENOMEM, "fft: out of memory for %lld filter spectra",
                          (long long)count);
    return FCONV_OK;
}

static void conv_release(fconv_plan *plan) {
    struct conv_state *s = plan->algo_state;
    if (!s) return;
    fconv_fft_destroy_plan(s->forward);
    fconv_fft_destroy_plan(s->inverse);
    fconv_free_aligned(s->filter_spectra);
    free(s);
    plan->algo_state = NULL;
}

static void conv_execute(const fconv_plan *plan, const float *x, const float *w,
                         const float *bias, float *y, void *workspace) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    const struct conv_state *s = plan->algo_state;
    struct conv_ctx c = {.plan = plan, .state = s, .g = conv_geometry(plan), .w = w, .bias = bias};
    char *ws = fconv_fft_align(workspace);
    c.x_spectra = (float *)ws;
    ws += (size_t)d->c * c.g.spectrum_bytes;
    if (s->filter_spectra) {
        c.filter_spectra = s->filter_spectra;
    } else {
        c.filter_spectra = (float *)ws;
        ws += (size_t)(d->k * c.g.cg) * c.g.spectrum_bytes;
    }
    c.buffers = ws;
    if (!s->filter_spectra)
        fconv_parallel_1d(plan->threads, (size_t)c.g.slots, filter_spectra_task, &c);
    for (int64_t n = 0; n < d->n; n++) {
        c.x = x + n * d->c * d->h * d->w;
        c.y = y + n * d->k * plan->out_h * plan->out_w;
        fconv_parallel_1d(plan->threads, (size_t)c.g.slots, input_spectra_task, &c);
        fconv_parallel_1d(plan->threads, (size_t)c.g.slots, output_channels_task, &c);
    }
}

/* ---- dispatch by kind ------------------------------------------------------------------- */

static fconv_status fft_prepare(fconv_plan *plan) {
    if (plan->kind == FCONV_KIND_CONV2D) return conv_prepare(plan);
    struct fconv_fft_tiling t = whole_tiling(plan);
    return fconv_fft_filter_prepare(plan, &t, "fft");
}

static void fft_release(fconv_plan *plan) {
    if (plan->kind == FCONV_KIND_CONV2D)
        conv_release(plan);
    else
        fconv_fft_filter_release(plan);
}

static void fft_execute(const fconv_plan *plan, const float *x, const float *w, const float *bias,
                        float *y, void *workspace) {
    if (plan->kind == FCONV_KIND_CONV2D)
        conv_execute(plan, x, w, bias, y, workspace);
    else
        fconv_fft_filter_execute(plan, x, w, y, workspace);
}

const struct fconv_algorithm fconv_algorithm_fft = {
    .id = FCONV_ALGO_FFT,
    .name = "fft",
    .summary = "one whole-image FFT (FFTW r2c/c2r), pointwise product summed over channels",
    .serves = FCONV_SERVES_CONV2D | FCONV_SERVES_FILTER2D | FCONV_SERVES_CONV1D,
    .error_bound = 3e-6,
    .supports = fft_supports,
    .workspace = fft_workspace,
    .cost = fft_cost,
    .prepare = fft_prepare,
    .release = fft_release,
    .execute = fft_execute,
};
