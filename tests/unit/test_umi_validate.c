/*
 * test_umi_validate.c — every error path of fconv_umi_plan_create / fconv_umi_execute:
 * the status, a precise fconv_last_error() message, and no plan written.
 */
#include "fastconv.h"
#include "test.h"

/* A valid 1D correlation: y[i] = sum_t x[i + t] k[t], n = 10, m = 3, 'valid'. */
static fconv_umi_desc base(void) {
    fconv_umi_desc d = {.n_par = 1, .par_extent = {8}, .n_acc = 1, .acc_extent = {3},
                        .a = {.ndim = 1, .shape = {10}, .par = {{0, 1, 0}}, .acc = {{0, 1, 0}}},
                        .b = {.ndim = 1, .shape = {3}, .acc = {{0, 1, 0}}},
                        .has_b = 1, .strategy = FCONV_UMI_DOT};
    return d;
}

#define EXPECT_FAIL(desc, opts, status, text)                                                  \
    do {                                                                                       \
        fconv_umi_plan *p_ = (fconv_umi_plan *)&test_failures; /* a sentinel: must stay */     \
        fconv_status st_ = fconv_umi_plan_create((desc), (opts), &p_);                         \
        CHECKF(st_ == (status), "status %d, want %d (%s)", (int)st_, (int)(status), fconv_last_error()); \
        CHECK(p_ == (fconv_umi_plan *)&test_failures);                                         \
        CHECK_STR_CONTAINS(fconv_last_error(), text);                                          \
    } while (0)

static void valid_base_plans(void) {
    fconv_umi_desc d = base();
    fconv_umi_plan *p = NULL;
    CHECK(fconv_umi_plan_create(&d, NULL, &p) == FCONV_OK);
    CHECK_EQ_INT(fconv_umi_plan_output_elements(p), 8);
    CHECK(fconv_last_error()[0] == '\0');
    float x[10], k[3] = {1, 2, 3}, y[8];
    for (int i = 0; i < 10; i++) x[i] = (float)i;
    CHECK(fconv_umi_execute(p, x, k, NULL, y) == FCONV_OK);
    for (int i = 0; i < 8; i++) CHECK(y[i] == (float)(i * 1 + (i + 1) * 2 + (i + 2) * 3));
    /* execute errors */
    CHECK(fconv_umi_execute(NULL, x, k, NULL, y) == FCONV_EINVAL);
    CHECK(fconv_umi_execute(p, NULL, k, NULL, y) == FCONV_EINVAL);
    CHECK(fconv_umi_execute(p, x, k, NULL, NULL) == FCONV_EINVAL);
    CHECK(fconv_umi_execute(p, x, NULL, NULL, y) == FCONV_EINVAL);
    CHECK_STR_CONTAINS(fconv_last_error(), "view b but b is NULL");
    fconv_umi_plan_destroy(p);
    fconv_umi_plan_destroy(NULL);
    CHECK_EQ_INT(fconv_umi_plan_output_elements(NULL), 0);
}

static void descriptor_errors(void) {
    fconv_umi_desc d;
    EXPECT_FAIL(NULL, NULL, FCONV_EINVAL, "must not be NULL");
    d = base(); CHECK(fconv_umi_plan_create(&d, NULL, NULL) == FCONV_EINVAL);
    d = base(); d.n_par = 0; EXPECT_FAIL(&d, NULL, FCONV_EINVAL, "n_par 0");
    d = base(); d.n_par = 5; EXPECT_FAIL(&d, NULL, FCONV_EINVAL, "n_par 5");
    d = base(); d.n_acc = -1; EXPECT_FAIL(&d, NULL, FCONV_EINVAL, "n_acc -1");
    d = base(); d.par_extent[0] = 0; EXPECT_FAIL(&d, NULL, FCONV_EINVAL, "parallel extent 0 is 0");
    d = base(); d.acc_extent[0] = -3; EXPECT_FAIL(&d, NULL, FCONV_EINVAL, "accumulation extent 0 is -3");
    d = base(); d.par_extent[0] = FCONV_MAX_DIM + 1; EXPECT_FAIL(&d, NULL, FCONV_EOVERFLOW, "exceeds");
    d = base(); d.n_par = 2; d.par_extent[0] = d.par_extent[1] = FCONV_MAX_DIM;
    EXPECT_FAIL(&d, NULL, FCONV_EOVERFLOW, "multiply to more than");
    d = base(); d.strategy = (fconv_umi_strategy)42; EXPECT_FAIL(&d, NULL, FCONV_EINVAL, "unknown strategy 42");
    d = base(); d.has_b = 0; EXPECT_FAIL(&d, NULL, FCONV_EINVAL, "strategy dot needs view b");
    d = base(); d.strategy = FCONV_UMI_BILATERAL; EXPECT_FAIL(&d, NULL, FCONV_EINVAL, "bilateral needs an init view");
    d = base(); d.strategy = FCONV_UMI_SAD; d.has_init = 1; d.init = d.a;
    EXPECT_FAIL(&d, NULL, FCONV_EINVAL, "sad takes no init view");
    d = base(); d.strategy = FCONV_UMI_CALLBACK; EXPECT_FAIL(&d, NULL, FCONV_EINVAL, "needs callbacks");
    fconv_umi_callbacks cb = {0};
    d = base(); d.strategy = FCONV_UMI_CALLBACK; d.callbacks = &cb;
    EXPECT_FAIL(&d, NULL, FCONV_EINVAL, "step and post are required");
    d = base(); d.callbacks = &cb; EXPECT_FAIL(&d, NULL, FCONV_EINVAL, "not callback");
    d = base(); d.strategy = FCONV_UMI_BILATERAL; d.has_init = 1; d.init = d.a; d.param[0] = -1;
    EXPECT_FAIL(&d, NULL, FCONV_EINVAL, "must be finite and >= 0");
    d = base(); d.strategy = FCONV_UMI_DOT_LEAKY_RELU; d.param[0] = INFINITY;
    EXPECT_FAIL(&d, NULL, FCONV_EINVAL, "slope");
}

static void view_errors(void) {
    fconv_umi_desc d;
    d = base(); d.a.ndim = 0; EXPECT_FAIL(&d, NULL, FCONV_EINVAL, "view a: ndim 0");
    d = base(); d.b.ndim = 5; EXPECT_FAIL(&d, NULL, FCONV_EINVAL, "view b: ndim 5");
    d = base(); d.a.shape[0] = 0; EXPECT_FAIL(&d, NULL, FCONV_EINVAL, "view a: shape[0] = 0");
    d = base(); d.a.shape[0] = FCONV_MAX_DIM + 1; EXPECT_FAIL(&d, NULL, FCONV_EOVERFLOW, "view a: shape[0]");
    d = base(); d.a.ndim = 2; d.a.shape[0] = d.a.shape[1] = FCONV_MAX_DIM;
    EXPECT_FAIL(&d, NULL, FCONV_EOVERFLOW, "more than");
    d = base(); d.a.border = (fconv_umi_border)9; EXPECT_FAIL(&d, NULL, FCONV_EINVAL, "unknown border rule 9");
    d = base(); d.a.par[0].axis = 1; EXPECT_FAIL(&d, NULL, FCONV_EINVAL, "parallel component 0 walks axis 1");
    d = base(); d.b.acc[0].axis = -1; EXPECT_FAIL(&d, NULL, FCONV_EINVAL, "view b accumulation component 0 walks axis -1");
    d = base(); d.a.par[0].stride = FCONV_MAX_DIM + 1; EXPECT_FAIL(&d, NULL, FCONV_EOVERFLOW, "|stride|");
    d = base(); d.a.acc[0].offset = -FCONV_MAX_DIM - 1; EXPECT_FAIL(&d, NULL, FCONV_EOVERFLOW, "|offset|");
    /* Out of bounds without a border rule: one past the end, one before the start, via a
     * negative stride, and through the init view. */
    d = base(); d.par_extent[0] = 9; EXPECT_FAIL(&d, NULL, FCONV_EINVAL, "view a axis 0 reads indices 0..10 outside [0, 10)");
    d = base(); d.a.par[0].offset = -1; EXPECT_FAIL(&d, NULL, FCONV_EINVAL, "reads indices -1..8");
    d = base(); d.b.acc[0].stride = -1; EXPECT_FAIL(&d, NULL, FCONV_EINVAL, "view b axis 0 reads indices -2..0");
    d = base(); d.has_init = 1; d.init = d.a; d.init.shape[0] = 7;
    EXPECT_FAIL(&d, NULL, FCONV_EINVAL, "view init axis 0 reads indices 0..7 outside [0, 7)");
    /* The same with a border rule is accepted. */
    d = base(); d.par_extent[0] = 12; d.a.border = FCONV_UMI_BORDER_ZERO;
    fconv_umi_plan *p = NULL;
    CHECK(fconv_umi_plan_create(&d, NULL, &p) == FCONV_OK);
    fconv_umi_plan_destroy(p);
    /* Several components on one axis add up: 0..7 + 0..2*4 = 0..15 > 9. */
    d = base(); d.n_acc = 2; d.acc_extent[1] = 3; d.a.acc[1] = (fconv_umi_component){0, 4, 0};
    d.b.acc[1] = (fconv_umi_component){0, 0, 0};
    EXPECT_FAIL(&d, NULL, FCONV_EINVAL, "reads indices 0..17");
}

static void option_errors(void) {
    fconv_umi_desc d = base();
    fconv_options o = {.threads = -1};
    EXPECT_FAIL(&d, &o, FCONV_EINVAL, "threads must be >= 0");
    o = (fconv_options){.algo = FCONV_ALGO_DIRECT};
    EXPECT_FAIL(&d, &o, FCONV_EINVAL, "algo must be auto");
    /* GPU devices run the UMI (test_umi_gpu.c); an unknown device is absent. */
    o = (fconv_options){.device = (fconv_device)7};
    EXPECT_FAIL(&d, &o, FCONV_ENODEVICE, "unknown device 7");
}

int main(void) {
    test_init();
    TEST(valid_base_plans);
    TEST(descriptor_errors);
    TEST(view_errors);
    TEST(option_errors);
    return test_finish();
}
