// SPDX-License-Identifier: MIT
/*
 * The probe's own /metrics and the exporter's serve the same series for
 * the same port (docs/probe.md "metrics"), checked without HTTP or
 * promtool: a report made by hand (GIDs, P_Keys, netdevs, AER, every
 * counter source, a label value to escape, a virtual function's PCIe link
 * whose maximum reads 0) is rendered by pmetrics_render() and, written to
 * a real SQLite database by the collector's store, by the exporter's
 * snapshot_read() and render_metrics(). Every sample line of the probe's
 * body but its own ibpulse_probe_* families must be in the exporter's,
 * and the exporter's lines of those families must all be the probe's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "dbread.h"
#include "pmetrics.h"
#include "render.h"
#include "snapshot.h"
#include "store.h"

static struct report_counter ib[] = {
	{"port_xmit_data", 1000}, {"port_rcv_data", UINT64_MAX / 2},
	{"symbol_error", 65535},  {"link_downed", 255},
	{"some_new_counter", 7},
};
static struct report_counter hw[] = {
	{"out_of_buffer", 3},
	{"lifespan", 10},
	{"np_cnp_sent", 9},
};
static struct report_counter net[] = {{"carrier_changes", 4}};
static struct report_gid gids[] = {
	{0, "fe80:0000:0000:0000:b859:9f03:00d4:0a1c", "RoCE v2", "ens1"},
	{1, "0000:0000:0000:0000:0000:0000:0000:0000", "RoCE v2", "ens1"},
};
static struct report_pkey pkeys[] = {{0, 0xffff}, {1, 0x8000}, {2, 0x7fff}};

static struct report_port ports[] = {
	{
		.port = 1,
		.state = 4,
		.phys_state = 5,
		.rate_bytes = 12500000000ULL,
		.link_layer = "Ethernet",
		.lid = 0,
		.sm_lid = 0,
		.lmc = 0,
		.cap_mask = 0x04010000,
		.netdev = "ens1",
		.gids = gids,
		.n_gids = 2,
		.pkeys = pkeys,
		.n_pkeys = 3,
		.counters = {ib, hw, net},
		.n_counters = {5, 3, 1},
	},
	{
		.port = 2,
		.state = -1,
		.phys_state = -1,
		.rate_bytes = REPORT_UNKNOWN,
		.link_layer = "InfiniBand",
		.lid = 12,
		.sm_lid = 1,
		.lmc = -1,
		.cap_mask = -1,
		.port_guid = "0xb8599f0300d40a1d",
		.counters = {ib},
		.n_counters = {2},
	},
};

static char *netdevs[] = {"ens1", "ens1d1"};

static struct report_device devices[] = {
	{
		.name = "mlx5_0",
		.node_guid = "b859:9f03:00d4:0a1c",
		.fw_ver = "22.31.1014",
		.hca_type = "MT4123",
		.board_id = "MT_0000000223",
		.node_desc = "node01 \"mlx5_0\" \\ HCA",
		.numa_node = 1,
		.netdevs = netdevs,
		.n_netdevs = 2,
		.pcie = {.address = "0000:3b:00.0",
			 .cur_speed_gts = 8,
			 .max_speed_gts = 16,
			 .cur_width = 16,
			 .max_width = 16,
			 .aer_correctable = 2,
			 .aer_nonfatal = 0,
			 .aer_fatal = -1},
		.ports = ports,
		.n_ports = 2,
	},
	{
		/* an SR-IOV VF: Link Capabilities read 0, speed "Unknown" */
		.name = "mlx5_2",
		.numa_node = -1,
		.pcie = {.address = "0000:3b:00.2",
			 .cur_speed_gts = -1,
			 .max_speed_gts = -1,
			 .cur_width = 0,
			 .max_width = 0,
			 .aer_correctable = -1,
			 .aer_nonfatal = -1,
			 .aer_fatal = -1},
	},
};

static struct report rep = {
	.version = REPORT_VERSION,
	.host = "node01",
	.timestamp = 1000,
	.probe_version = "0.1.0",
	.devices = devices,
	.n_devices = 2,
};

/* The sample lines of @body, sorted, one string (caller frees). */
static char **samples(const char *body, size_t *n)
{
	char *copy = strdup(body), *save = NULL, **v;
	size_t cap = 16;

	v = malloc(cap * sizeof(*v));
	*n = 0;
	for (char *l = strtok_r(copy, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		if (*l == '#')
			continue;
		if (*n == cap) {
			char **grown = realloc(v, (cap *= 2) * sizeof(*v));

			assert_non_null(grown);
			v = grown;
		}
		v[(*n)++] = strdup(l);
	}
	free(copy);
	qsort(v, *n, sizeof(*v), (int (*)(const void *, const void *))strcmp);
	return v;
}

static int has(char **v, size_t n, const char *line)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i], line))
			return 1;
	return 0;
}

static void free_lines(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static char *probe_body(void)
{
	struct buf out;

	buf_init(&out, 0);
	assert_int_equal(pmetrics_render(&rep, NULL, -1, EXPO_TEXT, &out, NULL),
			 0);
	return buf_steal(&out, NULL);
}

static char *exporter_body(const char *dir)
{
	char path[256], err[512];
	struct store_opts so = {.path = path,
				.schema_dir = SCHEMA_DIR,
				.busy_timeout_ms = 1000,
				.keyframe_interval = 60,
				.prune_batch = 1000};
	struct snap_opts o = {.now = 1001,
			      .stale_after = 120,
			      .drop_after = 600,
			      .shards = 1,
			      .chunk_rows = 100,
			      .test_period = 3600,
			      .max_pairs = 100};
	struct render_self self = {.last_duration = -1, .wal_bytes = -1};
	struct snapshot *sn;
	struct store *st;
	struct buf out;
	sqlite3 *db;

	snprintf(path, sizeof(path), "%s/ibpulse.db", dir);
	store_global_init();
	assert_int_equal(store_open(&so, &st), 0);
	assert_int_equal(store_begin(st), 0);
	assert_int_equal(store_put_report(st, &rep, 1000, NULL), 0);
	assert_int_equal(store_commit(st), 0);
	store_close(st);
	assert_int_equal(dbread_open(path, 1000, &db, err, sizeof(err)), 0);
	assert_int_equal(snapshot_read(db, &o, &sn, err, sizeof(err)), 0);
	sqlite3_close(db);
	buf_init(&out, 0);
	assert_int_equal(render_metrics(sn, &self, EXPO_TEXT, &out, NULL), 0);
	snapshot_free(sn);
	return buf_steal(&out, NULL);
}

/* The families the probe serves and the exporter does not. */
static int probe_own(const char *line)
{
	return !strncmp(line, "ibpulse_probe_", 14);
}

/* The sample's metric name is one of the probe's families. */
static int in_families(char **probe, size_t n, const char *line)
{
	size_t len = strcspn(line, "{ ");

	for (size_t i = 0; i < n; i++)
		if (!strncmp(probe[i], line, len) &&
		    (probe[i][len] == '{' || probe[i][len] == ' '))
			return 1;
	return 0;
}

static void test_same_series(void **state)
{
	static const char *const files[] = {"ibpulse.db", "ibpulse.db-wal",
					    "ibpulse.db-shm"};
	char dir[] = "/tmp/pmetrics-same-XXXXXX";
	char *pb = probe_body(), *eb, path[64];
	char **p, **x;
	size_t np, nx, shared = 0;

	(void)state;
	assert_non_null(mkdtemp(dir));
	eb = exporter_body(dir);
	p = samples(pb, &np);
	x = samples(eb, &nx);
	for (size_t i = 0; i < np; i++) {
		if (probe_own(p[i]))
			continue;
		if (!has(x, nx, p[i]))
			fail_msg("probe only: %s", p[i]);
		shared++;
	}
	for (size_t i = 0; i < nx; i++)
		if (in_families(p, np, x[i]) && !has(p, np, x[i]))
			fail_msg("exporter only: %s", x[i]);
	/*
	 * host 1, devices 2 + PCIe 7 (the VF's widths, 0) + AER 2, ports 2 +
	 * state, phys, rate 3, GID 1, P_Keys 2, counters 11, saturation 2
	 */
	assert_int_equal(shared, 33);
	/* the VF: no degraded sample from either, its width 0 is shown */
	assert_null(
		strstr(pb, "link_degraded{host=\"node01\",device=\"mlx5_2\""));
	assert_non_null(strstr(pb, "ibpulse_device_pcie_current_width_lanes{"
				   "host=\"node01\",device=\"mlx5_2\"} 0\n"));
	assert_non_null(strstr(pb, "ibpulse_device_pcie_link_degraded{host="
				   "\"node01\",device=\"mlx5_0\"} 1\n"));
	free_lines(p, np);
	free_lines(x, nx);
	free(pb);
	free(eb);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		unlink(path);
	}
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_series),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
