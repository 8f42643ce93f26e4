// SPDX-License-Identifier: MIT
/*
 * Rendering one host's report as /metrics (pmetrics.h), and the
 * metrics_listen parser. The families and their order are those of the
 * exporter's exporter/render.c for devices, ports and counters, and the
 * labels are built as exporter/snapshot.c builds them from the database
 * (an unknown integer is an empty label value, cap_mask 8 hex digits,
 * all-zero GIDs and unused P_Keys left out), so the same port gives the
 * same series from either source. The label strings are escaped once per
 * port into one arena and addressed by offset (the arena may move).
 */
#include "pmetrics.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "counters.h"
#include "print.h"
#include "probe_settings.h"

#define SATURATED_HELP                                                         \
	"1 when a narrow IB error counter sits at its maximum (2^width-1): "   \
	"it saturates instead of wrapping, so its rate() reads zero on "       \
	"exactly the worst links. Reset it (perfquery -R) to count again."

/* The label lists of a device or a port (offsets into the arena). */
struct pm_lab {
	size_t labels; /* host,device[,port] */
	size_t info;   /* what its _info family adds */
};

/* A counter sample: its family, port and the "counter" label if any. */
struct pm_row {
	const struct counter_def *def;
	size_t family; /* index in the table, then the generic families */
	size_t port;
	uint64_t raw;
	size_t extra; /* offset of counter="name"; SIZE_MAX: none */
	size_t seq;   /* position, to keep port order within a family */
};

struct pm {
	const struct report *r;
	struct buf arena;   /* NUL-terminated label lists */
	struct buf scratch; /* the list being built */
	size_t host_labels, host_info;
	struct pm_lab *devs; /* one per report device */
	const struct report_port **ports;
	struct pm_lab *port_lab; /* one per port */
	size_t n_ports;
	struct pm_row *rows;
	size_t n_rows;
	const struct counter_def *table, *generic;
	size_t n_table, n_generic;
};

static const char *pm_str(const struct pm *m, size_t off)
{
	return off == SIZE_MAX ? NULL : m->arena.data + off;
}

/* Move the list built in the scratch buffer to the arena at *@off. */
static int pm_keep(struct pm *m, size_t *off)
{
	int ret;

	*off = m->arena.len;
	ret = buf_add(&m->arena, m->scratch.data ? m->scratch.data : "",
		      m->scratch.len);
	ret = ret ? ret : buf_add(&m->arena, "", 1);
	buf_reset(&m->scratch);
	return ret;
}

static int pm_device_info(struct buf *b, const struct report_device *d)
{
	char netdevs[REPORT_MAX_NETDEVS * (REPORT_MAX_NAME + 1) + 1] = "";
	size_t off = 0;
	int ret;

	for (size_t i = 0; i < d->n_netdevs && off < sizeof(netdevs); i++)
		off += (size_t)snprintf(netdevs + off, sizeof(netdevs) - off,
					"%s%s", i ? "," : "", d->netdevs[i]);
	ret = expo_label(b, "board_id", d->board_id);
	ret = ret ? ret : expo_label(b, "firmware_version", d->fw_ver);
	ret = ret ? ret : expo_label(b, "hca_type", d->hca_type);
	ret = ret ? ret : expo_label(b, "node_guid", d->node_guid);
	ret = ret ? ret : expo_label(b, "sys_image_guid", d->sys_image_guid);
	ret = ret ? ret : expo_label(b, "node_desc", d->node_desc);
	ret = ret ? ret : expo_label(b, "netdevs", netdevs);
	ret = ret ? ret : expo_label(b, "pcie_address", d->pcie.address);
	return ret ? ret : expo_label_int(b, "numa_node", d->numa_node, 0);
}

static int pm_port_info(struct buf *b, const struct report_port *p)
{
	int ret;

	ret = expo_label(b, "link_layer", p->link_layer);
	ret = ret ? ret : expo_label(b, "port_guid", p->port_guid);
	ret = ret ? ret : expo_label_int(b, "lid", p->lid, 0);
	ret = ret ? ret : expo_label_int(b, "sm_lid", p->sm_lid, 0);
	ret = ret ? ret : expo_label_int(b, "lmc", p->lmc, 0);
	ret = ret ? ret : expo_label_int(b, "cap_mask", p->cap_mask, 8);
	return ret ? ret : expo_label(b, "netdev", p->netdev);
}

/* One port's label lists: host,device,port and its _info labels. */
static int pm_add_port(struct pm *m, const struct report_port *p,
		       size_t dev_labels)
{
	struct pm_lab *lab = &m->port_lab[m->n_ports];
	struct buf *b = &m->scratch;
	int ret;

	m->ports[m->n_ports] = p;
	ret = buf_adds(b, pm_str(m, dev_labels));
	ret = ret ? ret : expo_label_int(b, "port", p->port, 0);
	ret = ret ? ret : pm_keep(m, &lab->labels);
	ret = ret ? ret : pm_port_info(b, p);
	ret = ret ? ret : pm_keep(m, &lab->info);
	if (!ret)
		m->n_ports++;
	return ret;
}

static int pm_labels(struct pm *m)
{
	const struct report *r = m->r;
	struct buf *b = &m->scratch;
	size_t n = 0;
	int ret;

	for (size_t i = 0; i < r->n_devices; i++)
		n += r->devices[i].n_ports;
	m->ports = calloc(n + 1, sizeof(*m->ports));
	m->port_lab = calloc(n + 1, sizeof(*m->port_lab));
	m->devs = calloc(r->n_devices + 1, sizeof(*m->devs));
	if (!m->ports || !m->port_lab || !m->devs)
		return -ENOMEM;
	ret = expo_label(b, "host", r->host);
	ret = ret ? ret : pm_keep(m, &m->host_labels);
	ret = ret ? ret : expo_label(b, "probe_version", r->probe_version);
	ret = ret ? ret : pm_keep(m, &m->host_info);
	for (size_t i = 0; !ret && i < r->n_devices; i++) {
		const struct report_device *d = &r->devices[i];
		struct pm_lab *pd = &m->devs[i];

		ret = buf_adds(b, pm_str(m, m->host_labels));
		ret = ret ? ret : expo_label(b, "device", d->name);
		ret = ret ? ret : pm_keep(m, &pd->labels);
		ret = ret ? ret : pm_device_info(b, d);
		ret = ret ? ret : pm_keep(m, &pd->info);
		for (size_t j = 0; !ret && j < d->n_ports; j++)
			ret = pm_add_port(m, &d->ports[j], pd->labels);
	}
	return ret;
}

static size_t pm_family(const struct pm *m, const struct counter_def *d)
{
	if (d >= m->table && d < m->table + m->n_table)
		return (size_t)(d - m->table);
	return m->n_table + (size_t)(d - m->generic);
}

static int pm_row_cmp(const void *a, const void *b)
{
	const struct pm_row *x = a, *y = b;

	if (x->family != y->family)
		return x->family < y->family ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int pm_add_row(struct pm *m, size_t port, int src,
		      const struct report_counter *c)
{
	const struct counter_def *d = counters_describe(src, c->name);
	struct pm_row *row = &m->rows[m->n_rows];
	int ret = 0;

	if (!d)
		return 0;
	row->def = d;
	row->family = pm_family(m, d);
	row->port = port;
	row->raw = c->value;
	row->extra = SIZE_MAX;
	row->seq = m->n_rows;
	if (d->label || d->width) {
		ret = expo_label(&m->scratch, "counter", c->name);
		ret = ret ? ret : pm_keep(m, &row->extra);
	}
	if (!ret)
		m->n_rows++;
	return ret;
}

/* Every counter of every port, grouped by family in port order. */
static int pm_rows(struct pm *m)
{
	size_t n = 0;
	int ret = 0;

	m->table = counters_table(&m->n_table);
	m->generic = counters_generic_table(&m->n_generic);
	for (size_t i = 0; i < m->n_ports; i++)
		for (int s = 0; s < CSRC_COUNT; s++)
			n += m->ports[i]->n_counters[s];
	m->rows = calloc(n + 1, sizeof(*m->rows));
	if (!m->rows)
		return -ENOMEM;
	for (size_t i = 0; !ret && i < m->n_ports; i++)
		for (int s = 0; !ret && s < CSRC_COUNT; s++)
			for (size_t k = 0;
			     !ret && k < m->ports[i]->n_counters[s]; k++)
				ret = pm_add_row(m, i, s,
						 &m->ports[i]->counters[s][k]);
	qsort(m->rows, m->n_rows, sizeof(*m->rows), pm_row_cmp);
	return ret;
}

static void pm_host(struct expo *e, const struct pm *m)
{
	expo_family(e, "ibpulse_host_info", EXPO_INFO,
		    "The probe version in the host's last report.");
	expo_sample_u64(e, pm_str(m, m->host_labels), pm_str(m, m->host_info),
			1);
}

/*
 * A gauge of device or port @i: its value, or < 0 when unknown (no
 * sample). Port values are integers below 2^53: exact as doubles.
 */
struct pm_gauge {
	const char *name, *help;
	double (*fn)(const struct pm *m, size_t i);
};

static const struct report_pcie *pm_pcie(const struct pm *m, size_t i)
{
	return &m->r->devices[i].pcie;
}

static double pm_cur_speed(const struct pm *m, size_t i)
{
	double v = pm_pcie(m, i)->cur_speed_gts;

	return v < 0 ? -1 : v * 1e9;
}

static double pm_max_speed(const struct pm *m, size_t i)
{
	double v = pm_pcie(m, i)->max_speed_gts;

	return v < 0 ? -1 : v * 1e9;
}

static double pm_cur_width(const struct pm *m, size_t i)
{
	return (double)pm_pcie(m, i)->cur_width;
}

static double pm_max_width(const struct pm *m, size_t i)
{
	return (double)pm_pcie(m, i)->max_width;
}

/* probe_pcie_degraded(), no sample when neither side is known (render.c). */
static double pm_degraded(const struct pm *m, size_t i)
{
	const struct report_pcie *p = pm_pcie(m, i);
	int speed = p->cur_speed_gts >= 0 && p->max_speed_gts > 0;
	int width = p->cur_width >= 0 && p->max_width > 0;

	return speed || width ? probe_pcie_degraded(p) : -1;
}

static void pm_aer(struct expo *e, const struct pm *m)
{
	static const char *const severity[3] = {
		"severity=\"correctable\"",
		"severity=\"nonfatal\"",
		"severity=\"fatal\"",
	};

	expo_family(e, "ibpulse_device_pcie_aer_errors_total", EXPO_COUNTER,
		    "PCIe Advanced Error Reporting errors of the device since "
		    "boot, by severity.");
	for (size_t i = 0; i < m->r->n_devices; i++) {
		const struct report_pcie *p = &m->r->devices[i].pcie;
		int64_t v[3] = {p->aer_correctable, p->aer_nonfatal,
				p->aer_fatal};

		for (int s = 0; s < 3; s++)
			if (v[s] >= 0)
				expo_sample_u64(e, pm_str(m, m->devs[i].labels),
						severity[s], (uint64_t)v[s]);
	}
}

/*
 * The _info family @info, then one family per gauge of @g, over the
 * devices (@ports 0) or the ports (@ports 1), each with its own labels.
 */
static void pm_objects(struct expo *e, const struct pm *m, int ports,
		       const struct pm_gauge *info, const struct pm_gauge *g,
		       size_t n_g)
{
	size_t n = ports ? m->n_ports : m->r->n_devices;
	const struct pm_lab *lab = ports ? m->port_lab : m->devs;

	expo_family(e, info->name, EXPO_INFO, info->help);
	for (size_t i = 0; i < n; i++)
		expo_sample_u64(e, pm_str(m, lab[i].labels),
				pm_str(m, lab[i].info), 1);
	for (size_t k = 0; k < n_g; k++) {
		expo_family(e, g[k].name, EXPO_GAUGE, g[k].help);
		for (size_t i = 0; i < n; i++) {
			double v = g[k].fn(m, i);

			if (v >= 0)
				expo_sample(e, pm_str(m, lab[i].labels), NULL,
					    v);
		}
	}
}

static void pm_devices(struct expo *e, const struct pm *m)
{
	static const struct pm_gauge info = {
		"ibpulse_device_info",
		"Identity of an RDMA device: firmware, board, GUIDs, node "
		"description, NUMA node, netdevs, PCIe address.",
		NULL,
	};
	static const struct pm_gauge gauges[] = {
		{"ibpulse_device_pcie_current_speed_transfers_per_second",
		 "PCIe link speed the device trained at, per lane (8 GT/s is "
		 "8e9).",
		 pm_cur_speed},
		{"ibpulse_device_pcie_max_speed_transfers_per_second",
		 "Highest PCIe link speed the device supports, per lane.",
		 pm_max_speed},
		{"ibpulse_device_pcie_current_width_lanes",
		 "PCIe lanes the link trained with.", pm_cur_width},
		{"ibpulse_device_pcie_max_width_lanes",
		 "PCIe lanes the device supports.", pm_max_width},
		{"ibpulse_device_pcie_link_degraded",
		 "1 when the PCIe link runs below the device's maximum speed "
		 "or width: the commonest host-side cause of half bandwidth.",
		 pm_degraded},
	};

	pm_objects(e, m, 0, &info, gauges, sizeof(gauges) / sizeof(gauges[0]));
	pm_aer(e, m);
}

/* An unset GID table entry reads as all zeros. */
static int pm_gid_is_zero(const char *gid)
{
	for (; *gid; gid++)
		if (*gid != '0' && *gid != ':')
			return 0;
	return 1;
}

/*
 * The labels of entry @k of a port's GID or P_Key table, appended to @b;
 * 1 when the entry is unused (no sample), 0, or a negative errno.
 */
typedef int (*pm_entry_fn)(struct buf *b, const struct report_port *p,
			   size_t k);

static int pm_gid_entry(struct buf *b, const struct report_port *p, size_t k)
{
	const struct report_gid *g = &p->gids[k];
	int ret;

	if (!g->gid || pm_gid_is_zero(g->gid))
		return 1;
	ret = expo_label_int(b, "index", g->index, 0);
	ret = ret ? ret : expo_label(b, "gid", g->gid);
	ret = ret ? ret : expo_label(b, "type", g->type);
	return ret ? ret : expo_label(b, "netdev", g->netdev);
}

static int pm_pkey_entry(struct buf *b, const struct report_port *p, size_t k)
{
	unsigned pkey = p->pkeys[k].pkey;
	int ret;

	/* base 0 (0x0000, 0x8000) marks an unused entry */
	if (!(pkey & 0x7fff))
		return 1;
	ret = expo_label_int(b, "index", p->pkeys[k].index, 0);
	ret = ret ? ret : expo_label_int(b, "pkey", pkey, 4);
	return ret ? ret
		   : expo_label(b, "membership",
				pkey & 0x8000 ? "full" : "limited");
}

/* One _info family over a per-port table: GIDs (@gids 1) or P_Keys. */
static void pm_table(struct expo *e, struct pm *m, int gids)
{
	pm_entry_fn fn = gids ? pm_gid_entry : pm_pkey_entry;
	struct buf *b = &m->scratch;

	if (gids)
		expo_family(e, "ibpulse_port_gid_info", EXPO_INFO,
			    "A non-zero entry of the port's GID table, with "
			    "its type (IB/RoCE v1, RoCE v2) and netdev.");
	else
		expo_family(e, "ibpulse_port_pkey_info", EXPO_INFO,
			    "A valid entry of the port's P_Key table, with "
			    "its membership (full or limited).");
	for (size_t i = 0; i < m->n_ports && !e->err; i++) {
		const struct report_port *p = m->ports[i];
		size_t n = gids ? p->n_gids : p->n_pkeys;

		for (size_t k = 0; k < n && !e->err; k++) {
			int ret;

			buf_reset(b);
			ret = fn(b, p, k);
			if (ret < 0)
				e->err = ret;
			else if (!ret)
				expo_sample_u64(
					e, pm_str(m, m->port_lab[i].labels),
					b->data, 1);
		}
	}
	buf_reset(b);
}

static double pm_state(const struct pm *m, size_t i)
{
	return m->ports[i]->state;
}

static double pm_phys(const struct pm *m, size_t i)
{
	return m->ports[i]->phys_state;
}

static double pm_rate(const struct pm *m, size_t i)
{
	uint64_t v = m->ports[i]->rate_bytes;

	return v == REPORT_UNKNOWN ? -1 : (double)v;
}

static void pm_ports(struct expo *e, struct pm *m)
{
	static const struct pm_gauge info = {
		"ibpulse_port_info",
		"Addressing of a port: link layer, port GUID, LID, SM LID, "
		"LMC, capability mask, netdev.",
		NULL,
	};
	static const struct pm_gauge gauges[] = {
		{"ibpulse_port_state_id",
		 "Logical port state (1: down, 2: init, 3: armed, 4: "
		 "active, 5: active defer).",
		 pm_state},
		{"ibpulse_port_physical_state_id",
		 "Physical port state (1: sleep, 2: polling, 3: disabled, "
		 "4: port configuration training, 5: link up, 6: link error "
		 "recovery, 7: phy test).",
		 pm_phys},
		{"ibpulse_port_rate_bytes_per_second",
		 "Data rate of the port's link as the kernel reports it, in "
		 "bytes per second.",
		 pm_rate},
	};

	pm_objects(e, m, 1, &info, gauges, sizeof(gauges) / sizeof(gauges[0]));
	pm_table(e, m, 1);
	pm_table(e, m, 0);
}

static void pm_value(struct expo *e, const struct pm *m,
		     const struct pm_row *row)
{
	const char *labels = pm_str(m, m->port_lab[row->port].labels);
	const char *extra = row->def->label ? pm_str(m, row->extra) : NULL;
	uint64_t v;

	if (!counters_scale_u64(row->def, row->raw, &v))
		expo_sample_u64(e, labels, extra, v);
	else
		expo_sample(e, labels, extra,
			    counters_scale(row->def, row->raw));
}

/* The counter families (rows are grouped), then the saturation gauge. */
static void pm_counters(struct expo *e, const struct pm *m)
{
	for (size_t i = 0; i < m->n_rows && !e->err; i++) {
		const struct pm_row *row = &m->rows[i];

		if (!i || m->rows[i - 1].family != row->family)
			expo_family(e, row->def->metric,
				    row->def->kind == COUNTER_KIND_COUNTER
					    ? EXPO_COUNTER
					    : EXPO_GAUGE,
				    row->def->help);
		pm_value(e, m, row);
	}
	expo_family(e, "ibpulse_port_error_saturated", EXPO_GAUGE,
		    SATURATED_HELP);
	for (size_t i = 0; i < m->n_rows && !e->err; i++) {
		const struct pm_row *row = &m->rows[i];

		if (row->family < m->n_table && row->def->width)
			expo_sample_u64(
				e, pm_str(m, m->port_lab[row->port].labels),
				pm_str(m, row->extra),
				(uint64_t)counters_saturated(row->def,
							     row->raw));
	}
}

static void pm_self(struct expo *e, double read_seconds)
{
	expo_family(e, "ibpulse_probe_build_info", EXPO_INFO,
		    "The probe's version.");
	expo_sample_u64(e, NULL, "version=\"" IBPULSE_VERSION "\"", 1);
	expo_family(e, "ibpulse_probe_sysfs_read_seconds", EXPO_GAUGE,
		    "How long reading sysfs for this response took.");
	if (read_seconds >= 0)
		expo_sample(e, NULL, NULL, read_seconds);
}

/* The daemon's spool: waiting results by store, dropped ones by reason. */
static void pm_spool(struct expo *e, const struct pm *m,
		     const struct pmetrics_spool *sp)
{
	const char *host = pm_str(m, m->host_labels);

	expo_family(e, "ibpulse_probe_results_pending", EXPO_GAUGE,
		    "Test results waiting to be sent to the collector: in the "
		    "spool on disk, or in memory because the spool could not "
		    "be written (those are lost if the probe stops).");
	expo_sample_u64(e, host, "store=\"disk\"", sp->on_disk);
	expo_sample_u64(e, host, "store=\"memory\"", sp->in_memory);
	expo_family(e, "ibpulse_probe_results_dropped_total", EXPO_COUNTER,
		    "Test results the probe dropped before they were delivered "
		    "(spool_full: over spool_max_bytes; expired: older than "
		    "spool_max_age; unwritable: the spool could not be written "
		    "and the memory it falls back to was full).");
	expo_sample_u64(e, host, "reason=\"spool_full\"", sp->spool_full);
	expo_sample_u64(e, host, "reason=\"expired\"", sp->expired);
	expo_sample_u64(e, host, "reason=\"unwritable\"", sp->unwritable);
}

int pmetrics_render(const struct report *r, const struct pmetrics_spool *sp,
		    double read_seconds, enum expo_format format,
		    struct buf *out, size_t *series)
{
	return pmetrics_render_extra(r, sp, read_seconds, format, out, series,
				     NULL, NULL);
}

int pmetrics_render_extra(const struct report *r,
			  const struct pmetrics_spool *sp, double read_seconds,
			  enum expo_format format, struct buf *out,
			  size_t *series, pmetrics_extra_fn extra, void *arg)
{
	struct pm m = {.r = r};
	struct expo e;
	int ret;

	buf_init(&m.arena, 0);
	buf_init(&m.scratch, 0);
	ret = pm_labels(&m);
	ret = ret ? ret : pm_rows(&m);
	if (ret)
		goto out;
	expo_init(&e, out, format);
	pm_host(&e, &m);
	pm_devices(&e, &m);
	pm_ports(&e, &m);
	pm_counters(&e, &m);
	pm_self(&e, read_seconds);
	if (sp)
		pm_spool(&e, &m, sp);
	if (extra)
		extra(arg, &e); /* its error is sticky: expo_finish says it */
	ret = expo_finish(&e);
	if (series)
		*series = e.samples;
	expo_free(&e);
out:
	buf_free(&m.arena);
	buf_free(&m.scratch);
	free(m.devs);
	free(m.ports);
	free(m.port_lab);
	free(m.rows);
	return ret;
}

static int pm_listen_err(char *err, size_t errlen, const char *text,
			 const char *why)
{
	snprintf(err, errlen,
		 "metrics_listen: '%s' %s; want ADDR:PORT (IPv4, [IPv6] or "
		 "empty for every address; PORT 0-65535)",
		 text, why);
	return -EINVAL;
}

int pmetrics_listen_parse(const char *text, char *addr, size_t addrlen,
			  unsigned *port, char *err, size_t errlen)
{
	const char *colon = strrchr(text, ':'), *host = text;
	size_t hlen;
	char *end;
	unsigned char bin[16];
	long v;

	if (!colon || !colon[1])
		return pm_listen_err(err, errlen, text, "has no :PORT");
	hlen = (size_t)(colon - text);
	if (hlen >= 2 && text[0] == '[' && text[hlen - 1] == ']') {
		host++;
		hlen -= 2;
	}
	if (hlen >= addrlen)
		return pm_listen_err(err, errlen, text, "has a long address");
	memcpy(addr, host, hlen);
	addr[hlen] = '\0';
	if (hlen &&
	    inet_pton(host == text ? AF_INET : AF_INET6, addr, bin) != 1)
		return pm_listen_err(err, errlen, text,
				     "is not a numeric address");
	errno = 0;
	v = strtol(colon + 1, &end, 10);
	if (errno || *end || v < 0 || v > 65535 || colon[1] < '0' ||
	    colon[1] > '9')
		return pm_listen_err(err, errlen, text, "has a bad port");
	*port = (unsigned)v;
	return 0;
}
