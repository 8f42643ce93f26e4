// SPDX-License-Identifier: MIT
/*
 * Applies schema/NNN_name.sql files in order, tracked with PRAGMA
 * user_version: see schema.h.
 */
#include "schema.h"
#include "buf.h"
#include "log.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SCHEMA_MAX_FILES 999
#define SCHEMA_MAX_BYTES (16 << 20)

struct schema_file {
	int version;
	char *name;
};

int schema_version(sqlite3 *db)
{
	sqlite3_stmt *st;
	int v = -EIO;

	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) !=
	    SQLITE_OK) {
		log_err("schema: %s", sqlite3_errmsg(db));
		return -EIO;
	}
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* NNN_name.sql: the version NNN (1..999), or -1 for other names. */
static int schema_file_version(const char *name)
{
	size_t len = strlen(name);

	if (len < 9 || strcmp(name + len - 4, ".sql") != 0)
		return -1;
	for (int i = 0; i < 3; i++)
		if (!isdigit((unsigned char)name[i]))
			return -1;
	if (name[3] != '_')
		return -1;
	return (name[0] - '0') * 100 + (name[1] - '0') * 10 + (name[2] - '0');
}

static int schema_cmp(const void *a, const void *b)
{
	const struct schema_file *x = a, *y = b;

	return (x->version > y->version) - (x->version < y->version);
}

static void schema_files_free(struct schema_file *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(f[i].name);
	free(f);
}

/* The sorted NNN_*.sql files of @dir in *@out; caller frees. */
static int schema_list(const char *dir, struct schema_file **out, size_t *n)
{
	DIR *d = opendir(dir);
	struct schema_file *f;
	struct dirent *de;
	size_t k = 0;

	if (!d) {
		log_err("schema: cannot open %s: %s", dir, strerror(errno));
		return -ENOENT;
	}
	f = calloc(SCHEMA_MAX_FILES, sizeof(*f));
	if (!f) {
		closedir(d);
		return -ENOMEM;
	}
	while ((de = readdir(d)) && k < SCHEMA_MAX_FILES) {
		int v = schema_file_version(de->d_name);

		if (v < 1)
			continue;
		f[k].version = v;
		f[k].name = strdup(de->d_name);
		if (!f[k++].name) {
			closedir(d);
			schema_files_free(f, k);
			return -ENOMEM;
		}
	}
	closedir(d);
	qsort(f, k, sizeof(*f), schema_cmp);
	for (size_t i = 1; i < k; i++) {
		if (f[i].version == f[i - 1].version) {
			log_err("schema: %s and %s have the same version",
				f[i - 1].name, f[i].name);
			schema_files_free(f, k);
			return -EINVAL;
		}
	}
	*out = f;
	*n = k;
	return 0;
}

static int schema_read(const char *dir, const char *name, struct buf *b)
{
	char path[4096];
	char chunk[8192];
	size_t got;
	FILE *fp;
	int ret = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, "re");
	if (!fp) {
		log_err("schema: cannot open %s: %s", path, strerror(errno));
		return -errno;
	}
	while (!ret && (got = fread(chunk, 1, sizeof(chunk), fp)) > 0)
		ret = buf_add(b, chunk, got);
	if (!ret && ferror(fp))
		ret = -EIO;
	fclose(fp);
	return ret;
}

/* Run one file and set user_version, all in one transaction. */
static int schema_run(sqlite3 *db, const char *dir, const struct schema_file *f)
{
	char *msg = NULL, tail[64];
	struct buf b;
	int ret;

	buf_init(&b, SCHEMA_MAX_BYTES);
	ret = schema_read(dir, f->name, &b);
	if (ret)
		goto out;
	snprintf(tail, sizeof(tail), "\n;PRAGMA user_version = %d;",
		 f->version);
	ret = buf_adds(&b, tail);
	if (ret)
		goto out;
	if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, &msg) !=
		    SQLITE_OK ||
	    sqlite3_exec(db, b.data, NULL, NULL, &msg) != SQLITE_OK ||
	    sqlite3_exec(db, "COMMIT", NULL, NULL, &msg) != SQLITE_OK) {
		log_err("schema: %s/%s: %s", dir, f->name, msg ? msg : "error");
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		ret = -EIO;
		goto out;
	}
	log_info("schema: applied %s (version %d)", f->name, f->version);
out:
	sqlite3_free(msg);
	buf_free(&b);
	return ret;
}

int schema_apply(sqlite3 *db, const char *dir, int *version)
{
	struct schema_file *f = NULL;
	size_t n = 0;
	int cur, ret;

	ret = schema_list(dir, &f, &n);
	if (ret)
		return ret;
	cur = schema_version(db);
	if (cur < 0) {
		ret = cur;
		goto out;
	}
	if (n == 0) {
		log_err("schema: no NNN_name.sql files in %s", dir);
		ret = -ENOENT;
		goto out;
	}
	if (cur > f[n - 1].version) {
		log_err("schema: the database is at version %d, newer "
			"than the newest file in %s (%d): refusing to "
			"touch it",
			cur, dir, f[n - 1].version);
		ret = -EPROTO;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		if (f[i].version <= cur)
			continue;
		ret = schema_run(db, dir, &f[i]);
		if (ret)
			goto out;
		cur = f[i].version;
	}
	if (version)
		*version = cur;
out:
	schema_files_free(f, n);
	return ret;
}
