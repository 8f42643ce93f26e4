// SPDX-License-Identifier: MIT
/*
 * The MAD window (fwin.h). Requests live in one array with a free list and
 * are chained per destination LID; a ring of destinations that may send
 * (something queued, fewer than per_node outstanding, not dead) hands out
 * the next MAD round-robin. Slots hold what is on the wire: the request,
 * the TransactionID of its current try and its deadline. The loop: fill
 * the window, poll() until the earliest deadline, drain every answer,
 * expire what is late, flush dead LIDs' queues.
 */
#include "fwin.h"
#include "now.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/mad.h>
#include <infiniband/umad.h>

#include "log.h"

#define NIL UINT32_MAX
#define SLOT_BITS 12
#define SLOT_MASK ((1u << SLOT_BITS) - 1)
#define GEN_MASK ((1u << (32 - SLOT_BITS)) - 1)

struct wreq {
	struct fwin_req r;
	uint32_t next;
	uint8_t tries; /* sends so far */
};

struct wdest {
	uint16_t lid;
	uint32_t head, tail; /* queued requests */
	size_t queued;
	unsigned inflight;
	unsigned lost_in_row; /* requests that ran out of tries, in a row */
	bool answered;	      /* something came back this run */
	bool dead, ready;
};

struct wslot {
	uint32_t req;
	uint32_t tid;
	uint64_t deadline;
	bool active;
};

struct fwin {
	int fd, agent, smi_agent;
	struct fwin_opts o;
	uint8_t *sendbuf, *recvbuf;
	struct wreq *reqs;
	size_t cap_reqs;
	uint32_t free_req;
	struct wdest *dests;
	size_t n_dests, cap_dests;
	uint32_t *dest_of_lid; /* 65536 entries: dest index + 1, 0 none */
	uint32_t *ring;	       /* cap_dests entries */
	size_t ring_head, ring_len;
	struct wslot *slots;
	uint32_t *free_slots;
	unsigned n_free;
	size_t queued; /* over every destination */
	uint32_t gen;
	struct fwin_stats st;
};

int fwin_open(const char *ca, unsigned port, const struct fwin_opts *o,
	      struct fwin **out)
{
	/*
	 * umad_get_mad() may sit past umad_size() (alignment), and
	 * libumad2sim's read() copies a little more than it is asked to:
	 * room to spare for both.
	 */
	size_t bufsz = (size_t)umad_size() + PMA_MAD_SIZE + 256;
	struct fwin *w;
	int ret = -ENOMEM;

	if (!o->window || o->window > FWIN_MAX_WINDOW || !o->per_node ||
	    !o->timeout_ms)
		return -EINVAL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->o = *o;
	w->fd = -1;
	w->agent = -1;
	w->smi_agent = -1;
	w->free_req = NIL;
	w->sendbuf = calloc(1, bufsz);
	w->recvbuf = calloc(1, bufsz);
	w->dest_of_lid = calloc(65536, sizeof(*w->dest_of_lid));
	w->slots = calloc(o->window, sizeof(*w->slots));
	w->free_slots = calloc(o->window, sizeof(*w->free_slots));
	if (!w->sendbuf || !w->recvbuf || !w->dest_of_lid || !w->slots ||
	    !w->free_slots)
		goto fail;
	for (unsigned i = 0; i < o->window; i++)
		w->free_slots[w->n_free++] = o->window - 1 - i;
	w->fd = umad_open_port(ca, (int)port);
	if (w->fd < 0) {
		ret = w->fd;
		log_err("fabric: umad_open_port(%s, %u): %s", ca, port,
			strerror(-ret));
		goto fail;
	}
	w->agent = umad_register(w->fd, IB_PERFORMANCE_CLASS, 1, 0, NULL);
	if (w->agent < 0) {
		ret = w->agent;
		log_err("fabric: umad_register(PerfMgt): %s", strerror(-ret));
		goto fail;
	}
	*out = w;
	return 0;
fail:
	fwin_close(w);
	return ret;
}

int fwin_smi_open(struct fwin *w)
{
	if (w->smi_agent >= 0)
		return 0;
	w->smi_agent = umad_register(w->fd, IB_SMI_CLASS, 1, 0, NULL);
	if (w->smi_agent < 0) {
		int ret = w->smi_agent;

		log_warn("fabric: umad_register(SubnMgt): %s", strerror(-ret));
		w->smi_agent = -1;
		return ret;
	}
	return 0;
}

void fwin_smi_close(struct fwin *w)
{
	if (w->smi_agent >= 0)
		umad_unregister(w->fd, w->smi_agent);
	w->smi_agent = -1;
}

void fwin_close(struct fwin *w)
{
	if (!w)
		return;
	fwin_smi_close(w);
	if (w->agent >= 0)
		umad_unregister(w->fd, w->agent);
	if (w->fd >= 0)
		umad_close_port(w->fd);
	free(w->sendbuf);
	free(w->recvbuf);
	free(w->reqs);
	free(w->dests);
	free(w->dest_of_lid);
	free(w->ring);
	free(w->slots);
	free(w->free_slots);
	free(w);
}

const struct fwin_stats *fwin_stats(const struct fwin *w)
{
	return &w->st;
}

void fwin_stats_reset(struct fwin *w)
{
	memset(&w->st, 0, sizeof(w->st));
}

/* ------------------------------------------------------------ the ring */

static int ring_grow(struct fwin *w, size_t cap)
{
	uint32_t *r = malloc(cap * sizeof(*r));

	if (!r)
		return -ENOMEM;
	for (size_t i = 0; i < w->ring_len; i++)
		r[i] = w->ring[(w->ring_head + i) % w->cap_dests];
	free(w->ring);
	w->ring = r;
	w->ring_head = 0;
	return 0;
}

/* A destination that may send joins the ring once. */
static void ring_offer(struct fwin *w, uint32_t d)
{
	struct wdest *dst = &w->dests[d];

	if (dst->ready || dst->dead || !dst->queued ||
	    dst->inflight >= w->o.per_node)
		return;
	dst->ready = true;
	w->ring[(w->ring_head + w->ring_len++) % w->cap_dests] = d;
}

static uint32_t ring_pop(struct fwin *w)
{
	uint32_t d = w->ring[w->ring_head];

	w->ring_head = (w->ring_head + 1) % w->cap_dests;
	w->ring_len--;
	w->dests[d].ready = false;
	return d;
}

/* ------------------------------------------------------------ queueing */

static int dest_get(struct fwin *w, uint16_t lid, uint32_t *out)
{
	struct wdest *d;

	if (w->dest_of_lid[lid]) {
		*out = w->dest_of_lid[lid] - 1;
		return 0;
	}
	if (w->n_dests == w->cap_dests) {
		size_t cap = w->cap_dests ? 2 * w->cap_dests : 64;

		d = realloc(w->dests, cap * sizeof(*d));
		if (!d)
			return -ENOMEM;
		w->dests = d;
		if (ring_grow(w, cap))
			return -ENOMEM;
		w->cap_dests = cap;
	}
	d = &w->dests[w->n_dests];
	memset(d, 0, sizeof(*d));
	d->lid = lid;
	d->head = d->tail = NIL;
	*out = (uint32_t)w->n_dests;
	w->dest_of_lid[lid] = (uint32_t)++w->n_dests;
	return 0;
}

static int req_alloc(struct fwin *w, uint32_t *out)
{
	if (w->free_req == NIL) {
		size_t cap = w->cap_reqs ? 2 * w->cap_reqs : 1024;
		struct wreq *r;

		if (cap > NIL / 2)
			return -ENOMEM;
		r = realloc(w->reqs, cap * sizeof(*r));
		if (!r)
			return -ENOMEM;
		w->reqs = r;
		for (size_t i = cap; i-- > w->cap_reqs;) {
			r[i].next = w->free_req;
			w->free_req = (uint32_t)i;
		}
		w->cap_reqs = cap;
	}
	*out = w->free_req;
	w->free_req = w->reqs[*out].next;
	return 0;
}

static void req_free(struct fwin *w, uint32_t i)
{
	w->reqs[i].next = w->free_req;
	w->free_req = i;
}

int fwin_submit(struct fwin *w, const struct fwin_req *r)
{
	uint32_t d, i;
	struct wdest *dst;
	int ret;

	if (r->cls == FWIN_SMP_LFT && w->smi_agent < 0)
		return -EOPNOTSUPP;
	ret = dest_get(w, r->lid, &d);
	if (!ret)
		ret = req_alloc(w, &i);
	if (ret)
		return ret;
	w->reqs[i].r = *r;
	w->reqs[i].next = NIL;
	w->reqs[i].tries = 0;
	dst = &w->dests[d];
	if (dst->tail == NIL)
		dst->head = i;
	else
		w->reqs[dst->tail].next = i;
	dst->tail = i;
	dst->queued++;
	w->queued++;
	ring_offer(w, d);
	return 0;
}

static uint32_t dest_pop(struct fwin *w, struct wdest *dst)
{
	uint32_t i = dst->head;

	dst->head = w->reqs[i].next;
	if (dst->head == NIL)
		dst->tail = NIL;
	dst->queued--;
	w->queued--;
	return i;
}

/* ----------------------------------------------------------- the wire */

/* One try of slot @s's request: a fresh TransactionID and deadline. */
static void slot_send(struct fwin *w, uint32_t s, uint64_t now)
{
	struct wslot *sl = &w->slots[s];
	struct wreq *q = &w->reqs[sl->req];
	uint8_t *mad = umad_get_mad(w->sendbuf);

	w->gen = (w->gen + 1) & GEN_MASK;
	sl->tid = (w->gen << SLOT_BITS) | s;
	sl->deadline = now + (uint64_t)w->o.timeout_ms * 1000000u;
	if (q->r.cls == FWIN_SMP_LFT) {
		/* an SMP to the switch's SMA: QP0, no Q_Key */
		smp_encode_lft_get(mad, q->r.block, sl->tid);
		umad_set_addr(w->sendbuf, q->r.lid, 0, 0, 0);
	} else {
		if (q->r.set)
			pma_encode_reset(mad, q->r.kind, q->r.port, sl->tid);
		else
			pma_encode_get(mad, q->r.kind, q->r.port, sl->tid);
		umad_set_addr(w->sendbuf, q->r.lid, 1, 0, IB_DEFAULT_QP1_QKEY);
	}
	umad_set_pkey(w->sendbuf, 0);
	q->tries++;
	w->st.sent++;
	if (umad_send(w->fd, q->r.cls == FWIN_SMP_LFT ? w->smi_agent : w->agent,
		      w->sendbuf, PMA_MAD_SIZE, (int)w->o.timeout_ms, 0) < 0) {
		/* a failed write is a try that got no answer: expire now */
		log_debug("fabric: umad_send to LID %u failed", q->r.lid);
		sl->deadline = now;
	}
}

static void fill(struct fwin *w)
{
	uint64_t now = now_mono_ns();

	while (w->n_free && w->ring_len) {
		uint32_t d = ring_pop(w), s;

		/* a LID that died while waiting in the ring has nothing left */
		if (w->dests[d].dead || !w->dests[d].queued ||
		    w->dests[d].inflight >= w->o.per_node)
			continue;
		s = w->free_slots[--w->n_free];
		w->slots[s].req = dest_pop(w, &w->dests[d]);
		w->slots[s].active = true;
		w->dests[d].inflight++;
		slot_send(w, s, now);
		ring_offer(w, d);
	}
}

/* Slot @s is done: free it, then tell the caller. */
static void complete(struct fwin *w, uint32_t s, int status, const uint8_t *mad,
		     fwin_done_fn done, void *arg)
{
	struct wslot *sl = &w->slots[s];
	struct fwin_req r = w->reqs[sl->req].r;
	uint32_t d = w->dest_of_lid[r.lid] - 1;

	req_free(w, sl->req);
	sl->active = false;
	w->free_slots[w->n_free++] = s;
	w->dests[d].inflight--;
	ring_offer(w, d);
	done(arg, &r, status, mad);
}

/* A try of slot @s got no (usable) answer: resend, or give the LID up. */
static void try_failed(struct fwin *w, uint32_t s, int status,
		       fwin_done_fn done, void *arg)
{
	struct wreq *q = &w->reqs[w->slots[s].req];
	struct wdest *dst;

	if (q->tries <= w->o.retries) {
		w->st.retries++;
		slot_send(w, s, now_mono_ns());
		return;
	}
	dst = &w->dests[w->dest_of_lid[q->r.lid] - 1];
	/*
	 * Dead: it never answered this run, or it stopped (two requests in
	 * a row ran out of tries). One unlucky MAD on a lossy path is not
	 * enough to give up a switch's other ports.
	 */
	if (status == -ETIMEDOUT && !dst->dead &&
	    (!dst->answered || ++dst->lost_in_row >= 2)) {
		dst->dead = true;
		w->st.dead_lids++;
		log_debug("fabric: LID %u does not answer: giving it up",
			  q->r.lid);
	}
	complete(w, s, status, NULL, done, arg);
}

static void handle(struct fwin *w, fwin_done_fn done, void *arg)
{
	const uint8_t *mad = umad_get_mad(w->recvbuf);
	uint32_t tid = pma_tid32(mad), s = tid & SLOT_MASK;
	const struct fwin_req *q;
	struct wdest *dst;
	unsigned mstatus;
	int ret;

	if (s >= w->o.window || !w->slots[s].active || w->slots[s].tid != tid) {
		w->st.stale++;
		return;
	}
	if (umad_status(w->recvbuf)) {
		/* the kernel's (or the simulator's) "no answer in time" */
		w->st.timeouts++;
		try_failed(w, s, -ETIMEDOUT, done, arg);
		return;
	}
	q = &w->reqs[w->slots[s].req].r;
	dst = &w->dests[w->dest_of_lid[q->lid] - 1];
	dst->answered = true;
	dst->lost_in_row = 0;
	if (q->cls == FWIN_SMP_LFT)
		ret = smp_check_lft(mad, q->block, &mstatus);
	else
		ret = pma_check_response(mad, q->kind, &mstatus);
	if (ret == -EBUSY) {
		w->st.errors++;
		try_failed(w, s, ret, done, arg);
	} else {
		if (ret)
			w->st.errors++;
		complete(w, s, ret, mad, done, arg);
	}
}

static void drain(struct fwin *w, fwin_done_fn done, void *arg)
{
	for (;;) {
		int len = PMA_MAD_SIZE;

		if (umad_recv(w->fd, w->recvbuf, &len, 0) < 0)
			return;
		if (len < IB_PC_DATA_OFFS) {
			w->st.stale++;
			continue;
		}
		handle(w, done, arg);
	}
}

/* Expire late tries; returns ms until the next deadline (-1: none). */
static int expire(struct fwin *w, fwin_done_fn done, void *arg)
{
	uint64_t now = now_mono_ns(), next = UINT64_MAX;

	for (uint32_t s = 0; s < w->o.window; s++) {
		if (!w->slots[s].active)
			continue;
		if (w->slots[s].deadline <= now) {
			w->st.timeouts++;
			try_failed(w, s, -ETIMEDOUT, done, arg);
		}
		if (w->slots[s].active && w->slots[s].deadline < next)
			next = w->slots[s].deadline;
	}
	if (next == UINT64_MAX)
		return -1;
	now = now_mono_ns();
	return next <= now ? 0 : (int)((next - now + 999999) / 1000000);
}

/* Fail what dead LIDs still have queued (callbacks may queue more). */
static void flush_dead(struct fwin *w, fwin_done_fn done, void *arg)
{
	bool again = true;

	while (again) {
		again = false;
		for (size_t d = 0; d < w->n_dests; d++) {
			struct wdest *dst = &w->dests[d];

			while (dst->dead && dst->queued) {
				uint32_t i = dest_pop(w, dst);
				struct fwin_req r = w->reqs[i].r;

				req_free(w, i);
				w->st.unreachable++;
				done(arg, &r, -EHOSTUNREACH, NULL);
				dst = &w->dests[d];
				again = true;
			}
		}
	}
}

static bool any_dead_queued(const struct fwin *w)
{
	for (size_t d = 0; d < w->n_dests; d++)
		if (w->dests[d].dead && w->dests[d].queued)
			return true;
	return false;
}

/* Drop everything (a stop): no callbacks. */
static void drop_all(struct fwin *w)
{
	for (uint32_t s = 0; s < w->o.window; s++) {
		if (!w->slots[s].active)
			continue;
		req_free(w, w->slots[s].req);
		w->slots[s].active = false;
		w->free_slots[w->n_free++] = s;
	}
	for (size_t d = 0; d < w->n_dests; d++) {
		struct wdest *dst = &w->dests[d];

		while (dst->queued)
			req_free(w, dest_pop(w, dst));
		dst->inflight = 0;
		dst->ready = false;
	}
	w->ring_len = 0;
}

int fwin_run(struct fwin *w, fwin_done_fn done, void *arg,
	     const volatile sig_atomic_t *stop)
{
	for (size_t d = 0; d < w->n_dests; d++) {
		w->dests[d].dead = false;
		w->dests[d].answered = false;
		w->dests[d].lost_in_row = 0;
		ring_offer(w, (uint32_t)d);
	}
	while (w->queued || w->n_free < w->o.window) {
		struct pollfd pfd = {.fd = w->fd, .events = POLLIN};
		int wait;

		if (stop && *stop) {
			drop_all(w);
			return -ECANCELED;
		}
		fill(w);
		if (w->n_free == w->o.window && w->queued && !w->ring_len &&
		    !any_dead_queued(w)) {
			log_err("fabric: %zu MADs queued but none can be "
				"sent",
				w->queued);
			drop_all(w);
			return -EIO;
		}
		wait = expire(w, done, arg);
		flush_dead(w, done, arg);
		if (w->n_free == w->o.window)
			continue;
		if (wait < 0 || wait > 100)
			wait = 100; /* look at the stop flag now and then */
		if (poll(&pfd, 1, wait) < 0 && errno != EINTR) {
			log_err("fabric: poll on the umad port: %s",
				strerror(errno));
			drop_all(w);
			return -EIO;
		}
		drain(w, done, arg);
		expire(w, done, arg);
		flush_dead(w, done, arg);
	}
	return 0;
}
