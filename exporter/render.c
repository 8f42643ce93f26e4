// SPDX-License-Identifier: MIT
/*
 * Rendering a snapshot into the exposition format: see render.h. Counter
 * rows arrive port by port; a counting sort by family (stable, so each
 * family keeps port order) groups them as the format requires in O(rows).
 */
#include "render.h"
#include "fabric_snap.h"
#include "log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define HOST_UP_HELP                                                           \
	"1 when the host reported within stale_after seconds, 0 when it went " \
	"silent (it stays listed until retired)."
#define SATURATED_HELP                                                         \
	"1 when a narrow IB error counter sits at its maximum (2^width-1): "   \
	"it saturates instead of wrapping, so its rate() reads zero on "       \
	"exactly the worst links. Reset it (perfquery -R) to count again."

static int render_hosts(struct expo *e, const struct snapshot *sn)
{
	expo_family(e, "ibpulse_host_up", EXPO_GAUGE, HOST_UP_HELP);
	for (size_t i = 0; i < sn->n_hosts; i++)
		expo_sample_u64(e, sn->hosts[i].labels, NULL,
				(uint64_t)sn->hosts[i].up);
	expo_family(e, "ibpulse_host_last_report_timestamp_seconds", EXPO_GAUGE,
		    "When the collector accepted the host's last report "
		    "(seconds since the epoch).");
	for (size_t i = 0; i < sn->n_hosts; i++)
		expo_sample(e, sn->hosts[i].labels, NULL,
			    sn->hosts[i].last_report);
	expo_family(e, "ibpulse_host_info", EXPO_INFO,
		    "The probe version in the host's last report.");
	for (size_t i = 0; i < sn->n_hosts; i++)
		expo_sample_u64(e, sn->hosts[i].labels, sn->hosts[i].info, 1);
	return e->err;
}

/* A device gauge: the value, or < 0 when unknown (no sample). */
typedef double (*device_value_fn)(const struct snap_device *d);

static double dev_cur_speed(const struct snap_device *d)
{
	return d->pcie_cur_speed < 0 ? -1 : d->pcie_cur_speed * 1e9;
}

static double dev_max_speed(const struct snap_device *d)
{
	return d->pcie_max_speed < 0 ? -1 : d->pcie_max_speed * 1e9;
}

static double dev_cur_width(const struct snap_device *d)
{
	return (double)d->pcie_cur_width;
}

static double dev_max_width(const struct snap_device *d)
{
	return (double)d->pcie_max_width;
}

/* 1 when the link trained below what both ends support. */
static double dev_degraded(const struct snap_device *d)
{
	int speed = d->pcie_cur_speed >= 0 && d->pcie_max_speed > 0;
	int width = d->pcie_cur_width >= 0 && d->pcie_max_width > 0;

	if (!speed && !width)
		return -1;
	return (speed && d->pcie_cur_speed < d->pcie_max_speed) ||
	       (width && d->pcie_cur_width < d->pcie_max_width);
}

static int render_devices(struct expo *e, const struct snapshot *sn)
{
	static const struct {
		const char *name, *help;
		device_value_fn fn;
	} gauges[] = {
		{"ibpulse_device_pcie_current_speed_transfers_per_second",
		 "PCIe link speed the device trained at, per lane (8 GT/s is "
		 "8e9).",
		 dev_cur_speed},
		{"ibpulse_device_pcie_max_speed_transfers_per_second",
		 "Highest PCIe link speed the device supports, per lane.",
		 dev_max_speed},
		{"ibpulse_device_pcie_current_width_lanes",
		 "PCIe lanes the link trained with.", dev_cur_width},
		{"ibpulse_device_pcie_max_width_lanes",
		 "PCIe lanes the device supports.", dev_max_width},
		{"ibpulse_device_pcie_link_degraded",
		 "1 when the PCIe link runs below the device's maximum speed "
		 "or width: the commonest host-side cause of half bandwidth.",
		 dev_degraded},
	};
	static const char *const severity[3] = {
		"severity=\"correctable\"",
		"severity=\"nonfatal\"",
		"severity=\"fatal\"",
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
			double v = gauges[g].fn(&sn->devices[i]);

			if (v >= 0)
				expo_sample(e, sn->devices[i].labels, NULL, v);
		}
	}
	expo_family(e, "ibpulse_device_pcie_aer_errors_total", EXPO_COUNTER,
		    "PCIe Advanced Error Reporting errors of the device since "
		    "boot, by severity.");
	for (size_t i = 0; i < sn->n_devices; i++)
		for (int s = 0; s < 3; s++)
			if (sn->devices[i].aer[s] >= 0)
				expo_sample_u64(
					e, sn->devices[i].labels, severity[s],
					(uint64_t)sn->devices[i].aer[s]);
	return e->err;
}

static int render_ports(struct expo *e, const struct snapshot *sn)
{
	const struct snap_port *p = sn->ports;

	expo_family(e, "ibpulse_port_info", EXPO_INFO,
		    "Addressing of a port: link layer, port GUID, LID, SM LID, "
		    "LMC, capability mask, netdev.");
	for (size_t i = 0; i < sn->n_ports; i++)
		expo_sample_u64(e, p[i].labels, p[i].info, 1);
	expo_family(e, "ibpulse_port_state_id", EXPO_GAUGE,
		    "Logical port state (1: down, 2: init, 3: armed, 4: "
		    "active, 5: active defer).");
	for (size_t i = 0; i < sn->n_ports; i++)
		if (p[i].state >= 0)
			expo_sample_u64(e, p[i].labels, NULL,
					(uint64_t)p[i].state);
	expo_family(e, "ibpulse_port_physical_state_id", EXPO_GAUGE,
		    "Physical port state (1: sleep, 2: polling, 3: disabled, "
		    "4: port configuration training, 5: link up, 6: link error "
		    "recovery, 7: phy test).");
	for (size_t i = 0; i < sn->n_ports; i++)
		if (p[i].phys_state >= 0)
			expo_sample_u64(e, p[i].labels, NULL,
					(uint64_t)p[i].phys_state);
	expo_family(e, "ibpulse_port_rate_bytes_per_second", EXPO_GAUGE,
		    "Data rate of the port's link as the kernel reports it, in "
		    "bytes per second.");
	for (size_t i = 0; i < sn->n_ports; i++)
		if (p[i].rate_bytes >= 0)
			expo_sample_u64(e, p[i].labels, NULL,
					(uint64_t)p[i].rate_bytes);
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
	return e->err;
}

static int render_value(struct expo *e, const char *labels, const char *extra,
			const struct counter_def *d, uint64_t raw)
{
	uint64_t v;

	if (!counters_scale_u64(d, raw, &v))
		return expo_sample_u64(e, labels, extra, v);
	return expo_sample(e, labels, extra, counters_scale(d, raw));
}

struct families {
	const struct counter_def *table, *generic;
	size_t n_table, n_generic, n;
	size_t *start;	 /* n + 1 offsets into order */
	uint32_t *order; /* row indexes grouped by family */
};

static size_t family_of(const struct families *f, const struct counter_def *d)
{
	if (d >= f->table && d < f->table + f->n_table)
		return (size_t)(d - f->table);
	return f->n_table + (size_t)(d - f->generic);
}

/* Group the rows by family, keeping port order within each. */
static int families_sort(struct families *f, const struct snapshot *sn)
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
		fam_of_key[k] = family_of(f, sn->keys[k].def);
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

static const struct counter_def *family_def(const struct families *f, size_t i)
{
	return i < f->n_table ? &f->table[i] : &f->generic[i - f->n_table];
}

static int render_counters(struct expo *e, const struct snapshot *sn,
			   const struct families *f)
{
	for (size_t i = 0; i < f->n && !e->err; i++) {
		const struct counter_def *d = family_def(f, i);

		if (f->start[i] == f->start[i + 1])
			continue;
		expo_family(e, d->metric,
			    d->kind == COUNTER_KIND_COUNTER ? EXPO_COUNTER
							    : EXPO_GAUGE,
			    d->help);
		for (size_t j = f->start[i]; j < f->start[i + 1] && !e->err;
		     j++) {
			const struct snap_row *r = &sn->rows[f->order[j]];

			render_value(e, sn->ports[r->port].labels,
				     sn->keys[r->key].extra, d, r->value);
		}
	}
	expo_family(e, "ibpulse_port_error_saturated", EXPO_GAUGE,
		    SATURATED_HELP);
	for (size_t i = 0; i < f->n_table && !e->err; i++) {
		const struct counter_def *d = &f->table[i];

		if (!d->width)
			continue;
		for (size_t j = f->start[i]; j < f->start[i + 1] && !e->err;
		     j++) {
			const struct snap_row *r = &sn->rows[f->order[j]];

			expo_sample_u64(
				e, sn->ports[r->port].labels,
				sn->keys[r->key].sat_extra,
				(uint64_t)counters_saturated(d, r->value));
		}
	}
	return e->err;
}

void render_drops_init(struct render_drops *d)
{
	memset(d, 0, sizeof(*d));
	pthread_mutex_init(&d->lock, NULL);
}

void render_drops_destroy(struct render_drops *d)
{
	if (!d)
		return;
	pthread_mutex_destroy(&d->lock);
	free(d->v);
	d->v = NULL;
	d->n = d->cap = 0;
}

/* Add this response's drops to @d; caller holds @d->lock. */
static int render_drops_add(struct render_drops *d, const struct expo_drop *v,
			    size_t n)
{
	for (size_t i = 0; i < n; i++) {
		size_t k;

		for (k = 0; k < d->n && strcmp(d->v[k].family, v[i].family);
		     k++)
			;
		if (k == d->n) {
			if (d->n == d->cap) {
				size_t cap = d->cap ? d->cap * 2 : 8;
				struct expo_drop *g =
					realloc(d->v, cap * sizeof(*g));

				if (!g)
					return -ENOMEM;
				d->v = g;
				d->cap = cap;
			}
			d->v[d->n] = v[i];
			d->v[d->n++].n = 0;
		}
		d->v[k].n += v[i].n;
	}
	return 0;
}

/*
 * ibpulse_exporter_series_dropped_total: the cumulative drops, this
 * response's included (every family but the exporter's own is written by
 * now).
 */
static int render_dropped(struct expo *e, const struct render_self *s)
{
	size_t n;
	const struct expo_drop *v = expo_drops(e, &n);
	struct buf lb;
	int ret;

	if (!s->drops || e->err)
		return e->err;
	for (size_t i = 0; i < n; i++)
		log_once(v[i].family, 600, LOG_LVL_WARN,
			 "/metrics: %s has more than max_family_series (%zu) "
			 "series: %llu left out of this response (counted in "
			 "ibpulse_exporter_series_dropped_total)",
			 v[i].family, s->family_cap,
			 (unsigned long long)v[i].n);
	buf_init(&lb, 0);
	pthread_mutex_lock(&s->drops->lock);
	ret = render_drops_add(s->drops, v, n);
	if (!ret)
		expo_family(e, "ibpulse_exporter_series_dropped_total",
			    EXPO_COUNTER,
			    "Series left out of /metrics responses because "
			    "their family had more than max_family_series, by "
			    "family, since the exporter started.");
	for (size_t i = 0; !ret && i < s->drops->n && !e->err; i++) {
		buf_reset(&lb);
		ret = expo_label(&lb, "family", s->drops->v[i].family);
		if (!ret)
			expo_sample_u64(e, NULL, lb.data, s->drops->v[i].n);
	}
	pthread_mutex_unlock(&s->drops->lock);
	buf_free(&lb);
	if (ret && !e->err)
		e->err = ret;
	return e->err;
}

static int render_self_metrics(struct expo *e, const struct render_self *s,
			       struct buf *scratch)
{
	size_t series = e->samples;

	if (expo_label(scratch, "version", s->version ? s->version : "unknown"))
		return e->err = -ENOMEM;
	expo_family(e, "ibpulse_exporter_build_info", EXPO_INFO,
		    "The exporter's version.");
	expo_sample_u64(e, NULL, scratch->data, 1);
	expo_family(e, "ibpulse_exporter_scrape_duration_seconds", EXPO_GAUGE,
		    "How long the previous /metrics request took to build, "
		    "from the first database read to the finished body.");
	if (s->last_duration >= 0)
		expo_sample(e, NULL, NULL, s->last_duration);
	expo_family(e, "ibpulse_exporter_database_errors_total", EXPO_COUNTER,
		    "Scrapes that failed to open or read the database "
		    "(answered 503).");
	expo_sample_u64(e, NULL, NULL, s->database_errors);
	expo_family(e, "ibpulse_exporter_wal_size_bytes", EXPO_GAUGE,
		    "Size of the database's write-ahead log; it grows when "
		    "checkpoints cannot keep up.");
	if (s->wal_bytes >= 0)
		expo_sample_u64(e, NULL, NULL, (uint64_t)s->wal_bytes);
	expo_family(
		e, "ibpulse_exporter_series", EXPO_GAUGE,
		"Samples in this response before the exporter's own metrics.");
	expo_sample_u64(e, NULL, NULL, series);
	return render_dropped(e, s);
}

int render_metrics(const struct snapshot *sn, const struct render_self *self,
		   enum expo_format format, struct buf *out, size_t *series)
{
	struct families f = {0};
	struct buf scratch;
	struct expo e;
	int ret;

	buf_init(&scratch, 4096);

	ret = families_sort(&f, sn);
	if (ret)
		goto out;
	expo_init(&e, out, format);
	expo_set_family_cap(&e, self->family_cap);
	render_hosts(&e, sn);
	render_devices(&e, sn);
	render_ports(&e, sn);
	render_counters(&e, sn, &f);
	fabric_render(&e, sn);
	results_render(&e, sn->results);
	regress_render(&e, sn->regress);
	expo_set_family_cap(&e, 0); /* the exporter's own: a handful each */
	render_self_metrics(&e, self, &scratch);
	ret = expo_finish(&e);
	if (series)
		*series = e.samples;
	expo_free(&e);
out:
	buf_free(&scratch);
	free(f.start);
	free(f.order);
	return ret;
}
