/*
 * io-common.h — what every reader and writer of the I/O layer shares: one-line error
 * messages into the caller's buffer, and reading a whole file into memory (the decoders
 * all work on memory, so the fuzzers can call them directly).
 */
#ifndef FCONV_IO_COMMON_H
#define FCONV_IO_COMMON_H

#include <stddef.h>

/* printf into err (if err and errlen are non-zero). */
void fconv_io_errf(char *err, size_t errlen, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Read the whole file at path into a malloc'ed buffer (*buf, *size; the caller frees it).
 * 0, or -1 with "path: cannot open: ...", "path: is a directory", a read error or out of
 * memory in err. */
int fconv_io_read_file(const char *path, unsigned char **buf, size_t *size, char *err,
                       size_t errlen);

#endif
