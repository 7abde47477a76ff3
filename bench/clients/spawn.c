/* spawn OUT_FILE PROGRAM ARGS...: runs PROGRAM as a child, waits for it, and writes
 * "<exit code> <ru_maxrss kB> <user s> <sys s>" of that child to OUT_FILE; exits with the
 * child's exit code (128 + signal when killed). Right after the fork it writes "PID <pid>"
 * on stdout, which the child shares, so the harness can read the child's /proc entry.
 *
 * Why: Linux keeps the peak RSS of the image a process had before exec in its ru_maxrss, so a
 * consumer forked straight from the (25 MB) Python harness would report at least 25 MB. Forked
 * from this small program, its ru_maxrss is its own. */
#define _DEFAULT_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: spawn OUT_FILE PROGRAM [ARGS...]\n");
        return 2;
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("spawn: fork");
        return 2;
    }
    if (pid == 0) {
        execvp(argv[2], argv + 2);
        perror("spawn: exec");
        _exit(127);
    }
    printf("PID %d\n", (int)pid);
    fflush(stdout);
    int status;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0) {
        /* EINTR: try again */
    }
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    FILE *f = fopen(argv[1], "w");
    if (f == NULL) {
        perror("spawn: OUT_FILE");
        return 2;
    }
    fprintf(f, "%d %ld %ld.%06ld %ld.%06ld\n", code, ru.ru_maxrss, (long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec,
            (long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec);
    fclose(f);
    return code;
}
