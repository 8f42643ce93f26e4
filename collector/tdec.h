/* SPDX-License-Identifier: MIT */
/*
 * Decoders for the test API bodies (docs/api.md, "Test plan and
 * results"): POST /api/v1/register and POST /api/v1/results. Pure
 * functions of the JSON text (jansson), so they are unit-tested and
 * fuzzed alone. Every field is checked (type, range, length, character
 * set); a failure names the field by its path, e.g.
 * "results[3].lat_p99_seconds: must be a number in [0, 1e+15]". Unknown
 * keys are ignored, so a newer probe may add fields.
 */
#ifndef IBPULSE_COLLECTOR_TDEC_H
#define IBPULSE_COLLECTOR_TDEC_H

#include <stddef.h>
#include <stdint.h>

#define TDEC_MAX_RESULTS 1000 /* per request */
#define TDEC_MAX_NAME 64
#define TDEC_MAX_ERROR 1024  /* result error text */
#define TDEC_MAX_PARAMS 8192 /* result params, as compact JSON */
#define TDEC_MAX_LABELS 64
#define TDEC_MAX_PROFILES 64
#define TDEC_MAX_PORTS 256 /* per registration */
#define TDEC_MAX_PKEYS 256 /* per port */

/* The figures of a result, in this order (names = JSON keys = columns). */
enum tdec_fig {
	TFIG_BW_AVG,
	TFIG_BW_PEAK,
	TFIG_BW_MIN,
	TFIG_MSG_RATE,
	TFIG_LAT_MIN,
	TFIG_LAT_MEDIAN,
	TFIG_LAT_MEAN,
	TFIG_LAT_P99,
	TFIG_LAT_P999,
	TFIG_LAT_MAX,
	TFIG_LAT_STDEV,
	TFIG_CPU,
	TFIG_COUNT
};
extern const char *const tdec_fig_names[TFIG_COUNT];

/* One test result. Strings NULL, numbers NAN, ports 0 when unknown. */
struct tresult {
	char *id, *plan_id, *profile, *test;
	double started, duration;
	char *local_device;
	unsigned local_port;
	char *peer_host, *peer_device;
	unsigned peer_port;
	char *outcome, *error, *wc_status, *busy_reason;
	int busy;
	double fig[TFIG_COUNT];
	char *params; /* compact JSON text */
};

struct tresults {
	char *host;
	struct tresult *v;
	size_t n;
	int has_dropped; /* the "dropped" object was present */
	int64_t spool_full, expired;
};

struct treg_port {
	char *device;
	unsigned port;
	int state; /* -1 unknown */
	char *link_layer, *subnet_prefix;
	int64_t lid; /* -1 unknown */
	uint16_t *pkeys;
	size_t n_pkeys;
};

struct treg_label {
	char *key, *value;
};

struct treg {
	char *host;
	char *address; /* responder */
	unsigned port;
	struct treg_label *labels;
	size_t n_labels;
	char **profiles;
	size_t n_profiles;
	struct treg_port *ports;
	size_t n_ports;
};

/*
 * tdec_results() - decode a POST /api/v1/results body into *@out (free
 * with tdec_results_free). -EINVAL with the reason in @err, or -ENOMEM.
 */
int tdec_results(const char *json, size_t len, struct tresults **out, char *err,
		 size_t errlen);
void tdec_results_free(struct tresults *r);

/* tdec_register() - the same for POST /api/v1/register. */
int tdec_register(const char *json, size_t len, struct treg **out, char *err,
		  size_t errlen);
void tdec_register_free(struct treg *r);

/* 1 when @outcome is one of the outcomes the API knows. */
int tdec_outcome_ok(const char *outcome);

/*
 * tdec_results_window() - every result of @r must have started within
 * [@now - @max_age, @now + @max_ahead] (@now: the collector's clock).
 * Returns 0, or -EINVAL with "results[I].started: ..." in @err naming the
 * bound it broke and the setting (results_max_age, results_max_ahead).
 */
int tdec_results_window(const struct tresults *r, double now, double max_age,
			double max_ahead, char *err, size_t errlen);

/*
 * tdec_peer_key() - "host\x1fdevice\x1fport" of @t's peer in @buf, or NULL
 * when the peer is not known in full (host, device and port).
 */
const char *tdec_peer_key(const struct tresult *t, char *buf, size_t size);

#endif
