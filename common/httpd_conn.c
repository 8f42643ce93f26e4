// SPDX-License-Identifier: MIT
/*
 * The connection guard of common/httpd: see httpd_int.h. One mutex over a
 * list of at most max_connections (plus a few) entries; the reaper scans
 * it four times a second, which is nothing next to the requests.
 */
#include "httpd.h"
#include "now.h"
#include "httpd_int.h"
#include "log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GUARD_TICK_NS (250 * 1000 * 1000)

void guard_init(struct httpd_guard *g, unsigned max, unsigned header_timeout,
		unsigned idle_timeout, unsigned request_timeout)
{
	memset(g, 0, sizeof(*g));
	pthread_mutex_init(&g->lock, NULL);
	pthread_cond_init(&g->wake, NULL);
	g->max = max;
	g->header_timeout = header_timeout;
	g->idle_timeout = idle_timeout;
	g->request_timeout = request_timeout;
}

static void guard_addr(const struct sockaddr *sa, char *out, size_t len)
{
	const void *a = NULL;

	if (sa && sa->sa_family == AF_INET)
		a = &((const struct sockaddr_in *)sa)->sin_addr;
	else if (sa && sa->sa_family == AF_INET6)
		a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
	if (!a || !inet_ntop(sa->sa_family, a, out, (socklen_t)len))
		snprintf(out, len, "?");
}

/*
 * Under the lock: @hc's address gains (@d = 1) or loses (-1) a connection;
 * every open connection from it learns the new count. One pass over the
 * list, as the victim's choice is.
 */
static void guard_peers(struct httpd_guard *g, struct httpd_conn *hc, int d)
{
	unsigned n = d > 0 ? 1 : 0;

	for (struct httpd_conn *c = g->head; c; c = c->next) {
		if (c == hc || c->doomed || strcmp(c->addr, hc->addr))
			continue;
		c->peers = d > 0 ? c->peers + 1 : c->peers - 1;
		n++;
	}
	hc->peers = n;
}

/* Under the lock: close @hc (MHD notices and cleans up). */
static void guard_doom(struct httpd_guard *g, struct httpd_conn *hc)
{
	guard_peers(g, hc, -1);
	hc->doomed = true;
	g->open--;
	if (hc->fd >= 0)
		shutdown(hc->fd, SHUT_RDWR);
}

/* Whether @a should go before @b to make room (both idle). */
static bool guard_before(const struct httpd_conn *a, const struct httpd_conn *b)
{
	if (!a->served != !b->served)
		return !a->served; /* never completed a request: first */
	if (a->served && a->peers != b->peers)
		return a->peers > b->peers; /* served: crowded address first */
	return a->idle_since < b->idle_since; /* then the oldest */
}

/*
 * Under the lock: the connection to close to make room, or NULL when
 * each has a request in progress (see httpd_int.h for the order).
 */
static struct httpd_conn *guard_victim(struct httpd_guard *g)
{
	struct httpd_conn *v = NULL;

	for (struct httpd_conn *c = g->head; c; c = c->next)
		if (!c->doomed && !c->busy && !c->pending &&
		    (!v || guard_before(c, v)))
			v = c;
	return v;
}

/*
 * Under the lock: room for one more connection from @who. 0, or -EBUSY
 * when every open connection has a request in progress. Logs outside it.
 */
static int guard_make_room(struct httpd_guard *g, const char *who)
{
	struct httpd_conn *v;
	char whom[96];

	if (g->open < g->max)
		return 0;
	v = guard_victim(g);
	if (!v) {
		pthread_mutex_unlock(&g->lock);
		log_once("httpd-refuse", 60, LOG_LVL_WARN,
			 "http: %u connections open (max_connections), each "
			 "with a request in progress: refused %s",
			 g->max, who);
		pthread_mutex_lock(&g->lock);
		return -EBUSY;
	}
	snprintf(whom, sizeof(whom), "%s (%s)", v->addr,
		 v->served ? "idle after a request" : "no request completed");
	guard_doom(g, v);
	pthread_mutex_unlock(&g->lock);
	log_once("httpd-evict", 60, LOG_LVL_WARN,
		 "http: %u connections open (max_connections): closed one "
		 "from %s, to admit %s",
		 g->max, whom, who);
	pthread_mutex_lock(&g->lock);
	return 0;
}

enum MHD_Result guard_accept(void *cls, const struct sockaddr *addr,
			     socklen_t addrlen)
{
	struct httpd_guard *g = cls;
	char who[64];
	int ret;

	(void)addrlen;
	guard_addr(addr, who, sizeof(who));
	pthread_mutex_lock(&g->lock);
	ret = guard_make_room(g, who);
	pthread_mutex_unlock(&g->lock);
	return ret ? MHD_NO : MHD_YES;
}

/* Under the lock: @hc first in the list, counted open. */
static void guard_link(struct httpd_guard *g, struct httpd_conn *hc)
{
	guard_peers(g, hc, 1);
	hc->next = g->head;
	if (g->head)
		g->head->prev = hc;
	g->head = hc;
	hc->linked = true;
	g->open++;
}

/* Under the lock: out of the list (and of the count, unless doomed). */
static void guard_unlink(struct httpd_guard *g, struct httpd_conn *hc)
{
	if (!hc->linked)
		return;
	if (hc->prev)
		hc->prev->next = hc->next;
	else
		g->head = hc->next;
	if (hc->next)
		hc->next->prev = hc->prev;
	hc->prev = hc->next = NULL;
	hc->linked = false;
	if (!hc->doomed) {
		guard_peers(g, hc, -1);
		g->open--;
	}
}

/* Under the lock: one owner fewer; the last frees @hc. */
static void guard_put(struct httpd_conn *hc)
{
	if (!--hc->refs)
		free(hc);
}

struct httpd_conn *guard_admit(struct httpd_guard *g, int fd, int mhd_fd,
			       const struct sockaddr *addr)
{
	struct httpd_conn *hc = calloc(1, sizeof(*hc));

	if (!hc)
		return NULL;
	guard_addr(addr, hc->addr, sizeof(hc->addr));
	hc->fd = fd;
	hc->mhd_fd = mhd_fd;
	hc->front = true;
	hc->refs = 1;
	hc->idle_since = now_mono();
	pthread_mutex_lock(&g->lock);
	if (guard_make_room(g, hc->addr)) {
		pthread_mutex_unlock(&g->lock);
		free(hc);
		return NULL;
	}
	guard_link(g, hc);
	pthread_mutex_unlock(&g->lock);
	return hc;
}

void guard_leave(struct httpd_guard *g, struct httpd_conn *hc)
{
	pthread_mutex_lock(&g->lock);
	guard_unlink(g, hc);
	hc->fd = -1; /* the front closes it next: never shut down again */
	guard_put(hc);
	pthread_mutex_unlock(&g->lock);
}

/*
 * MHD starts a connection: the front's entry for its descriptor (admitted
 * and listed before MHD had it), else (TLS: MHD accepted it) a new one.
 */
static void guard_add(struct httpd_guard *g, struct MHD_Connection *c,
		      void **socket_context)
{
	const union MHD_ConnectionInfo *fd =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	const union MHD_ConnectionInfo *ca =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	int mfd = fd ? fd->connect_fd : -1;
	struct httpd_conn *hc;

	pthread_mutex_lock(&g->lock);
	for (hc = g->head; hc; hc = hc->next)
		if (hc->front && !hc->started && hc->mhd_fd == mfd)
			break;
	if (hc) {
		hc->bound = hc->started = true;
		hc->refs++;
		*socket_context = hc;
		pthread_mutex_unlock(&g->lock);
		return;
	}
	pthread_mutex_unlock(&g->lock);
	hc = calloc(1, sizeof(*hc));
	*socket_context = hc;
	if (!hc)
		return; /* unguarded, but MHD's own timeout still applies */
	hc->fd = hc->mhd_fd = mfd;
	hc->bound = true;
	hc->refs = 1;
	guard_addr(ca ? ca->client_addr : NULL, hc->addr, sizeof(hc->addr));
	hc->idle_since = now_mono();
	pthread_mutex_lock(&g->lock);
	guard_link(g, hc);
	pthread_mutex_unlock(&g->lock);
}

/* MHD closes: a front's entry stays listed until the front leaves it. */
static void guard_remove(struct httpd_guard *g, struct httpd_conn *hc)
{
	pthread_mutex_lock(&g->lock);
	hc->bound = false;
	if (!hc->front)
		guard_unlink(g, hc);
	guard_put(hc);
	pthread_mutex_unlock(&g->lock);
}

void guard_notify(void *cls, struct MHD_Connection *c, void **socket_context,
		  enum MHD_ConnectionNotificationCode code)
{
	struct httpd_guard *g = cls;

	if (code == MHD_CONNECTION_NOTIFY_STARTED)
		guard_add(g, c, socket_context);
	else if (code == MHD_CONNECTION_NOTIFY_CLOSED && *socket_context) {
		guard_remove(g, *socket_context);
		*socket_context = NULL;
	}
}

struct httpd_conn *guard_conn(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *i =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return i ? i->socket_context : NULL;
}

void guard_begin(struct httpd_guard *g, struct httpd_conn *hc)
{
	pthread_mutex_lock(&g->lock);
	hc->busy = true;
	hc->pending = false;
	hc->busy_since = now_mono();
	pthread_mutex_unlock(&g->lock);
}

void guard_pending(struct httpd_guard *g, struct httpd_conn *hc)
{
	pthread_mutex_lock(&g->lock);
	if (!hc->busy)
		hc->pending = true;
	pthread_mutex_unlock(&g->lock);
}

void guard_end(struct httpd_guard *g, struct httpd_conn *hc)
{
	pthread_mutex_lock(&g->lock);
	hc->busy = hc->pending = false;
	hc->served++;
	hc->idle_since = now_mono();
	if (hc->waiting && g->served_cb) /* under the lock: see front_stop() */
		g->served_cb(g->served_arg);
	pthread_mutex_unlock(&g->lock);
}

unsigned guard_served(struct httpd_guard *g, struct httpd_conn *hc, bool wait)
{
	unsigned n;

	pthread_mutex_lock(&g->lock);
	hc->waiting = wait;
	n = hc->served;
	pthread_mutex_unlock(&g->lock);
	return n;
}

/* Under the lock: close what passed its deadline; how many. */
static unsigned guard_expire(struct httpd_guard *g, double now)
{
	unsigned n = 0;

	for (struct httpd_conn *c = g->head; c; c = c->next) {
		double limit = c->served ? g->idle_timeout : g->header_timeout;

		if (c->doomed)
			continue;
		if ((!c->busy && now - c->idle_since >= limit) ||
		    (c->busy && g->request_timeout > 0 &&
		     now - c->busy_since >= g->request_timeout)) {
			guard_doom(g, c);
			n++;
		}
	}
	return n;
}

static void *guard_main(void *arg)
{
	struct httpd_guard *g = arg;
	struct timespec until;
	unsigned n;

	pthread_mutex_lock(&g->lock);
	while (!g->stopping) {
		until = now_after(CLOCK_REALTIME, GUARD_TICK_NS / 1e9);
		pthread_cond_timedwait(&g->wake, &g->lock, &until);
		if (g->stopping)
			break;
		n = guard_expire(g, now_mono());
		if (n) {
			pthread_mutex_unlock(&g->lock);
			log_once("httpd-expire", 60, LOG_LVL_INFO,
				 "http: closed %u connection(s) past their "
				 "header (%gs), idle (%gs) or request (%gs) "
				 "deadline",
				 n, g->header_timeout, g->idle_timeout,
				 g->request_timeout);
			pthread_mutex_lock(&g->lock);
		}
	}
	pthread_mutex_unlock(&g->lock);
	return NULL;
}

int guard_start(struct httpd_guard *g)
{
	int ret = -pthread_create(&g->reaper, NULL, guard_main, g);

	g->started = ret == 0;
	return ret;
}

void guard_stop(struct httpd_guard *g)
{
	if (!g->started)
		return;
	pthread_mutex_lock(&g->lock);
	g->stopping = true;
	pthread_cond_signal(&g->wake);
	pthread_mutex_unlock(&g->lock);
	pthread_join(g->reaper, NULL);
	g->started = false;
}

void guard_destroy(struct httpd_guard *g)
{
	while (g->head) { /* after the front and MHD stopped: none, or TLS */
		struct httpd_conn *next = g->head->next;

		free(g->head);
		g->head = next;
	}
	pthread_mutex_destroy(&g->lock);
	pthread_cond_destroy(&g->wake);
}
