/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Declaring an event once, in C: its name, its fields and their types give
 * the definition text and a write call whose parameters have the fields' C
 * types, so the compiler checks each call site.
 *
 *     #include <uebroker-event.h>
 *
 *     UEB_EVENT(hello_tick,
 *               UEB_FIELD(u32, count),
 *               UEB_STRING(msg))
 *
 * generates, as static inline functions and an enum:
 *
 *     enum { ueb_n_fields_hello_tick = 2 };
 *     const char *ueb_definition_hello_tick(void);
 *             // "hello_tick u32 count; __data_loc char[] msg"
 *     int ueb_register_hello_tick(struct ueb_client *c, struct ueb_event **ret);
 *             // ueb_register() with that definition
 *     int ueb_write_hello_tick(struct ueb_event *e, uint32_t count, const char *msg);
 *             // ueb_write_values() with those values
 *     void ueb_values_hello_tick(struct ueb_value *out, uint32_t count, const char *msg);
 *             // the values alone, into out[ueb_n_fields_hello_tick]
 *             // (for ueb_check_values(), or to write them later)
 *
 * and a program writes
 *
 *     if (ev && ueb_enabled(ev))
 *             ueb_write_hello_tick(ev, n, "hello");
 *
 * Fields (1 to 16 per event, in payload order):
 *   UEB_FIELD(T, name)        T name, T one of u8 u16 u32 u64 s8 s16 s32 s64;
 *                             parameter: uintN_t / intN_t
 *   UEB_STRING(name)          __data_loc char[] name; parameter: const char *
 *                             (NULL writes "")
 *   UEB_REL_STRING(name)      __rel_loc char[] name; parameter: const char *
 *   UEB_CHAR_ARRAY(name, N)   char[N] name (N a decimal literal); parameter:
 *                             const char *, at most N bytes (-EMSGSIZE
 *                             otherwise), zero padded
 *   UEB_ARRAY(T, name)        __data_loc T[] name; parameters:
 *                             const uintN_t *name, size_t name_count
 * Struct fields need their size in the definition text, which the
 * preprocessor cannot compute: register those with ueb_register() and
 * write them with ueb_write_values() and ueb_value_bytes().
 *
 * The write call does what ueb_write_values() does: the values are checked
 * against the definition the handle was registered with (they match by
 * construction) and written without copying the dynamic bytes. Field names
 * must not be ueb_event_, ueb_out_ or ueb_values_ (the generated code's own
 * names).
 */

#include "uebroker.h"

/* C types and value constructors of UEB_FIELD's types. */
#define UEB_CTYPE_u8 uint8_t
#define UEB_CTYPE_u16 uint16_t
#define UEB_CTYPE_u32 uint32_t
#define UEB_CTYPE_u64 uint64_t
#define UEB_CTYPE_s8 int8_t
#define UEB_CTYPE_s16 int16_t
#define UEB_CTYPE_s32 int32_t
#define UEB_CTYPE_s64 int64_t

/* Each field is a tuple (UEBK_KIND, a, b) the generators below dispatch on. */
#define UEB_FIELD(type, name) (UEBK_SCALAR, type, name)
#define UEB_STRING(name) (UEBK_STRING, __data_loc, name)
#define UEB_REL_STRING(name) (UEBK_STRING, __rel_loc, name)
#define UEB_CHAR_ARRAY(name, n) (UEBK_CHARS, n, name)
#define UEB_ARRAY(type, name) (UEBK_ARRAY, type, name)

/* The definition text of one field. */
#define UEB_TEXT_UEBK_SCALAR(type, name) #type " " #name
#define UEB_TEXT_UEBK_STRING(loc, name) #loc " char[] " #name
#define UEB_TEXT_UEBK_CHARS(n, name) "char[" #n "] " #name
#define UEB_TEXT_UEBK_ARRAY(type, name) "__data_loc " #type "[] " #name

/* The parameters of one field, each with its leading comma. */
#define UEB_PARAM_UEBK_SCALAR(type, name) , UEB_CTYPE_##type name
#define UEB_PARAM_UEBK_STRING(loc, name) , const char *name
#define UEB_PARAM_UEBK_CHARS(n, name) , const char *name
#define UEB_PARAM_UEBK_ARRAY(type, name) , const UEB_CTYPE_##type *name, size_t name##_count

/* The arguments of one field, forwarded, each with its leading comma. */
#define UEB_ARG_UEBK_SCALAR(type, name) , name
#define UEB_ARG_UEBK_STRING(loc, name) , name
#define UEB_ARG_UEBK_CHARS(n, name) , name
#define UEB_ARG_UEBK_ARRAY(type, name) , name, name##_count

/* The value of one field, with its trailing comma. */
#define UEB_VALUE_UEBK_SCALAR(type, name) ueb_value_##type(name),
#define UEB_VALUE_UEBK_STRING(loc, name) ueb_value_string(name),
#define UEB_VALUE_UEBK_CHARS(n, name) ueb_value_string(name),
#define UEB_VALUE_UEBK_ARRAY(type, name) ueb_value_bytes(name, name##_count * sizeof(*(name))),

#define UEB_APPLY_(macro, args) macro args
#define UEB_CAT_(a, b) UEB_CAT_I_(a, b)
#define UEB_CAT_I_(a, b) a##b
#define UEB_DISPATCH_(what, kind, a, b) UEB_CAT_(what, kind)(a, b)

#define UEB_TEXT_(kind, a, b) UEB_DISPATCH_(UEB_TEXT_, kind, a, b)
#define UEB_TEXT_FIRST_(field) " " UEB_APPLY_(UEB_TEXT_, field)
#define UEB_TEXT_NEXT_(field) "; " UEB_APPLY_(UEB_TEXT_, field)
#define UEB_PARAM_(kind, a, b) UEB_DISPATCH_(UEB_PARAM_, kind, a, b)
#define UEB_PARAM_EACH_(field) UEB_APPLY_(UEB_PARAM_, field)
#define UEB_ARG_(kind, a, b) UEB_DISPATCH_(UEB_ARG_, kind, a, b)
#define UEB_ARG_EACH_(field) UEB_APPLY_(UEB_ARG_, field)
#define UEB_VALUE_(kind, a, b) UEB_DISPATCH_(UEB_VALUE_, kind, a, b)
#define UEB_VALUE_EACH_(field) UEB_APPLY_(UEB_VALUE_, field)

/* UEB_MAP_(each, first, fields...): first(field 1) each(field 2) ... */
#define UEB_NARGS_(...) UEB_NARGS_I_(__VA_ARGS__, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define UEB_NARGS_I_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, n, ...) n
#define UEB_MAP_(m, f, ...) UEB_CAT_(UEB_MAP_, UEB_NARGS_(__VA_ARGS__))(m, f, __VA_ARGS__)
#define UEB_MAP_1(m, f, x) f(x)
#define UEB_MAP_2(m, f, x, ...) f(x) UEB_MAP_1(m, m, __VA_ARGS__)
#define UEB_MAP_3(m, f, x, ...) f(x) UEB_MAP_2(m, m, __VA_ARGS__)
#define UEB_MAP_4(m, f, x, ...) f(x) UEB_MAP_3(m, m, __VA_ARGS__)
#define UEB_MAP_5(m, f, x, ...) f(x) UEB_MAP_4(m, m, __VA_ARGS__)
#define UEB_MAP_6(m, f, x, ...) f(x) UEB_MAP_5(m, m, __VA_ARGS__)
#define UEB_MAP_7(m, f, x, ...) f(x) UEB_MAP_6(m, m, __VA_ARGS__)
#define UEB_MAP_8(m, f, x, ...) f(x) UEB_MAP_7(m, m, __VA_ARGS__)
#define UEB_MAP_9(m, f, x, ...) f(x) UEB_MAP_8(m, m, __VA_ARGS__)
#define UEB_MAP_10(m, f, x, ...) f(x) UEB_MAP_9(m, m, __VA_ARGS__)
#define UEB_MAP_11(m, f, x, ...) f(x) UEB_MAP_10(m, m, __VA_ARGS__)
#define UEB_MAP_12(m, f, x, ...) f(x) UEB_MAP_11(m, m, __VA_ARGS__)
#define UEB_MAP_13(m, f, x, ...) f(x) UEB_MAP_12(m, m, __VA_ARGS__)
#define UEB_MAP_14(m, f, x, ...) f(x) UEB_MAP_13(m, m, __VA_ARGS__)
#define UEB_MAP_15(m, f, x, ...) f(x) UEB_MAP_14(m, m, __VA_ARGS__)
#define UEB_MAP_16(m, f, x, ...) f(x) UEB_MAP_15(m, m, __VA_ARGS__)

/* A program need not call every generated function (clang warns about
 * unused static inline functions of the main file). */
#define UEB_UNUSED_ __attribute__((unused))

#define UEB_EVENT(name, ...)                                                                                  \
        enum { ueb_n_fields_##name = UEB_NARGS_(__VA_ARGS__) };                                               \
        UEB_UNUSED_ static inline const char *ueb_definition_##name(void) {                                               \
                return #name UEB_MAP_(UEB_TEXT_NEXT_, UEB_TEXT_FIRST_, __VA_ARGS__);                           \
        }                                                                                                     \
        UEB_UNUSED_ static inline int ueb_register_##name(struct ueb_client *ueb_client_, struct ueb_event **ueb_ret_) {  \
                return ueb_register(ueb_client_, ueb_definition_##name(), ueb_ret_);                          \
        }                                                                                                     \
        UEB_UNUSED_ static inline void ueb_values_##name(                                                                 \
                struct ueb_value *ueb_out_ UEB_MAP_(UEB_PARAM_EACH_, UEB_PARAM_EACH_, __VA_ARGS__)) {          \
                const struct ueb_value ueb_values_[] = { UEB_MAP_(UEB_VALUE_EACH_, UEB_VALUE_EACH_,            \
                                                                  __VA_ARGS__) };                             \
                memcpy(ueb_out_, ueb_values_, sizeof(ueb_values_));                                           \
        }                                                                                                     \
        UEB_UNUSED_ static inline int ueb_write_##name(                                                                   \
                struct ueb_event *ueb_event_ UEB_MAP_(UEB_PARAM_EACH_, UEB_PARAM_EACH_, __VA_ARGS__)) {        \
                struct ueb_value ueb_values_[ueb_n_fields_##name];                                            \
                ueb_values_##name(ueb_values_ UEB_MAP_(UEB_ARG_EACH_, UEB_ARG_EACH_, __VA_ARGS__));            \
                return ueb_write_values(ueb_event_, ueb_values_, ueb_n_fields_##name);                        \
        }
