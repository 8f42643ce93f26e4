// SPDX-License-Identifier: MIT
/*
 * Unit tests for what PortInfo says about a link (probe/fabric/link.c):
 * lanes of each LinkWidth bit, the widest enabled width, the active
 * speed (an extended speed over FDR10 over the base speeds), and the
 * "degraded" verdict: up, and active width or speed below enabled.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "fabric.h"

static struct fabric_port up(void)
{
	struct fabric_port p;

	memset(&p, 0, sizeof(p));
	p.state = 4;	  /* ACTIVE */
	p.phys_state = 5; /* LinkUp */
	p.width_active = 2;
	p.width_enabled = 3; /* 1X or 4X */
	p.speed_active = 4;  /* QDR */
	p.speed_enabled = 7;
	return p;
}

static void test_widths(void **state)
{
	(void)state;
	assert_int_equal(fabric_width_lanes(1), 1);
	assert_int_equal(fabric_width_lanes(2), 4);
	assert_int_equal(fabric_width_lanes(4), 8);
	assert_int_equal(fabric_width_lanes(8), 12);
	assert_int_equal(fabric_width_lanes(16), 2);
	assert_int_equal(fabric_width_lanes(3), 0);
	assert_int_equal(fabric_width_max(3), 4);
	assert_int_equal(fabric_width_max(0x1f), 12);
	assert_int_equal(fabric_width_max(0x11), 2);
	assert_int_equal(fabric_width_max(0), 0);
}

static void test_speeds(void **state)
{
	struct fabric_port p = up();

	(void)state;
	assert_string_equal(fabric_speed_name(&p), "QDR");
	assert_true(fabric_speed_active(&p) == 10.0);
	p.fdr10_active = p.fdr10_enabled = 1;
	assert_string_equal(fabric_speed_name(&p), "FDR10");
	p.espeed_active = 2; /* EDR */
	p.espeed_enabled = 3;
	assert_string_equal(fabric_speed_name(&p), "EDR");
	assert_true(fabric_speed_active(&p) == 25.0);
	p.espeed_active = 8;
	p.espeed_enabled = 8;
	assert_string_equal(fabric_speed_name(&p), "NDR");
	assert_true(fabric_speed_enabled_max(&p) == 100.0);
	p = up();
	p.speed_active = 1;
	assert_string_equal(fabric_speed_name(&p), "SDR");
	assert_true(fabric_speed_active(&p) == 2.5);
}

static void test_degraded(void **state)
{
	struct fabric_port p = up();
	char why[64] = "";

	(void)state;
	assert_false(fabric_port_degraded(&p, why, sizeof(why)));
	/* the classic 4X cable trained at 1X */
	p.width_active = 1;
	assert_true(fabric_port_degraded(&p, why, sizeof(why)));
	assert_string_equal(why, "width 1X of 4X enabled");
	/* enabled for 1X only: what it runs at is what it may */
	p.width_enabled = 1;
	assert_false(fabric_port_degraded(&p, NULL, 0));
	/* an EDR link that came up at FDR */
	p = up();
	p.espeed_enabled = 3;
	p.espeed_active = 1;
	assert_true(fabric_port_degraded(&p, why, sizeof(why)));
	assert_string_equal(why, "speed FDR of EDR enabled");
	/* QDR running with FDR10 enabled */
	p = up();
	p.fdr10_enabled = 1;
	assert_true(fabric_port_degraded(&p, why, sizeof(why)));
	assert_string_equal(why, "speed QDR of FDR10 enabled");
	/* a port that is down is not degraded, it is down */
	p = up();
	p.width_active = 1;
	p.state = 1;
	p.phys_state = 2;
	assert_false(fabric_port_degraded(&p, NULL, 0));
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(fabric_node_type_name(FABRIC_SWITCH), "switch");
	assert_string_equal(fabric_node_type_name(FABRIC_CA), "ca");
	assert_string_equal(fabric_node_type_name(FABRIC_ROUTER), "router");
	assert_string_equal(fabric_node_type_name((enum fabric_node_type)9),
			    "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_widths),
		cmocka_unit_test(test_speeds),
		cmocka_unit_test(test_degraded),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
