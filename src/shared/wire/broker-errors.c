/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "broker-errors.h"

const sd_bus_error_map broker_error_map[] = {
        SD_BUS_ERROR_MAP(BROKER_ERROR_INVALID_COMMAND, EINVAL),
        SD_BUS_ERROR_MAP(BROKER_ERROR_NAME_IN_USE, EADDRINUSE),
        SD_BUS_ERROR_MAP(BROKER_ERROR_NAME_IN_USE, EEXIST),
        SD_BUS_ERROR_MAP(BROKER_ERROR_QUOTA_EXCEEDED, EDQUOT),
        SD_BUS_ERROR_MAP(BROKER_ERROR_QUOTA_EXCEEDED, EMFILE),
        SD_BUS_ERROR_MAP(BROKER_ERROR_QUOTA_EXCEEDED, ENFILE),
        SD_BUS_ERROR_MAP(BROKER_ERROR_QUOTA_EXCEEDED, EUSERS),
        SD_BUS_ERROR_MAP(BROKER_ERROR_QUOTA_EXCEEDED, ENOSPC),
        SD_BUS_ERROR_MAP(BROKER_ERROR_NO_SUCH_EVENT, ENOENT),
        SD_BUS_ERROR_MAP(BROKER_ERROR_BUSY, EBUSY),
        SD_BUS_ERROR_MAP(BROKER_ERROR_NOT_SUPPORTED, EOPNOTSUPP),
        SD_BUS_ERROR_MAP_END
};

int broker_error_contract_errno(const sd_bus_error *error) {
        if (!error || !error->name)
                return 0;
        for (const sd_bus_error_map *m = broker_error_map; m->name; m++)
                if (strcmp(m->name, error->name) == 0)
                        return -m->code;
        return 0;
}

const char *broker_error_name_for_errno(int error) {
        for (const sd_bus_error_map *m = broker_error_map; m->name; m++)
                if (m->code == -error)
                        return m->name;
        return NULL;
}

int broker_error_set_errnof(sd_bus_error *error, int r, const char *format, ...) {
        const char *name = broker_error_name_for_errno(r);
        va_list ap;

        va_start(ap, format);
        if (name) {
                char text[1024];

                errno = -r;     /* for %m */
                (void) vsnprintf(text, sizeof(text), format, ap);
                (void) sd_bus_error_set(error, name, text);
        } else
                (void) sd_bus_error_set_errnofv(error, r, format, ap);
        va_end(ap);
        return r;
}
