/*
 * fuzz_npy.c — libFuzzer harness for the .npy reader (fconv_io_npy_parse): any byte string
 * must give either a well-formed array (elements == product of shape, readable data) or a
 * one-line message, never a crash, an out-of-bounds access or an allocation beyond the input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fconv_io_array a;
    char err[256];
    err[0] = '\0';
    if (fconv_io_npy_parse(data, size, "fuzz.npy", &a, err, sizeof err) != 0) {
        /* A failure must explain itself and leave nothing allocated. */
        if (err[0] == '\0' || a.data != NULL) abort();
        return 0;
    }
    int64_t n = fconv_io_array_elements(&a);
    if (n < 0 || a.ndim < 0 || a.ndim > FCONV_IO_MAX_NDIM || !a.data) abort();
    /* The data a file holds is at least 4 bytes per element: the reader must never have
     * produced more elements than the input could back. */
    if ((uint64_t)n > size / 4) abort();
    volatile float sink = 0; /* touch every element so ASan sees any short allocation */
    for (int64_t i = 0; i < n; i++) sink += a.data[i];
    (void)sink;
    fconv_io_array_free(&a);
    return 0;
}
