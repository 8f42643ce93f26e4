// SPDX-License-Identifier: MIT
/*
 * The floor under the probe daemon's RSS: a process that links libcurl
 * (and so, on Debian 12, OpenSSL, GnuTLS, Kerberos, LDAP and p11-kit
 * through curl's dependencies), initialises it as the daemon does and then
 * sleeps. footprint.py measures it beside the daemon, the same way: what
 * the daemon holds beyond this is its own.
 */
#include <curl/curl.h>
#include <signal.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

int main(void)
{
	if (curl_global_init(CURL_GLOBAL_DEFAULT))
		return 1;
	signal(SIGTERM, on_term);
	while (!stop)
		pause();
	curl_global_cleanup();
	return 0;
}
