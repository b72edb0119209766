/*
 * test-cpu.h — the CPU figures (core/internal.h) as tests override them, to run a rule both
 * ways on any machine: a writable view of fconv_cpu()'s table. Test-only; each test saves
 * the figure it changes and restores it before returning, single-threaded at that point
 * (plans read the figures at plan and execute time).
 */
#ifndef FCONV_TEST_CPU_H
#define FCONV_TEST_CPU_H

#include "core/internal.h"

static inline fconv_cpu_info *test_cpu_figures(void) { return (fconv_cpu_info *)fconv_cpu(); }

#endif
