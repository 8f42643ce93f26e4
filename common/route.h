/* SPDX-License-Identifier: MIT */
/*
 * Routes through an InfiniBand subnet, from its switches' linear forwarding
 * tables (LFTs): the one path function of ibpulse, used by the probe's
 * fabric role (`ibpulse-probe fabric --route`) and by the collector
 * (GET /api/v1/route, and the attribution of test results to the links
 * they crossed). Pure: no I/O, no SQLite, no clock.
 *
 * A struct route_net is built once from a picture of the subnet (every
 * node, every port with its LID range and what its link leads to, each
 * switch's LFT), then read-only: any number of threads may call
 * route_path() on it at once. The LFTs are indexed by switch (one array of
 * egress ports per switch, by LID) and every LID by its owning port, so a
 * path costs one table look-up per hop and allocates nothing: thousands of
 * paths a second at 2,000 hosts are a few milliseconds.
 *
 * The LFT is the path a unicast packet takes unless the switch routes
 * adaptively (NVIDIA's `ar_updn` routing engine): then it is the default
 * path only, and whoever shows a route must say so (ROUTE_AR_CAVEAT).
 *
 * Directed links: a path crosses source port -> first switch, switch ->
 * switch..., last switch -> destination port. Each hop carries both ends
 * of the link it came in on (`from`) and of the link it leaves by (`to`),
 * and route_path_links() lists them in order. A directed link is named by
 * its egress end alone, (node index, port): a dense key for arrays of
 * per-link evidence (route_net_nodes() nodes x 256 ports at most).
 */
#ifndef IBPULSE_ROUTE_H
#define IBPULSE_ROUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ROUTE_MAX_HOPS 64    /* switches on one path (a DR path's limit) */
#define ROUTE_LID_MAX 0xBFFF /* the highest unicast LID */
#define ROUTE_PORT_NONE 255  /* an LFT entry that forwards nowhere */
#define ROUTE_NO_NODE UINT32_MAX
#define ROUTE_MAX_NODES (1u << 24)

/* Shown beside every route: what an LFT cannot promise. */
#define ROUTE_AR_CAVEAT                                                        \
	"the path the switches' linear forwarding tables give; with adaptive " \
	"routing (e.g. OpenSM's ar_updn) traffic may take others"

enum route_node_type {
	ROUTE_CA = 1,
	ROUTE_SWITCH = 2,
	ROUTE_ROUTER = 3,
};

/*
 * One run of an LFT: LIDs from @lid up to the next run's @lid - 1 (the
 * last run: up to the table's top) leave by @port (ROUTE_PORT_NONE: no
 * entry). Runs are ascending and the first starts at LID 0.
 */
struct route_run {
	uint16_t lid;
	uint8_t port;
};

/* A node, as route_add_node() takes it. */
struct route_node_in {
	uint64_t guid;
	enum route_node_type type;
	const char *desc; /* NodeDescription; copied */
	unsigned numports;
	uint16_t lid; /* switches: the port-0 LID (0: none) */
	uint8_t lmc;  /* ... and its LMC */
};

/* A port, as route_add_port() takes it. */
struct route_port_in {
	unsigned num;	      /* 1..254 (a switch's port 0 is its node's) */
	uint16_t lid;	      /* CA ports: the base LID; 0 none */
	uint8_t lmc;	      /* CA ports: 2^lmc LIDs from @lid */
	uint8_t state;	      /* 1 DOWN .. 4 ACTIVE; 0 unknown */
	uint64_t port_guid;   /* 0 unknown */
	uint64_t remote_guid; /* the node at the other end; 0 nothing */
	unsigned remote_port;
};

/* An end of a link: a port of a node. */
struct route_end {
	uint32_t node; /* index (route_node_get()); ROUTE_NO_NODE: none */
	uint64_t guid; /* the node's GUID */
	unsigned port; /* 0: a switch's own port (its management port) */
};

/* One switch on a path. */
struct route_hop {
	uint32_t node; /* the switch's index */
	uint64_t guid;
	const char *desc; /* points into the net */
	uint16_t lid;	  /* the switch's LIDs: lid .. lid + 2^lmc - 1 */
	uint8_t lmc;
	unsigned in_port;      /* 0: the path starts at this switch */
	unsigned out_port;     /* 0: the destination is this switch */
	struct route_end from; /* far end of in_port (node NONE: in_port 0) */
	struct route_end to;   /* far end of out_port (this switch, port 0,
				* when out_port is 0) */
};

/* A path, filled by route_path(): the caller owns it (a few KiB). */
struct route_path {
	unsigned src_lid, dst_lid;
	struct route_end src; /* the port owning src_lid */
	struct route_end dst; /* the port owning dst_lid */
	size_t n_hops;
	struct route_hop hops[ROUTE_MAX_HOPS];
};

/* A directed link a path crosses: traffic leaves @from, enters @to. */
struct route_link {
	struct route_end from, to;
};

/* What route_node_get() tells of a node. */
struct route_node_info {
	uint64_t guid;
	enum route_node_type type;
	const char *desc;
	unsigned numports;
	uint16_t lid; /* switches */
	uint8_t lmc;
	bool has_lft;	       /* switches: an LFT was given */
	unsigned lft_top;      /* ... its highest LID */
	const char *lft_error; /* why it could not be read; NULL */
};

/* What route_port_get() tells of a port. */
struct route_port_info {
	uint16_t lid; /* the LID range the port owns (a switch: its own) */
	uint8_t lmc;
	uint8_t state;
	uint64_t port_guid;
	struct route_end remote; /* node ROUTE_NO_NODE: nothing known */
};

/* Counts of a finished net, for logs and tests. */
struct route_net_stats {
	size_t nodes, switches, ports, links, lfts, lft_errors;
	size_t lid_conflicts; /* LIDs claimed by two ports: the port of the
			       * node added first keeps it */
	size_t dangling;      /* links to a node not in the picture */
	unsigned top_lid;     /* the highest LID any port owns */
};

struct route_net;

/*
 * Building: route_net_new(), any number of route_add_node(),
 * route_add_port(), route_add_lft() and route_add_lft_error() in any order
 * (ports and tables name their node by GUID), then route_net_finish().
 * When two ports claim one LID (a picture with a node that left), the
 * node added first keeps it: add the freshest first.
 * Each returns 0 or a negative errno (-ENOMEM; -EINVAL for a value out of
 * range, with the reason in the finish error). route_net_free() accepts
 * NULL.
 */
int route_net_new(struct route_net **out);
void route_net_free(struct route_net *n);
int route_add_node(struct route_net *n, const struct route_node_in *in);
int route_add_port(struct route_net *n, uint64_t guid,
		   const struct route_port_in *in);
/* @runs: route_runs_check()'s rules for @top; copied (expanded). */
int route_add_lft(struct route_net *n, uint64_t guid, unsigned top,
		  const struct route_run *runs, size_t n_runs);
/* The same from the table itself: @lft[0..@top], copied. */
int route_add_lft_table(struct route_net *n, uint64_t guid, unsigned top,
			const uint8_t *lft);
/* The switch's LFT could not be read: @why is shown on a path over it. */
int route_add_lft_error(struct route_net *n, uint64_t guid, const char *why);

/*
 * route_net_finish() - index what was added: nodes by GUID, links, the
 * owner of every LID. Returns 0, or -EINVAL (two nodes with one GUID, a
 * port or table of no node, a value out of range: @err says which) or
 * -ENOMEM. Only a finished net answers route_path().
 */
int route_net_finish(struct route_net *n, char *err, size_t errlen);

void route_net_stats(const struct route_net *n, struct route_net_stats *out);
size_t route_net_nodes(const struct route_net *n);

/* Node @idx (< route_net_nodes()); -ENOENT out of range. */
int route_node_get(const struct route_net *n, uint32_t idx,
		   struct route_node_info *out);
/* The index of node @guid, ROUTE_NO_NODE when unknown. */
uint32_t route_node_find(const struct route_net *n, uint64_t guid);
/* Port @port of node @idx; -ENOENT when it has none. */
int route_port_get(const struct route_net *n, uint32_t idx, unsigned port,
		   struct route_port_info *out);

/*
 * route_lid_owner() - the port whose LID range holds @lid (a switch's
 * port 0 for its own LIDs) into *@out. 0, or -ENOENT.
 */
int route_lid_owner(const struct route_net *n, unsigned lid,
		    struct route_end *out);

/*
 * route_path() - the path from the port owning @src_lid to @dst_lid, as
 * the forwarding tables take it: the switches in order, from the one the
 * source port is linked to (or the source itself, when it is a switch)
 * to the port whose LID range holds @dst_lid. No allocation; @err (may be
 * NULL) gets the reason of a failure. Returns 0 or:
 *   -EINVAL        a LID outside 1..ROUTE_LID_MAX, or @n not finished
 *   -ENOENT        no port holds @src_lid or @dst_lid
 *   -ENOLINK       a link to nowhere: the source port, or a switch's
 *                  egress port, has nothing (known) attached or is not
 *                  ACTIVE
 *   -EHOSTUNREACH  a hole: an LFT entry of 255, a LID beyond the table's
 *                  top, a port the switch does not have, or a delivery to
 *                  a port that does not own @dst_lid
 *   -ENODATA       a switch on the way has no LFT (not read, or failed)
 *   -ELOOP         the tables loop (a switch reached twice)
 *   -E2BIG         more than ROUTE_MAX_HOPS switches
 * @out is filled up to where the walk stopped (n_hops) either way.
 */
int route_path(const struct route_net *n, unsigned src_lid, unsigned dst_lid,
	       struct route_path *out, char *err, size_t errlen);

/*
 * route_path_from() - the same from port @port of node @node (a CA port,
 * or a switch with port 0), when the caller knows the port rather than a
 * LID of it: @out->src_lid is then the port's base LID.
 */
int route_path_from(const struct route_net *n, uint32_t node, unsigned port,
		    unsigned dst_lid, struct route_path *out, char *err,
		    size_t errlen);

/*
 * route_lft_get() - the egress port switch @node's table gives @lid (0: the
 * switch itself, ROUTE_PORT_NONE: no entry, or a LID beyond the table's
 * top). -ENODATA when the switch has no table, -EINVAL for a node out of
 * range or not a switch, or a net not finished. No allocation.
 */
int route_lft_get(const struct route_net *n, uint32_t node, unsigned lid);

/*
 * route_path_links() - the directed links @p crosses, in order, into
 * @out (room for ROUTE_MAX_HOPS + 1): source port -> first switch (when
 * the source is a CA port), switch -> switch, last switch -> destination
 * port (when it is not the switch itself). Returns how many.
 */
size_t route_path_links(const struct route_path *p, struct route_link *out);

/*
 * route_lid_parse() - a unicast LID as text, decimal or 0x-hex ("25",
 * "0x19"), into *@out. 0, or -EINVAL unless it is one number in
 * 1..ROUTE_LID_MAX.
 */
int route_lid_parse(const char *s, unsigned *out);

/* The number of runs of @lft[0..@top]. */
size_t route_runs_count(const uint8_t *lft, unsigned top);
/* @lft[0..@top] as runs into @out (route_runs_count() of them). */
size_t route_runs_encode(const uint8_t *lft, unsigned top,
			 struct route_run *out);
/*
 * route_runs_check() - 0 when @runs describe a table of LIDs 0..@top: the
 * first at LID 0, ascending, none beyond @top, @top <= ROUTE_LID_MAX.
 * Else -EINVAL with the reason (naming the run) in @err.
 */
int route_runs_check(const struct route_run *runs, size_t n, unsigned top,
		     char *err, size_t errlen);
/* Checked @runs into @lft (@top + 1 entries). */
void route_runs_expand(const struct route_run *runs, size_t n, unsigned top,
		       uint8_t *lft);

#endif
