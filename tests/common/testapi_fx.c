// SPDX-License-Identifier: MIT
/*
 * Fixtures of the test API codec's unit tests (testapi_fx.h): one body of
 * each kind with every value known, and a failed result with most values
 * unknown, as structs and as the encoders write them.
 */
#include "testapi_fx.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "buf.h"

void fx_good_result(struct testapi_result *r)
{
	testapi_result_init(r);
	r->id = (char *)"r-1";
	r->plan_id = (char *)"p1764412800-3f0c";
	r->profile = (char *)"bw";
	r->test = (char *)"write_bw";
	r->started = 1764413101.25;
	r->duration = 2.5;
	r->local_device = (char *)"mlx5_0";
	r->local_port = 1;
	r->peer_host = (char *)"node07";
	r->peer_device = (char *)"mlx5_1";
	r->peer_port = 2;
	r->outcome = TESTAPI_OK;
	r->busy = 1;
	r->busy_reason = (char *)"initiator: busy";
	for (int i = 0; i < TESTAPI_FIG_COUNT; i++)
		r->fig[i] = (i + 1) * 0.5;
	r->params = (char *)"{\"qps\":1,\"size\":65536}";
}

/* A failed test: what a probe knows of one that never started. */
void fx_failed_result(struct testapi_result *r)
{
	testapi_result_init(r);
	r->id = (char *)"r-2";
	r->profile = (char *)"lat";
	r->test = (char *)"send_lat";
	r->started = 1000.5;
	r->outcome = TESTAPI_CONTROL_ERROR;
	r->error = (char *)"connect: refused";
	r->wc_status = (char *)"IBV_WC_RETRY_EXC_ERR";
}

static uint16_t pkeys0[] = {65535, 32769};
static char *gids0[] = {(char *)"fe80:0000:0000:0000:0000:0000:0000:0001"};
static struct testapi_label labels[] = {{(char *)"rack", (char *)"r12"},
					{(char *)"leaf", (char *)"leaf03"}};
static char *profiles[] = {(char *)"bw", (char *)"lat"};

void fx_good_reg(struct testapi_reg *r, struct testapi_reg_port *ports)
{
	ports[0] = (struct testapi_reg_port){
		.device = (char *)"mlx5_0",
		.port = 1,
		.state = 4,
		.link_layer = (char *)"InfiniBand",
		.subnet_prefix = (char *)"fe80:0000:0000:0000",
		.lid = 12,
		.pkeys = pkeys0,
		.n_pkeys = 2,
		.gids = gids0,
		.n_gids = 1};
	ports[1] = (struct testapi_reg_port){
		.device = (char *)"mlx5_0", .port = 2, .state = -1, .lid = -1};
	*r = (struct testapi_reg){.host = (char *)"node01",
				  .address = (char *)"10.0.0.1",
				  .port = 18515,
				  .labels = labels,
				  .n_labels = 2,
				  .profiles = profiles,
				  .n_profiles = 2,
				  .ports = ports,
				  .n_ports = 2};
}

void fx_good_plan(struct testapi_plan *p, struct testapi_plan_test *t,
		  struct testapi_key *k)
{
	t[0] = (struct testapi_plan_test){
		.id = (char *)"p1764412800-3f0c9a4d1e2b7c55",
		.profile = (char *)"bw",
		.local_device = (char *)"mlx5_0",
		.local_port = 1,
		.peer_host = (char *)"node07",
		.peer_address = (char *)"10.0.0.7",
		.peer_tcp_port = 18515,
		.peer_device = (char *)"mlx5_0",
		.peer_hca_port = 1,
		.not_before = 1764413100,
		.deadline = 1764413130,
		.has_ticket = 1,
		.ticket = {.period = 490114,
			   .not_before_ms = 1764413100000,
			   .deadline_ms = 1764413130000,
			   .key = (char *)KEY_A}};
	t[1] = (struct testapi_plan_test){
		.id = (char *)"p1764412800-0000000000000002",
		.profile = (char *)"lat",
		.local_device = (char *)"mlx5_0",
		.local_port = 2,
		.peer_host = (char *)"node08",
		.peer_address = (char *)"10.0.0.8",
		.peer_tcp_port = 18515,
		.peer_device = (char *)"mlx5_1",
		.peer_hca_port = 1,
		.dlid = 153,
		.not_before = 1764413200.5,
		.deadline = 1764413230.5};
	k[0] = (struct testapi_key){.period = 490114, .key = (char *)KEY_B};
	k[1] = (struct testapi_key){.period = 490115, .key = (char *)KEY_C};
	*p = (struct testapi_plan){.host = (char *)"node01",
				   .period_seconds = 3600,
				   .period_start = 1764412800,
				   .tests = t,
				   .n_tests = 2,
				   .keys = k,
				   .n_keys = 2,
				   .has_keys = 1};
}

/* The results body of @n results as the probe sends it (caller frees). */
char *fx_results_body(const struct testapi_result *r, size_t n)
{
	struct buf b;
	char *item, *text;

	buf_init(&b, 1 << 20);
	assert_int_equal(testapi_results_begin(&b, "node01"), 0);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(testapi_result_encode(&r[i], &item), 0);
		assert_int_equal(testapi_results_item(&b, item, strlen(item)),
				 0);
		free(item);
	}
	assert_int_equal(testapi_results_end(&b, 3, 0), 0);
	text = strdup(b.data);
	buf_free(&b);
	return text;
}

char *fx_reg_body(void)
{
	struct testapi_reg r;
	struct testapi_reg_port ports[2];
	char *text;

	fx_good_reg(&r, ports);
	assert_int_equal(testapi_reg_encode(&r, &text), 0);
	return text;
}

char *fx_plan_body(void)
{
	struct testapi_plan p;
	struct testapi_plan_test t[2];
	struct testapi_key k[2];
	char *text;

	fx_good_plan(&p, t, k);
	assert_int_equal(testapi_plan_encode(&p, &text), 0);
	return text;
}
