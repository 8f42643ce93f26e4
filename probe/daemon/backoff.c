// SPDX-License-Identifier: MIT
/* Full-jitter exponential backoff (backoff.h). */
#include "backoff.h"

#include <math.h>
#include <sys/random.h>
#include <time.h>

void backoff_init(struct backoff *b, double base, double max)
{
	unsigned long long seed = 0;

	b->base = base;
	b->max = max < base ? base : max;
	b->attempt = 0;
	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != sizeof(seed))
		seed = (unsigned long long)time(NULL) * 2654435761ull;
	b->rng = seed ? seed : 0x9e3779b97f4a7c15ull;
}

void backoff_reset(struct backoff *b)
{
	b->attempt = 0;
}

double backoff_cap(const struct backoff *b)
{
	double cap =
		b->base * ldexp(1.0, (int)(b->attempt > 60 ? 60 : b->attempt));

	return cap > b->max ? b->max : cap;
}

double backoff_rand(struct backoff *b)
{
	unsigned long long x = b->rng;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	b->rng = x;
	return (double)(x >> 11) / 9007199254740992.0; /* 2^53 */
}

double backoff_next(struct backoff *b)
{
	double d = backoff_rand(b) * backoff_cap(b);

	if (backoff_cap(b) < b->max)
		b->attempt++;
	return d;
}
