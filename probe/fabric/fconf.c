// SPDX-License-Identifier: MIT
/*
 * The fabric poller's settings table ([fabric] keys): one descriptor per
 * key drives the defaults, the flags of `ibpulse-probe fabric` (by name)
 * and --print-config, as the other programs' tables do.
 */
#include "fabric.h"

#include <stddef.h>
#include <string.h>

#define OPT(name, type, def, min, max, help)                                   \
	{                                                                      \
		"fabric", #name, type, offsetof(struct fabric_settings, name), \
			def, min, max, help                                    \
	}

const struct conf_opt fabric_conf_opts[] = {
	OPT(ca, CONF_STR, NULL, 0, 0,
	    "CA whose port sends the MADs; unset: the first InfiniBand CA"),
	OPT(port, CONF_INT, "0", 0, 254,
	    "port of that CA; 0: its first active InfiniBand port"),
	OPT(window, CONF_INT, "64", 1, 4096,
	    "PerfMgt MADs outstanding at once across the fabric"),
	OPT(per_node, CONF_INT, "8", 1, 4096,
	    "MADs outstanding at one node's PMA (at most window)"),
	OPT(timeout, CONF_INT, "100", 1, 60000,
	    "milliseconds a MAD may take before it is sent again"),
	OPT(retries, CONF_INT, "3", 0, 20,
	    "resends of a MAD that got no answer; then its node is given "
	    "up for the sweep"),
	OPT(interval, CONF_INT, "10", 1, 86400, "seconds between sweeps"),
	OPT(rediscover, CONF_INT, "300", 1, 604800,
	    "seconds between discoveries (also after a LID stops answering "
	    "or a LinkDowned counter moves)"),
	OPT(smps, CONF_INT, "4", 1, 64,
	    "SMPs outstanding during discovery (libibnetdisc max_smps)"),
	OPT(route_interval, CONF_INT, "60", 0, 604800,
	    "seconds between reads of every switch's forwarding table (also "
	    "after a discovery that changed the picture); 0: never"),
	OPT(details, CONF_BOOL, "false", 0, 0,
	    "also read PortRcvErrorDetails and PortXmitDiscardDetails (two "
	    "more MADs per port)"),
	OPT(reset, CONF_BOOL, "false", 0, 0,
	    "zero each port's error counters after reading them (a PerfMgt "
	    "Set; other tools then see zeros)"),
	OPT(log_level, CONF_LOG, "info", 0, 0, "error, warn, info or debug"),
	OPT(collector_url, CONF_STR, NULL, 0, 0,
	    "collector report URL; unset: print only (--once, the loop)"),
	OPT(token_file, CONF_STR, NULL, 0, 0,
	    "file holding this host's bearer token"),
	OPT(ca_file, CONF_STR, NULL, 0, 0,
	    "CA bundle to verify the collector; unset: the system CA store"),
	OPT(host, CONF_STR, NULL, 0, 0,
	    "host name the reports carry; unset: gethostname()"),
	OPT(connect_timeout, CONF_DOUBLE, "5", 0.1, 300,
	    "seconds to establish the connection"),
	OPT(push_timeout, CONF_DOUBLE, "20", 0.1, 3600,
	    "seconds for one report's push"),
	OPT(chunk_ports, CONF_INT, "2000", 1, 100000,
	    "ports per report (about 700 bytes each; keep under the "
	    "collector's max_body_bytes)"),
	{0},
};

/*
 * The rest of probe.ini: where the poller pushes is the probe's own
 * collector, token, CA and host unless [fabric] says otherwise (it comes
 * later in the file); every other section belongs to other commands.
 */
int fabric_conf_extra(void *obj, const char *section, const char *name,
		      const char *value, char *err, size_t errlen)
{
	static const char *const shared[][2] = {
		{"collector_url", "collector_url"},
		{"token_file", "token_file"},
		{"ca_file", "ca_file"},
		{"host", "host"},
		{"connect_timeout", "connect_timeout"},
		{"timeout", "push_timeout"},
		{"log_level", "log_level"},
	};

	if (strcmp(section, "probe"))
		return 0;
	for (size_t i = 0; i < sizeof(shared) / sizeof(shared[0]); i++)
		if (!strcmp(name, shared[i][0]))
			return conf_set(fabric_conf_opts, obj, NULL,
					shared[i][1], value, err, errlen);
	return 0;
}
