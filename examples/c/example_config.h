/* The configuration every C example reads from the environment (examples/README.md):
 * PANTO_PROVIDER, PANTO_MODEL, PANTO_BASE_URL, PANTO_API_KEY. Shared by the examples so that
 * each of them shows only what it is about. */
#ifndef PANTO_EXAMPLE_CONFIG_H
#define PANTO_EXAMPLE_CONFIG_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Writes the JSON configuration of panto_agent_new into buf: provider, model, base URL and key
 * from the environment, the system prompt when not NULL, max_tokens 300. Returns 0 when it did
 * not fit. */
static int example_config(char *buf, size_t cap, const char *system) {
    const char *provider = env_or("PANTO_PROVIDER",
        getenv("ANTHROPIC_API_KEY") == NULL && getenv("OPENAI_API_KEY") != NULL ? "openai" : "anthropic");
    const char *model = env_or("PANTO_MODEL", strcmp(provider, "openai") == 0 ? "gpt-4o-mini" : "claude-sonnet-4-5");
    if (cap < 2) return 0;
    strcpy(buf, "{");
    int ok = append_field(buf, cap, "provider", provider) && append_field(buf, cap, "model", model);
    if (ok && system) ok = append_field(buf, cap, "system", system);
    if (ok && getenv("PANTO_BASE_URL")) ok = append_field(buf, cap, "base_url", getenv("PANTO_BASE_URL"));
    if (ok && getenv("PANTO_API_KEY")) ok = append_field(buf, cap, "api_key", getenv("PANTO_API_KEY"));
    if (!ok || strlen(buf) + sizeof "\"max_tokens\":300}" > cap) return 0;
    strcat(buf, "\"max_tokens\":300}");
    return 1;
}

#endif
