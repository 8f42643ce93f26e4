// SPDX-License-Identifier: MIT
/*
 * The gzip body's piece deflate (exporter/zpiece.h) read back by zlib's
 * inflate: empty texts, random bytes (every byte value, runs longer than a
 * match, repeats at the window's far end), dictionaries longer than the
 * window, pieces chained into one stream as the block cache chains them,
 * and lines of a /metrics body, whose pieces must stay about as small as
 * zlib's own (level 1, a sync flush each, the same dictionaries).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <zlib.h>

#include "zpiece.h"

static uint64_t seed = 88172645463325252ULL;

static unsigned rnd(unsigned n)
{
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return (unsigned)(seed % n);
}

/* Raw inflate of @in primed with @dict; the text, *@out_len bytes. */
static unsigned char *inflate_piece(const void *dict, size_t dict_len,
				    const unsigned char *in, size_t len,
				    size_t cap, size_t *out_len)
{
	unsigned char *out = malloc(cap + 1);
	z_stream z = {0};
	int zr;

	assert_non_null(out);
	assert_int_equal(inflateInit2(&z, -15), Z_OK);
	if (dict_len > ZPIECE_WINDOW) {
		dict = (const char *)dict + dict_len - ZPIECE_WINDOW;
		dict_len = ZPIECE_WINDOW;
	}
	if (dict_len)
		assert_int_equal(inflateSetDictionary(&z, dict, (uInt)dict_len),
				 Z_OK);
	z.next_in = (Bytef *)(uintptr_t)in;
	z.avail_in = (uInt)len;
	z.next_out = out;
	z.avail_out = (uInt)cap + 1;
	zr = inflate(&z, Z_SYNC_FLUSH);
	assert_true(zr == Z_OK || zr == Z_BUF_ERROR || zr == Z_STREAM_END);
	assert_int_equal(z.avail_in, 0); /* every byte read, none left */
	*out_len = cap + 1 - z.avail_out;
	inflateEnd(&z);
	return out;
}

/* One piece round trip; returns its size. */
static size_t round_trip(struct zpiece *zp, const void *dict, size_t dict_len,
			 const void *text, size_t len)
{
	size_t bound = zpiece_bound(len), n, got;
	unsigned char *out = malloc(bound + 64), *back;

	assert_non_null(out);
	memset(out, 0xa5, bound + 64);
	n = zpiece_write(zp, dict, dict_len, text, len, out);
	assert_true(n > 0 && n <= bound);
	for (size_t i = n; i < bound + 64; i++) /* wrote nothing past it */
		assert_int_equal(out[i], 0xa5);
	assert_memory_equal(out + n - 4, "\x00\x00\xff\xff", 4);
	back = inflate_piece(dict, dict_len, out, n, len, &got);
	assert_int_equal(got, len);
	if (len)
		assert_memory_equal(back, text, len);
	free(back);
	free(out);
	return n;
}

static void test_empty(void **state)
{
	struct zpiece zp;

	(void)state;
	zpiece_init(&zp);
	round_trip(&zp, NULL, 0, "", 0);
	round_trip(&zp, "dictionary", 10, "", 0);
	round_trip(&zp, NULL, 0, "a", 1);
	round_trip(&zp, "abcabc", 6, "abc", 3);
	round_trip(&zp, "abcd", 4, "abcdabcd", 8);
	zpiece_free(&zp);
}

static void fill(unsigned char *p, size_t n, unsigned kind)
{
	for (size_t i = 0; i < n; i++) {
		if (kind == 0) /* every byte value */
			p[i] = (unsigned char)rnd(256);
		else if (kind == 1) /* few symbols: many short matches */
			p[i] = (unsigned char)("ab\n\xff"[rnd(4)]);
		else if (kind == 2) /* runs: overlapping and longest matches */
			p[i] = i && rnd(600) ? p[i - 1]
					     : (unsigned char)rnd(256);
		else /* text copied from far back */
			p[i] = i > 32768 && rnd(8) ? p[i - 32768 + rnd(3)]
						   : (unsigned char)rnd(96);
	}
}

static void test_random(void **state)
{
	struct zpiece zp;
	static const size_t lens[] = {1,   3,	4,    5,     257,
				      258, 259, 1000, 40000, 100000};
	unsigned char *dict = malloc(70000), *text = malloc(100000);

	(void)state;
	assert_non_null(dict);
	assert_non_null(text);
	zpiece_init(&zp);
	for (unsigned round = 0; round < 200; round++) {
		size_t len = lens[rnd(10)];
		size_t dict_len = rnd(3) ? rnd(40000) : 70000;

		fill(dict, dict_len, rnd(4));
		if (rnd(2) && dict_len >= len) /* the text repeats the dict */
			memcpy(text, dict + dict_len - len, len);
		else
			fill(text, len, rnd(4));
		if (len > 8 && rnd(2)) /* a change in the middle */
			text[len / 2] ^= 0x20;
		round_trip(&zp, dict, dict_len, text, len);
	}
	zpiece_free(&zp);
	free(dict);
	free(text);
}

/* Lines of one family of a /metrics body: host @h's segment. */
static size_t segment(char *out, size_t cap, unsigned h, unsigned fam)
{
	size_t n = 0;

	for (unsigned port = 1; port <= 2; port++)
		n += (size_t)snprintf(
			out + n, cap - n,
			"ibpulse_port_counter_%u_total{host=\"node%05u\","
			"device=\"mlx5_%u\",port=\"%u\"} %llu\n",
			fam, h, port - 1, port,
			(unsigned long long)rnd(1u << 31) * rnd(1u << 20));
	return n;
}

/*
 * A family as the block cache gzips it: each host's segment primed with
 * the one before. Its pieces joined, then a final empty block, must be
 * one raw deflate stream of the whole text; and no more than a fifth
 * larger than zlib's pieces.
 */
static void test_chain(void **state)
{
	enum { HOSTS = 400, SEG = 512 };
	struct zpiece zp;
	char *text = malloc((size_t)HOSTS * SEG);
	unsigned char *stream = malloc((size_t)HOSTS * SEG * 2), *back;
	unsigned char *zout = malloc(SEG * 2);
	size_t off[HOSTS + 1], n = 0, zn = 0, got;
	z_stream z = {0};

	(void)state;
	assert_non_null(text);
	assert_non_null(stream);
	assert_non_null(zout);
	zpiece_init(&zp);
	assert_int_equal(
		deflateInit2(&z, 1, Z_DEFLATED, -15, 1, Z_DEFAULT_STRATEGY),
		Z_OK);
	off[0] = 0;
	for (unsigned h = 0; h < HOSTS; h++)
		off[h + 1] = off[h] + segment(text + off[h], SEG, h, 7);
	for (unsigned h = 0; h < HOSTS; h++) {
		const char *dict = h ? text + off[h - 1] : NULL;
		size_t dict_len = h ? off[h] - off[h - 1] : 0;

		n += zpiece_write(&zp, dict, dict_len, text + off[h],
				  off[h + 1] - off[h], stream + n);
		assert_int_equal(deflateReset(&z), Z_OK);
		if (dict_len)
			assert_int_equal(
				deflateSetDictionary(&z, (const Bytef *)dict,
						     (uInt)dict_len),
				Z_OK);
		z.next_in = (Bytef *)text + off[h];
		z.avail_in = (uInt)(off[h + 1] - off[h]);
		z.next_out = zout;
		z.avail_out = SEG * 2;
		assert_int_equal(deflate(&z, Z_SYNC_FLUSH), Z_OK);
		zn += SEG * 2 - z.avail_out;
	}
	memcpy(stream + n, "\x03\x00", 2); /* a final empty fixed block */
	back = inflate_piece(NULL, 0, stream, n + 2, off[HOSTS], &got);
	assert_int_equal(got, off[HOSTS]);
	assert_memory_equal(back, text, got);
	print_message("%zu bytes of text: %zu in pieces, zlib's %zu\n",
		      off[HOSTS], n, zn);
	assert_true(n * 5 <= zn * 6);
	deflateEnd(&z);
	zpiece_free(&zp);
	free(back);
	free(zout);
	free(stream);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_chain),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
