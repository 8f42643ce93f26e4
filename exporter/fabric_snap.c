// SPDX-License-Identifier: MIT
/*
 * The fabric tables into a scrape (fabric_snap.h). Read in four plain
 * SELECTs (each its own short read transaction): the hosts' HCAs by node
 * GUID (to name an HCA end by host, device and port), the nodes still
 * fresh, their ports, and the counters of the switch ports this shard
 * serves. Switch ports become ports of the msnap and their counters its
 * rows, so msnap_render() writes them in the port families; the link families
 * come from the ends kept here.
 */
#include "fabric_snap.h"
#include "vec.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "dbread.h"
#include "counters.h"
#include "shard.h"

#define GUID_LEN 18 /* "0x" and 16 hex digits */

struct hca {
	char guid[GUID_LEN + 1];
	const char *host, *device;
};

struct fnode {
	char guid[GUID_LEN + 1];
	int type;
	const char *desc, *reporter;
	double updated;
	const struct hca *hca; /* CAs the probes report */
};

struct fend {
	const char *labels;	   /* this end */
	const char *remote_labels; /* remote_*="...", NULL: nothing attached */
	int64_t phys_state, degraded, lanes, lanes_enabled;
};

struct fabric_snap {
	struct hca *hcas;
	size_t n_hcas, cap_hcas;
	struct fnode *nodes;
	size_t n_nodes, cap_nodes;
	struct fend *ends;
	size_t n_ends, cap_ends;
	const char **node_labels; /* per node, NULL when not in the shard */
	struct {
		int64_t id;
		uint32_t port; /* index in sn->m->ports */
	} * sw;
	size_t n_sw, cap_sw;
	struct buf b;
};

void fabric_snap_free(struct fabric_snap *f)
{
	if (!f)
		return;
	free(f->hcas);
	free(f->nodes);
	free(f->ends);
	free(f->node_labels);
	free(f->sw);
	buf_free(&f->b);
	free(f);
}

/* The kernel's "b859:9f03:00d4:0a1c" as the fabric's "0xb8599f0300d40a1c". */
static int sysfs_guid(const char *in, char *out)
{
	size_t n = 2;

	out[0] = '0';
	out[1] = 'x';
	for (; in && *in && n < GUID_LEN; in++)
		if (isxdigit((unsigned char)*in))
			out[n++] = (char)tolower((unsigned char)*in);
		else if (*in != ':')
			return -1;
	out[n] = '\0';
	return n == GUID_LEN && (!in || !*in) ? 0 : -1;
}

static int by_guid(const void *a, const void *b)
{
	return strcmp(a, b); /* both start with their guid[] */
}

typedef int (*row_fn)(struct fabric_snap *f, struct snapshot *sn,
		      const struct snap_opts *o, sqlite3_stmt *s);

struct fabric_rows {
	row_fn fn;
	struct fabric_snap *f;
	struct snapshot *sn;
	const struct snap_opts *o;
};

static int fabric_row(void *ctx, sqlite3_stmt *s)
{
	struct fabric_rows *c = ctx;

	return c->fn(c->f, c->sn, c->o, s);
}

static int each_row(sqlite3 *db, const char *sql, row_fn fn,
		    struct fabric_snap *f, struct snapshot *sn,
		    const struct snap_opts *o, char *err, size_t errlen)
{
	struct fabric_rows c = {fn, f, sn, o};

	return dbread_each(db, sql, "fabric", NULL, fabric_row, &c, err,
			   errlen);
}

static int hca_row(struct fabric_snap *f, struct snapshot *sn,
		   const struct snap_opts *o, sqlite3_stmt *s)
{
	struct hca *h;

	(void)o;
	if (vec_grow(&f->hcas, &f->cap_hcas, f->n_hcas, sizeof(*h)))
		return -ENOMEM;
	h = &f->hcas[f->n_hcas];
	if (sysfs_guid(dbread_text(s, 2), h->guid))
		return 0;
	h->host =
		msnap_str(sn->m, dbread_text(s, 0), strlen(dbread_text(s, 0)));
	h->device =
		msnap_str(sn->m, dbread_text(s, 1), strlen(dbread_text(s, 1)));
	if (!h->host || !h->device)
		return -ENOMEM;
	f->n_hcas++;
	return 0;
}

static int node_row(struct fabric_snap *f, struct snapshot *sn,
		    const struct snap_opts *o, sqlite3_stmt *s)
{
	const char *guid = dbread_text(s, 0), *desc = dbread_text(s, 2),
		   *rep = dbread_text(s, 4);
	struct fnode *n;

	if (!guid || strlen(guid) != GUID_LEN ||
	    o->now - sqlite3_column_double(s, 3) > o->drop_after)
		return 0;
	if (vec_grow(&f->nodes, &f->cap_nodes, f->n_nodes, sizeof(*n)))
		return -ENOMEM;
	n = &f->nodes[f->n_nodes];
	memcpy(n->guid, guid, GUID_LEN + 1);
	n->type = sqlite3_column_int(s, 1);
	n->desc = msnap_str(sn->m, desc ? desc : "", desc ? strlen(desc) : 0);
	n->reporter = msnap_str(sn->m, rep ? rep : "", rep ? strlen(rep) : 0);
	n->updated = sqlite3_column_double(s, 3);
	n->hca = n->type == 1 && f->n_hcas ? bsearch(guid, f->hcas, f->n_hcas,
						     sizeof(*f->hcas), by_guid)
					   : NULL;
	if (!n->desc || !n->reporter)
		return -ENOMEM;
	f->n_nodes++;
	return 0;
}

static const struct fnode *find_node(const struct fabric_snap *f,
				     const char *guid)
{
	if (!guid || !f->n_nodes)
		return NULL;
	return bsearch(guid, f->nodes, f->n_nodes, sizeof(*f->nodes), by_guid);
}

/* The labels naming one end: host/device/port for a probe's HCA. */
static int end_labels(struct buf *b, const struct fnode *n, int64_t port,
		      const char *prefix)
{
	char k[32];
	int ret;

	if (n->hca) {
		snprintf(k, sizeof(k), "%shost", prefix);
		ret = expo_label(b, k, n->hca->host);
		snprintf(k, sizeof(k), "%sdevice", prefix);
		if (!ret)
			ret = expo_label(b, k, n->hca->device);
	} else {
		snprintf(k, sizeof(k), "%snode_guid", prefix);
		ret = expo_label(b, k, n->guid);
		snprintf(k, sizeof(k), "%snode_desc", prefix);
		if (!ret)
			ret = expo_label(b, k, n->desc);
	}
	snprintf(k, sizeof(k), "%sport", prefix);
	if (!ret)
		ret = expo_label_int(b, k, port, 0);
	if (!ret && *prefix) /* what is at the other end, for the rules */
		ret = expo_label(b, "remote_type",
				 n->type == 2	? "switch"
				 : n->type == 1 ? "ca"
						: "router");
	return ret;
}

static const char *labels_of(struct fabric_snap *f, struct snapshot *sn)
{
	return msnap_str(sn->m, f->b.data ? f->b.data : "", f->b.len);
}

/* This shard serves an end: its host's shard for an HCA, else its GUID's. */
static int served(const struct fnode *n, const struct snap_opts *o)
{
	return shard_of(n->hca ? n->hca->host : n->guid, o->shards) == o->shard;
}

static int add_switch_port(struct fabric_snap *f, struct snapshot *sn,
			   sqlite3_stmt *s, const char *labels)
{
	struct msnap_port p = {
		.id = -1,
		.host = SIZE_MAX,
		.device = SIZE_MAX,
		.labels = labels,
		.state = dbread_int(s, 4),
		.phys_state = dbread_int(s, 5),
		.rate_bytes = dbread_int(s, 6),
	};

	buf_reset(&f->b);
	if (expo_label(&f->b, "link_layer", "InfiniBand") ||
	    expo_label_int(&f->b, "lid", dbread_int(s, 3), 0) ||
	    !(p.info = labels_of(f, sn)))
		return -ENOMEM;
	if (vec_grow(&f->sw, &f->cap_sw, f->n_sw, sizeof(*f->sw)))
		return -ENOMEM;
	f->sw[f->n_sw].id = sqlite3_column_int64(s, 0);
	f->sw[f->n_sw++].port = (uint32_t)sn->m->n_ports;
	return msnap_add_raw_port(sn->m, &p);
}

static int port_row(struct fabric_snap *f, struct snapshot *sn,
		    const struct snap_opts *o, sqlite3_stmt *s)
{
	const struct fnode *n = find_node(f, dbread_text(s, 1));
	const struct fnode *r = find_node(f, dbread_text(s, 8));
	struct fend *e;
	int64_t port = dbread_int(s, 2);

	if (!n || !served(n, o))
		return 0;
	if (vec_grow(&f->ends, &f->cap_ends, f->n_ends, sizeof(*e)))
		return -ENOMEM;
	e = &f->ends[f->n_ends];
	memset(e, 0, sizeof(*e));
	buf_reset(&f->b);
	if (end_labels(&f->b, n, port, "") || !(e->labels = labels_of(f, sn)))
		return -ENOMEM;
	if (r) {
		buf_reset(&f->b);
		if (end_labels(&f->b, r, dbread_int(s, 9), "remote_") ||
		    !(e->remote_labels = labels_of(f, sn)))
			return -ENOMEM;
	}
	e->phys_state = dbread_int(s, 5);
	e->degraded = sqlite3_column_type(s, 7) != SQLITE_NULL;
	e->lanes = dbread_int(s, 10);
	e->lanes_enabled = dbread_int(s, 11);
	f->n_ends++;
	/* a switch's port reads like a host's, under its node's labels */
	if (n->type == 2) {
		buf_reset(&f->b);
		if (expo_label(&f->b, "node_guid", n->guid) ||
		    expo_label(&f->b, "node_desc", n->desc) ||
		    expo_label_int(&f->b, "port", port, 0))
			return -ENOMEM;
		return add_switch_port(f, sn, s, labels_of(f, sn));
	}
	return 0;
}

static int series_row(struct fabric_snap *f, struct snapshot *sn,
		      const struct snap_opts *o, sqlite3_stmt *s)
{
	int64_t id = sqlite3_column_int64(s, 0);
	const char *name = dbread_text(s, 1);
	size_t lo = 0, hi = f->n_sw;
	long k;

	(void)o;
	while (lo < hi) { /* f->sw is in port id order */
		size_t mid = (lo + hi) / 2;

		if (f->sw[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == f->n_sw || f->sw[lo].id != id || !name)
		return 0;
	k = msnap_key(sn->m, CSRC_IB, name, (size_t)sqlite3_column_bytes(s, 1));
	if (k < 0)
		return -ENOMEM;
	return msnap_add_row(sn->m, f->sw[lo].port, (uint32_t)k,
			     (uint64_t)sqlite3_column_int64(s, 2));
}

static int node_labels(struct fabric_snap *f, struct snapshot *sn,
		       const struct snap_opts *o)
{
	f->node_labels = calloc(f->n_nodes + 1, sizeof(*f->node_labels));
	if (!f->node_labels)
		return -ENOMEM;
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fnode *n = &f->nodes[i];
		static const char *const types[] = {"?", "ca", "switch",
						    "router"};

		if (shard_of(n->guid, o->shards) != o->shard)
			continue;
		buf_reset(&f->b);
		if (expo_label(&f->b, "node_guid", n->guid) ||
		    expo_label(&f->b, "node_desc", n->desc) ||
		    expo_label(&f->b, "type",
			       types[n->type >= 0 && n->type <= 3 ? n->type
								  : 0]) ||
		    expo_label(&f->b, "reporter", n->reporter) ||
		    !(f->node_labels[i] = labels_of(f, sn)))
			return -ENOMEM;
	}
	return 0;
}

/* clang-format off */
static const char hca_sql[] =
	"SELECT h.name, d.name, d.node_guid "
	"FROM device d "
	"JOIN host h ON h.id = d.host_id "
	"WHERE d.node_guid IS NOT NULL";
static const char node_sql[] =
	"SELECT guid, type, description, updated, reporter "
	"FROM fabric_node "
	"ORDER BY guid";
static const char port_sql[] =
	"SELECT id, node_guid, port, lid, state, phys_state, rate_bytes, degraded, "
	"remote_guid, remote_port, width_active, width_enabled "
	"FROM fabric_port "
	"ORDER BY id";
static const char series_sql[] =
	"SELECT port_id, name, value "
	"FROM fabric_series "
	"ORDER BY port_id";
/* clang-format on */

int fabric_read(sqlite3 *db, const struct snap_opts *o, struct snapshot *sn,
		char *err, size_t errlen)
{
	struct fabric_snap *f;
	int ret;

	if (!dbread_has_table(db, "fabric_series"))
		return 0;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	buf_init(&f->b, 0);
	sn->fabric = f;
	ret = each_row(db, hca_sql, hca_row, f, sn, o, err, errlen);
	if (!ret && f->n_hcas)
		qsort(f->hcas, f->n_hcas, sizeof(*f->hcas), by_guid);
	if (!ret)
		ret = each_row(db, node_sql, node_row, f, sn, o, err, errlen);
	if (!ret)
		ret = node_labels(f, sn, o);
	if (!ret)
		ret = each_row(db, port_sql, port_row, f, sn, o, err, errlen);
	if (!ret && f->n_sw)
		ret = each_row(db, series_sql, series_row, f, sn, o, err,
			       errlen);
	return ret;
}

int fabric_render(struct expo *e, const struct snapshot *sn)
{
	const struct fabric_snap *f = sn->fabric;

	if (!f)
		return e->err;
	expo_family(e, "ibpulse_link_info", EXPO_INFO,
		    "A link as the fabric pollers discovered it, one sample "
		    "per end: this end (host, device, port for a host's HCA; "
		    "node_guid, node_desc, port otherwise) and the other "
		    "(the same labels with remote_).");
	for (size_t i = 0; i < f->n_ends; i++)
		if (f->ends[i].remote_labels)
			expo_sample_u64(e, f->ends[i].labels,
					f->ends[i].remote_labels, 1);
	expo_family(e, "ibpulse_link_degraded", EXPO_GAUGE,
		    "1 when the link is up below what this end has enabled: "
		    "its active width or speed is lower (a 4X cable trained "
		    "at 1X).");
	for (size_t i = 0; i < f->n_ends; i++)
		if (f->ends[i].phys_state == 5)
			expo_sample_u64(e, f->ends[i].labels, NULL,
					(uint64_t)f->ends[i].degraded);
	expo_family(e, "ibpulse_link_width_lanes", EXPO_GAUGE,
		    "Lanes the link runs on at this end (1, 2, 4, 8, 12).");
	for (size_t i = 0; i < f->n_ends; i++)
		if (f->ends[i].lanes > 0 && f->ends[i].phys_state == 5)
			expo_sample_u64(e, f->ends[i].labels, NULL,
					(uint64_t)f->ends[i].lanes);
	expo_family(e, "ibpulse_link_width_enabled_lanes", EXPO_GAUGE,
		    "The widest width this end has enabled, in lanes.");
	for (size_t i = 0; i < f->n_ends; i++)
		if (f->ends[i].lanes_enabled > 0)
			expo_sample_u64(e, f->ends[i].labels, NULL,
					(uint64_t)f->ends[i].lanes_enabled);
	expo_family(e, "ibpulse_fabric_node_last_report_timestamp_seconds",
		    EXPO_GAUGE,
		    "When a fabric poller last reported the node (collector "
		    "clock), with the node's type and that poller's host.");
	for (size_t i = 0; i < f->n_nodes; i++)
		if (f->node_labels[i])
			expo_sample(e, f->node_labels[i], NULL,
				    f->nodes[i].updated);
	return e->err;
}
