// SPDX-License-Identifier: MIT
/*
 * Unit tests for the probe's side of health verdicts: the collector's
 * answer parsed (and refused when it is not a verdict), the sysfs
 * fallback's rules, the exit codes (plain and node-problem-detector's),
 * the drain reason, and `scontrol show node -o` lines: whose drain it is
 * (ibpulse's reason prefix or someone else's), with the "[user@time]"
 * tail dropped.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "phealth.h"
#include "report.h"
#include "slurm.h"

static void test_parse(void **state)
{
	const char *j =
		"{\"host\":\"n1\",\"verdict\":\"failed\",\"since\":100,"
		"\"now\":160,\"quiet_seconds\":600,\"reasons\":[{\"kind\":"
		"\"port_down\",\"severity\":\"failed\",\"reason\":\"mlx5_0/1 "
		"port down\",\"active\":true,\"last_seen\":160},{\"severity\":"
		"\"degraded\",\"reason\":\"old\",\"active\":false,"
		"\"last_seen\":130},{\"severity\":\"bogus\",\"reason\":\"x\"}]"
		"}";
	struct phealth h = {0};
	char buf[64];

	(void)state;
	assert_int_equal(phealth_parse(j, strlen(j), &h), 0);
	assert_int_equal(h.verdict, PHEALTH_FAILED);
	assert_int_equal(h.n, 2); /* an unknown severity is left out */
	assert_string_equal(h.r[0].text, "mlx5_0/1 port down");
	assert_true(h.r[0].active && !h.r[1].active);
	assert_int_equal(h.quiet_seconds, 600);
	assert_int_equal(phealth_exit_code(&h, 0), PHEALTH_EXIT_FAILED);
	assert_int_equal(phealth_exit_code(&h, 1), 1);
	assert_string_equal(phealth_drain_reason(&h, buf, sizeof(buf)),
			    "ibpulse: mlx5_0/1 port down");
	phealth_free(&h);
	memset(&h, 0, sizeof(h));
	assert_int_equal(
		phealth_parse("{\"verdict\":\"sick\",\"reasons\":[]}", 34, &h),
		-EINVAL);
	assert_int_equal(h.verdict, PHEALTH_UNKNOWN);
	assert_int_equal(phealth_exit_code(&h, 0), PHEALTH_EXIT_UNKNOWN);
	assert_int_equal(phealth_exit_code(&h, 1), 2);
	assert_int_equal(phealth_parse("<html>", 6, &h), -EINVAL);
	h.verdict = PHEALTH_DEGRADED;
	assert_int_equal(phealth_exit_code(&h, 0), PHEALTH_EXIT_DEGRADED);
	assert_int_equal(phealth_exit_code(&h, 1), 0);
	phealth_free(&h);
}

static void test_local(void **state)
{
	struct report_port ports[2] = {
		{.port = 1, .state = 4, .phys_state = 5},
		{.port = 2, .state = 1, .phys_state = 3}};
	struct report_device dev = {.name = "mlx5_0",
				    .ports = ports,
				    .n_ports = 2,
				    .pcie = {.cur_speed_gts = 16,
					     .max_speed_gts = 16,
					     .cur_width = 16,
					     .max_width = 16}};
	struct report r = {.devices = &dev, .n_devices = 1};
	struct phealth h = {0};

	(void)state;
	/* a port down beside an ACTIVE one: degraded, said so */
	assert_int_equal(phealth_local(&r, &h), 0);
	assert_true(h.local);
	assert_int_equal(h.verdict, PHEALTH_DEGRADED);
	assert_int_equal(h.n, 1);
	assert_non_null(strstr(h.r[0].text, "mlx5_0/2 not ACTIVE"));
	phealth_free(&h);
	/* no ACTIVE port at all: failed */
	memset(&h, 0, sizeof(h));
	ports[0].state = 1;
	assert_int_equal(phealth_local(&r, &h), 0);
	assert_int_equal(h.verdict, PHEALTH_FAILED);
	phealth_free(&h);
	/* a fatal AER error: failed */
	memset(&h, 0, sizeof(h));
	ports[0].state = 4;
	dev.pcie.aer_fatal = 1;
	assert_int_equal(phealth_local(&r, &h), 0);
	assert_int_equal(h.verdict, PHEALTH_FAILED);
	phealth_free(&h);
	/* no device: unknown */
	memset(&h, 0, sizeof(h));
	r.n_devices = 0;
	assert_int_equal(phealth_local(&r, &h), 0);
	assert_int_equal(h.verdict, PHEALTH_UNKNOWN);
	phealth_free(&h);
}

static void test_scontrol_lines(void **state)
{
	struct slurm_node n;

	(void)state;
	assert_int_equal(
		slurm_node_parse("NodeName=node1 Arch=x86_64 State=IDLE "
				 "ThreadsPerCore=1 Partitions=debug\n",
				 &n),
		0);
	assert_string_equal(n.state, "IDLE");
	assert_false(n.drained || n.down || n.ours);
	assert_string_equal(n.reason, "");
	assert_int_equal(
		slurm_node_parse("NodeName=node1 State=IDLE+DRAIN Weight=1 "
				 "Reason=ibpulse: mlx5_0/1 port down: DOWN, "
				 "Disabled (it was ACTIVE) "
				 "[root@2026-12-02T15:17:04]\n",
				 &n),
		0);
	assert_true(n.drained && n.ours && !n.down);
	assert_string_equal(n.reason, "ibpulse: mlx5_0/1 port down: DOWN, "
				      "Disabled (it was ACTIVE)");
	assert_int_equal(slurm_node_parse("NodeName=n State=DOWN+DRAIN "
					  "Reason=operator: bad DIMM "
					  "[slurm@2026-01-01T00:00:00]",
					  &n),
			 0);
	assert_true(n.drained && n.down && !n.ours);
	assert_string_equal(n.reason, "operator: bad DIMM");
	/* "MCS_label=N/A" holds no State: only a field named State counts */
	assert_int_equal(slurm_node_parse("NodeName=n OldState=IDLE", &n),
			 -EINVAL);
	assert_int_equal(slurm_node_parse("Node n not found\n", &n), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_local),
		cmocka_unit_test(test_scontrol_lines),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
