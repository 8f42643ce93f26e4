/* SPDX-License-Identifier: MIT */
/*
 * A host's health verdict as pure functions (no SQLite, no clock), so
 * that every reason and the sticky window are unit-tested alone;
 * store_health.c gathers the facts from the database and saves the
 * answer (schema/007_health.sql).
 *
 * A verdict is healthy, degraded (keep running, look soon) or failed
 * (take it out): the worst level among the host's reasons. Each reason
 * names the port (or device, or link) and carries its evidence as a JSON
 * object. Each kind of reason has a level set in [health] (failed,
 * degraded or ignore); the counter reasons also have a threshold: more
 * than `max` within `window` seconds, the increase read from the
 * counter's history. The verdict is sticky: a reason counts from the
 * moment it is seen and for quiet_seconds after it was last seen, so a
 * port that flaps does not flap the node in and out of the scheduler.
 * docs/health.md gives the defaults and their sources.
 */
#ifndef IBPULSE_COLLECTOR_HEALTH_H
#define IBPULSE_COLLECTOR_HEALTH_H

#include <stddef.h>
#include <stdint.h>

struct report_pcie;

enum health_level {
	HEALTH_HEALTHY = 0, /* as a reason's setting: "ignore" */
	HEALTH_DEGRADED = 1,
	HEALTH_FAILED = 2,
};

enum health_kind {
	HK_PORT_DOWN,		/* was ACTIVE, is not (or left the reports) */
	HK_LINK_DEGRADED,	/* below its best rate; the switch says so */
	HK_PCIE_DEGRADED,	/* PCIe link below what the device supports */
	HK_AER_FATAL,		/* fatal PCIe AER errors since boot */
	HK_SUSPECT_BANDWIDTH,	/* an open bandwidth suspect (schema 005) */
	HK_SUSPECT_LATENCY,	/* an open latency suspect */
	HK_REGRESSION,		/* an open regression on one of its links */
	HK_LINK_DOWNED,		/* counters between tests, host or switch */
	HK_CARRIER_CHANGES,	/* RoCE: the netdev's carrier changes */
	HK_LINK_ERROR_RECOVERY, /* flapping: link recoveries */
	HK_SYMBOL_ERROR,
	HK_BUFFER_OVERRUN,
	HK_COUNTER_SATURATED, /* one of the above stuck at its maximum */
	HK_COUNT
};

/* A counter reason's threshold: bad above @max within @window seconds. */
struct health_rule {
	long long max;
	long long window;
};

/* The [health] settings (collector.ini; settings.c holds the table). */
struct health_opts {
	long long quiet_seconds;
	char *level_text[HK_COUNT];	   /* "failed", "degraded", "ignore" */
	int level[HK_COUNT];		   /* parsed by health_opts_check() */
	struct health_rule rule[HK_COUNT]; /* the counter kinds only */
	int switch_ports; /* judge the switch port facing each host port */
};

/* The counters the counter reasons read, by kind. */
struct health_counter {
	enum health_kind kind;
	int source;	  /* enum counter_source of a host's port */
	const char *name; /* sysfs name, also the fabric series' name */
};
extern const struct health_counter health_counters[];
extern const size_t health_n_counters;

/* "port_down"... as the API, the database and the settings name it. */
const char *health_kind_name(enum health_kind k);
/* The [health] key that sets the level of @k ("suspect_bandwidth"). */
const char *health_kind_key(enum health_kind k);
/* "healthy", "degraded", "failed". */
const char *health_level_name(int level);
/* "failed" / "degraded" / "ignore" (and "healthy") into *@out; -EINVAL. */
int health_level_parse(const char *text, int *out);
/*
 * health_opts_check() - parse every level_text into level; -EINVAL with
 * "[health] KEY: 'x' is not one of failed, degraded, ignore" in @err.
 */
int health_opts_check(struct health_opts *o, char *err, size_t errlen);

#define HEALTH_KEY_MAX 192
#define HEALTH_TEXT_MAX 320
#define HEALTH_NAME_MAX 65

struct health_reason {
	char key[HEALTH_KEY_MAX]; /* identity across evaluations */
	enum health_kind kind;
	int level;
	char device[HEALTH_NAME_MAX]; /* "": none */
	int port;		      /* -1: none (the device itself) */
	char text[HEALTH_TEXT_MAX];
	char *evidence; /* JSON object text, owned */
	double first_seen, last_seen;
	int active;
	int dirty; /* health_merge(): differs from what was saved */
};

struct health_list {
	struct health_reason *v;
	size_t n, cap;
};

void health_list_free(struct health_list *l);
/* A new zeroed reason at the end of @l; NULL when out of memory. */
struct health_reason *health_list_add(struct health_list *l);
/* The worst level in @l (HEALTH_HEALTHY when empty). */
int health_list_level(const struct health_list *l);

/*
 * health_merge() - the sticky window. @cur holds the reasons seen now
 * (active); @old what was saved before (left as it is). Each reason of
 * @cur keeps the first_seen of its @old namesake (else @now), gets
 * last_seen @now and is dirty; each reason of @old not seen now is
 * copied into @cur, inactive, while @now - last_seen < @quiet (dirty
 * when it was active). A reason of @old whose key is not in @cur
 * afterwards is over. Returns the verdict, health_list_level(@cur)
 * afterwards, or -ENOMEM.
 */
int health_merge(struct health_list *cur, struct health_list *old, double now,
		 double quiet);

/* The increase of a counter from @then to @now; a decrease is a reset
 * (counted from zero, as Prometheus's increase() does). */
uint64_t health_increase(uint64_t then, uint64_t now);

/* ---- the reasons: each appends to @l when its kind's level is not
 * ignore and the facts make it a reason; 0 or -ENOMEM ---- */

/* A host's port as the collector last stored it. Times < 0: unknown. */
struct health_port {
	const char *device;
	int port;
	int state, phys_state;	     /* -1 unknown */
	int64_t rate_bytes;	     /* < 0 unknown */
	double active_seen;	     /* < 0: never ACTIVE */
	double down_since;	     /* < 0: not down */
	double missing_since;	     /* < 0: in the reports */
	int64_t best_rate;	     /* < 0 unknown */
	const char *switch_desc;     /* the switch port facing it, or NULL */
	int switch_port;	     /* ... its number */
	const char *switch_degraded; /* its "width 1X of 4X enabled", NULL */
};
int health_port_reasons(const struct health_opts *o,
			const struct health_port *p, struct health_list *l);

/* A device's PCIe link and AER totals (common/report.h). */
int health_pcie_reasons(const struct health_opts *o, const char *device,
			const struct report_pcie *pcie, struct health_list *l);

/* One counter over its rule's window: @then at the window's start (or
 * its first value within it), @now the latest; @sw_desc/@sw_guid/
 * @sw_port: the switch port it was read at (NULL: the host's own). */
struct health_count {
	enum health_kind kind;
	const char *device;
	int port;
	const char *name;
	uint64_t then, now;
	double seconds; /* the span actually covered */
	const char *sw_desc, *sw_guid;
	int sw_port;
};
int health_counter_reason(const struct health_opts *o,
			  const struct health_count *c, struct health_list *l);

/* An open suspect (schema/005_evidence.sql's table suspect). */
struct health_suspect {
	const char *kind; /* "port" or "device" */
	const char *device;
	int port;
	const char *profile, *metric;
	double since, baseline, figure, worst;
	long long bad_results, judged_results, peers_bad, peers_exonerating;
};
int health_suspect_reason(const struct health_opts *o,
			  const struct health_suspect *s,
			  struct health_list *l);

/* An open regression with this host at one end (@local_*), the other
 * end @peer_* (schema/003_baselines.sql). */
struct health_regression {
	long long id;
	const char *local_device;
	int local_port;
	const char *peer_host, *peer_device;
	int peer_port;
	const char *profile, *metric;
	double opened, baseline, figure, last;
};
int health_regression_reason(const struct health_opts *o,
			     const struct health_regression *r,
			     struct health_list *l);

#endif
