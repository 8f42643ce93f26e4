// SPDX-License-Identifier: MIT
/*
 * Rendering a metrics snapshot (msnap.h): the families of hosts, devices,
 * ports and counters that the exporter and the probe's own /metrics both
 * serve, written here once (docs/metrics.md lists them). An index built
 * per render lists each host's devices and ports and each port's rows in
 * (family, source, name) order, so that every family is written host by
 * host, one segment each (expo_segment()): the exporter's block cache
 * keeps a host's segments and skips hosts that did not change.
 */
#include "msnap.h"

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

/* Each host's devices and ports, each port's GIDs, P_Keys and rows. */
struct msnap_index {
	const struct counter_def *table, *generic;
	size_t n_table, n_generic, n_fam;
	size_t *dev_start, *dev;   /* by host: n_hosts + 1 offsets */
	size_t *port_start, *port; /* by host; switch ports in the last */
	size_t *gid_start, *gid, *pkey_start, *pkey; /* by port */
	size_t *row_start;			     /* by port */
	uint32_t *row;	      /* by port, then family, source, name */
	uint32_t *fam_of_key; /* a key's family (table, then generic) */
	size_t *cur;	      /* per port: its next row, family by family */
};

static void msnap_index_free(struct msnap_index *x)
{
	free(x->dev_start);
	free(x->dev);
	free(x->port_start);
	free(x->port);
	free(x->gid_start);
	free(x->gid);
	free(x->pkey_start);
	free(x->pkey);
	free(x->row_start);
	free(x->row);
	free(x->fam_of_key);
	free(x->cur);
}

/*
 * Stable counting sort of @n items into @order by the bucket @of(i) in
 * [0, @buckets): @start gets buckets + 1 offsets. 0 or -ENOMEM.
 */
static int msnap_bucket(size_t n, size_t buckets, const void *ctx,
			size_t (*of)(const void *ctx, size_t i), size_t **start,
			size_t **order)
{
	size_t *pos;

	*start = calloc(buckets + 2, sizeof(**start));
	*order = malloc((n + 1) * sizeof(**order));
	pos = malloc((buckets + 1) * sizeof(*pos));
	if (!*start || !*order || !pos) {
		free(pos);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		(*start)[of(ctx, i) + 1]++;
	for (size_t b = 0; b < buckets; b++) {
		(*start)[b + 1] += (*start)[b];
		pos[b] = (*start)[b];
	}
	for (size_t i = 0; i < n; i++)
		(*order)[pos[of(ctx, i)]++] = i;
	free(pos);
	return 0;
}

static size_t msnap_dev_host(const void *ctx, size_t i)
{
	return ((const struct msnap *)ctx)->devices[i].host;
}

/* Switch ports (host SIZE_MAX) go in the bucket after the last host. */
static size_t msnap_port_host(const void *ctx, size_t i)
{
	const struct msnap *sn = ctx;
	size_t h = sn->ports[i].host;

	return h < sn->n_hosts ? h : sn->n_hosts;
}

static size_t msnap_gid_port(const void *ctx, size_t i)
{
	return ((const struct msnap *)ctx)->gids[i].port;
}

static size_t msnap_pkey_port(const void *ctx, size_t i)
{
	return ((const struct msnap *)ctx)->pkeys[i].port;
}

static size_t msnap_family_of(const struct msnap_index *x,
			      const struct counter_def *d)
{
	if (d >= x->table && d < x->table + x->n_table)
		return (size_t)(d - x->table);
	return x->n_table + (size_t)(d - x->generic);
}

static const struct counter_def *msnap_family_def(const struct msnap_index *x,
						  size_t i)
{
	return i < x->n_table ? &x->table[i] : &x->generic[i - x->n_table];
}

/* The order of counter keys: family, source, name. */
struct msnap_rank_ctx {
	const struct msnap *sn;
	const struct msnap_index *x;
};

static int msnap_cmp_key(const void *a, const void *b, void *arg)
{
	const struct msnap_rank_ctx *c = arg;
	const struct msnap_key *x = &c->sn->keys[*(const uint32_t *)a];
	const struct msnap_key *y = &c->sn->keys[*(const uint32_t *)b];
	uint32_t fx = c->x->fam_of_key[*(const uint32_t *)a];
	uint32_t fy = c->x->fam_of_key[*(const uint32_t *)b];

	if (fx != fy)
		return fx < fy ? -1 : 1;
	if (x->source != y->source)
		return x->source < y->source ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Each port's rows by (family, source, name): two stable counting sorts. */
static int msnap_index_rows(struct msnap_index *x, const struct msnap *sn)
{
	struct msnap_rank_ctx c = {sn, x};
	uint32_t *by_rank = malloc((sn->n_keys + 1) * sizeof(*by_rank));
	uint32_t *rank = malloc((sn->n_keys + 1) * sizeof(*rank));
	size_t *cnt = calloc(sn->n_keys + sn->n_ports + 2, sizeof(*cnt));
	uint32_t *tmp = malloc((sn->n_rows + 1) * sizeof(*tmp));
	int ret = -ENOMEM;

	x->row_start = calloc(sn->n_ports + 2, sizeof(*x->row_start));
	x->row = malloc((sn->n_rows + 1) * sizeof(*x->row));
	if (!by_rank || !rank || !cnt || !tmp || !x->row_start || !x->row)
		goto out;
	for (size_t k = 0; k < sn->n_keys; k++)
		by_rank[k] = (uint32_t)k;
	qsort_r(by_rank, sn->n_keys, sizeof(*by_rank), msnap_cmp_key, &c);
	for (size_t k = 0; k < sn->n_keys; k++)
		rank[by_rank[k]] = (uint32_t)k;
	/* by rank */
	for (size_t r = 0; r < sn->n_rows; r++)
		cnt[rank[sn->rows[r].key] + 1]++;
	for (size_t k = 0; k < sn->n_keys; k++)
		cnt[k + 1] += cnt[k];
	for (size_t r = 0; r < sn->n_rows; r++)
		tmp[cnt[rank[sn->rows[r].key]]++] = (uint32_t)r;
	/* then by port, keeping the rank order */
	for (size_t r = 0; r < sn->n_rows; r++)
		x->row_start[sn->rows[r].port + 1]++;
	for (size_t p = 0; p < sn->n_ports; p++)
		x->row_start[p + 1] += x->row_start[p];
	memcpy(cnt, x->row_start, (sn->n_ports + 1) * sizeof(*cnt));
	for (size_t i = 0; i < sn->n_rows; i++)
		x->row[cnt[sn->rows[tmp[i]].port]++] = tmp[i];
	ret = 0;
out:
	free(by_rank);
	free(rank);
	free(cnt);
	free(tmp);
	return ret;
}

static int msnap_index_build(struct msnap_index *x, const struct msnap *sn)
{
	int ret;

	memset(x, 0, sizeof(*x));
	x->table = counters_table(&x->n_table);
	x->generic = counters_generic_table(&x->n_generic);
	x->n_fam = x->n_table + x->n_generic;
	x->fam_of_key = malloc((sn->n_keys + 1) * sizeof(*x->fam_of_key));
	x->cur = malloc((sn->n_ports + 1) * sizeof(*x->cur));
	if (!x->fam_of_key || !x->cur)
		return -ENOMEM;
	for (size_t k = 0; k < sn->n_keys; k++)
		x->fam_of_key[k] =
			(uint32_t)msnap_family_of(x, sn->keys[k].def);
	ret = msnap_bucket(sn->n_devices, sn->n_hosts, sn, msnap_dev_host,
			   &x->dev_start, &x->dev);
	if (!ret)
		ret = msnap_bucket(sn->n_ports, sn->n_hosts + 1, sn,
				   msnap_port_host, &x->port_start, &x->port);
	if (!ret)
		ret = msnap_bucket(sn->n_gids, sn->n_ports, sn, msnap_gid_port,
				   &x->gid_start, &x->gid);
	if (!ret)
		ret = msnap_bucket(sn->n_pkeys, sn->n_ports, sn,
				   msnap_pkey_port, &x->pkey_start, &x->pkey);
	if (!ret)
		ret = msnap_index_rows(x, sn);
	if (!ret)
		memcpy(x->cur, x->row_start,
		       (sn->n_ports + 1) * sizeof(*x->cur));
	return ret;
}

/* Switch ports: one last segment, made from whatever was read. */
#define MSNAP_SWITCHES UINT64_MAX

/*
 * Start host @h's segment (@h == n_hosts: the switch ports); 1 when its
 * samples are to be skipped (held by the hooks, or nothing to write).
 */
static int msnap_seg(struct expo *e, const struct msnap *sn, size_t h)
{
	if (h == sn->n_hosts)
		return expo_segment(e, MSNAP_SWITCHES, 0) != 0;
	return expo_segment(e, (uint64_t)sn->hosts[h].id, sn->hosts[h].fp) != 0;
}

static void msnap_render_aer(struct expo *e, const struct msnap *sn,
			     const struct msnap_index *x)
{
	static const char *const severity[3] = {
		"severity=\"correctable\"",
		"severity=\"nonfatal\"",
		"severity=\"fatal\"",
	};

	expo_family(e, "ibpulse_device_pcie_aer_errors_total", EXPO_COUNTER,
		    "PCIe Advanced Error Reporting errors of the device since "
		    "boot, by severity.");
	for (size_t h = 0; h < sn->n_hosts; h++) {
		if (msnap_seg(e, sn, h))
			continue;
		for (size_t j = x->dev_start[h]; j < x->dev_start[h + 1]; j++) {
			const struct msnap_device *d = &sn->devices[x->dev[j]];
			const struct report_pcie *p = &d->pcie;
			int64_t v[3] = {p->aer_correctable, p->aer_nonfatal,
					p->aer_fatal};

			for (int s = 0; s < 3; s++)
				if (v[s] >= 0)
					expo_sample_u64(e, d->labels,
							severity[s],
							(uint64_t)v[s]);
		}
	}
}

static void msnap_render_devices(struct expo *e, const struct msnap *sn,
				 const struct msnap_index *x)
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
	for (size_t h = 0; h < sn->n_hosts; h++) {
		if (msnap_seg(e, sn, h))
			continue;
		for (size_t j = x->dev_start[h]; j < x->dev_start[h + 1]; j++)
			expo_sample_u64(e, sn->devices[x->dev[j]].labels,
					sn->devices[x->dev[j]].info, 1);
	}
	for (size_t g = 0; g < sizeof(gauges) / sizeof(gauges[0]); g++) {
		expo_family(e, gauges[g].name, EXPO_GAUGE, gauges[g].help);
		for (size_t h = 0; h < sn->n_hosts; h++) {
			if (msnap_seg(e, sn, h))
				continue;
			for (size_t j = x->dev_start[h];
			     j < x->dev_start[h + 1]; j++) {
				const struct msnap_device *d =
					&sn->devices[x->dev[j]];
				double v = gauges[g].fn(&d->pcie);

				if (v >= 0)
					expo_sample(e, d->labels, NULL, v);
			}
		}
	}
	msnap_render_aer(e, sn, x);
}

/* Host @h's ports, or the switch ports for @h == n_hosts. */
#define MSNAP_FOR_PORTS(x, h, j)                                               \
	for (size_t j = (x)->port_start[h]; j < (x)->port_start[(h) + 1]; j++)

/* A port gauge: one sample per port whose value is known (>= 0). */
static void msnap_port_gauge(struct expo *e, const struct msnap *sn,
			     const struct msnap_index *x, const char *name,
			     const char *help, size_t off)
{
	expo_family(e, name, EXPO_GAUGE, help);
	for (size_t h = 0; h <= sn->n_hosts; h++) {
		if (msnap_seg(e, sn, h))
			continue;
		MSNAP_FOR_PORTS(x, h, j)
		{
			const struct msnap_port *pt = &sn->ports[x->port[j]];
			const char *p = (const char *)pt;
			int64_t v = *(const int64_t *)(const void *)(p + off);

			if (v >= 0)
				expo_sample_u64(e, pt->labels, NULL,
						(uint64_t)v);
		}
	}
}

/* GIDs (@pkeys 0) or P_Keys (1) of each host's ports. */
static void msnap_port_tables(struct expo *e, const struct msnap *sn,
			      const struct msnap_index *x, int pkeys)
{
	const size_t *start = pkeys ? x->pkey_start : x->gid_start;
	const size_t *order = pkeys ? x->pkey : x->gid;

	for (size_t h = 0; h < sn->n_hosts; h++) {
		if (msnap_seg(e, sn, h))
			continue;
		MSNAP_FOR_PORTS(x, h, j)
		{
			size_t p = x->port[j];

			for (size_t k = start[p]; k < start[p + 1]; k++)
				expo_sample_u64(
					e, sn->ports[p].labels,
					pkeys ? sn->pkeys[order[k]].labels
					      : sn->gids[order[k]].labels,
					1);
		}
	}
}

static void msnap_render_ports(struct expo *e, const struct msnap *sn,
			       const struct msnap_index *x)
{
	expo_family(e, "ibpulse_port_info", EXPO_INFO,
		    "Addressing of a port: link layer, port GUID, LID, SM LID, "
		    "LMC, capability mask, netdev.");
	for (size_t h = 0; h <= sn->n_hosts; h++) {
		if (msnap_seg(e, sn, h))
			continue;
		MSNAP_FOR_PORTS(x, h, j)
		expo_sample_u64(e, sn->ports[x->port[j]].labels,
				sn->ports[x->port[j]].info, 1);
	}
	msnap_port_gauge(e, sn, x, "ibpulse_port_state_id",
			 "Logical port state (1: down, 2: init, 3: armed, 4: "
			 "active, 5: active defer).",
			 offsetof(struct msnap_port, state));
	msnap_port_gauge(e, sn, x, "ibpulse_port_physical_state_id",
			 "Physical port state (1: sleep, 2: polling, 3: "
			 "disabled, 4: port configuration training, 5: link "
			 "up, 6: link error recovery, 7: phy test).",
			 offsetof(struct msnap_port, phys_state));
	msnap_port_gauge(e, sn, x, "ibpulse_port_rate_bytes_per_second",
			 "Data rate of the port's link as the kernel reports "
			 "it, in bytes per second.",
			 offsetof(struct msnap_port, rate_bytes));
	expo_family(e, "ibpulse_port_gid_info", EXPO_INFO,
		    "A non-zero entry of the port's GID table, with its type "
		    "(IB/RoCE v1, RoCE v2) and netdev.");
	msnap_port_tables(e, sn, x, 0);
	expo_family(e, "ibpulse_port_pkey_info", EXPO_INFO,
		    "A valid entry of the port's P_Key table, with its "
		    "membership (full or limited).");
	msnap_port_tables(e, sn, x, 1);
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

/* Family @f: each port's rows of it, which come next in its row list. */
static void msnap_render_family(struct expo *e, const struct msnap *sn,
				struct msnap_index *x, size_t f)
{
	const struct counter_def *d = msnap_family_def(x, f);

	expo_family(e, d->metric,
		    d->kind == COUNTER_KIND_COUNTER ? EXPO_COUNTER : EXPO_GAUGE,
		    d->help);
	for (size_t h = 0; h <= sn->n_hosts && !e->err; h++) {
		int skip = msnap_seg(e, sn, h);

		MSNAP_FOR_PORTS(x, h, j)
		{
			size_t p = x->port[j];

			for (; x->cur[p] < x->row_start[p + 1] &&
			       x->fam_of_key[sn->rows[x->row[x->cur[p]]].key] ==
				       f;
			     x->cur[p]++) {
				const struct msnap_row *r =
					&sn->rows[x->row[x->cur[p]]];

				if (!skip)
					msnap_value(e, sn->ports[p].labels,
						    sn->keys[r->key].extra, d,
						    r->value);
			}
		}
	}
}

static void msnap_render_saturated(struct expo *e, const struct msnap *sn,
				   const struct msnap_index *x)
{
	expo_family(e, "ibpulse_port_error_saturated", EXPO_GAUGE,
		    SATURATED_HELP);
	for (size_t h = 0; h <= sn->n_hosts && !e->err; h++) {
		if (msnap_seg(e, sn, h))
			continue;
		MSNAP_FOR_PORTS(x, h, j)
		{
			size_t p = x->port[j];

			for (size_t i = x->row_start[p];
			     i < x->row_start[p + 1]; i++) {
				const struct msnap_row *r =
					&sn->rows[x->row[i]];
				const struct counter_def *d =
					sn->keys[r->key].def;

				if (x->fam_of_key[r->key] < x->n_table &&
				    d->width)
					expo_sample_u64(
						e, sn->ports[p].labels,
						sn->keys[r->key].sat_extra,
						(uint64_t)counters_saturated(
							d, r->value));
			}
		}
	}
}

static void msnap_render_counters(struct expo *e, const struct msnap *sn,
				  struct msnap_index *x)
{
	for (size_t f = 0; f < x->n_fam && !e->err; f++)
		msnap_render_family(e, sn, x, f);
	msnap_render_saturated(e, sn, x);
}

int msnap_render(struct expo *e, const struct msnap *sn, unsigned flags)
{
	struct msnap_index x;
	int ret = msnap_index_build(&x, sn);

	if (ret) {
		msnap_index_free(&x);
		return e->err ? e->err : (e->err = ret);
	}
	msnap_render_hosts(e, sn, flags);
	msnap_render_devices(e, sn, &x);
	msnap_render_ports(e, sn, &x);
	msnap_render_counters(e, sn, &x);
	msnap_index_free(&x);
	return e->err;
}
