/*
 * umi-callback.c — the user strategy: the caller's pre / step / post functions, called
 * through pointers once per parallel point and once per element pair. Slower than the
 * built-in strategies by design (no inlining, no vectorization); the executor is shared.
 */
#include <string.h>

#include "umi/umi-internal.h"

void fconv_umi_callback_pre(const fconv_umi_plan *plan, fconv_umi_state *st, float init) {
    memset(st->user, 0, sizeof st->user);
    if (plan->callbacks.pre)
        plan->callbacks.pre(st->user, init, plan->callbacks.user);
    else
        st->user[0] = init;
}

void fconv_umi_callback_run(const fconv_umi_plan *plan, fconv_umi_state *st, const float *a,
                            ptrdiff_t sa, const float *b, ptrdiff_t sb, const unsigned char *valid,
                            size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (valid && !valid[i]) continue;
        float y = b ? b[(ptrdiff_t)i * sb] : 0.0f;
        plan->callbacks.step(st->user, a[(ptrdiff_t)i * sa], y, plan->callbacks.user);
    }
}

float fconv_umi_callback_post(const fconv_umi_plan *plan, const fconv_umi_state *st) {
    return plan->callbacks.post(st->user, plan->callbacks.user);
}
