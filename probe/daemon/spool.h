/* SPDX-License-Identifier: MIT */
/*
 * The results spool: each test result is one file, <uuid>.json, written
 * durably (temporary file, fsync, rename, fsync of the directory) before
 * anyone tries to send it, and removed only once the collector answered
 * 2xx. Refused results (a 4xx other than 429) move to rejected/ with a
 * .reason file beside them. The spool is bounded by total size and by
 * age; what it has to drop is counted (and the counts kept in the spool,
 * so they survive restarts) for the "dropped" field of the next push.
 * A result whose file cannot be written (read-only or full filesystem,
 * I/O error) is held in memory instead, up to SPOOL_MEM_MAX bytes (or
 * max_bytes if smaller), and sent like the others; past that the oldest
 * held results are dropped and counted as "unwritable". Held results are
 * not durable: they are lost if the probe stops before sending them.
 * All functions are thread-safe.
 */
#ifndef IBPULSE_SPOOL_H
#define IBPULSE_SPOOL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define SPOOL_ID_LEN 36		 /* a UUID in text */
#define SPOOL_MEM_MAX (4u << 20) /* bytes held in memory when unwritable */
#define SPOOL_IN_MEMORY 1	 /* spool_put(): held in memory, not on disk */

struct spool;

struct spool_dropped {
	uint64_t spool_full; /* dropped to stay under max_bytes */
	uint64_t expired;    /* older than max_age */
	uint64_t unwritable; /* not written, and no room left in memory */
};

/*
 * spool_open() - open (creating it and rejected/ if needed) the spool at
 * @dir and load what a previous run left there, oldest first; leftover
 * temporary files are removed. Returns 0 or a negative errno (logged).
 * Free with spool_close().
 */
int spool_open(const char *dir, uint64_t max_bytes, double max_age_s,
	       struct spool **out);
void spool_close(struct spool *sp);

/*
 * spool_put() - store @len bytes of @data as result @id, durably. Older
 * results are dropped first when the spool would pass max_bytes (a result
 * larger than max_bytes on its own is dropped). Returns 0 when the result
 * is on disk, SPOOL_IN_MEMORY when its file could not be written and it is
 * held in memory (logged once), or a negative errno when it was dropped
 * (counted in spool_dropped(), logged once).
 */
int spool_put(struct spool *sp, const char *id, const char *data, size_t len);

/* Drop results older than max_age at @now (seconds since the epoch). */
void spool_expire(struct spool *sp, double now);

/* Number of results waiting, and their total size in bytes. */
size_t spool_count(struct spool *sp);
uint64_t spool_bytes(struct spool *sp);
/* Of those, how many (and bytes) are held in memory, not on disk. */
void spool_memory(struct spool *sp, size_t *n, uint64_t *bytes);

/*
 * spool_oldest() - up to @max ids of the oldest results into @ids
 * (each SPOOL_ID_LEN + 1 bytes). Returns how many.
 */
size_t spool_oldest(struct spool *sp, char (*ids)[SPOOL_ID_LEN + 1],
		    size_t max);

/* Read result @id; *@data is the caller's (free). 0 or negative errno. */
int spool_read(struct spool *sp, const char *id, char **data, size_t *len);

/* The collector has @id: delete it. 0, or -ENOENT if already gone. */
int spool_remove(struct spool *sp, const char *id);

/* The collector refused @id: move it to rejected/ with @reason beside. */
int spool_reject(struct spool *sp, const char *id, const char *reason);

/* Cumulative drop counts (kept across restarts when the spool can be
 * written). */
struct spool_dropped spool_dropped(struct spool *sp);

/* A new random (version 4) UUID, lower-case, NUL-terminated. 0 or errno. */
int spool_uuid(char out[SPOOL_ID_LEN + 1]);

#endif
