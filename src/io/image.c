/*
 * image.c — image I/O front end: picks the codec by content when reading and by extension
 * when writing, enforces the size limits shared by all codecs, and wraps writers in an
 * atomic file so that a failed write leaves nothing behind.
 */
#define _POSIX_C_SOURCE 200809L

#include "io/image-internal.h"

#include "io/atomic-file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int fconv_io_check_dims(const char *name, int64_t w, int64_t h, char *err, size_t errlen) {
    if (w <= 0 || h <= 0) {
        fconv_io_errf(err, errlen, "%s: image %lldx%lld is empty", name, (long long)w,
                      (long long)h);
        return -1;
    }
    if (w > FCONV_IO_MAX_IMAGE_PIXELS / h) {
        fconv_io_errf(err, errlen, "%s: image %lldx%lld exceeds the limit of 2^30 pixels", name,
                      (long long)w, (long long)h);
        return -1;
    }
    if (w > FCONV_IO_MAX_IMAGE_SIDE || h > FCONV_IO_MAX_IMAGE_SIDE) {
        fconv_io_errf(err, errlen, "%s: image %lldx%lld exceeds the limit of 2^20 pixels per side",
                      name, (long long)w, (long long)h);
        return -1;
    }
    return 0;
}

void fconv_io_image_free(fconv_io_image *img) {
    if (!img) return;
    free(img->data);
    memset(img, 0, sizeof *img);
}

static int ext_is(const char *ext, const char *want) {
    for (; *ext && *want; ext++, want++) {
        char c = *ext;
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (c != *want) return 0;
    }
    return *ext == '\0' && *want == '\0';
}

fconv_io_format fconv_io_format_from_path(const char *path) {
    if (!path) return FCONV_IO_FORMAT_UNKNOWN;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    const char *dot = strrchr(base, '.');
    if (!dot) return FCONV_IO_FORMAT_UNKNOWN;
    const char *ext = dot + 1;
    if (ext_is(ext, "png")) return FCONV_IO_FORMAT_PNG;
    if (ext_is(ext, "jpg") || ext_is(ext, "jpeg")) return FCONV_IO_FORMAT_JPEG;
    if (ext_is(ext, "pgm") || ext_is(ext, "ppm") || ext_is(ext, "pnm")) return FCONV_IO_FORMAT_PNM;
    if (ext_is(ext, "npy")) return FCONV_IO_FORMAT_NPY;
    return FCONV_IO_FORMAT_UNKNOWN;
}

fconv_io_format fconv_io_format_sniff(const unsigned char *b, size_t n) {
    static const unsigned char png[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    static const unsigned char npy[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
    if (!b) return FCONV_IO_FORMAT_UNKNOWN;
    if (n >= 8 && memcmp(b, png, 8) == 0) return FCONV_IO_FORMAT_PNG;
    if (n >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF) return FCONV_IO_FORMAT_JPEG;
    if (n >= 6 && memcmp(b, npy, 6) == 0) return FCONV_IO_FORMAT_NPY;
    /* All of P1..P7, so the PNM parser can refuse PBM/PAM by name. */
    if (n >= 2 && b[0] == 'P' && b[1] >= '1' && b[1] <= '7') return FCONV_IO_FORMAT_PNM;
    return FCONV_IO_FORMAT_UNKNOWN;
}

int fconv_io_image_decode(const unsigned char *bytes, size_t size, const char *name,
                          fconv_io_image *img, char *err, size_t errlen) {
    memset(img, 0, sizeof *img);
    if (!name) name = "(memory)";
    if (!bytes || size == 0) {
        fconv_io_errf(err, errlen, "%s: empty file", name);
        return -1;
    }
    switch (fconv_io_format_sniff(bytes, size)) {
    case FCONV_IO_FORMAT_PNG: return fconv_io_png_decode(bytes, size, name, img, err, errlen);
    case FCONV_IO_FORMAT_JPEG: return fconv_io_jpeg_decode(bytes, size, name, img, err, errlen);
    case FCONV_IO_FORMAT_PNM: return fconv_io_pnm_decode(bytes, size, name, img, err, errlen);
    case FCONV_IO_FORMAT_NPY:
        fconv_io_errf(err, errlen, "%s: is a .npy array, not an image", name);
        return -1;
    default:
        fconv_io_errf(err, errlen, "%s: unknown image format (not PNG, JPEG, PGM or PPM)", name);
        return -1;
    }
}

int fconv_io_image_read(const char *path, fconv_io_image *img, char *err, size_t errlen) {
    memset(img, 0, sizeof *img);
    unsigned char *bytes;
    size_t size;
    if (fconv_io_read_file(path, &bytes, &size, err, errlen) != 0) return -1;
    int rc = fconv_io_image_decode(bytes, size, path, img, err, errlen);
    free(bytes);
    return rc;
}

int fconv_io_image_write(const char *path, const float *data, int64_t h, int64_t w,
                         int channels, int bit_depth, char *err, size_t errlen) {
    fconv_io_format fmt = fconv_io_format_from_path(path);
    if (fmt != FCONV_IO_FORMAT_PNG && fmt != FCONV_IO_FORMAT_JPEG && fmt != FCONV_IO_FORMAT_PNM) {
        fconv_io_errf(err, errlen, "%s: unknown image format (use .png, .jpg, .jpeg, .pgm, .ppm)",
                      path);
        return -1;
    }
    if (fconv_io_check_dims(path, w, h, err, errlen) != 0) return -1;
    if (!data) {
        fconv_io_errf(err, errlen, "%s: no pixel data to write", path);
        return -1;
    }
    if (bit_depth != 8 && bit_depth != 16) {
        fconv_io_errf(err, errlen, "%s: bit depth %d is not 8 or 16", path, bit_depth);
        return -1;
    }
    if (channels < 1 || channels > 4) {
        fconv_io_errf(err, errlen, "%s: %d channels (expected 1 to 4)", path, channels);
        return -1;
    }
    if (fmt == FCONV_IO_FORMAT_JPEG) {
        if (channels != 1 && channels != 3) {
            fconv_io_errf(err, errlen, "%s: JPEG cannot store %d channels (only 1 gray or 3 RGB; "
                          "no alpha)", path, channels);
            return -1;
        }
        if (bit_depth != 8) {
            fconv_io_errf(err, errlen, "%s: JPEG stores 8 bits per channel, not %d", path,
                          bit_depth);
            return -1;
        }
    }
    if (fmt == FCONV_IO_FORMAT_PNM) {
        const char *dot = strrchr(path, '.');
        int want = ext_is(dot + 1, "pgm") ? 1 : ext_is(dot + 1, "ppm") ? 3 : 0;
        if ((want && channels != want) || (!want && channels != 1 && channels != 3)) {
            fconv_io_errf(err, errlen, "%s: %s stores %s, not %d channels", path,
                          want == 1 ? "PGM" : want == 3 ? "PPM" : "PNM",
                          want == 1 ? "1 channel (gray)" : want == 3 ? "3 channels (RGB)"
                                                              : "1 or 3 channels",
                          channels);
            return -1;
        }
    }

    fconv_io_atomic_file f;
    if (fconv_io_atomic_open(&f, path, err, errlen) != 0) return -1;
    int rc;
    if (fmt == FCONV_IO_FORMAT_PNG)
        rc = fconv_io_png_write(f.fp, path, data, h, w, channels, bit_depth, err, errlen);
    else if (fmt == FCONV_IO_FORMAT_JPEG)
        rc = fconv_io_jpeg_write(f.fp, path, data, h, w, channels, err, errlen);
    else
        rc = fconv_io_pnm_write(f.fp, path, data, h, w, channels, bit_depth, err, errlen);
    if (rc != 0) {
        fconv_io_atomic_abort(&f);
        return -1;
    }
    return fconv_io_atomic_commit(&f, err, errlen);
}
