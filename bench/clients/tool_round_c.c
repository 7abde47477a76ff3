/*
 * tool_round_c.c — the C client of the tool-round benchmark (bench/README.md, "Tool round").
 *
 *     tool_round_c BASE_URL MODE ROUNDS        MODE: parallel | sequential
 *
 * One agent (tool_execution MODE), one host tool `wait` that sleeps 200 ms. Each round is a
 * turn asking for three calls of it: the client starts each call on its own pthread as its
 * TOOL_CALL_START allows (a sequential call after the calls before it have finished), submits
 * each result as its thread ends, and prints {"mode", "wall_ms"} once the turn is over.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "panto.h"

#define MAX_CALLS 16

typedef struct Call {
    char id[128];
    size_t id_len;
    int sequential;
    int started, finished;
    pthread_t thread;
} Call;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_cond = PTHREAD_COND_INITIALIZER;
static int ended[MAX_CALLS]; /* handlers done, not yet submitted (under lock) */

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void *wait_tool(void *arg) {
    struct timespec ts = {0, 200 * 1000000L};
    size_t i = (size_t)arg;
    nanosleep(&ts, NULL);
    pthread_mutex_lock(&lock);
    ended[i] = 1;
    pthread_cond_signal(&done_cond);
    pthread_mutex_unlock(&lock);
    return NULL;
}

/* Whether call i may start: no earlier sequential call running, and for a sequential one,
 * every earlier call finished. */
static int may_start(const Call *calls, size_t i) {
    size_t j;
    for (j = 0; j < i; j++)
        if (!calls[j].finished && (calls[j].sequential || calls[i].sequential)) return 0;
    return 1;
}

/* Runs the round's calls and submits each result as it ends. */
static int run_round(PantoStream *stream, Call *calls, size_t n) {
    size_t i, finished = 0;
    while (finished < n) {
        for (i = 0; i < n; i++) {
            if (calls[i].started || !may_start(calls, i)) continue;
            calls[i].started = 1;
            if (pthread_create(&calls[i].thread, NULL, wait_tool, (void *)i) != 0) return 0;
        }
        pthread_mutex_lock(&lock);
        for (;;) {
            for (i = 0; i < n && !ended[i]; i++) {}
            if (i < n) break;
            pthread_cond_wait(&done_cond, &lock);
        }
        ended[i] = 0;
        pthread_mutex_unlock(&lock);
        pthread_join(calls[i].thread, NULL);
        calls[i].finished = 1;
        finished++;
        {
            PantoToolResult result = PANTO_TOOL_RESULT_INIT;
            result.call_id.ptr = calls[i].id;
            result.call_id.len = calls[i].id_len;
            result.content = panto_cstr("ok");
            if (panto_stream_submit_tool_result(stream, &result) != PANTO_OK) return 0;
        }
    }
    return 1;
}

/* One turn: the events read, the round run when the results are pending. */
static int run_turn(PantoAgent *agent, int round) {
    PantoInput input = PANTO_INPUT_INIT;
    PantoStream *stream = NULL;
    PantoEvent ev = PANTO_EVENT_INIT;
    PantoString text = {NULL, 0};
    Call calls[MAX_CALLS];
    size_t n = 0;
    char prompt[32];
    int rc, ok = 1;

    snprintf(prompt, sizeof prompt, "round %d", round);
    input.text = panto_cstr(prompt);
    if (panto_agent_run(agent, &input, &stream) != PANTO_OK) return 0;
    for (;;) {
        rc = panto_next_event(stream, &ev);
        if (rc == PANTO_EVENT) {
            if (ev.kind == PANTO_EVENT_TOOL_CALL_START && ev.awaiting_result && n < MAX_CALLS &&
                ev.id.len < sizeof calls[n].id) {
                memset(&calls[n], 0, sizeof calls[n]);
                memcpy(calls[n].id, ev.id.ptr, ev.id.len);
                calls[n].id_len = ev.id.len;
                calls[n].sequential = ev.sequential;
                n++;
            }
            continue;
        }
        if (rc == PANTO_ERR_RESULT_PENDING && n > 0) {
            if (!run_round(stream, calls, n)) break;
            n = 0;
            continue;
        }
        break;
    }
    if (rc != PANTO_DONE || panto_stream_final_message(stream, NULL, &text) != PANTO_OK ||
        text.len != 4 || memcmp(text.ptr, "done", 4) != 0) {
        PantoError err = PANTO_ERROR_INIT;
        panto_stream_error(stream, &err);
        fprintf(stderr, "tool_round_c: round %d failed (%s): %.*s\n", round, panto_status_name(rc),
                (int)err.message.len, err.message.ptr ? err.message.ptr : "");
        ok = 0;
    }
    panto_stream_free(stream);
    return ok;
}

int main(int argc, char **argv) {
    char config[1024];
    PantoAgent *agent = NULL;
    int rounds, round;
    const char *mode;

    if (argc != 4 || (strcmp(argv[2], "parallel") != 0 && strcmp(argv[2], "sequential") != 0)) {
        fprintf(stderr, "usage: tool_round_c BASE_URL parallel|sequential ROUNDS\n");
        return 2;
    }
    mode = argv[2];
    rounds = atoi(argv[3]);
    snprintf(config, sizeof config,
             "{\"provider\": \"anthropic\", \"model\": \"bench-model\", \"api_key\": \"bench-key\", "
             "\"base_url\": \"%s\", \"tool_execution\": \"%s\"}",
             argv[1], mode);
    if (panto_agent_new(panto_cstr(config), &agent) != PANTO_OK ||
        panto_agent_add_tool(agent, panto_cstr("{\"name\": \"wait\", \"description\": \"Waits 200 ms.\", "
                                               "\"input_schema\": {\"type\": \"object\", \"properties\": "
                                               "{\"i\": {\"type\": \"integer\"}}}}")) != PANTO_OK) {
        PantoError err = PANTO_ERROR_INIT;
        if (agent) panto_agent_error(agent, &err);
        fprintf(stderr, "tool_round_c: %.*s\n", (int)err.message.len, err.message.ptr ? err.message.ptr : "");
        panto_agent_free(agent);
        return 1;
    }
    for (round = 1; round <= rounds; round++) {
        double start = now_ms(), wall;
        if (!run_turn(agent, round)) {
            panto_agent_free(agent);
            return 1;
        }
        wall = now_ms() - start;
        printf("{\"mode\": \"%s\", \"wall_ms\": %.3f}\n", mode, wall);
        fflush(stdout);
    }
    panto_agent_free(agent);
    return 0;
}
