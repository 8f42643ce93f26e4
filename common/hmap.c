// SPDX-License-Identifier: MIT
/* Open-addressing hash table over caller-defined entries: see hmap.h. */
#include "hmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define HMAP_MIN_CAP 16

/* A stored hash is never 0: 0 marks an empty slot. */
static uint64_t hmap_key(uint64_t hash)
{
	return hash ? hash : 1;
}

static void *hmap_ent(const struct hmap *m, size_t i)
{
	return m->ent + i * m->elem;
}

void hmap_init(struct hmap *m, size_t elem)
{
	memset(m, 0, sizeof(*m));
	m->elem = elem;
}

void hmap_free(struct hmap *m)
{
	if (!m)
		return;
	free(m->hash);
	m->hash = NULL;
	m->ent = NULL;
	m->cap = m->n = 0;
}

void hmap_clear(struct hmap *m)
{
	if (m->cap)
		memset(m->hash, 0, m->cap * sizeof(*m->hash));
	m->n = 0;
}

/* The slot of the entry of @h matching @key, or the empty one it goes to. */
static size_t hmap_slot(const struct hmap *m, uint64_t h, hmap_eq_fn eq,
			const void *key)
{
	size_t mask = m->cap - 1, i;

	for (i = h & mask; m->hash[i]; i = (i + 1) & mask)
		if (m->hash[i] == h && (!eq || eq(hmap_ent(m, i), key)))
			break;
	return i;
}

/* The first empty slot of @h's cluster. */
static size_t hmap_hole(const struct hmap *m, uint64_t h)
{
	size_t mask = m->cap - 1, i;

	for (i = h & mask; m->hash[i]; i = (i + 1) & mask)
		;
	return i;
}

void *hmap_find(const struct hmap *m, uint64_t hash, hmap_eq_fn eq,
		const void *key)
{
	size_t i;

	if (!m->n)
		return NULL;
	i = hmap_slot(m, hmap_key(hash), eq, key);
	return m->hash[i] ? hmap_ent(m, i) : NULL;
}

static int hmap_grow(struct hmap *m)
{
	struct hmap old = *m;
	size_t cap = m->cap ? m->cap * 2 : HMAP_MIN_CAP;
	void *p;

	if (cap > SIZE_MAX / 2 / (sizeof(*m->hash) + m->elem))
		return -ENOMEM;
	p = calloc(cap, sizeof(*m->hash) + m->elem);
	if (!p)
		return -ENOMEM;
	m->hash = p;
	m->ent = (unsigned char *)p + cap * sizeof(*m->hash);
	m->cap = cap;
	for (size_t i = 0; i < old.cap; i++) {
		size_t j;

		if (!old.hash[i])
			continue;
		j = hmap_hole(m, old.hash[i]);
		m->hash[j] = old.hash[i];
		memcpy(hmap_ent(m, j), hmap_ent(&old, i), m->elem);
	}
	free(old.hash);
	return 0;
}

void *hmap_add(struct hmap *m, uint64_t hash)
{
	uint64_t h = hmap_key(hash);
	size_t i;

	if ((m->n + 1) * 2 > m->cap && hmap_grow(m))
		return NULL;
	i = hmap_hole(m, h);
	m->hash[i] = h;
	memset(hmap_ent(m, i), 0, m->elem);
	m->n++;
	return hmap_ent(m, i);
}

void *hmap_put(struct hmap *m, uint64_t hash, hmap_eq_fn eq, const void *key,
	       int *added)
{
	void *e = hmap_find(m, hash, eq, key);

	*added = !e;
	return e ? e : hmap_add(m, hash);
}

void hmap_del(struct hmap *m, void *ent)
{
	size_t mask = m->cap - 1;
	size_t i = (size_t)((unsigned char *)ent - m->ent) / m->elem;

	m->hash[i] = 0;
	m->n--;
	/* Backward shift: pull later members of the cluster into the hole. */
	for (size_t j = (i + 1) & mask; m->hash[j]; j = (j + 1) & mask) {
		size_t home = m->hash[j] & mask;

		/* j stays unless its home lies cyclically outside (i, j]. */
		if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
			continue;
		m->hash[i] = m->hash[j];
		memcpy(hmap_ent(m, i), hmap_ent(m, j), m->elem);
		m->hash[j] = 0;
		i = j;
	}
}

void *hmap_next(const struct hmap *m, size_t *i)
{
	for (; *i < m->cap; (*i)++)
		if (m->hash[*i])
			return hmap_ent(m, (*i)++);
	return NULL;
}
