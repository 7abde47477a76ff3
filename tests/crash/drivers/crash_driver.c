/*
 * crash_driver.c — the C driver of the crash test (tests/crash/README.md).
 *
 *     crash_driver BASE_URL SESSION_DIR SESSION_ID START
 *
 * Opens (or resumes) the session SESSION_ID in SESSION_DIR with an agent of the emulator at
 * BASE_URL and runs turns "turn N" for N = START, START+1, ... until it is killed. Around each
 * turn it prints, each line flushed at once:
 *     user N        right after panto_agent_run returned (the user message is committed)
 *     assistant N   right after the turn's MESSAGE_END (the assistant message is committed)
 *     done N        after the turn ended
 * The harness kills it with SIGKILL at random instants, then checks that the session holds at
 * least what was printed. Exits 1 (with the reason on stderr) when a call fails.
 *
 * Build: cc -std=c99 -Wall -Wextra -Werror -pedantic -Iinclude \
 *            tests/crash/drivers/crash_driver.c -Lzig-out/lib -lpanto
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "panto.h"

/* Writes s into out as a JSON string (quotes and backslashes escaped; paths and ids hold no
 * control characters). Returns 0 when it does not fit. */
static int json_quote(char *out, size_t cap, const char *s) {
    size_t at = 0;
    if (cap < 3) return 0;
    out[at++] = '"';
    for (; *s; s++) {
        if (at + 4 > cap) return 0;
        if (*s == '"' || *s == '\\') out[at++] = '\\';
        out[at++] = *s;
    }
    out[at++] = '"';
    out[at] = 0;
    return 1;
}

static int fail(const char *what, int rc, const PantoAgent *agent) {
    PantoError err = PANTO_ERROR_INIT;
    if (agent) panto_agent_error(agent, &err);
    fprintf(stderr, "crash_driver: %s: %s %.*s\n", what, panto_status_name(rc), (int)err.message.len,
            err.message.ptr ? err.message.ptr : "");
    return 1;
}

static void say(const char *what, long n) {
    printf("%s %ld\n", what, n);
    fflush(stdout);
}

int main(int argc, char **argv) {
    char config[8192], url[2048], dir[4096], id[512], text[64], *end;
    long n;
    PantoAgent *agent = NULL;
    int rc;

    if (argc != 5) {
        fprintf(stderr, "usage: crash_driver BASE_URL SESSION_DIR SESSION_ID START\n");
        return 2;
    }
    n = strtol(argv[4], &end, 10);
    if (*argv[4] == 0 || *end != 0 || n < 0) {
        fprintf(stderr, "crash_driver: START is not a non-negative integer\n");
        return 2;
    }
    if (!json_quote(url, sizeof url, argv[1]) || !json_quote(dir, sizeof dir, argv[2]) || !json_quote(id, sizeof id, argv[3]) ||
        snprintf(config, sizeof config,
                 "{\"provider\":\"anthropic\",\"model\":\"claude-test\",\"api_key\":\"k\",\"base_url\":%s,"
                 "\"session\":{\"dir\":%s,\"id\":%s}}",
                 url, dir, id) >= (int)sizeof config) {
        fprintf(stderr, "crash_driver: arguments too long\n");
        return 2;
    }

    rc = panto_agent_new(panto_cstr(config), &agent);
    if (rc < 0) {
        rc = fail("panto_agent_new", rc, agent);
        panto_agent_free(agent);
        return rc;
    }
    for (;; n++) {
        PantoInput input = PANTO_INPUT_INIT;
        PantoStream *stream = NULL;
        PantoEvent ev = PANTO_EVENT_INIT;
        snprintf(text, sizeof text, "turn %ld", n);
        input.text = panto_cstr(text);
        rc = panto_agent_run(agent, &input, &stream);
        if (rc < 0) return fail("panto_agent_run", rc, agent);
        say("user", n);
        while ((rc = panto_next_event(stream, &ev)) == PANTO_EVENT)
            if (ev.kind == PANTO_EVENT_MESSAGE_END) say("assistant", n);
        if (rc != PANTO_DONE) {
            PantoError err = PANTO_ERROR_INIT;
            panto_stream_error(stream, &err);
            fprintf(stderr, "crash_driver: turn %ld: %s %.*s\n", n, panto_status_name(rc), (int)err.message.len,
                    err.message.ptr ? err.message.ptr : "");
            panto_stream_free(stream);
            panto_agent_free(agent);
            return 1;
        }
        panto_stream_free(stream);
        say("done", n);
    }
}
