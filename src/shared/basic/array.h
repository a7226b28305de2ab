/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <errno.h>
#include <stdlib.h>

#include "macro.h"

/* Room in @array (a pointer lvalue; @allocated, an unsigned lvalue, its
 * room in elements) for @need elements: grown with reallocarray() to
 * twice its room, at least @need and 8. 0, or -ENOMEM with @array and
 * @allocated unchanged. Never shrinks. */
#define ARRAY_RESERVE(array, allocated, need)                                   \
        __extension__({                                                         \
                size_t _need = (need), _room = (allocated);                     \
                int _ret = 0;                                                   \
                                                                                \
                if (_need > _room) {                                            \
                        __typeof__(array) _grown;                               \
                                                                                \
                        _room = MAX(_room * 2, (size_t) 8);                     \
                        if (_room < _need)                                      \
                                _room = _need;                                  \
                        _grown = reallocarray((array), _room, sizeof(*_grown)); \
                        if (_grown) {                                           \
                                (array) = _grown;                               \
                                (allocated) = _room;                            \
                        } else                                                  \
                                _ret = -ENOMEM;                                 \
                }                                                               \
                _ret;                                                           \
        })
