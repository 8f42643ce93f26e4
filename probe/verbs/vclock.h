/* SPDX-License-Identifier: MIT */
/*
 * Cheap timestamps for the measured loops. perftest reads the CPU's
 * time-stamp counter; clock_gettime() is as cheap only where the kernel's
 * clocksource is the TSC, and on a machine whose clocksource is the HPET
 * (the TCG lab: about 19 us a call) it would dominate a latency sample.
 * So on x86 the loops read the TSC, converted to nanoseconds with a rate
 * calibrated against CLOCK_MONOTONIC over 10 ms at the start; at the end
 * vclock_drift() gives the correction over the whole loop. Elsewhere this
 * is CLOCK_MONOTONIC.
 */
#ifndef IBPULSE_VERBS_VCLOCK_H
#define IBPULSE_VERBS_VCLOCK_H

#include <stdbool.h>
#include <stdint.h>

struct vclock {
	uint64_t ns0; /* CLOCK_MONOTONIC at calibration */
	uint64_t tick0;
	double ns_per_tick;
	bool tsc;
};

static inline uint64_t vclock_ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __builtin_ia32_rdtsc();
#else
	return 0;
#endif
}

/* Calibrate (about 10 ms); falls back to CLOCK_MONOTONIC. */
void vclock_init(struct vclock *c);
/* Nanoseconds on CLOCK_MONOTONIC's scale, from the counter. */
uint64_t vclock_now(const struct vclock *c);
/*
 * vclock_drift() - true elapsed time since vclock_init() divided by what
 * the counter says: multiply durations measured with vclock_now() by it.
 */
double vclock_drift(const struct vclock *c);

#endif
