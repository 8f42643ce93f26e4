// SPDX-License-Identifier: MIT
/*
 * The connection guard of common/httpd: see httpd_int.h. One mutex over a
 * list of at most max_connections (plus a few) entries; the reaper scans
 * it four times a second, which is nothing next to the requests.
 */
#include "httpd.h"
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

static double guard_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

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
	/* a request running longer than a head may take is a slow one */
	g->slow_after = header_timeout;
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

/* Under the lock: close @hc (MHD notices and cleans up). */
static void guard_doom(struct httpd_guard *g, struct httpd_conn *hc)
{
	hc->doomed = true;
	g->open--;
	shutdown(hc->fd, SHUT_RDWR);
}

/* Under the lock: the connection to close to make room, or NULL. */
static struct httpd_conn *guard_victim(struct httpd_guard *g, double now)
{
	struct httpd_conn *idle = NULL, *slow = NULL;

	for (struct httpd_conn *c = g->head; c; c = c->next) {
		if (c->doomed)
			continue;
		if (!c->busy && (!idle || c->idle_since < idle->idle_since))
			idle = c;
		if (c->busy && now - c->busy_since >= g->slow_after &&
		    (!slow || c->busy_since < slow->busy_since))
			slow = c;
	}
	return idle ? idle : slow;
}

enum MHD_Result guard_accept(void *cls, const struct sockaddr *addr,
			     socklen_t addrlen)
{
	struct httpd_guard *g = cls;
	struct httpd_conn *v = NULL;
	enum MHD_Result ret = MHD_YES;
	char who[64], whom[64] = "";
	double now = guard_now();

	(void)addrlen;
	pthread_mutex_lock(&g->lock);
	if (g->open >= g->max) {
		v = guard_victim(g, now);
		if (v) {
			snprintf(whom, sizeof(whom), "%s", v->addr);
			guard_doom(g, v);
		} else {
			ret = MHD_NO;
		}
	}
	pthread_mutex_unlock(&g->lock);
	if (ret == MHD_YES && !v)
		return ret;
	guard_addr(addr, who, sizeof(who));
	if (v)
		log_once("httpd-evict", 60, LOG_LVL_WARN,
			 "http: %u connections open (max_connections): closed "
			 "one from %s that was idle or slow, to admit %s",
			 g->max, whom, who);
	else
		log_once("httpd-refuse", 60, LOG_LVL_WARN,
			 "http: %u connections open (max_connections), each "
			 "with a request in progress: refused %s",
			 g->max, who);
	return ret;
}

static void guard_add(struct httpd_guard *g, struct MHD_Connection *c,
		      void **socket_context)
{
	const union MHD_ConnectionInfo *fd =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	const union MHD_ConnectionInfo *ca =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	struct httpd_conn *hc = calloc(1, sizeof(*hc));

	*socket_context = hc;
	if (!hc)
		return; /* unguarded, but MHD's own timeout still applies */
	hc->fd = fd ? fd->connect_fd : -1;
	guard_addr(ca ? ca->client_addr : NULL, hc->addr, sizeof(hc->addr));
	hc->idle_since = guard_now();
	pthread_mutex_lock(&g->lock);
	hc->next = g->head;
	if (g->head)
		g->head->prev = hc;
	g->head = hc;
	g->open++;
	pthread_mutex_unlock(&g->lock);
}

static void guard_remove(struct httpd_guard *g, struct httpd_conn *hc)
{
	pthread_mutex_lock(&g->lock);
	if (hc->prev)
		hc->prev->next = hc->next;
	else
		g->head = hc->next;
	if (hc->next)
		hc->next->prev = hc->prev;
	if (!hc->doomed)
		g->open--;
	pthread_mutex_unlock(&g->lock);
	free(hc);
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
	hc->busy_since = guard_now();
	pthread_mutex_unlock(&g->lock);
}

void guard_end(struct httpd_guard *g, struct httpd_conn *hc)
{
	pthread_mutex_lock(&g->lock);
	hc->busy = false;
	hc->served++;
	hc->idle_since = guard_now();
	pthread_mutex_unlock(&g->lock);
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
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += GUARD_TICK_NS;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&g->wake, &g->lock, &until);
		if (g->stopping)
			break;
		n = guard_expire(g, guard_now());
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
	while (g->head) {
		struct httpd_conn *next = g->head->next;

		free(g->head);
		g->head = next;
	}
	pthread_mutex_destroy(&g->lock);
	pthread_cond_destroy(&g->wake);
}
