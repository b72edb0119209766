/*
 * image-pnm.c — a small strict PGM/PPM codec. Reads P2/P3 (ASCII) and P5/P6 (binary, 16-bit
 * samples big-endian) with '#' comments in the header, maxval 1..65535; refuses PBM (P1/P4)
 * and PAM (P7) by name. Sizes are checked against the limits and the bytes present before
 * anything is allocated. Writes binary P5/P6 with maxval 255 or 65535.
 */
#include "io/image-internal.h"

#include <stdlib.h>
#include <string.h>

static int is_space(unsigned char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* Skip whitespace and comments; returns how many whitespace/comment bytes were skipped. */
static size_t skip_sep(const unsigned char *b, size_t size, size_t *pos) {
    size_t start = *pos;
    while (*pos < size) {
        if (is_space(b[*pos])) {
            (*pos)++;
        } else if (b[*pos] == '#') {
            while (*pos < size && b[*pos] != '\n' && b[*pos] != '\r') (*pos)++;
        } else {
            break;
        }
    }
    return *pos - start;
}

/* An unsigned decimal, saturating at 10^12 (enough to report absurd sizes). 0 if none. */
static int parse_uint(const unsigned char *b, size_t size, size_t *pos, int64_t *v) {
    if (*pos >= size || b[*pos] < '0' || b[*pos] > '9') return 0;
    int64_t x = 0;
    while (*pos < size && b[*pos] >= '0' && b[*pos] <= '9') {
        if (x < 1000000000000) x = x * 10 + (b[*pos] - '0');
        (*pos)++;
    }
    *v = x;
    return 1;
}

int fconv_io_pnm_decode(const unsigned char *b, size_t size, const char *name,
                        fconv_io_image *img, char *err, size_t errlen) {
    memset(img, 0, sizeof *img);
    if (size < 2 || b[0] != 'P') {
        fconv_io_errf(err, errlen, "%s: not a PGM/PPM file", name);
        return -1;
    }
    char kind = (char)b[1];
    if (kind == '1' || kind == '4') {
        fconv_io_errf(err, errlen, "%s: PBM bitmap (P%c) is not supported (use PGM or PPM)", name,
                      kind);
        return -1;
    }
    if (kind == '7') {
        fconv_io_errf(err, errlen, "%s: PAM (P7) is not supported (use PGM or PPM)", name);
        return -1;
    }
    if (kind != '2' && kind != '3' && kind != '5' && kind != '6') {
        fconv_io_errf(err, errlen, "%s: not a PGM/PPM file (magic 'P%c')", name,
                      kind >= 32 && kind < 127 ? kind : '?');
        return -1;
    }
    int ascii = kind == '2' || kind == '3';
    int channels = (kind == '3' || kind == '6') ? 3 : 1;
    size_t pos = 2;
    int64_t hdr[3];
    static const char *const what[3] = {"width", "height", "maxval"};
    for (int i = 0; i < 3; i++) {
        if (skip_sep(b, size, &pos) == 0 || !parse_uint(b, size, &pos, &hdr[i])) {
            fconv_io_errf(err, errlen, "%s: bad PGM/PPM header: expected %s%s", name, what[i],
                          pos >= size ? " (file ends)" : "");
            return -1;
        }
    }
    int64_t w = hdr[0], h = hdr[1], maxval = hdr[2];
    if (maxval < 1 || maxval > 65535) {
        fconv_io_errf(err, errlen, "%s: maxval %lld is out of range 1..65535", name,
                      (long long)maxval);
        return -1;
    }
    if (fconv_io_check_dims(name, w, h, err, errlen) != 0) return -1;
    /* Exactly one whitespace byte ends the header of a binary file. */
    if (pos >= size || !is_space(b[pos])) {
        fconv_io_errf(err, errlen, "%s: bad PGM/PPM header: no whitespace after maxval", name);
        return -1;
    }
    pos++;

    int bits = maxval > 255 ? 16 : 8;
    double scale = (double)((1u << bits) - 1) / (double)maxval; /* 1 for 255 and 65535 */
    size_t n = (size_t)w * (size_t)h * (size_t)channels;
    size_t left = size - pos;
    size_t bps = maxval > 255 ? 2 : 1;
    if (!ascii && n * bps > left) {
        fconv_io_errf(err, errlen, "%s: truncated pixel data: expected %zu bytes, file has %zu",
                      name, n * bps, left);
        return -1;
    }
    /* ASCII: every sample takes a digit and all but the last a separator. */
    if (ascii && (left == 0 || n > (left + 1) / 2)) {
        fconv_io_errf(err, errlen, "%s: truncated pixel data: %zu samples cannot fit in %zu bytes",
                      name, n, left);
        return -1;
    }
    float *data = malloc(n * sizeof(float));
    if (!data) {
        fconv_io_errf(err, errlen, "%s: out of memory for a %lldx%lld image", name, (long long)w,
                      (long long)h);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        int64_t v;
        if (ascii) {
            if (i > 0 && skip_sep(b, size, &pos) == 0) {
                if (pos >= size) goto truncated;
                goto bad_sample;
            }
            if (i == 0) skip_sep(b, size, &pos);
            if (pos >= size) goto truncated;
            if (!parse_uint(b, size, &pos, &v)) goto bad_sample;
        } else if (bps == 1) {
            v = b[pos++];
        } else {
            v = (int64_t)b[pos] << 8 | b[pos + 1];
            pos += 2;
        }
        if (v > maxval) {
            fconv_io_errf(err, errlen, "%s: sample value %lld exceeds maxval %lld", name,
                          (long long)v, (long long)maxval);
            free(data);
            return -1;
        }
        data[i] = (float)((double)v * scale);
    }
    if (ascii && pos < size && !is_space(b[pos]) && b[pos] != '#') goto bad_sample;
    img->data = data;
    img->h = h;
    img->w = w;
    img->channels = channels;
    img->bit_depth = bits;
    return 0;

truncated:
    fconv_io_errf(err, errlen, "%s: truncated pixel data", name);
    free(data);
    return -1;
bad_sample:
    fconv_io_errf(err, errlen, "%s: bad pixel data: expected a decimal sample at byte %zu", name,
                  pos);
    free(data);
    return -1;
}

int fconv_io_pnm_write(FILE *fp, const char *name, const float *data, int64_t h, int64_t w,
                       int channels, int bit_depth, char *err, size_t errlen) {
    unsigned maxv = bit_depth == 16 ? 65535u : 255u;
    size_t samples = (size_t)w * (size_t)channels, bps = bit_depth == 16 ? 2 : 1;
    unsigned char *row = malloc(samples * bps);
    if (!row) {
        fconv_io_errf(err, errlen, "%s: out of memory", name);
        return -1;
    }
    int ok = fprintf(fp, "P%c\n%lld %lld\n%u\n", channels == 1 ? '5' : '6', (long long)w, // ok: to the file
                     (long long)h, maxv) > 0;
    for (int64_t y = 0; ok && y < h; y++) {
        const float *src = data + (size_t)y * samples;
        for (size_t i = 0; i < samples; i++) {
            unsigned v = fconv_io_quantize(src[i], maxv);
            if (bps == 1) {
                row[i] = (unsigned char)v;
            } else {
                row[2 * i] = (unsigned char)(v >> 8);
                row[2 * i + 1] = (unsigned char)v;
            }
        }
        ok = fwrite(row, 1, samples * bps, fp) == samples * bps;
    }
    free(row);
    if (!ok) {
        fconv_io_errf(err, errlen, "%s: write failed", name);
        return -1;
    }
    return 0;
}
