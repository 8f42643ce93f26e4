// SPDX-License-Identifier: MIT
/*
 * `ibpulse-probe health`: ask the collector for this node's verdict with
 * the same --collector, --token-file, --host flags and probe.ini keys as
 * `report`; when it cannot be reached, judge from this node's own sysfs
 * and say so. Prints the verdict and one line per reason; exits 0
 * healthy, 1 failed, 2 degraded, 3 unknown (also for a bad command line:
 * 2 would read as degraded). --drain-slurm acts on Slurm (slurm.h).
 */
#include "cmd_health.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "phealth.h"
#include "probe_settings.h"
#include "report_build.h"
#include "slurm.h"

enum { OPT_DRAIN = 1, OPT_NPD };

static const struct cli_flag health_flags[] = {
	{"config", 0, "FILE", NULL, CLI_CONFIG,
	 "probe.ini (default: the installed one, if present)"},
	{"collector", 0, "URL", "collector_url", 0, "collector report URL"},
	{"token-file", 0, "FILE", "token_file", 0,
	 "file holding this host's bearer token"},
	{"ca-file", 0, "FILE", "ca_file", 0,
	 "CA bundle to verify the collector"},
	{"host", 0, "NAME", "host", 0, "this host's name at the collector"},
	{"sysfs-root", 0, "DIR", "sysfs_root", 0,
	 "sysfs mount point (the fallback's view; a fixture tree for tests)"},
	{"drain-slurm", 0, NULL, NULL, OPT_DRAIN,
	 "drain this Slurm node when failed, resume it when healthy (only "
	 "a drain of ibpulse's own)"},
	{"slurm-node", 0, "NAME", "slurm_node", 0,
	 "its Slurm name (default $SLURMD_NODENAME, else --host)"},
	{"npd", 0, NULL, NULL, OPT_NPD,
	 "node-problem-detector's exit codes: 0 healthy or degraded, 1 "
	 "failed, 2 unknown"},
	{"log-level", 0, "LEVEL", "log_level", 0, "error, warn, info or debug"},
	{0}};

const struct cli_cmd cmd_health_cli = {
	.prog = "ibpulse-probe",
	.name = "health",
	.flags = health_flags,
	.about = "Print this node's fabric health verdict (the collector's; "
		 "this node's own sysfs view when the collector cannot be "
		 "reached) and exit 0 healthy, 1 failed, 2 degraded, 3 "
		 "unknown. For Slurm's HealthCheckProgram and NHC. "
		 "docs/health.md.",
};

struct hcli {
	struct cli_args a;
	struct probe_settings s;
	int drain, npd;
};

static int hcli_flag(void *arg, int id, const char *value, char *err,
		     size_t errlen)
{
	struct hcli *c = arg;

	(void)value;
	(void)err;
	(void)errlen;
	c->drain |= id == OPT_DRAIN;
	c->npd |= id == OPT_NPD;
	return 0;
}

/* The collector's verdict, else this node's own. */
static int health_get(const struct probe_settings *s, const char *host,
		      struct phealth *h)
{
	struct report *r = NULL;
	char note[512];
	int ret = -ECONNREFUSED;

	memset(h, 0, sizeof(*h));
	if (s->collector_url)
		ret = phealth_fetch(s, host, h);
	else
		snprintf(h->note, sizeof(h->note), "no collector_url");
	if (!ret)
		return 0;
	snprintf(note, sizeof(note), "collector unreachable: %.400s", h->note);
	phealth_free(h);
	memset(h, 0, sizeof(*h));
	snprintf(h->note, sizeof(h->note), "%s", note);
	ret = probe_report_build(s, &r);
	if (!ret)
		ret = phealth_local(r, h);
	report_free(r);
	if (ret) {
		h->verdict = PHEALTH_UNKNOWN;
		h->local = 0;
		snprintf(h->note, sizeof(h->note),
			 "%.400s; sysfs cannot be read: %s", note,
			 strerror(-ret));
	}
	return 0;
}

int cmd_health(int argc, char **argv)
{
	struct hcli c = {0};
	struct phealth h = {0};
	char err[512], *host = NULL;
	const char *node;
	int ret = cli_parse(&cmd_health_cli, argc, argv, &c.a, hcli_flag, &c);

	if (ret)
		return ret > 0 ? 0 : PHEALTH_EXIT_UNKNOWN;
	if (cli_load(&probe_conf, &c.a, &c.s, err, sizeof(err))) {
		cli_error(&cmd_health_cli, "%s", err);
		cli_free(&probe_conf, &c.s);
		return PHEALTH_EXIT_UNKNOWN;
	}
	ret = probe_host_name(&c.s, &host);
	if (ret) {
		cli_error(&cmd_health_cli, "no host name: %s", strerror(-ret));
		cli_free(&probe_conf, &c.s);
		return PHEALTH_EXIT_UNKNOWN;
	}
	health_get(&c.s, host, &h);
	phealth_print(stdout, host, &h);
	if (c.drain) {
		node = c.s.slurm_node ? c.s.slurm_node
				      : getenv("SLURMD_NODENAME");
		if (!node || !*node)
			node = host;
		fflush(stdout);
		slurm_apply(c.s.scontrol, node, &h, stdout);
	}
	ret = phealth_exit_code(&h, c.npd);
	phealth_free(&h);
	free(host);
	cli_free(&probe_conf, &c.s);
	return fflush(stdout) ? PHEALTH_EXIT_UNKNOWN : ret;
}
