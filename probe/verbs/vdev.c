// SPDX-License-Identifier: MIT
/*
 * The device of one test (struct vdev, engine.h): opening it, resolving
 * its port, GID and P_Key, and what the peer needs to know of it. The
 * resources built on it are veng.c's. Verbs calls return NULL or a
 * positive errno; both are turned into negative errnos here, with a
 * message that says which call failed.
 */
#include "engine.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void list_devices(struct ibv_device **list, char *err, size_t len,
			 const char *want)
{
	size_t off;
	int i, n;

	n = snprintf(err, len, "no RDMA device '%s'; devices:", want);
	off = n > 0 ? (size_t)n : 0;
	for (i = 0; list && list[i] && off < len; i++) {
		n = snprintf(err + off, len - off, " %s",
			     ibv_get_device_name(list[i]));
		off += n > 0 ? (size_t)n : 0;
	}
	if (!list || !list[0])
		snprintf(err + off, len > off ? len - off : 0, " (none)");
}

static int open_ctx(const struct vt_params *p, struct vdev *d, char *err,
		    size_t len)
{
	struct ibv_device **list;
	int i, n = 0, rc = 0;

	list = ibv_get_device_list(&n);
	if (!list || !n) {
		snprintf(err, len, "no RDMA devices found");
		rc = -ENODEV;
		goto out;
	}
	for (i = 0; i < n; i++)
		if (!p->device[0] ||
		    !strcmp(ibv_get_device_name(list[i]), p->device))
			break;
	if (i == n) {
		list_devices(list, err, len, p->device);
		rc = -ENODEV;
		goto out;
	}
	ctrl_strlcpy(d->name, ibv_get_device_name(list[i]), sizeof(d->name));
	d->ctx = ibv_open_device(list[i]);
	if (!d->ctx) {
		rc = errno ? -errno : -ENODEV;
		snprintf(err, len, "ibv_open_device(%s): %s", d->name,
			 strerror(-rc));
	}
out:
	if (list)
		ibv_free_device_list(list);
	return rc;
}

static int query_port(const struct vt_params *p, struct vdev *d, char *err,
		      size_t len)
{
	int rc;

	rc = ibv_query_device(d->ctx, &d->dattr);
	if (rc) {
		snprintf(err, len, "ibv_query_device(%s): %s", d->name,
			 strerror(rc));
		return -rc;
	}
	if (p->ib_port < 1 || p->ib_port > d->dattr.phys_port_cnt) {
		snprintf(err, len, "%s has no port %u; valid ports: 1..%u",
			 d->name, p->ib_port, d->dattr.phys_port_cnt);
		return -EINVAL;
	}
	d->port = p->ib_port;
	rc = ibv_query_port(d->ctx, (uint8_t)d->port, &d->pattr);
	if (rc) {
		snprintf(err, len, "ibv_query_port(%s, %u): %s", d->name,
			 d->port, strerror(rc));
		return -rc;
	}
	if (d->pattr.state != IBV_PORT_ACTIVE) {
		snprintf(err, len, "%s port %u is %s, not ACTIVE", d->name,
			 d->port, ibv_port_state_str(d->pattr.state));
		return -ENETDOWN;
	}
	return 0;
}

static int resolve_gid(const struct vt_params *p, struct vdev *d,
		       const struct vres_port *port, char *err, size_t len)
{
	char table[1024];
	size_t pos;
	int rc;

	if (p->gid_index >= 0)
		rc = vres_gid_by_index(port, (unsigned)p->gid_index, &pos);
	else
		rc = vres_gid_select(port, p->gid_sel, &pos);
	if (rc) {
		vres_gid_table_str(port, table, sizeof(table));
		if (p->gid_index >= 0)
			snprintf(err, len,
				 "%s port %u: no GID at index %d; "
				 "GIDs:\n%s",
				 d->name, d->port, p->gid_index, table);
		else
			snprintf(err, len,
				 "%s port %u: no GID matches '%s'%s; "
				 "selectors: v1 v2 ipv4 ipv6 v2-ipv4 v2-ipv6 "
				 "v1-ipv4 v1-ipv6 or an address; GIDs:\n%s",
				 d->name, d->port, p->gid_sel,
				 rc == -EINVAL ? " (not a selector)" : "",
				 table);
		return rc == -EINVAL ? -EINVAL : -ENOENT;
	}
	d->gid_index = port->gids[pos].index;
	d->gid_type = port->gids[pos].type;
	memcpy(d->gid.raw, port->gids[pos].gid, 16);
	return 0;
}

static int resolve_pkey(const struct vt_params *p, struct vdev *d,
			const struct vres_port *port, char *err, size_t len)
{
	char table[1024];
	unsigned idx = 0;
	int rc = 0;

	if (p->pkey_index >= 0) {
		idx = (unsigned)p->pkey_index;
		if (idx >= port->npkeys || !(port->pkeys[idx] & 0x7fff))
			rc = -ENOENT;
	} else if (p->pkey) {
		rc = vres_pkey_find(port, p->pkey, &idx);
	} else if (!port->npkeys) {
		rc = -ENOENT;
	}
	if (rc) {
		vres_pkey_table_str(port, table, sizeof(table));
		if (p->pkey_index >= 0)
			snprintf(err, len,
				 "%s port %u: no P_Key at index %d; "
				 "P_Keys:\n%s",
				 d->name, d->port, p->pkey_index, table);
		else
			snprintf(err, len,
				 "%s port %u: P_Key 0x%04x is not in "
				 "the table; P_Keys:\n%s",
				 d->name, d->port, p->pkey, table);
		return -ENOENT;
	}
	d->pkey_index = idx;
	d->pkey = port->pkeys[idx];
	return 0;
}

static int resolve_mtu_rd(const struct vt_params *p, struct vdev *d, char *err,
			  size_t len)
{
	unsigned max_init = (unsigned)d->dattr.max_qp_init_rd_atom;

	d->mtu = d->pattr.active_mtu;
	if (p->mtu) {
		if (veng_mtu_enum(p->mtu, &d->mtu) ||
		    d->mtu > d->pattr.max_mtu) {
			snprintf(err, len,
				 "--mtu %u: valid MTUs on %s port %u "
				 "are 256..%u (powers of two)",
				 p->mtu, d->name, d->port,
				 veng_mtu_bytes(d->pattr.max_mtu));
			return -EINVAL;
		}
		d->mtu_forced = true;
	}
	/* perftest's default: as many as the device allows. */
	d->max_rd_atomic = p->rd_atomic ? p->rd_atomic : max_init;
	if (d->max_rd_atomic > max_init)
		d->max_rd_atomic = max_init;
	if (d->max_rd_atomic > 255)
		d->max_rd_atomic = 255;
	d->max_dest_rd_atomic = (unsigned)d->dattr.max_qp_rd_atom;
	if (d->max_dest_rd_atomic > 255)
		d->max_dest_rd_atomic = 255;
	return 0;
}

int vdev_open(const struct vt_params *p, struct vdev **out, char *err,
	      size_t errlen)
{
	struct vres_port *port = NULL;
	struct vdev *d;
	int rc;

	d = calloc(1, sizeof(*d));
	port = calloc(1, sizeof(*port));
	if (!d || !port) {
		rc = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	rc = open_ctx(p, d, err, errlen);
	if (rc)
		goto fail;
	rc = query_port(p, d, err, errlen);
	if (rc)
		goto fail;
	rc = vres_port_read(p->sysfs_root, d->name, d->port, port);
	if (rc) {
		snprintf(err, errlen, "%s/class/infiniband/%s/ports/%u: %s",
			 p->sysfs_root, d->name, d->port, strerror(-rc));
		goto fail;
	}
	rc = resolve_gid(p, d, port, err, errlen);
	if (!rc)
		rc = resolve_pkey(p, d, port, err, errlen);
	if (!rc)
		rc = resolve_mtu_rd(p, d, err, errlen);
	if (rc)
		goto fail;
	free(port);
	*out = d;
	return 0;
fail:
	free(port);
	vdev_close(d);
	return rc;
}

void vdev_close(struct vdev *d)
{
	if (!d)
		return;
	if (d->ctx)
		ibv_close_device(d->ctx);
	free(d);
}

void vdev_endpoint(const struct vdev *d, struct ctrl_endpoint *ep)
{
	memset(ep, 0, sizeof(*ep));
	ep->lid = d->pattr.lid;
	memcpy(ep->gid, d->gid.raw, 16);
	ep->gid_type = (uint8_t)d->gid_type;
	ep->link_layer = d->pattr.link_layer;
	ep->gid_index = (uint8_t)d->gid_index;
	ep->pkey = (uint16_t)d->pkey;
	ep->pkey_index = (uint16_t)d->pkey_index;
	ep->mtu = (uint8_t)d->mtu;
	ep->mtu_forced = d->mtu_forced;
	ep->rd_atomic = (uint8_t)d->max_dest_rd_atomic;
}
