/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * plot-demo: a plausible asyncprobe run, simulated, fed through the trace
 * recorder, written as SVG (and Chrome JSON).  For the README picture and
 * for the tests; the real picture comes from the VM demo.
 *
 *   plot-demo [--sequential|--real] [--disks N] [--seed S] [--title T] OUT.svg [OUT.json]
 *
 * The machine: a virtio disk, with --disks N a virtio-scsi host with N
 * disks, an AHCI controller with four SATA disks and an NVMe disk holding
 * the root filesystem.  Concurrently, calls are
 * scheduled in cookie order, run on the lowest free worker, synchronize on
 * their own cookie before scheduling children and creating links, as the
 * engine does.  With --sequential every call runs inline, depth first, as
 * libasync's synchronous fallback does.  With --real the calls are real
 * libasync calls that sleep for their phases (concurrent with libasync's
 * core, sequential with its stub), traced through the real hook.
 */
#include <errno.h>
#include <getopt.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "output/output.h"

struct node {
	char kind[16];
	char label[48];
	const char *work;       /* name of the main work phase */
	uint64_t modprobe, wait, probe, links;  /* ns */
	int parent;
	int first_child, next_sibling;
	/* results */
	async_cookie_t cookie;
	uint64_t sched, start, end;
	unsigned int worker;
};

static struct node *nodes;
static size_t n_nodes, cap_nodes;
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

/* A duration in [lo, hi) microseconds, as ns. */
static uint64_t us(unsigned int lo, unsigned int hi)
{
	return ((uint64_t)lo + (hi > lo ? rnd() % (hi - lo) : 0)) * 1000;
}

static int add(int parent, const char *kind, const char *label, const char *work,
	       uint64_t modprobe, uint64_t wait, uint64_t probe, uint64_t links)
{
	struct node *n;
	int i;

	if (n_nodes == cap_nodes) {
		cap_nodes = cap_nodes ? cap_nodes * 2 : 64;
		nodes = realloc(nodes, cap_nodes * sizeof(*nodes));
		if (!nodes) {
			fprintf(stderr, "plot-demo: out of memory\n");
			exit(1);
		}
	}
	n = &nodes[n_nodes];
	memset(n, 0, sizeof(*n));
	snprintf(n->kind, sizeof(n->kind), "%s", kind);
	snprintf(n->label, sizeof(n->label), "%s", label);
	n->work = work;
	n->modprobe = modprobe;
	n->wait = wait;
	n->probe = probe;
	n->links = links;
	n->parent = parent;
	n->first_child = n->next_sibling = -1;
	if (parent >= 0) {
		/* append, keeping the children in topological order */
		int *p = &nodes[parent].first_child;

		while (*p >= 0)
			p = &nodes[*p].next_sibling;
		*p = (int)n_nodes;
	}
	i = (int)n_nodes++;
	return i;
}

static void disk(int ctrl, const char *name, unsigned int parts, const char *psep,
		 unsigned int probe_lo, unsigned int probe_hi)
{
	char buf[48];
	int d = add(ctrl, "disk", name, "probe", 0, 0, us(probe_lo, probe_hi), us(150, 400));
	unsigned int p;

	for (p = 1; p <= parts; p++) {
		snprintf(buf, sizeof(buf), "%s%s%u", name, psep, p);
		add(d, "partition", buf, "probe", 0, 0, us(300, 1500), us(80, 250));
	}
}

/* sda, ..., sdz, sdaa, ... as the kernel names them */
static void sd_name(char *buf, size_t size, unsigned int i)
{
	char tmp[8];
	int n = 0;

	i++;
	while (i > 0 && n < 7) {
		i--;
		tmp[n++] = (char)('a' + i % 26);
		i /= 26;
	}
	snprintf(buf, size, "sd");
	for (int k = n - 1; k >= 0; k--) {
		size_t l = strlen(buf);

		if (l + 1 < size) {
			buf[l] = tmp[k];
			buf[l + 1] = '\0';
		}
	}
}

static void build_machine(unsigned int extra_disks)
{
	char name[16];
	int root, c;
	unsigned int i;

	root = add(-1, "discover", "udev enumerate + monitor", "enumerate", 0, 0, us(1500, 2500), 0);
	/* controllers in PCI address order, as the engine schedules them */
	c = add(root, "controller", "0000:00:04.0 virtio_blk", NULL, us(2500, 3500), us(1500, 2500), 0, us(50, 100));
	disk(c, "vda", 2, "", 1200, 2000);
	if (extra_disks) {
		c = add(root, "controller", "0000:00:05.0 virtio_scsi", NULL, us(3000, 4000), us(8000, 12000), 0, us(50, 100));
		for (i = 0; i < extra_disks; i++) {
			sd_name(name, sizeof(name), i);
			disk(c, name, 1, "", 1500, 5000);
		}
	}
	c = add(root, "controller", "0000:00:1f.2 ahci", NULL, us(11000, 15000), us(60000, 90000), 0, us(50, 100));
	for (i = 0; i < 4; i++) {
		sd_name(name, sizeof(name), extra_disks + i);
		disk(c, name, i == 0 ? 2 : 1, "", 4000, 14000);
	}
	c = add(root, "controller", "0000:01:00.0 nvme", NULL, us(5000, 7000), us(20000, 30000), 0, us(50, 100));
	disk(c, "nvme0n1", 3, "p", 1500, 2500);
}

/* ------------------------------------------------------------ simulation */

struct sim_ev {
	struct async_trace_event ev;
	size_t seq;
};

static struct sim_ev *evs;
static size_t n_evs, cap_evs;
static uint64_t base;
static ASYNC_DOMAIN(demo_domain);

static void emit(enum async_trace_type type, async_cookie_t cookie, async_cookie_t target,
		 uint64_t t, unsigned int worker, bool inl)
{
	if (n_evs == cap_evs) {
		cap_evs = cap_evs ? cap_evs * 2 : 256;
		evs = realloc(evs, cap_evs * sizeof(*evs));
		if (!evs) {
			fprintf(stderr, "plot-demo: out of memory\n");
			exit(1);
		}
	}
	evs[n_evs] = (struct sim_ev){
		.ev = { .type = type, .cookie = cookie, .target = target, .time_ns = base + t,
			.domain = &demo_domain, .worker = worker, .inline_call = inl },
		.seq = n_evs,
	};
	n_evs++;
}

static void phase(async_cookie_t cookie, const char *name, uint64_t t0, uint64_t t1)
{
	if (t1 > t0)
		ap_trace_phase(cookie, name, base + t0, base + t1);
}

static int cmp_ev(const void *a, const void *b)
{
	const struct sim_ev *x = a, *y = b;

	if (x->ev.time_ns != y->ev.time_ns)
		return x->ev.time_ns < y->ev.time_ns ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static async_cookie_t next_cookie = 1;

/* The work before the sync point; returns the time it is reached. */
static uint64_t work(struct node *n, uint64_t t)
{
	phase(n->cookie, "modprobe", t, t + n->modprobe);
	t += n->modprobe;
	phase(n->cookie, "wait", t, t + n->wait);
	t += n->wait;
	phase(n->cookie, n->work ? n->work : "probe", t, t + n->probe);
	return t + n->probe;
}

static void label(const struct node *n)
{
	ap_trace_label(n->cookie, n->kind, n->label);
}

static uint64_t simulate_concurrent(void)
{
	size_t order_cap = n_nodes, head = 0, tail = 0;
	int *order = calloc(order_cap, sizeof(*order));
	uint64_t busy[256] = { 0 }, done_lower = 0, t;
	unsigned int w;

	if (!order)
		exit(1);
	nodes[0].sched = 300000;
	nodes[0].cookie = next_cookie++;
	emit(ASYNC_TRACE_SCHEDULE, nodes[0].cookie, 0, nodes[0].sched, 0, false);
	order[tail++] = 0;
	emit(ASYNC_TRACE_SYNC_BEGIN, 0, ASYNC_COOKIE_MAX, nodes[0].sched + 20000, 0, false);

	while (head < tail) {
		struct node *n = &nodes[order[head++]];
		uint64_t ready, sync_end;
		int ch;

		label(n);
		n->start = n->sched + us(20, 120);
		for (w = 1; w < 255 && busy[w] > n->start; w++)
			;
		n->worker = w;
		emit(ASYNC_TRACE_START, n->cookie, 0, n->start, w, false);
		ready = work(n, n->start + us(5, 20));
		/* in-order: wait for every lower cookie */
		sync_end = ready > done_lower ? ready : done_lower;
		emit(ASYNC_TRACE_SYNC_BEGIN, n->cookie, n->cookie, ready, w, false);
		emit(ASYNC_TRACE_SYNC_END, n->cookie, n->cookie, sync_end, w, false);
		t = sync_end + us(3, 8);
		for (ch = n->first_child; ch >= 0; ch = nodes[ch].next_sibling) {
			nodes[ch].cookie = next_cookie++;
			nodes[ch].sched = t;
			emit(ASYNC_TRACE_SCHEDULE, nodes[ch].cookie, 0, t, w, false);
			order[tail++] = ch;
			t += us(2, 6);
		}
		phase(n->cookie, "links", t, t + n->links);
		n->end = t + n->links + us(2, 5);
		emit(ASYNC_TRACE_END, n->cookie, 0, n->end, w, false);
		busy[w] = n->end;
		if (n->end > done_lower)
			done_lower = n->end;
	}
	emit(ASYNC_TRACE_SYNC_END, 0, ASYNC_COOKIE_MAX, done_lower + us(10, 30), 0, false);
	free(order);
	return done_lower;
}

static uint64_t run_inline(struct node *n, uint64_t t)
{
	int ch;

	n->cookie = next_cookie++;
	n->sched = t;
	label(n);
	emit(ASYNC_TRACE_SCHEDULE, n->cookie, 0, t, 0, true);
	n->start = t + us(1, 3);
	emit(ASYNC_TRACE_START, n->cookie, 0, n->start, 0, true);
	t = work(n, n->start + us(5, 20));
	for (ch = n->first_child; ch >= 0; ch = nodes[ch].next_sibling)
		t = run_inline(&nodes[ch], t + us(2, 6));
	phase(n->cookie, "links", t, t + n->links);
	n->end = t + n->links + us(2, 5);
	emit(ASYNC_TRACE_END, n->cookie, 0, n->end, 0, true);
	return n->end;
}

/* ------------------------------------------------------------ real calls */

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000), .tv_nsec = (long)(ns % 1000000000) };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void real_phase(async_cookie_t cookie, const char *name, uint64_t ns)
{
	uint64_t t0 = ap_now_ns();

	if (!ns)
		return;
	sleep_ns(ns);
	ap_trace_phase(cookie, name, t0, ap_now_ns());
}

static void real_call(void *data, async_cookie_t cookie)
{
	struct node *n = data;
	int ch;

	n->cookie = cookie;
	label(n);
	n->start = ap_now_ns();
	real_phase(cookie, "modprobe", n->modprobe);
	real_phase(cookie, "wait", n->wait);
	real_phase(cookie, n->work ? n->work : "probe", n->probe);
	/* in order from here: children, links */
	async_synchronize_cookie(cookie);
	for (ch = n->first_child; ch >= 0; ch = nodes[ch].next_sibling)
		async_schedule(real_call, &nodes[ch]);
	real_phase(cookie, "links", n->links);
	n->end = ap_now_ns();
}

static bool real_concurrent;

static uint64_t run_real(void)
{
	uint64_t done;

	async_set_enabled(true);
	real_concurrent = async_get_enabled();
	async_schedule(real_call, &nodes[0]);
	async_synchronize_full();
	async_set_enabled(false);
	done = ap_now_ns() - base;
	if (async_quiesce() < 0)
		fprintf(stderr, "plot-demo: the workers did not stop\n");
	return done;
}

static const char *root_partition(void)
{
	return "nvme0n1p2";
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "sequential", no_argument, NULL, 'S' },
		{ "real", no_argument, NULL, 'R' },
		{ "disks", required_argument, NULL, 'd' },
		{ "seed", required_argument, NULL, 's' },
		{ "title", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const char *title = NULL;
	bool sequential = false, real = false;
	unsigned long disks = 0;
	uint64_t all_done;
	size_t i;
	char buf[64];
	int c, r;

	while ((c = getopt_long(argc, argv, "SRd:s:t:h", opts, NULL)) >= 0) {
		switch (c) {
		case 'S':
			sequential = true;
			break;
		case 'R':
			real = true;
			break;
		case 'd':
			disks = strtoul(optarg, NULL, 10);
			if (disks > 100000) {
				fprintf(stderr, "plot-demo: --disks: at most 100000\n");
				return 100;
			}
			break;
		case 's':
			rng_state = strtoull(optarg, NULL, 0) | 1;
			break;
		case 't':
			title = optarg;
			break;
		case 'h':
			printf("usage: %s [--sequential|--real] [--disks N] [--seed S] [--title T] OUT.svg [OUT.json]\n",
			       argv[0]);
			return 0;
		default:
			return 100;
		}
	}
	if (optind >= argc || argc - optind > 2) {
		fprintf(stderr, "usage: %s [--sequential|--real] [--disks N] [--seed S] [--title T] OUT.svg [OUT.json]\n",
			argv[0]);
		return 100;
	}

	build_machine((unsigned int)disks);
	ap_trace_enable();
	base = ap_now_ns();
	if (real)
		all_done = run_real();
	else if (sequential)
		all_done = run_inline(&nodes[0], 300000);
	else
		all_done = simulate_concurrent();

	if (n_evs)
		qsort(evs, n_evs, sizeof(*evs), cmp_ev);
	for (i = 0; i < n_evs; i++)
		ap_trace_record_event(&evs[i].ev);
	for (i = 0; i < n_nodes; i++)
		if (strcmp(nodes[i].label, root_partition()) == 0)
			ap_trace_mark(0, "root found", real ? nodes[i].end : base + nodes[i].end);
	ap_trace_mark(0, "all links", base + all_done);
	if (real)
		ap_trace_meta("mode", real_concurrent ? "fastboot (real calls)"
				      : "sequential (real calls, libasync stub)");
	else
		ap_trace_meta("mode", sequential ? "sequential (simulated)" : "fastboot (simulated)");
	snprintf(buf, sizeof(buf), "%zu", n_nodes);
	ap_trace_meta("devices", buf);

	if (!title && real)
		title = "asyncprobe boot timeline (real libasync calls, phases slept)";
	if (!title)
		title = sequential ? "asyncprobe boot timeline (synthetic, sequential)"
				   : "asyncprobe boot timeline (synthetic, fastboot)";
	r = ap_trace_write_svg(argv[optind], title);
	if (r < 0) {
		fprintf(stderr, "plot-demo: %s: %s\n", argv[optind], strerror(-r));
		return 111;
	}
	if (optind + 1 < argc) {
		r = ap_trace_write_chrome(argv[optind + 1]);
		if (r < 0) {
			fprintf(stderr, "plot-demo: %s: %s\n", argv[optind + 1], strerror(-r));
			return 111;
		}
	}
	ap_trace_reset();
	free(nodes);
	free(evs);
	return 0;
}
