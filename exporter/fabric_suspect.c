// SPDX-License-Identifier: MIT
/*
 * Link and switch suspects and link coverage in a scrape
 * (fabric_suspect.h): two small SELECTs, their label lists escaped once
 * into one text buffer (NUL-separated, by offset), as regress.c does.
 */
#include "fabric_suspect.h"

#include "buf.h"
#include "dbread.h"

#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

struct fsus_item {
	size_t labels; /* offset in text */
	int kind;      /* 0 link, 1 switch, 2 uncovered, 3 covered */
	double v, confidence;
};

struct fsus {
	struct buf text, scratch;
	struct fsus_item *v;
	size_t n, cap;
};

void fsus_free(struct fsus *f)
{
	if (!f)
		return;
	buf_free(&f->text);
	buf_free(&f->scratch);
	free(f->v);
	free(f);
}

static const char *col(sqlite3_stmt *s, int i)
{
	const char *v = dbread_text(s, i);

	return v ? v : "";
}

/* The scratch label list as a new item of @kind. */
static int fsus_keep(struct fsus *f, int kind, double v, double confidence)
{
	struct fsus_item *it;

	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 16;

		it = realloc(f->v, cap * sizeof(*it));
		if (!it)
			return -ENOMEM;
		f->v = it;
		f->cap = cap;
	}
	it = &f->v[f->n];
	*it = (struct fsus_item){f->text.len, kind, v, confidence};
	if (buf_add(&f->text, f->scratch.data ? f->scratch.data : "",
		    f->scratch.len) ||
	    buf_addc(&f->text, '\0'))
		return -ENOMEM;
	f->n++;
	return 0;
}

static int fsus_row(void *ctx, sqlite3_stmt *s)
{
	struct fsus *f = ctx;
	int sw = !strcmp(col(s, 0), "switch"), bad = 0;

	buf_reset(&f->scratch);
	if (sw) {
		bad |= expo_label(&f->scratch, "node_guid", col(s, 1));
		bad |= expo_label(&f->scratch, "node_desc", col(s, 2));
	} else {
		static const char *const names[] = {
			"a_node_guid", "a_node_desc", "a_port",
			"b_node_guid", "b_node_desc", "b_port"};

		for (int i = 0; i < 6; i++)
			bad |= expo_label(&f->scratch, names[i], col(s, 1 + i));
	}
	bad |= expo_label(&f->scratch, "profile", col(s, 7));
	if (bad)
		return -ENOMEM;
	return fsus_keep(f, sw, 1, dbread_nan(s, 8));
}

static int fsus_cover_row(void *ctx, sqlite3_stmt *s)
{
	struct fsus *f = ctx;
	int covered = !strcmp(col(s, 0), "covered");

	buf_reset(&f->scratch);
	if (!covered && expo_label(&f->scratch, "reason", col(s, 0)))
		return -ENOMEM;
	return fsus_keep(f, covered ? 3 : 2, (double)dbread_int(s, 1), NAN);
}

int fsus_read(sqlite3 *db, const struct snap_opts *o, struct fsus **out,
	      char *err, size_t errlen)
{
	/* clang-format off */
	static const char sus[] =
		"SELECT kind, a_node_guid, a_node_desc, coalesce(a_port, ''), "
		"coalesce(b_node_guid, ''), coalesce(b_node_desc, ''), "
		"coalesce(b_port, ''), profile, max(confidence) "
		"FROM fabric_suspect "
		"WHERE closed IS NULL "
		"GROUP BY kind, a_node_guid, a_port, b_node_guid, b_port, profile "
		"ORDER BY kind, a_node_guid, a_port, profile";
	static const char cover[] =
		"SELECT state, links "
		"FROM fabric_link_cover "
		"WHERE period = (SELECT max(period) FROM fabric_link_cover) "
		"ORDER BY state";
	/* clang-format on */
	struct fsus *f = calloc(1, sizeof(*f));
	int ret = 0;

	*out = NULL;
	if (!f)
		return -ENOMEM;
	buf_init(&f->text, 0);
	buf_init(&f->scratch, 0);
	if (o->shard == 0 && dbread_version(db) >= 9 &&
	    dbread_has_table(db, "fabric_suspect")) {
		ret = dbread_each(db, sus, "fabric suspects", NULL, fsus_row, f,
				  err, errlen);
		if (!ret)
			ret = dbread_each(db, cover, "link coverage", NULL,
					  fsus_cover_row, f, err, errlen);
	}
	if (ret) {
		fsus_free(f);
		return ret;
	}
	*out = f;
	return 0;
}

static const struct {
	const char *name, *help;
	int kind, confidence;
} fsus_families[] = {
	{"ibpulse_fabric_link_suspect",
	 "1 for each open fabric_link suspect: the directed link between two "
	 "switches that the bad tests crossing it point at (a_* the end the "
	 "traffic leaves, b_* the end it enters), per profile.",
	 0, 0},
	{"ibpulse_fabric_link_suspect_confidence",
	 "How much likelier the suspect link is than the other elements its "
	 "bad tests crossed, as a share (0 to 1).",
	 0, 1},
	{"ibpulse_switch_suspect",
	 "1 for each open switch suspect: every tested link of the switch is "
	 "implicated, per profile.",
	 1, 0},
	{"ibpulse_fabric_links_covered",
	 "Directed links between switches that the last planned period's "
	 "tests cross.",
	 3, 0},
	{"ibpulse_fabric_links_uncovered",
	 "Directed links between switches the last planned period left "
	 "without a test, by reason: duty_cycle (no room in the ports' duty "
	 "budget), no_route (no probe port's path crosses it), no_probe (no "
	 "probe behind one of its ends), off (coverage not planned).",
	 2, 0},
};

int fsus_render(struct expo *e, const struct fsus *f)
{
	if (!f || !f->n)
		return e->err;
	for (size_t k = 0; k < sizeof(fsus_families) / sizeof(*fsus_families);
	     k++) {
		expo_family(e, fsus_families[k].name, EXPO_GAUGE,
			    fsus_families[k].help);
		for (size_t i = 0; i < f->n; i++) {
			const struct fsus_item *it = &f->v[i];
			double v = fsus_families[k].confidence ? it->confidence
							       : it->v;

			if (it->kind == fsus_families[k].kind && !isnan(v))
				expo_sample(e, f->text.data + it->labels, NULL,
					    v);
		}
	}
	return e->err;
}
