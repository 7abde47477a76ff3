/* The panto C consumer of `make bench`: streams one turn (or STREAMS turns on as many threads,
 * one agent each) from the bench server and counts the ContentDelta events, touching every
 * fragment (its length is summed, its bytes checksummed).
 *
 *     panto_c PROVIDER BASE_URL [STREAMS]
 *
 * PROVIDER: anthropic, openai, openai-responses, gemini or bedrock. Bedrock gets no api_key:
 * it signs its requests (SigV4) with AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY from the
 * environment, as the harness sets them.
 *
 * With BENCH_TOGETHER=1 in the environment, every stream waits after its first delta until
 * all have one (bench/run.py's 1,000-stream memory measurement: all open at once).
 *
 * It speaks the harness protocol on stdout (bench/README.md): READY <cpu_s>, FIRST,
 * END <events> <text_bytes> <cpu_s>. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "panto.h"

static double cpu_seconds(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static const char *provider, *base_url;
static pthread_mutex_t first_lock = PTHREAD_MUTEX_INITIALIZER;
static int first_sent;
static int together;
static pthread_barrier_t all_started;

typedef struct {
    PantoAgent *agent;
    uint64_t events, bytes;
    unsigned checksum;
    int failed;
} Job;

static void first_event(void) {
    pthread_mutex_lock(&first_lock);
    if (!first_sent) {
        first_sent = 1;
        fputs("FIRST\n", stdout);
        fflush(stdout);
    }
    pthread_mutex_unlock(&first_lock);
}

static const char *model_for(const char *p) {
    if (strcmp(p, "openai") == 0 || strcmp(p, "openai-responses") == 0) return "gpt-4o-mini";
    if (strcmp(p, "gemini") == 0) return "gemini-2.5-flash";
    if (strcmp(p, "bedrock") == 0) return "anthropic.claude-sonnet-4-5-20250929-v1:0";
    return "claude-sonnet-4-6";
}

static void *consume(void *arg) {
    Job *job = arg;
    PantoStream *stream = NULL;
    PantoInput input = PANTO_INPUT_INIT;
    input.text = panto_cstr("Hello");
    int rc = panto_agent_run(job->agent, &input, &stream);
    if (rc < 0) {
        fprintf(stderr, "panto_agent_run: %s\n", panto_status_name(rc));
        job->failed = 1;
        if (together) pthread_barrier_wait(&all_started);
        return NULL;
    }
    PantoEvent ev = PANTO_EVENT_INIT;
    uint64_t events = 0, bytes = 0;
    unsigned checksum = 0;
    while ((rc = panto_next_event(stream, &ev)) == PANTO_EVENT) {
        if (ev.kind == PANTO_EVENT_CONTENT_DELTA) {
            if (events == 0) {
                first_event();
                if (together) pthread_barrier_wait(&all_started);
            }
            events++;
            bytes += ev.text.len;
            if (ev.text.len) checksum += (unsigned char)ev.text.ptr[ev.text.len - 1];
        }
    }
    if (together && events == 0) pthread_barrier_wait(&all_started); /* do not leave the others waiting */
    if (rc < 0) {
        PantoError err = PANTO_ERROR_INIT;
        panto_stream_error(stream, &err);
        fprintf(stderr, "stream failed (%s): %.*s\n", panto_status_name(rc), (int)err.message.len, err.message.ptr);
        job->failed = 1;
    }
    panto_stream_free(stream);
    job->events = events;
    job->bytes = bytes;
    job->checksum = checksum;
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s anthropic|openai|openai-responses|gemini|bedrock BASE_URL [STREAMS]\n", argv[0]);
        return 2;
    }
    provider = argv[1];
    base_url = argv[2];
    int streams = argc > 3 ? atoi(argv[3]) : 1;
    if (streams < 1) streams = 1;
    const char *env_together = getenv("BENCH_TOGETHER");
    together = streams > 1 && env_together && strcmp(env_together, "1") == 0;
    if (together) pthread_barrier_init(&all_started, NULL, (unsigned)streams);
    const char *key = strcmp(provider, "bedrock") == 0 ? "" : ",\"api_key\":\"bench\"";

    char config[1024];
    snprintf(config, sizeof config, "{\"provider\":\"%s\",\"model\":\"%s\",\"base_url\":\"%s\"%s,\"max_tokens\":1024}",
             provider, model_for(provider), base_url, key);
    Job *jobs = calloc((size_t)streams, sizeof *jobs);
    pthread_t *threads = calloc((size_t)streams, sizeof *threads);
    if (!jobs || !threads) return 1;
    for (int i = 0; i < streams; i++) {
        if (panto_agent_new(panto_cstr(config), &jobs[i].agent) < 0) {
            PantoError err = PANTO_ERROR_INIT;
            panto_agent_error(jobs[i].agent, &err);
            fprintf(stderr, "config refused: %.*s\n", (int)err.message.len, err.message.ptr);
            return 1;
        }
    }

    printf("READY %.6f\n", cpu_seconds());
    fflush(stdout);
    if (streams == 1) {
        consume(&jobs[0]);
    } else {
        for (int i = 0; i < streams; i++) pthread_create(&threads[i], NULL, consume, &jobs[i]);
        for (int i = 0; i < streams; i++) pthread_join(threads[i], NULL);
    }
    uint64_t events = 0, bytes = 0;
    unsigned checksum = 0;
    int failed = 0;
    for (int i = 0; i < streams; i++) {
        events += jobs[i].events;
        bytes += jobs[i].bytes;
        checksum += jobs[i].checksum;
        failed |= jobs[i].failed;
    }
    printf("END %llu %llu %.6f\n", (unsigned long long)events, (unsigned long long)bytes, cpu_seconds());
    fflush(stdout);
    fprintf(stderr, "checksum %u\n", checksum);
    for (int i = 0; i < streams; i++) panto_agent_free(jobs[i].agent);
    free(jobs);
    free(threads);
    return failed;
}
