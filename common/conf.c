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
	case CONF_GONE:
		if (value) /* a line or an override, not the defaults */
			log_warn("%s [%s] %s is no longer read: %s", "config",
				 o->section, o->name, o->help);
		return 0;
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

		if (o->type == CONF_GONE)
			continue;
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
	snprintf(err, errlen,
		 "unknown key '%s%s%s' (= '%s'): --print-config lists the keys",
		 section ? section : "", section ? "." : "", name,
		 value ? value : "");
	return -ENOENT;
}

/* A key already set in the file: its section, name and line. */
struct conf_seen {
	struct conf_seen *next;
	int line;
	char key[]; /* "section\0name\0" */
};

struct conf_load_ctx {
	const struct conf_opt *opts;
	void *obj;
	conf_extra_fn extra;
	FILE *f;
	char *line; /* getline()'s buffer */
	size_t cap;
	int lineno;   /* the line inih parses now: it reads one per call */
	int err_line; /* the first line a handler or the reader refused */
	int ret;
	struct conf_seen *seen;
	char msg[512];
};

/*
 * inih's reader: one whole line per call, so the handler knows its line
 * number (inih counts a line longer than its buffer as two, and reads on
 * after an error). Leading white space goes (an indented line is a line
 * of its own, never a continuation of the previous value), a comment
 * reaches inih empty, and a line too long for inih stops the parse: so do
 * a handler's error (returning NULL ends the file early).
 */
static char *conf_reader(char *str, int num, void *stream)
{
	struct conf_load_ctx *c = stream;
	ssize_t n;
	char *p;

	if (c->err_line)
		return NULL;
	n = getline(&c->line, &c->cap, c->f);
	if (n < 0)
		return NULL;
	c->lineno++;
	while (n && (c->line[n - 1] == '\n' || c->line[n - 1] == '\r'))
		c->line[--n] = '\0';
	p = c->line + strspn(c->line, " \t");
	if (*p == ';' || *p == '#')
		*p = '\0';
	if (strlen(p) + 2 > (size_t)num) {
		snprintf(c->msg, sizeof(c->msg),
			 "the line is longer than %d characters", num - 2);
		c->err_line = c->lineno;
		c->ret = -EINVAL;
		return NULL;
	}
	snprintf(str, (size_t)num, "%s\n", p);
	return str;
}

/* 0, or -EEXIST with both lines in c->msg when @section.@name was set. */
static int conf_once(struct conf_load_ctx *c, const char *section,
		     const char *name)
{
	size_t ls = strlen(section) + 1, ln = strlen(name) + 1;
	struct conf_seen *s;

	for (s = c->seen; s; s = s->next) {
		if (strcmp(s->key, section) || strcmp(s->key + ls, name))
			continue;
		snprintf(c->msg, sizeof(c->msg),
			 "%s: set again in [%s] (first on line %d); each key "
			 "may be set once",
			 name, section, s->line);
		return -EEXIST;
	}
	s = malloc(sizeof(*s) + ls + ln);
	if (!s) {
		snprintf(c->msg, sizeof(c->msg), "out of memory");
		return -ENOMEM;
	}
	s->line = c->lineno;
	memcpy(s->key, section, ls);
	memcpy(s->key + ls, name, ln);
	s->next = c->seen;
	c->seen = s;
	return 0;
}

static int conf_ini_handler(void *user, const char *section, const char *name,
			    const char *value)
{
	struct conf_load_ctx *c = user;
	int known_section = 0, ret;

	if (c->err_line)
		return 1; /* stopped: the reader reads no further */
	for (const struct conf_opt *o = c->opts; o->name; o++)
		if (!strcmp(o->section, section))
			known_section = 1;
	ret = conf_once(c, section, name);
	if (!ret && !known_section && c->extra)
		ret = c->extra(c->obj, section, name, value, c->msg,
			       sizeof(c->msg));
	else if (!ret)
		ret = conf_set(c->opts, c->obj, section, name, value, c->msg,
			       sizeof(c->msg));
	if (ret) {
		c->ret = ret;
		c->err_line = c->lineno;
	}
	return ret == 0; /* inih: 0 marks the line as the first error */
}

static void conf_load_done(struct conf_load_ctx *c)
{
	while (c->seen) {
		struct conf_seen *next = c->seen->next;

		free(c->seen);
		c->seen = next;
	}
	free(c->line);
	if (c->f)
		fclose(c->f);
}

int conf_load(const struct conf_opt *opts, void *obj, const char *path,
	      conf_extra_fn extra, char *err, size_t errlen)
{
	struct conf_load_ctx c = {.opts = opts, .obj = obj, .extra = extra};
	int line, ret = 0;

	c.f = fopen(path, "re");
	if (!c.f) {
		ret = -errno;
		snprintf(err, errlen, "%s: cannot open: %s", path,
			 strerror(-ret));
		return ret;
	}
	line = ini_parse_stream(conf_reader, &c, conf_ini_handler, &c);
	if (line == -2) {
		snprintf(err, errlen, "%s: out of memory", path);
		ret = -ENOMEM;
	} else if (c.err_line && (line <= 0 || line >= c.err_line)) {
		/* the reader's or a handler's: the first bad line */
		snprintf(err, errlen, "%s:%d: %s", path, c.err_line, c.msg);
		ret = c.ret;
	} else if (line > 0) {
		/* inih's own: an earlier line is neither a key nor a section */
		snprintf(err, errlen,
			 "%s:%d: syntax error: not 'key = value', '[section]' "
			 "or a comment",
			 path, line);
		ret = -EINVAL;
	} else if (ferror(c.f)) {
		snprintf(err, errlen, "%s: read error", path);
		ret = -EIO;
	}
	conf_load_done(&c);
	return ret;
}

void conf_print(const struct conf_opt *opts, const void *obj, FILE *f)
{
	const char *section = NULL;

	for (const struct conf_opt *o = opts; o->name; o++) {
		const void *v = (const char *)obj + o->offset;

		if (o->type == CONF_GONE)
			continue;
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
		case CONF_GONE:
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
