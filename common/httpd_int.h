/* SPDX-License-Identifier: MIT */
/*
 * Inside common/httpd: the connection guard (httpd_conn.c) that
 * httpd.c hooks into libmicrohttpd. It knows every open connection (from
 * MHD's connection notifications), whether a request is in progress on
 * it and since when, and closes connections by shutting their socket down
 * (MHD then sees the end of the stream and cleans up in its own thread):
 *
 *  - at accept, when max_connections are open, one connection makes room:
 *    first one that never completed a request (oldest first: a client
 *    that connected and sent nothing or trickles a head), then one idle
 *    between keep-alive requests (from the address with the most
 *    connections, then idle the longest), never one with a request in
 *    progress (request_timeout ends those; a request whose head the front
 *    passed to MHD is in progress, handler or not). A served client from an
 *    address with few connections is the last to go: a flood of new
 *    connections evicts itself, not the clients it should crowd out. With
 *    no such connection the new one is refused (MHD closes it at once, it
 *    never waits in the backlog);
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

#include <microhttpd.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct httpd_conn {
	struct httpd_conn *prev, *next;
	int fd;	       /* what a shutdown closes: the front's end, or MHD's */
	int mhd_fd;    /* MHD's descriptor of it */
	unsigned refs; /* the front and MHD (bound), each while it holds it */
	bool front;    /* admitted by the front, listed until it leaves */
	bool started;  /* MHD started it (a descriptor number is reused) */
	bool bound;    /* MHD started it and has not closed it */
	bool linked;   /* in the guard's list */
	bool waiting;  /* the front waits for a request's end: tell it */
	double idle_since; /* accept, or the end of the previous request */
	double busy_since; /* start of the request in progress */
	unsigned served;   /* requests answered on this connection */
	unsigned peers;	   /* open connections from addr, this one too */
	bool busy;	   /* a request is in progress */
	bool pending;	   /* its head passed the front, no handler yet */
	bool doomed;	   /* shut down; waiting for MHD to close it */
	char addr[64];	   /* the client, for log lines */
};

struct httpd_guard {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct httpd_conn *head;
	unsigned open; /* listed and not doomed */
	unsigned max;
	double header_timeout, idle_timeout, request_timeout;
	bool stopping;
	bool started;
	pthread_t reaper;
	/* called under the lock when a request ends on a waiting entry */
	void (*served_cb)(void *arg);
	void *served_arg;
};

void guard_init(struct httpd_guard *g, unsigned max, unsigned header_timeout,
		unsigned idle_timeout, unsigned request_timeout);
/* Start the reaper thread: 0 or a negative errno. */
int guard_start(struct httpd_guard *g);
/* Stop and join the reaper; entries stay for MHD's notifications. */
void guard_stop(struct httpd_guard *g);
/* After MHD_stop_daemon(): free what is left. */
void guard_destroy(struct httpd_guard *g);

/*
 * guard_admit() - the front admits a client from @addr before handing MHD
 * its end @mhd_fd of a socketpair whose other end @fd the front keeps:
 * room is made (see the order above) and the entry listed at once, so a
 * burst of accepts counts each one before MHD starts it. NULL: refused
 * (every connection busy, or out of memory). The front gives it back
 * with guard_leave() before closing @fd.
 */
struct httpd_conn *guard_admit(struct httpd_guard *g, int fd, int mhd_fd,
			       const struct sockaddr *addr);
void guard_leave(struct httpd_guard *g, struct httpd_conn *hc);

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
/*
 * The front passed a whole request head to MHD on @hc: a request is in
 * progress from then on (not evicted), though MHD, slower under a flood
 * than the front's accepts, has not yet called its handler.
 */
void guard_pending(struct httpd_guard *g, struct httpd_conn *hc);
/*
 * Requests MHD completed on @hc; with @wait, guard_end() calls
 * served_cb for @hc from now on (the front waits for one).
 */
unsigned guard_served(struct httpd_guard *g, struct httpd_conn *hc, bool wait);

/*
 * The request framing check of the front (httpd_frame.c): fed the bytes a
 * client sends, in order, it says how many of them are sound and may go
 * on to MHD, or why the request is refused (@status, @reason).
 */
enum frame_state {
	FRAME_HEAD,	  /* a request head, up to its empty line */
	FRAME_BODY,	  /* @left bytes of a Content-Length body */
	FRAME_CHUNK_SIZE, /* a chunk-size line */
	FRAME_CHUNK_DATA, /* @left bytes of a chunk */
	FRAME_CHUNK_END,  /* the line end after a chunk's data */
	FRAME_TRAILER,	  /* trailer lines, up to the empty one */
	FRAME_BAD,	  /* refused: @status, @reason */
};

struct frame {
	enum frame_state state;
	size_t head_max; /* bytes a head may take, its line end included */
	uint64_t left;
	unsigned n_cl;
	unsigned long heads; /* request heads passed */
	bool chunked, http11;
	bool in_body;	 /* refused in a body: MHD has its head */
	unsigned status; /* 400, 413, 414, 431 or 505 when refused */
	char reason[160];
};

void frame_init(struct frame *f, size_t head_max);
/*
 * frame_scan() - go on with the @n bytes at @p (those after what earlier
 * calls validated): *@ok of them are sound. 0 (call again with more
 * bytes once *@ok < @n), or -EPROTO once the request is refused.
 */
int frame_scan(struct frame *f, const char *p, size_t n, size_t *ok);

/*
 * The front (httpd_front.c) for plain HTTP: one thread accepts each
 * client, hands MHD one end of a socketpair (MHD_add_connection() with
 * the client's address, so the guard, the per-address limit and the
 * handlers see the client) and relays both ways, checking the client's
 * bytes with frame_scan() before MHD reads them. A refused request gets
 * its answer from the front, in the server's error format, once MHD has
 * answered what came before it on the connection.
 */
struct front;

int front_start(int listen_fd, struct MHD_Daemon *mhd,
		struct httpd_guard *guard, size_t head_max, bool json_errors,
		struct front **out);
/* Stop accepting (close the listen socket); connections go on. */
void front_quiesce(struct front *f);
/* Stop the thread and close every connection it holds. NULL is fine. */
void front_stop(struct front *f);

#endif
