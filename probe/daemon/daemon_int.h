/* SPDX-License-Identifier: MIT */
/*
 * Internals shared by the daemon's files: daemon.c (start, event loop,
 * signals), daemon_net.c (the collector), daemon_run.c (the test runner
 * and the responder), daemon_ctl.c (the control socket).
 *
 * Threads: the event loop (main), the runner, the responder's accept
 * loop (vt_serve_loop) and one thread per peer's connection. @lock guards the
 * settings pointer, the plan and the statistics; sched and spool lock
 * themselves.
 */
#ifndef IBPULSE_DAEMON_INT_H
#define IBPULSE_DAEMON_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "backoff.h"
#include "daemon.h"
#include "dtest.h"
#include "dticket.h"
#include "push.h"
#include "psched.h"
#include "report_build.h"
#include "spool.h"

struct kube;

#define DAEMON_MAX_PLAN 1024
#define DAEMON_MAX_DEVICES 16
#define DAEMON_MAX_RESP 8 /* peers' connections served at once */

/* Set by the signal handlers, read by every thread. */
extern volatile sig_atomic_t daemon_stop;

/* Why the responder refused a peer (status and /metrics count each). */
enum resp_reason {
	RESP_UNAUTHENTICATED, /* no ticket, no secret, not responder_open */
	RESP_AUTH_FAILED,     /* a MAC (secret or ticket) did not check out */
	RESP_NO_KEY,	      /* a ticket for a period we hold no key for */
	RESP_EXPIRED,	      /* a ticket outside its slot */
	RESP_REPLAYED,	      /* a ticket used before */
	RESP_BUSY,	      /* port busy, duty cycle, too many tickets */
	RESP_PAUSED,
	RESP_NO_PORT,  /* a port we lack or that is not ACTIVE */
	RESP_LIMITS,   /* size, QPs, duration, iterations */
	RESP_PROTOCOL, /* a bad, unknown or unfinished handshake */
	RESP_OTHER,
	RESP_REASONS,
};

/* "unauthenticated", "auth_failed", ... as in status and /metrics. */
const char *daemon_resp_reason(enum resp_reason r);

struct dplan {
	struct dtest_job job;
	double start_at; /* not_before plus our jitter, epoch seconds */
	bool done;
};

struct daemon {
	pthread_mutex_t lock;
	struct probe_settings *s;
	daemon_reload_fn reload;
	void *reload_arg;
	char host[256];
	char *base_url; /* collector's, without /api/v1/...; NULL: none */

	struct psched sched;
	struct spool *spool;
	struct backoff bo;	/* results push retries */
	struct backoff reg_bo;	/* register/plan retries */
	struct backoff run_rnd; /* jitter draws (runner) */

	struct push *p_report, *p_register, *p_plan, *p_results;
	struct report *latest; /* newest counters, not yet pushed */
	bool latest_pushed;
	uint64_t ports_sig;
	bool need_register;

	struct dplan plan[DAEMON_MAX_PLAN];
	size_t n_plan;
	bool have_plan;
	double plan_period;  /* seconds, from the plan; 0 unknown */
	double plan_refresh; /* the collector's fetch interval; 0 unknown */
	bool plan_stale;     /* the last register/plan request failed */

	/* Static peers and self-test rotation (runner only). */
	size_t rr_next;
	double next_static, next_selftest;
	size_t selftest_next;

	pthread_t runner, responder;
	pthread_cond_t wake;
	bool runner_started, responder_started;
	int lfd, ctl_fd;
	unsigned resp_port;
	struct vt_serve_cfg resp_cfg; /* the loop's; clients get fresh copies */

	/* The shared secret of secret_file (both roles); len 0: none. */
	uint8_t secret[256];
	size_t secret_len;
	/* The responder keys from our plans and the tickets spent. */
	struct dticket tickets;

	/* Statistics for status. */
	uint64_t tests_run, tests_busy, tests_failed, responder_tests;
	uint64_t responder_refused, results_sent;
	uint64_t refused_by[RESP_REASONS];
	char running[160]; /* the test running now, "" */

	/* The node condition (daemon_kube.c); NULL until first used. */
	struct kube *kube;
	double kube_beat; /* when it was last written (monotonic) */
};

/* Read @path's secret into @d (0 with no path); under d->lock. */
int daemon_read_secret(struct daemon *d, const char *path);

/* daemon_kube.c: publish the collector's verdict on the Node, and free */
void daemon_kube_tick(struct daemon *d, double now);
void daemon_kube_free(struct daemon *d);

/* daemon_net.c */
int daemon_net_setup(struct daemon *d);
void daemon_net_teardown(struct daemon *d);
int daemon_push_counters(struct daemon *d);
int daemon_register(struct daemon *d);
int daemon_fetch_plan(struct daemon *d);
/* Send one batch of spooled results; returns 1 when more wait, 0 when
 * the spool is empty, negative errno on a retryable failure. */
int daemon_push_results(struct daemon *d);

/* daemon_run.c */
int daemon_threads_start(struct daemon *d);
void daemon_threads_stop(struct daemon *d);

/* daemon_ctl.c */
int daemon_ctl_listen(const char *path, int *fd_out);
void daemon_ctl_serve(struct daemon *d, int lfd);

#endif
