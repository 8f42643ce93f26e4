// SPDX-License-Identifier: MIT
/*
 * Unit tests of the probe's /metrics rendering and of metrics_listen
 * parsing (probe/pmetrics.h), on reports built by hand: unknown values
 * give no sample, the data counters are scaled x4 (as a double past
 * 2^64/4), label values are escaped, a body past the buffer's ceiling
 * fails cleanly, and the listen forms the docs promise parse.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pmetrics.h"

static struct report_counter ib_counters[] = {
	{"port_xmit_data", 10},
	{"port_rcv_data", UINT64_MAX / 2},
	{"symbol_error", 65535},
	{"some_new_counter", 7},
};

static struct report_port one_port = {
	.port = 1,
	.state = -1,
	.phys_state = 5,
	.rate_bytes = REPORT_UNKNOWN,
	.lid = 12,
	.sm_lid = -1,
	.lmc = 0,
	.cap_mask = 0x10,
	.counters = {ib_counters},
	.n_counters = {4},
};

static struct report_device one_device = {
	.name = "mlx5_0",
	.numa_node = -1,
	.pcie = {.cur_speed_gts = 8,
		 .max_speed_gts = -1,
		 .cur_width = -1,
		 .max_width = 16,
		 .aer_correctable = -1,
		 .aer_nonfatal = 3,
		 .aer_fatal = -1},
	.ports = &one_port,
	.n_ports = 1,
};

static struct report one_report = {
	.version = REPORT_VERSION,
	.host = "node\"01",
	.probe_version = "0.1.0",
	.devices = &one_device,
	.n_devices = 1,
};

static char *render(enum expo_format f, size_t *series)
{
	struct buf out;

	buf_init(&out, 0);
	assert_int_equal(
		pmetrics_render(&one_report, NULL, 0.5, f, &out, series), 0);
	return buf_steal(&out, NULL);
}

#define PORT "host=\"node\\\"01\",device=\"mlx5_0\",port=\"1\""

static void test_values_and_unknowns(void **state)
{
	size_t series = 0;
	char *t = render(EXPO_TEXT, &series);

	(void)state;
	assert_non_null(strstr(
		t, "ibpulse_port_data_transmitted_bytes_total{" PORT "} 40\n"));
	/* (2^64 - 1) / 2 words are past 2^64 bytes: a double */
	assert_non_null(strstr(t, "ibpulse_port_data_received_bytes_total{" PORT
				  "} 3.6893488147419103e+19\n"));
	assert_non_null(strstr(t, "ibpulse_port_ib_counters_total{" PORT
				  ",counter=\"some_new_counter\"} 7\n"));
	assert_non_null(strstr(t, "ibpulse_port_error_saturated{" PORT
				  ",counter=\"symbol_error\"} 1\n"));
	assert_non_null(
		strstr(t, "ibpulse_port_physical_state_id{" PORT "} 5\n"));
	assert_non_null(strstr(t, "lid=\"12\",sm_lid=\"\",lmc=\"0\","
				  "cap_mask=\"0x00000010\""));
	assert_non_null(strstr(t, "ibpulse_device_pcie_aer_errors_total{host="
				  "\"node\\\"01\",device=\"mlx5_0\",severity="
				  "\"nonfatal\"} 3\n"));
	/* unknown: state, rate, max speed, current width, two AER totals */
	assert_null(strstr(t, "ibpulse_port_state_id{"));
	assert_null(strstr(t, "ibpulse_port_rate_bytes_per_second{"));
	assert_null(strstr(t, "max_speed_transfers_per_second{"));
	assert_null(strstr(t, "current_width_lanes{"));
	assert_null(strstr(t, "severity=\"fatal\""));
	/* one side unknown each: degraded cannot be told */
	assert_null(strstr(t, "ibpulse_device_pcie_link_degraded{"));
	assert_non_null(strstr(t, "ibpulse_probe_sysfs_read_seconds 0.5\n"));
	assert_true(series > 10);
	free(t);
}

static void test_openmetrics(void **state)
{
	char *t = render(EXPO_OPENMETRICS, NULL);
	size_t n = strlen(t);

	(void)state;
	assert_true(n > 6 && !strcmp(t + n - 6, "# EOF\n"));
	assert_non_null(strstr(t, "# TYPE ibpulse_port_ib_counters counter\n"));
	free(t);
}

static void test_ceiling(void **state)
{
	struct buf out;

	(void)state;
	buf_init(&out, 512);
	assert_int_equal(
		pmetrics_render(&one_report, NULL, -1, EXPO_TEXT, &out, NULL),
		-E2BIG);
	buf_free(&out);
}

/* The daemon's spool figures: pending by store, dropped by reason. */
static void test_spool_families(void **state)
{
	struct pmetrics_spool sp = {.on_disk = 3,
				    .in_memory = 2,
				    .spool_full = 5,
				    .expired = 1,
				    .unwritable = 7};
	struct buf out;
	char *t;

	(void)state;
	buf_init(&out, 0);
	assert_int_equal(
		pmetrics_render(&one_report, &sp, -1, EXPO_TEXT, &out, NULL),
		0);
	t = buf_steal(&out, NULL);
	assert_non_null(strstr(
		t, "# TYPE ibpulse_probe_results_dropped_total counter\n"));
	assert_non_null(strstr(
		t, "ibpulse_probe_results_dropped_total{host=\"node\\\"01\","
		   "reason=\"unwritable\"} 7\n"));
	assert_non_null(strstr(
		t, "ibpulse_probe_results_dropped_total{host=\"node\\\"01\","
		   "reason=\"spool_full\"} 5\n"));
	assert_non_null(
		strstr(t, "ibpulse_probe_results_pending{host=\"node\\\"01\","
			  "store=\"memory\"} 2\n"));
	assert_non_null(
		strstr(t, "ibpulse_probe_results_pending{host=\"node\\\"01\","
			  "store=\"disk\"} 3\n"));
	free(t);
	/* the one-shot command has no spool: no such family */
	t = render(EXPO_TEXT, NULL);
	assert_null(strstr(t, "ibpulse_probe_results_"));
	free(t);
}

static void test_listen_parse(void **state)
{
	static const struct {
		const char *text, *addr;
		int port; /* < 0: refused */
	} cases[] = {
		{"127.0.0.1:9469", "127.0.0.1", 9469},
		{"[::1]:0", "::1", 0},
		{":9469", "", 9469},
		{"0.0.0.0:65535", "0.0.0.0", 65535},
		{"127.0.0.1", NULL, -1},
		{"127.0.0.1:", NULL, -1},
		{"localhost:9469", NULL, -1},
		{"::1:9469", NULL, -1},
		{"[127.0.0.1]:9469", NULL, -1},
		{"1.2.3.4:65536", NULL, -1},
		{"1.2.3.4:-1", NULL, -1},
		{"1.2.3.4:12x", NULL, -1},
	};
	char addr[64], err[256];
	unsigned port;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int ret =
			pmetrics_listen_parse(cases[i].text, addr, sizeof(addr),
					      &port, err, sizeof(err));

		if (cases[i].port < 0) {
			assert_int_equal(ret, -EINVAL);
			assert_non_null(strstr(err, "metrics_listen"));
			continue;
		}
		assert_int_equal(ret, 0);
		assert_string_equal(addr, cases[i].addr);
		assert_int_equal(port, cases[i].port);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values_and_unknowns),
		cmocka_unit_test(test_openmetrics),
		cmocka_unit_test(test_ceiling),
		cmocka_unit_test(test_spool_families),
		cmocka_unit_test(test_listen_parse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
