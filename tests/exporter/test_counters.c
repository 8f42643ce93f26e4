// SPDX-License-Identifier: MIT
/*
 * Unit tests for the counters table (common/counters.c): the x4 scale of
 * the IB data counters, the widths and saturation of the narrow error
 * counters, settings that are not counters, the generic families, and
 * that every name in the table is a valid, unique metric name.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "counters.h"
#include "expo.h"

static void test_data_words_to_bytes(void **state)
{
	const struct counter_def *d =
		counters_lookup(CSRC_IB, "port_xmit_data");
	uint64_t v;

	assert_non_null(d);
	assert_string_equal(d->metric,
			    "ibpulse_port_data_transmitted_bytes_total");
	assert_int_equal(counters_scale_u64(d, 1000, &v), 0);
	assert_int_equal(v, 4000);
	/* a raw value whose byte count passes 2^64 is given as a double */
	assert_int_equal(counters_scale_u64(d, UINT64_MAX / 2, &v), -ERANGE);
	assert_true(counters_scale(d, UINT64_MAX / 2) > 3.6e19);
	d = counters_lookup(CSRC_IB, "port_rcv_data");
	assert_non_null(d);
	assert_string_equal(d->metric,
			    "ibpulse_port_data_received_bytes_total");
	assert_int_equal(d->mul, 4);
	/* packets are packets */
	d = counters_lookup(CSRC_IB, "port_xmit_packets");
	assert_int_equal(counters_scale_u64(d, 77, &v), 0);
	assert_int_equal(v, 77);
}

static void test_widths_and_saturation(void **state)
{
	static const struct {
		const char *name;
		unsigned width;
	} narrow[] = {
		{"symbol_error", 16},
		{"link_error_recovery", 8},
		{"link_downed", 8},
		{"port_rcv_errors", 16},
		{"port_rcv_remote_physical_errors", 16},
		{"port_rcv_switch_relay_errors", 16},
		{"port_xmit_discards", 16},
		{"port_xmit_constraint_errors", 8},
		{"port_rcv_constraint_errors", 8},
		{"local_link_integrity_errors", 4},
		{"excessive_buffer_overrun_errors", 4},
		{"VL15_dropped", 16},
	};

	for (size_t i = 0; i < sizeof(narrow) / sizeof(narrow[0]); i++) {
		const struct counter_def *d =
			counters_lookup(CSRC_IB, narrow[i].name);
		uint64_t max = (UINT64_C(1) << narrow[i].width) - 1;

		assert_non_null(d);
		assert_int_equal(d->width, narrow[i].width);
		assert_int_equal(counters_max(d->width), max);
		assert_true(counters_saturated(d, max));
		assert_false(counters_saturated(d, max - 1));
		assert_false(counters_saturated(d, 0));
	}
	assert_int_equal(counters_max(0), UINT64_MAX);
	assert_int_equal(counters_max(64), UINT64_MAX);
	/* wide counters never read as saturated */
	assert_false(counters_saturated(
		counters_lookup(CSRC_IB, "port_xmit_data"), UINT64_MAX));
	assert_false(counters_saturated(
		counters_lookup(CSRC_IB, "port_xmit_wait"), UINT32_MAX));
}

static void test_node_exporter_names(void **state)
{
	static const struct {
		enum counter_source src;
		const char *sysfs, *metric;
	} names[] = {
		{CSRC_IB, "symbol_error", "ibpulse_port_symbol_error_total"},
		{CSRC_IB, "port_rcv_errors",
		 "ibpulse_port_errors_received_total"},
		{CSRC_IB, "port_xmit_discards",
		 "ibpulse_port_discards_transmitted_total"},
		{CSRC_IB, "port_xmit_wait", "ibpulse_port_transmit_wait_total"},
		{CSRC_IB, "link_downed", "ibpulse_port_link_downed_total"},
		{CSRC_IB, "VL15_dropped", "ibpulse_port_vl15_dropped_total"},
		{CSRC_HW, "out_of_buffer",
		 "ibpulse_port_out_of_buffer_drops_total"},
		{CSRC_HW, "out_of_sequence",
		 "ibpulse_port_out_of_sequence_packets_received_total"},
		{CSRC_HW, "packet_seq_err",
		 "ibpulse_port_packet_sequence_errors_total"},
		{CSRC_HW, "duplicate_request",
		 "ibpulse_port_duplicate_requests_packets_total"},
		{CSRC_HW, "local_ack_timeout_err",
		 "ibpulse_port_local_ack_timeout_errors_total"},
		{CSRC_HW, "np_cnp_sent",
		 "ibpulse_port_np_cnp_packets_sent_total"},
		{CSRC_HW, "req_cqe_error",
		 "ibpulse_port_req_cqes_errors_total"},
		{CSRC_HW, "rx_write_requests",
		 "ibpulse_port_rx_write_requests_total"},
		{CSRC_NET, "carrier_changes",
		 "ibpulse_port_carrier_changes_total"},
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const struct counter_def *d =
			counters_lookup(names[i].src, names[i].sysfs);

		assert_non_null(d);
		assert_string_equal(d->metric, names[i].metric);
		assert_null(d->label);
	}
	/* the same file name from another source is another counter */
	assert_null(counters_lookup(CSRC_HW, "symbol_error"));
	assert_null(counters_lookup(CSRC_IB, "out_of_buffer"));
}

static void test_settings_are_not_counters(void **state)
{
	const struct counter_def *d = counters_lookup(CSRC_HW, "lifespan");

	assert_non_null(d);
	assert_int_equal(d->kind, COUNTER_KIND_GAUGE);
	assert_string_equal(d->metric, "ibpulse_port_lifespan_seconds");
	/* the kernel shows milliseconds */
	assert_true(counters_scale(d, 10) == 0.01);
	assert_false(counters_is_counter(CSRC_HW, "lifespan"));
	assert_false(counters_is_counter(CSRC_HW, "active_qps"));
	assert_false(counters_is_counter(CSRC_HW, "watermark_mrs"));
	assert_true(counters_is_counter(CSRC_HW, "sent_pkts"));
	assert_true(counters_is_counter(CSRC_IB, "symbol_error"));
}

static void test_generic_families(void **state)
{
	const struct counter_def *d = counters_describe(CSRC_HW, "rcvd_pkts");

	assert_non_null(d);
	assert_string_equal(d->metric, "ibpulse_port_hw_counters_total");
	assert_string_equal(d->label, "counter");
	d = counters_describe(CSRC_NET, "rx_prio3_pause");
	assert_string_equal(d->metric, "ibpulse_port_netdev_statistics_total");
	d = counters_describe(CSRC_IB, "some_future_counter");
	assert_string_equal(d->metric, "ibpulse_port_ib_counters_total");
	d = counters_describe(CSRC_HW, "active_qps");
	assert_string_equal(d->metric, "ibpulse_port_hw_resources");
	assert_int_equal(d->kind, COUNTER_KIND_GAUGE);
	assert_null(counters_generic(CSRC_COUNT, "x"));
	assert_string_equal(counters_source_name(CSRC_NET), "net");
}

/* Every metric name valid, counters end in _total, no name used twice. */
static void test_table_consistency(void **state)
{
	size_t n, ng;
	const struct counter_def *t = counters_table(&n);
	const struct counter_def *g = counters_generic_table(&ng);

	for (size_t i = 0; i < n + ng; i++) {
		const struct counter_def *d = i < n ? &t[i] : &g[i - n];
		size_t len = strlen(d->metric);
		int is_total =
			len > 6 && !strcmp(d->metric + len - 6, "_total");

		assert_true(expo_metric_name_valid(d->metric));
		assert_int_equal(strncmp(d->metric, "ibpulse_port_", 13), 0);
		assert_int_equal(is_total, d->kind == COUNTER_KIND_COUNTER);
		assert_non_null(d->help);
		assert_true(d->mul >= 1 && d->div >= 1);
		for (size_t j = 0; j < i; j++) {
			const struct counter_def *o = j < n ? &t[j] : &g[j - n];

			assert_string_not_equal(d->metric, o->metric);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_data_words_to_bytes),
		cmocka_unit_test(test_widths_and_saturation),
		cmocka_unit_test(test_node_exporter_names),
		cmocka_unit_test(test_settings_are_not_counters),
		cmocka_unit_test(test_generic_families),
		cmocka_unit_test(test_table_consistency),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
