// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ibnbd - command-line tool of the IBNBD kernel client (ibnbd-client.ko),
 * in the style of nvme-cli:
 *
 *   ibnbd map --sessname S --path [src@]dst [--path ...] --device P
 *             [--access-mode ro|rw|migration]
 *   ibnbd unmap ibnbdN|/dev/ibnbdN [--force]
 *   ibnbd list [-o normal|json]
 *
 * It writes /sys/class/ibnbd-client/ctl/map_device and the per-device
 * unmap_device, and reads the per-device attributes. IBNBD_SYSFS_ROOT
 * replaces /sys (tests against a fake tree). Exit status: 0 success, 1 the
 * kernel refused or a file could not be read, 2 usage error (nothing was
 * written).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sysfs.h"

#define IBNBD_VERSION		"0.1"
#define IBNBD_MAX_PATHS		8	/* IBNBD_CLT_MAX_PATHS of the client */
#define IBNBD_SESSNAME_MAX	63	/* sessname[64] of the client */
#define IBNBD_MAP_MAX		4096

#define EXIT_USAGE	2

static const char *prog = "ibnbd";

static void usage_main(FILE *f)
{
	fprintf(f,
		"usage: %s <command> [<args>]\n"
		"\n"
		"commands:\n"
		"  map     --sessname S --path [src@]dst [--path ...] --device P\n"
		"          [--access-mode ro|rw|migration]\n"
		"          map a remote device, print /dev/ibnbdN\n"
		"  unmap   ibnbdN|/dev/ibnbdN [--force]\n"
		"          unmap a device (--force: even if it is open)\n"
		"  list    [-o normal|json]\n"
		"          the mapped devices\n"
		"  help    this text\n"
		"  version the tool's version\n"
		"\n"
		"IBNBD_SYSFS_ROOT replaces /sys.\n", prog);
}

static int usage_err(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int usage_err(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s %s: ", prog, cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nsee '%s help'\n", prog);
	return EXIT_USAGE;
}

static const char *errno_name(int e)
{
	switch (e) {
	case EINVAL: return "EINVAL";
	case EBUSY: return "EBUSY";
	case ENOENT: return "ENOENT";
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case ENOMEM: return "ENOMEM";
	case EIO: return "EIO";
	case EPROTO: return "EPROTO";
	case ENOTCONN: return "ENOTCONN";
	case ECONNREFUSED: return "ECONNREFUSED";
	case ECONNRESET: return "ECONNRESET";
	case ETIMEDOUT: return "ETIMEDOUT";
	case EHOSTUNREACH: return "EHOSTUNREACH";
	case ENETUNREACH: return "ENETUNREACH";
	case EADDRNOTAVAIL: return "EADDRNOTAVAIL";
	case EEXIST: return "EEXIST";
	case ENODEV: return "ENODEV";
	case ENXIO: return "ENXIO";
	case EROFS: return "EROFS";
	case ESTALE: return "ESTALE";
	case EALREADY: return "EALREADY";
	case ENOSPC: return "ENOSPC";
	default: return NULL;
	}
}

/* "EINVAL", or "errno N" for a number without a name here. */
static const char *errno_str(int e)
{
	static char buf[32];

	if (errno_name(e))
		return errno_name(e);
	snprintf(buf, sizeof(buf), "errno %d", e);
	return buf;
}

/* A field value of the map string: non-empty, printable, no blanks. */
static int bad_token(const char *s)
{
	if (!*s)
		return 1;
	for (; *s; s++)
		if (!isgraph((unsigned char)*s))
			return 1;
	return 0;
}

/*
 * /dev/kmsg opened at its end before a write to sysfs, so that the
 * kernel's lines logged by the write (the reason of a refusal) can be
 * shown. -1 when not available (fake tree, no permission).
 */
static int kmsg_open(void)
{
	int fd;

	if (sysfs_is_fake())
		return -1;
	fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (lseek(fd, 0, SEEK_END) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Prints the client modules' kernel lines logged since kmsg_open(). */
static int kmsg_show(int fd)
{
	char rec[8192];
	ssize_t r;
	char *msg;
	int shown = 0;

	if (fd < 0)
		return 0;
	for (;;) {
		r = read(fd, rec, sizeof(rec) - 1);
		if (r < 0) {
			if (errno == EPIPE)	/* overwritten records */
				continue;
			break;
		}
		rec[r] = '\0';
		msg = strchr(rec, ';');
		if (!msg)
			continue;
		msg++;
		msg[strcspn(msg, "\n")] = '\0';
		if (strncmp(msg, "ibnbd_client", 12) &&
		    strncmp(msg, "ibtrs_client", 12))
			continue;
		fprintf(stderr, "%s: kernel: %s\n", prog, msg);
		shown++;
	}
	return shown;
}

static int name_in(char **names, int n, const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return 1;
	return 0;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* The device mapped by the write: a name in @after missing in @before. */
static const char *new_dev(char **before, int nb, char **after, int na)
{
	int i;

	for (i = 0; i < na; i++)
		if (!name_in(before, nb, after[i]))
			return after[i];
	return NULL;
}

static int cmd_map(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "sessname", required_argument, NULL, 's' },
		{ "path", required_argument, NULL, 'p' },
		{ "device", required_argument, NULL, 'd' },
		{ "access-mode", required_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *sess = NULL, *dev = NULL, *mode = NULL, *name = NULL;
	const char *paths[IBNBD_MAX_PATHS];
	char **before = NULL, **after = NULL;
	int npaths = 0, nb, na = 0, c, i, kfd, e, ret = 1;
	char map[IBNBD_MAP_MAX], node[300];
	struct stat st;
	size_t len;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":s:p:d:a:h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			sess = optarg;
			break;
		case 'p':
			if (npaths == IBNBD_MAX_PATHS)
				return usage_err("map", "more than %d --path",
						 IBNBD_MAX_PATHS);
			paths[npaths++] = optarg;
			break;
		case 'd':
			dev = optarg;
			break;
		case 'a':
			mode = optarg;
			break;
		case 'h':
			usage_main(stdout);
			return 0;
		case ':':
			return usage_err("map", "option '%s' needs a value",
					 argv[optind - 1]);
		default:
			return usage_err("map", "unknown option '%s'",
					 argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_err("map", "unexpected argument '%s'",
				 argv[optind]);
	if (!sess)
		return usage_err("map", "--sessname missing");
	if (bad_token(sess) || strlen(sess) > IBNBD_SESSNAME_MAX)
		return usage_err("map", "bad --sessname '%s' (1-%d characters, no blanks)",
				 sess, IBNBD_SESSNAME_MAX);
	if (!npaths)
		return usage_err("map", "--path missing");
	for (i = 0; i < npaths; i++)
		if (bad_token(paths[i]) || strchr(paths[i], '@') !=
		    strrchr(paths[i], '@') || paths[i][0] == '@' ||
		    paths[i][strlen(paths[i]) - 1] == '@')
			return usage_err("map", "bad --path '%s' ([src@]dst)",
					 paths[i]);
	if (!dev)
		return usage_err("map", "--device missing");
	if (bad_token(dev))
		return usage_err("map", "bad --device '%s'", dev);
	if (mode && strcmp(mode, "ro") && strcmp(mode, "rw") &&
	    strcmp(mode, "migration"))
		return usage_err("map", "bad --access-mode '%s' (ro, rw or migration)",
				 mode);

	len = snprintf(map, sizeof(map), "sessname=%s", sess);
	for (i = 0; i < npaths && len < sizeof(map); i++)
		len += snprintf(map + len, sizeof(map) - len, " path=%s",
				paths[i]);
	if (len < sizeof(map))
		len += snprintf(map + len, sizeof(map) - len, " device_path=%s",
				dev);
	if (mode && len < sizeof(map))
		len += snprintf(map + len, sizeof(map) - len, " access_mode=%s",
				mode);
	if (len >= sizeof(map))
		return usage_err("map", "arguments too long");

	if (!sysfs_exists(IBNBD_CTL "/map_device")) {
		fprintf(stderr, "%s: %s/%s/map_device missing: is ibnbd-client loaded?\n",
			prog, sysfs_root(), IBNBD_CTL);
		return 1;
	}
	nb = sysfs_dev_names(&before);
	if (nb < 0) {
		fprintf(stderr, "%s: reading %s/%s: %s\n", prog, sysfs_root(),
			IBNBD_DEVS, strerror(errno));
		return 1;
	}
	kfd = kmsg_open();
	if (sysfs_write(IBNBD_CTL "/map_device", map)) {
		e = errno;
		fprintf(stderr, "%s: map '%s' failed: %s (%s)\n", prog, map,
			strerror(e), errno_str(e));
		sleep_ms(20);
		if (!kmsg_show(kfd))
			fprintf(stderr, "%s: see the kernel log (dmesg) for the reason\n",
				prog);
		goto out;
	}
	/* the kernel adds the device before the write returns; a fake tree
	 * may take a moment
	 */
	for (i = 0; i < 40 && !name; i++) {
		sysfs_free_names(after, na);
		after = NULL;
		na = sysfs_dev_names(&after);
		if (na < 0)
			na = 0;
		name = new_dev(before, nb, after, na);
		if (!name)
			sleep_ms(50);
	}
	if (!name) {
		fprintf(stderr, "%s: map accepted but no new device in %s/%s\n",
			prog, sysfs_root(), IBNBD_DEVS);
		goto out;
	}
	snprintf(node, sizeof(node), "/dev/%s", name);
	if (!sysfs_is_fake()) {
		for (i = 0; i < 100; i++) {
			if (!stat(node, &st) && S_ISBLK(st.st_mode))
				break;
			sleep_ms(50);
		}
		if (i == 100)
			fprintf(stderr, "%s: warning: %s did not appear within 5 s\n",
				prog, node);
	}
	printf("%s\n", node);
	ret = 0;
out:
	if (kfd >= 0)
		close(kfd);
	sysfs_free_names(before, nb);
	sysfs_free_names(after, na);
	return ret;
}

/* "ibnbdN" or "/dev/ibnbdN" -> "ibnbdN"; NULL if it is neither. */
static const char *dev_name(const char *arg)
{
	const char *s;

	if (!strncmp(arg, "/dev/", 5))
		arg += 5;
	if (strncmp(arg, "ibnbd", 5) || !arg[5])
		return NULL;
	for (s = arg + 5; *s; s++)
		if (!isdigit((unsigned char)*s))
			return NULL;
	return arg;
}

static int cmd_unmap(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *name;
	char rel[512];
	int force = 0, c, e, kfd;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "fh", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			force = 1;
			break;
		case 'h':
			usage_main(stdout);
			return 0;
		default:
			return usage_err("unmap", "unknown option '%s'",
					 argv[optind - 1]);
		}
	}
	if (optind == argc)
		return usage_err("unmap", "device missing (ibnbdN or /dev/ibnbdN)");
	if (optind + 1 < argc)
		return usage_err("unmap", "unexpected argument '%s'",
				 argv[optind + 1]);
	name = dev_name(argv[optind]);
	if (!name)
		return usage_err("unmap", "'%s' is not ibnbdN or /dev/ibnbdN",
				 argv[optind]);
	snprintf(rel, sizeof(rel), "%s/%s/unmap_device", IBNBD_DEVS, name);
	if (!sysfs_exists(rel)) {
		fprintf(stderr, "%s: %s is not mapped (no %s/%s)\n", prog, name,
			sysfs_root(), rel);
		return 1;
	}
	kfd = kmsg_open();
	if (sysfs_write(rel, force ? "force" : "normal")) {
		e = errno;
		fprintf(stderr, "%s: unmap %s failed: %s (%s)\n", prog, name,
			strerror(e), errno_str(e));
		if (e == EBUSY && !force)
			fprintf(stderr, "%s: %s is open; close it or use --force\n",
				prog, name);
		else if (!kmsg_show(kfd))
			fprintf(stderr, "%s: see the kernel log (dmesg)\n", prog);
		if (kfd >= 0)
			close(kfd);
		return 1;
	}
	if (kfd >= 0)
		close(kfd);
	return 0;
}

/* ---- list ---- */

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch == '\n')
			fputs("\\n", stdout);
		else if (ch == '\t')
			fputs("\\t", stdout);
		else if (ch < 0x20)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

static void json_str_or_null(const char *s)
{
	if (s)
		json_str(s);
	else
		fputs("null", stdout);
}

static int is_number(const char *s)
{
	if (*s == '-')
		s++;
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

/*
 * One line of the paths file, "path ADDR key=value ...", as a JSON
 * object {"addr": ADDR, key: value, ...} (numbers as numbers); another
 * form as {"line": "..."}.
 */
static void json_path(char *line)
{
	char *tok, *save = NULL, *eq;
	int first = 1;

	if (strncmp(line, "path ", 5)) {
		fputs("{\"line\": ", stdout);
		json_str(line);
		putchar('}');
		return;
	}
	putchar('{');
	tok = strtok_r(line + 5, " ", &save);
	if (tok) {
		fputs("\"addr\": ", stdout);
		json_str(tok);
		first = 0;
	}
	while ((tok = strtok_r(NULL, " ", &save))) {
		eq = strchr(tok, '=');
		if (!eq)
			continue;
		*eq++ = '\0';
		printf("%s", first ? "" : ", ");
		first = 0;
		json_str(tok);
		fputs(": ", stdout);
		if (is_number(eq))
			fputs(eq, stdout);
		else
			json_str(eq);
	}
	putchar('}');
}

struct dev_info {
	char state[64];
	char session[256];
	char mapping_path[4096];
	char access_mode[64];
	char paths[8192];
	long long size_bytes;	/* -1: unknown */
	int has_state, has_session, has_mapping, has_mode;
};

static int attr(const char *name, const char *file, char *buf, size_t size)
{
	char rel[512];

	snprintf(rel, sizeof(rel), "%s/%s/%s", IBNBD_DEVS, name, file);
	return sysfs_read(rel, buf, size) >= 0;
}

static void dev_info_read(const char *name, struct dev_info *d)
{
	char rel[512], buf[64];

	memset(d, 0, sizeof(*d));
	d->has_state = attr(name, "state", d->state, sizeof(d->state));
	d->has_session = attr(name, "session", d->session,
			      sizeof(d->session));
	d->has_mapping = attr(name, "mapping_path", d->mapping_path,
			      sizeof(d->mapping_path));
	d->has_mode = attr(name, "access_mode", d->access_mode,
			   sizeof(d->access_mode));
	if (!attr(name, "paths", d->paths, sizeof(d->paths)))
		d->paths[0] = '\0';
	d->size_bytes = -1;
	snprintf(rel, sizeof(rel), "block/%s/size", name);
	if (sysfs_read(rel, buf, sizeof(buf)) > 0 && is_number(buf))
		d->size_bytes = strtoll(buf, NULL, 10) * 512;
}

static void list_json(char **names, int n)
{
	struct dev_info *d = malloc(sizeof(*d));
	char *line, *save = NULL;
	int i, first;

	if (!d) {
		fprintf(stderr, "%s: out of memory\n", prog);
		exit(1);
	}
	printf("{\n  \"devices\": [");
	for (i = 0; i < n; i++) {
		dev_info_read(names[i], d);
		printf("%s\n    {\n      \"name\": ", i ? "," : "");
		json_str(names[i]);
		printf(",\n      \"device\": \"/dev/");
		fputs(names[i], stdout);
		printf("\",\n      \"session\": ");
		json_str_or_null(d->has_session ? d->session : NULL);
		printf(",\n      \"mapping_path\": ");
		json_str_or_null(d->has_mapping ? d->mapping_path : NULL);
		printf(",\n      \"state\": ");
		json_str_or_null(d->has_state ? d->state : NULL);
		printf(",\n      \"access_mode\": ");
		json_str_or_null(d->has_mode ? d->access_mode : NULL);
		printf(",\n      \"size_bytes\": ");
		if (d->size_bytes >= 0)
			printf("%lld", d->size_bytes);
		else
			fputs("null", stdout);
		printf(",\n      \"paths\": [");
		first = 1;
		save = NULL;
		for (line = strtok_r(d->paths, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save)) {
			printf("%s\n        ", first ? "" : ",");
			first = 0;
			json_path(line);
		}
		printf("%s]\n    }", first ? "" : "\n      ");
	}
	printf("%s]\n}\n", n ? "\n  " : "");
	free(d);
}

static void human_size(long long b, char *buf, size_t size)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB",
					     "PiB" };
	double v = (double)b;
	int u = 0;

	if (b < 0) {
		snprintf(buf, size, "-");
		return;
	}
	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	snprintf(buf, size, u ? "%.1f %s" : "%.0f %s", v, units[u]);
}

static void list_normal(char **names, int n)
{
	struct dev_info *d = malloc(sizeof(*d));
	char size[32], *line, *save;
	int i;

	if (!d) {
		fprintf(stderr, "%s: out of memory\n", prog);
		exit(1);
	}
	printf("%-12s %-16s %-20s %-8s %-10s %10s\n", "Device", "Session",
	       "Mapping path", "State", "Access", "Size");
	for (i = 0; i < n; i++) {
		dev_info_read(names[i], d);
		human_size(d->size_bytes, size, sizeof(size));
		printf("%-12s %-16s %-20s %-8s %-10s %10s\n", names[i],
		       d->has_session ? d->session : "-",
		       d->has_mapping ? d->mapping_path : "-",
		       d->has_state ? d->state : "-",
		       d->has_mode ? d->access_mode : "-", size);
		save = NULL;
		for (line = strtok_r(d->paths, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save))
			printf("  %s\n", line);
	}
	free(d);
}

static int cmd_list(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output-format", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *fmt = "normal";
	char **names;
	int c, n;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			fmt = optarg;
			break;
		case 'h':
			usage_main(stdout);
			return 0;
		case ':':
			return usage_err("list", "option '%s' needs a value",
					 argv[optind - 1]);
		default:
			return usage_err("list", "unknown option '%s'",
					 argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_err("list", "unexpected argument '%s'",
				 argv[optind]);
	if (strcmp(fmt, "normal") && strcmp(fmt, "json"))
		return usage_err("list", "bad output format '%s' (normal or json)",
				 fmt);
	n = sysfs_dev_names(&names);
	if (n < 0) {
		fprintf(stderr, "%s: reading %s/%s: %s\n", prog, sysfs_root(),
			IBNBD_DEVS, strerror(errno));
		return 1;
	}
	if (!strcmp(fmt, "json"))
		list_json(names, n);
	else
		list_normal(names, n);
	sysfs_free_names(names, n);
	return fflush(stdout) ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *cmd;

	if (argc < 2) {
		usage_main(stderr);
		return EXIT_USAGE;
	}
	cmd = argv[1];
	if (!strcmp(cmd, "map"))
		return cmd_map(argc - 1, argv + 1);
	if (!strcmp(cmd, "unmap"))
		return cmd_unmap(argc - 1, argv + 1);
	if (!strcmp(cmd, "list"))
		return cmd_list(argc - 1, argv + 1);
	if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") ||
	    !strcmp(cmd, "-h")) {
		usage_main(stdout);
		return 0;
	}
	if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
		printf("%s version %s\n", prog, IBNBD_VERSION);
		return 0;
	}
	fprintf(stderr, "%s: unknown command '%s'\n", prog, cmd);
	usage_main(stderr);
	return EXIT_USAGE;
}
