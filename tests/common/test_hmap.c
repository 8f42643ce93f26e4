// SPDX-License-Identifier: MIT
/* Unit tests for the hash table (common/hmap.c): entries found after many
 * doublings, every key colliding under a bad hash, deletion (backward
 * shift) at random and while walking, a set of hashes, and an add the
 * allocator refuses leaving the table as it was. Also fnv1a_words(), the
 * exporter's identity of a text: every bit of every byte counts. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fnv.h"
#include "hmap.h"

struct ent {
	uint32_t key;
	uint32_t value;
};

static int ent_eq(const void *ent, const void *key)
{
	return ((const struct ent *)ent)->key == *(const uint32_t *)key;
}

static uint64_t good_hash(uint32_t k)
{
	return fnv1a_u64(FNV1A_BASIS, k);
}

/* Everything in one cluster: every lookup walks past the other keys. */
static uint64_t bad_hash(uint32_t k)
{
	return (k & 3) << 8; /* 0 among them: stored as 1 */
}

static struct ent *find(const struct hmap *m, uint64_t (*hash)(uint32_t),
			uint32_t k)
{
	return hmap_find(m, hash(k), ent_eq, &k);
}

static void fill(struct hmap *m, uint64_t (*hash)(uint32_t), uint32_t n)
{
	for (uint32_t k = 0; k < n; k++) {
		int added = 0;
		struct ent *e = hmap_put(m, hash(k), ent_eq, &k, &added);

		assert_non_null(e);
		assert_int_equal(added, 1);
		assert_int_equal(e->key, 0); /* zeroed */
		e->key = k;
		e->value = k * 3;
	}
	assert_int_equal(m->n, n);
}

static void check(const struct hmap *m, uint64_t (*hash)(uint32_t), uint32_t n,
		  int (*present)(uint32_t))
{
	for (uint32_t k = 0; k < n + 10; k++) {
		const struct ent *e = find(m, hash, k);

		if (k < n && present(k)) {
			assert_non_null(e);
			assert_int_equal(e->value, k * 3);
		} else {
			assert_null(e);
		}
	}
}

static int all(uint32_t k)
{
	(void)k;
	return 1;
}

static int odd(uint32_t k)
{
	return k & 1;
}

static void test_grow(void **state)
{
	struct hmap m = HMAP_INIT(struct ent);
	struct ent *e;
	uint32_t k = 7;
	int added;

	(void)state;
	assert_null(find(&m, good_hash, 1)); /* empty: no slots yet */
	fill(&m, good_hash, 100000);
	assert_int_equal(m.cap, 262144); /* 16 doubled 14 times, half full */
	check(&m, good_hash, 100000, all);
	/* put finds what is there */
	e = hmap_put(&m, good_hash(k), ent_eq, &k, &added);
	assert_int_equal(added, 0);
	assert_int_equal(e->value, 21);
	hmap_clear(&m);
	assert_int_equal(m.n, 0);
	check(&m, good_hash, 0, all);
	hmap_free(&m);
	hmap_free(&m);
	hmap_free(NULL);
}

static void test_collide(void **state)
{
	struct hmap m;

	(void)state;
	hmap_init(&m, sizeof(struct ent));
	fill(&m, bad_hash, 2000);
	check(&m, bad_hash, 2000, all);
	hmap_free(&m);
}

/* Delete the even keys, in an order unlike the insertion order. */
static void del_even(struct hmap *m, uint64_t (*hash)(uint32_t), uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		uint32_t k = (i * 7919) % n;
		struct ent *e = find(m, hash, k);

		if (k & 1)
			continue;
		assert_non_null(e);
		hmap_del(m, e);
		assert_null(find(m, hash, k));
	}
}

static void test_del(void **state)
{
	uint64_t (*hash[2])(uint32_t) = {good_hash, bad_hash};

	(void)state;
	for (int h = 0; h < 2; h++) {
		struct hmap m = HMAP_INIT(struct ent);

		fill(&m, hash[h], 3000);
		del_even(&m, hash[h], 3000);
		assert_int_equal(m.n, 1500);
		check(&m, hash[h], 3000, odd);
		hmap_free(&m);
	}
}

static void test_walk_del(void **state)
{
	struct hmap m = HMAP_INIT(struct ent);
	size_t i = 0, seen = 0;
	struct ent *e;

	(void)state;
	fill(&m, bad_hash, 500);
	while ((e = hmap_next(&m, &i))) {
		seen++;
		if (!(e->key & 1)) {
			hmap_del(&m, e);
			i--;
		}
	}
	assert_true(seen >= 500);
	assert_int_equal(m.n, 250);
	check(&m, bad_hash, 500, odd);
	i = seen = 0;
	while (hmap_next(&m, &i))
		seen++;
	assert_int_equal(seen, 250);
	hmap_free(&m);
}

static void test_hash_set(void **state)
{
	struct hmap m = HMAP_INIT(char);
	int added;

	(void)state;
	assert_non_null(hmap_put(&m, 42, NULL, NULL, &added));
	assert_int_equal(added, 1);
	assert_non_null(hmap_put(&m, 42, NULL, NULL, &added));
	assert_int_equal(added, 0);
	assert_non_null(hmap_put(&m, 0, NULL, NULL, &added));
	assert_int_equal(added, 1);
	assert_non_null(hmap_put(&m, 1, NULL, NULL, &added));
	assert_int_equal(added, 0); /* 0 is kept as 1 */
	assert_null(hmap_find(&m, 43, NULL, NULL));
	assert_int_equal(m.n, 2);
	hmap_free(&m);
}

/* Entries so large that the next doubling is refused (before calloc(): a
 * sanitizer build aborts on such a request). */
static void test_refused(void **state)
{
	struct hmap m;
	uint32_t k;

	(void)state;
	hmap_init(&m, SIZE_MAX / 8);
	assert_null(hmap_add(&m, 1));
	assert_int_equal(m.cap, 0);
	hmap_init(&m, sizeof(struct ent));
	fill(&m, good_hash, 8);
	m.elem = SIZE_MAX / 8; /* only the next doubling sees it */
	k = 8;
	assert_null(hmap_add(&m, good_hash(k)));
	m.elem = sizeof(struct ent);
	assert_int_equal(m.cap, 16);
	assert_int_equal(m.n, 8);
	check(&m, good_hash, 8, all);
	hmap_free(&m);
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * fnv1a_words(): a bit flipped anywhere in a text of 0 to 40 bytes (words
 * and tail) changes its hash, so does its length; 100,000 texts alike but
 * for a number (masked sample lines) have 100,000 hashes.
 */
static void test_words_hash(void **state)
{
	enum { N = 100000 };
	unsigned char t[40];
	uint64_t *h = malloc(N * sizeof(*h));
	char line[96];

	(void)state;
	for (size_t i = 0; i < sizeof(t); i++)
		t[i] = (unsigned char)(i * 37 + 11);
	for (size_t len = 0; len <= sizeof(t); len++) {
		uint64_t base = fnv1a_words(FNV1A_BASIS, t, len);

		if (len)
			assert_true(base !=
				    fnv1a_words(FNV1A_BASIS, t, len - 1));
		for (size_t p = 0; p < len; p++)
			for (int bit = 0; bit < 8; bit++) {
				t[p] ^= (unsigned char)(1u << bit);
				assert_true(base !=
					    fnv1a_words(FNV1A_BASIS, t, len));
				t[p] ^= (unsigned char)(1u << bit);
			}
	}
	assert_non_null(h);
	for (int i = 0; i < N; i++) {
		int n = snprintf(
			line, sizeof(line),
			"ibpulse_port_rcv_data_bytes_total{host=\"node-"
			"%05d\",device=\"mlx5_0\",port=\"1\"} ##\n",
			i);

		h[i] = fnv1a_words(FNV1A_BASIS, line, (size_t)n);
	}
	qsort(h, N, sizeof(*h), u64_cmp);
	for (int i = 1; i < N; i++)
		assert_true(h[i] != h[i - 1]);
	free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grow),
		cmocka_unit_test(test_collide),
		cmocka_unit_test(test_del),
		cmocka_unit_test(test_walk_del),
		cmocka_unit_test(test_hash_set),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_words_hash),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
