/*
 * npy.h — read and write NumPy .npy files as float32 arrays (internal to the CLI and tests;
 * not part of the public API). Reading accepts float32/float64, either byte order, C or
 * Fortran order, header versions 1.0, 2.0 and 3.0, and converts to C-order float32.
 * Everything else is refused with a one-line message, before any large allocation.
 *
 * Reading rules in detail: descr must be '<f4', '>f4', '<f8', '>f8' or '=f4'/'=f8' (native
 * order); '|f4', ints, bools, complex, 'O', unicode and structured dtypes are refused, named.
 * The header dict may list its three keys in any order, with any whitespace, single or
 * double quotes, with or without a trailing comma; unknown or repeated keys are refused.
 * Bytes after the array data are refused ("x.npy: 12 bytes of trailing data after the
 * array"), so a file must be exactly header + data. Shape () gives ndim 0 and one element;
 * a zero dimension gives 0 elements, and data is then still a valid (1-float) allocation.
 */
#ifndef FCONV_IO_NPY_H
#define FCONV_IO_NPY_H

#include <stddef.h>
#include <stdint.h>

#define FCONV_IO_MAX_NDIM 8

/* A C-order float32 array. data is malloc'ed and owned by the struct. */
typedef struct fconv_io_array {
    float *data;
    int ndim;
    int64_t shape[FCONV_IO_MAX_NDIM];
} fconv_io_array;

/* Number of elements (product of shape; 1 for ndim 0). */
int64_t fconv_io_array_elements(const fconv_io_array *a);

/* Free a->data and reset the struct. Safe on a zeroed or already-freed struct. */
void fconv_io_array_free(fconv_io_array *a);

/*
 * Read path into *out. Returns 0 on success; -1 on failure with a one-line message in err
 * ("x.npy: dtype '<i4' is not float32 or float64", "x.npy: truncated: header says 400
 * bytes of data, file has 396") and *out left zeroed. Never allocates more than the file
 * can back (the claimed data size is checked against the file size first).
 */
int fconv_io_npy_read(const char *path, fconv_io_array *out, char *err, size_t errlen);

/* Parse an in-memory .npy image (the same rules; used by the fuzzer). name is for messages. */
int fconv_io_npy_parse(const unsigned char *bytes, size_t size, const char *name,
                       fconv_io_array *out, char *err, size_t errlen);

/*
 * Write data (C order, ndim dimensions) as a little-endian float32 version 1.0 .npy file.
 * Atomic: written to a temporary file in the same directory, then renamed over path; on
 * any failure the temporary is removed, path is untouched, -1 and a message in err.
 */
int fconv_io_npy_write(const char *path, const float *data, int ndim, const int64_t *shape,
                       char *err, size_t errlen);

#endif
