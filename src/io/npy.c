/*
 * npy.c — .npy reader and writer. The header is parsed by a small recursive-descent parser
 * for the python-literal dict numpy writes; the shape's byte size is overflow-checked and
 * compared with the bytes present before anything is allocated. Output is C-order float32.
 */
#define _POSIX_C_SOURCE 200809L

#include "io/npy.h"

#include "io/atomic-file.h"
#include "io/io-common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int64_t fconv_io_array_elements(const fconv_io_array *a) {
    /* A zero dimension makes the array empty whatever the others claim (the reader accepts
     * (0, 2^43, 2^43)): check first, so the product of the rest cannot overflow. Without a
     * zero, the reader has checked the product against the file size. */
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] == 0) return 0;
    int64_t n = 1;
    for (int i = 0; i < a->ndim; i++) n *= a->shape[i];
    return n;
}

void fconv_io_array_free(fconv_io_array *a) {
    if (!a) return;
    free(a->data);
    memset(a, 0, sizeof *a);
}

/* ---- header parsing ------------------------------------------------------------------ */

typedef struct {
    const char *p, *end;
} cursor;

static void skip_ws(cursor *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static int eat(cursor *c, char ch) {
    skip_ws(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return 1;
    }
    return 0;
}

/* A quoted python string without escapes (numpy never writes any in keys or simple descrs). */
static int parse_string(cursor *c, const char **s, size_t *n) {
    skip_ws(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) return 0;
    char q = *c->p++;
    const char *start = c->p;
    while (c->p < c->end && *c->p != q) {
        if (*c->p == '\\' || *c->p == '\n') return 0;
        c->p++;
    }
    if (c->p >= c->end) return 0;
    *s = start;
    *n = (size_t)(c->p - start);
    c->p++;
    return 1;
}

/* Skip any python literal (strings, nested brackets), for naming unsupported descrs. */
static int skip_value(cursor *c) {
    skip_ws(c);
    int depth = 0;
    while (c->p < c->end) {
        char ch = *c->p;
        if (ch == '\'' || ch == '"') {
            const char *s;
            size_t n;
            if (!parse_string(c, &s, &n)) return 0;
            continue;
        }
        if (ch == '(' || ch == '[' || ch == '{') depth++;
        else if (ch == ')' || ch == ']' || ch == '}') {
            if (depth == 0) return 1;
            depth--;
        } else if (ch == ',' && depth == 0) {
            return 1;
        }
        c->p++;
    }
    return depth == 0;
}

static int key_is(const char *s, size_t n, const char *key) {
    return n == strlen(key) && memcmp(s, key, n) == 0;
}

enum { DT_F4 = 1, DT_F8 = 2 };

int fconv_io_npy_parse(const unsigned char *bytes, size_t size, const char *name,
                       fconv_io_array *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    if (!name) name = "(memory)";
    static const unsigned char magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
    if (size < 6 || memcmp(bytes, magic, 6) != 0) {
        fconv_io_errf(err, errlen, "%s: not a .npy file (bad magic, expected \\x93NUMPY)", name);
        return -1;
    }
    if (size < 8) {
        fconv_io_errf(err, errlen, "%s: truncated header (file has %zu bytes)", name, size);
        return -1;
    }
    int major = bytes[6], minor = bytes[7];
    size_t lenbytes;
    if (major == 1 && minor == 0) lenbytes = 2;
    else if ((major == 2 || major == 3) && minor == 0) lenbytes = 4;
    else {
        fconv_io_errf(err, errlen, "%s: unsupported .npy version %d.%d (expected 1.0, 2.0 or 3.0)",
                name, major, minor);
        return -1;
    }
    if (size < 8 + lenbytes) {
        fconv_io_errf(err, errlen, "%s: truncated header (file has %zu bytes)", name, size);
        return -1;
    }
    uint64_t hlen = (uint64_t)bytes[8] | (uint64_t)bytes[9] << 8;
    if (lenbytes == 4) hlen |= (uint64_t)bytes[10] << 16 | (uint64_t)bytes[11] << 24;
    size_t hstart = 8 + lenbytes;
    if (hlen > size - hstart) {
        fconv_io_errf(err, errlen, "%s: truncated header: header length is %llu bytes, file has %zu",
                name, (unsigned long long)hlen, size - hstart);
        return -1;
    }
    size_t data_off = hstart + (size_t)hlen;

    cursor c = {(const char *)bytes + hstart, (const char *)bytes + data_off};
    int have_descr = 0, have_order = 0, have_shape = 0, fortran = 0, dtype = 0, big = 0;
    int ndim = 0;
    int64_t shape[FCONV_IO_MAX_NDIM] = {0};
    if (!eat(&c, '{')) goto bad_dict;
    for (;;) {
        if (eat(&c, '}')) break;
        const char *key;
        size_t klen;
        if (!parse_string(&c, &key, &klen) || !eat(&c, ':')) goto bad_dict;
        if (key_is(key, klen, "descr")) {
            if (have_descr) goto dup_key;
            have_descr = 1;
            skip_ws(&c);
            const char *vstart = c.p;
            const char *s;
            size_t n;
            if (parse_string(&c, &s, &n) && n == 3 && (s[0] == '<' || s[0] == '>' || s[0] == '=')
                && s[1] == 'f' && (s[2] == '4' || s[2] == '8')) {
                dtype = s[2] == '4' ? DT_F4 : DT_F8;
                if (s[0] == '=') {
                    const uint16_t one = 1;
                    unsigned char b;
                    memcpy(&b, &one, 1);
                    big = b == 0;
                } else {
                    big = s[0] == '>';
                }
            } else {
                c.p = vstart;
                if (!skip_value(&c)) goto bad_dict;
                size_t vlen = (size_t)(c.p - vstart);
                while (vlen && (vstart[vlen - 1] == ' ' || vstart[vlen - 1] == '\n')) vlen--;
                int shown = vlen > 60 ? 60 : (int)vlen;
                fconv_io_errf(err, errlen, "%s: dtype %.*s%s is not float32 or float64 ('<f4', '>f4', "
                        "'<f8', '>f8')", name, shown, vstart, vlen > 60 ? "..." : "");
                return -1;
            }
        } else if (key_is(key, klen, "fortran_order")) {
            if (have_order) goto dup_key;
            have_order = 1;
            skip_ws(&c);
            size_t left = (size_t)(c.end - c.p);
            if (left >= 4 && memcmp(c.p, "True", 4) == 0) {
                fortran = 1;
                c.p += 4;
            } else if (left >= 5 && memcmp(c.p, "False", 5) == 0) {
                fortran = 0;
                c.p += 5;
            } else {
                goto bad_dict;
            }
        } else if (key_is(key, klen, "shape")) {
            if (have_shape) goto dup_key;
            have_shape = 1;
            if (!eat(&c, '(')) goto bad_dict;
            for (;;) {
                if (eat(&c, ')')) break;
                skip_ws(&c);
                if (c.p < c.end && *c.p == '-') {
                    fconv_io_errf(err, errlen, "%s: negative dimension in shape", name);
                    return -1;
                }
                if (c.p >= c.end || *c.p < '0' || *c.p > '9') goto bad_dict;
                int64_t v = 0;
                while (c.p < c.end && *c.p >= '0' && *c.p <= '9') {
                    int d = *c.p++ - '0';
                    if (v > (INT64_MAX - d) / 10) {
                        fconv_io_errf(err, errlen, "%s: dimension in shape is too large", name);
                        return -1;
                    }
                    v = v * 10 + d;
                }
                if (c.p < c.end && *c.p == 'L') c.p++; /* python 2 longs: (3L, 4L) */
                if (ndim == FCONV_IO_MAX_NDIM) {
                    fconv_io_errf(err, errlen, "%s: more than %d dimensions", name, FCONV_IO_MAX_NDIM);
                    return -1;
                }
                shape[ndim++] = v;
                if (eat(&c, ')')) break;
                if (!eat(&c, ',')) goto bad_dict;
            }
        } else {
            fconv_io_errf(err, errlen, "%s: bad header: unexpected key '%.*s'", name,
                    klen > 40 ? 40 : (int)klen, key);
            return -1;
        }
        if (eat(&c, '}')) break;
        if (!eat(&c, ',')) goto bad_dict;
    }
    skip_ws(&c);
    if (c.p != c.end) goto bad_dict;
    if (!have_descr || !have_order || !have_shape) {
        fconv_io_errf(err, errlen, "%s: bad header: missing key '%s'", name,
                !have_descr ? "descr" : !have_order ? "fortran_order" : "shape");
        return -1;
    }

    /* Size check before any allocation: elements * itemsize must fit the bytes present. */
    size_t itemsize = dtype == DT_F4 ? 4 : 8;
    uint64_t elems = 1;
    int zero = 0, overflow = 0;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] == 0) zero = 1;
        else if (elems > UINT64_MAX / (uint64_t)shape[i]) overflow = 1;
        else elems *= (uint64_t)shape[i];
    }
    if (zero) elems = 0;
    else if (overflow || elems > UINT64_MAX / itemsize) {
        fconv_io_errf(err, errlen, "%s: shape is too large (its byte size overflows)", name);
        return -1;
    }
    uint64_t need = elems * itemsize;
    size_t have = size - data_off;
    if (need > have) {
        fconv_io_errf(err, errlen, "%s: truncated: header promises %llu bytes of data, file has %zu",
                name, (unsigned long long)need, have);
        return -1;
    }
    if (need < have) {
        fconv_io_errf(err, errlen, "%s: %zu bytes of trailing data after the array", name,
                have - (size_t)need);
        return -1;
    }

    float *data = malloc((elems ? (size_t)elems : 1) * sizeof(float));
    if (!data) {
        fconv_io_errf(err, errlen, "%s: out of memory for %llu elements", name,
                (unsigned long long)elems);
        return -1;
    }
    const unsigned char *src = bytes + data_off;
    /* Destination index: sequential for C order; for Fortran order an odometer over the
     * shape with the first index fastest, mapped to C-order offsets. */
    int64_t idx[FCONV_IO_MAX_NDIM] = {0};
    int64_t cstride[FCONV_IO_MAX_NDIM];
    int64_t s = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        cstride[i] = s;
        if (elems) s *= shape[i]; /* empty arrays may claim huge other dimensions: no overflow */
    }
    int64_t dst = 0;
    for (uint64_t k = 0; k < elems; k++) {
        const unsigned char *b = src + k * itemsize;
        float v;
        if (dtype == DT_F4) {
            uint32_t u = big ? (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3]
                             : (uint32_t)b[3] << 24 | (uint32_t)b[2] << 16 | (uint32_t)b[1] << 8 | b[0];
            memcpy(&v, &u, 4);
        } else {
            uint64_t u = 0;
            for (int j = 0; j < 8; j++) u = u << 8 | b[big ? j : 7 - j];
            double d;
            memcpy(&d, &u, 8);
            v = (float)d;
        }
        if (!fortran || ndim < 2) {
            data[k] = v;
        } else {
            data[dst] = v;
            for (int i = 0; i < ndim; i++) {
                if (++idx[i] < shape[i]) {
                    dst += cstride[i];
                    break;
                }
                dst -= (idx[i] - 1) * cstride[i];
                idx[i] = 0;
            }
        }
    }
    out->data = data;
    out->ndim = ndim;
    for (int i = 0; i < ndim; i++) out->shape[i] = shape[i];
    return 0;

bad_dict:
    fconv_io_errf(err, errlen, "%s: bad header: not a valid python dict with 'descr', "
            "'fortran_order' and 'shape' (near offset %zu)", name,
            (size_t)(c.p - (const char *)bytes));
    return -1;
dup_key:
    fconv_io_errf(err, errlen, "%s: bad header: duplicate key", name);
    return -1;
}

/* ---- file I/O ---------------------------------------------------------------------- */


int fconv_io_npy_read(const char *path, fconv_io_array *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    unsigned char *buf;
    size_t size;
    if (fconv_io_read_file(path, &buf, &size, err, errlen) != 0) return -1;
    int rc = fconv_io_npy_parse(buf, size, path, out, err, errlen);
    free(buf);
    return rc;
}

int fconv_io_npy_write(const char *path, const float *data, int ndim, const int64_t *shape,
                       char *err, size_t errlen) {
    if (ndim < 0 || ndim > FCONV_IO_MAX_NDIM || (ndim > 0 && !shape)) {
        fconv_io_errf(err, errlen, "%s: cannot write %d dimensions (0..%d)", path, ndim,
                FCONV_IO_MAX_NDIM);
        return -1;
    }
    uint64_t elems = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0) {
            fconv_io_errf(err, errlen, "%s: negative dimension %lld", path, (long long)shape[i]);
            return -1;
        }
    }
    for (int i = 0; i < ndim; i++) {
        if (shape[i] == 0) {
            elems = 0;
            break;
        }
        if (elems > (uint64_t)(SIZE_MAX / 4) / (uint64_t)shape[i]) {
            fconv_io_errf(err, errlen, "%s: shape is too large", path);
            return -1;
        }
        elems *= (uint64_t)shape[i];
    }
    if (elems && !data) {
        fconv_io_errf(err, errlen, "%s: no data to write", path);
        return -1;
    }

    /* Header as numpy writes it: dict, spaces, '\n', total length a multiple of 64. */
    char dict[512];
    int len = snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': (");
    for (int i = 0; i < ndim; i++)
        len += snprintf(dict + len, sizeof dict - (size_t)len, "%s%lld", i ? ", " : "",
                        (long long)shape[i]);
    len += snprintf(dict + len, sizeof dict - (size_t)len, "%s), }", ndim == 1 ? "," : "");
    size_t total = 10 + (size_t)len + 1;
    size_t padded = (total + 63) / 64 * 64;
    unsigned char header[640];
    memcpy(header, "\x93NUMPY\x01\x00", 8);
    size_t hlen = padded - 10;
    header[8] = (unsigned char)(hlen & 0xff);
    header[9] = (unsigned char)(hlen >> 8);
    memcpy(header + 10, dict, (size_t)len);
    memset(header + 10 + len, ' ', padded - total);
    header[padded - 1] = '\n';

    fconv_io_atomic_file f;
    if (fconv_io_atomic_open(&f, path, err, errlen) != 0) return -1;
    int ok = fwrite(header, 1, padded, f.fp) == padded;
    unsigned char chunk[16384];
    size_t fill = 0;
    for (uint64_t k = 0; ok && k < elems; k++) {
        uint32_t u;
        memcpy(&u, &data[k], 4);
        chunk[fill++] = (unsigned char)u;
        chunk[fill++] = (unsigned char)(u >> 8);
        chunk[fill++] = (unsigned char)(u >> 16);
        chunk[fill++] = (unsigned char)(u >> 24);
        if (fill == sizeof chunk) {
            ok = fwrite(chunk, 1, fill, f.fp) == fill;
            fill = 0;
        }
    }
    if (ok && fill) ok = fwrite(chunk, 1, fill, f.fp) == fill;
    if (!ok) {
        fconv_io_errf(err, errlen, "%s: write failed: %s", path, strerror(errno));
        fconv_io_atomic_abort(&f);
        return -1;
    }
    return fconv_io_atomic_commit(&f, err, errlen);
}
