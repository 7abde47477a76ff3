/* One streamed turn from C: print the text as it arrives. See examples/README.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "panto.h"

static const char *env_or(const char *name, const char *fallback) {
    const char *value = getenv(name);
    return value && *value ? value : fallback;
}

/* Appends `"key":"value",` to buf, JSON-escaping value. Returns 0 when it did not fit. */
static int append_field(char *buf, size_t cap, const char *key, const char *value) {
    size_t len = strlen(buf);
    int n = snprintf(buf + len, cap - len, "\"%s\":\"", key);
    if (n < 0 || (size_t)n >= cap - len) return 0;
    len += (size_t)n;
    for (; *value; value++) {
        if (len + 8 >= cap) return 0;
        if (*value == '"' || *value == '\\') buf[len++] = '\\';
        if ((unsigned char)*value < 0x20) { len += (size_t)sprintf(buf + len, "\\u%04x", *value); continue; }
        buf[len++] = *value;
    }
    if (len + 3 >= cap) return 0;
    strcpy(buf + len, "\",");
    return 1;
}

int main(void) {
    const char *provider = env_or("PANTO_PROVIDER",
        getenv("ANTHROPIC_API_KEY") == NULL && getenv("OPENAI_API_KEY") != NULL ? "openai" : "anthropic");
    const char *model = env_or("PANTO_MODEL", strcmp(provider, "openai") == 0 ? "gpt-4o-mini" : "claude-sonnet-4-5");

    char config[2048] = "{";
    int ok = append_field(config, sizeof config, "provider", provider) &&
             append_field(config, sizeof config, "model", model);
    if (ok && getenv("PANTO_BASE_URL")) ok = append_field(config, sizeof config, "base_url", getenv("PANTO_BASE_URL"));
    if (ok && getenv("PANTO_API_KEY")) ok = append_field(config, sizeof config, "api_key", getenv("PANTO_API_KEY"));
    if (!ok) { fprintf(stderr, "configuration too long\n"); return 1; }
    strcat(config, "\"max_tokens\":300}");

    PantoAgent *agent = NULL;
    if (panto_agent_new(config, &agent) < 0) {
        PantoError err = PANTO_ERROR_INIT;
        panto_agent_error(agent, &err);
        fprintf(stderr, "config refused: %.*s\n", (int)err.message.len, err.message.ptr);
        panto_agent_free(agent);
        return 1;
    }

    PantoStream *stream = NULL;
    int rc = panto_agent_run(agent, "Say hello from C in one sentence.", &stream);
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
