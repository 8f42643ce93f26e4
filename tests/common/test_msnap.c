// SPDX-License-Identifier: MIT
/*
 * Unit tests of the metrics snapshot and its renderer (common/msnap.h),
 * the one writer of the host, device, port and counter families for the
 * exporter and the probe: the PCIe degraded rule (report_pcie_degraded()),
 * label lists built and escaped once, unused GID and P_Key entries left
 * out, counters grouped by family in port order with the saturation gauge
 * after them, and host liveness only when asked for.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "msnap.h"

static struct report_pcie pcie(double cur_gts, double max_gts, int cur_w,
			       int max_w)
{
	struct report_pcie p = {
		.cur_speed_gts = cur_gts,
		.max_speed_gts = max_gts,
		.cur_width = cur_w,
		.max_width = max_w,
		.aer_correctable = -1,
		.aer_nonfatal = -1,
		.aer_fatal = -1,
	};

	return p;
}

/*
 * The drift issue 9 found: `ibpulse-probe devices` counted a maximum of 0
 * as known (>= 0), the exporter did not (> 0). The exporter was right: a
 * maximum of 0 is "not reported" (an SR-IOV VF reads its Link
 * Capabilities as zero; the kernel shows max_link_width 0), so a link
 * whose only maxima are 0 cannot be told degraded or healthy (-1: no
 * sample, no DEGRADED), where `>= 0` called it healthy (0).
 */
static void test_pcie_degraded_rule(void **state)
{
	static const struct {
		double cur_gts, max_gts;
		int cur_w, max_w, want;
	} cases[] = {
		{16, 16, 16, 16, 0}, /* as built */
		{8, 16, 16, 16, 1},  /* speed below */
		{16, 16, 8, 16, 1},  /* width below */
		{-1, 16, 8, 16, 1},  /* one side known is enough */
		{8, -1, -1, 16, -1}, /* no side whole */
		{-1, -1, 0, 0, -1},  /* a VF: maxima read 0: not "healthy" */
		{8, 0, 16, 0, -1},   /* max 0 is no maximum, either side */
		{-1, -1, 0, 16, 1},  /* current width 0 (link down) is below */
		{-1, -1, -1, -1, -1},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct report_pcie p = pcie(cases[i].cur_gts, cases[i].max_gts,
					    cases[i].cur_w, cases[i].max_w);

		assert_int_equal(report_pcie_degraded(&p), cases[i].want);
	}
}

/* One host "a\"b", one device (PCIe @p), one port with @n counters. */
static struct msnap *one_port(struct report_pcie p,
			      const struct report_counter *c, size_t n)
{
	struct msnap_host_in h = {.id = 1,
				  .name = "a\"b",
				  .probe_version = "0.1.0",
				  .last_report = 100,
				  .up = 1,
				  .detail = 1};
	struct msnap_device_in d = {.id = 1,
				    .name = "mlx5_0",
				    .netdevs = "ens1,ens2",
				    .numa_node = -1,
				    .pcie = p};
	struct msnap_port_in pi = {.id = 1,
				   .port = 1,
				   .state = 4,
				   .phys_state = -1,
				   .rate_bytes = 12500000000LL,
				   .link_layer = "Ethernet",
				   .lid = -1,
				   .sm_lid = -1,
				   .lmc = -1,
				   .cap_mask = 0x10};
	struct msnap *m;

	assert_int_equal(msnap_new(&m), 0);
	assert_int_equal(msnap_add_host(m, &h), 0);
	assert_int_equal(msnap_add_device(m, 0, &d), 0);
	assert_int_equal(msnap_add_port(m, 0, &pi), 0);
	assert_int_equal(msnap_add_gid(m, 0, 0, "fe80::1", "RoCE v2", "ens1"),
			 0);
	assert_int_equal(msnap_add_gid(m, 0, 1, "0000:0000", "RoCE v2", NULL),
			 0);
	assert_int_equal(msnap_add_pkey(m, 0, 0, 0xffff), 0);
	assert_int_equal(msnap_add_pkey(m, 0, 1, 0x8000), 0);
	for (size_t i = 0; i < n; i++) {
		long k = msnap_key(m, CSRC_IB, c[i].name, strlen(c[i].name));

		assert_true(k >= 0);
		assert_int_equal(msnap_add_row(m, 0, (uint32_t)k, c[i].value),
				 0);
	}
	return m;
}

static char *render(const struct msnap *m, unsigned flags)
{
	struct buf out;
	struct expo e;

	buf_init(&out, 0);
	expo_init(&e, &out, EXPO_TEXT);
	assert_int_equal(msnap_render(&e, m, flags), 0);
	assert_int_equal(expo_finish(&e), 0);
	expo_free(&e);
	return buf_steal(&out, NULL);
}

#define DEV "host=\"a\\\"b\",device=\"mlx5_0\""
#define PORT DEV ",port=\"1\""

static void test_vf_has_no_degraded_sample(void **state)
{
	struct msnap *m = one_port(pcie(-1, -1, 0, 0), NULL, 0);
	char *t = render(m, 0);

	(void)state;
	assert_null(strstr(t, "ibpulse_device_pcie_link_degraded{"));
	assert_non_null(
		strstr(t, "ibpulse_device_pcie_max_width_lanes{" DEV "} 0\n"));
	free(t);
	msnap_free(m);
	m = one_port(pcie(8, 16, 16, 16), NULL, 0);
	t = render(m, 0);
	assert_non_null(
		strstr(t, "ibpulse_device_pcie_link_degraded{" DEV "} 1\n"));
	free(t);
	msnap_free(m);
}

static void test_labels_and_entries(void **state)
{
	struct msnap *m = one_port(pcie(16, 16, 16, 16), NULL, 0);
	char *t = render(m, 0);

	(void)state;
	assert_non_null(strstr(t, "ibpulse_device_info{" DEV ",board_id=\"\","
				  "firmware_version=\"\",hca_type=\"\","
				  "node_guid=\"\",sys_image_guid=\"\","
				  "node_desc=\"\",netdevs=\"ens1,ens2\","
				  "pcie_address=\"\",numa_node=\"\"} 1\n"));
	assert_non_null(strstr(t, "ibpulse_port_info{" PORT
				  ",link_layer=\"Ethernet\",port_guid=\"\","
				  "lid=\"\",sm_lid=\"\",lmc=\"\","
				  "cap_mask=\"0x00000010\",netdev=\"\"} 1\n"));
	assert_non_null(strstr(t, "ibpulse_port_rate_bytes_per_second{" PORT
				  "} 12500000000\n"));
	assert_null(strstr(t, "ibpulse_port_physical_state_id{"));
	/* the all-zero GID and the P_Key of base 0 are unused entries */
	assert_non_null(strstr(t, "ibpulse_port_gid_info{" PORT ",index=\"0\","
				  "gid=\"fe80::1\",type=\"RoCE v2\","
				  "netdev=\"ens1\"} 1\n"));
	assert_null(strstr(t, "index=\"1\",gid="));
	assert_non_null(strstr(t, "ibpulse_port_pkey_info{" PORT ",index=\"0\","
				  "pkey=\"0xffff\",membership=\"full\"} 1\n"));
	assert_null(strstr(t, "pkey=\"0x8000\""));
	free(t);
	msnap_free(m);
}

static void test_counters_and_liveness(void **state)
{
	static const struct report_counter c[] = {
		{"symbol_error", 65535},
		{"port_xmit_data", 10},
		{"new_one", 3},
		{"symbol_error", 1}, /* a second row of the same key */
	};
	struct msnap *m = one_port(pcie(16, 16, 16, 16), c, 4);
	char *t = render(m, 0), *a, *b;

	(void)state;
	assert_int_equal(m->n_keys, 3);
	assert_non_null(strstr(
		t, "ibpulse_port_data_transmitted_bytes_total{" PORT "} 40\n"));
	assert_non_null(strstr(t, "ibpulse_port_ib_counters_total{" PORT
				  ",counter=\"new_one\"} 3\n"));
	/* one family, its rows together in row order, then saturation */
	a = strstr(t, "ibpulse_port_symbol_error_total{" PORT "} 65535\n");
	b = strstr(t, "ibpulse_port_symbol_error_total{" PORT "} 1\n");
	assert_true(a && b && a < b);
	assert_non_null(strstr(t, "ibpulse_port_error_saturated{" PORT
				  ",counter=\"symbol_error\"} 1\n"));
	assert_true(strstr(t, "# TYPE ibpulse_port_error_saturated") > b);
	assert_null(strstr(t, "ibpulse_host_up"));
	assert_non_null(strstr(t, "ibpulse_host_info{host=\"a\\\"b\","
				  "probe_version=\"0.1.0\"} 1\n"));
	free(t);
	t = render(m, MSNAP_LIVENESS);
	assert_non_null(strstr(t, "ibpulse_host_up{host=\"a\\\"b\"} 1\n"));
	assert_non_null(strstr(t, "ibpulse_host_last_report_timestamp_seconds{"
				  "host=\"a\\\"b\"} 100\n"));
	free(t);
	msnap_free(m);
}

static void test_find_by_id(void **state)
{
	struct msnap *m = one_port(pcie(16, 16, 16, 16), NULL, 0);

	(void)state;
	assert_int_equal(msnap_find_host(m, 1), 0);
	assert_int_equal(msnap_find_device(m, 1), 0);
	assert_int_equal(msnap_find_port(m, 1), 0);
	assert_int_equal(msnap_find_port(m, 2), -1);
	msnap_free(m);
	msnap_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pcie_degraded_rule),
		cmocka_unit_test(test_vf_has_no_degraded_sample),
		cmocka_unit_test(test_labels_and_entries),
		cmocka_unit_test(test_counters_and_liveness),
		cmocka_unit_test(test_find_by_id),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
