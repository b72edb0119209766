/*
 * dispatch.c — one const kernel table per ISA compiled in, and the choice between them:
 * the best ISA the CPU and OS support (cpu-x86.c), capped once by the FCONV_ISA environment
 * variable (scalar|avx2|avx512; an unknown value or an ISA this machine cannot run falls
 * back to the best available, and fconv_isa_report() says so) and per plan by max_isa.
 */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dispatch.h"
#include "core/internal.h"

static const struct fconv_kernels kernels_scalar = {
    .isa = FCONV_ISA_SCALAR, .name = "scalar", .direct_rows = fconv_direct_rows_kernel__scalar,
    .direct_filter_rows = fconv_direct_filter_rows_kernel__scalar,
    .gemm_ukernel = fconv_gemm_ukernel__scalar, .gemm_ukernel_half = fconv_gemm_ukernel_half__scalar,
    .gemm_ukernel_half_rows = fconv_gemm_ukernel_half_rows__scalar,
    .gemm_ukernel_cols = fconv_gemm_ukernel_cols__scalar,
    .gemm_ukernel_ahead = fconv_gemm_ukernel_ahead__scalar, .gemm_ukernel_pack = fconv_gemm_ukernel_pack__scalar,
    .gemm_mr = 4, .gemm_nr = 4,
    .gemm_pack_b = fconv_gemm_pack_b__scalar,
    .im2col_copy_stride2 = fconv_im2col_copy_stride2__scalar,
    .wino_gather = fconv_wino_gather_kernel__scalar,
    .wino_f4_gather_grid = fconv_wino_f4_gather_grid_kernel__scalar,
    .wino_f4_scatter_grid = fconv_wino_f4_scatter_grid_kernel__scalar,
    .wino_scatter = fconv_wino_scatter_kernel__scalar,
    .wino_input = {fconv_wino_input_f2__scalar, fconv_wino_input_f4__scalar, fconv_wino_input_f6__scalar},
    .wino_output = {fconv_wino_output_f2__scalar, fconv_wino_output_f4__scalar, fconv_wino_output_f6__scalar,
                    fconv_wino_output_f3__scalar},
    .wino_rows_input = fconv_wino_rows_input_kernel__scalar,
    .wino_rows_product = fconv_wino_rows_product_kernel__scalar,
    .wino_cols_input = fconv_wino_cols_input_kernel__scalar,
    .wino_cols_product = fconv_wino_cols_product_kernel__scalar,
    .wino_cols_product_nhwc = fconv_wino_cols_product_nhwc_kernel__scalar,
    .fft_rows_forward = fconv_fft_rows_forward_kernel__scalar,
    .fft_rows_inverse = fconv_fft_rows_inverse_kernel__scalar,
    .fft_rows_stream_row = fconv_fft_rows_stream_row_kernel__scalar,
    .fft_cols_forward = fconv_fft_cols_forward_kernel__scalar,
    .fft_cols_inverse = fconv_fft_cols_inverse_kernel__scalar,
    .implicit_gemm_tile = fconv_implicit_gemm_tile__scalar, .implicit_gemm_tiles = fconv_implicit_gemm_tiles__scalar,
    .implicit_gemm_px = 4, .implicit_gemm_nv = 4, .implicit_gemm_px_registers = 4, .lanes = 1,
    .transpose = fconv_transpose__scalar,
    .transpose_streamed = fconv_transpose_streamed__scalar,
};
#ifdef FCONV_HAVE_AVX2_KERNELS
static const struct fconv_kernels kernels_avx2 = {
    .isa = FCONV_ISA_AVX2, .name = "avx2", .direct_rows = fconv_direct_rows_kernel__avx2,
    .direct_filter_rows = fconv_direct_filter_rows_kernel__avx2,
    .direct_filter_slide_kh_max = FCONV_FILTER_SLIDE_KH_MAX_AVX2,
    .gemm_ukernel = fconv_gemm_ukernel__avx2, .gemm_ukernel_half = fconv_gemm_ukernel_half__avx2,
    .gemm_ukernel_half_rows = fconv_gemm_ukernel_half_rows__avx2,
    .gemm_ukernel_cols = fconv_gemm_ukernel_cols__avx2,
    .gemm_ukernel_ahead = fconv_gemm_ukernel_ahead__avx2, .gemm_ukernel_pack = fconv_gemm_ukernel_pack__avx2,
    .gemm_mr = 6, .gemm_nr = 16,
    .gemm_pack_b = fconv_gemm_pack_b__avx2,
    .im2col_copy_stride2 = fconv_im2col_copy_stride2__avx2,
    .wino_gather = fconv_wino_gather_kernel__avx2,
    .wino_f4_gather_grid = fconv_wino_f4_gather_grid_kernel__avx2,
    .wino_f4_scatter_grid = fconv_wino_f4_scatter_grid_kernel__avx2,
    .wino_scatter = fconv_wino_scatter_kernel__avx2,
    .wino_input = {fconv_wino_input_f2__avx2, fconv_wino_input_f4__avx2, fconv_wino_input_f6__avx2},
    .wino_output = {fconv_wino_output_f2__avx2, fconv_wino_output_f4__avx2, fconv_wino_output_f6__avx2,
                    fconv_wino_output_f3__avx2},
    .wino_rows_input = fconv_wino_rows_input_kernel__avx2,
    .wino_rows_product = fconv_wino_rows_product_kernel__avx2,
    .wino_cols_input = fconv_wino_cols_input_kernel__avx2,
    .wino_cols_product = fconv_wino_cols_product_kernel__avx2,
    .wino_cols_product_nhwc = fconv_wino_cols_product_nhwc_kernel__avx2,
    .fft_rows_forward = fconv_fft_rows_forward_kernel__avx2,
    .fft_rows_inverse = fconv_fft_rows_inverse_kernel__avx2,
    .fft_rows_stream_row = fconv_fft_rows_stream_row_kernel__avx2,
    .fft_cols_forward = fconv_fft_cols_forward_kernel__avx2,
    .fft_cols_inverse = fconv_fft_cols_inverse_kernel__avx2,
    .implicit_gemm_tile = fconv_implicit_gemm_tile__avx2, .implicit_gemm_tiles = fconv_implicit_gemm_tiles__avx2,
    .implicit_gemm_px = 6, .implicit_gemm_nv = 2, .implicit_gemm_px_registers = 6, .lanes = 8,
    .transpose = fconv_transpose__avx2,
    .transpose_streamed = fconv_transpose_streamed__avx2,
};
#endif
#ifdef FCONV_HAVE_AVX512_KERNELS
static const struct fconv_kernels kernels_avx512 = {
    .isa = FCONV_ISA_AVX512, .name = "avx512", .direct_rows = fconv_direct_rows_kernel__avx512,
    .direct_filter_rows = fconv_direct_filter_rows_kernel__avx512,
    .direct_filter_slide_kh_max = FCONV_FILTER_SLIDE_KH_MAX_AVX512,
    .gemm_ukernel = fconv_gemm_ukernel__avx512, .gemm_ukernel_half = fconv_gemm_ukernel_half__avx512,
    .gemm_ukernel_half_rows = fconv_gemm_ukernel_half_rows__avx512,
    .gemm_ukernel_half_rows_shuffled = fconv_gemm_ukernel_half_rows_shuffled__avx512,
    .gemm_ukernel_cols = fconv_gemm_ukernel_cols__avx512,
    .gemm_ukernel_ahead = fconv_gemm_ukernel_ahead__avx512, .gemm_ukernel_pack = fconv_gemm_ukernel_pack__avx512,
    .gemm_ukernel_wide = fconv_gemm_ukernel_wide__avx512,
    .gemm_mr = 8, .gemm_nr = 32,
    .gemm_pack_b = fconv_gemm_pack_b__avx512,
    .im2col_copy_stride2 = fconv_im2col_copy_stride2__avx512,
    .wino_gather = fconv_wino_gather_kernel__avx512,
    .wino_f4_gather_grid = fconv_wino_f4_gather_grid_kernel__avx512,
    .wino_f4_scatter_grid = fconv_wino_f4_scatter_grid_kernel__avx512,
    .wino_scatter = fconv_wino_scatter_kernel__avx512,
    .wino_input = {fconv_wino_input_f2__avx512, fconv_wino_input_f4__avx512, fconv_wino_input_f6__avx512},
    .wino_output = {fconv_wino_output_f2__avx512, fconv_wino_output_f4__avx512, fconv_wino_output_f6__avx512,
                    fconv_wino_output_f3__avx512},
    .wino_rows_input = fconv_wino_rows_input_kernel__avx512,
    .wino_rows_product = fconv_wino_rows_product_kernel__avx512,
    .wino_cols_input = fconv_wino_cols_input_kernel__avx512,
    .wino_cols_product = fconv_wino_cols_product_kernel__avx512,
    .wino_cols_product_nhwc = fconv_wino_cols_product_nhwc_kernel__avx512,
    .wino_rows_product_shuffled = fconv_wino_rows_product_shuffled_kernel__avx512,
    .fft_rows_forward = fconv_fft_rows_forward_kernel__avx512,
    .fft_rows_inverse = fconv_fft_rows_inverse_kernel__avx512,
    .fft_rows_stream_row = fconv_fft_rows_stream_row_kernel__avx512,
    .fft_cols_forward = fconv_fft_cols_forward_kernel__avx512,
    .fft_cols_inverse = fconv_fft_cols_inverse_kernel__avx512,
    .implicit_gemm_tile = fconv_implicit_gemm_tile__avx512, .implicit_gemm_tiles = fconv_implicit_gemm_tiles__avx512,
    .implicit_gemm_px = 7, .implicit_gemm_nv = 4, .implicit_gemm_px_registers = 6, .lanes = 16,
    .transpose = fconv_transpose__avx512,
    .transpose_streamed = fconv_transpose_streamed__avx512,
};
#endif

static const struct fconv_kernels *compiled(fconv_isa isa) {
    switch (isa) {
    case FCONV_ISA_SCALAR: return &kernels_scalar;
#ifdef FCONV_HAVE_AVX2_KERNELS
    case FCONV_ISA_AVX2: return &kernels_avx2;
#endif
#ifdef FCONV_HAVE_AVX512_KERNELS
    case FCONV_ISA_AVX512: return &kernels_avx512;
#endif
    default: return NULL;
    }
}

static int cpu_runs(fconv_isa isa) {
    const fconv_cpu_info *c = fconv_cpu();
    switch (isa) {
    case FCONV_ISA_SCALAR: return 1;
    case FCONV_ISA_AVX2: return c->avx2 && c->fma && c->os_avx;
    case FCONV_ISA_AVX512:
        return c->avx512f && c->avx512bw && c->avx512vl && c->avx512dq && c->fma && c->os_avx512;
    default: return 0;
    }
}

static pthread_once_t isa_once = PTHREAD_ONCE_INIT;
static fconv_isa best_isa = FCONV_ISA_SCALAR; /* best runnable, after the FCONV_ISA cap */
static char report[384]; /* fits every list and note below */

static fconv_isa isa_from_name(const char *s) {
    for (int i = FCONV_ISA_SCALAR; i <= FCONV_ISA_AVX512; i++)
        if (strcmp(s, fconv_isa_name((fconv_isa)i)) == 0) return (fconv_isa)i;
    return FCONV_ISA_AUTO;
}

/* The implicit-GEMM tile shape written into table t is its kernel's own: the driver tiles by
 * the table's, so a kernel retuned alone would leave outputs unwritten (a trial with 6-pixel
 * AVX-512 tiles did, and the tests caught it only as wrong sums). */
#define ASSERT_TILE_SHAPE(t, isa) \
    assert((t).implicit_gemm_px == fconv_implicit_gemm_px__##isa() && (t).implicit_gemm_nv == fconv_implicit_gemm_nv__##isa() && \
           (t).implicit_gemm_px_registers == fconv_implicit_gemm_px_registers__##isa())

static void init_isa(void) {
    ASSERT_TILE_SHAPE(kernels_scalar, scalar);
#ifdef FCONV_HAVE_AVX2_KERNELS
    ASSERT_TILE_SHAPE(kernels_avx2, avx2);
#endif
#ifdef FCONV_HAVE_AVX512_KERNELS
    ASSERT_TILE_SHAPE(kernels_avx512, avx512);
#endif
    fconv_isa runnable = FCONV_ISA_SCALAR;
    char compiled_list[64] = "", runnable_list[64] = "";
    for (int i = FCONV_ISA_SCALAR; i <= FCONV_ISA_AVX512; i++) {
        if (!compiled((fconv_isa)i)) continue;
        strcat(compiled_list, compiled_list[0] ? " " : "");
        strcat(compiled_list, fconv_isa_name((fconv_isa)i));
        if (!cpu_runs((fconv_isa)i)) continue;
        strcat(runnable_list, runnable_list[0] ? " " : "");
        strcat(runnable_list, fconv_isa_name((fconv_isa)i));
        runnable = (fconv_isa)i;
    }
    best_isa = runnable;
    char note[128] = "";
    const char *env = getenv("FCONV_ISA");
    if (env && env[0]) {
        fconv_isa want = isa_from_name(env);
        if (want == FCONV_ISA_AUTO)
            snprintf(note, sizeof note, "; FCONV_ISA=%.16s is unknown (scalar|avx2|avx512), ignored", env);
        else if (want > runnable)
            snprintf(note, sizeof note, "; FCONV_ISA=%s cannot run here, using %s", env,
                     fconv_isa_name(runnable));
        else {
            best_isa = want;
            snprintf(note, sizeof note, "; capped by FCONV_ISA=%s", env);
        }
    }
    snprintf(report, sizeof report, "%s (compiled: %s; runnable: %s%s)", fconv_isa_name(best_isa),
             compiled_list, runnable_list, note);
}

const struct fconv_kernels *fconv_kernels_for(fconv_isa cap) {
    pthread_once(&isa_once, init_isa);
    fconv_isa isa = best_isa;
    if (cap != FCONV_ISA_AUTO && cap < isa) isa = cap;
    /* Every ISA at or below a runnable one is compiled in except when a build option left
     * it out; step down to the next one that is. */
    while (!compiled(isa)) isa = (fconv_isa)(isa - 1);
    return compiled(isa);
}

const struct fconv_kernels *fconv_kernels_exact(fconv_isa isa) {
    return cpu_runs(isa) ? compiled(isa) : NULL;
}

const char *fconv_isa_name(fconv_isa isa) {
    switch (isa) {
    case FCONV_ISA_AUTO: return "auto";
    case FCONV_ISA_SCALAR: return "scalar";
    case FCONV_ISA_AVX2: return "avx2";
    case FCONV_ISA_AVX512: return "avx512";
    }
    return "unknown";
}

fconv_isa fconv_isa_default(void) { return fconv_kernels_for(FCONV_ISA_AUTO)->isa; }

const char *fconv_isa_report(void) {
    pthread_once(&isa_once, init_isa);
    return report;
}

fconv_isa fconv_plan_isa(const fconv_plan *plan) {
    return plan && plan->kernels ? plan->kernels->isa : FCONV_ISA_AUTO;
}
