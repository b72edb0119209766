/*
 * test-isa.h — the kernel tests' walk over ISAs: the table of one ISA, or NULL after a line
 * on stderr saying why it is skipped (not compiled in, or this CPU/OS lacks it).
 */
#ifndef FCONV_TEST_ISA_H
#define FCONV_TEST_ISA_H

#include <stdio.h>

#include "core/dispatch.h"
#include "core/internal.h"

static inline const struct fconv_kernels *test_isa_kernels(const char *test, fconv_isa isa) {
    const struct fconv_kernels *k = fconv_kernels_exact(isa);
    if (!k)
        fprintf(stderr, "%s: skipping ISA %s: not compiled in or this CPU/OS lacks it (%s)\n", test,
                fconv_isa_name(isa), fconv_cpu_features());
    return k;
}

#endif
