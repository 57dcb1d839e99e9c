/* fuzz_lang.c — libFuzzer target for the language: any bytes must be compiled or rejected with an
 * error at a position, never crash, hang, leak or trip UBSan; what compiles must validate,
 * verify (the compiler promises a correct schedule), run right on the CPU executor, and survive
 * write -> read unchanged. Built without libFuzzer it is a replay driver: each argument (a file,
 * or a folder of .weft files) is run once, and prefixes of small files too. */
#include "weft_compiler.h"

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
            fprintf(stderr, "fuzz_lang: invariant failed: %s (%s)\n", #c, why);                    \
            weft_diag_print(d, stderr, WEFT_SEV_INFO);                                             \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* Every error of a rejected program names the file; those from the source, a position in it. */
static int errors_located(const weft_diag *d) {
    for (size_t i = 0; i < weft_diag_size(d); i++) {
        const weft_diag_entry *e = weft_diag_get(d, i);
        if (e->sev != WEFT_SEV_ERROR) continue;
        if (e->file == NULL) return 0;
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
    weft_diag *d = weft_diag_new();
    weft_algo *a = NULL, *b = NULL;
    char *x = NULL;
    char why[256] = "";
    if (d == NULL) return 0;
    /* includes are looked for next to "fuzz/in.weft", a folder that does not exist: only an
     * absolute path can name a file, and what is not a regular file is refused unread */
    weft_result r = weft_cc_compile_string((const char *)data, size, "fuzz/in.weft", NULL, &a, d);
    INVARIANT(r == WEFT_OK || r == WEFT_ERR_INPUT);
    INVARIANT((r == WEFT_OK) == (a != NULL));
    INVARIANT(r != WEFT_OK || weft_diag_count(d, WEFT_SEV_ERROR) == 0);
    INVARIANT(r != WEFT_ERR_INPUT || weft_diag_count(d, WEFT_SEV_ERROR) > 0);
    INVARIANT(errors_located(d));
    for (size_t i = 0; i < weft_diag_size(d); i++)
        free(weft_diag_format(weft_diag_get(d, i)));
    if (a) {
        weft_diag_clear(d);
        INVARIANT(weft_ir_validate(a, d) == WEFT_OK);
        if (weft_coll_runnable(a->coll)) {
            weft_result v = weft_ir_verify(a, NULL, d, NULL);
            snprintf(why, sizeof why, "the compiled schedule does not verify");
            INVARIANT(v == WEFT_OK);
            weft_exec_opts o;
            weft_exec_opts_init(&o);
            o.count = 7;
            for (int mode = 0; mode < 2; mode++) {
                if (mode ? !a->inplace : !a->outofplace) continue;
                o.inplace = (uint8_t)mode;
                snprintf(why, sizeof why, "the compiled schedule computes a wrong result");
                INVARIANT(weft_ir_exec(a, &o, d, NULL) == WEFT_OK);
            }
        }
        INVARIANT(weft_ir_write_string(a, &x) == WEFT_OK);
        weft_diag_clear(d);
        r = weft_ir_read_memory(x, strlen(x), "fuzz-written.xml", &b, d);
        snprintf(why, sizeof why, "the written schedule does not read back");
        INVARIANT(r == WEFT_OK);
        INVARIANT(weft_algo_equal(a, b, why, sizeof why));
    }
    free(x);
    weft_algo_free(a);
    weft_algo_free(b);
    weft_diag_free(d);
    return 0;
}

#ifndef WEFT_LIBFUZZER
static int replay_file(const char *path) {
    char *buf = NULL;
    size_t len = 0;
    if (weft_read_file(path, &buf, &len, NULL) != WEFT_OK) {
        fprintf(stderr, "fuzz_lang: cannot read %s\n", path);
        return -1;
    }
    LLVMFuzzerTestOneInput((const unsigned char *)buf, len);
    /* Prefixes of small files too: truncation is the commonest damage. */
    if (len <= 4096)
        for (size_t k = 0; k < len; k += 11)
            LLVMFuzzerTestOneInput((const unsigned char *)buf, k);
    free(buf);
    return 1;
}

static int replay_dir(const char *dir) {
    DIR *dd = opendir(dir);
    if (dd == NULL) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dd)) != NULL) {
        size_t l = strlen(e->d_name);
        if (e->d_name[0] == '.' || l < 5 || strcmp(e->d_name + l - 5, ".weft") != 0) continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        int k = replay_file(path);
        if (k < 0) {
            n = -1;
            break;
        }
        n += k;
    }
    closedir(dd);
    return n;
}

/* usage: fuzz_lang_replay FILE-or-DIR... */
int main(int argc, char **argv) {
    int n = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        int k = stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode) ? replay_dir(argv[i])
                                                               : replay_file(argv[i]);
        if (k < 0) {
            fprintf(stderr, "fuzz_lang: cannot read %s\n", argv[i]);
            return 1;
        }
        n += k;
    }
    printf("%d inputs replayed\n", n);
    return n > 0 ? 0 : 1;
}
#endif
