// SPDX-License-Identifier: MIT
/*
 * The TSC-based clock of the measured loops (see vclock.h): calibration
 * against CLOCK_MONOTONIC and conversion of counter readings.
 */
#include "vclock.h"

#include <time.h>

#include "ctrl.h"

#define CALIBRATE_NS 10000000ull

void vclock_init(struct vclock *c)
{
	struct timespec ts = {.tv_nsec = (long)CALIBRATE_NS};
	uint64_t ns1, tick1;

	c->tsc = false;
	c->ns_per_tick = 1;
	c->tick0 = vclock_ticks();
	c->ns0 = ctrl_now_ns();
	if (!c->tick0)
		return;
	nanosleep(&ts, NULL);
	tick1 = vclock_ticks();
	ns1 = ctrl_now_ns();
	/* A counter that does not move, or runs backwards, is no clock. */
	if (tick1 <= c->tick0 || ns1 <= c->ns0)
		return;
	c->ns_per_tick = (double)(ns1 - c->ns0) / (double)(tick1 - c->tick0);
	c->tsc = true;
}

uint64_t vclock_now(const struct vclock *c)
{
	if (!c->tsc)
		return ctrl_now_ns();
	return c->ns0 +
	       (uint64_t)((double)(vclock_ticks() - c->tick0) * c->ns_per_tick);
}

double vclock_drift(const struct vclock *c)
{
	uint64_t ns = ctrl_now_ns(), est;

	if (!c->tsc)
		return 1;
	est = vclock_now(c);
	if (est <= c->ns0 || ns <= c->ns0)
		return 1;
	return (double)(ns - c->ns0) / (double)(est - c->ns0);
}
