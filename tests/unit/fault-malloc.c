/*
 * fault-malloc.c — an LD_PRELOAD allocator shim for the out-of-memory tests: once armed, it
 * makes the Nth allocation (malloc, calloc, aligned_alloc, posix_memalign) fail, and counts
 * allocations and their frees, but only for allocations made from one module (the test executable, which
 * holds the statically linked library): FFTW, OpenBLAS, libgomp and libc keep their memory,
 * since FFTW and libgomp abort on allocation failure by design. Not thread-safe to arm.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void (*real_free)(void *);

/* dlsym may allocate before the real functions are known: serve it from a static arena. */
static unsigned char boot_arena[1 << 16];
static size_t boot_used;

static atomic_long countdown = -1; /* the Nth counted allocation fails; -1: never */
static atomic_int armed;
static atomic_long n_allocs, n_frees, n_failed;
static const void *module_base;

static void resolve(void) {
    static atomic_int resolving;
    if (real_free || atomic_exchange(&resolving, 1)) return;
    /* POSIX's idiom for dlsym'ed functions (ISO C has no object-to-function conversion). */
    *(void **)&real_malloc = dlsym(RTLD_NEXT, "malloc");
    *(void **)&real_calloc = dlsym(RTLD_NEXT, "calloc");
    *(void **)&real_aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
    *(void **)&real_posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
    *(void **)&real_free = dlsym(RTLD_NEXT, "free");
}

static void *boot_alloc(size_t n) {
    n = (n + 15) & ~(size_t)15;
    if (boot_used + n > sizeof boot_arena) return NULL;
    void *p = boot_arena + boot_used;
    boot_used += n;
    return p;
}

static int from_module(const void *ret) {
    Dl_info info;
    return atomic_load(&armed) && dladdr(ret, &info) && info.dli_fbase == module_base;
}

/* Count a call from the module; 1 if this one must fail. */
static int should_fail(const void *ret) {
    if (!from_module(ret)) return 0;
    if (atomic_fetch_sub(&countdown, 1) == 1) {
        atomic_fetch_add(&n_failed, 1);
        return 1;
    }
    return 0;
}

/* The pointers counted as allocated and not yet freed: a free counts only if its pointer is
 * here, because a library's free wrapper may tail-call free (fftwf_free does), so the return
 * address alone would credit our module with frees of FFTW's memory. Open addressing with
 * tombstones under a spinlock; cleared on arming. */
#define LIVE_SLOTS (1u << 16)
#define TOMB ((void *)1)
static void *live[LIVE_SLOTS];
static atomic_flag live_lock = ATOMIC_FLAG_INIT;
static atomic_int live_overflow;

static size_t slot_of(const void *p) { return ((uintptr_t)p >> 4) * 2654435761u % LIVE_SLOTS; }

static void live_insert(void *p) {
    while (atomic_flag_test_and_set(&live_lock)) {}
    size_t i = slot_of(p), n = 0;
    while (live[i] && live[i] != TOMB && n < LIVE_SLOTS) i = (i + 1) % LIVE_SLOTS, n++;
    if (n < LIVE_SLOTS) live[i] = p;
    else atomic_store(&live_overflow, 1);
    atomic_flag_clear(&live_lock);
}

static int live_remove(void *p) {
    while (atomic_flag_test_and_set(&live_lock)) {}
    size_t i = slot_of(p), n = 0;
    int found = 0;
    while (live[i] && n < LIVE_SLOTS) {
        if (live[i] == p) {
            live[i] = TOMB;
            found = 1;
            break;
        }
        i = (i + 1) % LIVE_SLOTS, n++;
    }
    atomic_flag_clear(&live_lock);
    return found;
}

static void *counted(const void *ret, void *p) {
    if (p && from_module(ret)) {
        atomic_fetch_add(&n_allocs, 1);
        live_insert(p);
    }
    return p;
}

void *malloc(size_t n) {
    resolve();
    if (!real_malloc) return boot_alloc(n);
    const void *ret = __builtin_return_address(0);
    if (should_fail(ret)) return NULL;
    return counted(ret, real_malloc(n));
}

void *calloc(size_t a, size_t b) {
    resolve();
    if (!real_calloc) {
        if (b && a > SIZE_MAX / b) return NULL;
        void *p = boot_alloc(a * b); /* the arena is zero (static storage, never reused) */
        return p;
    }
    const void *ret = __builtin_return_address(0);
    if (should_fail(ret)) return NULL;
    return counted(ret, real_calloc(a, b));
}

void *aligned_alloc(size_t align, size_t n) {
    resolve();
    const void *ret = __builtin_return_address(0);
    if (should_fail(ret)) return NULL;
    return counted(ret, real_aligned_alloc(align, n));
}

int posix_memalign(void **out, size_t align, size_t n) {
    resolve();
    const void *ret = __builtin_return_address(0);
    if (should_fail(ret)) return 12; /* ENOMEM */
    int rc = real_posix_memalign(out, align, n);
    if (rc == 0) counted(ret, *out);
    return rc;
}

void free(void *p) {
    if (!p) return;
    if ((unsigned char *)p >= boot_arena && (unsigned char *)p < boot_arena + sizeof boot_arena)
        return;
    resolve();
    if (atomic_load(&armed) && live_remove(p)) atomic_fetch_add(&n_frees, 1);
    real_free(p);
}

/* ---- control, looked up by the test with dlsym -------------------------------------------- */

/* Count calls made from the module that contains module_addr; fail the nth (1-based) of
 * them, or none if nth <= 0. Resets the counters. */
void fault_malloc_arm(long nth, const void *module_addr) {
    Dl_info info;
    module_base = dladdr(module_addr, &info) ? info.dli_fbase : NULL;
    atomic_store(&n_allocs, 0);
    atomic_store(&n_frees, 0);
    atomic_store(&n_failed, 0);
    memset(live, 0, sizeof live);
    atomic_store(&live_overflow, 0);
    atomic_store(&countdown, nth > 0 ? nth : -1);
    atomic_store(&armed, 1);
}

/* Stop counting; report successful allocations, frees and injected failures since arming. */
void fault_malloc_disarm(long *allocs, long *frees, long *failed) {
    atomic_store(&armed, 0);
    *allocs = atomic_load(&n_allocs);
    *frees = atomic_load(&n_frees);
    *failed = atomic_load(&n_failed);
    if (atomic_load(&live_overflow)) *frees = -1; /* cannot tell: make the test fail */
}
