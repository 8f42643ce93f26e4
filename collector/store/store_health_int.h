/* SPDX-License-Identifier: MIT */
/*
 * Inside the health store: shared by store_health.c (judging a host) and
 * store_health_api.c (the API answer, the report hook, retirement). Not
 * for other files.
 */
#ifndef IBPULSE_COLLECTOR_STORE_HEALTH_INT_H
#define IBPULSE_COLLECTOR_STORE_HEALTH_INT_H

#include "health.h"
#include "store_health.h"
#include "store_int.h"

#include <sqlite3.h>

enum store_hsql {
	HSQL_PORTS,
	HSQL_HP_PUT,
	HSQL_SWITCH,
	HSQL_COUNTERS,
	HSQL_SAMPLE_AT,
	HSQL_SAMPLE_FIRST,
	HSQL_FCOUNTERS,
	HSQL_FSAMPLE_AT,
	HSQL_FSAMPLE_FIRST,
	HSQL_SUSPECTS,
	HSQL_REGRESSIONS,
	HSQL_REASONS,
	HSQL_REASON_PUT,
	HSQL_REASON_DEL,
	HSQL_VERDICT_GET,
	HSQL_VERDICT_PUT,
	HSQL_HOST,
	HSQL_FABRIC_HOSTS,
	HSQL_RETIRE_VERDICT,
	HSQL_RETIRE_REASONS,
	HSQL_RETIRE_PORTS,
	HSQL_SAVEPOINT,
	HSQL_RELEASE,
	HSQL_ROLLBACK_TO,
	HSQL_COUNT
};

struct store_health {
	const struct health_opts *o;
	sqlite3_stmt *s[HSQL_COUNT];
};

/* One evaluation of one host. */
struct health_ctx {
	struct store *st;
	const struct health_opts *o;
	const char *host;
	double now;
	const struct report *report; /* NULL: which ports it holds unknown */
	struct health_list cur;
};

/* Statement @which, reset with its bindings cleared. */
sqlite3_stmt *health_stmt(struct store *st, enum store_hsql which);
/* A REAL column, -1 when NULL; a TEXT column, "" when NULL. */
double health_col_time(sqlite3_stmt *s, int i);
const char *health_col_text(sqlite3_stmt *s, int i);

/* A row of HSQL_REASONS appended to @l as *@out (store_health_api.c). */
int health_reason_row(sqlite3_stmt *s, struct health_list *l,
		      struct health_reason **out);

/*
 * health_evaluate() - judge @host at @now and save the verdict; @r the
 * report just stored for it (NULL: none). -ENOENT: the host never
 * reported counters.
 */
int health_evaluate(struct store *st, const char *host, double now,
		    const struct report *r);

#endif
