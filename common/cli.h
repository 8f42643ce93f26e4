/* SPDX-License-Identifier: MIT */
/*
 * The command-line skeleton of every program and subcommand (after the
 * table-driven config of Redis and the {name, handler} tables of
 * iproute2): one flag table per command drives getopt, --help and the
 * usage line, and a flag that names a settings key becomes an override
 * applied after the config file through the program's conf.h table. So a
 * flag, a config line and --set KEY=VALUE share one parser, one range
 * and one error message ("--port: port: '70000' is not an integer in
 * [0, 65535]"); --help on every command prints its usage and exits 0.
 *
 * A program supplies: its flag tables (struct cli_cmd), and for its
 * settings a struct cli_conf (option table, extra sections, init, the
 * checks across keys, printing, freeing).
 */
#ifndef IBPULSE_CLI_H
#define IBPULSE_CLI_H

#include <stddef.h>
#include <stdio.h>

#include "conf.h"

#define CLI_EXIT_USAGE 2 /* a bad command line or configuration */
#define CLI_MAX_OVERRIDES 64
#define CLI_DONE 1 /* cli_parse(): --help or --version printed, exit 0 */

/* Flags the skeleton handles itself (cli_flag.id). */
enum cli_builtin {
	CLI_CONFIG = -1,       /* --config FILE: the settings file */
	CLI_SET = -2,	       /* --set KEY=VALUE: any key of the table */
	CLI_PRINT_CONFIG = -3, /* --print-config: cli_args.print_config */
	CLI_VERSION = -4,      /* --version: "PROG VERSION", exit 0 */
	CLI_IGNORE = -5,       /* accepted, does nothing (compatibility) */
};

/*
 * One flag. With @key it sets that settings key (its value, or "true"
 * for a flag without @arg); otherwise @id is a builtin or the command's
 * own (> 0), passed to its cli_flag_fn. --help and -h are every
 * command's and need no row. A NULL help hides a flag from --help.
 */
struct cli_flag {
	const char *name; /* long name, without "--" */
	int letter;	  /* short form ('p'), 0: none */
	const char *arg;  /* its value in --help ("FILE"); NULL: none */
	const char *key;  /* the settings key it sets, or NULL */
	int id;
	const char *help; /* one line for --help; NULL: not listed */
};

struct cli_cmd {
	const char *prog;  /* "ibpulse-probe" */
	const char *name;  /* "devices"; NULL: a program without commands */
	const char *args;  /* positional arguments in the usage, or NULL */
	unsigned max_args; /* more positional arguments are an error */
	const char *about; /* --help's paragraph, or NULL */
	const struct cli_flag *flags; /* {0}-terminated */
	/*
	 * Flags of sibling commands (or NULL): recognised, so that using
	 * one here says "does not apply here" rather than "unknown".
	 */
	const struct cli_flag *others;
	/*
	 * The settings table --set (or the config file) takes, or NULL:
	 * --help lists its keys with their help, default and range, and a
	 * keyed flag whose help is "" borrows its key's.
	 */
	const struct conf_opt *keys;
};

/* One flag override, applied after the config file. */
struct cli_override {
	const char *flag; /* "--port", for messages */
	const char *key, *value;
};

/* What cli_parse() found; zero it before. */
struct cli_args {
	const char *config; /* --config, or NULL */
	int print_config;
	struct cli_override ov[CLI_MAX_OVERRIDES];
	int n_ov;
	char **pos; /* positional arguments (into argv) */
	int n_pos;
};

/*
 * The handler of a command's own flags: 0, or a negative errno with the
 * reason in @err (printed as "PROG CMD: reason").
 */
typedef int (*cli_flag_fn)(void *arg, int id, const char *value, char *err,
			   size_t errlen);

/*
 * cli_parse() - parse @argv (argv[0] is the command's or the program's
 * name; options and positional arguments may mix) against @cmd. Returns
 * 0, CLI_DONE when --help or --version was printed to stdout, or -EINVAL
 * after printing to stderr what was wrong, naming the flag (and the usage
 * line for an unknown one). @fn may be NULL when every flag is a key or
 * a builtin. Uses getopt: not reentrant.
 */
int cli_parse(const struct cli_cmd *cmd, int argc, char **argv,
	      struct cli_args *a, cli_flag_fn fn, void *arg);

/* The usage line(s) of @cmd, wrapped, each starting with @lead. */
void cli_synopsis(const struct cli_cmd *cmd, FILE *f, const char *lead);
/* --help: the usage, the about paragraph and every listed flag. */
void cli_help(const struct cli_cmd *cmd, FILE *f);

/* "PROG[ CMD]: message" and a newline, to stderr. */
void cli_error(const struct cli_cmd *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A program's settings, for cli_load() and cli_print_config(). */
struct cli_conf {
	const struct conf_opt *opts;
	const char *section;	  /* flags set keys of it; NULL: any */
	const char *default_path; /* read without --config when it exists */
	conf_extra_fn extra;	  /* sections @opts does not describe */
	/* Zero @obj and set the defaults: 0 or a negative errno. */
	int (*init)(void *obj);
	/* After the file and the flags: secrets, checks across keys. */
	int (*finish)(void *obj, char *err, size_t errlen);
	/* --print-config after conf_print(): the extra sections. */
	void (*print_extra)(const void *obj, FILE *f);
	void (*free)(void *obj); /* NULL: conf_free() */
};

/* --config, else @cf's default path when readable, else NULL. */
const char *cli_config_path(const struct cli_conf *cf,
			    const struct cli_args *a);

/*
 * cli_load() - @obj from the defaults, the config file, @a's overrides
 * and @cf->finish, in that order, then the log level from the table's
 * CONF_LOG key. Returns 0, or a negative errno with the reason in @err:
 * "PATH:LINE: key: ..." for the file, "--flag: key: ..." for a flag.
 * @obj must be freed with cli_free() either way.
 */
int cli_load(const struct cli_conf *cf, const struct cli_args *a, void *obj,
	     char *err, size_t errlen);

/* The effective settings as INI, extra sections included. */
void cli_print_config(const struct cli_conf *cf, const void *obj, FILE *f);
void cli_free(const struct cli_conf *cf, void *obj);

/*
 * cli_write_port_file() - "PORT\n" to @path through PATH.tmp and
 * rename(2), so a reader never sees half of it. 0 or a negative errno.
 */
int cli_write_port_file(const char *path, unsigned port);

#endif
