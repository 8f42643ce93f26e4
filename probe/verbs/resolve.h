/* SPDX-License-Identifier: MIT */
/*
 * GID and P_Key resolution from sysfs. Indexes are local to a port and
 * move (a RoCE GID index changes with addresses and VLANs), so a test can
 * name a GID by selector ("v2", "v1", "ipv4", "ipv6", "v2-ipv4", an
 * address) and a P_Key by value; both are looked up here at test time.
 * Every function takes a sysfs root so tests run on fixture trees.
 */
#ifndef IBPULSE_VERBS_RESOLVE_H
#define IBPULSE_VERBS_RESOLVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vtest.h"

#define VRES_MAX_GIDS 256
#define VRES_MAX_PKEYS 128

struct vres_gid {
	unsigned index;
	uint8_t gid[16];
	enum vt_gid_type type;
};

struct vres_port {
	bool eth;     /* link layer Ethernet (RoCE) */
	size_t ngids; /* non-zero GIDs, by index */
	struct vres_gid gids[VRES_MAX_GIDS];
	size_t npkeys; /* up to the last P_Key in use (0: empty slot) */
	uint16_t pkeys[VRES_MAX_PKEYS];
};

/*
 * vres_port_read() - read the link layer, GID table and P_Key table of
 * @dev port @port under @root (e.g. "/sys"). Returns 0, -ENODEV when the
 * port directory is missing, or another negative errno.
 */
int vres_port_read(const char *root, const char *dev, unsigned port,
		   struct vres_port *out);

/*
 * vres_gid_select() - pick a GID by @sel (NULL or "" for the default:
 * RoCE v2 IPv4 on Ethernet, falling back to the first v2 then index 0;
 * index 0 on InfiniBand). Selectors: "v1", "v2", "ipv4", "ipv6",
 * "v1-ipv4", "v1-ipv6", "v2-ipv4", "v2-ipv6", or an IPv4/IPv6 address /
 * GID (preferring RoCE v2 when both types carry it). Returns the position
 * in out->gids via @pos, -EINVAL for a malformed selector, -ENOENT when no
 * GID matches.
 */
int vres_gid_select(const struct vres_port *port, const char *sel, size_t *pos);
/* The position of GID table index @index; -ENOENT if empty or absent. */
int vres_gid_by_index(const struct vres_port *port, unsigned index,
		      size_t *pos);

/*
 * vres_pkey_find() - the index of P_Key @value: an exact match (membership
 * bit included) first, else the same partition with the other membership.
 * -ENOENT when the partition is not in the table.
 */
int vres_pkey_find(const struct vres_port *port, unsigned value,
		   unsigned *index);

/*
 * vres_pkey_pair_check() - can @a and @b talk? Same partition (low 15
 * bits), and not both limited members. -EACCES with a reason otherwise.
 */
int vres_pkey_pair_check(unsigned a, unsigned b, char *err, size_t len);

/* Printable GID (IPv6 text form) into @buf of at least 46 bytes. */
void vres_gid_format(const uint8_t gid[16], char *buf, size_t len);

/* One line per GID: "  1  RoCE v2  ::ffff:10.0.2.15", for error messages. */
int vres_gid_table_str(const struct vres_port *port, char *buf, size_t len);
int vres_pkey_table_str(const struct vres_port *port, char *buf, size_t len);

#endif
