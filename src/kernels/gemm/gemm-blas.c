/*
 * gemm-blas.c — fconv_gemm on OpenBLAS. OpenBLAS is set to one thread once (its own pool
 * would fight ours for the cores, and calls from inside our parallel tasks would
 * oversubscribe); fastconv parallelizes around it by splitting C into fixed tiles.
 */
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cblas.h>

#include "core/cost-model.h"
#include "core/dispatch.h"
#include "core/parallel.h"
#include "kernels/gemm/gemm.h"

#define TILE_M 256
#define TILE_N 512
/* C in at least two tiles where its rows allow (tiles of TILE_M_MIN rows or more, a
 * multiple of OpenBLAS's 16-row micro-tile): one 256 x 196 tile (a stride-2 ResNet layer,
 * 1024 -> 256 channels 1x1 on 14x14) left the second core idle for the whole product,
 * 2.0 and 1.8x slower on 2 threads. Not more tiles: each packs all of B again, which cost
 * 5-8% at 128 rows per tile (512 x 49 x 4608, 7x7 maps). */
#define MIN_TILES 2
#define TILE_M_MIN 64

/* Products at least this wide go to our own GEMM: with its job grid following the thread
 * count it measured 1.1-1.6x OpenBLAS-on-fixed-tiles on 2 threads for im2col and 1x1 shapes
 * (64x3136x256: 154 vs 124 GFLOP/s; docs/kernels.md), while narrower ones (Winograd's
 * per-tile-block products, 7x7 feature maps) stay faster on OpenBLAS. A rule on the shape
 * alone, so the backend, and with it every bit of C, never depends on the thread count. */
#define PACKED_MIN_N 512

static pthread_once_t blas_once = PTHREAD_ONCE_INIT;
static char backend[224];
/* FCONV_GEMM=packed: fastconv's own GEMM for every shape, not only wide ones (the tests run
 * the GEMM-based algorithms this way too). */
static int use_packed;

/* OpenBLAS's pthreads build starts its thread pool when it is loaded, and idle workers spin
 * (sched_yield) for about 2^28 cycles before they sleep: for a process's first ~80 ms every
 * parallel region of ours then waited for a time slice on a busy core (a 1024^2 9x9 filter
 * on 2 threads took 8 ms per execute instead of 0.8, exactly when the CLI runs; with
 * OMP_WAIT_POLICY=active for the whole 80 ms). fastconv calls OpenBLAS single-threaded, so
 * its pool is shut down at once. Weak: a serial or OpenMP OpenBLAS may not have the symbol,
 * and OpenBLAS starts the pool again itself if the caller later asks it for threads. */
extern int blas_thread_shutdown_(void) __attribute__((weak));

/* OpenBLAS's cores (its DYNAMIC_ARCH kernel sets) with AVX2 or AVX-512 kernels. DYNAMIC_ARCH
 * picks the set from the CPU models it knows, and a newer model it does not know gets its
 * x86-64 baseline: 0.3.21 on an Emerald Rapids VM (family 6 model 207) ran "Prescott", SSE3,
 * and the narrow products at 14-26 GFLOP/s on one thread where our packed GEMM ran them at
 * 28-122 (64 x 196 x 64: 14 against 73; OPENBLAS_CORETYPE=SkylakeX 102). With no such set
 * while our own kernels are AVX2 or wider, every product goes to ours. */
static int blas_core_vectorized(const char *core) {
    static const char *const vectorized[] = {"Haswell", "Zen", "SkylakeX", "CooperLake", "SapphireRapids"};
    for (size_t i = 0; core && i < sizeof vectorized / sizeof vectorized[0]; i++)
        if (strcasecmp(core, vectorized[i]) == 0) return 1;
    return 0;
}

static void init_blas(void) {
    openblas_set_num_threads(1);
    if (blas_thread_shutdown_) blas_thread_shutdown_();
    const char *env = getenv("FCONV_GEMM"), *core = openblas_get_corename();
    const struct fconv_kernels *ours = fconv_kernels_for(FCONV_ISA_AUTO);
    const int blas_slower = ours->isa >= FCONV_ISA_AVX2 && !blas_core_vectorized(core);
    use_packed = (env && strcmp(env, "packed") == 0) || blas_slower;
    if (blas_slower)
        snprintf(backend, sizeof backend, "fastconv packed %s micro-kernel (OpenBLAS runs its kernels for %s)",
                 ours->name, core ? core : "an unknown core");
    else if (use_packed)
        snprintf(backend, sizeof backend, "fastconv packed %s micro-kernel (FCONV_GEMM=packed)", ours->name);
    else
        snprintf(backend, sizeof backend,
                 "openblas (%s) below %d columns, fastconv packed %s micro-kernel from there",
                 openblas_get_config(), PACKED_MIN_N, ours->name);
}

void fconv_gemm_init(void) { pthread_once(&blas_once, init_blas); }

const char *fconv_gemm_report(void) {
    pthread_once(&blas_once, init_blas);
    return backend;
}

/* Rows per tile of C, from the shape alone so that the tiles, and with them every bit of C,
 * never depend on the thread count. */
static size_t tile_rows(size_t m, size_t n) {
    size_t tiles_n = (n + TILE_N - 1) / TILE_N;
    size_t want_m = (MIN_TILES + tiles_n - 1) / tiles_n; /* tiles wanted along m */
    size_t rows = ((m + want_m - 1) / want_m + 15) / 16 * 16;
    return rows < TILE_M_MIN ? TILE_M_MIN : rows > TILE_M ? TILE_M : rows;
}

struct gemm_ctx {
    int trans_a, trans_b, accumulate;
    size_t m, n, k, lda, ldb, ldc, tiles_n, tile_m;
    const float *a, *b;
    float *c;
};

static void gemm_tile_task(const void *vctx, size_t tile) {
    const struct gemm_ctx *g = vctx;
    size_t i0 = (tile / g->tiles_n) * g->tile_m, j0 = (tile % g->tiles_n) * TILE_N;
    size_t mt = g->m - i0 < g->tile_m ? g->m - i0 : g->tile_m;
    size_t nt = g->n - j0 < TILE_N ? g->n - j0 : TILE_N;
    const float *a = g->trans_a ? g->a + i0 : g->a + i0 * g->lda;
    const float *b = g->trans_b ? g->b + j0 * g->ldb : g->b + j0;
    cblas_sgemm(CblasRowMajor, g->trans_a ? CblasTrans : CblasNoTrans,
                g->trans_b ? CblasTrans : CblasNoTrans, (int)mt, (int)nt, (int)g->k, 1.0f, a,
                (int)g->lda, b, (int)g->ldb, g->accumulate ? 1.0f : 0.0f, g->c + i0 * g->ldc + j0,
                (int)g->ldc);
}

void fconv_gemm(int threads, int trans_a, int trans_b, size_t m, size_t n, size_t k,
                const float *a, size_t lda, const float *b, size_t ldb, int accumulate, float *c,
                size_t ldc) {
    if (m == 0 || n == 0) return;
    pthread_once(&blas_once, init_blas);
    if (k == 0) { /* BLAS scales C by beta; do the same without touching A or B */
        if (!accumulate)
            for (size_t i = 0; i < m; i++)
                for (size_t j = 0; j < n; j++) c[i * ldc + j] = 0.0f;
        return;
    }
    /* BLAS takes int sizes; our own GEMM takes size_t, so it serves what would not fit. The
     * tiles below bound m and n, but k and the leading dimensions go to BLAS whole. */
    int beyond_int = k > INT_MAX || lda > INT_MAX || ldb > INT_MAX || ldc > INT_MAX;
    if (use_packed || beyond_int || n >= PACKED_MIN_N) {
        fconv_gemm_packed(fconv_kernels_for(FCONV_ISA_AUTO), threads, trans_a, trans_b, m, n, k, a, lda, b,
                          ldb, accumulate, c, ldc);
        return;
    }
    struct gemm_ctx g = {trans_a, trans_b, accumulate, m, n, k, lda, ldb, ldc,
                         (n + TILE_N - 1) / TILE_N, tile_rows(m, n), a, b, c};
    size_t tiles = ((m + g.tile_m - 1) / g.tile_m) * g.tiles_n;
    fconv_parallel_1d(threads, tiles, gemm_tile_task, &g);
}

/*
 * Fitted to cblas_sgemm on one thread (OpenBLAS 0.3.21, m = 64, n = 7..3136, k = 27..2304):
 * 2·m·k·(n + 18) at 88 GFLOP/s (narrow products waste most of a 16-wide micro-tile), 0.4 ns
 * per element of C, B streamed through the packing at half the copy rate (dominant when m is
 * small: filters have m = 1), and 0.7 µs per call.
 */
double fconv_gemm_call_seconds(double m, double n, double k) {
    return 2.0 * m * k * (n + 18.0) / 88e9 + 0.4e-9 * m * n + 2.0 * fconv_stream_seconds(4.0 * n * k) +
           0.7e-6;
}

double fconv_gemm_seconds(double m, double n, double k, int threads) {
    pthread_once(&blas_once, init_blas);
    if (n >= PACKED_MIN_N || use_packed) /* the packed driver: jobs shared evenly among the threads */
        return fconv_gemm_call_seconds(m, n, k) / (threads > 1 ? threads : 1);
    double tm = ceil(m / (double)tile_rows((size_t)m, (size_t)n)), tn = ceil(n / TILE_N), tiles = tm * tn;
    double busy = tiles < threads ? tiles : threads;
    return tiles * fconv_gemm_call_seconds(m / tm, n / tn, k) / busy;
}
