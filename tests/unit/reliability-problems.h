/*
 * reliability-problems.h — small problems shared by the reliability tests: one of each kind
 * that many algorithms serve, a random-problem generator, and running a plan against the
 * reference. Header-only (static functions), like test.h; include after test.h.
 */
#ifndef FCONV_RELIABILITY_PROBLEMS_H
#define FCONV_RELIABILITY_PROBLEMS_H

#include "fastconv.h"
#include "test.h"

typedef struct rel_problem {
    int kind; /* 0 conv2d, 1 filter2d, 2 conv1d */
    fconv_conv2d_desc c2;
    fconv_filter2d_desc f2;
    fconv_conv1d_desc c1;
} rel_problem;

static inline fconv_status rel_plan(const rel_problem *p, const fconv_options *o, const float *w,
                                    const float *bias, fconv_plan **plan) {
    switch (p->kind) {
    case 0: return fconv_plan_conv2d(&p->c2, o, w, bias, plan);
    case 1: return fconv_plan_filter2d(&p->f2, o, w, plan);
    default: return fconv_plan_conv1d(&p->c1, o, w, plan);
    }
}

/* Fixed problems that most algorithms serve (3x3 stride 1 for Winograd, rank-1 kernel for
 * separable is a property of the data, so separable gets a box kernel in rel_fill). The
 * conv2d has enough channels (24 x 3 kernel rows) that AUTO prefers a workspace-using
 * algorithm to direct, whose few-channel kernel wins below 64 (test_reliability_budget). */
static inline rel_problem rel_fixed(int which) {
    rel_problem p;
    memset(&p, 0, sizeof p);
    p.kind = which % 3;
    if (p.kind == 0)
        p.c2 = (fconv_conv2d_desc){.n = 2, .c = 24, .h = 13, .w = 11, .k = 6, .r = 3, .s = 3,
                                   .pad_top = 1, .pad_left = 1, .pad_bottom = 1, .pad_right = 1,
                                   .has_bias = 1, .activation = FCONV_ACTIVATION_RELU};
    else if (p.kind == 1)
        p.f2 = (fconv_filter2d_desc){.h = 17, .w = 19, .channels = 3, .kh = 5, .kw = 5,
                                     .mode = FCONV_MODE_SAME, .border = FCONV_BORDER_REFLECT};
    else
        p.c1 = (fconv_conv1d_desc){.n = 300, .m = 17, .mode = FCONV_MODE_FULL};
    return p;
}

/* A random small problem (every kind, many shapes, borders and modes; valid by construction). */
static inline rel_problem rel_random(void) {
    rel_problem p;
    memset(&p, 0, sizeof p);
    p.kind = (int)test_rand_int(0, 2);
    if (p.kind == 0) {
        fconv_conv2d_desc *d = &p.c2;
        d->groups = test_rand_int(1, 3);
        d->c = d->groups * test_rand_int(1, 3);
        d->k = d->groups * test_rand_int(1, 3);
        d->n = test_rand_int(1, 2);
        d->r = test_rand_int(1, 5);
        d->s = test_rand_int(1, 5);
        d->stride_h = test_rand_int(1, 2);
        d->stride_w = test_rand_int(1, 2);
        d->dilation_h = test_rand_int(1, 2);
        d->dilation_w = test_rand_int(1, 2);
        d->pad_top = test_rand_int(0, 2);
        d->pad_left = test_rand_int(0, 2);
        d->pad_bottom = test_rand_int(0, 2);
        d->pad_right = test_rand_int(0, 2);
        d->h = d->dilation_h * (d->r - 1) + 1 + test_rand_int(0, 12);
        d->w = d->dilation_w * (d->s - 1) + 1 + test_rand_int(0, 12);
        d->has_bias = (int)test_rand_int(0, 1);
        d->activation = (fconv_activation)test_rand_int(0, 1);
    } else if (p.kind == 1) {
        fconv_filter2d_desc *f = &p.f2;
        f->kh = test_rand_int(1, 9);
        f->kw = test_rand_int(1, 9);
        f->h = f->kh + test_rand_int(0, 20);
        f->w = f->kw + test_rand_int(0, 20);
        f->channels = test_rand_int(1, 3);
        f->mode = (fconv_mode)test_rand_int(0, 2);
        f->border = (fconv_border)test_rand_int(0, 5);
        f->border_value = 0.5f;
        f->correlate = (int)test_rand_int(0, 1);
    } else {
        p.c1.m = test_rand_int(1, 40);
        p.c1.n = p.c1.m + test_rand_int(0, 200);
        p.c1.mode = (fconv_mode)test_rand_int(0, 2);
        p.c1.correlate = (int)test_rand_int(0, 1);
    }
    return p;
}

/* Buffers for one problem, filled with random data; the weights are rank-1 one time in two
 * so the separable algorithm gets its chance. */
typedef struct rel_buffers {
    float *x, *w, *bias, *y;
    int64_t xn, wn, bn, yn;
} rel_buffers;

static inline int rel_alloc(const rel_problem *p, const fconv_plan *plan, rel_buffers *b) {
    memset(b, 0, sizeof *b);
    b->xn = fconv_plan_input_elements(plan);
    b->wn = fconv_plan_weight_elements(plan);
    b->yn = fconv_plan_output_elements(plan);
    b->bn = p->kind == 0 && p->c2.has_bias ? p->c2.k : 0;
    b->x = malloc((size_t)b->xn * sizeof(float));
    b->w = malloc((size_t)b->wn * sizeof(float));
    b->bias = b->bn ? malloc((size_t)b->bn * sizeof(float)) : NULL;
    b->y = malloc((size_t)b->yn * sizeof(float));
    if (!b->x || !b->w || (b->bn && !b->bias) || !b->y) return -1;
    test_fill_random(b->x, (size_t)b->xn);
    if (b->bn) test_fill_random(b->bias, (size_t)b->bn);
    test_fill_random(b->w, (size_t)b->wn);
    if (p->kind != 0 && test_rand_int(0, 1)) { /* outer product: separable applies */
        int64_t kh = p->kind == 1 ? p->f2.kh : 1, kw = p->kind == 1 ? p->f2.kw : p->c1.m;
        for (int64_t i = 0; i < kh; i++)
            for (int64_t j = 0; j < kw; j++)
                b->w[i * kw + j] = (0.5f + 0.1f * (float)(i % 5)) * (1.0f - 0.15f * (float)(j % 7));
    }
    return 0;
}

static inline void rel_free(rel_buffers *b) {
    free(b->x);
    free(b->w);
    free(b->bias);
    free(b->y);
    memset(b, 0, sizeof *b);
}

#endif
