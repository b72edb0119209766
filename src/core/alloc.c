/*
 * alloc.c — aligned allocation for workspaces and packed weights. 64 bytes: one cache
 * line, and the width of an AVX-512 register.
 */
#include <stdlib.h>

#include "core/internal.h"

void *fconv_alloc_aligned(size_t bytes) {
    if (bytes == 0) return NULL;
    size_t rounded = fconv_round_up_64(bytes);
    if (rounded < bytes) return NULL; /* wrapped around */
    return aligned_alloc(64, rounded);
}

void fconv_free_aligned(void *p) { free(p); }
