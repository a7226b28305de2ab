/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The user_events_data files of a program run by uebroker-run
 * (libuebroker-preload.so): each open() of a path ending in
 * user_events_data gets one, backed by a data session of the broker
 * (OpenSession) on the process's one private bus connection (never the
 * program's), opened at the first ioctl and ended (Close) by the
 * library's next call after the file's last close. The kernel
 * interface's ioctls are answered through the broker:
 *
 * - DIAG_IOCSREG: the broker first (validation, name ownership,
 *   reservations, quotas, polkit), then, by the provider:
 *   - upstream: the broker's Authorize says yes to the definition, and the
 *     program's own ioctl reaches the kernel on the broker's data file (the
 *     kernel's user_events_data): the kernel writes the write index and
 *     keeps the enable word, as without the broker. DIAG_IOCSUNREG goes to
 *     the kernel.
 *   - embedded, v1 (Authorize answers NotSupported): the broker's Register
 *     registers the event, the program writes it with the write index it
 *     returns, and the enable word stays the program's: bit enable_bit of
 *     the enable_size bytes at enable_addr is set while the event's status
 *     byte says someone records, cleared when nobody does, atomically
 *     (other bits of the word may be other registrations'). One thread of
 *     the library follows the status bytes every
 *     PRELOAD_SYNC_INTERVAL_MSEC; after DIAG_IOCSUNREG returns it never
 *     writes that word again. DIAG_IOCSUNREG drops the enabler only (as
 *     the kernel: the write index stays valid).
 *   The first registration puts the broker's data file in place of the
 *   placeholder open() returned (dup3(), same descriptor number).
 * - DIAG_IOCSDEL is the broker's Delete.
 *
 * Errors are the kernel interface's errnos (preload_errno_from_bus()).
 * Thread-safe; an ioctl from a signal handler that interrupted the library,
 * or on a file of the parent in a forked child, fails with EAGAIN at once.
 * The enable words are written with FUTEX_WAKE_OP (preload-files.c): a
 * word that is read-only or not mapped fails the registration (ENOMEM, as
 * 6.12) or, later, is skipped, never a SIGSEGV.
 */

#include <stdbool.h>
#include <stdint.h>

#define PRELOAD_SYNC_INTERVAL_MSEC 20u

/** preload_path_is_data_file() - whether @path names user_events_data. */
bool preload_path_is_data_file(const char *path);
/** preload_path_is_status_file() - whether @path names user_events_status. */
bool preload_path_is_status_file(const char *path);

/**
 * preload_open_status() - a program's open() of user_events_status with
 * @flags: a read-only file (memfd) holding the broker's status text
 * (GetStatus) as of the call, the program's to close. Negative errno:
 * -EACCES for write access (the kernel's file is read-only), the kernel
 * interface's errno for a broker's refusal or absence, -EAGAIN from inside
 * the library. Thread-safe; one short-lived bus connection per call.
 */
int preload_open_status(int flags);

/**
 * preload_open() - a new file for a program's open() with @flags; returns
 * its descriptor (a placeholder until the first registration) or a
 * negative errno. The descriptor is the program's. Async-signal-safe.
 */
int preload_open(int flags);

/**
 * preload_ioctl() - whether @fd holds one of the files preload_open() gave
 * (checked with fstat(): a number reused behind the library's back is
 * not); then *@ret is the answer to @request: DIAG_IOCSREG, DIAG_IOCSUNREG
 * and DIAG_IOCSDEL through the broker, -ENOTTY for any other request (as
 * the kernel's file), -EAGAIN from a signal handler that interrupted the
 * library or on a parent's file in a forked child.
 */
bool preload_ioctl(int fd, unsigned long request, void *arg, int *ret);

/*
 * The numbers of the files. Each is async-signal-safe (no lock, no
 * malloc()), as the calls they follow; a file's connection ends at its last
 * number, its memory is released later, outside any signal handler. In a
 * vfork() child (memory shared with the parent) they change nothing.
 */

/** preload_forget() - @fd is being closed, or is about to hold another file. */
void preload_forget(int fd);

/** preload_forget_range() - close_range(@first, @last) or closefrom(). */
void preload_forget_range(unsigned first, unsigned last);

/** preload_dup() - @newfd now holds what @oldfd holds (dup(), dup2(), F_DUPFD...). */
void preload_dup(int oldfd, int newfd);

/**
 * preload_errno_from_bus() - the errno a program of the kernel interface
 * expects for a broker's refusal @name (a D-Bus error name) of @method, or
 * @fallback (positive) when the name means nothing more specific.
 */
int preload_errno_from_bus(const char *method, const char *name, int fallback);
