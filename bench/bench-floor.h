/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The no-work stand-in service (bench-floor-service.c) that the Register
 * latencies are compared with: its names on the bus, for the service and
 * for the benches calling it. Reply takes a string, as Register does, and
 * answers "hhuu", as Register does: two fds and two constants. */

#define BENCH_FLOOR_BUS_NAME "org.uebroker1.BenchFloor"
#define BENCH_FLOOR_OBJECT_PATH "/org/uebroker1/BenchFloor"
#define BENCH_FLOOR_INTERFACE "org.uebroker1.BenchFloor"
#define BENCH_FLOOR_METHOD "Reply"
