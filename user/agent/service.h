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
/*
 * One agent per machine: takes CXLT_MACHINE_LOCK, writing our pid and run
 * dir into it; the lock's fd, or -errno (another agent holds it: logged).
 */
int service__take_lock(const char *run_dir);
/* Creates the run dir (0700) and checks it is root's alone all the way up; -errno. */
int service__prepare_run_dir(const char *run_dir);

#endif
