/* SPDX-License-Identifier: MIT */
/*
 * The counters report: what a probe sends to the collector in
 * POST /api/v1/report (docs/api.md). The probe fills a struct report from
 * sysfs and encodes it; the collector decodes and validates it. Values are
 * raw, as the kernel shows them (port_xmit_data in 4-octet words, say):
 * meaning (units, saturation) is applied by whoever presents them, through
 * common/counters.h.
 *
 * Unknown values: a file that could not be read costs that one value.
 * Integers use -1 (or REPORT_UNKNOWN for u64) and strings NULL for
 * "unknown"; the JSON omits them.
 */
#ifndef IBPULSE_REPORT_H
#define IBPULSE_REPORT_H

#include <stddef.h>
#include <stdint.h>

#define REPORT_VERSION 1
#define REPORT_UNKNOWN UINT64_MAX

/* Limits the decoder enforces (and the probe never exceeds). */
#define REPORT_MAX_NAME 64  /* host, device, counter, netdev names */
#define REPORT_MAX_TEXT 256 /* fw_ver, node_desc, board_id ... */
#define REPORT_MAX_DEVICES 64
#define REPORT_MAX_PORTS 64	/* per device */
#define REPORT_MAX_COUNTERS 512 /* per port and source */
#define REPORT_MAX_GIDS 256	/* per port */
#define REPORT_MAX_PKEYS 256	/* per port */
#define REPORT_MAX_NETDEVS 16	/* per device */

/* Where a counter comes from; also the key in the JSON "counters" object. */
enum counter_source {
	CSRC_IB = 0,  /* ports/N/counters/ (PortCounters, Extended) */
	CSRC_HW = 1,  /* ports/N/hw_counters/ (vendor counters) */
	CSRC_NET = 2, /* the netdev: carrier_changes, ethtool statistics */
	CSRC_COUNT
};

struct report_counter {
	char *name;
	uint64_t value;
};

struct report_gid {
	unsigned index;
	char *gid;    /* "fe80:0000:...", as sysfs prints it */
	char *type;   /* "IB/RoCE v1", "RoCE v2" or NULL */
	char *netdev; /* RoCE only, else NULL */
};

struct report_pkey {
	unsigned index;
	uint16_t pkey; /* bit 15 set = full member */
};

struct report_port {
	unsigned port;		  /* 1-based port number */
	int state;		  /* 1 DOWN .. 5 ACTIVE_DEFER, -1 unknown */
	int phys_state;		  /* 1 Sleep .. 7 PhyTest, -1 unknown */
	uint64_t rate_bytes;	  /* bytes per second, REPORT_UNKNOWN */
	char *link_layer;	  /* "InfiniBand" | "Ethernet" | NULL */
	int64_t lid, sm_lid, lmc; /* -1 unknown */
	int64_t cap_mask;	  /* -1 unknown */
	char *port_guid;	  /* from GID 0 on IB ports, NULL otherwise */
	char *netdev; /* RoCE: the netdev behind GID 0, NULL on IB */
	struct report_gid *gids;
	size_t n_gids;
	struct report_pkey *pkeys;
	size_t n_pkeys;
	struct report_counter *counters[CSRC_COUNT];
	size_t n_counters[CSRC_COUNT];
};

struct report_pcie {
	char *address;	      /* "0000:3b:00.0", NULL when not PCI */
	double cur_speed_gts; /* GT/s, < 0 unknown */
	double max_speed_gts;
	int cur_width, max_width; /* lanes, -1 unknown */
	/* AER totals (aer_dev_correctable etc. TOTAL_ERR_*), -1 unknown */
	int64_t aer_correctable, aer_nonfatal, aer_fatal;
};

struct report_device {
	char *name; /* "mlx5_0", "rxe0" */
	char *node_guid, *sys_image_guid;
	char *fw_ver, *hca_type, *board_id, *node_desc;
	int numa_node; /* -1 unknown or none */
	char **netdevs;
	size_t n_netdevs;
	struct report_pcie pcie;
	struct report_port *ports;
	size_t n_ports;
};

/*
 * The device's identity texts, each named alike as a sysfs file of the
 * device and as the report's JSON key (node_guid, fw_ver, ...): one table
 * for the sysfs reader, the encoder and the decoder.
 */
#define REPORT_DEVICE_TEXTS 6
extern const char *const report_device_text_names[REPORT_DEVICE_TEXTS];

/* The @i-th identity text of @d (report_device_text_names[i]). */
char **report_device_text(struct report_device *d, size_t i);

struct report_fabric; /* report_fabric.h */

struct report {
	int version; /* REPORT_VERSION */
	char *host;
	double timestamp; /* seconds since the epoch, probe's clock */
	char *probe_version;
	struct report_device *devices;
	size_t n_devices;
	struct report_fabric *fabric; /* NULL: no fabric section */
};

/* Free everything a report holds, and the report itself. NULL is fine. */
void report_free(struct report *r);
/* Free what one port holds (not @p itself) and zero it. */
void report_port_clear(struct report_port *p);

/*
 * report_encode() - the JSON text of @r, NUL-terminated, in *@out (caller
 * frees). Returns 0 or a negative errno.
 */
int report_encode(const struct report *r, char **out);

/*
 * report_decode() - parse and validate a report. On success *@out holds a
 * new report (caller frees with report_free). On failure returns -EINVAL
 * and writes into @err (size @errlen) a reason that names the field, e.g.
 * "devices[0].ports[1].counters.hw.sent_pkts: must be a non-negative
 * integer". Nothing is returned on failure.
 */
int report_decode(const char *json, size_t len, struct report **out, char *err,
		  size_t errlen);

/*
 * report_pcie_degraded() - 1 when the PCIe link trained below what the
 * device supports (speed or width), 0 when it did not, -1 when that cannot
 * be told. A side counts only with its current value known (>= 0) and its
 * maximum above 0: a maximum of 0 is not a capability but "not reported"
 * (an SR-IOV virtual function reads its Link Capabilities as zero, so the
 * kernel shows max_link_width 0), and such a link is neither degraded nor
 * healthy. The one rule for `ibpulse-probe devices` and for
 * ibpulse_device_pcie_link_degraded (common/msnap.c), probe and exporter.
 */
int report_pcie_degraded(const struct report_pcie *p);

/*
 * report_netdevs_join() - @d's netdevs as "eth0,eth1" in @out (@size
 * bytes; "" when none). The collector keeps them so, the metrics show them
 * so. Returns @out.
 */
char *report_netdevs_join(const struct report_device *d, char *out,
			  size_t size);

/* Port states as the kernel numbers them (IB spec, PortInfo PortState;
 * sysfs ports/N/state), the report's "state"; plain numbers so that SQL
 * text can say them (REPORT_STR). */
#define REPORT_PORT_DOWN 1
#define REPORT_PORT_INIT 2
#define REPORT_PORT_ARMED 3
#define REPORT_PORT_ACTIVE 4
#define REPORT_PORT_ACTIVE_DEFER 5
#define REPORT_STR_(x) #x
#define REPORT_STR(x) REPORT_STR_(x)

/* Does state @s carry traffic (ACTIVE, or ACTIVE_DEFER)? */
static inline int report_port_up(int s)
{
	return s == REPORT_PORT_ACTIVE || s == REPORT_PORT_ACTIVE_DEFER;
}

/* "ACTIVE" for 4, "?" for unknown values; phys: "LinkUp" for 5. */
const char *report_port_state_name(int state);
const char *report_phys_state_name(int phys_state);

#endif
