/* test_common.c — diagnostics formatting, the environment cache and aliases, result strings. */
#include "check.h"
#include "weft_common.h"

#include <stdlib.h>
#include <unistd.h>

static void test_diag(void) {
    weft_diag *d = weft_diag_new();
    weft_diag_add(d, WEFT_SEV_ERROR, "a.xml", 12, 0, "missing attribute '%s'", "cnt");
    weft_diag_add_src(d, WEFT_SEV_WARNING, "b.weft", 3, 5, "let x = y + 1", 1, "unused '%s'", "x");
    weft_diag_add(d, WEFT_SEV_NOTE, NULL, 0, 0, "plain");
    CHECK(weft_diag_size(d) == 3);
    CHECK(weft_diag_count(d, WEFT_SEV_ERROR) == 1);
    char *s = weft_diag_format(weft_diag_get(d, 0));
    CHECK_STR(s, "a.xml:12: error: missing attribute 'cnt'");
    free(s);
    s = weft_diag_format(weft_diag_get(d, 1));
    CHECK_STR(s, "b.weft:3:5: warning: unused 'x'\n  let x = y + 1\n      ^");
    free(s);
    s = weft_diag_format(weft_diag_get(d, 2));
    CHECK_STR(s, "note: plain");
    free(s);
    /* Bounded: garbage input cannot grow the collector without limit. */
    for (int i = 0; i < 3 * WEFT_DIAG_MAX; i++)
        weft_diag_add(d, WEFT_SEV_ERROR, "x", i, 0, "e");
    CHECK(weft_diag_size(d) == WEFT_DIAG_MAX);
    CHECK(weft_diag_count(d, WEFT_SEV_ERROR) == 1 + 3 * WEFT_DIAG_MAX);
    weft_diag_free(d);
    weft_diag_add(NULL, WEFT_SEV_ERROR, "x", 1, 1, "discarded");
}

static void test_env(void) {
    unsetenv("WEFT_ALGO_DIR");
    setenv("MSCCL_ALGO_DIR", "/tmp/algos", 1);
    weft_env_reset();
    CHECK_STR(weft_env_get(WEFT_ENV_ALGO_DIR), "/tmp/algos");
    setenv("WEFT_ALGO_DIR", "/tmp/weft", 1);
    CHECK_STR(weft_env_get(WEFT_ENV_ALGO_DIR), "/tmp/algos"); /* cached */
    weft_env_reset();
    CHECK_STR(weft_env_get(WEFT_ENV_ALGO_DIR), "/tmp/weft"); /* WEFT_ wins over the alias */
    setenv("WEFT_TIMEOUT_MS", "250", 1);
    setenv("WEFT_DISABLE", "x1", 1);
    weft_env_reset();
    CHECK(weft_env_int(WEFT_ENV_TIMEOUT_MS, 5) == 250);
    CHECK(weft_env_int(WEFT_ENV_DISABLE, 7) == 7);
    CHECK(!weft_env_is_set(WEFT_ENV_TRACE) || getenv("WEFT_TRACE") != NULL);
    CHECK_STR(weft_env_name(WEFT_ENV_DEBUG), "WEFT_DEBUG");
}

static void test_log_file(void) {
    char path[] = "/tmp/weft_log_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    setenv("WEFT_DEBUG", "INFO", 1);
    setenv("WEFT_DEBUG_FILE", path, 1);
    weft_env_reset();
    CHECK(weft_log_level_get() == WEFT_LOG_INFO);
    WEFT_TRACE("not shown");
    WEFT_INFO("hello %d", 42);
    weft_env_reset();
    char *data = NULL;
    size_t len = 0;
    CHECK(weft_read_file(path, &data, &len, NULL) == WEFT_OK);
    CHECK(data && strstr(data, "weft INFO hello 42") != NULL);
    CHECK(data && strstr(data, "WEFT_DEBUG set by environment to INFO") != NULL);
    CHECK(data && strstr(data, "not shown") == NULL);
    free(data);
    unlink(path);
    unsetenv("WEFT_DEBUG");
    unsetenv("WEFT_DEBUG_FILE");
    weft_env_reset();
}

int main(void) {
    CHECK_STR(weft_result_str(WEFT_OK), "success");
    CHECK_STR(weft_result_str(WEFT_ERR_TIMEOUT), "timed out");
    CHECK_STR(weft_result_str((weft_result)999), "unknown result");
    test_diag();
    test_env();
    test_log_file();
    CHECK_DONE();
}
