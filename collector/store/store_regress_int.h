/* SPDX-License-Identifier: MIT */
/*
 * Inside the baseline and regression store: shared by store_regress.c
 * (judging results), store_suspect.c (suspect inference) and
 * store_regress_api.c (the API view, retire, prune). Not for other files.
 */
#ifndef IBPULSE_COLLECTOR_STORE_REGRESS_INT_H
#define IBPULSE_COLLECTOR_STORE_REGRESS_INT_H

#include "baseline.h"
#include "store_regress.h"

#include <sqlite3.h>

enum store_rsql {
	RSQL_LINK_UPSERT,
	RSQL_SAMPLES,
	RSQL_SAMPLE_INS,
	RSQL_SAMPLE_TRIM,
	RSQL_SAMPLE_CLEAR,
	RSQL_POOL,
	RSQL_PORT_BL_UPSERT,
	RSQL_PORT_BL_GET,
	RSQL_RECENT,
	RSQL_RECENT_INS,
	RSQL_RECENT_TRIM,
	RSQL_REG_GET,
	RSQL_REG_INS,
	RSQL_REG_UPD,
	RSQL_REG_CLOSE,
	RSQL_COUNT_BUMP,
	RSQL_LINK_UPD,
	RSQL_PORT_INFO,
	/* store_suspect.c */
	RSQL_OPEN_LINKS,
	RSQL_PORT_LINKS,
	RSQL_GROUP_TOTAL,
	RSQL_GSUS_SINCE,
	RSQL_GSUS_DEL,
	RSQL_GSUS_INS,
	RSQL_ALL_KINDS,
	/* store_regress_api.c */
	RSQL_RET_LINKS,
	RSQL_RET_REGS,
	RSQL_RET_PORT_BL,
	RSQL_PRUNE_STALE_REGS,
	RSQL_PRUNE_STALE_LINKS,
	RSQL_PRUNE_REGS,
	RSQL_PRUNE_PORT_BL,
	RSQL_COUNT
};

/* A (profile, metric) whose suspects are to be inferred again. */
struct regress_kind {
	char *profile;
	enum baseline_metric metric;
};

struct store_regress {
	struct baseline_opts o;
	struct store_evidence *ev; /* evidence per element; NULL: off */
	double window;		   /* seconds */
	char *group_label;
	sqlite3_stmt *s[RSQL_COUNT];
	struct regress_kind *dirty;
	size_t n_dirty, cap_dirty;
};

/* The SQL text of statement @which (store_regress_sql.c). */
const char *regress_sql(enum store_rsql which);

/* The statement @which, reset with its bindings cleared. */
sqlite3_stmt *regress_stmt(struct store_regress *rg, enum store_rsql which);

/* Queue (@profile, @metric) for store_regress_flush(). 0 or -ENOMEM. */
int regress_mark(struct store_regress *rg, const char *profile,
		 enum baseline_metric metric);

/* Infer the suspect group pairs of one (profile, metric) at @now
 * (store_suspect.c). */
int regress_suspects(struct store *st, const char *profile,
		     enum baseline_metric metric, double now);

/* A REAL column, NAN when NULL. */
double regress_col_real(sqlite3_stmt *s, int i);

/* The store's regression state (NULL: disabled). */
struct store_regress *store_regress_of(struct store *st);

/* Its evidence per element (NULL: disabled; store_evidence.h). */
struct store_evidence *store_regress_evidence(struct store *st);

#endif
