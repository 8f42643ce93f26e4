// SPDX-License-Identifier: MIT
/*
 * The evidence store seen from outside the result path
 * (store_evidence.h): the lists the planner reads (elements needing
 * confirmation, ports with good history, suspects), retiring a host and
 * pruning stale elements and old suspects.
 */
#include "store_evidence_int.h"
#include "vec.h"
#include "store_int.h"
#include "store_regress_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the planner's lists ---- */

/* Append each row (host, device, port, profile) of @s to @a. */
static int ev_list(struct store *st, sqlite3_stmt *s, struct evidence_port **a,
		   size_t *n)
{
	size_t cap = 0;
	int rc;

	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct evidence_port *e;

		if (vec_grow(a, &cap, *n, sizeof(**a)))
			break;
		e = &(*a)[(*n)++];
		e->host = strdup(evidence_col_text(s, 0));
		e->device = strdup(evidence_col_text(s, 1));
		e->port = (unsigned)sqlite3_column_int(s, 2);
		e->profile = strdup(evidence_col_text(s, 3));
		if (!e->host || !e->device || !e->profile)
			break;
	}
	sqlite3_reset(s);
	if (rc == SQLITE_DONE)
		return 0;
	return rc == SQLITE_ROW ? -ENOMEM : store_err(st, rc, "evidence list");
}

int store_evidence_lists(struct store *st, double since,
			 struct evidence_lists *l)
{
	struct store_evidence *ev = store_regress_evidence(st);
	sqlite3_stmt *s;
	int ret;

	memset(l, 0, sizeof(*l));
	if (!ev)
		return 0;
	ret = ev_list(st, evidence_stmt(ev, ESQL_CONFIRMS), &l->confirm,
		      &l->n_confirm);
	if (!ret) {
		s = evidence_stmt(ev, ESQL_GOOD);
		sql_name_real(s, ":since", since);
		ret = ev_list(st, s, &l->good, &l->n_good);
	}
	if (!ret)
		ret = ev_list(st, evidence_stmt(ev, ESQL_SUSPECTS), &l->suspect,
			      &l->n_suspect);
	if (ret)
		store_evidence_lists_free(l);
	return ret;
}

static void ev_list_free(struct evidence_port *a, size_t n)
{
	for (size_t i = 0; a && i < n; i++) {
		free(a[i].host);
		free(a[i].device);
		free(a[i].profile);
	}
	free(a);
}

void store_evidence_lists_free(struct evidence_lists *l)
{
	ev_list_free(l->confirm, l->n_confirm);
	ev_list_free(l->good, l->n_good);
	ev_list_free(l->suspect, l->n_suspect);
	memset(l, 0, sizeof(*l));
}

/* ---- retire and prune ---- */

int store_evidence_retire(struct store *st, const char *host, double now,
			  size_t *changes)
{
	struct store_evidence *ev = store_regress_evidence(st);
	sqlite3_stmt *s;
	int ret;

	*changes = 0;
	if (!ev)
		return 0;
	s = evidence_stmt(ev, ESQL_RET_SUS);
	sql_name_text(s, ":host", host);
	ret = store_done(st, s, "retire suspects");
	if (!ret)
		*changes += (size_t)sqlite3_changes(st->db);
	if (!ret) {
		s = evidence_stmt(ev, ESQL_RET_EL);
		sql_name_text(s, ":host", host);
		ret = store_done(st, s, "retire elements");
	}
	if (!ret) {
		*changes += (size_t)sqlite3_changes(st->db);
		ev->version++;
	}
	return ret;
}

/* Run prune statement @which; its changes in *@n. */
static int ev_prune_one(struct store *st, struct store_evidence *ev,
			enum esql which, double now, double t, long long batch,
			size_t *n)
{
	sqlite3_stmt *s = evidence_stmt(ev, which);
	int ret;

	if (sqlite3_bind_parameter_index(s, ":now"))
		sql_name_real(s, ":now", now);
	sql_name_real(s, which == ESQL_PRUNE_SUS ? ":cutoff" : ":stale", t);
	sql_name_int(s, ":batch", batch);
	ret = store_done(st, s, "prune suspects");
	*n = ret ? 0 : (size_t)sqlite3_changes(st->db);
	return ret;
}

int store_evidence_prune(struct store *st, double now, double stale,
			 double cutoff, long long batch, size_t *n)
{
	struct store_evidence *ev = store_regress_evidence(st);
	size_t k[3] = {0};
	int ret;

	*n = 0;
	if (!ev)
		return 0;
	ret = ev_prune_one(st, ev, ESQL_PRUNE_STALE_SUS, now, stale, batch,
			   &k[0]);
	if (!ret)
		ret = ev_prune_one(st, ev, ESQL_PRUNE_STALE_EL, now, stale,
				   batch, &k[1]);
	if (!ret && isfinite(cutoff))
		ret = ev_prune_one(st, ev, ESQL_PRUNE_SUS, now, cutoff, batch,
				   &k[2]);
	if (ret)
		return ret;
	if (k[0] || k[1])
		ev->version++;
	*n = k[1] + k[2];
	return k[0] >= (size_t)batch || k[1] >= (size_t)batch ||
	       k[2] >= (size_t)batch;
}
