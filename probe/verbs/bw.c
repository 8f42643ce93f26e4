// SPDX-License-Identifier: MIT
/*
 * The bandwidth loop, after perftest's run_iter_bw: keep up to tx_depth
 * work requests in flight per QP, posted post_list at a time, with one
 * completion requested every cq_mod requests; timestamp the first post
 * and every poll that returns completions. In iteration mode
 * BW = bytes / (last completion - first post); in duration mode only
 * completions inside [t0 + margin, t0 + duration - margin] count, over
 * that window's length. Bytes are also binned per sub-interval for the
 * minimum and peak bandwidth. Bidirectional SEND (as ib_send_bw -b): each
 * side sends and keeps its receive queue replenished, and the last SEND
 * of each QP carries immediate data as a stop mark, so a side keeps
 * reposting receives until the peer's whole stream has landed; and a side
 * sends only as many messages as the peer has posted receives (credits:
 * each side RDMA-writes its running count of posted receives into the
 * peer's credit word every rx_depth / 8 reposts), so no receiver-not-ready
 * NAK can happen at either end however the two are scheduled.
 */
#include "run.h"
#include "vclock.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POS_BITS 40
#define POS_MASK ((1ull << POS_BITS) - 1)
#define MAX_BINS 200000
#define CREDIT_TAG (1ull << 63) /* wr_id of a credit write: tag | QP */

/* Bidirectional SEND flow control for one QP (see VENG_CREDIT_BYTES). */
struct bwcredit {
	volatile uint64_t *peer; /* receives the peer posted, in all */
	uint64_t *src;		 /* sources of our credit writes */
	uint64_t posted_rx;	 /* receives we posted, in all */
	uint64_t advertised;	 /* the count the peer last got */
	unsigned inflight;
	unsigned next;
};

struct bwq {
	uint64_t posted;
	uint64_t completed;
	bool last_signaled; /* the newest request asks for a completion */
	bool marked;	    /* the stop mark is posted: nothing follows */
	struct ibv_send_wr *wr;
	struct ibv_sge *sge;
};

/* One direction's accounting: completions counted inside the window. */
struct meter {
	uint64_t t_first;
	uint64_t t_last;
	uint64_t win_start;
	uint64_t win_end;
	uint64_t msgs;
	bool started;
	struct vstats_bins bins;
};

struct bwctx {
	struct vrun *r;
	struct bwq *q;
	uint64_t target; /* posts per QP; UINT64_MAX in duration mode */
	bool duration;
	bool stopping;
	bool marks;	/* bidirectional SEND: stop marks both ways */
	bool peer_done; /* the peer's DONE is on the control socket */
	unsigned rx_marks;
	struct bwcredit *cr; /* with marks: one per QP */
	unsigned cr_step;    /* reposts between credit writes */
	struct meter tx;
	struct meter rx;
	struct vt_side *out;
	struct vclock clk;
};

static enum ibv_wr_opcode bw_opcode(enum vt_test t)
{
	switch (t) {
	case VT_READ_BW:
		return IBV_WR_RDMA_READ;
	case VT_SEND_BW:
		return IBV_WR_SEND;
	case VT_FADD_BW:
		return IBV_WR_ATOMIC_FETCH_AND_ADD;
	case VT_CAS_BW:
		return IBV_WR_ATOMIC_CMP_AND_SWP;
	default:
		return IBV_WR_RDMA_WRITE;
	}
}

static void build_wrs(struct bwctx *c, unsigned i)
{
	struct vrun *r = c->r;
	struct veng *e = r->e;
	enum ibv_wr_opcode op = bw_opcode(r->test);
	uint64_t raddr = r->remote->addr + (uint64_t)i * r->remote->stride;
	unsigned j;

	for (j = 0; j < r->post_list; j++) {
		struct ibv_send_wr *wr = &c->q[i].wr[j];
		struct ibv_sge *sge = &c->q[i].sge[j];

		sge->addr =
			(uint64_t)(uintptr_t)(e->buf + (size_t)i * e->stride +
					      e->stride / 2);
		sge->length = r->size;
		sge->lkey = e->mr->lkey;
		wr->sg_list = sge;
		wr->num_sge = 1;
		wr->opcode = op;
		if (op == IBV_WR_ATOMIC_FETCH_AND_ADD ||
		    op == IBV_WR_ATOMIC_CMP_AND_SWP) {
			wr->wr.atomic.remote_addr = raddr;
			wr->wr.atomic.rkey = r->remote->rkey;
			wr->wr.atomic.compare_add = 1;
		} else if (op != IBV_WR_SEND) {
			wr->wr.rdma.remote_addr = raddr;
			wr->wr.rdma.rkey = r->remote->rkey;
		}
	}
}

/* @mark: the batch's last request is this QP's last, a SEND with imm. */
static int post_batch(struct bwctx *c, unsigned i, unsigned n,
		      bool force_signal, bool mark)
{
	struct vrun *r = c->r;
	struct bwq *q = &c->q[i];
	struct ibv_send_wr *bad;
	unsigned j;
	int rc;

	for (j = 0; j < n; j++) {
		struct ibv_send_wr *wr = &q->wr[j];
		uint64_t pos = q->posted + j + 1;

		wr->send_flags = r->use_inline ? IBV_SEND_INLINE : 0;
		if (pos % r->cq_mod == 0 || pos == c->target ||
		    (force_signal && j == n - 1))
			wr->send_flags |= IBV_SEND_SIGNALED;
		wr->wr_id = (uint64_t)i << POS_BITS | pos;
		wr->next = j + 1 < n ? &q->wr[j + 1] : NULL;
	}
	if (mark) {
		q->wr[n - 1].opcode = IBV_WR_SEND_WITH_IMM;
		q->wr[n - 1].imm_data = htonl(1);
		q->wr[n - 1].send_flags |= IBV_SEND_SIGNALED;
	}
	rc = ibv_post_send(r->e->qp[i], q->wr, &bad);
	if (rc) {
		snprintf(c->out->error, sizeof(c->out->error),
			 "ibv_post_send: %s", strerror(rc));
		return -rc;
	}
	q->posted += n;
	q->last_signaled = q->wr[n - 1].send_flags & IBV_SEND_SIGNALED;
	q->marked = mark;
	return 0;
}

/* How many SENDs QP @i may have posted in all: the peer's receives. */
static uint64_t credit_limit(const struct bwctx *c, unsigned i)
{
	uint64_t v = *c->cr[i].peer;

	/* Before the first credit write: what both sides pre-posted. */
	return v ? v : c->r->e->cfg.rx_depth;
}

/* Tell the peer our count of posted receives once a step piled up. */
static int credit_send(struct bwctx *c, unsigned i)
{
	struct veng *e = c->r->e;
	struct bwcredit *cr = &c->cr[i];
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	uint64_t *src;
	int rc;

	if (cr->posted_rx - cr->advertised < c->cr_step ||
	    cr->inflight >= VENG_CREDIT_WRS)
		return 0;
	/* Each write in flight keeps its own source word until it ends. */
	src = &cr->src[cr->next++ % VENG_CREDIT_WRS];
	*src = cr->posted_rx;
	sge = (struct ibv_sge){
		.addr = (uint64_t)(uintptr_t)src,
		.length = sizeof(*src),
		.lkey = e->mr->lkey,
	};
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = CREDIT_TAG | i;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = veng_remote_credit(c->r->remote, i);
	wr.wr.rdma.rkey = c->r->remote->rkey;
	rc = ibv_post_send(e->qp[i], &wr, &bad);
	if (rc) {
		snprintf(c->out->error, sizeof(c->out->error),
			 "ibv_post_send (credit): %s", strerror(rc));
		return -rc;
	}
	cr->inflight++;
	cr->advertised = cr->posted_rx;
	return 0;
}

/* Credits held back while VENG_CREDIT_WRS writes were in flight. */
static int credit_flush(struct bwctx *c)
{
	unsigned i;
	int rc;

	for (i = 0; i < c->r->e->cfg.qps; i++) {
		rc = credit_send(c, i);
		if (rc)
			return rc;
	}
	return 0;
}

/* Post what the send queue has room for; the tail of a run may be short. */
static int post_some(struct bwctx *c, uint64_t now)
{
	struct vrun *r = c->r;
	unsigned i;
	int rc;

	for (i = 0; i < r->e->cfg.qps; i++) {
		struct bwq *q = &c->q[i];
		uint64_t room = r->e->cfg.tx_depth - (q->posted - q->completed);
		uint64_t n = r->post_list;
		bool force = false;

		if (q->marked)
			continue;
		if (c->stopping) {
			/* Close with a signaled request so the drain ends. */
			if (!c->marks &&
			    (q->last_signaled || q->posted == q->completed))
				continue;
			n = 1;
			force = true;
		} else if (c->target - q->posted < n) {
			n = c->target - q->posted;
		}
		if (!n || room < n)
			continue;
		if (c->marks && q->posted + n > credit_limit(c, i))
			continue;
		if (!c->tx.t_first) {
			c->tx.t_first = now;
			if (!c->duration)
				c->tx.bins.start_ns = now;
		}
		rc = post_batch(c, i, (unsigned)n, force,
				c->marks &&
					(force || q->posted + n == c->target));
		if (rc)
			return rc;
	}
	return 0;
}

static void meter_account(struct bwctx *c, struct meter *m, uint64_t now,
			  uint64_t msgs)
{
	if (c->duration && (now < m->win_start || now > m->win_end))
		return;
	m->msgs += msgs;
	m->t_last = now;
	(void)vstats_bins_add(&m->bins, now, msgs * c->r->size);
}

static int reap_send(struct bwctx *c, uint64_t *now)
{
	struct ibv_wc wc[16];
	int n, k;

	n = ibv_poll_cq(c->r->e->scq, 16, wc);
	if (n <= 0) {
		if (n < 0)
			snprintf(c->out->error, sizeof(c->out->error),
				 "ibv_poll_cq failed");
		return n < 0 ? -EIO : 0;
	}
	*now = vclock_now(&c->clk);
	for (k = 0; k < n; k++) {
		unsigned i = (unsigned)(wc[k].wr_id >> POS_BITS);
		uint64_t pos = wc[k].wr_id & POS_MASK;

		if (wc[k].status != IBV_WC_SUCCESS) {
			vrun_wc_error(&wc[k], c->out);
			return -EIO;
		}
		if (wc[k].wr_id & CREDIT_TAG) {
			i = (unsigned)(wc[k].wr_id & 0xff);
			if (c->cr && i < c->r->e->cfg.qps && c->cr[i].inflight)
				c->cr[i].inflight--;
			continue;
		}
		if (i >= c->r->e->cfg.qps || pos <= c->q[i].completed)
			continue;
		meter_account(c, &c->tx, *now, pos - c->q[i].completed);
		c->q[i].completed = pos;
	}
	c->r->watch->last_progress_ns = *now;
	return n;
}

static int reap_recv(struct bwctx *c, uint64_t *now)
{
	struct ibv_wc wc[16];
	int n, k, rc;

	n = ibv_poll_cq(c->r->e->rcq, 16, wc);
	if (n <= 0)
		return n < 0 ? -EIO : 0;
	*now = vclock_now(&c->clk);
	if (!c->rx.started) {
		c->rx.started = true;
		c->rx.t_first = *now;
		c->rx.win_start = *now + (uint64_t)(c->r->margin_s * 1e9);
		c->rx.win_end =
			*now +
			(uint64_t)((c->r->duration_s - c->r->margin_s) * 1e9);
		if (!c->duration)
			c->rx.win_start = *now;
		c->rx.bins.start_ns = c->rx.win_start;
	}
	for (k = 0; k < n; k++) {
		if (wc[k].status != IBV_WC_SUCCESS) {
			vrun_wc_error(&wc[k], c->out);
			return -EIO;
		}
		meter_account(c, &c->rx, *now, 1);
		if (wc[k].wc_flags & IBV_WC_WITH_IMM)
			c->rx_marks++;
		rc = veng_post_recv(c->r->e, (unsigned)wc[k].wr_id);
		if (rc)
			return rc;
		if (c->cr && wc[k].wr_id < c->r->e->cfg.qps) {
			c->cr[wc[k].wr_id].posted_rx++;
			rc = credit_send(c, (unsigned)wc[k].wr_id);
			if (rc)
				return rc;
		}
	}
	c->r->watch->last_progress_ns = *now;
	return n;
}

static bool send_done(const struct bwctx *c)
{
	unsigned i;

	for (i = 0; i < c->r->e->cfg.qps; i++) {
		if (c->q[i].completed != c->q[i].posted)
			return false;
		if (c->marks && !c->q[i].marked)
			return false;
		if (!c->duration && c->q[i].completed != c->target)
			return false;
	}
	return !c->duration || c->stopping;
}

/* Duration mode: the window opens at first post + margin. */
static void tx_phase(struct bwctx *c, uint64_t now)
{
	struct vrun *r = c->r;

	if (!c->duration || !c->tx.t_first || c->tx.win_end)
		goto stop_check;
	c->tx.win_start = c->tx.t_first + (uint64_t)(r->margin_s * 1e9);
	c->tx.win_end =
		c->tx.t_first + (uint64_t)((r->duration_s - r->margin_s) * 1e9);
	c->tx.bins.start_ns = c->tx.win_start;
stop_check:
	if (c->duration && c->tx.win_end && now >= c->tx.win_end)
		c->stopping = true;
}

/*
 * Whether this side has received all it will: a plain receiver when the
 * sender's DONE came; with stop marks when every QP's mark landed (or the
 * peer gave up and said DONE early).
 */
static bool recv_done(const struct bwctx *c)
{
	if (!c->r->do_recv || c->peer_done)
		return true;
	return c->marks && c->rx_marks >= c->r->e->cfg.qps;
}

static int bw_loop(struct bwctx *c)
{
	struct vrun *r = c->r;
	uint64_t now = vclock_now(&c->clk);
	bool tx_done = !r->do_send;
	/* With stop marks the client's socket only speaks on failure. */
	bool fd_is_end = (r->do_recv && !c->marks) || r->peer_may_end;
	unsigned idle = 0;
	int rc, got;

	for (;;) {
		got = 0;
		if (!tx_done) {
			tx_phase(c, now);
			rc = post_some(c, now);
			if (rc)
				return rc;
		}
		/* With credits, our credit writes complete here too. */
		if (!tx_done || c->cr) {
			rc = reap_send(c, &now);
			if (rc < 0)
				return rc;
			got += rc;
			tx_done = tx_done || send_done(c);
		}
		if (r->do_recv) {
			rc = reap_recv(c, &now);
			if (rc < 0)
				return rc;
			got += rc;
		}
		if (c->cr && (rc = credit_flush(c)))
			return rc;
		if (tx_done && recv_done(c))
			return 0;
		/* The clock costs: completions brought a fresh one. */
		if (!got && (++idle & 15))
			continue;
		if (!got)
			now = vclock_now(&c->clk);
		/*
		 * A receiver runs until the sender says DONE. A bidirectional
		 * sender may hear DONE before its own run ends: it then stops
		 * watching the socket and finishes (the peer's QPs stay up
		 * until our RESULT).
		 */
		rc = vwatch_check(r->watch, now, fd_is_end, c->out->error,
				  sizeof(c->out->error));
		if (rc > 0) {
			c->peer_done = true;
			r->watch->fd = -1;
		} else if (rc) {
			return rc;
		}
	}
}

static void meter_result(struct bwctx *c, const struct meter *m,
			 struct vt_side *out)
{
	uint64_t start = c->duration ? m->win_start : m->t_first;
	uint64_t end = c->duration ? m->win_end : m->t_last;
	double lo, hi, k = vclock_drift(&c->clk);

	/* Bytes are counted up to the last completion seen in the window. */
	if (c->duration && m->t_last < end)
		end = m->t_last > start ? m->t_last : start;
	out->msgs = m->msgs;
	out->bytes = m->msgs * c->r->size;
	/* Counter time to true time over the whole loop. */
	out->elapsed_s = end > start ? (double)(end - start) * k / 1e9 : 0;
	if (out->elapsed_s <= 0)
		return;
	out->bw_avg_Bps = (double)out->bytes / out->elapsed_s;
	out->msg_rate = (double)out->msgs / out->elapsed_s;
	out->bw_min_Bps = out->bw_peak_Bps = out->bw_avg_Bps;
	/* One whole interval says nothing about variation. */
	if (vstats_bins_minmax(&m->bins, end, &lo, &hi) < 2)
		return;
	/* Edge bins can leave the average just outside [min, peak]. */
	lo /= k;
	hi /= k;
	out->bw_min_Bps = lo < out->bw_avg_Bps ? lo : out->bw_avg_Bps;
	out->bw_peak_Bps = hi > out->bw_avg_Bps ? hi : out->bw_avg_Bps;
}

static int bw_setup(struct bwctx *c, struct vrun *r, struct vt_side *out)
{
	unsigned i, n = r->e->cfg.qps;
	uint64_t width = (uint64_t)(r->interval_s * 1e9);

	memset(c, 0, sizeof(*c));
	c->r = r;
	c->out = out;
	c->duration = r->duration_s > 0;
	c->marks = r->test == VT_SEND_BW && r->do_send && r->do_recv;
	c->target = c->duration ? UINT64_MAX : r->iters;
	vstats_bins_init(&c->tx.bins, 0, width, MAX_BINS);
	vstats_bins_init(&c->rx.bins, 0, width, MAX_BINS);
	c->q = calloc(n, sizeof(*c->q));
	if (!c->q)
		return -ENOMEM;
	if (c->marks) {
		c->cr = calloc(n, sizeof(*c->cr));
		if (!c->cr)
			return -ENOMEM;
		c->cr_step =
			r->e->cfg.rx_depth / 8 ? r->e->cfg.rx_depth / 8 : 1;
		for (i = 0; i < n; i++) {
			c->cr[i].peer = veng_credit(r->e, i);
			c->cr[i].src = veng_credit(r->e, i) + 1;
			c->cr[i].posted_rx = r->e->cfg.rx_depth;
			c->cr[i].advertised = r->e->cfg.rx_depth;
		}
	}
	for (i = 0; i < n; i++) {
		c->q[i].wr = calloc(r->post_list, sizeof(*c->q[i].wr));
		c->q[i].sge = calloc(r->post_list, sizeof(*c->q[i].sge));
		if (!c->q[i].wr || !c->q[i].sge)
			return -ENOMEM;
		build_wrs(c, i);
	}
	return 0;
}

static void bw_teardown(struct bwctx *c)
{
	unsigned i;

	for (i = 0; c->q && i < c->r->e->cfg.qps; i++) {
		free(c->q[i].wr);
		free(c->q[i].sge);
	}
	free(c->q);
	free(c->cr);
	vstats_bins_free(&c->tx.bins);
	vstats_bins_free(&c->rx.bins);
}

int vbw_run(struct vrun *r, struct vt_side *out)
{
	struct bwctx c;
	double cpu0 = vrun_cpu_s();
	int rc;

	rc = bw_setup(&c, r, out);
	if (!rc) {
		vclock_init(&c.clk);
		r->watch->last_progress_ns = vclock_now(&c.clk);
		rc = bw_loop(&c);
	}
	if (!c.tx.t_first)
		c.tx.t_first = c.tx.t_last;
	meter_result(&c, r->do_send ? &c.tx : &c.rx, out);
	out->cpu_s = vrun_cpu_s() - cpu0;
	out->status = rc;
	if (rc && !out->error[0])
		ctrl_strlcpy(out->error, strerror(-rc), sizeof(out->error));
	bw_teardown(&c);
	return rc;
}
