/*
 * winograd-channels-last.c — Winograd F(m x m, 3 x 3), m = 2, 4 or 6, with the channels in the
 * vector lanes where the NCHW driver (winograd.c) keeps the tiles. winograd.c hands it the
 * NHWC plans it serves (fconv_wino_channels_last_serves) but a few whose one strip of tiles
 * that driver runs faster, and NCHW plans where it is the faster driver (both:
 * fconv_wino_channels_last_runs). In NHWC a pixel's channels sit side by side, and every step
 * reads and writes them as whole vectors:
 *   1. a tile's alpha x alpha patch is alpha runs of alpha pixels, each run alpha·C
 *      consecutive floats of x, transformed where it lies by the tile-minor kernels of
 *      winograd-tiles.c with the C channels as their "tiles" (a pixel C floats apart, a row
 *      W·C) into V[ξν][tile][c]; a patch that leaves the image is first copied whole into the
 *      worker's patch buffer, with zeros there;
 *   2. M[ξν][tile][k] = sum_c V[ξν][tile][c] · U[ξν][k][c] on implicit-gemm's register tile,
 *      whose pixels (broadcast) are here tiles and whose taps are the channels: a tile's row
 *      of V is read in place, U is packed as that tile's weights, and M is stored channels
 *      last;
 *   3. the output transform, output channels in the lanes, adds the bias, applies ReLU and
 *      stores a tile's m x m pixels in y, K floats a pixel; a tile that reaches past the
 *      output's edge goes through a buffer whence its valid pixels are copied.
 * NCHW x and y: the tiles go by segments (a block's tiles within one tile row); a segment's
 * alpha input rows are transposed into the worker's buffer as NHWC rows (zeros outside the
 * image), its patches read from there, and its m output rows leave the output transform into
 * a second buffer whence they are transposed into y's planes: each input row is transposed
 * alpha / m times, in the caches, never a whole-tensor copy.
 * Work units are blocks of consecutive tiles (all images), each run whole by one worker with
 * its own buffers, shared out as fconv_parallel_steal does; a unit's arithmetic never depends
 * on the worker. Through layout.c's whole-tensor NCHW copies instead, each copy costs a pass
 * over x or y (0.3 ns a float beside winograd-4x4, 2 threads).
 */
#include <stdint.h>
#include <string.h>

#include "algo/winograd.h"
#include "core/dispatch.h"
#include "core/cost-model.h"
#include "core/internal.h"
#include "core/parallel.h"

/* V and M of one block aim at this many floats together (1 MiB, a Zen 5 core's L2; a block
 * holds at most WINO_CL_MAX_BLOCK tiles). Against the NCHW driver's 2 MiB (2 threads,
 * winograd-4x4, 7 alternated rounds): 8 x 64 x 56^2 1.19x, 1 x 64 x 224^2 1.14, 8 x 128 x 28^2
 * 1.11, 1 x 128 x 112^2 1.08; in 5 rounds 8 x 256 x 14^2 1.07, 1 x 256 x 56^2 1.06, the
 * batch-1 layers whose blocks the thread count bounds unchanged. 512 KiB was no better. */
#define WINO_CL_BLOCK_TARGET_FLOATS ((int64_t)1 << 18)
#define WINO_CL_MAX_BLOCK ((int64_t)256)
/* Every block reads all of U. Past half the last-level cache U comes from memory for each
 * block, and blocks grow until V and M together reach U's size (2 threads, 3 alternated
 * rounds against the NCHW copies: 1 x 512 x 7^2 0.78 -> 0.43 ms, 1 x 512 x 28^2 3.89 ->
 * 3.02, 8 x 512 x 14^2 8.09 -> 7.90, with half of U; then U's size against half, 7 rounds,
 * the batches whose tiles fill several blocks: 8 x 256 x 28^2 -> 512 NHWC 1.12x, 8 x 512 x
 * 14^2 NHWC 1.08, 8 x 512 x 28^2 NCHW 1.08 (1.5 times U's size: 1.13, 1.07, 1.09 alike);
 * memory traffic for U halved outweighs V and M leaving the last-level cache). */
#define WINO_CL_U_CACHED_BYTES ((double)FCONV_LLC_BYTES / 2)
/* U this small stays in each core's L2 while a worker runs whole blocks (the NCHW driver's
 * WINO_U_PRIVATE_BYTES). */
#define WINO_CL_U_PRIVATE_BYTES ((double)(1 << 20))
/* Where U is past a core's L2, every block reads all of it from the shared cache (or memory)
 * while its products run, each U float feeding one multiply-add per tile of the block: blocks
 * then hold enough tiles that reading U at fconv_cpu_info.shared_read_bytes_per_s takes at most
 * this share of the products' time at the tile's rate (Intel's 12 GB/s: 36 tiles, whole register
 * tiles up; Zen 5's 47 GB/s: 9, below its 1 MiB blocks). Emerald Rapids VM, 2 threads,
 * winograd-4x4, 15 alternated rounds, 42 tiles a block against the 1 MiB of V and M (14 tiles
 * with 128 -> 256 or 256 -> 256 channels, 28 with 128 -> 128), NCHW / NHWC: 1 x 128 x 56^2 -> 256
 * 1.10 / 1.02x, batch 8 1.14 / 1.07x, 1 x 256 x 56^2 1.19 / 1.13x, batch 8 1.24 / 1.20x; 8 x 128
 * x 28^2 1.05 / 0.97x, 128 channels on 112^2 level. A sweep of 24-96 tiles on the 56^2 layers
 * found 36-72 alike, 24 no better than 14; on the 128 -> 128 layers 56 tiles (V and M past half of
 * the 2 MiB L2) were 0.91-0.99x the 28. */
#define WINO_CL_U_READ_SHARE 0.5

struct cl_geometry {
    const struct fconv_wino_matrices *mat;
    const struct fconv_kernels *kern;
    int64_t m, alpha, a2;
    int64_t n, c, k, h, w, p, q, pad_top, pad_left;
    int64_t tiles_h, tiles_w, tiles; /* tiles of all images together */
    int64_t px, lanes, block, kblocks; /* implicit-gemm's tile: px tiles by block channels */
    int64_t tb, blocks;                /* tiles per block (a multiple of px where there are more), blocks */
    int relu;
    int nchw;                          /* x and y NCHW: the input rows a segment reads and its
                                          output rows go through per-thread NHWC buffers */
    int64_t seg_tiles;                 /* NCHW: the most tiles of one tile row a step runs */
    int phase_mode;                    /* each block's steps split across the threads (else whole
                                          blocks per worker) */
    int u_streams;                     /* U is read from beyond a core's L2: the products ask for
                                          it ahead (FCONV_IG_WEIGHT_STREAMS) */
    int u_next;                        /* and faster than the shared cache delivers it: the
                                          products ask for the next channel block's U too */
    size_t u_floats;                   /* U packed: a2 · kblocks · C · block */
    /* workspace: [channel offsets][U, weights at execute time][V, M per set][patch, out per
     * thread]: a set per worker running whole blocks, one shared in phase mode */
    size_t offsets_bytes, u_bytes, patch_bytes, v_bytes, m_bytes, out_bytes, sets, threads, total;
};

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Tiles per block where g's tiles go in `blocks` blocks as evenly as whole register tiles allow
 * (the last block holds what is left). */
static int64_t balanced_block_tiles(const struct cl_geometry *g, int64_t blocks) {
    return ((g->tiles + blocks - 1) / blocks + g->px - 1) / g->px * g->px;
}

static struct cl_geometry cl_geometry(const fconv_plan *plan, int m) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    struct cl_geometry g;
    memset(&g, 0, sizeof g);
    g.mat = fconv_wino_matrices_for(m);
    g.kern = plan->kernels;
    g.m = m;
    g.alpha = m + 2;
    g.a2 = g.alpha * g.alpha;
    g.n = d->n;
    g.c = d->c;
    g.k = d->k;
    g.h = d->h;
    g.w = d->w;
    g.p = plan->out_h;
    g.q = plan->out_w;
    g.pad_top = d->pad_top;
    g.pad_left = d->pad_left;
    g.relu = d->activation == FCONV_ACTIVATION_RELU;
    g.tiles_h = (g.p + m - 1) / m;
    g.tiles_w = (g.q + m - 1) / m;
    g.tiles = g.n * g.tiles_h * g.tiles_w;
    g.px = (int64_t)g.kern->implicit_gemm_px;
    g.lanes = (int64_t)g.kern->lanes;
    g.block = (int64_t)g.kern->implicit_gemm_nv * g.lanes;
    g.kblocks = (g.k + g.block - 1) / g.block;
    /* Whole blocks per worker where U stays in a core's L2 or the blocks share out (at
     * least two per thread: a worker done early takes what the other has not begun);
     * otherwise each block's input transform, products and output transform are split
     * across the threads, the products by ξν, so that each thread reads only its share of U
     * (1 x 256 x 14^2, 16 tiles and U of 9.4 MB: whole blocks of 7 tiles had each worker
     * read all of U for every block). */
    const int64_t threads = plan->threads > 1 ? plan->threads : 1;
    const double u_bytes = 4.0 * (double)(g.a2 * g.c * g.k);
    int64_t vm_target = WINO_CL_BLOCK_TARGET_FLOATS;
    const int64_t u_floats = (int64_t)(u_bytes / sizeof(float));
    if (u_bytes > WINO_CL_U_CACHED_BYTES && u_floats > vm_target) vm_target = u_floats;
    int64_t tb = vm_target / (g.a2 * (g.c + g.k));
    if (u_bytes > WINO_CL_U_PRIVATE_BYTES) {
        const double madds_per_s = fconv_implicit_gemm_tile_flops_per_second(g.kern->isa) / 2.0;
        const double u_tiles = sizeof(float) * madds_per_s / (WINO_CL_U_READ_SHARE * fconv_cpu()->shared_read_bytes_per_s);
        if ((double)tb < u_tiles) tb = ((int64_t)u_tiles / g.px + 1) * g.px;
    }
    tb = min64(tb, WINO_CL_MAX_BLOCK);
    /* All the tiles in one block where their V and M together are no larger than U, which
     * would otherwise be read again for every block: past a core's L2 it comes from the
     * shared cache, on the Sapphire Rapids VM at ~10 GB/s a core (1 x 256 x 14^2 NHWC, 16
     * tiles in blocks of 7: U's 9.4 MB three times on one thread). */
    if (u_bytes > WINO_CL_U_PRIVATE_BYTES && g.tiles <= WINO_CL_MAX_BLOCK &&
        4.0 * (double)(g.a2 * (g.c + g.k) * g.tiles) <= u_bytes)
        tb = g.tiles;
    /* more blocks than threads only to share them out: one thread runs them all alike */
    const int64_t tb_shared = threads > 1 ? min64(tb, (g.tiles + 2 * threads - 1) / (2 * threads)) : tb;
    g.phase_mode = threads > 1 && u_bytes > WINO_CL_U_PRIVATE_BYTES && tb_shared < tb / 2;
    if (!g.phase_mode) tb = tb_shared;
    g.u_streams = u_bytes > WINO_CL_U_PRIVATE_BYTES;
    g.u_next = g.u_streams && fconv_implicit_gemm_tile_read_ratio(g.kern->isa, (double)g.px) > 1.0;
    tb = tb < g.px ? g.px : tb >= g.tiles ? g.tiles : tb / g.px * g.px;
    g.blocks = (g.tiles + tb - 1) / tb;
    /* A few whole blocks per worker: as many for each, the blocks a little larger (the five
     * blocks of 42 tiles a 56^2 map's 196 made with U's reads kept one worker three blocks
     * against two; as four of 49, 2 threads, Emerald Rapids VM, 31 alternated rounds, two
     * copies of each plan: 1 x 256 x 56^2 NCHW 1.00-1.15x, 1 x 128 x 56^2 -> 256 1.14x). */
    if (!g.phase_mode && threads > 1 && g.blocks > threads && g.blocks < 4 * threads) {
        const int64_t even = g.blocks / threads * threads, even_tb = balanced_block_tiles(&g, even);
        if ((g.tiles + even_tb - 1) / even_tb == even) g.blocks = even;
    }
    g.tb = balanced_block_tiles(&g, g.blocks);
    g.blocks = (g.tiles + g.tb - 1) / g.tb;
    g.u_floats = (size_t)(g.a2 * g.kblocks * g.c * g.block);
    g.offsets_bytes = fconv_round_up_64((size_t)g.c * sizeof(int32_t));
    g.u_bytes = plan->weights ? 0 : fconv_round_up_64(g.u_floats * sizeof(float));
    g.nchw = d->layout != FCONV_LAYOUT_NHWC;
    g.seg_tiles = min64(g.tb, g.tiles_w);
    g.patch_bytes = fconv_round_up_64((size_t)(g.a2 * g.c) * sizeof(float));
    g.v_bytes = fconv_round_up_64((size_t)(g.a2 * g.tb * g.c) * sizeof(float));
    g.m_bytes = fconv_round_up_64((size_t)(g.a2 * g.tb * g.k) * sizeof(float));
    g.out_bytes = fconv_round_up_64((size_t)(g.m * g.m * g.k) * sizeof(float));
    if (g.nchw) { /* the patch and output buffers hold a segment's rows */
        g.patch_bytes = fconv_round_up_64((size_t)(g.alpha * (g.seg_tiles * g.m + g.alpha - g.m) * g.c) * sizeof(float));
        g.out_bytes = fconv_round_up_64((size_t)(g.m * g.seg_tiles * g.m * g.k) * sizeof(float));
    }
    g.threads = (size_t)threads;
    g.sets = g.phase_mode ? 1 : (size_t)min64(threads, g.blocks);
    g.total = g.offsets_bytes + g.u_bytes + g.sets * (g.v_bytes + g.m_bytes) + g.threads * (g.patch_bytes + g.out_bytes);
    return g;
}

int fconv_wino_channels_last_serves(const fconv_plan *plan, int m) {
    if (plan->kind != FCONV_KIND_CONV2D || m == 3) return 0;
    const fconv_conv2d_desc *d = &plan->conv2d;
    /* The transforms run 16 channels at a time (FCONV_WINO_STRIP); one group (a group's
     * channels would be a stride apart in V and in y). */
    if (d->groups != 1 || d->c % FCONV_WINO_STRIP != 0 || d->k % FCONV_WINO_STRIP != 0) return 0;
    return 1;
}

size_t fconv_wino_channels_last_workspace(const fconv_plan *plan, int m) { return cl_geometry(plan, m).total; }

/* Tiles of block b (the last may hold fewer). */
static int64_t block_tiles(const struct cl_geometry *g, size_t b) { return min64(g->tb, g->tiles - (int64_t)b * g->tb); }

double fconv_wino_channels_last_columns(const fconv_plan *plan, int m, double *product_columns,
                                        double *whole_tile_columns) {
    const struct cl_geometry g = cl_geometry(plan, m);
    /* The products go px tiles at a time, a block's last few on a narrow tile where the
     * channel blocks are whole (implicit-gemm-tile.c), else on a whole one. */
    double products = 0.0, whole_tiles = 0.0;
    for (size_t b = 0; b < (size_t)g.blocks; b++) {
        const double whole = (double)((block_tiles(&g, b) + g.px - 1) / g.px * g.px);
        whole_tiles += whole;
        products += g.k % g.block == 0 ? (double)block_tiles(&g, b) : whole;
    }
    if (product_columns) *product_columns = products;
    if (whole_tile_columns) *whole_tile_columns = whole_tiles;
    return (double)g.tiles;
}

/* ---- U: per ξν and block of output channels, implicit-gemm's weights (tap c's vectors,
 * nv·lanes floats of channels kb·block ..., then tap c + 1's); every block reserves C·block
 * floats, so each starts 64-byte aligned. K is a multiple of 16: no lane lies past it. */

struct u_ctx {
    const struct cl_geometry *g;
    const float *w;
    float *u;
};

static void u_task(const void *vctx, size_t kk) {
    const struct u_ctx *ctx = vctx;
    const struct cl_geometry *g = ctx->g;
    const int64_t k = (int64_t)kk, kb = k / g->block, j = k % g->block;
    const int64_t width = min64(g->block, g->k - kb * g->block); /* the block's nv·lanes */
    const size_t xn_step = (size_t)(g->kblocks * g->c * g->block);
    for (int64_t c = 0; c < g->c; c++)
        fconv_wino_transform_filter(g->mat, ctx->w + (k * g->c + c) * 9,
                                    ctx->u + (size_t)(kb * g->c * g->block + c * width + j), xn_step);
}

static void transform_weights(const struct cl_geometry *g, int threads, const float *w, float *u) {
    struct u_ctx ctx = {g, w, u};
    fconv_parallel_1d(threads, (size_t)g->k, u_task, &ctx);
}

fconv_status fconv_wino_channels_last_prepare(fconv_plan *plan, int m) {
    if (!plan->weights) return FCONV_OK;
    struct cl_geometry g = cl_geometry(plan, m);
    float *u = fconv_alloc_aligned(g.u_floats * sizeof(float));
    if (!u)
        return fconv_fail(FCONV_ENOMEM, "winograd-%dx%d: cannot allocate %zu bytes for the transformed weights", m,
                          m, g.u_floats * sizeof(float));
    transform_weights(&g, plan->threads, plan->weights, u);
    plan->algo_state = u;
    return FCONV_OK;
}

/* ---- execute ------------------------------------------------------------------------------ */

struct cl_ctx {
    const struct cl_geometry *g;
    const float *x, *u, *bias;
    const int32_t *offsets; /* 0 .. C-1: the tile's taps are V's channels in place */
    float *y;
    char *scratch;          /* the workers' buffers */
    int stream;             /* y through non-temporal stores: NHWC tiles, NCHW whole rows (execute) */
};

/* Tile t (of all images): its image and its first output row and column. */
struct tile_origin {
    int64_t n, row, col;
};

static struct tile_origin tile_origin(const struct cl_geometry *g, int64_t t) {
    const int64_t per_image = g->tiles_h * g->tiles_w;
    const struct tile_origin o = {t / per_image, t % per_image / g->tiles_w * g->m, t % g->tiles_w * g->m};
    return o;
}

/* Tile t's patch, alpha rows of alpha pixels, C floats a pixel: where it lies wholly inside
 * the image, x as it lies (*row_step = W·C); otherwise copied into d with zeros where it
 * leaves the image (*row_step = alpha·C). */
static const float *tile_patch(const struct cl_geometry *g, const float *x, int64_t t, float *d, size_t *row_step) {
    const struct tile_origin o = tile_origin(g, t);
    const int64_t n = o.n, row0 = o.row - g->pad_top, col0 = o.col - g->pad_left;
    if (row0 >= 0 && row0 + g->alpha <= g->h && col0 >= 0 && col0 + g->alpha <= g->w) {
        *row_step = (size_t)(g->w * g->c);
        return x + ((n * g->h + row0) * g->w + col0) * g->c;
    }
    const int64_t run = g->alpha * g->c; /* a patch row: alpha pixels of an image row of W·C floats */
    for (int64_t i = 0; i < g->alpha; i++) {
        float *di = d + i * run;
        const int64_t r = row0 + i;
        if (r < 0 || r >= g->h) fconv_zero_floats(di, run);
        else fconv_copy_padded_row(di, run, x + (n * g->h + r) * g->w * g->c, g->w * g->c, col0 * g->c);
    }
    *row_step = (size_t)run;
    return d;
}

/* A block's nt tiles: M[ξν][tile] = V[ξν][tile] · U[ξν]^T for ξν in [xn0, xn1), register
 * tile by register tile, ξν by ξν and channel block by block (a block's U, C·block floats,
 * serves all nt tiles). Where U streams from beyond L2, the first register tile of each
 * channel block reads that block's U from there and the others from L1 and L2; where the tile
 * reads it faster than the shared cache gives it (u_next: Intel's cores, measured there only)
 * the others share out asking for the next block's U into L2, a line a channel (the tile's
 * `ahead`), so that the next first tile finds it there. Emerald Rapids VM, 2 threads,
 * winograd-4x4, 21 alternated rounds, two copies of each plan, NCHW / NHWC: 1 x 512 x 28^2
 * 1.08-1.10 / 1.10-1.13x, 8 x 256 x 28^2 -> 512 1.10-1.12 / 1.10-1.12x, 8 x 512 x 7^2 NHWC
 * 1.11-1.14x, 1 x 256 x 56^2 1.03-1.06 / 1.04-1.15x, 1 x 128 x 56^2 -> 256 1.04-1.06 / 1.05x, 8
 * x 128 x 28^2 1.02-1.04x, 1 x 128 x 112^2 1.01-1.04x; blocks of 16 tiles (14^2 and 16^2 maps,
 * 3 register tiles) level. */
static void multiply(const struct cl_ctx *ctx, int64_t xn0, int64_t xn1, int64_t nt, const float *v, float *mm) {
    const struct cl_geometry *g = ctx->g;
    const float *bases[FCONV_IMPLICIT_GEMM_PX_MAX];
    for (int64_t xn = xn0; xn < xn1; xn++) {
        const float *vx = v + xn * g->tb * g->c;
        float *mx = mm + xn * g->tb * g->k;
        for (int64_t kb = 0; kb < g->kblocks; kb++) {
            const int64_t nch = min64(g->block, g->k - kb * g->block), nv = (nch + g->lanes - 1) / g->lanes;
            const float *uw = ctx->u + (size_t)((xn * g->kblocks + kb) * g->c * g->block);
            /* the next channel block's U (every block reserves C·block floats), in this range */
            const int last = xn == xn1 - 1 && kb == g->kblocks - 1;
            const float *next = g->u_next && !last ? uw + g->c * g->block : NULL;
            const size_t lines = (size_t)(g->c * g->block / 16), later = (size_t)((nt - 1) / g->px);
            for (int64_t t = 0; t < nt; t += g->px) {
                const int64_t npix = min64(g->px, nt - t);
                for (int64_t e = 0; e < g->px; e++) bases[e] = vx + (t + min64(e, npix - 1)) * g->c;
                /* register tile u's share of the next U's lines */
                const size_t u = (size_t)(t / g->px);
                size_t from;
                const size_t asked = fconv_implicit_gemm_ahead_share(u, u, later, lines, &from);
                g->kern->implicit_gemm_tile((size_t)g->c, bases, ctx->offsets, uw, (size_t)nv,
                                            mx + t * g->k + kb * g->block, (size_t)g->k, 1, (size_t)npix,
                                            (size_t)nch, NULL, 0, g->u_streams ? FCONV_IG_WEIGHT_STREAMS : 0,
                                            NULL, NULL, NULL, next && u ? next + from * 16 : NULL, asked);
            }
        }
    }
}

/* A worker's buffers: V and M of set `set`, the patch and output buffers of thread `worker`. */
struct cl_buffers {
    float *v, *mm, *patch, *out;
};

static struct cl_buffers buffers(const struct cl_ctx *ctx, size_t set, size_t worker) {
    const struct cl_geometry *g = ctx->g;
    char *sets = ctx->scratch, *own = sets + g->sets * (g->v_bytes + g->m_bytes) + worker * (g->patch_bytes + g->out_bytes);
    struct cl_buffers b = {(float *)(sets + set * (g->v_bytes + g->m_bytes)),
                           (float *)(sets + set * (g->v_bytes + g->m_bytes) + g->v_bytes), (float *)own,
                           (float *)(own + g->patch_bytes)};
    return b;
}

/* The lines of `count` floats from p in each of `planes` planes `plane` floats apart, asked for
 * ahead of a transpose (into L1; `write`: with intent to write). The transposes read and write
 * a row of every channel plane at once, C streams the hardware prefetchers do not follow: asking
 * for the next row's lines while one row is transposed, 2 threads, winograd-4x4 NCHW, 7
 * alternated rounds: input rows 8 x 64 x 56^2 1.05-1.07x, 1 x 64 x 56^2 1.04-1.12, 1 x 128 x
 * 56^2 -> 256 1.03-1.06, 8 x 128 x 28^2 1.02-1.06 (into L2 instead: 1.00-1.03); the output
 * rows besides 1.00-1.03 more; both against neither 8 x 64 x 56^2 1.08, 1 x 128 x 56^2 -> 256
 * 1.03, 1 x 256 x 56^2 1.03 (perf, one thread, 8 x 64 x 56^2: the transposes had been ~30% of
 * the samples, the products ~40). */
static void prefetch_plane_rows(const float *p, size_t plane, size_t planes, size_t count, int write) {
    for (size_t ch = 0; ch < planes; ch++, p += plane)
        for (size_t j = 0; j < count + 15; j += 16) { /* 16 floats: a 64-byte line; the last j the
                                                         row's last float, whatever p's alignment */
            const float *at = p + (j < count ? j : count - 1);
            if (write) __builtin_prefetch(at, 1, 3);
            else __builtin_prefetch(at, 0, 3);
        }
}

/* NCHW: the tiles of one tile row from origin o on, nt of them (a segment): their alpha input
 * rows, from column o.col - pad_left on, transposed into d as rows of nt·m + alpha - m pixels,
 * C floats a pixel, zeros outside the image. */
static void segment_input_rows(const struct cl_geometry *g, const float *x, struct tile_origin o, int64_t nt, float *d) {
    const int64_t wseg = nt * g->m + g->alpha - g->m, col0 = o.col - g->pad_left;
    const int64_t j0 = col0 < 0 ? -col0 : 0, j1 = min64(wseg, g->w - col0);
    const size_t c = (size_t)g->c;
    for (int64_t i = 0; i < g->alpha; i++) {
        float *di = d + (size_t)(i * wseg) * c;
        const int64_t r = o.row - g->pad_top + i;
        if (r < 0 || r >= g->h || j1 <= j0) {
            memset(di, 0, (size_t)wseg * c * sizeof(float));
            continue;
        }
        if (j0 > 0) memset(di, 0, (size_t)j0 * c * sizeof(float));
        const float *row = x + ((o.n * g->c) * g->h + r) * g->w + col0 + j0;
        if (r + 1 < g->h) prefetch_plane_rows(row + g->w, (size_t)(g->h * g->w), c, (size_t)(j1 - j0), 0);
        g->kern->transpose(row, (size_t)(g->h * g->w), c, (size_t)(j1 - j0), di + (size_t)j0 * c, c);
        if (j1 < wseg) memset(di + (size_t)j1 * c, 0, (size_t)(wseg - j1) * c * sizeof(float));
    }
}

/* Tiles [first, last) of block b by segments: *nt of them from tile `first` on, all in one tile
 * row of one image, whose first tile's origin this returns. */
static struct tile_origin segment(const struct cl_geometry *g, size_t b, int64_t first, int64_t last, int64_t *nt) {
    const struct tile_origin o = tile_origin(g, (int64_t)b * g->tb + first);
    *nt = min64(last - first, g->tiles_w - o.col / g->m);
    return o;
}

/* NCHW: block b's tiles [first, last) through the input transform, into V. */
static void input_tiles_nchw(const struct cl_ctx *ctx, size_t b, int64_t first, int64_t last,
                             const struct cl_buffers *buf) {
    const struct cl_geometry *g = ctx->g;
    const fconv_wino_input_fn input = g->kern->wino_input[g->mat->input_slot];
    for (int64_t t = first, nt; t < last; t += nt) {
        const struct tile_origin o = segment(g, b, t, last, &nt);
        segment_input_rows(g, ctx->x, o, nt, buf->patch);
        const size_t row_step = (size_t)((nt * g->m + g->alpha - g->m) * g->c);
        for (int64_t e = 0; e < nt; e++)
            input(buf->patch + e * g->m * g->c, row_step, (size_t)g->c, buf->v + (t + e) * g->c,
                  (size_t)(g->tb * g->c), (size_t)g->c);
    }
}

/* NCHW: block b's tiles [first, last) from M through the output transform, the bias and ReLU
 * into the segment's m output rows (NHWC), whose valid pixels are transposed into y. */
static void output_tiles_nchw(const struct cl_ctx *ctx, size_t b, int64_t first, int64_t last,
                              const struct cl_buffers *buf) {
    const struct cl_geometry *g = ctx->g;
    const fconv_wino_output_fn output = g->kern->wino_output[g->mat->output_slot];
    const size_t k = (size_t)g->k, m_step = (size_t)(g->tb * g->k), plane = (size_t)(g->p * g->q);
    for (int64_t t = first, nt; t < last; t += nt) {
        const struct tile_origin o = segment(g, b, t, last, &nt);
        const size_t row_step = (size_t)(nt * g->m) * k;
        for (int64_t e = 0; e < nt; e++)
            output(buf->mm + (t + e) * g->k, m_step, buf->out + e * g->m * g->k, row_step, k, ctx->bias, g->relu, 0, k);
        const int64_t rows = min64(g->m, g->p - o.row), cols = min64(nt * g->m, g->q - o.col);
        float *y = ctx->y + ((o.n * g->k) * g->p + o.row) * g->q + o.col;
        if (ctx->stream && nt * g->m == g->q && (rows * g->q) % 16 == 0) {
            /* whole output rows: in each plane one run of rows·Q floats, which starts on a line
             * (ctx->stream), as the buffer's rows of nt·m = Q pixels hold them: one transpose */
            g->kern->transpose_streamed(buf->out, k, (size_t)(rows * g->q), k, y, plane);
            continue;
        }
        for (int64_t i = 0; i < rows; i++) {
            if (i + 1 < rows) prefetch_plane_rows(y + (i + 1) * g->q, plane, k, (size_t)cols, 1);
            g->kern->transpose(buf->out + (size_t)i * row_step, k, (size_t)cols, k, y + i * g->q, plane);
        }
    }
}

/* Block b's tiles [first, last) (of its nt) through the input transform, into V. */
static void input_tiles(const struct cl_ctx *ctx, size_t b, int64_t first, int64_t last, const struct cl_buffers *buf) {
    const struct cl_geometry *g = ctx->g;
    if (g->nchw) {
        input_tiles_nchw(ctx, b, first, last, buf);
        return;
    }
    const fconv_wino_input_fn input = g->kern->wino_input[g->mat->input_slot];
    for (int64_t t = first; t < last; t++) {
        size_t row_step;
        const float *d = tile_patch(g, ctx->x, (int64_t)b * g->tb + t, buf->patch, &row_step);
        input(d, row_step, (size_t)g->c, buf->v + t * g->c, (size_t)(g->tb * g->c), (size_t)g->c);
    }
}

/* Block b's tiles [first, last) from M through the output transform, the bias and ReLU into y:
 * straight there where all m x m outputs lie inside it, else through the worker's buffer
 * whence the valid pixels are copied. */
static void output_tiles(const struct cl_ctx *ctx, size_t b, int64_t first, int64_t last, const struct cl_buffers *buf) {
    const struct cl_geometry *g = ctx->g;
    if (g->nchw) {
        output_tiles_nchw(ctx, b, first, last, buf);
        return;
    }
    const fconv_wino_output_fn output = g->kern->wino_output[g->mat->output_slot];
    const size_t k = (size_t)g->k, m_step = (size_t)(g->tb * g->k);
    for (int64_t t = first; t < last; t++) {
        const struct tile_origin o = tile_origin(g, (int64_t)b * g->tb + t);
        const int64_t rows = min64(g->m, g->p - o.row), cols = min64(g->m, g->q - o.col);
        float *y = ctx->y + ((o.n * g->p + o.row) * g->q + o.col) * g->k;
        if (rows == g->m && cols == g->m) {
            output(buf->mm + t * g->k, m_step, y, (size_t)g->q * k, k, ctx->bias, g->relu, ctx->stream, k);
            continue;
        }
        output(buf->mm + t * g->k, m_step, buf->out, (size_t)g->m * k, k, ctx->bias, g->relu, 0, k);
        for (int64_t i = 0; i < rows; i++)
            memcpy(y + i * g->q * g->k, buf->out + i * g->m * g->k, (size_t)cols * k * sizeof(float));
    }
}

static void block_piece(const void *vctx, size_t first, size_t last, size_t worker) {
    const struct cl_ctx *ctx = vctx;
    const struct cl_buffers buf = buffers(ctx, worker, worker);
    for (size_t b = first; b < last; b++) {
        const int64_t nt = block_tiles(ctx->g, b);
        input_tiles(ctx, b, 0, nt, &buf);
        multiply(ctx, 0, ctx->g->a2, nt, buf.v, buf.mm);
        output_tiles(ctx, b, 0, nt, &buf);
    }
    if (ctx->stream) fconv_stream_fence();
}

/* Phase mode: one block's steps, each shared out (struct phase_ctx). */
struct phase_ctx {
    const struct cl_ctx *ctx;
    size_t b;
    int64_t nt;
};

static void input_piece(const void *vctx, size_t first, size_t last, size_t worker) {
    const struct phase_ctx *p = vctx;
    const struct cl_buffers buf = buffers(p->ctx, 0, worker);
    input_tiles(p->ctx, p->b, (int64_t)first, (int64_t)last, &buf);
}

static void multiply_piece(const void *vctx, size_t first, size_t last, size_t worker) {
    const struct phase_ctx *p = vctx;
    const struct cl_buffers buf = buffers(p->ctx, 0, worker);
    multiply(p->ctx, (int64_t)first, (int64_t)last, p->nt, buf.v, buf.mm);
}

static void output_piece(const void *vctx, size_t first, size_t last, size_t worker) {
    const struct phase_ctx *p = vctx;
    const struct cl_buffers buf = buffers(p->ctx, 0, worker);
    output_tiles(p->ctx, p->b, (int64_t)first, (int64_t)last, &buf);
    if (p->ctx->stream) fconv_stream_fence();
}

void fconv_wino_channels_last_execute(const fconv_plan *plan, int m, const float *x, const float *w,
                                      const float *bias, float *y, void *workspace) {
    const struct cl_geometry g = cl_geometry(plan, m);
    char *ws = workspace;
    int32_t *offsets = (int32_t *)ws;
    for (int64_t c = 0; c < g.c; c++) offsets[c] = (int32_t)c;
    const float *u = plan->algo_state;
    if (!plan->weights) {
        float *uw = (float *)(ws + g.offsets_bytes);
        transform_weights(&g, plan->threads, w, uw);
        u = uw;
    }
    struct cl_ctx ctx = {&g, x, u, plan->conv2d.has_bias ? bias : NULL, offsets, y,
                         ws + g.offsets_bytes + g.u_bytes, 0};
    /* A large y leaves through non-temporal stores, which skip reading its lines first. NHWC:
     * from the output transform (every vector of a tile lies whole in y when y is 64-byte
     * aligned, K being a multiple of 16). 2 threads, winograd-4x4, 5 alternated rounds: 1 x 64 x
     * 224^2 1.05x, 8 x 64 x 224^2 1.05, 8 x 64 x 112^2 -> 128 1.04, 8 x 128 x 112^2 1.02, 8 x 256
     * x 56^2 1.00. NCHW: the transposes of segments that are whole output rows (Q a multiple of
     * m), each plane's run of m rows starting on a line where m·Q and P·Q are multiples of 16.
     * Emerald Rapids VM, 2 threads, 15 alternated rounds, two copies of each plan: 8 x 128 x
     * 56^2 -> 256 1.05x, 8 x 256 x 56^2 1.03x, 8 x 256 x 28^2 -> 512 1.03x (outputs of 3.2 MB,
     * 8 x 128 x 28^2 and 1 x 256 x 56^2, ran 1.06x and 1.02x streamed: left cached for the next
     * layer); the same transposes by plain stores were 0.90-0.93x the rows' own (which ask for
     * y's lines ahead). */
    const int stream_rows = !g.nchw || (g.q % g.m == 0 && (g.m * g.q) % 16 == 0 && (g.p * g.q) % 16 == 0);
    ctx.stream = stream_rows && (uintptr_t)y % 64 == 0 && (double)plan->y_elems * sizeof(float) >= FCONV_STREAM_OUTPUT_BYTES;
    if (!g.phase_mode) {
        fconv_parallel_steal((int)g.sets, (size_t)g.blocks, 1, block_piece, &ctx);
        return;
    }
    /* NCHW: pieces of a tile row's tiles, whose input and output rows are transposed once
     * (pieces of one tile transposed each tile's alpha rows of alpha pixels: 1 x 128 x 28^2,
     * 2 threads, ran no faster than one) */
    const size_t grain = g.nchw ? (size_t)g.seg_tiles : 1;
    for (size_t b = 0; b < (size_t)g.blocks; b++) {
        struct phase_ctx p = {&ctx, b, block_tiles(&g, b)};
        fconv_parallel_steal((int)g.threads, (size_t)p.nt, grain, input_piece, &p);
        fconv_parallel_steal((int)g.threads, (size_t)g.a2, 1, multiply_piece, &p);
        fconv_parallel_steal((int)g.threads, (size_t)p.nt, grain, output_piece, &p);
    }
}
