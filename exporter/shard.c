// SPDX-License-Identifier: MIT
/* Sharding of /metrics by host name: see shard.h. */
#include "shard.h"
#include "fnv.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>

unsigned shard_of(const char *name, unsigned n)
{
	uint64_t h = fnv1a_str(FNV1A_BASIS, name);

	return n > 1 ? (unsigned)(h % n) : 0;
}

/* Decimal digits only (no sign, no spaces, no 0x), at most @max. */
static int shard_number(const char *s, unsigned long max, unsigned long *out)
{
	unsigned long v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		v = v * 10 + (unsigned long)(*s - '0');
		if (v > max)
			return -EINVAL;
	}
	*out = v;
	return 0;
}

int shard_parse(const char *shard, const char *shards, unsigned *index,
		unsigned *count, char *err, size_t errlen)
{
	unsigned long i, n;

	if (!shard && !shards) {
		*index = 0;
		*count = 1;
		return 0;
	}
	if (!shard || !shards) {
		snprintf(err, errlen,
			 "shard and shards go together "
			 "(/metrics?shard=I&shards=N)");
		return -EINVAL;
	}
	if (shard_number(shards, SHARD_MAX, &n) || n < 1) {
		snprintf(err, errlen, "shards must be an integer from 1 to %d",
			 SHARD_MAX);
		return -EINVAL;
	}
	if (shard_number(shard, SHARD_MAX, &i) || i >= n) {
		snprintf(err, errlen,
			 "shard must be an integer from 0 to shards-1 (%lu)",
			 n - 1);
		return -EINVAL;
	}
	*index = (unsigned)i;
	*count = (unsigned)n;
	return 0;
}
