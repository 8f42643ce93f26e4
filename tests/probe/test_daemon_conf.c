// SPDX-License-Identifier: MIT
/*
 * Unit tests for the daemon's configuration (probe/settings.c,
 * probe/settings_extra.c): defaults of the [daemon] keys, [labels],
 * [peers] and [profile NAME] sections read from a real file, the built-in
 * profiles when none are given, and bad values whose messages name the
 * key and the valid range or form. Also the busy-link verdict
 * (probe/daemon/dtest.c) on counter snapshots.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "dtest.h"
#include "probe_settings.h"

static char *write_tmp(const char *text)
{
	char *path = strdup("/tmp/ibpulse-dconf-XXXXXX");
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

/* Load @text; return the error code, the message in @err. */
static int load(const char *text, struct probe_settings *s, char *err,
		size_t len)
{
	char *path = write_tmp(text);
	int ret = probe_settings_load(s, path, err, len);

	unlink(path);
	free(path);
	return ret;
}

static void test_defaults(void **state)
{
	struct probe_settings s;
	char err[512];

	assert_int_equal(probe_settings_load(&s, NULL, err, sizeof(err)), 0);
	assert_int_equal(s.counters_interval, 10);
	assert_int_equal(s.push_interval, 30);
	assert_int_equal(s.responder_port, 18515);
	assert_true(s.duty_cycle == 0.05);
	assert_string_equal(s.spool_dir, "/var/lib/ibpulse/spool");
	assert_string_equal(s.control_socket, "/run/ibpulse/probe.sock");
	assert_false(s.selftest);
	/* The built-in profiles. */
	assert_int_equal(s.n_profiles, 2);
	assert_string_equal(probe_profile_find(&s, "bw")->test, "write_bw");
	assert_string_equal(probe_profile_find(&s, "lat")->test, "write_lat");
	probe_settings_free(&s);
}

static void test_sections(void **state)
{
	struct probe_settings s;
	const struct probe_profile *p;
	char err[512];

	assert_int_equal(load("[daemon]\nduty_cycle = 0.2\nselftest = on\n"
			      "selftest_profile = big\n"
			      "[labels]\nrack = r12\nleaf = leaf03\n"
			      "[peers]\nnode07 = 10.0.0.7:18515/mlx5_0/1\n"
			      "node08 = [fe80::1]:9000\n"
			      "[profile big]\ntest = read_bw\nsize = 1048576\n"
			      "qps = 4\nduration = 3\npkey = 0x8001\n"
			      "gid = v2\nsl = 3\n",
			      &s, err, sizeof(err)),
			 0);
	assert_true(s.duty_cycle == 0.2);
	assert_int_equal(s.n_labels, 2);
	assert_string_equal(s.labels[1].key, "leaf");
	assert_string_equal(s.labels[1].value, "leaf03");
	assert_int_equal(s.n_peers, 2);
	assert_string_equal(s.peers[0].address, "10.0.0.7");
	assert_string_equal(s.peers[0].port, "18515");
	assert_string_equal(s.peers[0].device, "mlx5_0");
	assert_int_equal(s.peers[0].ib_port, 1);
	assert_string_equal(s.peers[1].address, "fe80::1");
	assert_string_equal(s.peers[1].device, "");
	/* Profiles given: no built-in ones. */
	assert_int_equal(s.n_profiles, 1);
	p = probe_profile_find(&s, "big");
	assert_non_null(p);
	assert_string_equal(p->test, "read_bw");
	assert_int_equal(p->size, 1048576);
	assert_int_equal(p->qps, 4);
	assert_true(p->duration == 3);
	assert_int_equal(p->pkey, 0x8001);
	assert_string_equal(p->gid, "v2");
	assert_int_equal(p->sl, 3);
	probe_settings_free(&s);
	/* UD latency is a profile test too (cheap enough to run often). */
	assert_int_equal(load("[profile ud]\ntest = ud_send_lat\nsize = 64\n",
			      &s, err, sizeof(err)),
			 0);
	p = probe_profile_find(&s, "ud");
	assert_non_null(p);
	assert_string_equal(p->test, "ud_send_lat");
	probe_settings_free(&s);
}

static void test_bad_values(void **state)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{"[daemon]\nduty_cycle = 1.5\n",
		 "duty_cycle: '1.5' is not a number in [0, 1]"},
		{"[daemon]\ncounters_interval = 0\n",
		 "counters_interval: '0' is not an integer in [1, 3600]"},
		{"[daemon]\nresponder_port = 70000\n", "[0, 65535]"},
		{"[profile x]\nqps = 65\n",
		 "profile x: qps: '65' is not an integer in [1, 64]"},
		{"[profile x]\nsl = 16\n", "[0, 15]"},
		{"[profile x]\ntest = foo_bw\n", "is not one of write_bw"},
		{"[profile x]\ncolour = red\n", "unknown key"},
		{"[peers]\nn1 = 10.0.0.1\n",
		 "peers.n1: '10.0.0.1' is not host:port"},
		{"[peers]\nn1 = 10.0.0.1:0\n", "port 1..65535"},
		{"[peers]\nn1 = h:1/mlx5_0\n", "host:port[/device/port]"},
		{"[labels]\nbad key = x\n", "labels key"},
		{"[whatever]\nx = 1\n", "unknown section [whatever]"},
		{"[daemon]\nbackoff_min = 10\nbackoff_max = 5\n",
		 "backoff_min (10) must not exceed"},
		{"[daemon]\npeer_profiles = bw,nope\n",
		 "peer_profiles: no [profile nope]"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct probe_settings s;
		char err[512];

		assert_int_not_equal(load(cases[i].text, &s, err, sizeof(err)),
				     0);
		if (!strstr(err, cases[i].want))
			fail_msg("case %zu: '%s' lacks '%s'", i, err,
				 cases[i].want);
		probe_settings_free(&s);
	}
}

static void test_busy(void **state)
{
	struct dtest_load t = {.bytes = 100000000, .msgs = 1500, .size = 65536};
	struct vt_portctr b = {.has_bytes = true,
			       .xmit_bytes = 1000,
			       .rcv_bytes = 1000,
			       .has_wait = true,
			       .xmit_wait = 5};
	struct vt_portctr a = b, d;
	char why[160];

	/* The test's own 100 MB, plus headers: not busy. */
	a.xmit_bytes += 100000000 + 300000;
	vt_portctr_delta(&b, &a, &d);
	assert_false(dtest_busy(&d, &t, 0.1, why, sizeof(why)));
	/* Someone else moved 50 MB more. */
	a.rcv_bytes += 50000000;
	vt_portctr_delta(&b, &a, &d);
	assert_true(dtest_busy(&d, &t, 0.1, why, sizeof(why)));
	assert_non_null(strstr(why, "50.3 MB beyond the test's own"));
	/* A counter reset says nothing. */
	vt_portctr_delta(&a, &b, &d);
	assert_false(dtest_busy(&d, &t, 0.1, why, sizeof(why)));
	/* Rising transmit wait. */
	a = b;
	a.xmit_wait = 9;
	vt_portctr_delta(&b, &a, &d);
	t = (struct dtest_load){.size = 2};
	assert_true(dtest_busy(&d, &t, 0.1, why, sizeof(why)));
	assert_non_null(strstr(why, "port_xmit_wait"));
	/* Packets only (rxe): 1000 x 64 KiB at MTU 1024 is 64k packets,
	 * and a loopback test sees data and acks twice. */
	d = (struct vt_portctr){
		.has_pkts = true, .xmit_pkts = 128000, .rcv_pkts = 128000};
	t = (struct dtest_load){.msgs = 1000, .size = 65536, .mtu = 1024};
	assert_false(dtest_busy(&d, &t, 0.1, why, sizeof(why)));
	d.rcv_pkts += 500000;
	assert_true(dtest_busy(&d, &t, 0.1, why, sizeof(why)));
	/* Congestion notifications. */
	d = (struct vt_portctr){.has_cnp = true};
	t = (struct dtest_load){.size = 2};
	assert_false(dtest_busy(&d, &t, 0.1, why, sizeof(why)));
	d.cnp = 1;
	assert_true(dtest_busy(&d, &t, 0.1, why, sizeof(why)));
}

/* Each end judged on its own counters; the reason names the end. */
static void test_verdict(void **state)
{
	struct dtest_load t = {.bytes = 10000000, .msgs = 150, .size = 65536};
	struct vt_portctr quiet = {.has_bytes = true, .xmit_bytes = 10000000};
	struct vt_portctr loud = quiet;
	char why[400];

	loud.rcv_bytes = 3100000 + 1000000 + 65536 + 128 * 150;
	assert_false(dtest_verdict(&quiet, NULL, &t, 0.1, why, sizeof(why)));
	assert_string_equal(why, "");
	assert_false(dtest_verdict(&quiet, &quiet, &t, 0.1, why, sizeof(why)));
	assert_true(dtest_verdict(&quiet, &loud, &t, 0.1, why, sizeof(why)));
	assert_non_null(strstr(why, "responder: 4.2 MB beyond the test's own"));
	assert_null(strstr(why, "initiator"));
	assert_true(dtest_verdict(&loud, &quiet, &t, 0.1, why, sizeof(why)));
	assert_int_equal(strncmp(why, "initiator: ", 11), 0);
	assert_null(strstr(why, "responder"));
	assert_true(dtest_verdict(&loud, &loud, &t, 0.1, why, sizeof(why)));
	assert_non_null(strstr(why, "initiator: "));
	assert_non_null(strstr(why, "; responder: "));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_sections),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_busy),
		cmocka_unit_test(test_verdict),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
