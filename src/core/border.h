/*
 * border.h — where a sample outside the image comes from (DESIGN.md §2). The extension is
 * periodic, which is exactly numpy.pad with equal pad widths on both sides (the full
 * convolution pads kernel-1 on each side); numpy's iterative rule differs only for unequal
 * pads wider than the image, which no mode of filter2d needs.
 */
#ifndef FCONV_BORDER_H
#define FCONV_BORDER_H

#include <stdint.h>

#include "fastconv.h"

static inline int64_t fconv_mod_i64(int64_t i, int64_t n) {
    int64_t r = i % n;
    return r < 0 ? r + n : r;
}

/* Index in [0, n) that sample i of a length-n axis reads, or -1 for the constant border
 * (zero / constant=V). */
static inline int64_t fconv_border_index(fconv_border border, int64_t i, int64_t n) {
    if (i >= 0 && i < n) return i;
    switch (border) {
    case FCONV_BORDER_ZERO:
    case FCONV_BORDER_CONSTANT:
        return -1;
    case FCONV_BORDER_REPLICATE:
        return i < 0 ? 0 : n - 1;
    case FCONV_BORDER_REFLECT: { /* cba|abcd|dcb: period 2n */
        int64_t r = fconv_mod_i64(i, 2 * n);
        return r < n ? r : 2 * n - 1 - r;
    }
    case FCONV_BORDER_MIRROR: { /* dcb|abcd|cba: period 2n - 2 */
        if (n == 1) return 0;
        int64_t r = fconv_mod_i64(i, 2 * n - 2);
        return r < n ? r : 2 * n - 2 - r;
    }
    case FCONV_BORDER_WRAP:
        return fconv_mod_i64(i, n);
    }
    return -1;
}

#endif
