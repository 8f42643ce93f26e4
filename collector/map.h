/* SPDX-License-Identifier: MIT */
/*
 * A string-keyed hash map (open addressing, linear probing) for the
 * collector's in-memory caches: host names, device names, interned counter
 * names. Keys are copied; values are opaque pointers the caller owns (a
 * free function given to map_new() is called on them by map_del, map_clear
 * and map_free). Not thread-safe: each map belongs to one thread.
 */
#ifndef IBPULSE_COLLECTOR_MAP_H
#define IBPULSE_COLLECTOR_MAP_H

#include <stddef.h>
#include <stdint.h>

struct map;

typedef void (*map_free_fn)(void *value);

/* A new empty map; @free_value may be NULL. Returns 0 or -ENOMEM. */
int map_new(map_free_fn free_value, struct map **out);
/* Free the map, its keys and (through free_value) its values. NULL is fine. */
void map_free(struct map *m);

/* The value stored under @key, or NULL. */
void *map_get(const struct map *m, const char *key);
/*
 * map_put() - store @value under @key, replacing (and freeing) an older
 * value. Returns 0 or -ENOMEM (the map is unchanged then).
 */
int map_put(struct map *m, const char *key, void *value);
/*
 * map_intern() - the map's own copy of @key, added (with a NULL value) if
 * absent: a stable pointer for as long as the entry lives. NULL on -ENOMEM.
 */
const char *map_intern(struct map *m, const char *key);
/* Remove @key (freeing its value); 0 or -ENOENT. */
int map_del(struct map *m, const char *key);
/* Remove every entry. */
void map_clear(struct map *m);
size_t map_count(const struct map *m);

/* FNV-1a, 64 bits: the hash the collector's caches use. */
uint64_t map_hash(const void *data, size_t len, uint64_t seed);

#endif
