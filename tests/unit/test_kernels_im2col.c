/*
 * test_kernels_im2col.c — im2col's stride-2 row copy (kernels/im2col) on every ISA this
 * machine runs: every length across the vector remainders, from a source exactly as long as
 * the contract lets the kernel read (AddressSanitizer catches a read past it), nothing
 * written past n. ISAs the CPU lacks are reported as skipped.
 */
#include "test-isa.h"
#include "test.h"

static void test_copy_stride2_all_isas(void) {
    for (int isa = FCONV_ISA_SCALAR; isa <= FCONV_ISA_AVX512; isa++) {
        const struct fconv_kernels *k = test_isa_kernels("test_kernels_im2col", (fconv_isa)isa);
        if (!k) continue;
        for (size_t n = 1; n <= 4 * 16 + 3; n++) {
            float *src = malloc(sizeof(float) * (2 * n - 1)), *dst = malloc(sizeof(float) * (n + 1));
            test_fill_random(src, 2 * n - 1);
            dst[n] = -7.0f;
            k->im2col_copy_stride2(dst, src, n);
            size_t bad = n;
            for (size_t i = 0; i < n && bad == n; i++)
                if (dst[i] != src[2 * i]) bad = i;
            CHECKF(bad == n, "%s n=%zu: dst[%zu] = %g, want src[%zu] = %g", k->name, n, bad,
                   bad < n ? dst[bad] : 0.0, 2 * bad, bad < n ? src[2 * bad] : 0.0);
            CHECKF(dst[n] == -7.0f, "%s n=%zu: wrote past n", k->name, n);
            free(src);
            free(dst);
        }
    }
}

int main(void) {
    test_init();
    TEST(test_copy_stride2_all_isas);
    return test_finish();
}
