// SPDX-License-Identifier: MIT
/*
 * The test tables on the writer's connection (store_tests.h): prepared
 * once at open, run inside the writer's group transaction. Results go in
 * with INSERT ... ON CONFLICT (result_id) DO NOTHING, so a retried batch
 * stores nothing twice and its answer still comes only after the commit.
 * Before that, a batch is held to what one host may add: "started" within
 * a window of the collector's clock, and per host and planner period at
 * most results_max_peers distinct peer ports and results_max_profiles
 * distinct profiles (sets kept in memory, loaded from the table once per
 * host and period).
 */
#include "store_tests.h"
#include "report.h"
#include "map.h"
#include "store_int.h"
#include "store_regress.h"
#include "testapi.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAIR_LAST(x, y)                                                        \
	"(SELECT last_measured FROM pair_seen s WHERE s.a_host = p." x         \
	"_host AND s.a_device = p." x "_device AND s.a_port = p." x            \
	"_port AND s.b_host = p." y "_host AND s.b_device = p." y              \
	"_device AND s.b_port = p." y "_port)"

/* The figures' parameters in TSQL_RESULT_INS: ", :bw_avg_bytes_per_second,
 * ..." (testapi.h's columns, each named as its column). */
#define RESULT_FIG_PARAM_(e, key, high) ", :" key

/* clang-format off */
static const char *const tsql_text[TSQL_COUNT] = {
	[TSQL_PROBE_UPSERT] =
		"INSERT INTO probe (host, address, port, labels, profiles, "
		"registered, updated) "
		"VALUES (:host, :address, :port, :labels, :profiles, :now, :now) "
		"ON CONFLICT (host) DO UPDATE SET address = :address, port = :port, "
		"labels = :labels, profiles = :profiles, updated = :now "
		"RETURNING id",
	[TSQL_LABEL_DEL] = "DELETE FROM probe_label WHERE probe_id = :probe_id",
	[TSQL_LABEL_INS] =
		"INSERT INTO probe_label (probe_id, key, value) "
		"VALUES (:probe_id, :key, :value)",
	[TSQL_PORT_DEL] = "DELETE FROM probe_port WHERE probe_id = :probe_id",
	[TSQL_PORT_INS] =
		"INSERT INTO probe_port (probe_id, device, port, state, link_layer, "
		"lid, subnet_prefix, pkeys) "
		"VALUES (:probe_id, :device, :port, :state, :link_layer, :lid, "
		":subnet_prefix, :pkeys)",
	/* The figures last: columns from the table (testapi.h). */
	[TSQL_RESULT_INS] =
		"INSERT INTO result (result_id, host, plan_id, profile, test, started, "
		"duration_seconds, local_device, local_port, peer_host, peer_device, "
		"peer_port, outcome, error, wc_status, busy, busy_reason, params, "
		"received" TESTAPI_FIG_SQL_COLUMNS ") "
		"VALUES (:result_id, :host, :plan_id, :profile, :test, :started, "
		":duration_seconds, :local_device, :local_port, :peer_host, "
		":peer_device, :peer_port, :outcome, :error, :wc_status, :busy, "
		":busy_reason, :params, :received"
		TESTAPI_FIGURES(RESULT_FIG_PARAM_) ") "
		"ON CONFLICT (result_id) DO NOTHING",
	[TSQL_PAIR_UPSERT] =
		"INSERT INTO pair_seen (a_host, a_device, a_port, b_host, b_device, "
		"b_port, last_measured, last_outcome, last_ok) "
		"VALUES (:a_host, :a_device, :a_port, :b_host, :b_device, :b_port, "
		":started, :outcome, :ok) "
		"ON CONFLICT DO UPDATE SET "
		"last_measured = max(last_measured, :started), "
		"last_outcome = CASE WHEN :started >= last_measured THEN :outcome "
		"ELSE last_outcome END, "
		"last_ok = CASE WHEN :ok IS NULL THEN last_ok "
		"WHEN last_ok IS NULL THEN :ok ELSE max(last_ok, :ok) END",
	[TSQL_DROPPED_UPSERT] =
		"INSERT INTO probe_dropped (host, spool_full, expired, updated) "
		"VALUES (:host, :spool_full, :expired, :now) "
		"ON CONFLICT (host) DO UPDATE SET spool_full = :spool_full, "
		"expired = :expired, updated = :now",
	[TSQL_PAUSE_UPSERT] =
		"INSERT INTO host_pause (host, paused, since, by_admin) "
		"VALUES (:host, :paused, :now, :by_admin) "
		"ON CONFLICT (host) DO UPDATE SET paused = :paused, since = :now, "
		"by_admin = :by_admin",
	[TSQL_PAUSE_GET] = "SELECT paused FROM host_pause WHERE host = :host",
	/*
	 * The group: the probe's group label, else the switch its first HCA
	 * port attaches to, as the fabric pollers discovered it (its
	 * NodeDescription; schema/004_fabric.sql).
	 */
	[TSQL_PROBES_LOAD] =
		"SELECT p.host, p.address, p.port, p.profiles, "
		"coalesce("
		"(SELECT value FROM probe_label l "
		"WHERE l.probe_id = p.id AND l.key = :group_label), "
		"(SELECT fn.description FROM host h "
		"JOIN device d ON d.host_id = h.id "
		"JOIN fabric_port fp ON fp.node_guid = '0x' || replace(d.node_guid, ':', '') "
		"JOIN fabric_node fn ON fn.guid = fp.remote_guid AND fn.type = 2 "
		"WHERE h.name = p.host ORDER BY d.name, fp.port LIMIT 1)), "
		"(SELECT value FROM probe_label l "
		"WHERE l.probe_id = p.id AND l.key = :rail_label), "
		"coalesce((SELECT paused FROM host_pause h WHERE h.host = p.host), 0), "
		"(SELECT count(*) FROM probe_port pp WHERE pp.probe_id = p.id) "
		"FROM probe p "
		"ORDER BY p.host",
	[TSQL_PORTS_LOAD] =
		"SELECT pp.device, pp.port, pp.state, pp.link_layer, pp.subnet_prefix, "
		"pp.pkeys, pp.lid "
		"FROM probe_port pp JOIN probe p ON p.id = pp.probe_id "
		"ORDER BY p.host, pp.device, pp.port",
	[TSQL_PLAN_DEL] =
		"DELETE FROM plan_entry WHERE period = :period OR period < :period - 1",
	/* columns named: schema/005_evidence.sql adds "confirm" */
	[TSQL_PLAN_INS] =
		"INSERT OR IGNORE INTO plan_entry (id, period, profile, a_host, "
		"a_device, a_port, b_host, b_device, b_port, group_a, group_b, "
		"not_before, deadline, confirm, dlid) "
		"VALUES (:id, :period, :profile, :a_host, :a_device, :a_port, :b_host, "
		":b_device, :b_port, :group_a, :group_b, :not_before, :deadline, "
		":confirm, :dlid)",
	[TSQL_COVER_PAIRS] =
		"SELECT p.id, p.profile, p.a_host, p.a_device, p.a_port, p.b_host, "
		"p.b_device, p.b_port, p.group_a, p.group_b, p.not_before, p.deadline, "
		"coalesce(" PAIR_LAST("a", "b") ", " PAIR_LAST("b", "a") "), "
		"p.confirm, p.dlid "
		"FROM plan_entry p "
		"WHERE p.period = :period "
		"ORDER BY p.a_host, p.not_before",
	[TSQL_COVER_PORTS] =
		"SELECT host, device, port, last FROM ("
		"SELECT p.host, pp.device, pp.port, max("
		"coalesce((SELECT max(started) FROM result r WHERE r.host = p.host "
		"AND r.local_device = pp.device AND r.local_port = pp.port), 0), "
		"coalesce((SELECT max(started) FROM result r WHERE r.peer_host = p.host "
		"AND r.peer_device = pp.device AND r.peer_port = pp.port), 0)) AS last "
		"FROM probe p JOIN probe_port pp ON pp.probe_id = p.id "
		"WHERE pp.state = " REPORT_STR(REPORT_PORT_ACTIVE) " "
		"AND NOT coalesce((SELECT paused FROM host_pause h WHERE h.host = p.host), 0)) "
		"WHERE last < :cutoff "
		"ORDER BY host, device, port",
	[TSQL_RETIRE_PROBE] = "DELETE FROM probe WHERE host = :host",
	[TSQL_RETIRE_PAUSE] = "DELETE FROM host_pause WHERE host = :host",
	[TSQL_RETIRE_DROPPED] = "DELETE FROM probe_dropped WHERE host = :host",
	[TSQL_RETIRE_RESULTS] = "DELETE FROM result WHERE host = :host",
	[TSQL_RETIRE_PAIRS] =
		"DELETE FROM pair_seen WHERE a_host = :host OR b_host = :host",
	[TSQL_RETIRE_PLAN] =
		"DELETE FROM plan_entry WHERE a_host = :host OR b_host = :host",
	[TSQL_PRUNE_RESULTS] =
		"DELETE FROM result WHERE id IN ("
		"SELECT id FROM result WHERE started < :cutoff "
		"ORDER BY started LIMIT :batch)",
	[TSQL_PORT_KNOWN] =
		"SELECT 1 FROM probe_port pp JOIN probe p ON p.id = pp.probe_id "
		"WHERE p.host = :host AND pp.device = :device AND pp.port = :port",
	[TSQL_CAPS_LOAD] =
		"SELECT DISTINCT peer_host, peer_device, peer_port, profile "
		"FROM result WHERE host = :host AND received >= :since",
};
/* clang-format on */

int store_tests_prepare(struct store *st)
{
	for (int i = 0; i < TSQL_COUNT; i++) {
		int rc = sql_prepare(st->db, tsql_text[i],
				     SQLITE_PREPARE_PERSISTENT, &st->tsql[i]);

		if (rc != SQLITE_OK)
			return store_err(st, rc, tsql_text[i]);
	}
	return 0;
}

void store_tests_finalize(struct store *st)
{
	for (int i = 0; i < TSQL_COUNT; i++) {
		sqlite3_finalize(st->tsql[i]);
		st->tsql[i] = NULL;
	}
	map_free(st->caps);
	st->caps = NULL;
}

sqlite3_stmt *store_tstmt(struct store *st, enum store_tsql which)
{
	sqlite3_stmt *s = st->tsql[which];

	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	return s;
}

static void bind_uint(sqlite3_stmt *s, const char *name, long long v)
{
	if (v > 0)
		sql_name_int(s, name, v);
	else
		sql_name_null(s, name);
}

/* ---- registration ---- */

static int reg_json(const struct testapi_reg *r, char **labels, char **profiles)
{
	json_t *l = json_object(), *p = json_array();

	for (size_t i = 0; l && i < r->n_labels; i++)
		json_object_set_new(l, r->labels[i].key,
				    json_string(r->labels[i].value));
	for (size_t i = 0; p && i < r->n_profiles; i++)
		json_array_append_new(p, json_string(r->profiles[i]));
	*labels = l ? json_dumps(l, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	*profiles = p ? json_dumps(p, JSON_COMPACT) : NULL;
	json_decref(l);
	json_decref(p);
	return *labels && *profiles ? 0 : -ENOMEM;
}

static int reg_port(struct store *st, int64_t id,
		    const struct testapi_reg_port *p)
{
	sqlite3_stmt *s = store_tstmt(st, TSQL_PORT_INS);
	json_t *a = json_array();
	char *pk;
	int ret;

	for (size_t i = 0; a && i < p->n_pkeys; i++)
		json_array_append_new(a, json_integer(p->pkeys[i]));
	pk = a ? json_dumps(a, JSON_COMPACT) : NULL;
	json_decref(a);
	if (!pk)
		return -ENOMEM;
	sql_name_int(s, ":probe_id", id);
	sql_name_text(s, ":device", p->device);
	sql_name_int(s, ":port", p->port);
	bind_uint(s, ":state", p->state);
	sql_name_text(s, ":link_layer", p->link_layer);
	if (p->lid >= 0)
		sql_name_int(s, ":lid", p->lid);
	sql_name_text(s, ":subnet_prefix", p->subnet_prefix);
	sqlite3_bind_text(s, sql_param(s, ":pkeys"), pk, -1, SQLITE_TRANSIENT);
	free(pk);
	ret = store_done(st, s, "register port");
	return ret;
}

int store_register(struct store *st, const struct testapi_reg *r, double now)
{
	sqlite3_stmt *s = store_tstmt(st, TSQL_PROBE_UPSERT);
	char *labels = NULL, *profiles = NULL;
	int64_t id = 0;
	int rc, ret = reg_json(r, &labels, &profiles);

	if (ret)
		goto out;
	sql_name_text(s, ":host", r->host);
	sql_name_text(s, ":address", r->address);
	sql_name_int(s, ":port", r->port);
	sql_name_text(s, ":labels", labels);
	sql_name_text(s, ":profiles", profiles);
	sql_name_real(s, ":now", now);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		id = sqlite3_column_int64(s, 0);
	sqlite3_reset(s);
	ret = rc == SQLITE_ROW ? 0 : store_err(st, rc, "register");
	for (int k = 0; !ret && k < 2; k++) {
		s = store_tstmt(st, k ? TSQL_PORT_DEL : TSQL_LABEL_DEL);
		sql_name_int(s, ":probe_id", id);
		ret = store_done(st, s, "register: delete");
	}
	for (size_t i = 0; !ret && i < r->n_labels; i++) {
		s = store_tstmt(st, TSQL_LABEL_INS);
		sql_name_int(s, ":probe_id", id);
		sql_name_text(s, ":key", r->labels[i].key);
		sql_name_text(s, ":value", r->labels[i].value);
		ret = store_done(st, s, "register label");
	}
	for (size_t i = 0; !ret && i < r->n_ports; i++)
		ret = reg_port(st, id, &r->ports[i]);
out:
	free(labels);
	free(profiles);
	return ret;
}

/* ---- results ---- */

static void result_bind(sqlite3_stmt *s, const char *host,
			const struct testapi_result *t, double now)
{
	char fig[64];

	sql_name_text(s, ":result_id", t->id);
	sql_name_text(s, ":host", host);
	sql_name_text(s, ":plan_id", t->plan_id);
	sql_name_text(s, ":profile", t->profile);
	sql_name_text(s, ":test", t->test);
	sql_name_real(s, ":started", t->started);
	sql_name_real(s, ":duration_seconds", t->duration);
	sql_name_text(s, ":local_device", t->local_device);
	bind_uint(s, ":local_port", t->local_port);
	sql_name_text(s, ":peer_host", t->peer_host);
	sql_name_text(s, ":peer_device", t->peer_device);
	bind_uint(s, ":peer_port", t->peer_port);
	sql_name_text(s, ":outcome", testapi_outcome_name(t->outcome));
	sql_name_text(s, ":error", t->error);
	sql_name_text(s, ":wc_status", t->wc_status);
	sql_name_int(s, ":busy", t->busy);
	sql_name_text(s, ":busy_reason", t->busy_reason);
	sql_name_text(s, ":params", t->params);
	sql_name_real(s, ":received", now);
	for (int i = 0; i < TESTAPI_FIG_COUNT; i++) {
		snprintf(fig, sizeof(fig), ":%s", testapi_figs[i].key);
		sql_name_real(s, fig, t->fig[i]);
	}
}

/* Order of two ports: host, then device, then port number. */
static int port_cmp(const char *h1, const char *d1, unsigned p1, const char *h2,
		    const char *d2, unsigned p2)
{
	int c = strcmp(h1, h2);

	if (!c)
		c = strcmp(d1, d2);
	return c ? c : (p1 > p2) - (p1 < p2);
}

/* 1 when @host/@device/@port is a registered probe port, 0 if not. */
static int port_known(struct store *st, const char *host, const char *device,
		      unsigned port)
{
	sqlite3_stmt *s = store_tstmt(st, TSQL_PORT_KNOWN);
	int rc;

	sql_name_text(s, ":host", host);
	sql_name_text(s, ":device", device);
	sql_name_int(s, ":port", port);
	rc = sqlite3_step(s);
	sqlite3_reset(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_err(st, rc, "probe_port");
	return rc == SQLITE_ROW;
}

/*
 * 1 when both ends of @t are registered probe ports, 0 when one is not
 * (or unnamed), or a negative errno. A result with an unregistered end is
 * stored, but names no pair and no link: pair_seen and the baselines stay
 * the size of the fabric, whatever a host posts.
 */
static int result_ends_known(struct store *st, const char *host,
			     const struct testapi_result *t)
{
	int ret;

	if (!t->local_device || !t->local_port || !t->peer_host ||
	    !t->peer_device || !t->peer_port)
		return 0;
	ret = port_known(st, host, t->local_device, t->local_port);
	if (ret > 0)
		ret = port_known(st, t->peer_host, t->peer_device,
				 t->peer_port);
	return ret;
}

/* Bind one end of a pair_seen row: a (@b 0) or b. */
static void pair_end(sqlite3_stmt *s, int b, const char *host,
		     const char *device, unsigned port)
{
	sql_name_text(s, b ? ":b_host" : ":a_host", host);
	sql_name_text(s, b ? ":b_device" : ":a_device", device);
	sql_name_int(s, b ? ":b_port" : ":a_port", port);
}

/* pair_seen for a result between two registered probe ports. */
static int result_pair(struct store *st, const char *host,
		       const struct testapi_result *t)
{
	sqlite3_stmt *s;
	int swap;

	s = store_tstmt(st, TSQL_PAIR_UPSERT);
	swap = port_cmp(host, t->local_device, t->local_port, t->peer_host,
			t->peer_device, t->peer_port) > 0;
	pair_end(s, swap, host, t->local_device, t->local_port);
	pair_end(s, !swap, t->peer_host, t->peer_device, t->peer_port);
	sql_name_real(s, ":started", t->started);
	sql_name_text(s, ":outcome", testapi_outcome_name(t->outcome));
	if (t->outcome == TESTAPI_OK)
		sql_name_real(s, ":ok", t->started);
	return store_done(st, s, "pair_seen");
}

/*
 * What a stored result adds beyond its row, only between two registered
 * probe ports: its pair in pair_seen and its link's judgement (baselines,
 * regressions). Returns 0 or a negative errno.
 */
static int result_links(struct store *st, const char *host,
			const struct testapi_result *t, double now)
{
	int ret = result_ends_known(st, host, t);

	if (ret <= 0)
		return ret;
	ret = result_pair(st, host, t);
	return ret ? ret : store_regress_result(st, host, t, now);
}

/* ---- what one host may add per period ---- */

/* One host's distinct peer ports and profiles of the current period. */
struct tcap {
	unsigned long long period;
	struct map *peers, *profiles; /* keys; values: the tcap (non-NULL) */
};

static void tcap_free(void *v)
{
	struct tcap *c = v;

	if (!c)
		return;
	map_free(c->peers);
	map_free(c->profiles);
	free(c);
}

/* Add @key to @set unless it is there or the set holds @max keys. */
static int tcap_add(struct tcap *c, struct map *set, const char *key,
		    long long max)
{
	if (map_get(set, key))
		return 0;
	if (max && (long long)map_count(set) >= max)
		return -EDQUOT;
	return map_put(set, key, c);
}

/* Fill @c from the host's results received since @since. */
static int tcap_load(struct store *st, struct tcap *c, const char *host,
		     double since)
{
	sqlite3_stmt *s = store_tstmt(st, TSQL_CAPS_LOAD);
	const struct store_opts *o = &st->opts;
	int rc, ret = 0;

	sql_name_text(s, ":host", host);
	sql_name_real(s, ":since", since);
	while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct testapi_result t = {
			.peer_host = (char *)sqlite3_column_text(s, 0),
			.peer_device = (char *)sqlite3_column_text(s, 1),
			.peer_port = (unsigned)sqlite3_column_int64(s, 2),
		};
		const char *profile = (const char *)sqlite3_column_text(s, 3);
		char key[3 * TESTAPI_MAX_NAME + 16];

		/* past a cap, the set is simply full; no cap, no set */
		if (o->results_max_peers &&
		    testapi_peer_key(&t, key, sizeof(key)))
			ret = tcap_add(c, c->peers, key, o->results_max_peers);
		if ((!ret || ret == -EDQUOT) && profile &&
		    o->results_max_profiles)
			ret = tcap_add(c, c->profiles, profile,
				       o->results_max_profiles);
		if (ret == -EDQUOT)
			ret = 0;
	}
	sqlite3_reset(s);
	if (!ret && rc != SQLITE_DONE)
		ret = store_err(st, rc, "result caps");
	return ret;
}

/* @host's sets for the period of @now: reset and reloaded as it turns. */
static int tcap_get(struct store *st, const char *host, double now,
		    struct tcap **out)
{
	double period = st->opts.results_period;
	unsigned long long p = (unsigned long long)floor(now / period);
	struct tcap *c;
	int ret;

	if (!st->caps && map_new(tcap_free, &st->caps))
		return -ENOMEM;
	c = map_get(st->caps, host);
	if (c && c->period == p) {
		*out = c;
		return 0;
	}
	c = calloc(1, sizeof(*c));
	if (!c || map_new(NULL, &c->peers) || map_new(NULL, &c->profiles)) {
		tcap_free(c);
		return -ENOMEM;
	}
	c->period = p;
	ret = tcap_load(st, c, host, (double)p * period);
	if (!ret)
		ret = map_put(st->caps, host, c);
	if (ret) {
		tcap_free(c);
		return ret;
	}
	*out = c;
	return 0;
}

/*
 * Would the keys of @r (@peers: peer ports, else profiles) pass @max in
 * @set? Counts the batch's new distinct keys in a scratch map first, so
 * a refused batch takes nothing of the cap. *@bad: the first result past
 * it. 0, -EDQUOT, -ENOMEM.
 */
static int tcap_check(const struct testapi_results *r, int peers,
		      struct map *set, long long max, size_t *bad)
{
	struct map *fresh;
	char key[3 * TESTAPI_MAX_NAME + 16];
	int ret = 0;

	if (!max)
		return 0;
	if (map_new(NULL, &fresh))
		return -ENOMEM;
	for (size_t i = 0; !ret && i < r->n; i++) {
		const char *k =
			peers ? testapi_peer_key(&r->v[i], key, sizeof(key))
			      : r->v[i].profile;

		if (!k || map_get(set, k) || map_get(fresh, k))
			continue;
		if ((long long)(map_count(set) + map_count(fresh)) >= max) {
			*bad = i;
			ret = -EDQUOT;
		} else {
			ret = map_put(fresh, k, set);
		}
	}
	map_free(fresh);
	return ret;
}

/* Add the keys of @r to @c's capped sets (after tcap_check() passed). */
static int tcap_take(struct tcap *c, const struct store_opts *o,
		     const struct testapi_results *r)
{
	char key[3 * TESTAPI_MAX_NAME + 16];
	int ret = 0;

	for (size_t i = 0; !ret && i < r->n; i++) {
		const char *k = testapi_peer_key(&r->v[i], key, sizeof(key));

		if (k && o->results_max_peers)
			ret = tcap_add(c, c->peers, k, 0);
		if (!ret && o->results_max_profiles)
			ret = tcap_add(c, c->profiles, r->v[i].profile, 0);
	}
	return ret;
}

/* The caps of @r: 0, -EINVAL with the reason in last_error, -errno. */
static int results_capped(struct store *st, const struct testapi_results *r,
			  double now)
{
	const struct store_opts *o = &st->opts;
	struct tcap *c;
	size_t bad = 0;
	int ret;

	if (o->results_period <= 0 ||
	    (!o->results_max_peers && !o->results_max_profiles))
		return 0;
	ret = tcap_get(st, r->host, now, &c);
	if (!ret && (ret = tcap_check(r, 1, c->peers, o->results_max_peers,
				      &bad)) == -EDQUOT) {
		snprintf(st->last_error, sizeof(st->last_error),
			 "results[%zu].peer: host '%s' would name more than "
			 "%lld distinct peer ports this period "
			 "(results_max_peers)",
			 bad, r->host, o->results_max_peers);
		return -EINVAL;
	}
	if (!ret &&
	    (ret = tcap_check(r, 0, c->profiles, o->results_max_profiles,
			      &bad)) == -EDQUOT) {
		snprintf(st->last_error, sizeof(st->last_error),
			 "results[%zu].profile: host '%s' would name more "
			 "than %lld distinct profiles this period "
			 "(results_max_profiles)",
			 bad, r->host, o->results_max_profiles);
		return -EINVAL;
	}
	return ret ? ret : tcap_take(c, o, r);
}

/* "started" within the window of the collector's clock. */
static int results_in_window(struct store *st, const struct testapi_results *r,
			     double now)
{
	const struct store_opts *o = &st->opts;

	return testapi_results_window(
		r, now, o->results_max_age > 0 ? o->results_max_age : INFINITY,
		o->results_max_ahead > 0 ? o->results_max_ahead : INFINITY,
		st->last_error, sizeof(st->last_error));
}

int store_results(struct store *st, const struct testapi_results *r, double now,
		  size_t *stored, size_t *dups)
{
	sqlite3_stmt *s;
	int ret;

	*stored = *dups = 0;
	ret = results_in_window(st, r, now);
	if (!ret)
		ret = results_capped(st, r, now);
	for (size_t i = 0; !ret && i < r->n; i++) {
		s = store_tstmt(st, TSQL_RESULT_INS);
		result_bind(s, r->host, &r->v[i], now);
		ret = store_done(st, s, "result");
		if (ret)
			break;
		if (sqlite3_changes(st->db) == 0) {
			(*dups)++;
			continue;
		}
		(*stored)++;
		ret = result_links(st, r->host, &r->v[i], now);
	}
	if (!ret)
		ret = store_regress_flush(st, now);
	if (!ret && r->has_dropped) {
		s = store_tstmt(st, TSQL_DROPPED_UPSERT);
		sql_name_text(s, ":host", r->host);
		sql_name_int(s, ":spool_full", r->spool_full);
		sql_name_int(s, ":expired", r->expired);
		sql_name_real(s, ":now", now);
		ret = store_done(st, s, "probe_dropped");
	}
	return ret;
}

/* ---- pause ---- */

int store_pause(struct store *st, const char *host, int paused, int by_admin,
		double now)
{
	sqlite3_stmt *s = store_tstmt(st, TSQL_PAUSE_UPSERT);

	sql_name_text(s, ":host", host);
	sql_name_int(s, ":paused", paused);
	sql_name_real(s, ":now", now);
	sql_name_int(s, ":by_admin", by_admin);
	return store_done(st, s, "pause");
}

int store_paused(struct store *st, const char *host)
{
	sqlite3_stmt *s = store_tstmt(st, TSQL_PAUSE_GET);
	int rc, v = 0;

	sql_name_text(s, ":host", host);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		v = sqlite3_column_int(s, 0) != 0;
	sqlite3_reset(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_err(st, rc, "pause state");
	return v;
}

int store_tests_retire(struct store *st, const char *host, size_t *changes)
{
	*changes = 0;
	if (st->caps)
		map_del(st->caps, host);
	for (int k = TSQL_RETIRE_PROBE; k <= TSQL_RETIRE_PLAN; k++) {
		sqlite3_stmt *s = store_tstmt(st, (enum store_tsql)k);
		int ret;

		sql_name_text(s, ":host", host);
		ret = store_done(st, s, "retire");
		if (ret)
			return ret;
		*changes += (size_t)sqlite3_changes(st->db);
	}
	return 0;
}

int store_prune_results(struct store *st, double cutoff, long long batch,
			size_t *deleted)
{
	sqlite3_stmt *s = store_tstmt(st, TSQL_PRUNE_RESULTS);
	int ret;

	sql_name_real(s, ":cutoff", cutoff);
	sql_name_int(s, ":batch", batch);
	ret = store_done(st, s, "prune results");
	*deleted = ret ? 0 : (size_t)sqlite3_changes(st->db);
	return ret;
}
