// SPDX-License-Identifier: MIT
/*
 * The command-line skeleton (cli.h): a command's flag table becomes a
 * getopt_long table, its --help and its usage line; keyed flags become
 * overrides that cli_load() applies after the config file through the
 * program's conf.h table, so their errors read like a config line's.
 */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "log.h"

#define CLI_MAX_FLAGS 96
#define CLI_LONG_BASE 1000 /* getopt_long's val for row i: base + i */
#define CLI_WIDTH 79	   /* usage lines wrap before this column */
#define CLI_HELP_ID (-100)

static const struct cli_flag cli_help_flag = {"help", 'h',	   NULL,
					      NULL,   CLI_HELP_ID, "this help"};

/* The rows getopt sees: --help, the command's, then its siblings'. */
struct cli_table {
	const struct cli_flag *row[CLI_MAX_FLAGS];
	int other[CLI_MAX_FLAGS];
	struct option lo[CLI_MAX_FLAGS + 1];
	char shorts[3 * CLI_MAX_FLAGS + 2];
	int n;
};

static int cli_table_has(const struct cli_table *t, const char *name)
{
	for (int i = 0; i < t->n; i++)
		if (!strcmp(t->row[i]->name, name))
			return 1;
	return 0;
}

static void cli_table_add(struct cli_table *t, const struct cli_flag *f,
			  int other)
{
	size_t sl = strlen(t->shorts);

	if (t->n == CLI_MAX_FLAGS || cli_table_has(t, f->name))
		return;
	t->row[t->n] = f;
	t->other[t->n] = other;
	t->lo[t->n] = (struct option){f->name,
				      f->arg ? required_argument : no_argument,
				      NULL, CLI_LONG_BASE + t->n};
	if (f->letter && !strchr(t->shorts, f->letter)) {
		t->shorts[sl++] = (char)f->letter;
		if (f->arg)
			t->shorts[sl++] = ':';
		t->shorts[sl] = '\0';
	}
	t->n++;
}

static void cli_table_build(const struct cli_cmd *cmd, struct cli_table *t)
{
	memset(t, 0, sizeof(*t));
	cli_table_add(t, &cli_help_flag, 0);
	for (const struct cli_flag *f = cmd->flags; f && f->name; f++)
		cli_table_add(t, f, 0);
	for (const struct cli_flag *f = cmd->others; f && f->name; f++)
		cli_table_add(t, f, 1);
}

/* The row getopt_long answered with @opt, or -1. */
static int cli_table_row(const struct cli_table *t, int opt)
{
	if (opt >= CLI_LONG_BASE && opt < CLI_LONG_BASE + t->n)
		return opt - CLI_LONG_BASE;
	for (int i = 0; i < t->n; i++)
		if (t->row[i]->letter && t->row[i]->letter == opt)
			return i;
	return -1;
}

void cli_error(const struct cli_cmd *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s%s%s: ", cmd->prog, cmd->name ? " " : "",
		cmd->name ? cmd->name : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int cli_override(const struct cli_cmd *cmd, struct cli_args *a,
			const char *flag, const char *key, const char *value)
{
	if (a->n_ov == CLI_MAX_OVERRIDES) {
		cli_error(cmd, "at most %d settings on the command line",
			  CLI_MAX_OVERRIDES);
		return -E2BIG;
	}
	a->ov[a->n_ov++] = (struct cli_override){flag, key, value};
	return 0;
}

/* --set KEY=VALUE (the argv string is split in place). */
static int cli_set(const struct cli_cmd *cmd, struct cli_args *a, char *kv)
{
	char *eq = strchr(kv, '=');

	if (!eq || eq == kv) {
		cli_error(cmd, "--set wants KEY=VALUE, not '%s'", kv);
		return -EINVAL;
	}
	*eq = '\0';
	return cli_override(cmd, a, "--set", kv, eq + 1);
}

/* One flag found: 0 go on, CLI_DONE, or -errno (printed). */
static int cli_take(const struct cli_cmd *cmd, const struct cli_flag *f,
		    char *value, struct cli_args *a, cli_flag_fn fn, void *arg)
{
	char err[512] = "";
	int ret;

	if (f->key)
		return cli_override(cmd, a, f->name, f->key,
				    f->arg ? value : "true");
	switch (f->id) {
	case CLI_HELP_ID:
		cli_help(cmd, stdout);
		return CLI_DONE;
	case CLI_VERSION:
		printf("%s %s\n", cmd->prog, IBPULSE_VERSION);
		return CLI_DONE;
	case CLI_CONFIG:
		a->config = value;
		return 0;
	case CLI_PRINT_CONFIG:
		a->print_config = 1;
		return 0;
	case CLI_SET:
		return cli_set(cmd, a, value);
	case CLI_IGNORE:
		return 0;
	}
	ret = fn ? fn(arg, f->id, value, err, sizeof(err)) : -EINVAL;
	if (ret)
		cli_error(cmd, "%s", err[0] ? err : "cannot take this option");
	return ret;
}

static void cli_bad_option(const struct cli_cmd *cmd, char **argv)
{
	char flag[8];
	const char *what = argv[optind - 1];

	if (optopt && optopt < CLI_LONG_BASE) {
		snprintf(flag, sizeof(flag), "-%c", optopt);
		what = flag;
	}
	cli_error(cmd, "unknown or incomplete option '%s'", what);
	cli_synopsis(cmd, stderr, "usage: ");
}

int cli_parse(const struct cli_cmd *cmd, int argc, char **argv,
	      struct cli_args *a, cli_flag_fn fn, void *arg)
{
	struct cli_table *t = malloc(sizeof(*t));
	int opt, ret = 0;

	if (!t)
		return -ENOMEM;
	cli_table_build(cmd, t);
	optind = 0; /* 0, not 1: glibc also forgets the last permutation */
	opterr = 0;
	while (!ret &&
	       (opt = getopt_long(argc, argv, t->shorts, t->lo, NULL)) != -1) {
		int i = opt == '?' ? -1 : cli_table_row(t, opt);

		if (i < 0) {
			cli_bad_option(cmd, argv);
			ret = -EINVAL;
		} else if (t->other[i]) {
			cli_error(cmd, "option --%s does not apply here",
				  t->row[i]->name);
			ret = -EINVAL;
		} else {
			ret = cli_take(cmd, t->row[i], optarg, a, fn, arg);
		}
	}
	free(t);
	if (ret)
		return ret;
	a->pos = argv + optind;
	a->n_pos = argc - optind;
	if ((unsigned)a->n_pos > cmd->max_args) {
		cli_error(cmd, "unexpected argument '%s'",
			  a->pos[cmd->max_args]);
		return -EINVAL;
	}
	return 0;
}

/* " @word", or a new line at @indent first when it would pass the width. */
static void cli_word(FILE *f, size_t *col, size_t indent, const char *word)
{
	size_t n = strlen(word);

	if (*col + 1 + n > CLI_WIDTH && *col > indent) {
		fprintf(f, "\n%*s", (int)indent, "");
		*col = indent;
	} else {
		fputc(' ', f);
		(*col)++;
	}
	fputs(word, f);
	*col += n;
}

void cli_synopsis(const struct cli_cmd *cmd, FILE *f, const char *lead)
{
	size_t col = strlen(lead) + strlen(cmd->prog), indent;
	char word[128];

	fprintf(f, "%s%s", lead, cmd->prog);
	if (cmd->name) {
		fprintf(f, " %s", cmd->name);
		col += 1 + strlen(cmd->name);
	}
	indent = col + 1;
	if (cmd->args)
		cli_word(f, &col, indent, cmd->args);
	for (const struct cli_flag *fl = cmd->flags; fl && fl->name; fl++) {
		if (!fl->help)
			continue;
		snprintf(word, sizeof(word), "[--%s%s%s]", fl->name,
			 fl->arg ? " " : "", fl->arg ? fl->arg : "");
		cli_word(f, &col, indent, word);
	}
	fputc('\n', f);
}

/* The table's row for @key, or NULL. */
static const struct conf_opt *cli_key(const struct cli_cmd *cmd,
				      const char *key)
{
	for (const struct conf_opt *o = cmd->keys; o && o->name; o++)
		if (!strcmp(o->name, key))
			return o;
	return NULL;
}

static void cli_help_row(FILE *f, const struct cli_cmd *cmd,
			 const struct cli_flag *fl)
{
	const struct conf_opt *o = fl->key ? cli_key(cmd, fl->key) : NULL;
	const char *help = !fl->help[0] && o ? o->help : fl->help;
	char left[64];
	int n;

	n = snprintf(left, sizeof(left), "%c%c%c --%s%s%s",
		     fl->letter ? '-' : ' ', fl->letter ? fl->letter : ' ',
		     fl->letter ? ',' : ' ', fl->name, fl->arg ? " " : "",
		     fl->arg ? fl->arg : "");
	if (n > 24)
		fprintf(f, "  %s\n  %24s  %s\n", left, "", help);
	else
		fprintf(f, "  %-24s  %s\n", left, help);
}

/* The keys --set takes: name, help, default and range. */
static void cli_help_keys(const struct cli_cmd *cmd, FILE *f)
{
	fprintf(f, "\nsettings (--set KEY=VALUE, or the config file):\n");
	for (const struct conf_opt *o = cmd->keys; o->name; o++) {
		fprintf(f, "  %-24s  %s (default %s", o->name, o->help,
			o->def ? o->def : "unset");
		if (o->type == CONF_INT)
			fprintf(f, "; %.0f to %.0f", o->min, o->max);
		else if (o->type == CONF_DOUBLE)
			fprintf(f, "; %g to %g", o->min, o->max);
		fprintf(f, ")\n");
	}
}

void cli_help(const struct cli_cmd *cmd, FILE *f)
{
	cli_synopsis(cmd, f, "usage: ");
	if (cmd->about)
		fprintf(f, "\n%s\n", cmd->about);
	fprintf(f, "\noptions:\n");
	for (const struct cli_flag *fl = cmd->flags; fl && fl->name; fl++)
		if (fl->help)
			cli_help_row(f, cmd, fl);
	cli_help_row(f, cmd, &cli_help_flag);
	if (cmd->keys)
		cli_help_keys(cmd, f);
}

const char *cli_config_path(const struct cli_conf *cf, const struct cli_args *a)
{
	if (a && a->config)
		return a->config;
	if (cf->default_path && access(cf->default_path, R_OK) == 0)
		return cf->default_path;
	return NULL;
}

/* The table's CONF_LOG key, if any, becomes the process's log level. */
static void cli_log_level(const struct conf_opt *opts, const void *obj)
{
	for (const struct conf_opt *o = opts; o->name; o++) {
		const char *v;
		enum log_level lvl;

		/* only a CONF_LOG field holds a pointer: read no other */
		if (o->type != CONF_LOG)
			continue;
		v = *(char *const *)((const char *)obj + o->offset);
		if (v && !log_level_parse(v, &lvl)) {
			log_set_level(lvl);
			return;
		}
	}
}

int cli_load(const struct cli_conf *cf, const struct cli_args *a, void *obj,
	     char *err, size_t errlen)
{
	const char *path = cli_config_path(cf, a);
	char msg[512];
	int ret = cf->init(obj);

	if (ret) {
		snprintf(err, errlen, "cannot set the defaults: %s",
			 strerror(-ret));
		return ret;
	}
	if (path) {
		ret = conf_load(cf->opts, obj, path, cf->extra, err, errlen);
		if (ret)
			return ret;
	}
	for (int i = 0; a && i < a->n_ov; i++) {
		const struct cli_override *o = &a->ov[i];

		ret = conf_set(cf->opts, obj, cf->section, o->key, o->value,
			       msg, sizeof(msg));
		if (ret) {
			snprintf(err, errlen, "%s%s: %s",
				 o->flag[0] == '-' ? "" : "--", o->flag, msg);
			return ret;
		}
	}
	if (cf->finish) {
		ret = cf->finish(obj, err, errlen);
		if (ret)
			return ret;
	}
	cli_log_level(cf->opts, obj);
	return 0;
}

void cli_print_config(const struct cli_conf *cf, const void *obj, FILE *f)
{
	conf_print(cf->opts, obj, f);
	if (cf->print_extra)
		cf->print_extra(obj, f);
}

void cli_free(const struct cli_conf *cf, void *obj)
{
	if (!obj)
		return;
	if (cf->free)
		cf->free(obj);
	else
		conf_free(cf->opts, obj);
}

int cli_write_port_file(const char *path, unsigned port)
{
	char tmp[4096];
	FILE *f;
	int ret = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	if (fprintf(f, "%u\n", port) < 0)
		ret = -EIO;
	if (fclose(f) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
}
