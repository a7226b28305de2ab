/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "macro.h"
#include "provider.h"

/* Kernel providers come first when they exist: they put events where ftrace
 * and perf see them. The embedded provider works everywhere and comes last. */
const struct provider_ops *const provider_table[] = {
        &upstream_provider_ops,
        &v1_provider_ops,
        &embedded_provider_ops,
        NULL,
};

const struct provider_ops *provider_find(const char *name) {
        assert(name);
        for (size_t i = 0; provider_table[i]; i++)
                if (strcmp(provider_table[i]->name, name) == 0)
                        return provider_table[i];
        return NULL;
}

const char *provider_names(void) {
        static char names[256];

        /* Built once from the table, so help and errors never go stale. */
        if (!names[0]) {
                size_t len = (size_t) snprintf(names, sizeof(names), "auto");

                for (size_t i = 0; provider_table[i] && len < sizeof(names); i++)
                        len += (size_t) snprintf(names + len, sizeof(names) - len, ", %s", provider_table[i]->name);
        }
        return names;
}

int provider_choose_auto(const struct provider_settings *settings, const struct provider_ops **ret) {
        assert(settings);
        for (size_t i = 0; provider_table[i]; i++) {
                const struct provider_ops *ops = provider_table[i];
                char *reason = NULL;
                int r;

                r = ops->probe(settings, &reason);
                if (r > 0) {
                        if (strcmp(ops->name, embedded_provider_ops.name) == 0 && i == 0)
                                log_info("Provider auto: using embedded, this build has no kernel provider.");
                        else
                                log_info("Provider auto: using %s.", ops->name);
                        free(reason);
                        *ret = ops;
                        return 0;
                }
                if (r < 0)
                        log_info_errno(r, "Provider auto: %s cannot be probed: %m", ops->name);
                else
                        log_info("Provider auto: %s is not usable: %s", ops->name, reason ?: "no reason given");
                free(reason);
        }
        return log_error_errno(-ENODEV, "No usable provider.");
}
