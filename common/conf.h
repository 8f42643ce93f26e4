/* SPDX-License-Identifier: MIT */
/*
 * Table-driven configuration (after Redis's config.c): one descriptor array
 * per program drives defaults, INI parsing (inih), command-line overrides
 * and --print-config. Each descriptor names a field of the program's own
 * settings struct by offset.
 *
 * A log_level key is of type CONF_LOG: checked here, once, whatever
 * program or file sets it (cli.h applies it).
 *
 * A bad value or an unknown key is an error that names the file, the line,
 * the key, the value and the valid range; conf_load() stops at the first
 * bad line (a key set twice in one section is one, naming both lines), so
 * the line named is the first wrong one. Nothing is half-applied by
 * conf_load() callers that load into a scratch struct and swap on success.
 */
#ifndef IBPULSE_CONF_H
#define IBPULSE_CONF_H

#include <stddef.h>
#include <stdio.h>

enum conf_type {
	CONF_STR,    /* char *, owned by the struct (conf_free frees) */
	CONF_INT,    /* long long, within [min, max] */
	CONF_BOOL,   /* int: true/false, yes/no, on/off, 1/0 */
	CONF_DOUBLE, /* double, within [min, max] */
	CONF_LOG,    /* char *: a log level, checked by log_level_parse() */
	CONF_GONE,   /* a key no longer read: a line that sets it is taken
		      * with a warning that says why (its help: where it
		      * went), so an older file still loads; no field, not
		      * printed */
};

struct conf_opt {
	const char *section; /* INI section, e.g. "collector" */
	const char *name;    /* key, e.g. "listen_port" */
	enum conf_type type;
	size_t offset;	  /* offsetof(struct settings, field) */
	const char *def;  /* default, as text; NULL for an unset string */
	double min, max;  /* for CONF_INT / CONF_DOUBLE */
	const char *help; /* one line, shown by --print-config */
};

/*
 * Handler for sections the table does not describe (e.g. [tokens] where
 * every key is a host name). Return 0 to accept, or a negative errno and
 * a reason in @err.
 */
typedef int (*conf_extra_fn)(void *obj, const char *section, const char *name,
			     const char *value, char *err, size_t errlen);

/* Set every option to its default. Returns 0 or -ENOMEM/-EINVAL. */
int conf_defaults(const struct conf_opt *opts, void *obj);

/*
 * conf_set() - set one option from text. @section may be NULL to match
 * by name alone (command-line overrides). Returns 0, -ENOENT for an
 * unknown key, or -EINVAL with a reason (naming the valid range) in @err.
 */
int conf_set(const struct conf_opt *opts, void *obj, const char *section,
	     const char *name, const char *value, char *err, size_t errlen);

/*
 * conf_load() - read an INI file into @obj (which should hold defaults).
 * @extra handles sections not in @opts (NULL: they are errors). Stops at
 * the first bad line: a bad value or key (-EINVAL, -ENOENT), a key already
 * set in its section (-EEXIST), a line inih cannot parse or longer than
 * its buffer (-EINVAL). Returns 0, or a negative errno with
 * "PATH:LINE: reason" in @err (the open error has no line).
 */
int conf_load(const struct conf_opt *opts, void *obj, const char *path,
	      conf_extra_fn extra, char *err, size_t errlen);

/* Print every option as INI, with its help and default, to @f. */
void conf_print(const struct conf_opt *opts, const void *obj, FILE *f);

/* Free the strings the table owns in @obj. NULL is fine. */
void conf_free(const struct conf_opt *opts, void *obj);

#endif
