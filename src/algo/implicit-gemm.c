/*
 * implicit-gemm.c — conv2d as the GEMM im2col would run, W[K/G][C/G·R·S] × cols, without the
 * column matrix: the register tile (kernels/implicit-gemm) holds a few output pixels by up to
 * 64 output channels and reads each input sample it needs where it lies, at the pixel's base
 * plus the tap's offset, from the image itself. Windows reaching into the padding leave out
 * their taps there (whole kernel rows per tile, and the columns of a row's first and last
 * window) where that is all the padding they reach, and read a zero-padded copy of the
 * image otherwise. Weights are packed to [group][channel block][tap][block width] (zero
 * past K/G), so a tap's channel vectors are consecutive. Strides and dilations
 * only change the two plan-time tables (pixel bases, tap offsets), not the work per output.
 * Taps go kernel row by kernel row (r, then input channel, then kernel column; NHWC: r, then
 * kernel column, then input channel, so that consecutive taps read consecutive floats), so
 * that a tile whose output rows all see kernel row r in the padding skips r's taps as one
 * range. NHWC (channels last) runs as it lies: the tables' offsets count pixels C floats
 * apart, the copy pads whole pixels, and the tile stores each pixel's channels side by side.
 * Every output is one register's sum over its tile's taps in that order, then bias and
 * ReLU: the same bits whatever thread computes it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/cost-model.h"
#include "core/dispatch.h"
#include "core/internal.h"
#include "core/parallel.h"

/* The problem as the tile sees it. */
struct ig_geometry {
    int64_t n, c, k, groups, cg, kg, p, q;
    int nhwc;               /* x and y channels last: x[n][h][w][c], y[n][p][q][k] */
    int64_t h, w;           /* the input plane */
    int64_t hp, wp;         /* the plane the taps read: x's own, or the zero-padded copy's */
    int64_t pixel_step;     /* floats from a pixel to the next in its row: 1, NHWC C */
    int64_t channel_step;   /* floats from a channel to the next in the plane the taps read:
                               hp·wp, NHWC 1 */
    int copy;               /* the windows reach into the padding and read a zero-padded copy */
    int edged;              /* they do, but read x in place: the rows they have in the padding
                               are left out per tile, the columns per pixel (edge_first/last) */
    int64_t edge_first;     /* edged: kernel columns a row's first window has left of x */
    int64_t edge_last;      /* edged: and its last window right of x */
    int64_t taps;           /* C/G·R·S, kernel row major: tap (r, c, s) is (r·C/G + c)·S + s,
                               NHWC (r·S + s)·C/G + c */
    int64_t row_taps;       /* taps per kernel row, C/G·S */
    int64_t px, nv, lanes;  /* the tile: up to px pixels x nv vectors of `lanes` channels */
    int64_t block;          /* channels per block, nv·lanes */
    int64_t blocks;         /* channel blocks per group, ceil(K/G / block) */
    int64_t row_tiles;      /* edged: tiles per output row, ceil(Q / px), each within its row
                               and as wide as the others or one less; 0: px pixels a tile
                               across the rows (the last tile fewer) */
    int64_t tiles;          /* pixel tiles per image: P·row_tiles, or ceil(P·Q / px) */
    int64_t pass;           /* images per parallel pass: all when read in place, else as many
                               padded copies as PASS_BYTES holds (at least one) */
    int64_t chunk;          /* taps per chunk: a tile goes over its taps chunk by chunk */
    int64_t ask_ahead_tiles; /* where the tile outruns the shared cache, the most tiles of a
                               block (chunked: any) whose later ones ask for the next chunk's
                               weights (pairs_task) */
};

/* Padded copies made at once. A pass is two parallel regions (copy, tiles) whose threads
 * then share out every image's tiles: one pass per image made batches of 8 wait at 16
 * barriers and split small maps unevenly (2 threads, 8 x 512 x 14^2 3x3/2: 8.7-9.0 ->
 * 8.4-8.6 ms; 8 x 256 x 28^2: 8.7 -> 8.4-8.6). 8 MiB holds 8 copies for ResNet-50's stem
 * and deep strided layers, 4 for 128 channels on 57^2. */
#define PASS_BYTES ((int64_t)8 << 20)

/* Bytes of a core's L2 (1 MiB on Zen 4 and 5) a block's weights and a run's inputs may hold. */
#define L2_BYTES ((int64_t)768 << 10)

/* The tile's flops a second on one thread (core/cost-model.h). */
static double tile_flops_per_second(const struct fconv_kernels *kern) {
    return fconv_implicit_gemm_tile_flops_per_second(kern->isa);
}

/* A block's weights for one chunk of the taps, where the kernel is one column wide (S = 1:
 * every tap reads a line of another channel's plane, from L2). Above this a run of tiles goes
 * over its taps chunk by chunk, every tile of the run through one chunk before the next, so
 * that the chunk's weights stay in L2 for the run (a tile's sums wait between chunks in a
 * buffer). Without chunks a block's weights past L2 came from L3 for every tile, beside the
 * input lines from L2: one thread, Zen 5, C -> 512 1x1 on 7^2 ran at 206-212 GFLOP/s up to
 * C = 1024 (256 KiB a block), 187 at 2048 and 159-163 at 4096; 2 threads, 7 alternated
 * rounds, 2048 -> 512 0.298 -> 0.264 ms. The taps of a wider kernel's row read their lines
 * again from L1, and its weights from L3 kept up (3x3/2 layers at 92-95% of the FMA peak on
 * one thread with 295 KiB to 1.2 MiB a block): chunked, 128 x 56^2 and 256 x 28^2 3x3/2
 * were 5-6% slower. Not on Intel's cores, which read the shared cache at a third of Zen's
 * rate (fconv_cpu_info.shared_read_bytes_per_s): a block's weights past L2 then come more
 * slowly than the tile uses them (each weight feeds px multiply-adds: ~30 GB/s a core), and
 * wider kernels are chunked too. 2 threads, Ice Lake VM, 512 -> 512 3x3/2 on 14^2 (1.2 MiB a
 * block), with the runs of every tile (run_tiles), against two copies of the old binary: NHWC
 * 21 alternated rounds 1.59 / 1.48 -> 1.39 ms (fastest 1.15 -> 0.98), NCHW 15 rounds 1.83 ->
 * 1.60; batch 8, 7 rounds, NCHW 13.5 -> 11.8, NHWC 11.7 / 10.5 -> 10.4 (oneDNN 10.9-12.1). */
#define CHUNK_WEIGHT_BYTES ((int64_t)256 << 10)

/* Unchunked, a worker's tiles of a block ask for the next block's weights where the first
 * tile's wait for its own would be at least this share of their time. */
#define ASK_AHEAD_MIN_WAIT 0.05

/* Tiles that hold every weight vector in a register (implicit_gemm_px_registers: AVX-512 6 x
 * 64, 10 loads a tap for 24 multiply-adds) rather than the widest (7 x 64, 17 loads for 28),
 * on cores that issue one 512-bit load a cycle, where the wider one waits on its loads; only
 * with whole channel blocks (the narrow tile's instances). 2 threads, Ice Lake VM, both plans
 * in one process, 15-21 alternated rounds, medians: 3x3/2 with pad 1 128 x 56^2 NCHW 1.15x,
 * NHWC 1.30x, 256 x 28^2 NCHW 1.07-1.12x, NHWC 1.19-1.27x, batch 8 1.07-1.25x; the NHWC stem
 * 1.17x; NHWC 1x1 512 -> 256 on 28^2 1.32x, 1024 -> 512 on 14^2 1.31x, 64 -> 256 on 56^2
 * 1.12x; 1x1 on 7^2 (49 pixels: 8 tiles of 6 and one of 1) 512 -> 2048 and 2048 -> 512 NCHW
 * 1.14-1.15x, NHWC 1.20x, batch 8 NCHW 1.15x. */
static int64_t tile_pixels(const struct fconv_kernels *kern, const fconv_conv2d_desc *d, int64_t q, int reach,
                           int64_t block) {
    const int64_t narrow = (int64_t)kern->implicit_gemm_px_registers, wide = (int64_t)kern->implicit_gemm_px;
    if (narrow >= wide || !fconv_cpu()->wide_loads_slow || (d->k / d->groups) % block != 0) return wide;
    /* Padded layers tile each row apart (row_tiles), and a row's narrowest tile must not drop
     * below 4 pixels: each tap reads its weight vectors, from L2 where a block's outgrow L1,
     * for only those pixels (8 x 128 x 14^2 3x3/2, rows of 7 as 4 + 3 rather than 7: 0.63x;
     * rows of 14 as 5 + 5 + 4 rather than 7 + 7: 1.12-1.25x). */
    const int64_t row_tiles = (q + narrow - 1) / narrow;
    return reach && q / row_tiles < 4 && q >= 4 ? wide : narrow;
}

/* The prepared plan's state. */
struct ig_state {
    int32_t *tap_offsets;  /* [taps]: c·plane + r·dh·wp + s·dw, from a group's first channel */
    int32_t *pixel_bases;  /* [P·Q]: p·sh·wp + q·sw (edged: less pt·w + pl, the padding) */
    float *packed;         /* plan-time weights packed, or NULL */
    int64_t px;            /* the tile width chosen at prepare (tile_pixels), which the
                              tables' padding offsets depend on */
};

static void ig_geometry(const fconv_plan *plan, struct ig_geometry *g) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    const struct fconv_kernels *kern = plan->kernels;
    g->n = d->n;
    g->c = d->c;
    g->k = d->k;
    g->groups = d->groups;
    g->cg = d->c / d->groups;
    g->kg = d->k / d->groups;
    g->p = plan->out_h;
    g->q = plan->out_w;
    g->nhwc = d->layout == FCONV_LAYOUT_NHWC;
    g->h = d->h;
    g->w = d->w;
    /* The rows and columns of the padded image any window touches. */
    int64_t rows = (g->p - 1) * d->stride_h + (d->r - 1) * d->dilation_h + 1;
    int64_t cols = (g->q - 1) * d->stride_w + (d->s - 1) * d->dilation_w + 1;
    const int reach = !(d->pad_top == 0 && d->pad_left == 0 && rows <= d->h && cols <= d->w);
    g->nv = (int64_t)kern->implicit_gemm_nv;
    g->lanes = (int64_t)kern->lanes;
    g->block = g->nv * g->lanes;
    g->blocks = (g->kg + g->block - 1) / g->block;
    const struct ig_state *prepared = plan->algo_state;
    g->px = prepared ? prepared->px : tile_pixels(kern, d, g->q, reach, g->block);
    /* Read in place where a tile's windows reach the padding only by whole kernel rows (tiles
     * within one output row) or by the columns of the row's first and last window: the tile
     * leaves those rows out, the kernel those pixels' columns. A row's tiles narrower than
     * the kernel's widest need whole channel blocks (the kernel's narrow instances). Padding
     * past a kernel's extent goes through the copy, which keeps the pixel bases near the
     * image. */
    const int64_t extent_h = (d->r - 1) * d->dilation_h, extent_w = (d->s - 1) * d->dilation_w;
    const int64_t last_col = (g->q - 1) * d->stride_w - d->pad_left; /* the last window's first column */
    const int whole_tiles = g->px == (int64_t)kern->implicit_gemm_px && g->q % g->px == 0;
    g->edged = reach && (whole_tiles || g->kg % g->block == 0) && d->pad_top <= extent_h &&
               d->pad_bottom <= extent_h && d->pad_left <= d->stride_w && last_col - d->stride_w + extent_w < d->w &&
               last_col >= 0;
    g->edge_first = g->edge_last = 0;
    for (int64_t sc = 0; g->edged && sc < d->s; sc++) {
        g->edge_first += sc * d->dilation_w < d->pad_left;
        g->edge_last += last_col + sc * d->dilation_w >= d->w;
    }
    g->copy = reach && !g->edged;
    g->hp = g->copy ? rows : d->h;
    g->wp = g->copy ? cols : d->w;
    g->pixel_step = g->nhwc ? g->c : 1;
    g->channel_step = g->nhwc ? 1 : g->hp * g->wp;
    g->taps = g->cg * d->r * d->s;
    g->row_taps = g->cg * d->s;
    g->row_tiles = g->edged ? (g->q + g->px - 1) / g->px : 0;
    g->tiles = g->edged ? g->p * g->row_tiles : (g->p * g->q + g->px - 1) / g->px;
    int64_t image_bytes = g->c * g->hp * g->wp * (int64_t)sizeof(float);
    g->pass = !g->copy ? g->n : image_bytes >= PASS_BYTES ? 1 : PASS_BYTES / image_bytes < g->n ? PASS_BYTES / image_bytes : g->n;
    const int64_t weight_bytes = g->taps * g->block * (int64_t)sizeof(float);
    /* where the tile outruns the shared cache, a block's weights past L2 go in chunks that stay
     * in L2 for a run (above) */
    const double read_ratio = fconv_implicit_gemm_tile_read_ratio(kern->isa, (double)g->px);
    const int outrun = read_ratio > 1.0;
    const int64_t chunks = d->s > 1 && !(outrun && weight_bytes > L2_BYTES)
                               ? 1
                               : (weight_bytes + CHUNK_WEIGHT_BYTES - 1) / CHUNK_WEIGHT_BYTES;
    g->chunk = (g->taps + chunks - 1) / chunks;
    /* unchunked, the first tile's wait on a block's weights, as a share of the block's range
     * of tiles, is read_ratio over the tiles */
    g->ask_ahead_tiles = !outrun ? 0 : chunks > 1 ? INT64_MAX : (int64_t)(read_ratio / ASK_AHEAD_MIN_WAIT);
}

/* Tile `tile` of an image: its first pixel and its pixels. A row's tiles (row_tiles) share
 * its Q pixels as evenly as they go, the wider ones first: Q = 28 in 6-pixel tiles as 6, 6,
 * 6, 5, 5, Q = 14 as 5, 5, 4 (a 4-pixel tile costs 8 loads a tap on AVX-512, 2 pixels 6,
 * for 16 and 8 multiply-adds). */
static void tile_span(const struct ig_geometry *g, int64_t tile, int64_t *pix0, int64_t *npix) {
    if (!g->row_tiles) {
        *pix0 = tile * g->px;
        *npix = g->p * g->q - *pix0 < g->px ? g->p * g->q - *pix0 : g->px;
        return;
    }
    const int64_t row = tile / g->row_tiles, col = tile % g->row_tiles;
    const int64_t base = g->q / g->row_tiles, wider = g->q % g->row_tiles;
    *pix0 = row * g->q + col * base + (col < wider ? col : wider);
    *npix = base + (col < wider);
}

/* Output channels of channel block b (the last one may hold fewer than a block). */
static int64_t block_channels(const struct ig_geometry *g, int64_t b) {
    return g->kg - b * g->block < g->block ? g->kg - b * g->block : g->block;
}

/* Vectors of channel block b (the last one only as wide as the channels it holds). */
static int64_t block_vectors(const struct ig_geometry *g, int64_t b) {
    return (block_channels(g, b) + g->lanes - 1) / g->lanes;
}

/* Floats of the packed weights: every block reserves a whole block's width per tap. */
static size_t packed_floats(const struct ig_geometry *g) {
    return (size_t)g->groups * (size_t)g->blocks * (size_t)g->taps * (size_t)g->block;
}

/* Tiles a thread runs against one weight block before the next block. Per tile and block,
 * a run of T tiles reads the block's weights from L3 once per run (W/T) and, where the run's
 * inputs and the block's weights share L2, its inputs once per run (I/blocks), else once per
 * block (I); the longest run, the pass's every tile, keeps the weights in L2 and streams the
 * inputs. Against one tile per run (2 threads, Zen 5, one sitting): 1024 -> 512 1x1 on 14^2
 * 0.61 -> 0.55-0.56 ms; 8 x 256 x 14^2 -> 1024 2.76 -> 2.55-2.63; 8 x 256 x 28^2 3x3/2 5.93 ->
 * 5.50-5.54 (runs of 4, 16 or a thread's share alike within the noise). A run of every tile
 * rather than a thread's share: the threads then share out the blocks, each block's weights
 * read from L3 once in all rather than once per thread (2 threads, Ice Lake VM, 5 alternated
 * rounds: 1 x 256 x 28^2 3x3/2 NCHW and NHWC 1.11-1.17x, 8 x 256 x 28^2 1.15-1.20x, 8 x 512 x
 * 14^2 1.10-1.13x, 1 x 128 x 56^2 level; six 1x1 layers and the NHWC stem level in 7). With
 * chunks the weights and inputs are a chunk's. */
static int64_t run_tiles(const struct ig_geometry *g, const fconv_conv2d_desc *d, int threads) {
    /* a block's weights and a tile's input rows for one chunk of the taps */
    const double w = (double)(g->chunk * g->block * (int64_t)sizeof(float));
    const double in = (double)(g->cg * d->r * ((g->px - 1) * d->stride_w + (d->s - 1) * d->dilation_w + 1) *
                               (int64_t)sizeof(float)) * (double)g->chunk / (double)g->taps;
    const int64_t whole = g->pass * g->tiles, share = (whole + threads - 1) / threads;
    int64_t fit = (int64_t)(((double)L2_BYTES - w) / in);
    fit = fit < 1 ? 1 : fit > share ? share : fit;
    const double blocks = (double)(g->groups * g->blocks);
    const double cost_fit = w / (double)fit + ((double)fit * in + w <= (double)L2_BYTES ? in / blocks : in);
    const double cost_whole = w / (double)whole + ((double)whole * in + w <= (double)L2_BYTES ? in / blocks : in);
    return cost_fit <= cost_whole ? fit : whole;
}

/* Workspace: [zero-padded image, all C channels][packed weights][the sums of a run's tiles
 * between chunks, per thread], each present only when needed (docs/algorithms/implicit-gemm.md). */
struct ig_layout {
    size_t padded, packed, sums, total;
    int64_t run; /* tiles per run */
};

static struct ig_layout ig_layout(const fconv_plan *plan) {
    struct ig_geometry g;
    ig_geometry(plan, &g);
    struct ig_layout l = {0, 0, 0, 0, run_tiles(&g, &plan->conv2d, plan->threads)};
    if (g.copy) l.padded = fconv_round_up_64((size_t)(g.pass * g.c * g.hp * g.wp) * sizeof(float));
    if (!plan->weights) l.packed = fconv_round_up_64(packed_floats(&g) * sizeof(float));
    if (g.chunk < g.taps)
        l.sums = fconv_round_up_64((size_t)plan->threads * (size_t)(l.run * g.px * g.block) * sizeof(float));
    l.total = l.padded + l.packed + l.sums;
    return l;
}

static size_t ig_workspace(const fconv_plan *plan) { return ig_layout(plan).total; }

static fconv_status ig_supports(const fconv_plan *plan, char *why, size_t why_len) {
    struct ig_geometry g;
    ig_geometry(plan, &g);
    /* Offsets are 32-bit and relative to a group's first channel; the copy must be
     * addressable. */
    int64_t plane, group_floats, image_floats, above, before;
    const fconv_conv2d_desc *d = &plan->conv2d;
    /* NHWC: a group's taps and pixels span the whole image, its channels interleaved */
    const int64_t spanned = g.nhwc ? g.c : g.cg;
    if (fconv_mul_i64(g.hp, g.wp, &plane) || fconv_mul_i64(plane, spanned, &group_floats) ||
        group_floats > INT32_MAX || fconv_mul_i64(plane, g.c, &image_floats) ||
        (g.edged && (fconv_mul_i64(d->pad_top, g.w, &above) || fconv_mul_i64(above + d->pad_left, g.pixel_step, &before) ||
                     before > INT32_MAX)) ||
        (uint64_t)image_floats > SIZE_MAX / 8 || (uint64_t)g.p * (uint64_t)g.q > INT32_MAX) {
        snprintf(why, why_len,
                 "implicit-gemm: a group of %lld channels of %lldx%lld does not fit 32-bit offsets",
                 (long long)g.cg, (long long)g.hp, (long long)g.wp);
        return FCONV_EUNSUPPORTED;
    }
    return FCONV_OK;
}

/* The transposing store of a tile writes a few floats into each of a block's channel rows,
 * one output plane apart. Where the planes are a multiple of 4 KiB (224^2 maps) those rows
 * all fall into one or a few sets of the 8-way, 64-set L1 and evict each other between the
 * tiles that fill a line: 1 thread, 3 -> 64 3x3 on 224^2 spent ~880 cycles per tile beyond
 * its 756 multiply-adds, the stem on 112^2 ~420. Seconds per output, 0.2 ns, 0.55 there. */
static double store_seconds_per_output(const struct ig_geometry *g) {
    if (g->nhwc) return 0.2e-9; /* whole vectors, a pixel's channels side by side */
    const int64_t plane_bytes = g->p * g->q * (int64_t)sizeof(float), rows = g->block < g->kg ? g->block : g->kg;
    char hit[64] = {0};
    int64_t sets = 0;
    for (int64_t k = 0; k < rows; k++) { /* the L1 sets of the rows' first lines */
        int64_t set = k * plane_bytes / 64 % 64;
        sets += !hit[set];
        hit[set] = 1;
    }
    return sets * 8 < 2 * rows ? 0.55e-9 : 0.2e-9; /* fewer ways than two lines per row */
}

/*
 * Seconds: the tiles' multiply-adds (whole channel vectors, padding lanes included; a partial
 * block's last tile as a whole one) at the ISA's rate (tile_flops_per_second: the narrower
 * tile where 512-bit loads issue one a cycle runs near it, the wider one there below), plus
 * the copy into the padded image and the transposing stores (store_seconds_per_output).
 */
static double ig_cost(const fconv_plan *plan) {
    struct ig_geometry g;
    ig_geometry(plan, &g);
    const struct fconv_kernels *kern = plan->kernels;
    const double rate = tile_flops_per_second(kern);
    double vectors = 0.0;
    for (int64_t b = 0; b < g.blocks; b++) vectors += (double)block_vectors(&g, b);
    /* whole channel blocks take narrow tiles for the pixels past the last whole one */
    const double pixels = g.kg % g.block == 0 ? (double)(g.p * g.q) : (double)(g.tiles * g.px);
    double macs = (double)g.n * (double)g.groups * pixels * vectors * (double)g.lanes * (double)g.taps;
    double outputs = (double)g.n * (double)g.k * (double)(g.p * g.q);
    double copy = g.copy ? fconv_stream_seconds(8.0 * (double)(g.c * g.hp * g.wp)) * (double)g.n : 0.0;
    double threads = plan->threads > 1 ? plan->threads : 1;
    return (2.0 * macs / rate + copy + store_seconds_per_output(&g) * outputs) / threads + 2e-6;
}

/* ---- plan state ------------------------------------------------------------------------ */

/* The tap of kernel row r, input channel c (of the group) and kernel column sc, in the tables'
 * order: (r, c, sc), NHWC (r, sc, c). */
static int64_t tap_index(const struct ig_geometry *g, int64_t r, int64_t c, int64_t sc) {
    const int64_t columns = g->row_taps / g->cg;
    return r * g->row_taps + (g->nhwc ? sc * g->cg + c : c * columns + sc);
}

/* Pack w (K x C/G x R x S) into [group][block][tap][block width], taps in the tables' order,
 * zero past K/G. */
static void pack_weights(const struct ig_geometry *g, const float *w, float *packed) {
    const int64_t kr = g->taps / g->row_taps, ks = g->row_taps / g->cg; /* kernel rows, columns */
    for (int64_t grp = 0; grp < g->groups; grp++)
        for (int64_t b = 0; b < g->blocks; b++) {
            int64_t width = block_vectors(g, b) * g->lanes;
            float *dst = packed + (grp * g->blocks + b) * g->taps * g->block;
            for (int64_t r = 0; r < kr; r++)
                for (int64_t c = 0; c < g->cg; c++)
                    for (int64_t sc = 0; sc < ks; sc++) {
                        const int64_t t = tap_index(g, r, c, sc);
                        for (int64_t j = 0; j < width; j++) {
                            int64_t kk = b * g->block + j;
                            dst[t * width + j] = kk < g->kg ? w[(grp * g->kg + kk) * g->taps + (c * kr + r) * ks + sc] : 0.0f;
                        }
                    }
        }
}

static void ig_release(fconv_plan *plan) {
    struct ig_state *s = plan->algo_state;
    if (!s) return;
    free(s->tap_offsets);
    free(s->pixel_bases);
    fconv_free_aligned(s->packed);
    free(s);
    plan->algo_state = NULL;
}

static fconv_status ig_prepare(fconv_plan *plan) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    struct ig_geometry g;
    ig_geometry(plan, &g);
    struct ig_state *s = calloc(1, sizeof *s);
    if (!s) return fconv_fail(FCONV_ENOMEM, "implicit-gemm: out of memory for the plan state");
    s->px = g.px;
    plan->algo_state = s;
    s->tap_offsets = malloc((size_t)g.taps * sizeof(int32_t));
    s->pixel_bases = malloc((size_t)(g.p * g.q) * sizeof(int32_t));
    if (plan->weights) s->packed = fconv_alloc_aligned(packed_floats(&g) * sizeof(float));
    if (!s->tap_offsets || !s->pixel_bases || (plan->weights && !s->packed)) {
        ig_release(plan);
        return fconv_fail(FCONV_ENOMEM, "implicit-gemm: out of memory for the offset tables and weights");
    }
    for (int64_t r = 0; r < d->r; r++)
        for (int64_t c = 0; c < g.cg; c++)
            for (int64_t sc = 0; sc < d->s; sc++) {
                const int64_t t = tap_index(&g, r, c, sc);
                s->tap_offsets[t] = (int32_t)(c * g.channel_step + (r * d->dilation_h * g.wp + sc * d->dilation_w) * g.pixel_step);
            }
    const int64_t pt = g.edged ? d->pad_top : 0, pl = g.edged ? d->pad_left : 0;
    for (int64_t p = 0; p < g.p; p++)
        for (int64_t q = 0; q < g.q; q++)
            s->pixel_bases[p * g.q + q] = (int32_t)(((p * d->stride_h - pt) * g.wp + q * d->stride_w - pl) * g.pixel_step);
    if (plan->weights) pack_weights(&g, plan->weights, s->packed);
    return FCONV_OK;
}

/* ---- execution -------------------------------------------------------------------------- */

struct pad_ctx {
    const struct ig_geometry *g;
    int64_t pt, pl;
    const float *x; /* one image */
    float *padded;
};

/* Row i of padded plane `plane` (image n's channel c is plane n·C + c, in x and the copy;
 * NHWC: image n is plane n, its rows all its pixels' channels, pixel_step floats a pixel). */
static void pad_row(const struct pad_ctx *pc, int64_t plane, int64_t i) {
    const struct ig_geometry *g = pc->g;
    const int64_t unit = g->pixel_step;
    float *dst = pc->padded + (plane * g->hp + i) * g->wp * unit;
    const int64_t ih = i - pc->pt;
    if (ih < 0 || ih >= g->h) fconv_zero_floats(dst, g->wp * unit);
    else fconv_copy_padded_row(dst, g->wp * unit, pc->x + (plane * g->h + ih) * g->w * unit, g->w * unit, -pc->pl * unit);
}

/* Padded row i of every channel of image n (task n·hp + i), where a pass has fewer images
 * than threads (NHWC: always, a row being one run of floats; the split by rows gives a thread
 * whole images where a pass has an image per thread): split by rows, as the tiles are, so
 * that a thread copies mostly the rows its own tiles then read. */
static void pad_row_task(const void *vctx, size_t task) {
    const struct pad_ctx *pc = vctx;
    const int64_t n = (int64_t)task / pc->g->hp, i = (int64_t)task % pc->g->hp;
    if (pc->g->nhwc) pad_row(pc, n, i);
    else
        for (int64_t c = 0; c < pc->g->c; c++) pad_row(pc, n * pc->g->c + c, i);
}

/* Padded plane n·C + c, its rows in order, where a pass has an image per thread or more:
 * the threads' shares of planes are then whole images, as their shares of the tiles are, and
 * each copies its planes front to back where a row task jumps a plane apart from row to row
 * (2 threads, 5 alternated rounds: 8 x 256 x 28^2 3x3/2 5.58 -> 5.32 ms, 8 x 512 x 14^2 5.90
 * -> 5.54, 8 x 128 x 56^2 6.45 -> 6.36). */
static void pad_plane_task(const void *vctx, size_t task) {
    const struct pad_ctx *pc = vctx;
    for (int64_t i = 0; i < pc->g->hp; i++) pad_row(pc, (int64_t)task, i);
}

struct tile_ctx {
    const struct ig_geometry *g;
    const fconv_conv2d_desc *d;
    const struct fconv_kernels *kern;
    const struct ig_state *s;
    const float *x;      /* the pass's first image (or its padded copy), all C channels */
    const float *packed; /* packed weights */
    const float *bias;   /* NULL: none */
    float *y;            /* the pass's first output [K][P][Q] */
    int relu;
    unsigned streams;    /* FCONV_IG_INPUT_STREAMS: x is read in place and does not stay cached
                            from one run to the next; FCONV_IG_OUTPUT_STREAMS: nor does y;
                            FCONV_IG_OUTPUT_NONTEMPORAL: y by non-temporal stores (ig_execute) */
};

/* What the tiles of channel block b of group grp share. */
struct block_args {
    const float *w;     /* the block's packed weights, from its first tap */
    const float *bias;  /* from the block's first channel, or NULL */
    int64_t x_offset;   /* floats from an image to the group's first channel */
    int64_t y_offset;   /* floats from an output image to the block's first channel */
    int64_t nv, nch;    /* the block's vectors and channels */
};

static struct block_args block_args(const struct tile_ctx *tc, int64_t grp, int64_t b) {
    const struct ig_geometry *g = tc->g;
    const int64_t k0 = grp * g->kg + b * g->block, nv = block_vectors(g, b);
    return (struct block_args){tc->packed + (grp * g->blocks + b) * g->taps * g->block,
                               tc->bias ? tc->bias + k0 : NULL,
                               grp * g->cg * g->channel_step,
                               g->nhwc ? k0 : k0 * g->p * g->q,
                               nv,
                               block_channels(g, b)};
}

/* The block's input (its group's first channel) and output (the block's first channel at
 * pixel pix0) in image `image` of the pass. */
static const float *block_input(const struct tile_ctx *tc, const struct block_args *ba, int64_t image) {
    const struct ig_geometry *g = tc->g;
    return tc->x + image * g->c * g->hp * g->wp + ba->x_offset;
}

static float *block_output(const struct tile_ctx *tc, const struct block_args *ba, int64_t image, int64_t pix0) {
    const struct ig_geometry *g = tc->g;
    return tc->y + image * g->k * g->p * g->q + ba->y_offset + pix0 * (g->nhwc ? g->k : 1);
}

/* Pixel tile `tile` of image `image` of the pass, for the block `ba`. Threads split the
 * tiles, not the blocks: a thread takes a share of the image's pixels for every block, not
 * every pixel for a share of the blocks (which each thread then read from the other's
 * cache): 2 threads, 128 -> 128 3x3/2 on 56^2, 1.15 -> 1.05 ms; 512 channels on 14^2 1.11 ->
 * 1.07. */
static void tile_task(const struct tile_ctx *tc, const struct block_args *ba, int64_t image, int64_t tile,
                      int64_t chunk, float *sums, const float *ahead, size_t ahead_lines) {
    const struct ig_geometry *g = tc->g;
    const int64_t pixels = g->p * g->q;
    int64_t pix0, npix;
    tile_span(g, tile, &pix0, &npix);
    const float *xg = block_input(tc, ba, image);
    const float *bases[FCONV_IMPLICIT_GEMM_PX_MAX];
    const int32_t *pixel_bases = tc->s->pixel_bases + pix0;
    for (int64_t e = 0; e < (int64_t)tc->kern->implicit_gemm_px; e++) /* past the last pixel: repeat it,
                                                                         its sums are not stored */
        bases[e] = xg + pixel_bases[e < npix ? e : npix - 1];
    /* Kernel rows [r0, r1) read inside the image for some output row of the tile: the
     * others lie in the padding (the copy's zero rows) and are left out (with pad 1 the top
     * row of a stride-2 layer's 7x7 output, a seventh of its tiles, skips a third of its taps;
     * a tile whose windows all lie in the padding runs no tap and stores the bias). */
    const fconv_conv2d_desc *d = tc->d;
    int64_t r0 = 0, r1 = d->r;
    if (g->copy || g->edged) {
        const int64_t top = pix0 / g->q * d->stride_h - d->pad_top;          /* first row's r = 0 */
        const int64_t bottom = (pix0 + npix - 1) / g->q * d->stride_h - d->pad_top; /* last row's */
        while (r0 < r1 && bottom + r0 * d->dilation_h < 0) r0++;
        while (r1 > r0 && top + (r1 - 1) * d->dilation_h >= g->h) r1--;
    }
    /* Chunk `chunk` of the tile's taps [ta, tb): its first chunk starts from zero, its last
     * stores y, and those between pass their sums on through `sums` (a tile without taps
     * stores the bias, with chunk 0). One chunk (most layers): no division. */
    const int64_t ta = r0 * g->row_taps, tb = r1 * g->row_taps;
    int64_t first = 0, last = 0, t0 = ta, t1 = tb;
    if (g->chunk < g->taps) {
        first = tb > ta ? ta / g->chunk : 0;
        last = tb > ta ? (tb - 1) / g->chunk : 0;
        if (chunk < first || chunk > last) return;
        t0 = chunk > first ? chunk * g->chunk : ta;
        t1 = chunk < last ? (chunk + 1) * g->chunk : tb;
    }
    /* Edged: a row's first and last tile leave out the columns their end pixels' windows
     * have in the padding (a tile lies within one output row). A kernel column's taps are
     * one tap per row of channels (NCHW), or the row's C/G consecutive taps (NHWC). */
    struct fconv_implicit_gemm_edges edges = {0, 0, 0, 0};
    if (g->edged) {
        const size_t column_taps = g->nhwc ? (size_t)g->cg : 1, group = g->nhwc ? (size_t)g->row_taps : (size_t)d->s;
        edges = (struct fconv_implicit_gemm_edges){
            group, pix0 % g->q == 0 ? (size_t)g->edge_first * column_taps : 0,
            (pix0 + npix) % g->q == 0 ? (size_t)g->edge_last * column_taps : 0, (size_t)t0 % group};
    }
    tc->kern->implicit_gemm_tile((size_t)(t1 - t0), bases, tc->s->tap_offsets + t0, ba->w + t0 * ba->nv * g->lanes,
                                 (size_t)ba->nv, block_output(tc, ba, image, pix0),
                                 g->nhwc ? (size_t)g->k : (size_t)pixels, g->nhwc, (size_t)npix, (size_t)ba->nch,
                                 ba->bias, tc->relu, tc->streams, edges.first || edges.last ? &edges : NULL,
                                 chunk > first ? sums : NULL, chunk < last ? sums : NULL, ahead, ahead_lines);
}

/* `count` whole tiles of image `image` from tile `tile` on, in one call, where each reads
 * its input over all its taps with nothing left out (run_length). A call per tile spent ~40
 * cycles a tile in the driver: 1 thread, 1 x 64 x 56^2 -> 256 1x1 NHWC (64 taps a tile) ran
 * 5% slower than a bare loop of tile calls in the same process, and as fast with runs. */
static void tiles_task(const struct tile_ctx *tc, const struct block_args *ba, int64_t image, int64_t tile,
                       int64_t count, const float *ahead, size_t ahead_lines) {
    const struct ig_geometry *g = tc->g;
    int64_t pix0, npix;
    tile_span(g, tile, &pix0, &npix);
    tc->kern->implicit_gemm_tiles((size_t)count, (size_t)g->taps, block_input(tc, ba, image),
                                  tc->s->pixel_bases + pix0, tc->s->tap_offsets, ba->w, (size_t)ba->nv,
                                  block_output(tc, ba, image, pix0), (size_t)(g->px * (g->nhwc ? g->k : 1)),
                                  g->nhwc ? (size_t)g->k : (size_t)(g->p * g->q), g->nhwc, (size_t)ba->nch, ba->bias,
                                  tc->relu, tc->streams, (size_t)g->px, ahead, ahead_lines);
}

struct share_ctx {
    const struct tile_ctx *tc;
    int64_t tiles, blocks, run; /* image tiles of the pass, group-blocks, tiles per run */
    float *sums;                /* chunked: per worker, px x block floats per tile of a run */
};

/* How many tiles from `tile` on (at most `limit`) read their input over all their taps with
 * nothing left out, px pixels each, so one call can run them (tiles_task): with neither a
 * copy nor edges, every whole tile of the image; in a padded layer, the tiles whose output
 * rows read no padding row (tile_task would cut no kernel row), edged ones also neither a
 * row's first tile nor its last where their windows reach the padding's columns, nor its
 * narrower ones, and one row's at a time. One chunk of taps only. 0: `tile` takes tile_task. */
static int64_t run_length(const struct ig_geometry *g, const fconv_conv2d_desc *d, int64_t tile, int64_t limit) {
    const int64_t whole = g->p * g->q / g->px, room = whole - tile < limit ? whole - tile : limit;
    if (g->chunk < g->taps) return 0;
    if (!g->copy && !g->edged) return room > 0 ? room : 0;
    /* output rows [lo, hi] read rows inside the image for every kernel row */
    int64_t lo = 0, hi = g->p - 1;
    while (lo <= hi && lo * d->stride_h - d->pad_top < 0) lo++;
    while (hi >= lo && hi * d->stride_h - d->pad_top + (d->r - 1) * d->dilation_h >= g->h) hi--;
    if (g->edged) { /* a row's tiles, the wider first (tile_span) */
        const int64_t row = tile / g->row_tiles, col = tile % g->row_tiles;
        const int64_t base = g->q / g->row_tiles, wider = g->q % g->row_tiles;
        int64_t end = wider ? (base + 1 == g->px ? wider : 0) : (base == g->px ? g->row_tiles : 0);
        if (end == g->row_tiles && g->edge_last) end--;
        if (row < lo || row > hi || (col == 0 && g->edge_first) || col >= end) return 0;
        return end - col < limit ? end - col : limit;
    }
    const int64_t pix0 = tile * g->px;
    if (room <= 0 || hi < lo || pix0 < lo * g->q) return 0;
    const int64_t end = (hi + 1) * g->q / g->px; /* tiles wholly inside those rows */
    return end - tile < room ? end - tile : room;
}

/* The weights a thread reads after chunk `chunk` of group-block i (of `blocks`): that block's
 * next chunk, or the next block's first; *lines: their 64-byte lines. */
static const float *next_chunk_weights(const struct tile_ctx *tc, int64_t i, int64_t blocks, int64_t chunk,
                                       size_t *lines) {
    const struct ig_geometry *g = tc->g;
    int64_t next = chunk + 1;
    if (next * g->chunk >= g->taps) i = (i + 1) % blocks, next = 0;
    const struct block_args ba = block_args(tc, i / g->blocks, i % g->blocks);
    const int64_t taps = g->taps - next * g->chunk < g->chunk ? g->taps - next * g->chunk : g->chunk;
    *lines = (size_t)((taps * ba.nv * g->lanes + 15) / 16); /* 64-byte lines of 16 floats */
    return ba.w + next * g->chunk * ba.nv * g->lanes;
}

/* Pairs [begin, end) of a pass's (tile, block) pairs, ordered run by run (run c holds m
 * tiles: run, or fewer in the last), block by block within a run, tile by tile within a
 * block: each thread's share is consecutive runs, a share of the pixels, as the row-split
 * padding copy's. Each block's tiles of the range go through the taps chunk by chunk.
 * Where the tile outruns the shared cache, a chunk's first tile waits on its weights from
 * there (the others find them in L2) unless they came meanwhile: the range's other tiles share
 * out the asking for the next chunk's lines (or the next block's first), one a tap (a burst
 * before each tile did nothing); unchunked, only ranges of few tiles (ask_ahead_tiles), where
 * the wait is worth it. 2 threads, Emerald Rapids VM, 21 alternated rounds: chunked, 3x3/2 1
 * x 512 x 14^2 NCHW 1.17-1.19x, NHWC 1.12-1.13x, batch 8 1.05-1.10x, 1x1 2048 -> 512 on 7^2
 * 1.11-1.16x, batch 8 1.06-1.10x; unchunked, 1x1 512 -> 2048 on 7^2 1.08-1.12x, 1024 -> 512
 * on 14^2 NHWC 1.07-1.09x, 3x3/2 256 x 28^2 1.03-1.07x (docs/algorithms/implicit-gemm.md). */
static void pairs_task(const void *vctx, size_t begin, size_t end, size_t worker) {
    const struct share_ctx *sc = vctx;
    const struct ig_geometry *g = sc->tc->g;
    const int64_t per_run = sc->run * sc->blocks, hi = (int64_t)end;
    const int64_t chunks = (g->taps + g->chunk - 1) / g->chunk;
    float *sums = sc->sums ? sc->sums + (int64_t)worker * sc->run * g->px * g->block : NULL;
    for (int64_t f = (int64_t)begin; f < hi;) {
        const int64_t c = f / per_run, local = f % per_run;
        const int64_t m = sc->tiles - c * sc->run < sc->run ? sc->tiles - c * sc->run : sc->run;
        const int64_t i = local / m, j0 = local % m, j1 = j0 + (hi - f) < m ? j0 + (hi - f) : m;
        const struct block_args ba = block_args(sc->tc, i / g->blocks, i % g->blocks);
        for (int64_t chunk = 0; chunk < chunks; chunk++) {
            size_t next_lines = 0;
            const float *next = j1 - j0 > 1 && j1 - j0 <= g->ask_ahead_tiles
                                    ? next_chunk_weights(sc->tc, i, sc->blocks, chunk, &next_lines)
                                    : NULL;
            /* the range's tiles, image by image, without a division per tile */
            int64_t image = (c * sc->run + j0) / g->tiles, tile = (c * sc->run + j0) % g->tiles;
            for (int64_t j = j0; j < j1;) {
                int64_t count = run_length(g, sc->tc->d, tile, j1 - j);
                /* the call's tiles [u, last] of the range's share of them */
                size_t from = 0, lines = 0;
                if (next) {
                    const size_t u = (size_t)(j - j0), last = u + (size_t)(count > 0 ? count : 1) - 1;
                    lines = fconv_implicit_gemm_ahead_share(u, last, (size_t)(j1 - j0 - 1), next_lines, &from);
                }
                const float *ahead = next ? next + from * 16 : NULL;
                if (count > 0) {
                    tiles_task(sc->tc, &ba, image, tile, count, ahead, lines);
                } else {
                    tile_task(sc->tc, &ba, image, tile, chunk, sums ? sums + (j - j0) * g->px * g->block : NULL,
                              ahead, lines);
                    count = 1;
                }
                j += count;
                tile += count;
                if (tile == g->tiles) tile = 0, image++;
            }
        }
        f += j1 - j0;
    }
    if (sc->tc->streams & FCONV_IG_OUTPUT_NONTEMPORAL) fconv_stream_fence();
}

/* Pairs a thread takes at a time (fconv_parallel_steal: its own share in order, then what
 * the other has not begun). Chunked, a run's worth, so that a chunk's weights serve the
 * run's tiles as they do in the thread's own share; else up to 8 tiles' worth, enough to
 * keep the hand-out's cost out of sight (a 1x1 tile of 64 taps is ~1000 cycles). */
static int64_t pairs_per_piece(const struct ig_geometry *g, int64_t run) {
    return g->chunk < g->taps || run < 8 ? run : 8;
}

static void ig_execute(const fconv_plan *plan, const float *x, const float *w, const float *bias, float *y,
                       void *workspace) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    const struct ig_state *s = plan->algo_state;
    struct ig_geometry g;
    ig_geometry(plan, &g);
    struct ig_layout l = ig_layout(plan);
    char *ws = workspace;
    const float *packed = s->packed;
    if (!plan->weights) {
        float *scratch = (float *)(ws + l.padded);
        pack_weights(&g, w, scratch);
        packed = scratch;
    }
    const double io_bytes = 4.0 * (double)g.n * (double)(g.c * g.h * g.w + g.k * g.p * g.q);
    struct tile_ctx tc = {&g, d, plan->kernels, s, x, packed, d->has_bias ? bias : NULL, y,
                          d->activation == FCONV_ACTIVATION_RELU,
                          io_bytes > FCONV_CACHED_BYTES ? FCONV_IG_OUTPUT_STREAMS | (g.copy ? 0u : FCONV_IG_INPUT_STREAMS) : 0u};
    /* An NHWC y past the last-level cache leaves its whole tiles through non-temporal stores
     * (every pixel's channel blocks whole lines where y is 64-byte aligned and K a multiple of
     * 16), which skip reading y's lines first. Emerald Rapids VM, 2 threads, 21 alternated
     * rounds, two copies of each plan: 8 x 3 x 224^2 -> 64 3x3 NHWC (103 MB of y) 1.05-1.07x;
     * 1 x 3 x 224^2 (12.8 MB, which stays in the shared cache from run to run) had lost
     * 0.90-0.93x with the 8 MiB of FCONV_STREAM_OUTPUT_BYTES, 8 x 64 x 56^2 -> 256 1x1 (25.7
     * MB) level, 1x1 layers of 0.8-3.2 MB 0.85-0.90x at the GEMMs' 512 KiB. */
    if (g.nhwc && g.k % 16 == 0 && (uintptr_t)y % 64 == 0 && 4.0 * (double)(g.n * g.k * g.p * g.q) > FCONV_LLC_BYTES)
        tc.streams |= FCONV_IG_OUTPUT_NONTEMPORAL;
    for (int64_t n0 = 0; n0 < g.n; n0 += g.pass) {
        int64_t images = g.n - n0 < g.pass ? g.n - n0 : g.pass;
        const float *xn = x + n0 * g.c * g.h * g.w;
        if (g.copy) { /* the pass's images are consecutive planes in x and in the copy alike */
            struct pad_ctx pc = {&g, d->pad_top, d->pad_left, xn, (float *)ws};
            if (!g.nhwc && images >= (plan->threads > 1 ? plan->threads : 1))
                fconv_parallel_1d(plan->threads, (size_t)(images * g.c), pad_plane_task, &pc);
            else
                fconv_parallel_1d(plan->threads, (size_t)(images * g.hp), pad_row_task, &pc);
            tc.x = (const float *)ws;
        } else {
            tc.x = xn;
        }
        tc.y = y + n0 * g.k * g.p * g.q;
        struct share_ctx sc = {&tc, images * g.tiles, g.groups * g.blocks, l.run,
                               l.sums ? (float *)(ws + l.padded + l.packed) : NULL};
        fconv_parallel_steal(plan->threads, (size_t)(sc.tiles * sc.blocks), (size_t)pairs_per_piece(&g, l.run),
                             pairs_task, &sc);
    }
}

const struct fconv_algorithm fconv_algorithm_implicit_gemm = {
    .id = FCONV_ALGO_IMPLICIT_GEMM,
    .name = "implicit-gemm",
    .summary = "conv2d as im2col's GEMM without the column matrix: a register tile of pixels x "
               "output channels reads the input in place",
    .serves = FCONV_SERVES_CONV2D,
    .error_bound = 2e-6,
    .supports = ig_supports,
    .workspace = ig_workspace,
    .cost = ig_cost,
    .prepare = ig_prepare,
    .release = ig_release,
    .execute = ig_execute,
    .runs_nhwc = fconv_runs_nhwc_always,
};
