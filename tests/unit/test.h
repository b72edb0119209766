/*
 * test.h — the whole C test framework: CHECK macros, a seeded random source, skips.
 * Each test program is one main() calling TEST(fn) for its cases; it prints nothing on
 * success, one line per failed CHECK (file:line, the expression, the seed), and exits
 * non-zero if anything failed (77 = skipped, CTest's SKIP_RETURN_CODE).
 * FCONV_TEST_SEED=N reproduces a run.
 */
#ifndef FCONV_TEST_H
#define FCONV_TEST_H

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_failures;
static uint64_t test_seed;
static uint64_t test_rng_state;
static const char *test_current = "";

#define CHECK(cond)                                                                          \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            fprintf(stderr, "%s:%d: %s: CHECK(%s) failed (FCONV_TEST_SEED=%" PRIu64 ")\n",   \
                    __FILE__, __LINE__, test_current, #cond, test_seed);                     \
            test_failures++;                                                                 \
        }                                                                                    \
    } while (0)

/* CHECK with a printf-style explanation appended on failure. */
#define CHECKF(cond, ...)                                                                    \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            fprintf(stderr, "%s:%d: %s: CHECK(%s) failed (FCONV_TEST_SEED=%" PRIu64 "): ",   \
                    __FILE__, __LINE__, test_current, #cond, test_seed);                     \
            fprintf(stderr, __VA_ARGS__);                                                    \
            fputc('\n', stderr);                                                             \
            test_failures++;                                                                 \
        }                                                                                    \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                                   \
    CHECKF((long long)(a) == (long long)(b), "%s = %lld, %s = %lld", #a, (long long)(a), #b, \
           (long long)(b))

#define CHECK_STR_CONTAINS(haystack, needle)                                                 \
    CHECKF(strstr((haystack), (needle)) != NULL, "\"%s\" does not contain \"%s\"",           \
           (haystack), (needle))

#define TEST(fn)                                                                             \
    do {                                                                                     \
        test_current = #fn;                                                                  \
        fn();                                                                                \
    } while (0)

/* splitmix64: tiny, good enough, identical everywhere. */
static inline uint64_t test_rand_u64(void) {
    uint64_t z = (test_rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform integer in [lo, hi]. */
static inline int64_t test_rand_int(int64_t lo, int64_t hi) {
    return lo + (int64_t)(test_rand_u64() % (uint64_t)(hi - lo + 1));
}

/* Uniform float in [-1, 1). */
static inline float test_rand_float(void) {
    return (float)((double)(test_rand_u64() >> 11) * (2.0 / 9007199254740992.0) - 1.0);
}

static inline void test_fill_random(float *p, size_t n) {
    for (size_t i = 0; i < n; i++) p[i] = test_rand_float();
}

/* Call first in main(). */
static inline void test_init(void) {
    const char *s = getenv("FCONV_TEST_SEED");
    test_seed = s ? strtoull(s, NULL, 10) : 20261121u;
    test_rng_state = test_seed;
}

/* Return from main() with this. */
static inline int test_finish(void) { return test_failures ? 1 : 0; }

#define TEST_SKIP_CODE 77

#endif /* FCONV_TEST_H */
