// SPDX-License-Identifier: MIT
/*
 * Building a metrics snapshot (msnap.h): the arena its strings live in,
 * the label lists of hosts, devices, ports, GIDs and P_Keys (built here
 * only, whichever source fills the snapshot), and the hashed table of the
 * distinct counter names. Rendering is msnap_render.c.
 */
#include "msnap.h"
#include "vec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "fnv.h"
#include "hmap.h"

/*
 * Arena blocks double from 16 KiB to 256 KiB: a probe's one host fits in
 * the first few (a first block of 256 KiB cost the probe daemon about
 * 0.5 MB of RSS in bench/probe-metrics), a fleet's scrape still takes
 * few mallocs.
 */
#define MSNAP_BLOCK_MIN (16 * 1024)
#define MSNAP_BLOCK_MAX (256 * 1024)

struct msnap_block {
	struct msnap_block *next;
	size_t used, size;
	max_align_t data[];
};

struct msnap_mem {
	struct msnap_block *blocks;
	size_t cap_hosts, cap_devices, cap_ports, cap_gids, cap_pkeys;
	size_t cap_keys, cap_rows;
	struct hmap key_index; /* of uint32_t, an index into keys */
	struct buf scratch;    /* label lists being built */
};

static void *msnap_alloc(struct msnap_mem *m, size_t n)
{
	struct msnap_block *b = m->blocks;
	size_t need = (n + 15) & ~(size_t)15;

	if (!b || b->size - b->used < need) {
		size_t size = !b			  ? MSNAP_BLOCK_MIN
			      : b->size < MSNAP_BLOCK_MAX ? b->size * 2
							  : MSNAP_BLOCK_MAX;

		if (size < need)
			size = need;
		b = malloc(sizeof(*b) + size);
		if (!b)
			return NULL;
		b->size = size;
		b->used = 0;
		b->next = m->blocks;
		m->blocks = b;
	}
	b->used += need;
	return (char *)b->data + b->used - need;
}

const char *msnap_str(struct msnap *sn, const char *s, size_t len)
{
	char *p = msnap_alloc(sn->mem, len + 1);

	if (!p)
		return NULL;
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

/* The label list in the scratch buffer, copied into the arena. */
static const char *msnap_labels(struct msnap *sn)
{
	struct buf *b = &sn->mem->scratch;

	return msnap_str(sn, b->data ? b->data : "", b->len);
}

int msnap_new(struct msnap **out)
{
	struct msnap *sn = calloc(1, sizeof(*sn));

	if (!sn)
		return -ENOMEM;
	sn->mem = calloc(1, sizeof(*sn->mem));
	if (!sn->mem) {
		free(sn);
		return -ENOMEM;
	}
	buf_init(&sn->mem->scratch, 0);
	hmap_init(&sn->mem->key_index, sizeof(uint32_t));
	*out = sn;
	return 0;
}

void msnap_free(struct msnap *sn)
{
	struct msnap_block *b, *next;

	if (!sn)
		return;
	for (b = sn->mem->blocks; b; b = next) {
		next = b->next;
		free(b);
	}
	hmap_free(&sn->mem->key_index);
	buf_free(&sn->mem->scratch);
	free(sn->mem);
	free(sn->hosts);
	free(sn->devices);
	free(sn->ports);
	free(sn->gids);
	free(sn->pkeys);
	free(sn->keys);
	free(sn->rows);
	free(sn);
}

int msnap_add_host(struct msnap *sn, const struct msnap_host_in *in)
{
	struct msnap_mem *m = sn->mem;
	const char *name = in->name ? in->name : "";
	struct msnap_host *h;

	if (vec_grow(&sn->hosts, &m->cap_hosts, sn->n_hosts, sizeof(*h)))
		return -ENOMEM;
	h = &sn->hosts[sn->n_hosts];
	h->id = in->id;
	h->last_report = in->last_report;
	h->up = in->up;
	h->detail = in->detail;
	h->fp = in->fp;
	buf_reset(&m->scratch);
	if (expo_label(&m->scratch, "host", name))
		return -ENOMEM;
	h->name = msnap_str(sn, name, strlen(name));
	h->labels = msnap_labels(sn);
	buf_reset(&m->scratch);
	if (expo_label(&m->scratch, "probe_version", in->probe_version))
		return -ENOMEM;
	h->info = msnap_labels(sn);
	if (!h->name || !h->labels || !h->info)
		return -ENOMEM;
	sn->n_hosts++;
	return 0;
}

static int msnap_device_info(struct buf *b, const struct msnap_device_in *in)
{
	const char *text[][2] = {
		{"board_id", in->board_id},
		{"firmware_version", in->fw_ver},
		{"hca_type", in->hca_type},
		{"node_guid", in->node_guid},
		{"sys_image_guid", in->sys_image_guid},
		{"node_desc", in->node_desc},
		{"netdevs", in->netdevs},
		{"pcie_address", in->pcie_address},
	};
	int ret = 0;

	for (size_t i = 0; !ret && i < sizeof(text) / sizeof(text[0]); i++)
		ret = expo_label(b, text[i][0], text[i][1]);
	return ret ? ret : expo_label_int(b, "numa_node", in->numa_node, 0);
}

int msnap_add_device(struct msnap *sn, size_t host,
		     const struct msnap_device_in *in)
{
	struct msnap_mem *m = sn->mem;
	struct msnap_device *d;
	int ret;

	if (vec_grow(&sn->devices, &m->cap_devices, sn->n_devices, sizeof(*d)))
		return -ENOMEM;
	d = &sn->devices[sn->n_devices];
	d->id = in->id;
	d->host = host;
	buf_reset(&m->scratch);
	ret = buf_adds(&m->scratch, sn->hosts[host].labels);
	if (!ret)
		ret = expo_label(&m->scratch, "device", in->name);
	if (ret || !(d->labels = msnap_labels(sn)))
		return -ENOMEM;
	buf_reset(&m->scratch);
	if (msnap_device_info(&m->scratch, in) || !(d->info = msnap_labels(sn)))
		return -ENOMEM;
	d->pcie = in->pcie;
	d->pcie.address = NULL; /* in d->info; the caller's copy goes */
	sn->n_devices++;
	return 0;
}

static int msnap_port_info(struct buf *b, const struct msnap_port_in *in)
{
	int ret;

	ret = expo_label(b, "link_layer", in->link_layer);
	ret = ret ? ret : expo_label(b, "port_guid", in->port_guid);
	ret = ret ? ret : expo_label_int(b, "lid", in->lid, 0);
	ret = ret ? ret : expo_label_int(b, "sm_lid", in->sm_lid, 0);
	ret = ret ? ret : expo_label_int(b, "lmc", in->lmc, 0);
	ret = ret ? ret : expo_label_int(b, "cap_mask", in->cap_mask, 8);
	return ret ? ret : expo_label(b, "netdev", in->netdev);
}

int msnap_add_port(struct msnap *sn, size_t device,
		   const struct msnap_port_in *in)
{
	struct msnap_mem *m = sn->mem;
	struct msnap_port p = {
		.id = in->id,
		.device = device,
		.host = sn->devices[device].host,
		.state = in->state,
		.phys_state = in->phys_state,
		.rate_bytes = in->rate_bytes,
	};
	int ret;

	buf_reset(&m->scratch);
	ret = buf_adds(&m->scratch, sn->devices[device].labels);
	if (!ret)
		ret = expo_label_int(&m->scratch, "port", in->port, 0);
	if (ret || !(p.labels = msnap_labels(sn)))
		return -ENOMEM;
	buf_reset(&m->scratch);
	if (msnap_port_info(&m->scratch, in) || !(p.info = msnap_labels(sn)))
		return -ENOMEM;
	return msnap_add_raw_port(sn, &p);
}

int msnap_add_raw_port(struct msnap *sn, const struct msnap_port *p)
{
	if (vec_grow(&sn->ports, &sn->mem->cap_ports, sn->n_ports, sizeof(*p)))
		return -ENOMEM;
	sn->ports[sn->n_ports++] = *p;
	return 0;
}

/* An unset GID table entry reads as all zeros. */
static int msnap_gid_is_zero(const char *gid)
{
	for (; *gid; gid++)
		if (*gid != '0' && *gid != ':')
			return 0;
	return 1;
}

int msnap_add_gid(struct msnap *sn, size_t port, int64_t index, const char *gid,
		  const char *type, const char *netdev)
{
	struct msnap_mem *m = sn->mem;
	struct msnap_gid *g;
	int ret;

	if (!gid || msnap_gid_is_zero(gid))
		return 0;
	if (vec_grow(&sn->gids, &m->cap_gids, sn->n_gids, sizeof(*g)))
		return -ENOMEM;
	g = &sn->gids[sn->n_gids];
	g->port = port;
	buf_reset(&m->scratch);
	ret = expo_label_int(&m->scratch, "index", index, 0);
	ret = ret ? ret : expo_label(&m->scratch, "gid", gid);
	ret = ret ? ret : expo_label(&m->scratch, "type", type);
	ret = ret ? ret : expo_label(&m->scratch, "netdev", netdev);
	if (ret || !(g->labels = msnap_labels(sn)))
		return -ENOMEM;
	sn->n_gids++;
	return 0;
}

int msnap_add_pkey(struct msnap *sn, size_t port, int64_t index, int64_t pkey)
{
	struct msnap_mem *m = sn->mem;
	struct msnap_pkey *k;
	int ret;

	/* base 0 (0x0000, 0x8000) marks an unused table entry */
	if (!(pkey & 0x7fff))
		return 0;
	if (vec_grow(&sn->pkeys, &m->cap_pkeys, sn->n_pkeys, sizeof(*k)))
		return -ENOMEM;
	k = &sn->pkeys[sn->n_pkeys];
	k->port = port;
	buf_reset(&m->scratch);
	ret = expo_label_int(&m->scratch, "index", index, 0);
	ret = ret ? ret : expo_label_int(&m->scratch, "pkey", pkey & 0xffff, 4);
	ret = ret ? ret
		  : expo_label(&m->scratch, "membership",
			       pkey & 0x8000 ? "full" : "limited");
	if (ret || !(k->labels = msnap_labels(sn)))
		return -ENOMEM;
	sn->n_pkeys++;
	return 0;
}

int msnap_add_row(struct msnap *sn, uint32_t port, uint32_t key, uint64_t value)
{
	struct msnap_row *r;

	if (vec_grow(&sn->rows, &sn->mem->cap_rows, sn->n_rows, sizeof(*r)))
		return -ENOMEM;
	r = &sn->rows[sn->n_rows++];
	r->port = port;
	r->key = key;
	r->value = value;
	return 0;
}

static uint64_t msnap_key_hash(int source, const char *name, size_t len)
{
	return fnv1a_bytes(FNV1A_BASIS ^ (uint64_t)source, name, len);
}

/* A new key: its table entry and its ready-made counter="name" label. */
static int msnap_key_new(struct msnap *sn, int source, const char *name,
			 size_t len)
{
	struct msnap_mem *m = sn->mem;
	struct msnap_key *k;
	const char *label;

	if (vec_grow(&sn->keys, &m->cap_keys, sn->n_keys, sizeof(*k)))
		return -ENOMEM;
	k = &sn->keys[sn->n_keys];
	k->source = (enum counter_source)source;
	k->name = msnap_str(sn, name, len);
	if (!k->name)
		return -ENOMEM;
	k->def = counters_describe(k->source, k->name);
	buf_reset(&m->scratch);
	if (expo_label(&m->scratch, "counter", k->name) ||
	    !(label = msnap_labels(sn)))
		return -ENOMEM;
	k->extra = k->def && k->def->label ? label : NULL;
	k->sat_extra = k->def && k->def->width ? label : NULL;
	sn->n_keys++;
	return 0;
}

/* What msnap_key() looks up: a source and a name not NUL-terminated. */
struct msnap_look {
	const struct msnap *sn;
	int source;
	const char *name;
	size_t len;
};

static int msnap_key_eq(const void *ent, const void *key)
{
	const struct msnap_look *l = key;
	const struct msnap_key *k = &l->sn->keys[*(const uint32_t *)ent];

	return (int)k->source == l->source &&
	       !strncmp(k->name, l->name, l->len) && !k->name[l->len];
}

long msnap_key(struct msnap *sn, int source, const char *name, size_t len)
{
	struct hmap *index = &sn->mem->key_index;
	struct msnap_look l = {sn, source, name, len};
	uint64_t h = msnap_key_hash(source, name, len);
	uint32_t *e = hmap_find(index, h, msnap_key_eq, &l);

	if (e)
		return (long)*e;
	e = hmap_add(index, h);
	if (!e)
		return -1;
	if (msnap_key_new(sn, source, name, len)) {
		hmap_del(index, e);
		return -1;
	}
	*e = (uint32_t)sn->n_keys - 1;
	return (long)*e;
}

/*
 * Binary search by id in an array sorted by id, whose elements (@stride
 * bytes) start with their int64_t id; -1 when absent.
 */
static long msnap_find_id(const void *arr, size_t n, size_t stride,
			  int64_t want)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int64_t id;

		memcpy(&id, (const char *)arr + mid * stride, sizeof(id));
		if (id < want)
			lo = mid + 1;
		else if (id > want)
			hi = mid;
		else
			return (long)mid;
	}
	return -1;
}

long msnap_find_host(const struct msnap *sn, int64_t id)
{
	return msnap_find_id(sn->hosts, sn->n_hosts, sizeof(*sn->hosts), id);
}

long msnap_find_device(const struct msnap *sn, int64_t id)
{
	return msnap_find_id(sn->devices, sn->n_devices, sizeof(*sn->devices),
			     id);
}

long msnap_find_port(const struct msnap *sn, int64_t id)
{
	return msnap_find_id(sn->ports, sn->n_ports, sizeof(*sn->ports), id);
}
