/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * MESSAGE_ID= of the broker's journal records about events, fixed for good
 * (like systemd's sd-messages.h): `journalctl MESSAGE_ID=...` finds every
 * record of one kind, whatever its text. Each record also carries
 * UEB_EVENT= (the event's name) and, when known, UEB_UID= and UEB_PID= of
 * the caller. Listed in uebrokerd(8), JOURNAL FIELDS.
 */

/* An event was created by a Register. */
#define UEB_MESSAGE_EVENT_CREATED "b7a0d51fd0b64accaeacf4326e0823ac"
/* An event was deleted by a Delete. */
#define UEB_MESSAGE_EVENT_DELETED "c836e09e63754f3d95c28e6903626559"
/* An unused event was evicted to make room for another (its UEB_UID= is
 * the uid whose Register evicted it; the text names the former owner). */
#define UEB_MESSAGE_EVENT_EVICTED "5d5edd6508044563a0b89f85a3f1ecde"
/* A call was refused (Register, Delete, Record...; the text names the
 * method, the error name and why). */
#define UEB_MESSAGE_CALL_REFUSED "2570cd7e85584e59999940128f203305"
