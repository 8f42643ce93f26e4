// SPDX-License-Identifier: MIT
/* The clocks (now.h). */
#include "now.h"

double now_of(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts))
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double now_mono(void)
{
	return now_of(CLOCK_MONOTONIC);
}

uint64_t now_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

double now_wall(void)
{
	return now_of(CLOCK_REALTIME);
}

struct timespec now_after(clockid_t id, double s)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	ts.tv_nsec += (long)(s * 1e9);
	ts.tv_sec += ts.tv_nsec / 1000000000;
	ts.tv_nsec %= 1000000000;
	return ts;
}
