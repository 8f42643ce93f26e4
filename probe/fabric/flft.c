// SPDX-License-Identifier: MIT
/*
 * Reading the routes (fabric_routes_read(), fabric.h): every switch's
 * LinearForwardingTable, one LID-routed SubnGet per block of 64 LIDs up
 * to the LinearFDBTop its SwitchInfo gave at discovery, all through the
 * sweep's MAD window (fwin.h): the same window, per-node limit, timeouts,
 * retries with fresh TransactionIDs and dead-LID handling, so a switch
 * that does not answer costs its timeout once. A table is taken whole or
 * not at all: a switch with a block missing has no table and says which
 * block failed and why, rather than a table with holes that would look
 * like routes to nowhere.
 */
#include "fabric_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "route.h"

/* What one switch's read gathers. */
struct lft_job {
	uint8_t *tab; /* lft_top + 1 */
	int status;   /* the first failure */
	unsigned block;
};

struct lft_read {
	struct fabric *f;
	struct lft_job *jobs; /* by node index */
	size_t blocks;
	int err; /* a failed fwin_submit */
};

static void lft_done(void *arg, const struct fwin_req *r, int status,
		     const uint8_t *mad)
{
	struct lft_read *rd = arg;
	const struct fabric_node *n = &rd->f->net.nodes[r->tag];
	struct lft_job *j = &rd->jobs[r->tag];
	uint8_t ports[SMP_LFT_BLOCK];
	unsigned first = (unsigned)r->block * SMP_LFT_BLOCK, count;

	if (status) {
		if (!j->status) {
			j->status = status;
			j->block = r->block;
		}
		return;
	}
	smp_decode_lft(mad, ports);
	count = n->lft_top + 1 - first;
	if (count > SMP_LFT_BLOCK)
		count = SMP_LFT_BLOCK;
	memcpy(j->tab + first, ports, count);
}

/* Queue every block of switch @i; a switch without LID or table fails. */
static void lft_submit(struct lft_read *rd, size_t i)
{
	const struct fabric_node *n = &rd->f->net.nodes[i];
	struct lft_job *j = &rd->jobs[i];

	if (!n->lid || n->lid > 0xBFFF) {
		j->status = -EADDRNOTAVAIL;
		return;
	}
	if (!n->lft_top) {
		j->status = -ENODATA;
		return;
	}
	j->tab = malloc((size_t)n->lft_top + 1);
	if (!j->tab) {
		j->status = -ENOMEM;
		return;
	}
	for (unsigned b = 0; b <= n->lft_top / SMP_LFT_BLOCK; b++) {
		struct fwin_req r = {.lid = n->lid,
				     .cls = FWIN_SMP_LFT,
				     .block = (uint16_t)b,
				     .tag = (uint32_t)i};
		int ret = fwin_submit(rd->f->win, &r);

		if (ret) {
			j->status = j->status ? j->status : ret;
			j->block = b;
			if (!rd->err)
				rd->err = ret;
			return;
		}
		rd->blocks++;
	}
}

/* The read's outcome into the picture: whole tables, or their reasons.
 * Returns how many failed for want of an answer (worth asking again). */
static size_t lft_keep(struct lft_read *rd, struct fabric_route_stats *st)
{
	size_t again = 0;

	struct fabric_net *net = &rd->f->net;

	for (size_t i = 0; i < net->n_nodes; i++) {
		struct fabric_node *n = &net->nodes[i];
		struct lft_job *j = &rd->jobs[i];

		if (n->type != FABRIC_SWITCH)
			continue;
		st->switches++;
		free(n->lft);
		n->lft = NULL;
		n->lft_status = j->status;
		n->lft_block = j->block;
		if (j->status) {
			char why[128];

			st->switches_failed++;
			again += j->status == -ETIMEDOUT ||
				 j->status == -EHOSTUNREACH ||
				 j->status == -EBUSY;
			free(j->tab);
			fabric_lft_error(n, why, sizeof(why));
			log_info("fabric: no forwarding table of %s: %s",
				 n->desc, why);
			continue;
		}
		n->lft = j->tab;
	}
	return again;
}

int fabric_routes_read(struct fabric *f, const volatile sig_atomic_t *stop)
{
	struct lft_read rd = {.f = f};
	struct fabric_route_stats st = {0};
	size_t again;
	int ret;

	if (!f->have_net)
		return -ENOENT;
	rd.jobs = calloc(f->net.n_nodes + 1, sizeof(*rd.jobs));
	if (!rd.jobs)
		return -ENOMEM;
	fabric_pass_begin(f, &st.pass);
	fwin_smi_open(f->win); /* without it, every table fails: named */
	for (size_t i = 0; i < f->net.n_nodes; i++)
		if (f->net.nodes[i].type == FABRIC_SWITCH)
			lft_submit(&rd, i);
	ret = fwin_run(f->win, lft_done, &rd, stop);
	fwin_smi_close(f->win);
	if (ret) {
		for (size_t i = 0; i < f->net.n_nodes; i++)
			free(rd.jobs[i].tab);
		free(rd.jobs);
		return ret;
	}
	if (rd.err)
		log_warn("fabric: %s: some forwarding tables were not asked",
			 strerror(-rd.err));
	again = lft_keep(&rd, &st);
	free(rd.jobs);
	fabric_pass_end(f, &st.pass);
	st.blocks = rd.blocks;
	f->routes = st;
	/* a switch that did not answer (out of reach until the SM re-routes,
	 * or lossy) is asked again in the next cycle */
	f->routes_want = again > 0;
	f->routes_mono = f->pass_mono;
	log_debug("fabric: read %zu forwarding tables (%zu failed), %zu "
		  "blocks in %.3f s, %llu MADs",
		  st.switches - st.switches_failed, st.switches_failed,
		  st.blocks, st.pass.seconds, (unsigned long long)st.pass.mads);
	return 0;
}

void fabric_lft_error(const struct fabric_node *n, char *buf, size_t len)
{
	const char *why;

	switch (n->lft_status) {
	case 0:
		snprintf(buf, len, "%s", n->lft ? "" : "not read");
		return;
	case -EADDRNOTAVAIL:
		snprintf(buf, len, "the switch has no LID");
		return;
	case -ENODATA:
		snprintf(buf, len,
			 "LinearFDBTop is 0: the subnet manager set "
			 "no table");
		return;
	case -ETIMEDOUT:
		why = "timeout";
		break;
	case -EHOSTUNREACH:
		why = "not asked: the switch stopped answering";
		break;
	case -EOPNOTSUPP:
		why = "not supported (or no subnet management agent here)";
		break;
	case -EBUSY:
		why = "the switch stayed busy";
		break;
	case -EPROTO:
		why = "malformed response";
		break;
	default:
		why = strerror(-n->lft_status);
		break;
	}
	snprintf(buf, len, "LinearForwardingTable block %u: %s", n->lft_block,
		 why);
}

int fabric_lft_runs(const struct fabric_node *n, struct route_run **out,
		    size_t *n_runs)
{
	size_t k = route_runs_count(n->lft, n->lft_top);

	*out = malloc(k * sizeof(**out));
	if (!*out)
		return -ENOMEM;
	*n_runs = route_runs_encode(n->lft, n->lft_top, *out);
	return 0;
}
