// SPDX-License-Identifier: MIT
/*
 * Unit tests of the command-line skeleton (common/cli.c) on a small
 * program of its own: flags into overrides, --help (CLI_DONE, the usage
 * and every listed flag and key), unknown and sibling flags, positional
 * arguments, the loading order (defaults, file, flags, finish) with the
 * error naming the flag and the range, the log level key, --print-config
 * and the port file. Real files under /tmp, real getopt.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "cli.h"
#include "log.h"

struct svc {
	char *listen;
	long long port;
	char *log_level;
	int verbose;
	int finished;
};

#define S(f) offsetof(struct svc, f)

static const struct conf_opt svc_opts[] = {
	{"svc", "listen", CONF_STR, S(listen), "127.0.0.1", 0, 0,
	 "address to listen on"},
	{"svc", "port", CONF_INT, S(port), "8080", 0, 65535, "TCP port"},
	{"svc", "log_level", CONF_LOG, S(log_level), "info", 0, 0,
	 "error, warn, info or debug"},
	{0}};

enum { OPT_VERBOSE = 1 };

static const struct cli_flag svc_flags[] = {
	{"config", 'c', "FILE", NULL, CLI_CONFIG, "settings file"},
	{"port", 'p', "N", "port", 0, "TCP port"},
	{"listen", 0, "ADDR", "listen", 0, ""},
	{"log-level", 0, "LEVEL", "log_level", 0, "log level"},
	{"set", 0, "KEY=VALUE", NULL, CLI_SET, "any key"},
	{"verbose", 'v', NULL, NULL, OPT_VERBOSE, "say more"},
	{"print-config", 0, NULL, NULL, CLI_PRINT_CONFIG, "print, exit"},
	{"hidden", 0, NULL, NULL, CLI_IGNORE, NULL},
	{0}};

static const struct cli_flag sibling_flags[] = {
	{"only-there", 0, "X", NULL, 7, "a sibling's flag"}, {0}};

static const struct cli_cmd svc_cmd = {
	.prog = "svc",
	.name = "serve",
	.args = "NAME",
	.max_args = 1,
	.about = "A test service.",
	.flags = svc_flags,
	.others = sibling_flags,
	.keys = svc_opts,
};

static int svc_init(void *obj)
{
	memset(obj, 0, sizeof(struct svc));
	return conf_defaults(svc_opts, obj);
}

static int svc_finish(void *obj, char *err, size_t errlen)
{
	struct svc *s = obj;

	s->finished++;
	if (s->port == 1) {
		snprintf(err, errlen, "port 1 is reserved");
		return -EINVAL;
	}
	return 0;
}

static const struct cli_conf svc_conf = {
	.opts = svc_opts,
	.section = "svc",
	.init = svc_init,
	.finish = svc_finish,
};

static int on_flag(void *arg, int id, const char *value, char *err,
		   size_t errlen)
{
	struct svc *s = arg;

	(void)value;
	(void)err;
	(void)errlen;
	if (id == OPT_VERBOSE)
		s->verbose = 1;
	return 0;
}

/* Parse a NULL-terminated list (copied: --set splits its argument). */
static int parse(struct cli_args *a, struct svc *s, ...)
{
	static char buf[16][300];
	static char *argv[17]; /* cli_args points into it */
	const char *arg;
	va_list ap;
	int argc = 0;

	va_start(ap, s);
	while ((arg = va_arg(ap, const char *)) && argc < 16) {
		snprintf(buf[argc], sizeof(buf[argc]), "%s", arg);
		argv[argc] = buf[argc];
		argc++;
	}
	va_end(ap);
	argv[argc] = NULL;
	memset(a, 0, sizeof(*a));
	return cli_parse(&svc_cmd, argc, argv, a, on_flag, s);
}

static char *write_tmp(const char *text)
{
	char *path = strdup("/tmp/ibpulse-cli-XXXXXX");
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

static void test_flags_become_overrides(void **state)
{
	struct cli_args a;
	struct svc s = {0};

	(void)state;
	assert_int_equal(parse(&a, &s, "serve", "web1", "-p", "9000", "-v",
			       "--set", "listen=::1", "--hidden", (char *)NULL),
			 0);
	assert_int_equal(a.n_ov, 2);
	assert_string_equal(a.ov[0].key, "port");
	assert_string_equal(a.ov[0].value, "9000");
	assert_string_equal(a.ov[1].flag, "--set");
	assert_string_equal(a.ov[1].key, "listen");
	assert_string_equal(a.ov[1].value, "::1");
	assert_int_equal(s.verbose, 1);
	assert_int_equal(a.n_pos, 1);
	assert_string_equal(a.pos[0], "web1");
}

static void test_bad_command_lines(void **state)
{
	struct cli_args a;
	struct svc s = {0};

	(void)state;
	assert_int_equal(parse(&a, &s, "serve", "--frob", (char *)NULL),
			 -EINVAL);
	assert_int_equal(parse(&a, &s, "serve", "--port", (char *)NULL),
			 -EINVAL);
	assert_int_equal(
		parse(&a, &s, "serve", "--only-there", "1", (char *)NULL),
		-EINVAL);
	assert_int_equal(parse(&a, &s, "serve", "a", "b", (char *)NULL),
			 -EINVAL);
	assert_int_equal(
		parse(&a, &s, "serve", "--set", "novalue", (char *)NULL),
		-EINVAL);
}

static void test_help(void **state)
{
	struct cli_args a;
	struct svc s = {0};
	char text[8192], want[128];
	FILE *f = tmpfile();
	size_t n;

	(void)state;
	assert_int_equal(parse(&a, &s, "serve", "--help", (char *)NULL),
			 CLI_DONE);
	assert_int_equal(parse(&a, &s, "serve", "-p", "1", "-h", (char *)NULL),
			 CLI_DONE);
	cli_help(&svc_cmd, f);
	rewind(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	fclose(f);
	assert_non_null(strstr(text, "usage: svc serve NAME [--config FILE]"));
	assert_non_null(strstr(text, "A test service."));
	assert_non_null(strstr(text, "-p, --port N"));
	/* "" borrows the key's help; NULL hides the flag */
	snprintf(want, sizeof(want), "  %-24s  %s\n", "    --listen ADDR",
		 "address to listen on");
	assert_non_null(strstr(text, want));
	assert_null(strstr(text, "--hidden"));
	assert_null(strstr(text, "--only-there"));
	assert_non_null(strstr(text, "-h, --help"));
	assert_non_null(strstr(text, "TCP port (default 8080; 0 to 65535)"));
}

static void test_load_order_and_errors(void **state)
{
	char *path = write_tmp("[svc]\nport = 7000\nlisten = 0.0.0.0\n");
	char cfg[300], err[512];
	struct cli_args a;
	struct svc s = {0};

	(void)state;
	snprintf(cfg, sizeof(cfg), "--config=%s", path);
	/* the flag wins over the file, whatever the order */
	assert_int_equal(
		parse(&a, &s, "serve", "-p", "9000", cfg, (char *)NULL), 0);
	assert_int_equal(cli_load(&svc_conf, &a, &s, err, sizeof(err)), 0);
	assert_int_equal(s.port, 9000);
	assert_string_equal(s.listen, "0.0.0.0");
	assert_int_equal(s.finished, 1);
	cli_free(&svc_conf, &s);

	assert_int_equal(
		parse(&a, &s, "serve", "-p", "70000", cfg, (char *)NULL), 0);
	assert_int_equal(cli_load(&svc_conf, &a, &s, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err,
			    "--port: port: '70000' is not an integer in [0, "
			    "65535]");
	cli_free(&svc_conf, &s);

	assert_int_equal(
		parse(&a, &s, "serve", "--log-level", "loud", (char *)NULL), 0);
	assert_int_equal(cli_load(&svc_conf, &a, &s, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "--log-level: log_level: 'loud' is not "
				    "one of error, warn, info, debug"));
	cli_free(&svc_conf, &s);

	assert_int_equal(
		parse(&a, &s, "serve", "--set", "port=1", (char *)NULL), 0);
	assert_int_equal(cli_load(&svc_conf, &a, &s, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "port 1 is reserved");
	cli_free(&svc_conf, &s);
	unlink(path);
	free(path);
}

static void test_config_file_errors(void **state)
{
	char *path = write_tmp("[svc]\nlog_level = chatty\n");
	char cfg[300], err[512], want[300];
	struct cli_args a;
	struct svc s = {0};

	(void)state;
	snprintf(cfg, sizeof(cfg), "--config=%s", path);
	assert_int_equal(parse(&a, &s, "serve", cfg, (char *)NULL), 0);
	assert_int_equal(cli_load(&svc_conf, &a, &s, err, sizeof(err)),
			 -EINVAL);
	snprintf(want, sizeof(want), "%s:2: log_level: 'chatty'", path);
	assert_non_null(strstr(err, want));
	cli_free(&svc_conf, &s);
	unlink(path);
	free(path);
}

static void test_log_level_applied(void **state)
{
	char err[512];
	struct cli_args a;
	struct svc s = {0};

	(void)state;
	assert_int_equal(
		parse(&a, &s, "serve", "--log-level", "error", (char *)NULL),
		0);
	assert_int_equal(cli_load(&svc_conf, &a, &s, err, sizeof(err)), 0);
	assert_int_equal(log_once("cli-warn", 0, LOG_LVL_WARN, "hidden"), 0);
	cli_free(&svc_conf, &s);
	assert_int_equal(
		parse(&a, &s, "serve", "--log-level", "debug", (char *)NULL),
		0);
	assert_int_equal(cli_load(&svc_conf, &a, &s, err, sizeof(err)), 0);
	assert_int_equal(log_once("cli-debug", 0, LOG_LVL_DEBUG, "shown"), 1);
	cli_free(&svc_conf, &s);
}

static void test_port_file(void **state)
{
	char path[] = "/tmp/ibpulse-cli-port-XXXXXX", text[32] = "";
	int fd = mkstemp(path);
	FILE *f;

	(void)state;
	close(fd);
	assert_int_equal(cli_write_port_file(path, 9471), 0);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(text, sizeof(text), f));
	fclose(f);
	assert_string_equal(text, "9471\n");
	unlink(path);
	assert_int_equal(cli_write_port_file("/nonexistent/dir/port", 1),
			 -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flags_become_overrides),
		cmocka_unit_test(test_bad_command_lines),
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_load_order_and_errors),
		cmocka_unit_test(test_config_file_errors),
		cmocka_unit_test(test_log_level_applied),
		cmocka_unit_test(test_port_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
