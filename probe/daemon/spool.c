// SPDX-License-Identifier: MIT
/*
 * The results spool (spool.h): one file per result in a directory, an
 * in-memory index of them oldest first, durable writes, bounded size and
 * age, rejected results moved aside, and drop counts kept in a small
 * file of their own (written the same durable way). A result whose file
 * cannot be written (read-only or full filesystem) is held in the index
 * itself, bounded apart, until it is sent; past that bound it is counted
 * as dropped ("unwritable").
 */
#include "spool.h"
#include "now.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

#define SPOOL_SUFFIX ".json"
#define SPOOL_DROPPED "dropped"
#define SPOOL_MAX_FILE (64u << 20)

struct spool_entry {
	char id[SPOOL_ID_LEN + 1];
	uint64_t size;
	double mtime; /* seconds since the epoch */
	char *mem;    /* the result itself when it is not on disk, else NULL */
};

struct spool {
	pthread_mutex_t lock;
	char *dir;
	int dirfd;
	uint64_t max_bytes;
	double max_age;
	struct spool_entry *e; /* oldest first */
	size_t n, cap;
	uint64_t bytes;		     /* of the entries on disk */
	uint64_t mem_bytes, mem_max; /* of those held in memory */
	size_t n_mem;
	int unwritable; /* the last write failed */
	struct spool_dropped dropped;
};

int spool_uuid(char out[SPOOL_ID_LEN + 1])
{
	unsigned char r[16];

	if (getrandom(r, sizeof(r), 0) != sizeof(r))
		return -errno;
	r[6] = (unsigned char)((r[6] & 0x0f) | 0x40); /* version 4 */
	r[8] = (unsigned char)((r[8] & 0x3f) | 0x80); /* RFC 4122 variant */
	snprintf(out, SPOOL_ID_LEN + 1,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		 "%02x%02x%02x%02x%02x%02x",
		 r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9],
		 r[10], r[11], r[12], r[13], r[14], r[15]);
	return 0;
}

/* An id we wrote: 36 characters of hex digits and dashes. */
static int spool_id_valid(const char *id)
{
	size_t n = strlen(id);

	if (n != SPOOL_ID_LEN)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!strchr("0123456789abcdef-", id[i]))
			return 0;
	return 1;
}

/* Write @len bytes to @dirfd/@name via a temporary file, durably. */
static int spool_write_at(int dirfd, const char *name, const char *data,
			  size_t len)
{
	const char *base = strrchr(name, '/');
	char tmp[128];
	size_t off = 0;
	int fd, ret = 0;

	/* The temporary file sits beside its target: rename stays atomic. */
	base = base ? base + 1 : name;
	snprintf(tmp, sizeof(tmp), "%.*s.tmp-%s", (int)(base - name), name,
		 base);
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	while (off < len) {
		ssize_t w = write(fd, data + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			ret = -errno;
			break;
		}
		off += (size_t)w;
	}
	if (!ret && fsync(fd))
		ret = -errno;
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && renameat(dirfd, tmp, dirfd, name))
		ret = -errno;
	if (!ret && fsync(dirfd))
		ret = -errno;
	if (ret)
		unlinkat(dirfd, tmp, 0);
	return ret;
}

static void spool_save_dropped(struct spool *sp)
{
	char text[96];
	int n = snprintf(text, sizeof(text),
			 "%" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
			 sp->dropped.spool_full, sp->dropped.expired,
			 sp->dropped.unwritable);
	int ret = spool_write_at(sp->dirfd, SPOOL_DROPPED, text, (size_t)n);

	if (ret)
		log_once("spool-dropped", 3600, LOG_LVL_WARN,
			 "spool %s: cannot save drop counts: %s", sp->dir,
			 strerror(-ret));
}

static void spool_load_dropped(struct spool *sp)
{
	unsigned long long full = 0, expired = 0, unwritable = 0;
	char text[96];
	ssize_t n;
	int fd = openat(sp->dirfd, SPOOL_DROPPED, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return;
	text[n] = '\0';
	/* Two numbers before the "unwritable" count existed. */
	if (sscanf(text, "%llu %llu %llu", &full, &expired, &unwritable) >= 2) {
		sp->dropped.spool_full = full;
		sp->dropped.expired = expired;
		sp->dropped.unwritable = unwritable;
	}
}

/* Take entry @i out of the index (not its file); caller holds the lock. */
static void spool_unindex(struct spool *sp, size_t i)
{
	if (sp->e[i].mem) {
		free(sp->e[i].mem);
		sp->mem_bytes -= sp->e[i].size;
		sp->n_mem--;
	} else {
		sp->bytes -= sp->e[i].size;
	}
	memmove(&sp->e[i], &sp->e[i + 1], (sp->n - i - 1) * sizeof(*sp->e));
	sp->n--;
}

/* Delete entry @i (file and index); caller holds the lock. */
static void spool_drop_at(struct spool *sp, size_t i)
{
	char name[SPOOL_ID_LEN + 8];

	snprintf(name, sizeof(name), "%s%s", sp->e[i].id, SPOOL_SUFFIX);
	if (!sp->e[i].mem && unlinkat(sp->dirfd, name, 0) && errno != ENOENT)
		log_warn("spool %s: cannot delete %s: %s", sp->dir, name,
			 strerror(errno));
	spool_unindex(sp, i);
}

/* The oldest entry on disk (@mem 0) or in memory (@mem 1); -1: none. */
static ssize_t spool_oldest_of(const struct spool *sp, int mem)
{
	for (size_t i = 0; i < sp->n; i++)
		if (!sp->e[i].mem == !mem)
			return (ssize_t)i;
	return -1;
}

/* Add @id to the index, oldest first; @mem: its data, taken over. */
static int spool_index_add(struct spool *sp, const char *id, uint64_t size,
			   double mtime, char *mem)
{
	size_t i;

	if (sp->n == sp->cap) {
		size_t cap = sp->cap ? sp->cap * 2 : 64;
		struct spool_entry *e = realloc(sp->e, cap * sizeof(*e));

		if (!e)
			return -ENOMEM;
		sp->e = e;
		sp->cap = cap;
	}
	/* Keep oldest first; new entries nearly always go at the end. */
	for (i = sp->n; i > 0 && sp->e[i - 1].mtime > mtime; i--)
		;
	memmove(&sp->e[i + 1], &sp->e[i], (sp->n - i) * sizeof(*sp->e));
	snprintf(sp->e[i].id, sizeof(sp->e[i].id), "%s", id);
	sp->e[i].size = size;
	sp->e[i].mtime = mtime;
	sp->e[i].mem = mem;
	sp->n++;
	if (mem) {
		sp->mem_bytes += size;
		sp->n_mem++;
	} else {
		sp->bytes += size;
	}
	return 0;
}

/* Load one directory entry left by an earlier run. */
static int spool_scan_one(struct spool *sp, const char *name)
{
	char id[SPOOL_ID_LEN + 1];
	size_t n = strlen(name);
	struct stat st;

	if (!strncmp(name, ".tmp-", 5)) { /* a write that never finished */
		unlinkat(sp->dirfd, name, 0);
		return 0;
	}
	if (n != SPOOL_ID_LEN + strlen(SPOOL_SUFFIX) ||
	    strcmp(name + SPOOL_ID_LEN, SPOOL_SUFFIX))
		return 0;
	snprintf(id, sizeof(id), "%.*s", SPOOL_ID_LEN, name);
	if (!spool_id_valid(id) || fstatat(sp->dirfd, name, &st, 0) ||
	    !S_ISREG(st.st_mode))
		return 0;
	return spool_index_add(
		sp, id, (uint64_t)st.st_size,
		(double)st.st_mtim.tv_sec + st.st_mtim.tv_nsec / 1e9, NULL);
}

static int spool_scan(struct spool *sp)
{
	DIR *d;
	struct dirent *de;
	int fd = dup(sp->dirfd), ret = 0;

	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while (!ret && (de = readdir(d)))
		ret = spool_scan_one(sp, de->d_name);
	closedir(d);
	return ret;
}

/* mkdir -p for the spool directory (mode 0700 for what we create). */
static int spool_mkdirs(const char *dir)
{
	char path[4096];
	size_t n = strlen(dir);

	if (!n || n >= sizeof(path))
		return -ENAMETOOLONG;
	memcpy(path, dir, n + 1);
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(path, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

int spool_open(const char *dir, uint64_t max_bytes, double max_age_s,
	       struct spool **out)
{
	struct spool *sp;
	int ret;

	*out = NULL;
	ret = spool_mkdirs(dir);
	if (ret) {
		log_err("spool %s: cannot create: %s", dir, strerror(-ret));
		return ret;
	}
	sp = calloc(1, sizeof(*sp));
	if (!sp)
		return -ENOMEM;
	pthread_mutex_init(&sp->lock, NULL);
	sp->max_bytes = max_bytes;
	sp->mem_max = max_bytes < SPOOL_MEM_MAX ? max_bytes : SPOOL_MEM_MAX;
	sp->max_age = max_age_s;
	sp->dir = strdup(dir);
	sp->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (!sp->dir || sp->dirfd < 0) {
		ret = sp->dir ? -errno : -ENOMEM;
		log_err("spool %s: cannot open: %s", dir, strerror(-ret));
		spool_close(sp);
		return ret;
	}
	if (mkdirat(sp->dirfd, "rejected", 0700) && errno != EEXIST)
		log_warn("spool %s: cannot create rejected/: %s", dir,
			 strerror(errno));
	spool_load_dropped(sp);
	ret = spool_scan(sp);
	if (ret) {
		log_err("spool %s: cannot read: %s", dir, strerror(-ret));
		spool_close(sp);
		return ret;
	}
	if (sp->n)
		log_info("spool %s: %zu result(s) from an earlier run to send",
			 dir, sp->n);
	*out = sp;
	return 0;
}

void spool_close(struct spool *sp)
{
	if (!sp)
		return;
	if (sp->n_mem)
		log_warn("spool %s: %zu result(s) held in memory (the spool "
			 "could not be written) are lost at exit",
			 sp->dir, sp->n_mem);
	for (size_t i = 0; i < sp->n; i++)
		free(sp->e[i].mem);
	if (sp->dirfd >= 0)
		close(sp->dirfd);
	pthread_mutex_destroy(&sp->lock);
	free(sp->e);
	free(sp->dir);
	free(sp);
}

/*
 * The file of @id could not be written (@err): hold the result in memory,
 * dropping the oldest held ones past mem_max (reason: unwritable). Caller
 * holds the lock. Returns SPOOL_IN_MEMORY or a negative errno (dropped).
 */
static int spool_hold(struct spool *sp, const char *id, const char *data,
		      size_t len, double now, int err)
{
	uint64_t dropped = 0;
	char *copy = NULL;
	ssize_t i;
	int ret = SPOOL_IN_MEMORY;

	if (!sp->unwritable)
		log_once("spool-unwritable", 600, LOG_LVL_WARN,
			 "spool %s: cannot write result %s: %s; holding "
			 "results in memory until they are sent (up to %" PRIu64
			 " bytes; lost if the probe stops)",
			 sp->dir, id, strerror(-err), sp->mem_max);
	sp->unwritable = 1;
	while (len <= sp->mem_max && sp->mem_bytes + len > sp->mem_max &&
	       (i = spool_oldest_of(sp, 1)) >= 0) {
		spool_unindex(sp, (size_t)i);
		dropped++;
	}
	if (len <= sp->mem_max)
		copy = malloc(len + 1);
	if (copy) {
		memcpy(copy, data, len);
		copy[len] = '\0';
		if (spool_index_add(sp, id, len, now, copy)) {
			free(copy);
			copy = NULL;
		}
	}
	if (!copy) {
		dropped++;
		ret = err;
	}
	if (dropped) {
		sp->dropped.unwritable += dropped;
		spool_save_dropped(sp);
		log_once("spool-unwritable-drop", 600, LOG_LVL_WARN,
			 "spool %s: cannot write results (%s) and %" PRIu64
			 " bytes are held in memory already: dropped %" PRIu64
			 " result(s) (counted: dropped, reason unwritable)",
			 sp->dir, strerror(-err), sp->mem_bytes, dropped);
	}
	return ret;
}

/* Drop the oldest results on disk until @len more bytes fit. */
static void spool_make_room(struct spool *sp, size_t len)
{
	uint64_t dropped = 0;
	ssize_t i;

	while (sp->bytes + len > sp->max_bytes &&
	       (i = spool_oldest_of(sp, 0)) >= 0) {
		spool_drop_at(sp, (size_t)i);
		dropped++;
	}
	if (!dropped)
		return;
	sp->dropped.spool_full += dropped;
	spool_save_dropped(sp);
	log_once("spool-full", 600, LOG_LVL_WARN,
		 "spool %s: full (spool_max_bytes %" PRIu64
		 "): dropped %" PRIu64 " oldest result(s)",
		 sp->dir, sp->max_bytes, dropped);
}

int spool_put(struct spool *sp, const char *id, const char *data, size_t len)
{
	char name[SPOOL_ID_LEN + 8];
	double now;
	int ret;

	if (!spool_id_valid(id))
		return -EINVAL;
	now = now_wall();
	pthread_mutex_lock(&sp->lock);
	if (len > sp->max_bytes) {
		sp->dropped.spool_full++;
		spool_save_dropped(sp);
		pthread_mutex_unlock(&sp->lock);
		log_warn("spool %s: result %s (%zu bytes) is larger than "
			 "spool_max_bytes: dropped",
			 sp->dir, id, len);
		return -E2BIG;
	}
	spool_make_room(sp, len);
	snprintf(name, sizeof(name), "%s%s", id, SPOOL_SUFFIX);
	ret = spool_write_at(sp->dirfd, name, data, len);
	if (ret) {
		ret = spool_hold(sp, id, data, len, now, ret);
	} else if ((ret = spool_index_add(sp, id, len, now, NULL))) {
		unlinkat(sp->dirfd, name, 0); /* out of memory: not a stray */
	} else if (sp->unwritable) {
		log_info("spool %s: writable again", sp->dir);
		sp->unwritable = 0;
	}
	pthread_mutex_unlock(&sp->lock);
	return ret;
}

void spool_expire(struct spool *sp, double now)
{
	uint64_t n = 0;

	pthread_mutex_lock(&sp->lock);
	while (sp->n && now - sp->e[0].mtime > sp->max_age) {
		spool_drop_at(sp, 0);
		n++;
	}
	if (n) {
		sp->dropped.expired += n;
		spool_save_dropped(sp);
	}
	pthread_mutex_unlock(&sp->lock);
	if (n)
		log_warn("spool %s: dropped %" PRIu64
			 " result(s) older than spool_max_age",
			 sp->dir, n);
}

void spool_memory(struct spool *sp, size_t *n, uint64_t *bytes)
{
	pthread_mutex_lock(&sp->lock);
	*n = sp->n_mem;
	*bytes = sp->mem_bytes;
	pthread_mutex_unlock(&sp->lock);
}

size_t spool_count(struct spool *sp)
{
	size_t n;

	pthread_mutex_lock(&sp->lock);
	n = sp->n;
	pthread_mutex_unlock(&sp->lock);
	return n;
}

uint64_t spool_bytes(struct spool *sp)
{
	uint64_t n;

	pthread_mutex_lock(&sp->lock);
	n = sp->bytes + sp->mem_bytes;
	pthread_mutex_unlock(&sp->lock);
	return n;
}

size_t spool_oldest(struct spool *sp, char (*ids)[SPOOL_ID_LEN + 1], size_t max)
{
	size_t n;

	pthread_mutex_lock(&sp->lock);
	n = sp->n < max ? sp->n : max;
	for (size_t i = 0; i < n; i++)
		memcpy(ids[i], sp->e[i].id, SPOOL_ID_LEN + 1);
	pthread_mutex_unlock(&sp->lock);
	return n;
}

static ssize_t spool_find(struct spool *sp, const char *id)
{
	for (size_t i = 0; i < sp->n; i++)
		if (!strcmp(sp->e[i].id, id))
			return (ssize_t)i;
	return -1;
}

/* A copy of @id's data if it is held in memory (0); -ENOENT if not. */
static int spool_read_mem(struct spool *sp, const char *id, char **data,
			  size_t *len)
{
	ssize_t i;
	int ret = -ENOENT;

	pthread_mutex_lock(&sp->lock);
	i = spool_find(sp, id);
	if (i >= 0 && sp->e[i].mem) {
		*len = sp->e[i].size;
		*data = malloc(*len + 1);
		if (*data)
			memcpy(*data, sp->e[i].mem, *len + 1);
		ret = 0;
	}
	pthread_mutex_unlock(&sp->lock);
	return ret;
}

int spool_read(struct spool *sp, const char *id, char **data, size_t *len)
{
	char name[SPOOL_ID_LEN + 8], *buf;
	struct stat st;
	size_t off = 0;
	int fd;

	*data = NULL;
	if (!spool_id_valid(id))
		return -EINVAL;
	if (!spool_read_mem(sp, id, data, len))
		return *data ? 0 : -ENOMEM;
	snprintf(name, sizeof(name), "%s%s", id, SPOOL_SUFFIX);
	fd = openat(sp->dirfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || st.st_size > SPOOL_MAX_FILE) {
		close(fd);
		return -EFBIG;
	}
	buf = malloc((size_t)st.st_size + 1);
	while (buf && off < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + off, (size_t)st.st_size - off);

		if (r <= 0)
			break;
		off += (size_t)r;
	}
	close(fd);
	if (!buf)
		return -ENOMEM;
	buf[off] = '\0';
	*data = buf;
	*len = off;
	return 0;
}

int spool_remove(struct spool *sp, const char *id)
{
	ssize_t i;

	pthread_mutex_lock(&sp->lock);
	i = spool_find(sp, id);
	if (i >= 0)
		spool_drop_at(sp, (size_t)i);
	pthread_mutex_unlock(&sp->lock);
	return i >= 0 ? 0 : -ENOENT;
}

int spool_reject(struct spool *sp, const char *id, const char *reason)
{
	char name[SPOOL_ID_LEN + 8], to[SPOOL_ID_LEN + 32];
	ssize_t i;
	int ret = 0;

	pthread_mutex_lock(&sp->lock);
	i = spool_find(sp, id);
	if (i < 0) {
		pthread_mutex_unlock(&sp->lock);
		return -ENOENT;
	}
	snprintf(name, sizeof(name), "%s%s", id, SPOOL_SUFFIX);
	snprintf(to, sizeof(to), "rejected/%s.reason", id);
	spool_write_at(sp->dirfd, to, reason, strlen(reason));
	snprintf(to, sizeof(to), "rejected/%s", name);
	if (sp->e[i].mem)
		ret = spool_write_at(sp->dirfd, to, sp->e[i].mem,
				     sp->e[i].size);
	else if (renameat(sp->dirfd, name, sp->dirfd, to) || fsync(sp->dirfd))
		ret = -errno;
	spool_unindex(sp, (size_t)i);
	pthread_mutex_unlock(&sp->lock);
	log_err("collector refused result %s: %s (kept in %s/rejected/)", id,
		reason, sp->dir);
	return ret;
}

struct spool_dropped spool_dropped(struct spool *sp)
{
	struct spool_dropped d;

	pthread_mutex_lock(&sp->lock);
	d = sp->dropped;
	pthread_mutex_unlock(&sp->lock);
	return d;
}
