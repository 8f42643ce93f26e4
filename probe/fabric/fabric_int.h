/* SPDX-License-Identifier: MIT */
/*
 * What the files of probe/fabric share behind fabric.h: the poller's
 * state and the discovery step (disc.c). Not part of the door.
 */
#ifndef IBPULSE_FABRIC_INT_H
#define IBPULSE_FABRIC_INT_H

#include "fabric.h"
#include "fwin.h"

#define FABRIC_CA_NAME_LEN 64

struct fabric {
	struct fabric_settings s; /* strings borrowed from the caller's */
	char ca[FABRIC_CA_NAME_LEN];
	unsigned port;
	struct fwin *win;
	struct fabric_net net;
	bool have_net;
	struct fabric_sweep_stats last;
	double discovered_mono; /* CLOCK_MONOTONIC of the last discovery */
	bool want_rediscover;
	uint64_t net_hash;  /* what routes depend on (fabric_net_hash) */
	bool routes_want;   /* the picture changed since the last read */
	double routes_mono; /* CLOCK_MONOTONIC of the last read */
	struct fabric_route_stats routes; /* the last read */
	double pass_mono, pass_cpu;	  /* when the current pass began */
};

/*
 * fabric_pass_begin() / fabric_pass_end() - around one pass through the
 * MAD window (a sweep, a read of the tables): zero the window's counts
 * and note the clocks, then fill @p with what the pass cost.
 */
void fabric_pass_begin(struct fabric *f, struct fabric_pass *p);
void fabric_pass_end(struct fabric *f, struct fabric_pass *p);

/*
 * fabric_disc_run() - discover the fabric through @ca port @port into
 * *@out (zeroed first; free with fabric_net_clear). 0 or -EIO / -ENOMEM.
 */
int fabric_disc_run(const char *ca, unsigned port,
		    const struct fabric_settings *s, struct fabric_net *out);
void fabric_net_clear(struct fabric_net *net);

/*
 * fabric_net_hash() - FNV-1a of what routes depend on: every node's GUID,
 * type, LID and table top, every port's number, LID, LMC, state and
 * remote end. A new value after a discovery means the tables are read
 * again.
 */
uint64_t fabric_net_hash(const struct fabric_net *net);

struct route_run;

/*
 * fabric_lft_runs() - switch @n's table (non-NULL lft) as runs of LIDs to
 * one port (route.h) into *@out (the caller frees), *@n_runs of them. 0 or
 * -ENOMEM.
 */
int fabric_lft_runs(const struct fabric_node *n, struct route_run **out,
		    size_t *n_runs);

/*
 * fabric_route_print() - the path from @src to LID @dst through the last
 * picture and tables to @out: as ibtracert prints it then the
 * adaptive-routing caveat, or (@json) as the route API's JSON. On a
 * failure, the text form prints the path as far as it went; the reason is
 * in @err. 0 or route_path()'s codes, -ENOMEM.
 */
int fabric_route_print(const struct fabric *f, unsigned src, unsigned dst,
		       bool json, FILE *out, char *err, size_t errlen);

#endif
