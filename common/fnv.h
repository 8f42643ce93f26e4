/* SPDX-License-Identifier: MIT */
/*
 * FNV-1a, 64 bits: the one hash of the hash tables (log's once-table,
 * expo's name set, the exporter's caches, the collector's map) and of
 * exporter shards (shard.h: its values must never change). Inline,
 * because it runs per label set on the /metrics paths.
 *
 * A table that keeps several key spaces apart seeds it:
 * fnv1a_str(FNV1A_BASIS ^ kind, key).
 */
#ifndef IBPULSE_FNV_H
#define IBPULSE_FNV_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define FNV1A_BASIS 14695981039346656037ULL
#define FNV1A_PRIME 1099511628211ULL

/* Mix one value (a byte, or a whole word) into @h. */
static inline uint64_t fnv1a_mix(uint64_t h, uint64_t v)
{
	return (h ^ v) * FNV1A_PRIME;
}

/* The @len bytes at @data, from @h (FNV1A_BASIS to start). */
static inline uint64_t fnv1a_bytes(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < len; i++)
		h = fnv1a_mix(h, p[i]);
	return h;
}

/*
 * The @len bytes at @data by 8-byte words (the tail by bytes), each
 * product folded so that a word's high bits reach the low ones: several
 * times faster than fnv1a_bytes() on long texts, for a text's identity
 * (not a table's hash, not a shard: its values are its own).
 */
static inline uint64_t fnv1a_words(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t w;

		memcpy(&w, p + i, sizeof(w));
		h = fnv1a_mix(h, w);
		h ^= h >> 32;
	}
	for (; i < len; i++)
		h = fnv1a_mix(h, p[i]);
	return h;
}

/* The 8 bytes of @v (least significant first), from @h. */
static inline uint64_t fnv1a_u64(uint64_t h, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		h = fnv1a_mix(h, (v >> (8 * i)) & 0xff);
	return h;
}

/* The bytes of NUL-terminated @s, from @h. */
static inline uint64_t fnv1a_str(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = fnv1a_mix(h, (unsigned char)*s);
	return h;
}

#endif
