// SPDX-License-Identifier: MIT
/*
 * The probe's settings table (probe_settings.h). One table drives the
 * defaults, probe.ini parsing, the flags of every command and
 * --print-config; new [probe] keys are a line here and a field in struct
 * probe_settings.
 */
#include "probe_settings.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "sysfs.h"

#define OPT(name, type, def, min, max, help)                                   \
	{                                                                      \
		"probe", #name, type, offsetof(struct probe_settings, name),   \
			def, min, max, help                                    \
	}

#define HOPT(name, type, def, min, max, help)                                  \
	{                                                                      \
		"health", #name, type, offsetof(struct probe_settings, name),  \
			def, min, max, help                                    \
	}

#define DOPT(name, type, def, min, max, help)                                  \
	{                                                                      \
		"daemon", #name, type, offsetof(struct probe_settings, name),  \
			def, min, max, help                                    \
	}

const struct conf_opt probe_conf_opts[] = {
	OPT(host, CONF_STR, NULL, 0, 0,
	    "host name sent in reports; unset: gethostname()"),
	OPT(sysfs_root, CONF_STR, "/sys", 0, 0,
	    "sysfs mount point; a fixture tree for tests"),
	OPT(collector_url, CONF_STR, NULL, 0, 0,
	    "collector report URL, e.g. https://collector:8443/api/v1/report"),
	OPT(token_file, CONF_STR, NULL, 0, 0,
	    "file holding this host's bearer token"),
	OPT(enrol_secret_file, CONF_STR, NULL, 0, 0,
	    "the collector's enrolment secret: without a token_file, enrol "
	    "once and store the token received there"),
	OPT(ca_file, CONF_STR, NULL, 0, 0,
	    "CA bundle to verify the collector; unset: the system CA store"),
	OPT(connect_timeout, CONF_DOUBLE, "5", 0.1, 300,
	    "seconds to establish the connection"),
	OPT(timeout, CONF_DOUBLE, "20", 0.1, 3600, "seconds for a whole push"),
	OPT(counters_include, CONF_STR, "*", 0, 0,
	    "globs of counters/ and hw_counters/ files to report"),
	OPT(counters_exclude, CONF_STR, NULL, 0, 0,
	    "globs of counters/ and hw_counters/ files to skip"),
	OPT(netdev_stats, CONF_BOOL, "true", 0, 0,
	    "read RoCE netdevs' ethtool statistics (live /sys only)"),
	OPT(netdev_stats_include, CONF_STR, SYSFS_NETDEV_STATS_DEFAULT, 0, 0,
	    "globs of ethtool statistics to report"),
	OPT(log_level, CONF_LOG, "info", 0, 0, "error, warn, info or debug"),
	DOPT(counters_interval, CONF_INT, "10", 1, 3600,
	     "seconds between counter reads"),
	DOPT(push_interval, CONF_INT, "30", 1, 86400,
	     "seconds between counter pushes (the newest read is sent)"),
	DOPT(plan_interval, CONF_INT, "60", 5, 86400,
	     "seconds between plan fetches from the collector (at most: "
	     "the collector's refresh_seconds when shorter)"),
	DOPT(test_interval, CONF_INT, "300", 1, 86400,
	     "seconds between static-peer tests (no collector plan)"),
	DOPT(responder_listen, CONF_STR, NULL, 0, 0,
	     "address the responder listens on; unset: every address"),
	DOPT(responder_port, CONF_INT, "18515", 0, 65535,
	     "TCP port of the responder (0: any free port)"),
	DOPT(responder_address, CONF_STR, NULL, 0, 0,
	     "address peers reach the responder at; unset: the host name"),
	DOPT(responder_device, CONF_STR, NULL, 0, 0,
	     "device the responder serves when a peer names none; "
	     "unset: the first one"),
	DOPT(responder_ib_port, CONF_INT, "1", 1, 255,
	     "port the responder serves when a peer names none"),
	DOPT(responder_max_size, CONF_INT, "8388608", 1, 1073741824,
	     "largest message a peer may ask of the responder, bytes"),
	DOPT(responder_max_qps, CONF_INT, "16", 1, 64,
	     "most QPs a peer may ask of the responder"),
	DOPT(responder_max_duration, CONF_DOUBLE, "30", 0.1, 3600,
	     "longest test a peer may ask of the responder, seconds"),
	DOPT(responder_max_iters, CONF_INT, "1000000", 1, 100000000,
	     "most iterations a peer may ask of the responder"),
	DOPT(secret_file, CONF_STR, NULL, 0, 0,
	     "shared secret authenticating tests (both ends); unset: none"),
	DOPT(responder_open, CONF_BOOL, "false", 0, 0,
	     "also admit peers with neither a collector ticket nor the "
	     "secret (anyone who connects)"),
	DOPT(duty_cycle, CONF_DOUBLE, "0.05", 0, 1,
	     "share of time a port may spend in tests (both roles)"),
	DOPT(duty_window, CONF_DOUBLE, "3600", 10, 604800,
	     "seconds over which the duty cycle is accounted"),
	DOPT(jitter, CONF_DOUBLE, "30", 0, 3600,
	     "seconds, at most, of random delay before each test"),
	DOPT(test_timeout, CONF_DOUBLE, "10", 0.5, 600,
	     "seconds each control step of a test may take"),
	DOPT(spool_dir, CONF_STR, "/var/lib/ibpulse/spool", 0, 0,
	     "results wait here until the collector has them"),
	DOPT(spool_max_bytes, CONF_INT, "67108864", 4096, 1099511627776.0,
	     "spool size cap in bytes; the oldest results go first"),
	DOPT(spool_max_age, CONF_INT, "604800", 60, 31536000,
	     "seconds a result may wait in the spool before it is dropped"),
	DOPT(results_batch, CONF_INT, "100", 1, 1000,
	     "results sent per POST /api/v1/results"),
	DOPT(backoff_min, CONF_DOUBLE, "1", 0.01, 3600,
	     "first retry delay cap after a failed push, seconds"),
	DOPT(backoff_max, CONF_DOUBLE, "300", 0.01, 86400,
	     "largest retry delay cap, seconds (full jitter below it)"),
	DOPT(pause_file, CONF_STR, NULL, 0, 0,
	     "no tests while this file exists; unset: no such condition"),
	DOPT(control_socket, CONF_STR, "/run/ibpulse/probe.sock", 0, 0,
	     "unix socket of pause/resume/status"),
	DOPT(selftest, CONF_BOOL, "false", 0, 0,
	     "run a loopback test on every HCA (intra-host check)"),
	DOPT(selftest_interval, CONF_INT, "3600", 10, 604800,
	     "seconds between loopback tests of one HCA"),
	DOPT(selftest_profile, CONF_STR, "bw", 0, 0,
	     "profile the loopback test runs"),
	DOPT(peer_profiles, CONF_STR, NULL, 0, 0,
	     "profiles run against static peers, comma-separated; unset: all"),
	DOPT(busy_tolerance, CONF_DOUBLE, "0.1", 0, 100,
	     "extra port bytes, as a share of the test's, before busy"),
	DOPT(metrics_listen, CONF_STR, NULL, 0, 0,
	     "ADDR:PORT serving this host's /metrics; unset: not served"),
	HOPT(slurm_node, CONF_STR, NULL, 0, 0,
	     "Slurm node name for health --drain-slurm; unset: "
	     "$SLURMD_NODENAME, else the host name"),
	HOPT(scontrol, CONF_STR, "scontrol", 0, 0,
	     "the scontrol program health --drain-slurm runs"),
	HOPT(kube_condition, CONF_BOOL, "false", 0, 0,
	     "the daemon publishes the verdict as node condition "
	     "IbpulseFabricHealthy (in a pod, through the API server)"),
	HOPT(kube_taint, CONF_BOOL, "false", 0, 0,
	     "and taints the node ibpulse.io/fabric=failed:NoSchedule while "
	     "failed"),
	HOPT(health_interval, CONF_INT, "60", 5, 86400,
	     "seconds between the daemon's verdict checks (kube_condition)"),
	HOPT(kube_api, CONF_STR, NULL, 0, 0,
	     "API server URL; unset: https://$KUBERNETES_SERVICE_HOST:"
	     "$KUBERNETES_SERVICE_PORT"),
	HOPT(kube_token_file, CONF_STR,
	     "/var/run/secrets/kubernetes.io/serviceaccount/token", 0, 0,
	     "the pod's service-account token"),
	HOPT(kube_ca_file, CONF_STR,
	     "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt", 0, 0,
	     "the API server's CA"),
	HOPT(kube_node, CONF_STR, NULL, 0, 0,
	     "the node to publish on; unset: the host name"),
	{0},
};

int probe_settings_load(struct probe_settings *s, const char *path, char *err,
			size_t errlen)
{
	int ret;

	memset(s, 0, sizeof(*s));
	ret = conf_defaults(probe_conf_opts, s);
	if (ret) {
		snprintf(err, errlen, "cannot set defaults: %s",
			 strerror(-ret));
		return ret;
	}
	if (path) {
		ret = conf_load(probe_conf_opts, s, path, probe_settings_extra,
				err, errlen);
		if (ret)
			return ret;
	}
	return probe_settings_finish(s, err, errlen);
}

void probe_settings_free(struct probe_settings *s)
{
	conf_free(probe_conf_opts, s);
}

static int probe_settings_init_obj(void *obj)
{
	memset(obj, 0, sizeof(struct probe_settings));
	return conf_defaults(probe_conf_opts, obj);
}

static int probe_settings_finish_obj(void *obj, char *err, size_t errlen)
{
	return probe_settings_finish(obj, err, errlen);
}

static void probe_settings_free_obj(void *obj)
{
	probe_settings_free(obj);
}

const struct cli_conf probe_conf = {
	.opts = probe_conf_opts,
	.default_path = IBPULSE_SYSCONFDIR "/probe.ini",
	.extra = probe_settings_extra,
	.init = probe_settings_init_obj,
	.finish = probe_settings_finish_obj,
	.print_extra = probe_settings_print_extra,
	.free = probe_settings_free_obj,
};
