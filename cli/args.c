/*
 * args.c — shared parsing and error reporting for the subcommands. Every message is one
 * line that names the option or file and what was wrong with it.
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"
#include "io/image.h"

static void vprint_error(const char *fmt, va_list ap) {
    fputs("fastconv: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

int cli_fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vprint_error(fmt, ap);
    va_end(ap);
    return CLI_EXIT_FAILURE;
}

int cli_usage_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vprint_error(fmt, ap);
    va_end(ap);
    return CLI_EXIT_USAGE;
}

int cli_parse_int(const char *option, const char *s, int64_t min, int64_t max, int64_t *out) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end != '\0' || isspace((unsigned char)*s) || errno == ERANGE) {
        cli_usage_error("%s: '%s' is not an integer", option, s);
        return -1;
    }
    if (v < min || v > max) {
        cli_usage_error("%s: %lld is out of range [%lld, %lld]", option, v, (long long)min,
                        (long long)max);
        return -1;
    }
    *out = v;
    return 0;
}

int cli_parse_int_list(const char *option, const char *s, int64_t min, int64_t *out, int max,
                       int *count) {
    char buf[256];
    if (strlen(s) >= sizeof buf) {
        cli_usage_error("%s: value too long", option);
        return -1;
    }
    strcpy(buf, s);
    int n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (n == max) {
            cli_usage_error("%s: '%s' has more than %d values", option, s, max);
            return -1;
        }
        if (cli_parse_int(option, tok, min, FCONV_MAX_DIM, &out[n]) != 0) return -1;
        n++;
    }
    if (n == 0 || s[strlen(s) - 1] == ',' || s[0] == ',' || strstr(s, ",,")) {
        cli_usage_error("%s: '%s' is not a comma-separated list of integers", option, s);
        return -1;
    }
    *count = n;
    return 0;
}

int cli_parse_mode(const char *s, fconv_mode *mode) {
    if (strcmp(s, "full") == 0) *mode = FCONV_MODE_FULL;
    else if (strcmp(s, "same") == 0) *mode = FCONV_MODE_SAME;
    else if (strcmp(s, "valid") == 0) *mode = FCONV_MODE_VALID;
    else {
        cli_usage_error("--mode: unknown mode '%s' (use full, same or valid)", s);
        return -1;
    }
    return 0;
}

int cli_parse_layout(const char *s, fconv_layout *layout) {
    if (strcmp(s, "nchw") == 0) *layout = FCONV_LAYOUT_NCHW;
    else if (strcmp(s, "nhwc") == 0) *layout = FCONV_LAYOUT_NHWC;
    else {
        cli_usage_error("--layout: unknown layout '%s' (use nchw or nhwc)", s);
        return -1;
    }
    return 0;
}

int cli_parse_border(const char *s, fconv_border *border, float *value) {
    *value = 0.0f;
    if (strcmp(s, "zero") == 0) *border = FCONV_BORDER_ZERO;
    else if (strcmp(s, "replicate") == 0) *border = FCONV_BORDER_REPLICATE;
    else if (strcmp(s, "reflect") == 0) *border = FCONV_BORDER_REFLECT;
    else if (strcmp(s, "mirror") == 0) *border = FCONV_BORDER_MIRROR;
    else if (strcmp(s, "wrap") == 0) *border = FCONV_BORDER_WRAP;
    else if (strncmp(s, "constant=", 9) == 0) {
        char *end;
        errno = 0;
        float v = strtof(s + 9, &end);
        if (end == s + 9 || *end != '\0' || errno == ERANGE) {
            cli_usage_error("--border: '%s' needs a number after 'constant='", s);
            return -1;
        }
        *border = FCONV_BORDER_CONSTANT;
        *value = v;
    } else {
        cli_usage_error("--border: unknown border '%s' (use zero, constant=V, replicate, reflect, "
                        "mirror or wrap)",
                        s);
        return -1;
    }
    return 0;
}

int cli_parse_algo(const char *s, fconv_algo *algo) {
    if (fconv_algo_from_name(s, algo) == FCONV_OK) return 0;
    char names[512] = "";
    for (int a = 0; a < FCONV_ALGO_COUNT_; a++) {
        fconv_algo_info info;
        if (a != FCONV_ALGO_AUTO && fconv_algo_get_info((fconv_algo)a, &info) != FCONV_OK) continue;
        strncat(names, names[0] ? ", " : "", sizeof names - strlen(names) - 1);
        strncat(names, fconv_algo_name((fconv_algo)a), sizeof names - strlen(names) - 1);
    }
    cli_usage_error("--algo: unknown algorithm '%s' (this build has: %s)", s, names);
    return -1;
}

int cli_parse_algo_list(const char *s, fconv_algo *out, int max, int *count) {
    int n = 0;
    for (const char *p = s;; p++) {
        const char *end = strchr(p, ',');
        const size_t len = end ? (size_t)(end - p) : strlen(p);
        char name[64];
        if (len == 0 || len >= sizeof name) {
            cli_usage_error("--algo: '%s' is not a list of algorithm names (A,B,...)", s);
            return -1;
        }
        if (n == max) {
            cli_usage_error("--algo: at most %d algorithms in a list", max);
            return -1;
        }
        memcpy(name, p, len);
        name[len] = '\0';
        if (strcmp(name, "all") == 0) {
            cli_usage_error("--algo: 'all' cannot be part of a list");
            return -1;
        }
        if (cli_parse_algo(name, &out[n])) return -1;
        n++;
        if (!end) break;
        p = end;
    }
    if (n < 2) {
        cli_usage_error("--algo: a list needs at least two algorithms, got '%s'", s);
        return -1;
    }
    *count = n;
    return 0;
}

int cli_parse_threads(const char *s, int *threads) {
    int64_t v;
    if (cli_parse_int("--threads", s, 0, 4096, &v) != 0) return -1;
    *threads = (int)v;
    return 0;
}

int cli_parse_device(const char *s, fconv_device *device) {
    static const char *const names[] = {"cpu", "opencl", "cuda"};
    for (int i = 0; i < 3; i++)
        if (strcmp(s, names[i]) == 0) {
            *device = (fconv_device)i;
            return 0;
        }
    cli_usage_error("--device: unknown device '%s' (expected cpu, opencl or cuda)", s);
    return -1;
}

int cli_read_npy(const char *path, fconv_io_array *out) {
    char err[512];
    if (fconv_io_npy_read(path, out, err, sizeof err) != 0) {
        cli_fail("%s", err);
        return -1;
    }
    return 0;
}

int cli_write_npy(const char *path, const float *data, int ndim, const int64_t *shape) {
    char err[512];
    if (fconv_io_npy_write(path, data, ndim, shape, err, sizeof err) != 0) {
        cli_fail("%s", err);
        return -1;
    }
    return 0;
}

const char *cli_shape_string(const int64_t *shape, int ndim, char *buf, size_t len) {
    size_t used = (size_t)snprintf(buf, len, "(");
    for (int i = 0; i < ndim && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%lld", i ? ", " : "",
                                 (long long)shape[i]);
    if (used < len) snprintf(buf + used, len - used, ndim == 1 ? ",)" : ")");
    return buf;
}

int cli_has_extension(const char *path, const char *ext) {
    size_t n = strlen(path), e = strlen(ext);
    return n >= e && strcasecmp(path + n - e, ext) == 0;
}

int cli_library_error(const char *what, fconv_status status) {
    const char *msg = fconv_last_error();
    /* The library's messages start with the problem kind ("conv2d: ..."): no prefix then. */
    if (msg[0]) return cli_fail("%s", msg);
    return cli_fail("%s: %s", what, fconv_strerror(status));
}

int cli_check_output_path(const char *path) {
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return cli_fail("%s: is a directory, not an output file", path);
    /* The writer renames a finished temporary over the target: never over a device or FIFO. */
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return cli_fail("%s: exists and is not a regular file", path);
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (!slash) {
        strcpy(dir, ".");
    } else if (slash == path) {
        strcpy(dir, "/");
    } else {
        size_t n = (size_t)(slash - path);
        if (n >= sizeof dir) return cli_fail("%s: path too long", path);
        memcpy(dir, path, n);
        dir[n] = '\0';
    }
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return cli_fail("%s: directory '%s' does not exist", path, dir);
    if (access(dir, W_OK) != 0)
        return cli_fail("%s: directory '%s' is not writable", path, dir);
    return 0;
}

void cli_explain_plan(const fconv_plan *plan) {
    const char *v = getenv("FASTCONV_VERBOSE");
    if (v && *v && strcmp(v, "0") != 0)
        fprintf(stderr, "fastconv: %s, %d thread%s, workspace %zu bytes, device memory %zu bytes\n",
                fconv_plan_explain(plan), fconv_plan_threads(plan),
                fconv_plan_threads(plan) == 1 ? "" : "s", fconv_plan_workspace_size(plan),
                fconv_plan_device_bytes(plan));
}

int cli_parse_workspace_limit(const char *s, fconv_options *options) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || s[0] == '-' || errno == ERANGE) {
        cli_usage_error("--max-workspace: '%s' is not a size (e.g. 0, 65536, 64K, 64M, 2G)", s);
        return -1;
    }
    unsigned shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    case 't': case 'T': shift = 40; end++; break;
    default: break;
    }
    if (shift && (*end == 'i' || *end == 'I')) end++;
    if (*end == 'b' || *end == 'B') end++;
    if (*end != '\0' || (shift && v > (~0ull >> shift))) {
        cli_usage_error("--max-workspace: '%s' is not a size (e.g. 0, 65536, 64K, 64M, 2G)", s);
        return -1;
    }
    v <<= shift;
    /* In the library 0 means "no limit"; on the command line it means "none at all". */
    if (v == 0) options->flags |= FCONV_PLAN_NO_WORKSPACE;
    else options->max_workspace_bytes = (size_t)v;
    return 0;
}

int cli_parse_plan_option(int c, const char *arg, fconv_options *options) {
    switch (c) {
    case CLI_OPT_ALGO: return cli_parse_algo(arg, &options->algo) ? -1 : 1;
    case CLI_OPT_THREADS: return cli_parse_threads(arg, &options->threads) ? -1 : 1;
    case CLI_OPT_DEVICE: return cli_parse_device(arg, &options->device) ? -1 : 1;
    case CLI_OPT_MAX_WORKSPACE: return cli_parse_workspace_limit(arg, options) ? -1 : 1;
    default: return 0;
    }
}

int cli_read_raster(const char *command, const char *path, int max_ndim, struct cli_raster *r) {
    memset(r, 0, sizeof *r);
    if (fconv_io_format_from_path(path) == FCONV_IO_FORMAT_NPY) {
        fconv_io_array a;
        if (cli_read_npy(path, &a)) return -1;
        char shape[128];
        cli_shape_string(a.shape, a.ndim, shape, sizeof shape);
        if (a.ndim < 2 || a.ndim > max_ndim) {
            fconv_io_array_free(&a);
            cli_fail("%s: %s needs a 2D (HxW)%s array, got shape %s", path, command,
                     max_ndim == 3 ? " or 3D (HxWxC)" : "", shape);
            return -1;
        }
        if (fconv_io_array_elements(&a) == 0) {
            fconv_io_array_free(&a);
            cli_fail("%s: the array is empty, shape %s", path, shape);
            return -1;
        }
        r->data = a.data;
        r->h = a.shape[0];
        r->w = a.shape[1];
        r->channels = a.ndim == 3 ? a.shape[2] : 1;
        r->ndim = a.ndim;
        return 0;
    }
    char err[512];
    fconv_io_image img;
    if (fconv_io_image_read(path, &img, err, sizeof err)) {
        cli_fail("%s", err);
        return -1;
    }
    r->data = img.data;
    r->h = img.h;
    r->w = img.w;
    r->channels = img.channels;
    r->ndim = img.channels == 1 ? 2 : 3;
    r->alpha = img.channels == 2 || img.channels == 4;
    r->bit_depth = img.bit_depth;
    return 0;
}
