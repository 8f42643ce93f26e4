// SPDX-License-Identifier: MIT
/*
 * Unit tests for the expected figure (collector/expected.c): the data rate
 * behind each `rate` the kernel prints (8b/10b for SDR/DDR/QDR, FDR's
 * 64b/66b, data rates from EDR on, RoCE as Ethernet), the link layer's
 * share of the wire at several sizes and MTUs against the figures in
 * docs/collector.md, PCIe per generation, the lower end winning, and the
 * test parameters read from a result.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "expected.h"

#define GBPS(x) ((x)*1e9 / 8) /* Gb/s to bytes/s */

static int near(double a, double b, double rel)
{
	return fabs(a - b) <= rel * fabs(b);
}

static void test_port_rates(void **state)
{
	/* 4X QDR "40 Gb/sec": 32 Gb/s of data */
	assert_true(
		near(expected_port_data_rate(GBPS(40), 0), GBPS(32), 1e-12));
	/* 1X SDR 2.5, 4X DDR 20, 12X QDR 120: all 8b/10b */
	assert_true(
		near(expected_port_data_rate(GBPS(2.5), 0), GBPS(2), 1e-12));
	assert_true(
		near(expected_port_data_rate(GBPS(20), 0), GBPS(16), 1e-12));
	assert_true(
		near(expected_port_data_rate(GBPS(120), 0), GBPS(96), 1e-12));
	/* 4X FDR "56 Gb/sec": 4 x 14.0625 x 64/66 = 54.55 */
	assert_true(near(expected_port_data_rate(GBPS(56), 0),
			 GBPS(4 * 14.0625 * 64 / 66), 1e-12));
	/* EDR, HDR, NDR: already data */
	assert_true(expected_port_data_rate(GBPS(100), 0) == GBPS(100));
	assert_true(expected_port_data_rate(GBPS(200), 0) == GBPS(200));
	assert_true(expected_port_data_rate(GBPS(400), 0) == GBPS(400));
	/* RoCE: the Ethernet speed, even where it reads like QDR */
	assert_true(expected_port_data_rate(GBPS(40), 1) == GBPS(40));
	assert_true(expected_port_data_rate(GBPS(10), 1) == GBPS(10));
	/* unknown and odd figures */
	assert_true(expected_port_data_rate(0, 0) == 0);
	assert_true(expected_port_data_rate(-1, 0) == 0);
	assert_true(expected_port_data_rate(GBPS(33), 0) == GBPS(33));
}

static void test_wire_efficiency(void **state)
{
	struct expected_test w = {EXPECTED_WRITE, 65536, 4096, 0};
	struct expected_test r = {EXPECTED_READ, 65536, 4096, 0};
	struct expected_test s = {EXPECTED_SEND, 4096, 4096, 0};

	/* IB, 64 KiB write at MTU 4096: 16 x 26 + RETH 16: 99.35% */
	assert_true(near(expected_wire_efficiency(0, &w),
			 65536.0 / (65536 + 16 * 26 + 16), 1e-12));
	assert_true(near(expected_wire_efficiency(0, &w), 0.9935, 1e-4));
	/* RoCE v2 at 4096: 98.0%; at 1024: 92.6% */
	assert_true(near(expected_wire_efficiency(1, &w), 0.980, 1e-3));
	w.mtu = 1024;
	assert_true(near(expected_wire_efficiency(1, &w),
			 65536.0 / (65536 + 64 * 82 + 16), 1e-12));
	assert_true(near(expected_wire_efficiency(1, &w), 0.926, 1e-3));
	/* read: AETH on the first and last response packets */
	assert_true(near(expected_wire_efficiency(0, &r),
			 65536.0 / (65536 + 16 * 26 + 8), 1e-12));
	/* one packet: one header, no extension */
	assert_true(near(expected_wire_efficiency(0, &s), 4096.0 / (4096 + 26),
			 1e-12));
	/* small messages pay the header on every packet */
	s.size = 64;
	assert_true(near(expected_wire_efficiency(0, &s), 64.0 / 90, 1e-12));
}

static void test_pcie(void **state)
{
	/* Gen4 x16: 31.5 GB/s of line data, 28.8 after TLP overhead */
	assert_true(near(expected_pcie_data_rate(16, 16),
			 16e9 * 16 * 128 / 130 / 8 * 256 / 280, 1e-12));
	assert_true(near(expected_pcie_data_rate(16, 16), 28.8e9, 1e-3));
	/* Gen3 x8 */
	assert_true(near(expected_pcie_data_rate(8, 8),
			 8e9 * 8 * 128 / 130 / 8 * 256 / 280, 1e-12));
	/* Gen1 and Gen2 lose 20% to 8b/10b */
	assert_true(near(expected_pcie_data_rate(2.5, 16),
			 2.5e9 * 16 * 0.8 / 8 * 256 / 280, 1e-12));
	assert_true(near(expected_pcie_data_rate(5, 8),
			 5e9 * 8 * 0.8 / 8 * 256 / 280, 1e-12));
	/* Gen6: flit mode */
	assert_true(near(expected_pcie_data_rate(64, 16),
			 64e9 * 16 * 236 / 256 / 8 * 256 / 272, 1e-12));
	assert_true(expected_pcie_data_rate(0, 16) == 0);
	assert_true(expected_pcie_data_rate(16, 0) == 0);
	assert_true(expected_pcie_data_rate(NAN, 16) == 0);
}

static void test_lower_end_wins(void **state)
{
	struct expected_end hdr = {GBPS(200), 0, 16, 16};
	struct expected_end edr = {GBPS(100), 0, 16, 16};
	struct expected_end x8 = {GBPS(200), 0, 8, 8};
	struct expected_end rxe = {GBPS(10), 1, -1, -1};
	struct expected_test t = {EXPECTED_WRITE, 65536, 4096, 0};
	double eff = expected_wire_efficiency(0, &t);
	struct expected_figure f;

	/* HDR to HDR on Gen4 x16: the link (24.8 GB/s) under PCIe (28.8) */
	assert_int_equal(expected_compute(&hdr, &hdr, &t, &f), 0);
	assert_true(near(f.value, GBPS(200) * eff, 1e-12));
	assert_string_equal(f.limit, "initiator link");
	/* an EDR responder halves it */
	assert_int_equal(expected_compute(&hdr, &edr, &t, &f), 0);
	assert_true(near(f.value, GBPS(100) * eff, 1e-12));
	assert_string_equal(f.limit, "responder link");
	/* a card trained at Gen3 x8 (7.2 GB/s) limits it more */
	assert_int_equal(expected_compute(&x8, &hdr, &t, &f), 0);
	assert_true(near(f.value, expected_pcie_data_rate(8, 8), 1e-12));
	assert_string_equal(f.limit, "initiator pcie");
	assert_true(near(f.link[1], GBPS(200) * eff, 1e-12));
	/* both directions at once: twice */
	t.bidir = 1;
	assert_int_equal(expected_compute(&hdr, &hdr, &t, &f), 0);
	assert_true(near(f.value, 2 * GBPS(200) * eff, 1e-12));
	/* Soft-RoCE has no PCIe: no figure */
	assert_int_equal(expected_compute(&hdr, &rxe, &t, &f), -ENODATA);
	hdr.rate_bytes = -1;
	assert_int_equal(expected_compute(&hdr, &edr, &t, &f), -ENODATA);
}

static void test_parse(void **state)
{
	struct expected_test t;

	assert_int_equal(expected_test_parse("write_bw",
					     "{\"size\":1048576,\"qps\":2,"
					     "\"mtu\":2048}",
					     &t),
			 0);
	assert_int_equal(t.op, EXPECTED_WRITE);
	assert_true(t.size == 1048576 && t.mtu == 2048 && !t.bidir);
	assert_int_equal(expected_test_parse("read_bw", NULL, &t), 0);
	assert_int_equal(t.op, EXPECTED_READ);
	assert_true(t.size == 65536 && t.mtu == 4096);
	assert_int_equal(expected_test_parse("send_bw",
					     "{\"bidirectional\":true,"
					     "\"mtu\":100,\"size\":-3}",
					     &t),
			 0);
	assert_true(t.bidir && t.size == 65536 && t.mtu == 4096);
	/* garbage params: the defaults */
	assert_int_equal(expected_test_parse("write_bw", "{not json", &t), 0);
	assert_true(t.size == 65536);
	assert_int_equal(expected_test_parse("write_lat", NULL, &t), -ENOTSUP);
	assert_int_equal(expected_test_parse("fadd_bw", NULL, &t), -ENOTSUP);
	assert_int_equal(expected_test_parse(NULL, NULL, &t), -ENOTSUP);
	assert_int_equal(
		expected_test_parse("write_bw", "{\"selftest\":true}", &t),
		-ENOTSUP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_port_rates),
		cmocka_unit_test(test_wire_efficiency),
		cmocka_unit_test(test_pcie),
		cmocka_unit_test(test_lower_end_wins),
		cmocka_unit_test(test_parse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
