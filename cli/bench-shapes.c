/*
 * bench-shapes.c — the benchmark suite's shapes, in one place for `bench suite`, `tune
 * suite` and bench/compare.py (which reads them with `fastconv bench suite --list`): the seed
 * shapes of issue 4 (images, RGB, 1D, CNN feature layers, ResNet-50, VGG-16 at batch 1 and 8,
 * few-channel layers and the seed-004 workload's filter). Each is a `fastconv bench` command line.
 */
#include <getopt.h>
#include <string.h>

#include "bench.h"

const struct bench_shape bench_suite_shapes[] = {
    {"image", "filter --size 512x512 --kernel 3x3", 1},
    {"image", "filter --size 512x512 --kernel 5x5", 0},
    {"image", "filter --size 512x512 --kernel 7x7", 1},
    {"image", "filter --size 512x512 --kernel 9x9", 0},
    {"image", "filter --size 512x512 --kernel 15x15", 0},
    {"image", "filter --size 512x512 --kernel 31x31", 1},
    {"image", "filter --size 1024x1024 --kernel 3x3", 0},
    {"image", "filter --size 1024x1024 --kernel 5x5", 1},
    {"image", "filter --size 1024x1024 --kernel 7x7", 0},
    {"image", "filter --size 1024x1024 --kernel 9x9", 0},
    {"image", "filter --size 1024x1024 --kernel 15x15", 1},
    {"image", "filter --size 1024x1024 --kernel 31x31", 0},
    {"image", "filter --size 2048x2048 --kernel 3x3", 0},
    {"image", "filter --size 2048x2048 --kernel 5x5", 0},
    {"image", "filter --size 2048x2048 --kernel 7x7", 0},
    {"image", "filter --size 2048x2048 --kernel 9x9", 0},
    {"image", "filter --size 2048x2048 --kernel 11x11", 0}, /* issue 4's 7x7 / 11x11 target */
    {"image", "filter --size 2048x2048 --kernel 15x15", 0},
    {"image", "filter --size 2048x2048 --kernel 31x31", 0},
    {"image", "filter --size 4096x4096 --kernel 3x3", 0},
    {"image", "filter --size 4096x4096 --kernel 5x5", 0},
    {"image", "filter --size 4096x4096 --kernel 7x7", 0},
    {"image", "filter --size 4096x4096 --kernel 9x9", 0},
    {"image", "filter --size 4096x4096 --kernel 15x15", 0},
    {"image", "filter --size 4096x4096 --kernel 31x31", 0},
    {"rgb", "filter --size 256x256x3 --kernel 3x3", 1},
    {"rgb", "filter --size 256x256x3 --kernel 5x5", 0},
    {"rgb", "filter --size 256x256x3 --kernel 7x7", 0},
    {"rgb", "filter --size 512x512x3 --kernel 3x3", 0},
    {"rgb", "filter --size 512x512x3 --kernel 5x5", 0},
    {"rgb", "filter --size 512x512x3 --kernel 7x7", 0},
    {"rgb", "filter --size 1024x1024x3 --kernel 3x3", 0},
    {"rgb", "filter --size 1024x1024x3 --kernel 5x5", 0},
    {"rgb", "filter --size 1024x1024x3 --kernel 7x7", 1},
    {"1d", "conv1d --size 1000 --kernel 3 --mode same", 0},
    {"1d", "conv1d --size 1000 --kernel 31 --mode same", 1},
    {"1d", "conv1d --size 1000 --kernel 255 --mode same", 0},
    {"1d", "conv1d --size 10000 --kernel 3 --mode same", 0},
    {"1d", "conv1d --size 10000 --kernel 31 --mode same", 0},
    {"1d", "conv1d --size 10000 --kernel 255 --mode same", 0},
    {"1d", "conv1d --size 100000 --kernel 3 --mode same", 0},
    {"1d", "conv1d --size 100000 --kernel 31 --mode same", 0},
    {"1d", "conv1d --size 100000 --kernel 255 --mode same", 1},
    {"1d", "conv1d --size 1000000 --kernel 3 --mode same", 1},
    {"1d", "conv1d --size 1000000 --kernel 31 --mode same", 0},
    {"1d", "conv1d --size 1000000 --kernel 255 --mode same", 0},
    {"1d", "conv1d --size 10000000 --kernel 3 --mode same", 0},
    {"1d", "conv1d --size 10000000 --kernel 31 --mode same", 0},
    {"1d", "conv1d --size 10000000 --kernel 255 --mode same", 0},
    {"1d", "conv1d --size 100000000 --kernel 3 --mode same", 0},
    {"1d", "conv1d --size 100000000 --kernel 31 --mode same", 0},
    {"1d", "conv1d --size 100000000 --kernel 255 --mode same", 0},
    {"cnn-16x16", "conv2d --input 1x128x16x16 --filters 128x3x3 --pad 1", 0},
    {"cnn-16x16", "conv2d --input 1x256x16x16 --filters 256x3x3 --pad 1", 1},
    {"cnn-16x16", "conv2d --input 1x512x16x16 --filters 512x3x3 --pad 1", 0},
    {"cnn-16x16", "conv2d --input 1x1024x16x16 --filters 1024x3x3 --pad 1", 0},
    {"resnet50", "conv2d --input 1x3x224x224 --filters 64x7x7 --stride 2 --pad 3", 1},
    {"resnet50", "conv2d --input 1x64x56x56 --filters 64x3x3 --pad 1", 1},
    {"resnet50", "conv2d --input 1x128x28x28 --filters 128x3x3 --pad 1", 0},
    {"resnet50", "conv2d --input 1x256x14x14 --filters 256x3x3 --pad 1", 0},
    {"resnet50", "conv2d --input 1x512x7x7 --filters 512x3x3 --pad 1", 0},
    {"resnet50", "conv2d --input 1x128x56x56 --filters 128x3x3 --pad 1 --stride 2", 0},
    {"resnet50", "conv2d --input 1x256x28x28 --filters 256x3x3 --pad 1 --stride 2", 0},
    {"resnet50", "conv2d --input 1x512x14x14 --filters 512x3x3 --pad 1 --stride 2", 0},
    {"resnet50", "conv2d --input 1x64x56x56 --filters 64x1x1", 0},
    {"resnet50", "conv2d --input 1x64x56x56 --filters 256x1x1", 0},
    {"resnet50", "conv2d --input 1x256x56x56 --filters 64x1x1", 1},
    {"resnet50", "conv2d --input 1x256x56x56 --filters 128x1x1", 0},
    {"resnet50", "conv2d --input 1x128x28x28 --filters 512x1x1", 0},
    {"resnet50", "conv2d --input 1x512x28x28 --filters 128x1x1", 0},
    {"resnet50", "conv2d --input 1x512x28x28 --filters 256x1x1", 0},
    {"resnet50", "conv2d --input 1x256x14x14 --filters 1024x1x1", 0},
    {"resnet50", "conv2d --input 1x1024x14x14 --filters 256x1x1", 0},
    {"resnet50", "conv2d --input 1x1024x14x14 --filters 512x1x1", 0},
    {"resnet50", "conv2d --input 1x512x7x7 --filters 2048x1x1", 0},
    {"resnet50", "conv2d --input 1x2048x7x7 --filters 512x1x1", 0},
    {"vgg16", "conv2d --input 1x3x224x224 --filters 64x3x3 --pad 1", 0},
    {"vgg16", "conv2d --input 1x64x224x224 --filters 64x3x3 --pad 1", 0},
    {"vgg16", "conv2d --input 1x64x112x112 --filters 128x3x3 --pad 1", 0},
    {"vgg16", "conv2d --input 1x128x112x112 --filters 128x3x3 --pad 1", 0},
    {"vgg16", "conv2d --input 1x128x56x56 --filters 256x3x3 --pad 1", 0},
    {"vgg16", "conv2d --input 1x256x56x56 --filters 256x3x3 --pad 1", 1},
    {"vgg16", "conv2d --input 1x256x28x28 --filters 512x3x3 --pad 1", 0},
    {"vgg16", "conv2d --input 1x512x28x28 --filters 512x3x3 --pad 1", 0},
    {"vgg16", "conv2d --input 1x512x14x14 --filters 512x3x3 --pad 1", 0},
    {"resnet50", "conv2d --input 8x3x224x224 --filters 64x7x7 --stride 2 --pad 3", 0},
    {"resnet50", "conv2d --input 8x64x56x56 --filters 64x3x3 --pad 1", 0},
    {"resnet50", "conv2d --input 8x128x28x28 --filters 128x3x3 --pad 1", 0},
    {"resnet50", "conv2d --input 8x256x14x14 --filters 256x3x3 --pad 1", 0},
    {"resnet50", "conv2d --input 8x512x7x7 --filters 512x3x3 --pad 1", 0},
    {"resnet50", "conv2d --input 8x128x56x56 --filters 128x3x3 --pad 1 --stride 2", 0},
    {"resnet50", "conv2d --input 8x256x28x28 --filters 256x3x3 --pad 1 --stride 2", 0},
    {"resnet50", "conv2d --input 8x512x14x14 --filters 512x3x3 --pad 1 --stride 2", 0},
    {"resnet50", "conv2d --input 8x64x56x56 --filters 64x1x1", 0},
    {"resnet50", "conv2d --input 8x64x56x56 --filters 256x1x1", 0},
    {"resnet50", "conv2d --input 8x256x56x56 --filters 64x1x1", 0},
    {"resnet50", "conv2d --input 8x256x56x56 --filters 128x1x1", 0},
    {"resnet50", "conv2d --input 8x128x28x28 --filters 512x1x1", 0},
    {"resnet50", "conv2d --input 8x512x28x28 --filters 128x1x1", 0},
    {"resnet50", "conv2d --input 8x512x28x28 --filters 256x1x1", 0},
    {"resnet50", "conv2d --input 8x256x14x14 --filters 1024x1x1", 0},
    {"resnet50", "conv2d --input 8x1024x14x14 --filters 256x1x1", 0},
    {"resnet50", "conv2d --input 8x1024x14x14 --filters 512x1x1", 0},
    {"resnet50", "conv2d --input 8x512x7x7 --filters 2048x1x1", 0},
    {"resnet50", "conv2d --input 8x2048x7x7 --filters 512x1x1", 0},
    {"vgg16", "conv2d --input 8x3x224x224 --filters 64x3x3 --pad 1", 0},
    {"vgg16", "conv2d --input 8x64x224x224 --filters 64x3x3 --pad 1", 0},
    {"vgg16", "conv2d --input 8x64x112x112 --filters 128x3x3 --pad 1", 0},
    {"vgg16", "conv2d --input 8x128x112x112 --filters 128x3x3 --pad 1", 0},
    {"vgg16", "conv2d --input 8x128x56x56 --filters 256x3x3 --pad 1", 0},
    {"vgg16", "conv2d --input 8x256x56x56 --filters 256x3x3 --pad 1", 0},
    {"vgg16", "conv2d --input 8x256x28x28 --filters 512x3x3 --pad 1", 0},
    {"vgg16", "conv2d --input 8x512x28x28 --filters 512x3x3 --pad 1", 0},
    {"vgg16", "conv2d --input 8x512x14x14 --filters 512x3x3 --pad 1", 0},
    /* Few channels in, one out: libraries that vectorize over output channels idle here. */
    {"few-channel", "conv2d --input 1x3x1024x1024 --filters 1x3x3 --pad 1", 1},
    {"few-channel", "conv2d --input 1x3x1024x1024 --filters 1x5x5 --pad 2", 0},
    {"seed-004", "filter --size 1157x2048x3 --kernel 15x15 --correlate --border reflect", 1},
    {NULL, NULL, 0},
};

/* Split a shape's args into argv (argv[0] = "bench"); returns argc, at most max - 1 words.
 * buf holds the words. */
static int shape_argv(const char *args, char *buf, size_t buf_len, char **argv, int max) {
    int argc = 0;
    argv[argc++] = (char *)"bench";
    size_t len = strlen(args);
    if (len >= buf_len) len = buf_len - 1;
    memcpy(buf, args, len);
    buf[len] = '\0';
    for (char *p = buf; *p && argc < max - 1;) {
        while (*p == ' ') *p++ = '\0';
        if (!*p) break;
        argv[argc++] = p;
        while (*p && *p != ' ') p++;
    }
    argv[argc] = NULL;
    return argc;
}

int bench_shape_parse(const char *args, struct bench_args *a) {
    char buf[512], *av[40];
    int ac = shape_argv(args, buf, sizeof buf, av, 40);
    optind = 0;
    return bench_parse_args(ac, av, a);
}
