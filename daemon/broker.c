/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <systemd/sd-id128.h>

#include "broker.h"
#include "bus-caller.h"
#include "cleanup.h"
#include "config.h"
#include "fd-util.h"
#include "log.h"
#include "polkit.h"
#include "session.h"
#include "status-text.h"

static unsigned broker_max_events(const struct broker *b) {
        return b->limits.events < STATUS_INDEX_MAX ? b->limits.events : STATUS_INDEX_MAX;
}

static const char *config_name(const struct broker *b) {
        return b->config_path ?: BROKER_CONFIG_DEFAULT_PATH;
}

static void emit_active_events_changed(struct broker *b) {
        int r = sd_bus_emit_properties_changed(b->bus, BROKER_OBJECT_PATH, BROKER_INTERFACE, "ActiveEvents", NULL);

        if (r < 0)
                log_debug_errno(r, "Cannot emit PropertiesChanged for ActiveEvents: %m");
}

/* Length bounds, the grammar's first: a command longer than the grammar
 * allows is invalid whatever the configuration, one within it but over
 * CommandLength= exceeds a configured limit. */
static int check_command_length(struct broker *b, size_t len, sd_bus_error *error) {
        if (len > EVENT_COMMAND_MAX)
                return 0;       /* the parser names it */
        if (len > b->limits.command_length)
                return sd_bus_error_setf(error, BROKER_ERROR_QUOTA_EXCEEDED,
                                         "command is %zu bytes, longer than %u (CommandLength= in %s)",
                                         len, b->limits.command_length, config_name(b));
        return 0;
}

/* The SPEC.md grammar allows "u:name ...", which would silently create an
 * event called "u" with the flag "name": refuse it with what to write. */
static int check_no_prefix(const char *command, sd_bus_error *error) {
        if (strncmp(command, "u:", 2) != 0)
                return 0;
        return sd_bus_error_setf(error, BROKER_ERROR_INVALID_COMMAND,
                                 "commands take no 'u:' prefix: write '%s'", command + 2);
}

static int method_register(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct broker *b = userdata;
        _cleanup_(event_def_freep) struct event_def *def = NULL;
        struct event_error parse_error = { 0 };
        struct broker_event *ev, *victim = NULL;
        struct session *s;
        const char *command, *sender, *action;
        bool created_session = false, created_event = false;
        uint32_t write_index;
        uid_t uid;
        pid_t pid;
        size_t len;
        int r;

        /* Read and validate. */
        r = sd_bus_message_read(m, "s", &command);
        if (r < 0)
                return r;
        len = strlen(command);
        r = check_command_length(b, len, error);
        if (r < 0)
                return r;
        r = check_no_prefix(command, error);
        if (r < 0)
                return r;
        r = event_def_parse_n(command, len, 0, &def, &parse_error);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return sd_bus_error_set(error, BROKER_ERROR_INVALID_COMMAND, parse_error.message);

        sender = sd_bus_message_get_sender(m);
        if (!sender)
                return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED,
                                        "the call carries no sender name: call the broker through the message bus, "
                                        "not over a direct connection");
        s = session_find(b, sender);
        if (s) {
                uid = s->uid;
                pid = s->pid;
        } else {
                r = bus_caller_identify(m, &uid, &pid);
                if (r >= 0 && pid <= 0)
                        r = -ENODATA;   /* a session needs the writer's pid for its records */
                if (r < 0)
                        return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
                                                 "the caller cannot be identified: the bus gave no uid and pid for it (%s)",
                                                 strerror(-r));
        }

        ev = event_registry_find(&b->registry, def->name);
        if (ev && !event_def_equal(ev->def, def)) {
                _cleanup_free_ char *existing = event_def_canonical(ev->def);

                return sd_bus_error_setf(error, BROKER_ERROR_NAME_IN_USE,
                                         "event %s exists with other fields: %s; register it with exactly those "
                                         "fields or choose another name", def->name, existing ?: "(out of memory)");
        }

        /* Authorize. */
        action = ev && ev->owner_uid != uid ? "org.uebroker1.register-foreign" : "org.uebroker1.register";
        r = polkit_check(b->polkit, m, action, sd_bus_message_get_allow_interactive_authorization(m) > 0, error);
        if (r < 0)
                return r;
        if (r == 0)
                return 1;       /* re-run when polkit answers */

        /* Quotas, then change state. */
        if (s && ev && session_find_registration(s, ev, &write_index) == 0)
                goto reply;
        if (!s && session_count_for_uid(b, uid) >= b->limits.clients_per_user)
                return sd_bus_error_setf(error, BROKER_ERROR_QUOTA_EXCEEDED,
                                         "uid %u already has %u connections holding registrations (ClientsPerUser= in %s)",
                                         (unsigned) uid, b->limits.clients_per_user, config_name(b));
        if (s && s->n_registrations >= b->limits.events_per_client)
                return sd_bus_error_setf(error, BROKER_ERROR_QUOTA_EXCEEDED,
                                         "this connection already holds %u registrations (EventsPerClient= in %s)",
                                         b->limits.events_per_client, config_name(b));
        /* A new event, or an unused one of the caller's, puts one more of
         * the caller's events in use. */
        if ((!ev || (ev->owner_uid == uid && !broker_event_in_use(&b->registry, ev))) &&
            event_registry_count_in_use(&b->registry, uid) >= b->limits.events_per_user)
                return sd_bus_error_setf(error, BROKER_ERROR_QUOTA_EXCEEDED,
                                         "uid %u already has %u events in use (EventsPerUser= in %s); unregister "
                                         "events it no longer writes or close connections holding them",
                                         (unsigned) uid, b->limits.events_per_user, config_name(b));
        if (!ev && b->registry.n_events >= broker_max_events(b)) {
                victim = event_registry_find_evictable(&b->registry);
                if (!victim)
                        return sd_bus_error_setf(error, BROKER_ERROR_QUOTA_EXCEEDED,
                                                 "the broker already holds %u events, all in use (Events= in %s)",
                                                 broker_max_events(b), config_name(b));
        }

        if (!s) {
                r = session_new(b, sender, uid, pid, &s);
                if (r < 0)
                        return sd_bus_error_set_errnof(error, r, "cannot create a session: %m");
                created_session = true;
        }
        if (!ev) {
                if (victim) {
                        log_info("Event %s (status index %u, owner uid %u) evicted to make room for %s: the table "
                                 "is full and it is the least recently used unused event.",
                                 victim->def->name, victim->status_index, (unsigned) victim->owner_uid, def->name);
                        event_registry_remove(&b->registry, victim);
                        emit_active_events_changed(b);
                }
                r = event_registry_add(&b->registry, def, uid, &ev);
                if (r == -ENOSPC)
                        sd_bus_error_setf(error, BROKER_ERROR_QUOTA_EXCEEDED,
                                          "cannot create event %s: every status index is in use; Delete unused events",
                                          def->name);
                else if (r < 0)
                        sd_bus_error_set_errnof(error, r, "cannot create event %s: %m", def->name);
                if (r < 0)
                        goto fail;
                def = NULL;     /* owned by the registry now */
                created_event = true;
        }
        r = session_register(s, ev, &write_index);
        if (r == -ENOSPC)
                sd_bus_error_setf(error, BROKER_ERROR_QUOTA_EXCEEDED,
                                  "cannot register event %s: too many distinct events on this connection (%u); "
                                  "reconnect", ev->def->name, SESSION_SLOTS_MAX);
        else if (r < 0)
                sd_bus_error_set_errnof(error, r, "cannot register event %s: %m", ev->def->name);
        if (r < 0)
                goto fail;
        if (created_event) {
                log_info("Event %s created by uid %u (pid %d) with status index %u.", ev->def->name,
                         (unsigned) uid, (int) pid, ev->status_index);
                emit_active_events_changed(b);
        }

reply:
        event_registry_touch(&b->registry, ev);
        return sd_bus_reply_method_return(m, "hhuu",
                                          b->provider_ops->session_data_fd(s->provider_session),
                                          b->provider_ops->session_status_fd(s->provider_session),
                                          ev->status_index, write_index);

fail:
        if (created_event)
                event_registry_remove(&b->registry, ev);
        if (created_session)
                session_free(s);
        return r;
}

static int method_unregister(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct broker *b = userdata;
        struct session *s;
        uint32_t write_index;
        int r;

        r = sd_bus_message_read(m, "u", &write_index);
        if (r < 0)
                return r;

        /* Acts only on the caller's own registrations: nothing to authorize. */
        s = session_find(b, sd_bus_message_get_sender(m) ?: "");
        r = s ? session_unregister(s, write_index) : -ENOENT;
        if (r == -ENOENT)
                return sd_bus_error_setf(error, BROKER_ERROR_NO_SUCH_EVENT,
                                         "write index %u is not registered on this connection; pass a write_index "
                                         "that Register returned on this same connection", write_index);
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "cannot unregister write index %u: %m", write_index);

        return sd_bus_reply_method_return(m, NULL);
}

static bool event_name_plausible(const char *name) {
        size_t len = strlen(name);

        return len > 0 && len <= EVENT_NAME_MAX;
}

static int method_delete(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct broker *b = userdata;
        struct broker_event *ev;
        const char *name;
        int interactive, r;

        r = sd_bus_message_read(m, "sb", &name, &interactive);
        if (r < 0)
                return r;
        if (!event_name_plausible(name))
                return sd_bus_error_setf(error, BROKER_ERROR_NO_SUCH_EVENT,
                                         "no event has a name of %zu bytes (names are 1 to %u bytes)", strlen(name),
                                         (unsigned) EVENT_NAME_MAX);

        r = polkit_check(b->polkit, m, "org.uebroker1.delete", interactive, error);
        if (r < 0)
                return r;
        if (r == 0)
                return 1;

        ev = event_registry_find(&b->registry, name);
        if (!ev)
                return sd_bus_error_setf(error, BROKER_ERROR_NO_SUCH_EVENT,
                                         "no event is called %s (ListEvents shows the events that exist)", name);
        if (ev->n_registrations > 0)
                return sd_bus_error_setf(error, BROKER_ERROR_BUSY,
                                         "event %s still has %u registrations; delete it once the programs holding "
                                         "them unregister or disconnect", name, ev->n_registrations);
        if (ev->n_bound_sessions > 0)
                return sd_bus_error_setf(error, BROKER_ERROR_BUSY,
                                         "event %s is unregistered but its write index stays bound on %u connections "
                                         "(an index is never reused); delete it once they disconnect",
                                         name, ev->n_bound_sessions);
        if (broker_event_status(&b->registry, ev) != 0)
                return sd_bus_error_setf(error, BROKER_ERROR_BUSY,
                                         "event %s is being listened to; stop recording or tracing it first", name);

        log_info("Event %s (status index %u) deleted.", name, ev->status_index);
        event_registry_remove(&b->registry, ev);
        emit_active_events_changed(b);
        return sd_bus_reply_method_return(m, NULL);
}

static int method_list_events(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct broker *b = userdata;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_message_new_method_return(m, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "(ssuub)");
        if (r < 0)
                return r;
        for (uint32_t i = 1; i < STATUS_PAGE_SIZE; i++) {
                struct broker_event *ev = b->registry.by_index[i];
                _cleanup_free_ char *fields = NULL;

                if (!ev)
                        continue;
                fields = event_def_fields_text(ev->def);
                if (!fields)
                        return -ENOMEM;
                r = sd_bus_message_append(reply, "(ssuub)", ev->def->name, fields, (uint32_t) ev->owner_uid,
                                          ev->n_registrations, broker_event_status(&b->registry, ev) != 0);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

static int method_get_status(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct broker *b = userdata;
        _cleanup_free_ struct status_entry *entries = NULL;
        _cleanup_free_ char *text = NULL;
        size_t n = 0;

        entries = calloc(b->registry.n_events ?: 1, sizeof(*entries));
        if (!entries)
                return -ENOMEM;
        for (uint32_t i = 1; i < STATUS_PAGE_SIZE && n < b->registry.n_events; i++) {
                struct broker_event *ev = b->registry.by_index[i];

                if (!ev)
                        continue;
                entries[n++] = (struct status_entry) {
                        .index = ev->status_index,
                        .name = ev->def->name,
                        .status = broker_event_status(&b->registry, ev),
                };
        }
        text = status_text(entries, n, STATUS_MAX_EVENTS);
        if (!text)
                return -ENOMEM;
        return sd_bus_reply_method_return(m, "s", text);
}

static int method_record(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct broker *b = userdata;
        _cleanup_free_ struct provider_event **events = NULL;
        _cleanup_free_ const char **names = NULL;
        _cleanup_close_ int fd = -EBADF;
        size_t n = 0, allocated = 0;
        const char *name;
        int r;

        /* Read and validate: a bounded number of plausible names. */
        r = sd_bus_message_enter_container(m, 'a', "s");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_read(m, "s", &name)) > 0) {
                if (n >= STATUS_INDEX_MAX)
                        return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                                 "more than %u event names; ask for at most %u", STATUS_INDEX_MAX,
                                                 STATUS_INDEX_MAX);
                if (!event_name_plausible(name))
                        return sd_bus_error_setf(error, BROKER_ERROR_NO_SUCH_EVENT,
                                                 "no event has a name of %zu bytes (names are 1 to %u bytes)",
                                                 strlen(name), (unsigned) EVENT_NAME_MAX);
                if (n == allocated) {
                        const char **grown;

                        allocated = allocated ? allocated * 2 : 8;
                        grown = reallocarray(names, allocated, sizeof(*names));
                        if (!grown)
                                return -ENOMEM;
                        names = grown;
                }
                names[n++] = name;
        }
        if (r < 0)
                return r;
        r = sd_bus_message_exit_container(m);
        if (r < 0)
                return r;
        if (n == 0)
                return sd_bus_error_set(error, SD_BUS_ERROR_INVALID_ARGS,
                                        "no event names given; name at least one event to record");

        r = polkit_check(b->polkit, m, "org.uebroker1.record", sd_bus_message_get_allow_interactive_authorization(m) > 0,
                         error);
        if (r < 0)
                return r;
        if (r == 0)
                return 1;       /* re-run when polkit answers */

        events = calloc(n, sizeof(*events));
        if (!events)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                struct broker_event *ev = event_registry_find(&b->registry, names[i]);

                if (!ev)
                        return sd_bus_error_setf(error, BROKER_ERROR_NO_SUCH_EVENT,
                                                 "no event is called %s (ListEvents shows the events that exist)",
                                                 names[i]);
                events[i] = ev->provider_event;
                event_registry_touch(&b->registry, ev);
        }

        fd = b->provider_ops->record(b->provider, events, n);
        if (fd == -EOPNOTSUPP)
                return sd_bus_error_setf(error, BROKER_ERROR_NOT_SUPPORTED,
                                         "the %s provider does not record; use ftrace or perf", b->provider_ops->name);
        if (fd == -EUSERS)
                return sd_bus_error_set(error, BROKER_ERROR_QUOTA_EXCEEDED,
                                        "too many record streams are open; close one and try again");
        if (fd < 0)
                return sd_bus_error_set_errnof(error, fd, "cannot open a record stream: %m");

        /* The reply carries a dup; ours closes on return. */
        return sd_bus_reply_method_return(m, "h", fd);
}

static int property_get_version(sd_bus *bus, const char *path, const char *interface, const char *property,
                                sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return sd_bus_message_append(reply, "s", PACKAGE_VERSION);
}

static int property_get_provider(sd_bus *bus, const char *path, const char *interface, const char *property,
                                 sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        struct broker *b = userdata;

        return sd_bus_message_append(reply, "s", b->provider_ops->name);
}

static int property_get_max_events(sd_bus *bus, const char *path, const char *interface, const char *property,
                                   sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        struct broker *b = userdata;

        return sd_bus_message_append(reply, "u", broker_max_events(b));
}

static int property_get_active_events(sd_bus *bus, const char *path, const char *interface, const char *property,
                                      sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        struct broker *b = userdata;

        return sd_bus_message_append(reply, "u", b->registry.n_events);
}

static const sd_bus_vtable broker_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Version", "s", property_get_version, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Provider", "s", property_get_provider, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("MaxEvents", "u", property_get_max_events, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("ActiveEvents", "u", property_get_active_events, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_METHOD_WITH_NAMES("Register",
                                 "s", SD_BUS_PARAM(command),
                                 "hhuu", SD_BUS_PARAM(data_fd) SD_BUS_PARAM(status_fd)
                                         SD_BUS_PARAM(status_index) SD_BUS_PARAM(write_index),
                                 method_register, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("Unregister",
                                 "u", SD_BUS_PARAM(write_index),
                                 "", ,
                                 method_unregister, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("Delete",
                                 "sb", SD_BUS_PARAM(name) SD_BUS_PARAM(interactive),
                                 "", ,
                                 method_delete, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("ListEvents",
                                 "", ,
                                 "a(ssuub)", SD_BUS_PARAM(events),
                                 method_list_events, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("GetStatus",
                                 "", ,
                                 "s", SD_BUS_PARAM(status),
                                 method_get_status, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("Record",
                                 "as", SD_BUS_PARAM(names),
                                 "h", SD_BUS_PARAM(record_fd),
                                 method_record, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END
};

int broker_new(sd_event *event, sd_bus *bus, bool bus_is_system, const struct provider_ops *ops,
               const struct broker_limits *limits, const char *config_path, struct broker **ret) {
        struct broker *b;
        int r;

        b = calloc(1, sizeof(*b));
        if (!b)
                return -ENOMEM;
        b->event = sd_event_ref(event);
        b->bus = sd_bus_ref(bus);
        b->provider_ops = ops;
        b->limits = *limits;
        b->config_path = config_path;

        r = ops->new(event, &b->provider);
        if (r < 0) {
                log_error_errno(r, "Cannot start the %s provider: %m", ops->name);
                goto fail;
        }
        event_registry_init(&b->registry, ops, b->provider);

        r = polkit_registry_new(bus, bus_is_system, &b->polkit);
        if (r < 0) {
                log_error_errno(r, "Cannot set up polkit checks: %m");
                goto fail;
        }

        r = sd_bus_add_object_vtable(bus, &b->object_slot, BROKER_OBJECT_PATH, BROKER_INTERFACE, broker_vtable, b);
        if (r < 0) {
                log_error_errno(r, "Cannot add the bus object: %m");
                goto fail;
        }

        *ret = b;
        return 0;

fail:
        broker_free(b);
        return r;
}

struct broker *broker_free(struct broker *b) {
        if (!b)
                return NULL;

        sd_bus_slot_unref(b->object_slot);
        session_free_all(b);
        if (b->provider) {
                event_registry_done(&b->registry);
                b->provider = b->provider_ops->free(b->provider);
        }
        polkit_registry_free(b->polkit);
        sd_bus_unref(b->bus);
        sd_event_unref(b->event);
        free(b);
        return NULL;
}

/* Introspection without a bus */

static int on_introspect_reply(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        char **xml = userdata;
        const char *text;
        int r;

        if (sd_bus_message_is_method_error(m, NULL))
                return -sd_bus_message_get_errno(m) ?: -EIO;
        r = sd_bus_message_read(m, "s", &text);
        if (r < 0)
                return r;
        *xml = strdup(text);
        return *xml ? 0 : -ENOMEM;
}

int broker_introspect(char **ret_xml) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *server = NULL, *client = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL;
        char *xml = NULL;
        sd_id128_t id;
        int fds[2], r;

        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, fds) < 0)
                return -errno;

        r = sd_bus_new(&server);
        if (r < 0)
                goto fail_fds;
        r = sd_bus_new(&client);
        if (r < 0)
                goto fail_fds;
        r = sd_bus_set_fd(server, fds[0], fds[0]);
        if (r < 0)
                goto fail_fds;
        fds[0] = -EBADF;        /* the bus owns it now */
        r = sd_bus_set_fd(client, fds[1], fds[1]);
        if (r < 0)
                goto fail_fds;
        fds[1] = -EBADF;

        r = sd_id128_randomize(&id);
        if (r < 0)
                return r;
        r = sd_bus_set_server(server, 1, id);
        if (r < 0)
                return r;
        r = sd_bus_start(server);
        if (r < 0)
                return r;
        r = sd_bus_start(client);
        if (r < 0)
                return r;

        /* No broker behind the object: introspection never calls handlers. */
        r = sd_bus_add_object_vtable(server, NULL, BROKER_OBJECT_PATH, BROKER_INTERFACE, broker_vtable, NULL);
        if (r < 0)
                return r;

        r = sd_bus_message_new_method_call(client, &call, NULL, BROKER_OBJECT_PATH,
                                           "org.freedesktop.DBus.Introspectable", "Introspect");
        if (r < 0)
                return r;
        r = sd_bus_call_async(client, NULL, call, on_introspect_reply, &xml, 5 * 1000000ull);
        if (r < 0)
                return r;

        /* Both ends live in this process: turn the crank on each until the
         * reply is in. Bounded; each step waits at most 10 ms. */
        for (unsigned i = 0; i < 1000 && !xml; i++) {
                struct pollfd p[2] = {
                        { .fd = sd_bus_get_fd(server), .events = (short) sd_bus_get_events(server) },
                        { .fd = sd_bus_get_fd(client), .events = (short) sd_bus_get_events(client) },
                };
                int a, c;

                a = sd_bus_process(server, NULL);
                if (a < 0)
                        return a;
                c = sd_bus_process(client, NULL);
                if (c < 0)
                        return c;
                if (a == 0 && c == 0)
                        (void) poll(p, 2, 10);
        }
        if (!xml)
                return -ETIMEDOUT;
        *ret_xml = xml;
        return 0;

fail_fds:
        safe_close(fds[0]);
        safe_close(fds[1]);
        return r;
}
