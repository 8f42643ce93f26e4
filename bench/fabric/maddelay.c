// SPDX-License-Identifier: MIT
/*
 * maddelay.so: a per-MAD round-trip delay over libumad2sim.so, for the
 * fabric benchmark. ibsim answers at once; a real subnet takes
 * microseconds to milliseconds per MAD (the wire, each switch hop, the
 * PMA's firmware). Preloaded in front of the simulator's shim
 * (LD_PRELOAD=maddelay.so:libumad2sim.so), it holds every answer on a
 * umad descriptor until IBPULSE_MAD_DELAY_US after the request it answers
 * was written, and a lost one (status ETIMEDOUT, what ibsim returns for a
 * dropped MAD) until the request's own timeout_ms, as the kernel would.
 * Answers come back in request order (ibsim serves each client in turn),
 * so the send times are a FIFO per descriptor. A client that waits for
 * each answer pays the delay per MAD; one with many outstanding pays it
 * about once per window.
 *
 * libumad2sim hands out umad descriptors from 1024 to 2047; only those
 * are touched. As an LD_PRELOAD shim it has to keep its state in
 * file-scope variables (there is no context to pass), behind one mutex.
 * Bench tooling only: never installed, never linked into ibpulse.
 */
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/umad.h>

#define FD_LO 1024
#define FD_HI 2048
#define RING 8192
#define MAXMSG 1024

struct held {
	uint64_t release_ns;
	size_t len;
	uint8_t *data;
};

struct fdq {
	uint64_t sent_ns[RING]; /* FIFO of requests not yet answered */
	unsigned timeout_ms[RING];
	unsigned s_head, s_len;
	struct held h[RING]; /* answers read from the shim below, held */
	unsigned h_head, h_len;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct fdq *queues[FD_HI - FD_LO];
static uint64_t delay_ns;
static ssize_t (*next_read)(int, void *, size_t);
static ssize_t (*next_write)(int, const void *, size_t);
static int (*next_poll)(struct pollfd *, nfds_t, int);
static int (*next_close)(int);

static void init(void)
{
	const char *d;

	if (next_read)
		return;
	next_read = (ssize_t(*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");
	next_write = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT,
								  "write");
	next_poll =
		(int (*)(struct pollfd *, nfds_t, int))dlsym(RTLD_NEXT, "poll");
	next_close = (int (*)(int))dlsym(RTLD_NEXT, "close");
	d = getenv("IBPULSE_MAD_DELAY_US");
	delay_ns = d ? strtoull(d, NULL, 10) * 1000ull : 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct fdq *q_of(int fd)
{
	if (fd < FD_LO || fd >= FD_HI)
		return NULL;
	if (!queues[fd - FD_LO])
		queues[fd - FD_LO] = calloc(1, sizeof(struct fdq));
	return queues[fd - FD_LO];
}

/* Pull what the simulator has answered into the held queue. */
static void pull(int fd, struct fdq *q)
{
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		uint8_t buf[MAXMSG];
		struct held *h;
		ssize_t n;
		uint64_t base;
		unsigned tmo = 0;

		if (q->h_len == RING || next_poll(&p, 1, 0) != 1)
			return;
		n = next_read(fd, buf, sizeof(buf));
		if (n <= 0)
			return;
		base = now_ns();
		if (q->s_len) {
			base = q->sent_ns[q->s_head];
			tmo = q->timeout_ms[q->s_head];
			q->s_head = (q->s_head + 1) % RING;
			q->s_len--;
		}
		h = &q->h[(q->h_head + q->h_len) % RING];
		h->data = malloc((size_t)n);
		if (!h->data)
			return;
		memcpy(h->data, buf, (size_t)n);
		h->len = (size_t)n;
		/* a lost MAD costs the requester's timeout, as in the kernel */
		if (umad_status(buf) == ETIMEDOUT && tmo)
			h->release_ns = base + (uint64_t)tmo * 1000000ull;
		else
			h->release_ns = base + delay_ns;
		q->h_len++;
	}
}

ssize_t write(int fd, const void *buf, size_t count)
{
	struct fdq *q;

	init();
	pthread_mutex_lock(&lock);
	q = q_of(fd);
	if (q && q->s_len < RING && count >= (size_t)umad_size()) {
		const struct ib_user_mad *m = buf;
		unsigned i = (q->s_head + q->s_len++) % RING;

		q->sent_ns[i] = now_ns();
		q->timeout_ms[i] = m->timeout_ms;
	}
	pthread_mutex_unlock(&lock);
	return next_write(fd, buf, count);
}

ssize_t read(int fd, void *buf, size_t count)
{
	struct fdq *q;
	ssize_t ret = -EWOULDBLOCK; /* what libumad2sim returns when empty */

	init();
	pthread_mutex_lock(&lock);
	q = q_of(fd);
	if (!q) {
		pthread_mutex_unlock(&lock);
		return next_read(fd, buf, count);
	}
	pull(fd, q);
	if (q->h_len && q->h[q->h_head].release_ns <= now_ns()) {
		struct held *h = &q->h[q->h_head];

		ret = (ssize_t)(h->len < count ? h->len : count);
		memcpy(buf, h->data, (size_t)ret);
		free(h->data);
		q->h_head = (q->h_head + 1) % RING;
		q->h_len--;
	}
	pthread_mutex_unlock(&lock);
	return ret;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000ull),
			      .tv_nsec = (long)(ns % 1000000000ull)};

	nanosleep(&ts, NULL);
}

/* One umad descriptor: ready when the oldest held answer is due. */
static int poll_umad(struct pollfd *p, int timeout)
{
	uint64_t end = timeout < 0 ? UINT64_MAX
				   : now_ns() + (uint64_t)timeout * 1000000ull;
	struct fdq *q;

	for (;;) {
		uint64_t now, due = UINT64_MAX;

		pthread_mutex_lock(&lock);
		q = q_of(p->fd);
		pull(p->fd, q);
		if (q->h_len)
			due = q->h[q->h_head].release_ns;
		pthread_mutex_unlock(&lock);
		now = now_ns();
		if (due <= now) {
			p->revents = POLLIN;
			return 1;
		}
		if (now >= end) {
			p->revents = 0;
			return 0;
		}
		if (due != UINT64_MAX) {
			/* later answers are due later still: sleep to this one
			 */
			sleep_ns((due < end ? due : end) - now);
		} else {
			struct pollfd w = *p;
			uint64_t left = end - now;
			int ms = end == UINT64_MAX
					 ? -1
					 : (int)((left + 999999) / 1000000);

			if (next_poll(&w, 1, ms) < 0)
				return -1;
		}
	}
}

int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	init();
	if (n == 1 && fds[0].fd >= FD_LO && fds[0].fd < FD_HI)
		return poll_umad(fds, timeout);
	return next_poll(fds, n, timeout);
}

int close(int fd)
{
	init();
	if (fd >= FD_LO && fd < FD_HI) {
		struct fdq *q;

		pthread_mutex_lock(&lock);
		q = queues[fd - FD_LO];
		queues[fd - FD_LO] = NULL;
		pthread_mutex_unlock(&lock);
		if (q) {
			for (unsigned i = 0; i < q->h_len; i++)
				free(q->h[(q->h_head + i) % RING].data);
			free(q);
		}
	}
	return next_close(fd);
}
