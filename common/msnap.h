/* SPDX-License-Identifier: MIT */
/*
 * The metrics snapshot: hosts, their RDMA devices and ports, the ports'
 * GID and P_Key entries and counters, as one /metrics response shows them,
 * and the one renderer of their families (docs/metrics.md). Both sources
 * of these series fill it: the exporter from the collector's database
 * (exporter/snapshot.c), the probe from its own struct report
 * (probe/pmetrics.c). Because both build their label lists with the
 * msnap_add_*() functions below and both write them with msnap_render(),
 * the same port gives the same series, names, HELP and labels from either.
 *
 * Labels are escaped once, when a host, device or port is added: each
 * carries its ready-made label list. Every string lives in the snapshot's
 * arena and goes with msnap_free(). Unknown numbers are < 0 (doubles) or
 * -1 (integers), as in the report and in the schema's NULLs.
 */
#ifndef IBPULSE_MSNAP_H
#define IBPULSE_MSNAP_H

#include <stddef.h>
#include <stdint.h>

#include "counters.h"
#include "expo.h"
#include "report.h"

/*
 * Each host, device and port starts with its source's int64_t id (the
 * database row id in the exporter, a running number in the probe): arrays
 * added in id order can be searched with msnap_find_*().
 */
struct msnap_host {
	int64_t id;
	const char *name;
	const char *labels; /* host="..." */
	const char *info;   /* probe_version="..." */
	double last_report; /* seconds since the epoch */
	int up;		    /* reported within stale_after */
	int detail;	    /* its devices and ports are served */
	uint64_t fp; /* what its devices, ports and counters were read from
		      * (expo_segment()); 0: unknown */
};

struct msnap_device {
	int64_t id;
	size_t host;
	const char *labels;	 /* host="...",device="..." */
	const char *info;	 /* board_id="...",firmware_version="...",... */
	struct report_pcie pcie; /* .address is in @info, NULL here */
};

struct msnap_port {
	int64_t id;
	size_t host, device; /* SIZE_MAX: not a host's (a switch port) */
	const char *labels;  /* host="...",device="...",port="N" */
	const char *info;    /* link_layer="...",port_guid="...",lid=... */
	int64_t state, phys_state, rate_bytes;
};

struct msnap_gid {
	size_t port;
	const char *labels; /* index="...",gid="...",type="...",netdev="..." */
};

struct msnap_pkey {
	size_t port;
	const char *labels; /* index="...",pkey="0xffff",membership="full" */
};

/* A distinct counter name, described by common/counters.h once. */
struct msnap_key {
	enum counter_source source;
	const char *name;
	const struct counter_def *def;
	const char *extra;     /* counter="name" for generic families */
	const char *sat_extra; /* counter="name" for narrow counters */
};

struct msnap_row {
	uint32_t port;	/* index into ports */
	uint32_t key;	/* index into keys */
	uint64_t value; /* raw */
};

struct msnap {
	struct msnap_host *hosts;
	size_t n_hosts;
	struct msnap_device *devices;
	size_t n_devices;
	struct msnap_port *ports;
	size_t n_ports;
	struct msnap_gid *gids;
	size_t n_gids;
	struct msnap_pkey *pkeys;
	size_t n_pkeys;
	struct msnap_key *keys;
	size_t n_keys;
	struct msnap_row *rows;
	size_t n_rows;
	struct msnap_mem *mem; /* arena, key hash and capacities */
};

/* What a host, device or port is made of; strings may be NULL (""). */
struct msnap_host_in {
	int64_t id;
	const char *name, *probe_version;
	double last_report;
	int up, detail;
	uint64_t fp; /* msnap_host.fp */
};

struct msnap_device_in {
	int64_t id;
	const char *name;
	const char *board_id, *fw_ver, *hca_type, *node_guid, *sys_image_guid;
	const char *node_desc;
	const char *netdevs; /* comma-separated (report_netdevs_join()) */
	const char *pcie_address;
	int64_t numa_node;
	struct report_pcie pcie; /* its .address is not read */
};

struct msnap_port_in {
	int64_t id, port;
	int64_t state, phys_state, rate_bytes;
	const char *link_layer, *port_guid, *netdev;
	int64_t lid, sm_lid, lmc, cap_mask;
};

/* msnap_new() - an empty snapshot. Returns 0 or -ENOMEM; msnap_free(). */
int msnap_new(struct msnap **out);
/* Free @sn and every string in it. NULL is fine. */
void msnap_free(struct msnap *sn);

/*
 * The msnap_add_*() functions copy what they are given (labels escaped)
 * into the snapshot. Each returns 0 or -ENOMEM; an entry that is not
 * shown (an all-zero GID, an unused P_Key) is skipped with 0.
 */
int msnap_add_host(struct msnap *sn, const struct msnap_host_in *in);
int msnap_add_device(struct msnap *sn, size_t host,
		     const struct msnap_device_in *in);
int msnap_add_port(struct msnap *sn, size_t device,
		   const struct msnap_port_in *in);
int msnap_add_gid(struct msnap *sn, size_t port, int64_t index, const char *gid,
		  const char *type, const char *netdev);
int msnap_add_pkey(struct msnap *sn, size_t port, int64_t index, int64_t pkey);
/* A port whose strings are in the arena already (exporter/fabric_snap.c). */
int msnap_add_raw_port(struct msnap *sn, const struct msnap_port *p);
int msnap_add_row(struct msnap *sn, uint32_t port, uint32_t key,
		  uint64_t value);

/*
 * msnap_key() - the index of counter key (@source, @name[0..@len)), added
 * on first sight; -1 on -ENOMEM. @source is below CSRC_COUNT (callers
 * check what they read). Hashed: cheap per counter row.
 */
long msnap_key(struct msnap *sn, int source, const char *name, size_t len);

/* A copy of @len bytes of @s in the arena, NUL-terminated; NULL: ENOMEM. */
const char *msnap_str(struct msnap *sn, const char *s, size_t len);

/* The index of the host, device or port with @id (binary search); -1. */
long msnap_find_host(const struct msnap *sn, int64_t id);
long msnap_find_device(const struct msnap *sn, int64_t id);
long msnap_find_port(const struct msnap *sn, int64_t id);

/* msnap_render() flags: the exporter knows when a host last reported. */
#define MSNAP_LIVENESS 1u /* ibpulse_host_up, _last_report_timestamp */

/*
 * msnap_render() - write the families of @sn to @e: the hosts (with
 * MSNAP_LIVENESS in @flags their liveness, else ibpulse_host_info
 * only), the devices and their PCIe state, the ports and their
 * addressing, the counters grouped by family and the saturation gauge.
 * Within a family the samples go host by host (in @sn's host order), each
 * host one segment (expo_segment(): key its id, fingerprint its fp), then
 * the switch ports as one last segment; within a host by device or port
 * (array order), and a port's counters by family, source and name. A host
 * whose fp the hooks hold may have no devices, ports or rows in @sn at all.
 * Every counter family is started, samples or not (with hooks, a family
 * may have samples only in segments the hooks hold). Returns 0, or @e's
 * sticky error.
 */
int msnap_render(struct expo *e, const struct msnap *sn, unsigned flags);

#endif
