/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Topology order and scheduling, against a scripted sysfs tree (umockdev):
 * an AHCI controller with two SATA disks (one partitioned: 1, 2, 10), a
 * virtio-scsi HBA whose hosts are host2 and host10 with targets 2:0:2 and
 * 2:0:10, an NVMe controller with namespaces 2 and 10, an LSI HBA at PCI
 * slot 0x10 (between 0x03 and 0x1f, which strverscmp would misorder) with
 * an empty CD drive, a loop and a zram disk.
 *
 *  - ap_devpath_compare() on the cases that matter;
 *  - ap_enumerate(): controller order, children order;
 *  - what the engine's waits count (ap_count_children(), ap_has_child(),
 *    ap_nvme_ctrl_ready()), and which uevents wake which wait;
 *  - the asyncprobe program on that tree: the cookie of every device, in
 *    sequential mode, with --fastboot, and both under ASYNC_CHAOS; the
 *    manifests (timings stripped) must be byte-identical;
 *  - a disk that appears (with its uevent) while its SCSI device waits;
 *  - a later controller's disk probed while an earlier controller's SCSI
 *    device still waits for its own, but published after that subtree;
 *
 * A step that depends on the program's progress waits for the event (a
 * line of its -v log) with a generous bound, never for a fixed time.
 *  - an NVMe multipath head behind two controllers goes with the first in
 *    devpath order, whichever goes live first and whether or not the head
 *    is there when the program starts;
 *  - --include-loop=NAMES: the loop devices it names, no other;
 *  - --all-modules: every device with a MODALIAS a controller, in
 *    ap_enumerate() and in the program's --dry-run manifest; storage
 *    controllers only without it;
 *  - root first: the controllers asyncprobe.root_path= (or --root-path)
 *    points at come first in the order, and below them the root's chain
 *    (its SCSI device and disk, its NVMe namespace) before its siblings.
 *
 * Re-executes itself under libumockdev-preload when not already there.
 * Prints TAP.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libudev.h>
#include <umockdev.h>

#include "base/base.h"
#include "device/device.h"
#include "modules/modules.h"
#include "probe/probe.h"

static int test_no;
static int failures;

static void ok(bool cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void ok(bool cond, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d - ", cond ? "ok" : "not ok", ++test_no);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	if (!cond)
		failures++;
}

static void reexec_with_preload(char **argv)
{
	const char *pre = getenv("LD_PRELOAD");
	const char *asan = getenv("ASAN_OPTIONS");
	char buf[4096];

	if ((pre && strstr(pre, "umockdev-preload")) || getenv("AP_TOPOLOGY_REEXEC"))
		return;
	snprintf(buf, sizeof(buf), "libumockdev-preload.so.0%s%s", pre ? ":" : "", pre ? pre : "");
	setenv("LD_PRELOAD", buf, 1);
	/* ASan must not insist on being first; GLib's one-time allocations are not leaks */
	snprintf(buf, sizeof(buf), "%s%sverify_asan_link_order=0:detect_leaks=0",
		 asan ? asan : "", asan ? ":" : "");
	setenv("ASAN_OPTIONS", buf, 1);
	setenv("AP_TOPOLOGY_REEXEC", "1", 1);
	execv("/proc/self/exe", argv);
	/* umockdev is installed (configure found it): not being able to use it is a failure */
	printf("Bail out! cannot re-execute under umockdev: %s\n", strerror(errno));
	exit(1);
}

static void test_compare(void)
{
	static const struct { const char *a, *b; } less[] = {
		{ "/devices/x/host2", "/devices/x/host10" },
		{ "/devices/x/host2/target2:0:2/2:0:2:0", "/devices/x/host2/target2:0:10/2:0:10:0" },
		{ "/devices/x/0:0:2:0", "/devices/x/0:0:10:0" },
		{ "/devices/pci0000:00/0000:00:03.0", "/devices/pci0000:00/0000:00:10.0" },
		{ "/devices/pci0000:00/0000:00:10.0", "/devices/pci0000:00/0000:00:1f.2" },
		{ "/devices/pci0000:00/0000:00:09.0", "/devices/pci0000:00/0000:00:0a.0" },
		{ "/devices/pci0000:00/0000:00:1f.2", "/devices/pci0000:00/0000:00:1f.2/ata1" },
		{ "/devices/x/block/sda/sda2", "/devices/x/block/sda/sda10" },
		{ "/devices/x/nvme0n2", "/devices/x/nvme0n10" },
		{ "/devices/usb1/1-1.2", "/devices/usb1/1-1.10" },
		{ "/devices/pci0000:00/0000:00:1f.2/ata1", "/devices/pci0000:00/0000:00:1f.2/ata2" },
	};
	size_t i;

	for (i = 0; i < sizeof(less) / sizeof(less[0]); i++)
		ok(ap_devpath_compare(less[i].a, less[i].b) < 0 &&
		   ap_devpath_compare(less[i].b, less[i].a) > 0,
		   "%s sorts before %s", less[i].a, less[i].b);
	ok(ap_devpath_compare("/devices/a/host2", "/devices/a/host2") == 0, "equal paths compare equal");

	/* SCSI devices are told by their names (ap_classify()). */
	{
		static const char *const hctl[] = { "0:0:0:0", "2:0:10:0", "10:1:255:31" };
		static const char *const not_hctl[] = {
			"host2", "target2:0:1", "0:0:0", "0:0:0:0:0", "0::0:0", ":0:0:0",
			"0:0:0:", "2:0:1:0-part", "", "sda",
		};

		for (i = 0; i < sizeof(hctl) / sizeof(hctl[0]); i++)
			ok(ap_is_hctl(hctl[i], strlen(hctl[i])), "%s is a SCSI device name", hctl[i]);
		for (i = 0; i < sizeof(not_hctl) / sizeof(not_hctl[0]); i++)
			ok(!ap_is_hctl(not_hctl[i], strlen(not_hctl[i])), "\"%s\" is not a SCSI device name",
			   not_hctl[i]);
		ok(ap_is_hctl("1:0:0:0/block", 7), "a component is judged by its length");
	}
}

static char *names_of(struct udev *udev, const struct ap_found_list *l)
{
	static char buf[2048];
	size_t i;

	buf[0] = '\0';
	for (i = 0; i < l->n; i++) {
		struct udev_device *d = udev_device_new_from_syspath(udev, l->v[i].syspath);

		strncat(buf, i ? " " : "", sizeof(buf) - strlen(buf) - 1);
		strncat(buf, d ? udev_device_get_sysname(d) : "?", sizeof(buf) - strlen(buf) - 1);
		if (d)
			udev_device_unref(d);
	}
	return buf;
}

static void expect_enum_ex(struct udev *udev, const char *parent, bool all_modules,
			   const char *include_loop, const char *expected)
{
	struct ap_found_list l = {};
	char path[4096];
	const char *got;
	int r;

	if (parent)
		snprintf(path, sizeof(path), "/sys%s", parent);
	r = ap_enumerate(udev, parent ? path : NULL, all_modules, include_loop, &l);
	got = r < 0 ? strerror(-r) : names_of(udev, &l);
	ok(r == 0 && strcmp(got, expected) == 0, "children of %s%s%s%s%s: got \"%s\", expected \"%s\"",
	   parent ? parent : "discovery", all_modules ? " (all modules)" : "",
	   include_loop ? " (loop devices: " : "",
	   include_loop ? (*include_loop ? include_loop : "all") : "", include_loop ? ")" : "",
	   got, expected);
	ap_found_list_free(&l);
}

static void expect_enum(struct udev *udev, const char *sys, const char *parent,
			const char *include_loop, const char *expected)
{
	(void)sys;
	expect_enum_ex(udev, parent, false, include_loop, expected);
}

/* The --include-loop=NAMES list: what it lets through, what it accepts. */
static void test_loop_list(void)
{
	static const char *const valid[] = { "loop0", "loop3,loop7", "loop12,loop3,loop100" };
	static const char *const invalid[] = {
		"", "loop", "loopx", "loop3,", ",loop3", "loop3,,loop7", "/dev/loop3", "loop3 ",
		"sda", "loop3,sda",
	};
	size_t i;

	for (i = 0; i < sizeof(valid) / sizeof(valid[0]); i++)
		ok(ap_loop_list_valid(valid[i]), "--include-loop=%s is valid", valid[i]);
	for (i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++)
		ok(!ap_loop_list_valid(invalid[i]), "--include-loop=\"%s\" is refused", invalid[i]);
	ok(!ap_loop_included(NULL, "loop3"), "no --include-loop: no loop device");
	ok(ap_loop_included("", "loop3") && ap_loop_included("", "loop12"),
	   "bare --include-loop: every loop device");
	ok(ap_loop_included("loop3,loop7", "loop3") && ap_loop_included("loop3,loop7", "loop7"),
	   "--include-loop=loop3,loop7: loop3 and loop7");
	ok(!ap_loop_included("loop3,loop7", "loop30") && !ap_loop_included("loop3,loop7", "loop") &&
	   !ap_loop_included("loop30", "loop3") && !ap_loop_included("loop3,loop7", "loop1"),
	   "--include-loop=loop3,loop7: not loop30, loop1, or loop3 for loop30's list");
}

/*
 * What the engine's waits count, read from the tree directly (src/asyncprobe/device/,
 * subtree_walk()): a count goes below SCSI devices and disks, unlike an
 * enumeration, and an NVMe controller is ready when live with a namespace.
 */
static void test_waits(struct udev *udev, UMockdevTestbed *tb)
{
	static const char ahci[] = "/sys/devices/pci0000:00/0000:00:1f.2";
	static const char sda_dev[] = "/sys/devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0";
	static const char nvme[] = "/sys/devices/pci0000:00/0000:00:04.0";
	static const char nvme0[] = "/sys/devices/pci0000:00/0000:00:04.0/nvme/nvme0";
	int n;

	n = ap_count_children(udev, ahci, "scsi", "scsi_device", NULL, NULL);
	ok(n == 2, "the AHCI controller has 2 SCSI devices (got %d)", n);
	n = ap_count_children(udev, ahci, "scsi", NULL, NULL, NULL);
	ok(n == 6, "the AHCI controller has 6 devices of subsystem scsi: hosts, targets, devices (got %d)",
	   n);
	n = ap_count_children(udev, sda_dev, "block", "partition", NULL, NULL);
	ok(n == 3, "a count goes below the disk: sda's SCSI device has 3 partitions below it (got %d)", n);
	ok(ap_has_child(udev, sda_dev, "block", "disk"), "sda's SCSI device has its disk");
	ok(!ap_has_child(udev, "/sys/devices/pci0000:00/0000:00:00.0", "block", "disk"),
	   "the host bridge has no disk below it");
	n = ap_count_children(udev, "/sys/devices/pci0000:00/0000:00:1f.2/nothere", "scsi", NULL, NULL,
			      NULL);
	ok(n == 0, "a device that is gone has nothing below it (got %d)", n);
	ok(ap_nvme_ctrl_ready(udev, nvme), "the NVMe controller is live with a namespace");
	ok(!ap_nvme_ctrl_ready(udev, ahci), "the AHCI controller is no NVMe controller");
	umockdev_testbed_set_attribute(tb, nvme0, "state", "resetting");
	ok(!ap_nvme_ctrl_ready(udev, nvme), "an NVMe controller still resetting is not ready");
	umockdev_testbed_set_attribute(tb, nvme0, "state", "live");
	ok(ap_nvme_ctrl_ready(udev, nvme), "and it is once live again");
}

/*
 * The uevent monitor wakes a waiter for the uevents of its own subtree
 * only (ap_monitor_wait_below()), every waiter for a kick, and one without
 * a subtree (ap_monitor_wait()) for every uevent.
 */
struct monitor_probe {
	struct ap_monitor *m;
	const char *below;      /* NULL: ap_monitor_wait() */
	pthread_mutex_t lock;
	unsigned int looks;     /* evaluations of the predicate */
	bool done;              /* what the predicate waits for */
	int result;
};

static bool monitor_probe_pred(void *data)
{
	struct monitor_probe *p = data;
	bool done;

	pthread_mutex_lock(&p->lock);
	p->looks++;
	done = p->done;
	pthread_mutex_unlock(&p->lock);
	return done;
}

static void *monitor_probe_thread(void *data)
{
	struct monitor_probe *p = data;

	p->result = p->below ? ap_monitor_wait_below(p->m, p->below, monitor_probe_pred, p, 20000)
			     : ap_monitor_wait(p->m, monitor_probe_pred, p, 20000);
	return NULL;
}

static unsigned int monitor_looks(struct monitor_probe *p)
{
	unsigned int n;

	pthread_mutex_lock(&p->lock);
	n = p->looks;
	pthread_mutex_unlock(&p->lock);
	return n;
}

static unsigned int monitor_events;
static pthread_mutex_t monitor_events_lock = PTHREAD_MUTEX_INITIALIZER;

/* The monitor's callback, before it wakes anyone: count what it received. */
static void monitor_event(const char *action, const char *syspath, void *userdata)
{
	(void)action;
	(void)syspath;
	(void)userdata;
	pthread_mutex_lock(&monitor_events_lock);
	monitor_events++;
	pthread_mutex_unlock(&monitor_events_lock);
}

static unsigned int monitor_events_seen(void)
{
	unsigned int n;

	pthread_mutex_lock(&monitor_events_lock);
	n = monitor_events;
	pthread_mutex_unlock(&monitor_events_lock);
	return n;
}

static void test_monitor(UMockdevTestbed *tb)
{
	static const char sda_dev[] = "/sys/devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0";
	static const char other[] = "/sys/devices/pci0000:00/0000:00:03.0/virtio2/host2/target2:0:2/2:0:2:0/block/sdc";
	struct monitor_probe below = { .below = sda_dev, .lock = PTHREAD_MUTEX_INITIALIZER };
	struct monitor_probe all = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct ap_monitor *m = NULL;
	pthread_t t1, t2;
	unsigned int i, looks;
	int r;

	r = ap_monitor_start(&m, monitor_event, NULL);
	ok(r == 0, "the uevent monitor starts under umockdev (%s)", r < 0 ? strerror(-r) : "ok");
	if (r < 0)
		return;
	below.m = all.m = m;
	pthread_create(&t1, NULL, monitor_probe_thread, &below);
	pthread_create(&t2, NULL, monitor_probe_thread, &all);
	for (i = 0; i < 200 && (monitor_looks(&below) < 1 || monitor_looks(&all) < 1); i++)
		usleep(10 * 1000);
	for (i = 0; i < 10; i++)
		umockdev_testbed_uevent(tb, other, "change");
	/* all 10 received, and the waiter for every uevent woken since */
	for (i = 0; i < 500 && (monitor_events_seen() < 10 || monitor_looks(&all) < 2); i++)
		usleep(10 * 1000);
	usleep(50 * 1000);
	ok(monitor_events_seen() == 10 && monitor_looks(&all) >= 2,
	   "a waiter for every uevent looked again after 10 uevents (%u received, %u looks; "
	   "uevents close together wake it once)", monitor_events_seen(), monitor_looks(&all));
	looks = monitor_looks(&below);
	ok(looks == 1, "a waiter for sda's SCSI device did not wake for another disk's uevents "
	   "(%u looks)", looks);
	pthread_mutex_lock(&below.lock);
	below.done = true;
	pthread_mutex_unlock(&below.lock);
	umockdev_testbed_uevent(tb, sda_dev, "change");
	pthread_join(t1, NULL);
	ok(below.result == 0 && below.looks == 2,
	   "it woke for a uevent of its own device (result %d, %u looks)", below.result, below.looks);
	pthread_mutex_lock(&all.lock);
	all.done = true;
	pthread_mutex_unlock(&all.lock);
	ap_monitor_kick(m);
	pthread_join(t2, NULL);
	ok(all.result == 0, "a kick wakes every waiter (result %d)", all.result);
	ap_monitor_free(m);
}

/*
 * Run the program with the kernel command line in the file @cmdline and
 * one more option @extra (or NULL); returns its exit status, or -1.
 */
static int run_asyncprobe_ex(const char *json, const char *mode, const char *chaos,
			     const char *cmdline, const char *extra)
{
	const char *top = getenv("top_builddir");
	char prog[4096], jarg[4200];
	pid_t pid;
	int status;

	snprintf(prog, sizeof(prog), "%s/src/asyncprobe/asyncprobe", top ? top : ".");
	snprintf(jarg, sizeof(jarg), "--json=%s", json);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (chaos)
			setenv("ASYNC_CHAOS", chaos, 1);
		else
			unsetenv("ASYNC_CHAOS");
		setenv("ASYNCPROBE_CMDLINE", cmdline, 1);
		execl(prog, prog, "--no-modules", "--no-links", "-q", "--no-progress",
		      "--device-timeout=2", mode, jarg, extra, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int run_asyncprobe(const char *json, const char *mode, const char *chaos)
{
	return run_asyncprobe_ex(json, mode, chaos, "/dev/null", NULL);
}

/* The manifest without what may differ between runs: the "run" line and "time" objects. */
static char *stable_manifest(const char *path)
{
	FILE *f = fopen(path, "re");
	char line[8192];
	char *out = NULL;
	size_t n = 0;

	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		char *t;

		if (strncmp(line, "  \"run\":", 8) == 0)
			continue;
		while ((t = strstr(line, ",\"time\":{"))) {
			char *end = strchr(t, '}');

			if (!end)
				break;
			memmove(t, end + 1, strlen(end + 1) + 1);
		}
		out = realloc(out, n + strlen(line) + 1);
		if (!out)
			break;
		memcpy(out + n, line, strlen(line) + 1);
		n += strlen(line);
	}
	fclose(f);
	return out;
}

/* "name" of every controller and device, in cookie order (the file lists them so). */
static char *cookie_order(const char *manifest)
{
	static char buf[4096];
	const char *p = manifest;
	unsigned long long want = 2;
	bool found = true;

	buf[0] = '\0';
	while (found) {
		char key[64];
		const char *hit;

		found = false;
		snprintf(key, sizeof(key), "{\"cookie\":%llu,\"parent\"", want);
		hit = strstr(p, key);
		if (hit) {
			const char *name = strstr(hit, "\"name\":\"");
			const char *end = name ? strchr(name + 8, '"') : NULL;

			if (name && end) {
				strncat(buf, want > 2 ? " " : "", sizeof(buf) - strlen(buf) - 1);
				strncat(buf, name + 8, (size_t)(end - name - 8));
				found = true;
				want++;
			}
		}
	}
	return buf;
}

/* depth first: each controller with its whole subtree before the next */
static const char expected_order[] =
	"0000:00:03.0 virtio2 2:0:2:0 sdc 2:0:10:0 sdd 10:0:0:0 sde "
	"0000:00:04.0 nvme0n2 nvme0n10 0000:00:10.0 3:0:0:0 "
	"0000:00:1f.2 0:0:0:0 sda sda1 sda2 sda10 1:0:0:0 sdb";

static void test_program(void)
{
	static const struct { const char *mode, *chaos; } runs[] = {
		{ "--no-fastboot", NULL },
		{ "--fastboot", NULL },
		{ "--no-fastboot", "12345" },
		{ "--fastboot", "12345" },
		{ "--fastboot", "987654321" },
	};
	char dir[] = "/tmp/ap-topology.XXXXXX";
	char *ref = NULL;
	size_t i;

	if (!mkdtemp(dir)) {
		ok(false, "mkdtemp: %s", strerror(errno));
		return;
	}
	for (i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		char json[256];
		char *m;
		int st;

		snprintf(json, sizeof(json), "%s/run%zu.json", dir, i);
		st = run_asyncprobe(json, runs[i].mode, runs[i].chaos);
		ok(st == AP_EXIT_OK || st == AP_EXIT_DEGRADED, "asyncprobe %s%s%s ran (status %d)",
		   runs[i].mode, runs[i].chaos ? " ASYNC_CHAOS=" : "", runs[i].chaos ? runs[i].chaos : "",
		   st);
		m = stable_manifest(json);
		if (!m) {
			ok(false, "manifest %s readable", json);
			continue;
		}
		if (!ref) {
			const char *got = cookie_order(m);

			ok(strcmp(got, expected_order) == 0,
			   "cookie order is topological, depth first: got \"%s\"", got);
			ref = m;
			continue;
		}
		ok(strcmp(ref, m) == 0, "manifest of %s%s%s identical to the sequential run",
		   runs[i].mode, runs[i].chaos ? " ASYNC_CHAOS=" : "", runs[i].chaos ? runs[i].chaos : "");
		if (strcmp(ref, m) != 0)
			printf("# reference:\n# %s\n# this run:\n# %s\n", ref, m);
		free(m);
		unlink(json);
	}
	free(ref);
	snprintf(dir + strlen(dir), 1, "%s", "");
	{
		char json[256];

		snprintf(json, sizeof(json), "%s/run0.json", dir);
		unlink(json);
	}
	rmdir(dir);
}

/*
 * Root first: asyncprobe.root_path= (or --root-path) names the root's
 * by-path link; the controllers at its PCI address come first and, below
 * them, the device on the way to the root before its siblings (the
 * virtio-scsi HBA's second disk, NVMe namespace 10), the order otherwise
 * unchanged, in every mode.  (The mock's ATA ports have no port_no, so its
 * ata- names match only the controller.)  A path naming no controller or
 * no device below it (a disk moved), or only beginning like a device's
 * name, leaves the order as it is; the command line wins over the option.
 */
static void test_root_first(void)
{
	static const char ahci_first[] =
		"0000:00:1f.2 0:0:0:0 sda sda1 sda2 sda10 1:0:0:0 sdb "
		"0000:00:03.0 virtio2 2:0:2:0 sdc 2:0:10:0 sdd 10:0:0:0 sde "
		"0000:00:04.0 nvme0n2 nvme0n10 0000:00:10.0 3:0:0:0";
	/* the root on namespace 10: it comes before namespace 2 */
	static const char nvme_first[] =
		"0000:00:04.0 nvme0n10 nvme0n2 "
		"0000:00:03.0 virtio2 2:0:2:0 sdc 2:0:10:0 sdd 10:0:0:0 sde "
		"0000:00:10.0 3:0:0:0 0000:00:1f.2 0:0:0:0 sda sda1 sda2 sda10 1:0:0:0 sdb";
	static const char virtio_first[] =
		"0000:00:03.0 virtio2 2:0:2:0 sdc 2:0:10:0 sdd 10:0:0:0 sde "
		"0000:00:04.0 nvme0n2 nvme0n10 0000:00:10.0 3:0:0:0 "
		"0000:00:1f.2 0:0:0:0 sda sda1 sda2 sda10 1:0:0:0 sdb";
	/* the root on the virtio-scsi HBA's second disk (2:0:10:0, rebased on host2) */
	static const char sdd_first[] =
		"0000:00:03.0 virtio2 2:0:10:0 sdd 2:0:2:0 sdc 10:0:0:0 sde "
		"0000:00:04.0 nvme0n2 nvme0n10 0000:00:10.0 3:0:0:0 "
		"0000:00:1f.2 0:0:0:0 sda sda1 sda2 sda10 1:0:0:0 sdb";
	static const struct {
		const char *cmdline, *option, *mode, *chaos, *expected, *what;
	} runs[] = {
		{ "asyncprobe.root_path=pci-0000:00:03.0-scsi-0:0:10:0", NULL, "--no-fastboot", NULL,
		  sdd_first, "the root on a controller's second disk: its chain first, sequential" },
		{ "asyncprobe.root_path=pci-0000:00:03.0-scsi-0:0:10:0", NULL, "--fastboot", NULL,
		  sdd_first, "the root on a controller's second disk: its chain first, fastboot" },
		{ "asyncprobe.root_path=pci-0000:00:03.0-scsi-0:0:10:0", NULL, "--fastboot", "31337",
		  sdd_first, "the root on a controller's second disk: its chain first, fastboot, chaos" },
		{ "asyncprobe.root_path=pci-0000:00:03.0-scsi-0:0:1:0", NULL, "--fastboot", "4711",
		  virtio_first, "a stale path on the right controller (no device 0:0:1:0): order unchanged" },
		{ "asyncprobe.root_path=pci-0000:00:03.0-scsi-0:0:1", NULL, "--no-fastboot", NULL,
		  virtio_first, "a name that only begins like the root's device's (0:0:1 vs 0:0:10:0) matches nothing" },
		{ "asyncprobe.root_path=pci-0000:00:1f.2-ata-1-part1", NULL, "--no-fastboot", NULL,
		  ahci_first, "asyncprobe.root_path= naming the AHCI disk, sequential" },
		{ "asyncprobe.root_path=pci-0000:00:1f.2-ata-1-part1", NULL, "--fastboot", "4711",
		  ahci_first, "asyncprobe.root_path= naming the AHCI disk, fastboot, chaos" },
		{ "quiet", "--root-path=/dev/disk/by-path/pci-0000:00:1f.2-ata-2", "--fastboot", NULL,
		  ahci_first, "--root-path=/dev/disk/by-path/..., fastboot" },
		{ "asyncprobe.root-path=pci-0000:00:04.0-nvme-10-part1", NULL, "--no-fastboot",
		  "99", nvme_first, "asyncprobe.root-path= naming an NVMe namespace, sequential, chaos" },
		{ "asyncprobe.root_path=pci-0000:00:0e.0-ata-1-part1", NULL, "--fastboot", NULL,
		  virtio_first, "a stale root path (no controller at 0000:00:0e.0): order unchanged" },
		{ "asyncprobe.root_path=none", "--root-path=pci-0000:00:1f.2-ata-1", "--fastboot", NULL,
		  virtio_first, "asyncprobe.root_path=none wins over --root-path" },
	};
	char dir[] = "/tmp/ap-rootfirst.XXXXXX", json[300], cl[300];
	size_t i;

	if (!mkdtemp(dir)) {
		ok(false, "mkdtemp: %s", strerror(errno));
		return;
	}
	snprintf(json, sizeof(json), "%s/m.json", dir);
	snprintf(cl, sizeof(cl), "%s/cmdline", dir);
	for (i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		FILE *f = fopen(cl, "we");
		char *m;
		int st;

		if (!f) {
			ok(false, "%s: cannot write %s", runs[i].what, cl);
			continue;
		}
		fprintf(f, "%s\n", runs[i].cmdline);
		fclose(f);
		st = run_asyncprobe_ex(json, runs[i].mode, runs[i].chaos, cl, runs[i].option);
		m = stable_manifest(json);
		ok((st == AP_EXIT_OK || st == AP_EXIT_DEGRADED) && m &&
		   strcmp(cookie_order(m), runs[i].expected) == 0, "%s: \"%s\" (status %d)",
		   runs[i].what, m ? cookie_order(m) : "?", st);
		if (m && strcmp(cookie_order(m), runs[i].expected) != 0)
			printf("# the manifest:\n# %s\n", m);
		free(m);
		unlink(json);
	}
	unlink(cl);
	rmdir(dir);
}

/*
 * A SCSI disk whose block device appears only while asyncprobe waits for it
 * (sd_mod probes asynchronously): the uevent must wake the wait, and the
 * disk must be the SCSI device's child, not a hotplug.  The device timeout
 * is 60 s; not being done after 20 s means the event was not seen.
 */
static const char late_tree[] =
	"P: /devices/pci0000:00/0000:00:07.0\n"
	"E: SUBSYSTEM=pci\n"
	"A: class=0x010601\n"
	"L: driver=../../../bus/pci/drivers/ahci\n"
	"\n"
	"P: /devices/pci0000:00/0000:00:07.0/ata5\n"
	"E: SUBSYSTEM=ata_port_dummy\n"
	"\n"
	"P: /devices/pci0000:00/0000:00:07.0/ata5/host5\n"
	"E: DEVTYPE=scsi_host\n"
	"E: SUBSYSTEM=scsi\n"
	"\n"
	"P: /devices/pci0000:00/0000:00:07.0/ata5/host5/target5:0:0\n"
	"E: DEVTYPE=scsi_target\n"
	"E: SUBSYSTEM=scsi\n"
	"\n"
	"P: /devices/pci0000:00/0000:00:07.0/ata5/host5/target5:0:0/5:0:0:0\n"
	"E: DEVTYPE=scsi_device\n"
	"E: SUBSYSTEM=scsi\n"
	"A: type=0\n"
	"L: driver=../../../../../../../bus/scsi/drivers/sd\n";

static const char late_disk[] =
	"P: /devices/pci0000:00/0000:00:07.0/ata5/host5/target5:0:0/5:0:0:0/block/sdz\n"
	"N: sdz\n"
	"E: DEVNAME=/dev/sdz\n"
	"E: DEVTYPE=disk\n"
	"E: SUBSYSTEM=block\n"
	"A: size=2048\n";

/* An unowned disk that appears during the run: scheduled as a hotplug. */
static const char hot_disk[] =
	"P: /devices/virtual/block/loop7\n"
	"N: loop7\n"
	"E: DEVNAME=/dev/loop7\n"
	"E: DEVTYPE=disk\n"
	"E: SUBSYSTEM=block\n"
	"A: size=2048\n";

/*
 * Wait until @path holds @what (the child's -v log), up to @ms; false when
 * it never did.  The child writes to a file, so it never blocks on us.
 */
static bool log_has(const char *path, const char *what, unsigned int ms)
{
	for (unsigned int waited = 0; waited <= ms; waited += 10) {
		FILE *f = fopen(path, "re");
		char line[1024];
		bool found = false;

		while (f && !found && fgets(line, sizeof(line), f))
			found = strstr(line, what) != NULL;
		if (f)
			fclose(f);
		if (found)
			return true;
		usleep(10 * 1000);
	}
	return false;
}

/* @path's lines as TAP comments (a log that lacks what a test waited for). */
static void print_log(const char *path)
{
	FILE *f = fopen(path, "re");
	char line[1024];

	while (f && fgets(line, sizeof(line), f))
		printf("# %s%s", line, strchr(line, '\n') ? "" : "\n");
	if (f)
		fclose(f);
}

static void test_late_disk(void)
{
	const char *top = getenv("top_builddir");
	char dir[] = "/tmp/ap-late.XXXXXX", json[300], prog[4096], jarg[400], log[300];
	UMockdevTestbed *tb;
	GError *error = NULL;
	pid_t pid;
	int status = -1, i;
	char *m;

	tb = umockdev_testbed_new();
	if (!umockdev_testbed_add_from_string(tb, late_tree, &error) || !mkdtemp(dir)) {
		ok(false, "late-disk tree: %s", error ? error->message : strerror(errno));
		g_object_unref(tb);
		return;
	}
	snprintf(json, sizeof(json), "%s/late.json", dir);
	snprintf(jarg, sizeof(jarg), "--json=%s", json);
	snprintf(log, sizeof(log), "%s/late.log", dir);
	snprintf(prog, sizeof(prog), "%s/src/asyncprobe/asyncprobe", top ? top : ".");
	pid = fork();
	if (pid == 0) {
		/* no "e": the file is the exec'd program's stderr */
		if (!freopen(log, "w", stderr))
			_exit(126);
		setenv("ASYNCPROBE_CMDLINE", "/dev/null", 1);
		execl(prog, prog, "--no-modules", "--no-links", "-v", "--log-target=stderr", "--no-progress",
		      "--include-loop=loop7", "--device-timeout=60", "--fastboot", jarg, (char *)NULL);
		_exit(127);
	}
	/*
	 * Wait for the event, not a fixed time: discovery is over and the
	 * controller has handed 5:0:0:0 its children to look for, so the SCSI
	 * device is waiting for its disk (up to 60 s) and coldplug is not
	 * complete.  Generous bound: 30 s.
	 */
	ok(log_has(log, "controller 0000:00:07.0", 30000),
	   "asyncprobe reached the controller of the late disk (its -v log)");
	if (!umockdev_testbed_add_from_string(tb, hot_disk, &error))
		ok(false, "adding the hotplug disk: %s", error ? error->message : "?");
	umockdev_testbed_uevent(tb, "/sys/devices/virtual/block/loop7", "add");
	usleep(100 * 1000);
	if (!umockdev_testbed_add_from_string(tb, late_disk, &error))
		ok(false, "adding the disk: %s", error ? error->message : "?");
	umockdev_testbed_uevent(tb, "/sys/devices/pci0000:00/0000:00:07.0/ata5/host5/target5:0:0/5:0:0:0/block/sdz", "add");
	/* it waits up to 60 s: well before that, it woke up on the uevent */
	for (i = 0; i < 400; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
		usleep(100 * 1000);
	}
	if (i == 400) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		ok(false, "asyncprobe woke up on the uevent (still waiting after 40 s)");
	} else {
		ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		   "asyncprobe woke up on the uevent and succeeded (status %d)",
		   WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	}
	m = stable_manifest(json);
	ok(m && strstr(m, "\"kind\":\"disk\",\"name\":\"sdz\"") &&
	   strstr(m, "/block/sdz\",\"fs\":{},\"hotplug\":false") &&
	   strstr(m, "\"kind\":\"scsi\",\"name\":\"5:0:0:0\""),
	   "the late disk is the SCSI device's child, not a hotplug");
	ok(m && strstr(m, "\"name\":\"loop7\",\"syspath\":\"/sys/devices/virtual/block/loop7\","
			   "\"fs\":{},\"hotplug\":true"),
	   "a disk that appeared during the run, owned by nobody, is scheduled as a hotplug");
	if (m && (!strstr(m, "\"name\":\"sdz\"") || !strstr(m, "\"hotplug\":true")))
		printf("# %s\n", m);
	free(m);
	unlink(json);
	unlink(log);
	rmdir(dir);
	g_object_unref(tb);
}


/*
 * Probing does not wait for publication: an earlier controller's SCSI
 * device waits for its disk (sdz, added once the program's -v log shows
 * that sdy was probed), while a later controller's disk (sdy) is there at
 * once.  With --fastboot sdy must be probed before sdz appears, yet
 * published after it: the cookie is the place in publication order,
 * controller 00:07.0 with its whole subtree before controller 00:08.0.
 */
static const char second_ctrl[] =
	"P: /devices/pci0000:00/0000:00:08.0\n"
	"E: SUBSYSTEM=pci\n"
	"A: class=0x010601\n"
	"L: driver=../../../bus/pci/drivers/ahci\n"
	"\n"
	"P: /devices/pci0000:00/0000:00:08.0/ata6\n"
	"E: SUBSYSTEM=ata_port_dummy\n"
	"\n"
	"P: /devices/pci0000:00/0000:00:08.0/ata6/host6\n"
	"E: DEVTYPE=scsi_host\n"
	"E: SUBSYSTEM=scsi\n"
	"\n"
	"P: /devices/pci0000:00/0000:00:08.0/ata6/host6/target6:0:0\n"
	"E: DEVTYPE=scsi_target\n"
	"E: SUBSYSTEM=scsi\n"
	"\n"
	"P: /devices/pci0000:00/0000:00:08.0/ata6/host6/target6:0:0/6:0:0:0\n"
	"E: DEVTYPE=scsi_device\n"
	"E: SUBSYSTEM=scsi\n"
	"A: type=0\n"
	"L: driver=../../../../../../../bus/scsi/drivers/sd\n"
	"\n"
	"P: /devices/pci0000:00/0000:00:08.0/ata6/host6/target6:0:0/6:0:0:0/block/sdy\n"
	"N: sdy\n"
	"E: DEVNAME=/dev/sdy\n"
	"E: DEVTYPE=disk\n"
	"E: SUBSYSTEM=block\n"
	"A: size=2048\n";

/* The manifest line of the device named @name: its cookie and start time (or -1). */
static bool manifest_entry(const char *m, const char *name, unsigned long long *cookie,
			   double *start_ms)
{
	char key[128];
	const char *hit, *line, *c, *t;

	snprintf(key, sizeof(key), "\"name\":\"%s\"", name);
	hit = m ? strstr(m, key) : NULL;
	if (!hit)
		return false;
	for (line = hit; line > m && line[-1] != '\n'; line--)
		;
	c = strstr(line, "{\"cookie\":");
	t = strstr(hit, "\"start_ms\":");
	if (!c || c > hit)
		return false;
	*cookie = strtoull(c + 10, NULL, 10);
	/* -1: no start time (taken out, or the call never started) */
	*start_ms = t && (!strchr(hit, '\n') || t < strchr(hit, '\n')) ? strtod(t + 11, NULL) : -1;
	return true;
}

static void test_probe_before_turn(void)
{
	const char *top = getenv("top_builddir");
	char dir[] = "/tmp/ap-turn.XXXXXX", json[300], prog[4096], jarg[400], log[300];
	unsigned long long cz = 0, cy = 0, c7 = 0, c8 = 0, cs5 = 0, cs6 = 0;
	double tz = 0, ty = 0, t;
	UMockdevTestbed *tb;
	GError *error = NULL;
	FILE *f;
	char *m = NULL;
	size_t len = 0;
	pid_t pid;
	int status = -1, i;

	tb = umockdev_testbed_new();
	if (!umockdev_testbed_add_from_string(tb, late_tree, &error) ||
	    !umockdev_testbed_add_from_string(tb, second_ctrl, &error) || !mkdtemp(dir)) {
		ok(false, "two-controller tree: %s", error ? error->message : strerror(errno));
		g_object_unref(tb);
		return;
	}
	snprintf(json, sizeof(json), "%s/turn.json", dir);
	snprintf(jarg, sizeof(jarg), "--json=%s", json);
	snprintf(log, sizeof(log), "%s/turn.log", dir);
	snprintf(prog, sizeof(prog), "%s/src/asyncprobe/asyncprobe", top ? top : ".");
	pid = fork();
	if (pid == 0) {
		/* no "e": the file is the exec'd program's stderr */
		if (!freopen(log, "w", stderr))
			_exit(126);
		setenv("ASYNCPROBE_CMDLINE", "/dev/null", 1);
		execl(prog, prog, "--no-modules", "--no-links", "-v", "--log-target=stderr",
		      "--no-progress", "--device-timeout=30", "--fastboot", jarg, (char *)NULL);
		_exit(127);
	}
	/*
	 * The event, not a time: sdy has been probed (its -v line), while
	 * 5:0:0:0 waits up to 30 s for sdz.  Generous bound: 20 s.
	 */
	if (!log_has(log, "disk sdy:", 20000)) {
		ok(false, "the later controller's disk sdy was probed while the earlier one's SCSI "
		   "device waits (its -v line)");
		print_log(log);
	} else {
		ok(true, "the later controller's disk sdy was probed while the earlier one's SCSI "
		   "device waits (its -v line)");
	}
	if (!umockdev_testbed_add_from_string(tb, late_disk, &error))
		ok(false, "adding the disk: %s", error ? error->message : "?");
	umockdev_testbed_uevent(tb, "/sys/devices/pci0000:00/0000:00:07.0/ata5/host5/target5:0:0/5:0:0:0/block/sdz", "add");
	for (i = 0; i < 200; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
		usleep(100 * 1000);
	}
	if (i == 200) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	ok(WIFEXITED(status) && (WEXITSTATUS(status) == AP_EXIT_OK ||
				 WEXITSTATUS(status) == AP_EXIT_DEGRADED),
	   "two controllers, the first one's disk late: asyncprobe ran (status %d)",
	   WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	f = fopen(json, "re");
	if (f) {
		if (getdelim(&m, &len, '\0', f) < 0) {
			free(m);
			m = NULL;
		}
		fclose(f);
	}
	ok(manifest_entry(m, "sdz", &cz, &tz) && manifest_entry(m, "sdy", &cy, &ty) &&
	   manifest_entry(m, "0000:00:07.0", &c7, &t) && manifest_entry(m, "0000:00:08.0", &c8, &t) &&
	   manifest_entry(m, "5:0:0:0", &cs5, &t) && manifest_entry(m, "6:0:0:0", &cs6, &t),
	   "the manifest lists both controllers, SCSI devices and disks");
	ok(ty > 0 && ty < tz,
	   "the later controller's disk was probed at %.0f ms, before the earlier one's "
	   "disk was (%.0f ms)", ty, tz);
	ok(c7 == 2 && cs5 == 3 && cz == 4 && c8 == 5 && cs6 == 6 && cy == 7,
	   "yet published depth first: 00:07.0 5:0:0:0 sdz 00:08.0 6:0:0:0 sdy = cookies "
	   "%llu %llu %llu %llu %llu %llu", c7, cs5, cz, c8, cs6, cy);
	if (m && !(ty > 0 && ty < tz && cz < cy))
		printf("# %s\n", m);
	if (!m || !(ty > 0 && ty < tz && cz < cy) || !log_has(log, "disk sdy:", 0))
		print_log(log);
	free(m);
	unlink(json);
	unlink(log);
	rmdir(dir);
	g_object_unref(tb);
}

/*
 * An NVMe multipath head behind two controllers belongs to the first in
 * devpath order that has a path to it (ap_owner_path(), from sysfs),
 * however the calls are timed.  Both controllers are "connecting" at the
 * start; the second one goes live first, so its call enumerates first; the
 * first one goes live only once the second has enumerated.  Each step waits
 * for the event before it (the program's -v log), not for a time.  Run
 * twice: the head and its paths appear while both controllers wait, and
 * they are there before the program starts (a program that starts late),
 * when the discovery call itself finds the head.
 */
static const char mp_tree[] =
	"P: /devices/pci0000:00/0000:00:05.0\n"
	"E: SUBSYSTEM=pci\n"
	"A: class=0x010802\n"
	"L: driver=../../../bus/pci/drivers/nvme\n"
	"\n"
	"P: /devices/pci0000:00/0000:00:05.0/nvme/nvme1\n"
	"E: SUBSYSTEM=nvme\n"
	"A: state=connecting\n"
	"\n"
	"P: /devices/pci0000:00/0000:00:06.0\n"
	"E: SUBSYSTEM=pci\n"
	"A: class=0x010802\n"
	"L: driver=../../../bus/pci/drivers/nvme\n"
	"\n"
	"P: /devices/pci0000:00/0000:00:06.0/nvme/nvme2\n"
	"E: SUBSYSTEM=nvme\n"
	"A: state=connecting\n";

static const char mp_late[] =
	"P: /devices/virtual/nvme-subsystem/nvme-subsys1\n"
	"E: SUBSYSTEM=nvme-subsystem\n"
	"\n"
	"P: /devices/virtual/nvme-subsystem/nvme-subsys1/nvme1n1\n"
	"N: nvme1n1\n"
	"E: DEVNAME=/dev/nvme1n1\n"
	"E: DEVTYPE=disk\n"
	"E: SUBSYSTEM=block\n"
	"A: size=2048\n"
	"A: multipath/nvme1c1n1=\n"
	"A: multipath/nvme2c2n1=\n"
	"\n"
	"P: /devices/pci0000:00/0000:00:05.0/nvme/nvme1/nvme1c1n1\n"
	"E: DEVTYPE=disk\n"
	"E: SUBSYSTEM=block\n"
	"A: hidden=1\n"
	"A: size=2048\n"
	"\n"
	"P: /devices/pci0000:00/0000:00:06.0/nvme/nvme2/nvme2c2n1\n"
	"E: DEVTYPE=disk\n"
	"E: SUBSYSTEM=block\n"
	"A: hidden=1\n"
	"A: size=2048\n";

static void run_multipath(bool head_first, const char *what)
{
	static const char ctrl1[] = "/sys/devices/pci0000:00/0000:00:05.0/nvme/nvme1";
	static const char ctrl2[] = "/sys/devices/pci0000:00/0000:00:06.0/nvme/nvme2";
	const char *top = getenv("top_builddir");
	char dir[] = "/tmp/ap-mp.XXXXXX", json[300], prog[4096], jarg[400], log[300], *m;
	unsigned long long c5 = 0, c6 = 0, ch = 0;
	UMockdevTestbed *tb;
	GError *error = NULL;
	const char *head, *mp_line = "    {\"cookie\":3,\"parent\":2,";
	double t;
	pid_t pid;
	int status = -1, i;

	tb = umockdev_testbed_new();
	if (!umockdev_testbed_add_from_string(tb, mp_tree, &error) ||
	    (head_first && !umockdev_testbed_add_from_string(tb, mp_late, &error)) || !mkdtemp(dir)) {
		ok(false, "multipath tree: %s", error ? error->message : strerror(errno));
		g_object_unref(tb);
		return;
	}
	snprintf(json, sizeof(json), "%s/mp.json", dir);
	snprintf(jarg, sizeof(jarg), "--json=%s", json);
	snprintf(log, sizeof(log), "%s/mp.log", dir);
	snprintf(prog, sizeof(prog), "%s/src/asyncprobe/asyncprobe", top ? top : ".");
	pid = fork();
	if (pid == 0) {
		/* no "e": the file is the exec'd program's stderr */
		if (!freopen(log, "w", stderr))
			_exit(126);
		setenv("ASYNCPROBE_CMDLINE", "/dev/null", 1);
		execl(prog, prog, "--no-modules", "--no-links", "-v", "--log-target=stderr",
		      "--no-progress", "--device-timeout=30", "--fastboot", jarg, (char *)NULL);
		_exit(127);
	}
	/* discovery is over: both controllers' calls wait for their namespaces (up to 30 s) */
	ok(log_has(log, "discovery: ", 20000), "%s: discovery done (its -v log)", what);
	if (!head_first && !umockdev_testbed_add_from_string(tb, mp_late, &error))
		ok(false, "adding the head: %s", error ? error->message : "?");
	umockdev_testbed_set_attribute(tb, ctrl2, "state", "live");
	umockdev_testbed_uevent(tb, "/sys/devices/pci0000:00/0000:00:06.0/nvme/nvme2/nvme2c2n1",
				"add");
	/* the second controller enumerates first */
	ok(log_has(log, "controller 0000:00:06.0", 20000),
	   "%s: the second controller went live and enumerated first", what);
	umockdev_testbed_set_attribute(tb, ctrl1, "state", "live");
	umockdev_testbed_uevent(tb, "/sys/devices/pci0000:00/0000:00:05.0/nvme/nvme1/nvme1c1n1",
				"add");
	for (i = 0; i < 400; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
		usleep(100 * 1000);
	}
	if (i == 400) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	m = stable_manifest(json);
	ok(WIFEXITED(status) && manifest_entry(m, "0000:00:05.0", &c5, &t) &&
	   manifest_entry(m, "0000:00:06.0", &c6, &t) && manifest_entry(m, "nvme1n1", &ch, &t),
	   "%s: ran (status %d), both controllers and the head listed", what,
	   WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	head = m ? strstr(m, "\"name\":\"nvme1n1\"") : NULL;
	while (head && head > m && head[-1] != '\n')
		head--;
	ok(c5 == 2 && ch == 3 && c6 == 4 && head && strncmp(head, mp_line, strlen(mp_line)) == 0,
	   "%s: the head goes with the first controller in devpath order, which enumerated "
	   "last: cookies 00:05.0 %llu, nvme1n1 %llu, 00:06.0 %llu", what, c5, ch, c6);
	if (m && !(c5 == 2 && ch == 3 && c6 == 4 && head &&
		   strncmp(head, mp_line, strlen(mp_line)) == 0)) {
		printf("# %s\n", m);
		print_log(log);
	}
	free(m);
	unlink(json);
	unlink(log);
	rmdir(dir);
	g_object_unref(tb);
}

static void test_multipath_owner(void)
{
	run_multipath(false, "an NVMe multipath head appearing while both controllers wait");
	run_multipath(true, "an NVMe multipath head there before the program starts");
}

/*
 * --all-modules (ap_classify()'s all_modules, the discovery call's
 * enumerate_system()): every device with a MODALIAS becomes a controller,
 * as udev's coldplug loads a driver for every one; without it only
 * storage controllers do.  A tree of its own: an AHCI controller, a
 * network card, a USB host controller with its root hub, a keyboard's HID
 * interface and a mass storage interface, a serial port, a keyboard
 * controller's serio port, an input device, and a platform device with no
 * MODALIAS.
 */
static const char am_tree[] =
	"P: /devices/pci0000:00/0000:00:02.0\n"
	"E: SUBSYSTEM=pci\n"
	"E: MODALIAS=pci:v00008086d0000100Esv00008086sd0000001Ebc02sc00i00\n"
	"A: class=0x020000\n"
	"\n"
	"P: /devices/pci0000:00/0000:00:14.0\n"
	"E: SUBSYSTEM=pci\n"
	"E: MODALIAS=pci:v00008086d00007AE0sv00001043sd00008694bc0Csc03i30\n"
	"A: class=0x0c0330\n"
	"\n"
	"P: /devices/pci0000:00/0000:00:14.0/usb1\n"
	"E: SUBSYSTEM=usb\n"
	"E: DEVTYPE=usb_device\n"
	"E: MODALIAS=usb:v1D6Bp0002d0601dc09dsc00dp01ic09isc00ip00in00\n"
	"\n"
	"P: /devices/pci0000:00/0000:00:14.0/usb1/1-1\n"
	"E: SUBSYSTEM=usb\n"
	"E: DEVTYPE=usb_device\n"
	"\n"
	"P: /devices/pci0000:00/0000:00:14.0/usb1/1-1/1-1:1.0\n"
	"E: SUBSYSTEM=usb\n"
	"E: DEVTYPE=usb_interface\n"
	"E: MODALIAS=usb:v046DpC31Cd6400dc00dsc00dp00ic03isc01ip01in00\n"
	"A: bInterfaceClass=03\n"
	"\n"
	"P: /devices/pci0000:00/0000:00:14.0/usb1/1-2\n"
	"E: SUBSYSTEM=usb\n"
	"E: DEVTYPE=usb_device\n"
	"\n"
	"P: /devices/pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.0\n"
	"E: SUBSYSTEM=usb\n"
	"E: DEVTYPE=usb_interface\n"
	"E: MODALIAS=usb:v0781p5567d0100dc00dsc00dp00ic08isc06ip50in00\n"
	"A: bInterfaceClass=08\n"
	"\n"
	"P: /devices/pci0000:00/0000:00:1f.2\n"
	"E: SUBSYSTEM=pci\n"
	"E: MODALIAS=pci:v00008086d00002922sv00001AF4sd00001100bc01sc06i01\n"
	"A: class=0x010601\n"
	"\n"
	"P: /devices/platform/serial8250\n"
	"E: SUBSYSTEM=platform\n"
	"E: MODALIAS=platform:serial8250\n"
	"\n"
	"P: /devices/platform/i8042\n"
	"E: SUBSYSTEM=platform\n"
	"\n"
	"P: /devices/platform/i8042/serio0\n"
	"E: SUBSYSTEM=serio\n"
	"E: MODALIAS=serio:ty06pr00id00ex00\n"
	"\n"
	"P: /devices/virtual/input/input3\n"
	"E: SUBSYSTEM=input\n"
	"E: MODALIAS=input:b0019v0000p0001e0000-e0,1,k74,ramlsfw\n";

/* every device of am_tree with a MODALIAS, in devpath order */
static const char am_all[] =
	"0000:00:02.0 0000:00:14.0 usb1 1-1:1.0 1-2:1.0 0000:00:1f.2 serio0 serial8250 input3";
/* only the storage controllers: the AHCI controller and the mass storage interface */
static const char am_storage[] = "1-2:1.0 0000:00:1f.2";

/* "name" of every controller in manifest @m, in its order */
static char *controller_names(const char *m)
{
	static char buf[4096];
	const char *p = m ? strstr(m, "\"controllers\": [") : NULL;
	const char *end = p ? strstr(p, "\n  ]") : NULL;

	buf[0] = '\0';
	while (p && end && (p = strstr(p, "\"name\":\"")) && p < end) {
		const char *q = strchr(p + 8, '"');

		if (!q)
			break;
		strncat(buf, buf[0] ? " " : "", sizeof(buf) - strlen(buf) - 1);
		strncat(buf, p + 8, (size_t)(q - p - 8));
		p = q;
	}
	return buf;
}

static void test_all_modules(void)
{
	const char *top = getenv("top_builddir");
	char dir[] = "/tmp/ap-allmod.XXXXXX", json[300], prog[4096], jarg[400];
	UMockdevTestbed *tb;
	GError *error = NULL;
	struct udev *udev;
	int pass;

	tb = umockdev_testbed_new();
	if (!umockdev_testbed_add_from_string(tb, am_tree, &error) || !mkdtemp(dir)) {
		ok(false, "all-modules tree: %s", error ? error->message : strerror(errno));
		g_object_unref(tb);
		return;
	}
	udev = udev_new();
	expect_enum_ex(udev, NULL, true, NULL, am_all);
	expect_enum_ex(udev, NULL, false, NULL, am_storage);
	/* below a controller, with all_modules: what it owns, no further */
	expect_enum_ex(udev, "/devices/pci0000:00/0000:00:14.0", true, NULL, "usb1");
	expect_enum_ex(udev, "/devices/pci0000:00/0000:00:14.0/usb1", true, NULL, "1-1:1.0 1-2:1.0");
	expect_enum_ex(udev, "/devices/pci0000:00/0000:00:14.0", false, NULL, "");
	{
		struct udev_device *d = udev_device_new_from_syspath(udev,
								     "/sys/devices/platform/i8042");

		ok(d && ap_classify(d, true, NULL) == AP_KIND_NONE,
		   "a device without a MODALIAS is no controller, even with all_modules");
		if (d)
			udev_device_unref(d);
	}
	udev_unref(udev);

	/*
	 * The program: --all-modules --dry-run lists every one of them as a
	 * controller in its manifest, with its modalias; --dry-run alone the
	 * storage controllers.  No links, no probing of anything else.
	 */
	snprintf(json, sizeof(json), "%s/am.json", dir);
	snprintf(jarg, sizeof(jarg), "--json=%s", json);
	snprintf(prog, sizeof(prog), "%s/src/asyncprobe/asyncprobe", top ? top : ".");
	for (pass = 0; pass < 2; pass++) {
		bool all = pass == 0;
		const char *want = all ? am_all : am_storage;
		pid_t pid = fork();
		int status = -1, nomod = 0;
		char *m, *got;
		const char *p;

		if (pid == 0) {
			setenv("ASYNCPROBE_CMDLINE", "/dev/null", 1);
			unsetenv("ASYNC_CHAOS");
			execl(prog, prog, "--dry-run", "--no-links", "-q", "--no-progress",
			      "--device-timeout=5", "--fastboot", jarg, all ? "--all-modules" : NULL,
			      (char *)NULL);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &status, 0) < 0)
			status = -1;
		m = stable_manifest(json);
		got = controller_names(m);
		ok(WIFEXITED(status) && (WEXITSTATUS(status) == AP_EXIT_OK ||
					 WEXITSTATUS(status) == AP_EXIT_DEGRADED) &&
		   m && strcmp(got, want) == 0,
		   "asyncprobe --dry-run%s: controllers \"%s\", expected \"%s\" (status %d)",
		   all ? " --all-modules" : "", got, want,
		   WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		for (p = m ? strstr(m, "\"controllers\": [") : NULL; p && (p = strstr(p, "\"modalias\":"));
		     p++)
			nomod += strncmp(p, "\"modalias\":null", 15) == 0;
		ok(m && nomod == 0, "asyncprobe --dry-run%s: every controller has its modalias",
		   all ? " --all-modules" : "");
		if (m && (strcmp(got, want) != 0 || nomod))
			printf("# %s\n", m);
		free(m);
		unlink(json);
	}
	rmdir(dir);
	g_object_unref(tb);
}

int main(int argc, char **argv)
{
	UMockdevTestbed *tb;
	GError *error = NULL;
	struct udev *udev;
	const char *srcdir = getenv("top_srcdir");
	char path[4096];

#if defined(__SANITIZE_THREAD__)
	/*
	 * umockdev's preload and GLib are not instrumented and trip
	 * ThreadSanitizer on their own; the threaded engine is covered under
	 * TSan by the loop-device test.  The pure ordering tests still run.
	 */
	test_compare();
	printf("ok %d - # SKIP umockdev tree under ThreadSanitizer (GLib is not instrumented)\n",
	       ++test_no);
	printf("1..%d\n", test_no);
	return failures ? 1 : 0;
#endif
	reexec_with_preload(argv);
	if (!getenv("LD_PRELOAD") || !strstr(getenv("LD_PRELOAD"), "umockdev-preload")) {
		printf("Bail out! libumockdev-preload.so.0 is not preloaded after the re-execution\n");
		return 1;
	}
	ap_log_open(AP_LOG_STDERR, -1);

	tb = umockdev_testbed_new();
	snprintf(path, sizeof(path), "%s/tests/asyncprobe/topology.umockdev", srcdir ? srcdir : ".");
	if (!umockdev_testbed_add_from_file(tb, path, &error)) {
		printf("Bail out! cannot load %s: %s\n", path, error ? error->message : "?");
		return 1;
	}
	udev = udev_new();

	test_compare();
	expect_enum(udev, NULL, NULL, NULL,
		    "0000:00:03.0 virtio2 0000:00:04.0 0000:00:10.0 0000:00:1f.2");
	expect_enum(udev, NULL, NULL, "",
		    "0000:00:03.0 virtio2 0000:00:04.0 0000:00:10.0 0000:00:1f.2 loop0");
	/* --include-loop=NAMES: the named loop devices only */
	expect_enum(udev, NULL, NULL, "loop0",
		    "0000:00:03.0 virtio2 0000:00:04.0 0000:00:10.0 0000:00:1f.2 loop0");
	expect_enum(udev, NULL, NULL, "loop7,loop0",
		    "0000:00:03.0 virtio2 0000:00:04.0 0000:00:10.0 0000:00:1f.2 loop0");
	expect_enum(udev, NULL, NULL, "loop1,loop00,loop",
		    "0000:00:03.0 virtio2 0000:00:04.0 0000:00:10.0 0000:00:1f.2");
	expect_enum(udev, NULL, "/devices/pci0000:00/0000:00:1f.2", NULL, "0:0:0:0 1:0:0:0");
	expect_enum(udev, NULL, "/devices/pci0000:00/0000:00:03.0", NULL, "virtio2");
	expect_enum(udev, NULL, "/devices/pci0000:00/0000:00:03.0/virtio2", NULL,
		    "2:0:2:0 2:0:10:0 10:0:0:0");
	expect_enum(udev, NULL, "/devices/pci0000:00/0000:00:04.0", NULL, "nvme0n2 nvme0n10");
	expect_enum(udev, NULL, "/devices/pci0000:00/0000:00:10.0", NULL, "3:0:0:0");
	expect_enum(udev, NULL, "/devices/pci0000:00/0000:00:10.0/host3/target3:0:0/3:0:0:0",
		    NULL, "");
	expect_enum(udev, NULL,
		    "/devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda",
		    NULL, "sda1 sda2 sda10");
	test_loop_list();
	test_waits(udev, tb);
	test_monitor(tb);
	udev_unref(udev);

	test_program();
	test_root_first();
	g_object_unref(tb);

	test_late_disk();
	test_probe_before_turn();
	test_multipath_owner();
	test_all_modules();

	printf("1..%d\n", test_no);
	return failures ? 1 : 0;
}
