/*
 * validate.c — every check a descriptor must pass before a plan exists, with a message that
 * names the field and its value. Resolves "0 means 1" defaults, computes output extents and
 * tensor sizes with overflow-checked arithmetic. After this, drivers trust the plan.
 */
#include <stdio.h>

#include "core/internal.h"

/* A dimension that must be at least `min`. */
static fconv_status check_dim(const char *kind, const char *field, int64_t v, int64_t min) {
    if (v < min)
        return fconv_fail(FCONV_EINVAL, "%s: %s must be >= %lld, got %lld", kind, field,
                          (long long)min, (long long)v);
    if (v > FCONV_MAX_DIM)
        return fconv_fail(FCONV_EOVERFLOW, "%s: %s %lld exceeds the limit of %lld", kind, field,
                          (long long)v, (long long)FCONV_MAX_DIM);
    return FCONV_OK;
}

/* A field where 0 means 1 (stride, dilation, groups, batch). */
static fconv_status resolve_default_one(const char *kind, const char *field, int64_t *v) {
    if (*v == 0) *v = 1;
    return check_dim(kind, field, *v, 1);
}

/* Product of ndim (<= 4) extents, bounded by FCONV_MAX_ELEMENTS. */
static fconv_status count_elements(const char *kind, const char *tensor, int ndim,
                                   const int64_t *dims, int64_t *out) {
    int64_t product = 1;
    int overflow = 0;
    for (int i = 0; i < ndim; i++) overflow |= fconv_mul_i64(product, dims[i], &product);
    if (!overflow && product <= FCONV_MAX_ELEMENTS) {
        *out = product;
        return FCONV_OK;
    }
    char shape[128];
    size_t used = 0;
    for (int i = 0; i < ndim && used < sizeof shape; i++)
        used += (size_t)snprintf(shape + used, sizeof shape - used, "%s%lld", i ? " x " : "",
                                 (long long)dims[i]);
    return fconv_fail(FCONV_EOVERFLOW, "%s: %s of %s elements exceeds the limit of %lld", kind,
                      tensor, shape, (long long)FCONV_MAX_ELEMENTS);
}

#define TRY(expr)                                                                            \
    do {                                                                                     \
        fconv_status try_status_ = (expr);                                                   \
        if (try_status_ != FCONV_OK) return try_status_;                                     \
    } while (0)

fconv_status fconv_validate_conv2d(const fconv_conv2d_desc *desc, fconv_plan *plan) {
    const char *K = "conv2d";
    fconv_conv2d_desc d = *desc;
    TRY(resolve_default_one(K, "n (batch)", &d.n));
    TRY(check_dim(K, "c (input channels)", d.c, 1));
    TRY(check_dim(K, "h (input height)", d.h, 1));
    TRY(check_dim(K, "w (input width)", d.w, 1));
    TRY(check_dim(K, "k (output channels)", d.k, 1));
    TRY(check_dim(K, "r (kernel height)", d.r, 1));
    TRY(check_dim(K, "s (kernel width)", d.s, 1));
    TRY(resolve_default_one(K, "stride_h", &d.stride_h));
    TRY(resolve_default_one(K, "stride_w", &d.stride_w));
    TRY(resolve_default_one(K, "dilation_h", &d.dilation_h));
    TRY(resolve_default_one(K, "dilation_w", &d.dilation_w));
    TRY(resolve_default_one(K, "groups", &d.groups));
    TRY(check_dim(K, "pad_top", d.pad_top, 0));
    TRY(check_dim(K, "pad_left", d.pad_left, 0));
    TRY(check_dim(K, "pad_bottom", d.pad_bottom, 0));
    TRY(check_dim(K, "pad_right", d.pad_right, 0));
    if (d.c % d.groups != 0)
        return fconv_fail(FCONV_EINVAL, "conv2d: groups %lld does not divide input channels %lld",
                          (long long)d.groups, (long long)d.c);
    if (d.k % d.groups != 0)
        return fconv_fail(FCONV_EINVAL, "conv2d: groups %lld does not divide output channels %lld",
                          (long long)d.groups, (long long)d.k);
    if (d.activation != FCONV_ACTIVATION_NONE && d.activation != FCONV_ACTIVATION_RELU)
        return fconv_fail(FCONV_EINVAL, "conv2d: unknown activation %d", (int)d.activation);
    if (d.layout != FCONV_LAYOUT_NCHW && d.layout != FCONV_LAYOUT_NHWC)
        return fconv_fail(FCONV_EINVAL, "conv2d: unknown layout %d (0 = NCHW, 1 = NHWC)", (int)d.layout);

    /* Every term is at most 2^31, so these sums and products fit in int64_t. */
    int64_t extent_h = d.dilation_h * (d.r - 1) + 1;
    int64_t extent_w = d.dilation_w * (d.s - 1) + 1;
    int64_t padded_h = d.h + d.pad_top + d.pad_bottom;
    int64_t padded_w = d.w + d.pad_left + d.pad_right;
    if (extent_h > padded_h)
        return fconv_fail(FCONV_EINVAL,
                          "conv2d: kernel height %lld (dilated extent %lld) exceeds padded input "
                          "height %lld: the output would be empty",
                          (long long)d.r, (long long)extent_h, (long long)padded_h);
    if (extent_w > padded_w)
        return fconv_fail(FCONV_EINVAL,
                          "conv2d: kernel width %lld (dilated extent %lld) exceeds padded input "
                          "width %lld: the output would be empty",
                          (long long)d.s, (long long)extent_w, (long long)padded_w);
    plan->out_h = (padded_h - extent_h) / d.stride_h + 1;
    plan->out_w = (padded_w - extent_w) / d.stride_w + 1;
    plan->off_h = plan->off_w = 0;

    TRY(count_elements(K, "input", 4, (int64_t[]){d.n, d.c, d.h, d.w}, &plan->x_elems));
    TRY(count_elements(K, "weights", 4, (int64_t[]){d.k, d.c / d.groups, d.r, d.s}, &plan->w_elems));
    TRY(count_elements(K, "output", 4, (int64_t[]){d.n, d.k, plan->out_h, plan->out_w},
                       &plan->y_elems));
    plan->kind = FCONV_KIND_CONV2D;
    plan->conv2d = d;
    return FCONV_OK;
}

/* Output length and window offset of one axis of filter2d / conv1d. */
static fconv_status filter_axis(const char *kind, const char *axis, fconv_mode mode, int64_t n,
                                int64_t m, int64_t *out_len, int64_t *offset) {
    switch (mode) {
    case FCONV_MODE_FULL:
        *out_len = n + m - 1;
        *offset = 0;
        return FCONV_OK;
    case FCONV_MODE_SAME:
        *out_len = n;
        *offset = (m - 1) / 2;
        return FCONV_OK;
    case FCONV_MODE_VALID:
        if (m > n)
            return fconv_fail(FCONV_EINVAL,
                              "%s: valid mode needs the kernel to fit inside the input, but kernel "
                              "%s %lld > input %s %lld",
                              kind, axis, (long long)m, axis, (long long)n);
        *out_len = n - m + 1;
        *offset = m - 1;
        return FCONV_OK;
    }
    return fconv_fail(FCONV_EINVAL, "%s: unknown mode %d", kind, (int)mode);
}

fconv_status fconv_validate_filter2d(const fconv_filter2d_desc *desc, fconv_plan *plan) {
    const char *K = "filter2d";
    fconv_filter2d_desc d = *desc;
    TRY(check_dim(K, "h (image height)", d.h, 1));
    TRY(check_dim(K, "w (image width)", d.w, 1));
    TRY(resolve_default_one(K, "channels", &d.channels));
    TRY(check_dim(K, "kh (kernel height)", d.kh, 1));
    TRY(check_dim(K, "kw (kernel width)", d.kw, 1));
    if ((unsigned)d.border > FCONV_BORDER_WRAP)
        return fconv_fail(FCONV_EINVAL, "%s: unknown border %d", K, (int)d.border);
    TRY(filter_axis(K, "height", d.mode, d.h, d.kh, &plan->out_h, &plan->off_h));
    TRY(filter_axis(K, "width", d.mode, d.w, d.kw, &plan->out_w, &plan->off_w));
    TRY(count_elements(K, "image", 3, (int64_t[]){d.h, d.w, d.channels}, &plan->x_elems));
    TRY(count_elements(K, "kernel", 2, (int64_t[]){d.kh, d.kw}, &plan->w_elems));
    TRY(count_elements(K, "output", 3, (int64_t[]){plan->out_h, plan->out_w, d.channels},
                       &plan->y_elems));
    d.correlate = d.correlate != 0;
    plan->kind = FCONV_KIND_FILTER2D;
    plan->filter = d;
    return FCONV_OK;
}

fconv_status fconv_validate_conv1d(const fconv_conv1d_desc *desc, fconv_plan *plan) {
    const char *K = "conv1d";
    fconv_conv1d_desc d = *desc;
    TRY(check_dim(K, "n (signal length)", d.n, 1));
    TRY(check_dim(K, "m (kernel length)", d.m, 1));
    plan->out_h = 1;
    plan->off_h = 0;
    TRY(filter_axis(K, "length", d.mode, d.n, d.m, &plan->out_w, &plan->off_w));
    d.correlate = d.correlate != 0;
    plan->x_elems = d.n;
    plan->w_elems = d.m;
    plan->y_elems = plan->out_w;
    plan->kind = FCONV_KIND_CONV1D;
    plan->conv1d = d;
    plan->filter = (fconv_filter2d_desc){.h = 1, .w = d.n, .channels = 1, .kh = 1, .kw = d.m,
                                         .mode = d.mode, .border = FCONV_BORDER_ZERO,
                                         .correlate = d.correlate};
    return FCONV_OK;
}
