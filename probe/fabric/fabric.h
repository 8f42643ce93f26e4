/* SPDX-License-Identifier: MIT */
/*
 * The fabric poller: the door of probe/fabric. One probe per subnet (the
 * `fabric` role) discovers the whole fabric with libibnetdisc (nodes,
 * switches, links, GUIDs, LIDs, node descriptions, each port's width and
 * speed active, enabled and supported) and sweeps every port's PerfMgt
 * counters through a window of many outstanding MADs over libibumad
 * (fwin.h), so that the switch end of every cable is read as the host end
 * is from sysfs, under the same counter names.
 *
 * Life cycle: fabric_open() resolves the CA and port (refusing RoCE ports,
 * which have no subnet manager or PMA path) and opens the umad port;
 * fabric_discover() replaces the fabric's picture; fabric_sweep() reads
 * every reachable port once; fabric_routes_read() reads every switch's
 * linear forwarding table (the routes, common/route.h). fabric_rediscover_due()
 * says when the picture is stale: its interval passed, or the last sweep
 * saw a LID stop answering or a LinkDowned counter move;
 * fabric_routes_due() when the tables are: never read, the picture
 * changed, or route_interval passed. Everything returned points into the
 * struct fabric and stays valid until the next discover or close.
 */
#ifndef IBPULSE_FABRIC_H
#define IBPULSE_FABRIC_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "conf.h"
#include "pma.h"

/* [fabric] settings; fabric_conf_opts describes each (defaults, ranges). */
struct fabric_settings {
	char *ca;		  /* NULL: the first InfiniBand CA */
	long long port;		  /* 0: its first active InfiniBand port */
	long long window;	  /* MADs outstanding at once */
	long long per_node;	  /* ... at one node's PMA */
	long long timeout;	  /* milliseconds per MAD */
	long long retries;	  /* resends after a timeout */
	long long interval;	  /* seconds between sweeps */
	long long rediscover;	  /* seconds between discoveries */
	long long smps;		  /* SMPs outstanding during discovery */
	long long route_interval; /* seconds between LFT reads; 0 never */
	int details; /* also PortRcvErrorDetails, XmitDiscardDetails */
	int reset;   /* reset the counters after reading them */
	char *log_level;
	/* pushing to the collector (fabric_push.h) */
	char *collector_url; /* NULL: print only */
	char *token_file, *ca_file, *host;
	double connect_timeout, push_timeout;
	long long chunk_ports; /* ports per report */
};

extern const struct conf_opt fabric_conf_opts[];

/*
 * fabric_conf_extra() - conf_load()'s handler for the other sections of
 * probe.ini: [probe] collector_url, token_file, ca_file, host,
 * connect_timeout, timeout (push_timeout) and log_level are the poller's
 * too unless [fabric] sets them; the rest is ignored.
 */
int fabric_conf_extra(void *obj, const char *section, const char *name,
		      const char *value, char *err, size_t errlen);

enum fabric_node_type {
	FABRIC_CA = 1,
	FABRIC_SWITCH = 2,
	FABRIC_ROUTER = 3,
};

#define FABRIC_NO_NODE SIZE_MAX

/* Why a port has no counters from the last sweep (fabric_port.status). */
#define FABRIC_NOT_ASKED 1 /* down CA port, no LID: nothing to ask */

struct fabric_port {
	unsigned num;
	uint16_t lid;  /* where its PMA answers (a switch's port-0 LID) */
	uint8_t lmc;   /* it owns LIDs lid .. lid + 2^lmc - 1 */
	uint64_t guid; /* the port GUID (a switch's: port 0's) */
	uint8_t state, phys_state;
	/* PortInfo masks as the IBA encodes them (fabric_width_lanes...) */
	uint8_t width_active, width_enabled, width_supported;
	uint8_t speed_active, speed_enabled, speed_supported;
	uint8_t espeed_active, espeed_enabled, espeed_supported;
	uint8_t fdr10_active, fdr10_enabled, fdr10_supported;
	uint64_t remote_guid; /* 0: nothing attached */
	unsigned remote_port;
	size_t remote; /* index in fabric_net.nodes, FABRIC_NO_NODE */
	/* the last sweep */
	int status;		  /* 0 read; FABRIC_NOT_ASKED; -errno */
	enum pma_kind failed;	  /* which Get failed when status < 0 */
	struct pma_counters c;	  /* valid where c.have says */
	struct pma_counters prev; /* the sweep before, same port */
};

struct fabric_node {
	uint64_t guid;
	enum fabric_node_type type;
	char desc[65]; /* NodeDescription, printable ASCII */
	uint16_t lid;  /* switches: port 0; CAs: 0 (see the ports) */
	unsigned numports;
	struct fabric_port *ports; /* n_ports, ascending port number */
	size_t n_ports;
	/* the PMA, learnt once per discovery */
	bool cpi_known;
	int cpi_status; /* the ClassPortInfo Get, 0 or -errno */
	struct pma_caps caps;
	bool no_details; /* answered "unsupported" for the details */
	/* switches: the linear forwarding table (fabric_routes_read()) */
	unsigned lft_top;   /* LinearFDBTop from SwitchInfo: its last LID */
	uint8_t *lft;	    /* lft_top + 1 egress ports by LID; NULL: none */
	int lft_status;	    /* 0, or why the last read failed (-errno) */
	unsigned lft_block; /* ... the block that failed */
};

struct fabric_net {
	struct fabric_node *nodes; /* ascending GUID */
	size_t n_nodes;
	size_t n_switches, n_cas, n_ports, n_links;
	uint64_t local_guid;  /* the node discovery started from */
	double discovered_at; /* CLOCK_REALTIME */
	double discover_seconds;
	unsigned discover_mads;
};

/* What one pass through the MAD window cost: a sweep, a read of tables. */
struct fabric_pass {
	double started_at; /* CLOCK_REALTIME; 0: never */
	double seconds, cpu_seconds;
	uint64_t mads, retries, timeouts, errors, stale, unreachable;
};

struct fabric_sweep_stats {
	struct fabric_pass pass;
	size_t ports_read, ports_failed, ports_skipped;
	size_t lids_dead;
	bool link_downed_moved;
};

/* The last read of the forwarding tables. */
struct fabric_route_stats {
	struct fabric_pass pass;
	size_t switches, switches_failed, blocks;
};

struct fabric;

/*
 * fabric_open() - check @s, resolve the CA and port (the first active
 * InfiniBand one when unset) and open the umad port. Returns 0 with the
 * poller in *@out (free with fabric_close), or a negative errno with the
 * reason in @err: -ENODEV no such CA or port, -EPROTONOSUPPORT a RoCE
 * port, -EACCES no access to the umad device.
 */
int fabric_open(const struct fabric_settings *s, struct fabric **out, char *err,
		size_t errlen);
void fabric_close(struct fabric *f);

/* The CA and port in use ("mlx5_0", 1). */
const char *fabric_ca(const struct fabric *f);
unsigned fabric_ca_port(const struct fabric *f);

/*
 * fabric_discover() - a new picture of the fabric through libibnetdisc,
 * keeping what the old one learnt by GUID (PMA capabilities, the last
 * counters). Returns 0, or -EIO with the picture unchanged.
 */
int fabric_discover(struct fabric *f);

/*
 * fabric_sweep() - read every port's counters once, many MADs at a time.
 * A port that does not answer costs its timeout and retries once; every
 * other port of its node is then given up for this sweep. Returns 0
 * (ports that could not be read are named in their status), -ENOENT
 * before any discovery, -ECANCELED when *@stop was set.
 */
int fabric_sweep(struct fabric *f, const volatile sig_atomic_t *stop);

const struct fabric_net *fabric_net(const struct fabric *f);
const struct fabric_sweep_stats *fabric_last_sweep(const struct fabric *f);

/* 1 when the picture should be renewed before the next sweep. */
bool fabric_rediscover_due(const struct fabric *f, double now_mono);

/*
 * fabric_routes_due() - 1 when the forwarding tables should be read now:
 * never read since the last discovery that changed the picture (nodes,
 * links, LIDs, LMCs, port states, a table's top), a switch that did not
 * answer the last read, or route_interval seconds since the last read
 * (less half a sweep interval: the read follows the sweep in its cycle).
 * Never with route_interval 0.
 */
bool fabric_routes_due(const struct fabric *f, double now_mono);

/*
 * fabric_routes_read() - read every switch's LinearForwardingTable, the
 * blocks of 64 LIDs up to its LinearFDBTop, through the MAD window (the
 * sweep's window, timeouts, retries and dead-LID handling). A switch whose
 * read failed has no table (lft NULL) and says why (lft_status,
 * fabric_lft_error()). Returns 0, -ENOENT before any discovery,
 * -ECANCELED when *@stop was set.
 */
int fabric_routes_read(struct fabric *f, const volatile sig_atomic_t *stop);

/* Why switch @n has no table, in words ("LinearForwardingTable block 2:
 * timeout"). */
void fabric_lft_error(const struct fabric_node *n, char *buf, size_t len);

struct route_net;

/*
 * fabric_route_net() - the picture and its tables as a route net
 * (common/route.h) into *@out (free with route_net_free). 0, or a negative
 * errno with the reason in @err.
 */
int fabric_route_net(const struct fabric *f, struct route_net **out, char *err,
		     size_t errlen);

/*
 * fabric_json_write() - the picture and the last sweep as one line of
 * JSON to @out: the shape `ibpulse-probe fabric --once --json` prints
 * (docs/fabric.md); with @tables, each switch's forwarding table too.
 * Returns 0, -ENOMEM or -EIO.
 */
int fabric_json_write(const struct fabric *f, bool tables, FILE *out);

struct report_fabric;

/*
 * fabric_report_chunks() / fabric_report_chunk() - the picture as report
 * fabric sections (common/report_fabric.h) of at most @max_ports ports
 * each (a node is never split): how many, and chunk @chunk of them into
 * *@out (caller frees with report_fabric_free). With @routes, each switch
 * carries its forwarding table (or why it has none), and 64 runs of a
 * table weigh as one port. 0 or -ENOMEM.
 */
size_t fabric_report_chunks(const struct fabric *f, size_t max_ports,
			    bool routes);
int fabric_report_chunk(const struct fabric *f, size_t max_ports, bool routes,
			size_t chunk, struct report_fabric **out);

/* Lanes of a LinkWidth bit (1, 2, 4, 8, 12); 0 for none or several. */
unsigned fabric_width_lanes(unsigned width_bit);
/* The widest lane count in @mask (LinkWidthEnabled/Supported). */
unsigned fabric_width_max(unsigned mask);

/* Per-lane signalling rate in Gb/s of a port's active speed, 0 unknown. */
double fabric_speed_active(const struct fabric_port *p);
/* The fastest enabled per-lane speed. */
double fabric_speed_enabled_max(const struct fabric_port *p);
/* "SDR", "QDR", "FDR10", "EDR", "NDR"...: the active speed's name. */
const char *fabric_speed_name(const struct fabric_port *p);

/*
 * fabric_port_degraded() - 1 when the link is up and its active width or
 * speed is below what the port has enabled (a 4X cable trained at 1X);
 * @why ("width 1X of 4X") filled when non-NULL.
 */
bool fabric_port_degraded(const struct fabric_port *p, char *why, size_t len);

/* "switch", "ca", "router". */
const char *fabric_node_type_name(enum fabric_node_type t);

/* Find a node by GUID, NULL when not in @net. */
const struct fabric_node *fabric_find(const struct fabric_net *net,
				      uint64_t guid);

#endif
