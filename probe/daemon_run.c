// SPDX-License-Identifier: MIT
/*
 * The daemon's test runner and responder. The runner picks the next test
 * (a due plan entry, else the next static peer in rotation, else a
 * loopback self-test), takes the local port from the scheduler (one test
 * per port, duty cycle, pause), reads the port counters around the test,
 * runs it and spools the result before anything tries to send it. The
 * responder accepts peers' tests and asks the same scheduler first, so a
 * port never runs two tests and a paused host refuses.
 */
#include "daemon_int.h"

#include <errno.h>
#include <openssl/crypto.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "ctrl.h"
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
				     run_expect(&e->job.profile), daemon_mono(),
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
			    run_expect(pr), daemon_mono(), why, sizeof(why)))
			return false;
		memset(job, 0, sizeof(*job));
		job->profile = *pr;
		snprintf(job->device, sizeof(job->device), "%s",
			 s->responder_device ? s->responder_device : "");
		job->ib_port = (unsigned)s->responder_ib_port;
		snprintf(job->peer_host, sizeof(job->peer_host), "%s", p->name);
		snprintf(job->peer_address, sizeof(job->peer_address), "%s",
			 p->address);
		snprintf(job->peer_port, sizeof(job->peer_port), "%s", p->port);
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
			   run_expect(pr), daemon_mono(), why, sizeof(why)))
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
	psched_release(&d->sched, job->device, job->ib_port, spent,
		       daemon_mono());
}

/* Store the result of @job durably; count it. */
static void run_store(struct daemon *d, const struct dtest_job *job,
		      const struct vt_result *res, struct dtest_meta *m,
		      const char *outcome, const char *error)
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
		 job->selftest ? "" : ":", job->peer_port, outcome,
		 m->busy ? " (busy link: " : "", m->busy ? m->busy_why : "",
		 m->busy ? ")" : "");
	if (error && error[0])
		log_info("test %s: %s", job->profile.name, error);
	pthread_mutex_lock(&d->lock);
	d->tests_run++;
	d->tests_busy += m->busy;
	d->tests_failed += strcmp(outcome, "ok") != 0;
	pthread_mutex_unlock(&d->lock);
	pthread_cond_signal(&d->wake);
}

static void run_job(struct daemon *d, const struct dtest_job *job,
		    const char *sysfs_root, double timeout, double tol,
		    const uint8_t *secret, size_t secret_len)
{
	struct dtest_meta m = {.host = d->host, .started = daemon_epoch()};
	struct vt_result *res = calloc(1, sizeof(*res));
	struct portctr before, after;
	char err[VT_ERR_MAX];
	struct vt_params p;
	double t0 = daemon_mono();
	const char *outcome;

	if (!res ||
	    dtest_params(job, sysfs_root, timeout, &p, err, sizeof(err))) {
		run_store(d, job, NULL, &m, "control_error",
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
	portctr_read(sysfs_root, job->device, job->ib_port, &before);
	if (job->selftest)
		dtest_selftest(&p, res);
	else
		vt_run(&p, job->peer_address, job->peer_port, res);
	portctr_read(sysfs_root, job->device, job->ib_port, &after);
	after.mtu = before.mtu = res->used.mtu;
	m.duration = daemon_mono() - t0;
	m.aborted = daemon_stop;
	outcome = dtest_outcome(res, m.aborted);
	if (!strcmp(outcome, "ok")) {
		uint64_t bytes = res->local.bytes, msgs = res->local.msgs;

		if (res->used.bidir && res->remote_valid)
			bytes += res->remote.bytes;
		/* A loopback test crosses the port both ways. */
		if (job->selftest)
			bytes *= 2;
		m.busy =
			dtest_busy(&before, &after, bytes, msgs, res->used.size,
				   tol, m.busy_why, sizeof(m.busy_why));
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
		double timeout, tol, mono = daemon_mono();
		bool have = false;
		struct timespec ts;

		pthread_mutex_lock(&d->lock);
		if (!psched_paused(&d->sched)) {
			have = d->have_plan &&
			       run_pick_plan(d, &job, daemon_epoch());
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
				 job.peer_address, job.peer_port);
		if (!have) {
			double w = run_next_due(d, daemon_epoch(), 1.0) + 0.001;

			clock_gettime(CLOCK_MONOTONIC, &ts);
			ts.tv_nsec += (long)(w * 1e9);
			ts.tv_sec += ts.tv_nsec / 1000000000;
			ts.tv_nsec %= 1000000000;
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

struct resp_job {
	struct daemon *d;
	uint8_t secret[sizeof(((struct daemon *)0)->secret)];
	struct vt_serve_cfg cfg;
	int fd;
	char device[PROBE_NAME_MAX];
	unsigned port;
};

static void *resp_thread(void *arg)
{
	struct resp_job *j = arg;
	struct vt_result *res = calloc(1, sizeof(*res));
	double t0 = daemon_mono();

	if (res)
		vt_serve_conn(&j->cfg, j->fd, res);
	close(j->fd);
	psched_release(&j->d->sched, j->device, j->port, daemon_mono() - t0,
		       daemon_mono());
	pthread_mutex_lock(&j->d->lock);
	j->d->responder_tests++;
	j->d->resp_active--;
	pthread_mutex_unlock(&j->d->lock);
	if (res && res->status)
		log_info("responder: test from a peer failed: %s", res->error);
	free(res);
	explicit_bzero(j->secret, sizeof(j->secret));
	free(j);
	OPENSSL_thread_stop();
	return NULL;
}

/* The responder's settings, copied so a reload cannot pull them away. */
static void resp_cfg(struct daemon *d, struct resp_job *j)
{
	const struct probe_settings *s = d->s;
	struct vt_params *p = &j->cfg.dev;

	vt_params_default(p);
	snprintf(j->device, sizeof(j->device), "%s",
		 s->responder_device ? s->responder_device : "");
	j->port = (unsigned)s->responder_ib_port;
	snprintf(p->device, sizeof(p->device), "%s", j->device);
	p->ib_port = j->port;
	p->timeout_s = s->test_timeout;
	snprintf(p->sysfs_root, sizeof(p->sysfs_root), "%s", s->sysfs_root);
	vt_limits_default(&j->cfg.limits);
	j->cfg.limits.max_size = (uint32_t)s->responder_max_size;
	j->cfg.limits.max_qps = (unsigned)s->responder_max_qps;
	j->cfg.limits.max_duration_s = s->responder_max_duration;
	j->cfg.limits.max_iters = (uint32_t)s->responder_max_iters;
	j->cfg.limits.max_concurrent = 1;
	j->cfg.stop = &daemon_stop;
	if (d->secret_len) {
		memcpy(j->secret, d->secret, d->secret_len);
		p->secret = j->secret;
		p->secret_len = d->secret_len;
	}
}

static void resp_accept(struct daemon *d, int fd)
{
	struct resp_job *j = calloc(1, sizeof(*j));
	char why[160];
	pthread_t tid;
	int ret;

	if (!j) {
		close(fd);
		return;
	}
	j->d = d;
	j->fd = fd;
	pthread_mutex_lock(&d->lock);
	resp_cfg(d, j);
	pthread_mutex_unlock(&d->lock);
	ret = psched_acquire(&d->sched, j->device, j->port, PSCHED_RESPONDER, 0,
			     daemon_mono(), why, sizeof(why));
	if (!ret) {
		pthread_mutex_lock(&d->lock);
		d->resp_active++;
		pthread_mutex_unlock(&d->lock);
		if (!pthread_create(&tid, NULL, resp_thread, j)) {
			pthread_detach(tid);
			return;
		}
		pthread_mutex_lock(&d->lock);
		d->resp_active--;
		pthread_mutex_unlock(&d->lock);
		psched_release(&d->sched, j->device, j->port, 0, daemon_mono());
		snprintf(why, sizeof(why), "busy: cannot start a thread");
		ret = -EAGAIN;
	}
	ctrl_send_refuse(fd, ret == -ECANCELED ? ret : -EBUSY, why,
			 ctrl_now_ns() + 1000000000ull);
	close(fd);
	free(j);
	pthread_mutex_lock(&d->lock);
	d->responder_refused++;
	pthread_mutex_unlock(&d->lock);
}

static void *resp_thread_loop(void *arg)
{
	struct daemon *d = arg;

	while (!daemon_stop) {
		struct pollfd pfd = {.fd = d->lfd, .events = POLLIN};
		int fd;

		if (poll(&pfd, 1, 500) <= 0)
			continue;
		fd = accept4(d->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0)
			resp_accept(d, fd);
	}
	return NULL;
}

int daemon_threads_start(struct daemon *d)
{
	pthread_condattr_t ca;
	char port[8];
	sigset_t all, old;
	int ret;

	snprintf(port, sizeof(port), "%lld", d->s->responder_port);
	ret = ctrl_listen(d->s->responder_listen, port, &d->lfd, &d->resp_port);
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
	d->responder_started =
		!pthread_create(&d->responder, NULL, resp_thread_loop, d);
	d->runner_started = !pthread_create(&d->runner, NULL, run_thread, d);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return d->responder_started && d->runner_started ? 0 : -EAGAIN;
}

void daemon_threads_stop(struct daemon *d)
{
	unsigned active = 1;

	daemon_stop = 1;
	if (d->runner_started) {
		pthread_cond_signal(&d->wake);
		pthread_join(d->runner, NULL);
	}
	if (d->responder_started)
		pthread_join(d->responder, NULL);
	/* Responder tests see the stop flag through their watchdogs. */
	while (active) {
		pthread_mutex_lock(&d->lock);
		active = d->resp_active;
		pthread_mutex_unlock(&d->lock);
		if (active)
			usleep(50000);
	}
	if (d->lfd >= 0)
		close(d->lfd);
	if (d->runner_started || d->responder_started)
		pthread_cond_destroy(&d->wake);
}
