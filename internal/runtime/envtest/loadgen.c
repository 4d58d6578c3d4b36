/* loadgen: a test workload that follows a schedule of memory and CPU steps, for the real node's e2e tests.
 *
 *   loadgen STEP...        each STEP is one of
 *     mem:MIB:SECONDS      grow the resident memory by MIB mebibytes, evenly over SECONDS (pages are touched)
 *     free                 give back every mebibyte grown so far
 *     cpu:MILLI:SECONDS    burn MILLI millicores (duty cycle over 100 ms periods) for SECONDS
 *     sleep:SECONDS        idle
 *     forever              idle until killed (also what happens after the last step)
 *
 * Memory is allocated in the main process: on cgroup v1 the kernel's OOM killer picks the largest process of
 * the memory cgroup, so the container dies (exit 137, OOMKilled) only if the process that grows is PID 1.
 * Each step is logged to stdout. Built statically by the harness's image builder (images.py).
 */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MIB (1024L * 1024L)
#define MAX_CHUNKS 65536

static char *chunks[MAX_CHUNKS];
static long chunk_count;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void pause_for(double seconds) {
    if (seconds <= 0) return;
    struct timespec ts;
    ts.tv_sec = (time_t)seconds;
    ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
    nanosleep(&ts, NULL);
}

static void grow(long mib, double seconds) {
    double gap = mib > 0 ? seconds / (double)mib : 0;
    for (long i = 0; i < mib; i++) {
        if (chunk_count >= MAX_CHUNKS) {
            fprintf(stderr, "loadgen: more than %d MiB requested\n", MAX_CHUNKS);
            exit(2);
        }
        char *chunk = malloc(MIB);
        if (chunk == NULL) {
            fprintf(stderr, "loadgen: malloc failed after %ld MiB\n", chunk_count);
            exit(3);
        }
        memset(chunk, 0x5a, MIB); /* touch every page: resident, charged to the cgroup */
        chunks[chunk_count++] = chunk;
        pause_for(gap);
    }
}

static void release(void) {
    while (chunk_count > 0) free(chunks[--chunk_count]);
}

static void burn(long milli, double seconds) {
    const double period = 0.1;
    double busy = period * (double)milli / 1000.0;
    double end = now() + seconds;
    volatile unsigned long sink = 0;
    while (now() < end) {
        double start = now();
        while (now() - start < busy) sink++;
        pause_for(period - busy);
    }
}

static int parse(const char *text, long *value) {
    char *end;
    *value = strtol(text, &end, 10);
    return end != text && (*end == '\0' || *end == ':') && *value >= 0;
}

/* As PID 1 a signal without a handler is ignored: without this, every pod deletion waits its grace period. */
static void on_term(int sig) {
    (void)sig;
    _exit(0);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGTERM, on_term);
    signal(SIGINT, on_term);
    for (int i = 1; i < argc; i++) {
        const char *step = argv[i];
        long a = 0, b = 0;
        const char *colon = strchr(step, ':');
        const char *second = colon ? strchr(colon + 1, ':') : NULL;
        if (strncmp(step, "mem:", 4) == 0 && second && parse(colon + 1, &a) && parse(second + 1, &b)) {
            printf("loadgen: growing %ld MiB over %ld s (resident %ld MiB)\n", a, b, chunk_count);
            grow(a, (double)b);
        } else if (strcmp(step, "free") == 0) {
            printf("loadgen: freeing %ld MiB\n", chunk_count);
            release();
        } else if (strncmp(step, "cpu:", 4) == 0 && second && parse(colon + 1, &a) && parse(second + 1, &b)) {
            printf("loadgen: burning %ldm for %ld s\n", a, b);
            burn(a, (double)b);
        } else if (strncmp(step, "sleep:", 6) == 0 && colon && parse(colon + 1, &b)) {
            printf("loadgen: sleeping %ld s\n", b);
            pause_for((double)b);
        } else if (strcmp(step, "forever") == 0) {
            break;
        } else {
            fprintf(stderr, "loadgen: bad step %s (expected mem:MIB:SECONDS, free, cpu:MILLI:SECONDS, "
                            "sleep:SECONDS or forever)\n", step);
            return 2;
        }
    }
    printf("loadgen: idle with %ld MiB resident\n", chunk_count);
    for (;;) pause();
}
