/* fuzz_trace_read.c — libFuzzer target for the trace reader: any bytes must be read or rejected
 * with an error, never crash, hang or leak; what is accepted must write, read back and write the
 * same bytes, and go through `summarize` and `check`. Built without libFuzzer it is a replay
 * driver: each file argument once, and every prefix of it. */
#include "trace_internal.h"
#include "trace_tools.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

#define INVARIANT(c)                                                                               \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "fuzz_trace_read: invariant failed: %s\n", #c);                        \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static char *write_str(const weft_trace *t, size_t *len) {
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    INVARIANT(f != NULL);
    INVARIANT(weft_trace_write(t, f) == WEFT_OK);
    fclose(f);
    return buf;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
    weft_diag *d = weft_diag_new();
    weft_trace t, u;
    char *x = NULL, *y = NULL;
    size_t nx = 0, ny = 0;
    if (d == NULL) return 0;
    weft_trace_init(&t, 0);
    weft_trace_init(&u, 0);
    weft_result r = weft_trace_read_memory(&t, (const char *)data, size, "fuzz.json", d);
    INVARIANT(r != WEFT_OK || weft_diag_count(d, WEFT_SEV_ERROR) == 0);
    INVARIANT(r == WEFT_OK || weft_diag_count(d, WEFT_SEV_ERROR) > 0);
    for (size_t i = 0; i < weft_diag_size(d); i++)
        free(weft_diag_format(weft_diag_get(d, i)));
    if (r == WEFT_OK) {
        x = write_str(&t, &nx);
        weft_diag_clear(d);
        r = weft_trace_read_memory(&u, x, nx, "fuzz-written.json", d);
        if (r != WEFT_OK) weft_diag_print(d, stderr, WEFT_SEV_NOTE);
        INVARIANT(r == WEFT_OK);
        y = write_str(&u, &ny);
        INVARIANT(nx == ny && memcmp(x, y, nx) == 0);
        FILE *devnull = fopen("/dev/null", "w");
        if (devnull) {
            weft_trace_summary_opts so = {-1, 40};
            weft_trace_check_opts co = {0.10};
            weft_trace_summarize(&t, &so, devnull);
            weft_trace_check(&t, &co, devnull, NULL);
            fclose(devnull);
        }
    }
    free(x);
    free(y);
    weft_trace_free(&t);
    weft_trace_free(&u);
    weft_diag_free(d);
    return 0;
}

#ifndef WEFT_LIBFUZZER
static int replay_file(const char *path) {
    char *buf = NULL;
    size_t len = 0;
    if (weft_read_file(path, &buf, &len, NULL) != WEFT_OK) {
        fprintf(stderr, "fuzz_trace_read: cannot read %s\n", path);
        return -1;
    }
    LLVMFuzzerTestOneInput((const unsigned char *)buf, len);
    for (size_t k = 0; k < len; k += 1 + len / 400)
        LLVMFuzzerTestOneInput((const unsigned char *)buf, k);
    free(buf);
    return 1;
}

/* usage: fuzz_trace_replay FILE-or-DIR... (the .json files of a folder) */
int main(int argc, char **argv) {
    int n = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "fuzz_trace_read: no such file %s\n", argv[i]);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            if (replay_file(argv[i]) < 0) return 1;
            n++;
            continue;
        }
        DIR *dd = opendir(argv[i]);
        struct dirent *e;
        while (dd && (e = readdir(dd)) != NULL) {
            if (strstr(e->d_name, ".json") == NULL) continue;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
            if (replay_file(path) < 0) return 1;
            n++;
        }
        if (dd) closedir(dd);
    }
    printf("fuzz_trace_read: replayed %d files\n", n);
    return n > 0 ? 0 : 1;
}
#endif
