// SPDX-License-Identifier: MIT
/*
 * Unit tests for the ethtool statistics reader (probe/netdev.c) against
 * the live kernel: a missing interface fails with -ENODEV, loopback has no
 * statistics set, and on any interface that has one (veth, virtio, ifb)
 * the name filter keeps a subset of what "*" keeps.
 */
#include <errno.h>
#include <net/if.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "netdev.h"
#include "report.h"

static void port_clear(struct report_port *p)
{
	for (size_t i = 0; i < p->n_counters[CSRC_NET]; i++)
		free(p->counters[CSRC_NET][i].name);
	free(p->counters[CSRC_NET]);
	memset(p, 0, sizeof(*p));
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
			netdev_ethtool_stats(i->if_name, "*packets*", &some),
			0);
		assert_true(some.n_counters[CSRC_NET] <=
			    all.n_counters[CSRC_NET]);
		for (size_t k = 0; k < some.n_counters[CSRC_NET]; k++)
			assert_non_null(strstr(some.counters[CSRC_NET][k].name,
					       "packets"));
		port_clear(&all);
		port_clear(&some);
	}
	if_freenameindex(ifs);
	if (!seen)
		print_message("no interface with ethtool statistics here\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_missing_interface),
		cmocka_unit_test(test_loopback),
		cmocka_unit_test(test_filter_on_live_interfaces),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
