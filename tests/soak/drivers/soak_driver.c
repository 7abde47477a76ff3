/* The C cancel-soak driver: `soak_driver [--stepped] CONFIG_JSON TOOL_JSON`.
 *
 * Speaks the line protocol of tests/soak/README.md on stdin/stdout: one agent, turns canceled
 * from another thread (a pthread that sleeps, then calls panto_stream_cancel), the tool run by
 * the driver itself on TOOL_CALL_START (sleeping a given time first), one JSON reply a line.
 *
 * --stepped: each turn is driven without blocking (panto_step_event in a poll() loop, as
 * examples/c/epoll_streams.c does), and a cancel comes from the loop's own thread (the loop
 * wakes at the cancel's instant and calls panto_stream_cancel between two steps) when the
 * delay is even, from another thread (the pthread, while the loop waits or steps) when it is
 * odd: the soak's random delays pick both, and a seed replays the choice. */
#define _POSIX_C_SOURCE 200809L
#include <panto.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void sleep_us(long us) {
    struct timespec ts;
    if (us <= 0) return;
    ts.tv_sec = us / 1000000;
    ts.tv_nsec = (us % 1000000) * 1000;
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* A JSON string of the bytes s[0..len). */
static void put_string(FILE *out, const char *s, size_t len) {
    size_t i;
    fputc('"', out);
    for (i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            fputc('\\', out);
            fputc(c, out);
        } else if (c < 0x20) {
            fprintf(out, "\\u%04x", c);
        } else {
            fputc(c, out);
        }
    }
    fputc('"', out);
}

/* A growing byte buffer. */
typedef struct {
    char *data;
    size_t len, cap;
} Buf;

static void buf_add(Buf *b, const char *s, size_t len) {
    if (b->len + len + 1 > b->cap) {
        b->cap = (b->len + len + 1) * 2;
        b->data = realloc(b->data, b->cap);
        if (!b->data) {
            perror("soak_driver");
            exit(2);
        }
    }
    memcpy(b->data + b->len, s, len);
    b->len += len;
}

typedef struct {
    PantoStream *stream;
    long after_us;
} Canceler;

static void *cancel_later(void *arg) {
    Canceler *c = arg;
    sleep_us(c->after_us);
    panto_stream_cancel(c->stream);
    return NULL;
}

static int stepped = 0;

static long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The next event without blocking the turn: steps, and while it would block, waits in poll()
 * for what it asked (its descriptor, its deadline) or until `*cancel_at_ns` (-1: none), where
 * the loop cancels the stream itself and steps on. */
static int step_next(PantoStream *stream, PantoEvent *ev, long long *cancel_at_ns) {
    for (;;) {
        PantoWait wait = PANTO_WAIT_INIT;
        struct pollfd pfd;
        long long until = -1, now;
        int rc;
        if (*cancel_at_ns >= 0 && now_ns() >= *cancel_at_ns) {
            panto_stream_cancel(stream);
            *cancel_at_ns = -1;
        }
        rc = panto_step_event(stream, ev, &wait);
        if (rc != PANTO_WOULD_BLOCK) return rc;
        if (wait.deadline_ns >= 0) until = wait.deadline_ns;
        if (*cancel_at_ns >= 0 && (until < 0 || *cancel_at_ns < until)) until = *cancel_at_ns;
        now = now_ns();
        pfd.fd = wait.fd;
        pfd.events = (short)(((wait.events & PANTO_WAIT_READ) ? POLLIN : 0) | ((wait.events & PANTO_WAIT_WRITE) ? POLLOUT : 0));
        pfd.revents = 0;
        /* (poll ignores a negative fd: then only the time counts) */
        poll(&pfd, 1, until < 0 ? -1 : until <= now ? 0 : (int)((until - now + 999999) / 1000000));
    }
}

static PantoAgent *new_agent(PantoAgent *old, const char *config, const char *tool) {
    PantoAgent *agent = NULL;
    panto_agent_free(old);
    if (panto_agent_new(panto_cstr(config), &agent) != PANTO_OK || panto_agent_add_tool(agent, panto_cstr(tool)) != PANTO_OK) {
        fprintf(stderr, "soak_driver: the agent could not be made\n");
        exit(2);
    }
    return agent;
}

static void reply_status(int rc, const PantoAgent *agent) {
    PantoError err = PANTO_ERROR_INIT;
    if (rc == PANTO_OK) {
        puts("{\"ok\": true}");
        return;
    }
    panto_agent_error(agent, &err);
    printf("{\"ok\": false, \"code\": \"%s\", \"message\": ", panto_status_name(rc));
    put_string(stdout, err.message.ptr ? err.message.ptr : "", err.message.len);
    puts("}");
}

static void turn(PantoAgent *agent, long cancel_us, long tool_sleep_us, long pad, const char *text) {
    PantoStream *stream = NULL;
    PantoEvent ev = PANTO_EVENT_INIT;
    PantoString conversation = {NULL, 0};
    PantoInput run_input = PANTO_INPUT_INIT;
    Buf input = {NULL, 0, 0}, events = {NULL, 0, 0}, seen = {NULL, 0, 0}, texts = {NULL, 0, 0};
    Canceler canceler;
    pthread_t thread;
    int rc, canceling = cancel_us >= 0;
    long long cancel_at_ns = -1;
    long i;

    buf_add(&input, text, strlen(text));
    for (i = 0; i < pad; i++) buf_add(&input, "x", 1);
    run_input.text.ptr = input.data;
    run_input.text.len = input.len;
    if (panto_agent_run(agent, &run_input, &stream) != PANTO_OK) {
        fprintf(stderr, "soak_driver: run failed\n");
        exit(2);
    }
    canceler.stream = stream;
    canceler.after_us = cancel_us;
    if (stepped && canceling && cancel_us % 2 == 0) {
        cancel_at_ns = now_ns() + cancel_us * 1000LL; /* the loop's own thread cancels */
        canceling = 0;
    }
    if (canceling && pthread_create(&thread, NULL, cancel_later, &canceler) != 0) {
        fprintf(stderr, "soak_driver: no thread\n");
        exit(2);
    }
    while ((rc = stepped ? step_next(stream, &ev, &cancel_at_ns) : panto_next_event(stream, &ev)) == PANTO_EVENT) {
        const char *kind = panto_event_kind_name(ev.kind);
        if (events.len) buf_add(&events, ", ", 2);
        buf_add(&events, "\"", 1);
        buf_add(&events, kind, strlen(kind));
        buf_add(&events, "\"", 1);
        if (ev.kind == PANTO_EVENT_CONTENT_DELTA && ev.block_kind == PANTO_BLOCK_TEXT) {
            buf_add(&seen, ev.text.ptr, ev.text.len);
        } else if (ev.kind == PANTO_EVENT_BLOCK_COMPLETE && ev.block_kind == PANTO_BLOCK_TEXT) {
            /* kept as JSON strings, one after the other */
            FILE *mem;
            char *s = NULL;
            size_t n = 0;
            mem = open_memstream(&s, &n);
            if (texts.len) fputs(", ", mem);
            put_string(mem, ev.text.ptr, ev.text.len);
            fclose(mem);
            buf_add(&texts, s, n);
            free(s);
        } else if (ev.kind == PANTO_EVENT_TOOL_CALL_START && ev.awaiting_result) {
            PantoToolResult result = PANTO_TOOL_RESULT_INIT;
            result.call_id = ev.id;
            result.content = panto_cstr("found");
            sleep_us(tool_sleep_us); /* a handler slow enough for a cancel to land in it */
            panto_stream_submit_tool_result(stream, &result);
        }
    }
    if (canceling) pthread_join(thread, NULL);

    fputs("{\"end\": ", stdout);
    if (rc == PANTO_DONE) {
        fputs("\"done\", \"message\": \"\"", stdout);
    } else {
        PantoError err = PANTO_ERROR_INIT;
        panto_stream_error(stream, &err);
        printf("\"%s\", \"message\": ", panto_status_name(rc));
        put_string(stdout, err.message.ptr ? err.message.ptr : "", err.message.len);
    }
    printf(", \"events\": [%.*s], \"seen_text\": ", (int)events.len, events.data ? events.data : "");
    put_string(stdout, seen.data ? seen.data : "", seen.len);
    printf(", \"texts\": [%.*s], \"conversation\": ", (int)texts.len, texts.data ? texts.data : "");
    panto_stream_free(stream);
    if (panto_agent_conversation(agent, &conversation) != PANTO_OK) {
        fprintf(stderr, "soak_driver: no conversation\n");
        exit(2);
    }
    fwrite(conversation.ptr, 1, conversation.len, stdout);
    puts("}");
    free(input.data);
    free(events.data);
    free(seen.data);
    free(texts.data);
}

int main(int argc, char **argv) {
    static char line[1 << 16];
    PantoAgent *agent = NULL;
    if (argc == 4 && strcmp(argv[1], "--stepped") == 0) {
        stepped = 1;
        argv++;
        argc--;
    }
    if (argc != 3) {
        fprintf(stderr, "usage: soak_driver [--stepped] CONFIG_JSON TOOL_JSON\n");
        return 2;
    }
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = '\0';
        if (strcmp(line, "agent") == 0) {
            agent = new_agent(agent, argv[1], argv[2]);
            puts("{\"ok\": true}");
        } else if (strncmp(line, "config ", 7) == 0) {
            reply_status(panto_agent_set_config(agent, panto_cstr(line + 7)), agent);
        } else if (strcmp(line, "connections") == 0) {
            PantoConnections counts = PANTO_CONNECTIONS_INIT;
            if (panto_agent_connections(agent, &counts) != PANTO_OK) {
                fprintf(stderr, "soak_driver: no connection counters\n");
                return 2;
            }
            printf("{\"opened\": %llu, \"reused\": %llu}\n", (unsigned long long)counts.opened,
                   (unsigned long long)counts.reused);
        } else if (strncmp(line, "turn ", 5) == 0) {
            long cancel_us, tool_sleep_us, pad;
            int used = 0;
            if (sscanf(line + 5, "%ld %ld %ld %n", &cancel_us, &tool_sleep_us, &pad, &used) < 3) {
                fprintf(stderr, "soak_driver: bad turn line\n");
                return 2;
            }
            turn(agent, cancel_us, tool_sleep_us, pad, line + 5 + used);
        } else {
            fprintf(stderr, "soak_driver: unknown command %s\n", line);
            return 2;
        }
        fflush(stdout);
    }
    panto_agent_free(agent);
    return 0;
}
