// SPDX-License-Identifier: MIT
/*
 * Unit tests for the sysfs reader (probe/sysfs/sysfs.c, sysfs_port.c) on the
 * fixture trees under tests/fixtures/ (FIXTURES in the environment): an
 * mlx5 IB port with full counters, a RoCE port on a degraded PCIe link, a
 * port down with saturated counters, an mlx4 with counters_ext/ (kernels
 * before 4.5), Soft-RoCE, a tree of garbage and
 * unreadable files, and an empty sysfs; and one port alone, as the verbs
 * engine reads it. Every report the reader builds must also pass the
 * collector's decoder.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "log.h"
#include "print.h"
#include "report_build.h"
#include "report.h"
#include "sysfs.h"

static struct report *scan(const char *tree, const char *inc, const char *exc)
{
	char root[PATH_MAX];
	const char *dir = getenv("FIXTURES");
	struct sysfs_opts o = {
		.root = root,
		.counters_include = inc,
		.counters_exclude = exc,
		.netdev_stats = 1,
		.netdev_stats_include = SYSFS_NETDEV_STATS_DEFAULT,
	};
	struct report *r = calloc(1, sizeof(*r));

	assert_non_null(dir);
	assert_non_null(r);
	if (tree[0] == '/')
		snprintf(root, sizeof(root), "%s", tree);
	else
		snprintf(root, sizeof(root), "%s/%s", dir, tree);
	assert_int_equal(sysfs_scan(&o, r), 0);
	r->version = REPORT_VERSION;
	r->host = strdup("node01");
	r->timestamp = 1764412345.5;
	return r;
}

static const struct report_counter *counter(const struct report_port *p,
					    int src, const char *name)
{
	for (size_t i = 0; i < p->n_counters[src]; i++)
		if (!strcmp(p->counters[src][i].name, name))
			return &p->counters[src][i];
	return NULL;
}

static uint64_t value(const struct report_port *p, int src, const char *name)
{
	const struct report_counter *c = counter(p, src, name);

	if (!c)
		fail_msg("counter %s missing", name);
	return c->value;
}

/* The report must encode, and decode under the collector's rules. */
static void check_decodes(const struct report *r)
{
	struct report *back = NULL;
	char err[256], *text;

	assert_int_equal(report_encode(r, &text), 0);
	if (report_decode(text, strlen(text), &back, err, sizeof(err)))
		fail_msg("fixture report rejected: %s", err);
	assert_int_equal(back->n_devices, r->n_devices);
	report_free(back);
	free(text);
}

static void test_mlx5_ib_port(void **state)
{
	struct report *r = scan("sysfs-mlx5", "*", NULL);
	struct report_device *d;
	struct report_port *p;

	assert_int_equal(r->n_devices, 3);
	d = &r->devices[0];
	assert_string_equal(d->name, "mlx5_0");
	assert_string_equal(d->node_guid, "b859:9f03:00d4:0a1c");
	assert_string_equal(d->fw_ver, "20.31.1014");
	assert_string_equal(d->hca_type, "MT4123");
	assert_string_equal(d->board_id, "MT_0000000223");
	assert_string_equal(d->node_desc, "node01 HCA-1");
	assert_int_equal(d->numa_node, 0);
	assert_int_equal(d->n_netdevs, 1);
	assert_string_equal(d->netdevs[0], "ib0");
	assert_string_equal(d->pcie.address, "0000:3b:00.0");
	assert_true(d->pcie.cur_speed_gts == 16.0 &&
		    d->pcie.max_speed_gts == 16.0);
	assert_int_equal(d->pcie.cur_width, 16);
	assert_int_equal(d->pcie.aer_correctable, 2);
	assert_int_equal(d->pcie.aer_nonfatal, 0);
	assert_int_equal(d->pcie.aer_fatal, 0);
	assert_int_equal(report_pcie_degraded(&d->pcie), 0);
	assert_int_equal(d->n_ports, 1);
	p = &d->ports[0];
	assert_int_equal(p->port, 1);
	assert_int_equal(p->state, 4);
	assert_int_equal(p->phys_state, 5);
	assert_true(p->rate_bytes == 12500000000ULL);
	assert_string_equal(p->link_layer, "InfiniBand");
	assert_int_equal(p->lid, 12);
	assert_int_equal(p->sm_lid, 1);
	assert_int_equal(p->lmc, 0);
	assert_int_equal(p->cap_mask, 0xa651e848);
	assert_string_equal(p->port_guid, "b859:9f03:00d4:0a1c");
	assert_null(p->netdev);
	/* Seven of the eight GIDs are all-zero: skipped. */
	assert_int_equal(p->n_gids, 1);
	assert_string_equal(p->gids[0].gid,
			    "fe80:0000:0000:0000:b859:9f03:00d4:0a1c");
	assert_string_equal(p->gids[0].type, "IB/RoCE v1");
	assert_null(p->gids[0].netdev);
	/* P_Keys 0x0000 are empty slots: skipped. */
	assert_int_equal(p->n_pkeys, 3);
	assert_int_equal(p->pkeys[0].pkey, 0xffff);
	assert_int_equal(p->pkeys[1].pkey, 0x8001);
	assert_int_equal(p->pkeys[2].index, 2);
	assert_int_equal(p->pkeys[2].pkey, 0x0002);
	/* Every file of counters/ and hw_counters/, raw. */
	assert_int_equal(p->n_counters[CSRC_IB], 21);
	assert_true(value(p, CSRC_IB, "port_xmit_data") == 123456789012ULL);
	assert_true(value(p, CSRC_IB, "port_rcv_data") == 98765432109ULL);
	assert_int_equal(value(p, CSRC_IB, "port_xmit_wait"), 777);
	assert_int_equal(value(p, CSRC_IB, "VL15_dropped"), 0);
	assert_int_equal(p->n_counters[CSRC_HW], 25);
	assert_int_equal(value(p, CSRC_HW, "out_of_buffer"), 17);
	assert_int_equal(value(p, CSRC_HW, "np_ecn_marked_roce_packets"), 11);
	/* A setting, not a counter: still reported, the exporter decides. */
	assert_int_equal(value(p, CSRC_HW, "lifespan"), 12);
	assert_int_equal(p->n_counters[CSRC_NET], 0);
	check_decodes(r);
	report_free(r);
}

/*
 * mlx4 on a kernel before 4.5: counters_ext/ (the 64-bit counters under
 * their old names) is read into the ib source beside counters/, on both
 * ports, and a name both directories had would be kept once.
 */
static void test_mlx4_counters_ext(void **state)
{
	static const char *const ext[] = {
		"port_xmit_data_64",	       "port_rcv_data_64",
		"port_xmit_packets_64",	       "port_rcv_packets_64",
		"port_unicast_xmit_packets",   "port_unicast_rcv_packets",
		"port_multicast_xmit_packets", "port_multicast_rcv_packets",
	};
	struct report *r = scan("sysfs-mlx4", "*", NULL);
	struct report_port *p;

	assert_int_equal(r->n_devices, 1);
	assert_string_equal(r->devices[0].name, "mlx4_0");
	assert_string_equal(r->devices[0].hca_type, "MT4099");
	assert_int_equal(r->devices[0].n_ports, 2);
	p = &r->devices[0].ports[0];
	assert_int_equal(p->n_counters[CSRC_IB], 16 + 8);
	assert_true(value(p, CSRC_IB, "port_xmit_data_64") ==
		    98765432109876ULL);
	assert_true(value(p, CSRC_IB, "port_rcv_data_64") == 87654321098765ULL);
	assert_true(value(p, CSRC_IB, "port_unicast_rcv_packets") ==
		    112233000000ULL);
	assert_int_equal(value(p, CSRC_IB, "port_multicast_xmit_packets"),
			 789012);
	assert_true(value(p, CSRC_IB, "port_xmit_wait") == 4294967295ULL);
	p = &r->devices[0].ports[1];
	assert_int_equal(p->n_counters[CSRC_IB], 8 + 8);
	for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++)
		assert_non_null(counter(p, CSRC_IB, ext[i]));
	assert_int_equal(value(p, CSRC_IB, "port_xmit_data_64"), 4096);
	assert_int_equal(value(p, CSRC_IB, "port_multicast_rcv_packets"), 18);
	check_decodes(r);
	report_free(r);
	/* the include/exclude globs apply to counters_ext/ names too */
	r = scan("sysfs-mlx4", "*_64", NULL);
	assert_int_equal(r->devices[0].ports[0].n_counters[CSRC_IB], 4);
	report_free(r);
}

static void test_roce_port_degraded_pcie(void **state)
{
	struct report *r = scan("sysfs-mlx5", "*", NULL);
	struct report_device *d = &r->devices[1];
	struct report_port *p = &d->ports[0];

	assert_string_equal(d->name, "mlx5_1");
	assert_true(d->pcie.cur_speed_gts == 8.0 &&
		    d->pcie.max_speed_gts == 16.0);
	assert_int_equal(d->pcie.cur_width, 8);
	assert_int_equal(d->pcie.max_width, 16);
	assert_int_equal(report_pcie_degraded(&d->pcie), 1);
	assert_string_equal(p->link_layer, "Ethernet");
	assert_string_equal(p->netdev, "ens2f0");
	assert_null(p->port_guid);
	assert_int_equal(p->n_gids, 4);
	/* Each RoCE address twice: once v1, once v2. */
	assert_string_equal(p->gids[0].type, "IB/RoCE v1");
	assert_string_equal(p->gids[1].type, "RoCE v2");
	assert_string_equal(p->gids[0].gid, p->gids[1].gid);
	assert_string_equal(p->gids[3].gid,
			    "0000:0000:0000:0000:0000:ffff:c0a8:010a");
	assert_string_equal(p->gids[3].netdev, "ens2f0");
	/* The netdev side: carrier_changes; no ethtool off the live /sys. */
	assert_int_equal(p->n_counters[CSRC_NET], 1);
	assert_int_equal(value(p, CSRC_NET, "carrier_changes"), 3);
	assert_int_equal(value(p, CSRC_HW, "np_cnp_sent"), 321);
	check_decodes(r);
	report_free(r);
}

static void test_port_down_saturated(void **state)
{
	struct report *r = scan("sysfs-mlx5", "*", NULL);
	struct report_port *p = &r->devices[2].ports[0];

	assert_string_equal(r->devices[2].name, "mlx5_2");
	assert_int_equal(p->state, 1);
	assert_int_equal(p->phys_state, 3);
	assert_true(p->rate_bytes == 312500000ULL); /* 2.5 Gb/sec */
	assert_int_equal(p->lid, 0xffff);
	/* Saturated counters arrive raw, at their maximum. */
	assert_int_equal(value(p, CSRC_IB, "symbol_error"), 65535);
	assert_int_equal(value(p, CSRC_IB, "link_downed"), 255);
	assert_int_equal(value(p, CSRC_IB, "link_error_recovery"), 255);
	assert_int_equal(value(p, CSRC_IB, "local_link_integrity_errors"), 15);
	assert_int_equal(value(p, CSRC_IB, "excessive_buffer_overrun_errors"),
			 15);
	assert_int_equal(value(p, CSRC_IB, "port_rcv_errors"), 65535);
	assert_int_equal(report_pcie_degraded(&r->devices[2].pcie),
			 1); /* 2.5 GT/s */
	report_free(r);
}

static void test_rxe(void **state)
{
	struct report *r = scan("sysfs-rxe", "*", NULL);
	struct report_device *d;
	struct report_port *p;

	assert_int_equal(r->n_devices, 1);
	d = &r->devices[0];
	assert_string_equal(d->name, "rxe0");
	assert_null(d->pcie.address); /* virtual: no PCI device */
	assert_null(d->hca_type);
	assert_null(d->fw_ver); /* empty file: unknown */
	assert_int_equal(d->numa_node, -1);
	assert_int_equal(d->n_netdevs, 1);
	assert_string_equal(d->netdevs[0], "eth0");
	p = &d->ports[0];
	assert_true(p->rate_bytes == 1250000000ULL); /* 10 Gb/sec (1X FDR10) */
	assert_string_equal(p->link_layer, "Ethernet");
	assert_string_equal(p->netdev, "eth0");
	assert_int_equal(p->lid, 0);
	assert_int_equal(p->lmc,
			 0); /* rxe0's lid_mask_count, seen in the lab */
	assert_int_equal(p->n_counters[CSRC_IB], 0); /* no counters/ dir */
	assert_int_equal(p->n_counters[CSRC_HW], 16);
	assert_int_equal(value(p, CSRC_HW, "sent_pkts"), 1200);
	assert_int_equal(value(p, CSRC_HW, "rdma_recvs"), 550);
	assert_int_equal(value(p, CSRC_HW, "completer_retry_err"), 1);
	assert_int_equal(value(p, CSRC_HW, "lifespan"), 10);
	assert_int_equal(value(p, CSRC_NET, "carrier_changes"), 2);
	assert_int_equal(p->n_gids, 4);
	assert_string_equal(p->gids[2].type, "RoCE v2");
	assert_int_equal(p->n_pkeys, 1);
	check_decodes(r);
	report_free(r);
}

static void test_garbage_costs_one_value(void **state)
{
	struct report *r = scan("sysfs-garbage", "*", NULL);
	struct report_device *d;
	struct report_port *p;

	assert_int_equal(r->n_devices, 2);
	d = &r->devices[0];
	assert_string_equal(d->node_desc, "bad?desc?????");
	assert_int_equal(d->numa_node, -1);	/* "zero" */
	assert_true(d->pcie.cur_speed_gts < 0); /* "Unknown" */
	assert_int_equal(d->pcie.cur_width, 16);
	assert_true(d->pcie.max_speed_gts == 16.0);
	assert_int_equal(d->pcie.max_width, -1); /* "x16" */
	assert_int_equal(d->pcie.aer_correctable, 0);
	assert_int_equal(d->pcie.aer_fatal, -1); /* "lots" */
	/* no side whole (speed now, width max unknown): not DEGRADED */
	assert_int_equal(report_pcie_degraded(&d->pcie), -1);
	p = &d->ports[0];
	assert_int_equal(p->state, -1);		      /* "banana" */
	assert_int_equal(p->phys_state, -1);	      /* a directory */
	assert_true(p->rate_bytes == REPORT_UNKNOWN); /* "fast" */
	assert_int_equal(p->lid, -1);		      /* "0xZZ" */
	assert_int_equal(p->cap_mask, -1);	      /* 33 bits */
	assert_int_equal(p->sm_lid, 1);
	assert_int_equal(p->lmc, 0);
	assert_string_equal(p->link_layer, "InfiniBand");
	assert_int_equal(p->n_gids, 1);	 /* "fe80::1" */
	assert_int_equal(p->n_pkeys, 1); /* "0x1ffff", "full" */
	/*
	 * 21 files; gone: symbol_error "12abc", port_rcv_data "-5",
	 * port_xmit_data 2^64, link_downed "", port_rcv_errors (a directory),
	 * port_xmit_wait (a dangling symlink).
	 */
	assert_int_equal(p->n_counters[CSRC_IB], 15);
	assert_null(counter(p, CSRC_IB, "symbol_error"));
	assert_null(counter(p, CSRC_IB, "port_rcv_errors"));
	assert_null(counter(p, CSRC_IB, "port_xmit_wait"));
	assert_int_equal(value(p, CSRC_IB, "port_rcv_packets"), 7);
	assert_int_equal(p->n_counters[CSRC_HW], 1); /* "twelve" */
	assert_int_equal(value(p, CSRC_HW, "out_of_buffer"), 17);
	/* A device without ports/ costs its ports, not the scan. */
	assert_string_equal(r->devices[1].name, "mlx5_9");
	assert_int_equal(r->devices[1].n_ports, 0);
	check_decodes(r);
	report_free(r);
}

static void write_file(const char *dir, const char *rel, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* chmod 000 works only for non-root: root reads anything. */
static void test_unreadable_file(void **state)
{
	char tmpl[] = "/tmp/ibpulse-sysfs-XXXXXX", dir[PATH_MAX];
	const char *subdirs[] = {"class",
				 "class/infiniband",
				 "class/infiniband/dev0",
				 "class/infiniband/dev0/ports",
				 "class/infiniband/dev0/ports/1",
				 "class/infiniband/dev0/ports/1/counters"};
	struct report *r;
	struct report_port *p;

	assert_non_null(mkdtemp(tmpl));
	for (size_t i = 0; i < sizeof(subdirs) / sizeof(subdirs[0]); i++) {
		snprintf(dir, sizeof(dir), "%s/%s", tmpl, subdirs[i]);
		assert_int_equal(mkdir(dir, 0755), 0);
	}
	snprintf(dir, sizeof(dir), "%s/class/infiniband/dev0/ports/1", tmpl);
	write_file(dir, "state", "4: ACTIVE\n");
	write_file(dir, "counters/symbol_error", "9\n");
	write_file(dir, "counters/link_downed", "1\n");
	snprintf(dir, sizeof(dir),
		 "%s/class/infiniband/dev0/ports/1/counters/symbol_error",
		 tmpl);
	assert_int_equal(chmod(dir, 0), 0);
	r = scan(tmpl, "*", NULL);
	p = &r->devices[0].ports[0];
	assert_int_equal(p->state, 4);
	assert_int_equal(value(p, CSRC_IB, "link_downed"), 1);
	if (geteuid() != 0)
		assert_null(counter(p, CSRC_IB, "symbol_error"));
	report_free(r);
	unlink(dir);
	snprintf(dir, sizeof(dir),
		 "%s/class/infiniband/dev0/ports/1/counters/link_downed", tmpl);
	unlink(dir);
	snprintf(dir, sizeof(dir), "%s/class/infiniband/dev0/ports/1/state",
		 tmpl);
	unlink(dir);
	for (size_t i = sizeof(subdirs) / sizeof(subdirs[0]); i-- > 0;) {
		snprintf(dir, sizeof(dir), "%s/%s", tmpl, subdirs[i]);
		rmdir(dir);
	}
	rmdir(tmpl);
}

static void test_include_exclude(void **state)
{
	struct report *r = scan("sysfs-mlx5", "port_*,out_of_*", "*_errors");
	struct report_port *p = &r->devices[0].ports[0];

	/* port_* is 11 files, minus 5 port_*_errors. */
	assert_int_equal(p->n_counters[CSRC_IB], 6);
	assert_non_null(counter(p, CSRC_IB, "port_xmit_data"));
	assert_null(counter(p, CSRC_IB, "port_rcv_errors"));
	assert_null(counter(p, CSRC_IB, "symbol_error"));
	assert_int_equal(p->n_counters[CSRC_HW], 2);
	assert_non_null(counter(p, CSRC_HW, "out_of_buffer"));
	assert_non_null(counter(p, CSRC_HW, "out_of_sequence"));
	/* carrier_changes is not a sysfs counter file: always kept. */
	assert_int_equal(
		value(&r->devices[1].ports[0], CSRC_NET, "carrier_changes"), 3);
	report_free(r);
}

/*
 * One port alone (sysfs_read_port(), the verbs engine's way in): only the
 * parts asked for, read as the scan reads them; a missing port or device
 * is -ENODEV, a device name that is a path -EINVAL.
 */
static void test_read_port(void **state)
{
	char root[PATH_MAX];
	struct sysfs_opts o = {.root = root, .counters_include = "*"};
	struct report_port p;

	snprintf(root, sizeof(root), "%s/sysfs-mlx5", getenv("FIXTURES"));
	assert_int_equal(sysfs_read_port(&o, "mlx5_0", 1,
					 SYSFS_PORT_ATTRS | SYSFS_PORT_TABLES,
					 &p),
			 0);
	assert_int_equal(p.port, 1);
	assert_int_equal(p.state, 4);
	assert_string_equal(p.link_layer, "InfiniBand");
	assert_string_equal(p.port_guid, "b859:9f03:00d4:0a1c");
	assert_int_equal(p.n_gids, 1);
	assert_string_equal(p.gids[0].type, "IB/RoCE v1");
	assert_int_equal(p.n_pkeys, 3);
	assert_int_equal(p.pkeys[2].pkey, 0x0002);
	assert_int_equal(p.n_counters[CSRC_IB] + p.n_counters[CSRC_HW], 0);
	report_port_clear(&p);

	o.counters_include = "port_*_data,out_of_buffer";
	assert_int_equal(
		sysfs_read_port(&o, "mlx5_0", 1, SYSFS_PORT_COUNTERS, &p), 0);
	assert_int_equal(p.state, -1);
	assert_null(p.link_layer);
	assert_int_equal(p.n_gids + p.n_pkeys, 0);
	assert_int_equal(p.n_counters[CSRC_IB], 2);
	assert_true(value(&p, CSRC_IB, "port_xmit_data") == 123456789012ULL);
	assert_int_equal(p.n_counters[CSRC_HW], 1);
	assert_int_equal(value(&p, CSRC_HW, "out_of_buffer"), 17);
	assert_int_equal(p.n_counters[CSRC_NET], 0);
	report_port_clear(&p);

	assert_int_equal(sysfs_read_port(&o, "mlx5_0", 2, SYSFS_PORT_ATTRS, &p),
			 -ENODEV);
	assert_int_equal(sysfs_read_port(&o, "mlx5_9", 1, SYSFS_PORT_ATTRS, &p),
			 -ENODEV);
	assert_int_equal(sysfs_read_port(&o, "..", 1, SYSFS_PORT_ATTRS, &p),
			 -EINVAL);
	assert_int_equal(sysfs_read_port(&o, "../infiniband/mlx5_0", 1,
					 SYSFS_PORT_ATTRS, &p),
			 -EINVAL);
	assert_int_equal(p.n_gids, 0);
	report_port_clear(&p);
}

static void test_missing_trees(void **state)
{
	struct report *r = scan("sysfs-empty", "*", NULL);

	assert_int_equal(r->n_devices, 0);
	check_decodes(r);
	report_free(r);
}

/*
 * A sysfs_root that does not exist is a typo, not a host without RDMA
 * devices (issue 22: the daemon started on one and registered no ports).
 */
static void test_root_must_exist(void **state)
{
	struct sysfs_opts o = {.root = "/nonexistent-sysfs-root"};
	struct report r = {0};

	assert_int_equal(sysfs_scan(&o, &r), -ENOENT);
	assert_int_equal(r.n_devices, 0);
	assert_int_equal(sysfs_root_check("/nonexistent-sysfs-root"), -ENOENT);
	assert_int_equal(sysfs_root_check("/dev/null"), -ENOTDIR);
	assert_int_equal(sysfs_root_check("/"), 0);
}

static void test_print_devices(void **state)
{
	struct report *r = scan("sysfs-mlx5", "*", NULL);
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	probe_print_devices(f, r, 1);
	fclose(f);
	assert_non_null(strstr(out, "CA 'mlx5_0'"));
	assert_non_null(strstr(
		out, "PCIe: 0000:3b:00.0 16 GT/s x16 (max 16 GT/s x16)\n"));
	assert_non_null(strstr(
		out,
		"PCIe: 0000:5e:00.0 8 GT/s x8 (max 16 GT/s x16) DEGRADED\n"));
	assert_non_null(strstr(out, "0x8001  full"));
	assert_non_null(strstr(out, "0x0002  limited"));
	assert_non_null(strstr(out, "RoCE v2     ens2f0"));
	assert_non_null(strstr(out, "State: DOWN (1)"));
	assert_non_null(strstr(out, "Rate: 2.5 Gb/sec"));
	free(out);
	report_free(r);
}

static void test_report_build(void **state)
{
	struct probe_settings s;
	struct report *r;
	char err[256], root[PATH_MAX];

	assert_int_equal(probe_settings_load(&s, NULL, err, sizeof(err)), 0);
	snprintf(root, sizeof(root), "%s/sysfs-rxe", getenv("FIXTURES"));
	assert_int_equal(conf_set(probe_conf_opts, &s, "probe", "sysfs_root",
				  root, err, sizeof(err)),
			 0);
	assert_int_equal(conf_set(probe_conf_opts, &s, "probe", "host",
				  "node-7.example", err, sizeof(err)),
			 0);
	assert_int_equal(probe_report_build(&s, &r), 0);
	assert_string_equal(r->host, "node-7.example");
	assert_true(r->timestamp > 1.6e9);
	assert_int_equal(r->n_devices, 1);
	check_decodes(r);
	report_free(r);
	assert_int_equal(conf_set(probe_conf_opts, &s, "probe", "host",
				  "bad host", err, sizeof(err)),
			 0);
	assert_int_equal(probe_report_build(&s, &r), -EINVAL);
	assert_null(r);
	assert_int_equal(conf_set(probe_conf_opts, &s, "probe", "host", "_node",
				  err, sizeof(err)),
			 0);
	assert_int_equal(probe_report_build(&s, &r), -EINVAL);
	probe_settings_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mlx5_ib_port),
		cmocka_unit_test(test_mlx4_counters_ext),
		cmocka_unit_test(test_roce_port_degraded_pcie),
		cmocka_unit_test(test_port_down_saturated),
		cmocka_unit_test(test_rxe),
		cmocka_unit_test(test_garbage_costs_one_value),
		cmocka_unit_test(test_unreadable_file),
		cmocka_unit_test(test_include_exclude),
		cmocka_unit_test(test_read_port),
		cmocka_unit_test(test_missing_trees),
		cmocka_unit_test(test_root_must_exist),
		cmocka_unit_test(test_print_devices),
		cmocka_unit_test(test_report_build),
	};

	log_init("test_sysfs", LOG_LVL_ERR);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
