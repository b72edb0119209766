/*
 * cpu-x86.c — which SIMD instruction sets this CPU has and the OS enables: CPUID for the
 * feature bits, XGETBV for whether the OS saves the AVX / AVX-512 register state (a CPU
 * bit alone is not enough), from the vendor whether unaligned vector loads are slow, how fast
 * a core reads from beyond its L2 and which GEMM outputs to stream, from AMD's family how fast
 * from memory, which GEMM outputs to stream and whether shallow B is read in place off a
 * vector boundary, and from Intel's model whether 512-bit loads are slow and which GEMM tile
 * to run.
 * Computed once, thread-safely.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "core/internal.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

static uint64_t read_xcr0(void) {
    uint32_t eax, edx;
    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
    return ((uint64_t)edx << 32) | eax;
}

static void detect(fconv_cpu_info *c) {
    unsigned a = 0, b = 0, cx = 0, d = 0;
    if (__get_cpuid(0, &a, &b, &cx, &d) /* the vendor string, in EBX, EDX, ECX */
        && b == 0x756e6547u && d == 0x49656e69u && cx == 0x6c65746eu) { /* GenuineIntel */
        c->split_loads_slow = 1;
        c->gemm_b_in_place_aligned_only = 1;
        c->shared_read_bytes_per_s = FCONV_SHARED_READ_BYTES_PER_S_INTEL;
        c->gemm_stream_output_bytes = FCONV_GEMM_STREAM_OUTPUT_BYTES_EARLY;
    }
    const int amd = b == 0x68747541u && d == 0x69746e65u && cx == 0x444d4163u; /* AuthenticAMD */
    if (!__get_cpuid(1, &a, &b, &cx, &d)) return;
    /* AMD: the family is the base (0xf) plus the extended family (bits 20-27) */
    if (amd && ((a >> 8) & 0xf) + ((a >> 20) & 0xff) == 25) {
        c->memory_read_bytes_per_s = FCONV_MEMORY_READ_BYTES_PER_S_AMD_FAMILY_25;
        c->gemm_stream_output_bytes = FCONV_GEMM_STREAM_OUTPUT_BYTES_EARLY;
        c->gemm_b_in_place_aligned_only = 1;
    }
    if (c->split_loads_slow) { /* Intel: the model (EAX: family 6, extended model in bits 16-19) */
        const unsigned family = (a >> 8) & 0xf, model = ((a >> 12) & 0xf0) | ((a >> 4) & 0xf);
        c->wide_loads_slow = family == 6 && (model == 106 || model == 108 || model == 125 || model == 126);
        c->gemm_wide_tile = c->wide_loads_slow || (family == 6 && (model == 143 || model == 207));
    }
    c->sse2 = (d >> 26) & 1;
    int osxsave = (cx >> 27) & 1;
    c->avx = (cx >> 28) & 1;
    c->fma = (cx >> 12) & 1;
    if (osxsave) {
        uint64_t xcr0 = read_xcr0();
        c->os_avx = (xcr0 & 0x6) == 0x6;            /* XMM and YMM state */
        c->os_avx512 = (xcr0 & 0xe6) == 0xe6;       /* + opmask, ZMM_Hi256, Hi16_ZMM */
    }
    if (__get_cpuid_max(0, NULL) >= 7) {
        __cpuid_count(7, 0, a, b, cx, d);
        c->avx2 = (b >> 5) & 1;
        c->avx512f = (b >> 16) & 1;
        c->avx512dq = (b >> 17) & 1;
        c->avx512bw = (b >> 30) & 1;
        c->avx512vl = (b >> 31) & 1;
    }
}
#else
static void detect(fconv_cpu_info *c) { (void)c; }
#endif

static fconv_cpu_info cpu_info;
static char cpu_string[160];
static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;

static void init_cpu(void) {
    cpu_info.shared_read_bytes_per_s = FCONV_SHARED_READ_BYTES_PER_S_DEFAULT; /* unless detect() knows better */
    cpu_info.gemm_stream_output_bytes = FCONV_GEMM_STREAM_OUTPUT_BYTES_DEFAULT;
    cpu_info.memory_read_bytes_per_s = 0; /* detect() sets it where it differs from the shared rate */
    detect(&cpu_info);
    if (cpu_info.memory_read_bytes_per_s == 0) cpu_info.memory_read_bytes_per_s = cpu_info.shared_read_bytes_per_s;
    const fconv_cpu_info *c = &cpu_info;
#if defined(__x86_64__)
    snprintf(cpu_string, sizeof cpu_string, "x86-64%s%s%s%s%s%s%s (os: avx %s, avx-512 %s)",
             c->sse2 ? " sse2" : "", c->avx ? " avx" : "", c->avx2 ? " avx2" : "",
             c->fma ? " fma" : "", c->avx512f ? " avx512f" : "", c->avx512bw ? " avx512bw" : "",
             c->avx512vl ? " avx512vl" : "", c->os_avx ? "on" : "off",
             c->os_avx512 ? "on" : "off");
#else
    (void)c;
    snprintf(cpu_string, sizeof cpu_string, "generic (no x86 SIMD)");
#endif
}

const fconv_cpu_info *fconv_cpu(void) {
    pthread_once(&cpu_once, init_cpu);
    return &cpu_info;
}

const char *fconv_cpu_features(void) {
    pthread_once(&cpu_once, init_cpu);
    return cpu_string;
}
