// SPDX-License-Identifier: MIT
/* The test API's figures of a verbs test side (vfig.h). */
#include "vfig.h"

#include <math.h>

void vfig_of(double fig[TESTAPI_FIG_COUNT], enum vt_test test,
	     const struct vt_side *s)
{
	for (int i = 0; i < TESTAPI_FIG_COUNT; i++)
		fig[i] = NAN;
	/* the test API's one classifier says which figure judges it */
	if (testapi_test_measures(vt_test_name(test),
				  TESTAPI_METRIC_BANDWIDTH)) {
		fig[TESTAPI_FIG_BW_AVG] = s->bw_avg_Bps;
		fig[TESTAPI_FIG_BW_PEAK] = s->bw_peak_Bps;
		fig[TESTAPI_FIG_BW_MIN] = s->bw_min_Bps;
	}
	fig[TESTAPI_FIG_MSG_RATE] = s->msg_rate;
	if (s->has_lat && s->lat.n) {
		fig[TESTAPI_FIG_LAT_MIN] = s->lat.min_s;
		fig[TESTAPI_FIG_LAT_MEDIAN] = s->lat.median_s;
		fig[TESTAPI_FIG_LAT_MEAN] = s->lat.mean_s;
		fig[TESTAPI_FIG_LAT_P99] = s->lat.p99_s;
		fig[TESTAPI_FIG_LAT_P999] = s->lat.p999_s;
		fig[TESTAPI_FIG_LAT_MAX] = s->lat.max_s;
		fig[TESTAPI_FIG_LAT_STDEV] = s->lat.stdev_s;
	}
	fig[TESTAPI_FIG_CPU] = s->cpu_s;
}
