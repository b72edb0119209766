/*
 * wisdom.h — the store of measured algorithm choices (wisdom.c) and AUTO's use of it and of
 * plan-time measurement (tuned.c). The public side is the "Wisdom" section of fastconv.h.
 */
#ifndef FCONV_WISDOM_H
#define FCONV_WISDOM_H

#include <stddef.h>
#include <stdint.h>

#include "core/internal.h"

/* The key of a plan's problem on this machine: library version, CPU identity, ISA,
 * threads and every descriptor field, tab-separated (5 fields), written to buf. */
void fconv_wisdom_key(const fconv_plan *plan, char *buf, size_t len);

/* The winner recorded for the plan's key, reading the wisdom file first if it changed.
 * Returns 1 and fills *algo, *ms (its measured time), *when (Unix time of the measurement),
 * or 0 with a short note on why there is none (e.g. "wisdom file X ignored: ...") in note. */
int fconv_wisdom_lookup(const fconv_plan *plan, fconv_algo *algo, double *ms, int64_t *when,
                        char *note, size_t note_len);

/* Record algo as the measured winner for the plan's key (replacing any older entry) and
 * merge it into the wisdom file. Returns 0, or -1 if the file could not be written (the
 * entry stays in memory; the reason is in note). */
int fconv_wisdom_record(const fconv_plan *plan, fconv_algo algo, double ms, char *note,
                        size_t note_len);

/* AUTO's second opinion, called by select.c once the cost model chose plan->algo among the
 * n eligible candidates (with their workspace sizes): with FCONV_PLAN_MEASURE time them and
 * take (and record) the fastest, else take the wisdom entry if it names an eligible one.
 * Updates plan->algo, the workspace sizes and plan->explain. Never fails: without a usable
 * measurement or entry the cost model's choice stands (explain says why). */
void fconv_select_tuned(fconv_plan *plan, const struct fconv_algorithm *const *eligible,
                        const size_t *workspace, int n);

#endif
