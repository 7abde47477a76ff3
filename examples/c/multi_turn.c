/* A conversation from C: two turns on one agent; the second one sees the first (the agent
 * keeps the conversation and sends it whole). See examples/README.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "panto.h"
#include "example_config.h"


int main(void) {
    char config[2048];
    if (!example_config(config, sizeof config, "Answer in one short sentence.")) { fprintf(stderr, "configuration too long\n"); return 1; }

    PantoAgent *agent = NULL;
    if (panto_agent_new(panto_cstr(config), &agent) < 0) {
        PantoError err = PANTO_ERROR_INIT;
        panto_agent_error(agent, &err);
        fprintf(stderr, "config refused: %.*s\n", (int)err.message.len, err.message.ptr);
        panto_agent_free(agent);
        return 1;
    }

    const char *prompts[] = {"Hi, my name is Ada.", "What is my name?"};
    for (int turn = 0; turn < 2; turn++) {
        PantoStream *stream = NULL;
        PantoInput input = PANTO_INPUT_INIT;
        input.text = panto_cstr(prompts[turn]);
        int rc = panto_agent_run(agent, &input, &stream);
        if (rc < 0) { fprintf(stderr, "run failed: %s\n", panto_status_name(rc)); panto_agent_free(agent); return 1; }
        printf("[c] turn %d: ", turn + 1);
        PantoEvent ev = PANTO_EVENT_INIT;
        while ((rc = panto_next_event(stream, &ev)) == PANTO_EVENT) {
            if (ev.kind == PANTO_EVENT_CONTENT_DELTA && ev.block_kind == PANTO_BLOCK_TEXT) {
                fwrite(ev.text.ptr, 1, ev.text.len, stdout);
                fflush(stdout);
            }
        }
        if (rc < 0) {
            PantoError err = PANTO_ERROR_INIT;
            panto_stream_error(stream, &err);
            fprintf(stderr, "\nturn failed (%s): %.*s\n", panto_status_name(rc), (int)err.message.len, err.message.ptr);
            panto_stream_free(stream);
            panto_agent_free(agent);
            return 1;
        }
        panto_stream_free(stream); /* the agent runs one stream at a time: free it first */
    }

    /* The conversation is a JSON array of {"role", "content", ...}; this example lists the
     * roles with strstr (a real program would use a JSON parser). */
    PantoString json;
    panto_agent_conversation(agent, &json);
    char roles[256] = "";
    int messages = 0;
    for (size_t i = 0; i + 8 < json.len; i++) {
        if (memcmp(json.ptr + i, "\"role\":\"", 8) != 0) continue;
        const char *role = json.ptr + i + 8;
        size_t n = 0;
        while (i + 8 + n < json.len && role[n] != '"') n++;
        if (strlen(roles) + n + 3 < sizeof roles) {
            if (messages > 0) strcat(roles, ", ");
            strncat(roles, role, n);
        }
        messages++;
    }
    printf("[c] conversation: %d messages (%s)\n", messages, roles);
    panto_agent_free(agent);
    return 0;
}
