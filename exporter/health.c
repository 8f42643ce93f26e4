// SPDX-License-Identifier: MIT
/*
 * Host health verdicts as metrics: see health.h. One read of host_health
 * and one of the reason counts; each host's label list is escaped once
 * into a shared buffer.
 */
#include "health_snap.h"
#include "buf.h"
#include "dbread.h"
#include "shard.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const verdicts[] = {"healthy", "degraded", "failed"};

struct health_host {
	size_t labels; /* offset into text: host="..." */
	char *name;    /* for the reason counts */
	int verdict;   /* index into verdicts, -1 unknown */
	double since;
	unsigned reasons[3];
};

struct health_snap {
	unsigned shard, shards;
	struct buf text;
	struct health_host *h;
	size_t n, cap;
};

static int host_row(void *ctx, sqlite3_stmt *s)
{
	struct health_snap *hs = ctx;
	const char *name = dbread_text(s, 0), *v = dbread_text(s, 1);
	struct health_host *h;
	struct buf one;

	if (!name || shard_of(name, hs->shards) != hs->shard)
		return 0;
	if (hs->n == hs->cap) {
		size_t cap = hs->cap ? hs->cap * 2 : 64;
		struct health_host *g = realloc(hs->h, cap * sizeof(*g));

		if (!g)
			return -ENOMEM;
		hs->h = g;
		hs->cap = cap;
	}
	h = &hs->h[hs->n];
	memset(h, 0, sizeof(*h));
	h->verdict = -1;
	for (int i = 0; v && i < 3; i++)
		if (!strcmp(v, verdicts[i]))
			h->verdict = i;
	h->since = dbread_real(s, 2);
	h->labels = hs->text.len;
	h->name = strdup(name);
	buf_init(&one, 0);
	if (!h->name || expo_label(&one, "host", name) ||
	    buf_add(&hs->text, one.data, one.len) ||
	    buf_addc(&hs->text, '\0')) {
		free(h->name);
		buf_free(&one);
		return -ENOMEM;
	}
	buf_free(&one);
	hs->n++;
	return 0;
}

/* Rows come in host order, as the hosts were read. */
static int count_row(void *ctx, sqlite3_stmt *s)
{
	struct health_snap *hs = ctx;
	const char *name = dbread_text(s, 0), *sev = dbread_text(s, 1);
	size_t lo = 0, hi = hs->n;

	if (!name || !sev)
		return 0;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(hs->h[mid].name, name);

		if (!c) {
			for (int i = 1; i < 3; i++)
				if (!strcmp(sev, verdicts[i]))
					hs->h[mid].reasons[i] =
						(unsigned)dbread_int(s, 2);
			return 0;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* clang-format off */
static const char host_sql[] =
	"SELECT host, verdict, since "
	"FROM host_health "
	"ORDER BY host";
static const char reason_sql[] =
	"SELECT host, severity, count(*) "
	"FROM health_reason "
	"GROUP BY host, severity";
/* clang-format on */

int health_read(struct sqlite3 *db, unsigned shard, unsigned shards,
		struct health_snap **out, char *err, size_t errlen)
{
	struct health_snap *hs;
	int ret;

	*out = NULL;
	if (!dbread_has_table(db, "host_health"))
		return 0;
	hs = calloc(1, sizeof(*hs));
	if (!hs)
		return -ENOMEM;
	hs->shard = shard;
	hs->shards = shards ? shards : 1;
	buf_init(&hs->text, 0);
	/* BINARY order: what strcmp() in count_row() searches */
	ret = dbread_each(db, host_sql, "host_health", NULL, host_row, hs, err,
			  errlen);
	if (!ret && hs->n)
		ret = dbread_each(db, reason_sql, "health_reason", NULL,
				  count_row, hs, err, errlen);
	if (ret) {
		health_snap_free(hs);
		return ret;
	}
	*out = hs;
	return 0;
}

int health_render(struct expo *e, const struct health_snap *hs)
{
	if (!hs)
		return e->err;
	expo_family(e, "ibpulse_host_health", EXPO_GAUGE,
		    "The collector's health verdict of the host: 1 for the "
		    "current one (healthy, degraded: look soon, failed: take "
		    "it out), 0 for the others. GET "
		    "/api/v1/hosts/HOST/health gives the reasons.");
	for (size_t i = 0; i < hs->n; i++)
		for (int v = 0; v < 3; v++) {
			char extra[32];

			snprintf(extra, sizeof(extra), "verdict=\"%s\"",
				 verdicts[v]);
			expo_sample_u64(e, hs->text.data + hs->h[i].labels,
					extra, hs->h[i].verdict == v);
		}
	expo_family(e, "ibpulse_host_health_since_timestamp_seconds",
		    EXPO_GAUGE,
		    "When the host's health verdict last changed (collector "
		    "clock).");
	for (size_t i = 0; i < hs->n; i++)
		expo_sample(e, hs->text.data + hs->h[i].labels, NULL,
			    hs->h[i].since);
	expo_family(e, "ibpulse_host_health_reasons", EXPO_GAUGE,
		    "Reasons holding the host's verdict, by severity: seen "
		    "now or within the quiet window.");
	for (size_t i = 0; i < hs->n; i++)
		for (int v = 1; v < 3; v++) {
			char extra[32];

			snprintf(extra, sizeof(extra), "severity=\"%s\"",
				 verdicts[v]);
			expo_sample_u64(e, hs->text.data + hs->h[i].labels,
					extra, hs->h[i].reasons[v]);
		}
	return e->err;
}

void health_snap_free(struct health_snap *hs)
{
	if (!hs)
		return;
	for (size_t i = 0; i < hs->n; i++)
		free(hs->h[i].name);
	free(hs->h);
	buf_free(&hs->text);
	free(hs);
}
