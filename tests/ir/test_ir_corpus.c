/* test_ir_corpus.c — every conformance file reads without error or warning; read -> write -> read
 * gives an equal IR, write -> write the same bytes, and msccl-tools' files come out unchanged. */
#include "check.h"
#include "weft_ir.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

static int nfiles;

static void check_file(const char *path) {
    weft_diag *d = weft_diag_new();
    weft_algo *a = NULL, *b = NULL;
    char *x = NULL, *y = NULL;
    nfiles++;
    if (weft_ir_read_file(path, &a, d) != WEFT_OK) {
        fprintf(stderr, "%s: read failed\n", path);
        weft_diag_print(d, stderr, WEFT_SEV_INFO);
        check_failures++;
        goto done;
    }
    /* The corpus is clean: no warnings either. */
    CHECK(weft_diag_count(d, WEFT_SEV_ERROR) == 0);
    if (weft_diag_count(d, WEFT_SEV_WARNING) != 0) {
        fprintf(stderr, "%s: unexpected warnings\n", path);
        weft_diag_print(d, stderr, WEFT_SEV_WARNING);
        check_failures++;
    }
    CHECK(weft_ir_write_string(a, &x) == WEFT_OK);
    weft_diag_clear(d);
    if (x == NULL || weft_ir_read_memory(x, strlen(x), path, &b, d) != WEFT_OK) {
        fprintf(stderr, "%s: re-read failed\n", path);
        weft_diag_print(d, stderr, WEFT_SEV_INFO);
        check_failures++;
        goto done;
    }
    CHECK(weft_diag_size(d) == 0); /* no legacy note the second time */
    char why[256] = "";
    if (!weft_algo_equal(a, b, why, sizeof why)) {
        fprintf(stderr, "%s: round trip differs: %s\n", path, why);
        check_failures++;
    }
    CHECK(weft_ir_write_string(b, &y) == WEFT_OK);
    if (x && y && strcmp(x, y) != 0) {
        fprintf(stderr, "%s: second write differs\n", path);
        check_failures++;
    }
    /* msccl-tools' output is already canonical: the writer reproduces it byte for byte, after
     * the leading comment lines of the shipped files. */
    if (x && !strstr(path, "/legacy/")) {
        char *orig = NULL;
        size_t len = 0;
        CHECK(weft_read_file(path, &orig, &len, NULL) == WEFT_OK);
        const char *body = orig;
        while (body && strncmp(body, "<!--", 4) == 0 && strchr(body, '\n'))
            body = strchr(body, '\n') + 1;
        if (body == NULL || strcmp(body, x) != 0) {
            fprintf(stderr, "%s: written text differs from the file\n", path);
            check_failures++;
        }
        free(orig);
    }
    /* The legacy files are the ones without the three newer attributes. */
    CHECK(a->legacy == (strstr(path, "/legacy/") != NULL));
    CHECK(a->name && b->name && strcmp(a->name, b->name) == 0);
done:
    free(x);
    free(y);
    weft_algo_free(a);
    weft_algo_free(b);
    weft_diag_free(d);
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(void) {
    const char *shared = getenv("WEFT_SHARED_DIR");
    char dir[4096];
    if (shared == NULL || *shared == '\0') return 77;
    snprintf(dir, sizeof dir, "%s/conformance", shared);
    DIR *top = opendir(dir);
    if (top == NULL) return 77;
    closedir(top);
    static const char *const subdirs[] = {"shipped", "generated", "legacy"};
    for (size_t k = 0; k < 3; k++) {
        char sub[4200];
        snprintf(sub, sizeof sub, "%s/%s", dir, subdirs[k]);
        DIR *dd = opendir(sub);
        CHECK(dd != NULL);
        if (dd == NULL) continue;
        char *names[512];
        size_t n = 0;
        struct dirent *e;
        while ((e = readdir(dd)) != NULL && n < 512) {
            size_t len = strlen(e->d_name);
            if (len > 4 && strcmp(e->d_name + len - 4, ".xml") == 0)
                names[n++] = weft_strdup(e->d_name);
        }
        closedir(dd);
        qsort(names, n, sizeof *names, cmp_str);
        CHECK(n >= 3);
        for (size_t i = 0; i < n; i++) {
            char path[8400];
            snprintf(path, sizeof path, "%s/%s", sub, names[i]);
            check_file(path);
            free(names[i]);
        }
    }
    printf("%d conformance files checked\n", nfiles);
    CHECK(nfiles >= 18);
    CHECK_DONE();
}
