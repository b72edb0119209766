/*
 * kernels.h — the filter kernels `fastconv filter -k` accepts: built-in names or a 2D .npy.
 * A kernel may be a pair combined into a gradient magnitude (sobel-mag = sqrt(gx^2 + gy^2)).
 */
#ifndef FCONV_CLI_KERNELS_H
#define FCONV_CLI_KERNELS_H

#include <stdint.h>

typedef struct cli_kernel {
    int64_t kh, kw;
    float *k;          /* kh * kw, owned */
    float *k_second;   /* NULL, or the second kernel of a magnitude pair (same size), owned */
} cli_kernel;

/* Load a built-in kernel by name, or a 2D .npy file. 0, or an exit code with a message printed:
 * CLI_EXIT_USAGE for an unknown name, CLI_EXIT_FAILURE for a bad file. */
int cli_kernel_load(const char *spec, cli_kernel *out);

void cli_kernel_free(cli_kernel *k);

/* The list of built-in names, comma-separated (for help and errors). */
const char *cli_kernel_names(void);

#endif
