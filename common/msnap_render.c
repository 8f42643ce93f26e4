// SPDX-License-Identifier: MIT
/*
 * Rendering a metrics snapshot (msnap.h): the families of hosts, devices,
 * ports and counters that the exporter and the probe's own /metrics both
 * serve, written here once (docs/metrics.md lists them). Counter rows
 * arrive port by port; a counting sort by family (stable, so each family
 * keeps port order) groups them as the format requires in O(rows).
 */
#include "msnap.h"

#include <errno.h>
#include <stdlib.h>

#define HOST_UP_HELP                                                           \
	"1 when the host reported within stale_after seconds, 0 when it went " \
	"silent (it stays listed until retired)."
#define SATURATED_HELP                                                         \
	"1 when a narrow IB error counter sits at its maximum (2^width-1): "   \
	"it saturates instead of wrapping, so its rate() reads zero on "       \
	"exactly the worst links. Reset it (perfquery -R) to count again."

static void msnap_render_hosts(struct expo *e, const struct msnap *sn,
			       unsigned flags)
{
	if (flags & MSNAP_LIVENESS) {
		expo_family(e, "ibpulse_host_up", EXPO_GAUGE, HOST_UP_HELP);
		for (size_t i = 0; i < sn->n_hosts; i++)
			expo_sample_u64(e, sn->hosts[i].labels, NULL,
					(uint64_t)sn->hosts[i].up);
		expo_family(e, "ibpulse_host_last_report_timestamp_seconds",
			    EXPO_GAUGE,
			    "When the collector accepted the host's last "
			    "report (seconds since the epoch).");
		for (size_t i = 0; i < sn->n_hosts; i++)
			expo_sample(e, sn->hosts[i].labels, NULL,
				    sn->hosts[i].last_report);
	}
	expo_family(e, "ibpulse_host_info", EXPO_INFO,
		    "The probe version in the host's last report.");
	for (size_t i = 0; i < sn->n_hosts; i++)
		expo_sample_u64(e, sn->hosts[i].labels, sn->hosts[i].info, 1);
}

/* A device gauge: the value, or < 0 when unknown (no sample). */
typedef double (*msnap_gauge_fn)(const struct report_pcie *p);

static double msnap_cur_speed(const struct report_pcie *p)
{
	return p->cur_speed_gts < 0 ? -1 : p->cur_speed_gts * 1e9;
}

static double msnap_max_speed(const struct report_pcie *p)
{
	return p->max_speed_gts < 0 ? -1 : p->max_speed_gts * 1e9;
}

static double msnap_cur_width(const struct report_pcie *p)
{
	return (double)p->cur_width;
}

static double msnap_max_width(const struct report_pcie *p)
{
	return (double)p->max_width;
}

/* No sample when it cannot be told (report_pcie_degraded() says why). */
static double msnap_degraded(const struct report_pcie *p)
{
	return (double)report_pcie_degraded(p);
}

static void msnap_render_aer(struct expo *e, const struct msnap *sn)
{
	static const char *const severity[3] = {
		"severity=\"correctable\"",
		"severity=\"nonfatal\"",
		"severity=\"fatal\"",
	};

	expo_family(e, "ibpulse_device_pcie_aer_errors_total", EXPO_COUNTER,
		    "PCIe Advanced Error Reporting errors of the device since "
		    "boot, by severity.");
	for (size_t i = 0; i < sn->n_devices; i++) {
		const struct report_pcie *p = &sn->devices[i].pcie;
		int64_t v[3] = {p->aer_correctable, p->aer_nonfatal,
				p->aer_fatal};

		for (int s = 0; s < 3; s++)
			if (v[s] >= 0)
				expo_sample_u64(e, sn->devices[i].labels,
						severity[s], (uint64_t)v[s]);
	}
}

static void msnap_render_devices(struct expo *e, const struct msnap *sn)
{
	static const struct {
		const char *name, *help;
		msnap_gauge_fn fn;
	} gauges[] = {
		{"ibpulse_device_pcie_current_speed_transfers_per_second",
		 "PCIe link speed the device trained at, per lane (8 GT/s is "
		 "8e9).",
		 msnap_cur_speed},
		{"ibpulse_device_pcie_max_speed_transfers_per_second",
		 "Highest PCIe link speed the device supports, per lane.",
		 msnap_max_speed},
		{"ibpulse_device_pcie_current_width_lanes",
		 "PCIe lanes the link trained with.", msnap_cur_width},
		{"ibpulse_device_pcie_max_width_lanes",
		 "PCIe lanes the device supports.", msnap_max_width},
		{"ibpulse_device_pcie_link_degraded",
		 "1 when the PCIe link runs below the device's maximum speed "
		 "or width: the commonest host-side cause of half bandwidth.",
		 msnap_degraded},
	};

	expo_family(e, "ibpulse_device_info", EXPO_INFO,
		    "Identity of an RDMA device: firmware, board, GUIDs, node "
		    "description, NUMA node, netdevs, PCIe address.");
	for (size_t i = 0; i < sn->n_devices; i++)
		expo_sample_u64(e, sn->devices[i].labels, sn->devices[i].info,
				1);
	for (size_t g = 0; g < sizeof(gauges) / sizeof(gauges[0]); g++) {
		expo_family(e, gauges[g].name, EXPO_GAUGE, gauges[g].help);
		for (size_t i = 0; i < sn->n_devices; i++) {
			double v = gauges[g].fn(&sn->devices[i].pcie);

			if (v >= 0)
				expo_sample(e, sn->devices[i].labels, NULL, v);
		}
	}
	msnap_render_aer(e, sn);
}

/* A port gauge: one sample per port whose value is known (>= 0). */
static void msnap_port_gauge(struct expo *e, const struct msnap *sn,
			     const char *name, const char *help, size_t off)
{
	expo_family(e, name, EXPO_GAUGE, help);
	for (size_t i = 0; i < sn->n_ports; i++) {
		const char *p = (const char *)&sn->ports[i];
		int64_t v = *(const int64_t *)(const void *)(p + off);

		if (v >= 0)
			expo_sample_u64(e, sn->ports[i].labels, NULL,
					(uint64_t)v);
	}
}

static void msnap_render_ports(struct expo *e, const struct msnap *sn)
{
	const struct msnap_port *p = sn->ports;

	expo_family(e, "ibpulse_port_info", EXPO_INFO,
		    "Addressing of a port: link layer, port GUID, LID, SM LID, "
		    "LMC, capability mask, netdev.");
	for (size_t i = 0; i < sn->n_ports; i++)
		expo_sample_u64(e, p[i].labels, p[i].info, 1);
	msnap_port_gauge(e, sn, "ibpulse_port_state_id",
			 "Logical port state (1: down, 2: init, 3: armed, 4: "
			 "active, 5: active defer).",
			 offsetof(struct msnap_port, state));
	msnap_port_gauge(e, sn, "ibpulse_port_physical_state_id",
			 "Physical port state (1: sleep, 2: polling, 3: "
			 "disabled, 4: port configuration training, 5: link "
			 "up, 6: link error recovery, 7: phy test).",
			 offsetof(struct msnap_port, phys_state));
	msnap_port_gauge(e, sn, "ibpulse_port_rate_bytes_per_second",
			 "Data rate of the port's link as the kernel reports "
			 "it, in bytes per second.",
			 offsetof(struct msnap_port, rate_bytes));
	expo_family(e, "ibpulse_port_gid_info", EXPO_INFO,
		    "A non-zero entry of the port's GID table, with its type "
		    "(IB/RoCE v1, RoCE v2) and netdev.");
	for (size_t i = 0; i < sn->n_gids; i++)
		expo_sample_u64(e, p[sn->gids[i].port].labels,
				sn->gids[i].labels, 1);
	expo_family(e, "ibpulse_port_pkey_info", EXPO_INFO,
		    "A valid entry of the port's P_Key table, with its "
		    "membership (full or limited).");
	for (size_t i = 0; i < sn->n_pkeys; i++)
		expo_sample_u64(e, p[sn->pkeys[i].port].labels,
				sn->pkeys[i].labels, 1);
}

static void msnap_value(struct expo *e, const char *labels, const char *extra,
			const struct counter_def *d, uint64_t raw)
{
	uint64_t v;

	if (!counters_scale_u64(d, raw, &v))
		expo_sample_u64(e, labels, extra, v);
	else
		expo_sample(e, labels, extra, counters_scale(d, raw));
}

/* The rows grouped by family: the table's families, then the generic. */
struct msnap_families {
	const struct counter_def *table, *generic;
	size_t n_table, n_generic, n;
	size_t *start;	 /* n + 1 offsets into order */
	uint32_t *order; /* row indexes grouped by family */
};

static size_t msnap_family_of(const struct msnap_families *f,
			      const struct counter_def *d)
{
	if (d >= f->table && d < f->table + f->n_table)
		return (size_t)(d - f->table);
	return f->n_table + (size_t)(d - f->generic);
}

static const struct counter_def *
msnap_family_def(const struct msnap_families *f, size_t i)
{
	return i < f->n_table ? &f->table[i] : &f->generic[i - f->n_table];
}

/* Group the rows by family, keeping port order within each. */
static int msnap_families_sort(struct msnap_families *f, const struct msnap *sn)
{
	size_t *fam_of_key = calloc(sn->n_keys + 1, sizeof(*fam_of_key));
	size_t *pos;

	f->table = counters_table(&f->n_table);
	f->generic = counters_generic_table(&f->n_generic);
	f->n = f->n_table + f->n_generic;
	f->start = calloc(f->n + 1, sizeof(*f->start));
	f->order = malloc((sn->n_rows + 1) * sizeof(*f->order));
	pos = calloc(f->n + 1, sizeof(*pos));
	if (!fam_of_key || !f->start || !f->order || !pos) {
		free(fam_of_key);
		free(pos);
		return -ENOMEM;
	}
	for (size_t k = 0; k < sn->n_keys; k++)
		fam_of_key[k] = msnap_family_of(f, sn->keys[k].def);
	for (size_t r = 0; r < sn->n_rows; r++)
		f->start[fam_of_key[sn->rows[r].key] + 1]++;
	for (size_t i = 0; i < f->n; i++) {
		f->start[i + 1] += f->start[i];
		pos[i] = f->start[i];
	}
	for (size_t r = 0; r < sn->n_rows; r++)
		f->order[pos[fam_of_key[sn->rows[r].key]]++] = (uint32_t)r;
	free(fam_of_key);
	free(pos);
	return 0;
}

static void msnap_render_saturated(struct expo *e, const struct msnap *sn,
				   const struct msnap_families *f)
{
	expo_family(e, "ibpulse_port_error_saturated", EXPO_GAUGE,
		    SATURATED_HELP);
	for (size_t i = 0; i < f->n_table && !e->err; i++) {
		const struct counter_def *d = &f->table[i];

		if (!d->width)
			continue;
		for (size_t j = f->start[i]; j < f->start[i + 1] && !e->err;
		     j++) {
			const struct msnap_row *r = &sn->rows[f->order[j]];

			expo_sample_u64(
				e, sn->ports[r->port].labels,
				sn->keys[r->key].sat_extra,
				(uint64_t)counters_saturated(d, r->value));
		}
	}
}

static int msnap_render_counters(struct expo *e, const struct msnap *sn)
{
	struct msnap_families f = {0};
	int ret = msnap_families_sort(&f, sn);

	for (size_t i = 0; !ret && i < f.n && !e->err; i++) {
		const struct counter_def *d = msnap_family_def(&f, i);

		if (f.start[i] == f.start[i + 1])
			continue;
		expo_family(e, d->metric,
			    d->kind == COUNTER_KIND_COUNTER ? EXPO_COUNTER
							    : EXPO_GAUGE,
			    d->help);
		for (size_t j = f.start[i]; j < f.start[i + 1] && !e->err;
		     j++) {
			const struct msnap_row *r = &sn->rows[f.order[j]];

			msnap_value(e, sn->ports[r->port].labels,
				    sn->keys[r->key].extra, d, r->value);
		}
	}
	if (!ret)
		msnap_render_saturated(e, sn, &f);
	free(f.start);
	free(f.order);
	return ret;
}

int msnap_render(struct expo *e, const struct msnap *sn, unsigned flags)
{
	int ret;

	msnap_render_hosts(e, sn, flags);
	msnap_render_devices(e, sn);
	msnap_render_ports(e, sn);
	ret = msnap_render_counters(e, sn);
	if (ret && !e->err)
		e->err = ret;
	return e->err;
}
