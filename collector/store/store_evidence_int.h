/* SPDX-License-Identifier: MIT */
/*
 * Inside the evidence store: shared by store_evidence.c (adding results,
 * judging elements), store_evidence_sql.c (the statements, prepared once)
 * and store_evidence_api.c (the planner's lists, retire, prune). Not for
 * other files.
 */
#ifndef IBPULSE_COLLECTOR_STORE_EVIDENCE_INT_H
#define IBPULSE_COLLECTOR_STORE_EVIDENCE_INT_H

#include "store_evidence.h"

#include <sqlite3.h>

enum esql {
	ESQL_EL_UPSERT,
	ESQL_REC_INS,
	ESQL_REC_TRIM,
	ESQL_EL_GET,
	ESQL_WINDOW,
	ESQL_EL_UPD,
	ESQL_REFERRERS,
	ESQL_SUS_INS,
	ESQL_SUS_TICK,
	ESQL_SUS_CLOSE,
	ESQL_DEV_EL,
	ESQL_DEV_PORTS_OPEN,
	ESQL_DEV_PORTS_FRESH,
	ESQL_PCIE,
	ESQL_GP_EXPLAINS,
	ESQL_CONFIRMS,
	ESQL_GOOD,
	ESQL_SUSPECTS,
	ESQL_RET_SUS,
	ESQL_RET_EL,
	ESQL_PRUNE_STALE_SUS,
	ESQL_PRUNE_STALE_EL,
	ESQL_PRUNE_SUS,
	ESQL_COUNT
};

struct store_evidence {
	struct evidence_opts o;
	char *group_label; /* NULL: no groups */
	sqlite3_stmt *s[ESQL_COUNT];
	int64_t *touched; /* element ids added to in this batch */
	size_t n_touched, cap_touched;
	uint64_t version; /* bumped when confirmations may have changed */
};

/* The statement @which, reset with its bindings cleared. */
sqlite3_stmt *evidence_stmt(struct store_evidence *ev, enum esql which);

/* Binds by name: store_int.h's store_name_*(). */

/* Columns: a double (NAN for NULL), a text ("" for NULL). */
double evidence_col_real(sqlite3_stmt *s, int i);
const char *evidence_col_text(sqlite3_stmt *s, int i);

#endif
