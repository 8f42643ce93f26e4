/* SPDX-License-Identifier: MIT */
/*
 * Retry delays after a failed push: exponential backoff with full jitter
 * (the delay is uniform in [0, min(max, base * 2^attempt)]), so a
 * thousand probes that lost the collector at the same moment do not come
 * back in step.
 */
#ifndef IBPULSE_BACKOFF_H
#define IBPULSE_BACKOFF_H

struct backoff {
	double base; /* seconds: the cap of the first delay */
	double max;  /* seconds: the largest cap */
	unsigned attempt;
	unsigned long long rng; /* xorshift state, never 0 */
};

/* Set up with @base <= @max seconds, seeded from the OS. */
void backoff_init(struct backoff *b, double base, double max);
/* After a success: the next failure starts from @base again. */
void backoff_reset(struct backoff *b);
/* The current cap: min(max, base * 2^attempt). */
double backoff_cap(const struct backoff *b);
/*
 * backoff_next() - the delay before the next attempt, in seconds, drawn
 * uniformly in [0, cap]; then the cap doubles (up to max).
 */
double backoff_next(struct backoff *b);
/* A uniform double in [0, 1) from @b's generator (used for jitter). */
double backoff_rand(struct backoff *b);

#endif
