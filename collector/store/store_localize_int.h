/* SPDX-License-Identifier: MIT */
/*
 * Inside the localization store: shared by store_localize.c (tests in,
 * the window in memory, retire and prune), store_localize_run.c (a run
 * per profile and metric: elements, counters, suspects, what the evidence
 * and the planner learn) and store_localize_sql.c (the statements). Not
 * for other files.
 */
#ifndef IBPULSE_COLLECTOR_STORE_LOCALIZE_INT_H
#define IBPULSE_COLLECTOR_STORE_LOCALIZE_INT_H

#include "store_localize.h"

#include <sqlite3.h>

#define LZ_LINK_BYTES 18 /* a link in localize_test.links */

enum lsql {
	LSQL_LID,
	LSQL_TEST_INS,
	LSQL_TEST_TRIM,
	LSQL_TESTS,
	LSQL_FROMS,
	LSQL_HOST_SUS,
	LSQL_OPEN,
	LSQL_SUS_INS,
	LSQL_SUS_UPD,
	LSQL_SUS_CLOSE,
	LSQL_EV_EL,
	LSQL_COUNTERS,
	LSQL_RETIRE,
	LSQL_PRUNE,
	LSQL_COVER_DEL,
	LSQL_COVER_INS,
	LSQL_UNCOV_DEL,
	LSQL_UNCOV_INS,
	LSQL_EXPL_INS,
	LSQL_EXPL_GET,
	LSQL_EXPL_PRUNE,
	LSQL_COUNT
};

/* An element of the window: interned once, for every profile. */
struct lz_el {
	enum loc_kind kind;
	uint64_t guid, peer_guid; /* a link: its egress and ingress nodes;
				   * a switch: guid */
	unsigned port, peer_port; /* a link: its egress and ingress ports */
	char *host, *device;	  /* the host side */
	unsigned hport;		  /* a port's number; a device: 0 */
	uint32_t sw[2];		  /* a link: the switches at its ends */
	/* a link: what its ends' counters said, read at cnt_at (the
	 * collector's clock; 0: never), kept for an eighth of a window */
	double cnt_at, cnt_bonus;
	char *cnt_text; /* NULL: nothing */
};

/* One judged test of the window. */
struct lz_obs {
	double started, value, baseline;
	int bad;
	uint32_t ends[2]; /* the port elements: initiator, responder */
	uint32_t devs[2]; /* their devices */
	uint32_t *elems;  /* every element it crossed, each once (owned) */
	uint32_t n_elems;
	int explained; /* its ends' evidence was told (localize_explained) */
};

/* A bad result of an evidence element held from its judgement. */
struct lz_held {
	int64_t id; /* the evidence element */
	double started;
};

/* The window of one (profile, metric). */
struct lz_kind {
	char *profile;
	enum baseline_metric metric;
	struct lz_obs *obs; /* in order of arrival */
	size_t n, cap;
	double newest; /* the newest started */
	double *from;  /* per element: its window starts after */
	size_t n_from;
	int dirty;	   /* a test came that may change a verdict */
	double last_run;   /* collector's clock */
	uint32_t *confirm; /* links needing confirmation tests */
	size_t n_confirm;
	uint8_t *interest; /* per element: bad tests, named or to be
			    * confirmed at the last run */
	size_t n_interest;
	struct lz_held *held; /* by id, then started (lz_run) */
	size_t n_held;
};

/* Order of lz_held: id, then started. */
int lz_held_cmp(const void *a, const void *b);

/* Where a profile's data flows, as its results said. */
struct lz_flow {
	char *profile;
	unsigned flow;
	int bandwidth;
};

struct store_localize {
	struct store_localize_opts o;
	struct lz_flow *flows;
	size_t n_flows;
	sqlite3_stmt *s[LSQL_COUNT];
	struct map *keys; /* element key -> index + 1 */
	struct lz_el *el;
	size_t n_el, cap_el;
	struct lz_kind *kinds;
	size_t n_kinds;
	int loaded; /* the window is in memory */
	uint64_t version;
	struct store_localize_status status;
};

/* The statement @w, reset with its bindings cleared. */
sqlite3_stmt *lz_stmt(struct store_localize *lz, enum lsql w);
/* Its SQL (store_localize_sql.c). */
const char *lz_sql(enum lsql w);
/* Binds by name: store_int.h's store_name_*(). */

/* "0x0002c90300a1b2c3" */
void lz_guid_text(uint64_t guid, char *buf, size_t len);

/* The window in memory (read from the table on first use). */
int lz_load(struct store *st);
/* The (profile, metric) slot, added if absent; NULL on -ENOMEM. */
struct lz_kind *lz_kind_of(struct store_localize *lz, const char *profile,
			   enum baseline_metric m);
/* The index of a port (@port > 0) or device element; LOC_NONE unknown. */
uint32_t lz_host_find(const struct store_localize *lz, const char *host,
		      const char *device, unsigned port);
/* The index of link (egress @guid, @port) or switch (@port 0). */
uint32_t lz_fabric_find(const struct store_localize *lz, enum loc_kind k,
			uint64_t guid, unsigned port);
/* Drop the tests older than @cutoff from @k. */
void lz_trim(struct lz_kind *k, double cutoff);

/* Localize one slot (store_localize_run.c). */
int lz_run(struct store *st, struct lz_kind *k, double now);

#endif
