/*
 * test_algorithms.c — every algorithm in the table, on every kind it serves, against the
 * reference: seeded random shapes (with a share of the shapes each specialised algorithm
 * wants: 3x3 stride-1 layers, stride-2 large kernels, rank-1 kernels, large kernels, long
 * signals), every mode, border, stride, dilation, group. An algorithm that declines a
 * problem must say why, with FCONV_EUNSUPPORTED. Outputs are checked with the algorithm's
 * documented error bound (normalized error, DESIGN.md §4), guarded against writes past the
 * end, and must be identical with 1 and 2 threads. The workspace is allocated at exactly
 * the reported size, so AddressSanitizer catches an algorithm that under-reports it.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>

#include "fastconv.h"
#include "ref/conv-ref.h"
#include "test.h"

#define GUARD 16
#define GUARD_VALUE 12345.0f

/* One random problem: which kind and its descriptor. */
struct problem {
    int kind; /* 0 conv2d, 1 filter2d, 2 conv1d */
    fconv_conv2d_desc conv2d;
    fconv_filter2d_desc filter;
    fconv_conv1d_desc conv1d;
    float value_scale, value_offset;
    int rank_one; /* kernel is an outer product */
};

static const char *describe(const struct problem *p, char *buf, size_t n) {
    if (p->kind == 0) {
        const fconv_conv2d_desc *d = &p->conv2d;
        snprintf(buf, n,
                 "conv2d n%lld c%lld h%lld w%lld k%lld r%lld s%lld stride%lld,%lld pad%lld,%lld,%lld,%lld "
                 "dil%lld,%lld groups%lld bias%d relu%d%s",
                 (long long)d->n, (long long)d->c, (long long)d->h, (long long)d->w, (long long)d->k,
                 (long long)d->r, (long long)d->s, (long long)d->stride_h, (long long)d->stride_w,
                 (long long)d->pad_top, (long long)d->pad_left, (long long)d->pad_bottom,
                 (long long)d->pad_right, (long long)d->dilation_h, (long long)d->dilation_w,
                 (long long)d->groups, d->has_bias, (int)d->activation,
                 d->layout == FCONV_LAYOUT_NHWC ? " nhwc" : "");
    } else if (p->kind == 1) {
        const fconv_filter2d_desc *d = &p->filter;
        snprintf(buf, n, "filter2d %lldx%lldx%lld kernel %lldx%lld mode %d border %d (%g) correlate %d rank1 %d",
                 (long long)d->h, (long long)d->w, (long long)d->channels, (long long)d->kh,
                 (long long)d->kw, (int)d->mode, (int)d->border, d->border_value, d->correlate, p->rank_one);
    } else {
        snprintf(buf, n, "conv1d n%lld m%lld mode %d correlate %d", (long long)p->conv1d.n,
                 (long long)p->conv1d.m, (int)p->conv1d.mode, p->conv1d.correlate);
    }
    return buf;
}

static void random_conv2d_shape(fconv_conv2d_desc *d) {
    memset(d, 0, sizeof *d);
    int shape = (int)test_rand_int(0, 9);
    int64_t groups = test_rand_int(0, 3) == 0 ? test_rand_int(2, 3) : 1;
    d->groups = groups;
    /* Batches up to 4: an odd batch and one that outnumbers the 2 threads. */
    d->n = test_rand_int(0, 3) == 0 ? test_rand_int(3, 4) : test_rand_int(1, 2);
    d->c = groups * test_rand_int(1, 4);
    d->k = groups * test_rand_int(1, 4);
    if (shape < 4) { /* a 3x3 stride-1 layer: what Winograd serves */
        d->r = d->s = 3;
        d->h = test_rand_int(1, 19);
        d->w = test_rand_int(1, 19);
        d->c = groups * test_rand_int(1, 9);
        d->k = groups * test_rand_int(1, 9);
        int64_t pad = test_rand_int(0, 1);
        d->pad_top = d->pad_left = d->pad_bottom = d->pad_right = pad;
        if (d->h + 2 * pad < 3) d->h = 3;
        if (d->w + 2 * pad < 3) d->w = 3;
        return;
    }
    if (shape == 4) { /* depthwise */
        d->groups = d->c = test_rand_int(1, 6);
        d->k = d->c * test_rand_int(1, 2);
    }
    d->h = test_rand_int(1, 13);
    d->w = test_rand_int(1, 13);
    d->r = test_rand_int(1, 5);
    d->s = test_rand_int(1, 5);
    d->stride_h = test_rand_int(1, 3);
    d->stride_w = test_rand_int(1, 3);
    d->dilation_h = test_rand_int(1, 2);
    d->dilation_w = test_rand_int(1, 2);
    d->pad_top = test_rand_int(0, 3);
    d->pad_left = test_rand_int(0, 3);
    d->pad_bottom = test_rand_int(0, 3);
    d->pad_right = test_rand_int(0, 3);
    if (shape == 6) { /* a stride-2 layer with a large kernel (the 7x7/2 stem): winograd-stride2's */
        d->r = test_rand_int(5, 8);
        d->s = test_rand_int(5, 8);
        d->stride_h = d->stride_w = 2;
        d->dilation_h = d->dilation_w = 1;
        d->h = test_rand_int(1, 30);
        d->w = test_rand_int(1, 30);
    }
    /* Make the dilated kernel fit the padded input. */
    while (d->dilation_h * (d->r - 1) + 1 > d->h + d->pad_top + d->pad_bottom) d->h++;
    while (d->dilation_w * (d->s - 1) + 1 > d->w + d->pad_left + d->pad_right) d->w++;
    d->has_bias = (int)test_rand_int(0, 1);
    d->activation = test_rand_int(0, 1) ? FCONV_ACTIVATION_RELU : FCONV_ACTIVATION_NONE;
    if (shape == 5) { /* a 1x1 layer */
        d->r = d->s = 1;
        d->dilation_h = d->dilation_w = 1;
    }
}

/* A random layer, a third of them channels last (implicit-gemm and the reference read NHWC as
 * it lies, the others through NCHW copies: every ISA's transpose). */
static void random_conv2d(fconv_conv2d_desc *d) {
    random_conv2d_shape(d);
    d->layout = test_rand_int(0, 2) == 0 ? FCONV_LAYOUT_NHWC : FCONV_LAYOUT_NCHW;
}

static void random_filter(fconv_filter2d_desc *d, int *rank_one) {
    memset(d, 0, sizeof *d);
    int shape = (int)test_rand_int(0, 9);
    d->h = test_rand_int(1, 24);
    d->w = test_rand_int(1, 24);
    d->channels = test_rand_int(1, 3);
    d->kh = test_rand_int(1, 7);
    d->kw = test_rand_int(1, 7);
    if (shape == 0) { /* a kernel larger than the image */
        d->kh = d->h + test_rand_int(0, 6);
        d->kw = d->w + test_rand_int(0, 6);
    } else if (shape <= 2) { /* a large kernel on a larger image: what FFT serves */
        d->h = test_rand_int(20, 70);
        d->w = test_rand_int(20, 70);
        d->kh = test_rand_int(8, 21);
        d->kw = test_rand_int(8, 21);
        d->channels = 1;
    } else if (shape <= 4) { /* 3x3 */
        d->kh = d->kw = 3;
    }
    d->mode = (fconv_mode)test_rand_int(0, 2);
    if (d->mode == FCONV_MODE_VALID && (d->kh > d->h || d->kw > d->w)) d->mode = FCONV_MODE_SAME;
    d->border = (fconv_border)test_rand_int(0, 5);
    d->border_value = d->border == FCONV_BORDER_CONSTANT ? test_rand_float() * 3 : 0.0f;
    d->correlate = (int)test_rand_int(0, 1);
    *rank_one = test_rand_int(0, 2) == 0;
}

static void random_conv1d(fconv_conv1d_desc *d) {
    memset(d, 0, sizeof *d);
    int shape = (int)test_rand_int(0, 4);
    d->n = test_rand_int(1, 300);
    d->m = test_rand_int(1, 40);
    if (shape == 0) d->m = test_rand_int(1, 500);            /* maybe longer than n */
    if (shape == 1) { d->n = test_rand_int(3000, 9000); d->m = test_rand_int(30, 300); }
    d->mode = (fconv_mode)test_rand_int(0, 2);
    if (d->mode == FCONV_MODE_VALID && d->m > d->n) d->mode = FCONV_MODE_FULL;
    d->correlate = (int)test_rand_int(0, 1);
}

static void random_problem(struct problem *p, int kind) {
    memset(p, 0, sizeof *p);
    p->kind = kind;
    if (kind == 0) random_conv2d(&p->conv2d);
    if (kind == 1) random_filter(&p->filter, &p->rank_one);
    if (kind == 2) random_conv1d(&p->conv1d);
    /* Value ranges: centred noise, or image-like positive values with a large mean. */
    int range = (int)test_rand_int(0, 3);
    p->value_scale = range == 3 ? 1000.0f : 1.0f;
    p->value_offset = range == 2 ? 2.0f : 0.0f;
}

static fconv_status make_plan(const struct problem *p, const fconv_options *o, const float *w,
                              const float *bias, fconv_plan **plan) {
    if (p->kind == 0) return fconv_plan_conv2d(&p->conv2d, o, w, bias, plan);
    if (p->kind == 1) return fconv_plan_filter2d(&p->filter, o, w, plan);
    return fconv_plan_conv1d(&p->conv1d, o, w, plan);
}

/* Run a plan into a guarded output buffer with an exactly-sized workspace. */
static float *run_guarded(const fconv_plan *plan, const float *x, const float *w, const float *bias) {
    int64_t ny = fconv_plan_output_elements(plan);
    float *y = malloc((size_t)(ny + GUARD) * sizeof *y);
    for (int64_t i = 0; i < ny + GUARD; i++) y[i] = GUARD_VALUE;
    /* The plan asks for 63 bytes of alignment slack. Start the workspace 1 byte past a
     * 64-byte boundary: the library aligns it up by 63, so exactly the algorithm's own bytes
     * remain before the end of the allocation, and ASan sees any under-reported size. */
    size_t ws = fconv_plan_workspace_size(plan);
    void *block = NULL;
    unsigned char *workspace = NULL;
    if (ws && posix_memalign(&block, 64, 1 + ws) == 0) workspace = (unsigned char *)block + 1;
    fconv_status st = fconv_execute_with_workspace(plan, x, w, bias, y, workspace, ws);
    CHECKF(st == FCONV_OK, "execute failed: %s", fconv_last_error());
    for (int64_t i = ny; i < ny + GUARD; i++) CHECKF(y[i] == GUARD_VALUE, "wrote past the output end");
    free(block);
    return y;
}

static int cases_run[FCONV_ALGO_COUNT_][3], cases_declined[FCONV_ALGO_COUNT_][3];
static double worst_error[FCONV_ALGO_COUNT_];

static void check_one(const fconv_algo_info *info, const struct problem *p) {
    char what[320];
    fconv_options o = {.algo = info->algo, .threads = 1};
    /* Sizes of the operands: plan with AUTO first to learn them. */
    fconv_plan *probe;
    fconv_status st = make_plan(p, &(fconv_options){.threads = 1}, NULL, NULL, &probe);
    CHECKF(st == FCONV_OK, "AUTO failed on %s: %s", describe(p, what, sizeof what), fconv_last_error());
    if (st != FCONV_OK) return;
    int64_t nx = fconv_plan_input_elements(probe), nw = fconv_plan_weight_elements(probe);
    fconv_plan_destroy(probe);

    float *x = malloc((size_t)nx * sizeof *x), *w = malloc((size_t)nw * sizeof *w);
    float bias[64];
    for (int64_t i = 0; i < nx; i++) x[i] = test_rand_float() * p->value_scale + p->value_offset;
    if (p->rank_one && p->kind == 1) {
        float col[64], row[64];
        for (int64_t i = 0; i < p->filter.kh; i++) col[i] = test_rand_float();
        for (int64_t j = 0; j < p->filter.kw; j++) row[j] = test_rand_float();
        for (int64_t i = 0; i < p->filter.kh; i++)
            for (int64_t j = 0; j < p->filter.kw; j++) w[i * p->filter.kw + j] = col[i] * row[j];
    } else {
        test_fill_random(w, (size_t)nw);
    }
    test_fill_random(bias, 64);
    const float *b = p->kind == 0 && p->conv2d.has_bias ? bias : NULL;

    /* Weights at plan time (lets algorithms pre-transform or factor them). */
    fconv_plan *plan;
    st = make_plan(p, &o, w, b, &plan);
    int kind_bit = 1 << p->kind;
    if (st == FCONV_EUNSUPPORTED) {
        CHECKF(strstr(fconv_last_error(), info->name) || !(info->serves & (unsigned)kind_bit),
               "%s declined %s without naming itself: '%s'", info->name, describe(p, what, sizeof what),
               fconv_last_error());
        cases_declined[info->algo][p->kind]++;
        goto out;
    }
    CHECKF(st == FCONV_OK, "%s: plan failed on %s: %s", info->name, describe(p, what, sizeof what),
           fconv_last_error());
    if (st != FCONV_OK) goto out;
    CHECK(fconv_plan_algo(plan) == info->algo);
    float *y1 = run_guarded(plan, x, NULL, NULL);
    int64_t worst;
    double err = fconv_ref_normalized_error(plan, x, w, b, y1, 1, &worst);
    CHECKF(err <= info->error_bound, "%s: normalized error %.3g > bound %.1g on %s (worst output %lld: %g)",
           info->name, err, info->error_bound, describe(p, what, sizeof what), (long long)worst,
           (double)y1[worst]);
    if (err > worst_error[info->algo]) worst_error[info->algo] = err;
    fconv_plan_destroy(plan);

    /* Two threads, weights at execute time (when the algorithm accepts that): identical. */
    o.threads = 2;
    st = make_plan(p, &o, NULL, NULL, &plan);
    if (st == FCONV_OK) {
        float *y2 = run_guarded(plan, x, w, b);
        int64_t ny = fconv_plan_output_elements(plan);
        CHECKF(memcmp(y1, y2, (size_t)ny * sizeof *y1) == 0,
               "%s: 1 and 2 threads (or plan-time vs execute-time weights) differ on %s", info->name,
               describe(p, what, sizeof what));
        free(y2);
        fconv_plan_destroy(plan);
    } else {
        CHECKF(st == FCONV_EUNSUPPORTED, "%s: unexpected status %d without plan-time weights: %s",
               info->name, (int)st, fconv_last_error());
    }
    free(y1);
    cases_run[info->algo][p->kind]++;
out:
    free(x);
    free(w);
}

int main(void) {
    test_init();
    const char *env = getenv("FCONV_TEST_CASES");
    int cases = env ? atoi(env) : 120;
    for (int a = 1; a < FCONV_ALGO_COUNT_; a++) {
        fconv_algo_info info;
        if (fconv_algo_get_info((fconv_algo)a, &info) != FCONV_OK) continue;
        if (!(info.devices & (1u << FCONV_DEVICE_CPU))) continue; /* GPU: tests/unit/test_gpu.c */
        test_current = info.name;
        for (int kind = 0; kind < 3; kind++) {
            if (!(info.serves & (1u << kind))) continue;
            for (int i = 0; i < cases; i++) {
                struct problem p;
                random_problem(&p, kind);
                check_one(&info, &p);
            }
            /* An algorithm that serves a kind must accept a fair share of random problems. */
            CHECKF(cases_run[a][kind] > 0, "%s serves kind %d but declined every case", info.name, kind);
        }
    }
    if (getenv("FCONV_TEST_VERBOSE")) {
        for (int a = 1; a < FCONV_ALGO_COUNT_; a++) {
            fconv_algo_info info;
            if (fconv_algo_get_info((fconv_algo)a, &info) != FCONV_OK) continue;
            printf("%-14s ran %4d/%4d/%4d declined %4d/%4d/%4d (conv2d/filter2d/conv1d) worst error %.3g\n",
                   info.name, cases_run[a][0], cases_run[a][1], cases_run[a][2], cases_declined[a][0],
                   cases_declined[a][1], cases_declined[a][2], worst_error[a]);
        }
    }
    return test_finish();
}
