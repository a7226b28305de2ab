/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <unistd.h>

#include "bus-caller.h"
#include "cleanup.h"
#include "macro.h"

int bus_caller_identify(sd_bus_message *m, uid_t *ret_uid, pid_t *ret_pid) {
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        int r;

        assert(m);
        r = sd_bus_query_sender_creds(m, SD_BUS_CREDS_EUID | SD_BUS_CREDS_PID, &creds);
        if (r < 0)
                return r;
        if (sd_bus_creds_get_augmented_mask(creds) & (SD_BUS_CREDS_EUID | SD_BUS_CREDS_PID))
                return -EPERM;
        r = sd_bus_creds_get_euid(creds, ret_uid);
        if (r < 0)
                return r;
        if (sd_bus_creds_get_pid(creds, ret_pid) < 0)
                *ret_pid = 0;
        return 0;
}

