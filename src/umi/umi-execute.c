/*
 * umi-execute.c — the CPU executor of the UMI operator (the paper's Procedure 1 with tiles):
 * the parallel index space is cut into tiles along its last component, shared out by
 * fconv_parallel_2d; each point reduces its accumulation space one run (the last
 * accumulation component) at a time. A run whose reads all lie inside the tensors is fed
 * straight from memory with fixed strides (no unrolled copy); a run that crosses a border
 * is gathered through the border rule into a small stack buffer first. An elementwise plan
 * (ABSDIFF, n_acc == 0) runs whole inside stretches of a tile as one loop instead.
 */
#include <math.h>
#include <string.h>

#include "core/internal.h"
#include "core/parallel.h"
#include "umi/umi-internal.h"

#define UMI_TILE 64   /* parallel points per task along the last parallel component */
#define UMI_TILE_ELEMENTWISE 1024 /* the same for an elementwise plan (n_acc == 0) */
#define UMI_CHUNK 256 /* elements gathered at once on a border run */

struct umi_ctx {
    const fconv_umi_plan *p;
    const float *a, *b, *init;
    float *y;
    int64_t tile; /* parallel points per task */
    size_t tiles; /* along the last parallel component */
};

/* Index of coordinate x on an axis of length n under a border rule, or -1 when the rule
 * reads no element (zero, skip). */
static int64_t map_coord(int64_t x, int64_t n, fconv_umi_border border) {
    if (x >= 0 && x < n) return x;
    switch (border) {
    case FCONV_UMI_BORDER_REPLICATE: return x < 0 ? 0 : n - 1;
    case FCONV_UMI_BORDER_MIRROR: {
        if (n == 1) return 0;
        /* dcb|abcd|cba repeats with period 2(n-1); fold into it, then reflect. */
        int64_t period = 2 * (n - 1), m = x % period;
        if (m < 0) m += period;
        return m < n ? m : period - m;
    }
    default: return -1; /* NONE cannot get here (validated); ZERO and SKIP read nothing */
    }
}

/* Coordinates of view v at parallel index k and accumulation index ka (the last
 * accumulation component at 0), per axis. */
static void view_coords(const struct fconv_umi_resolved_view *v, const fconv_umi_plan *p,
                        const int64_t *k, const int64_t *ka, int with_acc, int64_t *c) {
    for (int i = 0; i < v->ndim; i++) c[i] = 0;
    for (int j = 0; j < p->n_par; j++) c[v->par[j].axis] += k[j] * v->par[j].stride + v->par[j].offset;
    for (int j = 0; with_acc && j < p->n_acc; j++)
        c[v->acc[j].axis] += ka[j] * v->acc[j].stride + v->acc[j].offset;
}

/* The element of v at coordinates c, through the border rule; *ok = 0 for a skipped one. */
static float read_mapped(const struct fconv_umi_resolved_view *v, const float *t, const int64_t *c,
                         int *ok) {
    int64_t off = 0;
    *ok = 1;
    for (int i = 0; i < v->ndim; i++) {
        int64_t x = map_coord(c[i], v->shape[i], v->border);
        if (x < 0) {
            *ok = v->border != FCONV_UMI_BORDER_SKIP;
            return 0.0f;
        }
        off += x * v->tstride[i];
    }
    return t[off];
}

/* Does the run of n elements starting at c, moving `stride` along `axis`, stay inside? */
static int run_inside(const struct fconv_umi_resolved_view *v, const int64_t *c, int axis,
                      int64_t stride, int64_t n) {
    if (!v->may_leave) return 1;
    for (int i = 0; i < v->ndim; i++) {
        int64_t lo = c[i], hi = c[i];
        if (i == axis) {
            int64_t far = c[i] + stride * (n - 1);
            if (far < lo) lo = far;
            else hi = far;
        }
        if (lo < 0 || hi >= v->shape[i]) return 0;
    }
    return 1;
}

static int64_t linear(const struct fconv_umi_resolved_view *v, const int64_t *c) {
    int64_t off = 0;
    for (int i = 0; i < v->ndim; i++) off += c[i] * v->tstride[i];
    return off;
}

/* Feed the accumulation space of parallel point k into st. */
static void reduce_point(const struct umi_ctx *x, const int64_t *k, fconv_umi_state *st) {
    const fconv_umi_plan *p = x->p;
    if (p->n_acc == 0) return;
    const int last = p->n_acc - 1;
    const int64_t len = p->acc_extent[last];
    int64_t ka[FCONV_UMI_MAX_COMPONENTS] = {0};
    const int has_b = p->b.used;
    const int ax_a = p->a.acc[last].axis, ax_b = p->b.acc[last].axis;
    const int64_t st_a = p->a.acc[last].stride, st_b = p->b.acc[last].stride;
    for (;;) {
        int64_t ca[FCONV_UMI_MAX_AXES], cb[FCONV_UMI_MAX_AXES];
        view_coords(&p->a, p, k, ka, 1, ca);
        if (has_b) view_coords(&p->b, p, k, ka, 1, cb);
        if (run_inside(&p->a, ca, ax_a, st_a, len) && (!has_b || run_inside(&p->b, cb, ax_b, st_b, len))) {
            fconv_umi_run(p, st, x->a + linear(&p->a, ca), (ptrdiff_t)(st_a * p->a.tstride[ax_a]),
                          has_b ? x->b + linear(&p->b, cb) : NULL,
                          has_b ? (ptrdiff_t)(st_b * p->b.tstride[ax_b]) : 0, NULL, (size_t)len);
        } else {
            float va[UMI_CHUNK], vb[UMI_CHUNK];
            unsigned char ok[UMI_CHUNK];
            for (int64_t t0 = 0; t0 < len; t0 += UMI_CHUNK) {
                int64_t n = len - t0 < UMI_CHUNK ? len - t0 : UMI_CHUNK;
                for (int64_t t = 0; t < n; t++) {
                    int oka = 1, okb = 1;
                    int64_t save_a = ca[ax_a];
                    ca[ax_a] += (t0 + t) * st_a;
                    va[t] = read_mapped(&p->a, x->a, ca, &oka);
                    ca[ax_a] = save_a;
                    if (has_b) {
                        int64_t save_b = cb[ax_b];
                        cb[ax_b] += (t0 + t) * st_b;
                        vb[t] = read_mapped(&p->b, x->b, cb, &okb);
                        cb[ax_b] = save_b;
                    }
                    ok[t] = (unsigned char)(oka && okb);
                }
                fconv_umi_run(p, st, va, 1, has_b ? vb : NULL, 1, ok, (size_t)n);
            }
        }
        /* Next run: odometer over the accumulation components before the last. */
        int j = last - 1;
        while (j >= 0 && ++ka[j] == p->acc_extent[j]) ka[j--] = 0;
        if (j < 0) break;
    }
}

/* Narrow [*t0, *t1) to the steps t of the run c + t * stride (along axis) that lie inside
 * view v; an empty range when another axis is outside. */
static void inside_steps(const struct fconv_umi_resolved_view *v, const int64_t *c, int axis,
                         int64_t stride, int64_t *t0, int64_t *t1) {
    for (int i = 0; i < v->ndim; i++) {
        if (i != axis || stride == 0) {
            if (c[i] < 0 || c[i] >= v->shape[i]) *t1 = *t0;
            continue;
        }
        /* 0 <= c + t * stride < n */
        int64_t lo, hi; /* t in [lo, hi) */
        if (stride > 0) {
            lo = c[i] >= 0 ? 0 : (-c[i] + stride - 1) / stride;
            hi = c[i] >= v->shape[i] ? 0 : (v->shape[i] - c[i] + stride - 1) / stride;
        } else {
            int64_t s = -stride;
            lo = c[i] < v->shape[i] ? 0 : (c[i] - v->shape[i] + 1 + s - 1) / s;
            hi = c[i] < 0 ? 0 : c[i] / s + 1;
        }
        if (lo > *t0) *t0 = lo;
        if (hi < *t1) *t1 = hi;
    }
    if (*t1 < *t0) *t1 = *t0;
}

/* An elementwise (ABSDIFF) tile: y[q] = |a - b| at points q0..q1-1 of the last parallel
 * component. The points whose reads lie inside both tensors run as one strided loop (unit
 * strides vectorize); those before and after them read through the border rule. */
static void absdiff_tile(const struct umi_ctx *x, int64_t *k, int64_t q0, int64_t q1, float *y) {
    const fconv_umi_plan *p = x->p;
    const int lastp = p->n_par - 1;
    int64_t ca[FCONV_UMI_MAX_AXES], cb[FCONV_UMI_MAX_AXES];
    const int64_t zero_acc[FCONV_UMI_MAX_COMPONENTS] = {0};
    k[lastp] = q0;
    view_coords(&p->a, p, k, zero_acc, 0, ca);
    view_coords(&p->b, p, k, zero_acc, 0, cb);
    const int ax_a = p->a.par[lastp].axis, ax_b = p->b.par[lastp].axis;
    const int64_t st_a = p->a.par[lastp].stride, st_b = p->b.par[lastp].stride;
    const int64_t n = q1 - q0;
    int64_t t0 = 0, t1 = n; /* the inside steps */
    if (p->a.may_leave) inside_steps(&p->a, ca, ax_a, st_a, &t0, &t1);
    if (p->b.may_leave) inside_steps(&p->b, cb, ax_b, st_b, &t0, &t1);
    for (int64_t t = 0; t < n; t++) {
        if (t == t0 && t1 > t0) { /* the inside steps, straight from memory */
            const float *a = x->a + linear(&p->a, ca), *b = x->b + linear(&p->b, cb);
            const ptrdiff_t sa = (ptrdiff_t)(st_a * p->a.tstride[ax_a]);
            const ptrdiff_t sb = (ptrdiff_t)(st_b * p->b.tstride[ax_b]);
            float *out = y + q0 + t0;
            const int64_t m = t1 - t0;
            if (sa == 1 && sb == 1)
                for (int64_t u = 0; u < m; u++) out[u] = fabsf(a[u] - b[u]);
            else
                for (int64_t u = 0; u < m; u++) out[u] = fabsf(a[u * sa] - b[u * sb]);
            ca[ax_a] += m * st_a;
            cb[ax_b] += m * st_b;
            t = t1 - 1;
            continue;
        }
        int oka, okb;
        float va = read_mapped(&p->a, x->a, ca, &oka), vb = read_mapped(&p->b, x->b, cb, &okb);
        y[q0 + t] = oka && okb ? fabsf(va - vb) : 0.0f; /* a skipped pair: the empty sum */
        ca[ax_a] += st_a;
        cb[ax_b] += st_b;
    }
}

static void umi_task(const void *vctx, size_t i, size_t tile) {
    const struct umi_ctx *x = vctx;
    const fconv_umi_plan *p = x->p;
    const int lastp = p->n_par - 1;
    int64_t k[FCONV_UMI_MAX_COMPONENTS] = {0};
    /* Decode the outer index i into the parallel components before the last. */
    size_t rest = i;
    for (int j = lastp - 1; j >= 0; j--) {
        k[j] = (int64_t)(rest % (size_t)p->par_extent[j]);
        rest /= (size_t)p->par_extent[j];
    }
    const int64_t q0 = (int64_t)tile * x->tile;
    const int64_t q1 = q0 + x->tile < p->par_extent[lastp] ? q0 + x->tile : p->par_extent[lastp];
    float *y = x->y + (int64_t)i * p->par_extent[lastp];
    if (p->strategy == FCONV_UMI_ABSDIFF) {
        absdiff_tile(x, k, q0, q1, y);
        return;
    }
    const int64_t zero_acc[FCONV_UMI_MAX_COMPONENTS] = {0};
    for (int64_t q = q0; q < q1; q++) {
        k[lastp] = q;
        float init = 0.0f;
        if (p->init.used) {
            int64_t c[FCONV_UMI_MAX_AXES];
            int ok;
            view_coords(&p->init, p, k, zero_acc, 0, c);
            init = read_mapped(&p->init, x->init, c, &ok); /* a skipped init reads 0 */
        }
        fconv_umi_state st;
        fconv_umi_pre(p, &st, init);
        reduce_point(x, k, &st);
        y[q] = fconv_umi_post(p, &st);
    }
}

fconv_status fconv_umi_execute(const fconv_umi_plan *plan, const float *a, const float *b,
                               const float *init, float *y) {
    if (!plan) return fconv_fail(FCONV_EINVAL, "umi: plan must not be NULL");
    if (!a || !y) return fconv_fail(FCONV_EINVAL, "umi: tensor a and output y must not be NULL");
    if (plan->b.used && !b) return fconv_fail(FCONV_EINVAL, "umi: the plan has view b but b is NULL");
    if (plan->init.used && !init)
        return fconv_fail(FCONV_EINVAL, "umi: the plan has an init view but init is NULL");
    if (plan->device != FCONV_DEVICE_CPU) return fconv_umi_gpu_execute(plan, a, b, init, y);
    struct umi_ctx x = {.p = plan, .a = a, .b = plan->b.used ? b : NULL,
                        .init = plan->init.used ? init : NULL, .y = y};
    const int64_t last = plan->par_extent[plan->n_par - 1];
    x.tile = plan->strategy == FCONV_UMI_ABSDIFF ? UMI_TILE_ELEMENTWISE : UMI_TILE;
    x.tiles = (size_t)((last + x.tile - 1) / x.tile);
    size_t outer = (size_t)(plan->out_elems / last);
    fconv_parallel_2d(plan->threads, outer, x.tiles, umi_task, &x);
    fconv_clear_error();
    return FCONV_OK;
}
