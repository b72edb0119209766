/*
 * atomic-file.h — write a file so that it either appears complete or not at all: data goes
 * to a temporary file in the target's directory, which is renamed over the target only
 * after everything was written and flushed. An existing target is never truncated.
 */
#ifndef FCONV_IO_ATOMIC_FILE_H
#define FCONV_IO_ATOMIC_FILE_H

#include <stddef.h>
#include <stdio.h>

typedef struct fconv_io_atomic_file {
    FILE *fp;            /* write through this */
    char *final_path;
    char *temp_path;
} fconv_io_atomic_file;

/* Open a temporary beside path. 0, or -1 with a message ("out/x.png: cannot create file in
 * 'out': No such file or directory"; a directory as path is refused by name). */
int fconv_io_atomic_open(fconv_io_atomic_file *f, const char *path, char *err, size_t errlen);

/* Flush, close and rename into place. 0, or -1 with a message (the temporary is removed). */
int fconv_io_atomic_commit(fconv_io_atomic_file *f, char *err, size_t errlen);

/* Close and remove the temporary (after a failure). Safe to call twice or after commit. */
void fconv_io_atomic_abort(fconv_io_atomic_file *f);

#endif
