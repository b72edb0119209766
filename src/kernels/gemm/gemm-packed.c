/*
 * gemm-packed.c — fconv_gemm on fastconv's own micro-kernel (gemm-ukernel.c, dispatched per
 * ISA): C is cut into fixed TILE_M x TILE_N tiles shared out on the caller's threads (the
 * same cut for any thread count, so results never depend on it); a tile walks k in KC steps,
 * packs its A block into MR-row slivers and its B block into NR-column slivers (zero-padded,
 * transposes resolved here) in thread-local buffers, and runs the micro-kernel per MR x NR.
 */
#include "core/dispatch.h"
#include "core/parallel.h"
#include "kernels/gemm/gemm.h"

/* A block (TILE_M x KC, 96 KiB) stays in L2 and a B sliver (KC x NR) in L1 while the kernel
 * streams; multiples of every MR (4, 6) and NR (4, 16, 32). */
#define TILE_M 192
#define TILE_N 256
#define KC 128

static _Thread_local _Alignas(64) float pack_a[TILE_M * KC];
static _Thread_local _Alignas(64) float pack_b[TILE_N * KC];

struct packed_ctx {
    const struct fconv_kernels *kern;
    int trans_a, trans_b, accumulate;
    size_t m, n, k, lda, ldb, ldc, tiles_n;
    const float *a, *b;
    float *c;
};

static float a_at(const struct packed_ctx *g, size_t i, size_t p) {
    return g->trans_a ? g->a[p * g->lda + i] : g->a[i * g->lda + p];
}
static float b_at(const struct packed_ctx *g, size_t p, size_t j) {
    return g->trans_b ? g->b[j * g->ldb + p] : g->b[p * g->ldb + j];
}

static void packed_tile_task(const void *vctx, size_t tile) {
    const struct packed_ctx *g = vctx;
    const size_t mr = g->kern->gemm_mr, nr = g->kern->gemm_nr;
    const size_t i0 = (tile / g->tiles_n) * TILE_M, j0 = (tile % g->tiles_n) * TILE_N;
    const size_t mt = g->m - i0 < TILE_M ? g->m - i0 : TILE_M;
    const size_t nt = g->n - j0 < TILE_N ? g->n - j0 : TILE_N;
    for (size_t p0 = 0; p0 < g->k; p0 += KC) {
        const size_t kc = g->k - p0 < KC ? g->k - p0 : KC;
        /* pack_a[sliver][p][i], pack_b[sliver][p][j]; rows/columns past the edge are 0 */
        for (size_t is = 0; is < mt; is += mr) {
            const size_t rows = mt - is < mr ? mt - is : mr;
            float *dst = pack_a + is * kc;
            for (size_t i = 0; i < mr; i++) /* rows of A: unit stride in p unless transposed */
                for (size_t p = 0; p < kc; p++)
                    dst[p * mr + i] = i < rows ? a_at(g, i0 + is + i, p0 + p) : 0.0f;
        }
        for (size_t js = 0; js < nt; js += nr) {
            const size_t cols = nt - js < nr ? nt - js : nr;
            float *dst = pack_b + js * kc;
            for (size_t p = 0; p < kc; p++) { /* rows of B: a contiguous copy unless transposed */
                float *d = dst + p * nr;
                if (!g->trans_b) {
                    const float *src = g->b + (p0 + p) * g->ldb + j0 + js;
                    for (size_t j = 0; j < cols; j++) d[j] = src[j];
                } else {
                    for (size_t j = 0; j < cols; j++) d[j] = b_at(g, p0 + p, j0 + js + j);
                }
                for (size_t j = cols; j < nr; j++) d[j] = 0.0f;
            }
        }
        const int acc = p0 > 0 || g->accumulate;
        for (size_t js = 0; js < nt; js += nr)
            for (size_t is = 0; is < mt; is += mr)
                g->kern->gemm_ukernel(kc, pack_a + is * kc, pack_b + js * kc,
                                      g->c + (i0 + is) * g->ldc + j0 + js, g->ldc, acc,
                                      mt - is < mr ? mt - is : mr, nt - js < nr ? nt - js : nr);
    }
}

void fconv_gemm_packed(const struct fconv_kernels *kern, int threads, int trans_a, int trans_b, size_t m,
                       size_t n, size_t k, const float *a, size_t lda, const float *b, size_t ldb,
                       int accumulate, float *c, size_t ldc) {
    if (m == 0 || n == 0) return;
    if (k == 0) { /* C = 0 (or unchanged), as BLAS does with beta */
        if (!accumulate)
            for (size_t i = 0; i < m; i++)
                for (size_t j = 0; j < n; j++) c[i * ldc + j] = 0.0f;
        return;
    }
    struct packed_ctx g = {kern, trans_a, trans_b, accumulate, m, n, k, lda, ldb, ldc,
                           (n + TILE_N - 1) / TILE_N, a, b, c};
    fconv_parallel_1d(threads, ((m + TILE_M - 1) / TILE_M) * g.tiles_n, packed_tile_task, &g);
}
