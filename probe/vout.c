// SPDX-License-Identifier: MIT
/*
 * Human and JSON output of a verbs test. The table keeps perftest's column
 * names (its "MB/sec" is MiB/s, and so is ours, labelled as such) so the
 * two can be read side by side; JSON keeps base units throughout.
 */
#include "vout.h"

#include "vfig.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#define MIB (1024.0 * 1024.0)

static void table_params(FILE *f, enum vt_test test, const struct vt_used *u)
{
	fprintf(f, "---------------------------------------------------------"
		   "------------------------------\n");
	fprintf(f, " ibpulse %s\n", vt_test_name(test));
	fprintf(f,
		" Device %s port %u   GID index %u (%s %s)   P_Key 0x%04x "
		"(index %u)   MTU %u\n",
		u->device, u->ib_port, u->gid_index,
		vt_gid_type_name(u->gid_type), u->gid, u->pkey, u->pkey_index,
		u->mtu);
	fprintf(f, " Remote GID index %u (%s)   P_Key 0x%04x\n",
		u->remote_gid_index, u->remote_gid, u->remote_pkey);
	fprintf(f,
		" QPs %u   size %u   TX depth %u   CQ moderation %u   "
		"post list %u   inline %u   outstanding reads %u%s\n",
		u->qps, u->size, u->tx_depth, u->cq_mod, u->post_list,
		u->inline_size, u->rd_atomic,
		u->bidir ? "   bidirectional" : "");
	if (u->duration_s > 0 && vt_test_is_lat(test))
		fprintf(f,
			" Duration %.1f s, margin %.2f s each end, %u "
			"iterations done\n",
			u->duration_s, u->margin_s, u->iters);
	else if (u->duration_s > 0)
		fprintf(f, " Duration %.1f s, margin %.2f s each end\n",
			u->duration_s, u->margin_s);
	else
		fprintf(f, " Iterations %u\n", u->iters);
	fprintf(f, "---------------------------------------------------------"
		   "------------------------------\n");
}

static void table_bw(FILE *f, const char *who, const struct vt_side *s,
		     uint32_t size)
{
	fprintf(f, " %-9s %-8u %-12llu %-15.2f %-18.2f %-14.2f %-14.6f %.3f\n",
		who, size, (unsigned long long)s->msgs, s->bw_peak_Bps / MIB,
		s->bw_avg_Bps / MIB, s->bw_min_Bps / MIB, s->msg_rate / 1e6,
		s->cpu_s);
}

static void table_lat(FILE *f, const struct vt_side *s, uint32_t size)
{
	const struct vstats_lat *l = &s->lat;

	fprintf(f,
		" %-8u %-11zu %-12.2f %-12.2f %-16.2f %-12.2f %-14.2f "
		"%-12.2f %.2f\n",
		size, l->n, l->min_s * 1e6, l->max_s * 1e6, l->median_s * 1e6,
		l->mean_s * 1e6, l->stdev_s * 1e6, l->p99_s * 1e6,
		l->p999_s * 1e6);
}

/* The responder port's counter rises over the test, those it has. */
static void table_ctr(FILE *f, const struct vt_portctr *c)
{
	fprintf(f, " responder port over the test:");
	if (c->has_bytes)
		fprintf(f, " xmit %.1f MiB, rcv %.1f MiB;",
			(double)c->xmit_bytes / 1048576.0,
			(double)c->rcv_bytes / 1048576.0);
	if (c->has_pkts)
		fprintf(f, " xmit %llu, rcv %llu packets;",
			(unsigned long long)c->xmit_pkts,
			(unsigned long long)c->rcv_pkts);
	if (c->has_wait)
		fprintf(f, " xmit_wait %llu;",
			(unsigned long long)c->xmit_wait);
	if (c->has_cnp)
		fprintf(f, " congestion notifications %llu;",
			(unsigned long long)c->cnp);
	fputc('\n', f);
}

void vout_table(FILE *f, enum vt_test test, const struct vt_result *res)
{
	const struct vt_used *u = &res->used;

	if (!u->device[0]) {
		fprintf(f, " %s FAILED: %s\n", vt_test_name(test), res->error);
		return;
	}
	table_params(f, test, u);
	if (vt_test_is_lat(test)) {
		fprintf(f, " #bytes   #samples    t_min[usec]  t_max[usec]  "
			   "t_typical[usec] t_avg[usec]  t_stdev[usec]  "
			   "99%%[usec]    99.9%%[usec]\n");
		if (res->local.has_lat)
			table_lat(f, &res->local, u->size);
	} else {
		fprintf(f, " %-9s %-8s %-12s %-15s %-18s %-14s %-14s %s\n",
			"side", "#bytes", "#messages", "BW peak[MiB/s]",
			"BW average[MiB/s]", "BW min[MiB/s]", "MsgRate[Mpps]",
			"CPU[s]");
		table_bw(f, "client", &res->local, u->size);
		if (res->remote_valid && res->remote.msgs)
			table_bw(f, "responder", &res->remote, u->size);
		if (u->bidir && res->remote_valid) {
			struct vt_side sum;

			vout_sum(&res->local, &res->remote, &sum);
			table_bw(f, "sum", &sum, u->size);
		}
	}
	if (res->has_remote_ctr)
		table_ctr(f, &res->remote_ctr);
	fprintf(f, "---------------------------------------------------------"
		   "------------------------------\n");
	if (res->status)
		fprintf(f, " FAILED: %s\n", res->error);
}

void vout_sum(const struct vt_side *a, const struct vt_side *b,
	      struct vt_side *sum)
{
	memset(sum, 0, sizeof(*sum));
	sum->msgs = a->msgs + b->msgs;
	sum->bytes = a->bytes + b->bytes;
	sum->bw_avg_Bps = a->bw_avg_Bps + b->bw_avg_Bps;
	sum->bw_peak_Bps = a->bw_peak_Bps + b->bw_peak_Bps;
	sum->bw_min_Bps = a->bw_min_Bps + b->bw_min_Bps;
	sum->msg_rate = a->msg_rate + b->msg_rate;
	sum->cpu_s = a->cpu_s + b->cpu_s;
}

/* The test API's figure keys (testapi.h) of side @s, those it measured. */
static void json_figures(json_t *o, enum vt_test test, const struct vt_side *s)
{
	double fig[TESTAPI_FIG_COUNT];

	vfig_of(fig, test, s);
	for (int i = 0; i < TESTAPI_FIG_COUNT; i++)
		if (isfinite(fig[i]))
			json_object_set_new(o, testapi_figs[i].key,
					    json_real(fig[i]));
}

static json_t *json_side(enum vt_test test, const struct vt_side *s)
{
	json_t *o = json_pack(
		"{s:s, s:s, s:I, s:I, s:f, s:f, s:f, s:f, s:f, "
		"s:f}",
		"status", s->status ? "error" : "ok", "error", s->error,
		"bytes", (json_int_t)s->bytes, "messages", (json_int_t)s->msgs,
		"elapsed_seconds", s->elapsed_s, "cpu_seconds", s->cpu_s,
		"bw_average_bytes_per_second", s->bw_avg_Bps,
		"bw_peak_bytes_per_second", s->bw_peak_Bps,
		"bw_min_bytes_per_second", s->bw_min_Bps,
		"message_rate_per_second", s->msg_rate);

	if (!o)
		return NULL;
	if (s->wc_status)
		json_object_set_new(
			o, "wc_status",
			json_string(vt_wc_status_name(s->wc_status)));
	if (s->has_lat)
		json_object_set_new(
			o, "latency",
			json_pack("{s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:f}",
				  "samples", (json_int_t)s->lat.n,
				  "min_seconds", s->lat.min_s, "median_seconds",
				  s->lat.median_s, "mean_seconds",
				  s->lat.mean_s, "p99_seconds", s->lat.p99_s,
				  "p99_9_seconds", s->lat.p999_s, "max_seconds",
				  s->lat.max_s, "stdev_seconds",
				  s->lat.stdev_s));
	json_figures(o, test, s);
	return o;
}

static json_t *json_params(const struct vt_used *u)
{
	json_t *o = json_pack(
		"{s:s, s:i, s:i, s:s, s:s, s:i, s:i, s:i, s:i, "
		"s:I, s:i, s:i, s:i, s:i, s:I, s:f, s:f, s:b}",
		"device", u->device, "ib_port", (int)u->ib_port, "gid_index",
		(int)u->gid_index, "gid", u->gid, "gid_type",
		vt_gid_type_name(u->gid_type), "pkey", (int)u->pkey,
		"pkey_index", (int)u->pkey_index, "mtu_bytes", (int)u->mtu,
		"qps", (int)u->qps, "size_bytes", (json_int_t)u->size,
		"tx_depth", (int)u->tx_depth, "cq_mod", (int)u->cq_mod,
		"post_list", (int)u->post_list, "inline_bytes",
		(int)u->inline_size, "iterations", (json_int_t)u->iters,
		"duration_seconds", u->duration_s, "margin_seconds",
		u->margin_s, "bidirectional", u->bidir);

	if (!o)
		return NULL;
	json_object_set_new(o, "outstanding_reads", json_integer(u->rd_atomic));
	json_object_set_new(o, "verify", json_boolean(u->verify));
	json_object_set_new(o, "remote_gid", json_string(u->remote_gid));
	json_object_set_new(o, "remote_gid_index",
			    json_integer(u->remote_gid_index));
	json_object_set_new(o, "remote_pkey", json_integer(u->remote_pkey));
	if (u->dlid)
		json_object_set_new(o, "dlid", json_integer(u->dlid));
	return o;
}

/* Counter rises as JSON: only those the port has. */
static json_t *json_ctr(const struct vt_portctr *c)
{
	json_t *o = json_object();

	if (c->has_bytes) {
		json_object_set_new(o, "xmit_bytes",
				    json_integer((json_int_t)c->xmit_bytes));
		json_object_set_new(o, "rcv_bytes",
				    json_integer((json_int_t)c->rcv_bytes));
	}
	if (c->has_pkts) {
		json_object_set_new(o, "xmit_packets",
				    json_integer((json_int_t)c->xmit_pkts));
		json_object_set_new(o, "rcv_packets",
				    json_integer((json_int_t)c->rcv_pkts));
	}
	if (c->has_wait)
		json_object_set_new(o, "xmit_wait",
				    json_integer((json_int_t)c->xmit_wait));
	if (c->has_cnp)
		json_object_set_new(o, "congestion_notifications",
				    json_integer((json_int_t)c->cnp));
	return o;
}

int vout_json(FILE *f, enum vt_test test, const char *role,
	      const struct vt_result *res, int compact)
{
	const char *name = vt_test_name(test);
	bool client = !strcmp(role, "client");
	json_t *o = json_object();
	int rc;

	if (!o)
		return -ENOMEM;
	json_object_set_new(o, "test", json_string(name ? name : "unknown"));
	json_object_set_new(o, "role", json_string(role));
	json_object_set_new(o, "status",
			    json_string(res->status ? "error" : "ok"));
	json_object_set_new(o, "error", json_string(res->error));
	json_object_set_new(o, "parameters", json_params(&res->used));
	/* This process's view, and the peer's from its DONE or RESULT. */
	json_object_set_new(o, client ? "client" : "responder",
			    json_side(test, &res->local));
	json_object_set_new(o, client ? "responder" : "client",
			    res->remote_valid ? json_side(test, &res->remote)
					      : json_null());
	/* Bidirectional: each side's figure is what it sent; and both. */
	if (res->used.bidir && res->remote_valid) {
		struct vt_side sum;
		json_t *j;

		vout_sum(&res->local, &res->remote, &sum);
		j = json_pack("{s:I, s:I, s:f, s:f}", "bytes",
			      (json_int_t)sum.bytes, "messages",
			      (json_int_t)sum.msgs,
			      "bw_average_bytes_per_second", sum.bw_avg_Bps,
			      "message_rate_per_second", sum.msg_rate);
		if (j)
			json_figures(j, test, &sum);
		json_object_set_new(o, "sum", j);
	}
	/* Both roles: the responder's port (its own, or from RESULT). */
	json_object_set_new(o, "responder_port_counters",
			    res->has_remote_ctr ? json_ctr(&res->remote_ctr)
						: json_null());
	rc = json_dumpf(o, f, compact ? JSON_COMPACT : JSON_INDENT(2));
	fputc('\n', f);
	json_decref(o);
	return rc ? -EIO : 0;
}
