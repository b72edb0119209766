/*
 * fuzz_plan.c — libFuzzer harness for planning and execution: the input bytes become a
 * descriptor (conv2d, filter2d or conv1d; dimensions, paddings, strides, dilations, groups,
 * modes, borders — mostly small, sometimes any int64), options (algorithm, workspace budget,
 * flags, tolerance) and where the weights come from. Planning must succeed or fail with a
 * message; a plan small enough to run is executed (with the workspace allocated by the
 * library and with an exact caller workspace) and must agree with the reference algorithm.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fastconv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct {
    const uint8_t *p;
    size_t n;
} reader;

static uint8_t byte(reader *r) {
    if (r->n == 0) return 0;
    r->n--;
    return *r->p++;
}

/* Set when a raw int64 was drawn: such a problem may be valid and huge, and a huge valid
 * plan may legitimately allocate plan-time scratch proportional to it (FFT), which would
 * trip the fuzzer's memory limit; those are planned with direct, which allocates nothing
 * proportional to the problem at plan time (validation runs first either way). */
static int raw_drawn;

/* Mostly a small dimension (0..max_small); one value in 16 is any int64 from 8 bytes, so
 * validation sees negatives, zeros and huge values too. */
static int64_t dim(reader *r, int max_small) {
    uint8_t b = byte(r);
    if ((b & 0xF) == 0xF) {
        raw_drawn = 1;
        uint64_t v = 0;
        for (int i = 0; i < 8; i++) v = (v << 8) | byte(r);
        return (int64_t)v;
    }
    return (int64_t)(b >> 4) % (max_small + 1);
}

/* Element counts small enough to execute in a fuzzing iteration. */
#define RUN_LIMIT_ELEMS ((int64_t)1 << 15)
#define RUN_LIMIT_WORK ((double)(1 << 21))

static int plan_kind(int kind, const void *desc, const fconv_options *o, const float *k,
                     const float *bias, fconv_plan **plan) {
    switch (kind) {
    case 0: return fconv_plan_conv2d(desc, o, k, bias, plan);
    case 1: return fconv_plan_filter2d(desc, o, k, plan);
    default: return fconv_plan_conv1d(desc, o, k, plan);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    reader r = {data, size};
    raw_drawn = 0;
    int kind = byte(&r) % 3;
    fconv_conv2d_desc c2;
    fconv_filter2d_desc f2;
    fconv_conv1d_desc c1;
    memset(&c2, 0, sizeof c2);
    memset(&f2, 0, sizeof f2);
    memset(&c1, 0, sizeof c1);
    const void *desc;
    if (kind == 0) {
        c2.n = dim(&r, 2); c2.c = dim(&r, 6); c2.h = dim(&r, 15); c2.w = dim(&r, 15);
        c2.k = dim(&r, 6); c2.r = dim(&r, 7); c2.s = dim(&r, 7);
        c2.stride_h = dim(&r, 3); c2.stride_w = dim(&r, 3);
        c2.pad_top = dim(&r, 4); c2.pad_left = dim(&r, 4);
        c2.pad_bottom = dim(&r, 4); c2.pad_right = dim(&r, 4);
        c2.dilation_h = dim(&r, 3); c2.dilation_w = dim(&r, 3);
        c2.groups = dim(&r, 6);
        uint8_t b = byte(&r);
        c2.has_bias = b & 1;
        c2.activation = (fconv_activation)((b >> 1) % 3); /* 2 is invalid */
        c2.layout = (fconv_layout)((b >> 4) % 3);         /* 2 is invalid */
        desc = &c2;
    } else if (kind == 1) {
        f2.h = dim(&r, 15); f2.w = dim(&r, 15); f2.channels = dim(&r, 4);
        f2.kh = dim(&r, 15); f2.kw = dim(&r, 15);
        uint8_t b = byte(&r);
        f2.mode = (fconv_mode)(b % 4);           /* 3 is invalid */
        f2.border = (fconv_border)((b >> 2) % 7); /* 6 is invalid */
        f2.correlate = (b >> 5) & 1;
        f2.border_value = (float)(int8_t)byte(&r) / 8.0f;
        desc = &f2;
    } else {
        c1.n = dim(&r, 15); c1.m = dim(&r, 15);
        if (c1.n >= 0 && c1.n <= 15) c1.n *= 4; /* longer signals; never scale a raw int64 */
        uint8_t b = byte(&r);
        c1.mode = (fconv_mode)(b % 4);
        c1.correlate = (b >> 2) & 1;
        desc = &c1;
    }
    fconv_options o;
    memset(&o, 0, sizeof o);
    uint8_t a = byte(&r);
    o.algo = (fconv_algo)(a % (FCONV_ALGO_COUNT_ + 1)); /* COUNT_ is invalid */
    o.threads = 1;                                      /* libFuzzer runs one thread */
    uint8_t budget = byte(&r);
    if (budget & 0x80) o.max_workspace_bytes = (size_t)(budget & 0x7F) << (budget & 0x0F);
    uint8_t fl = byte(&r);
    o.flags = (fl & 0x3) == 0x3 ? FCONV_PLAN_NO_WORKSPACE : (fl & 0x3) == 0x2 ? 0x80u : 0u;
    if (fl & 0x4) o.tolerance = (fl & 0x8) ? 1e-2 : -1.0;
    int weights_at_plan = (fl >> 4) & 1;
    if (raw_drawn) o.algo = FCONV_ALGO_DIRECT;

    /* Plan once without weights to learn the sizes (weights at plan time need them). */
    fconv_plan *plan = NULL;
    int st = plan_kind(kind, desc, &o, NULL, NULL, &plan);
    if (st != FCONV_OK) {
        if (plan != NULL || fconv_last_error()[0] == '\0') abort();
        return 0;
    }
    int64_t xn = fconv_plan_input_elements(plan), wn = fconv_plan_weight_elements(plan);
    int64_t yn = fconv_plan_output_elements(plan);
    int64_t bn = kind == 0 && c2.has_bias ? c2.k : 0;
    double work = (double)yn * (double)wn / (kind == 0 ? (double)c2.k : 1.0);
    if (xn > RUN_LIMIT_ELEMS || wn > RUN_LIMIT_ELEMS || yn > RUN_LIMIT_ELEMS || work > RUN_LIMIT_WORK) {
        fconv_plan_destroy(plan);
        return 0;
    }
    float *x = malloc((size_t)xn * sizeof *x), *w = malloc((size_t)wn * sizeof *w);
    float *b = malloc((size_t)(bn + 1) * sizeof *b);
    float *y = malloc((size_t)yn * sizeof *y), *y2 = malloc((size_t)yn * sizeof *y2);
    float *yref = malloc((size_t)yn * sizeof *yref), *y_ws = malloc((size_t)yn * sizeof *y_ws);
    fconv_plan *with_w = NULL, *ref = NULL;
    if (!x || !w || !b || !y || !y2 || !yref || !y_ws) goto done;
    /* Small integers: every algorithm is then exact up to float rounding of sums. */
    uint32_t seed = (uint32_t)size * 2654435761u;
    for (int64_t i = 0; i < xn; i++) x[i] = (float)((int)((seed = seed * 1103515245u + 12345u) >> 28) - 8);
    for (int64_t i = 0; i < wn; i++) w[i] = (float)((int)((seed = seed * 1103515245u + 12345u) >> 28) - 8);
    for (int64_t i = 0; i < bn; i++) b[i] = (float)i;
    const float *bias = bn ? b : NULL;

    if (weights_at_plan) {
        if (plan_kind(kind, desc, &o, w, bias, &with_w) != FCONV_OK) {
            /* Same descriptor and options: only memory could make this differ. */
            if (fconv_last_error()[0] == '\0') abort();
            goto done;
        }
        if (fconv_execute(with_w, x, NULL, NULL, y) != FCONV_OK) abort();
    } else if (fconv_execute(plan, x, w, bias, y) != FCONV_OK) {
        abort();
    }
    /* The caller's workspace, exactly the size asked for, at an odd address. */
    size_t ws = fconv_plan_workspace_size(plan);
    unsigned char *space = ws ? malloc(ws + 1) : NULL;
    if (ws && !space) goto done;
    if (fconv_execute_with_workspace(plan, x, w, bias, y_ws, space ? space + 1 : NULL, ws) != FCONV_OK)
        abort();
    if (ws && fconv_execute_with_workspace(plan, x, w, bias, y2, space + 1, ws - 1) != FCONV_EWORKSPACE)
        abort();
    free(space);

    fconv_options ro;
    memset(&ro, 0, sizeof ro);
    ro.algo = FCONV_ALGO_REFERENCE;
    ro.threads = 1;
    if (plan_kind(kind, desc, &ro, NULL, NULL, &ref) != FCONV_OK) abort();
    if (fconv_execute(ref, x, w, bias, yref) != FCONV_OK) abort();
    /* The documented metric: |y - y_ref| <= bound * max sum|x*w| (plus a little slack for
     * the bound's rounding); sum|x*w| is the reference run on |x|, |w|, |bias|. */
    for (int64_t i = 0; i < xn; i++) x[i] = fabsf(x[i]);
    for (int64_t i = 0; i < wn; i++) w[i] = fabsf(w[i]);
    if (fconv_execute(ref, x, w, bias, y2) != FCONV_OK) abort();
    double mag = 0.0;
    for (int64_t i = 0; i < yn; i++) mag = fmax(mag, (double)y2[i]);
    fconv_algo_info info, info2;
    if (fconv_algo_get_info(fconv_plan_algo(plan), &info) != FCONV_OK) abort();
    if (fconv_algo_get_info(fconv_plan_algo(with_w ? with_w : plan), &info2) != FCONV_OK) abort();
    double tol = 4.0 * fmax(info.error_bound, info2.error_bound) * mag + 1e-3;
    for (int64_t i = 0; i < yn; i++)
        if (!(fabs((double)y[i] - yref[i]) <= tol) || !(fabs((double)y_ws[i] - yref[i]) <= tol)) abort();
done:
    fconv_plan_destroy(ref);
    fconv_plan_destroy(with_w);
    fconv_plan_destroy(plan);
    free(x); free(w); free(b); free(y); free(y2); free(yref); free(y_ws);
    return 0;
}
