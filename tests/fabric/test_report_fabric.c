// SPDX-License-Identifier: MIT
/*
 * Unit tests for the report's fabric section (common/report_fabric.c): a
 * section survives encode -> decode unchanged, a report without one has
 * none, and bad sections are refused naming the field (the GUID's form,
 * duplicate GUIDs and ports, counter values, limits).
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

static void test_roundtrip(void **state)
{
	struct report_counter c[2] = {{"symbol_error", 42},
				      {"port_xmit_data", UINT64_C(1) << 40}};
	struct report_fport p = {.port = 3,
				 .lid = 7,
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
				 .n_ports = 1};
	struct report_fabric f = {.ca = "mlx5_0",
				  .port = 1,
				  .discovered = 10,
				  .swept = 11,
				  .nodes = &n,
				  .n_nodes = 1};
	struct report r0 = {.version = 1, .host = "poller1", .timestamp = 2};
	struct report *r = NULL;
	const struct report_fport *q;
	char *text, err[256];

	(void)state;
	r0.fabric = &f;
	assert_int_equal(report_encode(&r0, &text), 0);
	assert_non_null(strstr(text, "\"guid\":\"0x0002c90300a1b2c3\""));
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
	q = &r->fabric->nodes[0].ports[0];
	assert_int_equal(q->port, 3);
	assert_int_equal(q->lid, 7);
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
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_absent),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
