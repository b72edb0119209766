/*
 * test_kernels_layout.c — the transpose kernel (kernels/layout) on every ISA this machine runs:
 * every shape across the vector remainders on both sides, leading dimensions wider than the
 * block, the source exactly as long as the contract lets the kernel read (AddressSanitizer
 * catches a read past it), and nothing written between the destination's rows. ISAs the CPU
 * lacks are reported as skipped.
 */
#include "test-isa.h"
#include "test.h"

static void test_transpose_all_isas(void) {
    for (int isa = FCONV_ISA_SCALAR; isa <= FCONV_ISA_AVX512; isa++) {
        const struct fconv_kernels *k = test_isa_kernels("test_kernels_layout", (fconv_isa)isa);
        if (!k) continue;
        for (size_t rows = 1; rows <= 2 * 16 + 3; rows++)
            for (size_t cols = 1; cols <= 2 * 16 + 3; cols += rows % 3 + 1) {
                const size_t ld_src = cols + rows % 5, ld_dst = rows + cols % 4;
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
                CHECKF(bad == dst_len, "%s %zux%zu (ld %zu, %zu): dst[%zu] = %g", k->name, rows, cols, ld_src,
                       ld_dst, bad, bad < dst_len ? dst[bad] : 0.0);
                free(src);
                free(dst);
            }
    }
}

int main(void) {
    test_init();
    TEST(test_transpose_all_isas);
    return test_finish();
}
