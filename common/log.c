// SPDX-License-Identifier: MIT
/* Logging: see log.h. */
#include "log.h"
#include "fnv.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/*
 * log_once() remembers keys in an open-addressing set (linear probing,
 * backward-shift deletion): two keys that share a slot both stay. It holds
 * at most LOG_ONCE_MAX keys in twice as many slots; when full, keys whose
 * quiet period is over are reclaimed, and when none is, new conditions are
 * summarised in one line per LOG_ONCE_SUMMARY seconds instead of being
 * stored (bounded memory, no flood). A fixed array, not a common/hmap.h
 * table: logging must not allocate (it reports running out of memory).
 */
#define LOG_ONCE_MAX 1024
#define LOG_ONCE_SLOTS (2 * LOG_ONCE_MAX) /* a power of two */
#define LOG_ONCE_SUMMARY 60

struct log_once_entry {
	uint64_t hash; /* 0: empty slot */
	char *key;
	time_t until; /* quiet until then */
};

struct log_once_set {
	struct log_once_entry slot[LOG_ONCE_SLOTS];
	unsigned count;
	time_t summary_until;
	unsigned long suppressed; /* new conditions not stored, not shown */
};

static struct {
	const char *progname;
	enum log_level level;
	pthread_mutex_t lock;
	struct log_once_set once;
} log_state = {
	.progname = "ibpulse",
	.level = LOG_LVL_INFO,
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

static const char *const level_names[] = {"error", "warn", "info", "debug"};

void log_init(const char *progname, enum log_level level)
{
	log_state.progname = progname;
	log_state.level = level;
}

void log_set_level(enum log_level level)
{
	log_state.level = level;
}

int log_level_parse(const char *s, enum log_level *out)
{
	for (unsigned i = 0; i < sizeof(level_names) / sizeof(level_names[0]);
	     i++) {
		if (strcasecmp(s, level_names[i]) == 0) {
			*out = (enum log_level)i;
			return 0;
		}
	}
	if (strcasecmp(s, "warning") == 0) {
		*out = LOG_LVL_WARN;
		return 0;
	}
	return -22; /* -EINVAL */
}

static void __attribute__((format(printf, 2, 0)))
log_vemit(enum log_level level, const char *fmt, va_list ap)
{
	char line[1024];

	vsnprintf(line, sizeof(line), fmt, ap);
	/* One fprintf per line so concurrent threads do not interleave. */
	fprintf(stderr, "%s: %s: %s\n", log_state.progname, level_names[level],
		line);
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	if (level > log_state.level)
		return;
	va_start(ap, fmt);
	log_vemit(level, fmt, ap);
	va_end(ap);
}

static uint64_t log_hash(const char *s)
{
	uint64_t h = fnv1a_str(FNV1A_BASIS, s);

	return h ? h : 1;
}

static unsigned once_home(uint64_t hash)
{
	return (unsigned)(hash & (LOG_ONCE_SLOTS - 1));
}

/* The slot holding @key, or the empty slot where it would go. */
static struct log_once_entry *once_find(struct log_once_set *set,
					const char *key, uint64_t hash)
{
	unsigned i = once_home(hash);

	/* The set is never more than half full: an empty slot exists. */
	while (set->slot[i].hash &&
	       (set->slot[i].hash != hash || strcmp(set->slot[i].key, key)))
		i = (i + 1) & (LOG_ONCE_SLOTS - 1);
	return &set->slot[i];
}

/* Empty slot @i, moving later entries of its cluster back (no tombstones). */
static void once_delete(struct log_once_set *set, unsigned i)
{
	unsigned j = i;

	free(set->slot[i].key);
	for (;;) {
		unsigned k;

		j = (j + 1) & (LOG_ONCE_SLOTS - 1);
		if (!set->slot[j].hash)
			break;
		k = once_home(set->slot[j].hash);
		/* The entry at j may move to i unless its home lies in (i, j].
		 */
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		set->slot[i] = set->slot[j];
		i = j;
	}
	memset(&set->slot[i], 0, sizeof(set->slot[i]));
	set->count--;
}

/* Forget the keys whose quiet period is over. */
static void once_reclaim(struct log_once_set *set, time_t now)
{
	unsigned i = 0;

	while (i < LOG_ONCE_SLOTS) {
		if (set->slot[i].hash && set->slot[i].until <= now)
			once_delete(set, i); /* i now holds a moved entry */
		else
			i++;
	}
}

void log_once_reset(void)
{
	struct log_once_set *set = &log_state.once;

	pthread_mutex_lock(&log_state.lock);
	for (unsigned i = 0; i < LOG_ONCE_SLOTS; i++)
		free(set->slot[i].key);
	memset(set, 0, sizeof(*set));
	pthread_mutex_unlock(&log_state.lock);
}

enum once_verdict { ONCE_QUIET, ONCE_PRINT, ONCE_SUMMARY };

/* Decide for @key under the lock; *@suppressed: count for the summary. */
static enum once_verdict once_check(const char *key, unsigned interval,
				    time_t now, unsigned long *suppressed)
{
	struct log_once_set *set = &log_state.once;
	uint64_t h = log_hash(key);
	struct log_once_entry *e = once_find(set, key, h);

	if (e->hash) {
		if (now < e->until)
			return ONCE_QUIET;
		e->until = now + (time_t)interval;
		return ONCE_PRINT;
	}
	if (set->count >= LOG_ONCE_MAX) {
		once_reclaim(set, now);
		e = once_find(set, key, h);
	}
	if (set->count < LOG_ONCE_MAX) {
		e->key = strdup(key);
		if (!e->key)
			return ONCE_PRINT; /* out of memory: just log it */
		e->hash = h;
		e->until = now + (time_t)interval;
		set->count++;
		return ONCE_PRINT;
	}
	set->suppressed++;
	if (now < set->summary_until)
		return ONCE_QUIET;
	set->summary_until = now + LOG_ONCE_SUMMARY;
	*suppressed = set->suppressed;
	set->suppressed = 0;
	return ONCE_SUMMARY;
}

int log_once(const char *key, unsigned interval, enum log_level level,
	     const char *fmt, ...)
{
	enum once_verdict v = ONCE_PRINT;
	unsigned long suppressed = 0;
	time_t now = time(NULL);
	char line[1024];
	va_list ap;

	if (level > log_state.level)
		return 0;
	if (interval) {
		pthread_mutex_lock(&log_state.lock);
		v = once_check(key, interval, now, &suppressed);
		pthread_mutex_unlock(&log_state.lock);
	}
	if (v == ONCE_QUIET)
		return 0;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (v == ONCE_SUMMARY)
		log_msg(level,
			"more than %d distinct conditions to rate-limit: %lu "
			"message(s) about new ones suppressed since the last "
			"such line (one a %d s at most); the latest: %s",
			LOG_ONCE_MAX, suppressed, LOG_ONCE_SUMMARY, line);
	else
		log_msg(level, "%s", line);
	return 1;
}
