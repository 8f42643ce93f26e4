/* SPDX-License-Identifier: MIT */
/*
 * The keys of the database's setting table (schema/010_settings.sql):
 * the collector's settings that the exporter must use as they are, written
 * by the collector at every start (collector/store/store.c) and read by the
 * exporter at every scrape (exporter/dbread.c). Values are text.
 */
#ifndef IBPULSE_DBSETTINGS_H
#define IBPULSE_DBSETTINGS_H

/* [planner] period: seconds of one planner period */
#define DBSET_PLAN_PERIOD "planner.period"
/* [planner] group_label: the probe label naming a group ("": none) */
#define DBSET_GROUP_LABEL "planner.group_label"
/* [collector] results_max_ahead: seconds a result may start ahead */
#define DBSET_RESULTS_MAX_AHEAD "collector.results_max_ahead"

/* What the exporter assumes of a database with no such row (one an older
 * collector wrote, or none yet): the collector's defaults (the period:
 * unknown, the exporter's test_period alone). */
#define DBSET_DEFAULT_GROUP_LABEL "leaf"
#define DBSET_DEFAULT_RESULTS_MAX_AHEAD 300.0

#endif
