/*
 * registry.c — the algorithm table. Adding an algorithm is adding its file in src/algo/
 * and one line here; AUTO, the CLI and `fastconv info` see it from this table alone.
 */
#include <stddef.h>

#include "core/internal.h"

extern const struct fconv_algorithm fconv_algorithm_reference;

const struct fconv_algorithm *const fconv_algorithms[] = {
    &fconv_algorithm_reference,
    NULL,
};

const struct fconv_algorithm *fconv_algorithm_find(fconv_algo id) {
    for (size_t i = 0; fconv_algorithms[i]; i++)
        if (fconv_algorithms[i]->id == id) return fconv_algorithms[i];
    return NULL;
}
