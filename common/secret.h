/* SPDX-License-Identifier: MIT */
/*
 * The shared-secret file of the verbs tests (secret_file in probe.ini,
 * --secret-file of `ibpulse-probe run` and `serve`): read once here, for
 * the command line and the daemon alike, with the same checks and every
 * scratch copy zeroed.
 */
#ifndef IBPULSE_SECRET_H
#define IBPULSE_SECRET_H

#include <stddef.h>
#include <stdint.h>

#define SECRET_MIN_LEN 16
#define SECRET_MAX_LEN 4096

/*
 * secret_read() - the secret in @path into @buf: at most @cap bytes
 * (@cap <= SECRET_MAX_LEN), trailing CR and LF dropped, at least
 * SECRET_MIN_LEN left. Warns (log_warn) when group or others may read
 * the file. @what names the setting in messages ("secret_file").
 *
 * Returns 0 with the length in *@len, or a negative errno with
 * "WHAT PATH: reason" in @err; @buf is left as it was on failure.
 */
int secret_read(const char *path, const char *what, uint8_t *buf, size_t cap,
		size_t *len, char *err, size_t errlen);

#endif
