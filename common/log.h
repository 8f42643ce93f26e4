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
 * log_once() - log a message at most once per @key per @interval seconds
 * (0: every time). @key identifies the condition (a file path, say) and is
 * compared whole, so distinct keys never silence each other. The set of
 * keys is bounded (1,024, reclaimed as their intervals end): past that, new
 * conditions are not stored but summarised, one line a minute that counts
 * them and quotes the latest, never unbounded memory nor a flood. Returns 1
 * if a line was printed. Thread-safe.
 */
int log_once(const char *key, unsigned interval, enum log_level level,
	     const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Forget every key log_once() holds and free them (tests, clean exits). */
void log_once_reset(void);

#define log_err(...) log_msg(LOG_LVL_ERR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_LVL_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LVL_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_LVL_DEBUG, __VA_ARGS__)

#endif
