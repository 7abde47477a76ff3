/* Many turns at once on one thread: every stream is driven with panto_step_event, and one
 * epoll loop waits for all of them (issue 28). A stream that would block says what it waits
 * for (a descriptor to be readable or writable, a deadline); the loop waits for the first of
 * all those, steps the streams that are ready, and goes on until every turn is over.
 * Usage: epoll_streams [N] (default 100). See examples/README.md. Linux only. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>

#include "panto.h"
#include "example_config.h"

struct turn {
    PantoAgent *agent; /* an agent runs one turn at a time: one agent a stream */
    PantoStream *stream;
    PantoWait wait;
    int registered_fd; /* the descriptor in the epoll set, or -1 */
    int rc;            /* the last step's status */
    size_t text_bytes;
};

static int64_t monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Steps a turn until it must wait or is over, then puts the descriptor it waits for in the
 * epoll set. The descriptor is registered for one wait only, taken out before the next step:
 * a step may close it (the turn over, a retry on a new connection), and a closed number can
 * come back as another turn's socket. */
static void step(int epfd, struct turn *t) {
    if (t->registered_fd >= 0) epoll_ctl(epfd, EPOLL_CTL_DEL, t->registered_fd, NULL);
    t->registered_fd = -1;
    PantoEvent ev = PANTO_EVENT_INIT;
    while ((t->rc = panto_step_event(t->stream, &ev, &t->wait)) == PANTO_EVENT)
        if (ev.kind == PANTO_EVENT_CONTENT_DELTA && ev.block_kind == PANTO_BLOCK_TEXT) t->text_bytes += ev.text.len;
    if (t->rc != PANTO_WOULD_BLOCK || t->wait.fd < 0) return; /* over, or a deadline only */
    struct epoll_event want = {.events = t->wait.events == PANTO_WAIT_WRITE ? EPOLLOUT : EPOLLIN, .data.ptr = t};
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, t->wait.fd, &want) == 0) t->registered_fd = t->wait.fd;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 100;
    if (n <= 0) { fprintf(stderr, "usage: epoll_streams [N]\n"); return 2; }
    char config[2048];
    if (!example_config(config, sizeof config, NULL)) { fprintf(stderr, "configuration too long\n"); return 1; }
    struct turn *turns = calloc((size_t)n, sizeof *turns);
    int epfd = epoll_create1(EPOLL_CLOEXEC);
    if (!turns || epfd < 0) { perror("epoll_streams"); return 1; }

    PantoInput input = PANTO_INPUT_INIT;
    input.text = panto_cstr("Say hello in one sentence.");
    for (int i = 0; i < n; i++) {
        struct turn *t = &turns[i];
        PantoWait wait = PANTO_WAIT_INIT;
        t->wait = wait;
        t->registered_fd = -1;
        if (panto_agent_new(panto_cstr(config), &t->agent) < 0 || panto_agent_run(t->agent, &input, &t->stream) < 0) {
            fprintf(stderr, "turn %d could not start\n", i);
            return 1;
        }
    }

    int64_t started = monotonic_ns();
    for (int i = 0; i < n; i++) step(epfd, &turns[i]);
    struct epoll_event ready[64];
    for (;;) {
        /* The soonest deadline of a waiting turn bounds the wait (timeouts, a retry's delay);
         * a loop of many more turns would keep them in a heap rather than look at each. */
        int live = 0;
        int64_t soonest = -1;
        for (int i = 0; i < n; i++) {
            if (turns[i].rc != PANTO_WOULD_BLOCK) continue;
            live++;
            int64_t d = turns[i].wait.deadline_ns;
            if (d >= 0 && (soonest < 0 || d < soonest)) soonest = d;
        }
        if (live == 0) break;
        int timeout_ms = -1;
        if (soonest >= 0) {
            int64_t left = soonest - monotonic_ns();
            timeout_ms = left <= 0 ? 0 : (int)((left + 999999) / 1000000);
        }
        int got = epoll_wait(epfd, ready, 64, timeout_ms);
        if (got < 0 && errno != EINTR) { perror("epoll_wait"); return 1; }
        for (int k = 0; k < got; k++) step(epfd, (struct turn *)ready[k].data.ptr);
        /* Turns whose deadline passed step too: a timeout fails them with PANTO_ERR_TIMEOUT,
         * a retry's delay (no descriptor) is over. */
        int64_t now = monotonic_ns();
        for (int i = 0; i < n; i++) {
            struct turn *t = &turns[i];
            if (t->rc == PANTO_WOULD_BLOCK && t->wait.deadline_ns >= 0 && now >= t->wait.deadline_ns) step(epfd, t);
        }
    }
    double seconds = (double)(monotonic_ns() - started) / 1e9;

    int done = 0;
    size_t bytes = 0;
    for (int i = 0; i < n; i++) {
        struct turn *t = &turns[i];
        if (t->rc == PANTO_DONE) {
            done++;
            bytes += t->text_bytes;
        } else {
            PantoError err = PANTO_ERROR_INIT;
            panto_stream_error(t->stream, &err);
            fprintf(stderr, "turn %d failed (%s): %.*s\n", i, panto_status_name(t->rc), (int)err.message.len, err.message.ptr);
        }
        panto_stream_free(t->stream);
        panto_agent_free(t->agent);
    }
    printf("[c] %d/%d turns done on one thread, %zu bytes of text\n", done, n, bytes);
    fprintf(stderr, "(%.2f s)\n", seconds);
    free(turns);
    return done == n ? 0 : 1;
}
