/* The panto C consumer of the latency benchmark (bench/latency.py): one agent, one tool turn
 * (the server asks for TOOL_ROUNDS calls of `ping`, answered here at once with
 * panto_stream_submit_tool_result), then TURNS plain turns, each timed here.
 *
 *     panto_c_turns PROVIDER BASE_URL TURNS
 *
 * It prints the latency protocol of bench/clients/turnsproto.py:
 * READY <cpu_s>, TOOL <s> <tool_calls> <text_bytes>, TURNS × TURN <s> <text_bytes>, END <cpu_s>. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "panto.h"

#define TOOL_PROMPT "Call ping until you are done (tool rounds: 3)."
#define PLAIN_PROMPT "Hello"
#define TOOL_SPEC "{\"name\":\"ping\",\"description\":\"Answers pong.\",\"input_schema\":{\"type\":\"object\",\"properties\":{\"round\":{\"type\":\"integer\"}}}}"

static double cpu_seconds(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Runs one turn to its end; returns 0, or -1 after printing why. */
static int turn(PantoAgent *agent, const char *prompt, int *calls, unsigned long long *bytes) {
    PantoStream *stream = NULL;
    PantoInput input = PANTO_INPUT_INIT;
    input.text = panto_cstr(prompt);
    int rc = panto_agent_run(agent, &input, &stream);
    if (rc < 0) {
        fprintf(stderr, "panto_agent_run: %s\n", panto_status_name(rc));
        return -1;
    }
    PantoEvent ev = PANTO_EVENT_INIT;
    *calls = 0;
    *bytes = 0;
    while ((rc = panto_next_event(stream, &ev)) == PANTO_EVENT) {
        if (ev.kind == PANTO_EVENT_CONTENT_DELTA && ev.block_kind == PANTO_BLOCK_TEXT) {
            *bytes += ev.text.len;
        } else if (ev.kind == PANTO_EVENT_TOOL_CALL_START && ev.awaiting_result) {
            PantoToolResult result = PANTO_TOOL_RESULT_INIT;
            result.call_id = ev.id;
            result.content = panto_cstr("pong");
            (*calls)++;
            if (panto_stream_submit_tool_result(stream, &result) < 0) {
                fprintf(stderr, "submit_tool_result refused\n");
                rc = -1;
                break;
            }
        }
    }
    if (rc < 0) {
        PantoError err = PANTO_ERROR_INIT;
        panto_stream_error(stream, &err);
        fprintf(stderr, "turn failed (%s): %.*s\n", panto_status_name(rc), (int)err.message.len, err.message.ptr);
    }
    panto_stream_free(stream);
    return rc < 0 ? -1 : 0;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s anthropic|openai BASE_URL TURNS\n", argv[0]);
        return 2;
    }
    const char *provider = argv[1], *base_url = argv[2];
    int turns = atoi(argv[3]);
    const char *model = strcmp(provider, "openai") == 0 ? "gpt-4o-mini" : "claude-sonnet-4-6";
    char config[2048];
    snprintf(config, sizeof config,
             "{\"provider\":\"%s\",\"model\":\"%s\",\"base_url\":\"%s\",\"api_key\":\"bench\",\"max_tokens\":1024,"
             "\"tools\":[" TOOL_SPEC "]}",
             provider, model, base_url);
    PantoAgent *agent = NULL;
    if (panto_agent_new(panto_cstr(config), &agent) < 0) {
        PantoError err = PANTO_ERROR_INIT;
        panto_agent_error(agent, &err);
        fprintf(stderr, "config refused: %.*s\n", (int)err.message.len, err.message.ptr);
        return 1;
    }
    printf("READY %.6f\n", cpu_seconds());
    fflush(stdout);
    int calls;
    unsigned long long bytes;
    double t = now();
    if (turn(agent, TOOL_PROMPT, &calls, &bytes) < 0) return 1;
    printf("TOOL %.6f %d %llu\n", now() - t, calls, bytes);
    fflush(stdout);
    for (int i = 0; i < turns; i++) {
        t = now();
        if (turn(agent, PLAIN_PROMPT, &calls, &bytes) < 0) return 1;
        printf("TURN %.6f %llu\n", now() - t, bytes);
        fflush(stdout);
    }
    printf("END %.6f\n", cpu_seconds());
    fflush(stdout);
    panto_agent_free(agent);
    return 0;
}
