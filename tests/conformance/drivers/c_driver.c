/*
 * c_driver.c — the C conformance driver (see tests/conformance/README.md).
 *
 *     c_driver CASE_JSON BASE_URL
 *
 * Reads the case, creates one agent from its `config` (with "base_url" set to BASE_URL unless
 * the case sets it), registers the case's `tools` with panto_agent_add_tool, runs each turn
 * and prints the normalized transcript, one JSON object per line. It reads the events in
 * batches (panto_next_events; the Lua driver reads them one by one with panto_next_event).
 * It collects the TOOL_CALL_STARTs that await a result; when the results are pending it runs
 * the round's calls on pthreads (a sequential call alone), forwards their progress
 * (panto_stream_tool_progress) and submits each result as it ends, from the main thread, then
 * reads on. A turn object (README, "Turn objects") may carry per-turn options
 * (PantoInput.options) and ask for a final helper (panto_stream_final_message /
 * panto_stream_final_json) instead of iterating. With `cancel_after_ms`
 * a pthread cancels the first turn's stream (panto_stream_cancel) that long after
 * panto_agent_run, while the main thread is blocked in panto_next_events; with `on_error` it
 * calls panto_agent_set_config and panto_stream_reopen after a turn's first error; with
 * `end_early` it closes the stream after K deltas (giving back the batch's unseen events
 * first), or frees it from another thread while the main thread is blocked; with
 * `print_conversation` it prints the conversation after the turns. A turn may be a list of
 * parts (text, or media read from the `media_path` the runner wrote) given as PantoPart array,
 * and a tool's `return_parts` are submitted the same way (content ""). A turn may also be a
 * step object (README, "Steps": set_config, export, reimport, import, import_text, truncate,
 * drop_last, rollback_turn, compact, session_info, reopen_agent, second_agent, fork, list_sessions,
 * append_to_session, count_tokens, list_models, mcp_status, spent), run between turns with the C function of its name. Exits 0
 * whenever it printed a transcript (even one ending in an error), 2 when it could not run
 * (bad arguments, unreadable or malformed case).
 *
 * With --async (`c_driver --async CASE_JSON BASE_URL`) every read steps instead
 * (panto_step_events in a poll() loop on the PantoWait it fills, README "The async mode"):
 * the same transcript, through the stepped path. A "final" turn is stepped to its end, then
 * panto_stream_final_message / _final_json read it; a stream freed by another thread while the
 * loop waits is not stepped again (the canceler frees it under its lock, which each step
 * holds), and its line is the canceled error a blocked next would have returned.
 *
 * Build: cc -std=c99 -Wall -Wextra -Werror -pedantic -pthread -Iinclude \
 *            tests/conformance/drivers/c_driver.c -Lzig-out/lib -lpanto
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "panto.h"
#include "c_json.h"

/* ---- Writing the transcript ---------------------------------------------------------- */

/* Writes s as a JSON string: UTF-8 passes through, quotes, backslashes and control
 * characters are escaped. */
static void put_json_string(const char *s, size_t len) {
    static const char hex[] = "0123456789abcdef";
    size_t i;
    putchar('"');
    for (i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"': fputs("\\\"", stdout); break;
        case '\\': fputs("\\\\", stdout); break;
        case '\n': fputs("\\n", stdout); break;
        case '\r': fputs("\\r", stdout); break;
        case '\t': fputs("\\t", stdout); break;
        case '\b': fputs("\\b", stdout); break;
        case '\f': fputs("\\f", stdout); break;
        default:
            if (c < 0x20 || c == 0x7f) {
                printf("\\u00%c%c", hex[c >> 4], hex[c & 15]);
            } else {
                putchar(c);
            }
        }
    }
    putchar('"');
}

static void put_pstr(PantoString s) { put_json_string(s.ptr ? s.ptr : "", s.ptr ? s.len : 0); }

static void put_cstr(const char *s) { put_json_string(s ? s : "", s ? strlen(s) : 0); }

static void end_line(void) {
    fputs("}\n", stdout);
    fflush(stdout); /* a line is visible at once, even if the next call hangs */
}

static void put_bool(int32_t v) { fputs(v ? "true" : "false", stdout); }

/* The case's print_error_detail and print_request_ids (README, "A case"). */
static int print_error_detail;
static int print_request_ids;
static int print_costs; /* the case's print_costs */

/* A fraction or retry_after: the number, or null when negative (none). */
static void put_number_or_null(double v) {
    if (v < 0) fputs("null", stdout);
    else printf("%.17g", v);
}

/* The event's usage; the server tools' counts (apart, at the event's end) only when not 0. */
static void put_usage(const PantoEvent *ev) {
    const PantoUsage *u = &ev->usage;
    printf(", \"usage\": {\"input_tokens\": %" PRIu64 ", \"output_tokens\": %" PRIu64
           ", \"cache_read_tokens\": %" PRIu64 ", \"cache_write_tokens\": %" PRIu64
           ", \"reasoning_tokens\": %" PRIu64,
           u->input_tokens, u->output_tokens, u->cache_read_tokens, u->cache_write_tokens,
           u->reasoning_tokens);
    if (ev->web_search_requests) printf(", \"web_search_requests\": %" PRIu64, ev->web_search_requests);
    if (ev->web_fetch_requests) printf(", \"web_fetch_requests\": %" PRIu64, ev->web_fetch_requests);
    fputs("}", stdout);
}

/* A NUL-terminated copy of a borrowed string, or NULL when out of memory. */
static char *dup_pstr(PantoString s) {
    char *out = (char *)malloc(s.len + 1);
    if (!out) return NULL;
    if (s.len) memcpy(out, s.ptr, s.len);
    out[s.len] = 0;
    return out;
}

/* A tool-call input as a JSON value: the text as is when it is one JSON value, else the text
 * as a JSON string (so the diff shows what the library gave). */
static void put_json_value(PantoString s) {
    char *copy = dup_pstr(s);
    const char *end = copy && strlen(copy) == s.len ? cj_skip(copy) : NULL;
    if (end && *cj_ws(end) == 0) fputs(copy, stdout);
    else put_pstr(s);
    free(copy);
}

/* The parts of a TOOL_RESULT: `, "parts": [...]`, every key of a part present. */
static void put_parts(const PantoPartInfo *parts, size_t count) {
    size_t i;
    fputs(", \"parts\": [", stdout);
    for (i = 0; i < count; i++) {
        const PantoPartInfo *p = &parts[i];
        fputs(i ? ", {\"kind\": " : "{\"kind\": ", stdout);
        put_cstr(panto_part_kind_name(p->kind));
        fputs(", \"text\": ", stdout);
        put_pstr(p->text);
        fputs(", \"media_type\": ", stdout);
        put_pstr(p->media_type);
        fputs(", \"name\": ", stdout);
        put_pstr(p->name);
        printf(", \"byte_size\": %" PRIu64 ", \"width\": %" PRIu32 ", \"height\": %" PRIu32
               ", \"data_len\": %llu}",
               p->byte_size, p->width, p->height, (unsigned long long)p->data.len);
    }
    putchar(']');
}

static void print_event(const PantoEvent *ev) {
    fputs("{\"event\": ", stdout);
    put_cstr(panto_event_kind_name(ev->kind));
    switch (ev->kind) {
    case PANTO_EVENT_MESSAGE_START:
        fputs(", \"id\": ", stdout);
        put_pstr(ev->id);
        fputs(", \"model\": ", stdout);
        put_pstr(ev->model);
        if (print_request_ids) {
            fputs(", \"request_id\": ", stdout);
            put_pstr(ev->request_id);
        }
        break;
    case PANTO_EVENT_TOOL_PROGRESS:
        fputs(", \"id\": ", stdout);
        put_pstr(ev->id);
        fputs(", \"name\": ", stdout);
        put_pstr(ev->name);
        fputs(", \"text\": ", stdout);
        put_pstr(ev->text);
        fputs(", \"fraction\": ", stdout);
        put_number_or_null(ev->fraction);
        break;
    case PANTO_EVENT_BLOCK_START:
        printf(", \"index\": %" PRIu32 ", \"kind\": ", ev->index);
        put_cstr(panto_block_kind_name(ev->block_kind));
        break;
    case PANTO_EVENT_CONTENT_DELTA:
    case PANTO_EVENT_BLOCK_COMPLETE:
        printf(", \"index\": %" PRIu32 ", \"kind\": ", ev->index);
        put_cstr(panto_block_kind_name(ev->block_kind));
        fputs(", \"text\": ", stdout);
        put_pstr(ev->text);
        if (ev->kind == PANTO_EVENT_BLOCK_COMPLETE && ev->name.len > 0) {
            /* a server block's type, a text block's citations */
            fputs(ev->block_kind == PANTO_BLOCK_TEXT ? ", \"citations\": " : ", \"name\": ", stdout);
            put_pstr(ev->name);
        }
        break;
    case PANTO_EVENT_MESSAGE_END:
    case PANTO_EVENT_MESSAGE_COMPLETE:
        fputs(", \"stop_reason\": ", stdout);
        put_cstr(panto_stop_reason_name(ev->stop_reason));
        fputs(", \"provider_stop_reason\": ", stdout);
        put_pstr(ev->provider_stop_reason);
        put_usage(ev);
        if (print_costs) {
            fputs(", \"cost\": ", stdout);
            put_number_or_null(ev->cost);
        }
        break;
    case PANTO_EVENT_TOOL_DETAILS:
        printf(", \"index\": %" PRIu32 ", \"id\": ", ev->index);
        put_pstr(ev->id);
        fputs(", \"name\": ", stdout);
        put_pstr(ev->name);
        break;
    case PANTO_EVENT_TOOL_CALL_START:
        fputs(", \"id\": ", stdout);
        put_pstr(ev->id);
        fputs(", \"name\": ", stdout);
        put_pstr(ev->name);
        fputs(", \"input\": ", stdout);
        put_json_value(ev->text);
        fputs(", \"awaiting_result\": ", stdout);
        put_bool(ev->awaiting_result);
        break;
    case PANTO_EVENT_PROVIDER_RETRY:
        printf(", \"attempt\": %" PRIu32 ", \"delay_ms\": %" PRIu64 ", \"http_status\": %" PRId32
               ", \"reason\": ",
               ev->attempt, ev->delay_ms, ev->http_status);
        put_pstr(ev->text);
        break;
    case PANTO_EVENT_USER_MESSAGE:
        fputs(", \"source\": ", stdout);
        put_pstr(ev->name);
        fputs(", \"text\": ", stdout);
        put_pstr(ev->text);
        break;
    case PANTO_EVENT_APPROVAL_REQUEST: {
        size_t i;
        fputs(", \"calls\": [", stdout);
        for (i = 0; i < ev->approval_count; i++) {
            fputs(i ? ", {\"id\": " : "{\"id\": ", stdout);
            put_pstr(ev->approvals[i].id);
            fputs(", \"name\": ", stdout);
            put_pstr(ev->approvals[i].name);
            fputs(", \"input\": ", stdout);
            put_json_value(ev->approvals[i].input);
            putchar('}');
        }
        putchar(']');
        break;
    }
    case PANTO_EVENT_TOOL_RESULT:
        fputs(", \"id\": ", stdout);
        put_pstr(ev->id);
        fputs(", \"name\": ", stdout);
        put_pstr(ev->name);
        fputs(", \"content\": ", stdout);
        put_pstr(ev->text);
        fputs(", \"is_error\": ", stdout);
        put_bool(ev->is_error);
        put_parts(ev->parts, ev->part_count);
        break;
    case PANTO_EVENT_COMPACTION_START:
        printf(", \"tokens_before\": %" PRIu64 ", \"reason\": ", ev->tokens_before);
        put_pstr(ev->text);
        break;
    case PANTO_EVENT_COMPACTION_END:
        printf(", \"tokens_before\": %" PRIu64 ", \"tokens_after\": %" PRIu64 ", \"message_count\": %" PRIu64 ", \"summary\": ",
               ev->tokens_before, ev->tokens_after, ev->message_count);
        put_pstr(ev->text);
        break;
    default:
        /* An event kind this driver does not know: print its number so the diff shows it. */
        printf(", \"kind_value\": %" PRId32, ev->kind);
        break;
    }
    end_line();
}

/* An error line. `code` is the status returned by the failing call; err holds the detail. */
static void print_error(int code, const PantoError *err) {
    fputs("{\"event\": \"error\", \"code\": ", stdout);
    put_cstr(panto_status_name(code));
    printf(", \"http_status\": %" PRId32 ", \"type\": ", err->http_status);
    put_pstr(err->type);
    fputs(", \"message\": ", stdout);
    put_pstr(err->message);
    if (print_error_detail) {
        fputs(", \"retry_after\": ", stdout);
        put_number_or_null(err->retry_after);
        fputs(", \"headers\": ", stdout);
        if (err->headers.len) put_json_value(err->headers);
        else fputs("{}", stdout);
    }
    end_line();
}

static void print_agent_error(int code, const PantoAgent *agent) {
    PantoError err = PANTO_ERROR_INIT;
    if (agent) panto_agent_error(agent, &err);
    print_error(code, &err);
}

/* ---- Reading the case ---------------------------------------------------------------- */

static int die(const char *what, const char *detail) {
    fprintf(stderr, "c_driver: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    return 2;
}

/* The bytes of a file (any bytes), malloc'd and followed by a NUL, or NULL. */
static char *read_bytes(const char *path, size_t *out_len) {
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0, cap = 0, got;
    if (!f) return NULL;
    for (;;) {
        if (cap - len < 4096) {
            char *grown;
            cap = cap ? cap * 2 : 8192;
            grown = (char *)realloc(buf, cap + 1);
            if (!grown) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = grown;
        }
        got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
    }
    if (ferror(f)) {
        free(buf);
        fclose(f);
        return NULL;
    }
    fclose(f);
    buf[len] = 0;
    *out_len = len;
    return buf;
}

/* A text file (no NUL in it), NUL-terminated, or NULL. */
static char *read_file(const char *path) {
    size_t len = 0;
    char *buf = read_bytes(path, &len);
    if (buf && memchr(buf, 0, len)) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* Parts given to panto (a turn's, a tool's return_parts), and the memory they point into. */
typedef struct Parts {
    PantoPart *items;
    size_t n;
    void **owned;
    size_t n_owned;
} Parts;

static void free_parts(Parts *ps) {
    size_t i;
    for (i = 0; i < ps->n_owned; i++) free(ps->owned[i]);
    free(ps->owned);
    free(ps->items);
    memset(ps, 0, sizeof *ps);
}

/* Keeps p (malloc'd) until free_parts; 0 when out of memory (p is freed). */
static int parts_own(Parts *ps, void *p) {
    void **grown = (void **)realloc(ps->owned, (ps->n_owned + 1) * sizeof *grown);
    if (!grown) {
        free(p);
        return 0;
    }
    ps->owned = grown;
    ps->owned[ps->n_owned++] = p;
    return 1;
}

/* The string member `key` of obj, decoded and owned by ps ("" when absent); NULL when it is
 * not a string or memory ran out. */
static const char *owned_member(Parts *ps, const char *obj, const char *key, size_t *len) {
    const char *m = cj_member(obj, key);
    char *s = NULL;
    *len = 0;
    if (!m) return "";
    if (*m != '"' || !cj_string(m, &s, len) || !parts_own(ps, s)) return NULL;
    return s;
}

/* Reads the runner's array of parts at p: a string is text, {"media_path", "hint", "name"}
 * the bytes of that file. Returns NULL on success, or what is wrong. */
static const char *read_parts(const char *p, Parts *ps) {
    const char *it = p, *value;
    if (*p != '[') return "parts are not an array";
    while ((it = cj_next_element(it, &value))) {
        PantoPart part, *grown;
        memset(&part, 0, sizeof part);
        if (*value == '"') {
            char *text = NULL;
            size_t len = 0;
            if (!cj_string(value, &text, &len) || !parts_own(ps, text)) return "a text part is not a string";
            part.kind = PANTO_PART_TEXT;
            part.text.ptr = text;
            part.text.len = len;
        } else if (*value == '{') {
            const char *path, *hint, *name;
            size_t path_len, hint_len, name_len, data_len = 0;
            void *data;
            path = owned_member(ps, value, "media_path", &path_len);
            hint = owned_member(ps, value, "hint", &hint_len);
            name = owned_member(ps, value, "name", &name_len);
            if (!path || !*path || !hint || !name) return "a media part has no string \"media_path\"";
            if (!(data = read_bytes(path, &data_len)) || !parts_own(ps, data)) return "a media file cannot be read";
            part.kind = PANTO_PART_MEDIA;
            part.data = data;
            part.data_len = data_len;
            part.media_type.ptr = hint;
            part.media_type.len = hint_len;
            part.name.ptr = name;
            part.name.len = name_len;
        } else {
            return "a part is neither a string nor a media object";
        }
        if (!(grown = (PantoPart *)realloc(ps->items, (ps->n + 1) * sizeof *grown))) return "out of memory";
        ps->items = grown;
        ps->items[ps->n++] = part;
    }
    return NULL;
}

/* The config object at cfg (validated, ending at cfg_end) with "base_url": url added unless
 * it has one. Returns a malloc'd NUL-terminated text. */
static char *config_with_base_url(const char *cfg, const char *cfg_end, const char *url) {
    size_t cfg_len = (size_t)(cfg_end - cfg), url_len = strlen(url), i, n = 0;
    const char *body;
    char *out;

    if (cj_member(cfg, "base_url")) {
        out = (char *)malloc(cfg_len + 1);
        if (!out) return NULL;
        memcpy(out, cfg, cfg_len);
        out[cfg_len] = 0;
        return out;
    }
    /* {"base_url": "<url, escaped>", <the rest of the object> */
    out = (char *)malloc(cfg_len + 6 * url_len + 32);
    if (!out) return NULL;
    n += (size_t)sprintf(out, "{\"base_url\": \"");
    for (i = 0; i < url_len; i++) {
        unsigned char c = (unsigned char)url[i];
        if (c == '"' || c == '\\') {
            out[n++] = '\\';
            out[n++] = (char)c;
        } else if (c < 0x20) {
            n += (size_t)sprintf(out + n, "\\u%04x", c);
        } else {
            out[n++] = (char)c;
        }
    }
    out[n++] = '"';
    body = cj_ws(cfg + 1); /* after '{' */
    if (*body != '}') out[n++] = ',';
    memcpy(out + n, body, (size_t)(cfg_end - body));
    n += (size_t)(cfg_end - body);
    out[n] = 0;
    return out;
}

/* ---- Host tools ---------------------------------------------------------------------- */

enum behavior { RETURN, RAISE, RETURN_INPUT, RETURN_PARTS };

/* One progress report of a behavior's "progress". */
typedef struct Report {
    char *text;
    size_t text_len;
    double fraction; /* -1: none */
} Report;

typedef struct Tool {
    char *name;
    enum behavior behavior;
    char *text; /* RETURN, RAISE: the result text (NUL characters included) */
    size_t text_len;
    Parts parts; /* RETURN_PARTS */
    char *spec; /* the tool spec for panto_agent_add_tool: the case's tool without "behavior" */
    long sleep_ms;      /* "sleep_ms", 0: none */
    char *group;        /* "rendezvous": its group, or NULL */
    long group_count;   /* ... and how many handlers of it must start */
    int exclusive;      /* "exclusive" */
    Report *reports;    /* "progress" */
    size_t n_reports;
} Tool;

static Tool *tools;
static size_t n_tools;

static void free_tools(void) {
    size_t i;
    for (i = 0; i < n_tools; i++) {
        free(tools[i].name);
        free(tools[i].text);
        free(tools[i].spec);
        free(tools[i].group);
        free_parts(&tools[i].parts);
        while (tools[i].n_reports) free(tools[i].reports[--tools[i].n_reports].text);
        free(tools[i].reports);
    }
    free(tools);
    tools = NULL;
    n_tools = 0;
}

/* Decodes the string at p into a NUL-terminated text; NULL if it is not a string or holds a
 * NUL character (which a C string cannot carry). */
static char *c_string(const char *p) {
    char *s = NULL;
    size_t len = 0;
    if (!p || *p != '"' || !cj_string(p, &s, &len)) return NULL;
    if (strlen(s) != len) {
        free(s);
        return NULL;
    }
    return s;
}

static int read_long(const char *p, long *out) {
    char *end;
    if (!p || *p < '0' || *p > '9') return 0;
    *out = strtol(p, &end, 10);
    return end == cj_skip(p);
}

/* The behavior's steps before its result (README, "Tools in a case"): sleep_ms, rendezvous,
 * progress, exclusive. Returns NULL, or what is wrong. */
static const char *read_first_steps(const char *b, Tool *t) {
    const char *m, *it, *item;
    if ((m = cj_member(b, "sleep_ms")) && !read_long(m, &t->sleep_ms)) return "behavior.sleep_ms is not a count";
    if ((m = cj_member(b, "rendezvous"))) {
        const char *g = NULL, *c = NULL;
        it = m;
        if (*m != '[' || !(it = cj_next_element(it, &g)) || !(it = cj_next_element(it, &c)) ||
            !(t->group = c_string(g)) || !read_long(c, &t->group_count))
            return "behavior.rendezvous is not [GROUP, COUNT]";
    }
    if ((m = cj_member(b, "exclusive"))) t->exclusive = strncmp(m, "true", 4) == 0;
    if ((m = cj_member(b, "progress"))) {
        if (*m != '[') return "behavior.progress is not an array";
        it = m;
        while ((it = cj_next_element(it, &item))) {
            const char *text = NULL, *fraction = NULL, *pair = item;
            Report *grown, *r;
            if (*item != '[' || !(pair = cj_next_element(pair, &text)) || !cj_next_element(pair, &fraction) || *text != '"')
                return "a behavior.progress item is not [TEXT, FRACTION]";
            if (!(grown = (Report *)realloc(t->reports, (t->n_reports + 1) * sizeof *grown))) return "out of memory";
            t->reports = grown;
            r = &t->reports[t->n_reports++];
            r->text = NULL;
            if (!cj_string(text, &r->text, &r->text_len)) return "a progress text is not a string";
            r->fraction = strncmp(fraction, "null", 4) == 0 ? -1 : strtod(fraction, NULL);
        }
    }
    return NULL;
}

/* Reads the case's "tools" array (at p) into `tools`. Returns NULL on success, or what is
 * wrong. */
static const char *read_tools(const char *p) {
    const char *it = p, *value;
    if (*p != '[') return "\"tools\" is not an array";
    while ((it = cj_next_element(it, &value))) {
        const char *m = value, *member, *b;
        char *key;
        size_t key_len;
        int first = 1;
        CjBuf spec = CJ_BUF_INIT;
        Tool *grown, *t;
        const char *wrong_first;
        if (*value != '{') return "a tool is not an object";
        if (!(grown = (Tool *)realloc(tools, (n_tools + 1) * sizeof *tools))) return "out of memory";
        tools = grown;
        t = &tools[n_tools++];
        memset(t, 0, sizeof *t);
        if (!(t->name = c_string(cj_member(value, "name")))) return "a tool has no string \"name\"";
        if (!(b = cj_member(value, "behavior")) || *b != '{') return "a tool has no \"behavior\" object";
        if ((member = cj_member(b, "return"))) {
            t->behavior = RETURN;
            if (*member != '"' || !cj_string(member, &t->text, &t->text_len)) return "behavior.return is not a string";
        } else if ((member = cj_member(b, "raise"))) {
            t->behavior = RAISE;
            if (*member != '"' || !cj_string(member, &t->text, &t->text_len)) return "behavior.raise is not a string";
        } else if ((member = cj_member(b, "return_input")) && strncmp(member, "true", 4) == 0) {
            t->behavior = RETURN_INPUT;
        } else if ((member = cj_member(b, "return_parts"))) {
            const char *wrong = read_parts(member, &t->parts);
            t->behavior = RETURN_PARTS;
            if (wrong) return wrong;
        } else {
            t->behavior = RETURN; /* "" */
        }
        if ((wrong_first = read_first_steps(b, t))) return wrong_first;
        /* The spec: every member but "behavior", values copied as written. */
        cj_put(&spec, "{", 1);
        while ((m = cj_next_member(m, &key, &key_len, &member))) {
            if (!(key_len == 8 && memcmp(key, "behavior", 8) == 0)) {
                if (!first) cj_put(&spec, ", ", 2);
                first = 0;
                cj_put_string(&spec, key, key_len);
                cj_put(&spec, ": ", 2);
                cj_put(&spec, member, (size_t)(m - member));
            }
            free(key);
        }
        cj_put(&spec, "}", 1);
        if (spec.failed) return "out of memory";
        t->spec = spec.ptr;
    }
    return NULL;
}

static const Tool *find_tool(const char *name) {
    size_t i;
    for (i = 0; i < n_tools; i++)
        if (strcmp(tools[i].name, name) == 0) return &tools[i];
    return NULL;
}

/* ---- Host tools, run concurrently (README, "Tools in a case") --------------------------
 *
 * The TOOL_CALL_STARTs of a round are collected; when next reports the result pending, the
 * round runs: each call on its own pthread, a sequential one alone (after every earlier call,
 * before any later one). Handlers report progress and their end through a queue; only the
 * main thread calls the library: it forwards progress and submits results as they come. */

typedef struct Call {
    char *id, *name, *input;
    size_t id_len, input_len;
    int sequential;
    enum { WAITING, RUNNING, FINISHED } state;
    pthread_t thread;
    const Tool *tool;
    /* The handler's result. */
    CjBuf out;
    const char *content;
    size_t content_len;
    int is_error;
} Call;

static Call *calls;
static size_t n_calls;

/* A report from a handler thread: progress (report != NULL) or its end. */
typedef struct Note {
    struct Note *next;
    size_t call;
    const Report *report;
} Note;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static Note *notes, **notes_tail = &notes;
static long running, started; /* handlers running, handlers started (under lock) */

/* The rendezvous groups: how many handlers of each started (under lock). */
typedef struct Group {
    const char *name;
    long count;
} Group;
static Group groups[16];
static size_t n_groups;

static void post(size_t call, const Report *report) {
    Note *n = (Note *)malloc(sizeof *n);
    pthread_mutex_lock(&lock);
    if (n) {
        n->next = NULL;
        n->call = call;
        n->report = report;
        *notes_tail = n;
        notes_tail = &n->next;
    }
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

static void sleep_ms(long ms) {
    struct timespec ts;
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (ms % 1000) * 1000000L;
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

/* Waits (under lock) until the group has `count` handlers started, at most 10 s. */
static int rendezvous(const char *name, long count) {
    size_t i;
    int rc = 0;
    struct timespec until;
    Group *g = NULL;
    for (i = 0; i < n_groups; i++)
        if (strcmp(groups[i].name, name) == 0) g = &groups[i];
    if (!g && n_groups < sizeof groups / sizeof groups[0]) {
        g = &groups[n_groups++];
        g->name = name;
        g->count = 0;
    }
    if (!g) return 0;
    g->count++;
    pthread_cond_broadcast(&changed);
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 10;
    while (g->count < count && rc != ETIMEDOUT) rc = pthread_cond_timedwait(&changed, &lock, &until);
    return g->count >= count;
}

static void fail_with(Call *c, const char *text) {
    c->content = text;
    c->content_len = strlen(text);
    c->is_error = 1;
}

static void *handler_main(void *arg) {
    size_t index = (size_t)((Call *)arg - calls);
    Call *c = &calls[index];
    const Tool *tool = c->tool;
    long started_before;
    size_t i;

    pthread_mutex_lock(&lock);
    running++;
    started_before = ++started;
    pthread_mutex_unlock(&lock);
    if (tool->sleep_ms) sleep_ms(tool->sleep_ms);
    if (tool->group) {
        int met;
        pthread_mutex_lock(&lock);
        met = rendezvous(tool->group, tool->group_count);
        pthread_mutex_unlock(&lock);
        if (!met) {
            fail_with(c, "ran alone");
            goto end;
        }
    }
    for (i = 0; i < tool->n_reports; i++) post(index, &tool->reports[i]);
    if (tool->exclusive) {
        int alone;
        pthread_mutex_lock(&lock);
        alone = running == 1;
        pthread_mutex_unlock(&lock);
        sleep_ms(100);
        pthread_mutex_lock(&lock);
        alone = alone && running == 1 && started == started_before;
        pthread_mutex_unlock(&lock);
        if (!alone) {
            fail_with(c, "overlapped");
            goto end;
        }
    }
    if (tool->behavior == RETURN || tool->behavior == RAISE) {
        c->content = tool->text ? tool->text : "";
        c->content_len = tool->text_len;
        c->is_error = tool->behavior == RAISE;
    } else if (tool->behavior == RETURN_INPUT) {
        const char *end = strlen(c->input) == c->input_len ? cj_put_canonical(&c->out, c->input) : NULL;
        if (end && *cj_ws(end) == 0 && !c->out.failed) {
            c->content = c->out.ptr;
            c->content_len = c->out.len;
        } else fail_with(c, "c_driver: the tool input is not one JSON value");
    }
end:
    pthread_mutex_lock(&lock);
    running--;
    pthread_mutex_unlock(&lock);
    post(index, NULL);
    return NULL;
}

/* A line the expected transcript never holds: a call on the library failed. */
static void print_failed(const char *what, int rc) {
    fputs("{\"event\": ", stdout);
    put_cstr(what);
    fputs(", \"code\": ", stdout);
    put_cstr(panto_status_name(rc));
    end_line();
}

/* Keeps a TOOL_CALL_START awaiting a result for the round. The event's strings are copied:
 * they are borrowed only until the next call on the stream. */
static void collect_call(const PantoEvent *ev) {
    Call *grown = (Call *)realloc(calls, (n_calls + 1) * sizeof *calls);
    Call *c;
    if (!grown) return;
    calls = grown;
    c = &calls[n_calls++];
    memset(c, 0, sizeof *c);
    c->id = dup_pstr(ev->id);
    c->id_len = ev->id.len;
    c->name = dup_pstr(ev->name);
    c->input = dup_pstr(ev->text);
    c->input_len = ev->text.len;
    c->sequential = ev->sequential;
    c->tool = c->name ? find_tool(c->name) : NULL;
}

/* The ids an APPROVAL_REQUEST listed, answered from the case's "approvals" at
 * PANTO_ERR_APPROVAL_PENDING. */
static char **asked;
static size_t n_asked;

static void collect_asked(const PantoEvent *ev) {
    size_t i;
    char **grown = (char **)realloc(asked, (n_asked + ev->approval_count) * sizeof *asked);
    if (!grown) return;
    asked = grown;
    for (i = 0; i < ev->approval_count; i++) asked[n_asked++] = dup_pstr(ev->approvals[i].id);
}

/* Answers every call asked about as the case's "approvals" says ("approve", or {"deny":
 * REASON}; a call it does not name is denied with the reason "no answer in the case"), and
 * prints {"event": "approval_answer", "id", "answer", "code"} for each. */
static void answer_approvals(PantoStream *stream, const char *approvals) {
    size_t i;
    for (i = 0; i < n_asked; i++) {
        const char *answer = approvals && *approvals == '{' ? cj_member(approvals, asked[i]) : NULL;
        const char *reason = answer && *answer == '{' ? cj_member(answer, "deny") : NULL;
        int approve = answer && strncmp(answer, "\"approve\"", 9) == 0;
        char *why = NULL;
        if (answer && strncmp(answer, "\"kill\"", 6) == 0) {
            /* The process dies waiting (README.md, "A process killed while a call waits"). */
            fputs("{\"event\": \"killed\"", stdout);
            end_line();
            fflush(stdout);
            kill(getpid(), SIGKILL);
        }
        size_t why_len = 0;
        int rc;
        if (reason && *reason == '"') cj_string(reason, &why, &why_len);
        if (approve)
            rc = panto_stream_approve(stream, panto_cstr(asked[i]));
        else {
            PantoString r = {why ? why : "no answer in the case", why ? why_len : strlen("no answer in the case")};
            rc = panto_stream_deny(stream, panto_cstr(asked[i]), r);
        }
        fputs("{\"event\": \"approval_answer\", \"id\": ", stdout);
        put_cstr(asked[i]);
        fputs(approve ? ", \"answer\": \"approve\", \"code\": " : ", \"answer\": \"deny\", \"code\": ", stdout);
        put_cstr(panto_status_name(rc));
        end_line();
        free(why);
        free(asked[i]);
    }
    n_asked = 0;
}

/* Forgets the calls asked about by an earlier turn that ended unanswered. */
static void forget_asked(void) {
    while (n_asked > 0) free(asked[--n_asked]);
}

static void free_calls(void) {
    size_t i;
    for (i = 0; i < n_calls; i++) {
        free(calls[i].id);
        free(calls[i].name);
        free(calls[i].input);
        free(calls[i].out.ptr);
    }
    free(calls);
    calls = NULL;
    n_calls = 0;
}

/* Whether call i may start now: no earlier sequential call unfinished, and for a sequential
 * one, every earlier call finished. */
static int may_start(size_t i) {
    size_t j;
    for (j = 0; j < i; j++) {
        if (calls[j].state == FINISHED) continue;
        if (calls[j].sequential || calls[i].sequential) return 0;
    }
    return 1;
}

static void submit(PantoStream *stream, Call *c) {
    PantoToolResult result = PANTO_TOOL_RESULT_INIT;
    int rc;
    result.call_id.ptr = c->id;
    result.call_id.len = c->id_len;
    if (c->tool && c->tool->behavior == RETURN_PARTS && !c->is_error) {
        result.parts = c->tool->parts.items;
        result.part_count = c->tool->parts.n;
    } else {
        result.content.ptr = c->content ? c->content : "";
        result.content.len = c->content ? c->content_len : 0;
        result.is_error = c->is_error;
    }
    rc = panto_stream_submit_tool_result(stream, &result);
    if (rc != PANTO_OK) print_failed("submit_failed", rc);
}

/* Runs the round's calls and submits every result (the events follow with next). */
static void run_round(PantoStream *stream) {
    size_t i, finished = 0;
    for (i = 0; i < n_calls; i++) {
        if (!calls[i].id || !calls[i].input) fail_with(&calls[i], "c_driver: out of memory");
        else if (!calls[i].tool) fail_with(&calls[i], "c_driver: the case declares no tool of that name");
        else continue;
        calls[i].state = FINISHED;
        submit(stream, &calls[i]);
        finished++;
    }
    while (finished < n_calls) {
        Note *n;
        for (i = 0; i < n_calls; i++) {
            if (calls[i].state != WAITING || !may_start(i)) continue;
            calls[i].state = RUNNING;
            if (pthread_create(&calls[i].thread, NULL, handler_main, &calls[i]) != 0) {
                calls[i].state = FINISHED;
                fail_with(&calls[i], "c_driver: cannot start a thread");
                submit(stream, &calls[i]);
                finished++;
            }
        }
        pthread_mutex_lock(&lock);
        while (!notes) pthread_cond_wait(&changed, &lock);
        n = notes;
        notes = n->next;
        if (!notes) notes_tail = &notes;
        pthread_mutex_unlock(&lock);
        if (n->report) {
            PantoString id = {calls[n->call].id, calls[n->call].id_len};
            PantoString text = {n->report->text, n->report->text_len};
            int rc = panto_stream_tool_progress(stream, id, text, n->report->fraction);
            if (rc != PANTO_OK) print_failed("progress_failed", rc);
        } else {
            Call *c = &calls[n->call];
            pthread_join(c->thread, NULL);
            c->state = FINISHED;
            submit(stream, c);
            finished++;
        }
        free(n);
    }
    free_calls();
}

/* ---- Cancellation from another thread ------------------------------------------------ */

/* A timer thread that cancels `stream` after `ms` (or, with `free`, frees it), unless told to
 * stop first (then it exits at once, so joining it does not wait out the delay). */
typedef struct Canceler {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    PantoStream *stream;
    long ms;
    int stop;
    int free;  /* panto_stream_free rather than panto_stream_cancel */
    int fired; /* the timer went off: with `free`, the stream is gone */
} Canceler;

static void *canceler_main(void *arg) {
    Canceler *c = (Canceler *)arg;
    struct timespec until;
    int rc = 0;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += c->ms / 1000;
    until.tv_nsec += (c->ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec += 1;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&c->lock);
    while (!c->stop && rc != ETIMEDOUT) rc = pthread_cond_timedwait(&c->wake, &c->lock, &until);
    if (rc != ETIMEDOUT) {
        pthread_mutex_unlock(&c->lock);
        return NULL;
    }
    c->fired = 1;
    /* Freeing from here while the main thread is blocked in panto_next_events is allowed: that
     * call returns CANCELED and the stream is released once it returned. A stepping main
     * thread holds the lock during each step and reads `fired` first, so it never steps a
     * freed stream. Canceling: the stream outlives this thread, the main thread joins it
     * before freeing the stream. */
    if (c->free) panto_stream_free(c->stream);
    else panto_stream_cancel(c->stream);
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

static int canceler_start(Canceler *c, PantoStream *stream, long ms, int free_it) {
    c->stream = stream;
    c->ms = ms;
    c->stop = 0;
    c->free = free_it;
    c->fired = 0;
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->wake, NULL);
    return pthread_create(&c->thread, NULL, canceler_main, c) == 0;
}

static void canceler_join(Canceler *c) {
    pthread_mutex_lock(&c->lock);
    c->stop = 1;
    pthread_cond_signal(&c->wake);
    pthread_mutex_unlock(&c->lock);
    pthread_join(c->thread, NULL);
    pthread_mutex_destroy(&c->lock);
    pthread_cond_destroy(&c->wake);
}

/* ---- Running the case ---------------------------------------------------------------- */

/* What the case asks besides its turns. */
typedef struct Options {
    long extra_next;      /* extra next() calls after the turn's end */
    long cancel_after_ms; /* < 0: none; applies to the turn cancel_turn */
    long cancel_turn;     /* the turn cancel_after_ms cancels, from 0 */
    int on_error;         /* the case has "on_error" */
    char *set_config;     /* on_error.set_config as JSON text, or NULL */
    int reopen;           /* on_error.reopen */
    int connections;      /* the case has "expect_connections": print the counters at the end */
    enum { END_NONE, END_CLOSE, END_DROP, END_FREE_BLOCKED } end_early; /* "end_early" */
    long end_turn;        /* the turn end_early applies to, from 0 */
    long end_after;       /* its K deltas, or MS milliseconds */
    int print_conversation; /* print the conversation after the turns */
    const char *approvals;  /* the case's "approvals" object, or NULL */
} Options;

/* The case's "steer" array (README.md, "Steering in a case"): where the next entry is. */
static const char *steer_it;

/* Says what the case's "steer" gives once `after` (an event's name, or "run") was printed:
 * panto_stream_steer or _follow_up, and a line {"event": "steer_call", "call", "text", "code"}
 * each. */
static void steer_after(PantoStream *stream, const char *after) {
    const char *value, *next;
    while (steer_it && (next = cj_next_element(steer_it, &value))) {
        const char *at = cj_member(value, "after"), *text = cj_member(value, "steer");
        const char *call = text ? "steer" : "follow_up";
        char *at_s = NULL, *text_s = NULL;
        size_t n;
        int rc;
        if (!text) text = cj_member(value, "follow_up");
        if (at && !text && cj_member(value, "withdraw") && cj_string(at, &at_s, &n)) {
            /* {"after": EVENT, "withdraw": true}: a withdraw_call line with what came back */
            PantoString taken = {NULL, 0};
            if (strcmp(at_s, after) != 0) {
                free(at_s);
                return;
            }
            steer_it = next;
            rc = panto_stream_withdraw_queued(stream, &taken);
            fputs("{\"event\": \"withdraw_call\", \"messages\": ", stdout);
            if (rc < 0 || taken.len == 0) fputs("[]", stdout);
            else fwrite(taken.ptr, 1, taken.len, stdout);
            fputs(", \"code\": ", stdout);
            put_cstr(panto_status_name(rc));
            end_line();
            free(at_s);
            continue;
        }
        if (!at || !text || !cj_string(at, &at_s, &n) || !cj_string(text, &text_s, &n)) {
            free(at_s);
            steer_it = NULL;
            return;
        }
        if (strcmp(at_s, after) != 0) {
            free(at_s);
            free(text_s);
            return;
        }
        steer_it = next;
        rc = strcmp(call, "steer") == 0 ? panto_stream_steer(stream, panto_cstr(text_s))
                                        : panto_stream_follow_up(stream, panto_cstr(text_s));
        fputs("{\"event\": \"steer_call\", \"call\": ", stdout);
        put_cstr(call);
        fputs(", \"text\": ", stdout);
        put_cstr(text_s);
        fputs(", \"code\": ", stdout);
        put_cstr(panto_status_name(rc));
        end_line();
        free(at_s);
        free(text_s);
    }
}

/* A line saying what a call made after an error returned: {"event": NAME, "code": C}. */
static void print_call(const char *name, int rc) {
    fputs("{\"event\": ", stdout);
    put_cstr(name);
    fputs(", \"code\": ", stdout);
    put_cstr(panto_status_name(rc));
    end_line();
}

/* Prints the line of a turn's end: done, an error (the stream's detail), or what else came. */
static void print_end(PantoStream *stream, const PantoEvent *ev, int rc) {
    if (rc == PANTO_DONE) {
        fputs("{\"event\": \"done\"", stdout);
        end_line();
    } else if (rc < 0) {
        PantoError err = PANTO_ERROR_INIT;
        panto_stream_error(stream, &err);
        print_error(rc, &err);
    } else if (rc == PANTO_EVENT) {
        /* Not sticky: an event after the end. Print it so the diff shows it. */
        print_event(ev);
    } else {
        printf("{\"event\": \"unexpected_status\", \"status\": %d", rc);
        end_line();
    }
}

/* The agent's connection counters: {"event": "connections", "opened": N, "reused": M}. */
static void print_connections(const PantoAgent *agent) {
    PantoConnections counts = PANTO_CONNECTIONS_INIT;
    int rc = panto_agent_connections(agent, &counts);
    if (rc < 0) {
        print_agent_error(rc, agent);
        return;
    }
    printf("{\"event\": \"connections\", \"opened\": %llu, \"reused\": %llu",
           (unsigned long long)counts.opened, (unsigned long long)counts.reused);
    end_line();
}

/* The events of a stream, read in batches and handed out one by one. */
typedef struct {
    PantoEvent evs[16];
    size_t n, i; /* evs[i..n) are still to hand out */
} Batch;

/* --async: read by stepping (panto_step_events) instead of panto_next_events. */
static int async_mode;
/* The canceler that may free the stream being stepped (end_early free_blocked_after_ms), or
 * NULL: each step is made under its lock, once it did not fire. */
static Canceler *freer;
/* What a step returns when the stream was freed by the canceler while the loop waited. */
#define FREED_WHILE_WAITING (-1000)

static int64_t monotonic_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

/* Waits for what a step said: its descriptor ready, or its deadline (at most 50 ms while a
 * freer may free the stream: a freed stream's descriptor need not wake the poll). */
static void wait_for(const PantoWait *wait) {
    struct pollfd pfd;
    int timeout_ms = -1;
    if (wait->deadline_ns >= 0) {
        int64_t left = wait->deadline_ns - monotonic_ns();
        timeout_ms = left <= 0 ? 0 : (int)((left + 999999) / 1000000);
    }
    if (freer && (timeout_ms < 0 || timeout_ms > 50)) timeout_ms = 50;
    pfd.fd = wait->fd;
    pfd.events = (short)(((wait->events & PANTO_WAIT_READ) ? POLLIN : 0) | ((wait->events & PANTO_WAIT_WRITE) ? POLLOUT : 0));
    pfd.revents = 0;
    while (poll(&pfd, wait->fd >= 0 ? 1 : 0, timeout_ms) < 0 && errno == EINTR) {
    }
}

/* The next batch, read by next or by steps (waiting in poll() between them). */
static int read_batch(PantoStream *stream, Batch *b) {
    const size_t cap = sizeof b->evs / sizeof b->evs[0];
    if (!async_mode) return panto_next_events(stream, b->evs, cap, &b->n, NULL);
    for (;;) {
        PantoWait wait = PANTO_WAIT_INIT;
        int rc;
        if (freer) {
            pthread_mutex_lock(&freer->lock);
            if (freer->fired) {
                pthread_mutex_unlock(&freer->lock);
                b->n = 0;
                return FREED_WHILE_WAITING;
            }
        }
        rc = panto_step_events(stream, b->evs, cap, &b->n, NULL, &wait);
        if (freer) pthread_mutex_unlock(&freer->lock);
        if (rc != PANTO_WOULD_BLOCK) return rc;
        wait_for(&wait);
    }
}

/* The next event of the stream (*ev points into b), or the status that ended the batches. */
static int next_event(PantoStream *stream, Batch *b, const PantoEvent **ev) {
    int rc;
    if (b->i < b->n) {
        *ev = &b->evs[b->i++];
        return PANTO_EVENT;
    }
    b->evs[0] = (PantoEvent)PANTO_EVENT_INIT;
    b->i = 0;
    rc = read_batch(stream, b);
    if (rc == PANTO_EVENT) *ev = &b->evs[b->i++];
    return rc;
}

/* Closes the stream after the event just printed, as a binding's close does: the events of
 * the batch not handed out are given back first, so the turn keeps only what was seen. */
static void close_after_seen(PantoStream *stream, Batch *b, const char *line) {
    if (b->i < b->n && panto_stream_unread(stream, b->n - b->i) != PANTO_OK) {
        fputs("{\"event\": \"unread_failed\"", stdout);
        end_line();
    }
    b->i = b->n = 0;
    panto_stream_free(stream);
    fputs("{\"event\": ", stdout);
    put_cstr(line);
    end_line();
}

/* The conversation after the turns: {"event": "conversation", "messages": [...]}. */
static void print_conversation(PantoAgent *agent) {
    PantoString json = {NULL, 0};
    int rc = panto_agent_conversation(agent, &json);
    if (rc < 0) {
        print_agent_error(rc, agent);
        return;
    }
    fputs("{\"event\": \"conversation\", \"messages\": ", stdout);
    fwrite(json.ptr, 1, json.len, stdout);
    end_line();
}

/* What a turn object asks besides its input (README, "Turn objects"). */
typedef struct TurnExtras {
    char *options;                                 /* the per-turn options as JSON text, or NULL */
    enum { FINAL_NONE, FINAL_MESSAGE, FINAL_JSON } final;
} TurnExtras;

/* A "final" turn: reads it with panto_stream_final_message (running the host calls it stops
 * at), then for "json" panto_stream_final_json, and prints the helper's line. */
static void run_final(PantoStream *stream, int final) {
    PantoEvent ev = PANTO_EVENT_INIT;
    PantoString text = {NULL, 0};
    PantoError err = PANTO_ERROR_INIT;
    int rc;
    if (async_mode) {
        /* Stepped to its end (running the host calls it stops at), then read by the helper. */
        static Batch batch;
        const PantoEvent *seen;
        batch.n = batch.i = 0;
        for (;;) {
            while ((rc = next_event(stream, &batch, &seen)) == PANTO_EVENT)
                if (seen->kind == PANTO_EVENT_TOOL_CALL_START && seen->awaiting_result) collect_call(seen);
            if (rc != PANTO_ERR_RESULT_PENDING || n_calls == 0) break;
            run_round(stream);
        }
    }
    while ((rc = panto_stream_final_message(stream, &ev, &text)) == PANTO_ERR_RESULT_PENDING &&
           ev.kind == PANTO_EVENT_TOOL_CALL_START) {
        collect_call(&ev);
        run_round(stream);
    }
    if (rc != PANTO_OK) {
        print_end(stream, &ev, rc);
        return;
    }
    if (final == FINAL_MESSAGE) {
        fputs("{\"event\": \"final_message\", \"code\": \"ok\", \"text\": ", stdout);
        put_pstr(text);
        fputs(", \"stop_reason\": ", stdout);
        put_cstr(panto_stop_reason_name(ev.stop_reason));
        put_usage(&ev);
        end_line();
        return;
    }
    rc = panto_stream_final_json(stream, &text);
    if (rc != PANTO_OK && rc != PANTO_ERR_OUTPUT && rc != PANTO_ERR_STATE) {
        print_end(stream, &ev, rc);
        return;
    }
    fputs("{\"event\": \"final_json\", \"code\": ", stdout);
    put_cstr(panto_status_name(rc));
    fputs(", \"value\": ", stdout);
    if (rc == PANTO_OK) put_json_value(text);
    else fputs("null", stdout);
    fputs(", \"output\": ", stdout);
    if (rc != PANTO_OK) {
        panto_stream_error(stream, &err);
        put_pstr(err.output);
        fputs(", \"message\": ", stdout);
        put_pstr(err.message);
    } else fputs("\"\"", stdout);
    end_line();
}

static void begin_step_line(const char *name, int rc, const PantoAgent *agent);

/* Runs one turn and prints its lines (text NULL: the "resume_turn" step's, of the agent's
 * pending round). Returns 0 to go on with the next turn, 1 to stop. */
static int run_turn(PantoAgent *agent, const char *text, const Parts *parts, const TurnExtras *extras, const Options *opt, int cancel_this, int end_this) {
    PantoStream *stream = NULL;
    PantoInput input = PANTO_INPUT_INIT;
    static Batch batch;
    const PantoEvent *ev = &batch.evs[0];
    Canceler canceler;
    int rc, canceling = 0, handled = 0, printed = 0, freeing = 0;
    int end_kind = end_this ? (int)opt->end_early : END_NONE;
    long i, deltas = 0;

    batch.n = batch.i = 0;
    input.text = panto_cstr(text ? text : "");
    input.parts = parts->items;
    input.part_count = parts->n;
    if (extras->options) input.options = panto_cstr(extras->options);
    if (!text) { /* the "resume_turn" step: the agent's pending round */
        PantoString none = {NULL, 0};
        rc = panto_agent_resume(agent, none, &stream);
        if (rc < 0) {
            begin_step_line("resume_turn", rc, NULL);
            end_line();
            return 0;
        }
    } else if ((rc = panto_agent_run(agent, &input, &stream)) < 0) {
        print_agent_error(rc, agent);
        panto_stream_free(stream);
        return 1;
    }
    if (extras->final != FINAL_NONE) {
        run_final(stream, extras->final);
        for (i = 1; i <= opt->extra_next; i++) {
            rc = next_event(stream, &batch, &ev);
            print_end(stream, ev, rc);
        }
        free_calls();
        panto_stream_free(stream);
        return 0;
    }
    if ((cancel_this && opt->cancel_after_ms >= 0) || end_kind == END_FREE_BLOCKED) {
        freeing = end_kind == END_FREE_BLOCKED;
        canceling = canceler_start(&canceler, stream, freeing ? opt->end_after : opt->cancel_after_ms, freeing);
        if (canceling && freeing) freer = &canceler;
        if (!canceling) {
            fputs("{\"event\": \"canceler_failed\"", stdout);
            end_line();
        }
    }
    forget_asked();
    steer_after(stream, "run");
    for (;;) {
        while ((rc = next_event(stream, &batch, &ev)) == PANTO_EVENT) {
            print_event(ev);
            steer_after(stream, panto_event_kind_name(ev->kind));
            if (ev->kind == PANTO_EVENT_TOOL_CALL_START && ev->awaiting_result) collect_call(ev);
            if (ev->kind == PANTO_EVENT_APPROVAL_REQUEST) collect_asked(ev);
            deltas += ev->kind == PANTO_EVENT_CONTENT_DELTA;
            if ((end_kind == END_CLOSE || end_kind == END_DROP) && deltas == opt->end_after) {
                freer = NULL;
                if (canceling) canceler_join(&canceler);
                close_after_seen(stream, &batch, end_kind == END_CLOSE ? "closed" : "dropped");
                return 0;
            }
        }
        if (rc == PANTO_ERR_RESULT_PENDING && n_calls > 0) {
            run_round(stream);
            continue;
        }
        if (rc == PANTO_ERR_APPROVAL_PENDING && n_asked > 0) {
            answer_approvals(stream, opt->approvals);
            continue;
        }
        if (freeing && canceling) {
            /* Joined now: once it fired, the stream is gone. */
            freer = NULL;
            canceler_join(&canceler);
            if (canceler.fired) {
                /* Freed by the other thread: the blocked call's error is all there is (the
                 * detail went with the stream). Stepping, no call was blocked: the loop saw
                 * the stream freed while it waited, which a blocked next reports as canceled. */
                PantoError err = PANTO_ERROR_INIT;
                if (rc == FREED_WHILE_WAITING) rc = PANTO_ERR_CANCELED;
                err.type = panto_cstr(rc == PANTO_ERR_CANCELED ? "canceled_error" : "");
                err.retry_after = -1;
                if (rc < 0) print_error(rc, &err);
                return 0;
            }
            canceling = 0; /* joined */
        }
        if (rc >= 0 || !opt->on_error || handled) break;
        /* The turn's first error: print it, then change the config and reopen as asked. */
        handled = 1;
        print_end(stream, ev, rc);
        printed = 1;
        if (opt->set_config) print_call("set_config", panto_agent_set_config(agent, panto_cstr(opt->set_config)));
        if (opt->reopen) {
            int reopened = panto_stream_reopen(stream);
            print_call("reopen", reopened);
            if (reopened == PANTO_OK) {
                printed = 0; /* the turn goes on: its end is still to print */
                continue;
            }
        }
        break;
    }
    for (i = 0; i <= opt->extra_next; i++) {
        if (i == 0 && printed) continue; /* that error line is printed already */
        if (i > 0) rc = next_event(stream, &batch, &ev);
        print_end(stream, ev, rc);
        if (i == 0) steer_after(stream, rc == PANTO_DONE ? "done" : rc < 0 ? "error" : "");
    }
    if (canceling) canceler_join(&canceler);
    free_calls(); /* (a round the turn ended in) */
    panto_stream_free(stream);
    return 0;
}

/* ---- Steps between turns (tests/conformance/README.md) ------------------------------- */

/* What steps remember and need: the last export's text (for "reimport"), the agent's config
 * (to make another agent of it) and the case's extra_next. */
typedef struct Steps {
    char *last_export;
    size_t last_export_len;
    const char *config;
    long extra_next;
    const Options *opt; /* the case's (for "resume_turn", a turn) */
} Steps;

/* A JSON value of the library's as it is, or null when absent. */
static void put_raw_or_null(const char *value) {
    const char *end = value ? cj_skip(value) : NULL;
    if (end) fwrite(value, 1, (size_t)(end - value), stdout);
    else fputs("null", stdout);
}

/* The entries of panto_agent_list_models as the step prints them: {"id", "display_name",
 * "created", "known" (the catalog lists it), "max_input_tokens" (the catalog's, or null)}. */
static void put_model_list(PantoString list) {
    char *copy = dup_pstr(list);
    const char *it = copy, *entry;
    int first = 1;
    while (copy && (it = cj_next_element(it, &entry))) {
        const char *info = cj_member(entry, "model_info");
        int known = info && *info == '{';
        fputs(first ? "{\"id\": " : ", {\"id\": ", stdout);
        first = 0;
        put_raw_or_null(cj_member(entry, "id"));
        fputs(", \"display_name\": ", stdout);
        put_raw_or_null(cj_member(entry, "display_name"));
        fputs(", \"created\": ", stdout);
        put_raw_or_null(cj_member(entry, "created"));
        fputs(", \"known\": ", stdout);
        put_bool(known);
        fputs(", \"max_input_tokens\": ", stdout);
        put_raw_or_null(known ? cj_member(info, "max_input_tokens") : NULL);
        fputs("}", stdout);
    }
    free(copy);
}

/* A line {"event": NAME, "code": C} with the agent's message when C is not ok, left open so
 * more members can follow; end it with end_line(). */
static void begin_step_line(const char *name, int rc, const PantoAgent *agent) {
    fputs("{\"event\": ", stdout);
    put_cstr(name);
    fputs(", \"code\": ", stdout);
    put_cstr(rc < 0 ? panto_status_name(rc) : "ok");
    if (rc < 0 && agent) {
        PantoError err = PANTO_ERROR_INIT;
        panto_agent_error(agent, &err);
        fputs(", \"message\": ", stdout);
        put_pstr(err.message);
    }
}

static size_t message_count(const PantoAgent *agent) {
    size_t n = 0;
    panto_agent_message_count(agent, &n);
    return n;
}

/* Keeps a copy of the export text the agent lent. Returns 0 when memory runs out. */
static int keep_export(Steps *st, PantoString json) {
    free(st->last_export);
    st->last_export_len = json.len;
    if (!(st->last_export = (char *)malloc(json.len + 1))) return 0;
    if (json.len) memcpy(st->last_export, json.ptr, json.len);
    return 1;
}

/* A new agent of the case's config with its tools, or NULL with the status in *rc (and the
 * failed handle's reason printed as "message" by begin_step_line when name is not NULL). */
static PantoAgent *make_agent(const char *config, int *rc, const char *name) {
    PantoAgent *agent = NULL;
    size_t i;
    *rc = panto_agent_new(panto_cstr(config), &agent);
    for (i = 0; *rc == PANTO_OK && i < n_tools; i++) *rc = panto_agent_add_tool(agent, panto_cstr(tools[i].spec));
    if (*rc == PANTO_OK) return agent;
    if (name) {
        begin_step_line(name, *rc, agent);
        end_line();
    }
    panto_agent_free(agent);
    return NULL;
}

/* {"event": "mcp_status", "code", "servers": [{"name", "transport", "state", "protocol_version",
 * "server_name", "server_version", "tool_count", "error", "stderr_tail"}, ...]}. */
static void print_mcp_status(PantoAgent *agent) {
    static const char *const states[] = {"not_started", "ready", "failed", "closed"};
    size_t count = 0, i;
    int rc = panto_agent_mcp_count(agent, &count);
    begin_step_line("mcp_status", rc, agent);
    fputs(", \"servers\": [", stdout);
    for (i = 0; rc >= 0 && i < count; i++) {
        PantoMcpStatus st = PANTO_MCP_STATUS_INIT;
        /* (the strings live until the next call on the agent: printed at once) */
        if (panto_agent_mcp_status(agent, i, &st) < 0) break;
        fputs(i ? ", {\"name\": " : "{\"name\": ", stdout);
        put_pstr(st.name);
        fputs(", \"transport\": ", stdout);
        put_cstr(st.transport == PANTO_MCP_HTTP ? "http" : "stdio");
        fputs(", \"state\": ", stdout);
        put_cstr(st.state >= 0 && st.state <= 3 ? states[st.state] : "unknown");
        fputs(", \"protocol_version\": ", stdout);
        put_pstr(st.protocol_version);
        fputs(", \"server_name\": ", stdout);
        put_pstr(st.server_name);
        fputs(", \"server_version\": ", stdout);
        put_pstr(st.server_version);
        printf(", \"tool_count\": %llu, \"error\": ", (unsigned long long)st.tool_count);
        put_pstr(st.error);
        fputs(", \"stderr_tail\": ", stdout);
        put_pstr(st.stderr_tail);
        fputs("}", stdout);
    }
    fputs("]", stdout);
    end_line();
}

/* {"event": "session", "code", "id", "resumed", "torn_bytes", "message_count"}. */
static void print_session(PantoAgent *agent) {
    PantoSessionInfo info = PANTO_SESSION_INFO_INIT;
    int rc = panto_agent_session(agent, &info);
    fputs("{\"event\": \"session\", \"code\": ", stdout);
    put_cstr(rc < 0 ? panto_status_name(rc) : "ok");
    fputs(", \"id\": ", stdout);
    put_pstr(rc < 0 ? (PantoString){NULL, 0} : info.id);
    printf(", \"resumed\": %s, \"torn_bytes\": %llu, \"message_count\": %zu", rc == 0 && info.resumed ? "true" : "false",
           rc < 0 ? 0ULL : (unsigned long long)info.torn_bytes, rc < 0 ? (size_t)0 : message_count(agent));
    end_line();
}

/* The case's session directory: config.session.dir, malloc'd, or NULL. */
static char *session_dir(const char *config) {
    const char *session = cj_member(config, "session"), *dir;
    char *out = NULL;
    size_t len;
    if (!session || *session != '{' || !(dir = cj_member(session, "dir")) || *dir != '"') return NULL;
    if (!cj_string(dir, &out, &len)) return NULL;
    return out;
}

/* {"event": "sessions", "code", "sessions": [{"id", "message_count", "first_user_text",
 * "parent"}]} of the case's session directory, in the list's order. */
static const char *print_sessions(const char *config) {
    char *dir = session_dir(config), *json = NULL;
    PantoSessionList *list = NULL;
    PantoString text = {NULL, 0};
    int rc;
    if (!dir) return "\"list_sessions\" needs config.session.dir";
    rc = panto_session_list(panto_cstr(dir), &list);
    if (rc == PANTO_OK) rc = panto_session_list_json(list, &text);
    fputs("{\"event\": \"sessions\", \"code\": ", stdout);
    put_cstr(rc < 0 ? panto_status_name(rc) : "ok");
    fputs(", \"sessions\": [", stdout);
    if (rc == PANTO_OK) {
        const char *it, *value;
        int first = 1;
        json = dup_pstr(text);
        it = json;
        while ((it = cj_next_element(it, &value))) {
            static const char *const keys[] = {"id", "message_count", "first_user_text", "parent"};
            size_t k;
            fputs(first ? "{" : ", {", stdout);
            first = 0;
            for (k = 0; k < 4; k++) {
                const char *member = cj_member(value, keys[k]);
                printf("%s\"%s\": ", k ? ", " : "", keys[k]);
                if (member) fwrite(member, 1, (size_t)(cj_skip(member) - member), stdout);
                else fputs("null", stdout);
            }
            fputs("}", stdout);
        }
    }
    fputs("]", stdout);
    end_line();
    free(json);
    free(dir);
    panto_session_list_free(list);
    return NULL;
}

/* Reads a stream that needs no tools (a compaction) to its end and prints it like a turn. */
static void print_stream(PantoStream *stream, long extra_next) {
    static Batch batch;
    const PantoEvent *ev = &batch.evs[0];
    long i;
    int rc;
    batch.n = batch.i = 0;
    while ((rc = next_event(stream, &batch, &ev)) == PANTO_EVENT) print_event(ev);
    for (i = 0; i <= extra_next; i++) {
        if (i > 0) rc = next_event(stream, &batch, &ev);
        print_end(stream, ev, rc);
    }
}

/* Runs the step object at p (exactly one key) on *agent, which "reopen_agent" replaces (NULL
 * when it failed: the case ends). Returns NULL, or what is wrong with the step. */
static const char *run_step(PantoAgent **agent_slot, const char *p, Steps *st) {
    PantoAgent *agent = *agent_slot;
    char *key = NULL;
    size_t key_len;
    const char *value, *it = cj_next_member(p, &key, &key_len, &value);
    const char *wrong = NULL;
    int rc;
    if (!it || !key) return "a step is an object of one key";
    {
        char *second = NULL;
        size_t second_len;
        const char *second_value;
        if (cj_next_member(it, &second, &second_len, &second_value)) {
            free(second);
            free(key);
            return "a step is an object of one key";
        }
    }
    if (strcmp(key, "set_config") == 0) {
        size_t n = (size_t)(cj_skip(value) - value);
        PantoString json = {value, n};
        rc = panto_agent_set_config(agent, json);
        begin_step_line("set_config", rc, agent);
        end_line();
    } else if (strcmp(key, "export") == 0) {
        PantoString json = {NULL, 0};
        rc = panto_agent_export(agent, &json);
        if (rc < 0) begin_step_line("export", rc, agent);
        else {
            if (!keep_export(st, json)) wrong = "out of memory";
            fputs("{\"event\": \"export\", \"text\": ", stdout);
            put_pstr(json);
        }
        end_line();
    } else if (strcmp(key, "reimport") == 0) {
        PantoString json = {NULL, 0};
        int identical = 0;
        PantoString last = {st->last_export, st->last_export_len};
        if (!st->last_export) wrong = "\"reimport\" before any \"export\"";
        else {
            rc = panto_agent_import(agent, last);
            if (rc == PANTO_OK) {
                rc = panto_agent_export(agent, &json);
                identical = rc == PANTO_OK && json.len == last.len && (json.len == 0 || memcmp(json.ptr, last.ptr, json.len) == 0);
            }
            begin_step_line("reimport", rc, NULL);
            fputs(", \"identical\": ", stdout);
            put_bool(identical);
            end_line();
        }
    } else if (strcmp(key, "import") == 0 || strcmp(key, "import_text") == 0) {
        /* "import": the value's text as the case holds it; "import_text": the string's bytes. */
        char *text = NULL;
        size_t n = 0;
        PantoString json;
        if (strcmp(key, "import") == 0) {
            json.ptr = value;
            json.len = (size_t)(cj_skip(value) - value);
        } else if (*value != '"' || !cj_string(value, &text, &n)) {
            wrong = "\"import_text\" is not a string";
        }
        if (!wrong) {
            if (text) {
                json.ptr = text;
                json.len = n;
            }
            rc = panto_agent_import(agent, json);
            begin_step_line("import", rc, agent);
            end_line();
        }
        free(text);
    } else if (strcmp(key, "truncate") == 0 || strcmp(key, "drop_last") == 0) {
        long k = 0;
        int drop = key[0] == 'd';
        char *end;
        k = strtol(value, &end, 10);
        if (*value < '0' || *value > '9' || end != cj_skip(value)) wrong = "a truncate or drop_last count is not a non-negative integer";
        else {
            size_t count = message_count(agent);
            if (!drop) rc = panto_agent_truncate(agent, (size_t)k);
            else if ((size_t)k > count) rc = PANTO_ERR_INVALID_ARGUMENT; /* as the bindings' drop_last */
            else rc = panto_agent_truncate(agent, count - (size_t)k);
            fputs("{\"event\": ", stdout);
            put_cstr(drop ? "drop_last" : "truncate");
            fputs(", \"code\": ", stdout);
            put_cstr(rc < 0 ? panto_status_name(rc) : "ok");
            printf(", \"message_count\": %zu", message_count(agent));
            end_line();
        }
    } else if (strcmp(key, "count_tokens") == 0) {
        /* A string: the input's text; null: no input (the conversation as it is). */
        char *text = NULL;
        size_t n = 0;
        PantoInput input = PANTO_INPUT_INIT;
        PantoTokenCount count = PANTO_TOKEN_COUNT_INIT;
        if (strncmp(value, "null", 4) != 0 && (*value != '"' || !cj_string(value, &text, &n))) wrong = "\"count_tokens\" is not a string or null";
        else {
            input.text.ptr = text;
            input.text.len = n;
            rc = panto_agent_count_tokens(agent, text ? &input : NULL, &count);
            begin_step_line("count_tokens", rc, NULL);
            printf(", \"input_tokens\": %llu, \"estimated\": ", rc < 0 ? 0ULL : (unsigned long long)count.input_tokens);
            put_bool(rc >= 0 && count.estimated);
            end_line();
        }
        free(text);
    } else if (strcmp(key, "spent") == 0) {
        PantoUsage u = {0};
        double cost = -1;
        rc = panto_agent_spent(agent, &u, &cost);
        begin_step_line("spent", rc, NULL);
        printf(", \"usage\": {\"input_tokens\": %" PRIu64 ", \"output_tokens\": %" PRIu64 ", \"cache_read_tokens\": %" PRIu64
               ", \"cache_write_tokens\": %" PRIu64 ", \"reasoning_tokens\": %" PRIu64 "}, \"cost\": ",
               u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens, u.reasoning_tokens);
        put_number_or_null(cost);
        end_line();
    } else if (strcmp(key, "list_models") == 0) {
        PantoString list = {0};
        rc = panto_agent_list_models(agent, &list);
        begin_step_line("list_models", rc, NULL);
        fputs(", \"models\": [", stdout);
        if (rc >= 0) put_model_list(list);
        fputs("]", stdout);
        end_line();
    } else if (strcmp(key, "rollback_turn") == 0) {
        size_t removed = 0;
        rc = panto_agent_rollback_turn(agent, &removed);
        begin_step_line("rollback_turn", rc, NULL);
        printf(", \"removed\": %zu, \"message_count\": %zu", removed, message_count(agent));
        end_line();
    } else if (strcmp(key, "compact") == 0) {
        /* true, or {"instructions": TEXT} */
        PantoStream *stream = NULL;
        const char *given = *value == '{' ? cj_member(value, "instructions") : NULL;
        char *text = NULL;
        size_t text_len = 0;
        if (given && (*given != '"' || !cj_string(given, &text, &text_len))) {
            wrong = "\"compact\" is not true or {\"instructions\": TEXT}";
        } else {
            PantoString instructions = {text, text_len};
            rc = text ? panto_agent_compact_with(agent, instructions, &stream) : panto_agent_compact(agent, &stream);
            if (rc < 0) {
                begin_step_line("compact", rc, NULL);
                end_line();
            } else {
                print_stream(stream, st->extra_next);
                panto_stream_free(stream);
            }
        }
        free(text);
    } else if (strcmp(key, "session_info") == 0) {
        print_session(agent);
    } else if (strcmp(key, "pending_round") == 0) {
        static const char *const states[] = {"ask", "to_run", "started", "answered"};
        const PantoPendingCall *calls = NULL;
        size_t n = 0, i;
        rc = panto_agent_pending_round(agent, &calls, &n);
        begin_step_line("pending_round", rc, NULL);
        fputs(", \"calls\": [", stdout);
        for (i = 0; i < n; i++) {
            fputs(i ? ", {\"id\": " : "{\"id\": ", stdout);
            put_pstr(calls[i].id);
            fputs(", \"name\": ", stdout);
            put_pstr(calls[i].name);
            fputs(", \"input\": ", stdout);
            put_json_value(calls[i].input);
            fputs(", \"state\": ", stdout);
            put_cstr(calls[i].state >= 0 && calls[i].state < 4 ? states[calls[i].state] : "unknown");
            fputs("}", stdout);
        }
        fputs("]", stdout);
        end_line();
    } else if (strcmp(key, "resume_turn") == 0) {
        Parts none = {NULL, 0, NULL, 0};
        TurnExtras extras = {NULL, FINAL_NONE};
        run_turn(agent, NULL, &none, &extras, st->opt, 0, 0);
    } else if (strcmp(key, "mcp_status") == 0) {
        print_mcp_status(agent);
    } else if (strcmp(key, "reopen_agent") == 0) {
        panto_agent_free(agent);
        *agent_slot = make_agent(st->config, &rc, "reopen_agent");
        if (*agent_slot) {
            begin_step_line("reopen_agent", PANTO_OK, NULL);
            end_line();
        }
    } else if (strcmp(key, "second_agent") == 0) {
        PantoAgent *second = make_agent(st->config, &rc, NULL);
        begin_step_line("second_agent", rc, NULL);
        end_line();
        panto_agent_free(second);
    } else if (strcmp(key, "fork") == 0) {
        const char *count = cj_member(value, "message_count"), *id = cj_member(value, "id");
        char *new_id = NULL, *end;
        size_t id_len = 0;
        long k = count ? strtol(count, &end, 10) : -1;
        if (*value != '{' || !count || k < 0 || end != cj_skip(count) || !id || *id != '"' || !cj_string(id, &new_id, &id_len))
            wrong = "\"fork\" is not {\"message_count\": K, \"id\": ID}";
        else {
            PantoString given = {new_id, id_len};
            rc = panto_agent_fork_session(agent, (size_t)k, given);
            begin_step_line("fork", rc, NULL);
            end_line();
        }
        free(new_id);
    } else if (strcmp(key, "list_sessions") == 0) {
        wrong = print_sessions(st->config);
    } else if (strcmp(key, "append_to_session") == 0) {
        PantoSessionInfo info = PANTO_SESSION_INFO_INIT;
        char *bytes = NULL, *path = NULL;
        size_t n = 0;
        FILE *f = NULL;
        if (*value != '"' || !cj_string(value, &bytes, &n)) wrong = "\"append_to_session\" is not a string";
        else if (panto_agent_session(agent, &info) != PANTO_OK) wrong = "\"append_to_session\" on an agent without a session";
        else if (!(path = dup_pstr(info.path)) || !(f = fopen(path, "ab")) || fwrite(bytes, 1, n, f) != n)
            wrong = "cannot append to the session file";
        if (f && fclose(f) != 0 && !wrong) wrong = "cannot append to the session file";
        if (!wrong) {
            fputs("{\"event\": \"append_to_session\"", stdout);
            end_line();
        }
        free(path);
        free(bytes);
    } else {
        wrong = "a step names no step this driver knows";
    }
    free(key);
    return wrong;
}

/* Reads the member `name` of the object at obj into *out when it is there; 0 when it is
 * there but not a non-negative integer. */
static int read_count(const char *obj, const char *name, long *out) {
    const char *member = cj_member(obj, name);
    char *end;
    long value;
    if (!member) return 1;
    value = strtol(member, &end, 10);
    if (*member < '0' || *member > '9' || end != cj_skip(member)) return 0;
    *out = value;
    return 1;
}

int main(int argc, char **argv) {
    char *text, *config = NULL;
    const char *root, *cfg, *cfg_end, *turns, *p, *case_tools, *problem, *member;
    size_t i;
    Options opt = {1, -1, 0, 0, NULL, 0, 0, END_NONE, 0, 0, 0, NULL};
    long turn_index = 0;
    Steps steps = {NULL, 0, NULL, 0, NULL};
    PantoAgent *agent = NULL;
    int rc, status = 0;

    if (argc == 4 && strcmp(argv[1], "--async") == 0) {
        async_mode = 1;
        argc--;
        argv++;
    }
    if (argc != 3) return die("usage: c_driver [--async] CASE_JSON BASE_URL", NULL);
    if (panto_abi_version() != PANTO_ABI_VERSION) return die("libpanto ABI version mismatch", NULL);
    if (!(text = read_file(argv[1]))) return die("cannot read", argv[1]);

    root = cj_ws(text);
    p = cj_skip(root);
    if (*root != '{' || !p || *cj_ws(p) != 0) {
        status = die("not a JSON object", argv[1]);
        goto out;
    }
    cfg = cj_member(root, "config");
    if (!cfg || *cfg != '{') {
        status = die("case has no \"config\" object", argv[1]);
        goto out;
    }
    cfg_end = cj_skip(cfg);
    turns = cj_member(root, "turns");
    if (!turns || *turns != '[') {
        status = die("case has no \"turns\" array", argv[1]);
        goto out;
    }
    if (!read_count(root, "extra_next", &opt.extra_next)) {
        status = die("\"extra_next\" is not a non-negative integer", argv[1]);
        goto out;
    }
    if (!read_count(root, "cancel_after_ms", &opt.cancel_after_ms)) {
        status = die("\"cancel_after_ms\" is not a non-negative integer", argv[1]);
        goto out;
    }
    if (!read_count(root, "cancel_turn", &opt.cancel_turn)) {
        status = die("\"cancel_turn\" is not a non-negative integer", argv[1]);
        goto out;
    }
    if ((member = cj_member(root, "on_error"))) {
        const char *sc, *reopen;
        if (*member != '{') {
            status = die("\"on_error\" is not an object", argv[1]);
            goto out;
        }
        opt.on_error = 1;
        if ((sc = cj_member(member, "set_config"))) {
            size_t n = (size_t)(cj_skip(sc) - sc);
            if (*sc != '{' || !(opt.set_config = (char *)malloc(n + 1))) {
                status = die("\"on_error.set_config\" is not an object", argv[1]);
                goto out;
            }
            memcpy(opt.set_config, sc, n);
            opt.set_config[n] = 0;
        }
        reopen = cj_member(member, "reopen");
        opt.reopen = reopen && strncmp(reopen, "true", 4) == 0;
    }
    opt.connections = cj_member(root, "expect_connections") != NULL;
    opt.approvals = cj_member(root, "approvals");
    steer_it = cj_member(root, "steer");
    if ((member = cj_member(root, "end_early"))) {
        static const char *const kinds[] = {"close_after_deltas", "drop_after_deltas", "free_blocked_after_ms"};
        size_t k;
        if (*member != '{' || !read_count(member, "turn", &opt.end_turn)) {
            status = die("\"end_early\" is not an object with a \"turn\" index", argv[1]);
            goto out;
        }
        for (k = 0; k < 3; k++) {
            if (!cj_member(member, kinds[k])) continue;
            if (!read_count(member, kinds[k], &opt.end_after)) {
                status = die("an \"end_early\" count is not a non-negative integer", argv[1]);
                goto out;
            }
            opt.end_early = k == 0 ? END_CLOSE : k == 1 ? END_DROP : END_FREE_BLOCKED;
        }
        if (opt.end_early == END_NONE) {
            status = die("\"end_early\" names no way to end", argv[1]);
            goto out;
        }
    }
    member = cj_member(root, "print_conversation");
    opt.print_conversation = member && strncmp(member, "true", 4) == 0;
    member = cj_member(root, "print_error_detail");
    print_error_detail = member && strncmp(member, "true", 4) == 0;
    member = cj_member(root, "print_request_ids");
    print_request_ids = member && strncmp(member, "true", 4) == 0;
    member = cj_member(root, "print_costs");
    print_costs = member && strncmp(member, "true", 4) == 0;
    case_tools = cj_member(root, "tools");
    if (case_tools && (problem = read_tools(case_tools))) {
        status = die(problem, argv[1]);
        goto out;
    }
    if (!(config = config_with_base_url(cfg, cfg_end, argv[2]))) {
        status = die("out of memory", NULL);
        goto out;
    }

    steps.config = config;
    steps.extra_next = opt.extra_next;
    steps.opt = &opt;
    rc = panto_agent_new(panto_cstr(config), &agent);
    if (rc < 0) {
        print_agent_error(rc, agent);
        goto out;
    }
    /* The host tools. A tool the library refuses ends the case like a refused config. */
    for (i = 0; i < n_tools; i++) {
        rc = panto_agent_add_tool(agent, panto_cstr(tools[i].spec));
        if (rc < 0) {
            print_agent_error(rc, agent);
            goto out;
        }
    }

    /* The turns, one run() each on the same agent. */
    p = cj_ws(turns + 1);
    while (*p != ']') {
        char *turn = NULL;
        size_t len = 0;
        int stop;
        Parts parts = {NULL, 0, NULL, 0};
        TurnExtras extras = {NULL, FINAL_NONE};
        const char *after = NULL; /* past a turn object */
        if (*p == '{' && cj_member(p, "input")) {
            /* A turn object: its input, options and final helper. */
            const char *o = cj_member(p, "options"), *f = cj_member(p, "final");
            after = cj_skip(p);
            if (o && !(extras.options = dup_pstr((PantoString){o, (size_t)(cj_skip(o) - o)}))) {
                status = die("out of memory", NULL);
                goto out;
            }
            if (f) {
                if (strncmp(f, "\"message\"", 9) == 0) extras.final = FINAL_MESSAGE;
                else if (strncmp(f, "\"json\"", 6) == 0) extras.final = FINAL_JSON;
                else {
                    free(extras.options);
                    status = die("a turn's \"final\" is not \"message\" or \"json\"", argv[1]);
                    goto out;
                }
            }
            p = cj_member(p, "input");
        } else if (*p == '{') {
            /* A step between turns: no run(). */
            const char *wrong = run_step(&agent, p, &steps);
            if (wrong) {
                status = die(wrong, argv[1]);
                goto out;
            }
            if (!agent) goto out; /* reopen_agent failed: no agent for the rest */
            p = cj_ws(cj_skip(p));
            if (*p == ',') p = cj_ws(p + 1);
            continue;
        }
        if (*p == '[') {
            /* A turn of parts: all of it goes as parts, the text left empty. */
            const char *end = cj_skip(p), *wrong = read_parts(p, &parts);
            if (wrong) {
                free_parts(&parts);
                status = die(wrong, argv[1]);
                goto out;
            }
            p = end;
        } else if (*p != '"' || !(p = cj_string(p, &turn, &len))) {
            status = die("a turn is not a string or a list of parts", argv[1]);
            goto out;
        } else if (strlen(turn) != len) {
            free(turn);
            status = die("a turn holds a NUL character", argv[1]);
            goto out;
        }
        stop = run_turn(agent, turn ? turn : "", &parts, &extras, &opt, turn_index == opt.cancel_turn, turn_index == opt.end_turn);
        turn_index++;
        free(turn);
        free(extras.options);
        free_parts(&parts);
        if (stop) break;
        if (after) p = after;
        p = cj_ws(p);
        if (*p == ',') p = cj_ws(p + 1);
    }
    if (opt.connections) print_connections(agent);
    if (opt.print_conversation) print_conversation(agent);

out:
    free(steps.last_export);
    free(opt.set_config);
    free_tools();
    panto_agent_free(agent);
    free(config);
    free(text);
    return status;
}
