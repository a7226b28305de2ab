/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The broker's D-Bus error names and the errnos they stand for: one map
 * (sd-bus's sd_bus_error_map) for the daemon, which answers with names, and
 * for libuebroker and uebctl, which turn names back into errnos. A name may
 * stand for several errnos (the first is the one a client gets back): the
 * kernel's and the provider's reasons reach callers as the contract's
 * names.
 */

#include <systemd/sd-bus.h>

#include "broker-bus.h"

extern const sd_bus_error_map broker_error_map[];

/* The negative errno the map gives @error's name, 0 when the name is not
 * one of the contract's. */
int broker_error_contract_errno(const sd_bus_error *error);

/* The contract's name for @error (a negative errno), NULL when it has none. */
const char *broker_error_name_for_errno(int error);

/* Sets @error from @r (a negative errno) with a formatted message, under the
 * contract's name when the map has one, sd-bus's otherwise; returns @r. */
int broker_error_set_errnof(sd_bus_error *error, int r, const char *format, ...) __attribute__((format(printf, 3, 4)));
