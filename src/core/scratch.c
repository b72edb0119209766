/*
 * scratch.c — each thread's scratch buffers (core/scratch.h), allocated on the thread's first
 * request and freed by a pthread key's destructor when it exits. They had been static
 * thread-local arrays, 1.37 MiB of static TLS that glibc reserves and clears for every thread
 * of a process that links the library, whether it ever calls fastconv or not: 100 idle
 * threads took +148 MB of RSS against +1 MB and ~2 ms a pthread_create against 0.03-0.11
 * (Emerald Rapids VM), and a thread asking for a stack under ~1.5 MiB did not start
 * (EINVAL). Now only the threads that run fastconv's tasks hold them, and only the slots
 * their tasks use.
 */
#include <pthread.h>

#include "core/internal.h"
#include "core/parallel.h"
#include "core/scratch.h"

static _Thread_local float *slots[FCONV_SCRATCH_SLOTS];
static _Thread_local size_t slot_floats[FCONV_SCRATCH_SLOTS];

static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;
static int exit_key_made;

/* The key's destructor, on the exiting thread: its slots (the key's value is this thread's
 * own array, still valid while destructors run). */
static void free_slots(void *value) {
    float **own = value;
    for (int s = 0; s < FCONV_SCRATCH_SLOTS; s++) {
        fconv_free_aligned(own[s]);
        own[s] = NULL;
    }
}

static void make_exit_key(void) { exit_key_made = pthread_key_create(&exit_key, free_slots) == 0; }

float *fconv_thread_scratch(enum fconv_scratch_slot slot, size_t floats) {
    if (slots[slot] && slot_floats[slot] >= floats) return slots[slot];
    pthread_once(&exit_key_once, make_exit_key);
    /* the key's value names this thread's slots, so that its exit frees them */
    float *p = exit_key_made && pthread_setspecific(exit_key, slots) == 0 ? fconv_alloc_aligned(floats * sizeof(float))
                                                                         : NULL;
    if (!p) {
        fconv_run_fail();
        return NULL;
    }
    fconv_free_aligned(slots[slot]);
    slots[slot] = p;
    slot_floats[slot] = floats;
    return p;
}
