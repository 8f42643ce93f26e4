// SPDX-License-Identifier: MIT
/*
 * Unit tests for the SubnGet(LinearForwardingTable) codec
 * (probe/fabric/smp.c) against byte fixtures written from the InfiniBand
 * Architecture's layouts (the common MAD header, the SMP data area at
 * byte 64): the request on the wire, a response's 64 ports, and the
 * responses refused (another class, attribute or block; a busy or
 * unsupported status).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "smp.h"

static void put_be(uint8_t *p, uint64_t v, unsigned bytes)
{
	for (unsigned i = 0; i < bytes; i++)
		p[i] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
}

static void test_encode(void **state)
{
	uint8_t m[SMP_MAD_SIZE], want[SMP_MAD_SIZE] = {0};

	(void)state;
	memset(m, 0xee, sizeof(m));
	smp_encode_lft_get(m, 3, 0x12345678u);
	want[0] = 1;	/* BaseVersion */
	want[1] = 0x01; /* MgmtClass: SubnMgt, LID routed */
	want[2] = 1;	/* ClassVersion */
	want[3] = 0x01; /* Method: Get */
	put_be(want + 8, 0x12345678u, 8);
	put_be(want + 16, 0x0019, 2); /* LinearForwardingTable */
	put_be(want + 20, 3, 4);      /* the block */
	assert_memory_equal(m, want, sizeof(want));
	smp_encode_lft_get(m, 767, 1); /* the last block of unicast LIDs */
	assert_int_equal(m[22] << 8 | m[23], 767);
}

/* A SubnGetResp of block @block with @status, ports 10 + i. */
static void response(uint8_t *m, unsigned block, unsigned status)
{
	memset(m, 0, SMP_MAD_SIZE);
	m[0] = 1;
	m[1] = 0x01;
	m[2] = 1;
	m[3] = 0x81; /* R=1, Get: GetResp */
	put_be(m + 4, status, 2);
	put_be(m + 16, 0x0019, 2);
	put_be(m + 20, block, 4);
	for (unsigned i = 0; i < SMP_LFT_BLOCK; i++)
		m[64 + i] = (uint8_t)(10 + i);
	m[64 + 63] = 255; /* no entry */
}

static void test_decode(void **state)
{
	uint8_t m[SMP_MAD_SIZE], ports[SMP_LFT_BLOCK];
	unsigned status;

	(void)state;
	response(m, 2, 0);
	assert_int_equal(smp_check_lft(m, 2, &status), 0);
	assert_int_equal(status, 0);
	memset(ports, 0, sizeof(ports));
	smp_decode_lft(m, ports);
	assert_int_equal(ports[0], 10);
	assert_int_equal(ports[62], 72);
	assert_int_equal(ports[63], 255);
}

static void test_refused(void **state)
{
	uint8_t m[SMP_MAD_SIZE];
	unsigned status;

	(void)state;
	response(m, 2, 0);
	assert_int_equal(smp_check_lft(m, 3, &status), -EPROTO); /* block */
	m[1] = 0x04;
	assert_int_equal(smp_check_lft(m, 2, &status), -EPROTO); /* class */
	response(m, 2, 0);
	m[17] = 0x11; /* NodeInfo */
	assert_int_equal(smp_check_lft(m, 2, &status), -EPROTO);
	response(m, 2, 0);
	m[3] = 0x01; /* a request, not a response */
	assert_int_equal(smp_check_lft(m, 2, &status), -EPROTO);
	response(m, 2, 0x0001);
	assert_int_equal(smp_check_lft(m, 2, &status), -EBUSY);
	response(m, 2, 0x000c); /* attribute or modifier not supported */
	assert_int_equal(smp_check_lft(m, 2, &status), -EOPNOTSUPP);
	assert_int_equal(status, 0x000c);
	response(m, 2, 0x001c); /* invalid attribute value */
	assert_int_equal(smp_check_lft(m, 2, &status), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encode),
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
