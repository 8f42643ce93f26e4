// SPDX-License-Identifier: MIT
/*
 * Unit tests for the ethtool statistics reader (probe/sysfs/netdev.c) against
 * the live kernel, in a network namespace of the test's own (so it runs
 * the same everywhere and touches no interface of the host) holding a
 * fixture: a veth pair made with ip(8). veth always has an ethtool
 * statistics set, led by peer_ifindex (the other end's ifindex), so the
 * filter and the values can be asserted exactly. Also: a missing interface
 * fails with -ENODEV and loopback has no statistics set.
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "netdev.h"
#include "report.h"

#define VETH_A "ibpulse-v0"
#define VETH_B "ibpulse-v1"

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -EIO;
}

/*
 * A network namespace of our own: as root directly; otherwise inside a
 * user namespace where we are root (unprivileged user namespaces).
 */
static int netns_enter(void)
{
	char map[64];
	unsigned uid = (unsigned)getuid(), gid = (unsigned)getgid();

	if (!unshare(CLONE_NEWNET))
		return 0;
	if (unshare(CLONE_NEWUSER | CLONE_NEWNET))
		return -errno;
	snprintf(map, sizeof(map), "0 %u 1", uid);
	if (write_file("/proc/self/setgroups", "deny") ||
	    write_file("/proc/self/uid_map", map))
		return -EPERM;
	snprintf(map, sizeof(map), "0 %u 1", gid);
	return write_file("/proc/self/gid_map", map);
}

/* The fixture: a namespace with the veth pair in it, for every test. */
static int fixture_setup(void **state)
{
	int ret = netns_enter();

	if (ret) {
		print_error("cannot make a network namespace for the veth "
			    "fixture: %s\n",
			    strerror(-ret));
		return -1;
	}
	/* ip(8) is iproute2, which scripts/install-deps.sh installs. */
	if (system("ip link add " VETH_A " type veth peer name " VETH_B)) {
		print_error("ip link add " VETH_A " type veth failed\n");
		return -1;
	}
	return 0;
}

static void port_clear(struct report_port *p)
{
	for (size_t i = 0; i < p->n_counters[CSRC_NET]; i++)
		free(p->counters[CSRC_NET][i].name);
	free(p->counters[CSRC_NET]);
	memset(p, 0, sizeof(*p));
}

static const struct report_counter *net_counter(const struct report_port *p,
						const char *name)
{
	for (size_t i = 0; i < p->n_counters[CSRC_NET]; i++)
		if (!strcmp(p->counters[CSRC_NET][i].name, name))
			return &p->counters[CSRC_NET][i];
	return NULL;
}

static void test_missing_interface(void **state)
{
	struct report_port p = {0};

	assert_int_equal(netdev_ethtool_stats("ibpulse-none0", "*", &p),
			 -ENODEV);
	assert_int_equal(p.n_counters[CSRC_NET], 0);
}

static void test_loopback(void **state)
{
	struct report_port p = {0};
	int ret = netdev_ethtool_stats("lo", "*", &p);

	/* No statistics set: nothing, and not an error (or EOPNOTSUPP). */
	assert_true(ret == 0 || ret == -EOPNOTSUPP);
	assert_int_equal(p.n_counters[CSRC_NET], 0);
}

/* The veth's statistics: exactly what the globs keep, with its values. */
static void test_veth(void **state)
{
	struct report_port all = {0}, one = {0}, none = {0};
	const struct report_counter *c;

	assert_int_equal(netdev_ethtool_stats(VETH_A, "*", &all), 0);
	c = net_counter(&all, "peer_ifindex");
	assert_non_null(c);
	assert_int_equal(c->value, if_nametoindex(VETH_B));
	assert_true(all.n_counters[CSRC_NET] > 1); /* per-queue counters */

	assert_int_equal(netdev_ethtool_stats(VETH_A, " peer_* ", &one), 0);
	assert_int_equal(one.n_counters[CSRC_NET], 1);
	assert_string_equal(one.counters[CSRC_NET][0].name, "peer_ifindex");
	assert_int_equal(one.counters[CSRC_NET][0].value,
			 if_nametoindex(VETH_B));
	/* The other end names this one. */
	port_clear(&one);
	assert_int_equal(netdev_ethtool_stats(VETH_B, "peer_ifindex", &one), 0);
	assert_int_equal(one.n_counters[CSRC_NET], 1);
	assert_int_equal(one.counters[CSRC_NET][0].value,
			 if_nametoindex(VETH_A));

	assert_int_equal(netdev_ethtool_stats(VETH_A, "no-such-*", &none), 0);
	assert_int_equal(none.n_counters[CSRC_NET], 0);
	port_clear(&all);
	port_clear(&one);
}

/*
 * netdev_read() adds the statistics only when asked and only for the live
 * /sys (the ioctl asks the running kernel, not a fixture tree).
 */
static void test_netdev_read(void **state)
{
	struct sysfs_opts o = {.root = "/sys",
			       .netdev_stats = 1,
			       .netdev_stats_include = "peer_ifindex"};
	struct report_port p = {0};

	assert_int_equal(netdev_read(&o, VETH_A, &p), 0);
	assert_non_null(net_counter(&p, "peer_ifindex"));
	port_clear(&p);
	o.netdev_stats = 0;
	assert_int_equal(netdev_read(&o, VETH_A, &p), 0);
	assert_null(net_counter(&p, "peer_ifindex"));
	port_clear(&p);
	o.netdev_stats = 1;
	o.root = "/nonexistent-sysfs";
	assert_int_equal(netdev_read(&o, VETH_A, &p), 0);
	assert_int_equal(p.n_counters[CSRC_NET], 0);
	port_clear(&p);
}

/* Every interface here (lo and the pair): a filter keeps a subset. */
static void test_filter_on_live_interfaces(void **state)
{
	struct if_nameindex *ifs = if_nameindex(), *i;
	int seen = 0;

	assert_non_null(ifs);
	for (i = ifs; i->if_index; i++) {
		struct report_port all = {0}, some = {0};

		if (netdev_ethtool_stats(i->if_name, "*", &all) ||
		    !all.n_counters[CSRC_NET]) {
			port_clear(&all);
			continue;
		}
		seen++;
		assert_int_equal(
			netdev_ethtool_stats(i->if_name, "*queue_0*", &some),
			0);
		assert_true(some.n_counters[CSRC_NET] <
			    all.n_counters[CSRC_NET]);
		for (size_t k = 0; k < some.n_counters[CSRC_NET]; k++)
			assert_non_null(strstr(some.counters[CSRC_NET][k].name,
					       "queue_0"));
		port_clear(&all);
		port_clear(&some);
	}
	if_freenameindex(ifs);
	assert_int_equal(seen, 2); /* both ends of the veth pair */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_missing_interface),
		cmocka_unit_test(test_loopback),
		cmocka_unit_test(test_veth),
		cmocka_unit_test(test_netdev_read),
		cmocka_unit_test(test_filter_on_live_interfaces),
	};

	return cmocka_run_group_tests(tests, fixture_setup, NULL);
}
