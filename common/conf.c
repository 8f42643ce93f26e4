// SPDX-License-Identifier: MIT
/* Table-driven configuration: see conf.h. */
#include "conf.h"
#include "log.h"

#include <errno.h>
#include <ini.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static void *conf_field(const struct conf_opt *o, void *obj)
{
	return (char *)obj + o->offset;
}

static int conf_parse_bool(const char *v, int *out)
{
	static const char *const yes[] = {"1", "true", "yes", "on"};
	static const char *const no[] = {"0", "false", "no", "off"};

	for (unsigned i = 0; i < 4; i++) {
		if (!strcasecmp(v, yes[i])) {
			*out = 1;
			return 0;
		}
		if (!strcasecmp(v, no[i])) {
			*out = 0;
			return 0;
		}
	}
	return -EINVAL;
}

static int conf_apply(const struct conf_opt *o, void *obj, const char *value,
		      char *err, size_t errlen)
{
	void *f = conf_field(o, obj);
	char *end;

	enum log_level lvl;

	if (o->type == CONF_LOG && (!value || log_level_parse(value, &lvl))) {
		snprintf(err, errlen,
			 "%s: '%s' is not one of error, warn, info, debug",
			 o->name, value ? value : "");
		return -EINVAL;
	}
	switch (o->type) {
	case CONF_LOG: /* checked above; kept as text */
	case CONF_STR: {
		char *s = value ? strdup(value) : NULL;

		if (value && !s)
			return -ENOMEM;
		free(*(char **)f);
		*(char **)f = s;
		return 0;
	}
	case CONF_INT: {
		long long v;

		errno = 0;
		v = strtoll(value, &end, 0);
		if (errno || end == value || *end || v < o->min || v > o->max) {
			snprintf(err, errlen,
				 "%s: '%s' is not an integer in [%.0f, %.0f]",
				 o->name, value, o->min, o->max);
			return -EINVAL;
		}
		*(long long *)f = v;
		return 0;
	}
	case CONF_DOUBLE: {
		double v;

		errno = 0;
		v = strtod(value, &end);
		if (errno || end == value || *end || !isfinite(v) ||
		    v < o->min || v > o->max) {
			snprintf(err, errlen,
				 "%s: '%s' is not a number in [%g, %g]",
				 o->name, value, o->min, o->max);
			return -EINVAL;
		}
		*(double *)f = v;
		return 0;
	}
	case CONF_BOOL:
		if (conf_parse_bool(value, (int *)f)) {
			snprintf(err, errlen,
				 "%s: '%s' is not a boolean (true/false, "
				 "yes/no, on/off, 1/0)",
				 o->name, value);
			return -EINVAL;
		}
		return 0;
	}
	return -EINVAL;
}

int conf_defaults(const struct conf_opt *opts, void *obj)
{
	char err[256];

	for (const struct conf_opt *o = opts; o->name; o++) {
		int ret;

		if (o->type != CONF_STR && !o->def)
			return -EINVAL;
		ret = conf_apply(o, obj, o->def, err, sizeof(err));
		if (ret)
			return ret;
	}
	return 0;
}

int conf_set(const struct conf_opt *opts, void *obj, const char *section,
	     const char *name, const char *value, char *err, size_t errlen)
{
	for (const struct conf_opt *o = opts; o->name; o++) {
		if (strcmp(o->name, name) != 0)
			continue;
		if (section && strcmp(o->section, section) != 0)
			continue;
		return conf_apply(o, obj, value, err, errlen);
	}
	snprintf(err, errlen, "unknown key '%s%s%s'", section ? section : "",
		 section ? "." : "", name);
	return -ENOENT;
}

struct conf_load_ctx {
	const struct conf_opt *opts;
	void *obj;
	conf_extra_fn extra;
	char msg[256];
	int ret;
};

static int conf_ini_handler(void *user, const char *section, const char *name,
			    const char *value)
{
	struct conf_load_ctx *c = user;
	int known_section = 0;

	for (const struct conf_opt *o = c->opts; o->name; o++)
		if (!strcmp(o->section, section))
			known_section = 1;
	if (!known_section && c->extra)
		c->ret = c->extra(c->obj, section, name, value, c->msg,
				  sizeof(c->msg));
	else
		c->ret = conf_set(c->opts, c->obj, section, name, value, c->msg,
				  sizeof(c->msg));
	return c->ret == 0; /* inih: 0 stops parsing and reports the line */
}

int conf_load(const struct conf_opt *opts, void *obj, const char *path,
	      conf_extra_fn extra, char *err, size_t errlen)
{
	struct conf_load_ctx c = {.opts = opts, .obj = obj, .extra = extra};
	int line = ini_parse(path, conf_ini_handler, &c);

	if (line == -1) {
		snprintf(err, errlen, "%s: cannot open: %s", path,
			 strerror(errno));
		return -ENOENT;
	}
	if (line == -2) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	if (line > 0) {
		snprintf(err, errlen, "%s:%d: %s", path, line,
			 c.ret ? c.msg : "syntax error");
		return c.ret ? c.ret : -EINVAL;
	}
	return 0;
}

void conf_print(const struct conf_opt *opts, const void *obj, FILE *f)
{
	const char *section = NULL;

	for (const struct conf_opt *o = opts; o->name; o++) {
		const void *v = (const char *)obj + o->offset;

		if (!section || strcmp(section, o->section)) {
			fprintf(f, "%s[%s]\n", section ? "\n" : "", o->section);
			section = o->section;
		}
		fprintf(f, "# %s (default: %s", o->help,
			o->def ? o->def : "unset");
		if (o->type == CONF_INT)
			fprintf(f, "; range %.0f to %.0f", o->min, o->max);
		else if (o->type == CONF_DOUBLE)
			fprintf(f, "; range %g to %g", o->min, o->max);
		fprintf(f, ")\n");
		switch (o->type) {
		case CONF_STR:
		case CONF_LOG:
			if (*(char *const *)v)
				fprintf(f, "%s = %s\n", o->name,
					*(char *const *)v);
			else
				fprintf(f, "# %s =\n", o->name);
			break;
		case CONF_INT:
			fprintf(f, "%s = %lld\n", o->name,
				*(const long long *)v);
			break;
		case CONF_DOUBLE:
			fprintf(f, "%s = %g\n", o->name, *(const double *)v);
			break;
		case CONF_BOOL:
			fprintf(f, "%s = %s\n", o->name,
				*(const int *)v ? "true" : "false");
			break;
		}
	}
}

void conf_free(const struct conf_opt *opts, void *obj)
{
	if (!obj)
		return;
	for (const struct conf_opt *o = opts; o->name; o++) {
		if (o->type == CONF_STR || o->type == CONF_LOG) {
			char **s = conf_field(o, obj);

			free(*s);
			*s = NULL;
		}
	}
}
