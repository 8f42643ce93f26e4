// SPDX-License-Identifier: MIT
/*
 * The client side of a verbs test (vt_run): open and resolve the local
 * port, connect to the responder, authenticate, send the request, check
 * the responder's endpoint, build and connect the QPs, run the measured
 * loop, then trade results. Every step is timed; every failure lands in
 * the result with a message.
 */
#include "session.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void request_from(const struct vt_params *p, const struct vt_used *u,
			 unsigned version, struct ctrl_request *m)
{
	memset(m, 0, sizeof(*m));
	m->version = (uint16_t)version;
	ctrl_strlcpy(m->device, p->peer_device, sizeof(m->device));
	m->ib_port = (uint8_t)p->peer_ib_port;
	m->test = (uint16_t)p->test;
	m->flags = (uint16_t)((u->bidir ? CTRL_F_BIDIR : 0) |
			      (u->verify ? CTRL_F_VERIFY : 0));
	m->qps = (uint16_t)u->qps;
	m->size = u->size;
	m->tx_depth = u->tx_depth;
	m->iters = u->duration_s > 0 ? 0 : u->iters;
	m->duration_ms = (uint32_t)(u->duration_s * 1000 + 0.5);
	m->inline_size = u->inline_size;
	m->sl = (uint8_t)p->sl;
	m->tclass = (uint8_t)p->tclass;
	if (version >= CTRL_VERSION_TICKET && p->ticket) {
		const struct ticket_claims *c = &p->ticket->c;

		ctrl_strlcpy(m->ticket.plan_id, c->plan_id,
			     sizeof(m->ticket.plan_id));
		ctrl_strlcpy(m->ticket.host, c->initiator,
			     sizeof(m->ticket.host));
		ctrl_strlcpy(m->ticket.device, c->initiator_device,
			     sizeof(m->ticket.device));
		m->ticket.ib_port = (uint8_t)c->initiator_port;
		m->ticket.period = c->period;
		m->ticket.not_before_ms = c->not_before_ms;
		m->ticket.deadline_ms = c->deadline_ms;
	}
}

/* HELLO, CHALLENGE, and the decision whether both sides agree on auth. */
static int greet(struct vsess *s)
{
	struct ctrl_hello hello;
	struct ctrl_challenge ch;
	int rc;

	rc = ctrl_random(s->nonce_c, CTRL_NONCE_LEN);
	if (rc)
		return vsess_fail(s, rc, "getrandom: %s", strerror(-rc));
	memcpy(hello.nonce, s->nonce_c, CTRL_NONCE_LEN);
	rc = vsess_send(s, ctrl_hello_encode(&hello, s->out, sizeof(s->out)));
	if (rc)
		return vsess_fail(s, rc, "sending HELLO: %s", strerror(-rc));
	rc = vsess_expect(s, CTRL_CHALLENGE, vsess_deadline(s));
	if (rc)
		return rc;
	if (ctrl_challenge_decode(s->in, s->h.len, &ch))
		return vsess_fail(s, -EBADMSG, "malformed CHALLENGE");
	memcpy(s->nonce_s, ch.nonce, CTRL_NONCE_LEN);
	/* A ticket authenticates both ways, whatever secret the peer has. */
	if (s->ticketed)
		return 0;
	if (ch.auth_required && !s->secret)
		return vsess_fail(s, -EACCES,
				  "the responder requires a shared "
				  "secret (--secret-file)");
	/* With a secret we insist the responder proves it knows it too. */
	if (!ch.auth_required && s->secret)
		return vsess_fail(s, -EACCES,
				  "the responder does not use a "
				  "shared secret but one was given");
	return 0;
}

static int request(struct vsess *s, const struct vt_params *p,
		   const struct vt_used *u)
{
	struct ctrl_request req;
	struct ctrl_accept acc;
	char why[CTRL_REASON_MAX + 1];
	int rc, len;

	request_from(p, u, s->version, &req);
	vdev_endpoint(s->dev, &req.ep);
	s->local = req.ep;
	len = ctrl_request_encode(&req, s->out, sizeof(s->out));
	if (len == -EINVAL && s->ticketed)
		return vsess_fail(s, len,
				  "cannot send the ticket of plan '%.64s': "
				  "names of [A-Za-z0-9_.-], a slot that ends "
				  "after it starts",
				  p->ticket->c.plan_id);
	if (len == -EINVAL)
		return vsess_fail(s, len,
				  "cannot ask the responder for device "
				  "'%.*s' port %u: a device name is at most "
				  "%d of [A-Za-z0-9_.-], a port 0..254",
				  VT_NAME_MAX, p->peer_device, p->peer_ib_port,
				  CTRL_DEV_MAX);
	len = vsess_sign(s, len, VSESS_LABEL_REQ, s->nonce_s, s->nonce_c);
	rc = vsess_send(s, len);
	if (rc)
		return vsess_fail(s, rc, "sending REQUEST: %s", strerror(-rc));
	rc = vsess_expect(s, CTRL_ACCEPT, vsess_deadline(s));
	if (rc)
		return rc;
	if (ctrl_accept_decode(s->in, s->h.len, &acc) || acc.ep.nqps != u->qps)
		return vsess_fail(s, -EBADMSG, "malformed ACCEPT");
	if (s->secret &&
	    vsess_verify(s, s->h.len, VSESS_LABEL_ACC, s->nonce_c, s->nonce_s))
		return vsess_fail(s, -EACCES,
				  "the responder's ACCEPT does "
				  "not carry a valid MAC for our %s",
				  s->ticketed ? "ticket (it does not hold "
						"the collector's key)"
					      : "secret");
	s->remote = acc.ep;
	rc = vsess_agree(s, &s->local, &s->remote, why, sizeof(why));
	if (rc) {
		ctrl_send_refuse(s->fd, s->version, rc, why, vsess_deadline(s));
		return vsess_fail(s, rc, "%s", why);
	}
	return 0;
}

/* The DLID the plan chose, when the path toward the peer took it. */
static unsigned chosen_dlid(const struct vsess *s, const struct vt_params *p)
{
	struct veng_path vp = {
		.ethernet = s->dev->pattr.link_layer == IBV_LINK_LAYER_ETHERNET,
		.dlid = p->dlid,
	};

	return p->dlid && veng_dlid(&vp, &s->remote) == p->dlid ? p->dlid : 0;
}

static int build(struct vsess *s, const struct vt_params *p, struct vt_used *u)
{
	struct veng_cfg cfg = {
		.qps = u->qps,
		.size = u->size,
		.tx_depth = u->tx_depth,
		.inline_size = u->inline_size,
	};
	char why[VT_ERR_MAX];
	int rc;

	cfg.rx_depth = veng_rx_depth(p->test, u, true);
	cfg.ud = p->test == VT_UD_SEND_LAT;
	s->rd = s->dev->max_rd_atomic < s->remote.rd_atomic
			? s->dev->max_rd_atomic
			: s->remote.rd_atomic;
	cfg.rd_atomic = s->rd;
	cfg.dlid = p->dlid;
	rc = veng_new(s->dev, &cfg, &s->eng, why, sizeof(why));
	if (!rc)
		rc = veng_connect(s->eng, &s->remote, s->mtu, p->sl, p->tclass,
				  s->rd, s->dev->max_dest_rd_atomic, why,
				  sizeof(why));
	if (!rc && cfg.rx_depth)
		rc = vsess_prepost(s);
	if (rc) {
		ctrl_send_refuse(s->fd, s->version, rc, why, vsess_deadline(s));
		return vsess_fail(s, rc, "%s", why);
	}
	u->inline_size = s->eng->cfg.inline_size;
	u->dlid = chosen_dlid(s, p);
	if (u->verify && p->test != VT_READ_BW)
		veng_fill(s->eng, false);
	veng_endpoint(s->eng, &s->local);
	rc = vsess_send(s,
			ctrl_connect_encode(&s->local, s->out, sizeof(s->out)));
	if (rc)
		return vsess_fail(s, rc, "sending CONNECT: %s", strerror(-rc));
	return vsess_expect(s, CTRL_READY, vsess_deadline(s));
}

static int measure(struct vsess *s, const struct vt_params *p,
		   const struct vt_used *u)
{
	double budget =
		u->duration_s > 0 ? u->duration_s + 2 * p->timeout_s : 3600;
	struct vwatch w = {
		.fd = s->fd,
		.deadline_ns = ctrl_now_ns() + (uint64_t)(budget * 1e9),
		.stall_ns = (uint64_t)(p->timeout_s * 1e9),
		.stop = p->stop,
	};
	struct vrun r;

	vsess_run_init(s, p->test, p->interval_s, &w, &r);
	r.do_send = true;
	/* Bidirectional SEND: the responder's stream lands here. */
	r.do_recv = u->bidir && p->test == VT_SEND_BW;
	if (vt_test_is_lat(p->test)) {
		int rc = vlat_run(&r, true, &s->res->local);

		/* Duration mode: the rounds actually done. */
		if (u->duration_s > 0)
			s->res->used.iters = (uint32_t)s->res->local.msgs;
		return rc;
	}
	return vbw_run(&r, &s->res->local);
}

/* DONE with our view, RESULT with theirs. */
static int trade(struct vsess *s)
{
	struct ctrl_result m;
	int rc;

	vsess_side_to_msg(&s->res->local, &m);
	m.version = (uint16_t)s->version;
	rc = vsess_send(
		s, ctrl_result_encode(CTRL_DONE, &m, s->out, sizeof(s->out)));
	if (rc)
		return rc;
	rc = ctrl_recv(s->fd, &s->h, s->in, vsess_deadline(s), s->stop);
	if (rc || s->h.type != CTRL_RESULT || s->h.version != s->version ||
	    ctrl_result_decode(s->in, s->h.len, s->version, &m))
		return rc ? rc : -EBADMSG;
	vsess_msg_to_side(&m, &s->res->remote);
	s->res->remote_valid = true;
	if (m.ctr.has) {
		vsess_msg_to_ctr(&m.ctr, &s->res->remote_ctr);
		s->res->has_remote_ctr = true;
	}
	return 0;
}

/*
 * After a failure, say so if the port went down under the test. The port
 * state can trail the failed completion (rxe marks the port down after
 * its QPs fail, and later still on a loaded machine: seen over a second
 * in the TCG lab), so look for up to three seconds; only on this failure
 * path.
 */
static void note_port_state(struct vsess *s)
{
	struct vt_side *l = &s->res->local;
	size_t n = strlen(l->error);
	struct ibv_port_attr pa;
	int i;

	for (i = 0; i < 30; i++) {
		if (ibv_query_port(s->dev->ctx, (uint8_t)s->dev->port, &pa))
			return;
		if (pa.state != IBV_PORT_ACTIVE)
			break;
		usleep(100000);
	}
	if (pa.state == IBV_PORT_ACTIVE || n + 1 >= sizeof(l->error))
		return;
	snprintf(l->error + n, sizeof(l->error) - n, "; %s port %u is now %s",
		 s->dev->name, s->dev->port, ibv_port_state_str(pa.state));
}

static int session(struct vsess *s, const struct vt_params *p, const char *host,
		   const char *port)
{
	struct vt_result *res = s->res;
	char err[VT_ERR_MAX];
	int rc;

	rc = vdev_open(p, &s->dev, err, sizeof(err));
	if (rc)
		return vsess_fail(s, rc, "%s", err);
	rc = ctrl_connect(host, port, vsess_deadline(s), s->stop, &s->fd);
	if (rc)
		return vsess_fail(s, rc,
				  "cannot reach responder %s port %s: "
				  "%s",
				  host, port, strerror(-rc));
	rc = greet(s);
	if (!rc)
		rc = request(s, p, &res->used);
	if (!rc)
		rc = build(s, p, &res->used);
	vsess_fill_used(s);
	if (rc)
		return rc;
	rc = measure(s, p, &res->used);
	/* READ lands in our send half: check it against the pattern. */
	if (!rc && res->used.verify && p->test == VT_READ_BW) {
		rc = veng_check(s->eng, false, res->local.error,
				sizeof(res->local.error));
		res->local.status = rc;
	}
	/* Aborted: no waiting on the port or the peer. */
	if (rc && s->stop && *s->stop)
		return vsess_fail(s, -ECANCELED, "aborted");
	if (rc)
		note_port_state(s);
	/* Trade views even after a failure: the peer's may say why. */
	if (trade(s) && !rc)
		return vsess_fail(s, -EPROTO, "no RESULT from the responder");
	if (rc)
		return vsess_fail(s, rc, "%s", res->local.error);
	if (res->remote.status)
		return vsess_fail(s, res->remote.status, "responder: %s",
				  res->remote.error);
	return 0;
}

int vt_run(const struct vt_params *p, const char *host, const char *port,
	   struct vt_result *res)
{
	struct vsess s = {
		.fd = -1,
		.version = CTRL_VERSION,
		.step_s = p->timeout_s,
		.secret = p->secret,
		.secret_len = p->secret_len,
		.stop = p->stop,
		.res = res,
	};
	char err[VT_ERR_MAX];
	int rc;

	memset(res, 0, sizeof(*res));
	res->test = p->test;
	if (p->ticket) {
		s.version = CTRL_VERSION_TICKET;
		s.secret = p->ticket->key;
		s.secret_len = sizeof(p->ticket->key);
		s.ticketed = true;
	}
	rc = vt_params_check(p, err, sizeof(err));
	if (rc)
		return vsess_fail(&s, rc, "%s", err);
	vt_params_apply(p, &res->used);
	if (p->stop && *p->stop)
		rc = -ECANCELED;
	else
		rc = session(&s, p, host, port ? port : VT_DEFAULT_PORT);
	/*
	 * However far it got, a stopped test reads the same (a peer's
	 * refusal can carry -ECANCELED too: a paused responder's does).
	 */
	if (rc && p->stop && *p->stop)
		rc = vsess_fail(&s, -ECANCELED, "aborted");
	vsess_release(&s);
	if (s.fd >= 0)
		close(s.fd);
	res->status = rc;
	return rc;
}
