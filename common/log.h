/* SPDX-License-Identifier: MIT */
/*
 * Logging for the ibpulse daemons and tools: one line per message on stderr
 * (journald adds the timestamp under systemd), a level threshold, and a
 * rate-limited variant for per-file problems that would otherwise repeat
 * on every scan.
 */
#ifndef IBPULSE_LOG_H
#define IBPULSE_LOG_H

#include <stdarg.h>

enum log_level { LOG_LVL_ERR = 0, LOG_LVL_WARN, LOG_LVL_INFO, LOG_LVL_DEBUG };

/* Set the threshold and the program name printed before each line. */
void log_init(const char *progname, enum log_level level);
void log_set_level(enum log_level level);
/* Parse "error", "warn", "info", "debug"; -EINVAL otherwise. */
int log_level_parse(const char *s, enum log_level *out);

void log_msg(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * log_once() - log a message at most once per @key per @interval seconds.
 * @key identifies the condition (a file path, say); the table holding keys
 * is bounded, so a flood of distinct keys degrades to "log everything",
 * never to unbounded memory. Returns 1 if the message was printed.
 */
int log_once(const char *key, unsigned interval, enum log_level level,
	     const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#define log_err(...) log_msg(LOG_LVL_ERR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_LVL_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LVL_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_LVL_DEBUG, __VA_ARGS__)

#endif
