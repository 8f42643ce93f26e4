/* SPDX-License-Identifier: MIT */
/*
 * The fabric section of a report: what a fabric poller (ibpulse-probe
 * fabric, docs/fabric.md) saw of the subnet, one entry per node keyed by
 * its GUID, so that two pollers of one subnet describe the same switch
 * with the same key and the collector stores it once. Each port carries
 * its state, width and speed, whether it is degraded, the other end of
 * its link and its counters under the sysfs names, raw. A poller splits a
 * large fabric over several reports (the collector's body limit); each is
 * complete for the nodes it holds. A switch may carry its linear
 * forwarding table as runs of LIDs to one egress port (route.h), and each
 * port its LMC, so that the LIDs of every port and the route to each are
 * known. JSON shape: docs/api.md, "Fabric".
 */
#ifndef IBPULSE_REPORT_FABRIC_H
#define IBPULSE_REPORT_FABRIC_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "jdec.h"
#include "report.h"
#include "route.h"

#define REPORT_MAX_FABRIC_NODES 16384 /* per report */
#define REPORT_MAX_FABRIC_PORTS 255   /* per node */
#define REPORT_MAX_FABRIC_COUNTERS 64 /* per port */

struct report_fport {
	unsigned port;
	int64_t lid; /* -1 unknown */
	int lmc;     /* the port owns 2^lmc LIDs from lid; -1 unknown */
	int state, phys_state; /* as report_port's; -1 unknown */
	int width_active;      /* lanes: 1, 2, 4, 8, 12; -1 unknown */
	int width_enabled;     /* the widest enabled */
	char *speed_active;    /* "EDR"; NULL unknown */
	char *speed_enabled;   /* the fastest enabled */
	uint64_t rate_bytes;   /* bytes per second, REPORT_UNKNOWN */
	char *degraded;	       /* "width 1X of 4X enabled"; NULL: not */
	uint64_t remote_guid;  /* 0: nothing attached */
	int remote_port;       /* -1 unknown */
	char *error;	       /* why the counters were not read; NULL: read */
	struct report_counter *counters;
	size_t n_counters;
};

struct report_fnode {
	uint64_t guid;
	int type; /* 1 CA, 2 switch, 3 router */
	char *desc;
	int64_t lid; /* switches: port 0; -1 unknown */
	unsigned numports;
	struct report_fport *ports;
	size_t n_ports;
	/*
	 * Switches: the linear forwarding table, when this report carries it
	 * (has_lft: its runs; or lft_error: why it could not be read).
	 */
	int has_lft;
	unsigned lft_top; /* the highest LID of the table */
	struct route_run *lft_runs;
	size_t lft_n_runs;
	char *lft_error;
};

struct report_fabric {
	char *ca; /* the poller's CA and port */
	unsigned port;
	double discovered; /* probe clock */
	double swept;
	double routed; /* when the forwarding tables were read; 0: none */
	struct report_fnode *nodes;
	size_t n_nodes;
};

void report_fabric_free(struct report_fabric *f);

/* The section as a JSON object (new reference), NULL when out of memory. */
json_t *report_fabric_encode(const struct report_fabric *f);

/*
 * report_fabric_decode() - the "fabric" member of @report, validated, into
 * *@out (NULL when absent). Every node GUID once, every port once per
 * node, counters named as sysfs names are. Returns 0, -EINVAL with the
 * path of the offending field in @d's error, or -ENOMEM.
 */
int report_fabric_decode(struct jdec *d, const json_t *report,
			 struct report_fabric **out);

/* "0x0002c90300a1b2c3"; @s has room for 19 bytes. */
void report_guid_str(uint64_t guid, char *s, size_t len);

#endif
