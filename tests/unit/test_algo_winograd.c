/*
 * test_algo_winograd.c — the Winograd matrices on their own (float64: 1D F(m,r) and 2D
 * F(m x m, r x r) reproduce the direct 'valid' correlation, for F(m,3), m = 2, 4, 6, and
 * F(3,4)), the float32 tile transforms against the float64 matrices, and the whole algorithm
 * on shapes the generic test rarely draws: many tile blocks, partial edge tiles, asymmetric
 * padding, groups, 1-3 threads, stride-2 kernels of every size winograd-stride2 takes.
 */
#include "algo/winograd.h"
#include "core/dispatch.h"
#include "core/internal.h"
#include "fastconv.h"
#include "ref/conv-ref.h"
#include "test-cpu.h"
#include "test.h"

static const int sizes[] = {2, 4, 6, 3}; /* F(m,3), then F(3,4) */
#define NSIZES 4

static double rand_double(void) { return (double)test_rand_float(); }

/* y = A^T [(G g) ⊙ (B^T d)] against y[i] = sum_k d[i + k] g[k]. */
static void test_matrices_1d(void) {
    for (int v = 0; v < NSIZES; v++) {
        const struct fconv_wino_matrices *w = fconv_wino_matrices_for(sizes[v]);
        CHECK(w != NULL && w->m == sizes[v] && w->alpha == w->m + w->r - 1 && w->r == (v < 3 ? 3 : 4));
        if (!w) continue;
        int m = w->m, a = w->alpha, r = w->r;
        for (int trial = 0; trial < 20; trial++) {
            double d[8], g[4], prod[8];
            for (int i = 0; i < a; i++) d[i] = rand_double();
            for (int i = 0; i < r; i++) g[i] = rand_double();
            for (int x = 0; x < a; x++) {
                double gd = 0.0, bd = 0.0;
                for (int k = 0; k < r; k++) gd += w->g[x * r + k] * g[k];
                for (int k = 0; k < a; k++) bd += w->bt[x * a + k] * d[k];
                prod[x] = gd * bd;
            }
            for (int i = 0; i < m; i++) {
                double y = 0.0, ref = 0.0;
                for (int x = 0; x < a; x++) y += w->at[i * a + x] * prod[x];
                for (int k = 0; k < r; k++) ref += d[i + k] * g[k];
                CHECKF(fabs(y - ref) <= 1e-12, "F(%d,%d) output %d: %.17g vs %.17g", m, r, i, y, ref);
            }
        }
    }
}

/* Y = A^T [(G g G^T) ⊙ (B^T d B)] A against the direct 2D valid correlation. */
static void test_matrices_2d(void) {
    for (int v = 0; v < NSIZES; v++) {
        const struct fconv_wino_matrices *w = fconv_wino_matrices_for(sizes[v]);
        int m = w->m, a = w->alpha, r = w->r;
        for (int trial = 0; trial < 20; trial++) {
            double d[8][8], g[4][4], gg[8][4], u[8][8], bd[8][8], vv[8][8], am[6][8];
            for (int i = 0; i < a; i++)
                for (int j = 0; j < a; j++) d[i][j] = rand_double();
            for (int i = 0; i < r; i++)
                for (int j = 0; j < r; j++) g[i][j] = rand_double();
            for (int i = 0; i < a; i++)
                for (int j = 0; j < r; j++) {
                    gg[i][j] = 0.0;
                    for (int k = 0; k < r; k++) gg[i][j] += w->g[i * r + k] * g[k][j];
                }
            for (int i = 0; i < a; i++)
                for (int j = 0; j < a; j++) {
                    u[i][j] = 0.0;
                    for (int k = 0; k < r; k++) u[i][j] += gg[i][k] * w->g[j * r + k];
                }
            for (int i = 0; i < a; i++)
                for (int j = 0; j < a; j++) {
                    bd[i][j] = 0.0;
                    for (int k = 0; k < a; k++) bd[i][j] += w->bt[i * a + k] * d[k][j];
                }
            for (int i = 0; i < a; i++)
                for (int j = 0; j < a; j++) {
                    double s = 0.0;
                    for (int k = 0; k < a; k++) s += bd[i][k] * w->bt[j * a + k];
                    vv[i][j] = s * u[i][j];
                }
            for (int i = 0; i < m; i++)
                for (int j = 0; j < a; j++) {
                    am[i][j] = 0.0;
                    for (int k = 0; k < a; k++) am[i][j] += w->at[i * a + k] * vv[k][j];
                }
            for (int i = 0; i < m; i++)
                for (int j = 0; j < m; j++) {
                    double y = 0.0, ref = 0.0;
                    for (int k = 0; k < a; k++) y += am[i][k] * w->at[j * a + k];
                    for (int p = 0; p < r; p++)
                        for (int q = 0; q < r; q++) ref += d[i + p][j + q] * g[p][q];
                    CHECKF(fabs(y - ref) <= 1e-12, "F(%dx%d,%dx%d) output (%d,%d): %.17g vs %.17g",
                           m, m, r, r, i, j, y, ref);
                }
        }
    }
}

/* The float32 input/output transforms of every ISA this machine runs and the filter
 * transform against float64 sums of the same matrices, on a block of tiles (one strip more
 * than a strip). */
static void check_tile_transforms(const struct fconv_kernels *kern) {
    enum { LD = 2 * FCONV_WINO_STRIP };
    static float d[64 * LD], v[64 * LD], out[36 * LD];
    for (int vi = 0; vi < NSIZES; vi++) {
        const struct fconv_wino_matrices *w = fconv_wino_matrices_for(sizes[vi]);
        int m = w->m, a = w->alpha, r = w->r;
        test_fill_random(d, 64 * LD);
        kern->wino_input[w->input_slot](d, (size_t)a * LD, LD, v, LD, LD);
        kern->wino_output[w->output_slot](d, LD, out, (size_t)m * LD, LD, NULL, 0, 0, LD);
        for (int t = 0; t < LD; t++) {
            for (int i = 0; i < a; i++)
                for (int j = 0; j < a; j++) {
                    double s = 0.0, mag = 0.0;
                    for (int k = 0; k < a; k++)
                        for (int l = 0; l < a; l++) {
                            double term = w->bt[i * a + k] * d[(k * a + l) * LD + t] * w->bt[j * a + l];
                            s += term;
                            mag += fabs(term);
                        }
                    CHECKF(fabs(v[(i * a + j) * LD + t] - s) <= 1e-6 * mag + 1e-30,
                           "%s input transform F(%d) (%d,%d) tile %d", kern->name, m, i, j, t);
                }
            for (int i = 0; i < m; i++)
                for (int j = 0; j < m; j++) {
                    double s = 0.0, mag = 0.0;
                    for (int k = 0; k < a; k++)
                        for (int l = 0; l < a; l++) {
                            double term = w->at[i * a + k] * d[(k * a + l) * LD + t] * w->at[j * a + l];
                            s += term;
                            mag += fabs(term);
                        }
                    CHECKF(fabs(out[(i * m + j) * LD + t] - s) <= 1e-6 * mag + 1e-30,
                           "%s output transform F(%d) (%d,%d) tile %d", kern->name, m, i, j, t);
                }
        }
        /* Strides other than the gathered tiles' (NHWC's patch of x as it lies: rows apart by
         * more than alpha elements) give the same bits; so does the epilogue, the bias a lane's
         * (NaN in one lane, which ReLU keeps) and max(0, .) after it. */
        static float d_wide[72 * LD], v_wide[64 * LD], out_epi[36 * LD], bias[LD];
        for (int i = 0; i < a; i++)
            for (int j = 0; j < a; j++)
                memcpy(d_wide + (size_t)(i * (a + 1) + j) * LD, d + (size_t)(i * a + j) * LD, LD * sizeof(float));
        kern->wino_input[w->input_slot](d_wide, (size_t)(a + 1) * LD, LD, v_wide, LD, LD);
        CHECKF(memcmp(v_wide, v, (size_t)(a * a) * LD * sizeof(float)) == 0, "%s input transform F(%d), wide rows",
               kern->name, m);
        test_fill_random(bias, LD);
        bias[3] = NAN;
        kern->wino_output[w->output_slot](d, LD, out_epi, (size_t)m * LD, LD, bias, 1, 0, LD);
        for (int e = 0; e < m * m * LD; e++) {
            const float sum = out[e] + bias[e % LD], want = sum < 0.0f ? 0.0f : sum;
            CHECKF(e % LD == 3 ? isnan(out_epi[e]) : out_epi[e] == want, "%s output transform F(%d) with bias and ReLU, element %d",
                   kern->name, m, e);
        }
        /* non-temporal stores (the channels-last driver's large NHWC outputs): the same bits */
        static _Alignas(64) float out_streamed[36 * LD];
        kern->wino_output[w->output_slot](d, LD, out_streamed, (size_t)m * LD, LD, bias, 1, 1, LD);
        fconv_stream_fence();
        CHECKF(memcmp(out_streamed, out_epi, (size_t)(m * m) * LD * sizeof(float)) == 0,
               "%s output transform F(%d), streamed", kern->name, m);
        /* ReLU without a bias keeps a -0.0 sum (lane 5: every element of M -0.0) as it is */
        for (int e = 0; e < a * a; e++) d[e * LD + 5] = -0.0f;
        kern->wino_output[w->output_slot](d, LD, out, (size_t)m * LD, LD, NULL, 0, 0, LD);
        kern->wino_output[w->output_slot](d, LD, out_epi, (size_t)m * LD, LD, NULL, 1, 0, LD);
        int negative_zeros = 0;
        for (int e = 0; e < m * m * LD; e++) {
            const float want = out[e] < 0.0f ? 0.0f : out[e];
            negative_zeros += out[e] == 0.0f && signbit(out[e]);
            CHECKF(memcmp(&out_epi[e], &want, sizeof want) == 0, "%s output transform F(%d) with ReLU, element %d",
                   kern->name, m, e);
        }
        CHECKF(negative_zeros > 0, "%s output transform F(%d): no -0.0 sum to keep", kern->name, m);
        float g[16], u[64];
        test_fill_random(g, 16);
        fconv_wino_transform_filter(w, g, u, 1);
        for (int i = 0; i < a; i++)
            for (int j = 0; j < a; j++) {
                double s = 0.0;
                for (int k = 0; k < r; k++)
                    for (int l = 0; l < r; l++) s += w->g[i * r + k] * g[k * r + l] * w->g[j * r + l];
                /* float64 sums in another order than the transform's, rounded: the float32
                 * results may differ in the last place where s lies near a rounding boundary */
                CHECKF(u[i * a + j] == (float)s || nextafterf(u[i * a + j], (float)s) == (float)s,
                       "filter transform F(%d) (%d,%d)", m, i, j);
            }
    }
}

static void test_tile_transforms(void) {
    for (int isa = FCONV_ISA_SCALAR; isa <= FCONV_ISA_AVX512; isa++) {
        const struct fconv_kernels *kern = fconv_kernels_exact((fconv_isa)isa);
        if (kern) check_tile_transforms(kern); /* else not runnable here: test_kernels_* say so */
    }
}

/* x, w and y allocated for the plan (the caller frees them), x, w and nbias floats of bias
 * filled with the data that follows test_rng_state, which is left where it was: every plan
 * given its operands so gets the same data. Returns y's elements. */
static int64_t same_operands(const fconv_plan *plan, float *bias, size_t nbias, float **x, float **w, float **y) {
    int64_t nx = fconv_plan_input_elements(plan), nw = fconv_plan_weight_elements(plan);
    int64_t ny = fconv_plan_output_elements(plan);
    *x = malloc((size_t)nx * sizeof **x);
    *w = malloc((size_t)nw * sizeof **w);
    *y = malloc((size_t)ny * sizeof **y);
    uint64_t saved = test_rng_state;
    test_fill_random(*x, (size_t)nx);
    test_fill_random(*w, (size_t)nw);
    test_fill_random(bias, nbias);
    test_rng_state = saved;
    return ny;
}

/* Shapes with several tile blocks per image and partial edge tiles, against the reference,
 * and identical for 1, 2 and 3 threads. */
static void test_conv2d_blocks(void) {
    static const fconv_conv2d_desc shapes[] = {
        {.n = 2, .c = 5, .h = 37, .w = 41, .k = 7, .r = 3, .s = 3, .pad_top = 1, .pad_left = 1,
         .pad_bottom = 1, .pad_right = 1, .has_bias = 1, .activation = FCONV_ACTIVATION_RELU},
        {.n = 1, .c = 6, .h = 29, .w = 23, .k = 4, .r = 3, .s = 3, .pad_top = 2, .pad_left = 0,
         .pad_bottom = 0, .pad_right = 3, .groups = 2},
        {.n = 3, .c = 4, .h = 3, .w = 50, .k = 8, .r = 3, .s = 3, .groups = 4, .has_bias = 1},
        {.n = 1, .c = 40, .h = 13, .w = 13, .k = 24, .r = 3, .s = 3, .pad_top = 1, .pad_left = 1,
         .pad_bottom = 1, .pad_right = 1},
        /* stride 2 (winograd-stride2): the stem's 7x7/2 with several blocks, odd maps and a
         * kernel of each size in each direction, groups, padding on one side only */
        {.n = 2, .c = 3, .h = 75, .w = 69, .k = 9, .r = 7, .s = 7, .stride_h = 2, .stride_w = 2, .pad_top = 3,
         .pad_left = 3, .pad_bottom = 3, .pad_right = 3, .has_bias = 1, .activation = FCONV_ACTIVATION_RELU},
        {.n = 1, .c = 4, .h = 20, .w = 27, .k = 6, .r = 5, .s = 8, .stride_h = 2, .stride_w = 2, .pad_top = 0,
         .pad_left = 4, .pad_bottom = 2, .pad_right = 0, .groups = 2},
        {.n = 3, .c = 2, .h = 9, .w = 8, .k = 3, .r = 8, .s = 6, .stride_h = 2, .stride_w = 2, .pad_top = 1,
         .pad_left = 0, .pad_bottom = 0, .pad_right = 1, .has_bias = 1},
    };
    static const fconv_algo algos[] = {FCONV_ALGO_WINOGRAD_2X2, FCONV_ALGO_WINOGRAD_4X4,
                                       FCONV_ALGO_WINOGRAD_6X6, FCONV_ALGO_WINOGRAD_STRIDE2};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        for (size_t a = 0; a < 4; a++) {
            if ((shapes[s].stride_h == 2) != (algos[a] == FCONV_ALGO_WINOGRAD_STRIDE2)) continue;
            fconv_algo_info info;
            CHECK(fconv_algo_get_info(algos[a], &info) == FCONV_OK);
            float *y1 = NULL;
            for (int threads = 1; threads <= 3; threads++) {
                fconv_plan *plan;
                fconv_options o = {.algo = algos[a], .threads = threads};
                fconv_status st = fconv_plan_conv2d(&shapes[s], &o, NULL, NULL, &plan);
                CHECKF(st == FCONV_OK, "%s: %s", info.name, fconv_last_error());
                if (st != FCONV_OK) continue;
                float bias[64], *x, *w, *y;
                int64_t ny = same_operands(plan, bias, 64, &x, &w, &y); /* for every thread count */
                const float *b = shapes[s].has_bias ? bias : NULL;
                CHECK(fconv_execute(plan, x, w, b, y) == FCONV_OK);
                if (!y1) {
                    double err = fconv_ref_normalized_error(plan, x, w, b, y, 1, NULL);
                    CHECKF(err <= info.error_bound, "%s shape %zu: error %.3g", info.name, s, err);
                    y1 = y;
                } else {
                    CHECKF(memcmp(y1, y, (size_t)ny * sizeof *y) == 0,
                           "%s shape %zu: %d threads differ from 1", info.name, s, threads);
                    free(y);
                }
                free(x);
                free(w);
                fconv_plan_destroy(plan);
            }
            free(y1);
            test_rand_u64(); /* fresh data for the next algorithm */
        }
    }
}

/* An output large enough to be streamed (non-temporal stores: NCHW, the NCHW driver's rows a
 * whole number of vectors, through the scatters of F(2x2), F(4x4) and the stride-2 phases'
 * F(3x3, 4x4), winograd-rows' rows, and the channels-last driver's transposes of whole output
 * rows; NHWC, the channels-last driver's tiles), 64-byte aligned and 1 and 5 floats past a line
 * (plain stores): against the reference, the same bits either way, and for 1 and 2 threads (each
 * worker fences its own streamed stores). n images of out_h x out_w outputs: winograd-rows' steps of 64
 * end in a partial one on rows of 160, whose whole vectors stream too. k <= 136. */
static void streamed_output(fconv_algo algo, fconv_layout layout, int64_t n, int64_t out_h, int64_t out_w,
                            int64_t c, int64_t k, int64_t r, int64_t stride) {
    const int64_t pad = r / 2;
    const fconv_conv2d_desc d = {.n = n, .c = c, .h = out_h * stride, .w = out_w * stride, .k = k, .r = r, .s = r,
                                 .stride_h = stride, .stride_w = stride, .pad_top = pad, .pad_left = pad,
                                 .pad_bottom = pad, .pad_right = pad, .has_bias = 1,
                                 .activation = FCONV_ACTIVATION_RELU, .layout = layout};
    float *y1 = NULL;
    for (int threads = 1; threads <= 2; threads++) {
        fconv_plan *plan;
        fconv_options o = {.algo = algo, .threads = threads};
        CHECK(fconv_plan_conv2d(&d, &o, NULL, NULL, &plan) == FCONV_OK);
        int64_t nx = fconv_plan_input_elements(plan), nw = fconv_plan_weight_elements(plan);
        size_t ny = (size_t)fconv_plan_output_elements(plan), bytes = (ny + 16) * sizeof(float);
        CHECK(ny * sizeof(float) >= 8u << 20);
        /* the NCHW plans with channels a multiple of 16 on the channels-last driver (its transposes) */
        CHECK(layout != FCONV_LAYOUT_NCHW || c % 16 != 0 || fconv_wino_channels_last_runs(plan, 4));
        float *x = malloc((size_t)nx * sizeof *x), *w = malloc((size_t)nw * sizeof *w), bias[136];
        float *ybuf = aligned_alloc(64, (bytes + 63) / 64 * 64);
        uint64_t saved = test_rng_state;
        test_fill_random(x, (size_t)nx);
        test_fill_random(w, (size_t)nw);
        CHECK(k <= (int64_t)(sizeof bias / sizeof bias[0])); /* a caller's k within the bias array */
        test_fill_random(bias, (size_t)(k < 136 ? k : 136));
        test_rng_state = saved;
        for (size_t shift = 0; shift <= 5; shift += shift ? 4 : 1) { /* y 0, 1 and 5 floats past a line */
            float *y = ybuf + shift;
            CHECK(fconv_execute(plan, x, w, bias, y) == FCONV_OK);
            if (!y1) {
                double err = fconv_ref_normalized_error(plan, x, w, bias, y, 1, NULL);
                CHECKF(err <= 1e-5, "%s streamed output: error %.3g", fconv_algo_name(algo), err);
                y1 = malloc(ny * sizeof *y1);
                memcpy(y1, y, ny * sizeof *y1);
            } else {
                CHECKF(memcmp(y1, y, ny * sizeof *y) == 0, "%s streamed output: %d threads, shift %zu differ",
                       fconv_algo_name(algo), threads, shift);
            }
        }
        free(x);
        free(w);
        free(ybuf);
        fconv_plan_destroy(plan);
    }
    free(y1);
}

static void test_streamed_output(void) {
    streamed_output(FCONV_ALGO_WINOGRAD_4X4, FCONV_LAYOUT_NCHW, 1, 128, 160, 3, 128, 3, 1);
    streamed_output(FCONV_ALGO_WINOGRAD_2X2, FCONV_LAYOUT_NCHW, 1, 128, 160, 3, 128, 3, 1);
    streamed_output(FCONV_ALGO_WINOGRAD_STRIDE2, FCONV_LAYOUT_NCHW, 1, 128, 160, 3, 128, 7, 2); /* the stem, m = 3 */
    streamed_output(FCONV_ALGO_WINOGRAD_4X4, FCONV_LAYOUT_NHWC, 1, 128, 160, 16, 128, 3, 1);
    /* the channels-last driver (y's images cached): whole rows, the last tile row's three too */
    streamed_output(FCONV_ALGO_WINOGRAD_4X4, FCONV_LAYOUT_NCHW, 2, 91, 112, 16, 128, 3, 1);
    streamed_output(FCONV_ALGO_WINOGRAD_ROWS, FCONV_LAYOUT_NCHW, 1, 128, 160, 3, 136, 3, 1); /* blocks of 64, 64, 8 */
    streamed_output(FCONV_ALGO_WINOGRAD_COLS, FCONV_LAYOUT_NCHW, 1, 130, 160, 3, 136, 3, 1); /* a tile of 2 rows */
    streamed_output(FCONV_ALGO_WINOGRAD_COLS, FCONV_LAYOUT_NHWC, 1, 130, 161, 3, 128, 3, 1); /* NHWC as it lies */
}

/* Where 512-bit loads are slow (fconv_cpu_info.wide_loads_slow) two AVX-512 kernels take some
 * broadcasts by shuffles: the half-width GEMM tile over several panels, which Winograd's blocks
 * of 16 tiles use (a 16^2 map in F(4x4), 8^2 in F(2x2)), and winograd-rows' product (an odd
 * channel count: its one-channel blocks too, with bias and ReLU). The same bits either way:
 * both ways on any machine, against each other and the reference. */
static void test_wide_loads_both_ways(void) {
    fconv_cpu_info *cpu = test_cpu_figures();
    const int saved = cpu->wide_loads_slow;
    const struct {
        fconv_algo algo;
        fconv_conv2d_desc d;
    } cases[] = {
        {FCONV_ALGO_WINOGRAD_4X4, {.n = 1, .c = 40, .h = 16, .w = 16, .k = 24, .r = 3, .s = 3, .pad_top = 1,
                                   .pad_left = 1, .pad_bottom = 1, .pad_right = 1}},
        {FCONV_ALGO_WINOGRAD_2X2, {.n = 1, .c = 40, .h = 8, .w = 8, .k = 24, .r = 3, .s = 3, .pad_top = 1,
                                   .pad_left = 1, .pad_bottom = 1, .pad_right = 1}},
        {FCONV_ALGO_WINOGRAD_ROWS, {.n = 2, .c = 3, .h = 21, .w = 70, .k = 5, .r = 3, .s = 3, .pad_top = 1,
                                    .pad_left = 1, .pad_bottom = 1, .pad_right = 1, .has_bias = 1,
                                    .activation = FCONV_ACTIVATION_RELU}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fconv_algo_info info;
        CHECK(fconv_algo_get_info(cases[i].algo, &info) == FCONV_OK);
        float *y[2] = {NULL, NULL};
        int64_t ny = 0;
        for (int slow = 0; slow < 2; slow++) {
            cpu->wide_loads_slow = slow;
            fconv_options o = {.algo = cases[i].algo, .threads = 2};
            fconv_plan *plan = NULL;
            CHECKF(fconv_plan_conv2d(&cases[i].d, &o, NULL, NULL, &plan) == FCONV_OK, "%s: %s", info.name,
                   fconv_last_error());
            if (!plan) continue;
            float bias[8], *x, *w;
            ny = same_operands(plan, bias, 8, &x, &w, &y[slow]);
            const float *b = cases[i].d.has_bias ? bias : NULL;
            CHECK(fconv_execute(plan, x, w, b, y[slow]) == FCONV_OK);
            const double err = fconv_ref_normalized_error(plan, x, w, b, y[slow], 1, NULL);
            CHECKF(err <= info.error_bound, "%s, wide_loads_slow %d: error %.3g", info.name, slow, err);
            free(x);
            free(w);
            fconv_plan_destroy(plan);
        }
        if (y[0] && y[1])
            CHECKF(memcmp(y[0], y[1], (size_t)ny * sizeof(float)) == 0, "%s: wide_loads_slow changed the bits",
                   info.name);
        free(y[0]);
        free(y[1]);
    }
    cpu->wide_loads_slow = saved;
}

/* The shared cache's read rate (fconv_cpu_info.shared_read_bytes_per_s) sizes the blocks: the
 * NCHW driver's aim at 5/8 as many floats where it is slow, and the channels-last driver's
 * hold more tiles for U's reads past 1 MiB of U, whose later register tiles then ask for the
 * next channel block's U (u_next). Intel's rate against Zen 5's: other blocks (the workspace
 * differs), the same bits, against the reference. */
static void test_shared_read_both_ways(void) {
    fconv_cpu_info *cpu = test_cpu_figures();
    const double saved = cpu->shared_read_bytes_per_s;
    const fconv_conv2d_desc cases[] = {
        /* C not a multiple of 16: the NCHW driver, 400 tiles in 3 or 5 blocks */
        {.n = 1, .c = 24, .h = 80, .w = 80, .k = 40, .r = 3, .s = 3, .pad_top = 1, .pad_left = 1, .pad_bottom = 1,
         .pad_right = 1, .has_bias = 1},
        /* the channels-last driver, U of 1.2 MB, 64 tiles, both layouts */
        {.n = 1, .c = 48, .h = 32, .w = 32, .k = 176, .r = 3, .s = 3, .pad_top = 1, .pad_left = 1, .pad_bottom = 1,
         .pad_right = 1, .activation = FCONV_ACTIVATION_RELU},
        {.n = 1, .c = 48, .h = 32, .w = 32, .k = 176, .r = 3, .s = 3, .pad_top = 1, .pad_left = 1, .pad_bottom = 1,
         .pad_right = 1, .activation = FCONV_ACTIVATION_RELU, .layout = FCONV_LAYOUT_NHWC},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        float *y[2] = {NULL, NULL};
        size_t workspace[2] = {0, 0};
        int64_t ny = 0;
        for (int slow = 0; slow < 2; slow++) {
            cpu->shared_read_bytes_per_s = slow ? FCONV_SHARED_READ_BYTES_PER_S_INTEL : FCONV_SHARED_READ_BYTES_PER_S_DEFAULT;
            fconv_options o = {.algo = FCONV_ALGO_WINOGRAD_4X4, .threads = 1};
            fconv_plan *plan = NULL;
            CHECKF(fconv_plan_conv2d(&cases[i], &o, NULL, NULL, &plan) == FCONV_OK, "case %zu: %s", i, fconv_last_error());
            if (!plan) continue;
            workspace[slow] = fconv_plan_workspace_size(plan);
            float bias[176], *x, *w;
            ny = same_operands(plan, bias, 176, &x, &w, &y[slow]);
            const float *b = cases[i].has_bias ? bias : NULL;
            CHECK(fconv_execute(plan, x, w, b, y[slow]) == FCONV_OK);
            const double err = fconv_ref_normalized_error(plan, x, w, b, y[slow], 1, NULL);
            CHECKF(err <= 1e-5, "case %zu, slow shared reads %d: error %.3g", i, slow, err);
            free(x);
            free(w);
            fconv_plan_destroy(plan);
        }
        /* the channels-last driver's blocks are sized for AVX-512's tiles: under FCONV_ISA=avx2
         * or scalar both rates can give the same blocks (the bits are checked either way) */
        if (i == 0 || fconv_kernels_for(FCONV_ISA_AUTO)->isa >= FCONV_ISA_AVX512)
            CHECKF(workspace[0] != workspace[1], "case %zu: the shared read rate left the blocks as they were (%zu bytes)",
                   i, workspace[0]);
        if (y[0] && y[1])
            CHECKF(memcmp(y[0], y[1], (size_t)ny * sizeof(float)) == 0, "case %zu: the shared read rate changed the bits",
                   i);
        free(y[0]);
        free(y[1]);
    }
    cpu->shared_read_bytes_per_s = saved;
}

/* The channels-last driver (winograd-channels-last.c: C and K multiples of 16, one group) on
 * NHWC plans, which it runs as they lie, and on NCHW plans, where it transposes a segment's rows
 * in and out: partial tiles, a 1x1 image, padding on one side, output channel blocks of the
 * tile partly filled (48, 80), several tile blocks, and a layer whose U passes 1 MiB with few
 * tiles (the steps split across the threads), one whose tiles all go in one block as their V
 * and M are smaller than U, one whose blocks grow past 1 MiB of V and M for U's reads, one whose
 * U passes half the last-level cache;
 * against the reference on every ISA, the same bits for 1, 2 and 3 threads and for weights at
 * plan time or execute time, NHWC without the NCHW copies (the explanation does not name
 * them); NCHW plans whichever driver winograd.c chooses, the channels-last one for some of
 * them with each algorithm. */
static void test_channels_last_driver(void) {
    static const fconv_conv2d_desc shapes[] = {
        {.n = 2, .c = 16, .h = 13, .w = 11, .k = 32, .r = 3, .s = 3, .pad_top = 1, .pad_left = 1, .pad_bottom = 1,
         .pad_right = 1, .has_bias = 1, .activation = FCONV_ACTIVATION_RELU},
        {.n = 1, .c = 32, .h = 1, .w = 1, .k = 16, .r = 3, .s = 3, .pad_top = 1, .pad_left = 1, .pad_bottom = 1,
         .pad_right = 1, .has_bias = 1},
        {.n = 3, .c = 16, .h = 9, .w = 20, .k = 48, .r = 3, .s = 3, .pad_top = 2, .pad_left = 0, .pad_bottom = 0,
         .pad_right = 3},
        {.n = 1, .c = 48, .h = 30, .w = 30, .k = 80, .r = 3, .s = 3, .pad_top = 1, .pad_left = 1, .pad_bottom = 1,
         .pad_right = 1, .activation = FCONV_ACTIVATION_RELU},
        {.n = 1, .c = 96, .h = 8, .w = 8, .k = 96, .r = 3, .s = 3, .pad_top = 1, .pad_left = 1, .pad_bottom = 1,
         .pad_right = 1, .has_bias = 1},
        /* U past 1 MiB for F(4x4) and 42 tiles, whose V and M are smaller: one block, not two */
        {.n = 1, .c = 96, .h = 26, .w = 22, .k = 96, .r = 3, .s = 3, .pad_top = 1, .pad_left = 1, .pad_bottom = 1,
         .pad_right = 1},
        /* U past 1 MiB for F(4x4) and 64 tiles: more to a block than 1 MiB of V and M holds, so
         * that reading U takes at most its share of the products' time (WINO_CL_U_READ_SHARE) */
        {.n = 1, .c = 48, .h = 32, .w = 32, .k = 176, .r = 3, .s = 3, .pad_top = 1, .pad_left = 1, .pad_bottom = 1,
         .pad_right = 1, .has_bias = 1},
        /* U past half the last-level cache for F(4x4) and F(6x6) (blocks grow to half of it) */
        {.n = 2, .c = 352, .h = 5, .w = 4, .k = 368, .r = 3, .s = 3, .pad_top = 1, .pad_left = 1, .pad_bottom = 1,
         .pad_right = 1, .activation = FCONV_ACTIVATION_RELU},
    };
    static const fconv_algo algos[] = {FCONV_ALGO_WINOGRAD_2X2, FCONV_ALGO_WINOGRAD_4X4, FCONV_ALGO_WINOGRAD_6X6};
    static const fconv_isa isas[] = {FCONV_ISA_SCALAR, FCONV_ISA_AVX2, FCONV_ISA_AVX512};
    int nchw_runs[3] = {0, 0, 0};
    for (size_t s = 0; s < 2 * sizeof shapes / sizeof shapes[0]; s++) {
        fconv_conv2d_desc d = shapes[s % (sizeof shapes / sizeof shapes[0])];
        const int nhwc = s < sizeof shapes / sizeof shapes[0];
        d.layout = nhwc ? FCONV_LAYOUT_NHWC : FCONV_LAYOUT_NCHW;
        for (size_t a = 0; a < 3; a++)
            for (size_t i = 0; i < 3; i++) {
                fconv_algo_info info;
                CHECK(fconv_algo_get_info(algos[a], &info) == FCONV_OK);
                float *y1 = NULL;
                for (int run = 0; run < 4; run++) { /* 1, 2, 3 threads; then plan-time weights */
                    const int threads = run < 3 ? run + 1 : 2;
                    fconv_options o = {.algo = algos[a], .threads = threads, .max_isa = isas[i]};
                    fconv_plan *plan;
                    CHECK(fconv_plan_conv2d(&d, &o, NULL, NULL, &plan) == FCONV_OK);
                    if (fconv_plan_isa(plan) != isas[i]) { /* not on this machine */
                        fconv_plan_destroy(plan);
                        break;
                    }
                    float bias[368], *x, *w, *y;
                    int64_t ny = same_operands(plan, bias, 368, &x, &w, &y); /* the same data every run */
                    const float *b = d.has_bias ? bias : NULL;
                    if (run == 3) { /* the weights (and bias) held by the plan */
                        fconv_plan_destroy(plan);
                        CHECK(fconv_plan_conv2d(&d, &o, w, b, &plan) == FCONV_OK);
                    }
                    CHECKF(!strstr(fconv_plan_explain(plan), "NCHW copies"), "%s shape %zu: %s", info.name, s,
                           fconv_plan_explain(plan));
                    CHECK(!nhwc || fconv_wino_channels_last_runs(plan, 2 + 2 * (int)a));
                    if (!nhwc && run == 0) nchw_runs[a] += fconv_wino_channels_last_runs(plan, 2 + 2 * (int)a);
                    CHECK(fconv_execute(plan, x, run == 3 ? NULL : w, run == 3 ? NULL : b, y) == FCONV_OK);
                    if (!y1) {
                        double err = fconv_ref_normalized_error(plan, x, w, b, y, 1, NULL);
                        CHECKF(err <= info.error_bound, "%s shape %zu %s: error %.3g", info.name, s,
                               fconv_isa_name(isas[i]), err);
                        y1 = y;
                    } else {
                        CHECKF(memcmp(y1, y, (size_t)ny * sizeof *y) == 0, "%s shape %zu %s: run %d differs from 1 thread",
                               info.name, s, fconv_isa_name(isas[i]), run);
                        free(y);
                    }
                    free(x);
                    free(w);
                    fconv_plan_destroy(plan);
                }
                free(y1);
                test_rand_u64();
            }
    }
    for (size_t a = 0; a < 3; a++) CHECKF(nchw_runs[a] > 0, "%s: no NCHW plan ran channels last", fconv_algo_name(algos[a]));
    /* Channels that are not a multiple of 16, or groups: through the copies, still right */
    fconv_conv2d_desc d = {.n = 1, .c = 24, .h = 10, .w = 10, .k = 16, .r = 3, .s = 3, .groups = 2,
                           .layout = FCONV_LAYOUT_NHWC};
    fconv_options o = {.algo = FCONV_ALGO_WINOGRAD_4X4};
    fconv_plan *plan;
    CHECK(fconv_plan_conv2d(&d, &o, NULL, NULL, &plan) == FCONV_OK);
    CHECK_STR_CONTAINS(fconv_plan_explain(plan), "NCHW copies");
    fconv_plan_destroy(plan);
    /* NHWC with U past half the last-level cache (17.8 MB for F(4x4)) and 16 tiles, one strip
     * of the NCHW driver where the register tiles would run 7 + 7 + 2: the NCHW driver through
     * the copies, right, and the same bits on 1 and 2 threads */
    const fconv_conv2d_desc big = {.n = 1, .c = 352, .h = 13, .w = 13, .k = 352, .r = 3, .s = 3, .pad_top = 1,
                                   .pad_left = 1, .pad_bottom = 1, .pad_right = 1, .has_bias = 1,
                                   .layout = FCONV_LAYOUT_NHWC};
    fconv_algo_info info;
    CHECK(fconv_algo_get_info(FCONV_ALGO_WINOGRAD_4X4, &info) == FCONV_OK);
    float *y1 = NULL;
    for (int threads = 1; threads <= 2; threads++) {
        fconv_options ob = {.algo = FCONV_ALGO_WINOGRAD_4X4, .threads = threads};
        CHECK(fconv_plan_conv2d(&big, &ob, NULL, NULL, &plan) == FCONV_OK);
        if (16 % plan->kernels->implicit_gemm_px != 0) { /* 7 pixels a register tile on AVX-512, 6 on AVX2 */
            CHECK_STR_CONTAINS(fconv_plan_explain(plan), "NCHW copies");
            CHECK(!fconv_wino_channels_last_runs(plan, 4));
        }
        float bias[352], *x, *w, *y;
        int64_t ny = same_operands(plan, bias, 352, &x, &w, &y);
        CHECK(fconv_execute(plan, x, w, bias, y) == FCONV_OK);
        if (!y1) {
            double err = fconv_ref_normalized_error(plan, x, w, bias, y, 1, NULL);
            CHECKF(err <= info.error_bound, "winograd-4x4 NHWC through the NCHW driver: error %.3g", err);
            y1 = y;
        } else {
            CHECK(memcmp(y1, y, (size_t)ny * sizeof *y) == 0);
            free(y);
        }
        free(x);
        free(w);
        fconv_plan_destroy(plan);
    }
    free(y1);
}

/* winograd-rows (F(4,3) along rows) on the shapes that stress it: outputs 1, 5, 12, 25, 64,
 * 63 and 130 columns wide (partial and whole tile vectors; two per block on AVX-512), kernels
 * 1, 2, 3, 5 and 7 rows tall, one taller than the image with row dilation 2 (every output row
 * sums a different range of kernel rows), output rows whose kernel rows all lie in the
 * padding (the bias alone), row stride 2, padding wider than the kernel, groups, odd channel
 * counts per group (the product's one-channel step), several blocks of rows with a partial
 * last one, NHWC through the copies; against the reference on every ISA, the same bits for
 * 1, 2 and 3 threads and for weights at plan time or execute time. */
static void one_dimension_shapes(fconv_algo algo, const fconv_conv2d_desc *shapes, size_t count);

static void test_rows(void) {
    static const fconv_conv2d_desc shapes[] = {
        {.n = 2, .c = 3, .h = 9, .w = 1, .k = 5, .r = 3, .s = 3, .pad_top = 1, .pad_left = 1, .pad_bottom = 1,
         .pad_right = 1, .has_bias = 1, .activation = FCONV_ACTIVATION_RELU},
        {.n = 1, .c = 2, .h = 7, .w = 7, .k = 4, .r = 1, .s = 3, .pad_top = 2, .pad_bottom = 3, .has_bias = 1},
        {.n = 1, .c = 4, .h = 12, .w = 66, .k = 6, .r = 2, .s = 3, .pad_top = 0, .pad_left = 0, .pad_bottom = 1,
         .pad_right = 0},
        {.n = 2, .c = 6, .h = 11, .w = 63, .k = 6, .r = 5, .s = 3, .stride_h = 2, .pad_top = 2, .pad_left = 1,
         .pad_bottom = 2, .pad_right = 1, .groups = 2, .has_bias = 1, .activation = FCONV_ACTIVATION_RELU},
        {.n = 1, .c = 3, .h = 4, .w = 20, .k = 3, .r = 7, .s = 3, .dilation_h = 2, .pad_top = 6, .pad_left = 5,
         .pad_bottom = 4, .pad_right = 2, .has_bias = 1},
        {.n = 3, .c = 6, .h = 21, .w = 12, .k = 9, .r = 3, .s = 3, .pad_top = 1, .pad_left = 1, .pad_bottom = 1,
         .pad_right = 1, .groups = 3, .has_bias = 1, .activation = FCONV_ACTIVATION_RELU},
        {.n = 1, .c = 5, .h = 17, .w = 130, .k = 9, .r = 3, .s = 3, .pad_top = 1, .pad_left = 1, .pad_bottom = 1,
         .pad_right = 1, .has_bias = 1, .activation = FCONV_ACTIVATION_RELU, .layout = FCONV_LAYOUT_NHWC},
    };
    one_dimension_shapes(FCONV_ALGO_WINOGRAD_ROWS, shapes, sizeof shapes / sizeof shapes[0]);
}

/* winograd-cols (F(4,3) down columns) likewise: outputs 1, 3, 4, 5, 9 and 21 rows tall (a
 * partial last tile of 1-3 rows), 1, 5, 16, 40, 63, 130 and 224 columns wide (whole vectors,
 * a single one after the blocks of two, a partial last one), kernels 1, 2, 3, 5 and 7 columns
 * wide, one wider than the image with column dilation 2, padding wider than the kernel, rows
 * whose input rows all lie in the padding (the bias alone), groups with odd channel counts
 * (the zero-padded last pair of taps), more than 64 output channels (two channel blocks),
 * NHWC through the copies and as it lies. */
static void test_cols(void) {
    static const fconv_conv2d_desc shapes[] = {
        {.n = 2, .c = 3, .h = 1, .w = 9, .k = 5, .r = 3, .s = 3, .pad_top = 1, .pad_left = 1, .pad_bottom = 1,
         .pad_right = 1, .has_bias = 1, .activation = FCONV_ACTIVATION_RELU},
        {.n = 1, .c = 2, .h = 7, .w = 7, .k = 4, .r = 3, .s = 1, .pad_left = 2, .pad_right = 3, .has_bias = 1},
        {.n = 1, .c = 4, .h = 66, .w = 12, .k = 6, .r = 3, .s = 2, .pad_top = 0, .pad_left = 0, .pad_bottom = 0,
         .pad_right = 1},
        {.n = 1, .c = 3, .h = 20, .w = 4, .k = 3, .r = 3, .s = 7, .dilation_w = 2, .pad_top = 5, .pad_left = 6,
         .pad_bottom = 2, .pad_right = 4, .has_bias = 1},
        {.n = 3, .c = 6, .h = 12, .w = 21, .k = 9, .r = 3, .s = 3, .pad_top = 1, .pad_left = 1, .pad_bottom = 1,
         .pad_right = 1, .groups = 3, .has_bias = 1, .activation = FCONV_ACTIVATION_RELU},
        {.n = 1, .c = 5, .h = 3, .w = 130, .k = 9, .r = 3, .s = 5, .pad_top = 0, .pad_left = 2, .pad_bottom = 0,
         .pad_right = 2, .has_bias = 1, .activation = FCONV_ACTIVATION_RELU, .layout = FCONV_LAYOUT_NHWC},
        {.n = 2, .c = 3, .h = 9, .w = 40, .k = 70, .r = 3, .s = 3, .pad_top = 1, .pad_left = 1, .pad_bottom = 1,
         .pad_right = 1, .has_bias = 1},
        {.n = 1, .c = 2, .h = 5, .w = 63, .k = 3, .r = 3, .s = 3, .pad_top = 2, .pad_left = 0, .pad_bottom = 2,
         .pad_right = 0},
        {.n = 1, .c = 3, .h = 4, .w = 224, .k = 8, .r = 3, .s = 3, .pad_top = 1, .pad_left = 1, .pad_bottom = 1,
         .pad_right = 1, .groups = 1},
        {.n = 1, .c = 4, .h = 3, .w = 16, .k = 10, .r = 3, .s = 3, .pad_top = 0, .pad_left = 1, .pad_bottom = 0,
         .pad_right = 1, .groups = 2, .activation = FCONV_ACTIVATION_RELU},
        /* NHWC as it lies (one group, output channels a multiple of 16): blocks of 32 channels
         * and a last one of 16, odd widths (a one-pixel step), short last tiles */
        {.n = 2, .c = 3, .h = 10, .w = 13, .k = 48, .r = 3, .s = 3, .pad_top = 1, .pad_left = 1, .pad_bottom = 1,
         .pad_right = 1, .has_bias = 1, .activation = FCONV_ACTIVATION_RELU, .layout = FCONV_LAYOUT_NHWC},
        {.n = 1, .c = 1, .h = 1, .w = 1, .k = 16, .r = 3, .s = 3, .pad_top = 1, .pad_left = 1, .pad_bottom = 1,
         .pad_right = 1, .has_bias = 1, .layout = FCONV_LAYOUT_NHWC},
        {.n = 1, .c = 5, .h = 7, .w = 9, .k = 64, .r = 3, .s = 5, .dilation_w = 2, .pad_top = 3, .pad_left = 6,
         .pad_bottom = 0, .pad_right = 3, .layout = FCONV_LAYOUT_NHWC},
        {.n = 1, .c = 2, .h = 6, .w = 20, .k = 32, .r = 3, .s = 1, .pad_top = 0, .pad_left = 0, .pad_bottom = 0,
         .pad_right = 0, .activation = FCONV_ACTIVATION_RELU, .layout = FCONV_LAYOUT_NHWC},
    };
    one_dimension_shapes(FCONV_ALGO_WINOGRAD_COLS, shapes, sizeof shapes / sizeof shapes[0]);
}

/* One of the 1D Winograd algorithms (winograd-rows, winograd-cols) on `shapes`: against the
 * reference on every ISA, the same bits for 1, 2 and 3 threads and for weights at plan time
 * or execute time. */
static void one_dimension_shapes(fconv_algo algo, const fconv_conv2d_desc *shapes, size_t count) {
    static const fconv_isa isas[] = {FCONV_ISA_SCALAR, FCONV_ISA_AVX2, FCONV_ISA_AVX512};
    fconv_algo_info info;
    CHECK(fconv_algo_get_info(algo, &info) == FCONV_OK);
    for (size_t s = 0; s < count; s++)
        for (size_t i = 0; i < 3; i++) {
            float *y1 = NULL;
            for (int run = 0; run < 4; run++) { /* 1, 2, 3 threads; then plan-time weights */
                fconv_options o = {.algo = algo, .threads = run < 3 ? run + 1 : 2, .max_isa = isas[i]};
                fconv_plan *plan;
                fconv_status st = fconv_plan_conv2d(&shapes[s], &o, NULL, NULL, &plan);
                CHECKF(st == FCONV_OK, "%s shape %zu: %s", info.name, s, fconv_last_error());
                if (st != FCONV_OK) break;
                if (fconv_plan_isa(plan) != isas[i]) { /* not on this machine */
                    fconv_plan_destroy(plan);
                    break;
                }
                float bias[128], *x, *w, *y;
                CHECK(shapes[s].k <= 128); /* the shapes' K within the bias array */
                int64_t ny = same_operands(plan, bias, 128, &x, &w, &y);
                const float *b = shapes[s].has_bias ? bias : NULL;
                if (run == 3) {
                    fconv_plan_destroy(plan);
                    CHECK(fconv_plan_conv2d(&shapes[s], &o, w, b, &plan) == FCONV_OK);
                }
                CHECK(fconv_execute(plan, x, run == 3 ? NULL : w, run == 3 ? NULL : b, y) == FCONV_OK);
                if (!y1) {
                    double err = fconv_ref_normalized_error(plan, x, w, b, y, 1, NULL);
                    CHECKF(err <= info.error_bound, "%s shape %zu %s: error %.3g", info.name, s,
                           fconv_isa_name(isas[i]), err);
                    y1 = y;
                } else {
                    CHECKF(memcmp(y1, y, (size_t)ny * sizeof *y) == 0, "%s shape %zu %s: run %d differs", info.name,
                           s, fconv_isa_name(isas[i]), run);
                    free(y);
                }
                free(x);
                free(w);
                fconv_plan_destroy(plan);
            }
            free(y1);
            test_rand_u64();
        }
}

/* Planning d with algo fails with EUNSUPPORTED, the error naming `reason`. */
static void expect_decline(fconv_algo algo, const fconv_conv2d_desc *d, const char *reason) {
    fconv_options o = {.algo = algo};
    fconv_plan *plan;
    CHECKF(fconv_plan_conv2d(d, &o, NULL, NULL, &plan) == FCONV_EUNSUPPORTED, "%s: expected a refusal (%s)",
           fconv_algo_name(algo), reason);
    CHECK_STR_CONTAINS(fconv_last_error(), reason);
}

/* Declines name the algorithm and the reason. */
static void test_declines(void) {
    fconv_conv2d_desc d = {.n = 1, .c = 2, .h = 8, .w = 8, .k = 2, .r = 3, .s = 3, .stride_h = 2};
    fconv_plan *plan;
    fconv_options o = {.algo = FCONV_ALGO_WINOGRAD_4X4};
    expect_decline(o.algo, &d, "winograd-4x4 needs stride 1");
    d.stride_h = 1;
    d.s = 5;
    expect_decline(o.algo, &d, "winograd-4x4 needs a 3x3 kernel, got 3x5");
    d.s = 3;
    d.dilation_w = 2;
    expect_decline(o.algo, &d, "winograd-4x4 needs dilation 1");
    fconv_conv1d_desc c = {.n = 10, .m = 3};
    CHECK(fconv_plan_conv1d(&c, &o, NULL, &plan) == FCONV_EUNSUPPORTED);
    CHECK_STR_CONTAINS(fconv_last_error(), "winograd-4x4");

    fconv_conv2d_desc s2 = {.n = 1, .c = 2, .h = 16, .w = 16, .k = 2, .r = 7, .s = 7, .stride_h = 2, .stride_w = 1};
    o.algo = FCONV_ALGO_WINOGRAD_STRIDE2;
    expect_decline(o.algo, &s2, "winograd-stride2 needs stride 2, got 2x1");
    s2.stride_w = 2;
    s2.s = 4;
    expect_decline(o.algo, &s2, "winograd-stride2 needs a kernel from 5x5 to 8x8, got 7x4");
    s2.s = 9;
    expect_decline(o.algo, &s2, "got 7x9");
    s2.s = 7;
    s2.dilation_h = 2;
    expect_decline(o.algo, &s2, "winograd-stride2 needs dilation 1");
    s2.dilation_h = 1;
    CHECK(fconv_plan_conv2d(&s2, &o, NULL, NULL, &plan) == FCONV_OK);
    fconv_plan_destroy(plan);
    fconv_filter2d_desc f = {.h = 16, .w = 16, .channels = 1, .kh = 7, .kw = 7};
    CHECK(fconv_plan_filter2d(&f, &o, NULL, &plan) == FCONV_EUNSUPPORTED);
    CHECK_STR_CONTAINS(fconv_last_error(), "winograd-stride2 does not serve filter2d");

    fconv_conv2d_desc rows = {.n = 1, .c = 3, .h = 16, .w = 16, .k = 4, .r = 3, .s = 5};
    o.algo = FCONV_ALGO_WINOGRAD_ROWS;
    expect_decline(o.algo, &rows, "winograd-rows needs a kernel 3 wide, got 3x5");
    rows.s = 3;
    rows.stride_w = 2;
    expect_decline(o.algo, &rows, "winograd-rows needs stride and dilation 1 along the rows, got 2 and 1");
    rows.stride_w = 1;
    rows.dilation_w = 2;
    expect_decline(o.algo, &rows, "got 1 and 2");
    rows.dilation_w = 1;
    rows.c = 64; /* 64 channels x 6 rows x 6 x 64 tiles of a 224-wide map: past the strip */
    rows.w = 224;
    expect_decline(o.algo, &rows, "outgrow its 256 KiB strip");
    rows.c = 3;
    CHECK(fconv_plan_conv2d(&rows, &o, NULL, NULL, &plan) == FCONV_OK);
    fconv_plan_destroy(plan);
    CHECK(fconv_plan_filter2d(&f, &o, NULL, &plan) == FCONV_EUNSUPPORTED);
    CHECK_STR_CONTAINS(fconv_last_error(), "winograd-rows does not serve filter2d");

    fconv_conv2d_desc cols = {.n = 1, .c = 3, .h = 16, .w = 16, .k = 4, .r = 5, .s = 3};
    o.algo = FCONV_ALGO_WINOGRAD_COLS;
    expect_decline(o.algo, &cols, "winograd-cols needs a kernel 3 tall, got 5x3");
    cols.r = 3;
    cols.stride_w = 2;
    expect_decline(o.algo, &cols, "winograd-cols needs stride 1 both ways and dilation 1 down the columns, got stride 1x2 and dilation 1");
    cols.stride_w = 1;
    cols.dilation_h = 2;
    expect_decline(o.algo, &cols, "got stride 1x1 and dilation 2");
    cols.dilation_h = 1;
    cols.c = 16; /* 16 channels x 3 kernel columns x 6 x 240 columns: past the strip */
    cols.w = 240;
    expect_decline(o.algo, &cols, "outgrow its 256 KiB strip");
    cols.c = 3;
    cols.dilation_w = 3; /* column dilation is served */
    CHECK(fconv_plan_conv2d(&cols, &o, NULL, NULL, &plan) == FCONV_OK);
    fconv_plan_destroy(plan);
    CHECK(fconv_plan_filter2d(&f, &o, NULL, &plan) == FCONV_EUNSUPPORTED);
    CHECK_STR_CONTAINS(fconv_last_error(), "winograd-cols does not serve filter2d");
}

/* AUTO weighs U's read from beyond L2 (fconv_cpu_info.shared_read_bytes_per_s, and
 * memory_read_bytes_per_s for a U half the last-level cache cannot keep): 1 x 512 x 7^2 -> 512
 * has four F(4x4) tiles a channel, so its products read U (37.7 MB, F(2x2)'s 16.8) once for
 * few multiply-adds. Where the cores read it slowly (Intel's mesh, or a Zen 4's memory) AUTO
 * takes winograd-2x2, at the Zen 5 VM's rate winograd-4x4, as measured on each. */
static void auto_under_read_rates(double shared, double memory, fconv_layout layout, fconv_algo expect) {
    fconv_cpu_info *cpu = test_cpu_figures();
    const double saved_shared = cpu->shared_read_bytes_per_s, saved_memory = cpu->memory_read_bytes_per_s;
    cpu->shared_read_bytes_per_s = shared;
    cpu->memory_read_bytes_per_s = memory;
    fconv_conv2d_desc d = {.n = 1, .c = 512, .h = 7, .w = 7, .k = 512, .r = 3, .s = 3,
                           .pad_top = 1, .pad_left = 1, .pad_bottom = 1, .pad_right = 1, .layout = layout};
    fconv_options o = {.threads = 2};
    fconv_plan *p = NULL;
    /* weights at plan time, as a layer has them: given at each execute, their transform
     * would cost every Winograd plan more than implicit-gemm's whole run */
    float *w = calloc((size_t)(d.k * d.c * d.r * d.s), sizeof *w);
    CHECK(w && fconv_plan_conv2d(&d, &o, w, NULL, &p) == FCONV_OK);
    free(w);
    if (p) {
        CHECKF(fconv_plan_algo(p) == expect, "%.0f GB/s a core from the shared cache, %.0f from memory, layout %d: AUTO took %s, not %s (%s)",
               shared / 1e9, memory / 1e9, (int)layout, fconv_algo_name(fconv_plan_algo(p)), fconv_algo_name(expect),
               fconv_plan_explain(p));
        fconv_plan_destroy(p);
    }
    cpu->shared_read_bytes_per_s = saved_shared;
    cpu->memory_read_bytes_per_s = saved_memory;
}

static void test_weight_read_rate(void) {
    if (fconv_kernels_for(FCONV_ISA_AUTO)->isa < FCONV_ISA_AVX512) {
        printf("note: the read-rate choice is calibrated for AVX-512's products; skipped\n");
        return;
    }
    CHECK(fconv_wisdom_use_file("") == FCONV_OK); /* AUTO's model alone, no recorded choice */
    const double intel = FCONV_SHARED_READ_BYTES_PER_S_INTEL, zen5 = FCONV_SHARED_READ_BYTES_PER_S_DEFAULT;
    for (int l = 0; l < 2; l++) {
        const fconv_layout layout = l ? FCONV_LAYOUT_NHWC : FCONV_LAYOUT_NCHW;
        auto_under_read_rates(intel, intel, layout, FCONV_ALGO_WINOGRAD_2X2);
        auto_under_read_rates(zen5, zen5, layout, FCONV_ALGO_WINOGRAD_4X4);
        auto_under_read_rates(zen5, FCONV_MEMORY_READ_BYTES_PER_S_AMD_FAMILY_25, layout, FCONV_ALGO_WINOGRAD_2X2);
    }
    CHECK(fconv_wisdom_use_file(NULL) == FCONV_OK);
}

/* Every CPU gets a memory read rate, no faster than its shared cache's. */
static void test_memory_read_rate(void) {
    const fconv_cpu_info *cpu = fconv_cpu();
    CHECKF(cpu->memory_read_bytes_per_s > 0 && cpu->memory_read_bytes_per_s <= cpu->shared_read_bytes_per_s,
           "memory %.3g B/s, shared cache %.3g B/s", cpu->memory_read_bytes_per_s, cpu->shared_read_bytes_per_s);
}

int main(void) {
    test_init();
    TEST(test_matrices_1d);
    TEST(test_matrices_2d);
    TEST(test_tile_transforms);
    TEST(test_conv2d_blocks);
    TEST(test_streamed_output);
    TEST(test_wide_loads_both_ways);
    TEST(test_channels_last_driver);
    TEST(test_shared_read_both_ways);
    TEST(test_rows);
    TEST(test_cols);
    TEST(test_declines);
    TEST(test_weight_read_rate);
    TEST(test_memory_read_rate);
    return test_finish();
}
