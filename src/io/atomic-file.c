/*
 * atomic-file.c — all-or-nothing file writes: a temporary made by mkstemp beside the target,
 * renamed over it only after a checked flush, fsync and fclose. Every failure removes the
 * temporary, so the target is either the old file (or absent) or the complete new one.
 */
#define _POSIX_C_SOURCE 200809L

#include "io/atomic-file.h"
#include "io/io-common.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *dup_str(const char *s, size_t n) {
    char *p = malloc(n + 1);
    if (!p) return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

/* Mode for the new file: the existing target's, else 0666 minus the umask (what fopen
 * would give). umask() can only be read by setting it; the brief window is harmless for
 * a single-threaded CLI. */
static mode_t new_file_mode(const char *path) {
    struct stat st;
    if (stat(path, &st) == 0) return st.st_mode & 07777;
    mode_t mask = umask(022);
    umask(mask);
    return 0666 & ~mask;
}

int fconv_io_atomic_open(fconv_io_atomic_file *f, const char *path, char *err, size_t errlen) {
    memset(f, 0, sizeof *f);
    if (!path || !*path) {
        fconv_io_errf(err, errlen, "empty output path");
        return -1;
    }
    size_t len = strlen(path);
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        fconv_io_errf(err, errlen, "%s: is a directory, cannot write a file there", path);
        return -1;
    }
    /* A device node, FIFO or socket as target (-o /dev/full, a named pipe): the rename
     * below would replace the node itself with a regular file (and create our temporary
     * in /dev), so refuse it. lstat: a symlink to a regular file is replaced like any file. */
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
        fconv_io_errf(err, errlen, "%s: exists and is not a regular file (%s); not writing to it",
                      path, S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISCHR(st.st_mode) ? "a character device"
                      : S_ISBLK(st.st_mode) ? "a block device" : S_ISSOCK(st.st_mode) ? "a socket"
                      : "a special file");
        return -1;
    }
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode) && stat(path, &st) == 0 &&
        !S_ISREG(st.st_mode)) {
        fconv_io_errf(err, errlen, "%s: is a link to something that is not a regular file; "
                      "not writing to it", path);
        return -1;
    }
    if (path[len - 1] == '/') {
        fconv_io_errf(err, errlen, "%s: is a directory name, not a file name", path);
        return -1;
    }
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path) : 0;
    const char *base = slash ? slash + 1 : path;
    /* "<dir>/.<base>.tmp-XXXXXX": hidden, in the same directory so rename is atomic. */
    const char *dir = slash ? (dirlen ? path : "/") : ".";
    size_t dir_shown = slash ? (dirlen ? dirlen : 1) : 1;
    size_t tlen = dirlen + 1 + 1 + strlen(base) + strlen(".tmp-XXXXXX") + 1;
    char *tmp = malloc(tlen);
    char *final_path = dup_str(path, len);
    if (!tmp || !final_path) {
        free(tmp);
        free(final_path);
        fconv_io_errf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    snprintf(tmp, tlen, "%.*s%s.%s.tmp-XXXXXX", (int)dirlen, path, slash ? "/" : "", base);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int e = errno;
        fconv_io_errf(err, errlen, "%s: cannot create file in '%.*s': %s", path, (int)dir_shown, dir,
                strerror(e));
        free(tmp);
        free(final_path);
        return -1;
    }
    (void)fchmod(fd, new_file_mode(path)); /* best effort: mkstemp gives 0600 */
    FILE *fp = fdopen(fd, "wb");
    if (!fp) {
        int e = errno;
        close(fd);
        unlink(tmp);
        fconv_io_errf(err, errlen, "%s: cannot open temporary file: %s", path, strerror(e));
        free(tmp);
        free(final_path);
        return -1;
    }
    f->fp = fp;
    f->final_path = final_path;
    f->temp_path = tmp;
    return 0;
}

int fconv_io_atomic_commit(fconv_io_atomic_file *f, char *err, size_t errlen) {
    const char *path = f->final_path ? f->final_path : "(null)";
    if (!f->fp || !f->temp_path) {
        fconv_io_errf(err, errlen, "%s: file is not open", path);
        fconv_io_atomic_abort(f);
        return -1;
    }
    int e = 0;
    const char *what = NULL;
    if (fflush(f->fp) != 0 || ferror(f->fp)) {
        e = errno;
        what = "write failed";
    } else if (fsync(fileno(f->fp)) != 0 && errno != EINVAL && errno != EROFS) {
        e = errno;
        what = "fsync failed";
    }
    int rc = fclose(f->fp);
    f->fp = NULL;
    if (!what && rc != 0) {
        e = errno;
        what = "close failed";
    }
    if (!what && rename(f->temp_path, f->final_path) != 0) {
        e = errno;
        what = "cannot rename temporary file into place";
    }
    if (what) {
        fconv_io_errf(err, errlen, "%s: %s: %s", path, what, e ? strerror(e) : "I/O error");
        fconv_io_atomic_abort(f);
        return -1;
    }
    free(f->temp_path);
    free(f->final_path);
    f->temp_path = NULL;
    f->final_path = NULL;
    return 0;
}

void fconv_io_atomic_abort(fconv_io_atomic_file *f) {
    if (!f) return;
    if (f->fp) fclose(f->fp);
    if (f->temp_path) unlink(f->temp_path);
    free(f->temp_path);
    free(f->final_path);
    f->fp = NULL;
    f->temp_path = NULL;
    f->final_path = NULL;
}
