/* datadir.c — the installed data folder (algorithm library, examples, docs) located from the
 * executable, not from a prefix compiled in: an installed tree works wherever it is moved. */
#include "datadir.h"
#include "weft_common.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef WEFT_BIN_TO_DATA
#define WEFT_BIN_TO_DATA "../share/weft"
#endif

char *weft_exe_sibling(const char *rel) {
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return NULL;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (slash == NULL) return NULL;
    *slash = '\0';
    char *p = weft_asprintf("%s/%s", self, rel);
    struct stat st;
    if (p && stat(p, &st) != 0) WEFT_FREE(p);
    return p;
}

char *weft_data_path(const char *sub) {
    char *rel = weft_asprintf("%s/%s", WEFT_BIN_TO_DATA, sub);
    char *p = rel ? weft_exe_sibling(rel) : NULL;
    free(rel);
    return p;
}

char *weft_default_algos(const char **from) {
    const char *env = weft_env_get(WEFT_ENV_ALGO_DIR);
    struct stat st;
    if (env && *env) {
        *from = "$WEFT_ALGO_DIR";
        return weft_strdup(env);
    }
    char *installed = weft_data_path("algorithms");
    if (installed) {
        *from = "the library installed with this weft";
        return installed;
    }
    if (stat("algorithms", &st) == 0 && S_ISDIR(st.st_mode)) {
        *from = "./algorithms";
        return weft_strdup("algorithms");
    }
    *from = "nothing (no -d, WEFT_ALGO_DIR unset, no installed library, no ./algorithms)";
    return NULL;
}
