// SPDX-License-Identifier: MIT
/* Logging: see log.h. */
#include "log.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define LOG_ONCE_SLOTS 256

struct log_once_slot {
	uint64_t hash;
	time_t last;
};

static struct {
	const char *progname;
	enum log_level level;
	pthread_mutex_t lock;
	struct log_once_slot once[LOG_ONCE_SLOTS];
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
	uint64_t h = 14695981039346656037ULL; /* FNV-1a */

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h ? h : 1;
}

int log_once(const char *key, unsigned interval, enum log_level level,
	     const char *fmt, ...)
{
	uint64_t h = log_hash(key);
	struct log_once_slot *slot;
	time_t now = time(NULL);
	int print = 1;
	va_list ap;

	if (level > log_state.level)
		return 0;
	pthread_mutex_lock(&log_state.lock);
	slot = &log_state.once[h % LOG_ONCE_SLOTS];
	if (slot->hash == h && now - slot->last < (time_t)interval)
		print = 0;
	else {
		slot->hash = h;
		slot->last = now;
	}
	pthread_mutex_unlock(&log_state.lock);
	if (!print)
		return 0;
	va_start(ap, fmt);
	log_vemit(level, fmt, ap);
	va_end(ap);
	return 1;
}
