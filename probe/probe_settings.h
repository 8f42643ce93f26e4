/* SPDX-License-Identifier: MIT */
/*
 * The probe's settings: probe.ini's [probe] and [daemon] keys
 * (table-driven via common/conf.h), and the free-form sections [labels],
 * [peers] and [profile NAME]. Every command of ibpulse-probe loads them
 * through the shared command-line skeleton (common/cli.h, probe_conf).
 */
#ifndef IBPULSE_PROBE_SETTINGS_H
#define IBPULSE_PROBE_SETTINGS_H

#include <stddef.h>
#include <stdio.h>

#include "cli.h"
#include "conf.h"

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

	/* [health]: ibpulse-probe health and the daemon's node condition
	 * (docs/health.md) */
	char *slurm_node; /* NULL: $SLURMD_NODENAME, else the host name */
	char *scontrol;	  /* the scontrol program */
	int kube_condition, kube_taint; /* the daemon publishes / taints */
	long long health_interval;	/* seconds between its verdict checks */
	char *kube_api;	       /* NULL: https://$KUBERNETES_SERVICE_HOST:PORT */
	char *kube_token_file; /* the pod's service-account token */
	char *kube_ca_file;    /* ... and CA */
	char *kube_node;       /* NULL: the host name */

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
 * The probe's settings for cli_load() (common/cli.h): the table, the
 * extra sections, probe_settings_finish(), the installed probe.ini by
 * default. The object is a struct probe_settings.
 */
extern const struct cli_conf probe_conf;

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

/* --print-config's [labels], [peers] and [profile NAME] sections. */
void probe_settings_print_extra(const void *obj, FILE *f);

#endif
