// SPDX-License-Identifier: MIT
/*
 * The responder: answer one client per connection (vt_serve_conn) and
 * accept clients with a bound on concurrent tests (vt_serve_loop). The
 * request is authenticated and checked against the limits before any
 * memory is registered, so a stranger can neither pin memory here nor aim
 * traffic through us; every wait has a deadline and a vanished client
 * costs an error result and freed resources.
 */
#include "session.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/crypto.h>

/* The hooks of one client's session and what they need to remember. */
struct serve_hk {
	const struct vt_serve_hooks *h;
	const char *sysfs_root; /* for counters without a hook */
	void *sess;
	bool admitted;
	bool has_before;
	struct vt_portctr before;
};

/* The limits, checked on the decoded request alone. */
static int check_limits(const struct vt_limits *l, const struct ctrl_request *q,
			char *why, size_t len)
{
	if (!vt_test_name(q->test)) {
		snprintf(why, len, "unknown test %u", q->test);
		return -EINVAL;
	}
	if (q->size < 1 || q->size > l->max_size) {
		snprintf(why, len,
			 "message size %u outside 1..%u allowed "
			 "here",
			 q->size, l->max_size);
		return -E2BIG;
	}
	if (q->qps > l->max_qps) {
		snprintf(why, len, "%u QPs asked, at most %u allowed here",
			 q->qps, l->max_qps);
		return -E2BIG;
	}
	if (q->duration_ms > l->max_duration_s * 1000) {
		snprintf(why, len,
			 "duration %.1f s asked, at most %.1f s "
			 "allowed here",
			 q->duration_ms / 1000.0, l->max_duration_s);
		return -E2BIG;
	}
	if (q->iters > l->max_iters) {
		snprintf(why, len,
			 "%u iterations asked, at most %u allowed "
			 "here",
			 q->iters, l->max_iters);
		return -E2BIG;
	}
	if (q->tx_depth > 16384 || q->inline_size > 4096) {
		snprintf(why, len, "tx depth or inline size out of range");
		return -E2BIG;
	}
	return 0;
}

/* The client's request as parameters, to derive the same run shape. */
static void params_from(const struct ctrl_request *q, struct vt_params *p)
{
	vt_params_default(p);
	p->test = (enum vt_test)q->test;
	p->qps = q->qps;
	p->size = q->size;
	p->tx_depth = q->tx_depth;
	p->iters = q->iters;
	p->duration_s = q->duration_ms / 1000.0;
	p->inline_size = (int)q->inline_size;
	p->bidir = q->flags & CTRL_F_BIDIR;
	p->verify = q->flags & CTRL_F_VERIFY;
	p->sl = q->sl;
	p->tclass = q->tclass;
}

/*
 * REFUSE the client; @kind goes to res->refused (vtest.h) for a refusal
 * before admission, NULL after it (the test itself failed).
 */
static int refuse(struct vsess *s, const char *kind, int rc, const char *why)
{
	ctrl_send_refuse(s->fd, s->version ? s->version : CTRL_VERSION_MIN, rc,
			 why, vsess_deadline(s));
	s->res->refused = kind;
	return vsess_fail(s, rc, "refused the client: %s", why);
}

/*
 * Without an admission hook: serve the configured port, or the one asked
 * for when none is configured; refuse any other.
 */
static int admit_default(const struct vt_serve_ask *ask, struct vt_params *dev,
			 char *why, size_t len)
{
	if (ask->device[0] && dev->device[0] &&
	    strcmp(ask->device, dev->device)) {
		snprintf(why, len,
			 "no device %s here: this responder serves %s "
			 "port %u",
			 ask->device, dev->device, dev->ib_port);
		return -ENODEV;
	}
	if (ask->ib_port && ask->ib_port != dev->ib_port) {
		snprintf(why, len,
			 "no port %u here: this responder serves port %u",
			 ask->ib_port, dev->ib_port);
		return -ENODEV;
	}
	if (ask->device[0])
		ctrl_strlcpy(dev->device, ask->device, sizeof(dev->device));
	return 0;
}

/* The asked port past the limits: may it run here, and on which port? */
static int admit(struct vsess *s, struct vt_serve_cfg *cfg, struct serve_hk *hk,
		 const struct ctrl_request *q)
{
	struct vt_serve_ask ask = {.version = s->version,
				   .ib_port = q->ib_port,
				   .ticket = s->ticketed ? &s->claims : NULL};
	char why[CTRL_REASON_MAX + 1] = "";
	struct vt_params p;
	int rc;

	params_from(q, &p);
	ask.params = &p;
	ask.auth = s->ticketed ? VT_AUTH_TICKET
		   : s->secret ? VT_AUTH_SECRET
			       : VT_AUTH_NONE;
	ctrl_strlcpy(ask.device, q->device, sizeof(ask.device));
	if (hk->h->admit)
		rc = hk->h->admit(hk->sess, &ask, &cfg->dev, why, sizeof(why));
	else
		rc = admit_default(&ask, &cfg->dev, why, sizeof(why));
	if (rc)
		return refuse(s, "admit", rc < 0 ? rc : -EPERM,
			      why[0] ? why : "refused");
	hk->admitted = true;
	return 0;
}

/* The claims of a v3 REQUEST, as common/ticket.h minted them. */
static void claims_from(const struct ctrl_request *q, struct ticket_claims *c)
{
	memset(c, 0, sizeof(*c));
	ctrl_strlcpy(c->plan_id, q->ticket.plan_id, sizeof(c->plan_id));
	ctrl_strlcpy(c->initiator, q->ticket.host, sizeof(c->initiator));
	ctrl_strlcpy(c->initiator_device, q->ticket.device,
		     sizeof(c->initiator_device));
	c->initiator_port = q->ticket.ib_port;
	ctrl_strlcpy(c->responder_device, q->device,
		     sizeof(c->responder_device));
	c->responder_port = q->ib_port;
	c->period = q->ticket.period;
	c->not_before_ms = q->ticket.not_before_ms;
	c->deadline_ms = q->ticket.deadline_ms;
}

/*
 * A v3 REQUEST: the ticket hook gives the ticket for its claims, which
 * becomes the MAC key of this session (instead of any shared secret).
 */
static int ticket(struct vsess *s, struct serve_hk *hk,
		  const struct ctrl_request *q)
{
	struct vt_serve_ask ask = {.version = s->version,
				   .ib_port = q->ib_port,
				   .ticket = &s->claims,
				   .auth = VT_AUTH_NONE};
	char why[CTRL_REASON_MAX + 1] = "";
	int rc;

	claims_from(q, &s->claims);
	ctrl_strlcpy(ask.device, q->device, sizeof(ask.device));
	if (!hk->h->ticket)
		return refuse(s, "ticket", -EACCES,
			      "this responder takes no tickets (no collector "
			      "plan): control protocol 3 is for planned tests");
	rc = hk->h->ticket(hk->sess, &ask, s->ticket_key, why, sizeof(why));
	if (rc)
		return refuse(s, "ticket", rc < 0 ? rc : -EACCES,
			      why[0] ? why : "ticket refused");
	s->secret = s->ticket_key;
	s->secret_len = sizeof(s->ticket_key);
	s->ticketed = true;
	return 0;
}

static int handshake(struct vsess *s, struct vt_serve_cfg *cfg,
		     struct serve_hk *hk, struct ctrl_request *q)
{
	struct ctrl_hello hello;
	struct ctrl_challenge ch = {.auth_required = s->secret != NULL};
	char why[CTRL_REASON_MAX + 1];
	int rc;

	rc = vsess_expect(s, CTRL_HELLO, vsess_deadline(s));
	if (rc == -EPROTONOSUPPORT) {
		snprintf(why, sizeof(why),
			 "unsupported control protocol "
			 "version %u; this responder speaks %u..%u",
			 s->h.version, (unsigned)CTRL_VERSION_MIN,
			 (unsigned)CTRL_VERSION_MAX);
		return refuse(s, "protocol", rc, why);
	}
	if (rc) {
		s->res->refused = "protocol";
		return rc;
	}
	s->version = s->h.version; /* answer in the client's version */
	if (ctrl_hello_decode(s->in, s->h.len, &hello))
		return refuse(s, "protocol", -EBADMSG, "malformed HELLO");
	memcpy(s->nonce_c, hello.nonce, CTRL_NONCE_LEN);
	rc = ctrl_random(s->nonce_s, CTRL_NONCE_LEN);
	if (rc)
		return vsess_fail(s, rc, "getrandom: %s", strerror(-rc));
	memcpy(ch.nonce, s->nonce_s, CTRL_NONCE_LEN);
	rc = vsess_send(s, ctrl_challenge_encode(&ch, s->out, sizeof(s->out)));
	if (rc)
		return vsess_fail(s, rc, "sending CHALLENGE: %s",
				  strerror(-rc));
	rc = vsess_expect(s, CTRL_REQUEST, vsess_deadline(s));
	if (rc) {
		s->res->refused = "protocol";
		return rc;
	}
	if (ctrl_request_decode(s->in, s->h.len, s->version, q))
		return refuse(s, "protocol", -EBADMSG, "malformed REQUEST");
	if (s->version >= CTRL_VERSION_TICKET && (rc = ticket(s, hk, q)))
		return rc;
	if (s->secret &&
	    vsess_verify(s, s->h.len, VSESS_LABEL_REQ, s->nonce_s, s->nonce_c))
		return refuse(s, "auth", -EACCES,
			      s->ticketed ? "authentication failed: the "
					    "REQUEST's MAC does not match its "
					    "ticket's claims"
					  : "authentication failed");
	rc = check_limits(&cfg->limits, q, why, sizeof(why));
	if (rc)
		return refuse(s, "limits", rc, why);
	return admit(s, cfg, hk, q);
}

static int setup(struct vsess *s, const struct vt_serve_cfg *cfg,
		 const struct ctrl_request *q, struct vt_params *p)
{
	struct ctrl_accept acc;
	char why[VT_ERR_MAX];
	struct veng_cfg ec;
	struct vt_used *u = &s->res->used;
	int rc, len;

	rc = vdev_open(&cfg->dev, &s->dev, why, sizeof(why));
	if (rc) {
		/* The peer learns no more; our own log says what and why. */
		ctrl_send_refuse(s->fd, s->version, rc,
				 "the responder's device is not usable",
				 vsess_deadline(s));
		return vsess_fail(s, rc,
				  "refused the client: device '%s' port %u "
				  "is not usable: %s",
				  cfg->dev.device, cfg->dev.ib_port, why);
	}
	vdev_endpoint(s->dev, &s->local);
	s->remote = q->ep;
	rc = vsess_agree(s, &s->local, &q->ep, why, sizeof(why));
	if (rc)
		return refuse(s, NULL, rc, why);
	params_from(q, p);
	vt_params_apply(p, u);
	s->test = p->test;
	ec = (struct veng_cfg){.qps = u->qps,
			       .size = u->size,
			       .tx_depth = u->tx_depth,
			       .inline_size = u->inline_size};
	ec.rx_depth = veng_rx_depth(p->test, u, false);
	ec.ud = p->test == VT_UD_SEND_LAT;
	s->rd = s->dev->max_rd_atomic < q->ep.rd_atomic ? s->dev->max_rd_atomic
							: q->ep.rd_atomic;
	rc = veng_new(s->dev, &ec, &s->eng, why, sizeof(why));
	if (rc)
		return refuse(s, NULL, rc, why);
	if (p->verify && p->test == VT_READ_BW)
		veng_fill(s->eng, true);
	s->check_rx = p->verify && p->test != VT_READ_BW;
	if (ec.rx_depth && (rc = vsess_prepost(s)))
		return refuse(s, NULL, rc, "cannot post receives");
	memset(&acc, 0, sizeof(acc));
	veng_endpoint(s->eng, &acc.ep);
	s->local = acc.ep;
	len = ctrl_accept_encode(&acc, s->out, sizeof(s->out));
	len = vsess_sign(s, len, VSESS_LABEL_ACC, s->nonce_c, s->nonce_s);
	rc = vsess_send(s, len);
	if (rc)
		return vsess_fail(s, rc, "sending ACCEPT: %s", strerror(-rc));
	return 0;
}

static int connect_qps(struct vsess *s, const struct vt_params *p)
{
	char why[VT_ERR_MAX];
	int rc;

	rc = vsess_expect(s, CTRL_CONNECT, vsess_deadline(s));
	if (rc)
		return rc;
	if (ctrl_connect_decode(s->in, s->h.len, &s->remote))
		return refuse(s, NULL, -EBADMSG, "malformed CONNECT");
	rc = veng_connect(s->eng, &s->remote, s->mtu, p->sl, p->tclass, s->rd,
			  s->dev->max_dest_rd_atomic, why, sizeof(why));
	if (rc)
		return refuse(s, NULL, rc, why);
	return vsess_send(
		s, ctrl_empty_encode(CTRL_READY, s->out, sizeof(s->out)));
}

static int role(struct vsess *s, const struct vt_serve_cfg *cfg,
		const struct vt_params *p, struct vwatch *w)
{
	const struct vt_used *u = &s->res->used;
	struct vrun r;

	vsess_run_init(s, p->test, cfg->dev.interval_s, w, &r);
	if (vt_test_answers(p->test))
		return vlat_run(&r, false, &s->res->local);
	if (u->bidir || p->test == VT_SEND_BW) {
		r.do_send = u->bidir;
		r.do_recv = p->test == VT_SEND_BW;
		r.peer_may_end = u->bidir;
		return vbw_run(&r, &s->res->local);
	}
	/* READ, WRITE and atomics need nothing from us but the memory. */
	return 0;
}

/* The port's counters, once before the test and once after. */
static void counters(struct vsess *s, struct serve_hk *hk, bool after)
{
	struct vt_portctr now;

	/* Only v2 carries them. */
	if (!s->dev || s->version < 2 || (after && !hk->has_before))
		return;
	if (hk->h->counters ? hk->h->counters(hk->sess, s->dev->name,
					      s->dev->port, &now)
			    : vt_portctr_read(hk->sysfs_root, s->dev->name,
					      s->dev->port, &now))
		return;
	if (!after) {
		hk->before = now;
		hk->has_before = true;
		return;
	}
	vt_portctr_delta(&hk->before, &now, &s->res->remote_ctr);
	s->res->has_remote_ctr = true;
}

/* DONE from the client, RESULT back (with our counters in v2). */
static int trade(struct vsess *s, struct serve_hk *hk, uint64_t deadline_ns)
{
	struct ctrl_result m;
	int rc;

	rc = vsess_expect(s, CTRL_DONE, deadline_ns);
	counters(s, hk, true);
	if (rc)
		return rc;
	if (ctrl_result_decode(s->in, s->h.len, s->version, &m))
		return vsess_fail(s, -EBADMSG, "malformed DONE");
	vsess_msg_to_side(&m, &s->res->remote);
	s->res->remote_valid = true;
	/* Everything the client wrote or sent has landed by its DONE. */
	if (s->check_rx && !m.status && !s->res->local.status) {
		s->res->local.status =
			veng_check(s->eng, true, s->res->local.error,
				   sizeof(s->res->local.error));
	}
	vsess_side_to_msg(&s->res->local, &m);
	m.version = (uint16_t)s->version;
	if (s->res->has_remote_ctr)
		vsess_ctr_to_msg(&s->res->remote_ctr, &m.ctr);
	return vsess_send(
		s, ctrl_result_encode(CTRL_RESULT, &m, s->out, sizeof(s->out)));
}

static int serve_session(struct vsess *s, struct vt_serve_cfg *cfg,
			 struct serve_hk *hk)
{
	struct ctrl_request q;
	struct vt_params p;
	struct vwatch w = {.fd = s->fd, .stop = cfg->stop};
	double budget;
	int rc;

	rc = handshake(s, cfg, hk, &q);
	if (!rc)
		rc = setup(s, cfg, &q, &p);
	if (!rc)
		rc = connect_qps(s, &p);
	vsess_fill_used(s);
	if (rc)
		return rc;
	budget =
		(p.duration_s > 0 ? p.duration_s : cfg->limits.max_duration_s) +
		2 * cfg->dev.timeout_s;
	w.deadline_ns = ctrl_now_ns() + (uint64_t)(budget * 1e9);
	w.stall_ns = (uint64_t)(cfg->dev.timeout_s * 1e9);
	counters(s, hk, false);
	rc = role(s, cfg, &p, &w);
	if (trade(s, hk, rc ? vsess_deadline(s) : w.deadline_ns) && !rc)
		return s->res->status;
	if (rc)
		return vsess_fail(s, rc, "%s", s->res->local.error);
	return 0;
}

int vt_serve_conn(const struct vt_serve_cfg *cfg, int fd, struct vt_result *res)
{
	struct vt_serve_cfg c = *cfg; /* this client's, for hooks.open */
	struct serve_hk hk = {.h = &cfg->hooks, .sess = cfg->hooks.arg};
	struct vsess s = {.fd = fd, .res = res};
	int rc;

	memset(res, 0, sizeof(*res));
	if (hk.h->open) {
		rc = hk.h->open(hk.h->arg, &c, &hk.sess);
		if (rc) {
			res->status = rc;
			snprintf(res->error, sizeof(res->error),
				 "the responder could not take the client: "
				 "%s",
				 strerror(-rc));
			return rc;
		}
	}
	hk.sysfs_root = c.dev.sysfs_root;
	s.step_s = c.dev.timeout_s;
	s.stop = c.stop; /* a stopping responder waits on no client */
	s.secret = c.dev.secret;
	s.secret_len = c.dev.secret_len;
	rc = serve_session(&s, &c, &hk);
	res->test = s.test;
	vsess_release(&s);
	explicit_bzero(s.ticket_key, sizeof(s.ticket_key));
	res->status = rc;
	if (hk.h->close)
		hk.h->close(hk.sess, hk.admitted, res);
	return rc;
}

struct serve_shared {
	const struct vt_serve_cfg *cfg;
	void (*on_result)(const struct vt_result *res, void *arg);
	void *arg;
	pthread_mutex_t lock;
	pthread_cond_t idle;
	unsigned active;
};

struct serve_job {
	struct serve_shared *sh;
	int fd;
};

static void *serve_thread(void *arg)
{
	struct serve_job *job = arg;
	struct serve_shared *sh = job->sh;
	struct vt_result *res = calloc(1, sizeof(*res));

	if (res) {
		vt_serve_conn(sh->cfg, job->fd, res);
		if (sh->on_result)
			sh->on_result(res, sh->arg);
	}
	close(job->fd);
	free(res);
	free(job);
	/*
	 * Free OpenSSL's per-thread state (HMAC) now: its thread-exit
	 * destructor may not have run when the loop, having seen the count
	 * drop, returns and the process exits.
	 */
	OPENSSL_thread_stop();
	pthread_mutex_lock(&sh->lock);
	sh->active--;
	pthread_cond_signal(&sh->idle);
	pthread_mutex_unlock(&sh->lock);
	return NULL;
}

/* Start a thread for @fd, or refuse it when at the concurrency limit. */
static void dispatch(struct serve_shared *sh, int fd)
{
	struct serve_job *job = NULL;
	char why[CTRL_REASON_MAX + 1];
	pthread_t tid;
	bool busy;

	pthread_mutex_lock(&sh->lock);
	busy = sh->active >= sh->cfg->limits.max_concurrent;
	if (!busy)
		sh->active++;
	pthread_mutex_unlock(&sh->lock);
	if (busy) {
		snprintf(why, sizeof(why), "busy: %u tests running (limit %u)",
			 sh->cfg->limits.max_concurrent,
			 sh->cfg->limits.max_concurrent);
		ctrl_send_refuse(fd, CTRL_VERSION_MIN, -EBUSY, why,
				 ctrl_now_ns() + 1000000000ull);
		close(fd);
		return;
	}
	job = malloc(sizeof(*job));
	if (job) {
		job->sh = sh;
		job->fd = fd;
	}
	if (!job || pthread_create(&tid, NULL, serve_thread, job)) {
		free(job);
		close(fd);
		pthread_mutex_lock(&sh->lock);
		sh->active--;
		pthread_mutex_unlock(&sh->lock);
		return;
	}
	pthread_detach(tid);
}

int vt_serve_loop(const struct vt_serve_cfg *cfg, int lfd,
		  void (*on_result)(const struct vt_result *res, void *arg),
		  void *arg)
{
	struct serve_shared sh = {
		.cfg = cfg, .on_result = on_result, .arg = arg};
	int rc = 0;

	pthread_mutex_init(&sh.lock, NULL);
	pthread_cond_init(&sh.idle, NULL);
	while (!(cfg->stop && *cfg->stop)) {
		struct pollfd pfd = {.fd = lfd, .events = POLLIN};
		int fd, n = poll(&pfd, 1, 200);

		if (n < 0 && errno != EINTR) {
			rc = -errno;
			break;
		}
		if (n <= 0)
			continue;
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		dispatch(&sh, fd);
	}
	/* Running tests see the stop flag through their watchdogs. */
	pthread_mutex_lock(&sh.lock);
	while (sh.active)
		pthread_cond_wait(&sh.idle, &sh.lock);
	pthread_mutex_unlock(&sh.lock);
	pthread_cond_destroy(&sh.idle);
	pthread_mutex_destroy(&sh.lock);
	return rc;
}
