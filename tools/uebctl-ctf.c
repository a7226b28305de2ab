/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* uebctl record -o DIR: a CTF trace through libbabeltrace2 (uebctl-ctf.h).
 *
 * A babeltrace2 graph of two components: our source, which turns records
 * into trace IR messages, and the ctf plugin's sink.ctf.fs, which writes
 * them. The graph pulls: each added record is held until the sink has taken
 * it (bt_graph_run_once() until our iterator has nothing), so nothing piles
 * up here. */
#include "uebctl-ctf.h"
#include "array.h"
#include "time-util.h"

#include <babeltrace2/babeltrace.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


/* An event class per event name, made when its first record arrives. */
struct ctf_event_class {
        char *name;
        bt_event_class *event_class;
};

struct ctf_writer {
        bt_graph *graph;
        const bt_plugin *ctf_plugin;
        bt_component_class_source *source_class;
        bt_message_iterator_class *iterator_class;

        /* Trace IR, made by the source component at its initialization. */
        bt_trace_class *trace_class;
        bt_stream_class *stream_class;
        bt_clock_class *clock_class;
        bt_field_class *common_context_class;
        bt_trace *trace;
        bt_stream *stream;
        bt_packet *packet;

        struct ctf_event_class *classes;
        size_t n_classes;
        size_t allocated_classes;

        /* The record the iterator hands out next, if any. */
        bool pending;
        const struct ueb_record_header *h;
        const char *name;
        size_t name_len;
        const uint8_t *payload;
        size_t payload_len;
        const struct event_def *def;

        /* LOST notices, an event of their own (ctf_writer_add_lost()). */
        struct event_def *lost_def;
        uint64_t lost;
        uint64_t last_ns;       /* the latest timestamp handed out: the clock never goes back */

        int state;              /* enum stream_state */
        bool finishing;         /* send the ends, then END */
        bool failed;
        uint64_t written;
        uint64_t skipped;
};

/* What babeltrace2 said went wrong, on stderr; its error is released. */
static void report_bt_error(const char *what) {
        const bt_error *error = bt_current_thread_take_error();
        const char *cause = NULL;

        if (error && bt_error_get_cause_count(error) > 0)
                cause = bt_error_cause_get_message(bt_error_borrow_cause_by_index(error, 0));
        fprintf(stderr, "error: %s%s%s\n", what, cause ? ": " : "", cause ?: "");
        if (error)
                bt_error_release(error);
}

static bt_field_class *integer_class(bt_trace_class *tc, bool is_signed, unsigned bits) {
        bt_field_class *fc = is_signed ? bt_field_class_integer_signed_create(tc) :
                                         bt_field_class_integer_unsigned_create(tc);

        if (fc)
                bt_field_class_integer_set_field_value_range(fc, bits);
        return fc;
}

static bt_field_class *bytes_class(bt_trace_class *tc, uint64_t static_length) {
        bt_field_class *byte = integer_class(tc, false, 8), *fc;

        if (!byte)
                return NULL;
        bt_field_class_integer_set_preferred_display_base(byte, BT_FIELD_CLASS_INTEGER_PREFERRED_DISPLAY_BASE_HEXADECIMAL);
        fc = static_length ? bt_field_class_array_static_create(tc, byte, static_length) :
                             bt_field_class_array_dynamic_create(tc, byte, NULL);
        bt_field_class_put_ref(byte);
        return fc;
}

static bt_field_class *field_class_of(bt_trace_class *tc, const struct event_field *f) {
        switch (f->kind) {
        case EVENT_FIELD_SCALAR:
                return integer_class(tc, f->is_signed, f->size * 8);
        case EVENT_FIELD_ARRAY:
                return f->is_char ? bt_field_class_string_create(tc) : bytes_class(tc, f->size);
        case EVENT_FIELD_DATA_LOC:
        case EVENT_FIELD_REL_LOC:
                return f->is_char ? bt_field_class_string_create(tc) : bytes_class(tc, 0);
        case EVENT_FIELD_STRUCT:
                return bytes_class(tc, f->size);
        }
        return NULL;
}

static bt_event_class *create_event_class(struct ctf_writer *w, const char *name, const struct event_def *def) {
        bt_field_class *payload = bt_field_class_structure_create(w->trace_class);
        bt_event_class *ec = NULL;
        bool ok = payload != NULL;

        for (size_t i = 0; ok && i < def->n_fields; i++) {
                bt_field_class *member = field_class_of(w->trace_class, &def->fields[i]);

                ok = member && bt_field_class_structure_append_member(payload, def->fields[i].name, member) ==
                                       BT_FIELD_CLASS_STRUCTURE_APPEND_MEMBER_STATUS_OK;
                bt_field_class_put_ref(member);
        }
        if (ok)
                ec = bt_event_class_create(w->stream_class);
        ok = ec && bt_event_class_set_name(ec, name) == BT_EVENT_CLASS_SET_NAME_STATUS_OK &&
             bt_event_class_set_payload_field_class(ec, payload) == BT_EVENT_CLASS_SET_FIELD_CLASS_STATUS_OK;
        bt_field_class_put_ref(payload);
        if (!ok) {
                bt_event_class_put_ref(ec);
                return NULL;
        }
        return ec;
}

/* The event class of @name, made from @def the first time. */
static bt_event_class *event_class_for(struct ctf_writer *w, const char *name, size_t name_len,
                                       const struct event_def *def) {
        struct ctf_event_class *c;

        for (size_t i = 0; i < w->n_classes; i++)
                if (strlen(w->classes[i].name) == name_len && memcmp(w->classes[i].name, name, name_len) == 0)
                        return w->classes[i].event_class;
        if (ARRAY_RESERVE(w->classes, w->allocated_classes, w->n_classes + 1) < 0)
                return NULL;
        c = &w->classes[w->n_classes];
        c->name = strndup(name, name_len);
        if (!c->name)
                return NULL;
        c->event_class = create_event_class(w, c->name, def);
        if (!c->event_class) {
                free(c->name);
                return NULL;
        }
        w->n_classes++;
        return c->event_class;
}

static uint64_t read_uint(const uint8_t *p, uint32_t size) {
        uint8_t v8;
        uint16_t v16;
        uint32_t v32;
        uint64_t v64;

        switch (size) {
        case 1:
                memcpy(&v8, p, 1);
                return v8;
        case 2:
                memcpy(&v16, p, 2);
                return v16;
        case 4:
                memcpy(&v32, p, 4);
                return v32;
        default:
                memcpy(&v64, p, 8);
                return v64;
        }
}

static int64_t sign_extend(uint64_t u, uint32_t size) {
        unsigned shift = 64 - size * 8;

        return shift ? (int64_t) (u << shift) >> shift : (int64_t) u;
}

static bool set_bytes(bt_field *field, const uint8_t *bytes, size_t n, bool dynamic) {
        if (dynamic && bt_field_array_dynamic_set_length(field, n) != BT_FIELD_DYNAMIC_ARRAY_SET_LENGTH_STATUS_OK)
                return false;
        for (size_t i = 0; i < n; i++)
                bt_field_integer_unsigned_set_value(bt_field_array_borrow_element_field_by_index(field, i), bytes[i]);
        return true;
}

static bool set_string(bt_field *field, const uint8_t *s, size_t n) {
        const uint8_t *nul = memchr(s, '\0', n);

        bt_field_string_clear(field);
        return bt_field_string_append_with_length(field, (const char *) s, nul ? (uint64_t) (nul - s) : n) ==
               BT_FIELD_STRING_APPEND_STATUS_OK;
}

/* Fills the event's payload from the record's (validated) bytes. */
static bool fill_payload(bt_field *payload_field, const struct event_def *def, const uint8_t *payload, size_t len) {
        for (size_t i = 0; i < def->n_fields; i++) {
                const struct event_field *f = &def->fields[i];
                bt_field *field = bt_field_structure_borrow_member_field_by_index(payload_field, i);
                const uint8_t *p = payload + (f->offset - EVENT_COMMON_HEADER_SIZE);
                size_t off = 0, size = 0;
                bool ok = true;

                switch (f->kind) {
                case EVENT_FIELD_SCALAR:
                        if (f->is_signed)
                                bt_field_integer_signed_set_value(field, sign_extend(read_uint(p, f->size), f->size));
                        else
                                bt_field_integer_unsigned_set_value(field, read_uint(p, f->size));
                        break;
                case EVENT_FIELD_ARRAY:
                        ok = f->is_char ? set_string(field, p, f->size) : set_bytes(field, p, f->size, false);
                        break;
                case EVENT_FIELD_DATA_LOC:
                case EVENT_FIELD_REL_LOC:
                        if (event_field_dynamic_span(f, payload, len, &off, &size) < 0)
                                return false;
                        ok = f->is_char ? set_string(field, payload + off, size) :
                                          set_bytes(field, payload + off, size, true);
                        break;
                case EVENT_FIELD_STRUCT:
                        ok = set_bytes(field, p, f->size, false);
                        break;
                }
                if (!ok)
                        return false;
        }
        return true;
}

/* The pending record as an event message; NULL if it cannot be made. */
static const bt_message *event_message(struct ctf_writer *w, bt_self_message_iterator *self) {
        bt_event_class *ec = event_class_for(w, w->name, w->name_len, w->def);
        bt_message *msg;
        bt_event *event;
        bt_field *context;

        if (!ec)
                return NULL;
        msg = bt_message_event_create_with_packet_and_default_clock_snapshot(self, ec, w->packet,
                                                                             w->h->timestamp_ns);
        if (!msg)
                return NULL;
        event = bt_message_event_borrow_event(msg);
        context = bt_event_borrow_common_context_field(event);
        bt_field_integer_unsigned_set_value(bt_field_structure_borrow_member_field_by_index(context, 0), w->h->pid);
        bt_field_integer_unsigned_set_value(bt_field_structure_borrow_member_field_by_index(context, 1), w->h->uid);
        if (!fill_payload(bt_event_borrow_payload_field(event), w->def, w->payload, w->payload_len)) {
                bt_message_put_ref(msg);
                return NULL;
        }
        return msg;
}

/* Where the stream stands: each state's message is sent once, in order. */
enum stream_state {
        STREAM_NEW,
        STREAM_BEGUN,           /* stream beginning sent */
        STREAM_IN_PACKET,       /* packet beginning sent: events may follow */
        STREAM_PACKET_ENDED,
        STREAM_ENDED,
};

static const bt_message *next_message(struct ctf_writer *w, bt_self_message_iterator *self) {
        const bt_message *msg;

        switch (w->state) {
        case STREAM_NEW:
                msg = bt_message_stream_beginning_create(self, w->stream);
                break;
        case STREAM_BEGUN:
                msg = bt_message_packet_beginning_create(self, w->packet);
                break;
        case STREAM_IN_PACKET:
                if (w->pending) {
                        w->pending = false;
                        msg = event_message(w, self);
                        if (msg)
                                w->written++;
                        else
                                w->skipped++;
                        return msg;
                }
                if (!w->finishing)
                        return NULL;
                msg = bt_message_packet_end_create(self, w->packet);
                break;
        case STREAM_PACKET_ENDED:
                msg = bt_message_stream_end_create(self, w->stream);
                break;
        default:
                return NULL;
        }
        if (msg)
                w->state++;
        return msg;
}

static bt_message_iterator_class_next_method_status iterator_next(bt_self_message_iterator *self,
                                                                   bt_message_array_const messages,
                                                                   uint64_t capacity, uint64_t *count) {
        struct ctf_writer *w = bt_self_component_get_data(bt_self_message_iterator_borrow_component(self));
        uint64_t n = 0;

        if (w->state == STREAM_ENDED)
                return BT_MESSAGE_ITERATOR_CLASS_NEXT_METHOD_STATUS_END;
        while (n < capacity && w->state != STREAM_ENDED) {
                bool had_record = w->pending && w->state == STREAM_IN_PACKET;
                const bt_message *msg = next_message(w, self);

                if (msg)
                        messages[n++] = msg;
                else if (!had_record)
                        break;          /* nothing more to hand out now */
        }
        *count = n;
        return n > 0 ? BT_MESSAGE_ITERATOR_CLASS_NEXT_METHOD_STATUS_OK : BT_MESSAGE_ITERATOR_CLASS_NEXT_METHOD_STATUS_AGAIN;
}

/* The trace IR: one clock (ns since the epoch), one stream class with the
 * common context { pid, uid }, one stream, one packet. */
static bool create_trace_ir(struct ctf_writer *w, bt_self_component *self) {
        bt_field_class *pid, *uid;
        bool ok;

        w->trace_class = bt_trace_class_create(self);
        w->clock_class = bt_clock_class_create(self);
        if (!w->trace_class || !w->clock_class)
                return false;
        bt_trace_class_set_assigns_automatic_stream_class_id(w->trace_class, BT_TRUE);
        bt_clock_class_set_frequency(w->clock_class, 1000000000u);
        bt_clock_class_set_origin_is_unix_epoch(w->clock_class, BT_TRUE);
        if (bt_clock_class_set_name(w->clock_class, "realtime") != BT_CLOCK_CLASS_SET_NAME_STATUS_OK)
                return false;

        w->stream_class = bt_stream_class_create(w->trace_class);
        if (!w->stream_class)
                return false;
        bt_stream_class_set_supports_packets(w->stream_class, BT_TRUE, BT_FALSE, BT_FALSE);
        if (bt_stream_class_set_default_clock_class(w->stream_class, w->clock_class) !=
            BT_STREAM_CLASS_SET_DEFAULT_CLOCK_CLASS_STATUS_OK)
                return false;

        w->common_context_class = bt_field_class_structure_create(w->trace_class);
        pid = integer_class(w->trace_class, false, 32);
        uid = integer_class(w->trace_class, false, 32);
        ok = w->common_context_class && pid && uid &&
             bt_field_class_structure_append_member(w->common_context_class, "pid", pid) ==
                     BT_FIELD_CLASS_STRUCTURE_APPEND_MEMBER_STATUS_OK &&
             bt_field_class_structure_append_member(w->common_context_class, "uid", uid) ==
                     BT_FIELD_CLASS_STRUCTURE_APPEND_MEMBER_STATUS_OK &&
             bt_stream_class_set_event_common_context_field_class(w->stream_class, w->common_context_class) ==
                     BT_STREAM_CLASS_SET_FIELD_CLASS_STATUS_OK;
        bt_field_class_put_ref(pid);
        bt_field_class_put_ref(uid);
        if (!ok)
                return false;

        w->trace = bt_trace_create(w->trace_class);
        w->stream = w->trace ? bt_stream_create(w->stream_class, w->trace) : NULL;
        w->packet = w->stream ? bt_packet_create(w->stream) : NULL;
        return w->packet != NULL;
}

static bt_component_class_initialize_method_status source_initialize(bt_self_component_source *self,
                                                                      bt_self_component_source_configuration *config,
                                                                      const bt_value *params, void *data) {
        struct ctf_writer *w = data;
        bt_self_component *component = bt_self_component_source_as_self_component(self);

        bt_self_component_set_data(component, w);
        if (!create_trace_ir(w, component))
                return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_MEMORY_ERROR;
        if (bt_self_component_source_add_output_port(self, "out", NULL, NULL) !=
            BT_SELF_COMPONENT_ADD_PORT_STATUS_OK)
                return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_ERROR;
        return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_OK;
}

static void ctf_writer_free(struct ctf_writer *w) {
        /* The graph first: the sink finishes its files as it goes. */
        bt_graph_put_ref(w->graph);
        for (size_t i = 0; i < w->n_classes; i++) {
                free(w->classes[i].name);
                bt_event_class_put_ref(w->classes[i].event_class);
        }
        free(w->classes);
        event_def_free(w->lost_def);
        bt_packet_put_ref(w->packet);
        bt_stream_put_ref(w->stream);
        bt_trace_put_ref(w->trace);
        bt_field_class_put_ref(w->common_context_class);
        bt_stream_class_put_ref(w->stream_class);
        bt_clock_class_put_ref(w->clock_class);
        bt_trace_class_put_ref(w->trace_class);
        bt_component_class_source_put_ref(w->source_class);
        bt_message_iterator_class_put_ref(w->iterator_class);
        bt_plugin_put_ref(w->ctf_plugin);
        free(w);
}

static int build_graph(struct ctf_writer *w, const char *path) {
        const bt_component_class_sink *sink_class;
        const bt_component_source *source;
        const bt_component_sink *sink;
        bt_value *params;
        int ok;

        if (bt_plugin_find("ctf", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, &w->ctf_plugin) !=
            BT_PLUGIN_FIND_STATUS_OK) {
                report_bt_error("cannot find babeltrace2's ctf plugin (package babeltrace2 or libbabeltrace2-0)");
                return -ENOENT;
        }
        sink_class = bt_plugin_borrow_sink_component_class_by_name_const(w->ctf_plugin, "fs");
        w->iterator_class = bt_message_iterator_class_create(iterator_next);
        w->source_class = w->iterator_class ? bt_component_class_source_create("uebctl-record", w->iterator_class) :
                                              NULL;
        w->graph = bt_graph_create(0);
        if (!sink_class || !w->source_class || !w->graph ||
            bt_component_class_source_set_initialize_method(w->source_class, source_initialize) !=
                    BT_COMPONENT_CLASS_SET_METHOD_STATUS_OK)
                return -ENOMEM;

        params = bt_value_map_create();
        /* The trace directly in @path, and no "Created CTF trace" line on
         * our stdout. */
        ok = params && bt_value_map_insert_string_entry(params, "path", path) == BT_VALUE_MAP_INSERT_ENTRY_STATUS_OK &&
             bt_value_map_insert_bool_entry(params, "assume-single-trace", BT_TRUE) ==
                     BT_VALUE_MAP_INSERT_ENTRY_STATUS_OK &&
             bt_value_map_insert_bool_entry(params, "quiet", BT_TRUE) == BT_VALUE_MAP_INSERT_ENTRY_STATUS_OK;
        ok = ok && bt_graph_add_sink_component(w->graph, sink_class, "sink", params, BT_LOGGING_LEVEL_WARNING, &sink) ==
                           BT_GRAPH_ADD_COMPONENT_STATUS_OK;
        bt_value_put_ref(params);
        if (!ok) {
                report_bt_error("cannot create babeltrace2's sink.ctf.fs");
                return -EIO;
        }
        if (bt_graph_add_source_component_with_initialize_method_data(w->graph, w->source_class, "source", NULL, w,
                                                                      BT_LOGGING_LEVEL_WARNING, &source) !=
                    BT_GRAPH_ADD_COMPONENT_STATUS_OK ||
            bt_graph_connect_ports(w->graph, bt_component_source_borrow_output_port_by_index_const(source, 0),
                                   bt_component_sink_borrow_input_port_by_index_const(sink, 0), NULL) !=
                    BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
                report_bt_error("cannot connect the record source to sink.ctf.fs");
                return -EIO;
        }
        return 0;
}

int ctf_writer_new(const char *path, struct ctf_writer **ret) {
        struct ctf_writer *w = calloc(1, sizeof(*w));
        int r;

        if (!w) {
                fprintf(stderr, "error: out of memory\n");
                return -ENOMEM;
        }
        r = build_graph(w, path);
        if (r < 0) {
                if (r == -ENOMEM)
                        fprintf(stderr, "error: out of memory\n");
                ctf_writer_free(w);
                return r;
        }
        *ret = w;
        return 0;
}

/* Runs the graph until our iterator has nothing to hand out (or, when
 * finishing, until the sink is done). */
static int run(struct ctf_writer *w) {
        /* Bounded: a sink that keeps answering "again" without taking
         * anything is a failure, not a reason to spin. */
        for (unsigned again = 0; again < 10000; again++) {
                bt_graph_run_once_status s = bt_graph_run_once(w->graph);

                if (s == BT_GRAPH_RUN_ONCE_STATUS_END)
                        return 0;
                if (s != BT_GRAPH_RUN_ONCE_STATUS_OK && s != BT_GRAPH_RUN_ONCE_STATUS_AGAIN) {
                        report_bt_error("writing the CTF trace failed");
                        w->failed = true;
                        return -EIO;
                }
                /* The sink took the record (and the beginnings before it). */
                if (!w->pending && !w->finishing && w->state == STREAM_IN_PACKET)
                        return 0;
                if (s == BT_GRAPH_RUN_ONCE_STATUS_OK)
                        again = 0;
        }
        fprintf(stderr, "error: babeltrace2's sink.ctf.fs stopped taking records\n");
        w->failed = true;
        return -EIO;
}

int ctf_writer_add(struct ctf_writer *w, const struct ueb_record_header *h, const char *name, size_t name_len,
                   const uint8_t *payload, size_t payload_len, const struct event_def *def) {
        if (w->failed)
                return -EIO;
        if (!def || event_def_validate_payload(def, payload, payload_len) < 0) {
                w->skipped++;
                return 0;
        }
        w->pending = true;
        w->h = h;
        w->name = name;
        w->name_len = name_len;
        w->payload = payload;
        w->payload_len = payload_len;
        w->def = def;
        if (h->timestamp_ns > w->last_ns)
                w->last_ns = h->timestamp_ns;
        return run(w);
}

int ctf_writer_add_lost(struct ctf_writer *w, const struct ueb_record_header *notice) {
        static const char name[] = CTF_LOST_EVENT_NAME;
        struct ueb_record_header h = *notice;
        uint8_t payload[sizeof(uint64_t)];
        uint64_t count = notice->lost_count;
        int r;

        if (w->failed)
                return -EIO;
        if (!w->lost_def) {
                r = event_def_parse("lost u64 count", 0, &w->lost_def, NULL);
                if (r < 0)
                        return r;
        }
        uint64_t written = w->written, skipped = w->skipped;

        memcpy(payload, &count, sizeof(count));        /* as writers lay out a u64: host order */
        /* A notice carries no time of its own: when it arrived, and never
         * before a record already written (the trace's clock is monotonic). */
        h.timestamp_ns = clock_ns(CLOCK_REALTIME);
        if (h.timestamp_ns < w->last_ns)
                h.timestamp_ns = w->last_ns;
        w->last_ns = h.timestamp_ns;
        w->lost += count;
        w->pending = true;
        w->h = &h;
        w->name = name;
        w->name_len = sizeof(name) - 1;
        w->payload = payload;
        w->payload_len = sizeof(payload);
        w->def = w->lost_def;
        r = run(w);
        /* A notice, not a record: counted in lost only. */
        w->written = written;
        w->skipped = skipped;
        return r;
}

uint64_t ctf_writer_lost(const struct ctf_writer *w) {
        return w->lost;
}

int ctf_writer_finish(struct ctf_writer *w) {
        int r = 0;

        if (!w)
                return 0;
        if (!w->failed) {
                w->finishing = true;
                r = run(w);
        }
        ctf_writer_free(w);
        return r;
}

uint64_t ctf_writer_written(const struct ctf_writer *w) {
        return w->written;
}

uint64_t ctf_writer_skipped(const struct ctf_writer *w) {
        return w->skipped;
}
