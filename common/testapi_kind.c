// SPDX-License-Identifier: MIT
/*
 * What a test is (testapi.h, "Test kinds"): the one classifier of test
 * names into the metric that judges them and the direction their data
 * flows, and the typed fields of a result's params. The collector's
 * baselines, expected figures and route attribution all ask here, so a
 * new test name is one row of the table below.
 */
#include "testapi_int.h"

#include <errno.h>
#include <string.h>

static const struct {
	const char *name;
	enum testapi_metric metric;
	unsigned flow;
	enum testapi_op op;
} testapi_kinds[] = {
#define BW TESTAPI_METRIC_BANDWIDTH
#define LAT TESTAPI_METRIC_LATENCY
	/* one way: the data a bandwidth test moves, and its direction */
	{"write_bw", BW, TESTAPI_FLOW_FORWARD, TESTAPI_OP_WRITE},
	{"send_bw", BW, TESTAPI_FLOW_FORWARD, TESTAPI_OP_SEND},
	{"read_bw", BW, TESTAPI_FLOW_REVERSE, TESTAPI_OP_READ},
	/* atomics: a request out and 8 bytes back, both paths limit it */
	{"fadd_bw", BW, TESTAPI_FLOW_BOTH, TESTAPI_OP_ATOMIC},
	{"cas_bw", BW, TESTAPI_FLOW_BOTH, TESTAPI_OP_ATOMIC},
	/* latency: a round trip crosses both paths */
	{"write_lat", LAT, TESTAPI_FLOW_BOTH, TESTAPI_OP_WRITE},
	{"send_lat", LAT, TESTAPI_FLOW_BOTH, TESTAPI_OP_SEND},
	{"read_lat", LAT, TESTAPI_FLOW_BOTH, TESTAPI_OP_READ},
	{"fadd_lat", LAT, TESTAPI_FLOW_BOTH, TESTAPI_OP_ATOMIC},
	{"cas_lat", LAT, TESTAPI_FLOW_BOTH, TESTAPI_OP_ATOMIC},
	{"ud_send_lat", LAT, TESTAPI_FLOW_BOTH, TESTAPI_OP_UD_SEND},
#undef BW
#undef LAT
};

static const char *const testapi_metric_names[] = {
	[TESTAPI_METRIC_BANDWIDTH] = "bandwidth",
	[TESTAPI_METRIC_LATENCY] = "latency",
};

const char *testapi_metric_name(enum testapi_metric m)
{
	return m == TESTAPI_METRIC_BANDWIDTH || m == TESTAPI_METRIC_LATENCY
		       ? testapi_metric_names[m]
		       : NULL;
}

int testapi_metric_parse(const char *name, enum testapi_metric *out)
{
	for (int m = TESTAPI_METRIC_BANDWIDTH;
	     name && m <= TESTAPI_METRIC_LATENCY; m++)
		if (!strcmp(name, testapi_metric_names[m])) {
			*out = (enum testapi_metric)m;
			return 0;
		}
	return -EINVAL;
}

int testapi_test_kind(const char *test, int bidirectional,
		      struct testapi_kind *out)
{
	*out = (struct testapi_kind){TESTAPI_METRIC_NONE, TESTAPI_FLOW_BOTH,
				     TESTAPI_OP_UNKNOWN};
	if (!test)
		return -ENOENT;
	for (size_t i = 0; i < sizeof(testapi_kinds) / sizeof(*testapi_kinds);
	     i++)
		if (!strcmp(test, testapi_kinds[i].name)) {
			out->metric = testapi_kinds[i].metric;
			out->op = testapi_kinds[i].op;
			out->flow = bidirectional ? TESTAPI_FLOW_BOTH
						  : testapi_kinds[i].flow;
			return 0;
		}
	return -ENOENT;
}

int testapi_test_measures(const char *test, enum testapi_metric m)
{
	struct testapi_kind k;

	return testapi_test_kind(test, 0, &k) ? 1 : k.metric == m;
}

/* ---- typed params ---- */

/* Integer member @key of @p in [@min, @max] into *@out; else unchanged. */
static void param_int(const json_t *p, const char *key, int64_t min,
		      int64_t max, int64_t *out)
{
	const json_t *v = json_object_get(p, key);

	if (json_is_integer(v) && json_integer_value(v) >= min &&
	    json_integer_value(v) <= max)
		*out = json_integer_value(v);
}

int testapi_params_decode(const char *json, struct testapi_params *out)
{
	int64_t dlid = 0;
	json_t *p;

	*out = (struct testapi_params){.size = -1, .qps = -1, .mtu = -1};
	if (!json)
		return 0;
	p = json_loads(json, 0, NULL);
	if (!json_is_object(p)) {
		json_decref(p);
		return -EINVAL;
	}
	param_int(p, "size", 1, INT64_MAX, &out->size);
	param_int(p, "qps", 1, INT64_MAX, &out->qps);
	param_int(p, "mtu", 256, INT64_MAX, &out->mtu);
	param_int(p, TESTAPI_PARAM_DLID, 1, TESTAPI_LID_MAX, &dlid);
	out->dlid = (unsigned)dlid;
	out->bidirectional = json_is_true(json_object_get(p, "bidirectional"));
	out->selftest = json_is_true(json_object_get(p, "selftest"));
	json_decref(p);
	return 0;
}

int testapi_params_encode(const struct testapi_params *p, json_t *obj)
{
	const struct {
		const char *key;
		int64_t v;
	} ints[] = {{"size", p->size},
		    {"qps", p->qps},
		    {"mtu", p->mtu},
		    {TESTAPI_PARAM_DLID, p->dlid ? (int64_t)p->dlid : -1}};
	int bad = 0;

	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
		if (ints[i].v >= 0)
			bad |= json_object_set_new(obj, ints[i].key,
						   json_integer(ints[i].v));
	bad |= json_object_set_new(obj, "bidirectional",
				   json_boolean(p->bidirectional));
	bad |= json_object_set_new(obj, "selftest", json_boolean(p->selftest));
	return bad ? -ENOMEM : 0;
}

int testapi_params_check(struct jdec *d, const json_t *p)
{
	int64_t dlid = 0;

	/* the typed fields an older probe never sent: absent is fine */
	return jdec_int(d, p, TESTAPI_PARAM_DLID, 1, TESTAPI_LID_MAX, 0, &dlid);
}
