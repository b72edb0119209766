/*
 * test_api.c — the public API's contract, SQLite style: every error path returns the
 * documented status, names the problem in fconv_last_error(), leaves *plan NULL and writes
 * no other output; every successful call clears the message; the introspection functions
 * agree with each other; weights given at plan time are copied; errors are thread-local.
 * Only the public header's promises are tested here (test_reference.c checks the numbers).
 */
#include <pthread.h>
#include <stddef.h>

#include "fastconv.h"
#include "test.h"

/* A non-NULL pointer value that no plan ever has: a failed plan call must overwrite it. */
static char plan_sentinel_storage;
#define PLAN_SENTINEL ((fconv_plan *)(void *)&plan_sentinel_storage)

/* A small valid conv2d: 1x2x5x5 input, 3 filters 3x3 over 2 channels, pad 1. */
static fconv_conv2d_desc valid_conv2d(void) {
    return (fconv_conv2d_desc){.n = 1, .c = 2, .h = 5, .w = 5, .k = 3, .r = 3, .s = 3,
                               .pad_top = 1, .pad_left = 1, .pad_bottom = 1, .pad_right = 1};
}

static fconv_filter2d_desc valid_filter2d(void) {
    return (fconv_filter2d_desc){.h = 6, .w = 5, .channels = 2, .kh = 3, .kw = 3,
                                 .mode = FCONV_MODE_SAME, .border = FCONV_BORDER_REFLECT};
}

static fconv_conv1d_desc valid_conv1d(void) {
    return (fconv_conv1d_desc){.n = 10, .m = 3, .mode = FCONV_MODE_FULL};
}

/* Leave a known, non-empty message in this thread's last error. */
static void make_some_error(void) {
    fconv_plan *p = NULL;
    fconv_status st = fconv_plan_conv2d(NULL, NULL, NULL, NULL, &p);
    CHECK_EQ_INT(st, FCONV_EINVAL);
    CHECK(fconv_last_error()[0] != '\0');
}

/* Expect a plan call to fail with `status`, *plan NULL, and `word` in the message. */
#define EXPECT_PLAN_FAIL(call, plan_var, status, word)                                       \
    do {                                                                                     \
        plan_var = PLAN_SENTINEL;                                                            \
        fconv_status st_ = (call);                                                           \
        CHECKF(st_ == (status), "%s: got %d (%s), want %d; last error \"%s\"", #call,        \
               (int)st_, fconv_strerror(st_), (int)(status), fconv_last_error());            \
        CHECKF(plan_var == NULL, "%s: *plan not set to NULL on failure", #call);            \
        if (plan_var != NULL && plan_var != PLAN_SENTINEL) fconv_plan_destroy(plan_var);     \
        CHECK_STR_CONTAINS(fconv_last_error(), word);                                        \
    } while (0)

#define EXPECT_OK(call)                                                                      \
    do {                                                                                     \
        fconv_status st_ = (call);                                                           \
        CHECKF(st_ == FCONV_OK, "%s: got %d (%s): \"%s\"", #call, (int)st_,                  \
               fconv_strerror(st_), fconv_last_error());                                     \
        CHECKF(fconv_last_error()[0] == '\0', "%s succeeded but left \"%s\"", #call,         \
               fconv_last_error());                                                          \
    } while (0)

#define EXPECT_FAIL(call, status, word)                                                      \
    do {                                                                                     \
        fconv_status st_ = (call);                                                           \
        CHECKF(st_ == (status), "%s: got %d (%s), want %d; last error \"%s\"", #call,        \
               (int)st_, fconv_strerror(st_), (int)(status), fconv_last_error());            \
        CHECK_STR_CONTAINS(fconv_last_error(), word);                                        \
    } while (0)

/* ---- NULL arguments of the plan functions ------------------------------------------------ */

static void test_plan_null_arguments(void) {
    fconv_plan *p;
    fconv_conv2d_desc c = valid_conv2d();
    fconv_filter2d_desc f = valid_filter2d();
    fconv_conv1d_desc o = valid_conv1d();

    EXPECT_PLAN_FAIL(fconv_plan_conv2d(NULL, NULL, NULL, NULL, &p), p, FCONV_EINVAL, "NULL");
    CHECK_STR_CONTAINS(fconv_last_error(), "descriptor");
    EXPECT_PLAN_FAIL(fconv_plan_filter2d(NULL, NULL, NULL, &p), p, FCONV_EINVAL, "NULL");
    CHECK_STR_CONTAINS(fconv_last_error(), "descriptor");
    EXPECT_PLAN_FAIL(fconv_plan_conv1d(NULL, NULL, NULL, &p), p, FCONV_EINVAL, "NULL");
    CHECK_STR_CONTAINS(fconv_last_error(), "descriptor");

    EXPECT_FAIL(fconv_plan_conv2d(&c, NULL, NULL, NULL, NULL), FCONV_EINVAL, "NULL");
    CHECK_STR_CONTAINS(fconv_last_error(), "plan");
    EXPECT_FAIL(fconv_plan_filter2d(&f, NULL, NULL, NULL), FCONV_EINVAL, "NULL");
    CHECK_STR_CONTAINS(fconv_last_error(), "plan");
    EXPECT_FAIL(fconv_plan_conv1d(&o, NULL, NULL, NULL), FCONV_EINVAL, "NULL");
    CHECK_STR_CONTAINS(fconv_last_error(), "plan");
    /* Both NULL: still a clean EINVAL. */
    EXPECT_FAIL(fconv_plan_conv1d(NULL, NULL, NULL, NULL), FCONV_EINVAL, "NULL");
}

/* ---- conv2d descriptor fields --------------------------------------------------------------- */

struct field {
    const char *name; /* also the word the message must contain */
    size_t offset;
    int64_t min;      /* smallest valid value; 0 for fields where 0 is valid */
};

#define FIELD(f, min) {#f, offsetof(fconv_conv2d_desc, f), min}
static const struct field conv2d_fields[] = {
    FIELD(n, 0),        FIELD(c, 1),          FIELD(h, 1),          FIELD(w, 1),
    FIELD(k, 1),        FIELD(r, 1),          FIELD(s, 1),          FIELD(stride_h, 0),
    FIELD(stride_w, 0), FIELD(pad_top, 0),    FIELD(pad_left, 0),   FIELD(pad_bottom, 0),
    FIELD(pad_right, 0), FIELD(dilation_h, 0), FIELD(dilation_w, 0), FIELD(groups, 0),
};
#undef FIELD

static void set_field(fconv_conv2d_desc *d, const struct field *f, int64_t v) {
    memcpy((char *)d + f->offset, &v, sizeof v);
}

/* A word of the message for a field: "n (batch)", "c (input channels)", ... start with the
 * single letter, so look for "<name> " for one-letter names to avoid matching any 'n'. */
static void check_names_field(const struct field *f) {
    char word[32];
    if (strlen(f->name) == 1)
        snprintf(word, sizeof word, " %s (", f->name);
    else
        snprintf(word, sizeof word, "%s", f->name);
    CHECK_STR_CONTAINS(fconv_last_error(), word);
}

static void test_conv2d_fields_out_of_range(void) {
    fconv_plan *p;
    for (size_t i = 0; i < sizeof conv2d_fields / sizeof conv2d_fields[0]; i++) {
        const struct field *f = &conv2d_fields[i];
        const int64_t bad_low[] = {f->min - 1, f->min - 2, -1000000, INT64_MIN};
        for (size_t j = 0; j < sizeof bad_low / sizeof bad_low[0]; j++) {
            fconv_conv2d_desc d = valid_conv2d();
            set_field(&d, f, bad_low[j]);
            EXPECT_PLAN_FAIL(fconv_plan_conv2d(&d, NULL, NULL, NULL, &p), p, FCONV_EINVAL, ">=");
            check_names_field(f);
        }
        /* Just above FCONV_MAX_DIM, and far above: FCONV_EOVERFLOW naming the field. */
        const int64_t bad_high[] = {FCONV_MAX_DIM + 1, INT64_MAX};
        for (size_t j = 0; j < 2; j++) {
            fconv_conv2d_desc d = valid_conv2d();
            set_field(&d, f, bad_high[j]);
            EXPECT_PLAN_FAIL(fconv_plan_conv2d(&d, NULL, NULL, NULL, &p), p, FCONV_EOVERFLOW,
                             "limit");
            check_names_field(f);
        }
    }
    /* c, h, w, k, r, s of 0 are errors (no "0 means 1" for them). */
    const char *zero_bad[] = {"c", "h", "w", "k", "r", "s"};
    for (size_t i = 0; i < sizeof conv2d_fields / sizeof conv2d_fields[0]; i++) {
        const struct field *f = &conv2d_fields[i];
        int must_fail = 0;
        for (size_t j = 0; j < 6; j++) must_fail |= strcmp(f->name, zero_bad[j]) == 0;
        fconv_conv2d_desc d = valid_conv2d();
        set_field(&d, f, 0);
        if (must_fail) {
            EXPECT_PLAN_FAIL(fconv_plan_conv2d(&d, NULL, NULL, NULL, &p), p, FCONV_EINVAL, ">= 1");
            check_names_field(f);
        } else {
            /* n, stride, dilation, groups: 0 means 1; pads: 0 is valid. */
            EXPECT_OK(fconv_plan_conv2d(&d, NULL, NULL, NULL, &p));
            fconv_plan_destroy(p);
        }
    }
}

static void test_conv2d_groups_activation_extent(void) {
    fconv_plan *p;
    fconv_conv2d_desc d = valid_conv2d();
    d.c = 4, d.k = 6, d.groups = 3; /* 3 does not divide 4 */
    EXPECT_PLAN_FAIL(fconv_plan_conv2d(&d, NULL, NULL, NULL, &p), p, FCONV_EINVAL, "groups");
    CHECK_STR_CONTAINS(fconv_last_error(), "input channels");
    d.c = 6, d.k = 4; /* divides C, not K */
    EXPECT_PLAN_FAIL(fconv_plan_conv2d(&d, NULL, NULL, NULL, &p), p, FCONV_EINVAL, "groups");
    CHECK_STR_CONTAINS(fconv_last_error(), "output channels");
    d.k = 6; /* divides both */
    EXPECT_OK(fconv_plan_conv2d(&d, NULL, NULL, NULL, &p));
    fconv_plan_destroy(p);
    d.groups = 6, d.k = 12; /* depthwise, multiplier 2 */
    EXPECT_OK(fconv_plan_conv2d(&d, NULL, NULL, NULL, &p));
    CHECK_EQ_INT(fconv_plan_weight_elements(p), 12 * 1 * 3 * 3);
    fconv_plan_destroy(p);
    d.groups = 7; /* more groups than channels */
    EXPECT_PLAN_FAIL(fconv_plan_conv2d(&d, NULL, NULL, NULL, &p), p, FCONV_EINVAL, "groups");

    const int bad_activations[] = {2, 3, -1, 1000};
    for (int i = 0; i < 4; i++) {
        d = valid_conv2d();
        d.activation = (fconv_activation)bad_activations[i];
        EXPECT_PLAN_FAIL(fconv_plan_conv2d(&d, NULL, NULL, NULL, &p), p, FCONV_EINVAL,
                         "activation");
    }

    const int bad_layouts[] = {2, -1, 77};
    for (int i = 0; i < 3; i++) {
        d = valid_conv2d();
        d.layout = (fconv_layout)bad_layouts[i];
        EXPECT_PLAN_FAIL(fconv_plan_conv2d(&d, NULL, NULL, NULL, &p), p, FCONV_EINVAL, "layout");
    }
    /* NHWC: the output's shape in its order (N, P, Q, K); NCHW-only algorithms run on copies
     * in the workspace (more bytes, and the explanation says so), so none is allowed without
     * one but the reference and implicit-gemm (no padded copy here). */
    d = valid_conv2d();
    d.layout = FCONV_LAYOUT_NHWC;
    EXPECT_OK(fconv_plan_conv2d(&d, &(fconv_options){.algo = FCONV_ALGO_DIRECT}, NULL, NULL, &p));
    {
        int64_t sh[4];
        CHECK_EQ_INT(fconv_plan_output_shape(p, sh), 4);
        CHECK(sh[0] == 1 && sh[1] == 5 && sh[2] == 5 && sh[3] == d.k);
        CHECK(fconv_plan_workspace_size(p) >= (size_t)(fconv_plan_input_elements(p) + fconv_plan_output_elements(p)) * 4);
        CHECK_STR_CONTAINS(fconv_plan_explain(p), "NHWC through NCHW copies");
    }
    fconv_plan_destroy(p);
    d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = 0;
    EXPECT_PLAN_FAIL(fconv_plan_conv2d(&d, &(fconv_options){.algo = FCONV_ALGO_DIRECT, .flags = FCONV_PLAN_NO_WORKSPACE},
                                       NULL, NULL, &p),
                     p, FCONV_EUNSUPPORTED, "workspace");
    EXPECT_OK(fconv_plan_conv2d(&d, &(fconv_options){.flags = FCONV_PLAN_NO_WORKSPACE}, NULL, NULL, &p));
    CHECK(fconv_plan_algo(p) == FCONV_ALGO_IMPLICIT_GEMM || fconv_plan_algo(p) == FCONV_ALGO_REFERENCE);
    fconv_plan_destroy(p);
    /* A one-channel x or y lies in NHWC as in NCHW: only the other is copied, and with one
     * channel in and out nothing is (the workspace is the NCHW plan's). */
    {
        static const int64_t cks[4][2] = {{1, 1}, {1, 3}, {2, 1}, {2, 3}};
        static const char *copied[4] = {NULL, "NCHW copies of y in", "NCHW copies of x in", "NCHW copies of x and y"};
        for (int i = 0; i < 4; i++) {
            d = valid_conv2d();
            d.c = cks[i][0];
            d.k = cks[i][1];
            fconv_plan *nchw = NULL;
            EXPECT_OK(fconv_plan_conv2d(&d, &(fconv_options){.algo = FCONV_ALGO_DIRECT}, NULL, NULL, &nchw));
            d.layout = FCONV_LAYOUT_NHWC;
            EXPECT_OK(fconv_plan_conv2d(&d, &(fconv_options){.algo = FCONV_ALGO_DIRECT}, NULL, NULL, &p));
            size_t copies = (size_t)((d.c > 1 ? fconv_plan_input_elements(p) : 0) +
                                     (d.k > 1 ? fconv_plan_output_elements(p) : 0)) * sizeof(float);
            if (!copied[i]) {
                CHECK(!strstr(fconv_plan_explain(p), "NCHW copies"));
                CHECK_EQ_INT(fconv_plan_workspace_size(p), fconv_plan_workspace_size(nchw));
            } else {
                CHECK_STR_CONTAINS(fconv_plan_explain(p), copied[i]);
                CHECK(fconv_plan_workspace_size(p) >= fconv_plan_workspace_size(nchw) + copies);
                CHECK(fconv_plan_workspace_size(p) < fconv_plan_workspace_size(nchw) + copies + 256);
            }
            fconv_plan_destroy(p);
            fconv_plan_destroy(nchw);
        }
    }

    /* Kernel (dilated) larger than the padded input: the output would be empty. */
    d = valid_conv2d(); /* h = w = 5, pad 1 each side: padded 7 */
    d.r = 8;
    EXPECT_PLAN_FAIL(fconv_plan_conv2d(&d, NULL, NULL, NULL, &p), p, FCONV_EINVAL, "height");
    CHECK_STR_CONTAINS(fconv_last_error(), "padded");
    d.r = 7; /* exactly the padded height: one output row */
    EXPECT_OK(fconv_plan_conv2d(&d, NULL, NULL, NULL, &p));
    int64_t shape[4];
    CHECK_EQ_INT(fconv_plan_output_shape(p, shape), 4);
    CHECK_EQ_INT(shape[2], 1);
    fconv_plan_destroy(p);
    d = valid_conv2d();
    d.dilation_w = 4; /* extent 4 * 2 + 1 = 9 > 7 */
    EXPECT_PLAN_FAIL(fconv_plan_conv2d(&d, NULL, NULL, NULL, &p), p, FCONV_EINVAL, "width");
    CHECK_STR_CONTAINS(fconv_last_error(), "padded");
    d.dilation_w = 3; /* extent 7 fits */
    EXPECT_OK(fconv_plan_conv2d(&d, NULL, NULL, NULL, &p));
    fconv_plan_destroy(p);
    /* Asymmetric padding counts: pad only at the bottom. */
    d = valid_conv2d();
    d.pad_top = 0, d.pad_bottom = 3, d.r = 8; /* 5 + 3 = 8 */
    EXPECT_OK(fconv_plan_conv2d(&d, NULL, NULL, NULL, &p));
    fconv_plan_destroy(p);
    d.r = 9;
    EXPECT_PLAN_FAIL(fconv_plan_conv2d(&d, NULL, NULL, NULL, &p), p, FCONV_EINVAL, "padded");

    /* A bias at plan time needs has_bias. */
    float bias[3] = {1, 2, 3};
    d = valid_conv2d();
    EXPECT_PLAN_FAIL(fconv_plan_conv2d(&d, NULL, NULL, bias, &p), p, FCONV_EINVAL, "has_bias");
    d.has_bias = 1;
    EXPECT_OK(fconv_plan_conv2d(&d, NULL, NULL, bias, &p));
    fconv_plan_destroy(p);
}

/* Sizes: the per-dimension limit is inclusive; tensor products beyond 2^40 are refused
 * (before anything of that size is allocated: ASan would abort on such a malloc). */
static void test_conv2d_element_limits(void) {
    fconv_plan *p;
    const fconv_options ref = {.algo = FCONV_ALGO_REFERENCE};
    const int64_t M = (int64_t)1 << 20;
    /* A dimension of exactly FCONV_MAX_DIM is fine. */
    fconv_conv2d_desc d = {.c = 1, .h = FCONV_MAX_DIM, .w = 1, .k = 1, .r = 1, .s = 1};
    EXPECT_OK(fconv_plan_conv2d(&d, &ref, NULL, NULL, &p));
    CHECK_EQ_INT(fconv_plan_input_elements(p), FCONV_MAX_DIM);
    fconv_plan_destroy(p);

    /* n = c = h = w = 2^20: each dimension passes, the product (2^80) overflows int64. */
    d = (fconv_conv2d_desc){.n = M, .c = M, .h = M, .w = M, .k = 1, .r = 1, .s = 1};
    EXPECT_PLAN_FAIL(fconv_plan_conv2d(&d, &ref, NULL, NULL, &p), p, FCONV_EOVERFLOW, "input");
    CHECK_STR_CONTAINS(fconv_last_error(), "limit");
    /* Exactly 2^40 input elements is allowed; 2^41 is not. */
    d = (fconv_conv2d_desc){.n = 1, .c = M, .h = M, .w = 1, .k = 1, .r = 1, .s = 1};
    EXPECT_OK(fconv_plan_conv2d(&d, &ref, NULL, NULL, &p));
    CHECK_EQ_INT(fconv_plan_input_elements(p), FCONV_MAX_ELEMENTS);
    fconv_plan_destroy(p);
    d.w = 2;
    EXPECT_PLAN_FAIL(fconv_plan_conv2d(&d, &ref, NULL, NULL, &p), p, FCONV_EOVERFLOW, "input");
    /* Weights beyond the limit with a small input. */
    d = (fconv_conv2d_desc){.n = 1, .c = M, .h = 1, .w = 1, .k = 2 * M, .r = 1, .s = 1};
    EXPECT_PLAN_FAIL(fconv_plan_conv2d(&d, &ref, NULL, NULL, &p), p, FCONV_EOVERFLOW, "weights");
    /* Output beyond the limit with input and weights within it. */
    d = (fconv_conv2d_desc){.n = M, .c = 1, .h = 1024, .w = 1024, .k = 2, .r = 1, .s = 1};
    EXPECT_PLAN_FAIL(fconv_plan_conv2d(&d, &ref, NULL, NULL, &p), p, FCONV_EOVERFLOW, "output");
    /* Output made large by padding alone. */
    d = (fconv_conv2d_desc){.c = 1, .h = 1, .w = 1, .k = 1, .r = 1, .s = 1,
                            .pad_top = FCONV_MAX_DIM, .pad_bottom = FCONV_MAX_DIM,
                            .pad_left = FCONV_MAX_DIM, .pad_right = FCONV_MAX_DIM};
    EXPECT_PLAN_FAIL(fconv_plan_conv2d(&d, &ref, NULL, NULL, &p), p, FCONV_EOVERFLOW, "output");
    /* Largest dilation and kernel: the extent product must not overflow, just not fit. */
    d = (fconv_conv2d_desc){.c = 1, .h = 4, .w = 4, .k = 1, .r = FCONV_MAX_DIM, .s = 1,
                            .dilation_h = FCONV_MAX_DIM};
    EXPECT_PLAN_FAIL(fconv_plan_conv2d(&d, &ref, NULL, NULL, &p), p, FCONV_EINVAL, "padded");
}

/* ---- filter2d and conv1d descriptors -------------------------------------------------------- */

static void test_filter2d_descriptor(void) {
    fconv_plan *p;
    struct {
        const char *word;
        size_t offset;
        int zero_ok;
    } fields[] = {
        {"h (", offsetof(fconv_filter2d_desc, h), 0},
        {"w (", offsetof(fconv_filter2d_desc, w), 0},
        {"kh", offsetof(fconv_filter2d_desc, kh), 0},
        {"kw", offsetof(fconv_filter2d_desc, kw), 0},
        {"channels", offsetof(fconv_filter2d_desc, channels), 1},
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        const int64_t values[] = {0, -1, INT64_MIN, FCONV_MAX_DIM + 1, INT64_MAX};
        for (size_t j = 0; j < 5; j++) {
            fconv_filter2d_desc d = valid_filter2d();
            d.mode = FCONV_MODE_FULL; /* so a huge kernel is not a 'valid' error */
            memcpy((char *)&d + fields[i].offset, &values[j], sizeof values[j]);
            if (values[j] == 0 && fields[i].zero_ok) {
                EXPECT_OK(fconv_plan_filter2d(&d, NULL, NULL, &p));
                fconv_plan_destroy(p);
                continue;
            }
            fconv_status want = values[j] > FCONV_MAX_DIM ? FCONV_EOVERFLOW : FCONV_EINVAL;
            EXPECT_PLAN_FAIL(fconv_plan_filter2d(&d, NULL, NULL, &p), p, want, fields[i].word);
        }
    }
    const int bad_modes[] = {3, -1, 77};
    for (int i = 0; i < 3; i++) {
        fconv_filter2d_desc d = valid_filter2d();
        d.mode = (fconv_mode)bad_modes[i];
        EXPECT_PLAN_FAIL(fconv_plan_filter2d(&d, NULL, NULL, &p), p, FCONV_EINVAL, "mode");
    }
    const int bad_borders[] = {6, -1, 1 << 20};
    for (int i = 0; i < 3; i++) {
        fconv_filter2d_desc d = valid_filter2d();
        d.border = (fconv_border)bad_borders[i];
        EXPECT_PLAN_FAIL(fconv_plan_filter2d(&d, NULL, NULL, &p), p, FCONV_EINVAL, "border");
    }
    /* Valid mode: the kernel must fit on each axis; equal is fine (one output). */
    fconv_filter2d_desc d = valid_filter2d(); /* 6 x 5 */
    d.mode = FCONV_MODE_VALID;
    d.kh = 7;
    EXPECT_PLAN_FAIL(fconv_plan_filter2d(&d, NULL, NULL, &p), p, FCONV_EINVAL, "valid");
    CHECK_STR_CONTAINS(fconv_last_error(), "height");
    d.kh = 1, d.kw = 6;
    EXPECT_PLAN_FAIL(fconv_plan_filter2d(&d, NULL, NULL, &p), p, FCONV_EINVAL, "valid");
    CHECK_STR_CONTAINS(fconv_last_error(), "width");
    d.kh = 6, d.kw = 5;
    EXPECT_OK(fconv_plan_filter2d(&d, NULL, NULL, &p));
    int64_t shape[4];
    CHECK_EQ_INT(fconv_plan_output_shape(p, shape), 3);
    CHECK(shape[0] == 1 && shape[1] == 1 && shape[2] == 2);
    fconv_plan_destroy(p);
    /* The same big kernel is fine in full and same modes (any border). */
    for (int border = FCONV_BORDER_ZERO; border <= FCONV_BORDER_WRAP; border++) {
        for (int mode = FCONV_MODE_FULL; mode <= FCONV_MODE_SAME; mode++) {
            d = valid_filter2d();
            d.kh = 13, d.kw = 11, d.border = (fconv_border)border, d.mode = (fconv_mode)mode;
            EXPECT_OK(fconv_plan_filter2d(&d, NULL, NULL, &p));
            fconv_plan_destroy(p);
        }
    }

    /* Element limits: image, kernel, output. */
    const fconv_options ref = {.algo = FCONV_ALGO_REFERENCE};
    const int64_t M = (int64_t)1 << 20;
    d = (fconv_filter2d_desc){.h = FCONV_MAX_DIM, .w = FCONV_MAX_DIM, .kh = 1, .kw = 1};
    EXPECT_PLAN_FAIL(fconv_plan_filter2d(&d, &ref, NULL, &p), p, FCONV_EOVERFLOW, "image");
    d = (fconv_filter2d_desc){.h = M, .w = M, .channels = 2, .kh = 1, .kw = 1};
    EXPECT_PLAN_FAIL(fconv_plan_filter2d(&d, &ref, NULL, &p), p, FCONV_EOVERFLOW, "image");
    d = (fconv_filter2d_desc){.h = M, .w = M, .kh = 2 * M, .kw = M};
    EXPECT_PLAN_FAIL(fconv_plan_filter2d(&d, &ref, NULL, &p), p, FCONV_EOVERFLOW, "kernel");
    d = (fconv_filter2d_desc){.h = M, .w = M, .kh = 2, .kw = 1}; /* full: (M + 1) x M */
    EXPECT_PLAN_FAIL(fconv_plan_filter2d(&d, &ref, NULL, &p), p, FCONV_EOVERFLOW, "output");
    d.mode = FCONV_MODE_SAME; /* M x M: exactly the limit */
    EXPECT_OK(fconv_plan_filter2d(&d, &ref, NULL, &p));
    CHECK_EQ_INT(fconv_plan_output_elements(p), FCONV_MAX_ELEMENTS);
    fconv_plan_destroy(p);
}

static void test_conv1d_descriptor(void) {
    fconv_plan *p;
    const int64_t values[] = {0, -1, INT64_MIN, FCONV_MAX_DIM + 1, INT64_MAX};
    for (int field = 0; field < 2; field++) {
        for (int j = 0; j < 5; j++) {
            fconv_conv1d_desc d = valid_conv1d();
            if (field == 0) d.n = values[j];
            else d.m = values[j];
            fconv_status want = values[j] > FCONV_MAX_DIM ? FCONV_EOVERFLOW : FCONV_EINVAL;
            EXPECT_PLAN_FAIL(fconv_plan_conv1d(&d, NULL, NULL, &p), p, want,
                             field == 0 ? "n (" : "m (");
        }
    }
    const int bad_modes[] = {3, -1};
    for (int i = 0; i < 2; i++) {
        fconv_conv1d_desc d = valid_conv1d();
        d.mode = (fconv_mode)bad_modes[i];
        EXPECT_PLAN_FAIL(fconv_plan_conv1d(&d, NULL, NULL, &p), p, FCONV_EINVAL, "mode");
    }
    fconv_conv1d_desc d = {.n = 4, .m = 5, .mode = FCONV_MODE_VALID};
    EXPECT_PLAN_FAIL(fconv_plan_conv1d(&d, NULL, NULL, &p), p, FCONV_EINVAL, "valid");
    d.m = 4;
    EXPECT_OK(fconv_plan_conv1d(&d, NULL, NULL, &p));
    CHECK_EQ_INT(fconv_plan_output_elements(p), 1);
    fconv_plan_destroy(p);
    /* Largest signal and kernel: full output 2^32 - 1 elements, no allocation at plan time. */
    const fconv_options ref = {.algo = FCONV_ALGO_REFERENCE};
    d = (fconv_conv1d_desc){.n = FCONV_MAX_DIM, .m = FCONV_MAX_DIM, .mode = FCONV_MODE_FULL};
    EXPECT_OK(fconv_plan_conv1d(&d, &ref, NULL, &p));
    CHECK_EQ_INT(fconv_plan_output_elements(p), 2 * FCONV_MAX_DIM - 1);
    fconv_plan_destroy(p);
}

/* ---- options ------------------------------------------------------------------------------- */

static void test_options(void) {
    fconv_plan *p;
    fconv_conv2d_desc c = valid_conv2d();
    fconv_filter2d_desc f = valid_filter2d();
    fconv_conv1d_desc o = valid_conv1d();

    const int bad_algos[] = {FCONV_ALGO_COUNT_, -1, 1000};
    for (int i = 0; i < 3; i++) {
        fconv_options opt = {.algo = (fconv_algo)bad_algos[i]};
        EXPECT_PLAN_FAIL(fconv_plan_conv2d(&c, &opt, NULL, NULL, &p), p, FCONV_EINVAL,
                         "algorithm");
        EXPECT_PLAN_FAIL(fconv_plan_filter2d(&f, &opt, NULL, &p), p, FCONV_EINVAL, "algorithm");
        EXPECT_PLAN_FAIL(fconv_plan_conv1d(&o, &opt, NULL, &p), p, FCONV_EINVAL, "algorithm");
    }
    fconv_options opt = {.threads = -1};
    EXPECT_PLAN_FAIL(fconv_plan_conv2d(&c, &opt, NULL, NULL, &p), p, FCONV_EINVAL, "threads");
    opt.threads = -1000;
    EXPECT_PLAN_FAIL(fconv_plan_conv1d(&o, &opt, NULL, &p), p, FCONV_EINVAL, "threads");

    const double bad_tolerances[] = {-1e-6, -INFINITY, INFINITY, NAN, -0.5};
    for (int i = 0; i < 5; i++) {
        opt = (fconv_options){.tolerance = bad_tolerances[i]};
        EXPECT_PLAN_FAIL(fconv_plan_conv2d(&c, &opt, NULL, NULL, &p), p, FCONV_EINVAL,
                         "tolerance");
        EXPECT_PLAN_FAIL(fconv_plan_filter2d(&f, &opt, NULL, &p), p, FCONV_EINVAL, "tolerance");
    }
    /* A tolerance no algorithm can promise: AUTO refuses instead of trading accuracy. */
    opt = (fconv_options){.tolerance = 1e-300};
    EXPECT_PLAN_FAIL(fconv_plan_conv2d(&c, &opt, NULL, NULL, &p), p, FCONV_EUNSUPPORTED,
                     "tolerance");
    /* A generous one is accepted. */
    opt.tolerance = 0.5;
    EXPECT_OK(fconv_plan_conv2d(&c, &opt, NULL, NULL, &p));
    fconv_plan_destroy(p);

    /* 0x1 and 0x2 are FCONV_PLAN_NO_WORKSPACE and FCONV_PLAN_MEASURE. */
    const unsigned bad_flags[] = {0x100u, 0x80000000u, ~0u, 0x103u};
    for (int i = 0; i < 4; i++) {
        opt = (fconv_options){.flags = bad_flags[i]};
        EXPECT_PLAN_FAIL(fconv_plan_conv2d(&c, &opt, NULL, NULL, &p), p, FCONV_EINVAL, "flag");
    }
    /* Device values that do not exist, and GPU devices that are absent here (never a silent
     * CPU fallback); present GPU devices are tests/unit/test_gpu.c's. */
    const int bad_devices[] = {3, -1};
    for (int i = 0; i < 2; i++) {
        opt = (fconv_options){.device = (fconv_device)bad_devices[i]};
        EXPECT_PLAN_FAIL(fconv_plan_conv2d(&c, &opt, NULL, NULL, &p), p, FCONV_ENODEVICE,
                         "device");
        EXPECT_PLAN_FAIL(fconv_plan_conv1d(&o, &opt, NULL, &p), p, FCONV_ENODEVICE, "device");
    }
    for (int d = FCONV_DEVICE_OPENCL; d <= FCONV_DEVICE_CUDA; d++) {
        if (fconv_device_count((fconv_device)d) > 0) continue;
        opt = (fconv_options){.device = (fconv_device)d};
        const char *name = d == FCONV_DEVICE_CUDA ? "cuda" : "opencl";
        EXPECT_PLAN_FAIL(fconv_plan_conv2d(&c, &opt, NULL, NULL, &p), p, FCONV_ENODEVICE, name);
    }

    /* An explicit all-zero options struct is the same as NULL. */
    opt = (fconv_options){0};
    fconv_plan *q;
    EXPECT_OK(fconv_plan_conv2d(&c, &opt, NULL, NULL, &p));
    EXPECT_OK(fconv_plan_conv2d(&c, NULL, NULL, NULL, &q));
    CHECK_EQ_INT(fconv_plan_algo(p), fconv_plan_algo(q));
    CHECK_EQ_INT(fconv_plan_threads(p), fconv_plan_threads(q));
    fconv_plan_destroy(p);
    fconv_plan_destroy(q);

    /* Workspace options: the reference needs none, so both are accepted. */
    opt = (fconv_options){.algo = FCONV_ALGO_REFERENCE, .flags = FCONV_PLAN_NO_WORKSPACE};
    EXPECT_OK(fconv_plan_conv2d(&c, &opt, NULL, NULL, &p));
    CHECK_EQ_INT(fconv_plan_workspace_size(p), 0);
    fconv_plan_destroy(p);
    opt = (fconv_options){.algo = FCONV_ALGO_REFERENCE, .max_workspace_bytes = 1};
    EXPECT_OK(fconv_plan_filter2d(&f, &opt, NULL, &p));
    CHECK_EQ_INT(fconv_plan_workspace_size(p), 0);
    fconv_plan_destroy(p);
    /* Whatever AUTO picks honours the budget. */
    opt = (fconv_options){.flags = FCONV_PLAN_NO_WORKSPACE};
    EXPECT_OK(fconv_plan_conv2d(&c, &opt, NULL, NULL, &p));
    CHECK_EQ_INT(fconv_plan_workspace_size(p), 0);
    fconv_plan_destroy(p);
    opt = (fconv_options){.max_workspace_bytes = 64};
    EXPECT_OK(fconv_plan_conv1d(&o, &opt, NULL, &p));
    CHECK(fconv_plan_workspace_size(p) <= 64);
    fconv_plan_destroy(p);
}

/* Every named algorithm either plans (and then serves the kind) or says why not; one that
 * is not built in is FCONV_EUNSUPPORTED naming it. */
static void test_named_algorithms(void) {
    fconv_conv2d_desc c = valid_conv2d();
    fconv_filter2d_desc f = valid_filter2d();
    fconv_conv1d_desc o = valid_conv1d();
    int missing = 0;
    for (int a = 1; a < FCONV_ALGO_COUNT_; a++) {
        fconv_algo_info info;
        fconv_status ist = fconv_algo_get_info((fconv_algo)a, &info);
        CHECKF(ist == FCONV_OK || ist == FCONV_EUNSUPPORTED, "get_info(%d) = %d", a, (int)ist);
        fconv_options opt = {.algo = (fconv_algo)a};
        for (int kind = 0; kind < 3; kind++) {
            fconv_plan *p = PLAN_SENTINEL;
            fconv_status st = kind == 0   ? fconv_plan_conv2d(&c, &opt, NULL, NULL, &p)
                              : kind == 1 ? fconv_plan_filter2d(&f, &opt, NULL, &p)
                                          : fconv_plan_conv1d(&o, &opt, NULL, &p);
            if (ist == FCONV_EUNSUPPORTED) {
                CHECKF(st == FCONV_EUNSUPPORTED, "algo %s not built in, plan gave %d",
                       fconv_algo_name((fconv_algo)a), (int)st);
                CHECK_STR_CONTAINS(fconv_last_error(), fconv_algo_name((fconv_algo)a));
                CHECK_STR_CONTAINS(fconv_last_error(), "not built");
                CHECK(p == NULL);
                missing++;
            } else if (st == FCONV_OK) {
                CHECK_EQ_INT(fconv_plan_algo(p), a);
                CHECK(info.serves & (1u << kind));
                CHECK_STR_CONTAINS(fconv_plan_explain(p), info.name);
                fconv_plan_destroy(p);
            } else {
                CHECKF(st == FCONV_EUNSUPPORTED, "algo %s kind %d: %d", info.name, kind, (int)st);
                CHECK(fconv_last_error()[0] != '\0');
                CHECK(p == NULL);
            }
        }
    }
    /* This version builds only some algorithms; while any is missing, the check above ran.
     * (When all are built, the not-built path simply cannot be reached.) */
    (void)missing;
}

/* ---- execute --------------------------------------------------------------------------------- */

static void test_execute_errors(void) {
    fconv_conv2d_desc d = valid_conv2d();
    d.has_bias = 1;
    fconv_plan *bare = NULL, *full = NULL, *nobias = NULL;
    float x[50], w[54], b[3], y[75], big[200];
    test_fill_random(x, 50);
    test_fill_random(w, 54);
    test_fill_random(b, 3);
    test_fill_random(big, 200);
    EXPECT_OK(fconv_plan_conv2d(&d, NULL, NULL, NULL, &bare));
    EXPECT_OK(fconv_plan_conv2d(&d, NULL, w, b, &full));
    d.has_bias = 0;
    EXPECT_OK(fconv_plan_conv2d(&d, NULL, NULL, NULL, &nobias));
    if (!bare || !full || !nobias) return;
    CHECK_EQ_INT(fconv_plan_input_elements(bare), 50);
    CHECK_EQ_INT(fconv_plan_weight_elements(bare), 54);
    CHECK_EQ_INT(fconv_plan_output_elements(bare), 75);

    EXPECT_FAIL(fconv_execute(NULL, x, w, b, y), FCONV_EINVAL, "NULL");
    EXPECT_FAIL(fconv_execute(bare, NULL, w, b, y), FCONV_EINVAL, "NULL");
    CHECK_STR_CONTAINS(fconv_last_error(), "input");
    EXPECT_FAIL(fconv_execute(bare, x, w, b, NULL), FCONV_EINVAL, "NULL");
    CHECK_STR_CONTAINS(fconv_last_error(), "output");
    EXPECT_FAIL(fconv_execute(bare, x, NULL, b, y), FCONV_EINVAL, "weights");
    EXPECT_FAIL(fconv_execute(full, x, w, NULL, y), FCONV_EINVAL, "weights");
    EXPECT_FAIL(fconv_execute(bare, x, w, NULL, y), FCONV_EINVAL, "bias");  /* has_bias */
    EXPECT_FAIL(fconv_execute(full, x, NULL, b, y), FCONV_EINVAL, "bias");  /* twice */
    EXPECT_FAIL(fconv_execute(nobias, x, w, b, y), FCONV_EINVAL, "bias");   /* no has_bias */
    EXPECT_FAIL(fconv_execute_with_workspace(NULL, x, w, NULL, y, NULL, 0), FCONV_EINVAL, "NULL");
    EXPECT_FAIL(fconv_execute_with_workspace(nobias, NULL, w, NULL, y, NULL, 0), FCONV_EINVAL,
                "NULL");

    /* Overlaps: y = x, y inside x, y ending inside x, y = w, y = bias; adjacent is fine. */
    EXPECT_FAIL(fconv_execute(nobias, big, w, NULL, big), FCONV_EINVAL, "overlap");
    CHECK_STR_CONTAINS(fconv_last_error(), "input");
    EXPECT_FAIL(fconv_execute(nobias, big, w, NULL, big + 49), FCONV_EINVAL, "overlap");
    EXPECT_FAIL(fconv_execute(nobias, big + 74, w, NULL, big), FCONV_EINVAL, "overlap");
    EXPECT_OK(fconv_execute(nobias, big, w, NULL, big + 50));
    EXPECT_OK(fconv_execute(nobias, big + 75, w, NULL, big));
    EXPECT_FAIL(fconv_execute(nobias, x, big, NULL, big + 53), FCONV_EINVAL, "overlap");
    CHECK_STR_CONTAINS(fconv_last_error(), "weights");
    EXPECT_OK(fconv_execute(nobias, x, big, NULL, big + 54));
    EXPECT_FAIL(fconv_execute(bare, x, w, big + 74, big), FCONV_EINVAL, "overlap");
    CHECK_STR_CONTAINS(fconv_last_error(), "bias");
    EXPECT_OK(fconv_execute(bare, x, w, big + 75, big));
    /* Input and weights may share memory (both are read only). */
    EXPECT_OK(fconv_execute(nobias, big, big, NULL, y));

    /* A failed execute writes nothing to y. */
    for (int i = 0; i < 75; i++) y[i] = 12345.0f;
    EXPECT_FAIL(fconv_execute(full, x, w, b, y), FCONV_EINVAL, "weights");
    int untouched = 1;
    for (int i = 0; i < 75; i++) untouched &= y[i] == 12345.0f;
    CHECK(untouched);

    /* filter2d and conv1d have no bias at all. */
    fconv_filter2d_desc f = valid_filter2d();
    fconv_plan *fp = NULL;
    EXPECT_OK(fconv_plan_filter2d(&f, NULL, NULL, &fp));
    if (fp) {
        float fx[60], fk[9], fy[60];
        test_fill_random(fx, 60);
        test_fill_random(fk, 9);
        EXPECT_FAIL(fconv_execute(fp, fx, fk, b, fy), FCONV_EINVAL, "bias");
        EXPECT_FAIL(fconv_execute(fp, fx, NULL, NULL, fy), FCONV_EINVAL, "weights");
        EXPECT_FAIL(fconv_execute(fp, fx, fk, NULL, fx), FCONV_EINVAL, "overlap");
        EXPECT_OK(fconv_execute(fp, fx, fk, NULL, fy));
        fconv_plan_destroy(fp);
    }
    fconv_plan_destroy(bare);
    fconv_plan_destroy(full);
    fconv_plan_destroy(nobias);
}

/* Plan problem `kind` (0 conv2d, 1 filter2d, 2 conv1d: the valid_* descriptors) with algo;
 * NULL if that algorithm is not built in or does not serve it. */
static fconv_status plan_kind_opt(int kind, const fconv_options *opt, fconv_plan **p) {
    fconv_conv2d_desc c = valid_conv2d();
    fconv_filter2d_desc f = valid_filter2d();
    fconv_conv1d_desc o = valid_conv1d();
    return kind == 0   ? fconv_plan_conv2d(&c, opt, NULL, NULL, p)
           : kind == 1 ? fconv_plan_filter2d(&f, opt, NULL, p)
                       : fconv_plan_conv1d(&o, opt, NULL, p);
}

static fconv_plan *plan_kind(int kind, fconv_algo algo) {
    fconv_options opt = {.algo = algo, .threads = 1};
    fconv_plan *p = NULL;
    fconv_status st = plan_kind_opt(kind, &opt, &p);
    if (st != FCONV_OK) {
        CHECKF(st == FCONV_EUNSUPPORTED, "kind %d algo %s: %s", kind, fconv_algo_name(algo),
               fconv_last_error());
        return NULL;
    }
    return p;
}

/* Same answer within float rounding (algorithms may take other SIMD paths for other
 * addresses, e.g. FFTW's alignment-dependent codelets). */
static int nearly_equal(const float *a, const float *b, int64_t n) {
    float scale = 0, diff = 0;
    for (int64_t i = 0; i < n; i++) {
        scale = fmaxf(scale, fabsf(a[i]));
        diff = fmaxf(diff, fabsf(a[i] - b[i]));
    }
    return diff <= 1e-5f * scale || (diff == 0 && scale == 0);
}

/* Workspace handling, for every algorithm built in and every kind it serves: a bigger
 * workspace than needed works, a float-aligned but not 64-byte-aligned one works, tensors at
 * odd float offsets work; too small is FCONV_EWORKSPACE; NULL with a size is EINVAL. */
static void test_workspace(void) {
    enum { PAD = 8 };
    float x[64], w[64], xo[64 + PAD], wo[64 + PAD], y[128], y2[128 + PAD];
    test_fill_random(x, 64);
    test_fill_random(w, 64);
    int with_workspace = 0;
    for (int kind = 0; kind < 3; kind++) {
        for (int a = 0; a < FCONV_ALGO_COUNT_; a++) {
            fconv_plan *p = plan_kind(kind, (fconv_algo)a);
            if (!p) continue;
            const char *name = fconv_algo_name(fconv_plan_algo(p));
            int64_t ny = fconv_plan_output_elements(p);
            CHECK(fconv_plan_input_elements(p) <= 64 && fconv_plan_weight_elements(p) <= 64 &&
                  ny <= 128);
            size_t ws = fconv_plan_workspace_size(p);
            with_workspace += ws > 0;
            EXPECT_OK(fconv_execute(p, x, w, NULL, y));
            size_t big = ws + 4096;
            unsigned char *buf = malloc(big);
            /* Bigger than needed. */
            memset(y2, 0, sizeof y2);
            EXPECT_OK(fconv_execute_with_workspace(p, x, w, NULL, y2, buf, big));
            CHECKF(nearly_equal(y, y2, ny), "%s kind %d: workspace changed the result", name,
                   kind);
            /* Float-aligned, not 64-byte aligned workspace, and tensors at odd float offsets
             * (x + 1: 4-byte aligned only). */
            memcpy(xo + 1, x, 64 * sizeof *x);
            memcpy(wo + 3, w, 64 * sizeof *w);
            for (int off = 4; off <= 12; off += 4) {
                memset(y2, 0, sizeof y2);
                EXPECT_OK(fconv_execute_with_workspace(p, xo + 1, wo + 3, NULL, y2 + 1,
                                                       buf + off, big - (size_t)off));
                CHECKF(nearly_equal(y, y2 + 1, ny), "%s kind %d: offset %d changed the result",
                       name, kind, off);
            }
            if (ws == 0) {
                /* No workspace needed: NULL with 0, and NULL with a nonzero size, both work. */
                EXPECT_OK(fconv_execute_with_workspace(p, x, w, NULL, y2, NULL, 0));
                CHECK(nearly_equal(y, y2, ny));
                EXPECT_OK(fconv_execute_with_workspace(p, x, w, NULL, y2, NULL, 100));
            } else {
                EXPECT_FAIL(fconv_execute_with_workspace(p, x, w, NULL, y2, buf, ws - 1),
                            FCONV_EWORKSPACE, "workspace");
                EXPECT_FAIL(fconv_execute_with_workspace(p, x, w, NULL, y2, NULL, 0),
                            FCONV_EWORKSPACE, "workspace");
                EXPECT_FAIL(fconv_execute_with_workspace(p, x, w, NULL, y2, NULL, ws),
                            FCONV_EINVAL, "NULL");
                /* Exactly the size asked for. */
                EXPECT_OK(fconv_execute_with_workspace(p, x, w, NULL, y2, buf, ws));
                CHECKF(nearly_equal(y, y2, ny), "%s kind %d: exact workspace", name, kind);
                /* Asked for by name beyond a budget, or with no workspace allowed:
                 * FCONV_EUNSUPPORTED with the reason; a budget of exactly ws is fine. */
                fconv_plan *q;
                fconv_options opt = {.algo = fconv_plan_algo(p), .threads = 1,
                                     .max_workspace_bytes = ws - 1};
                if (ws > 1) {
                    EXPECT_PLAN_FAIL(plan_kind_opt(kind, &opt, &q), q, FCONV_EUNSUPPORTED,
                                     "budget");
                    CHECK_STR_CONTAINS(fconv_last_error(), name);
                }
                opt.max_workspace_bytes = 0;
                opt.flags = FCONV_PLAN_NO_WORKSPACE;
                EXPECT_PLAN_FAIL(plan_kind_opt(kind, &opt, &q), q, FCONV_EUNSUPPORTED,
                                 "workspace");
                opt.flags = 0;
                opt.max_workspace_bytes = ws;
                EXPECT_OK(plan_kind_opt(kind, &opt, &q));
                CHECK_EQ_INT(fconv_plan_workspace_size(q), ws);
                fconv_plan_destroy(q);
                /* AUTO under the same budget picks something within it. */
                opt.algo = FCONV_ALGO_AUTO;
                opt.max_workspace_bytes = ws - 1 ? ws - 1 : 1;
                EXPECT_OK(plan_kind_opt(kind, &opt, &q));
                CHECK(fconv_plan_workspace_size(q) <= opt.max_workspace_bytes);
                fconv_plan_destroy(q);
            }
            free(buf);
            fconv_plan_destroy(p);
        }
    }
    (void)with_workspace; /* 0 when only workspace-free algorithms are built */
}

/* The header: "workspaces are used as given (64-byte alignment is faster, never required)".
 * So any byte address must do. Run last: an algorithm that stores floats through a
 * misaligned workspace pointer aborts under UBSan (and may fault with aligned SIMD stores). */
static void test_workspace_any_alignment(void) {
    float x[64], w[64], y[128], y2[128];
    test_fill_random(x, 64);
    test_fill_random(w, 64);
    for (int kind = 0; kind < 3; kind++) {
        for (int a = 1; a < FCONV_ALGO_COUNT_; a++) {
            fconv_plan *p = plan_kind(kind, (fconv_algo)a);
            if (!p) continue;
            size_t ws = fconv_plan_workspace_size(p);
            if (ws == 0) {
                fconv_plan_destroy(p);
                continue;
            }
            int64_t ny = fconv_plan_output_elements(p);
            EXPECT_OK(fconv_execute(p, x, w, NULL, y));
            unsigned char *buf = malloc(ws + 64);
            for (int off = 1; off < 8; off += 2) {
                memset(y2, 0, sizeof y2);
                EXPECT_OK(fconv_execute_with_workspace(p, x, w, NULL, y2, buf + off, ws));
                CHECKF(nearly_equal(y, y2, ny), "%s kind %d: byte offset %d",
                       fconv_algo_name((fconv_algo)a), kind, off);
            }
            free(buf);
            fconv_plan_destroy(p);
        }
    }
}

/* ---- status strings, names, info ------------------------------------------------------------- */

static void test_strerror(void) {
    const char *seen[FCONV_EINTERNAL + 1];
    for (int s = FCONV_OK; s <= FCONV_EINTERNAL; s++) {
        const char *str = fconv_strerror((fconv_status)s);
        CHECK(str != NULL && str[0] != '\0');
        if (!str) continue;
        CHECKF(strstr(str, "unknown") == NULL, "status %d: \"%s\"", s, str);
        for (int t = 0; t < s; t++) CHECKF(strcmp(seen[t], str) != 0, "%d and %d: %s", t, s, str);
        seen[s] = str;
    }
    const int bad[] = {FCONV_EINTERNAL + 1, -1, 1000, INT32_MIN};
    for (int i = 0; i < 4; i++)
        CHECK_STR_CONTAINS(fconv_strerror((fconv_status)bad[i]), "unknown status");
}

static void test_algo_names(void) {
    const char *seen[FCONV_ALGO_COUNT_];
    for (int a = 0; a < FCONV_ALGO_COUNT_; a++) {
        const char *name = fconv_algo_name((fconv_algo)a);
        CHECK(name != NULL && name[0] != '\0' && strcmp(name, "unknown") != 0);
        seen[a] = name;
        for (int b = 0; b < a; b++) CHECK(strcmp(seen[b], name) != 0);
        fconv_algo back = (fconv_algo)-7;
        make_some_error();
        EXPECT_OK(fconv_algo_from_name(name, &back));
        CHECK_EQ_INT(back, a);
    }
    CHECK(strcmp(fconv_algo_name(FCONV_ALGO_AUTO), "auto") == 0);
    CHECK(strcmp(fconv_algo_name(FCONV_ALGO_REFERENCE), "reference") == 0);
    CHECK(strcmp(fconv_algo_name(FCONV_ALGO_COUNT_), "unknown") == 0);
    CHECK(strcmp(fconv_algo_name((fconv_algo)-1), "unknown") == 0);

    const char *bad_names[] = {"", "Reference", "unknown", "referenc", "reference ", "fft2",
                               "winograd", "AUTO"};
    for (size_t i = 0; i < sizeof bad_names / sizeof bad_names[0]; i++) {
        fconv_algo out = (fconv_algo)42;
        EXPECT_FAIL(fconv_algo_from_name(bad_names[i], &out), FCONV_EINVAL, "unknown algorithm");
        CHECK_EQ_INT(out, 42); /* not written on failure */
    }
    fconv_algo out;
    EXPECT_FAIL(fconv_algo_from_name(NULL, &out), FCONV_EINVAL, "NULL");
    EXPECT_FAIL(fconv_algo_from_name("reference", NULL), FCONV_EINVAL, "NULL");
}

static void test_algo_info(void) {
    fconv_algo_info info;
    fconv_algo_info untouched;
    memset(&info, 0x5a, sizeof info);
    memcpy(&untouched, &info, sizeof info);
    EXPECT_FAIL(fconv_algo_get_info(FCONV_ALGO_AUTO, &info), FCONV_EINVAL, "not an algorithm");
    EXPECT_FAIL(fconv_algo_get_info(FCONV_ALGO_COUNT_, &info), FCONV_EINVAL, "not an algorithm");
    EXPECT_FAIL(fconv_algo_get_info((fconv_algo)-1, &info), FCONV_EINVAL, "not an algorithm");
    CHECK(memcmp(&info, &untouched, sizeof info) == 0);
    EXPECT_FAIL(fconv_algo_get_info(FCONV_ALGO_REFERENCE, NULL), FCONV_EINVAL, "NULL");

    make_some_error();
    EXPECT_OK(fconv_algo_get_info(FCONV_ALGO_REFERENCE, &info));
    CHECK_EQ_INT(info.algo, FCONV_ALGO_REFERENCE);
    CHECK(strcmp(info.name, "reference") == 0);
    CHECK(info.summary && info.summary[0]);
    CHECK_EQ_INT(info.serves, FCONV_SERVES_CONV2D | FCONV_SERVES_FILTER2D | FCONV_SERVES_CONV1D);
    CHECK(info.error_bound > 0 && info.error_bound <= 1e-6);

    for (int a = 1; a < FCONV_ALGO_COUNT_; a++) {
        memset(&info, 0x5a, sizeof info);
        fconv_status st = fconv_algo_get_info((fconv_algo)a, &info);
        if (st == FCONV_OK) {
            CHECK_EQ_INT(info.algo, a);
            CHECK(strcmp(info.name, fconv_algo_name((fconv_algo)a)) == 0);
            CHECK(info.summary && info.summary[0]);
            CHECK(info.serves != 0 && (info.serves & ~7u) == 0);
            CHECK(info.error_bound > 0 && info.error_bound < 1);
        } else {
            CHECK_EQ_INT(st, FCONV_EUNSUPPORTED);
            CHECK_STR_CONTAINS(fconv_last_error(), fconv_algo_name((fconv_algo)a));
            CHECK(memcmp(&info, &untouched, sizeof info) == 0);
        }
    }
}

static void test_version(void) {
    char want[64];
    snprintf(want, sizeof want, "%d.%d.%d", FCONV_VERSION_MAJOR, FCONV_VERSION_MINOR,
             FCONV_VERSION_PATCH);
    CHECKF(strcmp(fconv_version(), want) == 0, "\"%s\" vs \"%s\"", fconv_version(), want);
    CHECK(fconv_build_options() != NULL);
    CHECK(fconv_cpu_features() != NULL);
    CHECK(strstr(fconv_gemm_report(), "packed") != NULL); /* either way, the packed kernel runs some products */
    CHECK(fconv_gemm_report() == fconv_gemm_report());    /* decided once */
    CHECK(fconv_default_threads() >= 1);
}

/* ---- plan queries ------------------------------------------------------------------------------ */

/* The algorithm a plan runs is a real one that serves its kind. */
static void check_plan_algo(const fconv_plan *p, unsigned kind_bit) {
    fconv_algo a = fconv_plan_algo(p);
    CHECK(a != FCONV_ALGO_AUTO);
    fconv_algo_info info;
    CHECK_EQ_INT(fconv_algo_get_info(a, &info), FCONV_OK);
    CHECK(info.serves & kind_bit);
    const char *why = fconv_plan_explain(p);
    CHECK(why != NULL && why[0] != '\0');
    CHECK_STR_CONTAINS(why, info.name);
}

static void test_plan_queries(void) {
    int64_t shape[4];
    fconv_plan *p;
    /* conv2d: n=2 c=3 h=7 w=9 k=6 r=3 s=2 stride (2,1) pads (1,0,2,3) dilation (1,2) groups 3:
     * P = (7+1+2-2-1)/2+1 = 4, Q = (9+0+3-2-1)/1+1 = 10. */
    fconv_conv2d_desc c = {.n = 2, .c = 3, .h = 7, .w = 9, .k = 6, .r = 3, .s = 2,
                           .stride_h = 2, .pad_top = 1, .pad_bottom = 2, .pad_right = 3,
                           .dilation_w = 2, .groups = 3};
    EXPECT_OK(fconv_plan_conv2d(&c, NULL, NULL, NULL, &p));
    for (int i = 0; i < 4; i++) shape[i] = -1;
    CHECK_EQ_INT(fconv_plan_output_shape(p, shape), 4);
    CHECK(shape[0] == 2 && shape[1] == 6 && shape[2] == 4 && shape[3] == 10);
    CHECK_EQ_INT(fconv_plan_input_elements(p), 2 * 3 * 7 * 9);
    CHECK_EQ_INT(fconv_plan_weight_elements(p), 6 * 1 * 3 * 2);
    CHECK_EQ_INT(fconv_plan_output_elements(p), 2 * 6 * 4 * 10);
    check_plan_algo(p, FCONV_SERVES_CONV2D);
    CHECK_EQ_INT(fconv_plan_output_shape(p, NULL), 0);
    fconv_plan_destroy(p);

    /* Stride larger than the input: one output. */
    c = (fconv_conv2d_desc){.c = 1, .h = 3, .w = 3, .k = 1, .r = 1, .s = 1, .stride_h = 100,
                            .stride_w = 100};
    EXPECT_OK(fconv_plan_conv2d(&c, NULL, NULL, NULL, &p));
    CHECK_EQ_INT(fconv_plan_output_elements(p), 1);
    fconv_plan_destroy(p);

    /* filter2d 5x7x3, kernel 4x2, each mode. */
    const int64_t want[3][2] = {{8, 8}, {5, 7}, {2, 6}};
    for (int mode = 0; mode < 3; mode++) {
        fconv_filter2d_desc f = {.h = 5, .w = 7, .channels = 3, .kh = 4, .kw = 2,
                                 .mode = (fconv_mode)mode};
        EXPECT_OK(fconv_plan_filter2d(&f, NULL, NULL, &p));
        for (int i = 0; i < 4; i++) shape[i] = -1;
        CHECK_EQ_INT(fconv_plan_output_shape(p, shape), 3);
        CHECK(shape[0] == want[mode][0] && shape[1] == want[mode][1] && shape[2] == 3);
        CHECK_EQ_INT(shape[3], -1); /* only 3 written */
        CHECK_EQ_INT(fconv_plan_input_elements(p), 5 * 7 * 3);
        CHECK_EQ_INT(fconv_plan_weight_elements(p), 8);
        CHECK_EQ_INT(fconv_plan_output_elements(p), want[mode][0] * want[mode][1] * 3);
        check_plan_algo(p, FCONV_SERVES_FILTER2D);
        fconv_plan_destroy(p);
    }
    /* channels = 0 means 1. */
    fconv_filter2d_desc f = {.h = 4, .w = 4, .kh = 3, .kw = 3};
    EXPECT_OK(fconv_plan_filter2d(&f, NULL, NULL, &p));
    CHECK_EQ_INT(fconv_plan_output_shape(p, shape), 3);
    CHECK_EQ_INT(shape[2], 1);
    fconv_plan_destroy(p);

    /* conv1d n=10 m=3, and m > n (same still gives n). */
    const int64_t want1[2][3] = {{12, 10, 8}, {7, 3, -1}};
    for (int cs = 0; cs < 2; cs++) {
        for (int mode = 0; mode < 3; mode++) {
            fconv_conv1d_desc o = {.n = cs ? 3 : 10, .m = cs ? 5 : 3, .mode = (fconv_mode)mode,
                                   .correlate = cs};
            if (want1[cs][mode] < 0) continue;
            EXPECT_OK(fconv_plan_conv1d(&o, NULL, NULL, &p));
            for (int i = 0; i < 4; i++) shape[i] = -1;
            CHECK_EQ_INT(fconv_plan_output_shape(p, shape), 1);
            CHECK_EQ_INT(shape[0], want1[cs][mode]);
            CHECK_EQ_INT(shape[1], -1);
            CHECK_EQ_INT(fconv_plan_input_elements(p), o.n);
            CHECK_EQ_INT(fconv_plan_weight_elements(p), o.m);
            CHECK_EQ_INT(fconv_plan_output_elements(p), want1[cs][mode]);
            check_plan_algo(p, FCONV_SERVES_CONV1D);
            fconv_plan_destroy(p);
        }
    }

    /* NULL plan. */
    CHECK_EQ_INT(fconv_plan_output_shape(NULL, shape), 0);
    CHECK_EQ_INT(fconv_plan_input_elements(NULL), 0);
    CHECK_EQ_INT(fconv_plan_weight_elements(NULL), 0);
    CHECK_EQ_INT(fconv_plan_output_elements(NULL), 0);
    CHECK_EQ_INT(fconv_plan_workspace_size(NULL), 0);
    CHECK_EQ_INT(fconv_plan_device_bytes(NULL), 0);
    CHECK_EQ_INT(fconv_plan_algo(NULL), FCONV_ALGO_AUTO);
    fconv_plan_destroy(NULL);

    /* Threads: 0 resolves to the default, N stays N. */
    fconv_conv1d_desc o = valid_conv1d();
    fconv_options opt = {.threads = 0};
    EXPECT_OK(fconv_plan_conv1d(&o, &opt, NULL, &p));
    CHECK_EQ_INT(fconv_plan_threads(p), fconv_default_threads());
    CHECK_EQ_INT(fconv_plan_device_bytes(p), 0); /* a CPU plan holds no device memory */
    fconv_plan_destroy(p);
    EXPECT_OK(fconv_plan_conv1d(&o, NULL, NULL, &p));
    CHECK_EQ_INT(fconv_plan_threads(p), fconv_default_threads());
    fconv_plan_destroy(p);
    const int counts[] = {1, 2, 3, 64};
    for (int i = 0; i < 4; i++) {
        opt.threads = counts[i];
        EXPECT_OK(fconv_plan_conv1d(&o, &opt, NULL, &p));
        CHECK_EQ_INT(fconv_plan_threads(p), counts[i]);
        fconv_plan_destroy(p);
    }
}

/* Every successful call clears a previous error. */
static void test_success_clears_error(void) {
    fconv_plan *p = NULL;
    fconv_conv2d_desc c = valid_conv2d();
    fconv_filter2d_desc f = valid_filter2d();
    fconv_conv1d_desc o = valid_conv1d();
    const fconv_options no_ws = {.flags = FCONV_PLAN_NO_WORKSPACE};
    make_some_error();
    EXPECT_OK(fconv_plan_conv2d(&c, &no_ws, NULL, NULL, &p));
    float x[50], w[54], y[75];
    test_fill_random(x, 50);
    test_fill_random(w, 54);
    make_some_error();
    EXPECT_OK(fconv_execute(p, x, w, NULL, y));
    make_some_error();
    EXPECT_OK(fconv_execute_with_workspace(p, x, w, NULL, y, NULL, 0));
    fconv_plan_destroy(p);
    make_some_error();
    EXPECT_OK(fconv_plan_filter2d(&f, NULL, NULL, &p));
    fconv_plan_destroy(p);
    make_some_error();
    EXPECT_OK(fconv_plan_conv1d(&o, NULL, NULL, &p));
    fconv_plan_destroy(p);
    /* The message names the values, not just the status. */
    c.pad_left = -3;
    EXPECT_PLAN_FAIL(fconv_plan_conv2d(&c, NULL, NULL, NULL, &p), p, FCONV_EINVAL, "pad_left");
    CHECK_STR_CONTAINS(fconv_last_error(), "-3");
    CHECK_STR_CONTAINS(fconv_last_error(), "conv2d");
}

/* Weights and bias given at plan time are copied: changing the caller's arrays afterwards
 * changes nothing. */
static void test_plan_copies_weights(void) {
    fconv_conv2d_desc d = valid_conv2d();
    d.has_bias = 1;
    float x[50], w[54], b[3], y1[75], y2[75];
    test_fill_random(x, 50);
    test_fill_random(w, 54);
    test_fill_random(b, 3);
    fconv_plan *p = NULL;
    EXPECT_OK(fconv_plan_conv2d(&d, NULL, w, b, &p));
    if (!p) return;
    EXPECT_OK(fconv_execute(p, x, NULL, NULL, y1));
    for (int i = 0; i < 54; i++) w[i] = 1000.0f;
    for (int i = 0; i < 3; i++) b[i] = -1000.0f;
    EXPECT_OK(fconv_execute(p, x, NULL, NULL, y2));
    CHECK(memcmp(y1, y2, sizeof y1) == 0);
    fconv_plan_destroy(p);

    fconv_filter2d_desc f = valid_filter2d();
    float fx[60], fk[9], fy1[60], fy2[60];
    test_fill_random(fx, 60);
    test_fill_random(fk, 9);
    EXPECT_OK(fconv_plan_filter2d(&f, NULL, fk, &p));
    if (!p) return;
    EXPECT_OK(fconv_execute(p, fx, NULL, NULL, fy1));
    memset(fk, 0, sizeof fk);
    EXPECT_OK(fconv_execute(p, fx, NULL, NULL, fy2));
    CHECK(memcmp(fy1, fy2, sizeof fy1) == 0);
    fconv_plan_destroy(p);

    fconv_conv1d_desc o = valid_conv1d();
    float ox[10], ok[3], oy1[12], oy2[12];
    test_fill_random(ox, 10);
    test_fill_random(ok, 3);
    EXPECT_OK(fconv_plan_conv1d(&o, NULL, ok, &p));
    if (!p) return;
    EXPECT_OK(fconv_execute(p, ox, NULL, NULL, oy1));
    ok[1] = 99.0f;
    EXPECT_OK(fconv_execute(p, ox, NULL, NULL, oy2));
    CHECK(memcmp(oy1, oy2, sizeof oy1) == 0);
    fconv_plan_destroy(p);
}

/* The same for every algorithm built in and every kind it serves (those that pre-transform
 * weights at plan time are where a kept caller pointer would hide), with a bias for conv2d;
 * the answer matches the plan that takes the weights at execute time. */
static void test_every_algo_copies_weights(void) {
    float x[64], w[64], wsave[64], b[3], y1[128], y2[128], y3[128];
    test_fill_random(x, 64);
    test_fill_random(w, 64);
    test_fill_random(b, 3);
    memcpy(wsave, w, sizeof w);
    fconv_conv2d_desc c = valid_conv2d();
    c.has_bias = 1;
    fconv_filter2d_desc f = valid_filter2d();
    fconv_conv1d_desc o = valid_conv1d();
    for (int kind = 0; kind < 3; kind++) {
        for (int a = 1; a < FCONV_ALGO_COUNT_; a++) {
            fconv_options opt = {.algo = (fconv_algo)a, .threads = 1};
            fconv_plan *held = NULL, *bare = NULL;
            fconv_status st = kind == 0   ? fconv_plan_conv2d(&c, &opt, w, b, &held)
                              : kind == 1 ? fconv_plan_filter2d(&f, &opt, w, &held)
                                          : fconv_plan_conv1d(&o, &opt, w, &held);
            if (st != FCONV_OK) {
                CHECKF(st == FCONV_EUNSUPPORTED, "%s: %s", fconv_algo_name((fconv_algo)a),
                       fconv_last_error());
                continue;
            }
            st = kind == 0   ? fconv_plan_conv2d(&c, &opt, NULL, NULL, &bare)
                 : kind == 1 ? fconv_plan_filter2d(&f, &opt, NULL, &bare)
                             : fconv_plan_conv1d(&o, &opt, NULL, &bare);
            /* (Some algorithms need the weights at plan time, e.g. separable.) */
            CHECKF(st == FCONV_OK || st == FCONV_EUNSUPPORTED, "%s kind %d: %s",
                   fconv_algo_name((fconv_algo)a), kind, fconv_last_error());
            int64_t ny = fconv_plan_output_elements(held);
            EXPECT_OK(fconv_execute(held, x, NULL, NULL, y1));
            for (int i = 0; i < 64; i++) w[i] = 1000.0f + (float)i;
            for (int i = 0; i < 3; i++) b[i] = -1000.0f;
            EXPECT_OK(fconv_execute(held, x, NULL, NULL, y2));
            CHECKF(memcmp(y1, y2, (size_t)ny * sizeof *y1) == 0,
                   "%s kind %d: changing the caller's weights changed the plan's result",
                   fconv_algo_name((fconv_algo)a), kind);
            memcpy(w, wsave, sizeof w);
            for (int i = 0; i < 3; i++) b[i] = (float)i - 1.0f;
            if (bare) {
                /* A fresh plan holding w and b vs the bare plan given them at execute time. */
                float bias_now[3];
                memcpy(bias_now, b, sizeof b);
                fconv_plan *held2 = NULL;
                st = kind == 0   ? fconv_plan_conv2d(&c, &opt, w, bias_now, &held2)
                     : kind == 1 ? fconv_plan_filter2d(&f, &opt, w, &held2)
                                 : fconv_plan_conv1d(&o, &opt, w, &held2);
                CHECK_EQ_INT(st, FCONV_OK);
                if (held2) {
                    EXPECT_OK(fconv_execute(held2, x, NULL, NULL, y1));
                    EXPECT_OK(fconv_execute(bare, x, w, kind == 0 ? bias_now : NULL, y3));
                    CHECKF(nearly_equal(y1, y3, ny),
                           "%s kind %d: weights at plan time and at execute time disagree",
                           fconv_algo_name((fconv_algo)a), kind);
                    fconv_plan_destroy(held2);
                }
            }
            fconv_plan_destroy(held);
            fconv_plan_destroy(bare);
        }
    }
}

/* ---- thread-local errors ----------------------------------------------------------------------- */

struct thread_result {
    int empty_at_start;
    int status;
    char message[256];
    int still_there;
};

static void *error_thread(void *arg) {
    struct thread_result *r = arg;
    r->empty_at_start = fconv_last_error()[0] == '\0';
    fconv_conv1d_desc d = {.n = 3, .m = 5, .mode = FCONV_MODE_VALID};
    fconv_plan *p;
    r->status = (int)fconv_plan_conv1d(&d, NULL, NULL, &p);
    snprintf(r->message, sizeof r->message, "%s", fconv_last_error());
    return NULL;
}

static void *success_thread(void *arg) {
    struct thread_result *r = arg;
    r->empty_at_start = fconv_last_error()[0] == '\0';
    fconv_conv1d_desc d = valid_conv1d();
    fconv_plan *p;
    r->status = (int)fconv_plan_conv1d(&d, NULL, NULL, &p);
    if (r->status == FCONV_OK) fconv_plan_destroy(p);
    snprintf(r->message, sizeof r->message, "%s", fconv_last_error());
    return NULL;
}

static void test_thread_local_error(void) {
    /* Main thread clean; an error in another thread does not show here. */
    fconv_conv1d_desc ok = valid_conv1d();
    fconv_plan *p;
    EXPECT_OK(fconv_plan_conv1d(&ok, NULL, NULL, &p));
    fconv_plan_destroy(p);
    struct thread_result r = {0};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, error_thread, &r) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(r.empty_at_start);
    CHECK_EQ_INT(r.status, FCONV_EINVAL);
    CHECK_STR_CONTAINS(r.message, "valid");
    CHECKF(fconv_last_error()[0] == '\0', "main thread sees \"%s\"", fconv_last_error());

    /* Main thread has an error; another thread starts clean and its success does not clear
     * ours. */
    fconv_conv2d_desc bad = valid_conv2d();
    bad.groups = 4;
    EXPECT_PLAN_FAIL(fconv_plan_conv2d(&bad, NULL, NULL, NULL, &p), p, FCONV_EINVAL, "groups");
    char before[512];
    snprintf(before, sizeof before, "%s", fconv_last_error());
    struct thread_result s = {0};
    CHECK(pthread_create(&t, NULL, success_thread, &s) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(s.empty_at_start);
    CHECK_EQ_INT(s.status, FCONV_OK);
    CHECK(s.message[0] == '\0');
    CHECK(strcmp(fconv_last_error(), before) == 0);

    /* Several threads failing differently at once each see their own message. */
    enum { T = 4 };
    pthread_t ts[T];
    struct thread_result rs[T];
    memset(rs, 0, sizeof rs);
    for (int i = 0; i < T; i++)
        CHECK(pthread_create(&ts[i], NULL, i % 2 ? error_thread : success_thread, &rs[i]) == 0);
    for (int i = 0; i < T; i++) CHECK(pthread_join(ts[i], NULL) == 0);
    for (int i = 0; i < T; i++) {
        if (i % 2) CHECK_STR_CONTAINS(rs[i].message, "valid");
        else CHECK(rs[i].message[0] == '\0');
    }
}

/* One plan executed concurrently from several threads on distinct outputs. */
struct exec_job {
    const fconv_plan *plan;
    const float *x, *w;
    float *y;
    int status;
};

static void *exec_thread(void *arg) {
    struct exec_job *j = arg;
    for (int rep = 0; rep < 5; rep++) j->status |= (int)fconv_execute(j->plan, j->x, j->w, NULL, j->y);
    return NULL;
}

static void test_concurrent_execute(void) {
    fconv_conv2d_desc d = valid_conv2d();
    fconv_options opt = {.threads = 1};
    float x[50], w[54], want[75], ys[4][75];
    test_fill_random(x, 50);
    test_fill_random(w, 54);
    fconv_plan *p = NULL;
    EXPECT_OK(fconv_plan_conv2d(&d, &opt, w, NULL, &p));
    if (!p) return;
    EXPECT_OK(fconv_execute(p, x, NULL, NULL, want));
    pthread_t t[4];
    struct exec_job jobs[4];
    for (int i = 0; i < 4; i++) {
        jobs[i] = (struct exec_job){p, x, NULL, ys[i], 0};
        CHECK(pthread_create(&t[i], NULL, exec_thread, &jobs[i]) == 0);
    }
    for (int i = 0; i < 4; i++) {
        CHECK(pthread_join(t[i], NULL) == 0);
        CHECK_EQ_INT(jobs[i].status, FCONV_OK);
        CHECK(memcmp(ys[i], want, sizeof want) == 0);
    }
    fconv_plan_destroy(p);
}

int main(void) {
    test_init();
    TEST(test_plan_null_arguments);
    TEST(test_conv2d_fields_out_of_range);
    TEST(test_conv2d_groups_activation_extent);
    TEST(test_conv2d_element_limits);
    TEST(test_filter2d_descriptor);
    TEST(test_conv1d_descriptor);
    TEST(test_options);
    TEST(test_named_algorithms);
    TEST(test_execute_errors);
    TEST(test_workspace);
    TEST(test_strerror);
    TEST(test_algo_names);
    TEST(test_algo_info);
    TEST(test_version);
    TEST(test_plan_queries);
    TEST(test_success_clears_error);
    TEST(test_plan_copies_weights);
    TEST(test_every_algo_copies_weights);
    TEST(test_thread_local_error);
    TEST(test_concurrent_execute);
    TEST(test_workspace_any_alignment); /* last: see its comment */
    return test_finish();
}
