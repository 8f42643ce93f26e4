// SPDX-License-Identifier: MIT
/*
 * The poller (fabric.h): opening the CA port, discovery with state carried
 * over by GUID, and the sweep. A sweep asks each node's PMA for its
 * ClassPortInfo once per discovery (what it supports decides what else is
 * asked), then PortCounters, PortCountersExtended and, when configured,
 * the two details attributes for every port, all through one MAD window:
 * a node's port queries are queued the moment its ClassPortInfo answers,
 * so nothing waits for a barrier.
 */
#include "fabric_int.h"
#include "report.h"
#include "now.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/umad.h>

#include "fnv.h"
#include "log.h"

#define TAG(node, port) ((uint32_t)(node) << 8 | (uint32_t)(port))
#define TAG_NODE(t) ((t) >> 8)
#define TAG_PORT(t) ((t)&0xff)
#define MAX_NODES (1u << 24)

void fabric_pass_begin(struct fabric *f, struct fabric_pass *p)
{
	memset(p, 0, sizeof(*p));
	p->started_at = now_wall();
	f->pass_mono = now_mono();
	f->pass_cpu = now_of(CLOCK_PROCESS_CPUTIME_ID);
	fwin_stats_reset(f->win);
}

void fabric_pass_end(struct fabric *f, struct fabric_pass *p)
{
	const struct fwin_stats *ws = fwin_stats(f->win);

	p->seconds = now_mono() - f->pass_mono;
	p->cpu_seconds = now_of(CLOCK_PROCESS_CPUTIME_ID) - f->pass_cpu;
	p->mads = ws->sent;
	p->retries = ws->retries;
	p->timeouts = ws->timeouts;
	p->errors = ws->errors;
	p->stale = ws->stale;
	p->unreachable = ws->unreachable;
}

/* Resolve the CA and port; RoCE ports have no SM/PMA path. */
static int resolve_port(struct fabric *f, char *err, size_t errlen)
{
	umad_port_t p;
	char name[FABRIC_CA_NAME_LEN] = "";
	int ret;

	if (f->s.ca)
		snprintf(name, sizeof(name), "%s", f->s.ca);
	ret = umad_get_port(f->s.ca ? name : NULL, (int)f->s.port, &p);
	if (ret < 0) {
		snprintf(err, errlen,
			 "no InfiniBand port %s%s%lld (umad_get_port: %s); "
			 "`ibpulse-probe devices` lists them",
			 f->s.ca ? f->s.ca : "(first CA)", " port ", f->s.port,
			 strerror(-ret));
		return -ENODEV;
	}
	snprintf(f->ca, sizeof(f->ca), "%s", p.ca_name);
	f->port = (unsigned)p.portnum;
	if (strcmp(p.link_layer, "InfiniBand") && strcmp(p.link_layer, "IB")) {
		snprintf(err, errlen,
			 "%s port %u is %s (RoCE): it has no subnet manager "
			 "or PMA path, so there is no fabric to poll; its "
			 "counters come from sysfs (`ibpulse-probe report`)",
			 f->ca, f->port, p.link_layer);
		umad_release_port(&p);
		return -EPROTONOSUPPORT;
	}
	umad_release_port(&p);
	return 0;
}

int fabric_open(const struct fabric_settings *s, struct fabric **out, char *err,
		size_t errlen)
{
	struct fwin_opts o = {
		.window = (unsigned)s->window,
		.per_node = (unsigned)(s->per_node < s->window ? s->per_node
							       : s->window),
		.timeout_ms = (unsigned)s->timeout,
		.retries = (unsigned)s->retries,
	};
	struct fabric *f;
	int ret;

	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->s = *s;
	ret = resolve_port(f, err, errlen);
	if (!ret) {
		ret = fwin_open(f->ca, f->port, &o, &f->win);
		if (ret)
			snprintf(err, errlen,
				 "cannot open %s port %u for PerfMgt MADs: %s "
				 "(the umad device needs root or the rdma "
				 "group)",
				 f->ca, f->port, strerror(-ret));
		if (ret == -EPERM)
			ret = -EACCES;
	}
	if (ret) {
		free(f);
		return ret;
	}
	*out = f;
	return 0;
}

void fabric_close(struct fabric *f)
{
	if (!f)
		return;
	fwin_close(f->win);
	fabric_net_clear(&f->net);
	free(f);
}

const char *fabric_ca(const struct fabric *f)
{
	return f->ca;
}

unsigned fabric_ca_port(const struct fabric *f)
{
	return f->port;
}

const struct fabric_net *fabric_net(const struct fabric *f)
{
	return &f->net;
}

const struct fabric_sweep_stats *fabric_last_sweep(const struct fabric *f)
{
	return &f->last;
}

bool fabric_rediscover_due(const struct fabric *f, double now_mono)
{
	return !f->have_net || f->want_rediscover ||
	       now_mono - f->discovered_mono >= (double)f->s.rediscover;
}

bool fabric_routes_due(const struct fabric *f, double now_mono)
{
	if (!f->have_net || !f->s.route_interval)
		return false;
	/*
	 * The loop reads them after a sweep, so a read comes a little later
	 * in its cycle than the cycle starts: half a sweep interval of slack
	 * lets route_interval = interval read every cycle, not every other.
	 */
	return f->routes_want ||
	       now_mono - f->routes_mono >=
		       (double)f->s.route_interval - (double)f->s.interval / 2;
}

uint64_t fabric_net_hash(const struct fabric_net *net)
{
	uint64_t h = FNV1A_BASIS;

	for (size_t i = 0; i < net->n_nodes; i++) {
		const struct fabric_node *n = &net->nodes[i];

		h = fnv1a_mix(h, n->guid);
		h = fnv1a_mix(h, (uint64_t)n->type << 32 | n->lid);
		h = fnv1a_mix(h, n->lft_top);
		for (size_t j = 0; j < n->n_ports; j++) {
			const struct fabric_port *p = &n->ports[j];

			h = fnv1a_mix(h, (uint64_t)p->num << 48 |
						 (uint64_t)p->lid << 32 |
						 (uint64_t)p->lmc << 24 |
						 (uint64_t)p->state << 16 |
						 p->remote_port);
			h = fnv1a_mix(h, p->remote_guid);
		}
	}
	return h;
}

/* What @old knew of each node and port, into @net by GUID. */
static void carry_over(struct fabric_net *old, struct fabric_net *net)
{
	for (size_t i = 0; i < net->n_nodes; i++) {
		struct fabric_node *n = &net->nodes[i];
		struct fabric_node *o =
			(struct fabric_node *)fabric_find(old, n->guid);

		if (!o)
			continue;
		if (o->cpi_known && !o->cpi_status) {
			n->cpi_known = true;
			n->caps = o->caps;
		}
		n->no_details = o->no_details;
		/* the table stays until it is read again (same top only) */
		if (o->lft && o->lft_top == n->lft_top) {
			n->lft = o->lft;
			o->lft = NULL;
		}
		n->lft_status = o->lft_status;
		n->lft_block = o->lft_block;
		for (size_t j = 0, k = 0; j < n->n_ports; j++) {
			while (k < o->n_ports &&
			       o->ports[k].num < n->ports[j].num)
				k++;
			if (k == o->n_ports ||
			    o->ports[k].num != n->ports[j].num)
				continue;
			n->ports[j].c = o->ports[k].c;
			n->ports[j].prev = o->ports[k].prev;
			n->ports[j].status = o->ports[k].status;
			n->ports[j].failed = o->ports[k].failed;
		}
	}
}

int fabric_discover(struct fabric *f)
{
	struct fabric_net net;
	int ret;

	ret = fabric_disc_run(f->ca, f->port, &f->s, &net);
	if (ret)
		return ret;
	if (net.n_nodes > MAX_NODES) {
		log_err("fabric: %zu nodes: more than this poller handles "
			"(%u)",
			net.n_nodes, MAX_NODES);
		fabric_net_clear(&net);
		return -E2BIG;
	}
	carry_over(&f->net, &net);
	fabric_net_clear(&f->net);
	f->net = net;
	if (!f->have_net || fabric_net_hash(&net) != f->net_hash)
		f->routes_want = true; /* the routes may have moved */
	f->net_hash = fabric_net_hash(&net);
	f->have_net = true;
	f->want_rediscover = false;
	f->discovered_mono = now_mono();
	log_info("fabric: discovered %zu nodes (%zu switches, %zu CAs), %zu "
		 "ports, %zu links in %.3f s",
		 net.n_nodes, net.n_switches, net.n_cas, net.n_ports,
		 net.n_links, net.discover_seconds);
	return 0;
}

/* -------------------------------------------------------------- sweep */

struct sweep {
	struct fabric *f;
	int err; /* a failed fwin_submit */
};

/* Whether the PMA of port @p can be asked: a LID, and a CA port up. */
static bool askable(const struct fabric_node *n, const struct fabric_port *p)
{
	if (!p->lid || p->lid >= 0xc000)
		return false;
	return n->type == FABRIC_SWITCH || p->state == REPORT_PORT_ACTIVE;
}

static void submit(struct sweep *sw, uint16_t lid, enum pma_kind k,
		   uint8_t port, uint8_t set, uint32_t tag)
{
	struct fwin_req r = {.lid = lid,
			     .kind = (uint8_t)k,
			     .port = port,
			     .set = set,
			     .tag = tag};
	int ret = fwin_submit(sw->f->win, &r);

	if (ret && !sw->err)
		sw->err = ret;
}

static void submit_ports(struct sweep *sw, size_t ni)
{
	struct fabric_node *n = &sw->f->net.nodes[ni];

	for (size_t j = 0; j < n->n_ports; j++) {
		struct fabric_port *p = &n->ports[j];
		uint32_t tag = TAG(ni, j);
		uint8_t num = (uint8_t)p->num;

		if (!askable(n, p))
			continue;
		p->status = 0;
		submit(sw, p->lid, PMA_PC, num, 0, tag);
		if (pma_has_ext(&n->caps))
			submit(sw, p->lid, PMA_PCE, num, 0, tag);
		if (sw->f->s.details && !n->no_details) {
			submit(sw, p->lid, PMA_RCV_ERR, num, 0, tag);
			submit(sw, p->lid, PMA_XMIT_DISC, num, 0, tag);
		}
	}
}

/* Every askable port of @n failed with @status at @kind. */
static void fail_node(struct fabric_node *n, int status, enum pma_kind kind)
{
	for (size_t j = 0; j < n->n_ports; j++) {
		if (!askable(n, &n->ports[j]))
			continue;
		n->ports[j].status = status;
		n->ports[j].failed = kind;
	}
}

static void cpi_done(struct sweep *sw, size_t ni, int status,
		     const uint8_t *mad)
{
	struct fabric_node *n = &sw->f->net.nodes[ni];

	n->cpi_status = status;
	if (!status) {
		pma_decode_cpi(mad, &n->caps);
		n->cpi_known = true;
	} else if (status == -EOPNOTSUPP) {
		/* ClassPortInfo is mandatory; assume the basic set */
		memset(&n->caps, 0, sizeof(n->caps));
		n->cpi_known = true;
		n->cpi_status = 0;
	} else {
		fail_node(n, status, PMA_CPI);
		return;
	}
	submit_ports(sw, ni);
}

static void port_done(struct sweep *sw, const struct fwin_req *r, int status,
		      const uint8_t *mad)
{
	struct fabric_node *n = &sw->f->net.nodes[TAG_NODE(r->tag)];
	struct fabric_port *p = &n->ports[TAG_PORT(r->tag)];
	bool detail = r->kind == PMA_RCV_ERR || r->kind == PMA_XMIT_DISC;

	if (r->set) {
		if (status)
			log_debug("fabric: reset of %s port %u: %s", n->desc,
				  p->num, strerror(-status));
		return;
	}
	if (!status) {
		pma_decode(mad, (enum pma_kind)r->kind, &n->caps, &p->c);
		if (r->kind == PMA_PC && sw->f->s.reset)
			submit(sw, p->lid, PMA_PC, (uint8_t)p->num, 1, r->tag);
		return;
	}
	if (detail && (status == -EOPNOTSUPP || status == -EINVAL)) {
		n->no_details = true; /* not asked again until rediscovery */
		return;
	}
	if (!p->status) {
		p->status = status;
		p->failed = (enum pma_kind)r->kind;
	}
}

static void sweep_done(void *arg, const struct fwin_req *r, int status,
		       const uint8_t *mad)
{
	struct sweep *sw = arg;

	if (r->kind == PMA_CPI)
		cpi_done(sw, TAG_NODE(r->tag), status, mad);
	else
		port_done(sw, r, status, mad);
}

/* The first port a node's ClassPortInfo can be asked through. */
static const struct fabric_port *cpi_port(const struct fabric_node *n)
{
	for (size_t j = 0; j < n->n_ports; j++)
		if (askable(n, &n->ports[j]))
			return &n->ports[j];
	return NULL;
}

static void sweep_start(struct sweep *sw)
{
	struct fabric_net *net = &sw->f->net;

	for (size_t i = 0; i < net->n_nodes; i++) {
		struct fabric_node *n = &net->nodes[i];
		const struct fabric_port *cp;

		for (size_t j = 0; j < n->n_ports; j++) {
			n->ports[j].prev = n->ports[j].c;
			memset(&n->ports[j].c, 0, sizeof(n->ports[j].c));
			n->ports[j].status = FABRIC_NOT_ASKED;
		}
		cp = cpi_port(n);
		if (!cp)
			continue;
		if (n->cpi_known) {
			submit_ports(sw, i);
			continue;
		}
		fail_node(n, 0, PMA_CPI); /* pending: asked, no answer yet */
		submit(sw, cp->lid, PMA_CPI, (uint8_t)cp->num, 0, TAG(i, 0));
	}
}

static void sweep_tally(struct fabric *f, struct fabric_sweep_stats *st)
{
	for (size_t i = 0; i < f->net.n_nodes; i++) {
		const struct fabric_node *n = &f->net.nodes[i];

		for (size_t j = 0; j < n->n_ports; j++) {
			const struct fabric_port *p = &n->ports[j];
			uint64_t bit = UINT64_C(1) << FC_LINK_DOWNED;

			if (p->status == FABRIC_NOT_ASKED) {
				st->ports_skipped++;
				continue;
			}
			if (p->status < 0) {
				st->ports_failed++;
				continue;
			}
			st->ports_read++;
			if ((p->c.have & p->prev.have & bit) &&
			    p->c.v[FC_LINK_DOWNED] > p->prev.v[FC_LINK_DOWNED])
				st->link_downed_moved = true;
		}
	}
}

int fabric_sweep(struct fabric *f, const volatile sig_atomic_t *stop)
{
	struct sweep sw = {.f = f};
	struct fabric_sweep_stats st = {0};
	int ret;

	if (!f->have_net)
		return -ENOENT;
	fabric_pass_begin(f, &st.pass);
	sweep_start(&sw);
	ret = fwin_run(f->win, sweep_done, &sw, stop);
	if (ret)
		return ret;
	if (sw.err)
		log_warn("fabric: %s: some ports were not asked",
			 strerror(-sw.err));
	fabric_pass_end(f, &st.pass);
	st.lids_dead = (size_t)fwin_stats(f->win)->dead_lids;
	sweep_tally(f, &st);
	f->last = st;
	if (st.lids_dead || st.link_downed_moved)
		f->want_rediscover = true;
	log_debug("fabric: sweep read %zu ports (%zu failed) in %.3f s, %llu "
		  "MADs, %llu retries",
		  st.ports_read, st.ports_failed, st.pass.seconds,
		  (unsigned long long)st.pass.mads,
		  (unsigned long long)st.pass.retries);
	return 0;
}
