// SPDX-License-Identifier: MIT
/*
 * The health store's doors besides judging (store_health.h): the hook
 * where reports land (the reporting host, and the hosts behind the
 * switch ports a fabric sweep changed), the GET /api/v1/hosts/NAME/health
 * answer, and retirement.
 */
#include "store_health_int.h"
#include "vec.h"
#include "log.h"
#include "report.h"
#include "report_fabric.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int health_reason_row(sqlite3_stmt *s, struct health_list *l,
		      struct health_reason **out)
{
	struct health_reason *r = health_list_add(l);
	const char *kind = health_col_text(s, 1);

	if (!r)
		return -ENOMEM;
	r->evidence = strdup(health_col_text(s, 6));
	if (!r->evidence) {
		l->n--;
		return -ENOMEM;
	}
	snprintf(r->key, sizeof(r->key), "%s", health_col_text(s, 0));
	r->kind = HK_COUNT;
	for (int k = 0; k < HK_COUNT; k++)
		if (!strcmp(health_kind_name(k), kind))
			r->kind = k;
	if (health_level_parse(health_col_text(s, 2), &r->level))
		r->level = HEALTH_DEGRADED;
	snprintf(r->device, sizeof(r->device), "%s", health_col_text(s, 3));
	r->port = sqlite3_column_type(s, 4) == SQLITE_NULL
			  ? -1
			  : sqlite3_column_int(s, 4);
	snprintf(r->text, sizeof(r->text), "%s", health_col_text(s, 5));
	r->active = sqlite3_column_int(s, 7);
	r->first_seen = sqlite3_column_double(s, 8);
	r->last_seen = sqlite3_column_double(s, 9);
	*out = r;
	return 0;
}

/* Judge the hosts behind the switch ports of @r's fabric section whose
 * state or counters changed in this report (at @now). */
static int health_fabric(struct store *st, const struct report *r, double now)
{
	const struct report_fabric *f = r->fabric;
	char **hosts = NULL;
	size_t n = 0, cap = 0;
	int ret = 0, rc;

	for (size_t i = 0; !ret && i < f->n_nodes; i++) {
		sqlite3_stmt *s;
		char guid[24];

		if (f->nodes[i].type != 2)
			continue;
		report_guid_str(f->nodes[i].guid, guid, sizeof(guid));
		s = health_stmt(st, HSQL_FABRIC_HOSTS);
		sql_name_text(s, ":guid", guid);
		sql_name_real(s, ":now", now);
		while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW) {
			const char *h = health_col_text(s, 0);
			int dup = 0;

			for (size_t k = 0; k < n && !dup; k++)
				dup = !strcmp(hosts[k], h);
			if (dup)
				continue;
			if (vec_grow(&hosts, &cap, n, sizeof(*hosts))) {
				ret = -ENOMEM;
				break;
			}
			hosts[n] = strdup(h);
			if (!hosts[n])
				ret = -ENOMEM;
			else
				n++;
		}
		sqlite3_reset(s);
		if (!ret && rc != SQLITE_DONE && rc != SQLITE_ROW)
			ret = store_err(st, rc, "health fabric hosts");
	}
	for (size_t k = 0; !ret && k < n; k++) {
		ret = health_evaluate(st, hosts[k], now, NULL);
		if (ret == -ENOENT)
			ret = 0;
	}
	for (size_t k = 0; k < n; k++)
		free(hosts[k]);
	free(hosts);
	return ret;
}

static int health_exec(struct store *st, enum store_hsql which)
{
	return store_done(st, health_stmt(st, which), "health savepoint");
}

int store_health_report(struct store *st, const struct report *r, double now)
{
	int ret;

	if (!st->health)
		return 0;
	/*
	 * The verdicts in a savepoint of their own: should judging fail,
	 * its writes are undone and the report is stored all the same (a
	 * verdict is recomputed at the next report; counters lost are not).
	 */
	ret = health_exec(st, HSQL_SAVEPOINT);
	if (ret)
		return ret;
	/* a fabric poller's report holds no devices: not its host's ports */
	if (r->n_devices)
		ret = health_evaluate(st, r->host, now, r);
	if ((!ret || ret == -ENOENT) && r->fabric &&
	    st->health->o->switch_ports)
		ret = health_fabric(st, r, now);
	if (ret && ret != -ENOENT) {
		log_once("health-report", 60, LOG_LVL_ERR,
			 "health: judging after %s's report failed (%s): the "
			 "report is stored, the verdicts are not",
			 r->host, strerror(-ret));
		if (health_exec(st, HSQL_ROLLBACK_TO))
			return ret;
	}
	return health_exec(st, HSQL_RELEASE);
}

/* The saved reasons of @host, worst and current first. */
static int cmp_reason(const void *a, const void *b)
{
	const struct health_reason *x = a, *y = b;

	if (x->level != y->level)
		return y->level - x->level;
	if (x->active != y->active)
		return y->active - x->active;
	return strcmp(x->key, y->key);
}

static json_t *reason_json(const struct health_reason *r)
{
	json_t *ev = json_loads(r->evidence ? r->evidence : "{}", 0, NULL);
	json_t *o = json_pack(
		"{s:s, s:s, s:s, s:o?, s:o, s:o, s:b, s:f, s:f}", "kind",
		r->kind < HK_COUNT ? health_kind_name(r->kind) : "?",
		"severity", health_level_name(r->level), "reason", r->text,
		"evidence", ev, "device",
		r->device[0] ? json_string(r->device) : json_null(), "port",
		r->port >= 0 ? json_integer(r->port) : json_null(), "active",
		r->active, "first_seen", r->first_seen, "last_seen",
		r->last_seen);

	return o;
}

static int health_answer(struct store *st, const char *host, double now,
			 char **out)
{
	struct health_list l = {0};
	sqlite3_stmt *s = health_stmt(st, HSQL_REASONS);
	json_t *reasons = json_array(), *ans = NULL;
	double since = now, last_report = 0;
	char verdict[16] = "healthy";
	int rc, ret = 0;

	sql_name_text(s, ":host", host);
	while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct health_reason *r;

		ret = health_reason_row(s, &l, &r);
	}
	sqlite3_reset(s);
	if (!ret && rc != SQLITE_DONE && rc != SQLITE_ROW)
		ret = store_err(st, rc, "health reasons");
	s = health_stmt(st, HSQL_VERDICT_GET);
	sql_name_text(s, ":host", host);
	if (!ret && sqlite3_step(s) == SQLITE_ROW) {
		snprintf(verdict, sizeof(verdict), "%s", health_col_text(s, 0));
		since = sqlite3_column_double(s, 1);
	}
	sqlite3_reset(s);
	s = health_stmt(st, HSQL_HOST);
	sql_name_text(s, ":host", host);
	if (!ret && sqlite3_step(s) == SQLITE_ROW)
		last_report = sqlite3_column_double(s, 0);
	sqlite3_reset(s);
	if (l.n)
		qsort(l.v, l.n, sizeof(*l.v), cmp_reason);
	for (size_t i = 0; !ret && reasons && i < l.n; i++)
		if (json_array_append_new(reasons, reason_json(&l.v[i])))
			ret = -ENOMEM;
	if (!ret && reasons)
		ans = json_pack("{s:s, s:s, s:f, s:f, s:f, s:I, s:O}", "host",
				host, "verdict", verdict, "since", since, "now",
				now, "last_report", last_report,
				"quiet_seconds",
				(json_int_t)st->health->o->quiet_seconds,
				"reasons", reasons);
	if (!ret && !(*out = ans ? json_dumps(ans, JSON_COMPACT) : NULL))
		ret = -ENOMEM;
	json_decref(ans);
	json_decref(reasons);
	health_list_free(&l);
	return ret;
}

int store_health_json(struct store *st, const char *host, double now,
		      char **out)
{
	int ret;

	*out = NULL;
	if (!st->health)
		return -ENOTSUP;
	ret = health_exec(st, HSQL_SAVEPOINT);
	if (!ret)
		ret = health_evaluate(st, host, now, NULL);
	if (!ret)
		ret = health_answer(st, host, now, out);
	if (!ret || ret == -ENOENT)
		return health_exec(st, HSQL_RELEASE) ? -EIO : ret;
	/* undone: this answer failed, the batch's transaction did not */
	if (health_exec(st, HSQL_ROLLBACK_TO) || health_exec(st, HSQL_RELEASE))
		return ret;
	log_once("health-json", 60, LOG_LVL_ERR,
		 "health: GET %s's verdict failed: %s", host, strerror(-ret));
	return -ECANCELED;
}

int store_health_retire(struct store *st, const char *host)
{
	static const enum store_hsql del[] = {
		HSQL_RETIRE_VERDICT, HSQL_RETIRE_REASONS, HSQL_RETIRE_PORTS};
	int ret = 0;

	if (!st->health)
		return 0;
	for (size_t i = 0; !ret && i < sizeof(del) / sizeof(*del); i++) {
		sqlite3_stmt *s = health_stmt(st, del[i]);

		sql_name_text(s, ":host", host);
		ret = store_done(st, s, "health retire");
	}
	return ret;
}
