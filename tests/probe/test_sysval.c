// SPDX-License-Identifier: MIT
/*
 * Unit tests for the sysfs value parsers (probe/sysfs/sysval.c): the formats
 * the kernel prints, their edge cases (2.5 Gb/s, FDR10, trailing newlines, the
 * largest u64) and garbage, which must fail without touching the output.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "sysval.h"

static void test_u64(void **state)
{
	uint64_t v = 42;

	assert_int_equal(sysval_u64("0\n", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(sysval_u64("18446744073709551615\n", &v), 0);
	assert_true(v == UINT64_MAX);
	v = 42;
	assert_int_equal(sysval_u64("18446744073709551616", &v), -EINVAL);
	assert_int_equal(sysval_u64("-1", &v), -EINVAL);
	assert_int_equal(sysval_u64("+1", &v), -EINVAL);
	assert_int_equal(sysval_u64(" 1", &v), -EINVAL);
	assert_int_equal(sysval_u64("12abc", &v), -EINVAL);
	assert_int_equal(sysval_u64("", &v), -EINVAL);
	assert_int_equal(sysval_u64("\n", &v), -EINVAL);
	assert_int_equal(sysval_u64("0x10", &v), -EINVAL);
	assert_int_equal(v, 42);
}

/* The kernel's "N/A (no PMA)": unavailable, told apart from garbage. */
static void test_na(void **state)
{
	assert_true(sysval_is_na("N/A (no PMA)\n"));
	assert_true(sysval_is_na("N/A\n"));
	assert_true(sysval_is_na("N/A"));
	assert_false(sysval_is_na("N/Ax"));
	assert_false(sysval_is_na("n/a"));
	assert_false(sysval_is_na(" N/A"));
	assert_false(sysval_is_na("12"));
	assert_false(sysval_is_na(""));
}

static void test_i64(void **state)
{
	int64_t v = 7;

	assert_int_equal(sysval_i64("-1\n", &v), 0);
	assert_int_equal(v, -1);
	assert_int_equal(sysval_i64("16", &v), 0);
	assert_int_equal(v, 16);
	assert_int_equal(sysval_i64("-9223372036854775808", &v), 0);
	assert_true(v == INT64_MIN);
	assert_int_equal(sysval_i64("9223372036854775808", &v), -EINVAL);
	assert_int_equal(sysval_i64("-", &v), -EINVAL);
	assert_int_equal(sysval_i64("x16", &v), -EINVAL);
	assert_true(v == INT64_MIN);
}

static void test_num(void **state)
{
	uint64_t v = 0;

	assert_int_equal(sysval_num("0xc\n", 0xffff, &v), 0);
	assert_int_equal(v, 12);
	assert_int_equal(sysval_num("0x2651E848", 0xffffffff, &v), 0);
	assert_int_equal(v, 0x2651e848);
	assert_int_equal(sysval_num("3", 7, &v), 0);
	assert_int_equal(v, 3);
	assert_int_equal(sysval_num("8", 7, &v), -EINVAL);
	assert_int_equal(sysval_num("0x10000", 0xffff, &v), -EINVAL);
	assert_int_equal(sysval_num("0x", 0xffff, &v), -EINVAL);
	assert_int_equal(sysval_num("0xZZ", 0xffff, &v), -EINVAL);
	assert_int_equal(sysval_num("0x11112222333344445", UINT64_MAX, &v),
			 -EINVAL);
	assert_int_equal(v, 3);
}

static void test_state(void **state)
{
	int v = -1;

	assert_int_equal(sysval_state("4: ACTIVE\n", &v), 0);
	assert_int_equal(v, 4);
	assert_int_equal(sysval_state("5: LinkUp", &v), 0);
	assert_int_equal(v, 5);
	assert_int_equal(sysval_state("1: DOWN", &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(sysval_state("ACTIVE", &v), -EINVAL);
	assert_int_equal(sysval_state("4 ACTIVE", &v), -EINVAL);
	assert_int_equal(sysval_state("16: BOGUS", &v), -EINVAL);
	assert_int_equal(v, 1);
}

static void test_rate(void **state)
{
	static const struct {
		const char *in;
		uint64_t bytes;
	} ok[] = {
		{"100 Gb/sec (4X EDR)\n", 12500000000ULL},
		{"10 Gb/sec (1X FDR10)\n", 1250000000ULL},
		{"2.5 Gb/sec (1X SDR)\n", 312500000ULL},
		{"56 Gb/sec (4X FDR)", 7000000000ULL},
		{"400 Gb/sec (4X NDR)", 50000000000ULL},
		{"200 Gb/sec (4X HDR)", 25000000000ULL},
		{"2.5 Gb/sec", 312500000ULL},
		{"0 Gb/sec", 0},
	};
	static const char *const bad[] = {
		"fast",
		"100",
		"100 Gb/s",
		"100 Mb/sec",
		"-100 Gb/sec",
		"1.2.3 Gb/sec",
		". Gb/sec",
		"100Gb/sec",
		"100 Gb/secs",
		"1.0000000001 Gb/sec",
		"99999999999 Gb/sec",
		"",
	};
	uint64_t v = 1;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(sysval_rate(ok[i].in, &v), 0);
		assert_true(v == ok[i].bytes);
	}
	v = 1;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (sysval_rate(bad[i], &v) != -EINVAL)
			fail_msg("'%s' parsed", bad[i]);
	}
	assert_int_equal(v, 1);
}

static void test_pcie_speed(void **state)
{
	double v = -1;

	assert_int_equal(sysval_pcie_speed("16.0 GT/s PCIe\n", &v), 0);
	assert_true(v == 16.0);
	assert_int_equal(sysval_pcie_speed("8 GT/s", &v), 0);
	assert_true(v == 8.0);
	assert_int_equal(sysval_pcie_speed("2.5 GT/s PCIe", &v), 0);
	assert_true(v == 2.5);
	assert_int_equal(sysval_pcie_speed("64.0 GT/s PCIe", &v), 0);
	assert_true(v == 64.0);
	assert_int_equal(sysval_pcie_speed("Unknown", &v), -EINVAL);
	assert_int_equal(sysval_pcie_speed("Unknown speed", &v), -EINVAL);
	assert_int_equal(sysval_pcie_speed("0 GT/s", &v), -EINVAL);
	assert_int_equal(sysval_pcie_speed("inf GT/s", &v), -EINVAL);
	assert_int_equal(sysval_pcie_speed("16.0GT/s", &v), -EINVAL);
	assert_true(v == 64.0);
}

static void test_aer(void **state)
{
	static const char table[] = "RxErr 0\nBadTLP 3\nBadDLLP 0\n"
				    "TOTAL_ERR_COR 5\n";
	int64_t v = -1;

	assert_int_equal(sysval_aer_total(table, "TOTAL_ERR_COR", &v), 0);
	assert_int_equal(v, 5);
	assert_int_equal(sysval_aer_total(table, "BadTLP", &v), 0);
	assert_int_equal(v, 3);
	assert_int_equal(sysval_aer_total(table, "TOTAL_ERR_FATAL", &v),
			 -ENOENT);
	assert_int_equal(
		sysval_aer_total("TOTAL_ERR_FATAL 7", "TOTAL_ERR_FATAL", &v),
		0);
	assert_int_equal(v, 7);
	assert_int_equal(sysval_aer_total("TOTAL_ERR_FATAL lots\n",
					  "TOTAL_ERR_FATAL", &v),
			 -EINVAL);
	assert_int_equal(sysval_aer_total("TOTAL_ERR_FATAL 1 2\n",
					  "TOTAL_ERR_FATAL", &v),
			 -EINVAL);
	/* A key that is only a prefix of a line's key does not match. */
	assert_int_equal(
		sysval_aer_total("TOTAL_ERR_CORX 1\n", "TOTAL_ERR_COR", &v),
		-ENOENT);
	assert_int_equal(sysval_aer_total("", "TOTAL_ERR_COR", &v), -ENOENT);
	assert_int_equal(v, 7);
}

static void test_gid(void **state)
{
	char out[40];
	int zero = -1;

	assert_int_equal(sysval_gid("FE80:0000:0000:0000:b859:9f03:00d4:0a1c\n",
				    out, sizeof(out), &zero),
			 0);
	assert_string_equal(out, "fe80:0000:0000:0000:b859:9f03:00d4:0a1c");
	assert_int_equal(zero, 0);
	assert_int_equal(sysval_gid("0000:0000:0000:0000:0000:0000:0000:0000",
				    out, sizeof(out), &zero),
			 0);
	assert_int_equal(zero, 1);
	assert_int_equal(sysval_gid("fe80::1", out, sizeof(out), &zero),
			 -EINVAL);
	assert_int_equal(sysval_gid("fe80:0000:0000:0000:b859:9f03:00d4:0a1c0",
				    out, sizeof(out), &zero),
			 -EINVAL);
	assert_int_equal(sysval_gid("fe80-0000:0000:0000:b859:9f03:00d4:0a1c",
				    out, sizeof(out), &zero),
			 -EINVAL);
	assert_int_equal(sysval_gid("", out, sizeof(out), &zero), -EINVAL);
	assert_int_equal(sysval_gid("0000:0000:0000:0000:0000:0000:0000:0000",
				    out, 39, &zero),
			 -EINVAL);
}

static void test_pkey(void **state)
{
	uint16_t v = 0;

	assert_int_equal(sysval_pkey("0xffff\n", &v), 0);
	assert_int_equal(v, 0xffff);
	assert_int_equal(sysval_pkey("0x8001", &v), 0);
	assert_int_equal(v, 0x8001);
	assert_int_equal(sysval_pkey("0x1ffff", &v), -EINVAL);
	assert_int_equal(sysval_pkey("full", &v), -EINVAL);
	assert_int_equal(v, 0x8001);
}

static void test_text(void **state)
{
	char out[8];

	assert_int_equal(sysval_text("MT4123\n", out, sizeof(out)), 0);
	assert_string_equal(out, "MT4123");
	assert_int_equal(sysval_text("a\x01"
				     "b\xc3\xa9\n\n",
				     out, sizeof(out)),
			 0);
	assert_string_equal(out, "a?b??");
	assert_int_equal(sysval_text("0123456789", out, sizeof(out)), 0);
	assert_string_equal(out, "0123456");
	assert_int_equal(sysval_text("\n", out, sizeof(out)), -EINVAL);
	assert_string_equal(out, "");
	assert_int_equal(sysval_text("", out, sizeof(out)), -EINVAL);
}

static void test_name_and_globs(void **state)
{
	assert_true(sysval_is_name("rx_prio3_pause"));
	assert_true(sysval_is_name("VL15_dropped"));
	assert_false(sysval_is_name(""));
	assert_false(sysval_is_name("rx pause"));
	assert_false(sysval_is_name("a/b"));
	assert_true(sysval_is_name("x123456789012345678901234567890123456789012"
				   "345678901234567890123"));
	assert_false(sysval_is_name("x12345678901234567890123456789012345678901"
				    "23456789012345678901234"));

	assert_true(sysval_glob_any("*", "symbol_error"));
	assert_true(sysval_glob_any("*pause*, *pfc*", "rx_pfc_prio3"));
	assert_true(sysval_glob_any(" *pause* ,x", "tx_pause_ctrl_phy"));
	assert_true(sysval_glob_any("port_*", "port_xmit_data"));
	assert_false(sysval_glob_any("port_*", "symbol_error"));
	assert_false(sysval_glob_any("", "x"));
	assert_false(sysval_glob_any(NULL, "x"));
	assert_false(sysval_glob_any(",,", "x"));
	assert_true(sysval_glob_any("lifespan", "lifespan"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_u64),
		cmocka_unit_test(test_na),
		cmocka_unit_test(test_i64),
		cmocka_unit_test(test_num),
		cmocka_unit_test(test_state),
		cmocka_unit_test(test_rate),
		cmocka_unit_test(test_pcie_speed),
		cmocka_unit_test(test_aer),
		cmocka_unit_test(test_gid),
		cmocka_unit_test(test_pkey),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_name_and_globs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
