// SPDX-License-Identifier: MIT
/*
 * crcmul_combine() (exporter/crcmul.h) against zlib: the CRC-32 of two
 * random texts of random lengths (0 to 70,000 bytes, one and both empty)
 * combined equals zlib's crc32_combine_op() and the CRC of the two texts
 * read as one; and a million random (crc, crc, op) triples give zlib's
 * result. On x86-64 with PCLMULQDQ the carry-less path is the one tested.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>
#include <zlib.h>

#include "crcmul.h"

static uint64_t rng = 0x9E3779B97F4A7C15ULL;

static uint32_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

static void test_texts(void **state)
{
	enum { MAX = 70000 };
	unsigned char *t = malloc(2 * MAX);

	(void)state;
	assert_non_null(t);
	for (size_t i = 0; i < 2 * MAX; i++)
		t[i] = (unsigned char)next();
	for (int round = 0; round < 400; round++) {
		size_t a = round == 0 ? 0 : next() % MAX;
		size_t b = round < 2 ? 0 : next() % MAX;
		uint32_t ca = (uint32_t)crc32(0, t, (uInt)a);
		uint32_t cb = (uint32_t)crc32(0, t + a, (uInt)b);
		uint32_t op = (uint32_t)crc32_combine_gen64((z_off64_t)b);

		assert_int_equal(crcmul_combine(ca, cb, op),
				 (uint32_t)crc32(0, t, (uInt)(a + b)));
		assert_int_equal(crcmul_combine(ca, cb, op),
				 (uint32_t)crc32_combine_op(ca, cb, op));
	}
	free(t);
}

static void test_random(void **state)
{
	(void)state;
	printf("carry-less: %s\n", crcmul_fast() ? "yes" : "no (zlib)");
	for (int i = 0; i < 1000000; i++) {
		uint32_t a = next() ^ (next() << 16),
			 b = next() ^ (next() << 16);
		uint32_t op = next() ^ (next() << 16);

		if ((uint32_t)crc32_combine_op(a, b, op) !=
		    crcmul_combine(a, b, op))
			fail_msg("crc %08x %08x op %08x: %08x, zlib %08x", a, b,
				 op, crcmul_combine(a, b, op),
				 (uint32_t)crc32_combine_op(a, b, op));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_texts),
		cmocka_unit_test(test_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
