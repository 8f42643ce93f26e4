// SPDX-License-Identifier: MIT
/*
 * The daemon's test runner and responder. The runner picks the next test
 * (a due plan entry, else the next static peer in rotation, else a
 * loopback self-test), takes the local port from the scheduler (one test
 * per port, duty cycle, pause), reads the port counters around the test,
 * runs it (asking the responder for the peer port of the plan), judges a
 * busy link from both ends' counters and spools the result before
 * anything tries to send it. The responder is vt_serve_loop() with hooks:
 * it admits a peer that proved itself (a ticket from the collector's plan,
 * checked against our responder keys, its slot and the tickets already
 * spent; or the shared secret; or anyone with responder_open), serves any
 * of our ACTIVE ports it names, admits a test only when the same
 * scheduler gives it that port (so a port never runs two tests and a
 * paused host refuses), reads the port's counters for RESULT and counts
 * every refusal by reason.
 */
#include "daemon_int.h"
#include "now.h"

#include <errno.h>
#include <openssl/crypto.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

/* The time a profile is expected to hold a port, for the duty cycle. */
static double run_expect(const struct probe_profile *p)
{
	return p->duration > 0 ? p->duration + 1 : 1;
}

/* Is @name among the comma-separated @list (NULL: every name)? */
static bool run_in_list(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; p;
	     p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, name, n) && (p[n] == ',' || !p[n]))
			return true;
	return !list;
}

/*
 * The collector is away and a planned test's period is over: run it again
 * a period later, so the fabric is still measured (and the results
 * spooled) until a fresh plan comes.
 */
static void run_replay(struct daemon *d, struct dplan *e, double now)
{
	double k;

	if (!d->plan_stale || d->plan_period <= 0 ||
	    now < e->start_at + d->plan_period)
		return;
	if (!e->done && (!e->job.deadline || now <= e->job.deadline))
		return;
	k = (double)(long long)((now - e->start_at) / d->plan_period);
	e->start_at += k * d->plan_period;
	if (e->job.deadline)
		e->job.deadline += k * d->plan_period;
	e->done = false;
}

/* Seconds until the next plan entry is due (at most @cap); under lock. */
static double run_next_due(struct daemon *d, double now, double cap)
{
	for (size_t i = 0; i < d->n_plan; i++) {
		const struct dplan *e = &d->plan[i];

		if (!e->done && e->start_at > now && e->start_at - now < cap)
			cap = e->start_at - now;
	}
	return cap;
}

/* The next due plan entry, port taken; caller holds d->lock. */
static bool run_pick_plan(struct daemon *d, struct dtest_job *job, double now)
{
	char why[160];

	for (size_t i = 0; i < d->n_plan; i++) {
		struct dplan *e = &d->plan[i];
		int ret;

		run_replay(d, e, now);
		if (e->done || e->start_at > now)
			continue;
		if (e->job.deadline && now > e->job.deadline) {
			e->done = true;
			log_info("plan %s: deadline passed before the port was "
				 "free: skipped",
				 e->job.plan_id);
			continue;
		}
		ret = psched_acquire(&d->sched, e->job.device, e->job.ib_port,
				     PSCHED_INITIATOR,
				     run_expect(&e->job.profile), now_mono(),
				     why, sizeof(why));
		if (ret)
			continue; /* busy, over budget or down: later */
		e->done = true;
		*job = e->job;
		return true;
	}
	return false;
}

/* The next (local port, peer, profile) in rotation; caller holds lock. */
static bool run_pick_static(struct daemon *d, struct dtest_job *job,
			    double mono)
{
	const struct probe_settings *s = d->s;
	size_t nprof = s->n_profiles, combos = s->n_peers * nprof;
	char why[160];

	if (!combos || mono < d->next_static)
		return false;
	for (size_t tries = 0; tries < combos; tries++) {
		size_t k = d->rr_next++ % combos;
		const struct probe_peer *p = &s->peers[k / nprof];
		const struct probe_profile *pr = &s->profiles[k % nprof];

		if (!run_in_list(s->peer_profiles, pr->name))
			continue;
		if (psched_acquire(
			    &d->sched,
			    s->responder_device ? s->responder_device : "",
			    (unsigned)s->responder_ib_port, PSCHED_INITIATOR,
			    run_expect(pr), now_mono(), why, sizeof(why)))
			return false;
		memset(job, 0, sizeof(*job));
		job->profile = *pr;
		snprintf(job->device, sizeof(job->device), "%s",
			 s->responder_device ? s->responder_device : "");
		job->ib_port = (unsigned)s->responder_ib_port;
		snprintf(job->peer_host, sizeof(job->peer_host), "%s", p->name);
		snprintf(job->peer_address, sizeof(job->peer_address), "%s",
			 p->address);
		snprintf(job->peer_tcp_port, sizeof(job->peer_tcp_port), "%s",
			 p->port);
		snprintf(job->peer_device, sizeof(job->peer_device), "%s",
			 p->device);
		job->peer_ib_port = p->ib_port;
		d->next_static = mono + (double)s->test_interval +
				 backoff_rand(&d->run_rnd) * s->jitter;
		return true;
	}
	return false;
}

/* The loopback test of the next device's first port in rotation. */
static bool run_pick_selftest(struct daemon *d, struct dtest_job *job,
			      double mono)
{
	const struct probe_settings *s = d->s;
	const struct probe_profile *pr =
		probe_profile_find(s, s->selftest_profile);
	struct psched_port port;
	char why[160];
	size_t n;

	if (!s->selftest || !pr || mono < d->next_selftest)
		return false;
	pthread_mutex_lock(&d->sched.lock);
	n = d->sched.n_ports;
	if (n)
		port = d->sched.ports[d->selftest_next++ % n];
	pthread_mutex_unlock(&d->sched.lock);
	if (!n ||
	    psched_acquire(&d->sched, port.device, port.port, PSCHED_INITIATOR,
			   run_expect(pr), now_mono(), why, sizeof(why)))
		return false;
	memset(job, 0, sizeof(*job));
	job->profile = *pr;
	job->selftest = true;
	snprintf(job->device, sizeof(job->device), "%s", port.device);
	job->ib_port = port.port;
	snprintf(job->peer_host, sizeof(job->peer_host), "%s", d->host);
	snprintf(job->peer_device, sizeof(job->peer_device), "%s", port.device);
	job->peer_ib_port = port.port;
	d->next_selftest = mono + (double)s->selftest_interval / (double)n +
			   backoff_rand(&d->run_rnd) * s->jitter;
	return true;
}

/* The port a static or plan job names ("" is the scheduler's first). */
static void run_release(struct daemon *d, const struct dtest_job *job,
			double spent)
{
	psched_release(&d->sched, job->device, job->ib_port, spent, now_mono());
}

/* Store the result of @job durably; count it. */
static void run_store(struct daemon *d, const struct dtest_job *job,
		      const struct vt_result *res, struct dtest_meta *m,
		      enum testapi_outcome outcome, const char *error)
{
	char *json = NULL;
	int ret;

	ret = spool_uuid(m->id);
	if (!ret)
		ret = dtest_encode(job, res, m, outcome, error, &json);
	if (!ret)
		ret = spool_put(d->spool, m->id, json, strlen(json));
	free(json);
	log_info("test %s %s/%u -> %s (%s%s%s): %s%s%s%s", job->profile.name,
		 job->device[0] ? job->device : "-", job->ib_port,
		 job->peer_host, job->selftest ? "loopback" : job->peer_address,
		 job->selftest ? "" : ":", job->peer_tcp_port,
		 testapi_outcome_name(outcome), m->busy ? " (busy link: " : "",
		 m->busy ? m->busy_why : "", m->busy ? ")" : "");
	if (error && error[0])
		log_info("test %s: %s", job->profile.name, error);
	pthread_mutex_lock(&d->lock);
	d->tests_run++;
	d->tests_busy += m->busy;
	d->tests_failed += outcome != TESTAPI_OK;
	pthread_mutex_unlock(&d->lock);
	pthread_cond_signal(&d->wake);
}

static void run_job(struct daemon *d, const struct dtest_job *job,
		    const char *sysfs_root, double timeout, double tol,
		    const uint8_t *secret, size_t secret_len)
{
	struct dtest_meta m = {.host = d->host, .started = now_wall()};
	struct vt_result *res = calloc(1, sizeof(*res));
	struct vt_portctr before, after, delta;
	char err[VT_ERR_MAX];
	struct vt_params p;
	double t0 = now_mono();
	enum testapi_outcome outcome;

	if (!res ||
	    dtest_params(job, sysfs_root, timeout, &p, err, sizeof(err))) {
		run_store(d, job, NULL, &m, TESTAPI_CONTROL_ERROR,
			  res ? err : "out of memory");
		free(res);
		run_release(d, job, 0);
		return;
	}
	if (secret_len) {
		p.secret = secret;
		p.secret_len = secret_len;
	}
	p.stop = &daemon_stop; /* SIGTERM ends the test: outcome aborted */
	vt_portctr_read(sysfs_root, job->device, job->ib_port, &before);
	if (job->selftest)
		dtest_selftest(&p, res);
	else
		vt_run(&p, job->peer_address, job->peer_tcp_port, res);
	vt_portctr_read(sysfs_root, job->device, job->ib_port, &after);
	m.duration = now_mono() - t0;
	m.aborted = daemon_stop;
	outcome = dtest_outcome(res, m.aborted);
	if (outcome == TESTAPI_OK) {
		struct dtest_load t = {.bytes = res->local.bytes,
				       .msgs = res->local.msgs,
				       .size = res->used.size,
				       .mtu = res->used.mtu};

		if (res->used.bidir && res->remote_valid)
			t.bytes += res->remote.bytes;
		/* A loopback test crosses the port both ways. */
		if (job->selftest)
			t.bytes *= 2;
		vt_portctr_delta(&before, &after, &delta);
		m.busy = dtest_verdict(
			&delta, res->has_remote_ctr ? &res->remote_ctr : NULL,
			&t, tol, m.busy_why, sizeof(m.busy_why));
	}
	run_store(d, job, res, &m, outcome,
		  m.aborted ? "the daemon stopped during the test"
			    : res->error);
	run_release(d, job, m.duration);
	free(res);
}

static void *run_thread(void *arg)
{
	struct daemon *d = arg;

	while (!daemon_stop) {
		struct dtest_job job;
		uint8_t secret[sizeof(d->secret)];
		size_t secret_len;
		char root[256];
		double timeout, tol, mono = now_mono();
		bool have = false;
		struct timespec ts;

		pthread_mutex_lock(&d->lock);
		if (!psched_paused(&d->sched)) {
			have = d->have_plan &&
			       run_pick_plan(d, &job, now_wall());
			if (!have && !d->have_plan)
				have = run_pick_static(d, &job, mono);
			if (!have)
				have = run_pick_selftest(d, &job, mono);
		}
		snprintf(root, sizeof(root), "%s", d->s->sysfs_root);
		timeout = d->s->test_timeout;
		tol = d->s->busy_tolerance;
		secret_len = d->secret_len;
		memcpy(secret, d->secret, secret_len);
		if (have)
			snprintf(d->running, sizeof(d->running),
				 "%.60s %.80s:%.7s", job.profile.name,
				 job.peer_address, job.peer_tcp_port);
		if (!have) {
			double w = run_next_due(d, now_wall(), 1.0) + 0.001;

			ts = now_after(CLOCK_MONOTONIC, w);
			pthread_cond_timedwait(&d->wake, &d->lock, &ts);
		}
		pthread_mutex_unlock(&d->lock);
		if (!have)
			continue;
		run_job(d, &job, root, timeout, tol, secret, secret_len);
		explicit_bzero(secret, sizeof(secret));
		pthread_mutex_lock(&d->lock);
		d->running[0] = '\0';
		pthread_mutex_unlock(&d->lock);
	}
	OPENSSL_thread_stop(); /* the HMAC's per-thread state */
	return NULL;
}

/* One peer's test on our responder: what the hooks need to remember. */
struct resp_sess {
	struct daemon *d;
	uint8_t secret[sizeof(((struct daemon *)0)->secret)];
	char device[PROBE_NAME_MAX]; /* the port taken, once admitted */
	unsigned port;
	bool taken;
	bool open; /* responder_open, as configured at the handshake */
	bool has_secret;
	double t0;
	struct dticket_check chk;      /* the ticket found, to spend at admit */
	int reason;		       /* enum resp_reason of a refusal; -1 */
	char who[TICKET_STR_MAX + 40]; /* the ticket's initiator, for logs */
};

static const char *const resp_reason_names[RESP_REASONS] = {
	[RESP_UNAUTHENTICATED] = "unauthenticated",
	[RESP_AUTH_FAILED] = "auth_failed",
	[RESP_NO_KEY] = "no_key",
	[RESP_EXPIRED] = "ticket_expired",
	[RESP_REPLAYED] = "replayed",
	[RESP_BUSY] = "busy",
	[RESP_PAUSED] = "host_paused",
	[RESP_NO_PORT] = "no_port",
	[RESP_LIMITS] = "limits",
	[RESP_PROTOCOL] = "protocol",
	[RESP_OTHER] = "other",
};

const char *daemon_resp_reason(enum resp_reason r)
{
	return r < RESP_REASONS ? resp_reason_names[r] : "other";
}

static uint64_t resp_now_ms(void)
{
	return (uint64_t)(now_wall() * 1000);
}

/* The responder's settings, copied so a reload cannot pull them away. */
static void resp_cfg(struct daemon *d, struct resp_sess *r,
		     struct vt_serve_cfg *cfg)
{
	const struct probe_settings *s = d->s;
	struct vt_params *p = &cfg->dev;

	vt_params_default(p);
	snprintf(p->device, sizeof(p->device), "%s",
		 s->responder_device ? s->responder_device : "");
	p->ib_port = (unsigned)s->responder_ib_port;
	p->timeout_s = s->test_timeout;
	snprintf(p->sysfs_root, sizeof(p->sysfs_root), "%s", s->sysfs_root);
	cfg->limits.max_size = (uint32_t)s->responder_max_size;
	cfg->limits.max_qps = (unsigned)s->responder_max_qps;
	cfg->limits.max_duration_s = s->responder_max_duration;
	cfg->limits.max_iters = (uint32_t)s->responder_max_iters;
	r->open = s->responder_open;
	r->has_secret = d->secret_len > 0;
	if (d->secret_len) {
		memcpy(r->secret, d->secret, d->secret_len);
		p->secret = r->secret;
		p->secret_len = d->secret_len;
	}
}

static int resp_open(void *arg, struct vt_serve_cfg *cfg, void **sess)
{
	struct daemon *d = arg;
	struct resp_sess *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	r->d = d;
	r->reason = -1;
	pthread_mutex_lock(&d->lock);
	resp_cfg(d, r, cfg);
	pthread_mutex_unlock(&d->lock);
	*sess = r;
	return 0;
}

/*
 * A planned test's REQUEST: the ticket for its claims, if we hold the key
 * of their period and the slot is now. Spent only once the MAC checked
 * out (resp_spend), so a forged REQUEST burns no one's ticket.
 */
static int resp_ticket(void *sess, const struct vt_serve_ask *ask,
		       uint8_t key[TICKET_KEY_LEN], char *why, size_t len)
{
	struct resp_sess *r = sess;
	struct daemon *d = r->d;
	int ret;

	snprintf(r->who, sizeof(r->who), "%.64s (plan %.24s)",
		 ask->ticket->initiator, ask->ticket->plan_id);
	pthread_mutex_lock(&d->lock);
	ret = dticket_expect(&d->tickets, ask->ticket, resp_now_ms(), &r->chk,
			     why, len);
	pthread_mutex_unlock(&d->lock);
	if (ret == -ENOKEY)
		r->reason = RESP_NO_KEY;
	else if (ret == -EKEYEXPIRED)
		r->reason = RESP_EXPIRED;
	else if (ret)
		r->reason = RESP_AUTH_FAILED;
	else
		memcpy(key, r->chk.ticket, TICKET_KEY_LEN);
	return ret ? -EACCES : 0;
}

/* One test per ticket (per window): spend it, or refuse a replay. */
static int resp_spend(struct resp_sess *r, char *why, size_t len)
{
	struct daemon *d = r->d;
	int ret;

	pthread_mutex_lock(&d->lock);
	ret = dticket_spend(&d->tickets, &r->chk, resp_now_ms());
	pthread_mutex_unlock(&d->lock);
	if (ret == -EALREADY) {
		r->reason = RESP_REPLAYED;
		snprintf(why, len, "ticket already used: %s", r->who);
		return -EACCES;
	}
	if (ret) {
		r->reason = RESP_BUSY;
		snprintf(why, len,
			 "busy: %d tickets in their slots, no room for "
			 "another",
			 DTICKET_USED_MAX);
		return -EBUSY;
	}
	return 0;
}

/*
 * Who may test here: a peer with a ticket (spent now), one that passed
 * the shared secret, or anyone with responder_open. The rest is refused
 * before any port is taken.
 */
static int resp_who(struct resp_sess *r, const struct vt_serve_ask *ask,
		    char *why, size_t len)
{
	if (ask->auth == VT_AUTH_TICKET)
		return resp_spend(r, why, len);
	if (ask->auth == VT_AUTH_SECRET || r->open)
		return 0;
	r->reason = RESP_UNAUTHENTICATED;
	snprintf(why, len,
		 "not admitted: this responder takes the tests its "
		 "collector planned (a ticket, control protocol %d)%s",
		 VT_PROTO_TICKET,
		 r->has_secret ? " and peers with its shared secret" : "");
	return -EACCES;
}

/*
 * The port the peer asked for (our default when it named none) must be
 * one of ours and free under the same budget as the runner's tests.
 */
static int resp_admit(void *sess, const struct vt_serve_ask *ask,
		      struct vt_params *dev, char *why, size_t len)
{
	struct resp_sess *r = sess;
	struct psched *sc = &r->d->sched;
	char valid[160];
	int ret;

	ret = resp_who(r, ask, why, len);
	if (ret)
		return ret;
	snprintf(r->device, sizeof(r->device), "%s",
		 ask->device[0] ? ask->device : dev->device);
	r->port = ask->ib_port ? ask->ib_port : dev->ib_port;
	if (!r->device[0] &&
	    psched_first(sc, r->device, sizeof(r->device), &r->port)) {
		snprintf(why, len, "no port here to test");
		return -ENODEV;
	}
	if (ask->ib_port)
		r->port = ask->ib_port;
	ret = psched_acquire(sc, r->device, r->port, PSCHED_RESPONDER, 0,
			     now_mono(), why, len);
	if (ret == -ENODEV || ret == -ENETDOWN) {
		psched_active_list(sc, valid, sizeof(valid));
		snprintf(why, len, "no ACTIVE port %.64s/%u here; valid: %s",
			 r->device, r->port, valid);
	}
	r->reason = ret == -ECANCELED			 ? RESP_PAUSED
		    : ret == -ENODEV || ret == -ENETDOWN ? RESP_NO_PORT
		    : ret == -EBUSY || ret == -EAGAIN	 ? RESP_BUSY
							 : RESP_OTHER;
	if (ret)
		return ret == -EAGAIN ? -EBUSY : ret;
	r->reason = -1;
	r->taken = true;
	r->t0 = now_mono();
	snprintf(dev->device, sizeof(dev->device), "%s", r->device);
	dev->ib_port = r->port;
	return 0;
}

/* A refusal's reason: the hooks' own, else what the engine said. */
static enum resp_reason resp_reason_of(const struct resp_sess *r,
				       const struct vt_result *res)
{
	const char *k = res->refused ? res->refused : "";

	if (r->reason >= 0)
		return (enum resp_reason)r->reason;
	if (!strcmp(k, "auth"))
		return RESP_AUTH_FAILED;
	if (!strcmp(k, "limits"))
		return RESP_LIMITS;
	if (!strcmp(k, "protocol"))
		return RESP_PROTOCOL;
	return RESP_OTHER;
}

/*
 * Refusals that say someone unplanned knocks are logged once a minute
 * per reason (a stranger's flood must not flood the journal); the
 * others, as every failed test, each time.
 */
static void resp_log(const struct resp_sess *r, bool admitted,
		     enum resp_reason why, const struct vt_result *res)
{
	char key[40];

	if (!res->status)
		return;
	/* The reasons up to RESP_REPLAYED are about who knocks (enum order). */
	if (admitted || why > RESP_REPLAYED) {
		log_info("responder: %s from a peer %s: %s",
			 r->device[0] ? r->device : "test",
			 admitted ? "failed" : "refused", res->error);
		return;
	}
	snprintf(key, sizeof(key), "responder-%s", daemon_resp_reason(why));
	log_once(key, 60, LOG_LVL_WARN,
		 "responder: refused a peer (%s%s%s; counted in status and "
		 "/metrics, logged once a minute): %s",
		 daemon_resp_reason(why), r->who[0] ? ", ticket of " : "",
		 r->who, res->error);
}

static void resp_close(void *sess, bool admitted, const struct vt_result *res)
{
	struct resp_sess *r = sess;
	struct daemon *d = r->d;
	enum resp_reason why = resp_reason_of(r, res);

	if (r->taken)
		psched_release(&d->sched, r->device, r->port,
			       now_mono() - r->t0, now_mono());
	pthread_mutex_lock(&d->lock);
	if (admitted) {
		d->responder_tests++;
	} else {
		d->responder_refused++;
		d->refused_by[why]++;
	}
	pthread_mutex_unlock(&d->lock);
	resp_log(r, admitted, why, res);
	explicit_bzero(r->secret, sizeof(r->secret));
	explicit_bzero(&r->chk, sizeof(r->chk));
	free(r);
}

static void *resp_thread(void *arg)
{
	struct daemon *d = arg;
	int ret = vt_serve_loop(&d->resp_cfg, d->lfd, NULL, NULL);

	if (ret)
		log_err("responder: accept loop: %s", strerror(-ret));
	return NULL;
}

/* The responder's loop: the per-client settings come from resp_open. */
static void resp_setup(struct daemon *d)
{
	struct vt_serve_cfg *c = &d->resp_cfg;

	memset(c, 0, sizeof(*c));
	vt_params_default(&c->dev);
	vt_limits_default(&c->limits);
	/* One test per port (psched); a few more may be in the handshake. */
	c->limits.max_concurrent = DAEMON_MAX_RESP;
	c->stop = &daemon_stop;
	c->hooks = (struct vt_serve_hooks){.arg = d,
					   .open = resp_open,
					   .admit = resp_admit,
					   .ticket = resp_ticket,
					   .close = resp_close};
}

int daemon_threads_start(struct daemon *d)
{
	pthread_condattr_t ca;
	char port[8];
	sigset_t all, old;
	int ret;

	snprintf(port, sizeof(port), "%lld", d->s->responder_port);
	ret = vt_listen(d->s->responder_listen, port, &d->lfd, &d->resp_port);
	if (ret) {
		log_err("responder: cannot listen on %s:%s: %s",
			d->s->responder_listen ? d->s->responder_listen : "*",
			port, strerror(-ret));
		return ret;
	}
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&d->wake, &ca);
	pthread_condattr_destroy(&ca);
	/* Signals go to the event loop: the threads block them. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	if (!d->s->collector_url && !d->secret_len && !d->s->responder_open)
		log_warn("responder: no collector_url (whose plans bring "
			 "tickets) and no secret_file: every peer will be "
			 "refused; set secret_file on both ends, or "
			 "responder_open = true to admit anyone");
	resp_setup(d);
	d->responder_started =
		!pthread_create(&d->responder, NULL, resp_thread, d);
	d->runner_started = !pthread_create(&d->runner, NULL, run_thread, d);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return d->responder_started && d->runner_started ? 0 : -EAGAIN;
}

void daemon_threads_stop(struct daemon *d)
{
	daemon_stop = 1;
	if (d->runner_started) {
		pthread_cond_signal(&d->wake);
		pthread_join(d->runner, NULL);
	}
	/* It returns once the tests running, stopped too, are over. */
	if (d->responder_started)
		pthread_join(d->responder, NULL);
	if (d->lfd >= 0)
		close(d->lfd);
	if (d->runner_started || d->responder_started)
		pthread_cond_destroy(&d->wake);
}
