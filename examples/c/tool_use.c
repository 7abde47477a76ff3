/* A tool round trip from C: the model asks for the weather; on TOOL_CALL_START the program
 * runs the tool and submits its result, and the next panto_next_event carries on. See
 * examples/README.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "panto.h"
#include "example_config.h"

/* The tool. Its input is a JSON object such as {"city":"Paris"}; a real program would use a
 * JSON parser, this example only looks for the string value of "city". */
static void get_weather(const char *input, size_t len, char *out, size_t cap) {
    char city[64] = "somewhere";
    const char *key = "\"city\":\"";
    char buf[512];
    size_t n = len < sizeof buf - 1 ? len : sizeof buf - 1;
    memcpy(buf, input, n);
    buf[n] = '\0';
    const char *at = strstr(buf, key);
    if (at) {
        at += strlen(key);
        size_t i = 0;
        while (at[i] && at[i] != '"' && i < sizeof city - 1) { city[i] = at[i]; i++; }
        city[i] = '\0';
    }
    snprintf(out, cap, "Sunny, 21 degrees in %s", city);
}

int main(void) {
    char config[2048];
    if (!example_config(config, sizeof config, NULL)) { fprintf(stderr, "configuration too long\n"); return 1; }

    PantoAgent *agent = NULL;
    if (panto_agent_new(panto_cstr(config), &agent) < 0 ||
        panto_agent_add_tool(agent, panto_cstr("{\"name\":\"get_weather\",\"description\":\"Current weather for a city.\","
                                    "\"input_schema\":{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}},"
                                    "\"required\":[\"city\"]}}")) < 0) {
        PantoError err = PANTO_ERROR_INIT;
        panto_agent_error(agent, &err);
        fprintf(stderr, "setup failed: %.*s\n", (int)err.message.len, err.message.ptr);
        panto_agent_free(agent);
        return 1;
    }

    PantoStream *stream = NULL;
    PantoInput input = PANTO_INPUT_INIT;
    input.text = panto_cstr("What is the weather in Paris?");
    int rc = panto_agent_run(agent, &input, &stream);
    printf("[c] ");
    PantoEvent ev = PANTO_EVENT_INIT;
    while (rc >= 0 && (rc = panto_next_event(stream, &ev)) == PANTO_EVENT) {
        if (ev.kind == PANTO_EVENT_TOOL_CALL_START) {
            printf("\n  -> %.*s(%.*s)\n", (int)ev.name.len, ev.name.ptr, (int)ev.text.len, ev.text.ptr);
            if (ev.awaiting_result) {
                char result[256];
                get_weather(ev.text.ptr, ev.text.len, result, sizeof result);
                PantoToolResult answer = PANTO_TOOL_RESULT_INIT;
                answer.call_id = ev.id; /* (borrowed until the next call: this one) */
                answer.content = panto_cstr(result);
                panto_stream_submit_tool_result(stream, &answer);
            }
        } else if (ev.kind == PANTO_EVENT_TOOL_RESULT) {
            printf("  <- %.*s\n", (int)ev.text.len, ev.text.ptr);
        } else if (ev.kind == PANTO_EVENT_CONTENT_DELTA && ev.block_kind == PANTO_BLOCK_TEXT) {
            fwrite(ev.text.ptr, 1, ev.text.len, stdout);
            fflush(stdout);
        }
    }
    if (rc < 0) {
        PantoError err = PANTO_ERROR_INIT;
        panto_stream_error(stream, &err);
        fprintf(stderr, "\nturn failed (%s): %.*s\n", panto_status_name(rc), (int)err.message.len, err.message.ptr);
    }
    panto_stream_free(stream);
    panto_agent_free(agent);
    return rc < 0 ? 1 : 0;
}
