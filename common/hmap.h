/* SPDX-License-Identifier: MIT */
/*
 * One hash table (issue 18: about ten hand-written ones before): open
 * addressing with linear probing over fixed-size entries the caller
 * defines (a key, a value, or just an index into the caller's own array),
 * each slot keeping the caller's 64-bit hash beside its entry, so the
 * table grows and deletes (backward shift, no tombstones) without asking
 * the caller anything. The caller hashes (fnv.h, or its own mix) and says
 * when an entry matches a key through an equality callback; what an
 * entry points to is the caller's to free. At most half full: doubles
 * from 16 slots. Not thread-safe.
 */
#ifndef IBPULSE_HMAP_H
#define IBPULSE_HMAP_H

#include <stddef.h>
#include <stdint.h>

struct hmap {
	uint64_t *hash; /* per slot, 0 empty; the entries follow in one block */
	unsigned char *ent;
	size_t cap; /* slots, a power of two (0 before the first add) */
	size_t n;
	size_t elem; /* bytes per entry */
};

/* An empty table of @type entries, for a static initializer. */
#define HMAP_INIT(type)                                                        \
	{                                                                      \
		.elem = sizeof(type)                                           \
	}

/*
 * 1 when entry @ent matches @key (whatever the caller looks up with). A
 * NULL callback: equal hashes are equal keys (a set of hashes; the table
 * keeps hash 0 as 1).
 */
typedef int (*hmap_eq_fn)(const void *ent, const void *key);

/* An empty table of @elem-byte entries; allocates nothing. */
void hmap_init(struct hmap *m, size_t elem);
/* Free the slots (not what the entries point to); the table is empty. */
void hmap_free(struct hmap *m);
/* Remove every entry, keeping the slots. */
void hmap_clear(struct hmap *m);

/*
 * hmap_find() - the first entry of @hash that @eq says matches @key, or
 * NULL. Entries of other hashes are not passed to @eq.
 */
void *hmap_find(const struct hmap *m, uint64_t hash, hmap_eq_fn eq,
		const void *key);
/*
 * hmap_add() - a new zeroed entry under @hash, which the caller fills
 * (with no lookup: the caller knows the key is absent, or keeps several
 * entries of one key). NULL on -ENOMEM, the table as it was. Adding may
 * move the entries: a pointer to one lasts until the next add or delete.
 */
void *hmap_add(struct hmap *m, uint64_t hash);
/*
 * hmap_put() - the entry of @hash matching @key (*@added 0), or a new
 * zeroed one there (*@added 1); NULL on -ENOMEM, the table as it was.
 */
void *hmap_put(struct hmap *m, uint64_t hash, hmap_eq_fn eq, const void *key,
	       int *added);
/*
 * hmap_del() - remove entry @ent (a pointer this table gave); a later
 * entry of its cluster may move into its slot.
 */
void hmap_del(struct hmap *m, void *ent);

/*
 * hmap_next() - walk: the entry in the first used slot from *@i on (*@i
 * then just past it), or NULL at the end; start with *@i = 0. To delete
 * while walking, hmap_del() the entry just returned and step *@i back by
 * one: an entry may have moved into that slot.
 */
void *hmap_next(const struct hmap *m, size_t *i);

#endif
