/* fuzz_ir_read.c — libFuzzer target for the XML reader and the verifier: any bytes must be read
 * or rejected with a diagnostic, never crash or leak; what is accepted must survive write ->
 * read unchanged, the verifier must prove or refute it without crashing, and what it proves
 * must run right on the CPU executor. Built without libFuzzer it is a replay driver: each
 * argument (file) is run once. */
#include "weft_ir.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

/* A broken invariant is a finding: abort so that libFuzzer saves the input. */
#define INVARIANT(c)                                                                               \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "fuzz_ir_read: invariant failed: %s (%s)\n", #c, why);                 \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
    weft_diag *d = weft_diag_new();
    weft_algo *a = NULL, *b = NULL, *c = NULL;
    char *x = NULL, *y = NULL;
    char why[256] = "";
    if (d == NULL) return 0;
    weft_result r = weft_ir_read_memory((const char *)data, size, "fuzz.xml", &a, d);
    INVARIANT((r == WEFT_OK) == (a != NULL));
    INVARIANT(r != WEFT_OK || weft_diag_count(d, WEFT_SEV_ERROR) == 0);
    INVARIANT(r != WEFT_ERR_INPUT || weft_diag_count(d, WEFT_SEV_ERROR) > 0);
    for (size_t i = 0; i < weft_diag_size(d); i++)
        free(weft_diag_format(weft_diag_get(d, i)));
    if (a) {
        INVARIANT(weft_ir_write_string(a, &x) == WEFT_OK);
        weft_diag_clear(d);
        r = weft_ir_read_memory(x, strlen(x), "fuzz-written.xml", &b, d);
        if (r != WEFT_OK) weft_diag_print(d, stderr, WEFT_SEV_INFO);
        INVARIANT(r == WEFT_OK);
        INVARIANT(weft_algo_equal(a, b, why, sizeof why));
        INVARIANT(weft_ir_write_string(b, &y) == WEFT_OK);
        INVARIANT(strcmp(x, y) == 0);
        c = weft_algo_clone(a);
        INVARIANT(c != NULL && weft_algo_equal(a, c, why, sizeof why));
        INVARIANT(weft_ir_validate(c, NULL) == WEFT_OK);
        FILE *devnull = fopen("/dev/null", "w");
        if (devnull) {
            INVARIANT(weft_ir_show(a, devnull, 0) == WEFT_OK);
            fclose(devnull);
        }
        /* whatever was accepted, the verifier proves or refutes it: no crash, no "internal" */
        weft_diag_clear(d);
        weft_verify_summary sum;
        weft_result v = weft_ir_verify(a, NULL, d, &sum);
        snprintf(why, sizeof why, "weft_ir_verify returned %d", (int)v);
        INVARIANT(v == WEFT_OK || v == WEFT_ERR_INPUT || v == WEFT_ERR_UNSUPPORTED);
        INVARIANT(v != WEFT_ERR_INPUT || weft_diag_count(d, WEFT_SEV_ERROR) > 0);
        weft_verify_summary_free(&sum);
        /* what the verifier proves, the CPU executor computes: right for every count, so for
         * 1 and k + 1 (a short last chunk), in each declared mode (small schedules only: the
         * executor holds every rank's buffers) */
        int64_t chunks = 0;
        for (int32_t q = 0; q < a->ngpus; q++)
            chunks += (int64_t)a->gpus[q].i_chunks + a->gpus[q].o_chunks + a->gpus[q].s_chunks;
        if (v == WEFT_OK && chunks <= 4096 && a->nchunksperloop <= 256) {
            weft_exec_opts o;
            weft_exec_opts_init(&o);
            for (int mode = 0; mode < 2; mode++)
                for (int n = 0; n < 2; n++) {
                    if (mode ? !a->inplace : !a->outofplace) continue;
                    o.inplace = (uint8_t)mode;
                    o.count = n ? a->nchunksperloop + 1 : 1;
                    o.dtype = n ? WEFT_DTYPE_INT32 : WEFT_DTYPE_FLOAT;
                    weft_diag_clear(d);
                    weft_result e = weft_ir_exec(a, &o, d, NULL);
                    if (e != WEFT_OK) weft_diag_print(d, stderr, WEFT_SEV_NOTE);
                    snprintf(why, sizeof why,
                             "verified, but the CPU executor says %d (count %lld, %s)", (int)e,
                             (long long)o.count, mode ? "in-place" : "out-of-place");
                    INVARIANT(e == WEFT_OK);
                }
        }
    }
    free(x);
    free(y);
    weft_algo_free(a);
    weft_algo_free(b);
    weft_algo_free(c);
    weft_diag_free(d);
    return 0;
}

#ifndef WEFT_LIBFUZZER
static int replay_file(const char *path) {
    char *buf = NULL;
    size_t len = 0;
    if (weft_read_file(path, &buf, &len, NULL) != WEFT_OK) {
        fprintf(stderr, "fuzz_ir_read: cannot read %s\n", path);
        return -1;
    }
    LLVMFuzzerTestOneInput((const unsigned char *)buf, len);
    /* Prefixes of small files too: truncation is the commonest damage. */
    if (len <= 4096)
        for (size_t k = 0; k < len; k += 7)
            LLVMFuzzerTestOneInput((const unsigned char *)buf, k);
    free(buf);
    return 1;
}

/* Files directly in dir and in its subfolders (one level, as conformance/ is laid out). */
static int replay_dir(const char *dir, int depth) {
    DIR *dd = opendir(dir);
    if (dd == NULL) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dd)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(path, &st) != 0) continue;
        int k = S_ISDIR(st.st_mode) ? (depth > 0 ? replay_dir(path, depth - 1) : 0)
                                    : (strstr(e->d_name, ".xml") ? replay_file(path) : 0);
        if (k < 0) {
            n = -1;
            break;
        }
        n += k;
    }
    closedir(dd);
    return n;
}

/* usage: fuzz_ir_replay FILE-or-DIR... ; "@shared" stands for $WEFT_SHARED_DIR/conformance
 * (exit 77, skipped, when that is not there). */
int main(int argc, char **argv) {
    int n = 0;
    for (int i = 1; i < argc; i++) {
        char shared[4096];
        const char *arg = argv[i];
        if (strcmp(arg, "@shared") == 0) {
            const char *s = getenv("WEFT_SHARED_DIR");
            if (s == NULL || *s == '\0') return 77;
            snprintf(shared, sizeof shared, "%s/conformance", s);
            struct stat st;
            if (stat(shared, &st) != 0) return 77;
            arg = shared;
        }
        struct stat st;
        int k = stat(arg, &st) == 0 && S_ISDIR(st.st_mode) ? replay_dir(arg, 1) : replay_file(arg);
        if (k < 0) {
            fprintf(stderr, "fuzz_ir_read: cannot read %s\n", arg);
            return 1;
        }
        n += k;
    }
    printf("%d inputs replayed\n", n);
    return n > 0 ? 0 : 1;
}
#endif
