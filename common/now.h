/* SPDX-License-Identifier: MIT */
/*
 * The clocks, read one way (issue 18: eleven hand-written helpers before):
 * the monotonic clock for timeouts and durations, the wall clock for what
 * is stored or sent, and a thread's CPU time. The verbs engine keeps its
 * own (probe/verbs/ depends on nothing of common/).
 */
#ifndef IBPULSE_NOW_H
#define IBPULSE_NOW_H

#include <stdint.h>
#include <time.h>

/* Seconds on clock @id (clock_gettime()); 0 when it cannot be read. */
double now_of(clockid_t id);

/* CLOCK_MONOTONIC, seconds: durations and deadlines. */
double now_mono(void);

/* CLOCK_MONOTONIC, nanoseconds. */
uint64_t now_mono_ns(void);

/* CLOCK_REALTIME, seconds since the epoch: times stored or sent. */
double now_wall(void);

/* Clock @id @s seconds from now, as a struct timespec: the deadline of a
 * pthread_cond_timedwait() on a condition that waits on @id. */
struct timespec now_after(clockid_t id, double s);

#endif
