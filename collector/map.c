// SPDX-License-Identifier: MIT
/*
 * String-keyed hash map on common/hmap.h (entries: the key's copy and the
 * value): see map.h.
 */
#include "map.h"
#include "fnv.h"
#include "hmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct map_ent {
	char *key;
	void *value;
};

struct map {
	struct hmap tab; /* of struct map_ent */
	map_free_fn free_value;
};

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
	hmap_init(&m->tab, sizeof(struct map_ent));
	m->free_value = free_value;
	*out = m;
	return 0;
}

static void map_release(struct map *m, struct map_ent *e)
{
	if (m->free_value && e->value)
		m->free_value(e->value);
	free(e->key);
}

void map_clear(struct map *m)
{
	struct map_ent *e;
	size_t i = 0;

	while ((e = hmap_next(&m->tab, &i)))
		map_release(m, e);
	hmap_clear(&m->tab);
}

void map_free(struct map *m)
{
	if (!m)
		return;
	map_clear(m);
	hmap_free(&m->tab);
	free(m);
}

size_t map_count(const struct map *m)
{
	return m->tab.n;
}

static int map_eq(const void *ent, const void *key)
{
	return !strcmp(((const struct map_ent *)ent)->key, key);
}

static struct map_ent *map_find(const struct map *m, const char *key)
{
	return hmap_find(&m->tab, map_hash(key, strlen(key), 0), map_eq, key);
}

void *map_get(const struct map *m, const char *key)
{
	struct map_ent *e = map_find(m, key);

	return e ? e->value : NULL;
}

/* The entry of @key, created empty-valued if absent; NULL on -ENOMEM. */
static struct map_ent *map_slot(struct map *m, const char *key)
{
	uint64_t h = map_hash(key, strlen(key), 0);
	int added;
	struct map_ent *e = hmap_put(&m->tab, h, map_eq, key, &added);
	char *copy;

	if (!e || !added)
		return e;
	copy = strdup(key);
	if (!copy) {
		hmap_del(&m->tab, e);
		return NULL;
	}
	e->key = copy;
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
	struct map_ent *e = map_find(m, key);

	if (!e)
		return -ENOENT;
	map_release(m, e);
	hmap_del(&m->tab, e);
	return 0;
}
