/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sd_notify: readiness and status for systemd.  Where libsystemd is
 * installed this is its sd_notify(), loaded with dlopen() the first time
 * $NOTIFY_SOCKET asks for it, as systemd itself loads optional libraries:
 * linking it would pull libsystemd, libgcrypt, liblz4 and libgpg-error
 * (about 2.5 MB) into every initramfs, where PID 1 never notifies anyone.
 * Without it the protocol is small enough to speak directly: one AF_UNIX
 * datagram of newline-separated VAR=value assignments, sent to the socket
 * in $NOTIFY_SOCKET (a path, or an abstract name written with a leading
 * '@').  systemd learns the sender from the socket credentials.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#ifdef HAVE_LIBSYSTEMD
#include <dlfcn.h>
#include <pthread.h>
#include <systemd/sd-daemon.h>
#endif

#include "base/base.h"

int ap_notify_socket(const char *socket_path, const char *state)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len;
	socklen_t salen;
	ssize_t n;
	int fd, r;

	if (!socket_path || !state)
		return -EINVAL;
	len = strlen(socket_path);
	if (socket_path[0] != '/' && socket_path[0] != '@')
		return -EAFNOSUPPORT;   /* vsock: and friends are not spoken here */
	if (len < 2 || len >= sizeof(sa.sun_path))
		return -EINVAL;
	memcpy(sa.sun_path, socket_path, len);
	if (sa.sun_path[0] == '@') {
		/* abstract: a leading NUL, and the length says where it ends */
		sa.sun_path[0] = '\0';
		salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
	} else {
		salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + 1);
	}

	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	n = sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa, salen);
	r = n < 0 ? -errno : (size_t)n != strlen(state) ? -EMSGSIZE : 1;
	close(fd);
	return r;
}

#ifdef HAVE_LIBSYSTEMD
static int (*sd_notify_fn)(int unset_environment, const char *state);
static pthread_once_t sd_once = PTHREAD_ONCE_INIT;

static void load_libsystemd(void)
{
	/* never closed: the library stays for the life of the process */
	void *h = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		log_debug("libsystemd not loaded (%s); speaking the notify protocol directly",
			  dlerror());
		return;
	}
	/* the types match: the declaration comes from <systemd/sd-daemon.h> */
	sd_notify_fn = (__typeof__(&sd_notify))dlsym(h, "sd_notify");
}
#endif

int ap_notify(const char *state)
{
	const char *sock = getenv("NOTIFY_SOCKET");
	int r;

	if (!sock || !*sock)
		return 0;
#ifdef HAVE_LIBSYSTEMD
	pthread_once(&sd_once, load_libsystemd);
	r = sd_notify_fn ? sd_notify_fn(0, state) : ap_notify_socket(sock, state);
#else
	r = ap_notify_socket(sock, state);
#endif
	if (r < 0)
		log_debug("sd_notify(%s) to %s: %s", state, sock, strerror(-r));
	return r;
}

int ap_notifyf(const char *fmt, ...)
{
	_cleanup_free_ char *s = NULL;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (r < 0)
		return -ENOMEM;
	return ap_notify(s);
}
