/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What uebroker-run(1) must know of a program before it preloads a library
 * into it: whether the dynamic loader will load the library at all
 * (dynamically linked, not set-user-ID) and whether the program reaches
 * the kernel through libc (Go programs make their system calls
 * themselves). Read from the file with bounded reads; no I/O beyond it.
 */

#include <stdbool.h>

struct elf_kind {
        bool elf;               /* an ELF executable at all (else a script: its interpreter decides) */
        bool dynamic;           /* has PT_INTERP: the loader runs and honours LD_PRELOAD */
        bool go;                /* has a Go build id or build info section */
        bool setid;             /* set-user-ID or set-group-ID: the loader ignores LD_PRELOAD */
};

/**
 * elf_kind_of() - inspects the file at @path.
 *
 * Returns 0 with *@ret filled (a file that is not ELF is not an error:
 * ret->elf false), or a negative errno when it cannot be read. A truncated
 * or malformed ELF file reads as what could be read of it. Thread-safe.
 */
int elf_kind_of(const char *path, struct elf_kind *ret);
