// SPDX-License-Identifier: MIT
/*
 * The front of common/httpd for plain HTTP (see httpd_int.h): one thread
 * with an edge-triggered epoll accepts clients and relays each one to MHD
 * through a socketpair, so that MHD never reads a byte frame_scan() has
 * not passed. libmicrohttpd 0.9.75 has no hook between reading a head and
 * answering what it cannot parse (HTML pages; a bad Content-Length gets
 * its status line twice), so the only way to answer those in our format
 * is to keep them from it.
 *
 * A refused request: the front stops reading the client, half-closes
 * MHD's side after the sound bytes (MHD answers the requests before it,
 * then closes), relays what MHD sends, then writes its own answer and
 * closes. The guard closes a connection by shutting down MHD's end; the
 * front sees the end of the stream and closes the client's. Buffers are
 * allocated while data waits in them, so an idle connection costs three
 * descriptors and this struct.
 */
#include "buf.h"
#include "httpd_int.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define FRONT_OUT_CAP (64 * 1024) /* MHD -> client, per connection */
/* ... for an answer longer than that: fewer, larger writes to the client
 * (a text /metrics scrape of 190 MB took about 15% less CPU) */
#define FRONT_OUT_MAX (512 * 1024)
#define FRONT_IN_MORE 4096 /* client -> MHD, beyond a whole head */
#define FRONT_EVENTS 128
#define FRONT_ACCEPTS 64 /* per wake-up, so relaying goes on too */

struct front_conn;

/* What an epoll event names: a side of a connection. */
struct front_end {
	struct front_conn *c;
	int side; /* 0: the client, 1: MHD */
};

struct front_conn {
	struct front_conn *prev, *next;
	struct front_end end[2];
	int cfd, pfd;
	struct httpd_conn *hc; /* the guard's entry */
	struct frame fr;
	char *in; /* [0, in_ok) sound, for MHD; [in_ok, in_len) unchecked */
	size_t in_len, in_ok;
	char *out; /* from MHD, for the client: [out_off, out_len) */
	size_t out_len, out_off, out_cap;
	char *err; /* the refusal, written once MHD is done */
	size_t err_len, err_off;
	bool c_eof, p_eof, p_shut, refused;
	bool waiting;	 /* a body refused: for MHD to answer what came first */
	bool mhd_had_it; /* MHD answered the refused request itself */
	bool settle;	 /* after draining MHD's answers, leave its side */
	bool dead;	 /* closed; freed after the events of this wake-up */
};

struct front {
	int lfd, epfd, evfd;
	struct MHD_Daemon *mhd;
	struct httpd_guard *guard;
	size_t head_max, in_cap;
	bool json;
	atomic_int stop, quiesce;
	struct front_conn *head;
	struct front_conn *dead; /* closed in this wake-up, via ->next */
	pthread_t thread;
	bool accept_paused;
	char wake_tag, listen_tag; /* epoll data for the eventfd, the socket */
};

static void front_wake(struct front *f)
{
	uint64_t one = 1;

	if (write(f->evfd, &one, sizeof(one)) < 0)
		log_debug("http: front wake-up: %s", strerror(errno));
}

/* guard_end(), under the guard's lock: a request ended on a waiting one */
static void front_served(void *arg)
{
	front_wake(arg);
}

/*
 * Close @c (closing drops both descriptors from the epoll set); it is
 * freed by front_reap(), as events of this wake-up may still name it.
 */
static void front_close(struct front *f, struct front_conn *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		f->head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	guard_leave(f->guard, c->hc); /* before pfd's number can be reused */
	close(c->cfd);
	close(c->pfd);
	c->dead = true;
	c->next = f->dead;
	f->dead = c;
}

static void front_reap(struct front *f)
{
	while (f->dead) {
		struct front_conn *c = f->dead;

		f->dead = c->next;
		free(c->in);
		free(c->out);
		free(c->err);
		free(c);
	}
}

static const char *front_phrase(unsigned status)
{
	switch (status) {
	case 413:
		return "Content Too Large";
	case 414:
		return "URI Too Long";
	case 431:
		return "Request Header Fields Too Large";
	case 505:
		return "HTTP Version Not Supported";
	default:
		return "Bad Request";
	}
}

/* The refusal of @c's request, in the server's format, into c->err. */
static void front_refuse(struct front *f, struct front_conn *c)
{
	struct buf body, all;
	const char *r = c->fr.reason;
	int ret;

	c->refused = true;
	log_once(c->fr.reason, 60, LOG_LVL_INFO, "http: %u: %s", c->fr.status,
		 c->fr.reason);
	buf_init(&body, 1024);
	if (f->json) {
		ret = buf_add(&body, "{\"error\":\"", 10);
		for (; *r && !ret; r++) /* it may quote the client's bytes */
			if (*r == '"' || *r == '\\')
				ret = buf_printf(&body, "\\%c", *r);
			else
				ret = buf_add(&body, r, 1);
		if (!ret)
			buf_add(&body, "\"}", 2);
	} else {
		buf_printf(&body, "%s\n", r);
	}
	/* a failed append left the body empty: the status says it */
	buf_init(&all, 2048);
	if (!buf_printf(&all,
			"HTTP/1.1 %u %s\r\nConnection: close\r\nContent-Type: "
			"%s\r\nContent-Length: %zu\r\n\r\n",
			c->fr.status, front_phrase(c->fr.status),
			f->json ? "application/json"
				: "text/plain; charset=utf-8",
			body.len))
		buf_add(&all, body.data ? body.data : "", body.len);
	buf_free(&body);
	c->err = buf_steal(&all, &c->err_len);
}

/* Client -> c->in, and the check of what came. -1: close @c. */
static int front_from_client(struct front *f, struct front_conn *c,
			     bool *progress)
{
	unsigned long heads = c->fr.heads;
	size_t ok;
	int ret;

	while (!c->refused && !c->c_eof && c->in_len < f->in_cap) {
		ssize_t n;

		if (!c->in && !(c->in = malloc(f->in_cap)))
			return -1;
		n = read(c->cfd, c->in + c->in_len, f->in_cap - c->in_len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n < 0)
			return -1;
		*progress = true;
		if (!n)
			c->c_eof = true;
		c->in_len += (size_t)n;
	}
	if (c->refused || c->in_len == c->in_ok)
		return 0;
	ret = frame_scan(&c->fr, c->in + c->in_ok, c->in_len - c->in_ok, &ok);
	c->in_ok += ok;
	if (c->fr.heads != heads)
		guard_pending(f->guard, c->hc);
	if (ret) {
		c->in_len = c->in_ok; /* what follows is not MHD's */
		front_refuse(f, c);
		/* a body: MHD must not see the end yet (front_settle()) */
		c->waiting = c->p_shut = c->fr.in_body;
		*progress = true;
	}
	return 0;
}

/*
 * A body refused: MHD has its head and waits for the rest, and told of
 * the end then, MHD 0.9.75 may go on waiting (until connection_timeout).
 * So once MHD has answered every request before it (their bytes are then
 * all in our socket), the front answers and leaves MHD's side, which MHD
 * closes when it notices; if MHD answered the refused request itself
 * (a handler may, before reading the body: 401, 413), MHD closes, and
 * that answer is the one.
 */
static void front_settle(struct front *f, struct front_conn *c, bool *progress)
{
	unsigned served = guard_served(f->guard, c->hc, true);

	if (served + 1 < c->fr.heads)
		return; /* guard_end() wakes the front */
	guard_served(f->guard, c->hc, false);
	c->waiting = false;
	*progress = true;
	if (served >= c->fr.heads) {
		c->mhd_had_it = true;
		return;
	}
	c->in_len = c->in_ok = 0;
	c->p_shut = true;
	c->settle = true; /* drain MHD's answers, then close its side */
}

/* c->in's sound bytes -> MHD; then its end of input, when due. */
static int front_to_mhd(struct front_conn *c, bool *progress)
{
	while (c->in_ok) {
		ssize_t n = write(c->pfd, c->in, c->in_ok);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n < 0) {
			/* MHD closed (it may have answered early: 413): the
			 * rest is not needed, its answer is still to relay */
			c->in_len = c->in_ok = 0;
			c->c_eof = c->p_shut = true;
			*progress = true;
			break;
		}
		memmove(c->in, c->in + n, c->in_len - (size_t)n);
		c->in_len -= (size_t)n;
		c->in_ok -= (size_t)n;
		*progress = true;
	}
	if (!c->in_len) {
		free(c->in);
		c->in = NULL;
	}
	if ((c->refused || (c->c_eof && !c->in_len)) && !c->p_shut) {
		shutdown(c->pfd, SHUT_WR);
		c->p_shut = true;
		*progress = true;
	}
	return 0;
}

/* Room in @c->out: FRONT_OUT_CAP at first, FRONT_OUT_MAX once full. */
static int front_out_room(struct front_conn *c)
{
	size_t cap = c->out ? FRONT_OUT_MAX : FRONT_OUT_CAP;
	char *p;

	if (c->out && c->out_len < c->out_cap)
		return 0;
	p = realloc(c->out, cap);
	if (!p)
		return -1;
	c->out = p;
	c->out_cap = cap;
	return 0;
}

/* MHD -> c->out -> the client. -1: close @c. */
static int front_to_client(struct front_conn *c, bool *progress)
{
	while (!c->p_eof && c->out_len < FRONT_OUT_MAX) {
		ssize_t n;

		if (front_out_room(c))
			return -1;
		n = read(c->pfd, c->out + c->out_len, c->out_cap - c->out_len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n <= 0) {
			c->p_eof = true;
		} else {
			c->out_len += (size_t)n;
		}
		*progress = true;
	}
	if (c->settle && !c->p_eof && c->out_len < FRONT_OUT_MAX) {
		/* read to EAGAIN: every earlier answer is in */
		shutdown(c->pfd, SHUT_RDWR);
		c->p_eof = true;
		*progress = true;
	}
	while (c->out_off < c->out_len) {
		ssize_t n = write(c->cfd, c->out + c->out_off,
				  c->out_len - c->out_off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n < 0)
			return -1; /* the client left */
		c->out_off += (size_t)n;
		*progress = true;
	}
	free(c->out);
	c->out = NULL;
	c->out_len = c->out_off = c->out_cap = 0;
	return 0;
}

/*
 * Once MHD is done: the refusal, if any. Not when a body was refused
 * after MHD answered its request (a handler may answer before reading the
 * body: 401, 413): one request, one answer. 1: all sent, close @c.
 */
static int front_finish(struct front_conn *c, bool *progress)
{
	if (!c->p_eof || c->out_len)
		return 0;
	if (c->mhd_had_it)
		return 1;
	while (c->err && c->err_off < c->err_len) {
		ssize_t n = write(c->cfd, c->err + c->err_off,
				  c->err_len - c->err_off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n < 0)
			return 1;
		c->err_off += (size_t)n;
		*progress = true;
	}
	return 1;
}

/* Everything @c can do now, until nothing moves (epoll is edge-triggered). */
static void front_pump(struct front *f, struct front_conn *c)
{
	bool progress;

	do {
		progress = false;
		if (c->waiting)
			front_settle(f, c, &progress);
		if (front_from_client(f, c, &progress) ||
		    front_to_mhd(c, &progress) ||
		    front_to_client(c, &progress) ||
		    front_finish(c, &progress)) {
			front_close(f, c);
			return;
		}
	} while (progress);
}

/* guard_end() woke the front: the connections waiting for MHD. */
static void front_pump_waiting(struct front *f)
{
	struct front_conn *c = f->head, *next;

	for (; c; c = next) {
		next = c->next;
		if (c->waiting)
			front_pump(f, c);
	}
}

static int front_watch(struct front *f, int fd, void *tag)
{
	struct epoll_event ev = {
		.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET,
		.data.ptr = tag,
	};

	return epoll_ctl(f->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

/* One accepted client: a socketpair, MHD's end handed over. */
static void front_add(struct front *f, int cfd, struct sockaddr_storage *ss,
		      socklen_t len)
{
	struct front_conn *c = calloc(1, sizeof(*c));
	int sv[2];

	if (!c ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0,
		       sv)) {
		log_once("front-socketpair", 60, LOG_LVL_WARN,
			 "http: cannot relay a connection: %s",
			 c ? strerror(errno) : "out of memory");
		free(c);
		close(cfd);
		return;
	}
	c->hc = guard_admit(f->guard, sv[1], sv[0], (struct sockaddr *)ss);
	if (!c->hc) {
		close(sv[0]);
		close(sv[1]);
		close(cfd);
		free(c);
		return;
	}
	/* MHD closes sv[0] itself when it refuses it (per-address limit) */
	if (MHD_add_connection(f->mhd, sv[0], (struct sockaddr *)ss, len) !=
	    MHD_YES) {
		guard_leave(f->guard, c->hc);
		close(sv[1]);
		close(cfd);
		free(c);
		return;
	}
	c->cfd = cfd;
	c->pfd = sv[1];
	c->end[0] = (struct front_end){c, 0};
	c->end[1] = (struct front_end){c, 1};
	frame_init(&c->fr, f->head_max);
	c->next = f->head;
	if (f->head)
		f->head->prev = c;
	f->head = c;
	if (front_watch(f, cfd, &c->end[0]) ||
	    front_watch(f, c->pfd, &c->end[1]))
		front_close(f, c);
	else /* a client sends at once: its head stops it being evicted */
		front_pump(f, c);
}

static void front_accept(struct front *f)
{
	for (int i = 0; i < FRONT_ACCEPTS; i++) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		int fd = accept4(f->lfd, (struct sockaddr *)&ss, &len,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd >= 0) {
			front_add(f, fd, &ss, len);
			continue;
		}
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
		    errno == ENOMEM) {
			/* no descriptor now: let connections close first */
			log_once("front-accept", 60, LOG_LVL_WARN,
				 "http: accept: %s", strerror(errno));
			epoll_ctl(f->epfd, EPOLL_CTL_DEL, f->lfd, NULL);
			f->accept_paused = true;
		}
		return;
	}
}

static void front_listen_again(struct front *f)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &f->listen_tag};

	if (f->accept_paused && f->lfd >= 0 &&
	    !epoll_ctl(f->epfd, EPOLL_CTL_ADD, f->lfd, &ev))
		f->accept_paused = false;
}

static void *front_main(void *arg)
{
	struct front *f = arg;
	struct epoll_event ev[FRONT_EVENTS];

	while (!atomic_load(&f->stop)) {
		int n = epoll_wait(f->epfd, ev, FRONT_EVENTS,
				   f->accept_paused ? 100 : -1);

		if (n < 0 && errno != EINTR)
			break;
		if (atomic_exchange(&f->quiesce, 0) && f->lfd >= 0) {
			close(f->lfd);
			f->lfd = -1;
		}
		for (int i = 0; i < n; i++) {
			void *tag = ev[i].data.ptr;
			uint64_t x;

			if (tag == &f->wake_tag) {
				if (read(f->evfd, &x, sizeof(x)) < 0)
					continue;
				front_pump_waiting(f);
			} else if (tag == &f->listen_tag) {
				if (f->lfd >= 0)
					front_accept(f);
			} else if (!((struct front_end *)tag)->c->dead) {
				front_pump(f, ((struct front_end *)tag)->c);
			}
		}
		front_reap(f);
		if (n <= 0)
			front_listen_again(f);
	}
	return NULL;
}

int front_start(int listen_fd, struct MHD_Daemon *mhd,
		struct httpd_guard *guard, size_t head_max, bool json_errors,
		struct front **out)
{
	struct front *f = calloc(1, sizeof(*f));
	struct epoll_event ev = {.events = EPOLLIN};
	int ret;

	if (!f)
		return -ENOMEM;
	f->lfd = listen_fd;
	f->mhd = mhd;
	f->guard = guard;
	f->head_max = head_max;
	f->in_cap = head_max + FRONT_IN_MORE;
	f->json = json_errors;
	f->epfd = epoll_create1(EPOLL_CLOEXEC);
	f->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ret = f->epfd < 0 || f->evfd < 0 ? -errno : 0;
	ev.data.ptr = &f->wake_tag;
	if (!ret && epoll_ctl(f->epfd, EPOLL_CTL_ADD, f->evfd, &ev))
		ret = -errno;
	ev.data.ptr = &f->listen_tag;
	if (!ret && epoll_ctl(f->epfd, EPOLL_CTL_ADD, f->lfd, &ev))
		ret = -errno;
	if (!ret) {
		pthread_mutex_lock(&guard->lock);
		guard->served_cb = front_served;
		guard->served_arg = f;
		pthread_mutex_unlock(&guard->lock);
		ret = -pthread_create(&f->thread, NULL, front_main, f);
	}
	if (ret) {
		if (f->epfd >= 0)
			close(f->epfd);
		if (f->evfd >= 0)
			close(f->evfd);
		free(f);
		return ret;
	}
	*out = f;
	return 0;
}

void front_quiesce(struct front *f)
{
	if (!f)
		return;
	atomic_store(&f->quiesce, 1);
	front_wake(f);
}

void front_stop(struct front *f)
{
	if (!f)
		return;
	atomic_store(&f->stop, 1);
	front_wake(f);
	pthread_join(f->thread, NULL);
	pthread_mutex_lock(&f->guard->lock); /* MHD's threads still run */
	f->guard->served_cb = NULL;
	pthread_mutex_unlock(&f->guard->lock);
	while (f->head)
		front_close(f, f->head);
	front_reap(f);
	if (f->lfd >= 0)
		close(f->lfd);
	close(f->epfd);
	close(f->evfd);
	free(f);
}
