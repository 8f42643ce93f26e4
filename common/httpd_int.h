/* SPDX-License-Identifier: MIT */
/*
 * Inside common/httpd: the connection guard (httpd_conn.c) that
 * httpd.c hooks into libmicrohttpd. It knows every open connection (from
 * MHD's connection notifications), whether a request is in progress on
 * it and since when, and closes connections by shutting their socket down
 * (MHD then sees the end of the stream and cleans up in its own thread):
 *
 *  - at accept, when max_connections are open: the connection idle the
 *    longest (no request in progress), else the one whose request has run
 *    the longest past slow_after, makes room; with neither, the new one is
 *    refused (MHD closes it at once, it never waits in the backlog);
 *  - every tick: a connection that has not sent a whole request head
 *    within header_timeout of its accept (idle_timeout after its previous
 *    answer), or whose request has run past request_timeout.
 *
 * An entry stays in the list until MHD's "closed" notification, which MHD
 * gives before it closes the descriptor: under the guard's lock a listed
 * descriptor is always that connection's, so shutdown() never hits another
 * socket.
 */
#ifndef IBPULSE_HTTPD_INT_H
#define IBPULSE_HTTPD_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/socket.h>

struct httpd_conn {
	struct httpd_conn *prev, *next;
	int fd;
	double idle_since; /* accept, or the end of the previous request */
	double busy_since; /* start of the request in progress */
	unsigned served;   /* requests answered on this connection */
	bool busy;	   /* a request is in progress */
	bool doomed;	   /* shut down; waiting for MHD to close it */
	char addr[64];	   /* the client, for log lines */
};

struct httpd_guard {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct httpd_conn *head;
	unsigned open; /* listed and not doomed */
	unsigned max;
	double header_timeout, idle_timeout, request_timeout, slow_after;
	bool stopping;
	bool started;
	pthread_t reaper;
};

void guard_init(struct httpd_guard *g, unsigned max, unsigned header_timeout,
		unsigned idle_timeout, unsigned request_timeout);
/* Start the reaper thread: 0 or a negative errno. */
int guard_start(struct httpd_guard *g);
/* Stop and join the reaper; entries stay for MHD's notifications. */
void guard_stop(struct httpd_guard *g);
/* After MHD_stop_daemon(): free what is left. */
void guard_destroy(struct httpd_guard *g);

/* MHD's accept policy: MHD_YES to admit the connection from @addr. */
enum MHD_Result guard_accept(void *cls, const struct sockaddr *addr,
			     socklen_t addrlen);
/* MHD_OPTION_NOTIFY_CONNECTION (cls: the guard). */
void guard_notify(void *cls, struct MHD_Connection *c, void **socket_context,
		  enum MHD_ConnectionNotificationCode code);
/* The guard's entry of @c (NULL when MHD gave none). */
struct httpd_conn *guard_conn(struct MHD_Connection *c);
/* A request starts / ends on @hc (in the connection's own thread). */
void guard_begin(struct httpd_guard *g, struct httpd_conn *hc);
void guard_end(struct httpd_guard *g, struct httpd_conn *hc);

#endif
