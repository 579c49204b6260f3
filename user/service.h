/* SPDX-License-Identifier: MIT */
/*
 * Running as a service: systemd readiness and watchdog notifications (the
 * sd_notify datagram protocol, spoken directly), memory locking, and the
 * capabilities the agent needs — checked at start, and the ones only set-up
 * needs (loading BPF, opening perf events) dropped after it.
 */
#ifndef CXLT_SERVICE_H
#define CXLT_SERVICE_H

#include <stdbool.h>
#include <stdint.h>

/* Sends "READY=1", "WATCHDOG=1", "STOPPING=1", "STATUS=..." to $NOTIFY_SOCKET, if any. */
int service__notify(const char *state);
/* The watchdog interval systemd asked for ($WATCHDOG_USEC), 0 if none. */
uint64_t service__watchdog_usec(void);
/* Says which needed capability is missing and what for; -EPERM if BPF cannot load at all. */
int service__check_caps(void);
/* Drops CAP_BPF and CAP_PERFMON once the samplers are loaded and attached. */
void service__drop_setup_caps(void);
/* Keeps the agent's own memory resident (it must not be paged or demoted). */
void service__lock_memory(void);

#endif
