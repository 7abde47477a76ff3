/* Canceling a turn from C: after the first text arrives, a second thread calls
 * panto_stream_cancel 100 ms later while panto_next_event is blocked waiting for the provider;
 * that call returns PANTO_ERR_CANCELED. The partial answer stays in the conversation, marked
 * aborted, and the next turn works. See examples/README.md. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "panto.h"
#include "example_config.h"


/* The canceling thread: waits 100 ms, then cancels the stream (panto_stream_cancel may be
 * called from any thread). */
static void *cancel_later(void *stream) {
    struct timespec delay = {0, 100 * 1000 * 1000};
    nanosleep(&delay, NULL);
    panto_stream_cancel(stream);
    return NULL;
}

/* Prints the JSON string value that follows `key` in json, without unescaping (this example
 * has no JSON parser; a real program would use one). */
static void print_string_after(const char *json, const char *key) {
    const char *at = strstr(json, key);
    if (!at) return;
    for (at += strlen(key); *at && *at != '"'; at++) {
        if (*at == '\\' && at[1]) putchar(*at++);
        putchar(*at);
    }
}

/* Streams one turn's text to stdout. Returns the final status of the stream. */
static int print_turn(PantoStream *stream) {
    PantoEvent ev = PANTO_EVENT_INIT;
    int rc;
    while ((rc = panto_next_event(stream, &ev)) == PANTO_EVENT) {
        if (ev.kind == PANTO_EVENT_CONTENT_DELTA && ev.block_kind == PANTO_BLOCK_TEXT) {
            fwrite(ev.text.ptr, 1, ev.text.len, stdout);
            fflush(stdout);
        }
    }
    return rc;
}

int main(void) {
    char config[2048];
    if (!example_config(config, sizeof config, NULL)) { fprintf(stderr, "configuration too long\n"); return 1; }

    PantoAgent *agent = NULL;
    if (panto_agent_new(panto_cstr(config), &agent) < 0) {
        PantoError err = PANTO_ERROR_INIT;
        panto_agent_error(agent, &err);
        fprintf(stderr, "config refused: %.*s\n", (int)err.message.len, err.message.ptr);
        panto_agent_free(agent);
        return 1;
    }

    PantoStream *stream = NULL;
    PantoInput input = PANTO_INPUT_INIT;
    input.text = panto_cstr("Tell me a very long story.");
    int rc = panto_agent_run(agent, &input, &stream);
    if (rc < 0) { fprintf(stderr, "run failed: %s\n", panto_status_name(rc)); panto_agent_free(agent); return 1; }

    printf("[c] partial: ");
    pthread_t canceler;
    int armed = 0;
    PantoEvent ev = PANTO_EVENT_INIT;
    while ((rc = panto_next_event(stream, &ev)) == PANTO_EVENT) {
        if (ev.kind == PANTO_EVENT_CONTENT_DELTA && ev.block_kind == PANTO_BLOCK_TEXT) {
            fwrite(ev.text.ptr, 1, ev.text.len, stdout);
            fflush(stdout);
            if (!armed && pthread_create(&canceler, NULL, cancel_later, stream) == 0) armed = 1;
        }
    }
    if (armed) pthread_join(canceler, NULL);
    if (rc != PANTO_ERR_CANCELED) {
        fprintf(stderr, "\n[c] the turn was not canceled (%s)\n", panto_status_name(rc));
        panto_stream_free(stream);
        panto_agent_free(agent);
        return 1;
    }
    PantoError err = PANTO_ERROR_INIT;
    panto_stream_error(stream, &err);
    printf("\n[c] error: %s (%.*s)\n", panto_status_name(rc), (int)err.message.len, err.message.ptr);
    panto_stream_free(stream);

    /* The conversation is a JSON array; its last message is the aborted assistant message. */
    PantoString json;
    panto_agent_conversation(agent, &json);
    char *conversation = malloc(json.len + 1);
    if (!conversation) return 1;
    memcpy(conversation, json.ptr, json.len);
    conversation[json.len] = '\0';
    const char *last = conversation, *at;
    while ((at = strstr(last + 1, "{\"role\":\"")) != NULL) last = at;
    printf("[c] kept: ");
    print_string_after(last, "\"stop_reason\":\"");
    printf(" \"");
    print_string_after(last, "\"text\":\"");
    printf("\"\n");
    free(conversation);

    input.text = panto_cstr("Then tell me the short version.");
    rc = panto_agent_run(agent, &input, &stream);
    if (rc < 0) { fprintf(stderr, "run failed: %s\n", panto_status_name(rc)); panto_agent_free(agent); return 1; }
    printf("[c] second turn: ");
    rc = print_turn(stream);
    panto_stream_free(stream);
    if (rc < 0) { fprintf(stderr, "\nturn failed: %s\n", panto_status_name(rc)); panto_agent_free(agent); return 1; }

    int messages = 0;
    panto_agent_conversation(agent, &json);
    for (size_t i = 0; i + 7 < json.len; i++) messages += memcmp(json.ptr + i, "\"role\":", 7) == 0;
    printf("[c] conversation: %d messages\n", messages);
    panto_agent_free(agent);
    return 0;
}
