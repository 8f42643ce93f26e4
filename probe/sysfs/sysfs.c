// SPDX-License-Identifier: MIT
/*
 * The device side of the sysfs reader (sysfs.h): listing devices under
 * class/infiniband, a device's identity files, its netdevs and the PCI
 * device behind it (link speed and width, AER totals), plus the small file
 * and directory helpers the port reader shares. Ports are in sysfs_port.c.
 */
#include "sysfs_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "sysval.h"

#define SYSFS_LOG_INTERVAL 3600

int sysfs_read(const char *path, char *buf, size_t size, int quiet)
{
	size_t len = 0;
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	while (len < size - 1) {
		ssize_t n = read(fd, buf + len, size - 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
out:
	buf[ret ? 0 : len] = '\0';
	if (ret)
		log_once(path, SYSFS_LOG_INTERVAL,
			 (ret == -ENOENT && quiet) || quiet == SYSFS_QUIET_ALL
				 ? LOG_LVL_DEBUG
				 : LOG_LVL_WARN,
			 "%s: %s", path, strerror(-ret));
	return ret;
}

int sysfs_path(char *out, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, size, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

void sysfs_garbage(const char *path, const char *value)
{
	char shown[64];

	sysval_text(value, shown, sizeof(shown));
	log_once(path, SYSFS_LOG_INTERVAL, LOG_LVL_WARN,
		 "%s: cannot parse '%s', value skipped", path, shown);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int num_cmp(const void *a, const void *b)
{
	unsigned long x = strtoul(*(char *const *)a, NULL, 10);
	unsigned long y = strtoul(*(char *const *)b, NULL, 10);

	return x < y ? -1 : x > y;
}

static int is_number(const char *s)
{
	uint64_t v;

	return sysval_u64(s, &v) == 0 && strlen(s) < 10;
}

void sysfs_names_free(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

int sysfs_list(const char *path, int numeric, char ***out, size_t *n)
{
	DIR *dir = opendir(path);
	char **names = NULL;
	size_t count = 0;
	struct dirent *e;

	*out = NULL;
	*n = 0;
	if (!dir)
		return -errno;
	while ((e = readdir(dir))) {
		char **grown;

		if (e->d_name[0] == '.' || (numeric && !is_number(e->d_name)))
			continue;
		grown = realloc(names, (count + 1) * sizeof(*names));
		if (!grown)
			goto nomem;
		names = grown;
		names[count] = strdup(e->d_name);
		if (!names[count])
			goto nomem;
		count++;
	}
	closedir(dir);
	qsort(names, count, sizeof(*names), numeric ? num_cmp : name_cmp);
	*out = names;
	*n = count;
	return 0;
nomem:
	closedir(dir);
	sysfs_names_free(names, count);
	return -ENOMEM;
}

int sysfs_add_netdev(struct report_device *d, const char *name)
{
	char **grown;

	if (!sysval_is_name(name) || d->n_netdevs >= REPORT_MAX_NETDEVS)
		return 0;
	for (size_t i = 0; i < d->n_netdevs; i++)
		if (!strcmp(d->netdevs[i], name))
			return 0;
	grown = realloc(d->netdevs, (d->n_netdevs + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	d->netdevs = grown;
	d->netdevs[d->n_netdevs] = strdup(name);
	if (!d->netdevs[d->n_netdevs])
		return -ENOMEM;
	d->n_netdevs++;
	return 0;
}

/* Read @dir/@rel as report text into *@out (left NULL when unknown). */
static int read_text(const char *dir, const char *rel, char **out)
{
	char path[PATH_MAX], buf[REPORT_MAX_TEXT * 2],
		text[REPORT_MAX_TEXT + 1];

	if (sysfs_path(path, sizeof(path), "%s/%s", dir, rel))
		return 0;
	if (sysfs_read(path, buf, sizeof(buf), 1))
		return 0;
	if (sysval_text(buf, text, sizeof(text)))
		return 0; /* empty: unknown */
	*out = strdup(text);
	return *out ? 0 : -ENOMEM;
}

/* 1 when @s looks like a PCI address, "0000:3b:00.0". */
static int is_pci_address(const char *s)
{
	static const char pattern[] = "hhhh:hh:hh.h";

	if (strlen(s) != sizeof(pattern) - 1)
		return 0;
	for (size_t i = 0; pattern[i]; i++) {
		int hex = (s[i] >= '0' && s[i] <= '9') ||
			  (s[i] >= 'a' && s[i] <= 'f');

		if (pattern[i] == 'h' ? !hex : s[i] != pattern[i])
			return 0;
	}
	return 1;
}

static void read_pcie_link(const char *pcidir, struct report_pcie *p)
{
	static const char *const speed_files[] = {"current_link_speed",
						  "max_link_speed"};
	static const char *const width_files[] = {"current_link_width",
						  "max_link_width"};
	double *speeds[] = {&p->cur_speed_gts, &p->max_speed_gts};
	int *widths[] = {&p->cur_width, &p->max_width};
	char path[PATH_MAX], buf[128];

	for (int i = 0; i < 2; i++) {
		int64_t w;

		sysfs_path(path, sizeof(path), "%s/%s", pcidir, speed_files[i]);
		if (!sysfs_read(path, buf, sizeof(buf), 1) &&
		    sysval_pcie_speed(buf, speeds[i]))
			sysfs_garbage(path, buf);
		sysfs_path(path, sizeof(path), "%s/%s", pcidir, width_files[i]);
		if (sysfs_read(path, buf, sizeof(buf), 1))
			continue;
		if (sysval_i64(buf, &w) || w < 0 || w > 64)
			sysfs_garbage(path, buf);
		else
			*widths[i] = (int)w;
	}
}

static void read_pcie_aer(const char *pcidir, struct report_pcie *p)
{
	static const struct {
		const char *file, *key;
	} aer[] = {
		{"aer_dev_correctable", "TOTAL_ERR_COR"},
		{"aer_dev_nonfatal", "TOTAL_ERR_NONFATAL"},
		{"aer_dev_fatal", "TOTAL_ERR_FATAL"},
	};
	int64_t *out[] = {&p->aer_correctable, &p->aer_nonfatal, &p->aer_fatal};
	char path[PATH_MAX], buf[2048];

	for (int i = 0; i < 3; i++) {
		sysfs_path(path, sizeof(path), "%s/%s", pcidir, aer[i].file);
		if (sysfs_read(path, buf, sizeof(buf), 1))
			continue; /* no AER capability: unknown */
		if (sysval_aer_total(buf, aer[i].key, out[i]))
			sysfs_garbage(path, buf);
	}
}

/* The PCI device behind @devdir/device: address, link, AER, netdevs. */
static int read_pci(const char *devdir, struct report_device *d)
{
	char pcidir[PATH_MAX], real[PATH_MAX], path[PATH_MAX];
	const char *base;
	char **names;
	size_t n;
	int ret = 0;

	sysfs_path(pcidir, sizeof(pcidir), "%s/device", devdir);
	if (!realpath(pcidir, real))
		return 0; /* a virtual device (rxe, siw) */
	base = strrchr(real, '/');
	base = base ? base + 1 : real;
	if (is_pci_address(base)) {
		d->pcie.address = strdup(base);
		if (!d->pcie.address)
			return -ENOMEM;
		read_pcie_link(pcidir, &d->pcie);
		read_pcie_aer(pcidir, &d->pcie);
	}
	sysfs_path(path, sizeof(path), "%s/numa_node", pcidir);
	if (!sysfs_read(path, real, sizeof(real), 1)) {
		int64_t node;

		if (sysval_i64(real, &node) || node < -1 || node > 65535)
			sysfs_garbage(path, real);
		else
			d->numa_node = (int)node;
	}
	sysfs_path(path, sizeof(path), "%s/net", pcidir);
	if (sysfs_list(path, 0, &names, &n) == -ENOMEM)
		return -ENOMEM;
	for (size_t i = 0; !ret && i < n; i++)
		ret = sysfs_add_netdev(d, names[i]);
	sysfs_names_free(names, n);
	return ret;
}

static int read_identity(const char *devdir, struct report_device *d)
{
	char parent[REPORT_MAX_NAME + 1] = "";

	for (size_t i = 0; i < REPORT_DEVICE_TEXTS; i++)
		if (read_text(devdir, report_device_text_names[i],
			      report_device_text(d, i)))
			return -ENOMEM;
	/* Software devices (rxe, siw) name their netdev in "parent". */
	{
		char path[PATH_MAX], buf[128];

		sysfs_path(path, sizeof(path), "%s/parent", devdir);
		if (!sysfs_read(path, buf, sizeof(buf), 1) &&
		    !sysval_text(buf, parent, sizeof(parent)))
			return sysfs_add_netdev(d, parent);
	}
	return 0;
}

int sysfs_read_device(const struct sysfs_opts *o, const char *name,
		      struct report_device *d)
{
	char devdir[PATH_MAX];
	int ret;

	d->numa_node = -1;
	d->pcie.cur_speed_gts = d->pcie.max_speed_gts = -1;
	d->pcie.cur_width = d->pcie.max_width = -1;
	d->pcie.aer_correctable = d->pcie.aer_nonfatal = d->pcie.aer_fatal = -1;
	d->name = strdup(name);
	if (!d->name)
		return -ENOMEM;
	if (sysfs_path(devdir, sizeof(devdir), "%s/class/infiniband/%s",
		       o->root, name))
		return 0;
	ret = read_identity(devdir, d);
	if (!ret)
		ret = read_pci(devdir, d);
	if (!ret)
		ret = sysfs_read_ports(o, devdir, d);
	return ret;
}

int sysfs_root_check(const char *root)
{
	struct stat st;
	int ret = 0;

	if (stat(root, &st))
		ret = -errno;
	else if (!S_ISDIR(st.st_mode))
		ret = -ENOTDIR;
	if (ret)
		log_once(root, SYSFS_LOG_INTERVAL, LOG_LVL_ERR,
			 "sysfs_root %s: %s (set [probe] sysfs_root or "
			 "--sysfs-root to the sysfs mount, /sys)",
			 root, strerror(-ret));
	return ret;
}

int sysfs_scan(const struct sysfs_opts *o, struct report *r)
{
	char path[PATH_MAX];
	char **names;
	size_t n;
	int ret;

	ret = sysfs_root_check(o->root);
	if (ret)
		return ret;
	sysfs_path(path, sizeof(path), "%s/class/infiniband", o->root);
	ret = sysfs_list(path, 0, &names, &n);
	if (ret == -ENOMEM)
		return ret;
	if (ret) {
		log_once(path, SYSFS_LOG_INTERVAL, LOG_LVL_INFO,
			 "%s: %s: no RDMA devices", path, strerror(-ret));
		return 0;
	}
	ret = 0;
	if (n > REPORT_MAX_DEVICES) {
		log_once(path, SYSFS_LOG_INTERVAL, LOG_LVL_WARN,
			 "%s: %zu devices, reporting the first %d", path, n,
			 REPORT_MAX_DEVICES);
	}
	for (size_t i = 0; !ret && i < n && i < REPORT_MAX_DEVICES; i++) {
		struct report_device *grown;

		if (!sysval_is_name(names[i]))
			continue;
		grown = realloc(r->devices,
				(r->n_devices + 1) * sizeof(*grown));
		if (!grown) {
			ret = -ENOMEM;
			break;
		}
		r->devices = grown;
		memset(&grown[r->n_devices], 0, sizeof(*grown));
		r->n_devices++;
		ret = sysfs_read_device(o, names[i], &grown[r->n_devices - 1]);
	}
	sysfs_names_free(names, n);
	return ret;
}

int sysfs_root_is_live(const char *root)
{
	char real[PATH_MAX];

	return realpath(root, real) && strcmp(real, "/sys") == 0;
}
