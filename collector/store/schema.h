/* SPDX-License-Identifier: MIT */
/*
 * Schema migrations: the files NNN_name.sql of a directory are applied in
 * order, each in its own transaction that also sets PRAGMA user_version to
 * NNN, so a crash between files leaves a database at a known version. A
 * database newer than the newest file is refused: this code would not know
 * what its tables mean.
 */
#ifndef IBPULSE_COLLECTOR_SCHEMA_H
#define IBPULSE_COLLECTOR_SCHEMA_H

#include <sqlite3.h>

/*
 * schema_apply() - bring @db up to the newest version in @dir. Returns 0
 * (*@version, if not NULL, holds the version now in effect), -EPROTO when
 * the database is newer than @dir knows, -EINVAL for a badly named or
 * duplicate file, -ENOENT for a missing directory, -EIO for SQL errors.
 */
int schema_apply(sqlite3 *db, const char *dir, int *version);

/* PRAGMA user_version of @db, or a negative errno. */
int schema_version(sqlite3 *db);

#endif
