/*
 * gemm-packed.c — fconv_gemm on fastconv's own micro-kernel (gemm-ukernel.c, dispatched per
 * ISA), in the BLIS loop order: C is cut into at most one job per thread (column blocks x
 * row groups, the grid whose largest job, packing included, is smallest); a job walks its
 * columns in chunks of at most NC and k in KC steps, packs that B block into NR-column
 * slivers on its first row block (whole slivers by the micro-kernel as it first multiplies
 * them; they stay in L2 while every A sliver of every row block passes over them, or with
 * one row block share one buffer that stays in L1), packs
 * MC rows of A at a time into MR-row slivers unless A came packed (fconv_gemm_prepacked),
 * and runs the micro-kernel with one B sliver in L1 against each A sliver (on the cores of
 * fconv_cpu_info.gemm_wide_tile, two B slivers at a time against each half of each A sliver:
 * the wide tile, gemm_ukernel_wide, where wide_tile() says so).
 *
 * Every element of C is summed in the same order however C is cut (KC depends on k alone,
 * jobs and chunks start at multiples of NR, and the whole, half-width and packing tiles add
 * p in order alike; only C's last, partial sliver takes other kernels, the same for any
 * cut), so the job grid can follow the thread count while results stay bit-identical for
 * any count.
 */
#include <assert.h>
#include <math.h>
#include <stdint.h>

#include "core/cost-model.h"
#include "core/dispatch.h"
#include "core/internal.h"
#include "core/parallel.h"
#include "core/scratch.h"
#include "kernels/gemm/gemm.h"

/* KC x NC of B (512 KiB) sits in L2 and a KC x NR sliver (16 KiB on AVX2) in L1; MC x KC of A
 * (144 KiB) streams from L2. All are multiples of every MR (4, 6, 8) and NR (4, 16, 32). */
#define KC 256
#define KC_MAX (KC + KC / 4)
#define NC 512
#define MC 144
/* Packing one element of B (or of A) costs about as long as multiplying it into this many
 * rows (columns) of C: 0.11 ns per element copied against 8.6 ps per multiply-add lane
 * (Zen 4, one thread); the job grid weighs the packing each cut repeats with it. */
#define PACK_COST_ROWS 13
/* The fewest columns a job is cut to. */
#define MIN_JOB_COLS 64
/* Column blocks per thread where A comes packed (run_jobs), each of at least this many
 * multiply-adds (~20 us of a core): 64 -> 64 1x1 on 56^2 (12.8 M) in 8 blocks ran 3% slower
 * than in 2. */
#define GEMM_PIECES_PER_THREAD 4
#define GEMM_PIECE_MIN_MACS 4e6
/* The largest packed A for which column blocks replace a grid that cut the rows (each block
 * reads all of A; this much stays in L2 from one block to the next). 2 threads, Emerald
 * Rapids VM, im2col, 21 rounds in one process, ABAB and BABA, geometric means of the two,
 * two sittings: 1 x 512 x 28^2 -> 256 1x1 (A 512 KiB: 2 row groups before, 8 column blocks
 * now) 1.02x and 1.14x, 128 -> 512 1.04x and 1.36x (the larger where one vCPU ran slower). */
#define GEMM_PIECES_A_MAX_BYTES (512.0 * 1024)
/* Edge slivers at most this wide go to the few-column kernel (its limit, core/dispatch.h). */
#define FEW_COLS 8
/* The deepest k step whose untransposed B slivers the micro-kernel reads where they lie,
 * unpacked: a sliver of up to 64 rows (8 KiB on AVX-512) stays in L1 across the row blocks
 * anyway, and with as few as 64 rows of C (a 64 -> 64 1x1 layer: 8 row blocks) its packing
 * was a tenth of the time. 2 threads, Zen 5, 7 alternated rounds: 1 x 64 x 56^2 -> 64 1x1
 * 1.056-1.093x in three sittings, 8 x 64 x 56^2 -> 64 1.06-1.11x; 64 -> 256 0.996-1.016x; one
 * thread 0.99. */
#define B_IN_PLACE_DEPTH 64

struct packed_ctx {
    const struct fconv_kernels *kern;
    int trans_a, trans_b, accumulate;
    int stream;             /* C's whole tiles leave through non-temporal stores (one k step only) */
    size_t m, n, k, lda, ldb, ldc;
    size_t kc;              /* the k step: k alone decides it (see the file comment) */
    size_t n_blocks;        /* job grid: column blocks (NR-column slivers shared evenly) x */
    size_t m_groups;        /* row groups (MR-row slivers shared evenly) */
    const float *a, *b;
    const float *a_packed;  /* all of A packed by fconv_gemm_pack_a, or NULL */
    float *c;
    const float *bias;      /* epilogue (fconv_gemm_prepacked): row i's bias[i], or NULL */
    int relu;               /* epilogue: then max(0, .) */
    int b_in_place;         /* whole B slivers are read unpacked (b_in_place()) */
    fconv_gemm_ukernel_wide_fn wide; /* pairs of whole slivers go to the wide tile, or NULL */
    int whole_tile_edge;    /* C's last, partial sliver goes to the whole tile too (never to the
                               few-column kernel: fconv_gemm_prepacked's split of C) */
    int b_from_memory;      /* B is not in the caches: tiles ask for the next sliver ahead */
};

/* A rows [i0, i0+rows) x k [p0, p0+kc) into MR-row slivers at `to`, k-major, zero past `rows`. */
static void pack_a_block(const struct packed_ctx *g, size_t i0, size_t rows, size_t p0, size_t kc,
                         float *to) {
    const size_t mr = g->kern->gemm_mr;
    for (size_t is = 0; is < rows; is += mr) {
        const size_t live = rows - is < mr ? rows - is : mr;
        float *dst = to + is * kc;
        if (!g->trans_a) {
            for (size_t i = 0; i < live; i++) {
                const float *src = g->a + (i0 + is + i) * g->lda + p0;
                for (size_t p = 0; p < kc; p++) dst[p * mr + i] = src[p];
            }
        } else {
            for (size_t p = 0; p < kc; p++) {
                const float *src = g->a + (p0 + p) * g->lda + i0 + is;
                for (size_t i = 0; i < live; i++) dst[p * mr + i] = src[i];
            }
        }
        for (size_t i = live; i < mr; i++)
            for (size_t p = 0; p < kc; p++) dst[p * mr + i] = 0.0f;
    }
}

/* B k [p0, p0+kc) x columns [j0, j0+cols) into NR-column slivers at pack_b, k-major, zero past
 * `cols`: untransposed, by the ISA's packing kernel; transposed, a sliver at a time. */
static void pack_b_block(const struct packed_ctx *g, size_t p0, size_t kc, size_t j0, size_t cols, float *pack_b) {
    const size_t nr = g->kern->gemm_nr;
    if (!g->trans_b) {
        g->kern->gemm_pack_b(kc, cols, g->b + p0 * g->ldb + j0, g->ldb, pack_b);
        return;
    }
    for (size_t js = 0; js < cols; js += nr) {
        const size_t live = cols - js < nr ? cols - js : nr;
        float *dst = pack_b + js * kc;
        for (size_t j = 0; j < live; j++) {
            const float *src = g->b + (j0 + js + j) * g->ldb + p0;
            for (size_t p = 0; p < kc; p++) dst[p * nr + j] = src[p];
        }
        for (size_t p = 0; p < kc; p++)
            for (size_t j = live; j < nr; j++) dst[p * nr + j] = 0.0f;
    }
}

/* The last columns of an n-column product that go to the few-column kernel: those of C's last,
 * partial sliver left after the half-width pieces (sliver_product). */
static size_t few_column_suffix(size_t n, size_t nr) {
    size_t rest = n % nr;
    if (rest == 0 || rest > nr - nr / 4) return 0;
    while (rest > FEW_COLS) rest -= rest < nr / 2 ? rest : nr / 2;
    return rest;
}

/* One MR-row sliver of A times one B sliver (rows ldb apart: NR where packed, B's own ldb
 * where a whole sliver is read in place) into C. A partial sliver is C's last (jobs and
 * chunks start at multiples of NR, so which columns land in it depends on n alone, and so
 * does the kernel each column meets): it goes in pieces to the narrowest kernel that
 * holds them, the half-width tile for up to NR/2 columns and the few-column kernel for up
 * to FEW_COLS (49 columns were 32 + a whole tile of 32 for 17, 31% of the multiply-adds
 * thrown away; now 32 + 16 + 1). */
static void sliver_product(const struct packed_ctx *g, size_t kc, const float *a, const float *b, size_t ldb,
                           int store, size_t live_m, size_t live_n, float *c, const float *bias, int relu,
                           const float *next, size_t next_rows) {
    const size_t nr = g->kern->gemm_nr, ldc = g->ldc;
    const int acc = store == FCONV_GEMM_ACCUMULATE;
    assert(ldb == nr || live_n == nr); /* B read in place: whole slivers only (b_in_place) */
    if (next && live_n == nr) { /* the next sliver's rows asked for meanwhile */
        g->kern->gemm_ukernel_ahead(kc, a, b, ldb, c, ldc, store, live_m, live_n, bias, relu, next, g->ldb, next_rows);
        return;
    }
    if (live_n > nr - nr / 4 || g->whole_tile_edge) {
        g->kern->gemm_ukernel(kc, a, b, ldb, c, ldc, store, live_m, live_n, bias, relu);
        return;
    }
    const size_t few = few_column_suffix(live_n, nr), j = live_n - few;
    for (size_t h = 0; h < j; h += nr / 2) {
        const size_t piece = j - h < nr / 2 ? j - h : nr / 2;
        g->kern->gemm_ukernel_half(kc, a, b + h, nr, c + h, ldc, store, live_m, piece, bias, relu);
    }
    if (few) { /* the few-column kernel stores its sums; accumulating, they go through a tile */
        float tile[FCONV_GEMM_MR_MAX * FEW_COLS];
        float *to = acc ? tile : c + j;
        const size_t ldt = acc ? few : ldc;
        g->kern->gemm_ukernel_cols(kc, a, b + j, nr, to, ldt, live_m, few, few);
        for (size_t i = 0; acc && i < live_m; i++)
            for (size_t q = 0; q < few; q++) c[i * ldc + j + q] += tile[i * few + q];
        fconv_bias_relu_rows(c + j, ldc, live_m, (int64_t)few, bias, relu);
    }
}

/* Two whole B slivers (src, the first's columns in B) against `rows` rows of A by the wide
 * tile (gemm_ukernel_wide), each A panel in two halves: read where they lie (in_place), or
 * from `packed`, which the first half-panel fills as it reads B where `pack` says so. */
static void wide_pair(const struct packed_ctx *g, size_t kc, const float *a_block, size_t rows, const float *src,
                      int in_place, int pack, float *packed, float *c, int store, const float *bias, int relu) {
    const size_t mr = g->kern->gemm_mr, half = mr / 2, nr = g->kern->gemm_nr;
    for (size_t i = 0; i < rows; i += half) {
        const size_t live = rows - i < half ? rows - i : half;
        const int from_b = in_place || (pack && i == 0);
        g->wide(kc, a_block + i / mr * mr * kc + i % mr, from_b ? src : packed, from_b ? g->ldb : nr,
                from_b ? nr : nr * kc, pack && i == 0 ? packed : NULL, c + i * g->ldc, g->ldc, store, live,
                bias ? bias + i : NULL, relu);
    }
}

/* Part `part` of `parts` of [0, len) cut at multiples of `unit`, the units shared evenly:
 * its start and length (784 columns in two are 384 + 400, not 416 + 368). */
static void share(size_t len, size_t unit, size_t part, size_t parts, size_t *start, size_t *count) {
    const size_t units = (len + unit - 1) / unit, begin = part * units / parts * unit;
    const size_t end = (part + 1) * units / parts * unit;
    *start = begin;
    *count = (end < len ? end : len) - begin;
}

static void packed_job(const void *vctx, size_t job) {
    const struct packed_ctx *g = vctx;
    const size_t mr = g->kern->gemm_mr, nr = g->kern->gemm_nr;
    size_t i_begin, job_rows, j0, block_cols;
    share(g->m, mr, job / g->n_blocks, g->m_groups, &i_begin, &job_rows);
    share(g->n, nr, job % g->n_blocks, g->n_blocks, &j0, &block_cols);
    /* Rows in even blocks of at most MC (512 rows were 144+144+144+80), columns in even
     * chunks of at most NC (a thin last chunk would pack A for little work). */
    const size_t row_blocks = (job_rows + MC - 1) / MC;
    const size_t mc = ((job_rows + row_blocks - 1) / row_blocks + mr - 1) / mr * mr;
    const size_t chunks = (block_cols + NC - 1) / NC;
    const size_t chunk = ((block_cols + chunks - 1) / chunks + nr - 1) / nr * nr;
    /* All of the job's A at once where it fits (a 64 x 256 or 256 x 64 weight matrix does):
     * the column chunks then share one packing instead of each packing it again. Slivers of
     * k step p0 start at p0 * padded_rows, as in one block per step. */
    const size_t padded_rows = (job_rows + mr - 1) / mr * mr;
    const int a_whole = !g->a_packed && chunks > 1 && padded_rows * g->k <= MC * KC_MAX;
    /* the thread's packing buffers (A's only where A comes unpacked); without them, nothing
     * (the execute reports it: core/scratch.h) */
    float *pack_a = g->a_packed ? NULL : fconv_thread_scratch(FCONV_SCRATCH_GEMM_A, MC * KC_MAX);
    float *pack_b = fconv_thread_scratch(FCONV_SCRATCH_GEMM_B, NC * KC_MAX);
    if ((!g->a_packed && !pack_a) || !pack_b) return;
    for (size_t p0 = 0; a_whole && p0 < g->k; p0 += g->kc) {
        const size_t kc = g->k - p0 < g->kc ? g->k - p0 : g->kc;
        pack_a_block(g, i_begin, job_rows, p0, kc, pack_a + p0 * padded_rows);
    }
    for (size_t jc = 0; jc < block_cols; jc += chunk) {
        const size_t cols = block_cols - jc < chunk ? block_cols - jc : chunk;
        for (size_t p0 = 0; p0 < g->k; p0 += g->kc) {
            const size_t kc = g->k - p0 < g->kc ? g->k - p0 : g->kc;
            const int store = p0 > 0 || g->accumulate ? FCONV_GEMM_ACCUMULATE
                              : g->stream                 ? FCONV_GEMM_STREAM
                                                          : FCONV_GEMM_STORE;
            /* Untransposed B is packed by its first row block, a sliver at a time (the
             * whole ones by the micro-kernel as it multiplies them). With one row block a
             * packed sliver is done with once its A slivers have passed, so every sliver goes
             * to the same buffer, whose lines stay in L1 (a sliver of its own sent each
             * packing's stores to L2 for their lines, 32 KiB of them a sliver). Ice Lake VM,
             * 2 threads, 9-31 alternated rounds in one process, im2col, minimums: 256 -> 64
             * 1x1 on 56^2 1.04-1.05x (batch 8 1.03-1.08x), 64 x 56^2 and 128 x 28^2 3x3
             * 1.03-1.04x; several row blocks (64 -> 256) as before. */
            const int pack_later = !g->trans_b, sliver_buffer = pack_later && row_blocks == 1;
            if (!pack_later) pack_b_block(g, p0, kc, j0 + jc, cols, pack_b);
            for (size_t i0 = i_begin; i0 < i_begin + job_rows; i0 += mc) {
                const size_t rows = i_begin + job_rows - i0 < mc ? i_begin + job_rows - i0 : mc;
                const float *a_block = pack_a;
                if (g->a_packed) {
                    a_block = g->a_packed + p0 * ((g->m + mr - 1) / mr * mr) + i0 * kc;
                } else if (a_whole) {
                    a_block = pack_a + p0 * padded_rows + (i0 - i_begin) * kc;
                } else {
                    pack_a_block(g, i0, rows, p0, kc, pack_a);
                }
                /* the epilogue with the last k step, as the micro-kernel stores its tiles */
                const int last = p0 + kc >= g->k, relu = last && g->relu;
                const float *bias = last && g->bias ? g->bias + i0 : NULL;
                for (size_t js = 0; js < cols;) {
                    const size_t live_n = cols - js < nr ? cols - js : nr;
                    const float *src = g->b + p0 * g->ldb + j0 + jc + js;
                    /* a whole sliver read where it lies (b_in_place), else the packed one */
                    const int in_place = g->b_in_place && live_n == nr;
                    float *packed = pack_b + (sliver_buffer ? 0 : js * kc);
                    const int pack = pack_later && !in_place && i0 == i_begin;
                    if (g->wide && cols - js >= 2 * nr) {
                        wide_pair(g, kc, a_block, rows, src, in_place, pack, packed,
                                  g->c + i0 * g->ldc + j0 + jc + js, store, bias, relu);
                        js += 2 * nr;
                        continue;
                    }
                    size_t is = 0;
                    if (pack) {
                        if (live_n < nr) {
                            g->kern->gemm_pack_b(kc, live_n, src, g->ldb, packed);
                        } else {
                            g->kern->gemm_ukernel_pack(kc, a_block, src, g->ldb, packed,
                                                       g->c + i0 * g->ldc + j0 + jc + js, g->ldc, store,
                                                       rows < mr ? rows : mr, bias, relu);
                            is = mr;
                        }
                    }
                    /* Where B comes from memory, after a tile that packed this sliver from B the
                     * others ask for the next sliver's rows, a share each, for its packing tile
                     * (gemm_ukernel_ahead), where that one is whole and packed the same way. 2
                     * threads, Emerald Rapids VM, im2col, 21-31 alternated rounds in one
                     * process, four sittings: 8 x 256 x 56^2 -> 64 1.00-1.14x, -> 128
                     * 1.03-1.09x, 8 x 512 x 28^2 -> 128 1.02-1.03x, -> 256 1.02-1.09x; from the
                     * caches (batch 1) 256 -> 128 on 56^2 0.97x, 256 -> 64 0.98-1.03x, 512 -> 128
                     * on 28^2 1.00-1.06x: not there. */
                    const size_t after = (rows - is + mr - 1) / mr;
                    const int ahead = g->b_from_memory && pack && is > 0 && js + 2 * nr <= cols;
                    for (size_t t = 0; is < rows; is += mr, t++) {
                        const size_t r0 = ahead ? t * kc / after : 0, r1 = ahead ? (t + 1) * kc / after : 0;
                        sliver_product(g, kc, a_block + is * kc, in_place ? src : packed,
                                       in_place ? g->ldb : nr, store, rows - is < mr ? rows - is : mr, live_n,
                                       g->c + (i0 + is) * g->ldc + j0 + jc + js, bias ? bias + is : NULL, relu,
                                       ahead ? src + nr + r0 * g->ldb : NULL, r1 - r0);
                    }
                    js += nr;
                }
            }
        }
    }
    if (g->stream) fconv_stream_fence();
}

/* The k step: k itself up to KC_MAX (one pass, C written once), else even steps of a
 * multiple of 8 no larger than KC. */
static size_t k_step(size_t k) {
    if (k <= KC + KC / 4) return k;
    size_t steps = (k + KC - 1) / KC, kc = (k + steps - 1) / steps;
    return (kc + 7) / 8 * 8;
}

/* Whether C is written in one k step, and so may be streamed: accumulating the later steps
 * would read a streamed C back from memory. */
static int c_written_once(size_t k) { return k_step(k) >= k; }

/* The largest job of a grid of n_blocks column blocks by `groups` row groups, in units of
 * one row x column x k multiply-add lane: its padded tile plus the packing it repeats (B
 * once per row group, A once per column chunk unless packed beforehand). */
static double job_cost(size_t m, size_t n, size_t k, size_t mr, size_t nr, size_t n_blocks, size_t groups,
                       int a_packed) {
    const size_t rows = ((m + mr - 1) / mr + groups - 1) / groups * mr;
    size_t cols = ((n + nr - 1) / nr + n_blocks - 1) / n_blocks * nr;
    if (cols >= n) cols = (n + 7) / 8 * 8; /* one block: its last sliver is cut to 8 or 16 */
    const double chunks = a_packed ? 0.0 : (double)((cols + NC - 1) / NC);
    return (double)k * ((double)rows * (double)cols + PACK_COST_ROWS * ((double)cols + chunks * (double)rows));
}

/* Whether untransposed B's whole slivers go to the micro-kernel unpacked: one k step of at
 * most B_IN_PLACE_DEPTH rows, ldb a whole number of vectors, and the lines of the `cols`
 * columns a tile reads (a sliver, or the wide tile's pair) spread over L1's 64 sets (8 ways)
 * with at most 4 in a set, so that they stay in L1 from one row block to the next (planes of
 * 112^2 or 224^2 floats put every row in the same few sets).
 * Where unaligned loads are slow (fconv_cpu_info.gemm_b_in_place_aligned_only: Intel's cores,
 * and Zen 4's reading such B from memory), B must also start on a vector boundary: from
 * malloc's 16-byte-aligned input every load of B straddled two lines, and packed B ran
 * faster (the same bits: the tiles add p in the same order either way). Ice Lake VM, 2
 * threads, 9 alternated rounds against two copies of the old binary, im2col's 1x1 layers on
 * NCHW: 1 x 64 x 56^2 -> 64 1.16x, -> 256 1.29x; 8 x 64 x 56^2 -> 64 1.38-1.47x, -> 256
 * 1.42-1.79x. */
static int b_in_place(const struct fconv_kernels *kern, int trans_b, size_t k, const float *b, size_t ldb,
                      size_t cols) {
    if (trans_b || k > B_IN_PLACE_DEPTH || ldb % kern->lanes != 0) return 0;
    if (fconv_cpu()->gemm_b_in_place_aligned_only && (uintptr_t)b % (kern->lanes * sizeof(float)) != 0) return 0;
    unsigned char lines[64] = {0};
    const size_t row_lines = (cols * sizeof(float) + 63) / 64 + 1; /* + 1: unaligned */
    for (size_t p = 0; p < k; p++)
        for (size_t l = 0; l < row_lines; l++)
            if (++lines[(p * ldb * sizeof(float) / 64 + l) % 64] > 4) return 0;
    return 1;
}

/* Where 512-bit loads issue two a cycle (fconv_cpu_info.wide_loads_slow unset) the wide tile
 * takes k steps shallower than this only: its pair of slivers (2 x NR x kc floats, 16 KiB at
 * 64) then stays in L1 beside A; from 128 on (32 KiB of a 48 KiB L1) the 8 x 32 tile, whose
 * one sliver fits, ran as fast or faster (Emerald Rapids VM, 2 threads, im2col, 15-31
 * alternated rounds in one process, three sittings: 1x1 of depth 256 1.03-1.11x (256 -> 64 on
 * 56^2, batch 1 and 8, 256 -> 1024 on 14^2), 512 and 1024 1.01-1.09x, 3x3 of depth 576 and
 * 1152 1.04x, depth 128 0.99-1.07x; depth 64 0.95-1.01x, which keeps the wide tile). Where
 * loads set the pace (Ice Lake) its 8 loads a step against 8 x 32's 10 paid at every depth
 * (internal.h). */
#define WIDE_TILE_STEP_BELOW 128

/* Whether pairs of B slivers go to the wide tile (gemm_ukernel_wide) for k steps of kc. */
static int wide_tile(const struct fconv_kernels *kern, size_t kc) {
    const fconv_cpu_info *cpu = fconv_cpu();
    return kern->gemm_ukernel_wide && cpu->gemm_wide_tile && (cpu->wide_loads_slow || kc < WIDE_TILE_STEP_BELOW);
}

static void run_jobs(const struct fconv_kernels *kern, int threads, int trans_a, int trans_b, size_t m, size_t n,
                     size_t k, const float *a, size_t lda, const float *a_packed, const float *b, size_t ldb,
                     int accumulate, int stream, float *c, size_t ldc, const float *bias, int relu,
                     int whole_tile_edge, int b_from_memory) {
    /* The job grid with the smallest largest job, at most one job per thread: columns
     * blocks of at least MIN_JOB_COLS (each packs only its own B columns), row groups where
     * the columns run out or would split unevenly (1 x 196 columns cut in two was 128 + 68;
     * 512 rows cut in two are 256 + 256), ties to columns. */
    const size_t nr = kern->gemm_nr, mr = kern->gemm_mr, t = threads > 1 ? (size_t)threads : 1;
    size_t n_blocks = 1, groups = 1;
    double best = -1.0;
    for (size_t nbk = 1; nbk <= t; nbk++) {
        if (nbk > 1 && n / nbk < MIN_JOB_COLS) break;
        const size_t gr = t / nbk;
        const double cost = job_cost(m, n, k, mr, nr, nbk, gr, a_packed != NULL);
        if (best < 0.0 || cost <= best) best = cost, n_blocks = nbk, groups = gr;
    }
    const size_t slivers = (n + nr - 1) / nr, row_slivers = (m + mr - 1) / mr;
    /* With A packed beforehand a column block packs nothing but its own B, so each thread's
     * columns go as several blocks, which a thread done with its own may take from the other
     * (fconv_parallel_steal: the VM's vCPUs can run at unequal speeds for minutes), also
     * where the grid above had cut the rows (its estimate then differs from the columns' by
     * the padding of half a sliver), as long as every block can keep all of A in L2. */
    const int a_stays = (double)fconv_gemm_packed_a_floats(kern, m, k) * sizeof(float) <= GEMM_PIECES_A_MAX_BYTES;
    if (a_packed && t > 1 && (groups == 1 || a_stays))
        for (size_t pieces = GEMM_PIECES_PER_THREAD; pieces > 1; pieces--) {
            const size_t more = t * pieces;
            if (n / more >= MIN_JOB_COLS && (double)m * (double)(n / more) * (double)k >= GEMM_PIECE_MIN_MACS) {
                n_blocks = more, groups = 1;
                break;
            }
        }
    if (n_blocks > slivers) n_blocks = slivers;
    if (groups > row_slivers) groups = row_slivers;
    const fconv_gemm_ukernel_wide_fn wide = wide_tile(kern, k_step(k)) ? kern->gemm_ukernel_wide : NULL;
    struct packed_ctx g = {kern, trans_a, trans_b, accumulate, stream && !accumulate && c_written_once(k),
                           m, n, k, lda, ldb, ldc, k_step(k), n_blocks, groups, a, b, a_packed, c, bias, relu,
                           b_in_place(kern, trans_b, k, b, ldb, wide ? 2 * nr : nr), wide, whole_tile_edge,
                           b_from_memory};
    fconv_parallel_1d_steal(threads, groups * n_blocks, packed_job, &g);
}

static void zero_c(size_t m, size_t n, int accumulate, float *c, size_t ldc) {
    if (!accumulate) /* C = 0 (or unchanged), as BLAS does with beta */
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < n; j++) c[i * ldc + j] = 0.0f;
}

void fconv_gemm_packed(const struct fconv_kernels *kern, int threads, int trans_a, int trans_b, size_t m,
                       size_t n, size_t k, const float *a, size_t lda, const float *b, size_t ldb,
                       int accumulate, float *c, size_t ldc) {
    if (m == 0 || n == 0) return;
    if (k == 0) {
        zero_c(m, n, accumulate, c, ldc);
        return;
    }
    run_jobs(kern, threads, trans_a, trans_b, m, n, k, a, lda, NULL, b, ldb, accumulate, 0, c, ldc, NULL, 0, 0, 0);
}

/*
 * Measured with A packed (bench/gemm_bench.c, one thread, best of 15; docs/kernels.md): the
 * 8 x 32 AVX-512 tile at 104-113 GFLOP/s on the Zen 4 VM across the ResNet-50 1x1 shapes
 * and the stem's 64 x 12544 x 147 (98), the 6 x 16 AVX2 one at ~80 on the Zen 5 VM; rows
 * padded to MR, C's last columns to 8, the largest job of the thread grid (even shares,
 * near enough), plus C's write (enum fconv_gemm_c_write), and 2 us per call (the threads'
 * start and end). Streamed, C leaves behind the products at up to 25 GB/s per thread (the
 * non-temporal store bandwidth, ~50 GB/s on both cores): 2 threads, 8 x 64 x 56^2 -> 256 1x1
 * (25.7 MB of C) 3.9-4.2 ms against 3.9 of multiply-adds alone (5.0 unstreamed); 8 x 128 x
 * 28^2 -> 512 3.7-4.3 against 3.9.
 */
double fconv_gemm_prepacked_seconds(const struct fconv_kernels *kern, double m, double n, double k, int threads,
                                    enum fconv_gemm_c_write c_write) {
    const double mr = (double)kern->gemm_mr, rate = kern->isa >= FCONV_ISA_AVX512 ? 106e9
                                                   : kern->isa >= FCONV_ISA_AVX2  ? 80e9
                                                                                  : 6e9;
    const double rows = ceil(m / mr) * mr, cols = ceil(n / 8.0) * 8.0;
    const double products = 2.0 * rows * cols * k / rate;
    if (c_write == FCONV_GEMM_C_STREAMED && !c_written_once((size_t)k)) c_write = FCONV_GEMM_C_COPIED;
    const double t = c_write == FCONV_GEMM_C_HIDDEN     ? products
                     : c_write == FCONV_GEMM_C_STREAMED ? fmax(products, 4.0 * m * n / 25e9)
                                                        : products + fconv_stream_seconds(4.0 * m * n);
    return t / (threads > 1 ? threads : 1) + 2e-6;
}

size_t fconv_gemm_packed_a_floats(const struct fconv_kernels *kern, size_t m, size_t k) {
    return (m + kern->gemm_mr - 1) / kern->gemm_mr * kern->gemm_mr * k;
}

void fconv_gemm_pack_a(const struct fconv_kernels *kern, size_t m, size_t k, const float *a, size_t lda,
                       float *packed) {
    /* The layout packed_job reads: k step p0's slivers at p0 * (m rounded up to MR). */
    const size_t padded = (m + kern->gemm_mr - 1) / kern->gemm_mr * kern->gemm_mr, step = k_step(k);
    struct packed_ctx g = {.kern = kern, .m = m, .k = k, .lda = lda, .a = a};
    for (size_t p0 = 0; p0 < k; p0 += step)
        pack_a_block(&g, 0, m, p0, k - p0 < step ? k - p0 : step, packed + p0 * padded);
}

void fconv_gemm_prepacked(const struct fconv_kernels *kern, int threads, size_t m, size_t n, size_t k,
                          const float *a_packed, const float *b, size_t ldb, float *c, size_t ldc, unsigned flags,
                          const float *bias, int relu) {
    const int stream = (flags & FCONV_PREPACKED_STREAM_C) != 0;
    const int from_memory = (flags & FCONV_PREPACKED_B_FROM_MEMORY) != 0;
    if (m == 0 || n == 0) return;
    if (k == 0) {
        zero_c(m, n, 0, c, ldc);
        fconv_bias_relu_rows(c, ldc, m, (int64_t)n, bias, relu);
        return;
    }
    /* Rows of C that begin off a vector boundary (all the same way off: ldc a whole number of
     * vectors) stream from their first boundary on, the columns before it a product of their
     * own on this thread, stored plainly; else none of C's tiles would stream (y 16-byte
     * aligned, as malloc and numpy give it: 8 x 64 x 56^2 -> 256 1x1, 2 threads, Emerald
     * Rapids VM, 21 alternated rounds in two sittings, 4.3-5.1 ms against 3.0-3.9 with the
     * split; 1.00-1.14x on ResNet-50's other NCHW 1x1 layers). The same bits as
     * one product: the few-column kernel sums in chains where every other tile sums p in
     * order, so the columns it takes in one product (few_column_suffix) are its product, and
     * the others' edges go to the whole tile. */
    const size_t lanes = kern->lanes, head = (size_t)(-(uintptr_t)c) % (lanes * sizeof(float)) / sizeof(float);
    const size_t tail = few_column_suffix(n, kern->gemm_nr);
    if (stream && c_written_once(k) && lanes > 1 && ldc % lanes == 0 && (uintptr_t)c % sizeof(float) == 0 &&
        head > 0 && n > head + tail) {
        run_jobs(kern, 1, 0, 0, m, head, k, NULL, 0, a_packed, b, ldb, 0, 0, c, ldc, bias, relu, 1, 0);
        run_jobs(kern, threads, 0, 0, m, n - head - tail, k, NULL, 0, a_packed, b + head, ldb, 0, stream, c + head,
                 ldc, bias, relu, 1, from_memory);
        if (tail)
            run_jobs(kern, 1, 0, 0, m, tail, k, NULL, 0, a_packed, b + (n - tail), ldb, 0, 0, c + (n - tail), ldc,
                     bias, relu, 0, 0);
        return;
    }
    run_jobs(kern, threads, 0, 0, m, n, k, NULL, 0, a_packed, b, ldb, 0, stream, c, ldc, bias, relu, 0, from_memory);
}
