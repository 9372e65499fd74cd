/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The link registry in a temporary dev dir: cookie-order conflicts, a
 * partition beating its own disk, atomic replacement, reruns, planted
 * symlinks and hostile names.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/base.h"
#include "probe/probe.h"
#include "links/links.h"

static char tmpdir[1024];
static char devdir[1100];

static int rm_rf(const char *path)
{
	char cmd[PATH_MAX + 32];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	return system(cmd);
}

static int setup(void **state)
{
	const char *t = getenv("TMPDIR");

	snprintf(tmpdir, sizeof(tmpdir), "%s/test-links.XXXXXX", t ? t : "/tmp");
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(devdir, sizeof(devdir), "%s/dev", tmpdir);
	return mkdir(devdir, 0755);
}

static int teardown(void **state)
{
	rm_rf(tmpdir);
	return 0;
}

static void names_of(struct ap_namelist *l, const char **names)
{
	memset(l, 0, sizeof(*l));
	for (; *names; names++)
		assert_int_equal(ap_namelist_add(l, *names), 0);
}

#define L(...) ((const char *[]){ __VA_ARGS__, NULL })

static int publish(struct ap_links *l, async_cookie_t c, const char *dev, const char *parent,
		   const char **names)
{
	struct ap_namelist nl;
	int r;

	names_of(&nl, names);
	r = ap_links_publish(l, c, dev, parent, &nl);
	ap_namelist_free(&nl);
	return r;
}

static void assert_link(const char *name, const char *target)
{
	char path[PATH_MAX], buf[PATH_MAX];
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", devdir, name);
	n = readlink(path, buf, sizeof(buf) - 1);
	if (n < 0)
		fail_msg("%s: %s", name, strerror(errno));
	buf[n] = '\0';
	if (strcmp(buf, target) != 0)
		fail_msg("%s -> %s, want %s", name, buf, target);
}

static const struct ap_link_event *event(struct ap_links *l, size_t i)
{
	const struct ap_link_event *e = ap_links_log_get(l, i);

	assert_non_null(e);
	return e;
}

/* The whole creation log as text, for comparisons. */
static char *log_text(struct ap_links *l)
{
	size_t n = ap_links_log_size(l), len = 0;
	char *s = calloc(1, 1);

	for (size_t i = 0; i < n; i++) {
		const struct ap_link_event *e = event(l, i);
		char line[1024];
		int k = snprintf(line, sizeof(line), "%llu %s %s %s %s\n", (unsigned long long)e->cookie,
				 ap_link_action_to_string(e->action), e->name, e->target,
				 e->owner ? e->owner : "-");

		s = realloc(s, len + (size_t)k + 1);
		memcpy(s + len, line, (size_t)k + 1);
		len += (size_t)k;
	}
	return s;
}

static void test_create_relative(void **state)
{
	struct ap_links *l = ap_links_new(devdir, false);

	assert_int_equal(publish(l, 1, "sda", NULL, L("disk/by-id/ata-X", "disk/by-diskseq/1")), 0);
	assert_int_equal(publish(l, 2, "sda1", "sda", L("disk/by-uuid/u1", "disk/by-id/virtio-a/b")), 0);
	assert_link("disk/by-id/ata-X", "../../sda");
	assert_link("disk/by-diskseq/1", "../../sda");
	assert_link("disk/by-uuid/u1", "../../sda1");
	assert_link("disk/by-id/virtio-a/b", "../../../sda1");
	assert_int_equal(ap_links_log_size(l), 4);
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(event(l, i)->action, AP_LINK_CREATED);
	assert_string_equal(event(l, 2)->target, "sda1");
	assert_int_equal(event(l, 2)->cookie, 2);
	ap_links_free(l);
}

/* two disks with one label: the first cookie keeps it, in both arrival orders of equal cookies */
static void test_conflict_first_cookie(void **state)
{
	struct ap_links *l = ap_links_new(devdir, false);
	const struct ap_link_event *e;

	assert_int_equal(publish(l, 3, "sdb", NULL, L("disk/by-label/data")), 0);
	assert_int_equal(publish(l, 5, "sdc", NULL, L("disk/by-label/data")), 0);
	assert_int_equal(publish(l, 7, "vda", NULL, L("disk/by-label/data")), 0);
	assert_link("disk/by-label/data", "../../sdb");
	e = event(l, 1);
	assert_int_equal(e->action, AP_LINK_CONFLICT);
	assert_string_equal(e->target, "sdc");
	assert_string_equal(e->owner, "sdb");
	e = event(l, 2);
	assert_int_equal(e->action, AP_LINK_CONFLICT);
	assert_string_equal(e->target, "vda");
	assert_string_equal(e->owner, "sdb");
	ap_links_free(l);
}

/* hybrid ISO: the partition takes its own disk's label; an unrelated disk's partition does not */
static void test_partition_beats_own_disk(void **state)
{
	struct ap_links *l = ap_links_new(devdir, false);
	const struct ap_link_event *e;

	assert_int_equal(publish(l, 1, "sda", NULL, L("disk/by-label/ISO", "disk/by-uuid/2024")), 0);
	assert_int_equal(publish(l, 2, "sdb", NULL, L("disk/by-label/OTHER")), 0);
	assert_int_equal(publish(l, 3, "sda1", "sda", L("disk/by-label/ISO", "disk/by-uuid/2024")), 0);
	assert_int_equal(publish(l, 4, "sdc1", "sdc", L("disk/by-label/OTHER")), 0);
	assert_link("disk/by-label/ISO", "../../sda1");
	assert_link("disk/by-uuid/2024", "../../sda1");
	assert_link("disk/by-label/OTHER", "../../sdb");
	e = event(l, 3);
	assert_int_equal(e->action, AP_LINK_REPLACED);
	assert_string_equal(e->name, "disk/by-label/ISO");
	assert_string_equal(e->target, "sda1");
	assert_string_equal(e->owner, "sda");
	e = event(l, 5);
	assert_int_equal(e->action, AP_LINK_CONFLICT);
	assert_string_equal(e->owner, "sdb");
	ap_links_free(l);

	/* a partition of sdb does not beat sda either */
	rm_rf(devdir);
	mkdir(devdir, 0755);
	l = ap_links_new(devdir, false);
	publish(l, 1, "sda", NULL, L("disk/by-label/X"));
	publish(l, 2, "sdb1", "sdb", L("disk/by-label/X"));
	assert_link("disk/by-label/X", "../../sda");
	ap_links_free(l);
}

/* a stale link is replaced; a second run leaves the tree as it was */
static void test_replace_and_rerun(void **state)
{
	char path[PATH_MAX];
	struct ap_links *l;
	char *log1, *log2;
	const char *const names1[] = { "disk/by-label/ISO", "disk/by-id/ata-Y", NULL };

	snprintf(path, sizeof(path), "%s/disk", devdir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/disk/by-id", devdir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/disk/by-id/ata-Y", devdir);
	assert_int_equal(symlink("../../sdz", path), 0);

	l = ap_links_new(devdir, false);
	publish(l, 1, "sda", NULL, (const char **)names1);
	publish(l, 2, "sda1", "sda", L("disk/by-label/ISO"));
	assert_int_equal(event(l, 1)->action, AP_LINK_REPLACED);
	assert_link("disk/by-id/ata-Y", "../../sda");
	assert_link("disk/by-label/ISO", "../../sda1");
	log1 = log_text(l);
	ap_links_free(l);

	l = ap_links_new(devdir, false);
	publish(l, 1, "sda", NULL, (const char **)names1);
	publish(l, 2, "sda1", "sda", L("disk/by-label/ISO"));
	log2 = log_text(l);
	/* the disk does not flap its partition's link back and forth */
	assert_int_equal(ap_links_log_size(l), 3);
	for (size_t i = 0; i < ap_links_log_size(l); i++)
		if (event(l, i)->action != AP_LINK_UNCHANGED)
			fail_msg("rerun event %zu: %s", i, ap_link_action_to_string(event(l, i)->action));
	assert_string_not_equal(log1, log2);
	assert_link("disk/by-id/ata-Y", "../../sda");
	assert_link("disk/by-label/ISO", "../../sda1");
	/* no temporary file left behind */
	{
		DIR *d;
		struct dirent *de;

		snprintf(path, sizeof(path), "%s/disk/by-id", devdir);
		d = opendir(path);
		assert_non_null(d);
		while ((de = readdir(d)))
			assert_null(strstr(de->d_name, "asyncprobe"));
		closedir(d);
	}
	ap_links_free(l);
	free(log1);
	free(log2);
}

/* the rerun of a plain tree logs "unchanged" for everything */
static void test_rerun_unchanged(void **state)
{
	struct ap_links *l;

	l = ap_links_new(devdir, false);
	publish(l, 1, "vda", NULL, L("disk/by-id/virtio-s", "disk/by-path/pci-0000:00:05.0"));
	publish(l, 2, "vda1", "vda", L("disk/by-id/virtio-s-part1"));
	ap_links_free(l);
	l = ap_links_new(devdir, false);
	publish(l, 1, "vda", NULL, L("disk/by-id/virtio-s", "disk/by-path/pci-0000:00:05.0"));
	publish(l, 2, "vda1", "vda", L("disk/by-id/virtio-s-part1"));
	assert_int_equal(ap_links_log_size(l), 3);
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(event(l, i)->action, AP_LINK_UNCHANGED);
	ap_links_free(l);
}

/* disk/by-label planted as a symlink to a directory elsewhere is not followed */
static void test_planted_symlink(void **state)
{
	char path[PATH_MAX], victim[PATH_MAX];
	struct ap_links *l;
	DIR *d;
	struct dirent *de;
	int n = 0;

	snprintf(victim, sizeof(victim), "%s/etc", tmpdir);
	mkdir(victim, 0755);
	snprintf(path, sizeof(path), "%s/disk", devdir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/disk/by-label", devdir);
	assert_int_equal(symlink(victim, path), 0);

	l = ap_links_new(devdir, false);
	assert_int_equal(publish(l, 1, "sda", NULL, L("disk/by-label/passwd", "disk/by-uuid/u")), 1);
	assert_int_equal(event(l, 0)->action, AP_LINK_FAILED);
	assert_int_equal(event(l, 0)->error, -ELOOP);
	assert_int_equal(event(l, 1)->action, AP_LINK_CREATED);
	ap_links_free(l);

	d = opendir(victim);
	assert_non_null(d);
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	assert_int_equal(n, 0);

	/* the dev dir's "disk" itself planted */
	rm_rf(devdir);
	mkdir(devdir, 0755);
	snprintf(path, sizeof(path), "%s/disk", devdir);
	assert_int_equal(symlink(victim, path), 0);
	l = ap_links_new(devdir, false);
	assert_int_equal(publish(l, 1, "sda", NULL, L("disk/by-label/x")), 1);
	assert_int_equal(event(l, 0)->action, AP_LINK_FAILED);
	ap_links_free(l);
	d = opendir(victim);
	while ((de = readdir(d)))
		assert_true(de->d_name[0] == '.');
	closedir(d);
}

/* a regular file where a link belongs is left alone */
static void test_non_symlink_left_alone(void **state)
{
	char path[PATH_MAX];
	struct ap_links *l;
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "%s/disk", devdir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/disk/by-uuid", devdir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/disk/by-uuid/u", devdir);
	fd = open(path, O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	close(fd);
	l = ap_links_new(devdir, false);
	assert_int_equal(publish(l, 1, "sda", NULL, L("disk/by-uuid/u")), 1);
	assert_int_equal(event(l, 0)->action, AP_LINK_FAILED);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	ap_links_free(l);
}

/*
 * The test's own judge of a link name, written from the rule in probe.h and
 * not from ap_link_name_valid() (which the registry itself uses, so it could
 * not catch the registry and the function going wrong together):
 * "disk", then "by-" and one of the seven kinds udev makes, then one or more
 * components; no component empty, "." or "..", longer than NAME_MAX or
 * holding a byte below 0x20 or 0x7f.
 */
static bool name_is_safe(const char *name)
{
	static const char *const kinds[] = { "id", "path", "uuid", "label", "partuuid",
					     "partlabel", "diskseq" };
	char copy[PATH_MAX], *comp[PATH_MAX / 2];
	size_t ncomp = 0, len = strlen(name), start = 0;
	bool kind_ok = false;

	if (len == 0 || len >= sizeof(copy))
		return false;
	memcpy(copy, name, len + 1);
	/* split at every '/', keeping empty components so they can be refused */
	for (size_t i = 0; i <= len; i++) {
		if (copy[i] != '/' && copy[i] != '\0')
			continue;
		copy[i] = '\0';
		comp[ncomp++] = copy + start;
		start = i + 1;
	}
	if (ncomp < 3 || strcmp(comp[0], "disk") != 0 || strncmp(comp[1], "by-", 3) != 0)
		return false;
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		kind_ok = kind_ok || strcmp(comp[1] + 3, kinds[k]) == 0;
	if (!kind_ok)
		return false;
	for (size_t c = 2; c < ncomp; c++) {
		size_t n = strlen(comp[c]);

		if (n == 0 || n > NAME_MAX || strcmp(comp[c], ".") == 0 || strcmp(comp[c], "..") == 0)
			return false;
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)comp[c][i] < 0x20 || (unsigned char)comp[c][i] == 0x7f)
				return false;
	}
	return true;
}

/* @name with control bytes as \xNN, for messages (one static buffer) */
static const char *shown(const char *name)
{
	static char buf[4 * PATH_MAX + 1];
	size_t o = 0;

	for (const unsigned char *p = (const unsigned char *)name; *p && o + 5 < sizeof(buf); p++)
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, *p < 0x20 || *p == 0x7f ? "\\x%02x" : "%c",
				      *p);
	buf[o] = '\0';
	return buf;
}

/* every file under the dev dir must be inside disk/by-<known>/ */
static void walk_check(const char *dir, const char *rel, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	assert_non_null(d);
	while ((de = readdir(d))) {
		char p[PATH_MAX], r[PATH_MAX];
		struct stat st;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		snprintf(r, sizeof(r), "%s%s%s", rel, rel[0] ? "/" : "", de->d_name);
		assert_int_equal(lstat(p, &st), 0);
		if (depth == 0)
			assert_string_equal(de->d_name, "disk");
		if (depth == 1)
			assert_int_equal(strncmp(de->d_name, "by-", 3), 0);
		if (S_ISDIR(st.st_mode))
			walk_check(p, r, depth + 1);
		else {
			char pn[PATH_MAX];

			assert_true(S_ISLNK(st.st_mode));
			assert_true(depth >= 2);
			snprintf(pn, sizeof(pn), "%s", r);
			if (!name_is_safe(pn))
				fail_msg("unsafe link made: \"%s\"", shown(pn));
		}
	}
	closedir(d);
}

/* hostile labels straight from a medium, through the encoder and the registry */
static void test_hostile_labels(void **state)
{
	struct ap_links *l = ap_links_new(devdir, false);
	char raw[1100], name[2000];
	async_cookie_t c = 1;
	size_t created = 0, rejected = 0;
	const char *const specials[] = { "../../etc", ".", "..", "", "/", "//", "a/../../b", "..\\x2f..",
					 "\\x2e\\x2e", " ", "\x7f", "\xff\xfe", "\xc0\xae\xc0\xae", NULL };

	for (unsigned b = 1; b < 256; b++) {
		/* one byte, the byte repeated 1 KiB, and the byte inside a label */
		for (int form = 0; form < 3; form++) {
			char *enc;
			struct ap_namelist nl = { 0 };

			if (form == 0)
				snprintf(raw, sizeof(raw), "%c", b);
			else if (form == 1) {
				memset(raw, (int)b, 1024);
				raw[1024] = '\0';
			} else
				snprintf(raw, sizeof(raw), "x%cy", b);
			enc = ap_blkid_encode(raw, true);
			assert_non_null(enc);
			snprintf(name, sizeof(name), "disk/by-label/%s", enc);
			free(enc);
			assert_int_equal(ap_namelist_add(&nl, name), 0);
			ap_links_publish(l, c++, "sda", NULL, &nl);
			ap_namelist_free(&nl);
		}
	}
	for (size_t i = 0; specials[i]; i++) {
		struct ap_namelist nl = { 0 };
		char *enc = ap_blkid_encode(specials[i], true);

		snprintf(name, sizeof(name), "disk/by-label/%s", enc);
		free(enc);
		ap_namelist_add(&nl, name);
		/* and the raw text too, as if an encoder had been skipped */
		snprintf(name, sizeof(name), "disk/by-partlabel/%s", specials[i]);
		ap_namelist_add(&nl, name);
		ap_links_publish(l, c++, "sdb", NULL, &nl);
		ap_namelist_free(&nl);
	}
	for (size_t i = 0; i < ap_links_log_size(l); i++) {
		const struct ap_link_event *e = event(l, i);

		/* judged by the test's own rule, not by the registry's */
		if (e->action == AP_LINK_CREATED) {
			created++;
			if (!name_is_safe(e->name))
				fail_msg("the registry created an unsafe name: \"%s\"", shown(e->name));
		}
		if (e->action == AP_LINK_REJECTED) {
			rejected++;
			if (name_is_safe(e->name))
				fail_msg("the registry refused a safe name: \"%s\"", shown(e->name));
		}
		assert_int_not_equal(e->action, AP_LINK_FAILED);
	}
	assert_true(created > 200);
	assert_true(rejected > 5);
	walk_check(devdir, "", 0);
	/* nothing next to the dev dir either */
	{
		DIR *d = opendir(tmpdir);
		struct dirent *de;

		while ((de = readdir(d)))
			assert_true(de->d_name[0] == '.' || strcmp(de->d_name, "dev") == 0);
		closedir(d);
	}
	ap_links_free(l);
}

/* a dry run logs what a real run would do and touches nothing */
static void test_dry_run(void **state)
{
	struct ap_links *l = ap_links_new(devdir, true);
	struct ap_links *r;
	char *a, *b;
	DIR *d;
	struct dirent *de;

	publish(l, 1, "sda", NULL, L("disk/by-label/ISO", "disk/by-id/x"));
	publish(l, 2, "sdb", NULL, L("disk/by-id/x"));
	publish(l, 3, "sda1", "sda", L("disk/by-label/ISO", "disk/by-label/."));
	d = opendir(devdir);
	while ((de = readdir(d)))
		assert_true(de->d_name[0] == '.');
	closedir(d);
	a = log_text(l);

	r = ap_links_new(devdir, false);
	publish(r, 1, "sda", NULL, L("disk/by-label/ISO", "disk/by-id/x"));
	publish(r, 2, "sdb", NULL, L("disk/by-id/x"));
	publish(r, 3, "sda1", "sda", L("disk/by-label/ISO", "disk/by-label/."));
	b = log_text(r);
	assert_string_equal(a, b);
	free(a);
	free(b);
	ap_links_free(l);
	ap_links_free(r);
}

/* concurrent publishers (distinct devices, shared names): one owner per name, nothing lost */
struct pub_arg {
	struct ap_links *l;
	int id;
};

static void *publisher(void *p)
{
	struct pub_arg *a = p;
	char dev[32], n1[64], n2[64];

	snprintf(dev, sizeof(dev), "sd%c", 'a' + a->id);
	snprintf(n1, sizeof(n1), "disk/by-id/own-%d", a->id);
	snprintf(n2, sizeof(n2), "disk/by-label/shared-%d", a->id % 3);
	for (int i = 0; i < 50; i++) {
		const char *names[] = { n1, n2, NULL };

		publish(a->l, (async_cookie_t)(a->id + 1), dev, NULL, names);
	}
	return NULL;
}

static void test_threads(void **state)
{
	struct ap_links *l = ap_links_new(devdir, false);
	pthread_t t[8];
	struct pub_arg a[8];
	size_t created = 0, conflicts = 0;

	for (int i = 0; i < 8; i++) {
		a[i].l = l;
		a[i].id = i;
		assert_int_equal(pthread_create(&t[i], NULL, publisher, &a[i]), 0);
	}
	for (int i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	for (size_t i = 0; i < ap_links_log_size(l); i++) {
		const struct ap_link_event *e = event(l, i);

		if (e->action == AP_LINK_CREATED)
			created++;
		else if (e->action == AP_LINK_CONFLICT)
			conflicts++;
		else
			fail_msg("event %zu: %s", i, ap_link_action_to_string(e->action));
	}
	/* 8 own names and 3 shared ones created once; each later sharer conflicts on each try */
	assert_int_equal(created, 8 + 3);
	assert_int_equal(conflicts, 5 * 50);
	ap_links_free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_create_relative, setup, teardown),
		cmocka_unit_test_setup_teardown(test_conflict_first_cookie, setup, teardown),
		cmocka_unit_test_setup_teardown(test_partition_beats_own_disk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replace_and_rerun, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rerun_unchanged, setup, teardown),
		cmocka_unit_test_setup_teardown(test_planted_symlink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_non_symlink_left_alone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hostile_labels, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dry_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_threads, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
