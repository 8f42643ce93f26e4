/* SPDX-License-Identifier: MIT */
/*
 * The probe's settings (the [probe] section of probe.ini, table-driven via
 * common/conf.h), building one report from sysfs, and printing it the way
 * ibstat does. Commands in main.c combine these with push.h.
 */
#ifndef IBPULSE_PROBE_H
#define IBPULSE_PROBE_H

#include <stdio.h>

#include "conf.h"
#include "report.h"

#define PROBE_MAX_LABELS 32
#define PROBE_MAX_PROFILES 16
#define PROBE_MAX_PEERS 64
#define PROBE_NAME_MAX 64

/* [labels]: free-form operator labels sent in register (rack, leaf...). */
struct probe_label {
	char key[PROBE_NAME_MAX];
	char value[PROBE_NAME_MAX];
};

/*
 * [profile NAME]: a named test shape. The name labels results; the
 * parameters travel in the result's "params" only.
 */
struct probe_profile {
	char name[PROBE_NAME_MAX];
	char test[32];		  /* "write_bw", "send_lat"... */
	long long size;		  /* bytes per message */
	long long qps;		  /* queue pairs */
	double duration;	  /* seconds; 0: iteration mode */
	long long iters;	  /* 0: the test's default */
	long long pkey;		  /* P_Key by value; 0: index 0 */
	char gid[PROBE_NAME_MAX]; /* GID selector: v2, v1, ipv4, address */
	long long sl;		  /* service level 0..15 */
};

/* [peers]: NAME = host:port[/device/port], tested without a collector. */
struct probe_peer {
	char name[PROBE_NAME_MAX];
	char address[256];
	char port[8];
	char device[PROBE_NAME_MAX]; /* "": the responder's own choice */
	unsigned ib_port;	     /* 0: unknown */
};

struct probe_settings {
	char *host; /* NULL: gethostname() */
	char *sysfs_root;
	char *collector_url;
	char *token_file;
	char *enrol_secret_file; /* enrol when token_file is missing */
	char *ca_file;
	double connect_timeout; /* seconds */
	double timeout;		/* seconds, whole request */
	char *counters_include;
	char *counters_exclude;
	int netdev_stats;
	char *netdev_stats_include;
	char *log_level;

	/* [daemon]: ibpulse-probe daemon (docs/probe.md "daemon"). */
	long long counters_interval; /* seconds */
	long long push_interval;     /* seconds */
	long long plan_interval;     /* seconds */
	long long test_interval;     /* seconds between static-peer tests */
	char *responder_listen;	     /* NULL: every address */
	long long responder_port;    /* 0: ephemeral (tests) */
	char *responder_address;     /* advertised; NULL: the host name */
	char *responder_device;	     /* NULL: the first device */
	long long responder_ib_port;
	long long responder_max_size;
	long long responder_max_qps;
	double responder_max_duration;
	long long responder_max_iters;
	char *secret_file;
	int responder_open;  /* admit unauthenticated peers too */
	double duty_cycle;   /* share of time a port spends in tests */
	double duty_window;  /* seconds the duty cycle is measured over */
	double jitter;	     /* seconds, at most, added before each test */
	double test_timeout; /* seconds of control-step slack */
	char *spool_dir;
	long long spool_max_bytes;
	long long spool_max_age; /* seconds */
	long long results_batch;
	double backoff_min, backoff_max; /* seconds */
	char *pause_file;
	char *control_socket;
	int selftest;
	long long selftest_interval; /* seconds */
	char *selftest_profile;
	char *peer_profiles;   /* comma-separated; NULL: every profile */
	double busy_tolerance; /* share of extra bytes still "not busy" */
	char *metrics_listen;  /* ADDR:PORT of /metrics; NULL or "": off */

	struct probe_label labels[PROBE_MAX_LABELS];
	size_t n_labels;
	struct probe_profile profiles[PROBE_MAX_PROFILES];
	size_t n_profiles;
	struct probe_peer peers[PROBE_MAX_PEERS];
	size_t n_peers;
};

/* The [probe] option table (NULL-terminated). */
extern const struct conf_opt probe_conf_opts[];

/*
 * probe_settings_load() - defaults, then @path if not NULL. On failure
 * returns a negative errno with the reason in @err; @s must still be
 * freed with probe_settings_free().
 */
int probe_settings_load(struct probe_settings *s, const char *path, char *err,
			size_t errlen);
void probe_settings_free(struct probe_settings *s);

/*
 * probe_settings_extra() - the conf_extra_fn for [labels], [peers] and
 * [profile NAME] sections (@obj is a struct probe_settings). Errors name
 * the key and its valid form.
 */
int probe_settings_extra(void *obj, const char *section, const char *name,
			 const char *value, char *err, size_t errlen);

/*
 * probe_settings_finish() - checks across keys (backoff_min <=
 * backoff_max, profile names that exist) and the built-in profiles "bw"
 * and "lat" when the file defines none. Idempotent: call again after
 * command-line overrides. Returns 0 or -EINVAL with the reason in @err.
 */
int probe_settings_finish(struct probe_settings *s, char *err, size_t errlen);

/* The profile named @name, or NULL. */
const struct probe_profile *probe_profile_find(const struct probe_settings *s,
					       const char *name);

/*
 * probe_peer_parse() - "host:port[/device/port]" ("[v6]:port/..." too)
 * into @p (name left alone). Returns 0 or -EINVAL with the reason in @err.
 */
int probe_peer_parse(const char *text, struct probe_peer *p, char *err,
		     size_t errlen);

/* Print the effective settings, the extra sections included, as INI. */
void probe_settings_print(const struct probe_settings *s, FILE *f);

/*
 * probe_report_build() - a new report of this host's devices (caller
 * frees with report_free): host, timestamp now, every device under
 * @s->sysfs_root. Returns 0, -ENOMEM, or -EINVAL when the host name is
 * not valid for a report (logged).
 */
int probe_report_build(const struct probe_settings *s, struct report **out);

/*
 * probe_host_name() - the host name reports carry (@s->host or
 * gethostname()), checked against the report's rule; caller frees.
 * Returns 0, -EINVAL (logged) or -ENOMEM.
 */
int probe_host_name(const struct probe_settings *s, char **out);

/*
 * probe_enrol() - when @s->token_file does not exist and
 * @s->enrol_secret_file is set, enrol this host at the collector
 * (POST /api/v1/enrol) and write the token received to token_file (mode
 * 0600). Returns 0 (done, or nothing to do) or a negative errno, logged;
 * a host the collector has enrolled before is refused (409).
 */
int probe_enrol(const struct probe_settings *s);

/*
 * probe_print_devices() - the ibstat-like listing of @r to @f: identity,
 * PCIe state (DEGRADED when below its maximum), per port state, rate,
 * addresses, the P_Key and GID tables and, with @counters, the counters.
 */
void probe_print_devices(FILE *f, const struct report *r, int counters);

#endif
