/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The broker's names on the bus (DESIGN.md, "The bus contract"), defined
 * once for the daemon and for everything that talks to it: the client
 * library, uebctl and the benches. */

#define BROKER_BUS_NAME "org.uebroker1"
#define BROKER_OBJECT_PATH "/org/uebroker1"
#define BROKER_INTERFACE "org.uebroker1.Broker"
/* A data session a connection opened (OpenSession): BROKER_SESSION_PATH_PREFIX
 * "/" and a decimal number, org.uebroker1.Session's methods. */
#define BROKER_SESSION_PATH_PREFIX "/org/uebroker1/session"
#define BROKER_SESSION_INTERFACE "org.uebroker1.Session"

/* How long a client's method call to the broker may take on the bus, for
 * every client of ours (libuebroker, the preload library): the broker
 * answers within milliseconds unless polkit asks a person, and a client
 * must not wait forever on a broker that hangs. */
#define BROKER_CALL_TIMEOUT_USEC (3 * 1000000ull)

#define BROKER_ERROR_INVALID_COMMAND "org.uebroker1.Error.InvalidCommand"
#define BROKER_ERROR_NAME_IN_USE "org.uebroker1.Error.NameInUse"
#define BROKER_ERROR_QUOTA_EXCEEDED "org.uebroker1.Error.QuotaExceeded"
#define BROKER_ERROR_NO_SUCH_EVENT "org.uebroker1.Error.NoSuchEvent"
#define BROKER_ERROR_BUSY "org.uebroker1.Error.Busy"
#define BROKER_ERROR_NOT_SUPPORTED "org.uebroker1.Error.NotSupported"
