// SPDX-License-Identifier: MIT
/*
 * Unit tests for the report codec (common/report.c): a full report survives
 * encode -> decode unchanged, unknown values are omitted, uint64 values
 * are clamped, and every validation rule rejects its bad input with an
 * error that names the field. The bad inputs are made by editing one field
 * of a valid report (a small path walker over jansson values), so each
 * case shows exactly what it breaks.
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
#include <jansson.h>

#include "report.h"

static const char base_json[] =
	"{\"version\":1,\"host\":\"node01\",\"timestamp\":1764412345.5,"
	"\"probe_version\":\"0.1.0\",\"devices\":[{\"name\":\"mlx5_0\","
	"\"node_guid\":\"b859:9f03:00d4:0a1c\",\"fw_ver\":\"20.31.1014\","
	"\"hca_type\":\"MT4123\",\"board_id\":\"MT_0000000223\","
	"\"node_desc\":\"node01 mlx5_0\",\"numa_node\":0,"
	"\"netdevs\":[\"ens1f0\"],\"pcie\":{\"address\":\"0000:3b:00.0\","
	"\"current_speed_gts\":8.0,\"max_speed_gts\":16.0,\"current_width\":8,"
	"\"max_width\":16,\"aer_correctable\":3,\"aer_nonfatal\":0,"
	"\"aer_fatal\":0},\"ports\":[{\"port\":1,\"state\":4,\"phys_state\":5,"
	"\"rate_bytes_per_second\":12500000000,\"link_layer\":\"InfiniBand\","
	"\"lid\":12,\"sm_lid\":1,\"lmc\":0,\"cap_mask\":2651449448,"
	"\"port_guid\":\"fe80:0000:0000:0000:b859:9f03:00d4:0a1c\","
	"\"netdev\":null,\"gids\":[{\"index\":0,"
	"\"gid\":\"fe80:0000:0000:0000:b859:9f03:00d4:0a1c\","
	"\"type\":\"IB/RoCE v1\",\"netdev\":null}],"
	"\"pkeys\":[{\"index\":0,\"pkey\":65535},{\"index\":1,\"pkey\":32769}],"
	"\"counters\":{\"ib\":{\"port_xmit_data\":123,\"symbol_error\":65535},"
	"\"hw\":{\"out_of_buffer\":5},\"net\":{\"carrier_changes\":2}}},"
	"{\"port\":2}]}]}";

static struct report *decode_ok(const char *json)
{
	struct report *r = NULL;
	char err[256];
	int ret = report_decode(json, strlen(json), &r, err, sizeof(err));

	if (ret)
		fail_msg("decode failed: %s", err);
	assert_non_null(r);
	return r;
}

static void test_decode_values(void **state)
{
	struct report *r = decode_ok(base_json);
	struct report_device *d;
	struct report_port *p;

	assert_int_equal(r->version, 1);
	assert_string_equal(r->host, "node01");
	assert_true(r->timestamp == 1764412345.5);
	assert_int_equal(r->n_devices, 1);
	d = &r->devices[0];
	assert_string_equal(d->name, "mlx5_0");
	assert_null(d->sys_image_guid);
	assert_int_equal(d->numa_node, 0);
	assert_int_equal(d->n_netdevs, 1);
	assert_string_equal(d->netdevs[0], "ens1f0");
	assert_true(d->pcie.cur_speed_gts == 8.0);
	assert_int_equal(d->pcie.max_width, 16);
	assert_int_equal(d->pcie.aer_correctable, 3);
	assert_int_equal(d->n_ports, 2);
	p = &d->ports[0];
	assert_int_equal(p->state, 4);
	assert_int_equal(p->rate_bytes, 12500000000ULL);
	assert_int_equal(p->cap_mask, 2651449448LL);
	assert_null(p->netdev);
	assert_int_equal(p->n_gids, 1);
	assert_string_equal(p->gids[0].type, "IB/RoCE v1");
	assert_null(p->gids[0].netdev);
	assert_int_equal(p->n_pkeys, 2);
	assert_int_equal(p->pkeys[1].pkey, 0x8001);
	assert_int_equal(p->n_counters[CSRC_IB], 2);
	assert_string_equal(p->counters[CSRC_IB][1].name, "symbol_error");
	assert_int_equal(p->counters[CSRC_IB][1].value, 65535);
	assert_int_equal(p->n_counters[CSRC_NET], 1);
	/* Port 2 carries nothing but its number: everything unknown. */
	p = &d->ports[1];
	assert_int_equal(p->state, -1);
	assert_int_equal(p->lid, -1);
	assert_int_equal(p->rate_bytes, REPORT_UNKNOWN);
	assert_null(p->link_layer);
	assert_int_equal(p->n_gids + p->n_pkeys, 0);
	report_free(r);
}

static void test_round_trip(void **state)
{
	struct report *r = decode_ok(base_json), *r2;
	char *a, *b;

	assert_int_equal(report_encode(r, &a), 0);
	r2 = decode_ok(a);
	assert_int_equal(report_encode(r2, &b), 0);
	assert_string_equal(a, b);
	/* Unknown values are omitted, not null. */
	assert_null(strstr(a, "null"));
	assert_null(strstr(a, "sys_image_guid"));
	assert_non_null(strstr(a, "\"symbol_error\":65535"));
	assert_non_null(strstr(a, "\"timestamp\":1764412345.5"));
	free(a);
	free(b);
	report_free(r);
	report_free(r2);
}

static void test_encode_clamps_u64(void **state)
{
	struct report_counter c = {.name = "huge", .value = UINT64_MAX - 1};
	struct report_port p = {.port = 1,
				.state = -1,
				.phys_state = -1,
				.rate_bytes = REPORT_UNKNOWN,
				.lid = -1,
				.sm_lid = -1,
				.lmc = -1,
				.cap_mask = -1};
	struct report_device d = {
		.name = "rxe0", .numa_node = -1, .ports = &p, .n_ports = 1};
	struct report r = {.version = 1,
			   .host = "h",
			   .timestamp = 1,
			   .devices = &d,
			   .n_devices = 1};
	struct report *back;
	char *s;

	d.pcie.cur_speed_gts = d.pcie.max_speed_gts = -1;
	d.pcie.cur_width = d.pcie.max_width = -1;
	d.pcie.aer_correctable = d.pcie.aer_nonfatal = d.pcie.aer_fatal = -1;
	p.counters[CSRC_HW] = &c;
	p.n_counters[CSRC_HW] = 1;
	assert_int_equal(report_encode(&r, &s), 0);
	assert_non_null(strstr(s, "\"huge\":9223372036854775807"));
	assert_null(strstr(s, "pcie"));
	assert_null(strstr(s, "numa_node"));
	back = decode_ok(s);
	assert_int_equal(back->devices[0].ports[0].counters[CSRC_HW][0].value,
			 INT64_MAX);
	free(s);
	report_free(back);
}

static void test_encode_rejects_bad_utf8(void **state)
{
	struct report r = {.version = 1, .host = "h\xff", .timestamp = 1};
	char *s = (char *)1;

	assert_int_equal(report_encode(&r, &s), -EINVAL);
	assert_null(s);
}

/*
 * Walk "a.b[2].c" from @root; set the last element to the JSON text @val
 * (NULL deletes it).
 */
static void edit(json_t *root, const char *path, const char *val)
{
	char key[128];
	json_t *cur = root, *v = NULL;
	const char *p = path;

	if (val) {
		v = json_loads(val, JSON_DECODE_ANY, NULL);
		assert_non_null(v);
	}
	for (;;) {
		size_t n = strcspn(p, ".[");
		int last;

		assert_true(n < sizeof(key));
		memcpy(key, p, n);
		key[n] = '\0';
		p += n;
		last = *p == '\0';
		if (n || last) {
			if (last) {
				if (v)
					json_object_set_new(cur, key, v);
				else
					json_object_del(cur, key);
				return;
			}
			cur = json_object_get(cur, key);
			assert_non_null(cur);
		}
		if (*p == '[') {
			size_t i = strtoul(p + 1, (char **)&p, 10);

			p++; /* ']' */
			if (*p == '\0') {
				if (v)
					json_array_set_new(cur, i, v);
				else
					json_array_remove(cur, i);
				return;
			}
			cur = json_array_get(cur, i);
			assert_non_null(cur);
		}
		if (*p == '.')
			p++;
	}
}

struct bad_case {
	const char *path;
	const char *val; /* NULL: delete the field */
	const char *err; /* expected error, exactly */
};

static const struct bad_case bad_cases[] = {
	{"version", NULL, "version: is required"},
	{"version", "2", "version: must be an integer in [1, 1]"},
	{"version", "\"1\"", "version: must be an integer in [1, 1]"},
	{"host", NULL, "host: is required"},
	{"host", "\"\"", "host: must not be empty"},
	{"host", "7", "host: must be a string"},
	{"host", "\"node 01\"",
	 "host: must contain only letters, digits and .-_ (starting with a "
	 "letter or digit)"},
	{"host", "\"-node\"",
	 "host: must contain only letters, digits and .-_ (starting with a "
	 "letter or digit)"},
	{"host",
	 "\"a1234567890123456789012345678901234567890123456789012345678901234"
	 "\"",
	 "host: must be at most 64 bytes long"},
	{"timestamp", NULL, "timestamp: is required"},
	{"timestamp", "-1", "timestamp: must be a number in [0, 1e+11]"},
	{"timestamp", "\"now\"", "timestamp: must be a number in [0, 1e+11]"},
	{"probe_version", "\"0.1 beta\"",
	 "probe_version: must contain only letters, digits and _.:+-"},
	{"devices", NULL, "devices: is required"},
	{"devices", "{}", "devices: must be an array"},
	{"devices[0]", "3", "devices[0]: must be an object"},
	{"devices[0].name", NULL, "devices[0].name: is required"},
	{"devices[0].name", "\"mlx5/0\"",
	 "devices[0].name: must contain only letters, digits and _.:+-"},
	{"devices[0].node_desc", "\"a\\nb\"",
	 "devices[0].node_desc: must contain only printable characters"},
	{"devices[0].fw_ver", "1", "devices[0].fw_ver: must be a string"},
	{"devices[0].numa_node", "-1",
	 "devices[0].numa_node: must be an integer in [0, 65535]"},
	{"devices[0].netdevs", "\"eth0\"",
	 "devices[0].netdevs: must be an array"},
	{"devices[0].netdevs[0]", "\"\"",
	 "devices[0].netdevs[0]: must not be empty"},
	{"devices[0].pcie", "[]", "devices[0].pcie: must be an object"},
	{"devices[0].pcie.current_speed_gts", "\"16 GT/s\"",
	 "devices[0].pcie.current_speed_gts: must be a number in [0, 1000]"},
	{"devices[0].pcie.max_width", "65",
	 "devices[0].pcie.max_width: must be an integer in [0, 64]"},
	{"devices[0].pcie.aer_fatal", "-3",
	 "devices[0].pcie.aer_fatal: must be a non-negative integer"},
	{"devices[0].ports", "{}", "devices[0].ports: must be an array"},
	{"devices[0].ports[1]", "null",
	 "devices[0].ports[1]: must be an object"},
	{"devices[0].ports[1].port", NULL,
	 "devices[0].ports[1].port: is required"},
	{"devices[0].ports[1].port", "1",
	 "devices[0].ports[1].port: duplicate port 1"},
	{"devices[0].ports[1].port", "256",
	 "devices[0].ports[1].port: must be an integer in [0, 255]"},
	{"devices[0].ports[0].state", "16",
	 "devices[0].ports[0].state: must be an integer in [0, 15]"},
	{"devices[0].ports[0].phys_state", "1.5",
	 "devices[0].ports[0].phys_state: must be an integer in [0, 15]"},
	{"devices[0].ports[0].rate_bytes_per_second", "-5",
	 "devices[0].ports[0].rate_bytes_per_second: must be a non-negative "
	 "integer"},
	{"devices[0].ports[0].lid", "65536",
	 "devices[0].ports[0].lid: must be an integer in [0, 65535]"},
	{"devices[0].ports[0].sm_lid", "true",
	 "devices[0].ports[0].sm_lid: must be an integer in [0, 65535]"},
	{"devices[0].ports[0].lmc", "8",
	 "devices[0].ports[0].lmc: must be an integer in [0, 7]"},
	{"devices[0].ports[0].cap_mask", "4294967296",
	 "devices[0].ports[0].cap_mask: must be an integer in [0, 4294967295]"},
	{"devices[0].ports[0].link_layer", "\"Infini Band\"",
	 "devices[0].ports[0].link_layer: must contain only letters, digits "
	 "and _.:+-"},
	{"devices[0].ports[0].port_guid", "[]",
	 "devices[0].ports[0].port_guid: must be a string"},
	{"devices[0].ports[0].gids", "3",
	 "devices[0].ports[0].gids: must be an array"},
	{"devices[0].ports[0].gids[0].index", NULL,
	 "devices[0].ports[0].gids[0].index: is required"},
	{"devices[0].ports[0].gids[0].gid", NULL,
	 "devices[0].ports[0].gids[0].gid: is required"},
	{"devices[0].ports[0].gids[0].type", "4",
	 "devices[0].ports[0].gids[0].type: must be a string"},
	{"devices[0].ports[0].gids[0].netdev", "\"eth 0\"",
	 "devices[0].ports[0].gids[0].netdev: must contain only letters, "
	 "digits and _.:+-"},
	{"devices[0].ports[0].pkeys[1].pkey", "65536",
	 "devices[0].ports[0].pkeys[1].pkey: must be an integer in [0, 65535]"},
	{"devices[0].ports[0].pkeys[1].index", "-1",
	 "devices[0].ports[0].pkeys[1].index: must be an integer in [0, "
	 "65535]"},
	{"devices[0].ports[0].pkeys[0]", "\"0xffff\"",
	 "devices[0].ports[0].pkeys[0]: must be an object"},
	{"devices[0].ports[0].counters", "[]",
	 "devices[0].ports[0].counters: must be an object"},
	{"devices[0].ports[0].counters.hw", "[1]",
	 "devices[0].ports[0].counters.hw: must be an object"},
	{"devices[0].ports[0].counters.hw.sent_pkts", "-1",
	 "devices[0].ports[0].counters.hw.sent_pkts: must be a non-negative "
	 "integer"},
	{"devices[0].ports[0].counters.hw.sent_pkts", "1.0",
	 "devices[0].ports[0].counters.hw.sent_pkts: must be a non-negative "
	 "integer"},
	{"devices[0].ports[0].counters.net.rx pause", "1",
	 "devices[0].ports[0].counters.net.rx pause: must contain only "
	 "letters, digits and _.:+-"},
	{"devices[0].ports[0].counters.ib.", "1",
	 "devices[0].ports[0].counters.ib.: must not be empty"},
};

static void test_bad_fields(void **state)
{
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *c = &bad_cases[i];
		json_t *root = json_loads(base_json, 0, NULL);
		struct report *r = (struct report *)1;
		char err[256], *text;
		int ret;

		assert_non_null(root);
		edit(root, c->path, c->val);
		text = json_dumps(root, JSON_COMPACT);
		ret = report_decode(text, strlen(text), &r, err, sizeof(err));
		if (ret != -EINVAL || strcmp(err, c->err))
			fail_msg("case %zu (%s = %s): ret %d, err '%s', want "
				 "'%s'",
				 i, c->path, c->val ? c->val : "(deleted)", ret,
				 err, c->err);
		assert_null(r);
		free(text);
		json_decref(root);
	}
}

static void test_bad_json(void **state)
{
	static const char *const texts[] = {
		"",
		"{",
		"[]",
		"null",
		"{\"version\":1,\"version\":1}",
		"{\"version\":1}garbage",
	};
	struct report *r;
	char err[256];

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		assert_int_equal(report_decode(texts[i], strlen(texts[i]), &r,
					       err, sizeof(err)),
				 -EINVAL);
		assert_null(r);
		assert_true(strlen(err) > 0);
	}
	report_decode("[]", 2, &r, err, sizeof(err));
	assert_string_equal(err, "report: must be a JSON object");
	report_decode("{\"a\":1,\"a\":2}", 13, &r, err, sizeof(err));
	assert_non_null(strstr(err, "duplicate"));
	/* Not NUL-terminated: the length is what counts. */
	assert_int_equal(report_decode(base_json, 40, &r, err, sizeof(err)),
			 -EINVAL);
	/* A tiny error buffer still gets a terminated prefix. */
	report_decode("[]", 2, &r, err, 5);
	assert_string_equal(err, "repo");
}

/* A report with @n elements in the array at @path (copies of element 0). */
static char *grow(const char *path, size_t n)
{
	json_t *root = json_loads(base_json, 0, NULL), *a = root;
	char buf[64], *text;
	const char *p = path;

	/* Only simple paths of keys and [0] are needed here. */
	while (*p) {
		size_t k = strcspn(p, ".");

		memcpy(buf, p, k);
		buf[k] = '\0';
		p += k + (p[k] == '.');
		if (!strcmp(buf, "[0]"))
			a = json_array_get(a, 0);
		else
			a = json_object_get(a, buf);
		assert_non_null(a);
	}
	while (json_array_size(a) < n) {
		json_t *copy = json_deep_copy(json_array_get(a, 0));
		json_t *idx = json_object_get(copy, "index");
		json_t *port = json_object_get(copy, "port");

		if (json_is_object(copy) && json_object_get(copy, "name")) {
			snprintf(buf, sizeof(buf), "dev%zu",
				 json_array_size(a));
			json_object_set_new(copy, "name", json_string(buf));
		}
		if (idx)
			json_integer_set(idx, (json_int_t)json_array_size(a));
		if (port)
			json_integer_set(port,
					 (json_int_t)json_array_size(a) + 1);
		json_array_append_new(a, copy);
	}
	text = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	return text;
}

static void test_limits(void **state)
{
	static const struct {
		const char *path;
		size_t max;
		const char *err;
	} cases[] = {
		{"devices", REPORT_MAX_DEVICES,
		 "devices: must have at most 64 elements"},
		{"devices.[0].ports", REPORT_MAX_PORTS,
		 "devices[0].ports: must have at most 64 elements"},
		{"devices.[0].netdevs", REPORT_MAX_NETDEVS,
		 "devices[0].netdevs: must have at most 16 elements"},
		{"devices.[0].ports.[0].gids", REPORT_MAX_GIDS,
		 "devices[0].ports[0].gids: must have at most 256 elements"},
		{"devices.[0].ports.[0].pkeys", REPORT_MAX_PKEYS,
		 "devices[0].ports[0].pkeys: must have at most 256 elements"},
	};
	struct report *r;
	char err[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *ok = grow(cases[i].path, cases[i].max);
		char *bad = grow(cases[i].path, cases[i].max + 1);

		r = NULL;
		if (report_decode(ok, strlen(ok), &r, err, sizeof(err)))
			fail_msg("%s at the limit: %s", cases[i].path, err);
		report_free(r);
		assert_int_equal(
			report_decode(bad, strlen(bad), &r, err, sizeof(err)),
			-EINVAL);
		assert_string_equal(err, cases[i].err);
		free(ok);
		free(bad);
	}
}

static void test_counter_limit(void **state)
{
	json_t *root = json_loads(base_json, 0, NULL);
	json_t *hw = json_object_get(
		json_array_get(
			json_object_get(
				json_array_get(json_object_get(root, "devices"),
					       0),
				"ports"),
			0),
		"counters");
	struct report *r;
	char err[256], name[32], *text;

	hw = json_object_get(hw, "hw");
	for (int i = 1; i < REPORT_MAX_COUNTERS; i++) {
		snprintf(name, sizeof(name), "c%d", i);
		json_object_set_new(hw, name, json_integer(i));
	}
	text = json_dumps(root, JSON_COMPACT);
	assert_int_equal(
		report_decode(text, strlen(text), &r, err, sizeof(err)), 0);
	assert_int_equal(r->devices[0].ports[0].n_counters[CSRC_HW],
			 REPORT_MAX_COUNTERS);
	report_free(r);
	free(text);
	json_object_set_new(hw, "one_too_many", json_integer(1));
	text = json_dumps(root, JSON_COMPACT);
	assert_int_equal(
		report_decode(text, strlen(text), &r, err, sizeof(err)),
		-EINVAL);
	assert_string_equal(err, "devices[0].ports[0].counters.hw: must have "
				 "at most 512 counters");
	free(text);
	json_decref(root);
}

static void test_duplicate_device(void **state)
{
	json_t *root = json_loads(base_json, 0, NULL);
	json_t *devs = json_object_get(root, "devices");
	struct report *r;
	char err[256], *text;

	json_array_append_new(devs, json_deep_copy(json_array_get(devs, 0)));
	text = json_dumps(root, JSON_COMPACT);
	assert_int_equal(
		report_decode(text, strlen(text), &r, err, sizeof(err)),
		-EINVAL);
	assert_string_equal(err, "devices[1].name: duplicate device 'mlx5_0'");
	free(text);
	json_decref(root);
}

static void test_unknown_keys_ignored(void **state)
{
	json_t *root = json_loads(base_json, 0, NULL);
	struct report *r;
	char *text;

	json_object_set_new(root, "future_field", json_string("x"));
	edit(root, "devices[0].ports[0].counters.future_source",
	     "{\"x\":\"y\"}");
	text = json_dumps(root, JSON_COMPACT);
	r = decode_ok(text);
	report_free(r);
	free(text);
	json_decref(root);
}

static void test_state_names(void **state)
{
	assert_string_equal(report_port_state_name(4), "ACTIVE");
	assert_string_equal(report_port_state_name(1), "DOWN");
	assert_string_equal(report_port_state_name(-1), "?");
	assert_string_equal(report_port_state_name(6), "?");
	assert_string_equal(report_phys_state_name(5), "LinkUp");
	assert_string_equal(report_phys_state_name(3), "Disabled");
	assert_string_equal(report_phys_state_name(0), "?");
	assert_string_equal(report_phys_state_name(8), "?");
	report_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_values),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_encode_clamps_u64),
		cmocka_unit_test(test_encode_rejects_bad_utf8),
		cmocka_unit_test(test_bad_fields),
		cmocka_unit_test(test_bad_json),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_counter_limit),
		cmocka_unit_test(test_duplicate_device),
		cmocka_unit_test(test_unknown_keys_ignored),
		cmocka_unit_test(test_state_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
