/*
 * wisdom.c — the wisdom store: measured winners keyed by library version, CPU, ISA, threads
 * and problem, held in memory behind one mutex, mirrored in a text file that is re-read when
 * its mtime/size changes and rewritten atomically (temporary file + rename). A file that is
 * not entirely valid is ignored as a whole, with the reason kept for fconv_wisdom_describe.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/wisdom.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

/* The file's first line; another number is a foreign format and the file is ignored. */
#define WISDOM_MAGIC "fastconv-wisdom"
#define WISDOM_FORMAT 1
#define WISDOM_MAX_FILE_BYTES (16u << 20)
#define WISDOM_MAX_LINE 2048
#define KEY_FIELDS 5

struct entry {
    char *key;          /* version \t cpu \t isa \t threads \t problem */
    fconv_algo algo;
    double ms;
    int64_t when;
};

struct store {
    struct entry *e;
    size_t n, cap;
};

static pthread_mutex_t wisdom_lock = PTHREAD_MUTEX_INITIALIZER;
static struct store mem;
/* Where the file is: 0 the default location, 1 explicit_path, 2 no file. */
static int path_mode;
static char explicit_path[4096];
/* The file as last read (or written): identity, so that a change triggers a re-read. */
static int seen_valid;
static struct stat seen;
static char file_note[512]; /* why the file was ignored, or "" */

/* ---- CPU identity ----------------------------------------------------------------------- */

static char cpu_id[320];
static pthread_once_t cpu_id_once = PTHREAD_ONCE_INIT;

static void init_cpu_id(void) {
#if defined(__x86_64__) || defined(__i386__)
    unsigned r[12] = {0}, a, b, c, d;
    char vendor[13] = "", brand[49] = "";
    if (__get_cpuid(0, &a, &b, &c, &d)) {
        memcpy(vendor, &b, 4);
        memcpy(vendor + 4, &d, 4);
        memcpy(vendor + 8, &c, 4);
    }
    unsigned family = 0, model = 0, stepping = 0;
    if (__get_cpuid(1, &a, &b, &c, &d)) {
        family = (a >> 8) & 0xf;
        model = (a >> 4) & 0xf;
        stepping = a & 0xf;
        if (family == 0xf) family += (a >> 20) & 0xff;
        if (family >= 6) model |= ((a >> 16) & 0xf) << 4;
    }
    if (__get_cpuid_max(0x80000000u, NULL) >= 0x80000004u) {
        for (unsigned i = 0; i < 3; i++)
            __get_cpuid(0x80000002u + i, &r[4 * i], &r[4 * i + 1], &r[4 * i + 2], &r[4 * i + 3]);
        memcpy(brand, r, 48);
    }
    /* Trim the brand's padding; tabs and newlines would break the file format. */
    char *s = brand;
    while (*s == ' ') s++;
    size_t len = strlen(s);
    while (len && s[len - 1] == ' ') s[--len] = '\0';
    snprintf(cpu_id, sizeof cpu_id, "%s %u/%u/%u %s; %s", vendor[0] ? vendor : "unknown",
             family, model, stepping, s, fconv_cpu_features());
#else
    snprintf(cpu_id, sizeof cpu_id, "%s", fconv_cpu_features());
#endif
    for (char *p = cpu_id; *p; p++)
        if (*p == '\t' || *p == '\n' || *p == '\r') *p = ' ';
}

/* ---- keys --------------------------------------------------------------------------------- */

static void problem_string(const fconv_plan *plan, char *buf, size_t len) {
    if (plan->kind == FCONV_KIND_CONV2D) {
        const fconv_conv2d_desc *d = &plan->conv2d;
        snprintf(buf, len,
                 "conv2d n=%lld c=%lld h=%lld w=%lld k=%lld r=%lld s=%lld stride=%lld,%lld "
                 "pad=%lld,%lld,%lld,%lld dilation=%lld,%lld groups=%lld bias=%d act=%d",
                 (long long)d->n, (long long)d->c, (long long)d->h, (long long)d->w,
                 (long long)d->k, (long long)d->r, (long long)d->s, (long long)d->stride_h,
                 (long long)d->stride_w, (long long)d->pad_top, (long long)d->pad_left,
                 (long long)d->pad_bottom, (long long)d->pad_right, (long long)d->dilation_h,
                 (long long)d->dilation_w, (long long)d->groups, d->has_bias ? 1 : 0,
                 (int)d->activation);
        /* Only NHWC says its layout: the keys of NCHW problems recorded before layouts
         * existed stay valid. */
        if (d->layout == FCONV_LAYOUT_NHWC) {
            size_t used = strlen(buf);
            snprintf(buf + used, len - used, " layout=nhwc");
        }
    } else if (plan->kind == FCONV_KIND_FILTER2D) {
        const fconv_filter2d_desc *f = &plan->filter;
        snprintf(buf, len,
                 "filter2d h=%lld w=%lld ch=%lld kh=%lld kw=%lld mode=%d border=%d value=%.9g "
                 "correlate=%d",
                 (long long)f->h, (long long)f->w, (long long)f->channels, (long long)f->kh,
                 (long long)f->kw, (int)f->mode, (int)f->border, (double)f->border_value,
                 f->correlate ? 1 : 0);
    } else {
        const fconv_conv1d_desc *c = &plan->conv1d;
        snprintf(buf, len, "conv1d n=%lld m=%lld mode=%d correlate=%d", (long long)c->n,
                 (long long)c->m, (int)c->mode, c->correlate ? 1 : 0);
    }
}

void fconv_wisdom_key(const fconv_plan *plan, char *buf, size_t len) {
    pthread_once(&cpu_id_once, init_cpu_id);
    char problem[400];
    problem_string(plan, problem, sizeof problem);
    /* Weights given at execute time are a problem of their own (tuned.c times each mode as
     * its plans run it); only that mode says so, so that the keys recorded before it
     * (measured with the weights at plan time) stay valid. */
    if (!plan->weights) {
        size_t used = strlen(problem);
        snprintf(problem + used, sizeof problem - used, " weights=execute");
    }
    /* The ISA the plan's kernels use (after FCONV_ISA and options.max_isa): a capped plan
     * is a different machine as far as timings go. */
    snprintf(buf, len, "%s\t%s\t%s\t%d\t%s", fconv_version(), cpu_id,
             fconv_isa_name(fconv_plan_isa(plan)), plan->threads, problem);
}

/* ---- the in-memory store (callers hold wisdom_lock) ---------------------------------------- */

static void store_clear(struct store *s) {
    for (size_t i = 0; i < s->n; i++) free(s->e[i].key);
    free(s->e);
    *s = (struct store){0};
}

static struct entry *store_find(const struct store *s, const char *key) {
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->e[i].key, key) == 0) return &s->e[i];
    return NULL;
}

/* Insert or replace; takes ownership of key. 0, or -1 out of memory (key freed). */
static int store_put(struct store *s, char *key, fconv_algo algo, double ms, int64_t when) {
    struct entry *old = store_find(s, key);
    if (old) {
        free(key);
        old->algo = algo;
        old->ms = ms;
        old->when = when;
        return 0;
    }
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        struct entry *e = realloc(s->e, cap * sizeof *e);
        if (!e) {
            free(key);
            return -1;
        }
        s->e = e;
        s->cap = cap;
    }
    s->e[s->n++] = (struct entry){key, algo, ms, when};
    return 0;
}

/* Move every entry of src into dst (src ends empty). 0, or -1 out of memory. */
static int store_merge(struct store *dst, struct store *src) {
    int rc = 0;
    for (size_t i = 0; i < src->n; i++) {
        if (rc == 0) rc = store_put(dst, src->e[i].key, src->e[i].algo, src->e[i].ms, src->e[i].when);
        else free(src->e[i].key);
    }
    free(src->e);
    *src = (struct store){0};
    return rc;
}

/* ---- the file format ---------------------------------------------------------------------- */

/* Parse one entry line (no newline). 0, or -1 with the reason in why. */
static int parse_line(char *line, struct store *out, char *why, size_t why_len) {
    char *field[KEY_FIELDS + 3];
    int n = 0;
    for (char *p = line;;) {
        if (n == KEY_FIELDS + 3) {
            snprintf(why, why_len, "more than %d tab-separated fields", KEY_FIELDS + 3);
            return -1;
        }
        field[n++] = p;
        char *tab = strchr(p, '\t');
        if (!tab) break;
        *tab = '\0';
        p = tab + 1;
    }
    if (n != KEY_FIELDS + 3) {
        snprintf(why, why_len, "%d tab-separated fields, expected %d", n, KEY_FIELDS + 3);
        return -1;
    }
    for (int i = 0; i < n; i++)
        if (!field[i][0]) {
            snprintf(why, why_len, "field %d is empty", i + 1);
            return -1;
        }
    char *end;
    errno = 0;
    long threads = strtol(field[3], &end, 10);
    if (*end || errno || threads < 1 || threads > 65536) {
        snprintf(why, why_len, "bad thread count '%.40s'", field[3]);
        return -1;
    }
    fconv_algo algo;
    if (fconv_algo_from_name(field[5], &algo) != FCONV_OK || algo == FCONV_ALGO_AUTO) {
        snprintf(why, why_len, "unknown algorithm '%.40s'", field[5]);
        return -1;
    }
    errno = 0;
    double ms = strtod(field[6], &end);
    if (*end || errno || !isfinite(ms) || ms < 0) {
        snprintf(why, why_len, "bad time '%.40s'", field[6]);
        return -1;
    }
    errno = 0;
    long long when = strtoll(field[7], &end, 10);
    if (*end || errno || when < 0) {
        snprintf(why, why_len, "bad timestamp '%.40s'", field[7]);
        return -1;
    }
    size_t key_len = (size_t)(field[5] - field[0]) - 1; /* the 5 key fields with their tabs */
    char *key = malloc(key_len + 1);
    if (!key) {
        snprintf(why, why_len, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < key_len; i++) key[i] = line[i] ? line[i] : '\t';
    key[key_len] = '\0';
    if (store_put(out, key, algo, ms, when) != 0) {
        snprintf(why, why_len, "out of memory");
        return -1;
    }
    return 0;
}

/* Read and parse a whole wisdom file into out (empty on failure). 0, 1 if the file does not
 * exist, -1 if it is unreadable or invalid (reason in why). *st gets its identity. */
static int read_file(const char *path, struct store *out, struct stat *st, char *why,
                     size_t why_len) {
    *out = (struct store){0};
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (errno == ENOENT) return 1;
        snprintf(why, why_len, "cannot open: %s", strerror(errno));
        return -1;
    }
    if (fstat(fileno(f), st) != 0 || !S_ISREG(st->st_mode)) {
        fclose(f);
        snprintf(why, why_len, "not a regular file");
        return -1;
    }
    if ((uintmax_t)st->st_size > WISDOM_MAX_FILE_BYTES) {
        fclose(f);
        snprintf(why, why_len, "larger than %u bytes", WISDOM_MAX_FILE_BYTES);
        return -1;
    }
    char line[WISDOM_MAX_LINE + 2], reason[160];
    int lineno = 0, rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        lineno++;
        size_t len = strlen(line);
        if (len == 0 || line[len - 1] != '\n') {
            snprintf(why, why_len, "line %d: %s", lineno,
                     len > WISDOM_MAX_LINE ? "too long" : "truncated (no end of line)");
            rc = -1;
            break;
        }
        line[--len] = '\0';
        if (lineno == 1) {
            int version;
            char tail;
            if (sscanf(line, WISDOM_MAGIC " %d%c", &version, &tail) != 1) {
                snprintf(why, why_len, "not a fastconv wisdom file (first line is not '%s %d')",
                         WISDOM_MAGIC, WISDOM_FORMAT);
                rc = -1;
            } else if (version != WISDOM_FORMAT) {
                snprintf(why, why_len, "wisdom format %d, this library reads format %d", version,
                         WISDOM_FORMAT);
                rc = -1;
            }
        } else if (len == 0 || line[0] == '#') {
            continue;
        } else if (parse_line(line, out, reason, sizeof reason) != 0) {
            snprintf(why, why_len, "line %d: %s", lineno, reason);
            rc = -1;
        }
    }
    if (rc == 0 && ferror(f)) {
        snprintf(why, why_len, "read error");
        rc = -1;
    }
    if (rc == 0 && lineno == 0) {
        snprintf(why, why_len, "empty (no '%s %d' line)", WISDOM_MAGIC, WISDOM_FORMAT);
        rc = -1;
    }
    fclose(f);
    if (rc != 0) store_clear(out);
    return rc;
}

/* mkdir -p of path's directory (for the default location, whose folders may not exist). */
static void make_parent_dirs(const char *path) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir) return;
    *slash = '\0';
    for (char *p = dir + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(dir, 0755);
            *p = '/';
        }
    mkdir(dir, 0755);
}

/* Write s to path atomically: a temporary file in the same folder, flushed and synced,
 * renamed over path, so that a reader sees the old or the new file, never half of one.
 * 0, or -1 with the reason in why. */
static int write_file(const char *path, const struct store *s, char *why, size_t why_len) {
    static unsigned counter;
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%u", path, (long)getpid(), counter++);
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        snprintf(why, why_len, "cannot create '%.200s': %s", tmp, strerror(errno));
        return -1;
    }
    int bad = fprintf(f, "%s %d\n# version\tcpu\tisa\tthreads\tproblem\talgorithm\tms\tunix-time\n", // ok: to the file
                      WISDOM_MAGIC, WISDOM_FORMAT) < 0;
    for (size_t i = 0; i < s->n && !bad; i++)
        bad = fprintf(f, "%s\t%s\t%.6g\t%lld\n", s->e[i].key, fconv_algo_name(s->e[i].algo), // ok: to the file
                      s->e[i].ms, (long long)s->e[i].when) < 0;
    if (!bad) bad = fflush(f) != 0 || fsync(fileno(f)) != 0;
    int err = errno;
    if (fclose(f) != 0 && !bad) {
        bad = 1;
        err = errno;
    }
    if (!bad && rename(tmp, path) != 0) {
        bad = 1;
        err = errno;
    }
    if (bad) {
        unlink(tmp);
        snprintf(why, why_len, "cannot write '%.200s': %s", path, strerror(err));
        return -1;
    }
    return 0;
}

/* ---- the file in use (callers hold wisdom_lock) --------------------------------------------- */

/* The path of the wisdom file, or NULL when there is none. */
static const char *file_path(char *buf, size_t len) {
    if (path_mode == 2) return NULL;
    if (path_mode == 1) return explicit_path;
    const char *env = getenv("FASTCONV_WISDOM");
    if (env) {
        if (!*env || strcmp(env, "off") == 0) return NULL;
        snprintf(buf, len, "%s", env);
        return buf;
    }
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && xdg[0] == '/') snprintf(buf, len, "%s/fastconv/wisdom", xdg);
    else if (home && *home) snprintf(buf, len, "%s/.cache/fastconv/wisdom", home);
    else return NULL;
    return buf;
}

static int same_file(const struct stat *a, const struct stat *b) {
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* Re-read the file if it changed since it was last read: its entries replace memory's
 * (measurements of this process were merged into it when they were made). */
static void refresh(void) {
    char buf[4200];
    const char *path = file_path(buf, sizeof buf);
    if (!path) return;
    struct stat st;
    if (stat(path, &st) != 0) return; /* no file (yet): memory is all there is */
    if (seen_valid && same_file(&st, &seen)) return;
    struct store fresh;
    char why[300] = "";
    int rc = read_file(path, &fresh, &st, why, sizeof why);
    seen = st;
    seen_valid = 1;
    if (rc < 0) {
        snprintf(file_note, sizeof file_note, "wisdom file %.200s ignored: %.180s", path, why);
        store_clear(&mem);
        return;
    }
    file_note[0] = '\0';
    store_clear(&mem);
    mem = fresh;
}

/* ---- internal API --------------------------------------------------------------------------- */

int fconv_wisdom_lookup(const fconv_plan *plan, fconv_algo *algo, double *ms, int64_t *when,
                        char *note, size_t note_len) {
    char key[1100];
    fconv_wisdom_key(plan, key, sizeof key);
    pthread_mutex_lock(&wisdom_lock);
    refresh();
    const struct entry *e = store_find(&mem, key);
    if (e) {
        *algo = e->algo;
        *ms = e->ms;
        *when = e->when;
    } else if (file_note[0]) {
        snprintf(note, note_len, "%s", file_note);
    } else {
        snprintf(note, note_len, "no wisdom for this problem");
    }
    pthread_mutex_unlock(&wisdom_lock);
    return e != NULL;
}

int fconv_wisdom_record(const fconv_plan *plan, fconv_algo algo, double ms, char *note,
                        size_t note_len) {
    char key[1100];
    fconv_wisdom_key(plan, key, sizeof key);
    char *copy = malloc(strlen(key) + 1);
    if (!copy) {
        snprintf(note, note_len, "not recorded: out of memory");
        return -1;
    }
    strcpy(copy, key);
    int rc = 0;
    pthread_mutex_lock(&wisdom_lock);
    refresh(); /* merge with what other processes wrote meanwhile */
    if (store_put(&mem, copy, algo, ms, (int64_t)time(NULL)) != 0) {
        snprintf(note, note_len, "not recorded: out of memory");
        rc = -1;
    } else {
        char buf[4200], why[300];
        const char *path = file_path(buf, sizeof buf);
        if (path) {
            if (path_mode == 0) make_parent_dirs(path);
            if (write_file(path, &mem, why, sizeof why) != 0) {
                snprintf(note, note_len, "recorded in memory only: %.250s", why);
                rc = -1;
            } else {
                /* Our own write is not a change to re-read. */
                struct stat st;
                if (stat(path, &st) == 0) {
                    seen = st;
                    seen_valid = 1;
                }
                file_note[0] = '\0';
                snprintf(note, note_len, "recorded in %s", path);
            }
        } else {
            snprintf(note, note_len, "recorded in memory (no wisdom file)");
        }
    }
    pthread_mutex_unlock(&wisdom_lock);
    return rc;
}

/* ---- public API ----------------------------------------------------------------------------- */

fconv_status fconv_wisdom_use_file(const char *path) {
    if (path && strlen(path) >= sizeof explicit_path)
        return fconv_fail(FCONV_EINVAL, "wisdom: path longer than %zu bytes",
                          sizeof explicit_path - 1);
    pthread_mutex_lock(&wisdom_lock);
    store_clear(&mem);
    seen_valid = 0;
    file_note[0] = '\0';
    if (!path) {
        path_mode = 0;
    } else if (!*path) {
        path_mode = 2;
    } else {
        path_mode = 1;
        snprintf(explicit_path, sizeof explicit_path, "%s", path);
    }
    pthread_mutex_unlock(&wisdom_lock);
    fconv_clear_error();
    return FCONV_OK;
}

void fconv_wisdom_forget(void) {
    pthread_mutex_lock(&wisdom_lock);
    store_clear(&mem);
    pthread_mutex_unlock(&wisdom_lock);
}

fconv_status fconv_wisdom_import(const char *path) {
    if (!path) return fconv_fail(FCONV_EINVAL, "fconv_wisdom_import: path is NULL");
    struct store in;
    struct stat st;
    char why[300] = "";
    int rc = read_file(path, &in, &st, why, sizeof why);
    if (rc == 1) return fconv_fail(FCONV_EINVAL, "wisdom: %s: no such file", path);
    if (rc < 0) return fconv_fail(FCONV_EINVAL, "wisdom: %s: %s", path, why);
    pthread_mutex_lock(&wisdom_lock);
    refresh(); /* so that a later refresh does not replace what is imported now */
    rc = store_merge(&mem, &in);
    pthread_mutex_unlock(&wisdom_lock);
    if (rc != 0) return fconv_fail(FCONV_ENOMEM, "wisdom: out of memory importing %s", path);
    fconv_clear_error();
    return FCONV_OK;
}

fconv_status fconv_wisdom_export(const char *path) {
    if (!path) return fconv_fail(FCONV_EINVAL, "fconv_wisdom_export: path is NULL");
    char why[300];
    pthread_mutex_lock(&wisdom_lock);
    refresh();
    int rc = write_file(path, &mem, why, sizeof why);
    pthread_mutex_unlock(&wisdom_lock);
    if (rc != 0) return fconv_fail(FCONV_EINVAL, "wisdom: %s", why);
    fconv_clear_error();
    return FCONV_OK;
}

int64_t fconv_wisdom_count(void) {
    pthread_mutex_lock(&wisdom_lock);
    refresh();
    int64_t n = (int64_t)mem.n;
    pthread_mutex_unlock(&wisdom_lock);
    return n;
}

fconv_status fconv_wisdom_describe(char *buf, size_t len) {
    if (!buf || !len) return fconv_fail(FCONV_EINVAL, "fconv_wisdom_describe: empty buffer");
    char path_buf[4200];
    pthread_mutex_lock(&wisdom_lock);
    refresh();
    const char *path = file_path(path_buf, sizeof path_buf);
    struct stat st;
    if (file_note[0])
        snprintf(buf, len, "%s", file_note);
    else if (!path)
        snprintf(buf, len, "wisdom: no file (in memory only), %zu entr%s", mem.n,
                 mem.n == 1 ? "y" : "ies");
    else if (stat(path, &st) != 0)
        snprintf(buf, len, "wisdom file %s: not present yet, %zu entr%s in memory", path, mem.n,
                 mem.n == 1 ? "y" : "ies");
    else
        snprintf(buf, len, "wisdom file %s: %zu entr%s", path, mem.n, mem.n == 1 ? "y" : "ies");
    pthread_mutex_unlock(&wisdom_lock);
    fconv_clear_error();
    return FCONV_OK;
}
