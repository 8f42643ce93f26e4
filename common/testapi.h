/* SPDX-License-Identifier: MIT */
/*
 * The test API codec (docs/api.md, "Test plan and results"): the bodies of
 * POST /api/v1/register (the probe encodes, the collector decodes),
 * GET /api/v1/plan (the collector encodes, the probe decodes) and
 * POST /api/v1/results (the probe encodes, the collector decodes), in one
 * place so both ends of the wire read the same rules. It also holds what
 * more than one room names: the figures of a result (enum, JSON key and
 * column of schema/002_tests.sql's result table in one table) and the
 * outcomes.
 *
 * Decoders are pure functions of the JSON text (jansson, common/jdec.h),
 * unit-tested and fuzzed alone. Every field is checked (type, range,
 * length, character set); a failure names the field by its path, e.g.
 * "results[3].lat_p99_seconds: must be a number in [0, 1e+15]". Unknown
 * keys are ignored, so a newer peer may add fields. Decoded structs own
 * their strings (free with the matching _free); encoders only read theirs.
 * Unknown values are NULL strings, NAN numbers and 0 ports, both ways.
 *
 * Files: testapi.c (figures, outcomes, results), testapi_reg.c
 * (registration), testapi_plan.c (plan); testapi_int.h is theirs alone.
 */
#ifndef IBPULSE_TESTAPI_H
#define IBPULSE_TESTAPI_H

#include <stddef.h>
#include <stdint.h>

struct buf;

#define TESTAPI_VERSION 1
#define TESTAPI_MAX_RESULTS 1000 /* per request */
#define TESTAPI_MAX_NAME 64
#define TESTAPI_MAX_ADDRESS 255 /* a responder's address */
#define TESTAPI_MAX_ERROR 1024	/* result error text */
#define TESTAPI_MAX_PARAMS 8192 /* result params, as compact JSON */
#define TESTAPI_MAX_LABELS 64
#define TESTAPI_MAX_LABEL_VALUE 256
#define TESTAPI_MAX_PROFILES 64
#define TESTAPI_MAX_PORTS 256	 /* per registration */
#define TESTAPI_MAX_PKEYS 256	 /* per port */
#define TESTAPI_MAX_PLAN 1024	 /* plan entries decoded; the rest dropped */
#define TESTAPI_MAX_KEYS 16	 /* responder keys in a plan */
#define TESTAPI_KEY_HEX 64	 /* a ticket or key: 32 bytes in hex */
#define TESTAPI_MAX_TIME 1e11	 /* seconds since the epoch */
#define TESTAPI_MAX_DURATION 1e6 /* seconds */
#define TESTAPI_MAX_FIGURE 1e15	 /* any figure, in its unit */
#define TESTAPI_ERR_MAX 256	 /* why a plan entry was left out */

/*
 * The figures of a result: the enum constant, the JSON key (which is also
 * the column of table result: one name, so a figure cannot be stored under
 * another name than it travels by) and whether a larger value is the worse
 * one (latency, CPU time) or a smaller one (bandwidth, message rate). The
 * SQL lists below are made from this table at compile time.
 */
#define TESTAPI_FIGURES(F)                                                     \
	F(TESTAPI_FIG_BW_AVG, "bw_avg_bytes_per_second", 0)                    \
	F(TESTAPI_FIG_BW_PEAK, "bw_peak_bytes_per_second", 0)                  \
	F(TESTAPI_FIG_BW_MIN, "bw_min_bytes_per_second", 0)                    \
	F(TESTAPI_FIG_MSG_RATE, "msg_rate_per_second", 0)                      \
	F(TESTAPI_FIG_LAT_MIN, "lat_min_seconds", 1)                           \
	F(TESTAPI_FIG_LAT_MEDIAN, "lat_median_seconds", 1)                     \
	F(TESTAPI_FIG_LAT_MEAN, "lat_mean_seconds", 1)                         \
	F(TESTAPI_FIG_LAT_P99, "lat_p99_seconds", 1)                           \
	F(TESTAPI_FIG_LAT_P999, "lat_p999_seconds", 1)                         \
	F(TESTAPI_FIG_LAT_MAX, "lat_max_seconds", 1)                           \
	F(TESTAPI_FIG_LAT_STDEV, "lat_stdev_seconds", 1)                       \
	F(TESTAPI_FIG_CPU, "cpu_seconds", 1)

#define TESTAPI_FIG_ENUM_(e, key, high) e,
enum testapi_fig { TESTAPI_FIGURES(TESTAPI_FIG_ENUM_) TESTAPI_FIG_COUNT };
#undef TESTAPI_FIG_ENUM_

struct testapi_fig_def {
	const char *key;     /* JSON key and SQL column */
	int larger_is_worse; /* 1: latency, CPU; 0: bandwidth, rate */
};
extern const struct testapi_fig_def testapi_figs[TESTAPI_FIG_COUNT];

/*
 * For SQL text: ", bw_avg_bytes_per_second, ..., cpu_seconds" (the
 * columns in enum order) and ", ?, ?, ..." (one anonymous parameter per
 * figure: SQLite numbers each one past the largest before it, so a
 * statement that ends with them binds figure i at that number + 1 + i).
 */
#define TESTAPI_FIG_COLUMN_(e, key, high) ", " key
#define TESTAPI_FIG_PARAM_(e, key, high) ", ?"
#define TESTAPI_FIG_SQL_COLUMNS TESTAPI_FIGURES(TESTAPI_FIG_COLUMN_)
#define TESTAPI_FIG_SQL_PARAMS TESTAPI_FIGURES(TESTAPI_FIG_PARAM_)

/* How a test ended; the names travel and are stored (result.outcome). */
enum testapi_outcome {
	TESTAPI_OK,
	TESTAPI_CONTROL_ERROR,
	TESTAPI_VERBS_ERROR,
	TESTAPI_TIMEOUT,
	TESTAPI_REFUSED,
	TESTAPI_ABORTED,
	TESTAPI_OUTCOMES
};

/* "ok", "control_error", ...; NULL past the table. */
const char *testapi_outcome_name(enum testapi_outcome o);

/* The outcome named @name: 0 with *@out set, or -EINVAL. */
int testapi_outcome_parse(const char *name, enum testapi_outcome *out);

/* ---- Test kinds: what a test measures and where its data flows ---- */

/* The metric that judges a test. */
enum testapi_metric {
	TESTAPI_METRIC_NONE = 0, /* unknown test: judged by its figures */
	TESTAPI_METRIC_BANDWIDTH,
	TESTAPI_METRIC_LATENCY,
};

/* "bandwidth" or "latency", as the database, the API and the metrics spell
 * the metrics; NULL for NONE. */
const char *testapi_metric_name(enum testapi_metric m);

/* The metric named @name: 0 with *@out set, or -EINVAL (NULL or unknown). */
int testapi_metric_parse(const char *name, enum testapi_metric *out);

/* Where a test's data flows (bits): what a route attribution follows. */
#define TESTAPI_FLOW_FORWARD 1u /* initiator to responder (write, send) */
#define TESTAPI_FLOW_REVERSE 2u /* responder to initiator (read) */
#define TESTAPI_FLOW_BOTH 3u	/* round trips, atomics, bidirectional */

/* The verbs operation a test makes (what its wire efficiency depends on). */
enum testapi_op {
	TESTAPI_OP_UNKNOWN = 0,
	TESTAPI_OP_WRITE,
	TESTAPI_OP_READ,
	TESTAPI_OP_SEND, /* RC SEND */
	TESTAPI_OP_ATOMIC,
	TESTAPI_OP_UD_SEND,
};

struct testapi_kind {
	enum testapi_metric metric;
	unsigned flow; /* TESTAPI_FLOW_* */
	enum testapi_op op;
};

/*
 * testapi_test_kind() - the one classifier of test names: *_bw tests are
 * judged on bandwidth, *_lat tests on latency; write and send move data
 * from the initiator to the responder, read the other way, and round
 * trips (every latency test, the atomics) and @bidirectional tests both
 * ways; the operation it makes. Returns 0, or -ENOENT for a name it does
 * not know (then metric NONE, flow BOTH: the caller's safest guess, and op
 * UNKNOWN).
 */
int testapi_test_kind(const char *test, int bidirectional,
		      struct testapi_kind *out);

/*
 * testapi_test_measures() - 1 when a result of @test is judged on metric
 * @m: its kind's metric, or any metric for a test this table does not
 * know (judged by whatever figures it carries).
 */
int testapi_test_measures(const char *test, enum testapi_metric m);

#define TESTAPI_LID_MAX 0xBFFF	  /* the highest unicast LID */
#define TESTAPI_PARAM_DLID "dlid" /* params key: the DLID the test sent to */

/*
 * The typed fields of a result's params (the rest is free JSON the probe
 * adds for the operator's eyes): the message size, QPs, the path MTU,
 * both directions at once, a loopback self-test, and the destination LID
 * the initiator sent to when the plan chose one (LMC > 0; docs/api.md).
 */
struct testapi_params {
	int64_t size, qps, mtu; /* -1: unknown */
	int bidirectional, selftest;
	unsigned dlid; /* 0: not chosen (the responder's base LID) */
};

/*
 * testapi_params_decode() - the typed fields of params @json (a JSON
 * object as text; NULL: all unknown). A field that is absent or out of
 * its range stays unknown, so the params of any older probe decode.
 * Returns 0, or -EINVAL when @json is not a JSON object.
 */
int testapi_params_decode(const char *json, struct testapi_params *out);

/*
 * testapi_params_encode() - the typed fields of @p into JSON object @obj
 * (jansson's json_t), under the keys testapi_params_decode() reads: the
 * unknown ones (-1, a dlid of 0) left out, bidirectional and selftest
 * always. Returns 0 or -ENOMEM.
 */
struct json_t;
int testapi_params_encode(const struct testapi_params *p, struct json_t *obj);

/* ---- POST /api/v1/results ---- */

/* One test result. */
struct testapi_result {
	char *id, *plan_id, *profile, *test;
	double started, duration;
	char *local_device;
	unsigned local_port;
	char *peer_host, *peer_device;
	unsigned peer_port;
	enum testapi_outcome outcome;
	char *error, *wc_status, *busy_reason;
	int busy;
	double fig[TESTAPI_FIG_COUNT];
	char *params; /* an object as JSON text; decoded: compact, keys sorted
		       */
};

struct testapi_results {
	char *host;
	struct testapi_result *v;
	size_t n;
	int has_dropped; /* the "dropped" object was present */
	int64_t spool_full, expired;
};

/* A result with every value unknown (NULL, NAN, 0; outcome ok). */
void testapi_result_init(struct testapi_result *r);

/*
 * testapi_result_encode() - one result as compact JSON text in *@out
 * (caller frees): what the probe spools and sends inside the results
 * array. Unknown members are left out, except plan_id, error and
 * wc_status, which are null. 0, -EINVAL (@r->params is not a JSON
 * object) or -ENOMEM.
 */
int testapi_result_encode(const struct testapi_result *r, char **out);

/*
 * The body around encoded results: testapi_results_begin(), then
 * testapi_results_item() for each result's text, then
 * testapi_results_end() with the spool's cumulative drop counts. Each
 * returns 0 or the buffer's error (buf.h).
 */
int testapi_results_begin(struct buf *b, const char *host);
int testapi_results_item(struct buf *b, const char *json, size_t len);
int testapi_results_end(struct buf *b, uint64_t spool_full, uint64_t expired);

/*
 * testapi_results_decode() - decode a POST /api/v1/results body into *@out
 * (free with testapi_results_free). -EINVAL with the reason in @err, or
 * -ENOMEM.
 */
int testapi_results_decode(const char *json, size_t len,
			   struct testapi_results **out, char *err,
			   size_t errlen);
void testapi_results_free(struct testapi_results *r);

/*
 * testapi_results_window() - every result of @r must have started within
 * [@now - @max_age, @now + @max_ahead] (@now: the collector's clock).
 * Returns 0, or -EINVAL with "results[I].started: ..." in @err naming the
 * bound it broke and the setting (results_max_age, results_max_ahead).
 */
int testapi_results_window(const struct testapi_results *r, double now,
			   double max_age, double max_ahead, char *err,
			   size_t errlen);

/*
 * testapi_peer_key() - "host\x1fdevice\x1fport" of @t's peer in @buf, or
 * NULL when the peer is not known in full (host, device and port).
 */
const char *testapi_peer_key(const struct testapi_result *t, char *buf,
			     size_t size);

/* ---- POST /api/v1/register ---- */

struct testapi_reg_port {
	char *device;
	unsigned port;
	int state; /* -1 unknown */
	char *link_layer, *subnet_prefix;
	int64_t lid; /* -1 unknown */
	uint16_t *pkeys;
	size_t n_pkeys;
	/* Sent for the operator's eyes; the decoder does not read them. */
	char **gids;
	size_t n_gids;
};

struct testapi_label {
	char *key, *value;
};

struct testapi_reg {
	char *host;
	char *address; /* responder */
	unsigned port;
	struct testapi_label *labels;
	size_t n_labels;
	char **profiles;
	size_t n_profiles;
	struct testapi_reg_port *ports;
	size_t n_ports;
};

/* testapi_reg_encode() - @r as compact JSON text in *@out (caller frees). */
int testapi_reg_encode(const struct testapi_reg *r, char **out);

/* testapi_reg_decode() - as testapi_results_decode(), for registration. */
int testapi_reg_decode(const char *json, size_t len, struct testapi_reg **out,
		       char *err, size_t errlen);
void testapi_reg_free(struct testapi_reg *r);

/* ---- GET /api/v1/plan ---- */

/* The ticket of a plan entry (docs/api.md; common/ticket.h). */
struct testapi_ticket {
	int64_t period, not_before_ms, deadline_ms;
	char *key; /* TESTAPI_KEY_HEX hex digits: a secret */
};

struct testapi_plan_test {
	char *id, *profile;
	char *local_device; /* NULL: the scheduler's choice */
	unsigned local_port;
	char *peer_host, *peer_address; /* address: where its responder is */
	unsigned peer_tcp_port;		/* the responder's TCP port */
	char *peer_device;
	unsigned peer_hca_port; /* the peer's HCA port */
	/* The destination LID to send to, one of the peer port's 2^LMC
	 * (InfiniBand, LMC > 0: it chooses the path); 0: its base LID. */
	unsigned dlid;
	double not_before, deadline; /* epoch seconds; 0 unknown */
	int has_ticket;
	struct testapi_ticket ticket;
};

/* One of the host's own responder keys. */
struct testapi_key {
	int64_t period;
	char *key; /* TESTAPI_KEY_HEX hex digits: a secret */
};

struct testapi_plan {
	char *host;
	double period_seconds, period_start; /* 0 unknown */
	/* How often the collector asks the probe to fetch its plan again:
	 * confirmation tests may be added in the middle of a period. 0:
	 * not said (an older collector). */
	double refresh_seconds;
	int paused;
	struct testapi_plan_test *tests;
	size_t n_tests;
	struct testapi_key *keys;
	size_t n_keys;
	int has_keys; /* the "responder_keys" array was present */
	/*
	 * Decoding only: what was left out, and why the first was. An entry
	 * or a responder key that breaks a rule is dropped by itself (the
	 * rest of the plan still runs), as is an entry past TESTAPI_MAX_PLAN;
	 * an entry whose ticket breaks one keeps running without it.
	 */
	size_t n_skipped, n_no_ticket;
	char skipped[TESTAPI_ERR_MAX], no_ticket[TESTAPI_ERR_MAX];
};

/*
 * testapi_plan_encode() - @p as compact JSON text in *@out (caller frees;
 * it holds the tickets and keys: secrets). 0 or -ENOMEM.
 */
int testapi_plan_encode(const struct testapi_plan *p, char **out);

/*
 * testapi_plan_decode() - decode a plan into *@out (free with
 * testapi_plan_free, which zeroes the keys). The envelope must hold: an
 * object with version 1 and a "tests" array; otherwise -EINVAL with the
 * reason in @err, or -ENOMEM. Entries, tickets and keys that break a rule
 * are left out as struct testapi_plan says.
 */
int testapi_plan_decode(const char *json, size_t len, struct testapi_plan **out,
			char *err, size_t errlen);
void testapi_plan_free(struct testapi_plan *p);

#endif
