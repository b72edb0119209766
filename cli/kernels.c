/*
 * kernels.c — built-in filter kernels. They are written in the convolution orientation
 * (the default of `fastconv filter`): sobel-x responds positively where the image gets
 * brighter to the right, sobel-y where it gets brighter downwards. The classic kernels
 * are those of ../shared/seeds/004 (edge1..3, sharpen, box, Gaussian, unsharp mask).
 */
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "kernels.h"

struct named_kernel {
    const char *name;
    int size;
    float scale;
    const float *values;
    const char *second; /* name of the partner kernel of a magnitude pair */
};

static const float k_identity[] = {0, 0, 0, 0, 1, 0, 0, 0, 0};
static const float k_edge1[] = {1, 0, -1, 0, 0, 0, -1, 0, 1};
static const float k_edge2[] = {0, 1, 0, 1, -4, 1, 0, 1, 0};
static const float k_edge3[] = {-1, -1, -1, -1, 8, -1, -1, -1, -1};
static const float k_sharpen[] = {0, -1, 0, -1, 5, -1, 0, -1, 0};
static const float k_box3[] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
static const float k_box5[] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                               1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
static const float k_gaussian3[] = {1, 2, 1, 2, 4, 2, 1, 2, 1};
static const float k_gaussian5[] = {1, 4,  6,  4,  1, 4, 16, 24, 16, 4, 6, 24, 36,
                                    24, 6, 4, 16, 24, 16, 4, 1,  4,  6, 4, 1};
static const float k_unsharp5[] = {1, 4,  6,    4,  1, 4, 16, 24, 16, 4, 6, 24, -476,
                                   24, 6, 4, 16, 24, 16, 4, 1,  4,  6, 4, 1};
/* Convolution flips the kernel, so the minus side is on the right/bottom here. */
static const float k_sobel_x[] = {1, 0, -1, 2, 0, -2, 1, 0, -1};
static const float k_sobel_y[] = {1, 2, 1, 0, 0, 0, -1, -2, -1};
static const float k_laplacian[] = {0, 1, 0, 1, -4, 1, 0, 1, 0};
static const float k_emboss[] = {-2, -1, 0, -1, 1, 1, 0, 1, 2};

static const struct named_kernel named_kernels[] = {
    {"identity", 3, 1.0f, k_identity, NULL},
    {"edge1", 3, 1.0f, k_edge1, NULL},
    {"edge2", 3, 1.0f, k_edge2, NULL},
    {"edge3", 3, 1.0f, k_edge3, NULL},
    {"sharpen", 3, 1.0f, k_sharpen, NULL},
    {"box3", 3, 1.0f / 9, k_box3, NULL},
    {"box5", 5, 1.0f / 25, k_box5, NULL},
    {"gaussian3", 3, 1.0f / 16, k_gaussian3, NULL},
    {"gaussian5", 5, 1.0f / 256, k_gaussian5, NULL},
    {"unsharp5", 5, -1.0f / 256, k_unsharp5, NULL},
    {"sobel-x", 3, 1.0f, k_sobel_x, NULL},
    {"sobel-y", 3, 1.0f, k_sobel_y, NULL},
    {"sobel-mag", 3, 1.0f, k_sobel_x, "sobel-y"},
    {"laplacian", 3, 1.0f, k_laplacian, NULL},
    {"emboss", 3, 1.0f, k_emboss, NULL},
};
#define N_NAMED (sizeof named_kernels / sizeof named_kernels[0])

const char *cli_kernel_names(void) {
    return "identity, edge1, edge2, edge3, sharpen, box3, box5, gaussian3, gaussian5, unsharp5, "
           "sobel-x, sobel-y, sobel-mag, laplacian, emboss";
}

static const struct named_kernel *find_named(const char *name) {
    for (size_t i = 0; i < N_NAMED; i++)
        if (strcmp(named_kernels[i].name, name) == 0) return &named_kernels[i];
    return NULL;
}

static float *scaled_copy(const struct named_kernel *nk) {
    size_t n = (size_t)nk->size * (size_t)nk->size;
    float *k = malloc(n * sizeof *k);
    if (k)
        for (size_t i = 0; i < n; i++) k[i] = nk->values[i] * nk->scale;
    return k;
}

void cli_kernel_free(cli_kernel *k) {
    free(k->k);
    free(k->k_second);
    memset(k, 0, sizeof *k);
}

int cli_kernel_load(const char *spec, cli_kernel *out) {
    memset(out, 0, sizeof *out);
    const struct named_kernel *nk = find_named(spec);
    if (nk) {
        out->kh = out->kw = nk->size;
        out->k = scaled_copy(nk);
        if (nk->second) out->k_second = scaled_copy(find_named(nk->second));
        if (!out->k || (nk->second && !out->k_second)) {
            cli_kernel_free(out);
            return cli_fail("out of memory");
        }
        return 0;
    }
    if (!cli_has_extension(spec, ".npy")) {
        return cli_usage_error("-k: unknown kernel '%s' (built-in: %s; or a 2D .npy file)", spec,
                               cli_kernel_names());
    }
    fconv_io_array a;
    if (cli_read_npy(spec, &a) != 0) return CLI_EXIT_FAILURE;
    if (a.ndim != 2 || fconv_io_array_elements(&a) == 0) {
        char shape[128];
        cli_fail("%s: a kernel must be a non-empty 2D array, got shape %s", spec,
                 cli_shape_string(a.shape, a.ndim, shape, sizeof shape));
        fconv_io_array_free(&a);
        return CLI_EXIT_FAILURE;
    }
    out->kh = a.shape[0];
    out->kw = a.shape[1];
    out->k = a.data; /* take ownership */
    return 0;
}
