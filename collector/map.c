// SPDX-License-Identifier: MIT
/*
 * String-keyed open-addressing hash map: see map.h. Deletion uses backward
 * shifting (no tombstones), so lookups stay short however the map churns.
 */
#include "map.h"
#include "fnv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct map_ent {
	char *key; /* NULL: empty slot */
	uint64_t hash;
	void *value;
};

struct map {
	struct map_ent *tab;
	size_t cap; /* a power of two */
	size_t n;
	map_free_fn free_value;
};

#define MAP_MIN_CAP 16

uint64_t map_hash(const void *data, size_t len, uint64_t seed)
{
	uint64_t h = fnv1a_bytes(FNV1A_BASIS ^ seed, data, len);

	/* Final avalanche (from MurmurHash3's fmix64) for the low bits. */
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

int map_new(map_free_fn free_value, struct map **out)
{
	struct map *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	m->tab = calloc(MAP_MIN_CAP, sizeof(*m->tab));
	if (!m->tab) {
		free(m);
		return -ENOMEM;
	}
	m->cap = MAP_MIN_CAP;
	m->free_value = free_value;
	*out = m;
	return 0;
}

static void map_release(struct map *m, struct map_ent *e)
{
	if (m->free_value && e->value)
		m->free_value(e->value);
	free(e->key);
	e->key = NULL;
	e->value = NULL;
}

void map_clear(struct map *m)
{
	for (size_t i = 0; i < m->cap; i++)
		if (m->tab[i].key)
			map_release(m, &m->tab[i]);
	m->n = 0;
}

void map_free(struct map *m)
{
	if (!m)
		return;
	map_clear(m);
	free(m->tab);
	free(m);
}

size_t map_count(const struct map *m)
{
	return m->n;
}

static struct map_ent *map_find(const struct map *m, const char *key,
				uint64_t h)
{
	size_t mask = m->cap - 1;

	for (size_t i = h & mask;; i = (i + 1) & mask) {
		struct map_ent *e = &m->tab[i];

		if (!e->key || (e->hash == h && !strcmp(e->key, key)))
			return e;
	}
}

void *map_get(const struct map *m, const char *key)
{
	struct map_ent *e = map_find(m, key, map_hash(key, strlen(key), 0));

	return e->key ? e->value : NULL;
}

static int map_grow(struct map *m)
{
	struct map_ent *old = m->tab;
	size_t old_cap = m->cap;
	struct map_ent *tab = calloc(old_cap * 2, sizeof(*tab));

	if (!tab)
		return -ENOMEM;
	m->tab = tab;
	m->cap = old_cap * 2;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].key)
			*map_find(m, old[i].key, old[i].hash) = old[i];
	free(old);
	return 0;
}

/* The slot for @key, created empty-valued if absent; NULL on -ENOMEM. */
static struct map_ent *map_slot(struct map *m, const char *key)
{
	uint64_t h = map_hash(key, strlen(key), 0);
	struct map_ent *e = map_find(m, key, h);

	if (e->key)
		return e;
	if ((m->n + 1) * 4 > m->cap * 3) {
		if (map_grow(m))
			return NULL;
		e = map_find(m, key, h);
	}
	e->key = strdup(key);
	if (!e->key)
		return NULL;
	e->hash = h;
	e->value = NULL;
	m->n++;
	return e;
}

int map_put(struct map *m, const char *key, void *value)
{
	struct map_ent *e = map_slot(m, key);

	if (!e)
		return -ENOMEM;
	if (e->value && e->value != value && m->free_value)
		m->free_value(e->value);
	e->value = value;
	return 0;
}

const char *map_intern(struct map *m, const char *key)
{
	struct map_ent *e = map_slot(m, key);

	return e ? e->key : NULL;
}

int map_del(struct map *m, const char *key)
{
	size_t mask = m->cap - 1;
	struct map_ent *e = map_find(m, key, map_hash(key, strlen(key), 0));
	size_t i, j;

	if (!e->key)
		return -ENOENT;
	map_release(m, e);
	m->n--;
	/* Backward shift: pull later members of the cluster into the hole. */
	i = (size_t)(e - m->tab);
	for (j = (i + 1) & mask; m->tab[j].key; j = (j + 1) & mask) {
		size_t home = m->tab[j].hash & mask;

		/* Move j to i unless its home lies cyclically in (i, j]. */
		if ((j > i && (home <= i || home > j)) ||
		    (j < i && (home <= i && home > j))) {
			m->tab[i] = m->tab[j];
			m->tab[j].key = NULL;
			m->tab[j].value = NULL;
			i = j;
		}
	}
	return 0;
}
