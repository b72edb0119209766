/*
 * io-common.c — error formatting and whole-file reading for the I/O layer. The buffer is
 * sized by fstat and grown if the file grows while read, so a file that lies about its
 * size (a pipe, /proc) still reads completely.
 */
#define _POSIX_C_SOURCE 200809L

#include "io/io-common.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void fconv_io_errf(char *err, size_t errlen, const char *fmt, ...) {
    if (!err || errlen == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

int fconv_io_read_file(const char *path, unsigned char **buf, size_t *size, char *err,
                       size_t errlen) {
    *buf = NULL;
    *size = 0;
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        fconv_io_errf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fileno(fp), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(fp);
        fconv_io_errf(err, errlen, "%s: is a directory", path);
        return -1;
    }
    size_t cap = (S_ISREG(st.st_mode) && st.st_size > 0) ? (size_t)st.st_size + 1 : 65536;
    size_t n = 0;
    unsigned char *b = malloc(cap);
    if (!b) goto oom;
    for (;;) {
        if (n == cap) {
            size_t ncap = cap * 2;
            unsigned char *nb = ncap > cap ? realloc(b, ncap) : NULL;
            if (!nb) goto oom;
            b = nb;
            cap = ncap;
        }
        size_t got = fread(b + n, 1, cap - n, fp);
        n += got;
        if (got == 0) break;
    }
    if (ferror(fp)) {
        fconv_io_errf(err, errlen, "%s: read error: %s", path, strerror(errno));
        free(b);
        fclose(fp);
        return -1;
    }
    fclose(fp);
    *buf = b;
    *size = n;
    return 0;
oom:
    free(b);
    fclose(fp);
    fconv_io_errf(err, errlen, "%s: out of memory reading the file", path);
    return -1;
}
