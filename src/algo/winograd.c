/*
 * winograd.c — conv2d (3x3, stride 1, dilation 1) and 3x3 filter2d by Winograd
 * F(m x m, 3 x 3), m = 2, 4, 6, and conv2d with 5x5 to 8x8 kernels at stride 2 (ResNet's
 * 7x7/2 stem) by F(3x3, 4x4) on the four stride-2 phases: four table entries sharing one
 * driver parametrised by the matrix set (winograd.h).
 * The phases: y[p][q] = sum x[2p + i][2q + j] w[i][j] splits by the parity (a, b) of (i, j)
 * into four stride-1 correlations of the phase images x[2s + a][2t + b] with the phase
 * kernels w[2i' + a][2j' + b] (up to 4x4, zero-padded), i.e. one stride-1 4x4 layer with 4C
 * input channels; the gather reads the phase images straight out of x (channel 4c + 2a + b).
 * A 7x7/2 layer then costs 4C * 36/9 = 16C multiplies per output and filter instead of 49C.
 * Per group and block of output tiles: input transform into
 * V[ξν][c][tile], alpha² GEMMs over channels M[ξν] = U[ξν] V[ξν], output transform + bias +
 * ReLU into y. Invariant: tiles are grouped into blocks whose size depends only on the
 * problem, and each block goes through the same arithmetic on whichever thread or in
 * whichever phase runs it, so results are bit-identical for any thread count.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "algo/filter-lowering.h"
#include "algo/winograd.h"
#include "core/dispatch.h"
#include "core/internal.h"
#include "core/parallel.h"
#include "kernels/gemm/gemm.h"

/* The V and M of one tile block together aim at this many floats (2 MiB: larger blocks
 * make the GEMMs wider, which measured faster up to here on Zen 5 even past its 1 MiB L2);
 * blocks hold between one sliver (or fewer tiles, where the problem has fewer) and
 * WINO_MAX_BLOCK tiles, a multiple of the 16-tile strip. */
#define WINO_BLOCK_TARGET_FLOATS ((size_t)1 << 19)
#define WINO_MAX_BLOCK ((size_t)256)
/* Where a core reads the shared cache slower than this (fconv_cpu_info.shared_read_bytes_per_s:
 * Intel's mesh, ~12 GB/s), blocks aim at 5/8 of the target (1.25 MiB), so that V and M (and a
 * small U) stay in L2: a V that left it came back at that rate for the products. Emerald Rapids
 * VM (2 MiB of L2), 2 threads, NCHW, 9-21 alternated rounds, two copies of each plan, against
 * the 2 MiB blocks: winograd-4x4 1 x 64 x 224^2 1.04-1.06x (96 tiles a block -> 64; perf, one
 * thread, 32 tiles: the input transform's share 9.9 -> 5.5% of the samples), 8 x 64 x 224^2
 * 1.06x, 8 x 64 x 112^2 -> 128 1.02-1.03x, 8 x 128 x 112^2 and the 14^2 layers level; the 7x7/2
 * stem (winograd-stride2, 12 phase channels) 1.10-1.14x at batch 1, 1.03-1.04x at batch 8 (160 tiles
 * -> 96). At half the target the 64 -> 64 layers ran 1.02-1.03x faster still, but the stem at
 * batch 8 (64 tiles) 0.96x of the 2 MiB blocks. */
#define WINO_SLOW_SHARED_READ_BYTES_PER_S 24e9
/* The transformed weights U that stay in the last-level cache between tile blocks (half of
 * it). */
#define WINO_U_CACHED_BYTES ((size_t)(FCONV_LLC_BYTES / 2))
/* Transformed weights this small stay in each core's L2 (1 MiB) while a worker runs its own
 * units in block mode, so block mode costs the threads nothing the phase split would save
 * (see geometry). */
#define WINO_U_PRIVATE_BYTES ((size_t)1 << 20)

/* The problem in conv2d form (filter2d: the lowered, border-extended planar image) and the
 * workspace layout:  [padded image][U][V x vm_workers][M x vm_workers][scratch x scratch_workers]. */
struct wino_geometry {
    const struct fconv_wino_matrices *mat;
    int64_t m, r, alpha;
    /* stride 1 or 2; phases = stride^2 GEMM channels per input channel (cs of them per group:
     * cg = cs * phases, channel c being phase c % phases of input channel c / phases) */
    int64_t stride, phases, cs;
    int64_t kr, ks;        /* the layer's kernel (r x r, or up to 2r x 2r at stride 2) */
    int64_t n, groups, cg, kg, h, w, out_h, out_w, pad_top, pad_left;
    int64_t tiles_h, tiles_w;
    size_t tiles;          /* n * tiles_h * tiles_w: the GEMM columns of all images */
    size_t tb;             /* tiles per block: the row length of every tile-minor buffer */
    size_t blocks, units;  /* units = groups * blocks, the independent pieces of work */
    int64_t x_n, x_c, x_h; /* input strides (unit stride along a row) */
    int64_t y_n, y_k, y_p, y_q;
    int relu, block_mode;  /* block_mode: whole units per worker; else phases per unit */
    int stream;            /* the scatter writes y with non-temporal stores */
    /* packed: the products run on the GEMM micro-kernel of plan->kernels straight from the
     * transforms' output: U is stored as its packed A panels (kg rounded up to mr rows, each
     * mr-row sliver k-major) and V as its packed B panels (nr-tile slivers, channel-major),
     * so nothing is packed per product (OpenBLAS spent ~25% of Winograd's time packing V).
     * A block's columns (a multiple of the 16-tile strip) are nr-tile slivers and, where
     * nr = 32 leaves 16, one half-width sliver for the half-width micro-kernel: padding 16
     * tiles to 32 had doubled the products of a 16x16 map's F(4x4) block on AVX-512.
     * Otherwise (cg = 1, or the ISA's nr is neither 16 nor 32) mr = 1: U row-major. */
    int packed;
    size_t mr, kgp;        /* U's row blocking and kg rounded up to it */
    const struct fconv_kernels *kern;
    /* the half-width tile over several panels: its shuffled form where 512-bit loads are slow
     * (fconv_cpu_info.wide_loads_slow), chosen once per geometry, not per product */
    fconv_gemm_ukernel_half_rows_fn half_rows;
    size_t workers;        /* block mode: workers running units; phase mode: plan threads */
    size_t v_xn, m_xn;     /* floats from V[ξν] to V[ξν+1], and from M[ξν] to M[ξν+1] */
    size_t u_size;         /* bytes of U, in the plan (plan-time weights) or the workspace */
    size_t padded_bytes, u_bytes, v_bytes, m_bytes, scratch_bytes, vm_workers, total;
};

static size_t round_up(size_t a, size_t b) { return (a + b - 1) / b * b; }

/* The distance, in floats, between consecutive rows of a buffer whose alpha² rows are walked
 * together (V[ξν] and M[ξν] by the transforms): an odd number of 64-byte lines, so that
 * the rows fall into different L1 sets. At cg*tb floats apart, a multiple of 4 KiB for most
 * layers, all 36 rows shared one set of the 8-way L1: the F(4x4) input transform of 16
 * tiles took ~330 cycles instead of ~150, the phase 20-25% longer. */
static size_t skewed_row(size_t floats) {
    size_t lines = (floats + 15) / 16;
    return (lines | 1) * 16;
}

/* Tiles in block b of a group: tb, but for the last block, which holds what is left. */
static size_t block_tiles(const struct wino_geometry *g, size_t b) {
    return g->tiles - b * g->tb < g->tb ? g->tiles - b * g->tb : g->tb;
}

/* The most tiles any of `workers` gets when each takes a contiguous share of the units: a
 * group's last block holds what is left of its tiles. Two blocks of 32 and 17 tiles (a
 * 28x28 map's 49) kept one of two threads idle a third of the time: 1x128x28x28 3x3 on 2
 * threads 0.49 ms in block mode, 0.42 ms with each phase split. */
static size_t busiest_worker_tiles(const struct wino_geometry *g, size_t workers) {
    size_t busiest = 0;
    for (size_t w = 0; w < workers; w++) {
        size_t load = 0;
        for (size_t unit = w * g->units / workers; unit < (w + 1) * g->units / workers; unit++)
            load += block_tiles(g, unit % g->blocks);
        if (load > busiest) busiest = load;
    }
    return busiest;
}

static struct wino_geometry geometry(const fconv_plan *plan, int m) {
    struct wino_geometry g;
    memset(&g, 0, sizeof g);
    g.mat = fconv_wino_matrices_for(m);
    g.m = m;
    g.r = g.mat->r;
    g.alpha = g.mat->alpha;
    g.out_h = plan->out_h;
    g.out_w = plan->out_w;
    g.stride = g.phases = 1;
    g.kr = g.ks = 3;
    if (plan->kind == FCONV_KIND_CONV2D) {
        const fconv_conv2d_desc *d = &plan->conv2d;
        g.n = d->n;
        g.groups = d->groups;
        g.stride = d->stride_h;
        g.phases = g.stride * g.stride;
        g.kr = d->r;
        g.ks = d->s;
        g.cs = d->c / d->groups;
        g.cg = g.cs * g.phases;
        g.kg = d->k / d->groups;
        g.h = d->h;
        g.w = d->w;
        g.pad_top = d->pad_top;
        g.pad_left = d->pad_left;
        g.x_h = d->w;
        g.x_c = d->h * d->w;
        g.x_n = d->c * g.x_c;
        g.y_q = 1;
        g.y_p = g.out_w;
        g.y_k = g.out_h * g.out_w;
        g.y_n = d->k * g.y_k;
        g.relu = d->activation == FCONV_ACTIVATION_RELU;
        /* Large outputs leave through non-temporal stores where every row of y starts where
         * y does within a vector (rows a whole number of vectors long) and holds at least
         * four: 2 threads, y 64-byte aligned, medians of 7 alternated runs: 8 x 3 x 224^2 -> 64
         * 10.7 -> 7.4 ms, 1 x 64 x 224^2 7.8 -> 6.2, 8 x 64 x 112^2 -> 128 24.2 -> 22.1;
         * 56-wide rows (3.5 vectors: every other row misaligned) and 28-wide ones lost 1-3%. */
        const size_t lanes = plan->kernels->lanes;
        g.stream = (double)g.n * (double)d->k * (double)g.out_h * (double)g.out_w * sizeof(float) >=
                       FCONV_STREAM_OUTPUT_BYTES &&
                   (size_t)g.out_w % lanes == 0 && (size_t)g.out_w >= 4 * lanes;
    } else { /* one image per channel, C = K = 1, output interleaved into y[OH][OW][CH] */
        g.n = plan->filter.channels;
        g.groups = g.cs = g.cg = g.kg = 1;
        g.h = fconv_filter_padded_h(plan);
        g.w = fconv_filter_padded_w(plan);
        g.x_h = g.w;
        g.x_c = 0;
        g.x_n = g.h * g.w;
        g.y_q = plan->filter.channels;
        g.y_p = g.out_w * g.y_q;
        g.y_k = 0;
        g.y_n = 1;
        g.padded_bytes = fconv_round_up_64(fconv_filter_padded_bytes(plan));
    }
    g.tiles_h = (g.out_h + m - 1) / m;
    g.tiles_w = (g.out_w + m - 1) / m;
    g.tiles = (size_t)g.n * (size_t)g.tiles_h * (size_t)g.tiles_w;

    size_t a2 = (size_t)(g.alpha * g.alpha), cg = (size_t)g.cg, kg = (size_t)g.kg;
    g.kern = plan->kernels;
    g.half_rows = g.kern->gemm_ukernel_half_rows_shuffled && fconv_cpu()->wide_loads_slow
                      ? g.kern->gemm_ukernel_half_rows_shuffled
                      : g.kern->gemm_ukernel_half_rows;
    g.packed = g.cg > 1 && (g.kern->gemm_nr == FCONV_WINO_STRIP || g.kern->gemm_nr == 2 * FCONV_WINO_STRIP);
    g.mr = g.packed ? g.kern->gemm_mr : 1;
    g.kgp = round_up(kg, g.mr);
    /* at least one whole sliver per block where there are enough tiles */
    const size_t tb_min = g.packed ? g.kern->gemm_nr : FCONV_WINO_STRIP;
    /* Where U outgrows the last-level cache, every block streams it from memory again:
     * blocks then grow until V and M together reach half of U (2 threads: 8x512x28x28
     * 52.6 -> 43.7 ms, 1x512x28x28 7.0 -> 5.95, 8x256x28x28 -> 512 26.8 -> 23.2). Below
     * that U stays cached between blocks, and larger blocks only push V and M out of L2
     * (1x256x56x56, U 9.4 MB: 5.4 -> 7.5 ms with them). */
    size_t vm_target = fconv_cpu()->shared_read_bytes_per_s < WINO_SLOW_SHARED_READ_BYTES_PER_S
                           ? WINO_BLOCK_TARGET_FLOATS / 8 * 5
                           : WINO_BLOCK_TARGET_FLOATS,
           u_floats = a2 * cg * kg;
    if (u_floats * sizeof(float) > WINO_U_CACHED_BYTES && u_floats / 2 > vm_target) vm_target = u_floats / 2;
    size_t tb_max = vm_target / (a2 * (cg + kg));
    tb_max = tb_max / FCONV_WINO_STRIP * FCONV_WINO_STRIP;
    if (tb_max < tb_min) tb_max = tb_min;
    if (tb_max > WINO_MAX_BLOCK) tb_max = WINO_MAX_BLOCK;
    g.blocks = (g.tiles + tb_max - 1) / tb_max;
    /* Tiles that overfill one block by less than half of it stay one block: two would be a
     * whole one and a thin rest, each paying the phases' parallel regions (2 threads, Zen 5,
     * 1x128x28x28: 49 tiles as 64 rather than 32 + 17, 7 alternated rounds 0.368-0.386 ->
     * 0.347-0.377 ms; no other suite layer's blocks change). */
    if (round_up(g.tiles, FCONV_WINO_STRIP) <= tb_max * 3 / 2) g.blocks = 1;
    /* balanced, then down to whole slivers where it spans several: the last block takes the
     * rest (196 tiles in blocks of 32 and one of 4 on the few-column kernel, rather than
     * seven blocks of 28 padded to 32) */
    g.tb = round_up((g.tiles + g.blocks - 1) / g.blocks, FCONV_WINO_STRIP);
    if (g.tb > tb_min) g.tb = g.tb / tb_min * tb_min;
    g.blocks = (g.tiles + g.tb - 1) / g.tb;
    g.units = (size_t)g.groups * g.blocks;

    /* Whole units per worker when they share out evenly enough; otherwise every phase of
     * each unit is split across the threads. Either way the arithmetic is the same. The
     * phase split costs three parallel regions per unit and has both threads read every V
     * and M, but it shares U out (the products split by ξν): worth it where U is large and the
     * units few or uneven. Where U fits a core's L2, block mode with shares within 10% wins
     * even for an odd unit count (2 threads, Zen 5, 5 alternated rounds: 1x64x56x56 -> 64,
     * 3 units of 96, 96 and 4 tiles, 0.49 -> 0.36 ms). Since a worker done with its share
     * takes the units the other has not begun (block_units_piece), two units or more per
     * thread also go in block mode where U stays in the last-level cache between units
     * (2 threads, 7 alternated rounds, 7 units: 1x128x56x56 -> 256 2.49 -> 1.92 ms, 1x256x56x56
     * 3.63 -> 3.45); with U past it (8x256x28x28 -> 512, 7 units of U's 18.9 MB, and 8 x 512
     * on 28^2, 5 of 37.7 MB) block mode, each worker streaming all of U for every unit, was
     * 4% slower. */
    size_t threads = plan->threads > 0 ? (size_t)plan->threads : 1;
    const int balanced = busiest_worker_tiles(&g, threads) * 10 <= g.tiles * (size_t)g.groups * 11 / threads;
    g.u_size = a2 * (size_t)g.groups * g.kgp * cg * sizeof(float);
    g.block_mode = threads == 1 || g.units >= 4 * threads ||
                   (g.units >= 2 * threads && g.u_size <= WINO_U_CACHED_BYTES) ||
                   (balanced && (g.units % threads == 0 || g.u_size <= WINO_U_PRIVATE_BYTES));
    g.workers = g.block_mode ? (g.units < threads ? g.units : threads) : threads;
    g.vm_workers = g.block_mode ? g.workers : 1;

    if (!plan->weights) g.u_bytes = fconv_round_up_64(g.u_size);
    g.v_xn = skewed_row(cg * g.tb);
    g.m_xn = skewed_row(kg * g.tb);
    g.v_bytes = fconv_round_up_64(a2 * g.v_xn * sizeof(float));
    g.m_bytes = fconv_round_up_64(a2 * g.m_xn * sizeof(float));
    g.scratch_bytes = fconv_round_up_64(a2 * g.tb * sizeof(float)); /* d, or out */
    g.total = g.padded_bytes + g.u_bytes + g.vm_workers * (g.v_bytes + g.m_bytes) +
              g.workers * g.scratch_bytes;
    return g;
}

/* ---- filter transform: U[g][ξν][k][c] = (G w[g*kg + k][c] G^T)[ξ][ν] ------------------------
 * stored per (g, ξν) as kgp/mr slivers of mr rows, channel-major: element (k, c) at
 * (k/mr)*cg*mr + c*mr + k%mr (mr = 1: plain row-major); rows kg..kgp-1 are zero. */

/* Where element (k, c) of U[group][ξν = xn] lies (the one place that knows the layout). */
static size_t u_offset(const struct wino_geometry *g, size_t group, size_t xn, size_t k, size_t c) {
    size_t a2 = (size_t)(g->alpha * g->alpha), cg = (size_t)g->cg, mr = g->mr;
    return (group * a2 + xn) * g->kgp * cg + (k / mr) * cg * mr + c * mr + k % mr;
}

struct filter_ctx {
    const struct wino_geometry *g;
    const float *w;
    float *u;
};

/* The r x r kernel of GEMM channel ch from filter wk (kr x ks, one input channel's): the
 * phase's taps w[stride*i + a][stride*j + b], zero past the kernel (at stride 1, wk itself). */
static void phase_kernel(const struct wino_geometry *g, const float *wk, size_t ch, float *kernel) {
    int64_t phase = (int64_t)ch % g->phases, a = phase / g->stride, b = phase % g->stride, r = g->r;
    for (int64_t i = 0; i < r; i++)
        for (int64_t j = 0; j < r; j++) {
            int64_t si = g->stride * i + a, sj = g->stride * j + b;
            kernel[i * r + j] = si < g->kr && sj < g->ks ? wk[si * g->ks + sj] : 0.0f;
        }
}

static void filter_task(const void *vctx, size_t k) {
    const struct filter_ctx *c = vctx;
    const struct wino_geometry *g = c->g;
    size_t a2 = (size_t)(g->alpha * g->alpha), cg = (size_t)g->cg, kg = (size_t)g->kg;
    size_t group = k / kg, kk = k % kg, taps = (size_t)(g->kr * g->ks);
    for (size_t ch = 0; ch < cg; ch++) { /* consecutive ξν are kgp*cg apart */
        float kernel[16];
        phase_kernel(g, c->w + (k * (size_t)g->cs + ch / (size_t)g->phases) * taps, ch, kernel);
        fconv_wino_transform_filter(g->mat, kernel, c->u + u_offset(g, group, 0, kk, ch), g->kgp * cg);
    }
    if (kk + 1 == kg) /* the last row of the group: zero the padding rows of its last sliver */
        for (size_t x = 0; x < a2; x++)
            for (size_t pad = kg; pad < g->kgp; pad++)
                for (size_t ch = 0; ch < cg; ch++) c->u[u_offset(g, group, x, pad, ch)] = 0.0f;
}

/* Transform all weights w into u (the layout above), on the plan's threads. */
static void transform_weights(const fconv_plan *plan, const struct wino_geometry *g,
                              const float *w, float *u) {
    if (plan->kind != FCONV_KIND_CONV2D) {
        float kc[9];
        fconv_filter_correlation_kernel(plan, w, kc);
        fconv_wino_transform_filter(g->mat, kc, u, 1);
        return;
    }
    struct filter_ctx c = {g, w, u};
    fconv_parallel_1d(plan->threads, (size_t)(g->groups * g->kg), filter_task, &c);
}

/* ---- the three phases of one unit (group, tile block) --------------------------------------- */

struct unit_ctx {
    const struct wino_geometry *g;
    const float *x, *u, *bias;
    float *y;
    char *vm;      /* V and M of the workers (block mode) or of the unit (phase mode) */
    char *scratch; /* one scratch_bytes region per worker */
    size_t unit;   /* phase mode: the unit being run */
};

/* Which unit is which: its group, first tile and number of tiles. */
static void unit_range(const struct wino_geometry *g, size_t unit, size_t *group, size_t *t0,
                       size_t *nt) {
    *group = unit / g->blocks;
    *t0 = (unit % g->blocks) * g->tb;
    *nt = block_tiles(g, unit % g->blocks);
}

/* Image, tile row and tile column of global tile t. */
static void tile_coords(const struct wino_geometry *g, size_t t, int64_t *n, int64_t *ty,
                        int64_t *tx) {
    size_t per_image = (size_t)(g->tiles_h * g->tiles_w);
    size_t r = t % per_image;
    *n = (int64_t)(t / per_image);
    *ty = (int64_t)(r / (size_t)g->tiles_w);
    *tx = (int64_t)(r % (size_t)g->tiles_w);
}

/* Live tiles at the end of a block that go to the few-column kernel: it spends about one
 * multiply-add per column and channel step where a 16-wide tile spends mr = 6 (measured,
 * k = 512: 2.9, 4.1 and 5.2 cycles per step for 1, 4 and 5 columns against 6.0). 28x28
 * maps have 49 tiles (32 + 16 + 1), 7x7 ones 4 with F(4x4). */
#define WINO_FEW_COLUMNS 4

/* Packed V: the width of the sliver starting at block column s of a block with nt live
 * tiles: nr while more than a half-width sliver and a few columns remain, else the 16-tile
 * strip (nr itself on AVX2, nr / 2 on AVX-512). The slivers fill round_up(nt, strip). */
static size_t sliver_width(const struct wino_geometry *g, size_t s, size_t nt) {
    const size_t nr = g->kern->gemm_nr;
    return nr == 2 * FCONV_WINO_STRIP && nt - s > FCONV_WINO_STRIP + WINO_FEW_COLUMNS ? nr : FCONV_WINO_STRIP;
}

/* Asks for columns [c0, c0 + len) of image row xr (clamped to [0, w)) to be cached. The
 * gather reads a few rows of each channel, a channel plane apart: streams too short for the
 * hardware prefetcher, so on maps that do not stay cached the input phase waited on memory
 * (1x64x224x224, 2 threads: input phase 2.15 -> 1.45 ms per worker with the next channel's
 * rows asked for while this one's are gathered, the layer 8.1 -> 7.5 ms). */
static void prefetch_columns(const float *xr, int64_t c0, int64_t len, int64_t w) {
    int64_t c1 = c0 + len;
    if (c0 < 0) c0 = 0;
    if (c1 > w) c1 = w;
    const char *p = (const char *)xr;
    for (int64_t b = c0 * (int64_t)sizeof(float) & ~(int64_t)63; b < c1 * (int64_t)sizeof(float); b += 64)
        __builtin_prefetch(p + b);
}

/* Maps four tiles wide (F(4x4) on 14x14 and 16x16 outputs) go a few whole tile rows at a
 * time: the image and tile row of global tile t, the first of its row (blocks start on a
 * tile row, tb being a multiple of 16, and hold whole ones), and how many tile rows of that
 * image, up to four, the `left` tiles from t hold. */
static size_t grid_tile_rows(const struct wino_geometry *g, size_t t, size_t left, int64_t *n, int64_t *ty) {
    int64_t tx;
    tile_coords(g, t, n, ty, &tx);
    size_t rows = (size_t)(g->tiles_h - *ty);
    if (rows > 4) rows = 4;
    return rows < left / 4 ? rows : left / 4;
}

/* Whether F(m x m)'s gather and scatter run on the dispatched SIMD kernels (m = 2, 3, 4); F(6x6)
 * copies scalars, which the cost model charges for. */
static int simd_moves(int64_t m) { return m <= 4; }

/* Channel c of the unit's group: gather each tile's alpha x alpha patch (zero outside the
 * input) tile-minor into d, transform into V[ξν][c][.]. Tiles are taken a tile-row run at a
 * time, so that for each patch element the copy is one strided read (stride m) per run. */
static void input_channel(const struct unit_ctx *u, size_t unit, size_t c, float *scratch,
                          float *v) {
    const struct wino_geometry *g = u->g;
    size_t group, t0, nt, tb = g->tb, a = (size_t)g->alpha;
    int64_t m = g->m, s = g->stride, step = s * m; /* step: x's columns from a tile to the next */
    unit_range(g, unit, &group, &t0, &nt);
    size_t ncols = round_up(nt, FCONV_WINO_STRIP);
    float *d = scratch;
    const int64_t phase = (int64_t)c % g->phases, pa = phase / s, pb = phase % s;
    const float *xc = u->x + (int64_t)(group * (size_t)g->cs + c / (size_t)g->phases) * g->x_c;
    /* the next GEMM channel reads another input channel: ask for its rows while on this one */
    const int next_input = c + 1 < (size_t)g->cg && (int64_t)(c + 1) % g->phases == 0;
    const int grid = m == 4 && g->tiles_w == 4; /* 14x14 and 16x16 maps: whole tile rows per vector */
    /* F(2x2) on maps of at most 4 x 4 tiles (7x7, 8x8): each image's plane into a zero-padded
     * copy on the stack, then every patch element of every tile from there, scalar: the run
     * gather's call per 4-tile run and patch row (16 per channel) was 15% of 1x512x7^2's
     * samples. */
    const int small = m == 2 && s == 1 && g->tiles_w <= 4 && g->tiles_h <= 4;
    for (size_t t = 0; t < nt && small;) {
        enum { SIDE = 4 * 2 + 2 };
        float plane[SIDE * SIDE];
        int64_t n, ty, tx;
        tile_coords(g, t0 + t, &n, &ty, &tx);
        for (int64_t i = 0; i < SIDE; i++) {
            const int64_t row = i - g->pad_top;
            float *plane_row = plane + i * SIDE;
            if (row < 0 || row >= g->h) fconv_zero_floats(plane_row, SIDE);
            else fconv_copy_padded_row(plane_row, SIDE, xc + n * g->x_n + row * g->x_h, g->w, -g->pad_left);
        }
        /* the image's tiles of this unit, from t on, each patch element's row of d filled
         * in one pass over the tiles (a tile at a time, the stores went tb floats apart:
         * 1 x 512 x 7^2, one thread, 9% of the samples were this copy) */
        const size_t per_image = (size_t)(g->tiles_h * g->tiles_w), first = (t0 + t) % per_image;
        const size_t count = per_image - first < nt - t ? per_image - first : nt - t;
        size_t origin[4 * 4]; /* each tile's patch in the plane */
        for (size_t e = 0; e < count; e++)
            origin[e] = (first + e) / (size_t)g->tiles_w * 2 * SIDE + (first + e) % (size_t)g->tiles_w * 2;
        for (size_t i = 0; i < a; i++)
            for (size_t j = 0; j < a; j++) {
                float *restrict dst = d + (i * a + j) * tb + t;
                const float *src = plane + i * SIDE + j;
                for (size_t e = 0; e < count; e++) dst[e] = src[origin[e]];
            }
        t += count;
    }
    for (size_t t = 0; t < nt && grid && !small;) {
        /* In 4-tile runs, the run gather had been a fifth of a 1x128x16x16 layer's time (a
         * call and a quarter-full vector per run and row). */
        int64_t n, ty;
        const size_t trows = grid_tile_rows(g, t0 + t, nt - t, &n, &ty);
        const float *rows[4 * 6];
        for (size_t e = 0; e < trows * 6; e++) {
            int64_t row = (ty + (int64_t)(e / 6)) * m - g->pad_top + (int64_t)(e % 6);
            rows[e] = row >= 0 && row < g->h ? xc + n * g->x_n + row * g->x_h : NULL;
            if (rows[e] && next_input) prefetch_columns(rows[e] + g->x_c, -g->pad_left, 4 * m + 2, g->w);
        }
        g->kern->wino_f4_gather_grid(rows, -g->pad_left, g->w, trows * 4, d + t, tb);
        t += trows * 4;
    }
    for (size_t t = 0; t < nt && !grid && !small;) {
        int64_t n, ty, tx;
        tile_coords(g, t0 + t, &n, &ty, &tx);
        size_t run = (size_t)(g->tiles_w - tx);
        if (run > nt - t) run = nt - t;
        int64_t row0 = ty * step + pa - g->pad_top;
        for (size_t i = 0; i < a; i++) {
            int64_t row = row0 + s * (int64_t)i;
            const int inside = row >= 0 && row < g->h;
            const float *xr = inside ? xc + n * g->x_n + row * g->x_h : NULL;
            if (inside && next_input) /* the next input channel's same row */
                prefetch_columns(xr + g->x_c, tx * step + pb - g->pad_left,
                                 (int64_t)run * step + s * (g->alpha - m), g->w);
            if (simd_moves(m) && inside) { /* the dispatched SIMD gather */
                g->kern->wino_gather(xr, tx * step + pb - g->pad_left, g->w, (size_t)m, run, d + i * a * tb + t, tb);
                continue;
            }
            for (size_t j = 0; j < a; j++) {
                float *restrict dst = d + (i * a + j) * tb + t;
                if (!inside) {
                    for (size_t r = 0; r < run; r++) dst[r] = 0.0f;
                    continue;
                }
                /* column of tile r of the run: col0 + r*step; inside for r in [lo, hi) */
                int64_t col0 = tx * step + s * (int64_t)j + pb - g->pad_left;
                int64_t lo = col0 >= 0 ? 0 : (-col0 + step - 1) / step;
                int64_t hi = col0 < g->w ? (g->w - 1 - col0) / step + 1 : 0;
                if (hi > (int64_t)run) hi = (int64_t)run;
                if (lo > hi) lo = hi;
                for (int64_t r = 0; r < lo; r++) dst[r] = 0.0f;
                for (int64_t r = lo; r < hi; r++) dst[r] = xr[col0 + r * step];
                for (int64_t r = hi; r < (int64_t)run; r++) dst[r] = 0.0f;
            }
        }
        t += run;
    }
    for (size_t e = 0; e < a * a; e++) /* padding columns of the last strip: never written out */
        for (size_t t = nt; t < ncols; t++) d[e * tb + t] = 0.0f;
    if (!g->packed) {
        g->kern->wino_input[g->mat->input_slot](d, a * tb, tb, v + c * tb, g->v_xn, ncols);
        return;
    }
    /* V as the micro-kernel's B panels: per ξν, slivers channel-major (the one from column s
     * at v + s*cg, channel c's row of it at + c*width) */
    for (size_t sv = 0, width; sv < ncols; sv += width) {
        width = sliver_width(g, sv, nt);
        if (nt - sv > WINO_FEW_COLUMNS) {
            g->kern->wino_input[g->mat->input_slot](d + sv, a * tb, tb, v + sv * (size_t)g->cg + c * width, g->v_xn,
                                                    width);
            continue;
        }
        /* The block's last few tiles, for the few-column kernel: channel c's row of that
         * sliver only `few` wide (it reads a column of B per row of A, and on the sliver's
         * 16-float rows each was a cache line of its own, out of L1 beside A: 1 x 512 x 28^2,
         * 49 tiles as 32 + 16 + 1, 2 threads, 5.27 -> 5.00 ms). Written so here, the rows
         * are not moved in V later: the products only read it. */
        const size_t few = nt - sv;
        float rows[8 * 8 * FCONV_WINO_STRIP]; /* alpha <= 8 (F(6x6)) */
        g->kern->wino_input[g->mat->input_slot](d + sv, a * tb, tb, rows, FCONV_WINO_STRIP, width);
        for (size_t xn = 0; xn < a * a; xn++)
            memcpy(v + xn * g->v_xn + sv * (size_t)g->cg + c * few, rows + xn * FCONV_WINO_STRIP, few * sizeof *rows);
    }
}

/* M[ξν] (kg x tiles) = U[group][ξν] (kg x cg) * V[ξν] (cg x tiles). */
static void multiply(const struct unit_ctx *u, size_t unit, size_t xn, float *v, float *mm) {
    const struct wino_geometry *g = u->g;
    size_t group, t0, nt, tb = g->tb, cg = (size_t)g->cg, kg = (size_t)g->kg;
    unit_range(g, unit, &group, &t0, &nt);
    size_t ncols = round_up(nt, FCONV_WINO_STRIP);
    const float *ux = u->u + u_offset(g, group, xn, 0, 0);
    float *vx = v + xn * g->v_xn;
    float *mx = mm + xn * g->m_xn;
    if (g->packed) { /* U and V are the panels already: the micro-kernel alone */
        const size_t mr = g->mr, nr = g->kern->gemm_nr;
        /* A half-width sliver against all whole row slivers of U in one call, several of them
         * sharing each of its loads (gemm_ukernel_half_rows); the whole-width and few-column
         * tiles, and a last part sliver of U, one row sliver at a time. */
        const size_t whole_rows = kg / mr * mr;
        for (size_t i = 0; i < kg; i += mr) {
            const size_t rows = kg - i < mr ? kg - i : mr;
            for (size_t s = 0, width; s < ncols; s += width) {
                width = sliver_width(g, s, nt);
                if (nt - s <= WINO_FEW_COLUMNS) /* the block's last few tiles, few wide (input_channel) */
                    g->kern->gemm_ukernel_cols(cg, ux + i * cg, vx + s * cg, nt - s, mx + i * tb + s, tb, rows,
                                               nt - s, width);
                else if (width == nr)
                    g->kern->gemm_ukernel(cg, ux + i * cg, vx + s * cg, width, mx + i * tb + s, tb, 0, rows, width,
                                          NULL, 0);
                else if (i >= whole_rows)
                    g->kern->gemm_ukernel_half(cg, ux + i * cg, vx + s * cg, width, mx + i * tb + s, tb, 0, rows,
                                               width, NULL, 0);
                else if (i == 0)
                    g->half_rows(cg, ux, whole_rows / mr, vx + s * cg, width, mx + s, tb);
            }
        }
        return;
    }
    if (cg == 1) { /* depthwise / filter2d: an outer product, no GEMM worth calling */
        for (size_t k = 0; k < kg; k++) {
            float s = ux[k];
            float *restrict mk = mx + k * tb;
            const float *restrict vk = vx;
            for (size_t t = 0; t < ncols; t++) mk[t] = s * vk[t];
        }
        return;
    }
    fconv_gemm(1, 0, 0, kg, ncols, cg, ux, cg, vx, tb, 0, mx, tb);
}

/* Output channel k of the unit's group: A^T M A, bias, ReLU, the valid part written to y. */
static void output_channel(const struct unit_ctx *u, size_t unit, size_t k, float *scratch,
                           const float *mm) {
    const struct wino_geometry *g = u->g;
    size_t group, t0, nt, tb = g->tb, m = (size_t)g->m;
    unit_range(g, unit, &group, &t0, &nt);
    size_t ncols = round_up(nt, FCONV_WINO_STRIP);
    float *out = scratch;
    g->kern->wino_output[g->mat->output_slot](mm + k * tb, g->m_xn, out, m * tb, tb, NULL, 0, 0, ncols);
    int64_t kk = (int64_t)(group * (size_t)g->kg + k), mi = (int64_t)m;
    int has_bias = u->bias != NULL, relu = g->relu;
    float b = has_bias ? u->bias[kk] : 0.0f;
    const int grid = mi == 4 && g->tiles_w == 4 && g->y_q == 1; /* as in input_channel */
    for (size_t t = 0; t < nt && grid;) {
        int64_t n, ty;
        const size_t trows = grid_tile_rows(g, t0 + t, nt - t, &n, &ty);
        float *yrows[4 * 4];
        for (size_t e = 0; e < trows * 4; e++) {
            int64_t row = (ty + (int64_t)(e / 4)) * mi + (int64_t)(e % 4);
            yrows[e] = row < g->out_h ? u->y + n * g->y_n + kk * g->y_k + row * g->y_p : NULL;
        }
        g->kern->wino_f4_scatter_grid(out + t, tb, trows * 4, yrows, g->out_w, has_bias ? &b : NULL, relu);
        t += trows * 4;
    }
    for (size_t t = 0; t < nt && !grid;) { /* a tile-row run at a time, as in input_channel */
        int64_t n, ty, tx;
        tile_coords(g, t0 + t, &n, &ty, &tx);
        size_t run = (size_t)(g->tiles_w - tx);
        if (run > nt - t) run = nt - t;
        for (int64_t i = 0; i < mi && ty * mi + i < g->out_h; i++) {
            float *yrow = u->y + n * g->y_n + kk * g->y_k + (ty * mi + i) * g->y_p;
            if (simd_moves(mi) && g->y_q == 1) { /* the dispatched SIMD scatter */
                g->kern->wino_scatter(out + (size_t)(i * mi) * tb + t, tb, m, run, yrow, tx * mi, g->out_w,
                                      has_bias ? &b : NULL, relu, g->stream);
                continue;
            }
            for (int64_t j = 0; j < mi && tx * mi + j < g->out_w; j++) {
                int64_t q0 = tx * mi + j, hi = (g->out_w - 1 - q0) / mi + 1;
                if (hi > (int64_t)run) hi = (int64_t)run;
                const float *restrict src = out + (size_t)(i * mi + j) * tb + t;
                for (int64_t r = 0; r < hi; r++) {
                    float val = src[r];
                    if (has_bias) val += b;
                    if (relu && val < 0.0f) val = 0.0f; /* NaN stays NaN */
                    yrow[(q0 + r * mi) * g->y_q] = val;
                }
            }
        }
        t += run;
    }
}

static float *worker_scratch(const struct unit_ctx *u, size_t worker) {
    return (float *)(u->scratch + worker * u->g->scratch_bytes);
}

/* Block mode: each worker runs its contiguous share of the units, then takes those of the
 * others' it finds not yet begun (fconv_parallel_steal), with its own V, M and scratch. The
 * VM's vCPUs can run at unequal speeds for minutes: 8x128x28^2 -> 128 on 2 threads (6 and 7
 * units of 32 tiles) took one worker 4.4 M TSC ticks and the other 7.4 M in such a spell,
 * 4.4 and 4.6 M out of it. */
static void block_units_piece(const void *vctx, size_t first, size_t last, size_t worker) {
    const struct unit_ctx *u = vctx;
    const struct wino_geometry *g = u->g;
    float *v = (float *)(u->vm + worker * g->v_bytes);
    float *mm = (float *)(u->vm + g->vm_workers * g->v_bytes + worker * g->m_bytes);
    float *scratch = worker_scratch(u, worker);
    size_t a2 = (size_t)(g->alpha * g->alpha);
    for (size_t unit = first; unit < last; unit++) {
        for (size_t c = 0; c < (size_t)g->cg; c++) input_channel(u, unit, c, scratch, v);
        for (size_t xn = 0; xn < a2; xn++) multiply(u, unit, xn, v, mm);
        for (size_t k = 0; k < (size_t)g->kg; k++) output_channel(u, unit, k, scratch, mm);
    }
    if (g->stream) fconv_stream_fence();
}

/* Phase mode: one unit at a time, each phase split across the workers. The input and output
 * phases' channels go in pieces of 8 with stealing (fconv_parallel_steal): nothing a thread
 * caches stays with a channel from one unit to the next (2 threads, 11 alternated rounds,
 * within the noise: 1x128x28^2 0.370 -> 0.357 ms, 1x256x14^2 0.317 -> 0.323, 1x512x7^2 F(2x2)
 * 0.612 -> 0.622, 1x256x28^2 -> 512 1.808 -> 1.797; with a busy loop on the second vCPU
 * 0.397 -> 0.364, 5.95 -> 5.84). The products of several units stay a static split: stolen
 * ξν made 1x256x56^2 and 1x128x56^2 -> 256 2-3% slower while the vCPUs ran at one speed (13
 * alternated rounds, all three phases stealing), and a dynamic split 5%: a ξν taken by the
 * other thread brings its U (256 KiB here) to that core, where the static split has each
 * thread read the same half of U unit after unit. With one unit there is no next unit to
 * keep U's half for, and the products are stolen (of the suite's layers 1x512x7^2 F(2x2)
 * and 1x128x16^2): 2 threads, Emerald Rapids VM, 21 rounds in one process, ABAB and BABA,
 * geometric means of the two, six sittings: 0.99-1.00x while the vCPUs kept one speed,
 * 1.06x and 1.17x in the two sittings where they did not. */
#define WINO_CHANNELS_PER_PIECE 8

static void input_phase_piece(const void *vctx, size_t c0, size_t c1, size_t worker) {
    const struct unit_ctx *u = vctx;
    for (size_t c = c0; c < c1; c++) input_channel(u, u->unit, c, worker_scratch(u, worker), (float *)u->vm);
}

static void multiply_phase_task(const void *vctx, size_t xn) {
    const struct unit_ctx *u = vctx;
    multiply(u, u->unit, xn, (float *)u->vm, (float *)(u->vm + u->g->v_bytes));
}

static void output_phase_piece(const void *vctx, size_t k0, size_t k1, size_t worker) {
    const struct unit_ctx *u = vctx;
    for (size_t k = k0; k < k1; k++)
        output_channel(u, u->unit, k, worker_scratch(u, worker), (const float *)(u->vm + u->g->v_bytes));
    if (u->g->stream) fconv_stream_fence();
}

static void wino_run(const fconv_plan *plan, int m, const float *x, const float *w,
                     const float *bias, float *y, void *workspace) {
    struct wino_geometry g = geometry(plan, m);
    char *ws = workspace;
    if (plan->kind != FCONV_KIND_CONV2D) {
        fconv_filter_pad_planar(plan, x, (float *)ws);
        x = (const float *)ws;
        ws += g.padded_bytes;
    }
    const float *u = plan->algo_state;
    if (!plan->weights) { /* weights given now: transform them into the workspace */
        transform_weights(plan, &g, w, (float *)ws);
        u = (const float *)ws;
        ws += g.u_bytes;
    }
    struct unit_ctx ctx = {&g, x, u, bias, y, ws,
                           ws + g.vm_workers * (g.v_bytes + g.m_bytes), 0};
    if (g.block_mode) {
        fconv_parallel_steal((int)g.workers, g.units, 1, block_units_piece, &ctx);
        return;
    }
    size_t a2 = (size_t)(g.alpha * g.alpha);
    for (size_t unit = 0; unit < g.units; unit++) {
        ctx.unit = unit;
        fconv_parallel_steal(plan->threads, (size_t)g.cg, WINO_CHANNELS_PER_PIECE, input_phase_piece, &ctx);
        if (g.units == 1) /* U's products go where a thread is free (above) */
            fconv_parallel_1d_steal(plan->threads, a2, multiply_phase_task, &ctx);
        else
            fconv_parallel_1d(plan->threads, a2, multiply_phase_task, &ctx);
        fconv_parallel_steal(plan->threads, (size_t)g.kg, WINO_CHANNELS_PER_PIECE, output_phase_piece, &ctx);
    }
}

/* ---- table entry functions ------------------------------------------------------------------ */

/* F(3x3, 4x4) on the stride-2 phases (conv2d alone: the table says so): stride 2, dilation 1,
 * kernels whose phases are 3 or 4 taps wide (below 5 the 4x4 phase kernels are mostly zeros:
 * a 3x3/2 layer would do 4C * 36/9 = 16C multiplies per output instead of 9C). */
static fconv_status stride2_supports(const fconv_plan *plan, char *why, size_t why_len) {
    const fconv_conv2d_desc *d = &plan->conv2d;
    if (d->stride_h != 2 || d->stride_w != 2) {
        snprintf(why, why_len, "winograd-stride2 needs stride 2, got %lldx%lld", (long long)d->stride_h,
                 (long long)d->stride_w);
        return FCONV_EUNSUPPORTED;
    }
    if (d->dilation_h != 1 || d->dilation_w != 1) {
        snprintf(why, why_len, "winograd-stride2 needs dilation 1, got %lldx%lld", (long long)d->dilation_h,
                 (long long)d->dilation_w);
        return FCONV_EUNSUPPORTED;
    }
    if (d->r < 5 || d->r > 8 || d->s < 5 || d->s > 8) {
        snprintf(why, why_len, "winograd-stride2 needs a kernel from 5x5 to 8x8, got %lldx%lld", (long long)d->r,
                 (long long)d->s);
        return FCONV_EUNSUPPORTED;
    }
    return FCONV_OK;
}

static fconv_status wino_supports(const fconv_plan *plan, int m, char *why, size_t why_len) {
    if (m == 3) return stride2_supports(plan, why, why_len);
    if (plan->kind == FCONV_KIND_CONV1D) {
        snprintf(why, why_len, "winograd-%dx%d does not serve conv1d (a 1 x m kernel; it needs 3x3)",
                 m, m);
        return FCONV_EUNSUPPORTED;
    }
    if (plan->kind == FCONV_KIND_FILTER2D) {
        if (plan->filter.kh != 3 || plan->filter.kw != 3) {
            snprintf(why, why_len, "winograd-%dx%d needs a 3x3 kernel, got %lldx%lld", m, m,
                     (long long)plan->filter.kh, (long long)plan->filter.kw);
            return FCONV_EUNSUPPORTED;
        }
        return FCONV_OK;
    }
    const fconv_conv2d_desc *d = &plan->conv2d;
    if (d->r != 3 || d->s != 3) {
        snprintf(why, why_len, "winograd-%dx%d needs a 3x3 kernel, got %lldx%lld", m, m,
                 (long long)d->r, (long long)d->s);
        return FCONV_EUNSUPPORTED;
    }
    if (d->stride_h != 1 || d->stride_w != 1) {
        snprintf(why, why_len, "winograd-%dx%d needs stride 1, got %lldx%lld", m, m,
                 (long long)d->stride_h, (long long)d->stride_w);
        return FCONV_EUNSUPPORTED;
    }
    if (d->dilation_h != 1 || d->dilation_w != 1) {
        snprintf(why, why_len, "winograd-%dx%d needs dilation 1, got %lldx%lld", m, m,
                 (long long)d->dilation_h, (long long)d->dilation_w);
        return FCONV_EUNSUPPORTED;
    }
    return FCONV_OK;
}

/* Columns the packed products compute, per group: every block's live tiles rounded up to
 * the strip, except a last few (WINO_FEW_COLUMNS) on the few-column kernel, which cost
 * about a sixth of a 16-wide sliver each (mr = 6 multiply-adds per step there, one here). */
static double product_columns(const struct wino_geometry *g) {
    double cols = 0.0;
    for (size_t b = 0; b < g->blocks; b++) {
        size_t nt = block_tiles(g, b);
        size_t few = nt % FCONV_WINO_STRIP <= WINO_FEW_COLUMNS ? nt % FCONV_WINO_STRIP : 0;
        cols += (double)(nt - few) + (few ? 0.0 : (double)(round_up(nt, FCONV_WINO_STRIP) - nt)) +
                (double)few * FCONV_WINO_STRIP / 6.0;
    }
    return cols;
}

/*
 * Which driver runs the plan: the channels-last one (winograd-channels-last.c) wherever it
 * serves an NHWC plan (but the few in the comment below), and an NCHW plan where its
 * products, counted as whole register tiles, run no more tile columns than this driver's
 * (16-tile strips against its 7-tile register tiles: a 14^2 or 16^2 map's 16 F(4x4) tiles are
 * one strip here, 7 + 7 + 7 there, although the last 2 run on a narrow tile: counted as 16,
 * those maps went there and ran 0.75-0.90x)
 * and an image's output stays within FCONV_CACHED_BYTES and the batch's within the last-level
 * cache (FCONV_LLC_BYTES): this driver streams large outputs, while that one's row transposes
 * read each line of y from memory before they write it (Ice Lake VM, 2 threads, 7-9 alternated
 * rounds in one process, this driver's time / the channels-last's: 8 x 64 x 112^2 -> 128 (51
 * MB of y) 0.89-0.92, 8 x 128 x 112^2 -> 128 0.93; 8 x 64 x 56^2 (6.4 MB) 1.44 stays there).
 * 2 threads, winograd-4x4, 3-5 alternated rounds, this driver's time / the channels-last's
 * with its row transposes: 1 x 64 x 56^2 1.35, 1 x 128 x 56^2 -> 256 1.25, 8 x 128 x 28^2 1.27,
 * 1 x 512 x 28^2 1.18, 8 x 256 x 28^2 -> 512 1.11, 1 x 256 x 56^2 1.00-1.09, 1 x 128 x 112^2
 * 1.06, 8 x 64 x 56^2 1.04, 1 x 128 x 28^2 0.98, 8 x 256 x 56^2 0.98, 1 x 512 x 7^2 1.48; those
 * it leaves here: 16^2 maps 0.76-0.89, 14^2 0.74-0.96 (8 x 256 x 14^2 0.90 and 8 x 512 x 14^2
 * 0.97: 133 columns against 128), 1 x 64 x 224^2 0.83, 8 x 64 x 224^2 0.90. Maps at most two
 * tiles wide (7^2 and 8^2 with F(4x4), up to 12^2 with F(6x6)) go there whatever the columns:
 * this driver's gathers and scatters run 2-tile runs (8 x 512 x 7^2: 35 columns against 32, 1.22
 * in 7 alternated rounds; winograd-6x6, 5 pairs: 8 x 512 x 7^2 1.33, 8 x 256 x 12^2 1.55).
 */
int fconv_wino_channels_last_runs(const fconv_plan *plan, int m) {
    if (!fconv_wino_channels_last_serves(plan, m)) return 0;
    const fconv_conv2d_desc *d = &plan->conv2d;
    /* NHWC: this driver, unless all the tiles fit one of the NCHW driver's strips, U outgrows
     * the last-level cache and this driver's register tiles pad the products more than that
     * strip: U is then read at memory's pace with the multiply-adds of the strip's tiles to hide
     * it, which the NCHW driver's one strip does better than this driver's passes of 7, 7 and 2
     * tiles; it runs on layout.c's copies (x and y of 16 tiles: small). 2 threads, winograd-4x4,
     * 5 alternated rounds, the Sapphire Rapids VM: 1 x 512 x 14^2 NHWC 1.35x, 1 x 512 x 16^2
     * 1.41-1.46, 1 x 1024 x 16^2 1.39-1.45 (U of 37.7 and 151 MB); with U of 9.4 MB (256
     * channels) level, of 2.4 MB (128) 0.8; 8 x 512 x 14^2 (128 tiles) 0.84-0.87. On Zen 5
     * (docs/benchmarks.md) the NCHW driver had run 1 x 1024 x 16^2 in 3.54-3.58 ms where this
     * one ran it NHWC in 4.06-4.21, 512 channels within 5% either way. The tests that need no
     * geometry go first: every execute asks. */
    if (d->layout == FCONV_LAYOUT_NHWC) {
        const double tiles = (double)d->n * (double)((plan->out_h + m - 1) / m) * (double)((plan->out_w + m - 1) / m);
        const double u_bytes = (double)((m + 2) * (m + 2)) * (double)d->c * (double)d->k * sizeof(float);
        if (tiles > FCONV_WINO_STRIP || u_bytes <= (double)WINO_U_CACHED_BYTES) return 1;
    } else {
        const double y_image = (double)d->k * (double)(plan->out_h * plan->out_w) * sizeof(float);
        if (y_image > FCONV_CACHED_BYTES || y_image * (double)d->n > FCONV_LLC_BYTES) return 0;
    }
    const struct wino_geometry g = geometry(plan, m);
    double whole_tiles;
    fconv_wino_channels_last_columns(plan, m, NULL, &whole_tiles);
    return whole_tiles <= product_columns(&g) || g.tiles_w <= 2;
}

/* Plan-time weights: transform them once into plan->algo_state (U, the layout above). */
static fconv_status wino_prepare(fconv_plan *plan, int m) {
    if (fconv_wino_channels_last_runs(plan, m)) return fconv_wino_channels_last_prepare(plan, m);
    if (!plan->weights) return FCONV_OK;
    struct wino_geometry g = geometry(plan, m);
    float *u = fconv_alloc_aligned(g.u_size);
    if (!u)
        return fconv_fail(FCONV_ENOMEM, "winograd-%dx%d: cannot allocate %zu bytes for the "
                          "transformed weights", m, m, g.u_size);
    transform_weights(plan, &g, plan->weights, u);
    plan->algo_state = u;
    return FCONV_OK;
}

static void wino_release(fconv_plan *plan) {
    fconv_free_aligned(plan->algo_state);
    plan->algo_state = NULL;
}

static size_t wino_workspace(const fconv_plan *plan, int m) {
    return fconv_wino_channels_last_runs(plan, m) ? fconv_wino_channels_last_workspace(plan, m)
                                                  : geometry(plan, m).total;
}

/*
 * Seconds, over the plan's threads.
 * SIMD kernels (packed products): fitted on the Zen 4 VM to rdtsc timings of each phase,
 * one thread, eleven layers (the figures at wino_cost); the products on the micro-kernel at
 * 40 G multiply-adds/s on AVX2 and 52 G on AVX-512 (the 16-wide slivers at its FMA peak)
 * for many channels, padded rows and block columns included.
 * Scalar build (OpenBLAS products): transforms 1.0 ns per element; each GEMM call (alpha²
 * per unit) 0.6 ns per element of U (OpenBLAS packs it every call, which is what makes
 * narrow blocks slow) + 2 flops per multiply-add at 100 GFLOP/s.
 * Depthwise / filter2d (one channel per group): 0.5 ns per product instead of a GEMM.
 * Plus the filter transform when the weights come at execute time.
 */
static double wino_cost(const fconv_plan *plan, int m) {
    struct wino_geometry g = geometry(plan, m);
    double a2 = (double)(g.alpha * g.alpha), cg = (double)g.cg, kg = (double)g.kg;
    double cols = (double)g.units * (double)g.tb; /* block columns, padding included */
    double t;
    if (g.packed) {
        /* Per block column, element and channel, timed by phase (1x3x224x224 -> 64, 1x64x56x56,
         * 1x128x28x28, 1x256x14x14, 1x512x7x7, 1x64x224x224, 1x256x16x16, 1x128x56x56 -> 256,
         * F(2x2) and F(6x6) on 1x64x56x56):
         * the input phase 0.22 ns on 224x224 maps to 0.7-0.9 on 14x14 and 16x16 ones (short
         * tile rows: partial vectors in the gather), the output phase 0.13 to 0.39; F(6x6)
         * gathers by scalar copies (the others by SIMD ones).
         * The products: a micro-kernel call's fixed cost is worth about 2 channel steps
         * (refitted 2026-11-25 on AVX-512, AVX2 taking the same form unmeasured; one thread,
         * perf samples by phase: 3 -> 64 channels on 224^2 ran its products at 33 G
         * multiply-adds/s, where 4 steps had modelled 22 and put the layer's estimate at 2.21
         * ms against 1.84 measured, above im2col's; 64 -> 64: 51). The 7x7/2 stem (4 x 3
         * channels) on one thread had been 1.92 ms estimated, 1.5 measured; implicit-gemm's
         * 2.75 against 2.3. */
        double tw = (double)g.tiles_w;
        double in = (0.25e-9 + 1.5e-9 / tw + (simd_moves(m) ? 0.0 : 0.5e-9)) * cg;
        double out = (0.15e-9 + 0.5e-9 / tw) * kg;
        double rate = (g.kern->isa >= FCONV_ISA_AVX512 ? 52e9 : 40e9) * cg / (cg + 2.0);
        double products = (double)g.groups * product_columns(&g);
        /* The channels-last driver: the transforms run the real tiles, the products 7 at a time
         * (a block's last few on a narrow tile), not 16-tile strips: a 7^2 map's four F(4x4)
         * tiles had been charged as 16, and AUTO took winograd-2x2 for 1 x 512 x 7^2 NHWC at
         * 0.58 ms where winograd-4x4 ran 0.52. */
        if (fconv_wino_channels_last_runs(plan, m)) cols = fconv_wino_channels_last_columns(plan, m, &products, NULL);
        t = cols * a2 * (in + out) + products * a2 * (double)g.kgp * cg / rate;
    } else if (g.cg == 1) {
        t = 1.0e-9 * cols * a2 * (cg + kg) + 0.5e-9 * cols * a2 * kg;
    } else {
        t = 1.0e-9 * cols * a2 * (cg + kg) + (double)g.units * a2 * kg * cg * (0.6e-9 + 2.0 * (double)g.tb / 100e9);
    }
    if (!plan->weights) t += 3e-9 * a2 * (double)g.groups * kg * cg;
    if (plan->kind != FCONV_KIND_CONV2D) t += 1e-9 * (double)(g.h * g.w * g.n); /* padding */
    /* An output that outgrows the last-level cache is written back to memory as the output
     * phase scatters it, four rows of a tile run per channel at a time: 8x3x224x224 -> 64
     * (103 MB out) took 3.1 ms per image on one thread against 2.3 at batch 1, where direct,
     * writing whole rows, kept its pace. Not shared between the threads: memory-bound.
     * Streamed (geometry()), the stores skip reading y's lines and mostly overlap the work
     * (8x3x224x224 -> 64, 2 threads: 10.7 -> 7.4 ms); the model takes y 64-byte aligned, as
     * fastconv.h asks of callers after speed (unaligned, this layer runs 10.7-11 ms where
     * direct, the next choice, runs 11). Streamed, the write is taken as wholly behind the
     * work, bounded by the non-temporal store bandwidth of both cores: with the products'
     * refit (above) that layer's estimate is 7.8 ms, measured 7.7-8.4 (added at 60 GB/s, the
     * write had put it at 9.5, above im2col's 8.4, which measured 7.8-8.6). */
    double y_bytes = (double)g.n * (double)g.groups * kg * (double)(g.out_h * g.out_w) * sizeof(float);
    double work = t / plan->threads;
    /* U past a core's L2 is read from the shared cache or memory as the products run, at
     * least once per run, each thread its share: where the cores read that slowly
     * (fconv_cpu_info, Intel's mesh) the products wait on it, not on their multiply-adds.
     * Ice Lake VM, 2 threads, 3-5 alternated rounds: 1 x 512 x 7^2 F(4x4) (U 37.7 MB)
     * 1.73-1.81 ms against F(2x2) (16.8 MB) 1.08-1.62; 1 x 512 x 14^2 NCHW 3.22 against 2.78,
     * NHWC 3.74 against 2.65; 1 x 1024 x 16^2 (F(4x4) 151 MB, 36 tiles a channel) keeps
     * F(4x4), 9.1 against 10.1. On the Zen 5 VM's figure nothing changes: 37.7 MB in ~0.4
     * ms on two threads, F(4x4)'s own time. A U that half the last-level cache cannot keep
     * comes from memory (fconv_cpu_info.memory_read_bytes_per_s: a Zen 4 VM's 1 x 512 x 7^2
     * F(4x4) 1.30 ms, the rate's 1.45; F(2x2), whose 16.8 MB it keeps, 0.79). */
    if (g.packed && g.u_size > WINO_U_PRIVATE_BYTES) {
        const double rate = g.u_size > WINO_U_CACHED_BYTES ? fconv_cpu()->memory_read_bytes_per_s
                                                           : fconv_cpu()->shared_read_bytes_per_s;
        work = fmax(work, (double)g.u_size / (rate * plan->threads));
    }
    if (y_bytes > FCONV_LLC_BYTES) work = g.stream ? fmax(work, y_bytes / 50e9) : work + y_bytes / 20e9;
    return work + 5e-6;
}

#define DEFINE_WINOGRAD(M, SYMBOL, ID, NAME, SERVES, BOUND, SUMMARY)                              \
    static fconv_status supports_##M(const fconv_plan *p, char *why, size_t n) {                  \
        return wino_supports(p, M, why, n);                                                       \
    }                                                                                             \
    static size_t workspace_##M(const fconv_plan *p) { return wino_workspace(p, M); }             \
    static double cost_##M(const fconv_plan *p) { return wino_cost(p, M); }                       \
    static fconv_status prepare_##M(fconv_plan *p) { return wino_prepare(p, M); }                 \
    static void execute_##M(const fconv_plan *p, const float *x, const float *w, const float *b, \
                            float *y, void *ws) {                                                 \
        if (fconv_wino_channels_last_runs(p, M))                                                  \
            fconv_wino_channels_last_execute(p, M, x, w, b, y, ws);                               \
        else wino_run(p, M, x, w, b, y, ws);                                                      \
    }                                                                                             \
    static int nhwc_##M(const fconv_plan *p) { return fconv_wino_channels_last_runs(p, M); }  \
    const struct fconv_algorithm SYMBOL = {                                                       \
        .id = ID,                                                                                 \
        .name = NAME,                                                                             \
        .summary = SUMMARY,                                                                       \
        .serves = SERVES,                                                                         \
        .error_bound = BOUND,                                                                     \
        .supports = supports_##M,                                                                 \
        .workspace = workspace_##M,                                                               \
        .cost = cost_##M,                                                                         \
        .prepare = prepare_##M,                                                                   \
        .release = wino_release,                                                                  \
        .execute = execute_##M,                                                                   \
        .runs_nhwc = nhwc_##M,                                                                    \
    };

#define SERVES_3X3 (FCONV_SERVES_CONV2D | FCONV_SERVES_FILTER2D)
DEFINE_WINOGRAD(2, fconv_algorithm_winograd_2x2, FCONV_ALGO_WINOGRAD_2X2, "winograd-2x2", SERVES_3X3, 1e-6,
                "Winograd F(2x2,3x3): 2.25x fewer multiplies, 3x3 stride-1 only")
DEFINE_WINOGRAD(4, fconv_algorithm_winograd_4x4, FCONV_ALGO_WINOGRAD_4X4, "winograd-4x4", SERVES_3X3, 1e-5,
                "Winograd F(4x4,3x3): 4x fewer multiplies, 3x3 stride-1 only")
DEFINE_WINOGRAD(6, fconv_algorithm_winograd_6x6, FCONV_ALGO_WINOGRAD_6X6, "winograd-6x6", SERVES_3X3, 5e-5,
                "Winograd F(6x6,3x3): 5.06x fewer multiplies, less accurate, 3x3 stride-1 only")
DEFINE_WINOGRAD(3, fconv_algorithm_winograd_stride2, FCONV_ALGO_WINOGRAD_STRIDE2, "winograd-stride2",
                FCONV_SERVES_CONV2D, 1e-5,
                "Winograd F(3x3,4x4) on the stride-2 phases: 5x5-8x8 kernels at stride 2 (7x7: 3x fewer multiplies)")
