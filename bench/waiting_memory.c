/* Where a waiting stream's memory goes (issue 28's 64 KB a stream): N agents, a stepped turn
 * each, all parked at the response head on one thread, then all answered; at each phase the
 * process's resident memory, malloc's bytes in use and the fiber stacks' resident pages, per
 * turn. Run it against go-panto's delayed server with a delay longer than the setup takes:
 *
 *     build/bench/go-panto-waiting delayed-server 20000 &    (prints its URL)
 *     PANTO_BASE_URL=http://127.0.0.1:PORT PANTO_API_KEY=k build/bench/waiting_memory 1000
 *
 * WAITING_MEMORY_EXIT_PARKED=1 ends the process right after the parked figures, without
 * freeing: under `heaptrack`, its "leaked" list is then what a parked turn holds, by call
 * site. Linux and glibc only (/proc/self/smaps, mallinfo2). */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "panto.h"
#include "example_config.h"

struct turn {
    PantoAgent *agent;
    PantoStream *stream;
    PantoWait wait;
    int registered_fd;
    int rc;
};

struct figures {
    double rss_kb;    /* resident, the whole process */
    double malloc_kb; /* malloc's bytes in use (brk heap and mmap'd chunks) */
    double stacks_kb; /* resident in the fiber stacks (512 KB rw mappings) */
    int stacks;       /* how many such mappings */
};

/* The fiber stacks are the process's anonymous read-write mappings of exactly 512 KB (fiber.zig:
 * an mmap of 512 KB and a PROT_NONE guard page, which splits it from its neighbours). */
static const long stack_kb = 512;

static struct figures measure(void) {
    struct figures f = {0};
    struct mallinfo2 mi = mallinfo2();
    f.malloc_kb = (double)(mi.uordblks + mi.hblkhd) / 1024;
    FILE *smaps = fopen("/proc/self/smaps", "r");
    if (!smaps) return f;
    char line[512];
    int is_stack = 0;
    while (fgets(line, sizeof line, smaps)) {
        unsigned long lo, hi;
        char perms[8];
        long kb;
        if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3 && strchr(line, '-') < strchr(line, ' ')) {
            is_stack = (hi - lo) == (unsigned long)stack_kb * 1024 && strncmp(perms, "rw-p", 4) == 0;
            f.stacks += is_stack;
        } else if (sscanf(line, "Rss: %ld kB", &kb) == 1) {
            f.rss_kb += (double)kb;
            if (is_stack) f.stacks_kb += (double)kb;
        }
    }
    fclose(smaps);
    return f;
}

static void report(const char *phase, struct figures before, struct figures now, int n) {
    printf("%-34s RSS %8.1f KB/turn  malloc %8.1f KB/turn  fiber stacks %6.1f KB/turn (%d stacks)\n", phase,
           (now.rss_kb - before.rss_kb) / n, (now.malloc_kb - before.malloc_kb) / n,
           (now.stacks_kb - before.stacks_kb) / n, now.stacks);
}

static void step(int epfd, struct turn *t) {
    if (t->registered_fd >= 0) epoll_ctl(epfd, EPOLL_CTL_DEL, t->registered_fd, NULL);
    t->registered_fd = -1;
    PantoEvent ev = PANTO_EVENT_INIT;
    while ((t->rc = panto_step_event(t->stream, &ev, &t->wait)) == PANTO_EVENT) {}
    if (t->rc != PANTO_WOULD_BLOCK || t->wait.fd < 0) return;
    struct epoll_event want = {.events = t->wait.events == PANTO_WAIT_WRITE ? EPOLLOUT : EPOLLIN, .data.ptr = t};
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, t->wait.fd, &want) == 0) t->registered_fd = t->wait.fd;
}

/* Steps the turns until `until` says each is where it should be, waiting with epoll. */
static void drive(int epfd, struct turn *turns, int n, int (*until)(const struct turn *)) {
    struct epoll_event ready[64];
    for (;;) {
        int left = 0;
        for (int i = 0; i < n; i++) left += !until(&turns[i]);
        if (left == 0) return;
        int got = epoll_wait(epfd, ready, 64, 100);
        if (got < 0 && errno != EINTR) { perror("epoll_wait"); exit(1); }
        for (int k = 0; k < got; k++) step(epfd, (struct turn *)ready[k].data.ptr);
    }
}

/* Parked at the response head: the request is sent, the turn waits to read. */
static int parked_at_head(const struct turn *t) {
    return t->rc == PANTO_WOULD_BLOCK && t->wait.fd >= 0 && t->wait.events == PANTO_WAIT_READ;
}

static int over(const struct turn *t) { return t->rc != PANTO_WOULD_BLOCK; }

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    if (n <= 0) { fprintf(stderr, "usage: waiting_memory [N]\n"); return 2; }
    char config[2048];
    if (!example_config(config, sizeof config, NULL)) { fprintf(stderr, "configuration too long\n"); return 1; }
    struct turn *turns = calloc((size_t)n, sizeof *turns);
    int epfd = epoll_create1(EPOLL_CLOEXEC);
    if (!turns || epfd < 0) { perror("waiting_memory"); return 1; }
    PantoInput input = PANTO_INPUT_INIT;
    input.text = panto_cstr("Say hello in one sentence.");

    /* One agent made and freed first, so that what the first one costs once (the library's
     * own) is not counted. */
    PantoAgent *warm;
    if (panto_agent_new(panto_cstr(config), &warm) < 0) { fprintf(stderr, "agent refused\n"); return 1; }
    panto_agent_free(warm);

    struct figures base = measure();
    for (int i = 0; i < n; i++) {
        if (panto_agent_new(panto_cstr(config), &turns[i].agent) < 0) { fprintf(stderr, "agent %d refused\n", i); return 1; }
        turns[i].registered_fd = -1;
    }
    struct figures agents = measure();
    report("agents made", base, agents, n);
    for (int i = 0; i < n; i++) {
        PantoWait wait = PANTO_WAIT_INIT;
        turns[i].wait = wait;
        if (panto_agent_run(turns[i].agent, &input, &turns[i].stream) < 0) { fprintf(stderr, "turn %d refused\n", i); return 1; }
    }
    struct figures streams = measure();
    report("  + streams made (nothing sent)", agents, streams, n);
    for (int i = 0; i < n; i++) step(epfd, &turns[i]);
    drive(epfd, turns, n, parked_at_head);
    struct figures parked = measure();
    report("  + parked at the response head", streams, parked, n);
    report("parked, all told", base, parked, n);
    fflush(stdout);
    if (getenv("WAITING_MEMORY_EXIT_PARKED")) _exit(0);

    drive(epfd, turns, n, over);
    struct figures done = measure();
    report("  + answered, turns over", parked, done, n);
    report("over, not freed, all told", base, done, n);
    int failed = 0;
    for (int i = 0; i < n; i++) failed += turns[i].rc != PANTO_DONE;
    for (int i = 0; i < n; i++) panto_stream_free(turns[i].stream);
    struct figures freed_streams = measure();
    report("streams freed", base, freed_streams, n);
    for (int i = 0; i < n; i++) panto_agent_free(turns[i].agent);
    report("agents freed", base, measure(), n);
    if (failed) fprintf(stderr, "%d turns failed\n", failed);
    free(turns);
    return failed ? 1 : 0;
}
