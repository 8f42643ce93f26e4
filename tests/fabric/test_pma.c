// SPDX-License-Identifier: MIT
/*
 * Unit tests for the PerfMgt MAD codec (probe/fabric/pma.c) against byte
 * fixtures written from the InfiniBand Architecture's layouts (the MAD
 * header, ClassPortInfo, PortCounters, PortCountersExtended and the two
 * details attributes): what a Get looks like on the wire, what a response
 * decodes to, which fields the ClassPortInfo capabilities admit, where
 * narrow counters saturate, and that libibmad's field widths agree with
 * the table's and with common/counters.c's (one meaning of counters).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <infiniband/mad.h>

#include "counters.h"
#include "pma.h"

#define D 64 /* the attribute data starts here */

static void put_be(uint8_t *p, uint64_t v, unsigned bytes)
{
	for (unsigned i = 0; i < bytes; i++)
		p[i] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
}

/* A response header: GetResp of @attr with @status and @tid. */
static void resp_header(uint8_t *m, uint16_t attr, uint16_t status,
			uint64_t tid)
{
	memset(m, 0, PMA_MAD_SIZE);
	m[0] = 1;	    /* BaseVersion */
	m[1] = 0x04;	    /* MgmtClass: PerfMgt */
	m[2] = 1;	    /* ClassVersion */
	m[3] = 0x80 | 0x01; /* R=1, Method Get: GetResp (0x81) */
	put_be(m + 4, status, 2);
	put_be(m + 8, tid, 8);
	put_be(m + 16, attr, 2);
}

static void test_encode_get(void **state)
{
	uint8_t m[PMA_MAD_SIZE], want[PMA_MAD_SIZE] = {0};

	(void)state;
	memset(m, 0xee, sizeof(m));
	pma_encode_get(m, PMA_PC, 7, 0x12345678u);
	want[0] = 1, want[1] = 0x04, want[2] = 1, want[3] = 0x01;
	put_be(want + 8, 0x12345678u, 8);
	put_be(want + 16, 0x0012, 2);
	want[D + 1] = 7; /* PortSelect */
	assert_memory_equal(m, want, sizeof(want));

	pma_encode_get(m, PMA_PCE, 200, 0xabcdef01u);
	put_be(want + 8, 0xabcdef01u, 8);
	put_be(want + 16, 0x001d, 2);
	want[D + 1] = 200;
	assert_memory_equal(m, want, sizeof(want));
	assert_int_equal(pma_tid32(m), 0xabcdef01u);

	pma_encode_get(m, PMA_CPI, 9, 1);
	assert_int_equal(m[16] << 8 | m[17], 0x0001);
	assert_int_equal(m[D + 1], 0); /* no PortSelect in ClassPortInfo */

	pma_encode_get(m, PMA_RCV_ERR, 3, 1);
	assert_int_equal(m[16] << 8 | m[17], 0x0015);
	assert_int_equal(m[D + 1], 3);
	pma_encode_get(m, PMA_XMIT_DISC, 4, 1);
	assert_int_equal(m[16] << 8 | m[17], 0x0016);
	assert_int_equal(m[D + 1], 4);
}

static void test_encode_reset(void **state)
{
	uint8_t m[PMA_MAD_SIZE];

	(void)state;
	pma_encode_reset(m, PMA_PC, 5, 77);
	assert_int_equal(m[3], 0x02); /* Method Set */
	assert_int_equal(m[D + 1], 5);
	assert_int_equal(m[D + 2] << 8 | m[D + 3], 0x0fff); /* CounterSelect */
	for (int i = D + 4; i < PMA_MAD_SIZE; i++)
		assert_int_equal(m[i], 0); /* every counter field zero */
}

static void test_tid32(void **state)
{
	uint8_t m[PMA_MAD_SIZE];

	(void)state;
	/* the kernel owns the high 32 bits of the TransactionID */
	resp_header(m, 0x12, 0, 0xdeadbeef00c0ffeeull);
	assert_int_equal(pma_tid32(m), 0x00c0ffeeu);
}

static void test_check_response(void **state)
{
	uint8_t m[PMA_MAD_SIZE];
	unsigned st;

	(void)state;
	resp_header(m, 0x12, 0, 1);
	assert_int_equal(pma_check_response(m, PMA_PC, &st), 0);
	assert_int_equal(st, 0);
	/* the attribute asked for must be the one answered */
	assert_int_equal(pma_check_response(m, PMA_PCE, &st), -EPROTO);
	resp_header(m, 0x12, 0x0001, 1);
	assert_int_equal(pma_check_response(m, PMA_PC, &st), -EBUSY);
	assert_int_equal(st, 1);
	resp_header(m, 0x12, 0x0002, 1);
	assert_int_equal(pma_check_response(m, PMA_PC, &st), -EREMOTE);
	resp_header(m, 0x15, 3 << 2, 1); /* method/attribute unsupported */
	assert_int_equal(pma_check_response(m, PMA_RCV_ERR, &st), -EOPNOTSUPP);
	resp_header(m, 0x15, 7 << 2, 1); /* invalid attribute modifier */
	assert_int_equal(pma_check_response(m, PMA_RCV_ERR, &st), -EINVAL);
	resp_header(m, 0x12, 0, 1);
	m[3] = 0x01; /* a request, not a response */
	assert_int_equal(pma_check_response(m, PMA_PC, &st), -EPROTO);
	resp_header(m, 0x12, 0, 1);
	m[1] = 0x81; /* an SMP */
	assert_int_equal(pma_check_response(m, PMA_PC, &st), -EPROTO);
}

static void test_decode_cpi(void **state)
{
	uint8_t m[PMA_MAD_SIZE];
	struct pma_caps c;

	(void)state;
	resp_header(m, 0x01, 0, 1);
	m[D + 0] = 1, m[D + 1] = 1;
	put_be(m + D + 2, 0x1600, 2); /* ext NoIETF | ext | xmit wait */
	/* CapabilityMask2 is the top 27 bits, RespTimeValue the low 5 */
	put_be(m + D + 4, (0x2u << 5) | 0x12, 4);
	pma_decode_cpi(m, &c);
	assert_int_equal(c.cap_mask, 0x1600);
	assert_int_equal(c.cap_mask2, 0x2);
	assert_int_equal(c.resp_time, 0x12);
	assert_true(pma_has_ext(&c));
	assert_true(pma_has_ietf(&c));
	assert_true(pma_has_xmit_wait(&c));
	assert_true(pma_has_ext_xmit_wait(&c));
	c.cap_mask = PMA_CAP_EXT_WIDTH_NOIETF;
	c.cap_mask2 = 0;
	assert_true(pma_has_ext(&c));
	assert_false(pma_has_ietf(&c));
	assert_false(pma_has_xmit_wait(&c));
	assert_false(pma_has_ext_xmit_wait(&c));
}

/* A PortCounters response with a distinct value in every field. */
static void pc_fixture(uint8_t *m)
{
	uint8_t *d = m + D;

	resp_header(m, 0x12, 0, 1);
	d[1] = 3;		   /* PortSelect */
	put_be(d + 4, 42, 2);	   /* SymbolErrorCounter */
	d[6] = 5;		   /* LinkErrorRecoveryCounter */
	d[7] = 0xff;		   /* LinkDownedCounter: saturated */
	put_be(d + 8, 1000, 2);	   /* PortRcvErrors */
	put_be(d + 10, 11, 2);	   /* PortRcvRemotePhysicalErrors */
	put_be(d + 12, 12, 2);	   /* PortRcvSwitchRelayErrors */
	put_be(d + 14, 0xffff, 2); /* PortXmitDiscards: saturated */
	d[16] = 16;		   /* PortXmitConstraintErrors */
	d[17] = 17;		   /* PortRcvConstraintErrors */
	d[19] = 0xf << 4 | 0x3;	   /* LocalLinkIntegrity 15 (sat), Overrun 3 */
	put_be(d + 22, 22, 2);	   /* VL15Dropped */
	put_be(d + 24, 0xffffffff, 4); /* PortXmitData: saturated */
	put_be(d + 28, 28, 4);	       /* PortRcvData */
	put_be(d + 32, 32, 4);	       /* PortXmitPkts */
	put_be(d + 36, 36, 4);	       /* PortRcvPkts */
	put_be(d + 40, 40, 4);	       /* PortXmitWait */
}

#define BIT(c) (UINT64_C(1) << (c))

static void test_decode_pc(void **state)
{
	struct pma_caps basic = {0}, ext = {.cap_mask = PMA_CAP_EXT_WIDTH |
							PMA_CAP_XMIT_WAIT};
	struct pma_counters c = {0};
	uint8_t m[PMA_MAD_SIZE];

	(void)state;
	pc_fixture(m);
	pma_decode(m, PMA_PC, &basic, &c);
	assert_int_equal(c.v[FC_SYMBOL_ERROR], 42);
	assert_int_equal(c.v[FC_LINK_ERROR_RECOVERY], 5);
	assert_int_equal(c.v[FC_LINK_DOWNED], 255);
	assert_int_equal(c.v[FC_RCV_ERRORS], 1000);
	assert_int_equal(c.v[FC_RCV_REMOTE_PHYSICAL_ERRORS], 11);
	assert_int_equal(c.v[FC_RCV_SWITCH_RELAY_ERRORS], 12);
	assert_int_equal(c.v[FC_XMIT_DISCARDS], 0xffff);
	assert_int_equal(c.v[FC_XMIT_CONSTRAINT_ERRORS], 16);
	assert_int_equal(c.v[FC_RCV_CONSTRAINT_ERRORS], 17);
	assert_int_equal(c.v[FC_LOCAL_LINK_INTEGRITY_ERRORS], 15);
	assert_int_equal(c.v[FC_EXCESSIVE_BUFFER_OVERRUN_ERRORS], 3);
	assert_int_equal(c.v[FC_VL15_DROPPED], 22);
	/* no PortCountersExtended: the 32-bit data counters are the ones */
	assert_int_equal(c.v[FC_XMIT_DATA], 0xffffffffu);
	assert_int_equal(c.v[FC_RCV_DATA], 28);
	assert_int_equal(c.v[FC_XMIT_PACKETS], 32);
	assert_int_equal(c.v[FC_RCV_PACKETS], 36);
	/* no PortXmitWait without its capability bit */
	assert_false(c.have & BIT(FC_XMIT_WAIT));
	assert_false(c.have & BIT(FC_UNICAST_XMIT_PACKETS));
	assert_int_equal(c.sat, BIT(FC_LINK_DOWNED) | BIT(FC_XMIT_DISCARDS) |
					BIT(FC_LOCAL_LINK_INTEGRITY_ERRORS) |
					BIT(FC_XMIT_DATA));

	memset(&c, 0, sizeof(c));
	pma_decode(m, PMA_PC, &ext, &c);
	assert_int_equal(c.v[FC_XMIT_WAIT], 40);
	/* with the extended set the 32-bit data counters are not used */
	assert_false(c.have & (BIT(FC_XMIT_DATA) | BIT(FC_RCV_PACKETS)));
	assert_false(c.sat & BIT(FC_XMIT_DATA));
}

static void test_decode_pce(void **state)
{
	struct pma_caps ietf = {.cap_mask = PMA_CAP_EXT_WIDTH};
	struct pma_caps noietf = {.cap_mask = PMA_CAP_EXT_WIDTH_NOIETF};
	struct pma_caps wait2 = {.cap_mask = PMA_CAP_EXT_WIDTH,
				 .cap_mask2 = PMA_CAP2_ADDL_PORT_COUNTERS_EXT};
	struct pma_counters c = {0};
	uint8_t m[PMA_MAD_SIZE], *d = m + D;

	(void)state;
	resp_header(m, 0x1d, 0, 1);
	d[1] = 9;
	for (unsigned i = 0; i < 8; i++)
		put_be(d + 8 + 8 * i, 0x0100000000ull + i, 8);
	put_be(d + 8, UINT64_MAX, 8);
	put_be(d + 168, 123456789012ull, 8); /* PortXmitWait (64-bit set) */
	pma_decode(m, PMA_PCE, &ietf, &c);
	assert_true(c.v[FC_XMIT_DATA] == UINT64_MAX);
	assert_true(c.v[FC_RCV_DATA] == 0x0100000001ull);
	assert_true(c.v[FC_XMIT_PACKETS] == 0x0100000002ull);
	assert_true(c.v[FC_RCV_PACKETS] == 0x0100000003ull);
	assert_true(c.v[FC_UNICAST_XMIT_PACKETS] == 0x0100000004ull);
	assert_true(c.v[FC_UNICAST_RCV_PACKETS] == 0x0100000005ull);
	assert_true(c.v[FC_MULTICAST_XMIT_PACKETS] == 0x0100000006ull);
	assert_true(c.v[FC_MULTICAST_RCV_PACKETS] == 0x0100000007ull);
	/* 64-bit counters wrap, they are never "saturated" by width */
	assert_int_equal(c.sat, 0);
	assert_false(c.have & BIT(FC_XMIT_WAIT));

	memset(&c, 0, sizeof(c));
	pma_decode(m, PMA_PCE, &noietf, &c);
	assert_true(c.have & BIT(FC_RCV_PACKETS));
	assert_false(c.have & (BIT(FC_UNICAST_XMIT_PACKETS) |
			       BIT(FC_MULTICAST_RCV_PACKETS)));

	memset(&c, 0, sizeof(c));
	pma_decode(m, PMA_PCE, &wait2, &c);
	assert_true(c.v[FC_XMIT_WAIT] == 123456789012ull);
}

static void test_decode_details(void **state)
{
	struct pma_caps caps = {0};
	struct pma_counters c = {0};
	uint8_t m[PMA_MAD_SIZE], *d = m + D;

	(void)state;
	resp_header(m, 0x15, 0, 1);
	for (unsigned i = 0; i < 6; i++)
		put_be(d + 4 + 2 * i, 100 + i, 2);
	put_be(d + 4, 0xffff, 2);
	pma_decode(m, PMA_RCV_ERR, &caps, &c);
	assert_int_equal(c.v[FC_LOCAL_PHYSICAL_ERRORS], 0xffff);
	assert_int_equal(c.v[FC_MALFORMED_PACKET_ERRORS], 101);
	assert_int_equal(c.v[FC_BUFFER_OVERRUN_ERRORS], 102);
	assert_int_equal(c.v[FC_DLID_MAPPING_ERRORS], 103);
	assert_int_equal(c.v[FC_VL_MAPPING_ERRORS], 104);
	assert_int_equal(c.v[FC_LOOPING_ERRORS], 105);
	assert_int_equal(c.sat, BIT(FC_LOCAL_PHYSICAL_ERRORS));

	resp_header(m, 0x16, 0, 1);
	for (unsigned i = 0; i < 4; i++)
		put_be(d + 4 + 2 * i, 200 + i, 2);
	pma_decode(m, PMA_XMIT_DISC, &caps, &c);
	assert_int_equal(c.v[FC_INACTIVE_DISCARDS], 200);
	assert_int_equal(c.v[FC_NEIGHBOR_MTU_DISCARDS], 201);
	assert_int_equal(c.v[FC_SW_LIFETIME_LIMIT_DISCARDS], 202);
	assert_int_equal(c.v[FC_SW_HOQ_LIFETIME_LIMIT_DISCARDS], 203);
}

/*
 * The table's widths are libibmad's (an all-ones value survives encode
 * and decode as exactly 2^bits - 1), and where common/counters.c gives
 * the same counter a saturating width, it is the same one.
 */
static void test_widths(void **state)
{
	size_t n;
	const struct pma_field *f = pma_fields(&n);

	(void)state;
	assert_true(n >= FC_COUNT);
	for (size_t i = 0; i < n; i++) {
		uint8_t buf[PMA_MAD_SIZE] = {0};
		uint64_t ones = UINT64_MAX, got = 0;
		const struct counter_def *d;

		if (f[i].bits == 64) {
			mad_encode_field(buf, f[i].field, &ones);
			mad_decode_field(buf, f[i].field, &got);
		} else {
			uint32_t o = UINT32_MAX, g = 0;

			mad_encode_field(buf, f[i].field, &o);
			mad_decode_field(buf, f[i].field, &g);
			got = g;
		}
		assert_true(got == counters_max(f[i].bits));
		d = counters_lookup(CSRC_IB, f[i].name);
		if (d && d->width)
			assert_int_equal(d->width, f[i].bits);
		assert_non_null(pma_counter_name(f[i].counter));
	}
	/* every counter the sweep reports has its sysfs name where sysfs
	 * has the counter */
	assert_string_equal(pma_counter_name(FC_SYMBOL_ERROR), "symbol_error");
	assert_string_equal(pma_counter_name(FC_VL15_DROPPED), "VL15_dropped");
	assert_non_null(counters_lookup(CSRC_IB, "port_xmit_wait"));
	assert_null(pma_counter_name(FC_COUNT));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encode_get),
		cmocka_unit_test(test_encode_reset),
		cmocka_unit_test(test_tid32),
		cmocka_unit_test(test_check_response),
		cmocka_unit_test(test_decode_cpi),
		cmocka_unit_test(test_decode_pc),
		cmocka_unit_test(test_decode_pce),
		cmocka_unit_test(test_decode_details),
		cmocka_unit_test(test_widths),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
