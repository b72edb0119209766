/*
 * test_umi_sad.c — the ABSDIFF strategy against a plain loop (every border rule, strides of
 * any sign), and the box-sum SAD path of `fastconv stereo` / `match` (cli/umi-sad.c)
 * against the direct UMI SAD: bit-identical cost volumes and identical arg-mins on random
 * integer inputs (few distinct values, so ties are everywhere), borders included, every
 * block size 1..15 (odd for stereo), several thread counts; and the exactness rule.
 */
#include "fastconv.h"
#include "test.h"
#include "umi-sad.h"

/* Plain-loop read of a 2-D tensor at (y, x) under a border rule; *ok = 0 when skipped. */
static float ref_read(const float *t, int64_t h, int64_t w, int64_t y, int64_t x, fconv_umi_border b, int *ok) {
    int64_t c[2] = {y, x}, n[2] = {h, w};
    *ok = 1;
    for (int i = 0; i < 2; i++) {
        if (c[i] >= 0 && c[i] < n[i]) continue;
        switch (b) {
        case FCONV_UMI_BORDER_REPLICATE: c[i] = c[i] < 0 ? 0 : n[i] - 1; break;
        case FCONV_UMI_BORDER_MIRROR:
            if (n[i] == 1) {
                c[i] = 0;
            } else {
                int64_t per = 2 * (n[i] - 1), m = ((c[i] % per) + per) % per;
                c[i] = m < n[i] ? m : per - m;
            }
            break;
        case FCONV_UMI_BORDER_SKIP: *ok = 0; return 0.0f;
        default: return 0.0f; /* ZERO */
        }
    }
    return t[c[0] * w + c[1]];
}

static void absdiff_matches_loop(void) {
    const fconv_umi_border borders[] = {FCONV_UMI_BORDER_ZERO, FCONV_UMI_BORDER_REPLICATE,
                                        FCONV_UMI_BORDER_MIRROR, FCONV_UMI_BORDER_SKIP};
    for (int trial = 0; trial < 200; trial++) {
        int64_t h = test_rand_int(1, 9), w = test_rand_int(1, 40);
        int64_t e0 = test_rand_int(1, 3), e1 = test_rand_int(1, 8), e2 = test_rand_int(1, 1500);
        fconv_umi_border ba = borders[test_rand_int(0, 3)], bb = borders[test_rand_int(0, 3)];
        fconv_umi_desc d = {
            .n_par = 3, .par_extent = {e0, e1, e2},
            .a = {.ndim = 2, .shape = {h, w},
                  .par = {{1, test_rand_int(-2, 2), test_rand_int(-3, 3)}, {0, 1, test_rand_int(-2, 2)},
                          {1, test_rand_int(-2, 2), test_rand_int(-5, 5)}},
                  .border = ba},
            .b = {.ndim = 2, .shape = {h, w},
                  .par = {{0, 0, 0}, {0, test_rand_int(0, 1), test_rand_int(-1, 1)}, {1, 1, test_rand_int(-4, 4)}},
                  .border = bb},
            .has_b = 1, .strategy = FCONV_UMI_ABSDIFF};
        size_t n = (size_t)(h * w), ny = (size_t)(e0 * e1 * e2);
        float *a = malloc(n * 4), *b = malloc(n * 4), *y = malloc(ny * 4);
        test_fill_random(a, n);
        test_fill_random(b, n);
        fconv_options o = {.threads = (int)test_rand_int(1, 3)};
        fconv_umi_plan *plan = NULL;
        CHECK(fconv_umi_plan_create(&d, &o, &plan) == FCONV_OK);
        CHECK(fconv_umi_plan_output_elements(plan) == (int64_t)ny);
        CHECK(fconv_umi_execute(plan, a, b, NULL, y) == FCONV_OK);
        int bad = 0;
        for (int64_t i = 0; i < e0 && !bad; i++)
            for (int64_t j = 0; j < e1 && !bad; j++)
                for (int64_t k = 0; k < e2 && !bad; k++) {
                    const fconv_umi_component *pa = d.a.par, *pb = d.b.par;
                    int64_t ay = j * pa[1].stride + pa[1].offset;
                    int64_t ax = i * pa[0].stride + pa[0].offset + k * pa[2].stride + pa[2].offset;
                    int64_t by = j * pb[1].stride + pb[1].offset, bx = k * pb[2].stride + pb[2].offset;
                    int oka, okb;
                    float va = ref_read(a, h, w, ay, ax, ba, &oka), vb = ref_read(b, h, w, by, bx, bb, &okb);
                    float want = oka && okb ? fabsf(va - vb) : 0.0f;
                    float got = y[(i * e1 + j) * e2 + k];
                    if (got != want) {
                        bad = 1;
                        CHECKF(got == want, "trial %d at (%lld, %lld, %lld): %g, want %g", trial, (long long)i,
                               (long long)j, (long long)k, (double)got, (double)want);
                    }
                }
        fconv_umi_plan_destroy(plan);
        free(a);
        free(b);
        free(y);
    }
}

static void absdiff_validation(void) {
    fconv_umi_desc d = {
        .n_par = 1, .par_extent = {4},
        .a = {.ndim = 1, .shape = {4}, .par = {{0, 1, 0}}},
        .b = {.ndim = 1, .shape = {4}, .par = {{0, 1, 0}}},
        .has_b = 1, .strategy = FCONV_UMI_ABSDIFF};
    fconv_umi_plan *plan = NULL;
    CHECK(fconv_umi_plan_create(&d, NULL, &plan) == FCONV_OK);
    fconv_umi_plan_destroy(plan);
    plan = NULL;
    d.n_acc = 1;
    d.acc_extent[0] = 2;
    CHECK(fconv_umi_plan_create(&d, NULL, &plan) == FCONV_EINVAL);
    CHECK_STR_CONTAINS(fconv_last_error(), "n_acc must be 0");
    d.n_acc = 0;
    d.has_b = 0;
    CHECK(fconv_umi_plan_create(&d, NULL, &plan) == FCONV_EINVAL);
    CHECK_STR_CONTAINS(fconv_last_error(), "absdiff needs view b");
    d.has_b = 1;
    d.has_init = 1;
    d.init = d.a;
    CHECK(fconv_umi_plan_create(&d, NULL, &plan) == FCONV_EINVAL);
    CHECK(plan == NULL);
    d.has_init = 0;
    d.a.par[0].offset = 1; /* reads index 4 of 4, no border rule */
    CHECK(fconv_umi_plan_create(&d, NULL, &plan) == FCONV_EINVAL);
    CHECK(plan == NULL);
}

/* Integer values in [0, levels), so many costs tie. */
static void fill_levels(float *p, size_t n, int64_t levels) {
    for (size_t i = 0; i < n; i++) p[i] = (float)test_rand_int(0, levels - 1);
}

static void stereo_box_equals_direct(void) {
    for (int trial = 0; trial < 120; trial++) {
        int64_t block = 2 * test_rand_int(0, 7) + 1; /* 1..15, odd */
        int64_t h = test_rand_int(1, 40), w = test_rand_int(2, 48);
        int64_t maxd = test_rand_int(1, w - 1 < 20 ? w - 1 : 20), nd = maxd + 1;
        int64_t levels = trial % 3 == 0 ? 256 : test_rand_int(1, 4);
        int threads = (int)test_rand_int(1, 4);
        size_t n = (size_t)(h * w), nc = n * (size_t)nd;
        float *l = malloc(n * 4), *r = malloc(n * 4), *d0 = malloc(n * 4), *d1 = malloc(n * 4),
              *c0 = malloc(nc * 4), *c1 = malloc(nc * 4);
        fill_levels(l, n, levels);
        fill_levels(r, n, levels);
        CHECK(cli_sad_box_exact(l, r, (int64_t)n, block * block));
        CHECK(cli_stereo_disparity(l, r, h, w, block, maxd, threads, 0, d0, c0) == FCONV_OK);
        CHECK(cli_stereo_disparity(l, r, h, w, block, maxd, threads, 1, d1, c1) == FCONV_OK);
        CHECKF(memcmp(c0, c1, nc * 4) == 0, "trial %d: %lldx%lld block %lld maxd %lld: cost volumes differ",
               trial, (long long)h, (long long)w, (long long)block, (long long)maxd);
        CHECKF(memcmp(d0, d1, n * 4) == 0, "trial %d: disparities differ", trial);
        /* and without the cost volume (the CLI's call) */
        CHECK(cli_stereo_disparity(l, r, h, w, block, maxd, threads, 1, d1, NULL) == FCONV_OK);
        CHECK(memcmp(d0, d1, n * 4) == 0);
        free(l), free(r), free(d0), free(d1), free(c0), free(c1);
    }
}

static void match_box_equals_direct(void) {
    for (int trial = 0; trial < 120; trial++) {
        int64_t block = test_rand_int(1, 15), search = test_rand_int(0, 6);
        int64_t h = test_rand_int(block, 3 * block + 5), w = test_rand_int(block, 3 * block + 9);
        int64_t nby = h / block, nbx = w / block, side = 2 * search + 1;
        int64_t levels = trial % 3 == 0 ? 256 : test_rand_int(1, 4);
        int threads = (int)test_rand_int(1, 4);
        size_t n = (size_t)(h * w), nv = (size_t)(nby * nbx * 2), nc = (size_t)(nby * nbx * side * side);
        float *f0 = malloc(n * 4), *f1 = malloc(n * 4), *v0 = malloc(nv * 4), *v1 = malloc(nv * 4),
              *c0 = malloc(nc * 4), *c1 = malloc(nc * 4);
        fill_levels(f0, n, levels);
        fill_levels(f1, n, levels);
        CHECK(cli_sad_box_exact(f0, f1, (int64_t)n, block * block));
        CHECK(cli_match_vectors(f0, f1, h, w, block, search, threads, 0, v0, c0) == FCONV_OK);
        CHECK(cli_match_vectors(f0, f1, h, w, block, search, threads, 1, v1, c1) == FCONV_OK);
        CHECKF(memcmp(c0, c1, nc * 4) == 0, "trial %d: %lldx%lld block %lld search %lld: cost volumes differ",
               trial, (long long)h, (long long)w, (long long)block, (long long)search);
        CHECKF(memcmp(v0, v1, nv * 4) == 0, "trial %d: vectors differ", trial);
        CHECK(cli_match_vectors(f0, f1, h, w, block, search, threads, 1, v1, NULL) == FCONV_OK);
        CHECK(memcmp(v0, v1, nv * 4) == 0);
        free(f0), free(f1), free(v0), free(v1), free(c0), free(c1);
    }
}

/* The largest windows of 8-bit data are still exact: 255 x 255 stereo blocks on values 0
 * and 255 (every window sum near 2^24), box against direct. */
static void stereo_box_exact_at_the_limit(void) {
    int64_t h = 6, w = 9, block = 255, maxd = 8, nd = maxd + 1;
    float l[54], r[54], d0[54], d1[54], c0[54 * 9], c1[54 * 9];
    for (int i = 0; i < 54; i++) l[i] = test_rand_int(0, 1) ? 255.0f : 0.0f, r[i] = test_rand_int(0, 1) ? 255.0f : 0.0f;
    CHECK(cli_sad_box_exact(l, r, h * w, block * block));
    CHECK(cli_stereo_disparity(l, r, h, w, block, maxd, 2, 0, d0, c0) == FCONV_OK);
    CHECK(cli_stereo_disparity(l, r, h, w, block, maxd, 2, 1, d1, c1) == FCONV_OK);
    CHECK(memcmp(c0, c1, sizeof c0) == 0);
    CHECK(memcmp(d0, d1, sizeof d0) == 0);
    (void)nd;
}

static void exactness_rule(void) {
    float a[4] = {0, 255, 17, 3}, b[4] = {255, 0, 1, 2};
    CHECK(cli_sad_box_exact(a, b, 4, 256 * 256));      /* 65536 * 255 < 2^24 */
    CHECK(!cli_sad_box_exact(a, b, 4, 257 * 257));     /* 66049 * 255 > 2^24 */
    b[2] = 1.5f;
    CHECK(!cli_sad_box_exact(a, b, 4, 9));             /* a fraction */
    b[2] = NAN;
    CHECK(!cli_sad_box_exact(a, b, 4, 9));
    b[2] = INFINITY;
    CHECK(!cli_sad_box_exact(a, b, 4, 9));
    b[2] = 33554432.0f;                                /* 2^25: integer, too big */
    CHECK(!cli_sad_box_exact(a, b, 4, 1));
    b[2] = -1000.0f;                                   /* range 1255: 81 * 1255 fits */
    CHECK(cli_sad_box_exact(a, b, 4, 81));
    CHECK(!cli_sad_box_exact(a, b, 4, 255 * 255));
}

int main(void) {
    test_init();
    TEST(absdiff_matches_loop);
    TEST(absdiff_validation);
    TEST(stereo_box_equals_direct);
    TEST(match_box_equals_direct);
    TEST(stereo_box_exact_at_the_limit);
    TEST(exactness_rule);
    return test_finish();
}
