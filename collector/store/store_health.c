// SPDX-License-Identifier: MIT
/*
 * One host's verdict from the database (store_health.h): its devices and
 * ports with what health_port remembers of them, the switch port facing
 * each port, the counters of both over their rules' windows (the history
 * tables; a counter unchanged since before a window costs no read), its
 * open suspects and regressions. health.c makes the reasons;
 * health_merge() the sticky window; only what changed is written, so a
 * healthy host costs reads only. The API answer and retirement are in
 * store_health_api.c.
 */
#include "store_health_int.h"
#include "vec.h"
#include "counters.h"
#include "health.h"
#include "log.h"
#include "report.h"
#include "report_fabric.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COUNTER_NAMES                                                          \
	"('link_downed', 'carrier_changes', 'link_error_recovery', "           \
	"'symbol_error', 'excessive_buffer_overrun_errors')"

/* clang-format off */
static const char *const hsql_text[HSQL_COUNT] = {
	/* every port of the host with its device and what health_port
	 * remembers of it, in one statement */
	[HSQL_PORTS] =
		"SELECT d.name, d.node_guid, d.pcie_cur_speed_gts, "
		"d.pcie_max_speed_gts, d.pcie_cur_width, d.pcie_max_width, "
		"d.aer_fatal, p.id, p.port, p.state, p.phys_state, "
		"p.rate_bytes, hp.active_seen, hp.down_since, "
		"hp.missing_since, hp.best_rate, hp.host IS NOT NULL "
		"FROM host h JOIN device d ON d.host_id = h.id "
		"LEFT JOIN port p ON p.device_id = d.id "
		"LEFT JOIN health_port hp ON hp.host = h.name AND hp.device = d.name "
		"AND hp.port = p.port "
		"WHERE h.name = :host "
		"ORDER BY d.name, p.port",
	[HSQL_HP_PUT] =
		"INSERT INTO health_port (host, device, port, active_seen, "
		"down_since, missing_since, best_rate) "
		"VALUES (:host, :device, :port, :active_seen, :down_since, "
		":missing_since, :best_rate) "
		"ON CONFLICT (host, device, port) DO UPDATE SET "
		"active_seen = :active_seen, down_since = :down_since, "
		"missing_since = :missing_since, best_rate = :best_rate",
	[HSQL_SWITCH] =
		"SELECT fp.id, fp.node_guid, fn.description, fp.port, fp.degraded "
		"FROM fabric_port fp JOIN fabric_node fn ON fn.guid = fp.node_guid "
		"WHERE fp.remote_guid = :guid AND fp.remote_port = :port "
		"AND fn.type = 2 "
		"ORDER BY fp.id LIMIT 1",
	/* every column of the series index: lookups, not a scan */
	[HSQL_COUNTERS] =
		"SELECT id, source, name, value, changed FROM series "
		"WHERE port_id = :port_id AND source IN (0, 2) "
		"AND name IN " COUNTER_NAMES,
	[HSQL_SAMPLE_AT] =
		"SELECT value, ts FROM sample "
		"WHERE series_id = :series_id AND ts <= :cutoff "
		"ORDER BY ts DESC LIMIT 1",
	[HSQL_SAMPLE_FIRST] =
		"SELECT value, ts FROM sample "
		"WHERE series_id = :series_id AND ts > :cutoff "
		"ORDER BY ts LIMIT 1",
	[HSQL_FCOUNTERS] =
		"SELECT id, 0, name, value, changed FROM fabric_series "
		"WHERE port_id = :port_id AND name IN " COUNTER_NAMES,
	[HSQL_FSAMPLE_AT] =
		"SELECT value, ts FROM fabric_sample "
		"WHERE series_id = :series_id AND ts <= :cutoff "
		"ORDER BY ts DESC LIMIT 1",
	[HSQL_FSAMPLE_FIRST] =
		"SELECT value, ts FROM fabric_sample "
		"WHERE series_id = :series_id AND ts > :cutoff "
		"ORDER BY ts LIMIT 1",
	[HSQL_SUSPECTS] =
		"SELECT kind, device, port, profile, metric, since, baseline, "
		"figure, worst, bad_results, judged_results, peers_bad, "
		"peers_exonerating FROM suspect "
		"WHERE host = :host AND closed IS NULL "
		"ORDER BY id",
	/* by a_host, then b_host (their indexes; "+closed": not by the
	 * index of every open regression) */
	[HSQL_REGRESSIONS] =
		"SELECT id, a_host, a_device, a_port, b_host, b_device, "
		"b_port, profile, metric, opened, baseline, figure, last FROM regression "
		"WHERE a_host = :host AND +closed IS NULL "
		"UNION ALL "
		"SELECT id, a_host, a_device, a_port, b_host, b_device, "
		"b_port, profile, metric, opened, baseline, figure, last FROM regression "
		"WHERE b_host = :host AND a_host != :host AND +closed IS NULL "
		"ORDER BY id",
	[HSQL_REASONS] =
		"SELECT key, kind, severity, device, port, reason, evidence, "
		"active, first_seen, last_seen FROM health_reason "
		"WHERE host = :host",
	[HSQL_REASON_PUT] =
		"INSERT INTO health_reason (host, key, kind, severity, device, "
		"port, reason, evidence, active, first_seen, last_seen) "
		"VALUES (:host, :key, :kind, :severity, :device, :port, "
		":reason, :evidence, :active, :first_seen, :last_seen) "
		"ON CONFLICT (host, key) DO UPDATE SET "
		"kind = :kind, severity = :severity, device = :device, port = :port, "
		"reason = :reason, evidence = :evidence, active = :active, "
		"first_seen = :first_seen, last_seen = :last_seen",
	[HSQL_REASON_DEL] =
		"DELETE FROM health_reason WHERE host = :host AND key = :key",
	[HSQL_VERDICT_GET] =
		"SELECT verdict, since FROM host_health WHERE host = :host",
	[HSQL_VERDICT_PUT] =
		"INSERT INTO host_health (host, verdict, since, updated) "
		"VALUES (:host, :verdict, :now, :now) "
		"ON CONFLICT (host) DO UPDATE SET "
		"verdict = :verdict, since = :now, updated = :now",
	[HSQL_HOST] = "SELECT last_report FROM host WHERE name = :host",
	/* the switch's ports, then the device behind each through the
	 * device_guid_hex index ("+": no affinity, so the index applies);
	 * changed at :now: in the report being stored */
	[HSQL_FABRIC_HOSTS] =
		"SELECT DISTINCT h.name FROM fabric_port fp "
		"CROSS JOIN device d "
		"ON '0x' || replace(d.node_guid, ':', '') = +fp.remote_guid "
		"CROSS JOIN host h ON h.id = d.host_id "
		"WHERE fp.node_guid = :guid "
		"AND (fp.changed >= :now OR EXISTS ("
		"SELECT 1 FROM fabric_series fs WHERE fs.port_id = fp.id "
		"AND fs.changed >= :now AND fs.name IN " COUNTER_NAMES "))",
	[HSQL_RETIRE_VERDICT] = "DELETE FROM host_health WHERE host = :host",
	[HSQL_RETIRE_REASONS] = "DELETE FROM health_reason WHERE host = :host",
	[HSQL_RETIRE_PORTS] = "DELETE FROM health_port WHERE host = :host",
	[HSQL_SAVEPOINT] = "SAVEPOINT health",
	[HSQL_RELEASE] = "RELEASE health",
	[HSQL_ROLLBACK_TO] = "ROLLBACK TO health",
};
/* clang-format on */

int store_health_prepare(struct store *st, const struct health_opts *o)
{
	struct store_health *h;

	if (!o)
		return 0;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->o = o;
	st->health = h;
	for (int i = 0; i < HSQL_COUNT; i++) {
		int rc = sql_prepare(st->db, hsql_text[i],
				     SQLITE_PREPARE_PERSISTENT, &h->s[i]);

		if (rc != SQLITE_OK)
			return store_err(st, rc, hsql_text[i]);
	}
	return 0;
}

void store_health_finalize(struct store *st)
{
	struct store_health *h = st->health;

	if (!h)
		return;
	for (int i = 0; i < HSQL_COUNT; i++)
		sqlite3_finalize(h->s[i]);
	free(h);
	st->health = NULL;
}

sqlite3_stmt *health_stmt(struct store *st, enum store_hsql which)
{
	sqlite3_stmt *s = st->health->s[which];

	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	return s;
}

double health_col_time(sqlite3_stmt *s, int i)
{
	return sqlite3_column_type(s, i) == SQLITE_NULL
		       ? -1
		       : sqlite3_column_double(s, i);
}

static int64_t col_i64(sqlite3_stmt *s, int i)
{
	return sqlite3_column_type(s, i) == SQLITE_NULL
		       ? -1
		       : sqlite3_column_int64(s, i);
}

const char *health_col_text(sqlite3_stmt *s, int i)
{
	const char *v = (const char *)sqlite3_column_text(s, i);

	return v ? v : "";
}

/* A time at @name; a negative one (not yet, or no longer) as NULL. */
static void bind_time(sqlite3_stmt *s, const char *name, double v)
{
	if (v >= 0)
		sql_name_real(s, name, v);
	else
		sql_name_null(s, name);
}

/* ---- counters over their windows ---- */

/* The value of series @id at @cutoff (or its first after it), from
 * history table statements @at/@first. 0, 1 (no history) or -errno. */
static int value_then(struct store *st, enum store_hsql at,
		      enum store_hsql first, int64_t id, double cutoff,
		      uint64_t *value, double *ts)
{
	enum store_hsql which[2] = {at, first};

	for (int i = 0; i < 2; i++) {
		sqlite3_stmt *s = health_stmt(st, which[i]);
		int rc;

		sql_name_int(s, ":series_id", id);
		sql_name_real(s, ":cutoff", cutoff);
		rc = sqlite3_step(s);
		if (rc == SQLITE_ROW) {
			*value = (uint64_t)sqlite3_column_int64(s, 0);
			*ts = sqlite3_column_double(s, 1);
			sqlite3_reset(s);
			return 0;
		}
		sqlite3_reset(s);
		if (rc != SQLITE_DONE)
			return store_err(st, rc, "health history");
	}
	return 1;
}

static const struct health_counter *counter_of(int source, const char *name)
{
	for (size_t i = 0; i < health_n_counters; i++)
		if (!strcmp(health_counters[i].name, name) &&
		    health_counters[i].source == source)
			return &health_counters[i];
	return NULL;
}

/*
 * The counter reasons of one port: @list is HSQL_COUNTERS (a host's
 * series) or HSQL_FCOUNTERS (the facing switch port's, @c->sw_* set),
 * @port_id the port whose series to read.
 */
static int port_counters(struct health_ctx *c, int64_t port_id,
			 enum store_hsql list, struct health_count *hc)
{
	int fabric = list == HSQL_FCOUNTERS;
	sqlite3_stmt *s = health_stmt(c->st, list);
	int rc, ret = 0;

	sql_name_int(s, ":port_id", port_id);
	while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *name = health_col_text(s, 2);
		const struct health_counter *def = counter_of(
			fabric ? CSRC_IB : sqlite3_column_int(s, 1), name);
		const struct health_rule *rule;
		double changed = sqlite3_column_double(s, 4), cutoff, ts = 0;
		char copy[HEALTH_NAME_MAX];

		if (!def || (fabric && def->source != CSRC_IB))
			continue;
		rule = &c->o->rule[def->kind];
		cutoff = c->now - (double)rule->window;
		snprintf(copy, sizeof(copy), "%s", name);
		hc->kind = def->kind;
		hc->name = copy;
		hc->now = hc->then = (uint64_t)sqlite3_column_int64(s, 3);
		hc->seconds = (double)rule->window;
		/*
		 * No increase above max is possible when the counter did not
		 * change since before the window, or is at most max now (an
		 * increase, reset or not, is at most the value): no history
		 * read, which is every healthy port's case.
		 */
		if (changed > cutoff && hc->now > (uint64_t)rule->max) {
			int64_t id = sqlite3_column_int64(s, 0);

			ret = value_then(
				c->st,
				fabric ? HSQL_FSAMPLE_AT : HSQL_SAMPLE_AT,
				fabric ? HSQL_FSAMPLE_FIRST : HSQL_SAMPLE_FIRST,
				id, cutoff, &hc->then, &ts);
			if (ret == 1)
				ret = 0;
			else if (!ret && ts > cutoff)
				hc->seconds = c->now - ts;
		}
		if (!ret)
			ret = health_counter_reason(c->o, hc, &c->cur);
	}
	sqlite3_reset(s);
	if (!ret && rc != SQLITE_DONE && rc != SQLITE_ROW)
		ret = store_err(c->st, rc, "health counters");
	return ret;
}

/* The switch port facing @p (device GUID @guid), its degraded text and
 * counters. */
static int switch_side(struct health_ctx *c, const char *guid,
		       struct health_port *p, char *desc, size_t dlen,
		       char *deg, size_t deglen)
{
	sqlite3_stmt *s = health_stmt(c->st, HSQL_SWITCH);
	struct health_count hc = {.device = p->device, .port = p->port};
	char sw_guid[24];
	int64_t id;
	int rc;

	sql_name_text(s, ":guid", guid);
	sql_name_int(s, ":port", p->port);
	rc = sqlite3_step(s);
	if (rc != SQLITE_ROW) {
		sqlite3_reset(s);
		return rc == SQLITE_DONE ? 0 : store_err(c->st, rc, "switch");
	}
	id = sqlite3_column_int64(s, 0);
	snprintf(sw_guid, sizeof(sw_guid), "%s", health_col_text(s, 1));
	snprintf(desc, dlen, "%s", health_col_text(s, 2));
	p->switch_port = sqlite3_column_int(s, 3);
	p->switch_desc = desc;
	if (sqlite3_column_type(s, 4) != SQLITE_NULL) {
		snprintf(deg, deglen, "%s", health_col_text(s, 4));
		p->switch_degraded = deg;
	}
	sqlite3_reset(s);
	hc.sw_desc = desc;
	hc.sw_guid = sw_guid;
	hc.sw_port = p->switch_port;
	return port_counters(c, id, HSQL_FCOUNTERS, &hc);
}

/* ---- ports: what health_port remembers, updated on a change ---- */

struct hp_row {
	double active_seen, down_since, missing_since;
	int64_t best_rate;
};

static int hp_put(struct health_ctx *c, const char *device, int port,
		  const struct hp_row *r)
{
	sqlite3_stmt *s = health_stmt(c->st, HSQL_HP_PUT);

	sql_name_text(s, ":host", c->host);
	sql_name_text(s, ":device", device);
	sql_name_int(s, ":port", port);
	bind_time(s, ":active_seen", r->active_seen);
	bind_time(s, ":down_since", r->down_since);
	bind_time(s, ":missing_since", r->missing_since);
	if (r->best_rate >= 0)
		sql_name_int(s, ":best_rate", r->best_rate);
	return store_done(c->st, s, "health_port");
}

/* 1 / 0 when @c->report holds / lacks @device's @port, -1 unknown. */
static int port_present(const struct health_ctx *c, const char *device,
			int port)
{
	const struct report *r = c->report;

	if (!r)
		return -1;
	for (size_t i = 0; i < r->n_devices; i++) {
		if (strcmp(r->devices[i].name, device))
			continue;
		for (size_t j = 0; j < r->devices[i].n_ports; j++)
			if ((int)r->devices[i].ports[j].port == port)
				return 1;
	}
	return 0;
}

/* The transitions of one port (state, rate, presence) at @now. */
static void hp_next(const struct health_port *p, int present, double now,
		    struct hp_row *r)
{
	int active = report_port_up(p->state);

	if (present == 0 && r->missing_since < 0)
		r->missing_since = now;
	if (present == 1)
		r->missing_since = -1;
	if (present == 0)
		return;
	if (active && (r->active_seen < 0 || r->down_since >= 0)) {
		r->active_seen = now;
		r->down_since = -1;
	}
	if (active && p->rate_bytes > r->best_rate)
		r->best_rate = p->rate_bytes;
	if (!active && r->active_seen >= 0 && r->down_since < 0)
		r->down_since = now;
}

/* A port as HSQL_PORTS reads it, with its device. */
struct port_fact {
	struct health_port p;
	struct hp_row was;
	int64_t id; /* 0: a device without ports */
	int known;  /* health_port has a row */
	char device[HEALTH_NAME_MAX], guid[48];
	struct report_pcie pcie;
};

/*
 * With the report just stored: 1 when one of @c's health counters of the
 * port is above its max (or saturated) in it, so that the history must be
 * read; 0 when none can be a reason (no query at all). Without a report:
 * 1.
 */
static int counters_due(const struct health_ctx *c, const char *device,
			int port)
{
	const struct report_port *rp = NULL;
	const struct report *r = c->report;

	if (!r)
		return 1;
	for (size_t i = 0; !rp && i < r->n_devices; i++)
		for (size_t j = 0; !strcmp(r->devices[i].name, device) &&
				   j < r->devices[i].n_ports;
		     j++)
			if ((int)r->devices[i].ports[j].port == port)
				rp = &r->devices[i].ports[j];
	for (size_t k = 0; rp && k < health_n_counters; k++) {
		const struct health_counter *hc = &health_counters[k];
		const struct counter_def *def =
			counters_lookup(CSRC_IB, hc->name);

		for (size_t i = 0; i < rp->n_counters[hc->source]; i++) {
			const struct report_counter *x =
				&rp->counters[hc->source][i];

			if (strcmp(x->name, hc->name))
				continue;
			if (x->value > (uint64_t)c->o->rule[hc->kind].max ||
			    (def && def->width &&
			     counters_saturated(def, x->value)))
				return 1;
		}
	}
	return 0;
}

static int port_judge(struct health_ctx *c, struct port_fact *f)
{
	struct health_port *p = &f->p;
	char desc[REPORT_MAX_TEXT + 1], deg[REPORT_MAX_TEXT + 1];
	struct health_count hc = {.device = p->device, .port = p->port};
	struct hp_row r = f->was;
	int ret = 0;

	hp_next(p, port_present(c, p->device, p->port), c->now, &r);
	if (memcmp(&r, &f->was, sizeof(r)) || !f->known)
		ret = hp_put(c, p->device, p->port, &r);
	p->active_seen = r.active_seen;
	p->down_since = r.down_since;
	p->missing_since = r.missing_since;
	p->best_rate = r.best_rate;
	if (!ret && c->o->switch_ports && f->guid[0])
		ret = switch_side(c, f->guid, p, desc, sizeof(desc), deg,
				  sizeof(deg));
	if (!ret)
		ret = health_port_reasons(c->o, p, &c->cur);
	if (!ret && p->missing_since < 0 && counters_due(c, p->device, p->port))
		ret = port_counters(c, f->id, HSQL_COUNTERS, &hc);
	return ret;
}

/* "b859:9f03:00d4:0a1c" -> "0xb8599f0300d40a1c" (the fabric's form). */
static void guid_hex(const char *g, char *out, size_t len)
{
	size_t k = 2;

	out[0] = '\0';
	if (!*g || len < 3)
		return;
	memcpy(out, "0x", 2);
	for (; *g && k < len - 1; g++)
		if (*g != ':')
			out[k++] = *g;
	out[k] = '\0';
}

static double col_speed(sqlite3_stmt *s, int i)
{
	return sqlite3_column_type(s, i) == SQLITE_NULL
		       ? -1
		       : sqlite3_column_double(s, i);
}

static void port_fact_row(sqlite3_stmt *s, struct port_fact *x)
{
	memset(x, 0, sizeof(*x));
	snprintf(x->device, sizeof(x->device), "%s", health_col_text(s, 0));
	guid_hex(health_col_text(s, 1), x->guid, sizeof(x->guid));
	x->pcie.cur_speed_gts = col_speed(s, 2);
	x->pcie.max_speed_gts = col_speed(s, 3);
	x->pcie.cur_width = (int)col_i64(s, 4);
	x->pcie.max_width = (int)col_i64(s, 5);
	x->pcie.aer_fatal = col_i64(s, 6);
	x->id = sqlite3_column_type(s, 7) == SQLITE_NULL
			? 0
			: sqlite3_column_int64(s, 7);
	x->p.port = sqlite3_column_int(s, 8);
	x->p.state = (int)col_i64(s, 9);
	x->p.phys_state = (int)col_i64(s, 10);
	x->p.rate_bytes = col_i64(s, 11);
	x->was.active_seen = health_col_time(s, 12);
	x->was.down_since = health_col_time(s, 13);
	x->was.missing_since = health_col_time(s, 14);
	x->was.best_rate = col_i64(s, 15);
	x->known = sqlite3_column_int(s, 16);
}

/* Every device of the host (its PCIe link and AER) and port: read them
 * first (health_port is written while they are judged), then judge. */
static int host_devices(struct health_ctx *c)
{
	sqlite3_stmt *s = health_stmt(c->st, HSQL_PORTS);
	struct port_fact *f = NULL;
	size_t n = 0, cap = 0;
	int rc, ret = 0;

	sql_name_text(s, ":host", c->host);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (vec_grow(&f, &cap, n, sizeof(*f))) {
			ret = -ENOMEM;
			break;
		}
		port_fact_row(s, &f[n++]);
	}
	sqlite3_reset(s);
	if (!ret && rc != SQLITE_DONE)
		ret = store_err(c->st, rc, "health ports");
	for (size_t i = 0; !ret && i < n; i++) {
		f[i].p.device = f[i].device;
		if (!i || strcmp(f[i].device, f[i - 1].device))
			ret = health_pcie_reasons(c->o, f[i].device, &f[i].pcie,
						  &c->cur);
		if (!ret && f[i].id)
			ret = port_judge(c, &f[i]);
	}
	free(f);
	return ret;
}

static int host_suspects(struct health_ctx *c)
{
	sqlite3_stmt *s = health_stmt(c->st, HSQL_SUSPECTS);
	int rc, ret = 0;

	sql_name_text(s, ":host", c->host);
	while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct health_suspect x = {
			.kind = health_col_text(s, 0),
			.device = health_col_text(s, 1),
			.port = sqlite3_column_int(s, 2),
			.profile = health_col_text(s, 3),
			.metric = health_col_text(s, 4),
			.since = sqlite3_column_double(s, 5),
			.baseline = sqlite3_column_double(s, 6),
			.figure = sqlite3_column_double(s, 7),
			.worst = sqlite3_column_double(s, 8),
			.bad_results = sqlite3_column_int64(s, 9),
			.judged_results = sqlite3_column_int64(s, 10),
			.peers_bad = sqlite3_column_int64(s, 11),
			.peers_exonerating = sqlite3_column_int64(s, 12),
		};

		ret = health_suspect_reason(c->o, &x, &c->cur);
	}
	sqlite3_reset(s);
	if (!ret && rc != SQLITE_DONE && rc != SQLITE_ROW)
		ret = store_err(c->st, rc, "health suspects");
	return ret;
}

static int host_regressions(struct health_ctx *c)
{
	sqlite3_stmt *s = health_stmt(c->st, HSQL_REGRESSIONS);
	int rc, ret = 0;

	sql_name_text(s, ":host", c->host);
	while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		/* this host's end first: a, unless it is only b */
		int a = !strcmp(health_col_text(s, 1), c->host);
		int l = a ? 2 : 5, p = a ? 5 : 2;
		struct health_regression x = {
			.id = sqlite3_column_int64(s, 0),
			.local_device = health_col_text(s, l),
			.local_port = sqlite3_column_int(s, l + 1),
			.peer_host = health_col_text(s, p - 1),
			.peer_device = health_col_text(s, p),
			.peer_port = sqlite3_column_int(s, p + 1),
			.profile = health_col_text(s, 7),
			.metric = health_col_text(s, 8),
			.opened = sqlite3_column_double(s, 9),
			.baseline = sqlite3_column_double(s, 10),
			.figure = sqlite3_column_double(s, 11),
			.last = sqlite3_column_double(s, 12),
		};

		ret = health_regression_reason(c->o, &x, &c->cur);
	}
	sqlite3_reset(s);
	if (!ret && rc != SQLITE_DONE && rc != SQLITE_ROW)
		ret = store_err(c->st, rc, "health regressions");
	return ret;
}

/* ---- the saved reasons and verdict ---- */

static int reasons_load(struct health_ctx *c, struct health_list *old)
{
	sqlite3_stmt *s = health_stmt(c->st, HSQL_REASONS);
	int rc, ret = 0;

	sql_name_text(s, ":host", c->host);
	while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct health_reason *r;

		ret = health_reason_row(s, old, &r);
	}
	sqlite3_reset(s);
	if (!ret && rc != SQLITE_DONE && rc != SQLITE_ROW)
		ret = store_err(c->st, rc, "health reasons");
	return ret;
}

static int reason_put(struct health_ctx *c, const struct health_reason *r)
{
	sqlite3_stmt *s = health_stmt(c->st, HSQL_REASON_PUT);

	sql_name_text(s, ":host", c->host);
	sql_name_text(s, ":key", r->key);
	sql_name_text(s, ":kind", health_kind_name(r->kind));
	sql_name_text(s, ":severity", health_level_name(r->level));
	sql_name_text(s, ":device", r->device[0] ? r->device : NULL);
	if (r->port >= 0)
		sql_name_int(s, ":port", r->port);
	sql_name_text(s, ":reason", r->text);
	sql_name_text(s, ":evidence", r->evidence ? r->evidence : "{}");
	sql_name_int(s, ":active", r->active);
	sql_name_real(s, ":first_seen", r->first_seen);
	sql_name_real(s, ":last_seen", r->last_seen);
	return store_done(c->st, s, "health_reason");
}

static int reason_del(struct health_ctx *c, const char *key)
{
	sqlite3_stmt *s = health_stmt(c->st, HSQL_REASON_DEL);

	sql_name_text(s, ":host", c->host);
	sql_name_text(s, ":key", key);
	return store_done(c->st, s, "health_reason");
}

static int verdict_save(struct health_ctx *c, int level)
{
	sqlite3_stmt *s = health_stmt(c->st, HSQL_VERDICT_GET);
	const char *name = health_level_name(level);
	int rc, same;

	sql_name_text(s, ":host", c->host);
	rc = sqlite3_step(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		sqlite3_reset(s);
		return store_err(c->st, rc, "host_health");
	}
	same = rc == SQLITE_ROW && !strcmp(health_col_text(s, 0), name);
	sqlite3_reset(s);
	if (same)
		return 0;
	if (rc == SQLITE_ROW || level != HEALTH_HEALTHY)
		log_info("health: %s is %s", c->host, name);
	s = health_stmt(c->st, HSQL_VERDICT_PUT);
	sql_name_text(s, ":host", c->host);
	sql_name_text(s, ":verdict", name);
	sql_name_real(s, ":now", c->now);
	return store_done(c->st, s, "host_health");
}

/* Merge with the saved reasons, write what changed and the verdict. */
static int host_save(struct health_ctx *c)
{
	struct health_list old = {0};
	int ret = reasons_load(c, &old), level = 0;

	if (!ret)
		ret = level = health_merge(&c->cur, &old, c->now,
					   (double)c->o->quiet_seconds);
	for (size_t i = 0; ret >= 0 && i < c->cur.n; i++)
		if (c->cur.v[i].dirty)
			ret = reason_put(c, &c->cur.v[i]);
	for (size_t i = 0; ret >= 0 && i < old.n; i++) {
		int kept = 0;

		for (size_t j = 0; j < c->cur.n && !kept; j++)
			kept = !strcmp(c->cur.v[j].key, old.v[i].key);
		if (!kept)
			ret = reason_del(c, old.v[i].key);
	}
	health_list_free(&old);
	if (ret >= 0)
		ret = verdict_save(c, level);
	return ret < 0 ? ret : 0;
}

int health_evaluate(struct store *st, const char *host, double now,
		    const struct report *r)
{
	struct health_ctx c = {
		.st = st,
		.o = st->health->o,
		.host = host,
		.now = now,
		.report = r,
	};
	sqlite3_stmt *s = health_stmt(st, HSQL_HOST);
	int rc, ret;

	sql_name_text(s, ":host", host);
	rc = sqlite3_step(s);
	sqlite3_reset(s);
	if (rc == SQLITE_DONE)
		return -ENOENT; /* never reported: nothing to judge */
	if (rc != SQLITE_ROW)
		return store_err(st, rc, "health host");
	ret = host_devices(&c);
	if (!ret)
		ret = host_suspects(&c);
	if (!ret)
		ret = host_regressions(&c);
	if (!ret)
		ret = host_save(&c);
	health_list_free(&c.cur);
	return ret;
}

int store_health_host(struct store *st, const char *host, double now)
{
	int ret;

	if (!st->health)
		return 0;
	ret = health_evaluate(st, host, now, NULL);
	return ret == -ENOENT ? 0 : ret;
}
