/* SPDX-License-Identifier: MIT */
/*
 * The ibpulse verbs test engine: RC bandwidth (WRITE, READ, SEND) and
 * ping-pong latency (WRITE, READ, SEND, atomics) between a client and a
 * responder, measured the way perftest measures, with a TCP control
 * channel to exchange QP numbers and both sides' results. The CLI and the
 * daemon call vt_run() on the client side and vt_serve_*() on the
 * responder; nothing here pins CPUs or keeps polling outside a test.
 *
 * This header is the engine's door: code outside probe/verbs/ includes it
 * (and stats.h, which it names) and nothing else of verbs/; engine.h,
 * run.h, ctrl.h, session.h and resolve.h are the engine's own, so verbs/
 * could become its own library by a meson move.
 */
#ifndef IBPULSE_VERBS_VTEST_H
#define IBPULSE_VERBS_VTEST_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stats.h"
#include "ticket.h"

enum vt_test {
	VT_WRITE_BW = 1,
	VT_READ_BW,
	VT_SEND_BW,
	VT_WRITE_LAT,
	VT_READ_LAT,
	VT_SEND_LAT,
	VT_FADD_LAT,
	VT_CAS_LAT,
	VT_FADD_BW,
	VT_CAS_BW,
	VT_UD_SEND_LAT, /* unreliable datagram ping-pong, one MTU at most */
	VT_TEST_MAX = VT_UD_SEND_LAT,
};

enum vt_gid_type {
	VT_GID_IB = 0,
	VT_GID_ROCE_V1 = 1,
	VT_GID_ROCE_V2 = 2,
	VT_GID_UNKNOWN = 3,
};

#define VT_NAME_MAX 64
#define VT_ERR_MAX 256
#define VT_DEFAULT_PORT "18515"
#define VT_PROTO_TICKET 3  /* the control protocol version with tickets */
#define VT_DEV_NAME_MAX 63 /* device name bytes, [A-Za-z0-9_.-] */

/*
 * A planned test's ticket, as the collector's plan gave it to the
 * initiator: the claims (sent in a v3 REQUEST) and the ticket itself, the
 * MAC key of REQUEST and ACCEPT (never sent). common/ticket.h.
 */
struct vt_ticket {
	struct ticket_claims c;
	uint8_t key[TICKET_KEY_LEN];
};

/* What to run. vt_params_default() fills perftest's defaults. */
struct vt_params {
	enum vt_test test;
	char device[VT_NAME_MAX];  /* "": the first device */
	unsigned ib_port;	   /* 1 */
	int gid_index;		   /* -1: use gid_sel, else the default */
	char gid_sel[VT_NAME_MAX]; /* "v2", "v1", "ipv4", "ipv6", "v2-ipv4",
				      address */
	int pkey_index;		   /* -1: use pkey, else index 0 */
	unsigned pkey;		   /* 0: none; else the P_Key value */
	unsigned sl;		   /* 0..15 */
	unsigned tclass;	   /* 0..255 */
	unsigned mtu;		   /* bytes 256..4096; 0: port active MTU */
	unsigned qps;		   /* 1 */
	uint32_t size;		   /* bytes per message */
	unsigned tx_depth;	   /* 0: 128 for bw, 1 for latency */
	uint32_t iters;		   /* 0: test default (5000 bw, 1000 lat) */
	double duration_s;	   /* > 0: duration mode, iters ignored */
	double margin_s;	   /* < 0: duration / 4 at each end */
	int cq_mod;		   /* -1: 100 (1 above 8 KiB) */
	unsigned post_list;	   /* 1 */
	int inline_size;	   /* -1: 0 for bw, 220 for latency */
	bool bidir;
	bool verify;	       /* check a known pattern at the receiver */
	unsigned rd_atomic;    /* 0: the device maximum, as perftest */
	double interval_s;     /* sub-interval for min/peak bandwidth: 0.1 */
	double timeout_s;      /* each control step, and the test's slack: 10 */
	char sysfs_root[256];  /* "/sys" */
	const uint8_t *secret; /* optional shared secret, not owned */
	size_t secret_len;
	/*
	 * Client only, NULL: never. Once set, the measured loop and the
	 * control waits end the test within about 100 ms: status -ECANCELED,
	 * error "aborted".
	 */
	const volatile sig_atomic_t *stop;
	/*
	 * Client only: the responder's port to test against (control
	 * protocol v2); "" and 0: the responder's default.
	 */
	char peer_device[VT_NAME_MAX];
	unsigned peer_ib_port;
	/*
	 * Client only: on InfiniBand, the LID to send to, one of the
	 * responder port's 2^LMC LIDs (with LMC > 0 the subnet manager
	 * routes each over its own path: the collector's plan chooses the
	 * path this way); 0, or a LID outside that range: the responder's
	 * base LID. RoCE ignores it.
	 */
	unsigned dlid;
	/*
	 * Client only, NULL: none. With a ticket the client speaks control
	 * protocol v3 and authenticates with it instead of @secret; its
	 * claims must name peer_device/peer_ib_port as the responder's port.
	 */
	const struct vt_ticket *ticket;
};

/*
 * A port's counters that tell whether anyone else used the link, or how
 * much they rose over a test (vt_portctr_delta). Unset ones are 0.
 */
struct vt_portctr {
	bool has_bytes; /* port_xmit_data/port_rcv_data, in bytes */
	uint64_t xmit_bytes, rcv_bytes;
	bool has_pkts; /* port_*_packets, or hw_counters sent/rcvd_pkts */
	uint64_t xmit_pkts, rcv_pkts;
	bool has_wait;
	uint64_t xmit_wait;
	bool has_cnp; /* np_cnp_sent + rp_cnp_handled + np_ecn_marked... */
	uint64_t cnp;
};

/*
 * vt_portctr_read() - @device/@port's counters under @sysfs_root
 * (counters/ and hw_counters/; data counters turned into bytes). Absent
 * ones stay unset; -ENOENT when the port has none of them.
 */
int vt_portctr_read(const char *sysfs_root, const char *device, unsigned port,
		    struct vt_portctr *c);

/* @d = @after - @before per counter both have; a reset counts 0. */
void vt_portctr_delta(const struct vt_portctr *before,
		      const struct vt_portctr *after, struct vt_portctr *d);

/* What one side measured. */
struct vt_side {
	int status;    /* 0 or negative errno */
	int wc_status; /* enum ibv_wc_status of the first failure, 0 */
	char error[VT_ERR_MAX];
	uint64_t bytes;
	uint64_t msgs;
	double elapsed_s;
	double cpu_s; /* thread CPU time over the test */
	double bw_avg_Bps;
	double bw_peak_Bps; /* highest sub-interval */
	double bw_min_Bps;  /* lowest sub-interval */
	double msg_rate;    /* messages per second */
	bool has_lat;
	struct vstats_lat lat;
};

/* What was actually used, after defaults, resolution and clamping. */
struct vt_used {
	char device[VT_NAME_MAX];
	unsigned ib_port;
	unsigned gid_index;
	enum vt_gid_type gid_type;
	char gid[48]; /* printable form */
	unsigned pkey_index;
	unsigned pkey;
	unsigned mtu; /* bytes */
	unsigned qps, tx_depth, cq_mod, post_list, inline_size, rd_atomic;
	uint32_t size, iters;
	double duration_s, margin_s;
	bool bidir;
	bool verify;
	unsigned remote_gid_index;
	char remote_gid[48];
	unsigned remote_pkey;
	unsigned dlid; /* the LID sent to when vt_params.dlid chose it */
};

struct vt_result {
	enum vt_test test;
	int status; /* 0 when both sides finished cleanly */
	char error[VT_ERR_MAX];
	struct vt_used used;
	struct vt_side local;  /* the client */
	struct vt_side remote; /* the responder's view */
	bool remote_valid;
	/*
	 * Client: the responder's port counter deltas over the test (v2,
	 * when it reads them). Responder: its own.
	 */
	bool has_remote_ctr;
	struct vt_portctr remote_ctr;
	/*
	 * Responder, when it refused the client before admitting it: the
	 * kind of refusal, a static string ("protocol": a bad or unfinished
	 * handshake, "auth": a MAC that did not check out, "ticket": the
	 * ticket hook refused or there is none, "limits", "admit": the
	 * admission hook refused). NULL otherwise.
	 */
	const char *refused;
	/* Client: the responder refused it (a REFUSE; error says why). */
	bool peer_refused;
};

/* Limits a responder enforces before it registers any memory. */
struct vt_limits {
	uint32_t max_size; /* bytes per message */
	unsigned max_qps;
	double max_duration_s;
	uint32_t max_iters;
	unsigned max_concurrent;
};

/* How the client proved itself, before admission. */
enum vt_auth {
	VT_AUTH_NONE = 0, /* no secret here, no ticket */
	VT_AUTH_SECRET,	  /* a MAC with the shared secret */
	VT_AUTH_TICKET,	  /* a MAC with a ticket (v3) */
};

/* What a client asked for, as the admission hook sees it. */
struct vt_serve_ask {
	unsigned version;		/* control protocol */
	char device[VT_NAME_MAX];	/* "": the responder's default */
	unsigned ib_port;		/* 0: the default */
	const struct vt_params *params; /* the run as asked */
	/* v3: the ticket's claims (responder device and port filled in) */
	const struct ticket_claims *ticket;
	enum vt_auth auth; /* for admit(): what was checked */
};

struct vt_serve_cfg;

/*
 * Optional callbacks of a responder; every one may be NULL. They run in
 * the client's thread; @sess is what open() returned (else hooks.arg).
 */
struct vt_serve_hooks {
	void *arg;
	/*
	 * Before the handshake: update @cfg, this client's private copy (a
	 * daemon's reloaded settings), and return per-client state in
	 * *@sess. Non-zero: the client is closed without an answer.
	 */
	int (*open)(void *arg, struct vt_serve_cfg *cfg, void **sess);
	/*
	 * After REQUEST is decoded, authenticated and within the limits,
	 * before any memory is registered: 0 admits and may set
	 * @dev->device and @dev->ib_port to the port to serve on; a
	 * negative errno refuses with the reason in @why (sent as REFUSE).
	 */
	int (*admit)(void *sess, const struct vt_serve_ask *ask,
		     struct vt_params *dev, char *why, size_t len);
	/*
	 * A v3 REQUEST, decoded, before its MAC and the limits are
	 * checked: fill @key with the ticket the collector minted for
	 * ask->ticket (the session's MAC key), or refuse with a negative
	 * errno and the reason in @why. admit() follows only when the MAC
	 * checked out, with ask->auth VT_AUTH_TICKET: spending the ticket
	 * (one use) is admit()'s. NULL: every ticket is refused.
	 */
	int (*ticket)(void *sess, const struct vt_serve_ask *ask,
		      uint8_t key[TICKET_KEY_LEN], char *why, size_t len);
	/*
	 * Read @device/@port's counters: once when the QPs are connected,
	 * once when the client's DONE arrived; the deltas go back in a v2
	 * RESULT. 0 or negative errno (then no counters are sent). NULL:
	 * vt_portctr_read() under dev.sysfs_root.
	 */
	int (*counters)(void *sess, const char *device, unsigned port,
			struct vt_portctr *c);
	/* After the session, admitted or not; frees @sess. */
	void (*close)(void *sess, bool admitted, const struct vt_result *res);
};

struct vt_serve_cfg {
	struct vt_params dev; /* device, port, GID, P_Key, timeouts, secret */
	struct vt_limits limits;
	/* Optional: ends the loop, the tests and every control wait. */
	const volatile sig_atomic_t *stop;
	struct vt_serve_hooks hooks;
};

void vt_params_default(struct vt_params *p);
void vt_limits_default(struct vt_limits *l);

/* "write_bw" <-> VT_WRITE_BW; 0 / NULL when unknown. */
enum vt_test vt_test_parse(const char *name);
const char *vt_test_name(enum vt_test t);
bool vt_test_is_lat(enum vt_test t);
bool vt_test_is_atomic(enum vt_test t);
/* Latency tests whose responder answers each round in kind (ping-pong). */
bool vt_test_answers(enum vt_test t);
/* A UD message fits one MTU: the largest MTU, the path's is checked later. */
#define VT_UD_MAX_SIZE 4096u
const char *vt_gid_type_name(enum vt_gid_type t);

/*
 * vt_params_check() - validate @p; on failure write a message naming the
 * offending field and its valid range into @err. Returns 0 or -EINVAL.
 */
int vt_params_check(const struct vt_params *p, char *err, size_t errlen);

/*
 * vt_params_apply() - the run shape after perftest's defaults and the
 * clamps that keep the loops from stalling (size, iters, tx depth, CQ
 * moderation, post list, inline, margin). Device-dependent fields are
 * filled later by the run.
 */
void vt_params_apply(const struct vt_params *p, struct vt_used *u);

/*
 * vt_run() - run one test against the responder at @host:@port. Fills
 * @res in every case (res->error says what failed); returns res->status.
 */
int vt_run(const struct vt_params *p, const char *host, const char *port,
	   struct vt_result *res);

/*
 * vt_serve_conn() - answer one client on the connected socket @fd: the
 * handshake, limits, the test and the result exchange. Closes nothing;
 * fills @res with this side's view. Returns res->status.
 */
int vt_serve_conn(const struct vt_serve_cfg *cfg, int fd,
		  struct vt_result *res);

/*
 * vt_serve_loop() - accept on @lfd until *cfg->stop, one thread per client
 * up to limits.max_concurrent (more are refused with a reason). @on_result,
 * if set, is called from the client's thread after each test.
 */
int vt_serve_loop(const struct vt_serve_cfg *cfg, int lfd,
		  void (*on_result)(const struct vt_result *res, void *arg),
		  void *arg);

/*
 * vt_listen() - a responder's listening socket on @addr (NULL: every
 * address) and @port ("0": any free one); *@bound is the port bound.
 * 0 or a negative errno.
 */
int vt_listen(const char *addr, const char *port, int *fd, unsigned *bound);

/* A device name as the kernel forms them ([A-Za-z0-9_.-]), path-safe. */
bool vt_dev_name_ok(const char *name);

/* The first RDMA device's name into @name; 0 or -ENODEV. */
int vt_first_device(char *name, size_t len);

/* A work completion status (enum ibv_wc_status) by name. */
const char *vt_wc_status_name(int wc_status);

#endif
