// SPDX-License-Identifier: MIT
/*
 * Unit tests for the report's fabric section (common/report_fabric.c): a
 * section survives encode -> decode unchanged (a switch's forwarding table
 * as runs, a port's LMC), a report without one has none, and bad sections
 * are refused naming the field (the GUID's form, duplicate GUIDs and
 * ports, counter values, limits, a table's runs out of order or beyond its
 * top, a table on a CA).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "report.h"
#include "report_fabric.h"

static const char head[] = "{\"version\":1,\"host\":\"poller1\","
			   "\"timestamp\":1.5,\"devices\":[]";

static char *doc(const char *fabric)
{
	size_t n = strlen(head) + strlen(fabric) + 16;
	char *s = malloc(n);

	assert_non_null(s);
	snprintf(s, n, "%s%s%s}", head, *fabric ? ",\"fabric\":" : "", fabric);
	return s;
}

static int decode(const char *fabric, struct report **r, char *err,
		  size_t errlen)
{
	char *s = doc(fabric);
	int ret = report_decode(s, strlen(s), r, err, errlen);

	free(s);
	return ret;
}

/* The port of test_roundtrip, decoded. */
static void check_port(const struct report_fport *q)
{
	assert_int_equal(q->port, 3);
	assert_int_equal(q->lid, 7);
	assert_int_equal(q->lmc, 2);
	assert_int_equal(q->width_active, 1);
	assert_int_equal(q->width_enabled, 4);
	assert_string_equal(q->speed_active, "EDR");
	assert_true(q->rate_bytes == 3125000000);
	assert_string_equal(q->degraded, "width 1X of 4X enabled");
	assert_true(q->remote_guid == 0x1234);
	assert_int_equal(q->remote_port, 1);
	assert_null(q->error);
	assert_int_equal(q->n_counters, 2);
	assert_string_equal(q->counters[1].name, "port_xmit_data");
	assert_true(q->counters[1].value == UINT64_C(1) << 40);
}

static void test_roundtrip(void **state)
{
	struct report_counter c[2] = {{"symbol_error", 42},
				      {"port_xmit_data", UINT64_C(1) << 40}};
	struct route_run runs[3] = {{0, 255}, {1, 3}, {40, 0}};
	struct report_fport p = {.port = 3,
				 .lid = 7,
				 .lmc = 2,
				 .state = 4,
				 .phys_state = 5,
				 .width_active = 1,
				 .width_enabled = 4,
				 .speed_active = "EDR",
				 .rate_bytes = 3125000000,
				 .degraded = "width 1X of 4X enabled",
				 .remote_guid = 0x1234,
				 .remote_port = 1,
				 .counters = c,
				 .n_counters = 2};
	struct report_fnode n = {.guid = 0x0002c90300a1b2c3,
				 .type = 2,
				 .desc = "leaf000",
				 .lid = 7,
				 .numports = 36,
				 .ports = &p,
				 .n_ports = 1,
				 .has_lft = 1,
				 .lft_top = 47,
				 .lft_runs = runs,
				 .lft_n_runs = 3};
	struct report_fabric f = {.ca = "mlx5_0",
				  .port = 1,
				  .discovered = 10,
				  .swept = 11,
				  .routed = 12.5,
				  .nodes = &n,
				  .n_nodes = 1};
	struct report r0 = {.version = 1, .host = "poller1", .timestamp = 2};
	struct report *r = NULL;
	char *text, err[256];

	(void)state;
	r0.fabric = &f;
	assert_int_equal(report_encode(&r0, &text), 0);
	assert_non_null(strstr(text, "\"guid\":\"0x0002c90300a1b2c3\""));
	assert_non_null(strstr(text, "\"runs\":[0,255,1,3,40,0]"));
	assert_int_equal(
		report_decode(text, strlen(text), &r, err, sizeof(err)), 0);
	free(text);
	assert_non_null(r->fabric);
	assert_string_equal(r->fabric->ca, "mlx5_0");
	assert_int_equal(r->fabric->n_nodes, 1);
	assert_true(r->fabric->nodes[0].guid == 0x0002c90300a1b2c3);
	assert_int_equal(r->fabric->nodes[0].type, 2);
	assert_string_equal(r->fabric->nodes[0].desc, "leaf000");
	assert_int_equal(r->fabric->nodes[0].numports, 36);
	assert_true(r->fabric->routed == 12.5);
	assert_true(r->fabric->nodes[0].has_lft);
	assert_int_equal(r->fabric->nodes[0].lft_top, 47);
	assert_int_equal(r->fabric->nodes[0].lft_n_runs, 3);
	assert_int_equal(r->fabric->nodes[0].lft_runs[1].lid, 1);
	assert_int_equal(r->fabric->nodes[0].lft_runs[1].port, 3);
	assert_int_equal(r->fabric->nodes[0].lft_runs[2].lid, 40);
	assert_int_equal(r->fabric->nodes[0].lft_runs[2].port, 0);
	assert_null(r->fabric->nodes[0].lft_error);
	check_port(&r->fabric->nodes[0].ports[0]);
	report_free(r);
}

/* A table that could not be read travels as its reason. */
static void test_lft_error(void **state)
{
	struct report *r = NULL;
	char err[256];

	(void)state;
	assert_int_equal(
		decode("{\"nodes\":[{\"guid\":\"0x0000000000000001\",\"type\":"
		       "2,"
		       "\"lft\":{\"error\":\"LinearForwardingTable block 2: "
		       "timeout\"},\"ports\":[{\"port\":1}]}]}",
		       &r, err, sizeof(err)),
		0);
	assert_false(r->fabric->nodes[0].has_lft);
	assert_string_equal(r->fabric->nodes[0].lft_error,
			    "LinearForwardingTable block 2: timeout");
	assert_int_equal(r->fabric->nodes[0].ports[0].lmc, -1);
	assert_true(r->fabric->routed == 0);
	report_free(r);
}

static void test_absent(void **state)
{
	struct report *r = NULL;
	char err[256];

	(void)state;
	assert_int_equal(decode("", &r, err, sizeof(err)), 0);
	assert_null(r->fabric);
	report_free(r);
}

static void bad(const char *fabric, const char *want)
{
	struct report *r = NULL;
	char err[256] = "";

	assert_int_equal(decode(fabric, &r, err, sizeof(err)), -EINVAL);
	assert_null(r);
	if (!strstr(err, want))
		fail_msg("error '%s' does not contain '%s'", err, want);
}

static void test_refused(void **state)
{
	(void)state;
	bad("[]", "fabric: must be an object");
	bad("{\"nodes\":[{\"guid\":\"1234\",\"type\":2,\"ports\":[]}]}",
	    "fabric.nodes[0].guid: must be a GUID");
	bad("{\"nodes\":[{\"guid\":\"0x0000000000000000\",\"type\":2,"
	    "\"ports\":[]}]}",
	    "fabric.nodes[0].guid: must be a GUID");
	bad("{\"nodes\":[{\"guid\":\"0x00000000000000zz\",\"type\":2,"
	    "\"ports\":[]}]}",
	    "fabric.nodes[0].guid");
	bad("{\"nodes\":[{\"guid\":\"0x0000000000000001\",\"ports\":[]}]}",
	    "fabric.nodes[0].type: is required");
	bad("{\"nodes\":[{\"guid\":\"0x0000000000000001\",\"type\":2,"
	    "\"ports\":[{\"port\":1},{\"port\":1}]}]}",
	    "duplicate port 1");
	bad("{\"nodes\":[{\"guid\":\"0x0000000000000001\",\"type\":2,"
	    "\"ports\":[]},{\"guid\":\"0x0000000000000001\",\"type\":1,"
	    "\"ports\":[]}]}",
	    "duplicate node guid 0x0000000000000001");
	bad("{\"nodes\":[{\"guid\":\"0x0000000000000001\",\"type\":2,"
	    "\"ports\":[{\"port\":1,\"counters\":{\"symbol_error\":-1}}]}]}",
	    "fabric.nodes[0].ports[0].counters.symbol_error");
	bad("{\"nodes\":[{\"guid\":\"0x0000000000000001\",\"type\":2,"
	    "\"ports\":[{\"port\":1,\"counters\":{\"bad name\":1}}]}]}",
	    "fabric.nodes[0].ports[0].counters");
	bad("{\"nodes\":[{\"guid\":\"0x0000000000000001\",\"type\":2,"
	    "\"ports\":[{\"port\":255}]}]}",
	    "fabric.nodes[0].ports[0].port");
	bad("{\"nodes\":{}}", "fabric.nodes");
	bad("{\"nodes\":[{\"guid\":\"0x0000000000000001\",\"type\":2,"
	    "\"ports\":[{\"port\":1,\"lmc\":8}]}]}",
	    "fabric.nodes[0].ports[0].lmc: must be an integer in [0, 7]");
}

#define SW                                                                     \
	"{\"nodes\":[{\"guid\":\"0x0000000000000001\",\"type\":%d,"            \
	"\"lft\":%s,\"ports\":[]}]}"

static void bad_lft(int type, const char *lft, const char *want)
{
	char text[512];

	snprintf(text, sizeof(text), SW, type, lft);
	bad(text, want);
}

static void test_lft_refused(void **state)
{
	(void)state;
	bad_lft(1, "{\"top\":1,\"runs\":[0,1]}",
		"fabric.nodes[0].lft: only a switch has a forwarding table");
	bad_lft(2, "[]", "fabric.nodes[0].lft: must be an object");
	bad_lft(2, "{\"runs\":[0,1]}", "fabric.nodes[0].lft.top: is required");
	bad_lft(2, "{\"top\":3}", "fabric.nodes[0].lft: runs: is required");
	bad_lft(2, "{\"top\":49152,\"runs\":[0,1]}",
		"fabric.nodes[0].lft.top: must be an integer in [0, 49151]");
	bad_lft(2, "{\"top\":3,\"runs\":[0,1,2]}",
		"fabric.nodes[0].lft.runs: must be a non-empty array of LID, "
		"port pairs");
	bad_lft(2, "{\"top\":3,\"runs\":[]}", "fabric.nodes[0].lft.runs");
	bad_lft(2, "{\"top\":1,\"runs\":[0,1,1,2,1,3]}",
		"at most top + 1 of them");
	bad_lft(2, "{\"top\":3,\"runs\":[0,1,4,2]}",
		"fabric.nodes[0].lft.runs[2]: must be an integer in [0, 3]: a "
		"LID");
	bad_lft(2, "{\"top\":3,\"runs\":[0,256]}",
		"fabric.nodes[0].lft.runs[1]: must be an integer in [0, 255]: "
		"a port");
	bad_lft(2, "{\"top\":3,\"runs\":[0,\"x\"]}",
		"fabric.nodes[0].lft.runs[1]");
	bad_lft(2, "{\"top\":3,\"runs\":[1,1]}",
		"fabric.nodes[0].lft.runs: run 0 starts at LID 1, not 0");
	bad_lft(2, "{\"top\":3,\"runs\":[0,1,2,2,2,3]}",
		"fabric.nodes[0].lft.runs: run 2 starts at LID 2, not after "
		"run 1's 2");
	bad_lft(2, "{\"top\":3,\"runs\":[0,1],\"error\":\"x\"}",
		"fabric.nodes[0].lft: holds a table or an error, not both");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_lft_error),
		cmocka_unit_test(test_absent),
		cmocka_unit_test(test_lft_refused),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
