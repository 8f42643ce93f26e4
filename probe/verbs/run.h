/* SPDX-License-Identifier: MIT */
/*
 * The measured loops: bandwidth (bw.c) and ping-pong latency (lat.c), run
 * on connected resources by either side. A watchdog (struct vwatch) keeps
 * every loop bounded: a hard deadline, a stall limit (no progress for
 * that long is an error), the control socket (the peer hanging up or
 * speaking mid-test) and the caller's stop flag. Internal to probe/verbs.
 */
#ifndef IBPULSE_VERBS_RUN_H
#define IBPULSE_VERBS_RUN_H

#include "engine.h"

/* How often the watchdog looks at the control socket: 10 ms. */
#define VWATCH_CHECK_NS 10000000ull

struct vwatch {
	int fd;		      /* control socket, -1: none */
	uint64_t deadline_ns; /* hard end */
	uint64_t stall_ns;    /* longest time without progress */
	uint64_t last_progress_ns;
	uint64_t next_check_ns;
	const volatile sig_atomic_t *stop;
};

/*
 * vwatch_check() - 0 to carry on; 1 when the control socket has a message
 * (the peer's DONE, say) and @fd_is_end; else -ETIMEDOUT, -ECONNRESET or
 * -ECANCELED (the stop flag: "aborted") with @why filled.
 */
int vwatch_check(struct vwatch *w, uint64_t now, bool fd_is_end, char *why,
		 size_t len);

struct vrun {
	struct veng *e;
	const struct ctrl_endpoint *remote;
	enum vt_test test;
	uint32_t size;
	uint32_t iters; /* per QP; ignored in duration mode */
	double duration_s;
	double margin_s;
	double interval_s;
	unsigned cq_mod;
	unsigned post_list;
	bool use_inline;
	bool do_send;	   /* bw: this side posts */
	bool do_recv;	   /* bw: this side takes SENDs */
	bool peer_may_end; /* bw: DONE may come before our end */
	struct vwatch *watch;
};

/* Fill @out->error and wc_status from a failed completion. */
void vrun_wc_error(const struct ibv_wc *wc, struct vt_side *out);
/* Thread CPU time in seconds. */
double vrun_cpu_s(void);

int vbw_run(struct vrun *r, struct vt_side *out);
/* @initiator: the client side, which starts each ping-pong round. */
int vlat_run(struct vrun *r, bool initiator, struct vt_side *out);

#endif
