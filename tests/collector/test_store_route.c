// SPDX-License-Identifier: MIT
/*
 * Unit tests for the routes in the collector's store (store_route.c) and
 * the route endpoint's logic (route_api.c), on a real SQLite file with the
 * real schema: a fabric section's tables stored as runs and walked; a
 * newer read replacing a table, an older one from the same poller not;
 * a table that could not be read; the cached net rebuilt after a change
 * and after a rollback, never serving what was rolled back; a corrupt
 * stored table named; the query's parameters refused naming themselves.
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
#include <sqlite3.h>

#include "report.h"
#include "route.h"
#include "route_api.h"
#include "store.h"

struct fixture {
	char dir[64];
	char db[128];
	struct store_opts opts;
	struct store *st;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	snprintf(f->dir, sizeof(f->dir), "/tmp/ibpulse-route-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->db, sizeof(f->db), "%s/t.db", f->dir);
	f->opts = (struct store_opts){
		.path = f->db,
		.schema_dir = SCHEMA_DIR,
		.busy_timeout_ms = 1000,
		.keyframe_interval = 300,
		.prune_batch = 5000,
		.wal_max_bytes = 1 << 20,
	};
	assert_int_equal(store_open(&f->opts, &f->st), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[256];

	store_close(f->st);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

/*
 * A switch (LID 10) with two hosts: h1 (LIDs 1-2, LMC 1) on port 1, h2
 * (LID 4) on port 2, port 3 empty. @table: the switch's "lft" member.
 */
static char *fabric(double routed, const char *table)
{
	static const char fmt[] =
		"{\"version\":1,\"host\":\"poller1\",\"timestamp\":1,"
		"\"devices\":[],\"fabric\":{\"routed\":%.1f,\"nodes\":["
		"{\"guid\":\"0x0000000000000010\",\"type\":2,\"description\":"
		"\"sw\",\"lid\":10,\"numports\":3,\"lft\":%s,\"ports\":["
		"{\"port\":1,\"lid\":10,\"lmc\":0,\"state\":4,\"remote_guid\":"
		"\"0x0000000000000001\",\"remote_port\":1},"
		"{\"port\":2,\"lid\":10,\"lmc\":0,\"state\":4,\"remote_guid\":"
		"\"0x0000000000000002\",\"remote_port\":1},"
		"{\"port\":3,\"lid\":10,\"lmc\":0,\"state\":1}]},"
		"{\"guid\":\"0x0000000000000001\",\"type\":1,\"description\":"
		"\"h1\",\"ports\":[{\"port\":1,\"lid\":1,\"lmc\":1,\"state\":4,"
		"\"remote_guid\":\"0x0000000000000010\",\"remote_port\":1}]},"
		"{\"guid\":\"0x0000000000000002\",\"type\":1,\"description\":"
		"\"h2\",\"ports\":[{\"port\":1,\"lid\":4,\"lmc\":0,\"state\":4,"
		"\"remote_guid\":\"0x0000000000000010\",\"remote_port\":2}]}]}"
		"}";
	size_t n = sizeof(fmt) + strlen(table) + 32;
	char *s = malloc(n);

	assert_non_null(s);
	snprintf(s, n, fmt, routed, table);
	return s;
}

/* Store a report built by fabric(), at collector time @now. */
static void put(struct fixture *f, double routed, const char *table, double now)
{
	char *text = fabric(routed, table), err[256];
	struct report *r = NULL;

	assert_int_equal(
		report_decode(text, strlen(text), &r, err, sizeof(err)), 0);
	assert_int_equal(store_begin(f->st), 0);
	assert_int_equal(store_put_report(f->st, r, now, NULL), 0);
	assert_int_equal(store_commit(f->st), 0);
	report_free(r);
	free(text);
}

/* route_api_answer() in a transaction, as the writer runs it. */
static int answer(struct fixture *f, unsigned src, unsigned dst, char **out,
		  char *err, size_t errlen)
{
	int ret;

	assert_int_equal(store_begin(f->st), 0);
	ret = route_api_answer(f->st, src, dst, out, err, errlen);
	assert_int_equal(store_commit(f->st), 0);
	return ret;
}

/* LID 1, 2 to port 1; 4 to port 2; 10 to the switch; the rest nowhere. */
#define TABLE "{\"top\":10,\"runs\":[0,255,1,1,3,255,4,2,5,255,10,0]}"

static void test_stored_and_walked(void **state)
{
	struct fixture *f = *state;
	char *a = NULL, err[256] = "";

	put(f, 100, TABLE, 1000);
	assert_int_equal(answer(f, 2, 4, &a, err, sizeof(err)), 0);
	assert_non_null(strstr(a, "\"src_lid\":2,\"dst_lid\":4"));
	assert_non_null(strstr(a, "\"hops\":[{\"node_guid\":"
				  "\"0x0000000000000010\",\"node_desc\":\"sw\","
				  "\"lid\":10,\"in_port\":1,\"out_port\":2}]"));
	assert_non_null(strstr(a, "\"dst\":{\"node_guid\":"
				  "\"0x0000000000000002\",\"node_desc\":\"h2\","
				  "\"type\":\"ca\",\"port\":1,\"lid\":4,"
				  "\"lmc\":0}"));
	assert_non_null(strstr(a, "\"tables_stored\":1000.0"));
	assert_non_null(strstr(a, "adaptive routing"));
	free(a);
	/* to h1's second LID, and to the switch */
	assert_int_equal(answer(f, 4, 2, &a, err, sizeof(err)), 0);
	assert_non_null(strstr(a, "\"in_port\":2,\"out_port\":1"));
	free(a);
	assert_int_equal(answer(f, 4, 10, &a, err, sizeof(err)), 0);
	assert_non_null(strstr(a, "\"out_port\":0"));
	free(a);
	/* no such LID: a 404 and its reason */
	assert_int_equal(answer(f, 4, 7, &a, err, sizeof(err)), -ENOENT);
	assert_null(a);
	assert_string_equal(err, "no port holds LID 7");
}

static void test_newer_replaces(void **state)
{
	struct fixture *f = *state;
	char *a = NULL, err[256] = "";
	/* LID 4 now leaves by port 3, where nothing is attached */
	const char *moved =
		"{\"top\":10,\"runs\":[0,255,1,1,3,255,4,3,5,255,10,0]}";

	put(f, 100, TABLE, 1000);
	assert_int_equal(answer(f, 1, 4, &a, err, sizeof(err)), 0);
	free(a);
	/* an older read from the same poller: kept out */
	put(f, 50, moved, 1010);
	assert_int_equal(answer(f, 1, 4, &a, err, sizeof(err)), 0);
	free(a);
	/* a newer one replaces it, and the cached net follows */
	put(f, 200, moved, 1020);
	assert_int_equal(answer(f, 1, 4, &a, err, sizeof(err)), -ENOENT);
	assert_string_equal(err, "port 3 of sw (0x0000000000000010) leads "
				 "nowhere: nothing is attached");
	free(a);
	/* a table that could not be read replaces it too, named */
	put(f, 300, "{\"error\":\"LinearForwardingTable block 0: timeout\"}",
	    1030);
	assert_int_equal(answer(f, 1, 4, &a, err, sizeof(err)), -ENOENT);
	assert_string_equal(err, "the forwarding table of sw "
				 "(0x0000000000000010) is unknown: "
				 "LinearForwardingTable block 0: timeout");
}

/* A rolled-back table is never served from the cache. */
static void test_rollback(void **state)
{
	struct fixture *f = *state;
	char *a = NULL, err[256] = "", *text;
	struct report *r = NULL;

	put(f, 100, TABLE, 1000);
	assert_int_equal(answer(f, 1, 4, &a, err, sizeof(err)), 0);
	free(a);
	text = fabric(200, "{\"top\":10,\"runs\":[0,255]}");
	assert_int_equal(
		report_decode(text, strlen(text), &r, err, sizeof(err)), 0);
	assert_int_equal(store_begin(f->st), 0);
	assert_int_equal(store_put_report(f->st, r, 1010, NULL), 0);
	/* inside the transaction the new table is what the net holds */
	a = NULL;
	assert_int_equal(route_api_answer(f->st, 1, 4, &a, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "has no entry for LID 4 (255)"));
	store_rollback(f->st);
	report_free(r);
	free(text);
	assert_int_equal(answer(f, 1, 4, &a, err, sizeof(err)), 0);
	free(a);
}

/* A stored table that is not whole runs: named, not walked. */
static void test_corrupt_blob(void **state)
{
	struct fixture *f = *state;
	char *a = NULL, err[256] = "";
	sqlite3 *db;

	put(f, 100, TABLE, 1000);
	store_close(f->st);
	assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
	assert_int_equal(
		sqlite3_exec(db, "UPDATE fabric_lft SET runs = x'010203ff'",
			     NULL, NULL, NULL),
		SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(store_open(&f->opts, &f->st), 0);
	assert_int_equal(answer(f, 1, 4, &a, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "the stored table is malformed"));
}

static void test_no_fabric(void **state)
{
	struct fixture *f = *state;
	char *a = NULL, err[256] = "";

	assert_int_equal(answer(f, 1, 4, &a, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "no fabric is known"));
}

static void test_args(void **state)
{
	unsigned s = 0, d = 0;
	char err[160];

	(void)state;
	assert_int_equal(route_api_args("5", "0x20", &s, &d, err, sizeof(err)),
			 0);
	assert_int_equal(s, 5);
	assert_int_equal(d, 32);
	assert_int_equal(route_api_args(NULL, "1", &s, &d, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "src_lid: is required (a unicast LID, "
				 "1-49151, decimal or 0x-hex)");
	assert_int_equal(route_api_args("1", "49152", &s, &d, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "dst_lid: '49152' is not a unicast LID "
				 "(1-49151, decimal or 0x-hex)");
	assert_int_equal(route_api_args("1", "", &s, &d, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "dst_lid: ''"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_stored_and_walked, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_newer_replaces, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_rollback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_blob, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_no_fabric, setup,
						teardown),
		cmocka_unit_test(test_args),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
