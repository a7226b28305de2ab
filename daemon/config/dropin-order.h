/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Which drop-in files to read, and in which order, as systemd does for its
 * own configuration files (systemd.syntax(7), "conf.d"; systemd 252's
 * conf_files_list()): the drop-in directories are searched in precedence
 * order (for uebrokerd: SYSCONFDIR, /run, /usr/local/lib, /usr/lib); a
 * file name present in an earlier directory hides the same name in every
 * later one; the files that remain are read in the byte order of their
 * names, whatever directory each comes from, so a later name overrides an
 * earlier one. A mask (a symlink to /dev/null or an empty file) hides its
 * name like a file and is not read: that is how an administrator disables
 * a vendor's drop-in.
 *
 * Pure: the caller lists the directories (what counts as a drop-in, and
 * as a mask, is decided there) and reads the files.
 */

#include <stddef.h>

enum dropin_kind {
        DROPIN_FILE,    /* a regular file with content: read it */
        DROPIN_MASK,    /* hides its name in later directories, read nothing */
};

struct dropin_entry {
        const char *name;
        enum dropin_kind kind;
};

struct dropin_dir {
        const struct dropin_entry *entries;     /* in any order, names unique within the directory */
        size_t n_entries;
};

struct dropin_choice {
        size_t dir;             /* index into the directories given */
        const char *name;       /* the entry's name (not copied) */
};

/* The files to read from @dirs (highest precedence first), sorted by name:
 * one for each name whose first occurrence is a DROPIN_FILE. Returns 0 with
 * a malloc()ed array in *ret (NULL when there are none) of *ret_n choices,
 * or -ENOMEM. */
int dropins_choose(const struct dropin_dir *dirs, size_t n_dirs, struct dropin_choice **ret, size_t *ret_n);
