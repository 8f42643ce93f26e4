// SPDX-License-Identifier: MIT
/*
 * Ping-pong latency, after perftest's run_iter_lat_*: the initiator takes a
 * timestamp before each post, and a sample is the difference of
 * consecutive timestamps (one round trip), halved for WRITE and SEND
 * (where the peer answers in kind) and whole for READ and atomics (where
 * the responder's hardware answers). WRITE waits by polling the last byte
 * of the buffer the peer writes; SEND polls the receive queue. UD SEND is
 * SEND over unreliable datagram QPs through an address handle (veng.c).
 * Duration mode (-D): the initiator runs rounds until the duration is up and
 * only rounds wholly inside [t0 + margin, t0 + duration - margin] become
 * samples; an answering responder runs until the client's DONE arrives
 * on the control socket (it looks there as it spins for the next round).
 */
#include "run.h"
#include "vclock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Duration mode keeps at most this many rounds (the run ends there). */
#define LAT_MAX_ROUNDS (1u << 25)

struct latctx {
	struct vrun *r;
	struct vt_side *out;
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	volatile uint8_t *rx_last; /* last byte the peer writes */
	uint8_t *tx_last;
	unsigned spins;
	uint32_t round;	     /* rounds done */
	uint32_t seen_round; /* at the last watchdog check */
	uint32_t max_rounds; /* iters, or the duration-mode ceiling */
	bool duration;
	bool end_on_done; /* a duration-mode responder: DONE ends the run */
	bool time_up;	  /* duration mode: CLOCK_MONOTONIC passed true_end */
	uint64_t true_end;
	uint64_t next_true; /* counter time of the next look at the clock */
	struct vclock clk;
};

/*
 * The run's length is true time, as perftest's alarm(): the counter's 10 ms
 * calibration can be off by a tenth on a loaded host, which would end a
 * -D 2 run at 1.7 s. CLOCK_MONOTONIC is read at the watchdog's cadence (the
 * HPET of the lab's guest costs 19 us a read).
 */

/* Every 256 spins: the clock and the watchdog. */
static int spin_check(struct latctx *c)
{
	uint64_t now;

	if (++c->spins & 255)
		return 0;
	now = vclock_now(&c->clk);
	/* Progress is counted in rounds, so no extra clock per round. */
	if (c->round != c->seen_round) {
		c->seen_round = c->round;
		c->r->watch->last_progress_ns = now;
	}
	if (c->true_end && now >= c->next_true) {
		c->next_true = now + VWATCH_CHECK_NS;
		c->time_up = ctrl_now_ns() >= c->true_end;
	}
	return vwatch_check(c->r->watch, now, c->end_on_done, c->out->error,
			    sizeof(c->out->error));
}

/* Poll @cq for one completion without blocking: 1 got it, 0 none, < 0. */
static int poll_one(struct latctx *c, struct ibv_cq *cq, bool recv)
{
	struct ibv_wc wc;
	int n = ibv_poll_cq(cq, 1, &wc);

	if (n <= 0)
		return n < 0 ? -EIO : 0;
	if (wc.status != IBV_WC_SUCCESS) {
		vrun_wc_error(&wc, c->out);
		return -EIO;
	}
	if (recv) {
		int rc = veng_post_recv(c->r->e, 0);

		if (rc)
			return rc;
	}
	return 1;
}

/*
 * Wait for what this round needs: our own send completion (@want_send),
 * the peer's message (@want_recv: a receive, or for WRITE the byte @v).
 */
static int wait_round(struct latctx *c, bool want_send, bool want_recv,
		      uint8_t v)
{
	bool is_write = c->r->test == VT_WRITE_LAT;
	int rc;

	while (want_send || want_recv) {
		if (want_send) {
			rc = poll_one(c, c->r->e->scq, false);
			if (rc < 0)
				return rc;
			want_send = !rc;
		}
		if (want_recv && is_write) {
			want_recv = *c->rx_last != v;
		} else if (want_recv) {
			rc = poll_one(c, c->r->e->rcq, true);
			if (rc < 0)
				return rc;
			want_recv = !rc;
		}
		rc = spin_check(c);
		if (rc)
			return rc;
	}
	return 0;
}

static int post(struct latctx *c)
{
	struct ibv_send_wr *bad;
	int rc = ibv_post_send(c->r->e->qp[0], &c->wr, &bad);

	if (rc) {
		snprintf(c->out->error, sizeof(c->out->error),
			 "ibv_post_send: %s", strerror(rc));
		return -rc;
	}
	return 0;
}

static void build_wr(struct latctx *c)
{
	struct vrun *r = c->r;
	struct veng *e = r->e;
	uint8_t *tx = e->buf + e->stride / 2;

	c->rx_last = e->buf + r->size - 1;
	c->tx_last = tx + r->size - 1;
	c->sge.addr = (uint64_t)(uintptr_t)tx;
	c->sge.length = r->size;
	c->sge.lkey = e->mr->lkey;
	c->wr.sg_list = &c->sge;
	c->wr.num_sge = 1;
	c->wr.send_flags = IBV_SEND_SIGNALED;
	if (r->use_inline)
		c->wr.send_flags |= IBV_SEND_INLINE;
	switch (r->test) {
	case VT_WRITE_LAT:
		c->wr.opcode = IBV_WR_RDMA_WRITE;
		break;
	case VT_READ_LAT:
		c->wr.opcode = IBV_WR_RDMA_READ;
		break;
	case VT_SEND_LAT:
	case VT_UD_SEND_LAT:
		c->wr.opcode = IBV_WR_SEND;
		break;
	case VT_FADD_LAT:
		c->wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		break;
	default:
		c->wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
		break;
	}
	if (r->test == VT_UD_SEND_LAT) {
		c->wr.wr.ud.ah = e->ah;
		c->wr.wr.ud.remote_qpn = r->remote->qpn[0];
		c->wr.wr.ud.remote_qkey = VENG_QKEY;
	} else if (r->test == VT_FADD_LAT || r->test == VT_CAS_LAT) {
		c->wr.wr.atomic.remote_addr = r->remote->addr;
		c->wr.wr.atomic.rkey = r->remote->rkey;
		c->wr.wr.atomic.compare_add = 1;
	} else {
		c->wr.wr.rdma.remote_addr = r->remote->addr;
		c->wr.wr.rdma.rkey = r->remote->rkey;
	}
}

/*
 * The rounds; @t gets rounds + 1 initiator timestamps. In duration mode
 * the initiator stops at the first round that would start once the
 * duration has passed on CLOCK_MONOTONIC (seen within 10 ms), and a
 * responder (which answers with 1 on DONE) when the client says so.
 * c->round counts the rounds done.
 */
static int lat_loop(struct latctx *c, bool initiator, uint64_t *t)
{
	struct vrun *r = c->r;
	bool answers = vt_test_answers(r->test);
	uint32_t i;
	int rc;

	for (i = 0; i < c->max_rounds; i++) {
		uint8_t v = (uint8_t)(i + 1);

		if (!initiator) {
			rc = wait_round(c, false, true, v);
			if (rc)
				return rc > 0 ? 0 : rc;
		}
		*c->tx_last = v;
		if (initiator) {
			if (c->duration && !i)
				c->true_end = ctrl_now_ns() +
					      (uint64_t)(r->duration_s * 1e9);
			t[i] = vclock_now(&c->clk);
			if (c->time_up)
				return 0;
		}
		rc = post(c);
		if (rc)
			return rc;
		rc = wait_round(c, true, initiator && answers, v);
		if (rc)
			return rc > 0 ? 0 : rc;
		c->round++;
	}
	if (initiator)
		t[i] = vclock_now(&c->clk);
	return 0;
}

/*
 * Samples from @n rounds (@t: n + 1 timestamps); in duration mode only
 * the rounds inside the window. @k turns counter durations into true ones
 * (vclock_drift()). msgs and the rate count every round done.
 */
static int lat_stats(struct vrun *r, const uint64_t *t, size_t n, double k,
		     struct vt_side *out)
{
	bool half = vt_test_answers(r->test);
	size_t first = 0, count = n, i;
	uint64_t *s;
	int rc;

	if (r->duration_s > 0 && n)
		count = vstats_lat_window(
			t, n, t[0] + (uint64_t)(r->margin_s * 1e9 / k),
			t[0] + (uint64_t)((r->duration_s - r->margin_s) * 1e9 /
					  k),
			&first);
	out->msgs = n;
	out->bytes = (uint64_t)n * r->size;
	out->elapsed_s = n ? (double)(t[n] - t[0]) * k / 1e9 : 0;
	if (out->elapsed_s > 0)
		out->msg_rate = (double)n / out->elapsed_s;
	if (!count) {
		snprintf(out->error, sizeof(out->error),
			 "no round ended inside the measured window "
			 "(%u rounds in all)",
			 (unsigned)n);
		return -ENODATA;
	}
	s = malloc(count * sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (i = 0; i < count; i++)
		s[i] = (uint64_t)((double)(t[first + i + 1] - t[first + i]) *
				  k / (half ? 2 : 1));
	rc = vstats_lat_compute(s, count, &out->lat);
	out->has_lat = !rc;
	free(s);
	return rc;
}

int vlat_run(struct vrun *r, bool initiator, struct vt_side *out)
{
	struct latctx c = {.r = r, .out = out};
	double cpu0 = vrun_cpu_s();
	uint64_t *t = NULL;
	int rc;

	build_wr(&c);
	c.duration = r->duration_s > 0;
	c.end_on_done = c.duration && !initiator;
	c.max_rounds = r->iters;
	if (c.duration) {
		double cap = r->duration_s * 2e6 + 1024;

		c.max_rounds =
			cap < LAT_MAX_ROUNDS ? (uint32_t)cap : LAT_MAX_ROUNDS;
		if (!initiator)
			c.max_rounds = UINT32_MAX;
	}
	if (initiator) {
		/* Duration mode: pages are touched only as rounds go. */
		t = malloc(((size_t)c.max_rounds + 1) * sizeof(*t));
		if (!t)
			return -ENOMEM;
	}
	vclock_init(&c.clk);
	r->watch->last_progress_ns = vclock_now(&c.clk);
	rc = lat_loop(&c, initiator, t);
	if (!rc && initiator)
		rc = lat_stats(r, t, c.round, vclock_drift(&c.clk), out);
	out->cpu_s = vrun_cpu_s() - cpu0;
	out->status = rc;
	if (rc && !out->error[0])
		ctrl_strlcpy(out->error, strerror(-rc), sizeof(out->error));
	free(t);
	return rc;
}
