// SPDX-License-Identifier: MIT
/*
 * Rendering one host's report as /metrics (pmetrics.h), and the
 * metrics_listen parser. The report's devices, ports and counters go into
 * a common/msnap.h snapshot, rendered by msnap_render(): the exporter
 * renders its database with the same code, so the same port gives the same
 * series, HELP and labels from either source. The probe's own families
 * (build info, sysfs read time, the daemon's spool) follow.
 */
#include "pmetrics.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "msnap.h"

/* One port of @r: its addressing, GID and P_Key entries and counters. */
static int pm_port(struct msnap *m, size_t dev, const struct report_port *p)
{
	struct msnap_port_in in = {
		.id = (int64_t)m->n_ports,
		.port = p->port,
		.state = p->state,
		.phys_state = p->phys_state,
		.rate_bytes = p->rate_bytes == REPORT_UNKNOWN
				      ? -1
				      : (int64_t)p->rate_bytes,
		.link_layer = p->link_layer,
		.port_guid = p->port_guid,
		.netdev = p->netdev,
		.lid = p->lid,
		.sm_lid = p->sm_lid,
		.lmc = p->lmc,
		.cap_mask = p->cap_mask,
	};
	uint32_t port = (uint32_t)m->n_ports;
	int ret = msnap_add_port(m, dev, &in);

	for (size_t k = 0; !ret && k < p->n_gids; k++)
		ret = msnap_add_gid(m, port, p->gids[k].index, p->gids[k].gid,
				    p->gids[k].type, p->gids[k].netdev);
	for (size_t k = 0; !ret && k < p->n_pkeys; k++)
		ret = msnap_add_pkey(m, port, p->pkeys[k].index,
				     p->pkeys[k].pkey);
	for (int s = 0; !ret && s < CSRC_COUNT; s++)
		for (size_t k = 0; !ret && k < p->n_counters[s]; k++) {
			const struct report_counter *c = &p->counters[s][k];
			long key = msnap_key(m, s, c->name, strlen(c->name));

			ret = key < 0 ? -ENOMEM
				      : msnap_add_row(m, port, (uint32_t)key,
						      c->value);
		}
	return ret;
}

static int pm_device(struct msnap *m, const struct report_device *d)
{
	char netdevs[REPORT_MAX_NETDEVS * (REPORT_MAX_NAME + 1) + 1];
	struct msnap_device_in in = {
		.id = (int64_t)m->n_devices,
		.name = d->name,
		.board_id = d->board_id,
		.fw_ver = d->fw_ver,
		.hca_type = d->hca_type,
		.node_guid = d->node_guid,
		.sys_image_guid = d->sys_image_guid,
		.node_desc = d->node_desc,
		.netdevs = report_netdevs_join(d, netdevs, sizeof(netdevs)),
		.pcie_address = d->pcie.address,
		.numa_node = d->numa_node,
		.pcie = d->pcie,
	};
	size_t dev = m->n_devices;
	int ret = msnap_add_device(m, 0, &in);

	for (size_t j = 0; !ret && j < d->n_ports; j++)
		ret = pm_port(m, dev, &d->ports[j]);
	return ret;
}

/* The snapshot of @r: one host, its devices, ports and counters. */
static int pm_snapshot(const struct report *r, struct msnap **out)
{
	struct msnap_host_in host = {
		.name = r->host,
		.probe_version = r->probe_version,
		.last_report = r->timestamp,
		.up = 1,
		.detail = 1,
	};
	struct msnap *m;
	int ret = msnap_new(&m);

	ret = ret ? ret : msnap_add_host(m, &host);
	for (size_t i = 0; !ret && i < r->n_devices; i++)
		ret = pm_device(m, &r->devices[i]);
	if (ret) {
		msnap_free(m);
		return ret;
	}
	*out = m;
	return 0;
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
static void pm_spool(struct expo *e, const struct msnap *m,
		     const struct pmetrics_spool *sp)
{
	const char *host = m->hosts[0].labels;

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
	struct msnap *m;
	struct expo e;
	int ret = pm_snapshot(r, &m);

	if (ret)
		return ret;
	expo_init(&e, out, format);
	msnap_render(&e, m, 0);
	pm_self(&e, read_seconds);
	if (sp)
		pm_spool(&e, m, sp);
	if (extra)
		extra(arg, &e); /* its error is sticky: expo_finish says it */
	ret = expo_finish(&e);
	if (series)
		*series = e.samples;
	expo_free(&e);
	msnap_free(m);
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
