/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Step 2 of loading a module (modules.c has the theory of operation):
 * carrying out one action of a plan without the context's mutex -
 * finit_module() in a child process, install commands through /bin/sh -
 * with the options the rules of modules.c add (async_probe, scsi_mod's
 * scan=sync), and what the run remembers: the modules it began to insert,
 * the soft dependencies that failed.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE     /* asprintf */
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libkmod.h>

#include "base/base.h"
#include "device/device.h"
#include "modules/modules.h"
#include "internal.h"

#ifndef MODULE_INIT_COMPRESSED_FILE
#define MODULE_INIT_COMPRESSED_FILE 4
#endif

extern char **environ;

/* Is the kernel release @release ("6.1.0-57-amd64") at least @maj.@min? */
static bool kernel_at_least(const char *release, unsigned long maj, unsigned long min)
{
	unsigned long a, b = 0;
	char *end;

	a = strtoul(release, &end, 10);
	if (end == release)
		return false;
	if (*end == '.')
		b = strtoul(end + 1, NULL, 10);
	return a > maj || (a == maj && b >= min);
}

/* Module names compare with '-' and '_' equal, as the kernel does. */
bool modules_name_eq(const char *a, const char *b)
{
	for (; *a && *b; a++, b++) {
		char ca = *a == '-' ? '_' : *a, cb = *b == '-' ? '_' : *b;

		if (ca != cb)
			return false;
	}
	return *a == *b;
}

/* live, coming, builtin: as /sys/module tells; a plain read of one attribute. */
static bool module_in_kernel(const char *name)
{
	char path[PATH_MAX], buf[16] = "";
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/sys/module/%s/initstate", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		/* no initstate but a directory: built in */
		if (errno != ENOENT)
			return false;
		snprintf(path, sizeof(path), "/sys/module/%s", name);
		return ap_dir_exists(path);
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 && (strncmp(buf, "live", 4) == 0);
}

static bool is_compressed(const char *path)
{
	size_t n = strlen(path);

	return (n > 3 && strcmp(path + n - 3, ".xz") == 0) ||
	       (n > 4 && strcmp(path + n - 4, ".zst") == 0) ||
	       (n > 3 && strcmp(path + n - 3, ".gz") == 0);
}

static int run_install_command(const char *name, const char *command)
{
	char env_module[PATH_MAX];
	char *argv[] = { (char *)"/bin/sh", (char *)"-c", (char *)command, NULL };
	char **envp;
	size_t n = 0, i, j = 0;
	posix_spawnattr_t attr;
	sigset_t none, all;
	pid_t pid;
	int status, r;

	for (; environ && environ[n]; n++)
		;
	envp = calloc(n + 2, sizeof(*envp));
	if (!envp)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		if (strncmp(environ[i], "MODPROBE_MODULE=", 16) != 0)
			envp[j++] = environ[i];
	snprintf(env_module, sizeof(env_module), "MODPROBE_MODULE=%s", name);
	envp[j++] = env_module;
	/*
	 * The command gets a clean signal state: it runs from a libasync
	 * worker, which blocks every signal, and a PID 1 ignores some; a
	 * command inheriting that could not even be stopped with SIGTERM.
	 */
	sigemptyset(&none);
	sigfillset(&all);
	r = posix_spawnattr_init(&attr);
	if (r == 0) {
		posix_spawnattr_setsigmask(&attr, &none);
		posix_spawnattr_setsigdefault(&attr, &all);
		posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
		r = posix_spawn(&pid, "/bin/sh", NULL, &attr, argv, envp);
		posix_spawnattr_destroy(&attr);
	}
	free(envp);
	if (r)
		return -r;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -EIO;
	return 0;
}

/*
 * A soft dependency that failed (crct10dif_pclmul on a CPU without
 * PCLMULQDQ: ENODEV) fails the same way for every disk that pulls it in:
 * it is tried and reported once, then skipped.  Returns true when name
 * failed before; with record, remembers it (under m->lock).
 */
bool modules_soft_failed(struct ap_modules *m, const char *name, bool record)
{
	bool seen = false;
	size_t i;

	pthread_mutex_lock(&m->lock);
	for (i = 0; i < m->n_soft_failed && !seen; i++)
		seen = strcmp(m->soft_failed[i], name) == 0;
	if (!seen && record) {
		char **v = realloc(m->soft_failed, (m->n_soft_failed + 1) * sizeof(*v));

		if (v) {
			m->soft_failed = v;
			if ((v[m->n_soft_failed] = strdup(name)))
				m->n_soft_failed++;
		}
	}
	pthread_mutex_unlock(&m->lock);
	return seen;
}

/* Waits for an insertion's child: 0 or -errno as the child reported it. */
static int insert_child_wait(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (WIFEXITED(status))
		return -WEXITSTATUS(status);
	return -EINTR;
}

/*
 * finit_module() in a child process.  A driver probes its devices inside
 * init_module(), and that can wait on a device for good, uninterruptibly
 * (the partition table read of a disk that stopped answering).  A thread
 * stuck there would keep this process from exiting, and PID 1 from
 * exec'ing the real init: the kernel ends every other thread first, and
 * cannot end that one.  A stuck child is simply left behind.  The child
 * makes one system call and exits.  It shares this process's memory and
 * runs on a stack of its own while the calling thread waits (clone() with
 * CLONE_VM and CLONE_VFORK, as posix_spawn() starts a program), with every
 * signal blocked, so no handler runs in it: a fork() would copy the page
 * tables and leave every page of the engine's threads to fault on its next
 * write, a cost paid once per module on the root's chain.  The waiting
 * thread's wait is killable, so a stuck child does not keep this process
 * from exiting either.  Returns 0 or -errno.
 */
struct finit_args {
	int fd;
	const char *options;
	int flags;
};

/* not instrumented: a sanitizer's per-thread state is the waiting thread's */
__attribute__((no_sanitize("address", "thread", "undefined")))
static int finit_child_main(void *data)
{
	const struct finit_args *a = data;
	long r = syscall(SYS_finit_module, a->fd, a->options, a->flags);

	return r < 0 ? (errno > 0 && errno < 256 ? errno : EIO) : 0;
}

#define FINIT_CHILD_STACK (64 * 1024)

static int finit_module_child(int fd, const char *options, int flags)
{
	struct finit_args a = { .fd = fd, .options = options, .flags = flags };
	sigset_t all, old;
	char *stack;
	pid_t pid;
	int e;

	stack = malloc(FINIT_CHILD_STACK);
	if (!stack)
		return -ENOMEM;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	/* the stack grows down on every architecture Linux runs this on but hppa */
	pid = clone(finit_child_main, stack + FINIT_CHILD_STACK, CLONE_VM | CLONE_VFORK | SIGCHLD, &a);
	e = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (pid < 0) {
		free(stack);
		return -e;
	}
	/* CLONE_VFORK: clone() returned once the child exited (a stuck one keeps this thread) */
	e = insert_child_wait(pid);
	free(stack);
	return e;
}

/*
 * The same for a compressed module that the kernel cannot decompress
 * itself (no CONFIG_MODULE_DECOMPRESS, as in Debian 12's kernel, or not
 * that method): libkmod decompresses it in the child and hands the kernel
 * the image with init_module().  m->lock is held only across fork(), so
 * the child gets the context in a consistent state; the context is not
 * shared after that.
 */
static int kmod_insert_child(struct ap_modules *m, struct kmod_module *mod, const char *options)
{
	pid_t pid;
	int e;

	pthread_mutex_lock(&m->lock);
	pid = fork();
	if (pid == 0) {
		int r = kmod_module_insert_module(mod, 0, options);

		_exit(r < 0 ? (-r < 256 ? -r : EIO) : 0);
	}
	e = errno;
	pthread_mutex_unlock(&m->lock);
	if (pid < 0)
		return -e;
	return insert_child_wait(pid);
}

/*
 * Does the option string @opts ("a=1 b c=\"x y\"", as modprobe.d and
 * the kernel command line give it) set the parameter @name, with or
 * without a value?
 */
static bool options_name(const char *opts, const char *name)
{
	size_t ln = strlen(name);
	const char *p = opts;

	while (p && *p) {
		bool quoted = false;
		const char *t;

		while (*p == ' ' || *p == '\t')
			p++;
		t = p;
		for (; *p && (quoted || (*p != ' ' && *p != '\t')); p++)
			if (*p == '"')
				quoted = !quoted;
		if ((size_t)(p - t) >= ln && strncmp(t, name, ln) == 0 &&
		    (t[ln] == '=' || t + ln == p))
			return true;
	}
	return false;
}

/*
 * The options one insertion of @a gets: its own (modprobe.d, the kernel
 * command line), then async_probe when @async and they do not name it,
 * then scan=sync for scsi_mod when they do not name scan (see modules.c).  Returns a malloc'ed string or NULL (ENOMEM).
 */
static char *insert_options(const struct action *a, bool async)
{
	const char *own = a->options ? a->options : "";
	bool add_async = async && !options_name(own, "async_probe");
	bool add_scan = modules_name_eq(a->name, "scsi_mod") && !options_name(own, "scan");
	char *s;

	if (asprintf(&s, "%s%s%s%s%s", own, *own && (add_async || add_scan) ? " " : "",
		     add_async ? "async_probe" : "", add_async && add_scan ? " " : "",
		     add_scan ? "scan=sync" : "") < 0)
		return NULL;
	return s;
}

char *ap_modules_insert_options(const char *name, const char *options, bool async)
{
	struct action a = { .name = (char *)name, .options = (char *)options };

	return insert_options(&a, async);
}

bool ap_kernel_has_async_probe(void)
{
	struct utsname u;

	return uname(&u) == 0 && kernel_at_least(u.release, 4, 2);
}

bool ap_kernel_knows_compressed_file(void)
{
	struct utsname u;

	return uname(&u) == 0 && kernel_at_least(u.release, 5, 17);
}

/* Remember that this run began to insert @name (under m->lock). */
static void touch_module(struct ap_modules *m, const char *name)
{
	char **v;
	size_t i;

	pthread_mutex_lock(&m->lock);
	for (i = 0; i < m->n_touched; i++)
		if (modules_name_eq(m->touched[i], name))
			break;
	if (i == m->n_touched) {
		v = realloc(m->touched, (m->n_touched + 1) * sizeof(*v));
		if (v) {
			m->touched = v;
			if ((v[m->n_touched] = strdup(name)))
				m->n_touched++;
		}
	}
	pthread_mutex_unlock(&m->lock);
}

bool ap_modules_touched(struct ap_modules *m, const char *name)
{
	bool found = false;
	size_t i;

	if (!m || !name)
		return false;
	pthread_mutex_lock(&m->lock);
	for (i = 0; i < m->n_touched && !found; i++)
		found = modules_name_eq(m->touched[i], name);
	pthread_mutex_unlock(&m->lock);
	return found;
}

bool ap_modules_scsi_scan_sync(void)
{
	char buf[16] = "";
	ssize_t n;
	int fd;

	fd = open("/sys/module/scsi_mod/parameters/scan", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n >= 4 && strncmp(buf, "sync", 4) == 0;
}

/*
 * One insertion of @a's file with @opts, without m->lock.  0 or -errno.
 *
 * A kernel built without in-kernel decompression (CONFIG_MODULE_DECOMPRESS;
 * Debian 12's 6.1 is one) answers EOPNOTSUPP; kernels before 5.17 do not
 * know the flag (EINVAL, so ap_modules_new() does not let them see it);
 * without finit_module() at all, ENOSYS.  That answer is the kernel's, not
 * the module's: after the first one, compressed files go straight to
 * libkmod, instead of each being read into the kernel to be refused.  A
 * kernel that decompresses one method only (the one it was built with)
 * answers EINVAL for a file in another: that one module goes to libkmod,
 * and the next file is offered to the kernel again.
 */
static int insert_file(struct ap_modules *m, struct action *a, const char *opts)
{
	bool compressed = is_compressed(a->path);
	int fd, r;

	if (compressed && !__atomic_load_n(&m->kernel_decompress, __ATOMIC_RELAXED))
		return kmod_insert_child(m, a->mod, opts);
	fd = open(a->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = finit_module_child(fd, opts, compressed ? MODULE_INIT_COMPRESSED_FILE : 0);
	close(fd);
	if (compressed && r == -EOPNOTSUPP) {
		if (__atomic_exchange_n(&m->kernel_decompress, 0, __ATOMIC_RELAXED))
			log_info("module %s: the kernel does not decompress modules itself (%s); "
				 "libkmod decompresses them from now on", a->name, strerror(-r));
		r = kmod_insert_child(m, a->mod, opts);
	} else if (r == -ENOSYS || (compressed && r == -EINVAL)) {
		r = kmod_insert_child(m, a->mod, opts);
	}
	return r;
}

/* ap_modules_set_async_own(): per thread, off by default */
static __thread bool thread_async_own;

void ap_modules_set_async_own(bool on)
{
	thread_async_own = on;
}

/* Carry out one action, without m->lock.  0 (also for "already there") or -errno. */
int modules_action_run(struct ap_modules *m, struct action *a, bool *inserted, bool own_probe)
{
	char *opts;
	bool async;
	int r;

	*inserted = false;
	/* loaded state is the running kernel's: meaningless for another tree */
	if (!m->foreign && module_in_kernel(a->name))
		return 0;
	if (a->command) {
		log_info("module %s: running install command: %s", a->name, a->command);
		return run_install_command(a->name, a->command);
	}
	if (!a->path)
		return -ENOENT;
	/*
	 * Modules built for another kernel: the kernel would refuse them
	 * (vermagic), so do not hand them over.  Install commands above still
	 * run: they are the administrator's.
	 */
	if (m->foreign)
		return -ENOEXEC;
	async = (!own_probe || thread_async_own) &&
		__atomic_load_n(&m->async_probe, __ATOMIC_RELAXED) != 0;
	opts = insert_options(a, async);
	if (!opts)
		return -ENOMEM;
	touch_module(m, a->name);
	log_debug("module %s: inserting %s with options '%s'", a->name, a->path, opts);
	r = insert_file(m, a, opts);
	if ((r == -ENOENT || r == -EINVAL) && async && !options_name(a->options ? a->options : "",
								      "async_probe")) {
		/* a kernel that refuses the parameter (before 3.16: "Unknown parameter") */
		char *plain = insert_options(a, false);

		if (plain && insert_file(m, a, plain) == 0) {
			if (__atomic_exchange_n(&m->async_probe, 0, __ATOMIC_RELAXED))
				log_notice("module %s: the kernel refused async_probe (%s) and took it "
					   "without: not passing async_probe any more", a->name,
					   strerror(-r));
			r = 0;
		}
		free(plain);
	}
	free(opts);
	if (r == -EEXIST)
		return 0;
	if (r == 0)
		*inserted = true;
	return r;
}
