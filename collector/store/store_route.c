// SPDX-License-Identifier: MIT
/*
 * Forwarding tables to rows and the cached route net (store_route.h). A
 * table is one row per switch: its runs packed 3 bytes each into a BLOB
 * (schema/006_routes.sql), so a 2,000-host subnet's tables are a few
 * hundred kilobytes and one row write per switch per read. The route net
 * is built from fabric_node, fabric_port and fabric_lft in three queries,
 * nodes the most recently reported first (common/route.h gives a LID two
 * ports claim to the node added first), and dropped whenever a fabric
 * row that routes depend on is written.
 */
#include "store_route.h"
#include "vec.h"
#include "store_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "report_fabric.h"
#include "route.h"

#define RUN_BYTES 3

enum rsql { RSQL_LFT_UPSERT, RSQL_NODES, RSQL_PORTS, RSQL_LFTS, RSQL_COUNT };

/* clang-format off */
static const char *const rsql_text[RSQL_COUNT] = {
	[RSQL_LFT_UPSERT] =
		"INSERT INTO fabric_lft (switch_guid, top, runs, error, routed, "
		"reporter, updated) "
		"VALUES (:switch_guid, :top, :runs, :error, :routed, :reporter, "
		":updated) "
		"ON CONFLICT (switch_guid) DO UPDATE SET top = excluded.top, "
		"runs = excluded.runs, error = excluded.error, "
		"routed = excluded.routed, reporter = excluded.reporter, "
		"updated = excluded.updated "
		"WHERE excluded.reporter <> fabric_lft.reporter "
		"OR excluded.routed >= fabric_lft.routed",
	[RSQL_NODES] =
		"SELECT n.guid, n.type, n.description, n.lid, "
		"n.numports, (SELECT max(p.lmc) FROM fabric_port p WHERE "
		"p.node_guid = n.guid) FROM fabric_node n ORDER BY "
		"n.updated DESC, n.guid",
	[RSQL_PORTS] = "SELECT node_guid, port, lid, lmc, state, remote_guid, "
		       "remote_port FROM fabric_port",
	[RSQL_LFTS] = "SELECT l.switch_guid, l.top, l.runs, l.error, l.updated "
		      "FROM fabric_lft l JOIN fabric_node n ON n.guid = "
		      "l.switch_guid WHERE n.type = 2",
};
/* clang-format on */

struct store_route {
	sqlite3_stmt *sql[RSQL_COUNT];
	struct route_net *net; /* NULL: built on the next use */
	double *lft_updated;   /* by node index */
};

int store_route_open(struct store *st)
{
	struct store_route *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	st->route = r;
	for (int i = 0; i < RSQL_COUNT; i++) {
		int rc = sql_prepare(st->db, rsql_text[i],
				     SQLITE_PREPARE_PERSISTENT, &r->sql[i]);

		if (rc != SQLITE_OK)
			return store_err(st, rc, rsql_text[i]);
	}
	return 0;
}

void store_route_dirty(struct store *st)
{
	struct store_route *r = st->route;

	if (!r)
		return;
	route_net_free(r->net);
	free(r->lft_updated);
	r->net = NULL;
	r->lft_updated = NULL;
}

void store_route_close(struct store *st)
{
	struct store_route *r = st->route;

	if (!r)
		return;
	store_route_dirty(st);
	for (int i = 0; i < RSQL_COUNT; i++)
		sqlite3_finalize(r->sql[i]);
	free(r);
	st->route = NULL;
}

static sqlite3_stmt *rstmt(struct store *st, enum rsql w)
{
	sqlite3_stmt *s = st->route->sql[w];

	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	return s;
}

int store_route_put_lft(struct store *st, const struct report_fnode *n,
			const char *guid, double routed, const char *host,
			double now)
{
	sqlite3_stmt *s = rstmt(st, RSQL_LFT_UPSERT);
	uint8_t *blob = NULL;
	int ret;

	if (n->has_lft) {
		blob = malloc(n->lft_n_runs * RUN_BYTES + 1);
		if (!blob)
			return -ENOMEM;
		for (size_t i = 0; i < n->lft_n_runs; i++) {
			blob[RUN_BYTES * i] =
				(uint8_t)(n->lft_runs[i].lid & 0xff);
			blob[RUN_BYTES * i + 1] =
				(uint8_t)(n->lft_runs[i].lid >> 8);
			blob[RUN_BYTES * i + 2] = n->lft_runs[i].port;
		}
		sql_name_int(s, ":top", (int)n->lft_top);
		sqlite3_bind_blob(s, sql_param(s, ":runs"), blob,
				  (int)(n->lft_n_runs * RUN_BYTES),
				  SQLITE_STATIC);
	}
	sql_name_text(s, ":switch_guid", guid);
	sql_name_text(s, ":error", n->has_lft ? NULL : n->lft_error);
	sql_name_real(s, ":routed", routed);
	sql_name_text(s, ":reporter", host);
	sql_name_real(s, ":updated", now);
	ret = store_done(st, s, "fabric forwarding table");
	if (!ret && sqlite3_changes(st->db))
		store_route_dirty(st);
	free(blob);
	return ret;
}

/* ------------------------------------------------------------ the net */

static uint64_t guid_of(sqlite3_stmt *s, int col)
{
	const char *t = (const char *)sqlite3_column_text(s, col);

	return t && !strncmp(t, "0x", 2) ? strtoull(t + 2, NULL, 16) : 0;
}

/* A column as an integer in [0, @max], 0 when NULL or out of range. */
static unsigned col_uint(sqlite3_stmt *s, int col, unsigned max)
{
	sqlite3_int64 v = sqlite3_column_int64(s, col);

	return v < 0 || v > max ? 0 : (unsigned)v;
}

static int add_nodes(struct store *st, struct route_net *n)
{
	sqlite3_stmt *s = rstmt(st, RSQL_NODES);
	int rc, ret = 0;

	while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct route_node_in in = {
			.guid = guid_of(s, 0),
			.type = (enum route_node_type)col_uint(s, 1, 3),
			.desc = (const char *)sqlite3_column_text(s, 2),
			.lid = (uint16_t)col_uint(s, 3, ROUTE_LID_MAX),
			.numports = col_uint(s, 4, 254),
			.lmc = (uint8_t)col_uint(s, 5, 7),
		};

		if (in.guid && in.type)
			ret = route_add_node(n, &in);
	}
	sqlite3_reset(s);
	if (!ret && rc != SQLITE_DONE)
		ret = store_err(st, rc, "route nodes");
	return ret;
}

static int add_ports(struct store *st, struct route_net *n)
{
	sqlite3_stmt *s = rstmt(st, RSQL_PORTS);
	int rc, ret = 0;

	while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct route_port_in in = {
			.num = col_uint(s, 1, 254),
			.lid = (uint16_t)col_uint(s, 2, ROUTE_LID_MAX),
			.lmc = (uint8_t)col_uint(s, 3, 7),
			.state = (uint8_t)col_uint(s, 4, 5),
			.remote_guid = guid_of(s, 5),
			.remote_port = col_uint(s, 6, 254),
		};
		uint64_t guid = guid_of(s, 0);

		/* a switch's port 0 is its node's; nothing else to add */
		if (guid && in.num)
			ret = route_add_port(n, guid, &in);
	}
	sqlite3_reset(s);
	if (!ret && rc != SQLITE_DONE)
		ret = store_err(st, rc, "route ports");
	return ret;
}

/* One stored table into @n; a malformed BLOB becomes a reason. */
static int add_lft(struct route_net *n, sqlite3_stmt *s, uint64_t guid)
{
	const uint8_t *b = sqlite3_column_blob(s, 2);
	size_t len = (size_t)sqlite3_column_bytes(s, 2), k = len / RUN_BYTES;
	unsigned top = col_uint(s, 1, ROUTE_LID_MAX);
	struct route_run *runs;
	char why[96];
	int ret;

	if (sqlite3_column_type(s, 2) == SQLITE_NULL)
		return route_add_lft_error(
			n, guid, (const char *)sqlite3_column_text(s, 3));
	runs = malloc((k + 1) * sizeof(*runs));
	if (!runs)
		return -ENOMEM;
	for (size_t i = 0; i < k; i++)
		runs[i] = (struct route_run){
			(uint16_t)(b[RUN_BYTES * i] | b[RUN_BYTES * i + 1]
							      << 8),
			b[RUN_BYTES * i + 2]};
	if (len % RUN_BYTES ||
	    route_runs_check(runs, k, top, why, sizeof(why))) {
		log_warn("store: the stored forwarding table of 0x%016llx is "
			 "malformed",
			 (unsigned long long)guid);
		ret = route_add_lft_error(n, guid,
					  "the stored table is malformed");
	} else {
		ret = route_add_lft(n, guid, top, runs, k);
	}
	free(runs);
	return ret;
}

struct lft_time {
	uint64_t guid;
	double updated;
};

static int add_lfts(struct store *st, struct route_net *n,
		    struct lft_time **times, size_t *n_times)
{
	sqlite3_stmt *s = rstmt(st, RSQL_LFTS);
	size_t cap = 0;
	int rc, ret = 0;

	*times = NULL;
	*n_times = 0;
	while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		uint64_t guid = guid_of(s, 0);

		if (!guid)
			continue;
		if (vec_grow(times, &cap, *n_times, sizeof(**times))) {
			ret = -ENOMEM;
			break;
		}
		(*times)[(*n_times)++] =
			(struct lft_time){guid, sqlite3_column_double(s, 4)};
		ret = add_lft(n, s, guid);
	}
	sqlite3_reset(s);
	if (!ret && rc != SQLITE_DONE)
		ret = store_err(st, rc, "route tables");
	return ret;
}

static int build(struct store *st)
{
	struct store_route *r = st->route;
	struct lft_time *times = NULL;
	struct route_net *n = NULL;
	size_t n_times = 0;
	char err[160] = "";
	int ret;

	ret = route_net_new(&n);
	if (!ret)
		ret = add_nodes(st, n);
	if (!ret)
		ret = add_ports(st, n);
	if (!ret)
		ret = add_lfts(st, n, &times, &n_times);
	if (!ret || ret == -EINVAL)
		ret = route_net_finish(n, err, sizeof(err));
	if (!ret) {
		r->lft_updated =
			calloc(route_net_nodes(n) + 1, sizeof(*r->lft_updated));
		ret = r->lft_updated ? 0 : -ENOMEM;
	}
	for (size_t i = 0; !ret && i < n_times; i++) {
		uint32_t k = route_node_find(n, times[i].guid);

		if (k != ROUTE_NO_NODE)
			r->lft_updated[k] = times[i].updated;
	}
	free(times);
	if (ret) {
		if (err[0])
			log_err("store: the fabric tables do not make a route "
				"net: %s",
				err);
		route_net_free(n);
		free(r->lft_updated);
		r->lft_updated = NULL;
		return ret == -EINVAL ? -EIO : ret;
	}
	r->net = n;
	return 0;
}

int store_route_net(struct store *st, const struct route_net **net,
		    const double **lft_updated)
{
	struct store_route *r = st->route;
	int ret = r->net ? 0 : build(st);

	if (ret)
		return ret;
	*net = r->net;
	*lft_updated = r->lft_updated;
	return 0;
}
