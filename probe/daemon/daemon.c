// SPDX-License-Identifier: MIT
/*
 * ibpulse-probe daemon: start-up and teardown, signals (the handlers only
 * set flags), SIGHUP reloads (load into a scratch struct, swap on
 * success, keep the old settings on failure), and the event loop that
 * drives counters, pushes, registration, plan fetches and result pushes
 * from monotonic timers while the runner and the responder run in their
 * own threads (daemon_run.c).
 */
#include "daemon_int.h"
#include "report.h"
#include "now.h"
#include "fnv.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "pmetrics.h"
#include "secret.h"
#include "sysfs.h"

volatile sig_atomic_t daemon_stop;
static volatile sig_atomic_t daemon_hup;

static void daemon_on_signal(int sig)
{
	if (sig == SIGHUP)
		daemon_hup = 1;
	else
		daemon_stop = 1;
}

static void daemon_signals(void)
{
	struct sigaction sa = {.sa_handler = daemon_on_signal};

	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
}

/* A fingerprint of what register tells: ports, states, GIDs, P_Keys. */
static uint64_t daemon_ports_sig(const struct report *r)
{
	uint64_t h = FNV1A_BASIS;

	for (size_t i = 0; i < r->n_devices; i++) {
		const struct report_device *dv = &r->devices[i];

		h = fnv1a_str(h, dv->name ? dv->name : "");
		for (size_t j = 0; j < dv->n_ports; j++) {
			const struct report_port *p = &dv->ports[j];

			h = fnv1a_mix(h, p->port);
			h = fnv1a_mix(h, (uint64_t)p->state);
			h = fnv1a_mix(h, p->lid);
			for (size_t k = 0; k < p->n_pkeys; k++)
				h = fnv1a_mix(h, p->pkeys[k].pkey);
			for (size_t k = 0; k < p->n_gids; k++)
				h = fnv1a_str(h, p->gids[k].gid ? p->gids[k].gid
								: "");
		}
	}
	return h;
}

/* Read the counters; update the ports the scheduler knows. */
static void daemon_counters(struct daemon *d)
{
	struct report *r = NULL;
	uint64_t sig;
	int ret;

	pthread_mutex_lock(&d->lock);
	ret = probe_report_build(d->s, &r);
	pthread_mutex_unlock(&d->lock);
	if (ret) {
		log_once("daemon-counters", 600, LOG_LVL_ERR,
			 "reading counters failed: %s", strerror(-ret));
		return;
	}
	for (size_t i = 0; i < r->n_devices; i++)
		for (size_t j = 0; j < r->devices[i].n_ports; j++) {
			const struct report_port *p = &r->devices[i].ports[j];

			psched_port_set(&d->sched, r->devices[i].name, p->port,
					p->state == REPORT_PORT_ACTIVE,
					now_mono());
		}
	sig = daemon_ports_sig(r);
	if (sig != d->ports_sig) {
		if (d->ports_sig)
			log_info("ports changed: registering again");
		d->ports_sig = sig;
		d->need_register = true;
	}
	/* Counters are cumulative: the newest report replaces the last. */
	report_free(d->latest);
	d->latest = r;
	d->latest_pushed = false;
}

static void daemon_pause_file(struct daemon *d)
{
	struct stat st;
	int on;

	pthread_mutex_lock(&d->lock);
	on = d->s->pause_file && !stat(d->s->pause_file, &st);
	pthread_mutex_unlock(&d->lock);
	if (!!(psched_paused(&d->sched) & PSCHED_PAUSE_FILE) != on) {
		log_info("pause file %s: tests %s", on ? "present" : "gone",
			 on ? "paused" : "resume");
		psched_pause(&d->sched, PSCHED_PAUSE_FILE, on);
	}
}

int daemon_read_secret(struct daemon *d, const char *path)
{
	char err[512];
	int ret;

	if (!path) {
		d->secret_len = 0;
		return 0;
	}
	ret = secret_read(path, "secret_file", d->secret, sizeof(d->secret),
			  &d->secret_len, err, sizeof(err));
	if (ret)
		log_err("%s", err);
	return ret;
}

static void daemon_reload(struct daemon *d)
{
	struct probe_settings *n = calloc(1, sizeof(*n)), *old;
	char err[512];
	int ret;

	daemon_hup = 0;
	ret = n ? d->reload(d->reload_arg, n, err, sizeof(err)) : -ENOMEM;
	if (!ret && sysfs_root_check(n->sysfs_root)) {
		snprintf(err, sizeof(err), "sysfs_root %s is not a directory",
			 n->sysfs_root);
		ret = -ENOENT;
	}
	if (ret) {
		log_err("SIGHUP: configuration not reloaded, keeping the "
			"running one: %s",
			n ? err : "out of memory");
		probe_settings_free(n);
		free(n);
		return;
	}
	pthread_mutex_lock(&d->lock);
	ret = daemon_read_secret(d, n->secret_file);
	if (!ret) {
		old = d->s;
		d->s = n;
	}
	pthread_mutex_unlock(&d->lock);
	if (ret) {
		log_err("SIGHUP: configuration not reloaded, keeping the "
			"running one: secret_file is not usable");
		probe_settings_free(n);
		free(n);
		return;
	}
	if (strcmp(old->spool_dir, n->spool_dir) ||
	    old->responder_port != n->responder_port ||
	    strcmp(old->control_socket, n->control_socket) ||
	    strcmp(old->metrics_listen ? old->metrics_listen : "",
		   n->metrics_listen ? n->metrics_listen : ""))
		log_warn("SIGHUP: spool_dir, responder_port, control_socket "
			 "and metrics_listen take effect at the next start");
	psched_configure(&d->sched, n->duty_cycle, n->duty_window);
	daemon_net_teardown(d);
	if (daemon_net_setup(d))
		log_err("SIGHUP: the collector settings do not work; pushing "
			"nothing until the next reload");
	d->need_register = true;
	probe_settings_free(old);
	free(old);
	log_info("SIGHUP: configuration reloaded");
}

struct timers {
	double counters, push, plan, results, expire, health;
};

/* Poll for control clients until the first timer is due (at most 1 s). */
static void daemon_wait(struct daemon *d, const struct timers *t)
{
	double next = t->counters, now = now_mono();
	struct pollfd pfd = {.fd = d->ctl_fd, .events = POLLIN};
	int ms;

	if (d->base_url) {
		next = next < t->push ? next : t->push;
		next = next < t->plan ? next : t->plan;
		if (spool_count(d->spool))
			next = next < t->results ? next : t->results;
	}
	ms = next > now ? (int)((next - now) * 1000) + 1 : 0;
	if (ms > 1000)
		ms = 1000;
	if (poll(&pfd, d->ctl_fd >= 0 ? 1 : 0, ms) > 0)
		daemon_ctl_serve(d, d->ctl_fd);
}

static void daemon_collector_due(struct daemon *d, struct timers *t, double now)
{
	struct probe_settings *s = d->s;

	if (now >= t->push && d->latest && !d->latest_pushed) {
		if (!daemon_push_counters(d))
			d->latest_pushed = true;
		t->push = now + (double)s->push_interval;
	}
	if (d->need_register || now >= t->plan) {
		int ret = d->need_register ? daemon_register(d)
					   : daemon_fetch_plan(d);

		if (!ret) {
			double every = (double)s->plan_interval;

			/* the collector may add confirmation tests to a plan
			 * and says how often to look for them */
			pthread_mutex_lock(&d->lock);
			if (d->plan_refresh > 0 && d->plan_refresh < every)
				every = d->plan_refresh;
			pthread_mutex_unlock(&d->lock);
			d->need_register = false;
			backoff_reset(&d->reg_bo);
			t->plan = now + every;
		} else {
			pthread_mutex_lock(&d->lock);
			d->plan_stale = true;
			pthread_mutex_unlock(&d->lock);
			t->plan = now + backoff_next(&d->reg_bo);
			if (d->need_register)
				d->need_register = ret != -EPROTO;
		}
	}
	while (spool_count(d->spool) && now >= t->results && !daemon_stop) {
		int ret = daemon_push_results(d);

		if (ret < 0) {
			t->results = now_mono() + backoff_next(&d->bo);
			break;
		}
		backoff_reset(&d->bo);
		if (!ret)
			break;
	}
}

static void daemon_loop(struct daemon *d)
{
	struct timers t = {0};
	double now;

	while (!daemon_stop) {
		if (daemon_hup)
			daemon_reload(d);
		now = now_mono();
		daemon_pause_file(d);
		if (now >= t.counters) {
			daemon_counters(d);
			t.counters = now + (double)d->s->counters_interval;
		}
		if (now >= t.expire) {
			spool_expire(d->spool, now_wall());
			t.expire = now + 60;
		}
		if (d->base_url)
			daemon_collector_due(d, &t, now);
		if (d->base_url && d->s->kube_condition && now >= t.health) {
			daemon_kube_tick(d, now);
			t.health = now + (double)d->s->health_interval;
		}
		daemon_wait(d, &t);
	}
}

static int daemon_host(struct daemon *d)
{
	struct report *r;
	int ret = probe_report_build(d->s, &r);

	if (ret)
		return ret;
	snprintf(d->host, sizeof(d->host), "%s", r->host);
	report_free(r);
	return 0;
}

static int daemon_start(struct daemon *d)
{
	struct probe_settings *s = d->s;
	int ret;

	pthread_mutex_init(&d->lock, NULL);
	dticket_init(&d->tickets);
	psched_init(&d->sched, s->duty_cycle, s->duty_window);
	backoff_init(&d->bo, s->backoff_min, s->backoff_max);
	backoff_init(&d->reg_bo, s->backoff_min, s->backoff_max);
	backoff_init(&d->run_rnd, 1, 1);
	d->lfd = d->ctl_fd = -1;
	ret = daemon_host(d);
	if (!ret)
		ret = daemon_read_secret(d, s->secret_file);
	if (!ret)
		ret = spool_open(s->spool_dir, (uint64_t)s->spool_max_bytes,
				 (double)s->spool_max_age, &d->spool);
	if (!ret)
		ret = daemon_net_setup(d);
	if (!ret && s->control_socket)
		ret = daemon_ctl_listen(s->control_socket, &d->ctl_fd);
	if (!ret)
		daemon_counters(d);
	if (!ret)
		ret = daemon_threads_start(d);
	return ret;
}

static void daemon_teardown(struct daemon *d)
{
	daemon_threads_stop(d);
	if (d->ctl_fd >= 0) {
		close(d->ctl_fd);
		unlink(d->s->control_socket);
	}
	daemon_net_teardown(d);
	daemon_kube_free(d);
	report_free(d->latest);
	if (d->spool)
		log_info("stopped; %zu result(s) wait in the spool",
			 spool_count(d->spool));
	spool_close(d->spool);
	psched_destroy(&d->sched);
	pthread_mutex_destroy(&d->lock);
	probe_settings_free(d->s);
	free(d->s);
}

/*
 * One /metrics scrape: a fresh sysfs read (not d->latest, which the event
 * loop replaces and pushes without a lock, and which is up to
 * counters_interval old), under the lock that guards the settings.
 */
static int daemon_metrics_build(void *arg, struct report **out,
				struct pmetrics_spool *sp)
{
	struct daemon *d = arg;
	struct spool_dropped dr = spool_dropped(d->spool);
	uint64_t mem_bytes;
	size_t mem;
	int ret;

	spool_memory(d->spool, &mem, &mem_bytes);
	sp->in_memory = mem;
	sp->on_disk = spool_count(d->spool) - mem;
	sp->spool_full = dr.spool_full;
	sp->expired = dr.expired;
	sp->unwritable = dr.unwritable;
	pthread_mutex_lock(&d->lock);
	ret = probe_report_build(d->s, out);
	pthread_mutex_unlock(&d->lock);
	return ret;
}

/*
 * The responder's families in /metrics: tests it admitted, refusals by
 * reason (every reason listed, zeros too, so a rate() sees the first),
 * and the responder keys it holds.
 */
static int daemon_metrics_extra(void *arg, struct expo *e)
{
	struct daemon *d = arg;
	char lab[64];

	pthread_mutex_lock(&d->lock);
	expo_family(e, "ibpulse_probe_responder_tests_total", EXPO_COUNTER,
		    "Tests this host's responder admitted.");
	expo_sample_u64(e, NULL, NULL, d->responder_tests);
	expo_family(e, "ibpulse_probe_responder_refused_total", EXPO_COUNTER,
		    "Peers this host's responder refused, by reason.");
	for (int r = 0; r < RESP_REASONS; r++) {
		snprintf(lab, sizeof(lab), "reason=\"%s\"",
			 daemon_resp_reason((enum resp_reason)r));
		expo_sample_u64(e, NULL, lab, d->refused_by[r]);
	}
	expo_family(e, "ibpulse_probe_responder_keys", EXPO_GAUGE,
		    "Responder keys (plan periods) held to check tickets.");
	expo_sample_u64(e, NULL, NULL, d->tickets.n_keys);
	pthread_mutex_unlock(&d->lock);
	return 0;
}

int daemon_run(struct probe_settings *s, daemon_reload_fn reload, void *arg)
{
	struct daemon *d = calloc(1, sizeof(*d));
	struct pmetrics_server *metrics = NULL;
	int ret;

	if (d)
		d->s = malloc(sizeof(*d->s));
	if (!d || !d->s) {
		free(d);
		probe_settings_free(s);
		return -ENOMEM;
	}
	/* The daemon owns the settings from here (a reload swaps them). */
	*d->s = *s;
	memset(s, 0, sizeof(*s));
	d->reload = reload;
	d->reload_arg = arg;
	daemon_stop = 0;
	daemon_hup = 0;
	daemon_signals();
	ret = daemon_start(d);
	if (!ret && d->s->metrics_listen && *d->s->metrics_listen)
		ret = pmetrics_server_new(d->s->metrics_listen,
					  daemon_metrics_build,
					  daemon_metrics_extra, d, &metrics);
	if (!ret) {
		log_info(
			"daemon started: host %s, responder port %u, collector "
			"%s, %zu static peer(s)",
			d->host, d->resp_port,
			d->base_url ? d->base_url : "none", d->s->n_peers);
		daemon_loop(d);
		log_info("stopping");
	}
	pmetrics_server_free(metrics);
	daemon_teardown(d);
	free(d);
	return ret;
}
