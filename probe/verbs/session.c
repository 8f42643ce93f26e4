// SPDX-License-Identifier: MIT
/*
 * Protocol helpers shared by the client and the responder: timed sends and
 * typed receives, HMAC signing of REQUEST and ACCEPT, the compatibility
 * checks that refuse a pairing up front, and result conversion.
 */
#include "session.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

uint64_t vsess_deadline(const struct vsess *s)
{
	return ctrl_now_ns() + (uint64_t)(s->step_s * 1e9);
}

int vsess_send(struct vsess *s, int len)
{
	if (len < 0)
		return len;
	if (s->version && len >= CTRL_HDR_LEN)
		ctrl_hdr_set_version(s->out, s->version);
	return ctrl_send(s->fd, s->out, (size_t)len, vsess_deadline(s),
			 s->stop);
}

int vsess_fail(struct vsess *s, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->res->error, sizeof(s->res->error), fmt, ap);
	va_end(ap);
	s->res->status = rc < 0 ? rc : -EPROTO;
	return s->res->status;
}

int vsess_expect(struct vsess *s, int type, uint64_t deadline_ns)
{
	struct ctrl_refuse ref;
	int rc;

	rc = ctrl_recv(s->fd, &s->h, s->in, deadline_ns, s->stop);
	if (rc == -EPROTONOSUPPORT)
		return vsess_fail(s, rc,
				  "peer speaks control protocol "
				  "version %u, this side speaks %u..%u",
				  s->h.version, CTRL_VERSION_MIN,
				  CTRL_VERSION_MAX);
	if (rc)
		return vsess_fail(s, rc, "waiting for %s: %s",
				  ctrl_type_name(type), strerror(-rc));
	if (s->h.type == CTRL_REFUSE) {
		if (ctrl_refuse_decode(s->in, s->h.len, &ref))
			return vsess_fail(s, -EBADMSG, "malformed REFUSE");
		s->res->peer_refused = true;
		return vsess_fail(s, ref.code, "peer refused: %s", ref.reason);
	}
	if (s->version && s->h.version != s->version)
		return vsess_fail(s, -EPROTO,
				  "%s in control protocol version %u, the "
				  "session speaks %u",
				  ctrl_type_name(s->h.type), s->h.version,
				  s->version);
	if (s->h.type != type)
		return vsess_fail(s, -EPROTO, "expected %s, got %s",
				  ctrl_type_name(type),
				  ctrl_type_name(s->h.type));
	return 0;
}

int vsess_sign(struct vsess *s, int len, const char *label, const uint8_t *na,
	       const uint8_t *nb)
{
	size_t plen;

	if (len < CTRL_HDR_LEN + CTRL_MAC_LEN)
		return len < 0 ? len : -EINVAL;
	plen = (size_t)len - CTRL_HDR_LEN - CTRL_MAC_LEN;
	memset(s->out + (len - CTRL_MAC_LEN), 0, CTRL_MAC_LEN);
	if (!s->secret)
		return len;
	if (ctrl_mac(s->secret, s->secret_len, label, na, nb,
		     s->out + CTRL_HDR_LEN, plen,
		     s->out + (len - CTRL_MAC_LEN)))
		return -EIO;
	return len;
}

int vsess_verify(struct vsess *s, size_t len, const char *label,
		 const uint8_t *na, const uint8_t *nb)
{
	uint8_t mac[CTRL_MAC_LEN];

	if (len < CTRL_MAC_LEN)
		return -EBADMSG;
	if (ctrl_mac(s->secret, s->secret_len, label, na, nb, s->in,
		     len - CTRL_MAC_LEN, mac))
		return -EIO;
	return ctrl_mac_check(mac, s->in + len - CTRL_MAC_LEN);
}

int vsess_agree(struct vsess *s, const struct ctrl_endpoint *mine,
		const struct ctrl_endpoint *peer, char *err, size_t len)
{
	int rc;

	if (mine->link_layer != peer->link_layer) {
		snprintf(err, len,
			 "link layer mismatch: %s here, %s at the "
			 "peer",
			 mine->link_layer == IBV_LINK_LAYER_ETHERNET
				 ? "Ethernet"
				 : "InfiniBand",
			 peer->link_layer == IBV_LINK_LAYER_ETHERNET
				 ? "Ethernet"
				 : "InfiniBand");
		return -EPROTO;
	}
	if (mine->link_layer == IBV_LINK_LAYER_ETHERNET &&
	    mine->gid_type != peer->gid_type) {
		snprintf(err, len,
			 "GID type mismatch: %s here (index %u), %s "
			 "at the peer (index %u); pick the same type with "
			 "--gid v1 or --gid v2 on both sides",
			 vt_gid_type_name(mine->gid_type), mine->gid_index,
			 vt_gid_type_name(peer->gid_type), peer->gid_index);
		return -EPROTO;
	}
	rc = vres_pkey_pair_check(mine->pkey, peer->pkey, err, len);
	if (rc)
		return rc;
	if ((mine->mtu_forced || peer->mtu_forced) && mine->mtu != peer->mtu) {
		snprintf(err, len, "MTU mismatch: %u here%s, %u at the peer%s",
			 veng_mtu_bytes(mine->mtu),
			 mine->mtu_forced ? " (--mtu)" : " (active)",
			 veng_mtu_bytes(peer->mtu),
			 peer->mtu_forced ? " (--mtu)" : " (active)");
		return -EPROTO;
	}
	s->mtu = mine->mtu < peer->mtu ? mine->mtu : peer->mtu;
	return 0;
}

void vsess_fill_used(struct vsess *s)
{
	struct vt_used *u = &s->res->used;
	struct vdev *d = s->dev;

	if (!d)
		return;
	ctrl_strlcpy(u->device, d->name, sizeof(u->device));
	u->ib_port = d->port;
	u->gid_index = d->gid_index;
	u->gid_type = d->gid_type;
	vres_gid_format(d->gid.raw, u->gid, sizeof(u->gid));
	u->pkey_index = d->pkey_index;
	u->pkey = d->pkey;
	u->mtu = veng_mtu_bytes(s->mtu);
	u->rd_atomic = s->rd;
	if (s->eng)
		u->inline_size = s->eng->cfg.inline_size;
	u->remote_gid_index = s->remote.gid_index;
	vres_gid_format(s->remote.gid, u->remote_gid, sizeof(u->remote_gid));
	u->remote_pkey = s->remote.pkey;
}

void vsess_run_init(struct vsess *s, enum vt_test test, double interval_s,
		    struct vwatch *w, struct vrun *r)
{
	const struct vt_used *u = &s->res->used;

	*r = (struct vrun){
		.e = s->eng,
		.remote = &s->remote,
		.test = test,
		.size = u->size,
		.iters = u->iters,
		.duration_s = u->duration_s,
		.margin_s = u->margin_s,
		.interval_s = interval_s,
		.cq_mod = u->cq_mod,
		.post_list = u->post_list,
		.watch = w,
		.use_inline = u->inline_size && u->size <= u->inline_size,
	};
}

static uint64_t ns(double s)
{
	return s > 0 ? (uint64_t)(s * 1e9 + 0.5) : 0;
}

void vsess_side_to_msg(const struct vt_side *s, struct ctrl_result *m)
{
	memset(m, 0, sizeof(*m));
	m->status = s->status;
	m->wc_status = (uint16_t)s->wc_status;
	m->bytes = s->bytes;
	m->msgs = s->msgs;
	m->elapsed_ns = ns(s->elapsed_s);
	m->cpu_ns = ns(s->cpu_s);
	m->bw_avg_Bps = (uint64_t)s->bw_avg_Bps;
	m->bw_peak_Bps = (uint64_t)s->bw_peak_Bps;
	m->bw_min_Bps = (uint64_t)s->bw_min_Bps;
	if (s->has_lat) {
		m->lat_n = s->lat.n;
		m->lat_ns[0] = ns(s->lat.min_s);
		m->lat_ns[1] = ns(s->lat.median_s);
		m->lat_ns[2] = ns(s->lat.mean_s);
		m->lat_ns[3] = ns(s->lat.p99_s);
		m->lat_ns[4] = ns(s->lat.p999_s);
		m->lat_ns[5] = ns(s->lat.max_s);
		m->lat_ns[6] = ns(s->lat.stdev_s);
	}
	ctrl_strlcpy(m->error, s->error, sizeof(m->error));
	for (char *c = m->error; *c; c++)
		if ((unsigned char)*c < 0x20 || (unsigned char)*c > 0x7e)
			*c = ' ';
}

void vsess_msg_to_side(const struct ctrl_result *m, struct vt_side *s)
{
	memset(s, 0, sizeof(*s));
	s->status = m->status;
	s->wc_status = m->wc_status;
	s->bytes = m->bytes;
	s->msgs = m->msgs;
	s->elapsed_s = (double)m->elapsed_ns / 1e9;
	s->cpu_s = (double)m->cpu_ns / 1e9;
	s->bw_avg_Bps = (double)m->bw_avg_Bps;
	s->bw_peak_Bps = (double)m->bw_peak_Bps;
	s->bw_min_Bps = (double)m->bw_min_Bps;
	if (s->elapsed_s > 0)
		s->msg_rate = (double)s->msgs / s->elapsed_s;
	if (m->lat_n) {
		s->has_lat = true;
		s->lat.n = m->lat_n;
		s->lat.min_s = (double)m->lat_ns[0] / 1e9;
		s->lat.median_s = (double)m->lat_ns[1] / 1e9;
		s->lat.mean_s = (double)m->lat_ns[2] / 1e9;
		s->lat.p99_s = (double)m->lat_ns[3] / 1e9;
		s->lat.p999_s = (double)m->lat_ns[4] / 1e9;
		s->lat.max_s = (double)m->lat_ns[5] / 1e9;
		s->lat.stdev_s = (double)m->lat_ns[6] / 1e9;
	}
	ctrl_strlcpy(s->error, m->error, sizeof(s->error));
}

void vsess_ctr_to_msg(const struct vt_portctr *c, struct ctrl_counters *m)
{
	memset(m, 0, sizeof(*m));
	if (c->has_bytes) {
		m->has |= CTRL_CTR_BYTES;
		m->xmit_bytes = c->xmit_bytes;
		m->rcv_bytes = c->rcv_bytes;
	}
	if (c->has_pkts) {
		m->has |= CTRL_CTR_PKTS;
		m->xmit_pkts = c->xmit_pkts;
		m->rcv_pkts = c->rcv_pkts;
	}
	if (c->has_wait) {
		m->has |= CTRL_CTR_WAIT;
		m->xmit_wait = c->xmit_wait;
	}
	if (c->has_cnp) {
		m->has |= CTRL_CTR_CNP;
		m->cnp = c->cnp;
	}
}

void vsess_msg_to_ctr(const struct ctrl_counters *m, struct vt_portctr *c)
{
	*c = (struct vt_portctr){
		.has_bytes = m->has & CTRL_CTR_BYTES,
		.xmit_bytes = m->xmit_bytes,
		.rcv_bytes = m->rcv_bytes,
		.has_pkts = m->has & CTRL_CTR_PKTS,
		.xmit_pkts = m->xmit_pkts,
		.rcv_pkts = m->rcv_pkts,
		.has_wait = m->has & CTRL_CTR_WAIT,
		.xmit_wait = m->xmit_wait,
		.has_cnp = m->has & CTRL_CTR_CNP,
		.cnp = m->cnp,
	};
}

static uint64_t ctr_rise(uint64_t before, uint64_t after)
{
	return after >= before ? after - before : 0; /* a reset */
}

void vt_portctr_delta(const struct vt_portctr *b, const struct vt_portctr *a,
		      struct vt_portctr *d)
{
	*d = (struct vt_portctr){
		.has_bytes = b->has_bytes && a->has_bytes,
		.has_pkts = b->has_pkts && a->has_pkts,
		.has_wait = b->has_wait && a->has_wait,
		.has_cnp = b->has_cnp && a->has_cnp,
	};
	if (d->has_bytes) {
		d->xmit_bytes = ctr_rise(b->xmit_bytes, a->xmit_bytes);
		d->rcv_bytes = ctr_rise(b->rcv_bytes, a->rcv_bytes);
	}
	if (d->has_pkts) {
		d->xmit_pkts = ctr_rise(b->xmit_pkts, a->xmit_pkts);
		d->rcv_pkts = ctr_rise(b->rcv_pkts, a->rcv_pkts);
	}
	if (d->has_wait)
		d->xmit_wait = ctr_rise(b->xmit_wait, a->xmit_wait);
	if (d->has_cnp)
		d->cnp = ctr_rise(b->cnp, a->cnp);
}

void vsess_release(struct vsess *s)
{
	veng_free(s->eng);
	s->eng = NULL;
	vdev_close(s->dev);
	s->dev = NULL;
}

int vsess_prepost(struct vsess *s)
{
	unsigned i, k;
	int rc;

	for (i = 0; i < s->eng->cfg.qps; i++) {
		for (k = 0; k < s->eng->cfg.rx_depth; k++) {
			rc = veng_post_recv(s->eng, i);
			if (rc)
				return rc;
		}
	}
	return 0;
}
