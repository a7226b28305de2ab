/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* uebctl record's EventHeader filters (uebctl-filter.h). */
#include "uebctl-filter.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eventheader-decode.h"

bool uebctl_filter_active(const struct uebctl_filter *f) {
        return f->n_providers > 0 || f->level > 0 || f->has_keyword_any || f->has_keyword_all;
}

static int append(char **patterns, size_t *n, size_t max, const char *provider, unsigned level) {
        char *p;
        int r;

        if (*n >= max)
                return -E2BIG;
        r = level ? asprintf(&p, "%s_L%uK*", provider, level) : asprintf(&p, "%s_L*", provider);
        if (r < 0)
                return -ENOMEM;
        patterns[(*n)++] = p;
        return 0;
}

int uebctl_filter_patterns(const struct uebctl_filter *f, char **patterns, size_t *n, size_t max) {
        size_t start = *n;
        bool by_level = f->level > 0 && f->n_providers * f->level <= max - start;
        int r = 0;

        for (size_t i = 0; i < f->n_providers && r == 0; i++) {
                if (!by_level)
                        r = append(patterns, n, max, f->providers[i], 0);
                for (unsigned level = 1; by_level && level <= f->level && r == 0; level++)
                        r = append(patterns, n, max, f->providers[i], level);
        }
        return r;
}

bool uebctl_filter_match(const struct uebctl_filter *f, const char *name, size_t len) {
        struct eventheader_tracepoint tp;
        bool provider_ok = f->n_providers == 0;

        if (!uebctl_filter_active(f))
                return true;
        if (eventheader_parse_tracepoint(name, len, &tp) < 0)
                return false;
        for (size_t i = 0; i < f->n_providers && !provider_ok; i++)
                provider_ok = strlen(f->providers[i]) == tp.provider_len &&
                              memcmp(f->providers[i], tp.provider, tp.provider_len) == 0;
        return provider_ok && (f->level == 0 || tp.level <= f->level) &&
               (!f->has_keyword_any || (tp.keyword & f->keyword_any) != 0) &&
               (!f->has_keyword_all || (tp.keyword & f->keyword_all) == f->keyword_all);
}

int uebctl_filter_parse_keyword(const char *s, uint64_t *ret) {
        unsigned long long v;
        char *end;

        if (!*s || *s == '-' || *s == '+' || ((s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) && !s[2]))
                return -EINVAL;
        errno = 0;
        v = strncmp(s, "0x", 2) == 0 || strncmp(s, "0X", 2) == 0 ? strtoull(s + 2, &end, 16) : strtoull(s, &end, 10);
        if (errno || *end || v == 0)
                return -EINVAL;
        *ret = v;
        return 0;
}

bool uebctl_filter_valid_provider(const char *s) {
        size_t len = strlen(s);

        return len > 0 && len <= 200 &&
               strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") == len;
}
