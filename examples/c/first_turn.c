/* One streamed turn from C: print the text as it arrives. See examples/README.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "panto.h"
#include "example_config.h"


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
    input.text = panto_cstr("Say hello from C in one sentence.");
    int rc = panto_agent_run(agent, &input, &stream);
    if (rc < 0) { fprintf(stderr, "run failed: %s\n", panto_status_name(rc)); panto_agent_free(agent); return 1; }

    printf("[c] ");
    PantoEvent ev = PANTO_EVENT_INIT;
    while ((rc = panto_next_event(stream, &ev)) == PANTO_EVENT) {
        if (ev.kind == PANTO_EVENT_CONTENT_DELTA && ev.block_kind == PANTO_BLOCK_TEXT) {
            fwrite(ev.text.ptr, 1, ev.text.len, stdout);
            fflush(stdout);
        } else if (ev.kind == PANTO_EVENT_MESSAGE_COMPLETE) {
            printf("    (%s, %llu tokens out)\n", panto_stop_reason_name(ev.stop_reason),
                   (unsigned long long)ev.usage.output_tokens);
        }
    }
    if (rc < 0) {
        PantoError err = PANTO_ERROR_INIT;
        panto_stream_error(stream, &err);
        fprintf(stderr, "\nturn failed (%s, HTTP %d): %.*s\n", panto_status_name(rc), err.http_status,
                (int)err.message.len, err.message.ptr);
    }
    panto_stream_free(stream);
    panto_agent_free(agent);
    return rc < 0 ? 1 : 0;
}
