/* bounded.c — runs a command under limits and says whether it kept them: CPU time (user + system,
 * so that a loaded machine does not fail a fast program), peak memory (maximum resident set), and
 * a wall-clock limit that kills it (a hang or a wait on a FIFO). The command's output passes
 * through; its exit status is returned, or 125 after a line naming the limit it broke.
 * usage: bounded CPU_SECONDS MAX_MIB WALL_SECONDS COMMAND [ARG]... */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: bounded CPU_SECONDS MAX_MIB WALL_SECONDS COMMAND [ARG]...\n");
        return 2;
    }
    double cpu_max = atof(argv[1]), wall_max = atof(argv[3]);
    long mib_max = atol(argv[2]);
    pid_t pid = fork();
    if (pid < 0) {
        perror("bounded: fork");
        return 2;
    }
    if (pid == 0) {
        execvp(argv[4], argv + 4);
        fprintf(stderr, "bounded: cannot run %s\n", argv[4]);
        _exit(127);
    }
    double start = now();
    int status = 0, killed = 0;
    struct rusage ru;
    for (;;) {
        pid_t w = wait4(pid, &status, WNOHANG, &ru);
        if (w == pid) break;
        if (w < 0 && errno != EINTR) {
            perror("bounded: wait4");
            return 2;
        }
        if (!killed && now() - start > wall_max) {
            kill(pid, SIGKILL);
            killed = 1;
        }
        usleep(5000);
    }
    double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
                 (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    long mib = ru.ru_maxrss / 1024; /* kilobytes on Linux */
    fprintf(stderr, "bounded: %.2f s of CPU, %ld MiB, %.1f s of wall time\n", cpu, mib,
            now() - start);
    if (killed) {
        fprintf(stderr, "bounded: killed after %.0f s of wall time (a hang?)\n", wall_max);
        return 125;
    }
    if (cpu > cpu_max) {
        fprintf(stderr, "bounded: %.2f s of CPU, more than the %.1f s allowed\n", cpu, cpu_max);
        return 125;
    }
    if (mib > mib_max) {
        fprintf(stderr, "bounded: %ld MiB, more than the %ld MiB allowed\n", mib, mib_max);
        return 125;
    }
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
}
