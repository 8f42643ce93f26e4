/* SPDX-License-Identifier: MIT */
/*
 * Sharding of /metrics by host: /metrics?shard=I&shards=N serves the hosts
 * whose name hashes (64-bit FNV-1a) to I modulo N. The hash depends only
 * on the name, so a host stays in its shard across restarts and whatever
 * other hosts come and go, and every host is in exactly one shard.
 */
#ifndef IBPULSE_SHARD_H
#define IBPULSE_SHARD_H

#include <stddef.h>

#define SHARD_MAX 65536

/* The shard (0..@n-1) of host @name; @n >= 1. */
unsigned shard_of(const char *name, unsigned n);

/*
 * shard_parse() - the query arguments (NULL when absent) into *@index and
 * *@count: both absent is shard 0 of 1 (everything). Returns 0, or
 * -EINVAL with a reason for the client in @err ("shard must be below
 * shards", "shards must be an integer from 1 to 65536"...).
 */
int shard_parse(const char *shard, const char *shards, unsigned *index,
		unsigned *count, char *err, size_t errlen);

#endif
