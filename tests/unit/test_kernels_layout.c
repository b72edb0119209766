/*
 * test_kernels_layout.c — the transpose kernels (kernels/layout) on every ISA this machine runs:
 * every shape across the vector remainders on both sides, leading dimensions wider than the
 * block, the source exactly as long as the contract lets the kernel read (AddressSanitizer
 * catches a read past it), nothing written between the destination's rows, and the three- and
 * four-channel paths both ways; the streamed form on whole lines. ISAs the CPU lacks are
 * reported as skipped.
 */
#include "test-isa.h"
#include "test.h"

/* One transpose against its definition, nothing written between dst's rows. */
static void check_transpose(const struct fconv_kernels *k, size_t rows, size_t cols, size_t ld_src, size_t ld_dst) {
    const size_t src_len = (rows - 1) * ld_src + cols, dst_len = (cols - 1) * ld_dst + rows;
    float *src = malloc(sizeof(float) * src_len), *dst = malloc(sizeof(float) * dst_len);
    test_fill_random(src, src_len);
    for (size_t e = 0; e < dst_len; e++) dst[e] = -7.0f;
    k->transpose(src, ld_src, rows, cols, dst, ld_dst);
    size_t bad = dst_len;
    for (size_t e = 0; e < dst_len && bad == dst_len; e++) {
        const size_t j = e / ld_dst, i = e % ld_dst;
        const float want = i < rows ? src[i * ld_src + j] : -7.0f;
        if (dst[e] != want) bad = e;
    }
    CHECKF(bad == dst_len, "%s %zux%zu (ld %zu, %zu): dst[%zu] = %g", k->name, rows, cols, ld_src, ld_dst, bad,
           bad < dst_len ? dst[bad] : 0.0);
    free(src);
    free(dst);
}

/* The streamed form (whole 64-byte lines of dst by non-temporal stores) against its definition:
 * rows a multiple of 16, dst 64-byte aligned, ld_dst a multiple of 16 (rows or a line more);
 * nothing written between dst's rows. */
static void check_transpose_streamed(const struct fconv_kernels *k, size_t rows, size_t cols, size_t ld_src,
                                     size_t ld_dst) {
    const size_t src_len = (rows - 1) * ld_src + cols, dst_len = cols * ld_dst;
    float *src = malloc(sizeof(float) * src_len), *dst = aligned_alloc(64, sizeof(float) * dst_len);
    test_fill_random(src, src_len);
    for (size_t e = 0; e < dst_len; e++) dst[e] = -7.0f;
    k->transpose_streamed(src, ld_src, rows, cols, dst, ld_dst);
    fconv_stream_fence();
    size_t bad = dst_len;
    for (size_t e = 0; e < dst_len && bad == dst_len; e++) {
        const size_t j = e / ld_dst, i = e % ld_dst;
        const float want = i < rows ? src[i * ld_src + j] : -7.0f;
        if (dst[e] != want) bad = e;
    }
    CHECKF(bad == dst_len, "%s streamed %zux%zu (ld %zu, %zu): dst[%zu] = %g", k->name, rows, cols, ld_src, ld_dst,
           bad, bad < dst_len ? dst[bad] : 0.0);
    free(src);
    free(dst);
}

static void test_transpose_all_isas(void) {
    for (int isa = FCONV_ISA_SCALAR; isa <= FCONV_ISA_AVX512; isa++) {
        const struct fconv_kernels *k = test_isa_kernels("test_kernels_layout", (fconv_isa)isa);
        if (!k) continue;
        for (size_t rows = 1; rows <= 2 * 16 + 3; rows++)
            for (size_t cols = 1; cols <= 2 * 16 + 3; cols += rows % 3 + 1)
                check_transpose(k, rows, cols, cols + rows % 5, rows + cols % 4);
        for (size_t rows = 16; rows <= 3 * 16; rows += 16) /* channels across the vector remainders */
            for (size_t cols = 1; cols <= 2 * 16 + 3; cols++)
                check_transpose_streamed(k, rows, cols, cols + rows % 5, rows + 16 * (cols % 2));
    }
}

/* Three and four channels side by side (RGB, RGBA: the permute paths), both ways, with the
 * pixels across the vector remainders and the planes as wide as they are or wider. */
static void test_transpose_narrow(void) {
    for (int isa = FCONV_ISA_SCALAR; isa <= FCONV_ISA_AVX512; isa++) {
        const struct fconv_kernels *k = test_isa_kernels("test_kernels_layout", (fconv_isa)isa);
        if (!k) continue;
        for (size_t c = 3; c <= 4; c++)
            for (size_t n = 1; n <= 3 * 16 + 5; n++) {
                check_transpose(k, n, c, c, n + n % 3);  /* NHWC pixels to NCHW planes */
                check_transpose(k, c, n, n + n % 2, c);  /* and back */
            }
    }
}

int main(void) {
    test_init();
    TEST(test_transpose_all_isas);
    TEST(test_transpose_narrow);
    return test_finish();
}
