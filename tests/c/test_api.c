/*
 * test_api.c — tests of the C API's edges (include/panto.h) that need no conformance case:
 * NULL arguments, _free(NULL), versions, names, refused configurations, BUSY, sticky
 * errors and DONE, growable structs written only as far as their `size` (an ABI-1 sized
 * PantoEvent included), refused tool specs, the formats of panto_agent_tools, the argument
 * errors of panto_stream_submit_tool_result around a host tool call, PROVIDER_RETRY events,
 * panto_agent_set_config (applied, refused with nothing changed, busy), panto_stream_cancel
 * from another thread while panto_next_event is blocked (on a stalled socket, in a retry's
 * wait), panto_stream_reopen (STATE, BUSY, after an HTTP 400), redacted thinking sent back;
 * ABI v3: PantoString inputs and their argument errors, the detail a failed stream call
 * leaves on the stream, tool sets (panto_tools_*), the text policy (NUL kept, invalid UTF-8
 * replaced), and the close policy: panto_stream_free after k deltas, while a tool result is
 * awaited, and from another thread during a blocked panto_next_event(s). Issue 28: streams
 * driven by panto_step_event(s) in a poll() loop (several turns at once, a host tool round,
 * a silent server's deadline, cancel and free while parked, mixing with panto_next_event).
 *
 * The turns that need a server talk to a tiny HTTP server forked by this program on
 * 127.0.0.1 (canned answers, one per connection, optionally stalling mid-body); it reports the
 * request bodies it read through a pipe. Nothing else is contacted.
 *
 * Build and run (from the repository root, after `zig build`):
 *     cc -std=c99 -Wall -Wextra -Werror -pedantic -pthread -Iinclude tests/c/test_api.c \
 *        -Lzig-out/lib -lpanto -Wl,-rpath,$PWD/zig-out/lib -o build/test_api && build/test_api
 *
 * Prints each failed check, then `N passed, N failed`; exits 1 if any check failed. An
 * argument runs only the tests whose function name holds it (`build/test_api step_`).
 */
#define _POSIX_C_SOURCE 200809L

#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "panto.h"
#include "../conformance/drivers/c_json.h"

/* ---- Checks -------------------------------------------------------------------------- */

static int n_passed, n_failed;
static const char *current_test = "";

static void check(int ok, const char *what, int line) {
    if (ok) {
        n_passed++;
    } else {
        n_failed++;
        printf("FAIL %s (test_api.c:%d): %s\n", current_test, line, what);
    }
}

#define CHECK(cond) check((cond) != 0, #cond, __LINE__)
#define CHECK_RC(call, want) check_rc((call), (want), #call, __LINE__)
#define CHECK_NAME(got, want) check_name((got), (want), #got, __LINE__)

static void check_rc(int got, int want, const char *what, int line) {
    if (got == want) {
        n_passed++;
        return;
    }
    n_failed++;
    printf("FAIL %s (test_api.c:%d): %s returned %d (%s), expected %d (%s)\n", current_test, line,
           what, got, panto_status_name(got), want, panto_status_name(want));
}

static void check_name(const char *got, const char *want, const char *what, int line) {
    if (got && strcmp(got, want) == 0) {
        n_passed++;
        return;
    }
    n_failed++;
    printf("FAIL %s (test_api.c:%d): %s is %s%s%s, expected \"%s\"\n", current_test, line, what,
           got ? "\"" : "", got ? got : "NULL", got ? "\"" : "", want);
}

static int pstr_eq(PantoString s, const char *want) {
    size_t n = strlen(want);
    return s.len == n && (n == 0 || (s.ptr && memcmp(s.ptr, want, n) == 0));
}

/* Whether s holds `part`. */
static int pstr_contains(PantoString s, const char *part) {
    size_t n = strlen(part), i;
    for (i = 0; s.ptr && i + n <= s.len; i++)
        if (memcmp(s.ptr + i, part, n) == 0) return 1;
    return 0;
}

/* Whether the bytes [from, to) of obj all equal `fill`. */
static int untouched(const void *obj, size_t from, size_t to, unsigned char fill) {
    const unsigned char *p = (const unsigned char *)obj;
    size_t i;
    for (i = from; i < to; i++)
        if (p[i] != fill) return 0;
    return 1;
}

/* Counts the occurrences of needle in the borrowed string s. */
static int count_in(PantoString s, const char *needle) {
    size_t n = strlen(needle), i;
    int count = 0;
    if (!s.ptr || n == 0) return 0;
    for (i = 0; i + n <= s.len; i++)
        if (memcmp(s.ptr + i, needle, n) == 0) count++;
    return count;
}

/* The calls that take PantoStrings and structs, from C strings. */
static int agent_new(const char *config_json, PantoAgent **out_agent) {
    return panto_agent_new(panto_cstr(config_json), out_agent);
}

static int set_config(PantoAgent *agent, const char *config_json) {
    return panto_agent_set_config(agent, panto_cstr(config_json));
}

static int add_tool(PantoAgent *agent, const char *tool_json) {
    return panto_agent_add_tool(agent, panto_cstr(tool_json));
}

static int run_text(PantoAgent *agent, const char *text, PantoStream **out_stream) {
    PantoInput input = PANTO_INPUT_INIT;
    input.text = panto_cstr(text);
    return panto_agent_run(agent, &input, out_stream);
}

static int submit_result(PantoStream *stream, const char *call_id, const char *content, int is_error) {
    PantoToolResult result = PANTO_TOOL_RESULT_INIT;
    result.call_id = panto_cstr(call_id);
    result.content = panto_cstr(content);
    result.is_error = is_error;
    return panto_stream_submit_tool_result(stream, &result);
}

/* ---- A canned HTTP server ------------------------------------------------------------ */

static const char SSE_OK[] =
    "event: message_start\n"
    "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_test_1\",\"type\":\"message\","
    "\"role\":\"assistant\",\"model\":\"claude-test\",\"content\":[],\"stop_reason\":null,"
    "\"usage\":{\"input_tokens\":11,\"output_tokens\":1}}}\n\n"
    "event: content_block_start\n"
    "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n"
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\" there\"}}\n\n"
    "event: content_block_stop\n"
    "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
    "event: message_delta\n"
    "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},"
    "\"usage\":{\"output_tokens\":5}}\n\n"
    "event: message_stop\n"
    "data: {\"type\":\"message_stop\"}\n\n";

/* A tool_use answer: get_weather {"city": "Paris"}, its input in two fragments. */
static const char SSE_TOOL[] =
    "event: message_start\n"
    "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_tool_1\",\"type\":\"message\","
    "\"role\":\"assistant\",\"model\":\"claude-test\",\"content\":[],\"stop_reason\":null,"
    "\"usage\":{\"input_tokens\":20,\"output_tokens\":1}}}\n\n"
    "event: content_block_start\n"
    "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\","
    "\"id\":\"toolu_t1\",\"name\":\"get_weather\",\"input\":{}}}\n\n"
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\","
    "\"partial_json\":\"{\\\"city\\\": \"}}\n\n"
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\","
    "\"partial_json\":\"\\\"Paris\\\"}\"}}\n\n"
    "event: content_block_stop\n"
    "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
    "event: message_delta\n"
    "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},"
    "\"usage\":{\"output_tokens\":9}}\n\n"
    "event: message_stop\n"
    "data: {\"type\":\"message_stop\"}\n\n";

static const char BODY_401[] =
    "{\"type\":\"error\",\"error\":{\"type\":\"authentication_error\",\"message\":\"invalid x-api-key\"}}";

struct canned {
    int status;
    const char *content_type;
    const char *body;
    const char *headers; /* extra header lines, each ending in \r\n; NULL: none */
    size_t stall_after;  /* > 0: send only this many body bytes (Content-Length announces them
                            all), then hold the connection until the client closes it */
};

static pid_t server_pid = -1;
static int serve_kept_alive; /* 1: the server answers every request on its first connection,
                                without Connection: close */
static int requests_fd = -1; /* the read end of the pipe the server reports bodies on */
static char *requests;       /* after stop_server: the request bodies, one per line */

/* Reads one HTTP request (headers and a Content-Length body) from fd into buf (the body
 * NUL-terminated at *body); returns 0 on success. */
static int read_request(int fd, char *buf, size_t cap, char **body) {
    size_t len = 0;
    char *end = NULL;
    long body_len = 0;
    while (!end) {
        ssize_t got;
        if (len >= cap - 1) return -1;
        got = read(fd, buf + len, cap - 1 - len);
        if (got <= 0) return -1;
        len += (size_t)got;
        buf[len] = 0;
        end = strstr(buf, "\r\n\r\n");
    }
    {
        const char *cl = strstr(buf, "ontent-Length:");
        if (!cl) cl = strstr(buf, "ontent-length:");
        if (cl && cl < end) body_len = strtol(cl + 14, NULL, 10);
    }
    *body = end + 4;
    if (body_len < 0 || (size_t)(*body - buf) + (size_t)body_len >= cap) return -1;
    while ((long)(len - (size_t)(*body - buf)) < body_len) {
        ssize_t got = read(fd, buf + len, cap - 1 - len);
        if (got <= 0) return -1;
        len += (size_t)got;
    }
    (*body)[body_len] = 0;
    return 0;
}

static void write_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t put = write(fd, p, n);
        if (put <= 0) return;
        p += put;
        n -= (size_t)put;
    }
}

/* Forks a server on 127.0.0.1 that answers the i-th connection with answers[i], then exits.
 * Returns its base URL in url. Each request body it reads goes, as one line, to a pipe that
 * stop_server collects into `requests`. */
static int start_server(const struct canned *answers, int n, char *url, size_t url_size) {
    struct sockaddr_in addr;
    socklen_t addr_len = sizeof addr;
    int one = 1, report[2];
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    free(requests);
    requests = NULL;
    if (pipe(report) < 0) {
        close(fd);
        return -1;
    }
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    if (bind(fd, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(fd, 8) < 0 ||
        getsockname(fd, (struct sockaddr *)&addr, &addr_len) < 0) {
        close(fd);
        close(report[0]);
        close(report[1]);
        return -1;
    }
    snprintf(url, url_size, "http://127.0.0.1:%d", (int)ntohs(addr.sin_port));
    fflush(stdout);
    server_pid = fork();
    if (server_pid < 0) {
        close(fd);
        close(report[0]);
        close(report[1]);
        return -1;
    }
    if (server_pid == 0) {
        static char buf[1 << 20];
        int i;
        close(report[0]);
        alarm(30); /* never outlive a stuck test */
        int conn = -1;
        for (i = 0; i < n; i++) {
            char head[512], *body = NULL;
            int got;
            if (conn < 0) conn = accept(fd, NULL, NULL);
            if (conn < 0) _exit(1);
            got = read_request(conn, buf, sizeof buf, &body);
            if (got != 0 && serve_kept_alive) {
                /* The client closed the kept-alive connection: the request comes on a new one. */
                close(conn);
                conn = accept(fd, NULL, NULL);
                if (conn < 0) _exit(1);
                got = read_request(conn, buf, sizeof buf, &body);
            }
            if (got == 0) {
                size_t body_len = strlen(answers[i].body), sent = body_len;
                int head_len = snprintf(head, sizeof head,
                                        "HTTP/1.1 %d X\r\nContent-Type: %s\r\nContent-Length: %lu\r\n"
                                        "%s%s\r\n",
                                        answers[i].status, answers[i].content_type,
                                        (unsigned long)body_len,
                                        answers[i].headers ? answers[i].headers : "",
                                        serve_kept_alive ? "" : "Connection: close\r\n");
                write_all(report[1], body, strlen(body));
                write_all(report[1], "\n", 1);
                if (answers[i].stall_after > 0 && answers[i].stall_after < body_len)
                    sent = answers[i].stall_after;
                write_all(conn, head, (size_t)head_len);
                write_all(conn, answers[i].body, sent);
                if (sent < body_len) {
                    char sink[256];
                    while (read(conn, sink, sizeof sink) > 0) {
                    } /* held until the client goes away */
                }
            }
            if (!serve_kept_alive) {
                close(conn);
                conn = -1;
            }
        }
        _exit(0);
    }
    close(fd);
    close(report[1]);
    requests_fd = report[0];
    return 0;
}

static void stop_server(void) {
    if (server_pid > 0) {
        kill(server_pid, SIGTERM);
        waitpid(server_pid, NULL, 0);
        server_pid = -1;
    }
    if (requests_fd >= 0) {
        size_t len = 0, cap = 4096;
        ssize_t got;
        requests = (char *)malloc(cap);
        if (!requests) abort();
        while ((got = read(requests_fd, requests + len, cap - 1 - len)) > 0) {
            len += (size_t)got;
            if (cap - 1 - len < 1024) {
                cap *= 2;
                requests = (char *)realloc(requests, cap);
                if (!requests) abort();
            }
        }
        requests[len] = 0;
        close(requests_fd);
        requests_fd = -1;
    }
}

/* The i-th request body the last server read (after stop_server), as a PantoString; empty
 * when there was none. */
static PantoString request_body(int i) {
    PantoString out = {"", 0};
    const char *p = requests, *nl;
    if (!p) return out;
    while (i-- > 0) {
        if (!(nl = strchr(p, '\n'))) return out;
        p = nl + 1;
    }
    if (!(nl = strchr(p, '\n'))) return out;
    out.ptr = p;
    out.len = (size_t)(nl - p);
    return out;
}

/* How many request bodies the last server read. */
static int request_count(void) {
    int n = 0;
    const char *p;
    for (p = requests; p && *p; p++) n += *p == '\n';
    return n;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* An Anthropic agent for base_url; `extra` (NULL or members of a JSON object, e.g.
 * "\"retry\": {\"max_retries\": 0}") is added to its config. */
static PantoAgent *new_agent_with(const char *base_url, const char *extra) {
    char config[1024];
    PantoAgent *agent = NULL;
    snprintf(config, sizeof config,
             "{\"provider\": \"anthropic\", \"model\": \"claude-test\", \"api_key\": \"test-key\", "
             "\"base_url\": \"%s\"%s%s}",
             base_url, extra ? ", " : "", extra ? extra : "");
    if (agent_new(config, &agent) != PANTO_OK) {
        panto_agent_free(agent);
        return NULL;
    }
    return agent;
}

static PantoAgent *new_agent(const char *base_url) { return new_agent_with(base_url, NULL); }

/* Starts the canned server with these answers and makes an agent for it; NULL (reported as a
 * failed check, the server stopped) when either cannot be had. */
static PantoAgent *serve_and_connect(const struct canned *answers, int n, char *url, size_t url_size) {
    PantoAgent *agent;
    if (start_server(answers, n, url, url_size) < 0) {
        CHECK(!"cannot start the canned server");
        return NULL;
    }
    agent = new_agent(url);
    CHECK(agent != NULL);
    if (!agent) stop_server();
    return agent;
}

static const char WEATHER_TOOL[] =
    "{\"name\": \"get_weather\", \"description\": \"Current weather for a city.\", "
    "\"input_schema\": {\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}}, "
    "\"required\": [\"city\"]}}";

/* A NUL-terminated copy of a borrowed string (the JSON reader needs one); free it. */
static char *dup_pstr(PantoString s) {
    char *out = (char *)malloc(s.len + 1);
    if (!out) abort();
    if (s.len) memcpy(out, s.ptr, s.len);
    out[s.len] = 0;
    return out;
}

/* Whether the JSON string at p (a cj_member result) is exactly want. */
static int json_str_is(const char *p, const char *want) {
    char *got = NULL;
    size_t len = 0;
    int ok;
    if (!p || *p != '"' || !cj_string(p, &got, &len)) return 0;
    ok = len == strlen(want) && memcmp(got, want, len) == 0;
    free(got);
    return ok;
}

/* ---- Tests --------------------------------------------------------------------------- */

static void test_versions(void) {
    const char *v = panto_version();
    current_test = "versions";
    CHECK(panto_abi_version() == PANTO_ABI_VERSION);
    CHECK(v != NULL && v[0] != 0);
}

static void test_names(void) {
    current_test = "names";
    CHECK_NAME(panto_status_name(PANTO_OK), "ok");
    CHECK_NAME(panto_status_name(PANTO_EVENT), "event");
    CHECK_NAME(panto_status_name(PANTO_DONE), "done");
    CHECK_NAME(panto_status_name(PANTO_WOULD_BLOCK), "would_block");
    CHECK_NAME(panto_status_name(PANTO_ERR_INVALID_ARGUMENT), "invalid_argument");
    CHECK_NAME(panto_status_name(PANTO_ERR_OUT_OF_MEMORY), "out_of_memory");
    CHECK_NAME(panto_status_name(PANTO_ERR_CONFIG), "config");
    CHECK_NAME(panto_status_name(PANTO_ERR_BUSY), "busy");
    CHECK_NAME(panto_status_name(PANTO_ERR_RESULT_PENDING), "result_pending");
    CHECK_NAME(panto_status_name(PANTO_ERR_NO_SUCH_CALL), "no_such_call");
    CHECK_NAME(panto_status_name(PANTO_ERR_AUTHENTICATION), "authentication");
    CHECK_NAME(panto_status_name(PANTO_ERR_PERMISSION), "permission");
    CHECK_NAME(panto_status_name(PANTO_ERR_NOT_FOUND), "not_found");
    CHECK_NAME(panto_status_name(PANTO_ERR_INVALID_REQUEST), "invalid_request");
    CHECK_NAME(panto_status_name(PANTO_ERR_RATE_LIMIT), "rate_limit");
    CHECK_NAME(panto_status_name(PANTO_ERR_OVERLOADED), "overloaded");
    CHECK_NAME(panto_status_name(PANTO_ERR_SERVER), "server");
    CHECK_NAME(panto_status_name(PANTO_ERR_TIMEOUT), "timeout");
    CHECK_NAME(panto_status_name(PANTO_ERR_CONNECTION), "connection");
    CHECK_NAME(panto_status_name(PANTO_ERR_PROTOCOL), "protocol");
    CHECK_NAME(panto_status_name(PANTO_ERR_CANCELED), "canceled");
    CHECK_NAME(panto_status_name(PANTO_ERR_TOOL_LOOP), "tool_loop");
    CHECK_NAME(panto_status_name(PANTO_ERR_CAPABILITY), "capability");
    CHECK_NAME(panto_status_name(PANTO_ERR_STATE), "state");
    CHECK_NAME(panto_status_name(PANTO_ERR_CONVERSATION), "conversation");
    CHECK_NAME(panto_status_name(PANTO_ERR_SESSION), "session");
    CHECK_NAME(panto_status_name(PANTO_ERR_SESSION_LOCKED), "session_locked");
    CHECK_NAME(panto_status_name(PANTO_ERR_NO_SUCH_SESSION), "no_such_session");
    CHECK_NAME(panto_status_name(PANTO_ERR_OUTPUT), "output");
    CHECK_NAME(panto_status_name(-28), "unknown");
    CHECK_NAME(panto_status_name(PANTO_ERR_APPROVAL_PENDING), "approval_pending");
    CHECK_NAME(panto_status_name(-9), "unknown");
    CHECK_NAME(panto_status_name(4), "unknown");
    CHECK_NAME(panto_status_name(-1000), "unknown");

    CHECK_NAME(panto_event_kind_name(PANTO_EVENT_MESSAGE_START), "message_start");
    CHECK_NAME(panto_event_kind_name(PANTO_EVENT_BLOCK_START), "block_start");
    CHECK_NAME(panto_event_kind_name(PANTO_EVENT_CONTENT_DELTA), "content_delta");
    CHECK_NAME(panto_event_kind_name(PANTO_EVENT_BLOCK_COMPLETE), "block_complete");
    CHECK_NAME(panto_event_kind_name(PANTO_EVENT_MESSAGE_COMPLETE), "message_complete");
    CHECK_NAME(panto_event_kind_name(PANTO_EVENT_MESSAGE_END), "message_end");
    CHECK_NAME(panto_event_kind_name(PANTO_EVENT_TOOL_DETAILS), "tool_details");
    CHECK_NAME(panto_event_kind_name(PANTO_EVENT_TOOL_CALL_START), "tool_call_start");
    CHECK_NAME(panto_event_kind_name(PANTO_EVENT_TOOL_RESULT), "tool_result");
    CHECK_NAME(panto_event_kind_name(PANTO_EVENT_PROVIDER_RETRY), "provider_retry");
    CHECK_NAME(panto_event_kind_name(0), "unknown");
    CHECK_NAME(panto_event_kind_name(PANTO_EVENT_COMPACTION_START), "compaction_start");
    CHECK_NAME(panto_event_kind_name(PANTO_EVENT_COMPACTION_END), "compaction_end");
    CHECK_NAME(panto_event_kind_name(PANTO_EVENT_TOOL_PROGRESS), "tool_progress");
    CHECK_NAME(panto_event_kind_name(PANTO_EVENT_APPROVAL_REQUEST), "approval_request");
    CHECK_NAME(panto_event_kind_name(PANTO_EVENT_USER_MESSAGE), "user_message");
    CHECK_NAME(panto_event_kind_name(16), "unknown");
    CHECK_NAME(panto_event_kind_name(99), "unknown");

    CHECK_NAME(panto_block_kind_name(PANTO_BLOCK_NONE), "none");
    CHECK_NAME(panto_block_kind_name(PANTO_BLOCK_TEXT), "text");
    CHECK_NAME(panto_block_kind_name(PANTO_BLOCK_THINKING), "thinking");
    CHECK_NAME(panto_block_kind_name(PANTO_BLOCK_TOOL_CALL), "tool_call");
    CHECK_NAME(panto_block_kind_name(PANTO_BLOCK_REDACTED_THINKING), "redacted_thinking");
    CHECK_NAME(panto_block_kind_name(PANTO_BLOCK_SERVER_BLOCK), "server_block");
    CHECK_NAME(panto_block_kind_name(6), "unknown");
    CHECK_NAME(panto_block_kind_name(-1), "unknown");

    CHECK_NAME(panto_stop_reason_name(PANTO_STOP_NONE), "none");
    CHECK_NAME(panto_stop_reason_name(PANTO_STOP_END_TURN), "end_turn");
    CHECK_NAME(panto_stop_reason_name(PANTO_STOP_MAX_TOKENS), "max_tokens");
    CHECK_NAME(panto_stop_reason_name(PANTO_STOP_STOP_SEQUENCE), "stop_sequence");
    CHECK_NAME(panto_stop_reason_name(PANTO_STOP_TOOL_USE), "tool_use");
    CHECK_NAME(panto_stop_reason_name(PANTO_STOP_REFUSAL), "refusal");
    CHECK_NAME(panto_stop_reason_name(PANTO_STOP_CONTENT_FILTER), "content_filter");
    CHECK_NAME(panto_stop_reason_name(PANTO_STOP_PAUSE_TURN), "pause_turn");
    CHECK_NAME(panto_stop_reason_name(PANTO_STOP_ABORTED), "aborted");
    CHECK_NAME(panto_stop_reason_name(PANTO_STOP_OTHER), "other");
    CHECK_NAME(panto_stop_reason_name(PANTO_STOP_BUDGET), "budget");
    CHECK_NAME(panto_stop_reason_name(11), "unknown");
    CHECK_NAME(panto_part_kind_name(PANTO_PART_TEXT), "text");
    CHECK_NAME(panto_part_kind_name(PANTO_PART_MEDIA), "media");
    CHECK_NAME(panto_part_kind_name(PANTO_PART_IMAGE), "image");
    CHECK_NAME(panto_part_kind_name(PANTO_PART_DOCUMENT), "document");
    CHECK_NAME(panto_part_kind_name(0), "unknown");
}

static void test_free_null(void) {
    current_test = "free_null";
    panto_agent_free(NULL);
    panto_stream_free(NULL);
    CHECK(1); /* reached without crashing */
}

static void test_null_arguments(void) {
    int dummy = 0;
    PantoAgent *agent = (PantoAgent *)(void *)&dummy;
    PantoAgent *good;
    PantoStream *stream = (PantoStream *)(void *)&dummy;
    PantoEvent ev = PANTO_EVENT_INIT;
    PantoError err = PANTO_ERROR_INIT;
    PantoString json = {NULL, 0};

    current_test = "null_arguments";
    CHECK_RC(panto_agent_new(panto_cstr(NULL), &agent), PANTO_ERR_INVALID_ARGUMENT);
    CHECK(agent == NULL);
    agent = (PantoAgent *)(void *)&dummy;
    {
        PantoString dangling = {NULL, 5}; /* a length without bytes */
        CHECK_RC(panto_agent_new(dangling, &agent), PANTO_ERR_INVALID_ARGUMENT);
        CHECK(agent == NULL);
    }
    CHECK_RC(agent_new("{\"provider\": \"anthropic\", \"model\": \"m\"}", NULL),
             PANTO_ERR_INVALID_ARGUMENT);

    CHECK_RC(run_text(NULL, "hi", &stream), PANTO_ERR_INVALID_ARGUMENT);
    CHECK_RC(panto_agent_error(NULL, &err), PANTO_ERR_INVALID_ARGUMENT);
    CHECK_RC(panto_agent_conversation(NULL, &json), PANTO_ERR_INVALID_ARGUMENT);
    CHECK_RC(panto_next_event(NULL, &ev), PANTO_ERR_INVALID_ARGUMENT);
    CHECK_RC(panto_stream_error(NULL, &err), PANTO_ERR_INVALID_ARGUMENT);
    CHECK_RC(add_tool(NULL, WEATHER_TOOL), PANTO_ERR_INVALID_ARGUMENT);
    CHECK_RC(panto_agent_tools(NULL, PANTO_TOOL_FORMAT_ANTHROPIC, 0, &json), PANTO_ERR_INVALID_ARGUMENT);
    CHECK_RC(submit_result(NULL, "toolu_1", "x", 0), PANTO_ERR_INVALID_ARGUMENT);
    CHECK_RC(set_config(NULL, "{}"), PANTO_ERR_INVALID_ARGUMENT);
    CHECK_RC(panto_stream_cancel(NULL), PANTO_ERR_INVALID_ARGUMENT);
    CHECK_RC(panto_stream_reopen(NULL), PANTO_ERR_INVALID_ARGUMENT);

    good = new_agent("http://127.0.0.1:1");
    CHECK(good != NULL);
    if (!good) return;
    /* The error out-parameters are optional: with NULL, only the code is returned. */
    CHECK_RC(panto_agent_error(good, NULL), 0);
    stream = (PantoStream *)(void *)&dummy;
    CHECK_RC(panto_agent_run(good, NULL, &stream), PANTO_ERR_INVALID_ARGUMENT);
    CHECK(stream == NULL);
    CHECK_RC(panto_agent_error(good, NULL), PANTO_ERR_INVALID_ARGUMENT);
    CHECK_RC(panto_agent_error(good, &err), PANTO_ERR_INVALID_ARGUMENT);
    CHECK(err.code == PANTO_ERR_INVALID_ARGUMENT);
    {
        /* A PantoInput whose size does not reach `text`, or text with a length but no bytes. */
        PantoInput input = PANTO_INPUT_INIT;
        input.size = 8;
        input.text = panto_cstr("hi");
        CHECK_RC(panto_agent_run(good, &input, &stream), PANTO_ERR_INVALID_ARGUMENT);
        CHECK(panto_agent_error(good, &err) == PANTO_ERR_INVALID_ARGUMENT && count_in(err.message, "PANTO_INPUT_INIT") == 1);
        input.size = sizeof input;
        input.text.ptr = NULL;
        CHECK_RC(panto_agent_run(good, &input, &stream), PANTO_ERR_INVALID_ARGUMENT);
        CHECK(stream == NULL);
    }
    CHECK_RC(run_text(good, "hi", NULL), PANTO_ERR_INVALID_ARGUMENT);
    CHECK_RC(panto_agent_conversation(good, NULL), PANTO_ERR_INVALID_ARGUMENT);
    CHECK_RC(add_tool(good, NULL), PANTO_ERR_INVALID_ARGUMENT);
    CHECK_RC(panto_agent_tools(good, 0, 0, &json), PANTO_ERR_INVALID_ARGUMENT);
    CHECK_RC(panto_agent_tools(good, PANTO_TOOL_FORMAT_ANTHROPIC, 0, NULL), PANTO_ERR_INVALID_ARGUMENT);
    CHECK_RC(panto_agent_tools(good, 4, 0, &json), PANTO_ERR_INVALID_ARGUMENT);
    CHECK(panto_agent_error(good, &err) == PANTO_ERR_INVALID_ARGUMENT && count_in(err.message, "PANTO_TOOL_FORMAT_PANTO") == 1);
    CHECK_RC(set_config(good, NULL), PANTO_ERR_INVALID_ARGUMENT);
    /* None of this left a stream behind: a real run still works. */
    stream = NULL;
    CHECK_RC(run_text(good, "hi", &stream), PANTO_OK);
    CHECK(stream != NULL);
    if (stream) {
        CHECK_RC(panto_stream_error(stream, NULL), 0); /* optional; no failure yet */
        CHECK_RC(panto_next_event(stream, NULL), PANTO_ERR_INVALID_ARGUMENT);
        CHECK_RC(panto_stream_error(stream, NULL), PANTO_ERR_INVALID_ARGUMENT); /* the call's */
        /* Arguments are checked before the call id; no call awaits a result on a new stream. */
        PantoToolResult result = PANTO_TOOL_RESULT_INIT;
        CHECK_RC(panto_stream_submit_tool_result(stream, NULL), PANTO_ERR_INVALID_ARGUMENT);
        CHECK_RC(submit_result(stream, NULL, "x", 0), PANTO_ERR_INVALID_ARGUMENT);
        result.call_id = panto_cstr("toolu_1");
        result.content.len = 3; /* a length without bytes */
        CHECK_RC(panto_stream_submit_tool_result(stream, &result), PANTO_ERR_INVALID_ARGUMENT);
        result.content = panto_cstr("x");
        result.size = 8; /* does not reach content */
        CHECK_RC(panto_stream_submit_tool_result(stream, &result), PANTO_ERR_INVALID_ARGUMENT);
        CHECK(panto_stream_error(stream, &err) == PANTO_ERR_INVALID_ARGUMENT && count_in(err.message, "PANTO_TOOL_RESULT_INIT") == 1);
        CHECK_RC(submit_result(stream, "toolu_1", "x", 0), PANTO_ERR_NO_SUCH_CALL);
        CHECK_RC(submit_result(stream, "", "x", 1), PANTO_ERR_NO_SUCH_CALL);
        /* A failed call leaves its detail on the stream; the turn itself did not fail. */
        CHECK_RC(panto_stream_error(stream, &err), PANTO_ERR_NO_SUCH_CALL);
        CHECK(err.code == PANTO_ERR_NO_SUCH_CALL && count_in(err.message, "no tool call") == 1);
        CHECK_RC(submit_result(stream, "toolu_\xff", "x", 1), PANTO_ERR_INVALID_ARGUMENT);
        CHECK(panto_stream_error(stream, &err) == PANTO_ERR_INVALID_ARGUMENT && count_in(err.message, "UTF-8") == 1);
        CHECK_RC(panto_stream_unread(stream, 1), PANTO_ERR_INVALID_ARGUMENT);
        CHECK(panto_stream_error(stream, &err) == PANTO_ERR_INVALID_ARGUMENT && count_in(err.message, "given back") >= 1);
        CHECK_RC(panto_stream_reopen(stream), PANTO_ERR_STATE);
        CHECK(panto_stream_error(stream, &err) == PANTO_ERR_STATE && err.message.len > 0);
    }
    panto_stream_free(stream);
    panto_agent_free(good);
}

static void check_config_refused(const char *config, const char *label) {
    PantoAgent *agent = NULL;
    PantoError err = PANTO_ERROR_INIT;
    int rc = agent_new(config, &agent);
    current_test = label;
    CHECK_RC(rc, PANTO_ERR_CONFIG);
    CHECK(agent != NULL);
    if (agent) {
        CHECK_RC(panto_agent_error(agent, &err), PANTO_ERR_CONFIG);
        CHECK(err.code == PANTO_ERR_CONFIG);
        CHECK(err.http_status == 0);
        CHECK(err.message.len > 0 && err.message.ptr != NULL);
    }
    panto_agent_free(agent);
}

static void test_bad_configs(void) {
    check_config_refused("{\"provider\": \"anthropic\", \"model\": \"m\", \"colour\": \"blue\"}",
                         "config_unknown_key");
    check_config_refused("{\"provider\": \"anthropic\"}", "config_missing_model");
    check_config_refused("{\"model\": \"m\"}", "config_missing_provider");
    check_config_refused("{\"provider\": \"nope\", \"model\": \"m\"}", "config_bad_provider");
    check_config_refused("{\"provider\": \"anthropic\", \"model\": 5}", "config_model_not_string");
    check_config_refused("{\"provider\": \"anthropic\", \"model\": \"m\", \"max_tokens\": \"many\"}",
                         "config_max_tokens_not_integer");
    check_config_refused("{\"provider\": \"anthropic\", \"model\": \"m\"", "config_not_json");
    check_config_refused("not json at all", "config_not_json_2");
    check_config_refused("[\"provider\", \"anthropic\"]", "config_not_object");
    check_config_refused("", "config_empty");
    check_config_refused("{\"provider\": \"anthropic\", \"model\": \"m\", \"thinking\": \"max\"}",
                         "config_bad_thinking");
    check_config_refused("{\"provider\": \"anthropic\", \"model\": \"m\", \"thinking\": true}",
                         "config_thinking_not_string");
    check_config_refused("{\"provider\": \"anthropic\", \"model\": \"m\", \"retry\": {\"max_retries\": -1}}",
                         "config_negative_retries");
    check_config_refused("{\"provider\": \"anthropic\", \"model\": \"m\", \"retry\": {\"tries\": 3}}",
                         "config_retry_unknown_key");
    check_config_refused("{\"provider\": \"anthropic\", \"model\": \"m\", \"retry\": 3}",
                         "config_retry_not_object");
    check_config_refused("{\"provider\": \"anthropic\", \"model\": \"m\", \"timeouts\": {\"idle_ms\": \"1s\"}}",
                         "config_timeout_not_integer");
    check_config_refused("{\"provider\": \"anthropic\", \"model\": \"m\", \"timeouts\": {\"dns_ms\": 5}}",
                         "config_timeouts_unknown_key");
    check_config_refused("{\"provider\": \"anthropic\", \"model\": \"m\", \"timeouts\": {\"connect_ms\": -5}}",
                         "config_negative_connect_timeout");
}

static void test_good_config(void) {
    PantoAgent *agent = NULL;
    PantoError err = PANTO_ERROR_INIT;
    PantoString conv = {NULL, 0};
    current_test = "good_config";
    CHECK_RC(agent_new("{\"provider\": \"openai\", \"model\": \"gpt-test\", \"api_key\": \"k\", "
                             "\"system\": \"Be brief.\", \"max_tokens\": 100, "
                             "\"base_url\": \"http://127.0.0.1:1\"}",
                             &agent),
             PANTO_OK);
    CHECK(agent != NULL);
    if (!agent) return;
    CHECK_RC(panto_agent_error(agent, &err), 0);
    CHECK(err.code == 0);
    CHECK_RC(panto_agent_conversation(agent, &conv), PANTO_OK);
    CHECK(conv.len >= 2 && conv.ptr[0] == '[' && count_in(conv, "\"role\"") == 0);
    panto_agent_free(agent);
}

/* Reads a stream to its end; returns the final status (DONE or an error). */
static int drain(PantoStream *stream) {
    PantoEvent ev = PANTO_EVENT_INIT;
    int rc;
    while ((rc = panto_next_event(stream, &ev)) == PANTO_EVENT) {
    }
    return rc;
}

/* A copy of the agent's export, NUL-terminated; free it. */
static char *export_copy(PantoAgent *agent) {
    PantoString json = {NULL, 0};
    CHECK_RC(panto_agent_export(agent, &json), PANTO_OK);
    return dup_pstr(json);
}

/* Export, import and truncate: a turn and a failed turn, the failed turn's user message
 * dropped; refused imports and truncations name the problem and change nothing; the export
 * imported by another agent exports the same bytes. */
static void test_conversation_edit(void) {
    static const struct canned answers[] = {
        {200, "text/event-stream", SSE_OK, NULL, 0},
        {401, "application/json", BODY_401, NULL, 0},
    };
    char url[64], *before, *after;
    PantoAgent *agent, *other;
    PantoStream *stream = NULL;
    PantoError err = PANTO_ERROR_INIT;
    PantoString json = {NULL, 0}, messages = {NULL, 0};
    size_t count = 99;

    current_test = "conversation_edit";
    agent = serve_and_connect(answers, 2, url, sizeof url);
    if (!agent) return;
    CHECK_RC(panto_agent_message_count(agent, &count), PANTO_OK);
    CHECK(count == 0);
    CHECK_RC(panto_agent_export(agent, &json), PANTO_OK);
    CHECK(pstr_eq(json, "{\"version\":1,\"messages\":[]}"));

    CHECK_RC(run_text(agent, "Hello", &stream), PANTO_OK);
    /* Refused while the turn runs. */
    CHECK_RC(panto_agent_truncate(agent, 0), PANTO_ERR_BUSY);
    CHECK_RC(panto_agent_import(agent, panto_cstr("{\"version\":1,\"messages\":[]}")), PANTO_ERR_BUSY);
    CHECK_RC(drain(stream), PANTO_DONE);
    panto_stream_free(stream);
    CHECK_RC(run_text(agent, "Fails", &stream), PANTO_OK);
    CHECK_RC(drain(stream), PANTO_ERR_AUTHENTICATION);
    panto_stream_free(stream);
    stop_server();

    CHECK_RC(panto_agent_message_count(agent, &count), PANTO_OK);
    CHECK(count == 2); /* the failed turn kept nothing: its user message was rolled back */
    {
        /* What the conversation spent: the one answer's usage; claude-test has no price. */
        PantoUsage usage = {0};
        double cost = 0;
        CHECK_RC(panto_agent_spent(agent, &usage, &cost), PANTO_OK);
        CHECK(usage.input_tokens == 11 && usage.output_tokens == 5 && usage.cache_read_tokens == 0);
        CHECK(cost == -1);
        CHECK_RC(panto_agent_spent(agent, NULL, NULL), PANTO_OK);
        CHECK_RC(panto_agent_spent(NULL, &usage, &cost), PANTO_ERR_INVALID_ARGUMENT);
    }
    before = export_copy(agent);
    /* The assistant message carries who wrote it and its usage. */
    CHECK(strstr(before, "\"provider\":\"anthropic\",\"model\":\"claude-test\",\"stop_reason\":\"end_turn\","
                         "\"usage\":{\"input_tokens\":11,\"output_tokens\":5,\"cache_read_tokens\":0,"
                         "\"cache_write_tokens\":0,\"reasoning_tokens\":0}") != NULL);
    /* panto_agent_conversation is the export's "messages", byte for byte. */
    CHECK_RC(panto_agent_conversation(agent, &messages), PANTO_OK);
    CHECK(strlen(before) == messages.len + strlen("{\"version\":1,\"messages\":}") &&
          memcmp(before + strlen("{\"version\":1,\"messages\":"), messages.ptr, messages.len) == 0);

    /* Refusals: nothing changes, the detail names the problem. */
    CHECK_RC(panto_agent_truncate(agent, 4), PANTO_ERR_INVALID_ARGUMENT);
    CHECK_RC(panto_agent_import(agent, (PantoString){NULL, 0}), PANTO_ERR_INVALID_ARGUMENT);
    CHECK_RC(panto_agent_import(agent, panto_cstr("{\"version\":2,\"messages\":[]}")), PANTO_ERR_CONVERSATION);
    CHECK_RC(panto_agent_error(agent, &err), PANTO_ERR_CONVERSATION);
    CHECK(pstr_eq(err.message, "unsupported conversation version 2"));
    CHECK_RC(panto_agent_import(agent, panto_cstr("{\"version\":1,\"messages\":[{\"role\":\"user\",\"content\":"
                                                  "[{\"type\":\"text\",\"text\":\"a\"}]},{\"role\":\"user\","
                                                  "\"content\":[{\"type\":\"tool_result\",\"id\":\"call_9\","
                                                  "\"content\":\"x\",\"is_error\":false}]}]}")),
             PANTO_ERR_CONVERSATION);
    CHECK_RC(panto_agent_error(agent, &err), PANTO_ERR_CONVERSATION);
    CHECK(pstr_eq(err.message, "messages[1].content[0]: tool_result \"call_9\" answers no tool call of messages[0]"));
    CHECK_RC(panto_agent_import(agent, panto_cstr("{\"version\":1,\"messages\":[")), PANTO_ERR_CONVERSATION);
    after = export_copy(agent);
    CHECK(strcmp(before, after) == 0);
    free(after);

    /* Drop the failed turn's user message. */
    CHECK_RC(panto_agent_truncate(agent, 2), PANTO_OK);
    CHECK_RC(panto_agent_error(agent, &err), 0);
    CHECK_RC(panto_agent_message_count(agent, &count), PANTO_OK);
    CHECK(count == 2);
    after = export_copy(agent);
    CHECK(strstr(after, "Fails") == NULL && strstr(after, "Hello") != NULL);

    /* Another agent imports it and exports the same bytes. */
    other = new_agent("http://127.0.0.1:1");
    CHECK(other != NULL);
    if (other) {
        char *again;
        CHECK_RC(panto_agent_import(other, panto_cstr(after)), PANTO_OK);
        again = export_copy(other);
        CHECK(strcmp(after, again) == 0);
        free(again);
        panto_agent_free(other);
    }
    free(after);
    free(before);
    panto_agent_free(agent);
}

/* An agent of the canned server at url with extra config members (a session, compaction). */
static PantoAgent *session_agent(const char *url, const char *dir, const char *id, const char *mode, int *rc) {
    char config[1024];
    PantoAgent *agent = NULL;
    snprintf(config, sizeof config,
             "{\"provider\": \"anthropic\", \"model\": \"claude-test\", \"api_key\": \"test-key\", "
             "\"base_url\": \"%s\", \"session\": {\"dir\": \"%s\", \"id\": \"%s\", \"mode\": \"%s\"}}",
             url, dir, id, mode);
    *rc = agent_new(config, &agent);
    return agent;
}

/* Sessions: a turn written to the session, a second agent refused while the first lives, a
 * resume after it is freed, a fork, the list of the directory; an agent without a session and
 * a missing session refused with their codes. */
static void test_sessions(void) {
    static const struct canned answers[] = {
        {200, "text/event-stream", SSE_OK, NULL, 0},
    };
    char url[64], dir[] = "/tmp/panto_test_sessions_XXXXXX", path[256], command[300];
    PantoAgent *agent, *second, *plain;
    PantoStream *stream = NULL;
    PantoSessionInfo info = PANTO_SESSION_INFO_INIT;
    PantoSessionList *list = NULL;
    PantoError err = PANTO_ERROR_INIT;
    PantoString json = {NULL, 0};
    size_t count = 0;
    int rc;

    current_test = "sessions";
    if (!mkdtemp(dir)) {
        CHECK(!"mkdtemp");
        return;
    }
    if (start_server(answers, 1, url, sizeof url) < 0) {
        CHECK(!"cannot start the canned server");
        return;
    }
    agent = session_agent(url, dir, "first", "create", &rc);
    CHECK_RC(rc, PANTO_OK);
    if (rc != PANTO_OK) {
        panto_agent_free(agent);
        stop_server();
        return;
    }
    CHECK_RC(panto_agent_session(agent, &info), PANTO_OK);
    snprintf(path, sizeof path, "%s/first.jsonl", dir);
    CHECK(pstr_eq(info.id, "first") && pstr_eq(info.path, path) && info.resumed == 0 && info.torn_bytes == 0);
    CHECK_RC(run_text(agent, "Hello", &stream), PANTO_OK);
    CHECK_RC(drain(stream), PANTO_DONE);
    panto_stream_free(stream);
    stop_server();

    /* One writer. */
    second = session_agent(url, dir, "first", "open", &rc);
    CHECK_RC(rc, PANTO_ERR_SESSION_LOCKED);
    CHECK(panto_agent_error(second, &err) == PANTO_ERR_SESSION_LOCKED && err.message.len > 0);
    panto_agent_free(second);
    panto_agent_free(agent);

    /* Resumed: the turn is there. */
    agent = session_agent(url, dir, "first", "resume", &rc);
    CHECK_RC(rc, PANTO_OK);
    if (rc == PANTO_OK) {
        CHECK_RC(panto_agent_session(agent, &info), PANTO_OK);
        CHECK(info.resumed == 1);
        CHECK_RC(panto_agent_message_count(agent, &count), PANTO_OK);
        CHECK(count == 2);
        /* Forked at the user message: the agent goes on in the new session. */
        CHECK_RC(panto_agent_fork_session(agent, 3, panto_cstr("forked")), PANTO_ERR_INVALID_ARGUMENT);
        CHECK_RC(panto_agent_fork_session(agent, 1, panto_cstr("first")), PANTO_ERR_SESSION);
        CHECK_RC(panto_agent_fork_session(agent, 1, panto_cstr("forked")), PANTO_OK);
        CHECK_RC(panto_agent_session(agent, &info), PANTO_OK);
        CHECK(pstr_eq(info.id, "forked"));
        CHECK_RC(panto_agent_message_count(agent, &count), PANTO_OK);
        CHECK(count == 1);
    }
    panto_agent_free(agent);

    CHECK_RC(panto_session_list(panto_cstr(dir), &list), PANTO_OK);
    CHECK_RC(panto_session_list_json(list, &json), PANTO_OK);
    CHECK(count_in(json, "\"id\":\"first\"") == 2 /* its own, and the fork's parent */ &&
          count_in(json, "\"id\":\"forked\"") == 1 && count_in(json, "\"first_user_text\":\"Hello\"") == 2);
    panto_session_list_free(list);
    list = NULL;
    CHECK_RC(panto_session_list(panto_cstr("/nonexistent/panto/dir"), &list), PANTO_OK);
    CHECK_RC(panto_session_list_json(list, &json), PANTO_OK);
    CHECK(pstr_eq(json, "[]"));
    panto_session_list_free(list);

    second = session_agent(url, dir, "missing", "resume", &rc);
    CHECK_RC(rc, PANTO_ERR_NO_SUCH_SESSION);
    panto_agent_free(second);
    plain = new_agent(url);
    if (plain) {
        CHECK_RC(panto_agent_session(plain, &info), PANTO_ERR_STATE);
        CHECK_RC(panto_agent_fork_session(plain, 0, panto_cstr("")), PANTO_ERR_STATE);
    }
    panto_agent_free(plain);
    snprintf(command, sizeof command, "rm -rf '%s'", dir);
    CHECK(system(command) == 0);
}

/* panto_agent_compact: nothing to compact is STATE; a compaction streams COMPACTION_START,
 * COMPACTION_END and MESSAGE_COMPLETE, and the conversation starts with the summary. */
static void test_compact(void) {
    static const struct canned answers[] = {
        {200, "text/event-stream", SSE_OK, NULL, 0},
    };
    static const char conversation[] =
        "{\"version\":1,\"messages\":["
        "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"one\"}]},"
        "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"two\"}]},"
        "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"three\"}]},"
        "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"four\"}]}]}";
    char url[64];
    PantoAgent *agent;
    PantoStream *stream = NULL;
    PantoEvent ev = PANTO_EVENT_INIT;
    PantoString json = {NULL, 0};
    int rc, kinds[8], n = 0;
    size_t count = 0;

    current_test = "compact";
    if (start_server(answers, 1, url, sizeof url) < 0) {
        CHECK(!"cannot start the canned server");
        return;
    }
    agent = new_agent_with(url, "\"compaction\": {\"keep_recent_tokens\": 1}");
    CHECK(agent != NULL);
    if (!agent) {
        stop_server();
        return;
    }
    CHECK_RC(panto_agent_compact(agent, &stream), PANTO_ERR_STATE);
    CHECK(stream == NULL);
    CHECK_RC(panto_agent_import(agent, panto_cstr(conversation)), PANTO_OK);
    CHECK_RC(panto_agent_compact(agent, &stream), PANTO_OK);
    CHECK_RC(panto_agent_truncate(agent, 0), PANTO_ERR_BUSY);
    while ((rc = panto_next_event(stream, &ev)) == PANTO_EVENT) {
        if (n < 8) kinds[n] = ev.kind;
        if (ev.kind == PANTO_EVENT_COMPACTION_END) CHECK(ev.message_count == 3 && pstr_eq(ev.text, "Hi there"));
        n++;
    }
    CHECK_RC(rc, PANTO_DONE);
    CHECK(n == 3 && kinds[0] == PANTO_EVENT_COMPACTION_START && kinds[1] == PANTO_EVENT_COMPACTION_END &&
          kinds[2] == PANTO_EVENT_MESSAGE_COMPLETE);
    panto_stream_free(stream);
    stop_server();
    CHECK_RC(panto_agent_message_count(agent, &count), PANTO_OK);
    CHECK(count == 2);
    CHECK_RC(panto_agent_conversation(agent, &json), PANTO_OK);
    CHECK(count_in(json, "Hi there") == 1 && count_in(json, "\"compaction\":{\"message_count\":3") == 1);
    panto_agent_free(agent);
}

/* A second run while a stream is unfinished is BUSY; freeing it frees the agent. */
static void test_busy(void) {
    PantoAgent *agent = new_agent("http://127.0.0.1:1");
    PantoStream *first = NULL, *second = NULL;
    PantoError err = PANTO_ERROR_INIT;
    int dummy = 0;
    current_test = "busy";
    CHECK(agent != NULL);
    if (!agent) return;
    CHECK_RC(run_text(agent, "one", &first), PANTO_OK);
    second = (PantoStream *)(void *)&dummy;
    CHECK_RC(run_text(agent, "two", &second), PANTO_ERR_BUSY);
    CHECK(second == NULL);
    CHECK_RC(panto_agent_error(agent, &err), PANTO_ERR_BUSY);
    CHECK(err.message.len > 0);
    panto_stream_free(first); /* freed before it ended: the agent is free again */
    second = NULL;
    CHECK_RC(run_text(agent, "three", &second), PANTO_OK);
    panto_stream_free(second);
    panto_agent_free(agent);
}

/* PantoInput.options: a turn's request options, refused like set_config (PANTO_ERR_CONFIG,
 * the reason in panto_agent_error, nothing appended); {NULL, 0} and "" are none. */
static void test_run_options(void) {
    PantoAgent *agent = new_agent("http://127.0.0.1:1");
    PantoStream *stream = NULL;
    PantoError err = PANTO_ERROR_INIT;
    PantoInput input = PANTO_INPUT_INIT;
    size_t count = 9;
    current_test = "run_options";
    CHECK(agent != NULL);
    if (!agent) return;
    input.text = panto_cstr("Hello");
    input.options = panto_cstr("{\"seed\": 1}");
    CHECK_RC(panto_agent_run(agent, &input, &stream), PANTO_ERR_CONFIG);
    CHECK(stream == NULL);
    CHECK_RC(panto_agent_error(agent, &err), PANTO_ERR_CONFIG);
    CHECK(err.message.len > 0 && strstr(err.message.ptr, "seed is an OpenAI parameter") != NULL);
    input.options = panto_cstr("{\"model\": \"other\"}");
    CHECK_RC(panto_agent_run(agent, &input, &stream), PANTO_ERR_CONFIG);
    input.options = (PantoString){NULL, 3};
    CHECK_RC(panto_agent_run(agent, &input, &stream), PANTO_ERR_INVALID_ARGUMENT);
    CHECK_RC(panto_agent_message_count(agent, &count), PANTO_OK);
    CHECK(count == 0);
    input.options = panto_cstr("{\"temperature\": 0.5, \"cache_breakpoint\": true}");
    CHECK_RC(panto_agent_run(agent, &input, &stream), PANTO_OK);
    panto_stream_free(stream);
    stream = NULL;
    input.options = panto_cstr("");
    CHECK_RC(panto_agent_run(agent, &input, &stream), PANTO_OK);
    panto_stream_free(stream);
    CHECK_RC(panto_agent_message_count(agent, &count), PANTO_OK);
    CHECK(count == 0); /* both freed unsent: each user message rolled back */
    panto_agent_free(agent);
}

/* A connection failure is a sticky error, detailed on the stream; a finished (failed) stream
 * no longer blocks the agent. PantoError is written only as far as its size. */
static void test_connection_error(void) {
    PantoAgent *agent = new_agent_with("http://127.0.0.1:1", "\"retry\": {\"max_retries\": 0}");
    PantoStream *stream = NULL, *next = NULL;
    PantoEvent ev = PANTO_EVENT_INIT;
    PantoError err = PANTO_ERROR_INIT, small;
    int rc;
    current_test = "connection_error";
    CHECK(agent != NULL);
    if (!agent) return;
    CHECK_RC(run_text(agent, "hi", &stream), PANTO_OK);
    if (!stream) {
        panto_agent_free(agent);
        return;
    }
    rc = panto_next_event(stream, &ev);
    CHECK_RC(rc, PANTO_ERR_CONNECTION);
    CHECK_RC(panto_next_event(stream, &ev), rc);
    CHECK_RC(panto_next_event(stream, &ev), rc);
    CHECK_RC(panto_stream_error(stream, NULL), rc);
    CHECK_RC(panto_stream_error(stream, &err), rc);
    CHECK(err.code == rc);
    CHECK(err.http_status == 0);
    CHECK(err.message.len > 0);

    memset(&small, 0xA5, sizeof small);
    small.size = (uint32_t)offsetof(PantoError, reserved0);
    CHECK_RC(panto_stream_error(stream, &small), rc);
    CHECK(small.code == rc && small.http_status == 0);
    CHECK(untouched(&small, offsetof(PantoError, reserved0), sizeof small, 0xA5));

    CHECK_RC(run_text(agent, "again", &next), PANTO_OK);
    panto_stream_free(next);
    panto_stream_free(stream);
    panto_agent_free(agent);
}

/* A whole turn against the canned server, read with a PantoEvent of an older, shorter
 * layout; DONE is sticky; the conversation holds the turn. Then an abandoned turn commits
 * nothing, and a 401 is a sticky authentication error with the provider's detail. */
static void test_turns(void) {
    static const struct canned answers[] = {
        {200, "text/event-stream", SSE_OK, NULL, 0},
        {200, "text/event-stream", SSE_OK, NULL, 0},
        {401, "application/json", BODY_401, NULL, 0},
    };
    char url[64];
    PantoAgent *agent;
    PantoStream *stream = NULL;
    PantoEvent ev;
    PantoError err = PANTO_ERROR_INIT;
    PantoString conv = {NULL, 0};
    const size_t short_size = offsetof(PantoEvent, stop_reason);
    int rc, kinds[16], n = 0, deltas_ok = 1, complete_ok = 0;

    current_test = "turns";
    agent = serve_and_connect(answers, 3, url, sizeof url);
    if (!agent) return;

    /* Turn 1, with an event struct that ends before stop_reason. */
    CHECK_RC(run_text(agent, "Hello", &stream), PANTO_OK);
    memset(&ev, 0x5A, sizeof ev);
    ev.size = (uint32_t)short_size;
    while ((rc = panto_next_event(stream, &ev)) == PANTO_EVENT) {
        if (n < 16) kinds[n] = ev.kind;
        if (ev.kind == PANTO_EVENT_MESSAGE_START)
            CHECK(pstr_eq(ev.id, "msg_test_1") && pstr_eq(ev.model, "claude-test"));
        if (ev.kind == PANTO_EVENT_CONTENT_DELTA)
            deltas_ok &= pstr_eq(ev.text, n == 2 ? "Hi" : " there");
        if (ev.kind == PANTO_EVENT_BLOCK_COMPLETE) CHECK(pstr_eq(ev.text, "Hi there"));
        if (ev.kind == PANTO_EVENT_MESSAGE_COMPLETE) complete_ok = 1;
        CHECK(untouched(&ev, short_size, sizeof ev, 0x5A));
        n++;
    }
    CHECK_RC(rc, PANTO_DONE);
    CHECK(n == 7);
    CHECK(n == 7 && kinds[0] == PANTO_EVENT_MESSAGE_START && kinds[1] == PANTO_EVENT_BLOCK_START &&
          kinds[2] == PANTO_EVENT_CONTENT_DELTA && kinds[3] == PANTO_EVENT_CONTENT_DELTA &&
          kinds[4] == PANTO_EVENT_BLOCK_COMPLETE && kinds[5] == PANTO_EVENT_MESSAGE_END &&
          kinds[6] == PANTO_EVENT_MESSAGE_COMPLETE);
    CHECK(deltas_ok);
    CHECK(complete_ok);
    CHECK_RC(panto_next_event(stream, &ev), PANTO_DONE);
    CHECK_RC(panto_next_event(stream, &ev), PANTO_DONE);
    CHECK_RC(panto_stream_error(stream, &err), 0);
    panto_stream_free(stream);
    stream = NULL;

    CHECK_RC(panto_agent_conversation(agent, &conv), PANTO_OK);
    CHECK(count_in(conv, "\"user\"") == 1 && count_in(conv, "\"assistant\"") == 1);
    CHECK(count_in(conv, "Hello") == 1 && count_in(conv, "Hi there") == 1);

    /* Turn 2, freed after its first event: no assistant message is committed. */
    CHECK_RC(run_text(agent, "Again", &stream), PANTO_OK);
    ev = (PantoEvent)PANTO_EVENT_INIT;
    CHECK_RC(panto_next_event(stream, &ev), PANTO_EVENT);
    CHECK(ev.kind == PANTO_EVENT_MESSAGE_START);
    panto_stream_free(stream);
    stream = NULL;
    CHECK_RC(panto_agent_conversation(agent, &conv), PANTO_OK);
    CHECK(count_in(conv, "\"assistant\"") == 1 && count_in(conv, "Hi there") == 1);

    /* Turn 3: HTTP 401. */
    CHECK_RC(run_text(agent, "Third", &stream), PANTO_OK);
    rc = panto_next_event(stream, &ev);
    CHECK_RC(rc, PANTO_ERR_AUTHENTICATION);
    CHECK_RC(panto_next_event(stream, &ev), PANTO_ERR_AUTHENTICATION);
    CHECK_RC(panto_stream_error(stream, &err), PANTO_ERR_AUTHENTICATION);
    CHECK(err.http_status == 401);
    CHECK(pstr_eq(err.type, "authentication_error"));
    CHECK(pstr_eq(err.message, "invalid x-api-key"));
    panto_stream_free(stream);

    panto_agent_free(agent);
    stop_server();
}

/* A spec panto_agent_add_tool must refuse with PANTO_ERR_CONFIG and a message (that names
 * `mention`, unless NULL), leaving the agent's tools as they were. */
static void check_tool_refused_naming(PantoAgent *agent, const char *spec, const char *label,
                                      const char *mention) {
    PantoError err = PANTO_ERROR_INIT;
    PantoString before = {NULL, 0}, after = {NULL, 0};
    char *saved;
    current_test = label;
    CHECK_RC(panto_agent_tools(agent, PANTO_TOOL_FORMAT_PANTO, 0, &before), PANTO_OK);
    saved = dup_pstr(before);
    CHECK_RC(add_tool(agent, spec), PANTO_ERR_CONFIG);
    CHECK_RC(panto_agent_error(agent, &err), PANTO_ERR_CONFIG);
    CHECK(err.code == PANTO_ERR_CONFIG && err.message.len > 0 && err.message.ptr != NULL);
    if (mention) CHECK(count_in(err.message, mention) >= 1);
    CHECK_RC(panto_agent_tools(agent, PANTO_TOOL_FORMAT_PANTO, 0, &after), PANTO_OK);
    CHECK(pstr_eq(after, saved));
    free(saved);
}

static void check_tool_refused(PantoAgent *agent, const char *spec, const char *label) {
    check_tool_refused_naming(agent, spec, label, NULL);
}

/* "PREFIX{"name": NAME, "input_schema": {"type": "object", "properties": {"x": [[...]]}}}SUFFIX"
 * with the schema nested `depth` deep; malloc'd. */
static char *nested_schema_spec(const char *prefix, const char *name, int depth, const char *suffix) {
    const char *head = "{\"name\": \"%s\", \"input_schema\": {\"type\": \"object\", \"properties\": {\"x\": ";
    size_t size = strlen(prefix) + strlen(head) + strlen(name) + 2 * (size_t)depth + strlen(suffix) + 8;
    char *spec = malloc(size);
    size_t n;
    int i;
    if (!spec) return NULL;
    n = (size_t)sprintf(spec, "%s", prefix);
    n += (size_t)sprintf(spec + n, head, name);
    for (i = 2; i < depth; i++) spec[n++] = '[';
    for (i = 2; i < depth; i++) spec[n++] = ']';
    sprintf(spec + n, "}}}%s", suffix);
    return spec;
}

static void test_add_tool(void) {
    PantoAgent *agent = new_agent("http://127.0.0.1:1");
    PantoString tools = {NULL, 0};
    current_test = "add_tool";
    CHECK(agent != NULL);
    if (!agent) return;
    CHECK_RC(add_tool(agent, WEATHER_TOOL), PANTO_OK);
    CHECK_RC(add_tool(agent,
                                  "{\"name\": \"get_time\", \"description\": \"Local time.\", "
                                  "\"input_schema\": {\"type\": \"object\", \"properties\": {}}, "
                                  "\"capabilities\": [\"clock\"]}"),
             PANTO_OK);
    check_tool_refused(agent, "{\"name\": \"broken\"", "add_tool_not_json");
    check_tool_refused(agent, "not json", "add_tool_not_json_2");
    check_tool_refused(agent, "", "add_tool_empty");
    check_tool_refused(agent, "[\"get_x\"]", "add_tool_not_object");
    check_tool_refused(agent,
                       "{\"description\": \"No name.\", \"input_schema\": {\"type\": \"object\"}}",
                       "add_tool_missing_name");
    check_tool_refused(agent, "{\"name\": 7, \"description\": \"d\", \"input_schema\": {\"type\": \"object\"}}",
                       "add_tool_name_not_string");
    check_tool_refused(agent, "{\"name\": \"bad_schema\", \"description\": \"d\", \"input_schema\": 5}",
                       "add_tool_schema_not_object");
    check_tool_refused(agent,
                       "{\"name\": \"caps\", \"description\": \"d\", \"input_schema\": {\"type\": \"object\"}, "
                       "\"capabilities\": \"net\"}",
                       "add_tool_capabilities_not_array");
    /* Unknown keys are refused, as in the agent's configuration. */
    check_tool_refused(agent,
                       "{\"name\": \"extra\", \"description\": \"d\", \"input_schema\": {\"type\": \"object\"}, "
                       "\"behavior\": {\"return\": \"x\"}}",
                       "add_tool_unknown_key");
    /* The message names the tool. */
    check_tool_refused_naming(agent, WEATHER_TOOL, "add_tool_duplicate", "get_weather");
    /* A schema nested deeper than panto's limit (128) is a config error, not an abort; one at
     * the limit is taken, and the agent goes on taking tools. */
    {
        char *deep = nested_schema_spec("", "deep", 300, "");
        char *at_limit = nested_schema_spec("", "at_limit", 128, "");
        CHECK(deep != NULL && at_limit != NULL);
        if (deep && at_limit) {
            check_tool_refused_naming(agent, deep, "add_tool_nested_300", "nested more than 128 levels");
            current_test = "add_tool_nested_128";
            CHECK_RC(add_tool(agent, at_limit), PANTO_OK);
        }
        free(deep);
        free(at_limit);
    }
    current_test = "add_tool";
    CHECK_RC(panto_agent_tools(agent, PANTO_TOOL_FORMAT_PANTO, 0, &tools), PANTO_OK);
    CHECK(count_in(tools, "\"get_weather\"") == 1 && count_in(tools, "\"get_time\"") == 1);
    CHECK(count_in(tools, "\"at_limit\"") == 1 && count_in(tools, "\"deep\"") == 0);
    panto_agent_free(agent);

    /* Tools given in the configuration are the same specs; names are unique there too, and
     * a host tool may not take the native read tool's name. */
    current_test = "config_tools";
    agent = NULL;
    CHECK_RC(agent_new("{\"provider\": \"anthropic\", \"model\": \"m\", \"api_key\": \"k\", "
                             "\"tools\": [{\"name\": \"a\", \"description\": \"A.\", "
                             "\"input_schema\": {\"type\": \"object\"}}]}",
                             &agent),
             PANTO_OK);
    if (agent) {
        CHECK_RC(panto_agent_tools(agent, PANTO_TOOL_FORMAT_ANTHROPIC, 0, &tools), PANTO_OK);
        CHECK(count_in(tools, "\"a\"") == 1);
        check_tool_refused(agent, "{\"name\": \"a\", \"description\": \"again\", \"input_schema\": {\"type\": \"object\"}}",
                           "config_tools_duplicate_added");
    }
    panto_agent_free(agent);
    check_config_refused("{\"provider\": \"anthropic\", \"model\": \"m\", \"tools\": ["
                         "{\"name\": \"a\", \"description\": \"A.\", \"input_schema\": {\"type\": \"object\"}}, "
                         "{\"name\": \"a\", \"description\": \"B.\", \"input_schema\": {\"type\": \"object\"}}]}",
                         "config_tools_duplicate");
    check_config_refused("{\"provider\": \"anthropic\", \"model\": \"m\", \"tools\": [{\"description\": \"x\"}]}",
                         "config_tools_missing_name");
    check_config_refused("{\"provider\": \"anthropic\", \"model\": \"m\", \"tools\": {}}",
                         "config_tools_not_array");
    {
        char *deep = nested_schema_spec("{\"provider\": \"anthropic\", \"model\": \"m\", \"tools\": [",
                                        "deep", 300, "]}");
        CHECK(deep != NULL);
        if (deep) check_config_refused(deep, "config_tools_nested_300");
        free(deep);
    }
    check_config_refused("{\"provider\": \"anthropic\", \"model\": \"m\", \"capabilities\": \"net\"}",
                         "config_capabilities_not_array");
    check_config_refused("{\"provider\": \"anthropic\", \"model\": \"m\", \"max_tool_iterations\": \"ten\"}",
                         "config_max_tool_iterations_not_integer");
    check_config_refused("{\"provider\": \"anthropic\", \"model\": \"m\", \"read_tool\": {}}",
                         "config_read_tool_no_root");
    check_config_refused("{\"provider\": \"anthropic\", \"model\": \"m\", \"read_tool\": {\"root\": \".\", "
                         "\"colour\": 1}}",
                         "config_read_tool_unknown_key");

    current_test = "read_tool_name_taken";
    agent = NULL;
    CHECK_RC(agent_new("{\"provider\": \"anthropic\", \"model\": \"m\", \"api_key\": \"k\", "
                             "\"capabilities\": [\"fs.read\"], \"read_tool\": {\"root\": \".\"}}",
                             &agent),
             PANTO_OK);
    if (agent)
        check_tool_refused(agent, "{\"name\": \"read\", \"description\": \"mine\", \"input_schema\": {\"type\": \"object\"}}",
                           "read_tool_name_taken");
    panto_agent_free(agent);
}

/* The names of the tools in a panto_agent_tools array, each checked for its format's shape;
 * returns how many there are and sets *shape_ok. names gets "a,b," (at most size bytes). */
static int tool_names(PantoString json, const char *format, char *names, size_t size, int *shape_ok) {
    char *text = dup_pstr(json);
    const char *root = cj_ws(text), *end = cj_skip(root), *it = root, *tool;
    int n = 0;
    *shape_ok = end != NULL && *cj_ws(end) == 0 && *root == '[';
    names[0] = 0;
    if (!*shape_ok) {
        free(text);
        return -1;
    }
    while ((it = cj_next_element(it, &tool))) {
        const char *name, *fn = tool;
        char *decoded = NULL;
        size_t len = 0;
        if (*tool != '{') {
            *shape_ok = 0;
            continue;
        }
        if (strcmp(format, "openai") == 0) {
            *shape_ok &= json_str_is(cj_member(tool, "type"), "function");
            fn = cj_member(tool, "function");
            if (!fn || *fn != '{') {
                *shape_ok = 0;
                continue;
            }
            *shape_ok &= cj_member(fn, "parameters") != NULL && *cj_member(fn, "parameters") == '{';
            *shape_ok &= cj_member(fn, "input_schema") == NULL;
        } else {
            const char *schema = cj_member(tool, "input_schema");
            *shape_ok &= schema != NULL && *schema == '{' && cj_member(tool, "parameters") == NULL;
        }
        if (strcmp(format, "panto") == 0) {
            const char *native = cj_member(tool, "native");
            *shape_ok &= native != NULL && (strncmp(native, "true", 4) == 0 || strncmp(native, "false", 5) == 0);
            /* The native read tool says so; the host tools do not. */
            if (native && json_str_is(cj_member(tool, "name"), "read")) *shape_ok &= strncmp(native, "true", 4) == 0;
            else if (native) *shape_ok &= strncmp(native, "false", 5) == 0;
        }
        *shape_ok &= cj_member(fn, "description") != NULL && *cj_member(fn, "description") == '"';
        name = cj_member(fn, "name");
        if (name && *name == '"' && cj_string(name, &decoded, &len)) {
            if (strlen(names) + len + 2 <= size) {
                strcat(names, decoded);
                strcat(names, ",");
            }
            free(decoded);
        } else {
            *shape_ok = 0;
        }
        n++;
    }
    free(text);
    return n;
}

/* Whether the comma-terminated list `names` holds `name`. */
static int has_name(const char *names, const char *name) {
    char item[64];
    snprintf(item, sizeof item, "%s,", name);
    return strncmp(names, item, strlen(item)) == 0 || (strstr(names, item) && strstr(names, item)[-1] == ',');
}

static void test_tools_formats(void) {
    static const char *formats[] = {"anthropic", "openai", "panto"};
    static const int format_values[] = {PANTO_TOOL_FORMAT_ANTHROPIC, PANTO_TOOL_FORMAT_OPENAI, PANTO_TOOL_FORMAT_PANTO};
    PantoAgent *agent = NULL;
    PantoString json = {NULL, 0};
    char names[256];
    int i, n, shape_ok;
    current_test = "tools_formats";
    /* Granted net; tools: open (no capability), fetch (net), write (fs.write), and the native
     * read tool (fs.read, not granted). */
    CHECK_RC(agent_new("{\"provider\": \"openai\", \"model\": \"m\", \"api_key\": \"k\", "
                             "\"capabilities\": [\"net\"], \"read_tool\": {\"root\": \".\"}, "
                             "\"tools\": [{\"name\": \"open\", \"description\": \"Open.\", "
                             "\"input_schema\": {\"type\": \"object\"}}]}",
                             &agent),
             PANTO_OK);
    if (!agent) return;
    CHECK_RC(add_tool(agent, "{\"name\": \"fetch\", \"description\": \"Fetch.\", "
                                         "\"input_schema\": {\"type\": \"object\"}, \"capabilities\": [\"net\"]}"),
             PANTO_OK);
    CHECK_RC(add_tool(agent, "{\"name\": \"write\", \"description\": \"Write.\", "
                                         "\"input_schema\": {\"type\": \"object\"}, \"capabilities\": [\"fs.write\"]}"),
             PANTO_OK);
    for (i = 0; i < 3; i++) {
        CHECK_RC(panto_agent_tools(agent, format_values[i], 1, &json), PANTO_OK);
        n = tool_names(json, formats[i], names, sizeof names, &shape_ok);
        CHECK(shape_ok);
        CHECK(n == 2 && has_name(names, "open") && has_name(names, "fetch"));
        CHECK_RC(panto_agent_tools(agent, format_values[i], 0, &json), PANTO_OK);
        n = tool_names(json, formats[i], names, sizeof names, &shape_ok);
        CHECK(shape_ok);
        CHECK(n == 4 && has_name(names, "open") && has_name(names, "fetch") && has_name(names, "write") &&
              has_name(names, "read"));
        if (n != 4 || !shape_ok) printf("    %s: %.*s\n", formats[i], (int)json.len, json.ptr);
    }
    /* The panto format keeps the specs as registered: write still requires fs.write. */
    CHECK_RC(panto_agent_tools(agent, PANTO_TOOL_FORMAT_PANTO, 0, &json), PANTO_OK);
    CHECK(count_in(json, "fs.write") == 1);
    panto_agent_free(agent);

    /* No tools at all: an empty array. */
    agent = new_agent("http://127.0.0.1:1");
    if (!agent) return;
    CHECK_RC(panto_agent_tools(agent, PANTO_TOOL_FORMAT_ANTHROPIC, 0, &json), PANTO_OK);
    n = tool_names(json, "anthropic", names, sizeof names, &shape_ok);
    CHECK(shape_ok && n == 0);
    panto_agent_free(agent);
}

/* A tool set without an agent: panto_tools_add is the check of a spec (the same rules and
 * messages as panto_agent_add_tool), panto_tools_export the export with its capability
 * filter; a refused call leaves the set as it was, with its reason on the set. */
static void test_tools_set(void) {
    PantoTools *set = (PantoTools *)(void *)&n_passed;
    PantoError err = PANTO_ERROR_INIT;
    PantoString json = {"x", 1};
    PantoString none = {NULL, 0};
    PantoString dangling = {NULL, 3};
    char names[256];
    int n, shape_ok;

    current_test = "tools_set";
    panto_tools_free(NULL);
    CHECK_RC(panto_tools_new(NULL), PANTO_ERR_INVALID_ARGUMENT);
    CHECK_RC(panto_tools_add(NULL, panto_cstr(WEATHER_TOOL)), PANTO_ERR_INVALID_ARGUMENT);
    CHECK_RC(panto_tools_export(NULL, PANTO_TOOL_FORMAT_PANTO, none, &json), PANTO_ERR_INVALID_ARGUMENT);
    CHECK_RC(panto_tools_error(NULL, &err), PANTO_ERR_INVALID_ARGUMENT);
    CHECK_RC(panto_tools_new(&set), PANTO_OK);
    if (!set) return;
    CHECK_RC(panto_tools_error(set, &err), 0);
    CHECK(err.code == 0 && err.message.len == 0);

    /* An empty set exports an empty array. */
    CHECK_RC(panto_tools_export(set, PANTO_TOOL_FORMAT_ANTHROPIC, none, &json), PANTO_OK);
    CHECK(pstr_eq(json, "[]"));

    CHECK_RC(panto_tools_add(set, panto_cstr(WEATHER_TOOL)), PANTO_OK);
    CHECK_RC(panto_tools_add(set, panto_cstr("{\"name\": \"write\", \"description\": \"Write.\", "
                                              "\"input_schema\": {\"type\": \"object\"}, \"capabilities\": [\"fs.write\"]}")),
             PANTO_OK);
    /* Refused: each with its rule named, the set unchanged. */
    CHECK_RC(panto_tools_add(set, panto_cstr(WEATHER_TOOL)), PANTO_ERR_CONFIG);
    CHECK(panto_tools_error(set, &err) == PANTO_ERR_CONFIG && count_in(err.message, "already registered") == 1);
    CHECK_RC(panto_tools_add(set, panto_cstr("{\"name\": \"has space\"}")), PANTO_ERR_CONFIG);
    CHECK(panto_tools_error(set, &err) == PANTO_ERR_CONFIG && count_in(err.message, "letters, digits") == 1);
    CHECK_RC(panto_tools_add(set, panto_cstr("{\"name\": \"t\", \"input_schema\": {\"type\": \"string\"}}")), PANTO_ERR_CONFIG);
    CHECK(panto_tools_error(set, &err) == PANTO_ERR_CONFIG && count_in(err.message, "describe an object") == 1);
    CHECK_RC(panto_tools_add(set, panto_cstr("{\"name\": \"caf\xc3\"}")), PANTO_ERR_CONFIG); /* not UTF-8 */
    CHECK(panto_tools_error(set, &err) == PANTO_ERR_CONFIG && count_in(err.message, "the tool spec is not valid UTF-8 text") == 1);
    {
        /* A NUL inside the text: the JSON ends early, so the spec is not one JSON value. */
        PantoString with_nul = {"{\"name\": \"t\"}\0", 14};
        CHECK_RC(panto_tools_add(set, with_nul), PANTO_ERR_CONFIG);
    }
    CHECK_RC(panto_tools_add(set, none), PANTO_ERR_INVALID_ARGUMENT);
    CHECK_RC(panto_tools_add(set, dangling), PANTO_ERR_INVALID_ARGUMENT);
    CHECK(panto_tools_error(set, NULL) == PANTO_ERR_INVALID_ARGUMENT);

    /* Every format, all tools, then only those the capabilities allow. */
    CHECK_RC(panto_tools_export(set, PANTO_TOOL_FORMAT_OPENAI, none, &json), PANTO_OK);
    CHECK_RC(panto_tools_error(set, NULL), 0); /* a call that succeeds clears the detail */
    n = tool_names(json, "openai", names, sizeof names, &shape_ok);
    CHECK(shape_ok && n == 2 && has_name(names, "get_weather") && has_name(names, "write"));
    CHECK_RC(panto_tools_export(set, PANTO_TOOL_FORMAT_ANTHROPIC, panto_cstr("[]"), &json), PANTO_OK);
    n = tool_names(json, "anthropic", names, sizeof names, &shape_ok);
    CHECK(shape_ok && n == 1 && has_name(names, "get_weather"));
    CHECK_RC(panto_tools_export(set, PANTO_TOOL_FORMAT_PANTO, panto_cstr("[\"net\", \"fs.write\"]"), &json), PANTO_OK);
    n = tool_names(json, "panto", names, sizeof names, &shape_ok);
    CHECK(shape_ok && n == 2 && count_in(json, "\"native\":false") == 2);
    /* Refused exports: *out_json empty, the reason on the set. */
    CHECK_RC(panto_tools_export(set, PANTO_TOOL_FORMAT_PANTO, panto_cstr("[1]"), &json), PANTO_ERR_CONFIG);
    CHECK(json.len == 0);
    CHECK(panto_tools_error(set, &err) == PANTO_ERR_CONFIG && count_in(err.message, "array of strings") == 1);
    CHECK_RC(panto_tools_export(set, PANTO_TOOL_FORMAT_PANTO, panto_cstr("{\"net\": 1"), &json), PANTO_ERR_CONFIG);
    CHECK(panto_tools_error(set, &err) == PANTO_ERR_CONFIG && count_in(err.message, "not valid JSON") == 1);
    CHECK_RC(panto_tools_export(set, 0, none, &json), PANTO_ERR_INVALID_ARGUMENT);
    CHECK(panto_tools_error(set, &err) == PANTO_ERR_INVALID_ARGUMENT && count_in(err.message, "PANTO_TOOL_FORMAT_OPENAI") == 1);
    CHECK_RC(panto_tools_export(set, PANTO_TOOL_FORMAT_PANTO, dangling, &json), PANTO_ERR_INVALID_ARGUMENT);
    CHECK_RC(panto_tools_export(set, PANTO_TOOL_FORMAT_PANTO, none, NULL), PANTO_ERR_INVALID_ARGUMENT);
    panto_tools_free(set);
}

/* The text the model reads is taken as it is, NUL included, except that invalid UTF-8
 * becomes U+FFFD: a run's text and a tool result, in the request sent and the conversation. */
static void test_text_policy(void) {
    static const struct canned answers[] = {
        {200, "text/event-stream", SSE_TOOL, NULL, 0},
        {200, "text/event-stream", SSE_OK, NULL, 0},
    };
    char url[64];
    PantoAgent *agent;
    PantoStream *stream = NULL;
    PantoEvent ev = PANTO_EVENT_INIT;
    PantoInput input = PANTO_INPUT_INIT;
    PantoToolResult result = PANTO_TOOL_RESULT_INIT;
    PantoString conv = {NULL, 0};
    int rc, results = 0;

    current_test = "text_policy";
    agent = serve_and_connect(answers, 2, url, sizeof url);
    if (!agent) return;
    CHECK_RC(add_tool(agent, WEATHER_TOOL), PANTO_OK);
    input.text.ptr = "caf\xc3 a\0b";
    input.text.len = 8;
    CHECK_RC(panto_agent_run(agent, &input, &stream), PANTO_OK);
    while ((rc = panto_next_event(stream, &ev)) == PANTO_EVENT) {
        if (ev.kind == PANTO_EVENT_TOOL_CALL_START) {
            result.call_id = ev.id;
            result.content.ptr = "x\0y\xff";
            result.content.len = 4;
            CHECK_RC(panto_stream_submit_tool_result(stream, &result), PANTO_OK);
        }
        if (ev.kind == PANTO_EVENT_TOOL_RESULT) {
            results++;
            CHECK(ev.text.len == 6 && memcmp(ev.text.ptr, "x\0y\xef\xbf\xbd", 6) == 0);
        }
    }
    CHECK_RC(rc, PANTO_DONE);
    CHECK(results == 1);
    panto_stream_free(stream);
    CHECK_RC(panto_agent_conversation(agent, &conv), PANTO_OK);
    CHECK(count_in(conv, "\"caf\xef\xbf\xbd a\\u0000b\"") == 1);
    CHECK(count_in(conv, "\"x\\u0000y\xef\xbf\xbd\"") == 1);
    panto_agent_free(agent);
    stop_server();
    CHECK(count_in(request_body(0), "caf\xef\xbf\xbd a\\u0000b") == 1);
    CHECK(count_in(request_body(1), "x\\u0000y\xef\xbf\xbd") == 1);
}

/* One turn with a host tool call against the canned server (tool_use, then text), read with
 * a PantoEvent of the given size: ABI 2's, or ABI 1's, which ends before `name` (the library
 * must not write past it; the host still has the call's id to submit). Checks the event
 * order, RESULT_PENDING (not sticky), NO_SUCH_CALL, argument errors and BUSY while a call
 * awaits its result, and the conversation afterwards. */
static void tool_turn(size_t ev_size, const char *label) {
    static const struct canned answers[] = {
        {200, "text/event-stream", SSE_TOOL, NULL, 0},
        {200, "text/event-stream", SSE_OK, NULL, 0},
    };
    static const int want_kinds[] = {
        PANTO_EVENT_MESSAGE_START, PANTO_EVENT_BLOCK_START,  PANTO_EVENT_TOOL_DETAILS,
        PANTO_EVENT_CONTENT_DELTA, PANTO_EVENT_CONTENT_DELTA, PANTO_EVENT_BLOCK_COMPLETE,
        PANTO_EVENT_MESSAGE_END,   PANTO_EVENT_TOOL_CALL_START, PANTO_EVENT_TOOL_RESULT,
        PANTO_EVENT_MESSAGE_START, PANTO_EVENT_BLOCK_START,  PANTO_EVENT_CONTENT_DELTA,
        PANTO_EVENT_CONTENT_DELTA, PANTO_EVENT_BLOCK_COMPLETE, PANTO_EVENT_MESSAGE_END,
        PANTO_EVENT_MESSAGE_COMPLETE,
    };
    const int n_want = (int)(sizeof want_kinds / sizeof want_kinds[0]);
    const int full = ev_size == sizeof(PantoEvent);
    char url[64];
    PantoAgent *agent;
    PantoStream *stream = NULL;
    PantoEvent ev;
    PantoString conv = {NULL, 0};
    int rc, n = 0, order_ok = 1, pending_seen = 0;

    current_test = label;
    agent = serve_and_connect(answers, 2, url, sizeof url);
    if (!agent) return;
    CHECK_RC(add_tool(agent, WEATHER_TOOL), PANTO_OK);
    CHECK_RC(run_text(agent, "Weather in Paris?", &stream), PANTO_OK);
    memset(&ev, 0x5A, sizeof ev);
    ev.size = (uint32_t)ev_size;
    for (;;) {
        rc = panto_next_event(stream, &ev);
        if (rc != PANTO_EVENT) break;
        CHECK(untouched(&ev, ev_size, sizeof ev, 0x5A));
        if (n < n_want && ev.kind != want_kinds[n]) {
            order_ok = 0;
            printf("    event %d is %s, expected %s\n", n, panto_event_kind_name(ev.kind),
                   panto_event_kind_name(want_kinds[n]));
        }
        switch (ev.kind) {
        case PANTO_EVENT_BLOCK_START:
            if (n == 1) CHECK(ev.index == 0 && ev.block_kind == PANTO_BLOCK_TOOL_CALL);
            break;
        case PANTO_EVENT_TOOL_DETAILS:
            CHECK(ev.index == 0 && pstr_eq(ev.id, "toolu_t1"));
            if (full) CHECK(pstr_eq(ev.name, "get_weather"));
            break;
        case PANTO_EVENT_CONTENT_DELTA:
            if (n == 3) CHECK(ev.block_kind == PANTO_BLOCK_TOOL_CALL && pstr_eq(ev.text, "{\"city\": "));
            if (n == 4) CHECK(ev.block_kind == PANTO_BLOCK_TOOL_CALL && pstr_eq(ev.text, "\"Paris\"}"));
            break;
        case PANTO_EVENT_BLOCK_COMPLETE:
            if (n == 5) CHECK(ev.block_kind == PANTO_BLOCK_TOOL_CALL && pstr_eq(ev.text, "{\"city\": \"Paris\"}"));
            break;
        case PANTO_EVENT_MESSAGE_END:
            if (n == 6)
                CHECK(ev.stop_reason == PANTO_STOP_TOOL_USE && pstr_eq(ev.provider_stop_reason, "tool_use") &&
                      ev.usage.input_tokens == 20 && ev.usage.output_tokens == 9);
            else
                CHECK(ev.stop_reason == PANTO_STOP_END_TURN && ev.usage.input_tokens == 11 &&
                      ev.usage.output_tokens == 5);
            break;
        case PANTO_EVENT_TOOL_CALL_START: {
            char *id = dup_pstr(ev.id), *input = dup_pstr(ev.text);
            const char *city = cj_skip(input) ? cj_member(input, "city") : NULL;
            CHECK(pstr_eq(ev.id, "toolu_t1"));
            CHECK(json_str_is(city, "Paris"));
            if (full) CHECK(pstr_eq(ev.name, "get_weather") && ev.awaiting_result == 1);
            /* Not submitted yet: the stream waits, unchanged, as often as asked. */
            CHECK_RC(panto_next_event(stream, &ev), PANTO_ERR_RESULT_PENDING);
            CHECK_RC(panto_next_event(stream, &ev), PANTO_ERR_RESULT_PENDING);
            CHECK_RC(panto_stream_error(stream, NULL), 0);
            pending_seen = 1;
            CHECK_RC(add_tool(agent, "{\"name\": \"late\", \"description\": \"d\", "
                                                 "\"input_schema\": {\"type\": \"object\"}}"),
                     PANTO_ERR_BUSY);
            CHECK_RC(submit_result(stream, "toolu_other", "x", 0), PANTO_ERR_NO_SUCH_CALL);
            CHECK_RC(submit_result(stream, NULL, "x", 0), PANTO_ERR_INVALID_ARGUMENT);
            {
                PantoToolResult bad = PANTO_TOOL_RESULT_INIT;
                bad.call_id = panto_cstr(id);
                bad.content.len = 2; /* a length without bytes */
                CHECK_RC(panto_stream_submit_tool_result(stream, &bad), PANTO_ERR_INVALID_ARGUMENT);
            }
            CHECK_RC(panto_next_event(stream, &ev), PANTO_ERR_RESULT_PENDING);
            CHECK_RC(submit_result(stream, id, "Sunny, 21 C", 1), PANTO_OK);
            /* Answered: the id no longer awaits anything. */
            CHECK_RC(submit_result(stream, id, "again", 0), PANTO_ERR_NO_SUCH_CALL);
            free(id);
            free(input);
            break;
        }
        case PANTO_EVENT_TOOL_RESULT:
            CHECK(pstr_eq(ev.id, "toolu_t1") && pstr_eq(ev.text, "Sunny, 21 C") && ev.is_error == 1);
            if (full) CHECK(pstr_eq(ev.name, "get_weather"));
            break;
        case PANTO_EVENT_MESSAGE_COMPLETE:
            CHECK(ev.stop_reason == PANTO_STOP_END_TURN && ev.usage.input_tokens == 31 &&
                  ev.usage.output_tokens == 14);
            break;
        default:
            break;
        }
        n++;
    }
    CHECK_RC(rc, PANTO_DONE);
    CHECK(order_ok && n == n_want);
    CHECK(pending_seen);
    CHECK_RC(submit_result(stream, "toolu_t1", "late", 0), PANTO_ERR_NO_SUCH_CALL);
    CHECK_RC(panto_next_event(stream, &ev), PANTO_DONE);
    panto_stream_free(stream);

    /* The conversation holds the call and its result. */
    CHECK_RC(panto_agent_conversation(agent, &conv), PANTO_OK);
    CHECK(count_in(conv, "\"tool_call\"") == 1 && count_in(conv, "\"tool_result\"") == 1);
    CHECK(count_in(conv, "toolu_t1") == 2 && count_in(conv, "Sunny, 21 C") == 1);
    CHECK(count_in(conv, "\"assistant\"") == 2);
    /* The turn is over: tools may be added again. */
    CHECK_RC(add_tool(agent, "{\"name\": \"late\", \"description\": \"d\", "
                                         "\"input_schema\": {\"type\": \"object\"}}"),
             PANTO_OK);
    panto_agent_free(agent);
    stop_server();
}

static void test_tool_turn(void) {
    tool_turn(sizeof(PantoEvent), "tool_turn");
    /* ABI 1's PantoEvent: is_error took reserved0's place, the rest came after usage. */
    tool_turn(offsetof(PantoEvent, name), "tool_turn_abi1_event");
}


/* ---- Issue 36: approvals --------------------------------------------------------------- */

/* Reads events up to the APPROVAL_REQUEST of the round: 1 when it came, listing the call. */
static int read_to_approval_request(PantoStream *stream, PantoEvent *ev) {
    int rc;
    while ((rc = panto_next_event(stream, ev)) == PANTO_EVENT) {
        CHECK(ev->kind != PANTO_EVENT_TOOL_CALL_START); /* never before the answer */
        if (ev->kind == PANTO_EVENT_APPROVAL_REQUEST) return 1;
    }
    printf("    no APPROVAL_REQUEST: rc %s\n", panto_status_name(rc));
    return 0;
}

/* A tool that asks ("approval": "always"): the APPROVAL_REQUEST lists its call, APPROVAL_PENDING
 * (not sticky) until an answer; a denial's reason is the call's error result; an approval
 * starts the call as any host call; unknown and double answers are INVALID_ARGUMENT. */
static void test_approvals(void) {
    static const struct canned answers[] = {
        {200, "text/event-stream", SSE_TOOL, NULL, 0},
        {200, "text/event-stream", SSE_OK, NULL, 0},
        {200, "text/event-stream", SSE_TOOL, NULL, 0},
        {200, "text/event-stream", SSE_OK, NULL, 0},
    };
    char url[64];
    PantoAgent *agent;
    PantoStream *stream = NULL;
    PantoEvent ev = PANTO_EVENT_INIT;
    PantoString conv = {NULL, 0};
    PantoString bad = {NULL, 3};
    int rc;

    current_test = "approvals";
    CHECK_NAME(panto_status_name(PANTO_ERR_APPROVAL_PENDING), "approval_pending");
    CHECK_NAME(panto_event_kind_name(PANTO_EVENT_APPROVAL_REQUEST), "approval_request");
    agent = serve_and_connect(answers, 4, url, sizeof url);
    if (!agent) return;
    CHECK_RC(add_tool(agent, "{\"name\": \"get_weather\", \"approval\": \"always\", \"input_schema\": "
                             "{\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}}}}"),
             PANTO_OK);

    /* Denied. */
    CHECK_RC(run_text(agent, "Weather in Paris?", &stream), PANTO_OK);
    if (read_to_approval_request(stream, &ev)) {
        CHECK(ev.approval_count == 1 && ev.approvals != NULL);
        CHECK(pstr_eq(ev.approvals[0].id, "toolu_t1") && pstr_eq(ev.approvals[0].name, "get_weather"));
        CHECK(pstr_eq(ev.approvals[0].input, "{\"city\":\"Paris\"}"));
    }
    CHECK_RC(panto_next_event(stream, &ev), PANTO_ERR_APPROVAL_PENDING);
    CHECK_RC(panto_next_event(stream, &ev), PANTO_ERR_APPROVAL_PENDING);
    CHECK_RC(panto_stream_error(stream, NULL), 0);
    CHECK_RC(submit_result(stream, "toolu_t1", "too early", 0), PANTO_ERR_NO_SUCH_CALL);
    CHECK_RC(panto_stream_approve(stream, panto_cstr("toolu_other")), PANTO_ERR_INVALID_ARGUMENT);
    CHECK_RC(panto_stream_approve(NULL, panto_cstr("toolu_t1")), PANTO_ERR_INVALID_ARGUMENT);
    CHECK_RC(panto_stream_deny(stream, panto_cstr("toolu_t1"), bad), PANTO_ERR_INVALID_ARGUMENT);
    CHECK_RC(panto_stream_deny(stream, panto_cstr("toolu_t1"), panto_cstr("not today")), PANTO_OK);
    CHECK_RC(panto_stream_deny(stream, panto_cstr("toolu_t1"), panto_cstr("again")), PANTO_ERR_INVALID_ARGUMENT);
    CHECK_RC(panto_stream_approve(stream, panto_cstr("toolu_t1")), PANTO_ERR_INVALID_ARGUMENT);
    CHECK_RC(panto_next_event(stream, &ev), PANTO_EVENT);
    CHECK(ev.kind == PANTO_EVENT_TOOL_CALL_START && ev.awaiting_result == 0);
    CHECK_RC(panto_next_event(stream, &ev), PANTO_EVENT);
    CHECK(ev.kind == PANTO_EVENT_TOOL_RESULT && ev.is_error == 1 &&
          pstr_eq(ev.text, "The user denied this call: not today"));
    while ((rc = panto_next_event(stream, &ev)) == PANTO_EVENT) {}
    CHECK_RC(rc, PANTO_DONE);
    panto_stream_free(stream);

    /* Approved: the call starts, awaits its result, and the turn goes on. */
    CHECK_RC(run_text(agent, "And now?", &stream), PANTO_OK);
    if (read_to_approval_request(stream, &ev)) CHECK(ev.approval_count == 1);
    CHECK_RC(panto_next_event(stream, &ev), PANTO_ERR_APPROVAL_PENDING);
    CHECK_RC(panto_stream_approve(stream, panto_cstr("toolu_t1")), PANTO_OK);
    CHECK_RC(panto_next_event(stream, &ev), PANTO_EVENT);
    CHECK(ev.kind == PANTO_EVENT_TOOL_CALL_START && ev.awaiting_result == 1 && pstr_eq(ev.id, "toolu_t1"));
    CHECK_RC(panto_next_event(stream, &ev), PANTO_ERR_RESULT_PENDING);
    CHECK_RC(submit_result(stream, "toolu_t1", "Sunny", 0), PANTO_OK);
    while ((rc = panto_next_event(stream, &ev)) == PANTO_EVENT) {}
    CHECK_RC(rc, PANTO_DONE);
    panto_stream_free(stream);

    CHECK_RC(panto_agent_conversation(agent, &conv), PANTO_OK);
    CHECK(count_in(conv, "The user denied this call: not today") == 1 && count_in(conv, "Sunny") == 1);
    panto_agent_free(agent);
    stop_server();
}


/* A stream freed while a call waits for its answer leaves the round pending
 * (panto_agent_pending_round); panto_agent_resume goes on with it; with nothing pending,
 * PANTO_ERR_STATE; a new turn answers a round it leaves. */
static void test_pending_round(void) {
    static const struct canned answers[] = {
        {200, "text/event-stream", SSE_TOOL, NULL, 0},
        {200, "text/event-stream", SSE_OK, NULL, 0},
        {200, "text/event-stream", SSE_TOOL, NULL, 0},
        {200, "text/event-stream", SSE_OK, NULL, 0},
    };
    char url[64];
    PantoAgent *agent;
    PantoStream *stream = NULL;
    PantoEvent ev = PANTO_EVENT_INIT;
    PantoString conv = {NULL, 0};
    PantoString none = {NULL, 0};
    const PantoPendingCall *calls = NULL;
    size_t count = 99;
    int rc;

    current_test = "pending_round";
    agent = serve_and_connect(answers, 4, url, sizeof url);
    if (!agent) return;
    CHECK_RC(add_tool(agent, "{\"name\": \"get_weather\", \"approval\": \"always\", \"input_schema\": "
                             "{\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}}}}"),
             PANTO_OK);
    CHECK_RC(panto_agent_pending_round(agent, &calls, &count), PANTO_OK);
    CHECK(count == 0 && calls == NULL);
    CHECK_RC(panto_agent_resume(agent, none, &stream), PANTO_ERR_STATE);
    CHECK(stream == NULL);
    CHECK_RC(panto_agent_pending_round(agent, NULL, &count), PANTO_ERR_INVALID_ARGUMENT);

    /* Freed while the call waits: the round stays, the call still asks. */
    CHECK_RC(run_text(agent, "Weather in Paris?", &stream), PANTO_OK);
    read_to_approval_request(stream, &ev);
    CHECK_RC(panto_next_event(stream, &ev), PANTO_ERR_APPROVAL_PENDING);
    CHECK_RC(panto_agent_pending_round(agent, &calls, &count), PANTO_ERR_BUSY);
    panto_stream_free(stream);
    CHECK_RC(panto_agent_pending_round(agent, &calls, &count), PANTO_OK);
    if (count == 1) {
        CHECK(pstr_eq(calls[0].id, "toolu_t1") && pstr_eq(calls[0].name, "get_weather"));
        CHECK(pstr_eq(calls[0].input, "{\"city\":\"Paris\"}") && calls[0].state == PANTO_PENDING_ASK);
    } else CHECK(count == 1);

    /* Resumed: asked again, approved, run, and the turn ends. */
    CHECK_RC(panto_agent_resume(agent, none, &stream), PANTO_OK);
    CHECK_RC(panto_next_event(stream, &ev), PANTO_EVENT);
    CHECK(ev.kind == PANTO_EVENT_APPROVAL_REQUEST && ev.approval_count == 1);
    CHECK_RC(panto_next_event(stream, &ev), PANTO_ERR_APPROVAL_PENDING);
    CHECK_RC(panto_stream_approve(stream, panto_cstr("toolu_t1")), PANTO_OK);
    CHECK_RC(panto_next_event(stream, &ev), PANTO_EVENT);
    CHECK(ev.kind == PANTO_EVENT_TOOL_CALL_START && ev.awaiting_result == 1);
    CHECK_RC(panto_next_event(stream, &ev), PANTO_ERR_RESULT_PENDING);
    CHECK_RC(submit_result(stream, "toolu_t1", "Sunny", 0), PANTO_OK);
    while ((rc = panto_next_event(stream, &ev)) == PANTO_EVENT) {}
    CHECK_RC(rc, PANTO_DONE);
    panto_stream_free(stream);
    CHECK_RC(panto_agent_pending_round(agent, &calls, &count), PANTO_OK);
    CHECK(count == 0);

    /* Left again, then a new turn: the call gets "not approved", and the turn goes on. */
    CHECK_RC(run_text(agent, "And Rome?", &stream), PANTO_OK);
    read_to_approval_request(stream, &ev);
    CHECK_RC(panto_next_event(stream, &ev), PANTO_ERR_APPROVAL_PENDING);
    panto_stream_free(stream);
    CHECK_RC(run_text(agent, "Never mind.", &stream), PANTO_OK);
    while ((rc = panto_next_event(stream, &ev)) == PANTO_EVENT) {}
    CHECK_RC(rc, PANTO_DONE);
    panto_stream_free(stream);
    CHECK_RC(panto_agent_conversation(agent, &conv), PANTO_OK);
    CHECK(count_in(conv, "The user did not approve this call before moving on.") == 1 && count_in(conv, "Sunny") == 1);
    panto_agent_free(agent);
    stop_server();
}

/* A turn's budget (config "budget"): reaching one ends the turn with PANTO_STOP_BUDGET, its
 * name in provider_stop_reason; the calls of the round it stops are answered "Skipped: ..."
 * (no TOOL_CALL_START), and the next turn's request carries them. A turn's options change a
 * budget for that turn; the settings show them. */
static void test_budget(void) {
    static const struct canned answers[] = {
        {200, "text/event-stream", SSE_TOOL, NULL, 0},
        {200, "text/event-stream", SSE_TOOL, NULL, 0},
        {200, "text/event-stream", SSE_OK, NULL, 0},
    };
    char url[64];
    PantoAgent *agent;
    PantoStream *stream = NULL;
    PantoEvent ev = PANTO_EVENT_INIT;
    PantoInput input = PANTO_INPUT_INIT;
    PantoString settings = {NULL, 0};
    int rc, starts = 0;

    current_test = "budget";
    CHECK_NAME(panto_stop_reason_name(PANTO_STOP_BUDGET), "budget");
    agent = serve_and_connect(answers, 3, url, sizeof url);
    if (!agent) return;
    CHECK_RC(add_tool(agent, WEATHER_TOOL), PANTO_OK);
    CHECK_RC(set_config(agent, "{\"budget\": {\"tool_rounds\": -1}}"), PANTO_ERR_CONFIG);
    CHECK_RC(set_config(agent, "{\"budget\": {\"tool_rounds\": 1, \"wall_ms\": 600000}}"), PANTO_OK);
    CHECK_RC(panto_agent_settings(agent, &settings), PANTO_OK);
    CHECK(count_in(settings, "\"budget\":{\"output_tokens\":null,\"tool_rounds\":1,\"wall_ms\":600000,\"cost_usd\":null}") == 1);

    /* tool_rounds 1: the first round runs, the second is skipped. */
    CHECK_RC(run_text(agent, "Weather in Paris?", &stream), PANTO_OK);
    while ((rc = panto_next_event(stream, &ev)) == PANTO_EVENT || rc == PANTO_ERR_RESULT_PENDING) {
        if (rc == PANTO_ERR_RESULT_PENDING) {
            CHECK_RC(submit_result(stream, "toolu_t1", "Sunny", 0), PANTO_OK);
            continue;
        }
        if (ev.kind == PANTO_EVENT_TOOL_CALL_START) starts++;
        if (ev.kind == PANTO_EVENT_MESSAGE_COMPLETE) {
            CHECK(ev.stop_reason == PANTO_STOP_BUDGET);
            CHECK(pstr_eq(ev.provider_stop_reason, "tool_rounds"));
        }
    }
    CHECK_RC(rc, PANTO_DONE);
    CHECK(starts == 1);
    panto_stream_free(stream);

    /* A turn's options lift the budget: the next request carries the skipped call's result. */
    input.text = panto_cstr("Thanks");
    input.options = panto_cstr("{\"budget\": {\"tool_rounds\": null}}");
    CHECK_RC(panto_agent_run(agent, &input, &stream), PANTO_OK);
    while ((rc = panto_next_event(stream, &ev)) == PANTO_EVENT) {
        if (ev.kind == PANTO_EVENT_MESSAGE_COMPLETE) CHECK(ev.stop_reason == PANTO_STOP_END_TURN);
    }
    CHECK_RC(rc, PANTO_DONE);
    panto_stream_free(stream);
    panto_agent_free(agent);
    stop_server();
    CHECK(request_count() == 3);
    CHECK(requests && strstr(requests, "Skipped: the turn's budget is spent.") != NULL);
}

/* Steering and follow-ups: a steer during a tool round goes with the round's results; a
 * follow-up runs the stream's next turn after the first's MESSAGE_COMPLETE; both are refused
 * once the stream is over. */
static void test_steering(void) {
    static const struct canned answers[] = {
        {200, "text/event-stream", SSE_TOOL, NULL, 0},
        {200, "text/event-stream", SSE_OK, NULL, 0},
        {200, "text/event-stream", SSE_OK, NULL, 0},
    };
    char url[64];
    PantoAgent *agent;
    PantoStream *stream = NULL;
    PantoEvent ev = PANTO_EVENT_INIT;
    int rc, completes = 0, steered = 0, followed = 0;

    current_test = "steering";
    agent = serve_and_connect(answers, 3, url, sizeof url);
    if (!agent) return;
    CHECK_RC(add_tool(agent, WEATHER_TOOL), PANTO_OK);
    CHECK_RC(run_text(agent, "Weather in Paris?", &stream), PANTO_OK);
    CHECK_RC(panto_stream_steer(stream, panto_cstr("")), PANTO_ERR_INVALID_ARGUMENT);
    CHECK_RC(panto_stream_follow_up(stream, panto_cstr("And tomorrow?")), PANTO_OK);
    while ((rc = panto_next_event(stream, &ev)) == PANTO_EVENT || rc == PANTO_ERR_RESULT_PENDING) {
        if (rc == PANTO_ERR_RESULT_PENDING) {
            CHECK_RC(panto_stream_steer(stream, panto_cstr("In Celsius, please.")), PANTO_OK);
            CHECK_RC(submit_result(stream, "toolu_t1", "Sunny", 0), PANTO_OK);
            continue;
        }
        if (ev.kind == PANTO_EVENT_USER_MESSAGE) {
            if (pstr_eq(ev.name, "steer")) {
                CHECK(pstr_eq(ev.text, "In Celsius, please."));
                CHECK(completes == 0);
                steered++;
            } else {
                CHECK(pstr_eq(ev.name, "follow_up"));
                CHECK(pstr_eq(ev.text, "And tomorrow?"));
                CHECK(completes == 1);
                followed++;
            }
        }
        if (ev.kind == PANTO_EVENT_MESSAGE_COMPLETE) completes++;
    }
    CHECK_RC(rc, PANTO_DONE);
    CHECK(steered == 1 && followed == 1 && completes == 2);
    CHECK_RC(panto_stream_follow_up(stream, panto_cstr("Too late")), PANTO_ERR_STATE);
    CHECK_RC(panto_stream_steer(stream, panto_cstr("Too late")), PANTO_ERR_STATE);
    panto_stream_free(stream);
    panto_agent_free(agent);
    stop_server();
    CHECK(request_count() == 3);
    CHECK(requests && strstr(requests, "In Celsius, please.") != NULL);
    CHECK(requests && strstr(requests, "And tomorrow?") != NULL);
    CHECK(requests && strstr(requests, "Too late") == NULL);
}

/* panto_agent_continue: a turn that answers an imported conversation as it is. */
static void test_continue(void) {
    static const struct canned answers[] = {{200, "text/event-stream", SSE_OK, NULL, 0}};
    char url[64];
    PantoAgent *agent;
    PantoStream *stream = NULL;
    PantoEvent ev = PANTO_EVENT_INIT;
    size_t count = 0;
    int rc;

    current_test = "continue";
    agent = serve_and_connect(answers, 1, url, sizeof url);
    if (!agent) return;
    CHECK_RC(panto_agent_continue(agent, panto_cstr(""), &stream), PANTO_ERR_CONVERSATION);
    CHECK(stream == NULL);
    CHECK_RC(panto_agent_import(agent, panto_cstr("{\"version\":1,\"messages\":[{\"role\":\"user\","
                                                  "\"content\":[{\"type\":\"text\",\"text\":\"Imported question\"}]}]}")),
             PANTO_OK);
    CHECK_RC(panto_agent_continue(agent, panto_cstr("{\"max_tokens\": 77}"), &stream), PANTO_OK);
    while ((rc = panto_next_event(stream, &ev)) == PANTO_EVENT) {}
    CHECK_RC(rc, PANTO_DONE);
    panto_stream_free(stream);
    CHECK_RC(panto_agent_message_count(agent, &count), PANTO_OK);
    CHECK(count == 2);
    panto_agent_free(agent);
    stop_server();
    CHECK(request_count() == 1);
    CHECK(requests && strstr(requests, "Imported question") != NULL);
    CHECK(requests && strstr(requests, "\"max_tokens\":77") != NULL);
}

/* ---- Issue 4: retries, set_config, cancel, reopen, redacted thinking ------------------ */

/* The SSE prefix of a message whose text block has the delta "Partial " (no end). */
#define SSE_PARTIAL_PREFIX                                                                          \
    "event: message_start\n"                                                                        \
    "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_partial\",\"type\":\"message\","   \
    "\"role\":\"assistant\",\"model\":\"claude-test\",\"content\":[],\"stop_reason\":null,"         \
    "\"usage\":{\"input_tokens\":11,\"output_tokens\":1}}}\n\n"                                     \
    "event: content_block_start\n"                                                                  \
    "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" \
    "event: content_block_delta\n"                                                                  \
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Partial \"}}\n\n"

/* The partial message, then the rest it never gets to send when the server stalls. */
static const char SSE_STALLED[] =
    SSE_PARTIAL_PREFIX
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"rest\"}}\n\n"
    "event: content_block_stop\n"
    "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
    "event: message_delta\n"
    "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},"
    "\"usage\":{\"output_tokens\":5}}\n\n"
    "event: message_stop\n"
    "data: {\"type\":\"message_stop\"}\n\n";

/* The partial message, then an overloaded error event: a failure after content. */
static const char SSE_ERROR_AFTER_DELTA[] =
    SSE_PARTIAL_PREFIX
    "event: error\n"
    "data: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";

/* Redacted thinking (whole in content_block_start), then text. */
static const char SSE_REDACTED[] =
    "event: message_start\n"
    "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_redacted\",\"type\":\"message\","
    "\"role\":\"assistant\",\"model\":\"claude-test\",\"content\":[],\"stop_reason\":null,"
    "\"usage\":{\"input_tokens\":11,\"output_tokens\":1}}}\n\n"
    "event: content_block_start\n"
    "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"redacted_thinking\","
    "\"data\":\"EqkECkYIBxgC+opaque/data==\"}}\n\n"
    "event: content_block_stop\n"
    "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
    "event: content_block_start\n"
    "data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"Done.\"}}\n\n"
    "event: content_block_stop\n"
    "data: {\"type\":\"content_block_stop\",\"index\":1}\n\n"
    "event: message_delta\n"
    "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},"
    "\"usage\":{\"output_tokens\":7}}\n\n"
    "event: message_stop\n"
    "data: {\"type\":\"message_stop\"}\n\n";

static const char BODY_429[] =
    "{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"Slow down\"}}";
static const char BODY_400[] =
    "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"thinking: not supported\"}}";

/* A connection failure with retries on: two PROVIDER_RETRY events (attempts 1 and 2, no HTTP
 * status, the backoff initial·2^n with jitter in [0.75, 1], a reason), then the error. */
static void test_connection_retries(void) {
    PantoAgent *agent = new_agent_with("http://127.0.0.1:1",
                                       "\"retry\": {\"initial_delay_ms\": 40, \"max_delay_ms\": 60}");
    PantoStream *stream = NULL;
    PantoEvent ev = PANTO_EVENT_INIT;
    current_test = "connection_retries";
    CHECK(agent != NULL);
    if (!agent) return;
    CHECK_RC(run_text(agent, "hi", &stream), PANTO_OK);
    CHECK_RC(panto_next_event(stream, &ev), PANTO_EVENT);
    CHECK(ev.kind == PANTO_EVENT_PROVIDER_RETRY && ev.attempt == 1 && ev.http_status == 0);
    CHECK(ev.delay_ms >= 30 && ev.delay_ms <= 40);
    CHECK(ev.text.len > 0 && count_in(ev.text, "connection_error") == 1);
    CHECK_RC(panto_next_event(stream, &ev), PANTO_EVENT);
    CHECK(ev.kind == PANTO_EVENT_PROVIDER_RETRY && ev.attempt == 2 && ev.http_status == 0);
    CHECK(ev.delay_ms >= 45 && ev.delay_ms <= 60); /* 80, capped at 60 */
    CHECK_RC(panto_next_event(stream, &ev), PANTO_ERR_CONNECTION);
    CHECK_RC(panto_next_event(stream, &ev), PANTO_ERR_CONNECTION);
    panto_stream_free(stream);
    panto_agent_free(agent);
}

/* HTTP 429 with retry-after-ms, then success: the PROVIDER_RETRY event's fields, also through
 * an event struct of the size before them (written no further); the message starts after it;
 * the retried request carries the user message once. */
static void retry_event_turn(size_t ev_size, const char *label) {
    static const struct canned answers[] = {
        {429, "application/json", BODY_429, "retry-after-ms: 20\r\n", 0},
        {200, "text/event-stream", SSE_OK, NULL, 0},
    };
    const int full = ev_size == sizeof(PantoEvent);
    char url[64];
    PantoAgent *agent;
    PantoStream *stream = NULL;
    PantoEvent ev;
    int rc, n = 0;

    current_test = label;
    agent = serve_and_connect(answers, 2, url, sizeof url);
    if (!agent) return;
    CHECK_RC(run_text(agent, "Hello", &stream), PANTO_OK);
    memset(&ev, 0x5A, sizeof ev);
    ev.size = (uint32_t)ev_size;
    while ((rc = panto_next_event(stream, &ev)) == PANTO_EVENT) {
        CHECK(untouched(&ev, ev_size, sizeof ev, 0x5A));
        if (n == 0) {
            CHECK(ev.kind == PANTO_EVENT_PROVIDER_RETRY);
            CHECK(pstr_eq(ev.text, "rate_limit_error: Slow down"));
            if (full) CHECK(ev.attempt == 1 && ev.http_status == 429 && ev.delay_ms == 20);
        }
        if (n == 1) CHECK(ev.kind == PANTO_EVENT_MESSAGE_START && pstr_eq(ev.id, "msg_test_1"));
        n++;
    }
    CHECK_RC(rc, PANTO_DONE);
    CHECK(n == 8); /* the retry, then the 7 events of the message */
    panto_stream_free(stream);
    panto_agent_free(agent);
    stop_server();
    CHECK(request_count() == 2);
    CHECK(count_in(request_body(0), "Hello") == 1 && count_in(request_body(1), "Hello") == 1);
}

static void test_retry_event(void) {
    retry_event_turn(sizeof(PantoEvent), "retry_event");
    /* The layout before issue 4 ended at awaiting_result + reserved0. */
    retry_event_turn(offsetof(PantoEvent, attempt), "retry_event_short_struct");
}

/* Reads the error detail of an agent-level call and checks its code and that its message
 * names `mention`. */
static void check_agent_error(PantoAgent *agent, int code, const char *mention) {
    PantoError err = PANTO_ERROR_INIT;
    CHECK_RC(panto_agent_error(agent, &err), code);
    CHECK(err.message.len > 0);
    if (mention && count_in(err.message, mention) == 0) {
        printf("    message: %.*s (expected it to name %s)\n", (int)err.message.len,
               err.message.ptr, mention);
        CHECK(!"the message names the problem");
    }
}

/* A config string that would reach the wire with a control character in it (header or
 * request-line injection) is refused: PANTO_ERR_CONFIG, a message naming the key, never its
 * value. At creation and through set_config, which then changes nothing. */
static void check_wire_refused(int rc, PantoAgent *agent, const char *names) {
    PantoError err = PANTO_ERROR_INIT;
    CHECK_RC(rc, PANTO_ERR_CONFIG);
    check_agent_error(agent, PANTO_ERR_CONFIG, names);
    CHECK_RC(panto_agent_error(agent, &err), PANTO_ERR_CONFIG);
    CHECK(count_in(err.message, "s3cret") == 0 && count_in(err.message, "Injected") == 0);
}

static void test_wire_strings(void) {
    static const struct {
        const char *config, *names;
    } refused[] = {
        {"{\"provider\": \"openai\", \"model\": \"m\", \"api_key\": \"sk-s3cret\\r\\nX-Injected: yes\"}", "api_key"},
        {"{\"provider\": \"anthropic\", \"model\": \"m\", \"api_key\": \"sk-s3cret\\n\"}", "api_key"},
        {"{\"provider\": \"openai\", \"model\": \"m\", \"api_key\": \"k\", "
         "\"base_url\": \"http://127.0.0.1:1/v1 HTTP/1.1\\r\\nX-Injected: yes\\r\\n\"}", "base_url"},
        {"{\"provider\": \"openai\", \"model\": \"gpt\\u0001\", \"api_key\": \"k\"}", "model"},
    };
    static const struct canned answers[] = {{200, "text/event-stream", SSE_OK, NULL, 0}};
    char url[64];
    size_t i;
    PantoAgent *agent = NULL;
    PantoStream *stream = NULL;
    PantoString body;

    current_test = "wire_strings_new";
    for (i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        int rc;
        agent = NULL;
        rc = agent_new(refused[i].config, &agent);
        check_wire_refused(rc, agent, refused[i].names);
        panto_agent_free(agent);
    }

    current_test = "wire_strings_set_config";
    agent = serve_and_connect(answers, 1, url, sizeof url);
    if (!agent) return;
    check_wire_refused(set_config(agent, "{\"api_key\": \"sk-s3cret\\r\\nX-Injected: yes\"}"), agent, "api_key");
    check_wire_refused(set_config(agent, "{\"base_url\": \"http://h/\\r\\nX-Injected: yes\"}"), agent, "base_url");
    check_wire_refused(set_config(agent, "{\"max_tokens\": 777, \"model\": \"m\\u007f\"}"), agent, "model");
    /* Nothing changed: the next request goes where it went, with the old model and limit. */
    CHECK_RC(run_text(agent, "one", &stream), PANTO_OK);
    CHECK_RC(drain(stream), PANTO_DONE);
    panto_stream_free(stream);
    panto_agent_free(agent);
    stop_server();
    CHECK(request_count() == 1);
    body = request_body(0);
    CHECK(count_in(body, "\"model\":\"claude-test\"") == 1 && count_in(body, "777") == 0);
}

/* Runs n turns of one answer each (the answers of the server) and returns the agent's
 * connection counters after them, in a struct of `size` bytes filled with 0x5A before. */
static PantoConnections turns_on_connections(int n, int kept_alive, const char *extra, uint32_t size) {
    static const struct canned answers[] = {
        {200, "text/event-stream", SSE_OK, NULL, 0},
        {200, "text/event-stream", SSE_OK, NULL, 0},
        {200, "text/event-stream", SSE_OK, NULL, 0},
    };
    char url[64];
    PantoAgent *agent;
    PantoStream *stream = NULL;
    PantoConnections c;
    int i;
    memset(&c, 0x5A, sizeof c);
    c.size = size;
    serve_kept_alive = kept_alive;
    if (start_server(answers, n, url, sizeof url) < 0) {
        serve_kept_alive = 0;
        CHECK(!"cannot start the canned server");
        return c;
    }
    agent = new_agent_with(url, extra);
    CHECK(agent != NULL);
    if (agent) {
        PantoConnections before = PANTO_CONNECTIONS_INIT;
        CHECK_RC(panto_agent_connections(agent, &before), PANTO_OK);
        CHECK(before.opened == 0 && before.reused == 0);
        for (i = 0; i < n; i++) {
            CHECK_RC(run_text(agent, "Hello", &stream), PANTO_OK);
            CHECK_RC(drain(stream), PANTO_DONE);
            panto_stream_free(stream);
            stream = NULL;
        }
        CHECK_RC(panto_agent_connections(agent, &c), PANTO_OK);
    }
    panto_agent_free(agent);
    stop_server();
    serve_kept_alive = 0;
    return c;
}

static void test_connections(void) {
    PantoConnections c;
    PantoAgent *agent = NULL;
    current_test = "connections_kept_alive";
    c = turns_on_connections(3, 1, NULL, sizeof c);
    CHECK(c.size == sizeof c && c.opened == 1 && c.reused == 2);
    CHECK(request_count() == 3);

    current_test = "connections_server_closes";
    c = turns_on_connections(2, 0, NULL, sizeof c);
    CHECK(c.opened == 2 && c.reused == 0);

    /* keep_alive.idle_ms 0: a server that would keep it alive still gets one per request. */
    current_test = "connections_idle_ms_0";
    c = turns_on_connections(2, 1, "\"keep_alive\": {\"idle_ms\": 0}", sizeof c);
    CHECK(c.opened == 2 && c.reused == 0);
    CHECK(request_count() == 2);

    /* A caller built against a header whose struct ends before `reused`. */
    current_test = "connections_sized";
    c = turns_on_connections(2, 1, NULL, (uint32_t)offsetof(PantoConnections, reused));
    CHECK(c.opened == 1 && untouched(&c, offsetof(PantoConnections, reused), sizeof c, 0x5A));

    current_test = "connections_bad_arguments";
    CHECK_RC(panto_agent_connections(NULL, &c), PANTO_ERR_INVALID_ARGUMENT);
    CHECK_RC(agent_new("{\"provider\": \"anthropic\", \"model\": \"m\", \"api_key\": \"k\"}", &agent), PANTO_OK);
    CHECK_RC(panto_agent_connections(agent, NULL), PANTO_ERR_INVALID_ARGUMENT);
    panto_agent_free(agent);
    agent = NULL;
    CHECK_RC(agent_new("{\"provider\": \"anthropic\", \"model\": \"m\", \"keep_alive\": {\"idle_ms\": -1}}", &agent), PANTO_ERR_CONFIG);
    check_agent_error(agent, PANTO_ERR_CONFIG, "keep_alive.idle_ms must be an integer from 0 to 86400000");
    CHECK_RC(panto_agent_connections(agent, &c), PANTO_ERR_INVALID_ARGUMENT);
    panto_agent_free(agent);
}

/* panto_agent_settings: the settings held, never the key; after a switch, its own; a config
 * refused leaves them; the bad arguments. */
static void test_settings(void) {
    PantoAgent *agent = NULL;
    PantoString s = {0};
    current_test = "settings";
    CHECK_RC(agent_new("{\"provider\": \"anthropic\", \"model\": \"m\", \"api_key\": \"sk-secret\", "
                       "\"base_url\": \"http://127.0.0.1:9\", \"thinking\": \"high\"}", &agent), PANTO_OK);
    CHECK_RC(panto_agent_settings(agent, &s), PANTO_OK);
    CHECK(pstr_eq(s, "{\"provider\":\"anthropic\",\"model\":\"m\",\"base_url\":\"http://127.0.0.1:9\","
                     "\"system\":null,\"max_tokens\":4096,\"thinking\":\"high\",\"max_tool_iterations\":10,"
                     "\"capabilities\":[],\"budget\":{\"output_tokens\":null,\"tool_rounds\":null,"
                     "\"wall_ms\":null,\"cost_usd\":null}}"));
    CHECK(count_in(s, "sk-secret") == 0);
    CHECK_RC(panto_agent_set_config(agent, panto_cstr("{\"provider\": \"openai\", \"model\": \"g\", "
                                                      "\"base_url\": \"http://127.0.0.1:8/v1\"}")), PANTO_OK);
    CHECK_RC(panto_agent_settings(agent, &s), PANTO_OK);
    CHECK(count_in(s, "\"provider\":\"openai\",\"model\":\"g\",\"base_url\":\"http://127.0.0.1:8/v1\"") == 1);
    CHECK_RC(panto_agent_set_config(agent, panto_cstr("{\"max_tokens\": 0}")), PANTO_ERR_CONFIG);
    CHECK_RC(panto_agent_settings(agent, &s), PANTO_OK);
    CHECK(count_in(s, "\"max_tokens\":4096") == 1);
    CHECK_RC(panto_agent_settings(agent, NULL), PANTO_ERR_INVALID_ARGUMENT);
    CHECK_RC(panto_agent_settings(NULL, &s), PANTO_ERR_INVALID_ARGUMENT);
    panto_agent_free(agent);
}

/* panto_model_info: a listed model and a dated name of it, an unknown one is "null", snprintf's
 * shape when buf is short; panto_agent_model_info: model_info over the catalog's entry. */
/* panto_agent_count_tokens: the provider's count (the request is the turn's prompt, nothing
 * appended), a provider's error as its code with its detail in panto_agent_error, BUSY while a
 * stream is unfinished, and the estimate of a provider without a counting endpoint. */
static void test_count_tokens(void) {
    static const struct canned answers[] = {
        {200, "application/json", "{\"input_tokens\":17}", NULL, 0},
        {401, "application/json", BODY_401, NULL, 0},
        {200, "text/event-stream", SSE_OK, NULL, 0},
    };
    char url[64];
    PantoAgent *agent;
    PantoStream *stream = NULL;
    PantoInput input = PANTO_INPUT_INIT;
    PantoTokenCount count = PANTO_TOKEN_COUNT_INIT;
    PantoError err = PANTO_ERROR_INIT;
    PantoString conv = {0};
    current_test = "count_tokens";
    agent = serve_and_connect(answers, 3, url, sizeof url);
    if (!agent) return;
    input.text = panto_cstr("How many?");
    CHECK_RC(panto_agent_count_tokens(agent, &input, &count), PANTO_OK);
    CHECK(count.input_tokens == 17 && count.estimated == 0);
    CHECK_RC(panto_agent_conversation(agent, &conv), PANTO_OK);
    CHECK(pstr_eq(conv, "[]"));
    CHECK_RC(panto_agent_count_tokens(agent, NULL, &count), PANTO_ERR_AUTHENTICATION);
    CHECK_RC(panto_agent_error(agent, &err), PANTO_ERR_AUTHENTICATION);
    CHECK(err.http_status == 401 && pstr_eq(err.type, "authentication_error") && pstr_eq(err.message, "invalid x-api-key"));
    CHECK_RC(run_text(agent, "Hello", &stream), PANTO_OK);
    CHECK_RC(panto_agent_count_tokens(agent, &input, &count), PANTO_ERR_BUSY);
    CHECK_RC(drain(stream), PANTO_DONE);
    panto_stream_free(stream);
    CHECK_RC(panto_agent_count_tokens(agent, &input, NULL), PANTO_ERR_INVALID_ARGUMENT);
    count.size = 4;
    CHECK_RC(panto_agent_count_tokens(agent, &input, &count), PANTO_ERR_INVALID_ARGUMENT);
    panto_agent_free(agent);
    stop_server();
    CHECK(request_count() == 3);
    CHECK(requests && strstr(requests, "\"text\":\"How many?\"") != NULL);
    CHECK(requests && strncmp(requests, "{\"model\":\"claude-test\",\"messages\":", 34) == 0); /* no max_tokens, no stream */

    CHECK_RC(agent_new("{\"provider\": \"openai\", \"model\": \"gpt-4o\", \"api_key\": \"k\"}", &agent), PANTO_OK);
    count = (PantoTokenCount)PANTO_TOKEN_COUNT_INIT;
    CHECK_RC(panto_agent_count_tokens(agent, &input, &count), PANTO_OK);
    CHECK(count.estimated == 1 && count.input_tokens > 0);
    panto_agent_free(agent);
}

static void test_list_models(void) {
    static const struct canned answers[] = {
        {200, "application/json", "{\"data\":[{\"id\":\"claude-sonnet-4-5-20250929\",\"display_name\":\"Claude Sonnet 4.5\"}],\"has_more\":true,\"last_id\":\"claude-sonnet-4-5-20250929\"}", NULL, 0},
        {200, "application/json", "{\"data\":[{\"id\":\"claude-unknown\"}],\"has_more\":false}", NULL, 0},
        {401, "application/json", BODY_401, NULL, 0},
    };
    char url[64];
    PantoAgent *agent;
    PantoString list = {0};
    PantoError err = PANTO_ERROR_INIT;
    current_test = "list_models";
    agent = serve_and_connect(answers, 3, url, sizeof url);
    if (!agent) return;
    CHECK_RC(panto_agent_list_models(agent, &list), PANTO_OK);
    CHECK(list.len > 0 && list.ptr[0] == '[');
    CHECK(pstr_contains(list, "{\"id\":\"claude-sonnet-4-5-20250929\",\"display_name\":\"Claude Sonnet 4.5\",\"model_info\":{\"name\":\"claude-sonnet-4-5-20250929\""));
    CHECK(pstr_contains(list, "{\"id\":\"claude-unknown\",\"model_info\":null}]"));
    CHECK_RC(panto_agent_list_models(agent, &list), PANTO_ERR_AUTHENTICATION);
    CHECK_RC(panto_agent_error(agent, &err), PANTO_ERR_AUTHENTICATION);
    CHECK(err.http_status == 401 && pstr_eq(err.type, "authentication_error"));
    CHECK_RC(panto_agent_list_models(agent, NULL), PANTO_ERR_INVALID_ARGUMENT);
    panto_agent_free(agent);
    stop_server();
    CHECK(request_count() == 3);
}

static void test_model_info(void) {
    char buf[2048];
    char small[8];
    size_t n = 0, n2 = 0;
    PantoAgent *agent = NULL;
    PantoString s = {0};
    current_test = "model_info";
    CHECK_RC(panto_model_info(panto_cstr("anthropic"), panto_cstr("claude-sonnet-4-5-20990101"), buf, sizeof buf, &n), PANTO_OK);
    CHECK(n > 0 && n <= sizeof buf);
    PantoString got = {buf, n};
    CHECK(count_in(got, "{\"name\":\"claude-sonnet-4-5\",\"max_input_tokens\":") == 1);
    CHECK(count_in(got, "\"catalog\":\"litellm ") == 1);
    memset(small, 'x', sizeof small);
    CHECK_RC(panto_model_info(panto_cstr("anthropic"), panto_cstr("claude-sonnet-4-5"), small, sizeof small, &n2), PANTO_OK);
    CHECK(n2 == n && memcmp(small, buf, sizeof small) == 0);
    CHECK_RC(panto_model_info(panto_cstr("anthropic"), panto_cstr("claude-sonnet-4-5"), NULL, 0, &n2), PANTO_OK);
    CHECK(n2 == n);
    CHECK_RC(panto_model_info(panto_cstr("anthropic"), panto_cstr("no-such-model"), buf, sizeof buf, &n), PANTO_OK);
    CHECK(n == 4 && memcmp(buf, "null", 4) == 0);
    CHECK_RC(panto_model_info(panto_cstr("no-such-provider"), panto_cstr("gpt-4o"), buf, sizeof buf, &n), PANTO_OK);
    CHECK(n == 4 && memcmp(buf, "null", 4) == 0);
    CHECK_RC(panto_model_info(panto_cstr("openai"), panto_cstr("gpt-4o"), buf, sizeof buf, NULL), PANTO_ERR_INVALID_ARGUMENT);
    CHECK_RC(panto_model_info(panto_cstr("openai"), panto_cstr("gpt-4o"), NULL, 4, &n), PANTO_ERR_INVALID_ARGUMENT);
    CHECK_RC(panto_model_info((PantoString){NULL, 3}, panto_cstr("gpt-4o"), buf, sizeof buf, &n), PANTO_ERR_INVALID_ARGUMENT);

    CHECK_RC(agent_new("{\"provider\": \"openai\", \"model\": \"mine\", \"api_key\": \"k\"}", &agent), PANTO_OK);
    CHECK_RC(panto_agent_model_info(agent, &s), PANTO_OK);
    CHECK(pstr_eq(s, "null"));
    CHECK_RC(panto_agent_set_config(agent, panto_cstr("{\"model_info\": {\"max_output_tokens\": 100}}")), PANTO_OK);
    CHECK_RC(panto_agent_model_info(agent, &s), PANTO_OK);
    CHECK(pstr_eq(s, "{\"name\":\"mine\",\"max_output_tokens\":100,\"price\":{},\"abilities\":{\"tools\":false,"
                     "\"images\":false,\"pdfs\":false,\"thinking\":false,\"structured_output\":false,\"caching\":false},"
                     "\"catalog\":null}"));
    CHECK_RC(panto_agent_set_config(agent, panto_cstr("{\"model\": \"gpt-4o\"}")), PANTO_OK);
    CHECK_RC(panto_agent_model_info(agent, &s), PANTO_OK);
    CHECK(count_in(s, "\"max_output_tokens\":100,") == 1);
    CHECK(count_in(s, "\"catalog\":\"litellm ") == 1);
    CHECK_RC(panto_agent_model_info(agent, NULL), PANTO_ERR_INVALID_ARGUMENT);
    CHECK_RC(panto_agent_model_info(NULL, &s), PANTO_ERR_INVALID_ARGUMENT);
    panto_agent_free(agent);
}

static void test_set_config(void) {
    static const struct canned answers[] = {
        {200, "text/event-stream", SSE_OK, NULL, 0},
        {200, "text/event-stream", SSE_OK, NULL, 0},
        {200, "text/event-stream", SSE_OK, NULL, 0},
    };
    char url[64];
    PantoAgent *agent;
    PantoStream *stream = NULL;
    PantoString body;

    current_test = "set_config";
    agent = serve_and_connect(answers, 3, url, sizeof url);
    if (!agent) return;
    /* Applied to the next request. */
    CHECK_RC(set_config(agent, "{\"max_tokens\": 30000}"), PANTO_OK);
    CHECK_RC(panto_agent_error(agent, NULL), 0);
    CHECK_RC(set_config(agent, "{}"), PANTO_OK);
    CHECK_RC(run_text(agent, "one", &stream), PANTO_OK);
    CHECK_RC(drain(stream), PANTO_DONE);
    panto_stream_free(stream);
    stream = NULL;

    CHECK_RC(set_config(agent, "{\"thinking\": \"low\", \"model\": \"claude-other\"}"), PANTO_OK);
    /* Refused: nothing changes, not even the valid keys of the same call. */
    current_test = "set_config_refused";
    CHECK_RC(set_config(agent, "{\"max_tokens\": 12345, \"thinking\": \"bogus\"}"), PANTO_ERR_CONFIG);
    check_agent_error(agent, PANTO_ERR_CONFIG, "thinking");
    CHECK_RC(set_config(agent, "{\"model\": \"claude-third\", \"colour\": 1}"), PANTO_ERR_CONFIG);
    check_agent_error(agent, PANTO_ERR_CONFIG, "colour");
    CHECK_RC(set_config(agent, "{\"tools\": []}"), PANTO_ERR_CONFIG);
    check_agent_error(agent, PANTO_ERR_CONFIG, "tools");
    CHECK_RC(set_config(agent, "{\"retry\": {\"max_retries\": -1}}"), PANTO_ERR_CONFIG);
    CHECK_RC(set_config(agent, "{\"timeouts\": {\"idle_ms\": \"soon\"}}"), PANTO_ERR_CONFIG);
    CHECK_RC(set_config(agent, "{\"provider\": \"nope\"}"), PANTO_ERR_CONFIG);
    CHECK_RC(set_config(agent, "{\"model\": 5}"), PANTO_ERR_CONFIG);
    CHECK_RC(set_config(agent, "[\"model\", \"x\"]"), PANTO_ERR_CONFIG);
    CHECK_RC(set_config(agent, "{\"model\": \"x\""), PANTO_ERR_CONFIG);
    CHECK_RC(set_config(agent, "not json"), PANTO_ERR_CONFIG);

    /* Busy while a stream of the agent is unfinished; fine again once it is done. */
    current_test = "set_config_busy";
    CHECK_RC(run_text(agent, "two", &stream), PANTO_OK);
    CHECK_RC(set_config(agent, "{\"max_tokens\": 999}"), PANTO_ERR_BUSY);
    check_agent_error(agent, PANTO_ERR_BUSY, NULL);
    CHECK_RC(drain(stream), PANTO_DONE);
    CHECK_RC(set_config(agent, "{\"thinking\": \"off\"}"), PANTO_OK); /* done, not freed */
    panto_stream_free(stream);
    stream = NULL;
    CHECK_RC(run_text(agent, "three", &stream), PANTO_OK);
    CHECK_RC(drain(stream), PANTO_DONE);
    panto_stream_free(stream);
    panto_agent_free(agent);
    stop_server();

    current_test = "set_config_requests";
    CHECK(request_count() == 3);
    body = request_body(0);
    CHECK(count_in(body, "\"max_tokens\":30000") == 1 && count_in(body, "\"thinking\"") == 0);
    CHECK(count_in(body, "\"model\":\"claude-test\"") == 1);
    body = request_body(1);
    CHECK(count_in(body, "\"max_tokens\":30000") == 1 && count_in(body, "\"budget_tokens\":2048") == 1);
    CHECK(count_in(body, "\"model\":\"claude-other\"") == 1);
    CHECK(count_in(body, "12345") == 0 && count_in(body, "999") == 0 && count_in(body, "claude-third") == 0);
    body = request_body(2);
    CHECK(count_in(body, "\"thinking\"") == 0 && count_in(body, "\"model\":\"claude-other\"") == 1);
}

/* A thread that calls panto_stream_cancel after a delay. */
struct canceler {
    pthread_t thread;
    PantoStream *stream;
    long delay_ms;
    int free; /* 1: panto_stream_free rather than panto_stream_cancel */
    int rc;
};

static void *canceler_main(void *arg) {
    struct canceler *c = (struct canceler *)arg;
    struct timespec ts;
    ts.tv_sec = c->delay_ms / 1000;
    ts.tv_nsec = (c->delay_ms % 1000) * 1000000L;
    nanosleep(&ts, NULL);
    if (c->free) {
        panto_stream_free(c->stream);
        c->rc = PANTO_OK;
    } else {
        c->rc = panto_stream_cancel(c->stream);
    }
    return NULL;
}

/* Calls panto_next_event while another thread cancels after delay_ms; returns its status and
 * sets *elapsed to how long it blocked. */
static int next_canceled_after(PantoStream *stream, long delay_ms, double *elapsed) {
    struct canceler c;
    PantoEvent ev = PANTO_EVENT_INIT;
    double t0;
    int rc;
    c.stream = stream;
    c.delay_ms = delay_ms;
    c.free = 0;
    c.rc = -999;
    if (pthread_create(&c.thread, NULL, canceler_main, &c) != 0) {
        CHECK(!"pthread_create");
        return 0;
    }
    t0 = now_s();
    rc = panto_next_event(stream, &ev);
    *elapsed = now_s() - t0;
    pthread_join(c.thread, NULL);
    CHECK_RC(c.rc, PANTO_OK);
    return rc;
}

static void test_cancel(void) {
    static const struct canned answers[] = {
        {200, "text/event-stream", SSE_STALLED, NULL, sizeof SSE_PARTIAL_PREFIX - 1},
        {200, "text/event-stream", SSE_OK, NULL, 0},
    };
    char url[64];
    PantoAgent *agent;
    PantoStream *stream = NULL, *next = NULL;
    PantoEvent ev = PANTO_EVENT_INIT;
    PantoError err = PANTO_ERROR_INIT;
    PantoString conv = {NULL, 0}, body;
    double elapsed = 0;
    int rc;

    current_test = "cancel";
    agent = serve_and_connect(answers, 2, url, sizeof url);
    if (!agent) return;
    CHECK_RC(run_text(agent, "Hello", &stream), PANTO_OK);
    CHECK_RC(panto_next_event(stream, &ev), PANTO_EVENT);
    CHECK(ev.kind == PANTO_EVENT_MESSAGE_START);
    CHECK_RC(panto_next_event(stream, &ev), PANTO_EVENT);
    CHECK(ev.kind == PANTO_EVENT_BLOCK_START);
    CHECK_RC(panto_next_event(stream, &ev), PANTO_EVENT);
    CHECK(ev.kind == PANTO_EVENT_CONTENT_DELTA && pstr_eq(ev.text, "Partial "));
    /* The server now holds the connection: the next call blocks until the cancel. */
    rc = next_canceled_after(stream, 200, &elapsed);
    CHECK_RC(rc, PANTO_ERR_CANCELED);
    CHECK(elapsed >= 0.15);
    if (elapsed >= 2.0) printf("    the cancel took %.2f s\n", elapsed);
    CHECK(elapsed < 2.0); /* promptly, not at a timeout */
    CHECK_RC(panto_next_event(stream, &ev), PANTO_ERR_CANCELED);
    CHECK_RC(panto_stream_error(stream, &err), PANTO_ERR_CANCELED);
    CHECK(err.http_status == 0 && pstr_eq(err.type, "canceled_error") && err.message.len > 0);
    CHECK_RC(panto_stream_cancel(stream), PANTO_OK); /* twice: harmless */
    CHECK_RC(panto_next_event(stream, &ev), PANTO_ERR_CANCELED);

    /* The partial message stays, aborted; the agent runs the next turn, which sends it. */
    CHECK_RC(panto_agent_conversation(agent, &conv), PANTO_OK);
    CHECK(count_in(conv, "Partial ") == 1 && count_in(conv, "\"aborted\"") == 1);
    CHECK(count_in(conv, "\"assistant\"") == 1);
    CHECK_RC(run_text(agent, "Again", &next), PANTO_OK); /* not busy */
    CHECK_RC(drain(next), PANTO_DONE);
    CHECK_RC(panto_stream_cancel(next), PANTO_OK); /* a finished stream: harmless */
    CHECK_RC(panto_next_event(next, &ev), PANTO_DONE);
    panto_stream_free(next);
    panto_stream_free(stream);
    stream = NULL;

    /* Canceled before its first call: nothing is sent. */
    current_test = "cancel_before_next";
    CHECK_RC(run_text(agent, "Third", &stream), PANTO_OK);
    CHECK_RC(panto_stream_cancel(stream), PANTO_OK);
    CHECK_RC(panto_next_event(stream, &ev), PANTO_ERR_CANCELED);
    panto_stream_free(stream);
    panto_agent_free(agent);
    stop_server();

    current_test = "cancel_requests";
    CHECK(request_count() == 2);
    body = request_body(1);
    CHECK(count_in(body, "Hello") == 1 && count_in(body, "Partial ") == 1 && count_in(body, "Again") == 1);
}

/* A cancel while next() sleeps before a retry (Retry-After of 5 s) ends it at once. */
static void test_cancel_retry_wait(void) {
    static const struct canned answers[] = {
        {429, "application/json", BODY_429, "retry-after-ms: 5000\r\n", 0},
    };
    char url[64];
    PantoAgent *agent;
    PantoStream *stream = NULL;
    PantoEvent ev = PANTO_EVENT_INIT;
    double elapsed = 0;

    current_test = "cancel_retry_wait";
    agent = serve_and_connect(answers, 1, url, sizeof url);
    if (!agent) return;
    CHECK_RC(run_text(agent, "Hello", &stream), PANTO_OK);
    CHECK_RC(panto_next_event(stream, &ev), PANTO_EVENT);
    CHECK(ev.kind == PANTO_EVENT_PROVIDER_RETRY && ev.delay_ms == 5000 && ev.http_status == 429);
    CHECK_RC(next_canceled_after(stream, 100, &elapsed), PANTO_ERR_CANCELED);
    CHECK(elapsed < 2.0);
    panto_stream_free(stream);
    panto_agent_free(agent);
    stop_server();
    CHECK(request_count() == 1);
}

static void test_reopen(void) {
    static const struct canned answers[] = {
        {400, "application/json", BODY_400, NULL, 0},
        {200, "text/event-stream", SSE_OK, NULL, 0},
        {200, "text/event-stream", SSE_ERROR_AFTER_DELTA, NULL, 0},
        {400, "application/json", BODY_400, NULL, 0},
    };
    char url[64];
    PantoAgent *agent;
    PantoStream *stream = NULL, *other = NULL;
    PantoEvent ev = PANTO_EVENT_INIT;
    PantoError err = PANTO_ERROR_INIT;
    PantoString conv = {NULL, 0}, body;

    current_test = "reopen";
    if (start_server(answers, 4, url, sizeof url) < 0) {
        CHECK(!"cannot start the canned server");
        return;
    }
    agent = new_agent_with(url, "\"thinking\": \"high\"");
    CHECK(agent != NULL);
    if (!agent) {
        stop_server();
        return;
    }
    CHECK_RC(run_text(agent, "Hello", &stream), PANTO_OK);
    CHECK_RC(panto_stream_reopen(stream), PANTO_ERR_STATE); /* not started */
    CHECK_RC(panto_next_event(stream, &ev), PANTO_ERR_INVALID_REQUEST);
    CHECK_RC(panto_stream_error(stream, &err), PANTO_ERR_INVALID_REQUEST);
    CHECK(err.http_status == 400 && pstr_eq(err.type, "invalid_request_error"));
    CHECK_RC(set_config(agent, "{\"thinking\": \"off\"}"), PANTO_OK); /* failed: not busy */
    CHECK_RC(panto_stream_reopen(stream), PANTO_OK);
    CHECK_RC(panto_stream_error(stream, NULL), 0);
    CHECK_RC(panto_stream_reopen(stream), PANTO_ERR_STATE); /* no longer failed */
    CHECK_RC(run_text(agent, "Other", &other), PANTO_ERR_BUSY); /* running again */
    CHECK_RC(panto_next_event(stream, &ev), PANTO_EVENT);
    CHECK(ev.kind == PANTO_EVENT_MESSAGE_START && pstr_eq(ev.id, "msg_test_1"));
    CHECK_RC(drain(stream), PANTO_DONE);
    CHECK_RC(panto_stream_reopen(stream), PANTO_ERR_STATE); /* done */
    panto_stream_free(stream);
    stream = NULL;
    CHECK_RC(panto_agent_conversation(agent, &conv), PANTO_OK);
    CHECK(count_in(conv, "Hello") == 1 && count_in(conv, "Hi there") == 1);
    CHECK(count_in(conv, "\"user\"") == 1 && count_in(conv, "\"assistant\"") == 1);

    /* A failure after content is not at the provider-open boundary. */
    current_test = "reopen_after_content";
    CHECK_RC(run_text(agent, "Second", &stream), PANTO_OK);
    CHECK_RC(drain(stream), PANTO_ERR_OVERLOADED);
    CHECK_RC(panto_stream_reopen(stream), PANTO_ERR_STATE);
    CHECK_RC(panto_next_event(stream, &ev), PANTO_ERR_OVERLOADED); /* still failed */
    panto_stream_free(stream);
    stream = NULL;

    /* Busy: another stream of the agent is unfinished. */
    current_test = "reopen_busy";
    CHECK_RC(run_text(agent, "Third", &stream), PANTO_OK);
    CHECK_RC(panto_next_event(stream, &ev), PANTO_ERR_INVALID_REQUEST);
    CHECK_RC(run_text(agent, "Fourth", &other), PANTO_OK);
    CHECK_RC(panto_stream_reopen(stream), PANTO_ERR_BUSY);
    CHECK_RC(panto_next_event(stream, &ev), PANTO_ERR_INVALID_REQUEST);
    panto_stream_free(other);
    panto_stream_free(stream);
    panto_agent_free(agent);
    stop_server();

    current_test = "reopen_requests";
    CHECK(request_count() == 4);
    body = request_body(0);
    CHECK(count_in(body, "\"budget_tokens\":16384") == 1 && count_in(body, "Hello") == 1);
    body = request_body(1);
    CHECK(count_in(body, "\"thinking\"") == 0 && count_in(body, "Hello") == 1);
    CHECK(count_in(body, "\"role\":\"user\"") == 1);
}

/* A redacted thinking block: BLOCK_START and BLOCK_COMPLETE (the opaque data) of kind
 * REDACTED_THINKING, no deltas; the next request sends it back as it came. */
static void test_redacted_thinking(void) {
    static const struct canned answers[] = {
        {200, "text/event-stream", SSE_REDACTED, NULL, 0},
        {200, "text/event-stream", SSE_OK, NULL, 0},
    };
    char url[64];
    PantoAgent *agent;
    PantoStream *stream = NULL;
    PantoEvent ev = PANTO_EVENT_INIT;
    int rc, starts = 0, completes = 0, deltas0 = 0;

    current_test = "redacted_thinking";
    if (start_server(answers, 2, url, sizeof url) < 0) {
        CHECK(!"cannot start the canned server");
        return;
    }
    agent = new_agent_with(url, "\"thinking\": \"medium\"");
    CHECK(agent != NULL);
    if (!agent) {
        stop_server();
        return;
    }
    CHECK_RC(run_text(agent, "Hello", &stream), PANTO_OK);
    while ((rc = panto_next_event(stream, &ev)) == PANTO_EVENT) {
        if (ev.index != 0) continue;
        if (ev.kind == PANTO_EVENT_BLOCK_START) {
            starts++;
            CHECK(ev.block_kind == PANTO_BLOCK_REDACTED_THINKING);
        } else if (ev.kind == PANTO_EVENT_CONTENT_DELTA) {
            deltas0++;
        } else if (ev.kind == PANTO_EVENT_BLOCK_COMPLETE) {
            completes++;
            CHECK(ev.block_kind == PANTO_BLOCK_REDACTED_THINKING);
            CHECK(pstr_eq(ev.text, "EqkECkYIBxgC+opaque/data=="));
        }
    }
    CHECK_RC(rc, PANTO_DONE);
    CHECK(starts == 1 && completes == 1 && deltas0 == 0);
    panto_stream_free(stream);
    stream = NULL;
    CHECK_RC(run_text(agent, "Again", &stream), PANTO_OK);
    CHECK_RC(drain(stream), PANTO_DONE);
    panto_stream_free(stream);
    panto_agent_free(agent);
    stop_server();
    CHECK(request_count() == 2);
    CHECK(count_in(request_body(1),
                   "{\"type\":\"redacted_thinking\",\"data\":\"EqkECkYIBxgC+opaque/data==\"}") == 1);
}

/* ---- Batches: panto_next_events, panto_stream_unread --------------------------------- */

/* Whether a string of a batch lies in its string block, followed by a NUL. */
static int in_block(PantoString s, PantoString block) {
    if (s.ptr == NULL) return s.len == 0;
    return s.ptr >= block.ptr && s.ptr + s.len < block.ptr + block.len && s.ptr[s.len] == 0;
}

/* Whether an event kind may follow the first event of a batch: what continues a message. */
static int continues_message(int kind) {
    return kind == PANTO_EVENT_BLOCK_START || kind == PANTO_EVENT_CONTENT_DELTA ||
           kind == PANTO_EVENT_BLOCK_COMPLETE || kind == PANTO_EVENT_TOOL_DETAILS;
}

/* Starts the canned server with `answers` and makes an agent for it (`extra`: more config);
 * NULL when either fails (checked as a failure; the server is stopped). */
static PantoAgent *serve(const struct canned *answers, int n, const char *extra) {
    char url[64];
    PantoAgent *agent;
    if (start_server(answers, n, url, sizeof url) < 0) {
        CHECK(!"cannot start the canned server");
        return NULL;
    }
    agent = new_agent_with(url, extra);
    CHECK(agent != NULL);
    if (!agent) stop_server();
    return agent;
}

/* The arguments refused, each with *out_count set to 0 and nothing read. */
static void test_batch_arguments(void) {
    PantoAgent *agent;
    PantoStream *stream = NULL;
    PantoEvent evs[4] = {PANTO_EVENT_INIT};
    PantoString block = {"x", 1};
    size_t n = 99;

    current_test = "batch_arguments";
    CHECK_RC(panto_next_events(NULL, evs, 4, &n, &block), PANTO_ERR_INVALID_ARGUMENT);
    CHECK(n == 0 && block.len == 0);
    CHECK_RC(panto_stream_unread(NULL, 0), PANTO_ERR_INVALID_ARGUMENT);
    agent = new_agent_with("http://127.0.0.1:1", "\"retry\": {\"max_retries\": 0}");
    CHECK(agent != NULL);
    if (!agent) return;
    CHECK_RC(run_text(agent, "hi", &stream), PANTO_OK);
    n = 99;
    CHECK_RC(panto_next_events(stream, NULL, 4, &n, NULL), PANTO_ERR_INVALID_ARGUMENT);
    CHECK(n == 0);
    CHECK_RC(panto_next_events(stream, evs, 4, NULL, NULL), PANTO_ERR_INVALID_ARGUMENT);
    n = 99;
    CHECK_RC(panto_next_events(stream, evs, 0, &n, NULL), PANTO_ERR_INVALID_ARGUMENT);
    CHECK(n == 0);
    evs[0].size = 4; /* smaller than the fields every caller has */
    CHECK_RC(panto_next_events(stream, evs, 4, &n, NULL), PANTO_ERR_INVALID_ARGUMENT);
    evs[0].size = (uint32_t)sizeof(PantoEvent) - 4; /* not a multiple of the alignment */
    CHECK_RC(panto_next_events(stream, evs, 4, &n, NULL), PANTO_ERR_INVALID_ARGUMENT);
    /* Nothing was given: nothing can be given back. */
    CHECK_RC(panto_stream_unread(stream, 0), PANTO_OK);
    CHECK_RC(panto_stream_unread(stream, 1), PANTO_ERR_INVALID_ARGUMENT);
    /* None of this read anything: the stream still fails as it would (no server there). */
    evs[0].size = (uint32_t)sizeof(PantoEvent);
    CHECK_RC(panto_next_events(stream, evs, 4, &n, NULL), PANTO_ERR_CONNECTION);
    CHECK(n == 0);
    CHECK_RC(panto_next_events(stream, evs, 4, &n, NULL), PANTO_ERR_CONNECTION); /* sticky */
    panto_stream_free(stream);
    panto_agent_free(agent);
}

/* Reads a turn in batches with elements of `ev_size` bytes (an older, shorter PantoEvent
 * when smaller), checking each batch; fills kinds[] (up to 32) and returns how many events
 * came, or -1 when a check of the batch's shape failed. *largest: the largest batch. */
static int read_batches(PantoStream *stream, size_t ev_size, size_t capacity, int *kinds, size_t *largest,
                        int *final_rc) {
    static unsigned char buf[64 * sizeof(PantoEvent) + 64];
    PantoString block;
    size_t count = 0, i, total = 0;
    int rc, ok = 1;
    *largest = 0;
    for (;;) {
        memset(buf, 0x5A, sizeof buf);
        ((PantoEvent *)(void *)buf)->size = (uint32_t)ev_size;
        rc = panto_next_events(stream, (PantoEvent *)(void *)buf, capacity, &count, &block);
        if (rc != PANTO_EVENT) break;
        ok &= count >= 1 && count <= capacity;
        /* Only the `count` elements were written. */
        ok &= untouched(buf, count * ev_size, sizeof buf, 0x5A);
        if (count > *largest) *largest = count;
        for (i = 0; i < count; i++) {
            const PantoEvent *ev = (const PantoEvent *)(void *)(buf + i * ev_size);
            ok &= ev->size == (uint32_t)ev_size;
            ok &= in_block(ev->text, block);
            if (ev_size == sizeof(PantoEvent))
                ok &= in_block(ev->id, block) && in_block(ev->model, block) && in_block(ev->name, block) &&
                      in_block(ev->provider_stop_reason, block);
            if (i > 0) ok &= continues_message(ev->kind);
            if (total < 32) kinds[total] = ev->kind;
            total++;
        }
    }
    CHECK_RC(count, 0);
    *final_rc = rc;
    return ok ? (int)total : -1;
}

/* Whole turns in batches: the events of panto_next_event, in batches that hold only the
 * message's content after their first event; MESSAGE_END and MESSAGE_COMPLETE alone; DONE
 * after, sticky; strings in the string block; an older, shorter element as the stride; a
 * capacity of 1 reads as panto_next_event does. */
static void test_batch_turns(void) {
    static const struct canned answers[] = {
        {200, "text/event-stream", SSE_OK, NULL, 0},
        {200, "text/event-stream", SSE_OK, NULL, 0},
        {200, "text/event-stream", SSE_OK, NULL, 0},
    };
    static const int want[] = {PANTO_EVENT_MESSAGE_START,  PANTO_EVENT_BLOCK_START,
                               PANTO_EVENT_CONTENT_DELTA,  PANTO_EVENT_CONTENT_DELTA,
                               PANTO_EVENT_BLOCK_COMPLETE, PANTO_EVENT_MESSAGE_END,
                               PANTO_EVENT_MESSAGE_COMPLETE};
    const size_t sizes[3] = {sizeof(PantoEvent), offsetof(PantoEvent, stop_reason), sizeof(PantoEvent)};
    const size_t capacities[3] = {64, 64, 1};
    PantoAgent *agent;
    PantoEvent ev = PANTO_EVENT_INIT;
    PantoString conv = {NULL, 0};
    int t;

    current_test = "batch_turns";
    if (!(agent = serve(answers, 3, NULL))) return;
    for (t = 0; t < 3; t++) {
        PantoStream *stream = NULL;
        int kinds[32], rc, n;
        size_t largest;
        CHECK_RC(run_text(agent, "Hello", &stream), PANTO_OK);
        n = read_batches(stream, sizes[t], capacities[t], kinds, &largest, &rc);
        CHECK_RC(rc, PANTO_DONE);
        CHECK(n == 7 && memcmp(kinds, want, sizeof want) == 0);
        if (capacities[t] == 1) CHECK(largest == 1);
        /* The whole body arrived in one write: the message's content came in one batch. */
        if (capacities[t] > 1) CHECK(largest >= 3);
        CHECK_RC(panto_next_events(stream, &ev, 1, (size_t[]){0}, NULL), PANTO_DONE);
        CHECK_RC(panto_next_event(stream, &ev), PANTO_DONE);
        panto_stream_free(stream);
    }
    CHECK_RC(panto_agent_conversation(agent, &conv), PANTO_OK);
    CHECK(count_in(conv, "\"assistant\"") == 3 && count_in(conv, "Hi there") == 3);
    panto_agent_free(agent);
    stop_server();
}

/* Events given back come again (batch or single), strings unchanged; what ends a message
 * cannot be given back; a cancel after giving back keeps only what was seen. */
static void test_batch_unread(void) {
    static const char *rest_at = "event: content_block_stop";
    static struct canned answers[] = {
        {200, "text/event-stream", SSE_STALLED, NULL, 0},
        {200, "text/event-stream", SSE_OK, NULL, 0},
    };
    PantoAgent *agent;
    PantoStream *stream = NULL;
    PantoEvent evs[16] = {PANTO_EVENT_INIT}, ev = PANTO_EVENT_INIT;
    PantoString block, conv = {NULL, 0};
    size_t n = 0, i;
    int rc, found = 0, replayed = 0;
    const char *rest_ptr = NULL;

    current_test = "batch_unread";
    /* The stream stalls after the deltas "Partial " and "rest". */
    answers[0].stall_after = (size_t)(strstr(SSE_STALLED, rest_at) - SSE_STALLED);
    if (!(agent = serve(answers, 2, NULL))) return;
    CHECK_RC(run_text(agent, "Hello", &stream), PANTO_OK);
    /* Read until the batch holding "rest" (its last event: the stream stalls after it). */
    while (!found && (rc = panto_next_events(stream, evs, 16, &n, &block)) == PANTO_EVENT) {
        if (evs[0].kind == PANTO_EVENT_MESSAGE_START && !replayed) {
            /* A batch that begins the message is given back whole, and comes again whole. */
            size_t whole = n;
            if (n > 1) CHECK_RC(panto_stream_unread(stream, n - 1), PANTO_OK);
            CHECK_RC(panto_stream_unread(stream, 1), PANTO_OK);
            CHECK_RC(panto_next_events(stream, evs, 16, &n, &block), PANTO_EVENT);
            CHECK(n == whole && evs[0].kind == PANTO_EVENT_MESSAGE_START);
            replayed = 1;
        }
        for (i = 0; i < n; i++)
            if (evs[i].kind == PANTO_EVENT_CONTENT_DELTA && pstr_eq(evs[i].text, "rest")) found = 1;
    }
    CHECK(found && evs[n - 1].kind == PANTO_EVENT_CONTENT_DELTA && pstr_eq(evs[n - 1].text, "rest"));
    if (!found) {
        panto_stream_free(stream);
        panto_agent_free(agent);
        stop_server();
        return;
    }
    rest_ptr = evs[n - 1].text.ptr;
    CHECK_RC(panto_stream_unread(stream, n + 1), PANTO_ERR_INVALID_ARGUMENT); /* more than the batch */
    CHECK_RC(panto_stream_unread(stream, 1), PANTO_OK);
    CHECK_RC(panto_stream_unread(stream, n), PANTO_ERR_INVALID_ARGUMENT); /* 1 is given back already */
    /* It comes again, alone, with its string where it was; then once more one by one. */
    CHECK_RC(panto_next_events(stream, evs, 16, &n, &block), PANTO_EVENT);
    CHECK(n == 1 && evs[0].kind == PANTO_EVENT_CONTENT_DELTA && pstr_eq(evs[0].text, "rest") &&
          evs[0].text.ptr == rest_ptr && in_block(evs[0].text, block));
    CHECK_RC(panto_stream_unread(stream, 1), PANTO_OK);
    CHECK_RC(panto_next_event(stream, &ev), PANTO_EVENT);
    CHECK(ev.kind == PANTO_EVENT_CONTENT_DELTA && pstr_eq(ev.text, "rest"));
    /* Given back for good: the user never saw it. The canceled turn keeps "Partial " only. */
    CHECK_RC(panto_stream_unread(stream, 1), PANTO_OK);
    CHECK_RC(panto_stream_cancel(stream), PANTO_OK);
    CHECK_RC(panto_next_events(stream, evs, 16, &n, &block), PANTO_ERR_CANCELED);
    CHECK(n == 0);
    CHECK_RC(panto_next_event(stream, &ev), PANTO_ERR_CANCELED);
    CHECK_RC(panto_agent_conversation(agent, &conv), PANTO_OK);
    CHECK(count_in(conv, "\"aborted\"") == 1 && count_in(conv, "\"Partial \"") == 1 && count_in(conv, "rest") == 0);
    panto_stream_free(stream);

    /* MESSAGE_END and MESSAGE_COMPLETE cannot be given back. */
    stream = NULL;
    CHECK_RC(run_text(agent, "Again", &stream), PANTO_OK);
    while ((rc = panto_next_events(stream, evs, 16, &n, NULL)) == PANTO_EVENT) {
        if (evs[0].kind == PANTO_EVENT_MESSAGE_END || evs[0].kind == PANTO_EVENT_MESSAGE_COMPLETE) {
            CHECK(n == 1);
            CHECK_RC(panto_stream_unread(stream, 1), PANTO_ERR_INVALID_ARGUMENT);
        }
    }
    CHECK_RC(rc, PANTO_DONE);
    panto_stream_free(stream);
    panto_agent_free(agent);
    stop_server();
}

/* A failure after events: the events come first, the error with the next call (sticky); a
 * tool call awaiting its result ends its batch, and RESULT_PENDING (not sticky) comes with
 * nothing read. */
static void test_batch_error_and_tool(void) {
    static const struct canned answers[] = {
        {200, "text/event-stream", SSE_ERROR_AFTER_DELTA, NULL, 0},
        {200, "text/event-stream", SSE_TOOL, NULL, 0},
        {200, "text/event-stream", SSE_OK, NULL, 0},
    };
    PantoAgent *agent;
    PantoStream *stream = NULL;
    PantoEvent evs[16] = {PANTO_EVENT_INIT};
    PantoError err = PANTO_ERROR_INIT;
    size_t n = 0;
    int rc, deltas = 0, tool_starts = 0, results = 0;

    current_test = "batch_error_and_tool";
    if (!(agent = serve(answers, 3, "\"retry\": {\"max_retries\": 0}"))) return;
    CHECK_RC(run_text(agent, "Hello", &stream), PANTO_OK);
    while ((rc = panto_next_events(stream, evs, 16, &n, NULL)) == PANTO_EVENT) {
        size_t i;
        for (i = 0; i < n; i++) deltas += evs[i].kind == PANTO_EVENT_CONTENT_DELTA && pstr_eq(evs[i].text, "Partial ");
    }
    CHECK_RC(rc, PANTO_ERR_OVERLOADED);
    CHECK(deltas == 1 && n == 0);
    CHECK_RC(panto_next_events(stream, evs, 16, &n, NULL), PANTO_ERR_OVERLOADED);
    CHECK_RC(panto_stream_error(stream, &err), PANTO_ERR_OVERLOADED);
    CHECK(pstr_eq(err.type, "overloaded_error"));
    panto_stream_free(stream);

    CHECK_RC(add_tool(agent, WEATHER_TOOL), PANTO_OK);
    stream = NULL;
    CHECK_RC(run_text(agent, "Weather?", &stream), PANTO_OK);
    for (;;) {
        rc = panto_next_events(stream, evs, 16, &n, NULL);
        if (rc == PANTO_ERR_RESULT_PENDING) {
            CHECK(n == 0 && tool_starts == 1);
            CHECK_RC(panto_next_events(stream, evs, 16, &n, NULL), PANTO_ERR_RESULT_PENDING);
            CHECK_RC(submit_result(stream, "toolu_t1", "Sunny", 0), PANTO_OK);
            continue;
        }
        if (rc != PANTO_EVENT) break;
        if (evs[0].kind == PANTO_EVENT_TOOL_CALL_START) {
            tool_starts++;
            CHECK(n == 1 && evs[0].awaiting_result == 1 && pstr_eq(evs[0].name, "get_weather"));
        }
        if (evs[0].kind == PANTO_EVENT_TOOL_RESULT) {
            results++;
            CHECK(n == 1 && pstr_eq(evs[0].text, "Sunny"));
        }
    }
    CHECK_RC(rc, PANTO_DONE);
    CHECK(tool_starts == 1 && results == 1);
    panto_stream_free(stream);
    panto_agent_free(agent);
    stop_server();
}

/* ---- The close policy: panto_stream_free of an unfinished turn ------------------------ */

/* The conversation's assistant messages hold `text` once, as an aborted message. */
static void check_aborted_with(PantoAgent *agent, const char *text, const char *absent) {
    PantoString conv = {NULL, 0};
    CHECK_RC(panto_agent_conversation(agent, &conv), PANTO_OK);
    CHECK(count_in(conv, "\"assistant\"") == 1 && count_in(conv, "\"aborted\"") == 1);
    CHECK(count_in(conv, text) == 1);
    if (absent) CHECK(count_in(conv, absent) == 0);
    if (n_failed) printf("    conversation: %.*s\n", (int)conv.len, conv.ptr);
}

/* Freed after some deltas, read one by one or in a batch whose unseen tail was given back:
 * the deltas the caller saw stay, aborted, and the next turn sends them. */
static void test_free_after_deltas(void) {
    static const struct canned answers[] = {
        {200, "text/event-stream", SSE_OK, NULL, 0},
        {200, "text/event-stream", SSE_OK, NULL, 0},
        {200, "text/event-stream", SSE_OK, NULL, 0},
    };
    PantoAgent *agent;
    PantoStream *stream = NULL;
    PantoEvent ev = PANTO_EVENT_INIT;
    PantoEvent evs[8] = {PANTO_EVENT_INIT};
    size_t n = 0, i;
    int rc;

    current_test = "free_after_deltas";
    agent = serve(answers, 3, NULL);
    if (!agent) return;
    CHECK_RC(run_text(agent, "Hello", &stream), PANTO_OK);
    while ((rc = panto_next_event(stream, &ev)) == PANTO_EVENT && ev.kind != PANTO_EVENT_CONTENT_DELTA) {}
    CHECK(rc == PANTO_EVENT && pstr_eq(ev.text, "Hi"));
    /* " there" arrived in the same read, decoded or not: it was not seen. */
    panto_stream_free(stream);
    check_aborted_with(agent, "\"Hi\"", "Hi there");

    /* A batch: everything up to the first delta is kept, the rest given back. */
    current_test = "free_after_deltas_batch";
    CHECK_RC(run_text(agent, "Again", &stream), PANTO_OK);
    n = 0;
    while ((rc = panto_next_events(stream, evs, 8, &n, NULL)) == PANTO_EVENT) {
        for (i = 0; i < n && evs[i].kind != PANTO_EVENT_CONTENT_DELTA; i++) {}
        if (i < n) break;
    }
    CHECK(rc == PANTO_EVENT && i < n && pstr_eq(evs[i].text, "Hi"));
    if (i + 1 < n) CHECK_RC(panto_stream_unread(stream, n - i - 1), PANTO_OK);
    panto_stream_free(stream);
    {
        /* The two aborted messages, each "Hi" alone. */
        PantoString conv = {NULL, 0};
        CHECK_RC(panto_agent_conversation(agent, &conv), PANTO_OK);
        CHECK(count_in(conv, "\"aborted\"") == 2 && count_in(conv, "\"Hi\"") == 2 && count_in(conv, "Hi there") == 0);
    }

    /* The agent runs the next turn, which sends both. */
    current_test = "free_after_deltas_next_turn";
    CHECK_RC(run_text(agent, "Third", &stream), PANTO_OK);
    CHECK_RC(drain(stream), PANTO_DONE);
    panto_stream_free(stream);
    panto_agent_free(agent);
    stop_server();
    CHECK(request_count() == 3);
    CHECK(count_in(request_body(2), "\"Hi\"") == 2);
}

/* Freed while a tool result is awaited: the call gets an error result, the agent runs on. */
static void test_free_awaiting_result(void) {
    static const struct canned answers[] = {
        {200, "text/event-stream", SSE_TOOL, NULL, 0},
        {200, "text/event-stream", SSE_OK, NULL, 0},
    };
    PantoAgent *agent;
    PantoStream *stream = NULL;
    PantoEvent ev = PANTO_EVENT_INIT;
    PantoString conv = {NULL, 0};
    int rc;

    current_test = "free_awaiting_result";
    agent = serve(answers, 2, NULL);
    if (!agent) return;
    CHECK_RC(add_tool(agent, WEATHER_TOOL), PANTO_OK);
    CHECK_RC(run_text(agent, "Weather?", &stream), PANTO_OK);
    while ((rc = panto_next_event(stream, &ev)) == PANTO_EVENT && ev.kind != PANTO_EVENT_TOOL_CALL_START) {}
    CHECK(rc == PANTO_EVENT && ev.awaiting_result == 1);
    panto_stream_free(stream);
    CHECK_RC(panto_agent_conversation(agent, &conv), PANTO_OK);
    CHECK(count_in(conv, "\"tool_call\"") == 1 && count_in(conv, "\"tool_result\"") == 1);
    CHECK(count_in(conv, "canceled before this tool call finished") == 1);
    CHECK_RC(run_text(agent, "Again", &stream), PANTO_OK); /* not busy */
    CHECK_RC(drain(stream), PANTO_DONE);
    panto_stream_free(stream);
    panto_agent_free(agent);
    stop_server();
    CHECK(count_in(request_body(1), "toolu_t1") == 2); /* the call and its result */
}

/* Another thread frees the stream while this one is blocked in panto_next_event(s): the
 * blocked call returns CANCELED promptly, the stream is released after it returned (this
 * thread never touches it again), and the turn ends by the close policy. The turn's total
 * timeout is the deadline: a free that does not end the blocked call fails with TIMEOUT. */
static void free_while_blocked(int batch, const char *label) {
    static const struct canned answers[] = {
        {200, "text/event-stream", SSE_STALLED, NULL, sizeof SSE_PARTIAL_PREFIX - 1},
        {200, "text/event-stream", SSE_OK, NULL, 0},
    };
    PantoAgent *agent;
    PantoStream *stream = NULL;
    PantoEvent ev = PANTO_EVENT_INIT;
    PantoEvent evs[4] = {PANTO_EVENT_INIT};
    size_t n = 99;
    struct canceler freer;
    int rc, deltas = 0;

    current_test = label;
    agent = serve(answers, 2, "\"timeouts\": {\"total_ms\": 20000}");
    if (!agent) return;
    CHECK_RC(run_text(agent, "Hello", &stream), PANTO_OK);
    while (deltas == 0 && (rc = panto_next_event(stream, &ev)) == PANTO_EVENT)
        deltas += ev.kind == PANTO_EVENT_CONTENT_DELTA;
    CHECK(deltas == 1 && pstr_eq(ev.text, "Partial "));
    freer.stream = stream;
    freer.delay_ms = 100;
    freer.free = 1;
    freer.rc = -999;
    if (pthread_create(&freer.thread, NULL, canceler_main, &freer) != 0) {
        CHECK(!"pthread_create");
        panto_stream_free(stream);
        panto_agent_free(agent);
        stop_server();
        return;
    }
    /* The server holds the connection: this blocks until the other thread frees. */
    if (batch) {
        rc = panto_next_events(stream, evs, 4, &n, NULL);
        CHECK(n == 0);
    } else {
        rc = panto_next_event(stream, &ev);
    }
    CHECK_RC(rc, PANTO_ERR_CANCELED);
    stream = NULL; /* released now: never used again */
    pthread_join(freer.thread, NULL);
    CHECK_RC(freer.rc, PANTO_OK);
    check_aborted_with(agent, "\"Partial \"", "rest");
    CHECK_RC(run_text(agent, "Again", &stream), PANTO_OK); /* not busy */
    CHECK_RC(drain(stream), PANTO_DONE);
    panto_stream_free(stream);
    panto_agent_free(agent);
    stop_server();
    CHECK(count_in(request_body(1), "Partial ") == 1);
}

static void test_free_while_blocked(void) {
    free_while_blocked(0, "free_while_blocked");
    free_while_blocked(1, "free_while_blocked_batch");
}

/* ---- Issue 15: content parts (images and PDFs) ---------------------------------------- */

/* A 1x1 PNG and a tiny PDF: media the stub pipeline and the real one both pass through. */
static const unsigned char PNG_1X1[] = {
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0xf0,
    0x1f, 0x00, 0x05, 0x00, 0x01, 0xff, 0x89, 0x99, 0x3d, 0x1d, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
    0x4e, 0x44, 0xae, 0x42, 0x60, 0x82};
static const char PNG_1X1_BASE64[] =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg==";
static const char TINY_PDF[] = "%PDF-1.4\n%%EOF\n";

static PantoPart text_part(const char *text) {
    PantoPart p;
    memset(&p, 0, sizeof p);
    p.kind = PANTO_PART_TEXT;
    p.text = panto_cstr(text);
    return p;
}

static PantoPart media_part(const void *data, size_t len, const char *hint, const char *name) {
    PantoPart p;
    memset(&p, 0, sizeof p);
    p.kind = PANTO_PART_MEDIA;
    p.data = data;
    p.data_len = len;
    p.media_type = panto_cstr(hint);
    p.name = panto_cstr(name);
    return p;
}

/* The message of the last failed call on the agent or the stream. */
static int agent_error_is(PantoAgent *agent, const char *want) {
    PantoError err = PANTO_ERROR_INIT;
    panto_agent_error(agent, &err);
    return pstr_eq(err.message, want);
}

static int stream_error_is(PantoStream *stream, const char *want) {
    PantoError err = PANTO_ERROR_INIT;
    panto_stream_error(stream, &err);
    return pstr_eq(err.message, want);
}

/* Each invalid part array is refused with its reason, and the agent is left as it was: no
 * user message, not busy. An input from an older header (its size ends before `parts`) is
 * read without them, whatever follows in memory. */
static void test_parts_run_arguments(void) {
    PantoAgent *agent = new_agent("http://127.0.0.1:1");
    PantoStream *stream = NULL;
    PantoInput input = PANTO_INPUT_INIT;
    PantoPart parts[2];
    PantoString conv = {NULL, 0};
    struct {
        PantoPart part;
        const char *message;
    } cases[4];
    size_t i;

    current_test = "parts_run_arguments";
    if (!agent) {
        CHECK(!"cannot make an agent");
        return;
    }
    cases[0].part = text_part("x");
    cases[0].part.kind = PANTO_PART_IMAGE; /* a reported kind, not a given one */
    cases[0].message = "input.parts[1].kind is 3: not PANTO_PART_TEXT or PANTO_PART_MEDIA";
    cases[1].part = text_part("x");
    cases[1].part.reserved0 = 7;
    cases[1].message = "input.parts[1].reserved0 is not 0";
    cases[2].part = media_part(NULL, 10, "", "");
    cases[2].message = "input.parts[1].data is NULL but data_len is not 0";
    cases[3].part = media_part(PNG_1X1, sizeof PNG_1X1, "", "");
    cases[3].part.name.len = 3;
    cases[3].part.name.ptr = NULL;
    cases[3].message = "input.parts[1].name.ptr is NULL but its len is not 0";
    parts[0] = text_part("fine");
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        parts[1] = cases[i].part;
        input.text = panto_cstr("Look");
        input.parts = parts;
        input.part_count = 2;
        stream = (PantoStream *)&input;
        CHECK_RC(panto_agent_run(agent, &input, &stream), PANTO_ERR_INVALID_ARGUMENT);
        CHECK(stream == NULL);
        CHECK(agent_error_is(agent, cases[i].message));
    }
    input.parts = NULL;
    input.part_count = 1;
    CHECK_RC(panto_agent_run(agent, &input, &stream), PANTO_ERR_INVALID_ARGUMENT);
    CHECK(agent_error_is(agent, "input.parts is NULL but its count is 1"));
    /* Nothing changed: no user message, and the agent can run. */
    CHECK_RC(panto_agent_conversation(agent, &conv), PANTO_OK);
    CHECK(pstr_eq(conv, "[]"));

    /* An older header's PantoInput: parts lie beyond its size and are not read. */
    input.size = (uint32_t)offsetof(PantoInput, parts);
    input.parts = (const PantoPart *)(uintptr_t)8; /* garbage a caller never set */
    input.part_count = 99;
    CHECK_RC(panto_agent_run(agent, &input, &stream), PANTO_OK);
    CHECK_RC(panto_agent_conversation(agent, &conv), PANTO_OK); /* (freed unsent, it is rolled back) */
    CHECK(count_in(conv, "\"text\":\"Look\"") == 1 && count_in(conv, "\"image\"") == 0);
    panto_stream_free(stream);
    panto_agent_free(agent);
}

/* A turn that starts with a text and an image, whose host tool returns text, an image, a
 * PDF and bytes that are no media, read with a PantoEvent of `ev_size`: this header's, or
 * one from before parts (nothing is written past its size). Checks the submit's argument
 * errors (nothing changed: the call still awaits its result), the TOOL_RESULT's parts, the
 * Anthropic request bodies and the conversation export. */
static void parts_turn(size_t ev_size, const char *label) {
    static const struct canned answers[] = {
        {200, "text/event-stream", SSE_TOOL, NULL, 0},
        {200, "text/event-stream", SSE_OK, NULL, 0},
    };
    const int full = ev_size == sizeof(PantoEvent);
    char url[64];
    PantoAgent *agent;
    PantoStream *stream = NULL;
    PantoEvent ev;
    PantoInput input = PANTO_INPUT_INIT;
    PantoPart turn_parts[2], result_parts[4];
    PantoString conv = {NULL, 0};
    int rc, results = 0;

    current_test = label;
    agent = serve_and_connect(answers, 2, url, sizeof url);
    if (!agent) return;
    CHECK_RC(add_tool(agent, WEATHER_TOOL), PANTO_OK);
    turn_parts[0] = text_part("What is this?");
    turn_parts[1] = media_part(PNG_1X1, sizeof PNG_1X1, "image/jpeg", "dot.png");
    input.parts = turn_parts;
    input.part_count = 2;
    CHECK_RC(panto_agent_run(agent, &input, &stream), PANTO_OK);
    memset(&ev, 0x5A, sizeof ev);
    ev.size = (uint32_t)ev_size;
    while ((rc = panto_next_event(stream, &ev)) == PANTO_EVENT) {
        CHECK(untouched(&ev, ev_size, sizeof ev, 0x5A));
        if (ev.kind == PANTO_EVENT_TOOL_CALL_START) {
            PantoToolResult result = PANTO_TOOL_RESULT_INIT;
            char *id = dup_pstr(ev.id);
            result.call_id = panto_cstr(id);
            result.content = panto_cstr("Here it is");
            result_parts[0] = media_part(PNG_1X1, sizeof PNG_1X1, "", "");
            result_parts[1] = text_part("and a PDF");
            result_parts[2] = media_part(TINY_PDF, strlen(TINY_PDF), "application/pdf", "tiny.pdf");
            result_parts[3] = media_part("junk", 4, "image/png", "junk.png");
            result.parts = result_parts;
            result.part_count = 4;
            /* Invalid parts: refused, and the call still awaits its result. */
            result_parts[1].kind = 0;
            CHECK_RC(panto_stream_submit_tool_result(stream, &result), PANTO_ERR_INVALID_ARGUMENT);
            CHECK(stream_error_is(stream, "result.parts[1].kind is 0: not PANTO_PART_TEXT or PANTO_PART_MEDIA"));
            result_parts[1].kind = PANTO_PART_TEXT;
            result.parts = NULL;
            CHECK_RC(panto_stream_submit_tool_result(stream, &result), PANTO_ERR_INVALID_ARGUMENT);
            CHECK(stream_error_is(stream, "result.parts is NULL but its count is 4"));
            CHECK_RC(panto_next_event(stream, &ev), PANTO_ERR_RESULT_PENDING);
            result.parts = result_parts;
            CHECK_RC(panto_stream_submit_tool_result(stream, &result), PANTO_OK);
            free(id);
        }
        if (ev.kind == PANTO_EVENT_TOOL_RESULT) {
            results++;
            CHECK(ev.is_error == 0);
            CHECK(count_in(ev.text, "Here it is\nand a PDF\n[attachment junk.png dropped: ") == 1);
            if (full) {
                const PantoPartInfo *p = ev.parts;
                CHECK(ev.part_count == 5 && p != NULL);
                if (ev.part_count == 5 && p) {
                    CHECK(p[0].kind == PANTO_PART_TEXT && pstr_eq(p[0].text, "Here it is"));
                    CHECK(p[1].kind == PANTO_PART_IMAGE && pstr_eq(p[1].media_type, "image/png"));
                    CHECK(pstr_eq(p[1].data, PNG_1X1_BASE64) && p[1].byte_size == sizeof PNG_1X1);
                    CHECK(pstr_eq(p[1].name, "") && p[1].text.len == 0);
                    CHECK(p[2].kind == PANTO_PART_TEXT && pstr_eq(p[2].text, "and a PDF"));
                    CHECK(p[3].kind == PANTO_PART_DOCUMENT && pstr_eq(p[3].media_type, "application/pdf"));
                    CHECK(pstr_eq(p[3].name, "tiny.pdf") && p[3].byte_size == strlen(TINY_PDF));
                    CHECK(pstr_eq(p[3].data, "JVBERi0xLjQKJSVFT0YK"));
                    CHECK(p[4].kind == PANTO_PART_TEXT && count_in(p[4].text, "[attachment junk.png dropped: ") == 1);
                    CHECK(p[4].width == 0 && p[4].data.len == 0);
                }
            }
        }
    }
    CHECK_RC(rc, PANTO_DONE);
    CHECK(results == 1);
    panto_stream_free(stream);

    CHECK_RC(panto_agent_conversation(agent, &conv), PANTO_OK);
    CHECK(count_in(conv, "{\"type\":\"text\",\"text\":\"What is this?\"},{\"type\":\"image\",\"media_type\":\"image/png\",\"data\":\"") == 1);
    CHECK(count_in(conv, "\"content\":[{\"type\":\"text\",\"text\":\"Here it is\"},{\"type\":\"image\",\"media_type\":\"image/png\",\"data\":\"") == 1);
    CHECK(count_in(conv, "{\"type\":\"document\",\"media_type\":\"application/pdf\",\"data\":\"JVBERi0xLjQKJSVFT0YK\",\"name\":\"tiny.pdf\"}") == 1);
    CHECK(count_in(conv, PNG_1X1_BASE64) == 2);
    panto_agent_free(agent);
    stop_server();

    /* What Anthropic was sent: the user's image, then the tool result's blocks. */
    CHECK(count_in(request_body(0), "\"content\":[{\"type\":\"text\",\"text\":\"What is this?\"},{\"type\":\"image\",\"source\":{\"type\":\"base64\",\"media_type\":\"image/png\",\"data\":\"") == 1);
    CHECK(count_in(request_body(1), "\"type\":\"tool_result\",\"tool_use_id\":\"toolu_t1\",\"content\":[{\"type\":\"text\",\"text\":\"Here it is\"},{\"type\":\"image\",\"source\":{\"type\":\"base64\",\"media_type\":\"image/png\",\"data\":\"") == 1);
    CHECK(count_in(request_body(1), "{\"type\":\"document\",\"source\":{\"type\":\"base64\",\"media_type\":\"application/pdf\",\"data\":\"JVBERi0xLjQKJSVFT0YK\"},\"title\":\"tiny.pdf\"}") == 1);
    CHECK(count_in(request_body(1), PNG_1X1_BASE64) == 2);
}

static void test_parts_turn(void) {
    parts_turn(sizeof(PantoEvent), "parts_turn");
    /* ABI 3 before parts: the PantoEvent ends before `parts`. */
    parts_turn(offsetof(PantoEvent, parts), "parts_turn_event_before_parts");
}

/* A tool result of text parts only is a plain result: one string, no parts. A
 * PantoToolResult from before parts (its size ends before them) is read without them. */
static void test_parts_plain_result(void) {
    static const struct canned answers[] = {
        {200, "text/event-stream", SSE_TOOL, NULL, 0},
        {200, "text/event-stream", SSE_OK, NULL, 0},
        {200, "text/event-stream", SSE_TOOL, NULL, 0},
        {200, "text/event-stream", SSE_OK, NULL, 0},
    };
    char url[64];
    PantoAgent *agent;
    PantoStream *stream = NULL;
    PantoEvent ev = PANTO_EVENT_INIT;
    PantoPart parts[2];
    int turn, rc, results = 0;

    current_test = "parts_plain_result";
    agent = serve_and_connect(answers, 4, url, sizeof url);
    if (!agent) return;
    CHECK_RC(add_tool(agent, WEATHER_TOOL), PANTO_OK);
    parts[0] = text_part("line 2");
    parts[1] = text_part("line 3");
    for (turn = 0; turn < 2; turn++) {
        CHECK_RC(run_text(agent, "Weather?", &stream), PANTO_OK);
        while ((rc = panto_next_event(stream, &ev)) == PANTO_EVENT) {
            if (ev.kind == PANTO_EVENT_TOOL_CALL_START) {
                PantoToolResult result = PANTO_TOOL_RESULT_INIT;
                char *id = dup_pstr(ev.id);
                result.call_id = panto_cstr(id);
                result.content = panto_cstr("line 1");
                result.parts = parts;
                result.part_count = 2;
                if (turn == 1) {
                    result.size = (uint32_t)offsetof(PantoToolResult, parts);
                    result.parts = (const PantoPart *)(uintptr_t)8;
                    result.part_count = 77;
                }
                CHECK_RC(panto_stream_submit_tool_result(stream, &result), PANTO_OK);
                free(id);
            }
            if (ev.kind == PANTO_EVENT_TOOL_RESULT) {
                results++;
                CHECK(ev.part_count == 0 && ev.parts == NULL);
                CHECK(pstr_eq(ev.text, turn == 0 ? "line 1\nline 2\nline 3" : "line 1"));
            }
        }
        CHECK_RC(rc, PANTO_DONE);
        panto_stream_free(stream);
    }
    CHECK(results == 2);
    panto_agent_free(agent);
    stop_server();
    CHECK(count_in(request_body(1), "\"content\":\"line 1\\nline 2\\nline 3\"") == 1);
    CHECK(count_in(request_body(3), "\"content\":\"line 1\"") == 1);
}

/* ---- Issue 17: final_message, tool progress ------------------------------------------- */

/* panto_stream_final_message drives a tool turn: RESULT_PENDING names the call in
 * out_complete; progress is refused for unknown calls and bad fractions, queued and read back
 * as TOOL_PROGRESS; then the turn's end and its last message's text. */
static void test_final_message_and_progress(void) {
    static const struct canned answers[] = {
        {200, "text/event-stream", SSE_TOOL, NULL, 0},
        {200, "text/event-stream", SSE_OK, NULL, 0},
    };
    char url[64];
    PantoAgent *agent;
    PantoStream *stream = NULL;
    PantoEvent ev = PANTO_EVENT_INIT;
    PantoString text = {NULL, 0};
    PantoError err = PANTO_ERROR_INIT;

    current_test = "final_message_and_progress";
    agent = serve_and_connect(answers, 2, url, sizeof url);
    if (!agent) return;
    CHECK_RC(add_tool(agent, WEATHER_TOOL), PANTO_OK);
    CHECK_RC(run_text(agent, "Weather in Paris?", &stream), PANTO_OK);
    CHECK_RC(panto_stream_final_message(stream, &ev, &text), PANTO_ERR_RESULT_PENDING);
    CHECK(ev.kind == PANTO_EVENT_TOOL_CALL_START && pstr_eq(ev.id, "toolu_t1") && ev.awaiting_result == 1);
    CHECK(ev.sequential == 0);
    CHECK(text.len == 0);
    CHECK_RC(panto_stream_tool_progress(stream, panto_cstr("toolu_none"), panto_cstr("x"), 0.5), PANTO_ERR_NO_SUCH_CALL);
    CHECK_RC(panto_stream_tool_progress(stream, panto_cstr("toolu_t1"), panto_cstr("x"), 1.5), PANTO_ERR_INVALID_ARGUMENT);
    CHECK_RC(panto_stream_tool_progress(stream, panto_cstr("toolu_t1"), panto_cstr("x"), (double)NAN), PANTO_ERR_INVALID_ARGUMENT);
    CHECK_RC(panto_stream_error(stream, &err), PANTO_ERR_INVALID_ARGUMENT);
    CHECK_RC(panto_stream_tool_progress(NULL, panto_cstr("toolu_t1"), panto_cstr(""), 0), PANTO_ERR_INVALID_ARGUMENT);
    CHECK_RC(panto_stream_tool_progress(stream, panto_cstr("toolu_t1"), panto_cstr("looking"), -1), PANTO_OK);
    CHECK_RC(panto_next_event(stream, &ev), PANTO_EVENT);
    CHECK(ev.kind == PANTO_EVENT_TOOL_PROGRESS && pstr_eq(ev.id, "toolu_t1") && pstr_eq(ev.name, "get_weather"));
    CHECK(pstr_eq(ev.text, "looking") && ev.fraction == -1);
    CHECK_RC(panto_stream_tool_progress(stream, panto_cstr("toolu_t1"), panto_cstr(""), 0.25), PANTO_OK);
    CHECK_RC(submit_result(stream, "toolu_t1", "Sunny", 0), PANTO_OK);
    CHECK_RC(panto_next_event(stream, &ev), PANTO_EVENT); /* queued before the result: still comes */
    CHECK(ev.kind == PANTO_EVENT_TOOL_PROGRESS && ev.text.len == 0 && ev.fraction == 0.25);
    CHECK_RC(panto_stream_final_message(stream, &ev, &text), PANTO_OK);
    CHECK(ev.kind == PANTO_EVENT_MESSAGE_COMPLETE && ev.stop_reason == PANTO_STOP_END_TURN);
    CHECK(ev.usage.input_tokens == 20 + 11);
    CHECK(pstr_eq(text, "Hi there"));
    /* Again: the same end; next says done. */
    CHECK_RC(panto_stream_final_message(stream, NULL, &text), PANTO_OK);
    CHECK(pstr_eq(text, "Hi there"));
    CHECK_RC(panto_next_event(stream, &ev), PANTO_DONE);
    CHECK_RC(panto_stream_tool_progress(stream, panto_cstr("toolu_t1"), panto_cstr(""), 0), PANTO_ERR_NO_SUCH_CALL);
    /* No JSON response_format: final_json refuses. */
    CHECK_RC(panto_stream_final_json(stream, &text), PANTO_ERR_STATE);
    panto_stream_free(stream);
    panto_agent_free(agent);
    stop_server();
}

/* ---- Issue 17: the debug log ---------------------------------------------------------- */

/* The bytes of a file, NUL-terminated (malloc'd), or NULL. */
static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = (char *)malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) n = 0;
    if (buf) buf[n] = 0;
    fclose(f);
    return buf;
}

static const char BODY_429_QUOTING_KEY[] =
    "{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"Slow down, sk-log-secret-0123\"}}";

/* PANTO_LOG=debug: one line per request (method and URL, then status and time to the head),
 * per retry decision, per connection; never the API key (not even quoted back by the server);
 * no body. Then the config's log at level body, to a file: the request's JSON body too. */
static void test_debug_log(void) {
    static const struct canned answers[] = {
        {429, "application/json", BODY_429_QUOTING_KEY, "retry-after-ms: 1\r\n", 0},
        {200, "text/event-stream", SSE_OK, NULL, 0},
        {200, "text/event-stream", SSE_OK, NULL, 0},
    };
    char url[64], err_path[] = "/tmp/panto_log_test_XXXXXX", file_path[] = "/tmp/panto_log_file_XXXXXX";
    char want[160], config[256];
    PantoAgent *agent;
    PantoStream *stream = NULL;
    PantoEvent ev = PANTO_EVENT_INIT;
    int saved, fd, file_fd;
    char *log;

    current_test = "debug_log";
    fd = mkstemp(err_path);
    file_fd = mkstemp(file_path);
    CHECK(fd >= 0 && file_fd >= 0);
    if (fd < 0 || file_fd < 0) return;
    close(file_fd);
    setenv("PANTO_LOG", "debug", 1);
    fflush(stderr);
    saved = dup(2);
    dup2(fd, 2);
    agent = serve_and_connect(answers, 3, url, sizeof url);
    if (agent) {
        CHECK_RC(set_config(agent, "{\"api_key\": \"sk-log-secret-0123\"}"), PANTO_OK);
        CHECK_RC(run_text(agent, "Hello", &stream), PANTO_OK);
        CHECK_RC(panto_stream_final_message(stream, &ev, NULL), PANTO_OK);
        panto_stream_free(stream);
    }
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(fd);
    unsetenv("PANTO_LOG");
    log = slurp(err_path);
    CHECK(log != NULL);
    if (log) {
        snprintf(want, sizeof want, "panto: POST %s/v1/messages\n", url);
        CHECK(strstr(log, want) != NULL);
        snprintf(want, sizeof want, "panto: POST %s/v1/messages: HTTP 429 after ", url);
        CHECK(strstr(log, want) != NULL);
        CHECK(strstr(log, "panto: request failed (RateLimit, HTTP 429: Slow down, ") != NULL);
        CHECK(strstr(log, "): retry 1 in 1 ms\n") != NULL);
        snprintf(want, sizeof want, "panto: POST %s/v1/messages: HTTP 200 after ", url);
        CHECK(strstr(log, want) != NULL);
        CHECK(strstr(log, "panto: request on connection ") != NULL);
        CHECK(strstr(log, "sk-log-secret") == NULL);
        CHECK(strstr(log, "test-key") == NULL);
        CHECK(strstr(log, "panto: body") == NULL);
        CHECK(strstr(log, "x-api-key") == NULL);
        free(log);
    }
    if (agent) {
        /* The config's log wins over the environment: level body, appended to the file. */
        snprintf(config, sizeof config, "{\"log\": {\"level\": \"body\", \"file\": \"%s\"}}", file_path);
        CHECK_RC(set_config(agent, config), PANTO_OK);
        CHECK_RC(run_text(agent, "Second", &stream), PANTO_OK);
        CHECK_RC(panto_stream_final_message(stream, &ev, NULL), PANTO_OK);
        panto_stream_free(stream);
        panto_agent_free(agent);
        stop_server();
    }
    log = slurp(file_path);
    CHECK(log != NULL);
    if (log) {
        CHECK(strstr(log, "panto: body {\"model\":\"claude-test\"") != NULL);
        CHECK(strstr(log, "\"text\":\"Second\"") != NULL);
        CHECK(strstr(log, "sk-log-secret") == NULL);
        free(log);
    }
    unlink(err_path);
    unlink(file_path);
}

/* panto_stream_final_json: the answer checked against the turn's response_format (here
 * json_object, per turn): an answer that is not JSON is PANTO_ERR_OUTPUT whose PantoError has
 * the text and says why, sticky until the next call on the stream; a JSON object is given as
 * it came. */
static const char SSE_JSON[] =
    "event: message_start\n"
    "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_json_1\",\"type\":\"message\","
    "\"role\":\"assistant\",\"model\":\"claude-test\",\"content\":[],\"stop_reason\":null,"
    "\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n"
    "event: content_block_start\n"
    "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"{\\\"a\\\": \"}}\n\n"
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"[1]}\"}}\n\n"
    "event: content_block_stop\n"
    "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
    "event: message_delta\n"
    "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},"
    "\"usage\":{\"output_tokens\":4}}\n\n"
    "event: message_stop\n"
    "data: {\"type\":\"message_stop\"}\n\n";

static void test_final_json(void) {
    static const struct canned answers[] = {
        {200, "text/event-stream", SSE_OK, NULL, 0},
        {200, "text/event-stream", SSE_JSON, NULL, 0},
    };
    char url[64];
    PantoAgent *agent;
    PantoStream *stream = NULL;
    PantoInput input = PANTO_INPUT_INIT;
    PantoString json = {NULL, 0};
    PantoError err = PANTO_ERROR_INIT;

    current_test = "final_json";
    agent = serve_and_connect(answers, 2, url, sizeof url);
    if (!agent) return;
    input.text = panto_cstr("Hello");
    input.options = panto_cstr("{\"response_format\": {\"type\": \"json_schema\", \"schema\": {\"type\": \"object\"}}}");
    CHECK_RC(panto_agent_run(agent, &input, &stream), PANTO_OK);
    CHECK_RC(panto_stream_final_json(stream, &json), PANTO_ERR_OUTPUT);
    CHECK(json.len == 0);
    CHECK_RC(panto_stream_error(stream, &err), PANTO_ERR_OUTPUT);
    CHECK(pstr_eq(err.output, "Hi there"));
    CHECK(pstr_eq(err.message, "the answer is not valid JSON"));
    /* The turn itself is over: next says done, and the answer is in the conversation. */
    CHECK_RC(panto_next_event(stream, &(PantoEvent)PANTO_EVENT_INIT), PANTO_DONE);
    CHECK_RC(panto_stream_final_json(stream, NULL), PANTO_ERR_OUTPUT);
    panto_stream_free(stream);
    /* A JSON object: given as it came. */
    input.text = panto_cstr("Again");
    input.options = panto_cstr("{\"response_format\": {\"type\": \"json_schema\", \"schema\": {\"type\": \"object\", \"required\": [\"a\"]}}}");
    CHECK_RC(panto_agent_run(agent, &input, &stream), PANTO_OK);
    CHECK_RC(panto_stream_final_json(stream, &json), PANTO_OK);
    CHECK(pstr_eq(json, "{\"a\": [1]}"));
    CHECK_RC(panto_stream_error(stream, &err), PANTO_OK);
    panto_stream_free(stream);
    /* Without the per-turn option the next turn asks for no JSON: refused before any request. */
    CHECK_RC(run_text(agent, "Once more", &stream), PANTO_OK);
    CHECK_RC(panto_stream_final_json(stream, &json), PANTO_ERR_STATE);
    CHECK_RC(panto_stream_error(stream, &err), PANTO_ERR_STATE);
    CHECK(err.output.len == 0);
    panto_stream_free(stream);
    panto_agent_free(agent);
    stop_server();
}

/* ---- Issue 28: streams driven without blocking (panto_step_event(s)) ------------------ */

/* A stream driven by a poll() loop: what its steps gave so far. */
struct stepped {
    PantoStream *stream;
    int batch;       /* 1: panto_step_events, 0: panto_step_event */
    int rc;          /* the last step's status */
    int ready;       /* step it now (not waiting) */
    PantoWait wait;  /* what the last PANTO_WOULD_BLOCK asked for */
    char text[256];  /* the text deltas, joined */
    int waits;       /* steps that returned PANTO_WOULD_BLOCK */
    int fd_waits;    /* of those, the waits on a descriptor */
    int last_kind;
    int deltas;
    char pending_call[64]; /* a TOOL_CALL_START's id that awaits a result */
    int results_given;
};

static void stepped_init(struct stepped *st, PantoStream *stream, int batch) {
    PantoWait wait = PANTO_WAIT_INIT;
    memset(st, 0, sizeof *st);
    st->stream = stream;
    st->batch = batch;
    st->ready = 1;
    st->wait = wait;
}

static void stepped_event(struct stepped *st, const PantoEvent *ev) {
    st->last_kind = ev->kind;
    if (ev->kind == PANTO_EVENT_CONTENT_DELTA && ev->block_kind == PANTO_BLOCK_TEXT) {
        size_t len = strlen(st->text);
        st->deltas++;
        if (len + ev->text.len < sizeof st->text) {
            memcpy(st->text + len, ev->text.ptr, ev->text.len);
            st->text[len + ev->text.len] = 0;
        }
    }
    if (ev->kind == PANTO_EVENT_TOOL_CALL_START && ev->awaiting_result && ev->id.len < sizeof st->pending_call) {
        memcpy(st->pending_call, ev->id.ptr, ev->id.len);
        st->pending_call[ev->id.len] = 0;
    }
}

/* Steps once: an event (ready to step again), a wait (not ready), a host tool call's
 * RESULT_PENDING (answered: ready), or the end (rc DONE or an error). */
static void step_once(struct stepped *st) {
    if (st->batch) {
        PantoEvent evs[8] = {PANTO_EVENT_INIT};
        size_t n = 99, i;
        st->rc = panto_step_events(st->stream, evs, 8, &n, NULL, &st->wait);
        if (st->rc == PANTO_EVENT) {
            CHECK(n >= 1 && n <= 8);
            for (i = 0; i < n; i++) stepped_event(st, &evs[i]);
        } else {
            CHECK(n == 0);
        }
    } else {
        PantoEvent ev = PANTO_EVENT_INIT;
        st->rc = panto_step_event(st->stream, &ev, &st->wait);
        if (st->rc == PANTO_EVENT) stepped_event(st, &ev);
    }
    st->ready = st->rc == PANTO_EVENT;
    if (st->rc == PANTO_WOULD_BLOCK) {
        st->waits++;
        if (st->wait.fd >= 0) {
            st->fd_waits++;
            CHECK(st->wait.events == PANTO_WAIT_READ || st->wait.events == PANTO_WAIT_WRITE);
        } else {
            CHECK(st->wait.events == 0 && st->wait.deadline_ns >= 0);
        }
    }
    if (st->rc == PANTO_ERR_RESULT_PENDING && st->pending_call[0]) {
        CHECK_RC(submit_result(st->stream, st->pending_call, "{\"temp_c\": 21}", 0), PANTO_OK);
        st->pending_call[0] = 0;
        st->results_given++;
        st->ready = 1;
    }
}

static int64_t monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Steps every stream to its end in one poll() loop: a stream that would block waits for its
 * descriptor or its deadline while the others go on. */
static void step_all(struct stepped *sts, int n) {
    const double give_up = now_s() + 60; /* a guard against a hang, not a timing check */
    for (;;) {
        struct pollfd pfds[8];
        int owner[8], np = 0, live = 0, i, timeout_ms = 1000;
        int64_t soonest = -1, now;
        for (i = 0; i < n; i++)
            while (sts[i].ready) step_once(&sts[i]);
        for (i = 0; i < n; i++) {
            const PantoWait *w = &sts[i].wait;
            if (sts[i].rc != PANTO_WOULD_BLOCK) continue;
            live++;
            if (w->fd >= 0 && np < 8) {
                pfds[np].fd = w->fd;
                pfds[np].events = (short)(w->events == PANTO_WAIT_WRITE ? POLLOUT : POLLIN);
                pfds[np].revents = 0;
                owner[np++] = i;
            }
            if (w->deadline_ns >= 0 && (soonest < 0 || w->deadline_ns < soonest)) soonest = w->deadline_ns;
        }
        if (live == 0) return;
        if (now_s() > give_up) {
            CHECK(!"the stepped streams never finished");
            return;
        }
        now = monotonic_ns();
        if (soonest >= 0) {
            int64_t ms = soonest <= now ? 0 : (soonest - now + 999999) / 1000000;
            if (ms < timeout_ms) timeout_ms = (int)ms;
        }
        poll(pfds, (nfds_t)np, timeout_ms);
        now = monotonic_ns();
        for (i = 0; i < np; i++)
            if (pfds[i].revents) sts[owner[i]].ready = 1;
        for (i = 0; i < n; i++)
            if (sts[i].rc == PANTO_WOULD_BLOCK && sts[i].wait.deadline_ns >= 0 && now >= sts[i].wait.deadline_ns)
                sts[i].ready = 1;
    }
}

/* Three turns at once on one thread, two stepped event by event and one in batches; each
 * over, its end read again by the blocking calls. */
static void test_step_turns(void) {
    static const struct canned answers[] = {
        {200, "text/event-stream", SSE_OK, NULL, 0},
        {200, "text/event-stream", SSE_OK, NULL, 0},
        {200, "text/event-stream", SSE_OK, NULL, 0},
    };
    PantoAgent *agents[3] = {NULL, NULL, NULL};
    struct stepped sts[3];
    char url[64];
    int i;

    current_test = "step_turns";
    if (start_server(answers, 3, url, sizeof url) < 0) {
        CHECK(!"cannot start the canned server");
        return;
    }
    for (i = 0; i < 3; i++) {
        PantoStream *stream = NULL;
        agents[i] = new_agent(url);
        CHECK(agents[i] != NULL);
        if (agents[i]) CHECK_RC(run_text(agents[i], "Hello", &stream), PANTO_OK);
        stepped_init(&sts[i], stream, i == 2);
    }
    if (sts[0].stream && sts[1].stream && sts[2].stream) step_all(sts, 3);
    for (i = 0; i < 3; i++) {
        PantoEvent ev = PANTO_EVENT_INIT, complete = PANTO_EVENT_INIT;
        PantoWait wait = PANTO_WAIT_INIT;
        PantoString text = {NULL, 0};
        if (!sts[i].stream) continue;
        CHECK_RC(sts[i].rc, PANTO_DONE);
        CHECK(strcmp(sts[i].text, "Hi there") == 0 && sts[i].last_kind == PANTO_EVENT_MESSAGE_COMPLETE);
        CHECK_RC(panto_step_event(sts[i].stream, &ev, &wait), PANTO_DONE); /* over stays over */
        CHECK_RC(panto_next_event(sts[i].stream, &ev), PANTO_DONE);      /* its end, read */
        CHECK_RC(panto_stream_final_message(sts[i].stream, &complete, &text), PANTO_OK);
        CHECK(pstr_eq(text, "Hi there") && complete.stop_reason == PANTO_STOP_END_TURN);
        panto_stream_free(sts[i].stream);
    }
    for (i = 0; i < 3; i++) panto_agent_free(agents[i]);
    stop_server();
    CHECK(request_count() == 3);
}

/* A host tool round stepped: PANTO_ERR_RESULT_PENDING, the result given, the next message. */
static void test_step_tool_round(void) {
    static const struct canned answers[] = {
        {200, "text/event-stream", SSE_TOOL, NULL, 0},
        {200, "text/event-stream", SSE_OK, NULL, 0},
    };
    PantoAgent *agent;
    PantoStream *stream = NULL;
    struct stepped st;
    int batch;

    for (batch = 0; batch < 2; batch++) {
        current_test = batch ? "step_tool_round_batch" : "step_tool_round";
        agent = serve(answers, 2, NULL);
        if (!agent) return;
        CHECK_RC(add_tool(agent, WEATHER_TOOL), PANTO_OK);
        CHECK_RC(run_text(agent, "Weather in Paris?", &stream), PANTO_OK);
        stepped_init(&st, stream, batch);
        step_all(&st, 1);
        CHECK_RC(st.rc, PANTO_DONE);
        CHECK(st.results_given == 1 && strcmp(st.text, "Hi there") == 0);
        panto_stream_free(stream);
        panto_agent_free(agent);
        stop_server();
        CHECK(count_in(request_body(1), "temp_c") == 1);
    }
}

/* A server that takes the connection and never answers: the step's deadline ends the turn
 * with PANTO_ERR_TIMEOUT (no thread of panto's keeps its time). */
static void test_step_silent_server(void) {
    struct sockaddr_in addr;
    socklen_t addr_len = sizeof addr;
    char extra[128], url[64];
    PantoAgent *agent;
    PantoStream *stream = NULL;
    PantoEvent ev = PANTO_EVENT_INIT;
    PantoError err = PANTO_ERROR_INIT;
    struct stepped st;
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    current_test = "step_silent_server";
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(fd, 8) < 0 ||
        getsockname(fd, (struct sockaddr *)&addr, &addr_len) < 0) {
        CHECK(!"cannot listen");
        if (fd >= 0) close(fd);
        return;
    }
    snprintf(url, sizeof url, "http://127.0.0.1:%d", (int)ntohs(addr.sin_port));
    snprintf(extra, sizeof extra, "\"retry\": {\"max_retries\": 0}, \"timeouts\": {\"first_byte_ms\": 150}");
    agent = new_agent_with(url, extra);
    CHECK(agent != NULL);
    if (agent) {
        CHECK_RC(run_text(agent, "Hello", &stream), PANTO_OK);
        stepped_init(&st, stream, 0);
        step_all(&st, 1);
        CHECK_RC(st.rc, PANTO_ERR_TIMEOUT);
        CHECK(st.fd_waits > 0); /* it waited, on the socket, until the deadline */
        CHECK_RC(panto_step_event(stream, &ev, &st.wait), PANTO_ERR_TIMEOUT); /* sticky */
        CHECK_RC(panto_stream_error(stream, &err), PANTO_ERR_TIMEOUT);
        CHECK(count_in(err.message, "first_byte_ms") == 1);
        panto_stream_free(stream);
        panto_agent_free(agent);
    }
    close(fd);
}

/* Waits (at most a second) for what the stream's last PANTO_WOULD_BLOCK asked for. */
static void wait_once(const struct stepped *st) {
    struct pollfd pfd;
    pfd.fd = st->wait.fd;
    pfd.events = (short)(st->wait.events == PANTO_WAIT_WRITE ? POLLOUT : POLLIN);
    pfd.revents = 0;
    poll(&pfd, st->wait.fd >= 0 ? 1 : 0, 1000);
}

/* Steps until the stream waits after the stalled answer's delta ("Partial "); 0 if it ended. */
static int step_until_parked(struct stepped *st) {
    while (st->deltas == 0 || st->rc != PANTO_WOULD_BLOCK) {
        step_once(st);
        if (st->rc == PANTO_WOULD_BLOCK && st->deltas == 0)
            wait_once(st);
        else if (st->rc != PANTO_EVENT && st->rc != PANTO_WOULD_BLOCK)
            return 0;
    }
    return st->wait.fd >= 0;
}

static void *cancel_main(void *arg) {
    panto_stream_cancel((PantoStream *)arg);
    return NULL;
}

static void *free_main(void *arg) {
    panto_stream_free((PantoStream *)arg);
    return NULL;
}

/* Parked on a stalled answer: a cancel from another thread wakes the descriptor, and the
 * next step is PANTO_ERR_CANCELED with the close policy's outcome. */
static void test_step_cancel_parked(void) {
    static const struct canned answers[] = {
        {200, "text/event-stream", SSE_STALLED, NULL, sizeof SSE_PARTIAL_PREFIX - 1},
        {200, "text/event-stream", SSE_OK, NULL, 0},
    };
    PantoAgent *agent;
    PantoStream *stream = NULL;
    PantoEvent ev = PANTO_EVENT_INIT;
    struct stepped st;
    struct pollfd pfd;
    pthread_t thread;

    current_test = "step_cancel_parked";
    agent = serve(answers, 2, NULL);
    if (!agent) return;
    CHECK_RC(run_text(agent, "Hello", &stream), PANTO_OK);
    stepped_init(&st, stream, 0);
    CHECK(step_until_parked(&st));
    CHECK(pthread_create(&thread, NULL, cancel_main, stream) == 0);
    pthread_join(thread, NULL);
    pfd.fd = st.wait.fd;
    pfd.events = POLLIN;
    pfd.revents = 0;
    CHECK(poll(&pfd, 1, 30000) == 1); /* woken by the cancel, not by the server */
    CHECK_RC(panto_step_event(stream, &ev, &st.wait), PANTO_ERR_CANCELED);
    CHECK_RC(panto_step_event(stream, &ev, &st.wait), PANTO_ERR_CANCELED);
    check_aborted_with(agent, "\"Partial \"", "rest");
    panto_stream_free(stream);
    CHECK_RC(run_text(agent, "Again", &stream), PANTO_OK); /* not busy */
    CHECK_RC(drain(stream), PANTO_DONE);
    panto_stream_free(stream);
    panto_agent_free(agent);
    stop_server();
}

/* Parked on a stalled answer, freed from the loop's thread or another: released at once
 * (valgrind: nothing leaks), the partial message kept, the agent free for the next turn. */
static void step_free_parked(int other_thread, const char *label) {
    static const struct canned answers[] = {
        {200, "text/event-stream", SSE_STALLED, NULL, sizeof SSE_PARTIAL_PREFIX - 1},
        {200, "text/event-stream", SSE_OK, NULL, 0},
    };
    PantoAgent *agent;
    PantoStream *stream = NULL;
    struct stepped st;
    pthread_t thread;

    current_test = label;
    agent = serve(answers, 2, NULL);
    if (!agent) return;
    CHECK_RC(run_text(agent, "Hello", &stream), PANTO_OK);
    stepped_init(&st, stream, 1);
    CHECK(step_until_parked(&st));
    if (other_thread) {
        CHECK(pthread_create(&thread, NULL, free_main, stream) == 0);
        pthread_join(thread, NULL);
    } else {
        panto_stream_free(stream);
    }
    stream = NULL; /* released: never stepped again */
    check_aborted_with(agent, "\"Partial \"", "rest");
    CHECK_RC(run_text(agent, "Again", &stream), PANTO_OK); /* not busy */
    stepped_init(&st, stream, 0);
    step_all(&st, 1);
    CHECK_RC(st.rc, PANTO_DONE);
    panto_stream_free(stream);
    panto_agent_free(agent);
    stop_server();
    CHECK(count_in(request_body(1), "Partial ") == 1);
}

static void test_step_free_parked(void) {
    step_free_parked(0, "step_free_parked");
    step_free_parked(1, "step_free_parked_other_thread");
}

/* A stream is stepped or read by panto_next_event(s): the other way is PANTO_ERR_STATE and
 * changes nothing; the arguments of the step calls. */
static void test_step_mixing(void) {
    static const struct canned answers[] = {
        {200, "text/event-stream", SSE_OK, NULL, 0},
        {200, "text/event-stream", SSE_OK, NULL, 0},
    };
    PantoAgent *agent;
    PantoStream *stream = NULL;
    PantoEvent ev = PANTO_EVENT_INIT, evs[4] = {PANTO_EVENT_INIT};
    PantoWait wait = PANTO_WAIT_INIT, small = PANTO_WAIT_INIT;
    PantoError err = PANTO_ERROR_INIT;
    PantoString text = {NULL, 0};
    struct stepped st;
    size_t n = 99;

    current_test = "step_mixing";
    CHECK_RC(panto_step_event(NULL, &ev, &wait), PANTO_ERR_INVALID_ARGUMENT);
    CHECK_RC(panto_step_events(NULL, evs, 4, &n, NULL, &wait), PANTO_ERR_INVALID_ARGUMENT);
    CHECK(n == 0);
    agent = serve(answers, 2, NULL);
    if (!agent) return;
    /* Read by next: a step is refused, the turn goes on. */
    CHECK_RC(run_text(agent, "Hello", &stream), PANTO_OK);
    CHECK_RC(panto_step_event(stream, NULL, &wait), PANTO_ERR_INVALID_ARGUMENT);
    CHECK_RC(panto_step_event(stream, &ev, NULL), PANTO_ERR_INVALID_ARGUMENT);
    small.size = 8;
    CHECK_RC(panto_step_event(stream, &ev, &small), PANTO_ERR_INVALID_ARGUMENT);
    CHECK_RC(panto_step_events(stream, evs, 4, &n, NULL, NULL), PANTO_ERR_INVALID_ARGUMENT);
    CHECK_RC(panto_next_event(stream, &ev), PANTO_EVENT);
    CHECK(ev.kind == PANTO_EVENT_MESSAGE_START);
    CHECK_RC(panto_step_event(stream, &ev, &wait), PANTO_ERR_STATE);
    CHECK_RC(panto_stream_error(stream, &err), PANTO_ERR_STATE);
    CHECK(count_in(err.message, "panto_next_event") == 1);
    CHECK_RC(panto_step_events(stream, evs, 4, &n, NULL, &wait), PANTO_ERR_STATE);
    CHECK_RC(drain(stream), PANTO_DONE);
    panto_stream_free(stream);
    /* Stepped: next is refused until the turn is over, then reads its end. */
    CHECK_RC(run_text(agent, "Again", &stream), PANTO_OK);
    stepped_init(&st, stream, 0);
    for (step_once(&st); st.rc == PANTO_WOULD_BLOCK; step_once(&st)) wait_once(&st);
    CHECK_RC(st.rc, PANTO_EVENT);
    CHECK(st.last_kind == PANTO_EVENT_MESSAGE_START);
    CHECK_RC(panto_next_event(stream, &ev), PANTO_ERR_STATE);
    CHECK_RC(panto_stream_error(stream, &err), PANTO_ERR_STATE);
    CHECK(count_in(err.message, "panto_step_event") == 1);
    CHECK_RC(panto_next_events(stream, evs, 4, &n, NULL), PANTO_ERR_STATE);
    CHECK(n == 0);
    CHECK_RC(panto_stream_final_message(stream, NULL, &text), PANTO_ERR_STATE);
    step_all(&st, 1);
    CHECK_RC(st.rc, PANTO_DONE);
    CHECK(strcmp(st.text, "Hi there") == 0); /* nothing lost to the refused calls */
    CHECK_RC(panto_stream_final_message(stream, NULL, &text), PANTO_OK);
    CHECK(pstr_eq(text, "Hi there"));
    panto_stream_free(stream);
    panto_agent_free(agent);
    stop_server();
}

/* A cancel from another thread while a stepped stream waits out a retry's delay (Retry-After
 * of 5 s): the wait's descriptor is panto's wake descriptor, which the cancel makes readable. */
static void test_step_cancel_retry_wait(void) {
    static const struct canned answers[] = {
        {429, "application/json", BODY_429, "retry-after-ms: 5000\r\n", 0},
    };
    PantoAgent *agent;
    PantoStream *stream = NULL;
    PantoEvent ev = PANTO_EVENT_INIT;
    struct stepped st;
    struct pollfd pfd;
    pthread_t thread;

    current_test = "step_cancel_retry_wait";
    agent = serve(answers, 1, NULL);
    if (!agent) return;
    CHECK_RC(run_text(agent, "Hello", &stream), PANTO_OK);
    stepped_init(&st, stream, 0);
    while (st.last_kind != PANTO_EVENT_PROVIDER_RETRY && (st.rc == PANTO_EVENT || st.rc == PANTO_WOULD_BLOCK || st.ready)) {
        step_once(&st);
        if (st.rc == PANTO_WOULD_BLOCK) {
            pfd.fd = st.wait.fd;
            pfd.events = (short)(st.wait.events == PANTO_WAIT_WRITE ? POLLOUT : POLLIN);
            pfd.revents = 0;
            poll(&pfd, st.wait.fd >= 0 ? 1 : 0, 1000);
        }
    }
    CHECK(st.last_kind == PANTO_EVENT_PROVIDER_RETRY);
    CHECK_RC(panto_step_event(stream, &ev, &st.wait), PANTO_WOULD_BLOCK); /* the delay */
    CHECK(st.wait.fd >= 0 && st.wait.events == PANTO_WAIT_READ && st.wait.deadline_ns >= 0);
    pfd.fd = st.wait.fd;
    pfd.events = POLLIN;
    pfd.revents = 0;
    CHECK(poll(&pfd, 1, 0) == 0); /* nothing to read before the cancel */
    CHECK(pthread_create(&thread, NULL, cancel_main, stream) == 0);
    pthread_join(thread, NULL);
    CHECK(poll(&pfd, 1, 30000) == 1); /* woken by the cancel, well before the 5 s */
    CHECK_RC(panto_step_event(stream, &ev, &st.wait), PANTO_ERR_CANCELED);
    panto_stream_free(stream);
    panto_agent_free(agent);
    stop_server();
}

/* Runs the tests whose name holds argv[1] (all without it), e.g. `build/test_api step_` under
 * valgrind. */
int main(int argc, char **argv) {
    const char *only = argc > 1 ? argv[1] : NULL;
#define RUN(test) \
    if (!only || strstr(#test, only)) test()
    signal(SIGPIPE, SIG_IGN);
    RUN(test_versions);
    RUN(test_names);
    RUN(test_free_null);
    RUN(test_null_arguments);
    RUN(test_bad_configs);
    RUN(test_good_config);
    RUN(test_wire_strings);
    RUN(test_busy);
    RUN(test_run_options);
    RUN(test_connection_error);
    RUN(test_turns);
    RUN(test_conversation_edit);
    RUN(test_sessions);
    RUN(test_compact);
    RUN(test_add_tool);
    RUN(test_tools_formats);
    RUN(test_tools_set);
    RUN(test_tool_turn);
    RUN(test_text_policy);
    RUN(test_connection_retries);
    RUN(test_retry_event);
    RUN(test_set_config);
    RUN(test_connections);
    RUN(test_cancel);
    RUN(test_cancel_retry_wait);
    RUN(test_reopen);
    RUN(test_redacted_thinking);
    RUN(test_batch_arguments);
    RUN(test_batch_turns);
    RUN(test_batch_unread);
    RUN(test_batch_error_and_tool);
    RUN(test_free_after_deltas);
    RUN(test_free_awaiting_result);
    RUN(test_free_while_blocked);
    RUN(test_parts_run_arguments);
    RUN(test_parts_turn);
    RUN(test_parts_plain_result);
    RUN(test_final_message_and_progress);
    RUN(test_debug_log);
    RUN(test_final_json);
    RUN(test_settings);
    RUN(test_model_info);
    RUN(test_count_tokens);
    RUN(test_list_models);
    RUN(test_step_turns);
    RUN(test_step_tool_round);
    RUN(test_step_silent_server);
    RUN(test_step_cancel_parked);
    RUN(test_step_free_parked);
    RUN(test_step_mixing);
    RUN(test_step_cancel_retry_wait);
    RUN(test_approvals);
    RUN(test_pending_round);
    RUN(test_budget);
    RUN(test_steering);
    RUN(test_continue);
    printf("%d passed, %d failed\n", n_passed, n_failed);
    return n_failed ? 1 : 0;
}
