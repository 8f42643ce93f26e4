// SPDX-License-Identifier: MIT
/*
 * The plan side of the test tables (store_tests.h): load the registered
 * probes as planner input, save a period's plan, and read the coverage
 * view (planned pairs with their last measurement, overdue ports and
 * group pairs). SQL only; the planning itself is planner.c.
 */
#include "store_int.h"
#include "vec.h"
#include "store_tests.h"
#include "testapi.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Keep @p to be freed with the probes; NULL in, -ENOMEM out. */
static void *tp_keep(struct tprobes *t, void *p)
{
	if (!p)
		return NULL;
	if (vec_grow(&t->allocs, &t->cap_allocs, t->n_allocs,
		     sizeof(*t->allocs))) {
		free(p);
		return NULL;
	}
	t->allocs[t->n_allocs++] = p;
	return p;
}

static const char *tp_col(struct tprobes *t, sqlite3_stmt *s, int col, int *oom)
{
	const unsigned char *v = sqlite3_column_text(s, col);
	char *c;

	if (!v)
		return NULL;
	c = tp_keep(t, strdup((const char *)v));
	*oom |= !c;
	return c;
}

/* The profile names of a JSON array text. */
static int tp_profiles(struct tprobes *t, struct planner_probe *p,
		       const char *text)
{
	json_t *a = text ? json_loads(text, 0, NULL) : NULL;
	const char **names;
	size_t n = json_array_size(a);
	int oom = 0;

	names = tp_keep(t, calloc(n + 1, sizeof(*names)));
	for (size_t i = 0; names && i < n; i++) {
		const char *v = json_string_value(json_array_get(a, i));

		if (v) {
			names[p->n_profiles] = tp_keep(t, strdup(v));
			oom |= !names[p->n_profiles++];
		}
	}
	json_decref(a);
	p->profiles = names;
	return !names || oom ? -ENOMEM : 0;
}

static int tp_pkeys(struct tprobes *t, struct planner_port *pt,
		    const char *text)
{
	json_t *a = text ? json_loads(text, 0, NULL) : NULL;
	size_t n = json_array_size(a);
	uint16_t *k = tp_keep(t, calloc(n + 1, sizeof(*k)));

	for (size_t i = 0; k && i < n; i++)
		k[i] = (uint16_t)json_integer_value(json_array_get(a, i));
	json_decref(a);
	pt->pkeys = k;
	pt->n_pkeys = k ? n : 0;
	return k ? 0 : -ENOMEM;
}

static int tp_probe(struct tprobes *t, sqlite3_stmt *s)
{
	struct planner_probe *p;
	int oom = 0;
	size_t np;

	if (!(t->n & (t->n + 1)) || !t->p) {
		size_t cap = (t->n + 1) * 2;
		void *a = realloc(t->p, cap * sizeof(*t->p));
		void *b =
			a ? realloc(t->paused, cap * sizeof(*t->paused)) : NULL;

		if (a)
			t->p = a;
		if (b)
			t->paused = b;
		if (!a || !b)
			return -ENOMEM;
	}
	p = &t->p[t->n];
	memset(p, 0, sizeof(*p));
	p->host = tp_col(t, s, 0, &oom);
	p->address = tp_col(t, s, 1, &oom);
	p->resp_port = (unsigned)sqlite3_column_int(s, 2);
	p->group = tp_col(t, s, 4, &oom);
	p->rail = tp_col(t, s, 5, &oom);
	t->paused[t->n] = sqlite3_column_int(s, 6);
	np = (size_t)sqlite3_column_int64(s, 7);
	p->ports = tp_keep(t, calloc(np + 1, sizeof(*p->ports)));
	p->n_ports = np;
	t->n++;
	if (oom || !p->ports)
		return -ENOMEM;
	return tp_profiles(t, p, (const char *)sqlite3_column_text(s, 3));
}

static int tp_ports(struct store *st, struct tprobes *t)
{
	sqlite3_stmt *s = store_tstmt(st, TSQL_PORTS_LOAD);
	size_t i = 0, j = 0;
	int rc, ret = 0, oom = 0;

	while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct planner_port *pt;

		while (i < t->n && j >= t->p[i].n_ports) {
			i++;
			j = 0;
		}
		if (i == t->n)
			break;
		pt = (struct planner_port *)&t->p[i].ports[j++];
		pt->device = tp_col(t, s, 0, &oom);
		pt->port = (unsigned)sqlite3_column_int(s, 1);
		pt->state = sqlite3_column_int(s, 2);
		pt->link_layer = tp_col(t, s, 3, &oom);
		pt->subnet_prefix = tp_col(t, s, 4, &oom);
		if (sqlite3_column_int64(s, 6) > 0 &&
		    sqlite3_column_int64(s, 6) <= TESTAPI_LID_MAX)
			pt->lid = (unsigned)sqlite3_column_int64(s, 6);
		ret = oom ? -ENOMEM
			  : tp_pkeys(t, pt,
				     (const char *)sqlite3_column_text(s, 5));
	}
	sqlite3_reset(s);
	if (!ret && rc != SQLITE_ROW && rc != SQLITE_DONE)
		ret = store_err(st, rc, "load ports");
	return ret;
}

int store_probes_load(struct store *st, const char *group_label,
		      const char *rail_label, struct tprobes **out)
{
	sqlite3_stmt *s = store_tstmt(st, TSQL_PROBES_LOAD);
	struct tprobes *t = calloc(1, sizeof(*t));
	int rc = SQLITE_DONE, ret = t ? 0 : -ENOMEM;

	*out = NULL;
	sql_name_text(s, ":group_label", group_label ? group_label : "");
	sql_name_text(s, ":rail_label", rail_label ? rail_label : "");
	while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW)
		ret = tp_probe(t, s);
	sqlite3_reset(s);
	if (!ret && rc != SQLITE_DONE)
		ret = store_err(st, rc, "load probes");
	if (!ret)
		ret = tp_ports(st, t);
	if (ret) {
		store_probes_free(t);
		return ret;
	}
	*out = t;
	return 0;
}

void store_probes_free(struct tprobes *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n_allocs; i++)
		free(t->allocs[i]);
	free(t->allocs);
	free(t->p);
	free(t->paused);
	free(t);
}

/* Insert test @t of @plan (probes @pr) into plan_entry; an SQLite code. */
static int plan_insert(struct store *st, const struct planner_plan *plan,
		       const struct planner_test *t,
		       const struct planner_probe *pr, double period_start)
{
	const struct planner_probe *a = &pr[t->a], *b = &pr[t->b];
	sqlite3_stmt *s = store_tstmt(st, TSQL_PLAN_INS);
	char id[64];
	int rc;

	snprintf(id, sizeof(id), "p%.0f-%016llx", period_start,
		 (unsigned long long)t->key);
	sqlite3_bind_text(s, sql_param(s, ":id"), id, -1, SQLITE_TRANSIENT);
	sql_name_int(s, ":period", (sqlite3_int64)plan->period);
	sql_name_text(s, ":profile", t->profile);
	sql_name_text(s, ":a_host", a->host);
	sql_name_text(s, ":a_device", a->ports[t->a_port].device);
	sql_name_int(s, ":a_port", (int)a->ports[t->a_port].port);
	sql_name_text(s, ":b_host", b->host);
	sql_name_text(s, ":b_device", b->ports[t->b_port].device);
	sql_name_int(s, ":b_port", (int)b->ports[t->b_port].port);
	if (a->group)
		sql_name_text(s, ":group_a", a->group);
	if (b->group)
		sql_name_text(s, ":group_b", b->group);
	sql_name_real(s, ":not_before", period_start + t->not_before);
	sql_name_real(s, ":deadline", period_start + t->deadline);
	sql_name_int(s, ":confirm", t->confirm);
	if (t->dlid)
		sql_name_int(s, ":dlid", (int)t->dlid);
	rc = sqlite3_step(s);
	sqlite3_reset(s);
	return rc;
}

int store_plan_save(struct store *st, const struct planner_plan *plan,
		    const struct planner_probe *pr, double period_start)
{
	sqlite3_stmt *s = store_tstmt(st, TSQL_PLAN_DEL);
	int rc;

	sql_name_int(s, ":period", (sqlite3_int64)plan->period);
	rc = sqlite3_step(s);
	sqlite3_reset(s);
	for (size_t i = 0; rc == SQLITE_DONE && i < plan->n_tests; i++)
		rc = plan_insert(st, plan, &plan->tests[i], pr, period_start);
	return rc == SQLITE_DONE ? 0 : store_err(st, rc, "save plan");
}

int store_plan_add_confirm(struct store *st, const struct planner_plan *plan,
			   const struct planner_probe *pr, double period_start)
{
	int rc = SQLITE_DONE;

	for (size_t i = 0; rc == SQLITE_DONE && i < plan->n_tests; i++)
		if (plan->tests[i].confirm)
			rc = plan_insert(st, plan, &plan->tests[i], pr,
					 period_start);
	return rc == SQLITE_DONE ? 0 : store_err(st, rc, "save plan");
}

/* ---- coverage ---- */

static json_t *cov_text(sqlite3_stmt *s, int col)
{
	const unsigned char *v = sqlite3_column_text(s, col);

	return v ? json_string((const char *)v) : json_null();
}

static json_t *cov_int(sqlite3_stmt *s, int col)
{
	return sqlite3_column_type(s, col) == SQLITE_NULL
		       ? json_null()
		       : json_integer(sqlite3_column_int64(s, col));
}

static json_t *cov_port(sqlite3_stmt *s, int col)
{
	char buf[256];

	snprintf(buf, sizeof(buf), "%s/%s/%d", sqlite3_column_text(s, col),
		 sqlite3_column_text(s, col + 1),
		 sqlite3_column_int(s, col + 2));
	return json_string(buf);
}

/* Track the newest measurement per group pair in @gp ("a|b" -> real). */
static void cov_group(json_t *gp, sqlite3_stmt *s)
{
	const char *a = (const char *)sqlite3_column_text(s, 8);
	const char *b = (const char *)sqlite3_column_text(s, 9);
	char key[300];
	json_t *old;
	double last = sqlite3_column_type(s, 12) == SQLITE_NULL
			      ? 0
			      : sqlite3_column_double(s, 12);

	if (!a || !b || !strcmp(a, b))
		return;
	snprintf(key, sizeof(key), "%s|%s", strcmp(a, b) < 0 ? a : b,
		 strcmp(a, b) < 0 ? b : a);
	old = json_object_get(gp, key);
	if (!old || json_real_value(old) < last)
		json_object_set_new(gp, key, json_real(last));
}

static int cov_pairs(struct store *st, unsigned long long period, json_t *pairs,
		     json_t *gp)
{
	sqlite3_stmt *s = store_tstmt(st, TSQL_COVER_PAIRS);
	int rc;

	sql_name_int(s, ":period", (sqlite3_int64)period);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		json_t *o = json_pack(
			"{s:o, s:o, s:o, s:o, s:o, s:o, s:f, s:f}", "id",
			cov_text(s, 0), "profile", cov_text(s, 1), "a",
			cov_port(s, 2), "b", cov_port(s, 5), "group_a",
			cov_text(s, 8), "group_b", cov_text(s, 9), "not_before",
			sqlite3_column_double(s, 10), "deadline",
			sqlite3_column_double(s, 11));

		if (o)
			json_object_set_new(
				o, "confirm",
				json_boolean(sqlite3_column_int(s, 13)));
		if (o)
			json_object_set_new(o, "dlid", cov_int(s, 14));
		if (o)
			json_object_set_new(
				o, "last_measured",
				sqlite3_column_type(s, 12) == SQLITE_NULL
					? json_null()
					: json_real(sqlite3_column_double(s,
									  12)));
		json_array_append_new(pairs, o);
		cov_group(gp, s);
	}
	sqlite3_reset(s);
	return rc == SQLITE_DONE ? 0 : store_err(st, rc, "coverage");
}

static int cov_ports(struct store *st, double cutoff, json_t *ports)
{
	sqlite3_stmt *s = store_tstmt(st, TSQL_COVER_PORTS);
	int rc;

	sql_name_real(s, ":cutoff", cutoff);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		double last = sqlite3_column_double(s, 3);

		json_array_append_new(
			ports,
			json_pack("{s:o, s:o}", "port", cov_port(s, 0),
				  "last_measured",
				  last > 0 ? json_real(last) : json_null()));
	}
	sqlite3_reset(s);
	return rc == SQLITE_DONE ? 0 : store_err(st, rc, "coverage");
}

int store_coverage(struct store *st, unsigned long long period, double cutoff,
		   json_t **out)
{
	json_t *o = json_object(), *pairs = json_array(), *ports = json_array();
	json_t *gp = json_object(), *over = json_array(), *v;
	const char *key;
	int ret;

	*out = NULL;
	if (!o || !pairs || !ports || !gp || !over) {
		ret = -ENOMEM;
		goto fail;
	}
	ret = cov_pairs(st, period, pairs, gp);
	if (!ret)
		ret = cov_ports(st, cutoff, ports);
	if (ret)
		goto fail;
	json_object_foreach(gp, key, v)
	{
		const char *bar = strchr(key, '|');

		if (bar && json_real_value(v) < cutoff)
			json_array_append_new(
				over,
				json_pack(
					"{s:s%, s:s, s:o}", "a", key,
					(size_t)(bar - key), "b", bar + 1,
					"last_measured",
					json_real_value(v) > 0
						? json_real(json_real_value(v))
						: json_null()));
	}
	json_decref(gp);
	json_object_set_new(o, "pairs", pairs);
	json_object_set_new(o, "overdue_ports", ports);
	json_object_set_new(o, "overdue_group_pairs", over);
	*out = o;
	return 0;
fail:
	json_decref(o);
	json_decref(pairs);
	json_decref(ports);
	json_decref(gp);
	json_decref(over);
	return ret;
}
