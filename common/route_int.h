/* SPDX-License-Identifier: MIT */
/*
 * The inside of a route net (route.h), shared by the builder (route.c) and
 * the walk (route_walk.c): nodes sorted by GUID, each with a row of port
 * slots, each switch's table one byte per LID, and the owner of every
 * unicast LID. Not part of the door.
 */
#ifndef IBPULSE_ROUTE_INT_H
#define IBPULSE_ROUTE_INT_H

#include "route.h"
#include "report.h"

#define OWNER_NONE UINT32_MAX
#define OWNER(node, port) ((uint32_t)(node) << 8 | (uint32_t)(port))
#define OWNER_NODE(o) ((o) >> 8)
#define OWNER_PORT(o) ((o)&0xff)

struct rnode {
	uint64_t guid;
	uint32_t seq; /* the order it was added in */
	char *desc;
	uint8_t type;
	uint8_t lmc;
	uint16_t lid;
	unsigned numports;
	uint32_t port0; /* its port 0's slot in route_net.ports */
	uint8_t *lft;	/* lft_top + 1 egress ports by LID; NULL: none */
	unsigned lft_top;
	char *lft_error;
};

struct rport {
	uint64_t port_guid;
	uint64_t remote_guid; /* while building */
	uint32_t remote;      /* node index, ROUTE_NO_NODE */
	uint8_t remote_port;
	uint8_t lmc;
	uint8_t state;
	bool present;
	uint16_t lid;
};

struct staged_port {
	uint64_t guid;
	struct route_port_in in;
};

struct staged_lft {
	uint64_t guid;
	uint8_t *lft;
	unsigned top;
	char *error;
};

struct route_net {
	struct rnode *nodes;
	size_t n_nodes, cap_nodes;
	struct rport *ports; /* slots */
	size_t n_slots;
	struct staged_port *sp;
	size_t n_sp, cap_sp;
	struct staged_lft *sl;
	size_t n_sl, cap_sl;
	uint32_t *owner; /* ROUTE_LID_MAX + 1 entries */
	bool finished;
	char bad[160]; /* the first add refused, for finish() */
	struct route_net_stats st;
};

/* The reason, printf-style, into @err (may be NULL); returns @code. */
int route_say(char *err, size_t len, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Port @port of node @node as an end of a link. */
static inline struct route_end route_end_of(const struct route_net *n,
					    uint32_t node, unsigned port)
{
	return (struct route_end){node, n->nodes[node].guid, port};
}

#endif
