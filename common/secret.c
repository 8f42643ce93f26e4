// SPDX-License-Identifier: MIT
/*
 * Reading the shared-secret file (secret.h). The bytes go through a
 * scratch buffer that is zeroed on every path, so a short or unreadable
 * file leaves neither a partial secret in the caller's buffer nor a copy
 * on the stack.
 */
#include "secret.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

int secret_read(const char *path, const char *what, uint8_t *buf, size_t cap,
		size_t *len, char *err, size_t errlen)
{
	uint8_t tmp[SECRET_MAX_LEN];
	struct stat st;
	ssize_t n;
	int fd, ret;

	if (cap > sizeof(tmp))
		cap = sizeof(tmp);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		ret = -errno;
		snprintf(err, errlen, "%s %s: %s", what, path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return ret;
	}
	if (st.st_mode & 077)
		log_warn("%s %s is readable by group or others", what, path);
	n = read(fd, tmp, cap);
	ret = n < 0 ? -errno : 0;
	close(fd);
	while (n > 0 && (tmp[n - 1] == '\n' || tmp[n - 1] == '\r'))
		n--;
	if (ret)
		snprintf(err, errlen, "%s %s: %s", what, path, strerror(-ret));
	else if (n < SECRET_MIN_LEN) {
		snprintf(err, errlen, "%s %s: need at least %d bytes of secret",
			 what, path, SECRET_MIN_LEN);
		ret = -EINVAL;
	} else {
		memcpy(buf, tmp, (size_t)n);
		*len = (size_t)n;
	}
	explicit_bzero(tmp, sizeof(tmp));
	return ret;
}
