/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sd_notify (notify.c): readiness and status for systemd. */
#ifndef ASYNCPROBE_NOTIFY_H
#define ASYNCPROBE_NOTIFY_H

/*
 * Send @state ("READY=1", "STATUS=...") to the service manager named by
 * $NOTIFY_SOCKET: through libsystemd's sd_notify() where the build has it,
 * else with ap_notify_socket().  Returns 1 when sent, 0 when not started by
 * systemd (no NOTIFY_SOCKET), or -errno.
 */
int ap_notify(const char *state);
int ap_notifyf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * The notification protocol by hand: one datagram holding @state sent to
 * the AF_UNIX socket @socket_path, a file system path ("/run/...") or an
 * abstract name written with a leading '@'.  Returns 1 or -errno.
 */
int ap_notify_socket(const char *socket_path, const char *state);

#endif
