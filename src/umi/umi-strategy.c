/*
 * umi-strategy.c — the built-in UMI strategies (dot with activations, SAD, SSD, bilateral):
 * pre-loop init, the per-element step over a run of element pairs, post-loop output.
 * The unit-stride runs keep four partial sums so the compiler can vectorize without
 * reassociating a single float sum (which -O3 alone may not do).
 */
#include <math.h>

#include "umi/umi-internal.h"

void fconv_umi_pre(const fconv_umi_plan *plan, fconv_umi_state *st, float init) {
    if (plan->strategy == FCONV_UMI_CALLBACK) {
        fconv_umi_callback_pre(plan, st, init);
        return;
    }
    st->s = plan->strategy == FCONV_UMI_BILATERAL ? 0.0f : init; /* DOT: init is the bias */
    st->n = 0.0f;
    st->c = init;
}

/* Sum of op(a[i], b[i]) over a unit-stride, all-valid run, four partial sums. */
#define UMI_UNIT_RUN(EXPR)                                                                   \
    do {                                                                                     \
        float s0 = 0, s1 = 0, s2 = 0, s3 = 0;                                                \
        size_t i = 0;                                                                        \
        for (; i + 4 <= n; i += 4) {                                                         \
            { float x = a[i], y = b[i]; s0 += (EXPR); }                                      \
            { float x = a[i + 1], y = b[i + 1]; s1 += (EXPR); }                              \
            { float x = a[i + 2], y = b[i + 2]; s2 += (EXPR); }                              \
            { float x = a[i + 3], y = b[i + 3]; s3 += (EXPR); }                              \
        }                                                                                    \
        for (; i < n; i++) { float x = a[i], y = b[i]; s0 += (EXPR); }                      \
        st->s += (s0 + s1) + (s2 + s3);                                                      \
    } while (0)

/* The general run: any strides, b may be NULL (zeros), valid may mask elements out. */
#define UMI_GENERAL_RUN(EXPR)                                                                \
    do {                                                                                     \
        float s0 = 0;                                                                        \
        for (size_t i = 0; i < n; i++) {                                                     \
            if (valid && !valid[i]) continue;                                                \
            float x = a[(ptrdiff_t)i * sa], y = b ? b[(ptrdiff_t)i * sb] : 0.0f;             \
            s0 += (EXPR);                                                                    \
        }                                                                                    \
        st->s += s0;                                                                         \
    } while (0)

void fconv_umi_run(const fconv_umi_plan *plan, fconv_umi_state *st, const float *a, ptrdiff_t sa,
                   const float *b, ptrdiff_t sb, const unsigned char *valid, size_t n) {
    const int unit = sa == 1 && sb == 1 && b && !valid;
    switch (plan->strategy) {
    case FCONV_UMI_SAD:
        if (unit) UMI_UNIT_RUN(fabsf(x - y));
        else UMI_GENERAL_RUN(fabsf(x - y));
        break;
    case FCONV_UMI_SSD:
        if (unit) UMI_UNIT_RUN((x - y) * (x - y));
        else UMI_GENERAL_RUN((x - y) * (x - y));
        break;
    case FCONV_UMI_BILATERAL: {
        const float k = plan->param[0], c = st->c;
        float ws = 0, wx = 0;
        for (size_t i = 0; i < n; i++) {
            if (valid && !valid[i]) continue;
            float x = a[(ptrdiff_t)i * sa], d = x - c;
            float w = b[(ptrdiff_t)i * sb];
            if (w == 0.0f) continue; /* outside the window's disc: skip the exp */
            w *= expf(-d * d * k);
            ws += w;
            wx += w * x;
        }
        st->s += ws;
        st->n += wx;
        break;
    }
    case FCONV_UMI_CALLBACK:
        fconv_umi_callback_run(plan, st, a, sa, b, sb, valid, n);
        break;
    default: /* the DOT family */
        if (unit) UMI_UNIT_RUN(x * y);
        else UMI_GENERAL_RUN(x * y);
        break;
    }
}

float fconv_umi_post(const fconv_umi_plan *plan, const fconv_umi_state *st) {
    float s = st->s;
    switch (plan->strategy) {
    case FCONV_UMI_DOT_RELU: return s < 0.0f ? 0.0f : s; /* NaN compares false: stays NaN */
    case FCONV_UMI_DOT_LEAKY_RELU: return s < 0.0f ? plan->param[0] * s : s;
    case FCONV_UMI_DOT_SIGMOID: return 1.0f / (1.0f + expf(-s));
    case FCONV_UMI_DOT_TANH: return tanhf(s);
    case FCONV_UMI_BILATERAL: return s > 0.0f ? st->n / s : st->c;
    case FCONV_UMI_CALLBACK: return fconv_umi_callback_post(plan, st);
    default: return s;
    }
}
