/*
 * fft-common.c — shared FFT machinery (fft-common.h): fast sizes, mutex-guarded FFTW
 * planning, complex pointwise loops, and the overlap-save filter2d/conv1d driver.
 * Invariant: a tile's result depends only on the tile (never on which worker runs it or
 * how many there are), so outputs are bit-identical for any thread count.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo/fft-common.h"
#include "algo/filter-lowering.h"
#include "core/border.h"
#include "core/cost-model.h"
#include "core/dispatch.h"
#include "core/parallel.h"

int64_t fconv_fft_fast_size(int64_t n) {
    if (n <= 1) return 1;
    int64_t best = INT64_MAX;
    /* Enumerate 2^a 3^b 5^c 7^d just reaching n; the products stay below 8n. */
    for (int64_t p7 = 1; p7 < 8 * n; p7 *= 7)
        for (int64_t p5 = p7; p5 < 8 * n; p5 *= 5)
            for (int64_t p3 = p5; p3 < 8 * n; p3 *= 3) {
                int64_t v = p3;
                while (v < n) v *= 2;
                if (v < best) best = v;
            }
    return best;
}

size_t fconv_fft_real_bytes(int64_t t0, int64_t t1) {
    return fconv_round_up_64((size_t)t0 * (size_t)t1 * sizeof(float));
}

size_t fconv_fft_spectrum_bytes(int64_t t0, int64_t t1) {
    return fconv_round_up_64((size_t)t0 * (size_t)(t1 / 2 + 1) * 2 * sizeof(float));
}

/* ---- planning --------------------------------------------------------------------------- */

static pthread_mutex_t planner_lock = PTHREAD_MUTEX_INITIALIZER;

/* FFTW_ESTIMATE: the plan depends only on the sizes (and alignment), so every plan — and
 * therefore every result — is the same run to run; FFTW_MEASURE would time candidates at
 * plan time and could pick differently each time. The arrays are only looked at for their
 * alignment (ESTIMATE never writes them), so 64-byte aligned scratch arrays stand in for
 * the workspace buffers the plan will run on. */
static fftwf_plan make_plan(int64_t t0, int64_t t1, int inverse) {
    int n[2] = {(int)t0, (int)t1};
    int rank = t0 == 1 ? 1 : 2;
    const int *dims = rank == 1 ? &n[1] : n;
    size_t nreal = (size_t)t0 * (size_t)t1, ncomplex = (size_t)t0 * (size_t)(t1 / 2 + 1);
    float *r = fftwf_malloc(sizeof(float) * nreal + 64);
    fftwf_complex *c = fftwf_malloc(sizeof(fftwf_complex) * ncomplex + 64);
    fftwf_plan p = NULL;
    if (r && c) {
        float *ra = fconv_fft_align(r);
        fftwf_complex *ca = fconv_fft_align(c);
        pthread_mutex_lock(&planner_lock);
        if (inverse) /* c2r may overwrite its input: the spectrum is scratch by then */
            p = fftwf_plan_dft_c2r(rank, dims, ca, ra, FFTW_ESTIMATE | FFTW_DESTROY_INPUT);
        else
            p = fftwf_plan_dft_r2c(rank, dims, ra, ca, FFTW_ESTIMATE);
        pthread_mutex_unlock(&planner_lock);
    }
    fftwf_free(r);
    fftwf_free(c);
    return p;
}

fftwf_plan fconv_fft_plan_forward(int64_t t0, int64_t t1) { return make_plan(t0, t1, 0); }
fftwf_plan fconv_fft_plan_inverse(int64_t t0, int64_t t1) { return make_plan(t0, t1, 1); }

void fconv_fft_destroy_plan(fftwf_plan p) {
    if (!p) return;
    pthread_mutex_lock(&planner_lock);
    fftwf_destroy_plan(p);
    pthread_mutex_unlock(&planner_lock);
}

/* ---- pointwise products ----------------------------------------------------------------- */

void fconv_fft_cmul(size_t n, const float *restrict a, const float *restrict b,
                    float *restrict y) {
    for (size_t i = 0; i < n; i++) {
        float ar = a[2 * i], ai = a[2 * i + 1], br = b[2 * i], bi = b[2 * i + 1];
        y[2 * i] = ar * br - ai * bi;
        y[2 * i + 1] = ar * bi + ai * br;
    }
}

void fconv_fft_cmul_inplace(size_t n, float *restrict y, const float *restrict b) {
    for (size_t i = 0; i < n; i++) {
        float yr = y[2 * i], yi = y[2 * i + 1], br = b[2 * i], bi = b[2 * i + 1];
        y[2 * i] = yr * br - yi * bi;
        y[2 * i + 1] = yr * bi + yi * br;
    }
}

void fconv_fft_cmac(size_t n, const float *restrict a, const float *restrict b,
                    float *restrict y) {
    for (size_t i = 0; i < n; i++) {
        float ar = a[2 * i], ai = a[2 * i + 1], br = b[2 * i], bi = b[2 * i + 1];
        y[2 * i] += ar * br - ai * bi;
        y[2 * i + 1] += ar * bi + ai * br;
    }
}

/* How much slower than a power of two FFTW_ESTIMATE's plans run per n log n: measured
 * 1.3x with factors of 3 and 2x with 5 or 7 (125x125 against 128x128). */
static double radix_penalty(int64_t n) {
    /* three tests, not a factorization: AUTO rates ~10^4 tile shapes per filter plan, and
     * the loop of divisions here took 80% of a 1.3 ms plan */
    return n % 5 == 0 || n % 7 == 0 ? 2.0 : n % 3 == 0 ? 1.3 : 1.0;
}

/* One transform (half of a measured r2c + c2r pair, FFTW 3.3.10, one Zen 5 core; see
 * docs/algorithms/fft.md): 0.17 ns per element per log2 of the size for powers of two,
 * plus passes over memory: 0.3 ns per element while a transform fits in cache (2^20
 * elements), 12 ns beyond (2048x2048 took 109 ms per pair, memory-bound). */
double fconv_fft_transform_seconds(int64_t t0, int64_t t1) {
    double n = (double)t0 * (double)t1;
    double memory = n <= (double)(1 << 20) ? 0.3e-9 : 12e-9;
    double p0 = radix_penalty(t0), p1 = radix_penalty(t1), penalty = p0 > p1 ? p0 : p1;
    return n * (0.17e-9 * log2(n > 2 ? n : 2) * penalty + memory);
}

/* ---- overlap-save filter2d / conv1d ----------------------------------------------------- */

struct fconv_fft_tiling fconv_fft_filter_tiling(const fconv_plan *plan, int64_t t0, int64_t t1) {
    const fconv_filter2d_desc *d = &plan->filter;
    struct fconv_fft_tiling t = {.t0 = t0, .t1 = t1};
    t.step0 = t0 - d->kh + 1;
    t.step1 = t1 - d->kw + 1;
    t.tiles0 = (plan->out_h + t.step0 - 1) / t.step0;
    t.tiles1 = (plan->out_w + t.step1 - 1) / t.step1;
    t.tasks = d->channels * t.tiles0 * t.tiles1;
    t.slots = plan->threads < t.tasks ? plan->threads : t.tasks;
    if (t.slots < 1) t.slots = 1;
    return t;
}

fconv_status fconv_fft_filter_supports(const fconv_plan *plan, const struct fconv_fft_tiling *t,
                                       const char *name, char *why, size_t why_len) {
    (void)plan;
    if (t->t0 > FCONV_FFT_MAX_EXTENT || t->t1 > FCONV_FFT_MAX_EXTENT ||
        (double)t->t0 * (double)t->t1 > (double)INT32_MAX) {
        snprintf(why, why_len, "%s needs a %lldx%lld transform, beyond FFTW's int sizes", name,
                 (long long)t->t0, (long long)t->t1);
        return FCONV_EUNSUPPORTED;
    }
    return FCONV_OK;
}

size_t fconv_fft_filter_workspace(const fconv_plan *plan, const struct fconv_fft_tiling *t) {
    size_t spectrum = fconv_fft_spectrum_bytes(t->t0, t->t1);
    size_t per_slot = fconv_fft_real_bytes(t->t0, t->t1) + spectrum;
    return FCONV_FFT_ALIGN_SLACK + (plan->weights ? 0 : spectrum) + (size_t)t->slots * per_slot;
}

double fconv_fft_tile_seconds(int64_t t0, int64_t t1) {
    return 2.0 * fconv_fft_transform_seconds(t0, t1) +
           1.0e-9 * (double)t0 * (double)(t1 / 2 + 1) + /* the pointwise product */
           1.0e-9 * (double)t0 * (double)t1 +           /* loading it, storing outputs */
           0.5e-6;                                       /* calls and loop set-up */
}

double fconv_fft_filter_cost(const fconv_plan *plan, const struct fconv_fft_tiling *t) {
    double rounds = ceil((double)t->tasks / (double)t->slots);
    double kernel = plan->weights ? 0.0 : fconv_fft_transform_seconds(t->t0, t->t1);
    return kernel + rounds * fconv_fft_tile_seconds(t->t0, t->t1) +
           (t->slots > 1 ? FCONV_PARALLEL_REGION_SECONDS : 0.0);
}

struct filter_state {
    struct fconv_fft_tiling tiling;
    fftwf_plan forward, inverse;
    float *kernel_spectrum; /* when the plan holds the weights, else NULL */
};

/* The kernel in convolution orientation (a correlation kernel flipped), zero-padded to
 * T0 x T1, then transformed: the one spectrum every tile multiplies by. */
static void kernel_spectrum(const fconv_plan *plan, const struct filter_state *s, const float *w,
                            float *real, float *spectrum) {
    const fconv_filter2d_desc *d = &plan->filter;
    int64_t t1 = s->tiling.t1, n = d->kh * d->kw;
    memset(real, 0, (size_t)s->tiling.t0 * (size_t)t1 * sizeof *real);
    for (int64_t a = 0; a < d->kh; a++)
        for (int64_t b = 0; b < d->kw; b++) {
            int64_t e = a * d->kw + b;
            real[a * t1 + b] = d->correlate ? w[n - 1 - e] : w[e];
        }
    fftwf_execute_dft_r2c(s->forward, real, (fftwf_complex *)spectrum);
}

fconv_status fconv_fft_filter_prepare(fconv_plan *plan, const struct fconv_fft_tiling *t,
                                      const char *name) {
    struct filter_state *s = calloc(1, sizeof *s);
    if (!s) return fconv_fail(FCONV_ENOMEM, "%s: out of memory for the plan state", name);
    plan->algo_state = s;
    s->tiling = *t;
    s->forward = fconv_fft_plan_forward(t->t0, t->t1);
    s->inverse = fconv_fft_plan_inverse(t->t0, t->t1);
    if (!s->forward || !s->inverse)
        return fconv_fail(FCONV_ENOMEM, "%s: FFTW could not plan a %lldx%lld transform", name,
                          (long long)t->t0, (long long)t->t1);
    if (plan->weights) {
        s->kernel_spectrum = fconv_alloc_aligned(fconv_fft_spectrum_bytes(t->t0, t->t1));
        float *real = fconv_alloc_aligned(fconv_fft_real_bytes(t->t0, t->t1));
        if (s->kernel_spectrum && real)
            kernel_spectrum(plan, s, plan->weights, real, s->kernel_spectrum);
        fconv_free_aligned(real);
        if (!s->kernel_spectrum || !real)
            return fconv_fail(FCONV_ENOMEM, "%s: out of memory for the kernel spectrum", name);
    }
    return FCONV_OK;
}

void fconv_fft_filter_release(fconv_plan *plan) {
    struct filter_state *s = plan->algo_state;
    if (!s) return;
    fconv_fft_destroy_plan(s->forward);
    fconv_fft_destroy_plan(s->inverse);
    fconv_free_aligned(s->kernel_spectrum);
    free(s);
    plan->algo_state = NULL;
}

/* dst[i][j] (T0 x T1) = P[r0 + i][c0 + j] of channel ch where inside P (PH x PW), else 0:
 * the tile's window of the border-extended image, built straight from x. */
static void load_window(const fconv_plan *plan, const float *x, int64_t ch, int64_t r0,
                        int64_t c0, int64_t t0, int64_t t1, float *restrict dst) {
    const fconv_filter2d_desc *d = &plan->filter;
    int64_t ph = fconv_filter_padded_h(plan), pw = fconv_filter_padded_w(plan);
    int64_t rows = ph - r0 < t0 ? ph - r0 : t0, cols = pw - c0 < t1 ? pw - c0 : t1;
    int64_t row_origin = r0 + plan->off_h - (d->kh - 1), col_origin = c0 + plan->off_w - (d->kw - 1);
    int64_t stride = d->channels;
    float constant = d->border == FCONV_BORDER_CONSTANT ? d->border_value : 0.0f;
    /* Columns j in [j_in0, j_in1) read x directly; the others go through the border rule. */
    int64_t j_in0 = -col_origin < 0 ? 0 : -col_origin;
    int64_t j_in1 = d->w - col_origin < cols ? d->w - col_origin : cols;
    if (j_in0 > cols) j_in0 = cols;
    if (j_in1 < j_in0) j_in1 = j_in0;
    for (int64_t i = 0; i < t0; i++) {
        float *restrict out = dst + i * t1;
        if (i >= rows) {
            memset(out, 0, (size_t)t1 * sizeof *out);
            continue;
        }
        int64_t src_row = fconv_border_index(d->border, row_origin + i, d->h);
        if (src_row < 0) {
            for (int64_t j = 0; j < cols; j++) out[j] = constant;
        } else {
            const float *restrict src = x + src_row * d->w * stride + ch;
            for (int64_t j = 0; j < j_in0; j++) {
                int64_t k = fconv_border_index(d->border, col_origin + j, d->w);
                out[j] = k < 0 ? constant : src[k * stride];
            }
            if (stride == 1)
                memcpy(out + j_in0, src + col_origin + j_in0, (size_t)(j_in1 - j_in0) * sizeof *out);
            else
                for (int64_t j = j_in0; j < j_in1; j++) out[j] = src[(col_origin + j) * stride];
            for (int64_t j = j_in1; j < cols; j++) {
                int64_t k = fconv_border_index(d->border, col_origin + j, d->w);
                out[j] = k < 0 ? constant : src[k * stride];
            }
        }
        if (cols < t1) memset(out + cols, 0, (size_t)(t1 - cols) * sizeof *out);
    }
}

struct filter_ctx {
    const fconv_plan *plan;
    const struct filter_state *state;
    const float *x, *spectrum; /* spectrum: the kernel's */
    float *y;
    char *buffers; /* slot s: real buffer, then its spectrum */
    size_t real_bytes, slot_bytes;
};

static void filter_tile(const struct filter_ctx *c, int64_t task, float *real, float *spec) {
    const fconv_plan *plan = c->plan;
    const struct fconv_fft_tiling *t = &c->state->tiling;
    const fconv_filter2d_desc *d = &plan->filter;
    int64_t tiles = t->tiles0 * t->tiles1;
    int64_t ch = task / tiles, ti = task % tiles / t->tiles1, tj = task % t->tiles1;
    int64_t r0 = ti * t->step0, c0 = tj * t->step1;
    load_window(plan, c->x, ch, r0, c0, t->t0, t->t1, real);
    fftwf_execute_dft_r2c(c->state->forward, real, (fftwf_complex *)spec);
    fconv_fft_cmul_inplace((size_t)t->t0 * (size_t)(t->t1 / 2 + 1), spec, c->spectrum);
    fftwf_execute_dft_c2r(c->state->inverse, (fftwf_complex *)spec, real);
    /* Overlap-save: output (r0 + i, c0 + j) is circular sample (i + KH-1, j + KW-1). */
    float scale = (float)(1.0 / ((double)t->t0 * (double)t->t1));
    int64_t rows = plan->out_h - r0 < t->step0 ? plan->out_h - r0 : t->step0;
    int64_t cols = plan->out_w - c0 < t->step1 ? plan->out_w - c0 : t->step1;
    int64_t channels = d->channels;
    for (int64_t i = 0; i < rows; i++) {
        const float *restrict src = real + (i + d->kh - 1) * t->t1 + (d->kw - 1);
        float *restrict dst = c->y + ((r0 + i) * plan->out_w + c0) * channels + ch;
        if (channels == 1)
            for (int64_t j = 0; j < cols; j++) dst[j] = src[j] * scale;
        else
            for (int64_t j = 0; j < cols; j++) dst[j * channels] = src[j] * scale;
    }
}

/* Worker slot s takes tasks s, s + slots, ...: a fixed assignment whose results do not
 * depend on it, so any thread count gives the same bits. */
static void filter_slot_task(const void *vctx, size_t slot) {
    const struct filter_ctx *c = vctx;
    float *real = (float *)(c->buffers + slot * c->slot_bytes);
    float *spec = (float *)(c->buffers + slot * c->slot_bytes + c->real_bytes);
    const struct fconv_fft_tiling *t = &c->state->tiling;
    for (int64_t task = (int64_t)slot; task < t->tasks; task += t->slots)
        filter_tile(c, task, real, spec);
}

void fconv_fft_filter_execute(const fconv_plan *plan, const float *x, const float *w, float *y,
                              void *workspace) {
    const struct filter_state *s = plan->algo_state;
    const struct fconv_fft_tiling *t = &s->tiling;
    char *ws = fconv_fft_align(workspace);
    size_t spectrum_bytes = fconv_fft_spectrum_bytes(t->t0, t->t1);
    struct filter_ctx c = {.plan = plan, .state = s, .x = x, .y = y,
                           .real_bytes = fconv_fft_real_bytes(t->t0, t->t1)};
    c.slot_bytes = c.real_bytes + spectrum_bytes;
    if (s->kernel_spectrum) {
        c.spectrum = s->kernel_spectrum;
        c.buffers = ws;
    } else {
        float *spectrum = (float *)ws;
        c.buffers = ws + spectrum_bytes;
        kernel_spectrum(plan, s, w, (float *)c.buffers, spectrum); /* slot 0's real buffer */
        c.spectrum = spectrum;
    }
    fconv_parallel_1d(plan->threads, (size_t)t->slots, filter_slot_task, &c);
}

void fconv_fft_segment_spectra(const float *kc, int64_t count, int64_t len, int64_t n, float *taps) {
    const double pi = 3.14159265358979323846;
    double c[FCONV_FFT_ROWS_MAX_N], s[FCONV_FFT_ROWS_MAX_N];
    for (int64_t j = 0; j < n; j++) {
        c[j] = cos(2.0 * pi * (double)j / (double)n);
        s[j] = sin(2.0 * pi * (double)j / (double)n);
    }
    for (int64_t r = 0; r < count; r++) {
        float *u = taps + r * n;
        for (int64_t k = 0; k <= n / 2; k++) {
            double re = 0.0, im = 0.0;
            for (int64_t b = 0; b < len; b++) {
                re += (double)kc[r * len + b] * c[(k * b) % n];
                im -= (double)kc[r * len + b] * s[(k * b) % n];
            }
            if (k == 0) u[0] = (float)(re / (double)n);
            else if (k == n / 2) u[1] = (float)(re / (double)n);
            else {
                u[2 * k] = (float)(re / (2.0 * (double)n));
                u[2 * k + 1] = (float)(-im / (2.0 * (double)n));
            }
        }
    }
}

double fconv_fft_segment_seconds(int64_t n, int64_t sums, int64_t span) {
    double hop = (double)(n - span + 1);
    double transform = (double)n * (2.5 * log2((double)n / 2.0) + 6.0);
    double efficiency = n <= 32 ? 1.0 : n == 64 ? 0.8 : 0.55;
    return (2.0 * (double)sums * (double)n + 2.0 * transform) / hop / (55e9 * efficiency);
}

double fconv_fft_segment_isa_speed(fconv_isa isa) {
    return isa >= FCONV_ISA_AVX512 ? 1.0 : isa >= FCONV_ISA_AVX2 ? 0.93 : 0.15;
}

int64_t fconv_fft_segment_size(int64_t sums, int64_t span) {
    int64_t best = 0;
    for (int64_t n = 16; n <= FCONV_FFT_ROWS_MAX_N; n *= 2) {
        if (n - span + 1 < n / 4) continue;
        if (!best || fconv_fft_segment_seconds(n, sums, span) < fconv_fft_segment_seconds(best, sums, span)) best = n;
    }
    return best;
}
