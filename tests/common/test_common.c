/* test_common.c — diagnostics formatting, the environment cache and aliases, result strings,
 * output files, the log's line shape and its level and subsystem filters. */
#include "check.h"
#include "weft_common.h"

#include <regex.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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

/* Runs the log with these settings into a fresh file and returns what it wrote (malloc'd). */
static char *log_with(const char *level, const char *subsys, void (*emit)(void)) {
    char path[] = "/tmp/weft_log_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    setenv("WEFT_DEBUG", level, 1);
    if (subsys)
        setenv("WEFT_DEBUG_SUBSYS", subsys, 1);
    else
        unsetenv("WEFT_DEBUG_SUBSYS");
    setenv("WEFT_DEBUG_FILE", path, 1);
    weft_env_reset();
    emit();
    weft_env_reset();
    char *data = NULL;
    size_t len = 0;
    CHECK(weft_read_file(path, &data, &len, NULL) == WEFT_OK);
    unlink(path);
    unsetenv("WEFT_DEBUG");
    unsetenv("WEFT_DEBUG_SUBSYS");
    unsetenv("WEFT_DEBUG_FILE");
    weft_env_reset();
    return data ? data : weft_strdup("");
}

static void emit_each(void) {
    WEFT_TRACE(WEFT_SUBSYS_COLL, "trace-coll");
    WEFT_INFO(WEFT_SUBSYS_INIT, "info-init %d", 42);
    WEFT_INFO(WEFT_SUBSYS_COLL, "info-coll");
    WEFT_INFO(WEFT_SUBSYS_PLAN, "info-plan");
    WEFT_WARN("warn-any");
    weft_log(WEFT_LOG_VERSION, WEFT_SUBSYS_INIT, "version-line");
}

static int dev_seven(void) {
    return 7;
}

static void emit_with_device(void) {
    weft_log_set_device_fn(dev_seven);
    WEFT_INFO(WEFT_SUBSYS_INIT, "on a device");
    weft_log_set_device_fn(NULL);
}

static int has(const char *log, const char *s) {
    return strstr(log, s) != NULL;
}

static void test_log(void) {
    /* NCCL's line shape: host:pid:tid [dev] weft LEVEL msg, the tid being the kernel's */
    char *s = log_with("INFO", NULL, emit_each);
    char want[128];
    snprintf(want, sizeof want, ":%d:%ld [-] weft INFO info-init 42\n", (int)getpid(),
             (long)syscall(SYS_gettid));
    CHECK(has(s, want));
    regex_t re;
    CHECK(regcomp(&re, "^[^: ]+:[0-9]+:[0-9]+ \\[-\\] weft (VERSION|WARN|INFO) [^ ].*$",
                  REG_EXTENDED | REG_NOSUB) == 0);
    int lines = 0;
    for (char *line = strtok(s, "\n"); line; line = strtok(NULL, "\n"), lines++)
        if (regexec(&re, line, 0, NULL, 0) != 0) CHECK_STR(line, "(a line in NCCL's shape)");
    regfree(&re);
    CHECK(lines == 7); /* the five below TRACE; WEFT_DEBUG and WEFT_DEBUG_FILE set by environment */
    free(s);

    s = log_with("INFO", NULL, emit_with_device);
    CHECK(has(s, " [7] weft INFO on a device\n"));
    free(s);

    /* levels: TRACE shows all; WARN the warning and the version line; VERSION only the latter */
    s = log_with("trace", NULL, emit_each);
    CHECK(has(s, " weft TRACE trace-coll\n") && has(s, " weft INFO info-plan\n"));
    free(s);
    s = log_with("WARN", NULL, emit_each);
    CHECK(has(s, " weft WARN warn-any\n") && has(s, " weft VERSION version-line\n"));
    CHECK(!has(s, "info-") && !has(s, "set by environment"));
    free(s);
    s = log_with("VERSION", NULL, emit_each);
    CHECK(has(s, "version-line") && !has(s, "warn-any") && !has(s, "info-"));
    free(s);
    s = log_with("NONE", NULL, emit_each);
    CHECK_STR(s, "");
    free(s);
    s = log_with("LOUD", NULL, emit_each); /* not a level: WARN, and said */
    CHECK(has(s, " weft WARN WEFT_DEBUG=LOUD is not a level (NONE, VERSION, WARN, INFO, TRACE); "
                 "using WARN\n"));
    CHECK(has(s, "warn-any") && !has(s, "info-"));
    free(s);

    /* subsystems: a list keeps those, ^ keeps the others; warnings pass whatever it says */
    s = log_with("INFO", "init,Plan", emit_each);
    CHECK(has(s, "info-init") && has(s, "info-plan") && !has(s, "info-coll"));
    CHECK(has(s, "warn-any") && !has(s, "set by environment")); /* ENV is not listed */
    free(s);
    s = log_with("INFO", "^INIT,ENV", emit_each);
    CHECK(!has(s, "info-init") && has(s, "info-coll") && has(s, "info-plan"));
    CHECK(!has(s, "set by environment"));
    free(s);
    s = log_with("TRACE", "ENV", emit_each);
    CHECK(!has(s, "info-") && !has(s, "trace-coll") && has(s, "warn-any"));
    CHECK(has(s, "WEFT_DEBUG set by environment to TRACE\n"));
    CHECK(has(s, "WEFT_DEBUG_SUBSYS set by environment to ENV\n"));
    free(s);
    s = log_with("INFO", "INIT,bogus,COLL", emit_each); /* unknown names: said, the rest kept */
    CHECK(has(s, " weft WARN WEFT_DEBUG_SUBSYS: bogus ignored: not a subsystem (INIT, COLL, "));
    CHECK(has(s, "info-init") && has(s, "info-coll") && !has(s, "info-plan"));
    free(s);

    char *bad = NULL;
    CHECK(weft_log_subsys_parse("ALL", &bad) == WEFT_SUBSYS_ALL && bad == NULL);
    CHECK(weft_log_subsys_parse("^ALL", NULL) == 0);
    CHECK(weft_log_subsys_parse("^", NULL) == WEFT_SUBSYS_ALL);
    CHECK(weft_log_subsys_parse("coll,,REG,", &bad) == (WEFT_SUBSYS_COLL | WEFT_SUBSYS_REG));
    CHECK(bad == NULL);
    CHECK(weft_log_subsys_parse("^profile", NULL) == (WEFT_SUBSYS_ALL & ~WEFT_SUBSYS_PROFILE));
    CHECK(weft_log_subsys_parse("x,INIT,a-very-long-name-of-no-subsystem-at-all", &bad) ==
          WEFT_SUBSYS_INIT);
    CHECK_STR(bad, "x,a-very-long-name-of-no-subsystem-at-all");
    free(bad);
    CHECK_STR(weft_log_subsys_name(WEFT_SUBSYS_ID_PROFILE), "PROFILE");
}

static void test_out(void) {
    char dir[] = "/tmp/weft-out-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char *target = weft_asprintf("%s/t.txt", dir), *victim = weft_asprintf("%s/victim", dir);
    char *planted[3], *name = NULL, *data = NULL;
    size_t len = 0;
    CHECK(weft_write_file(victim, 0, "keep\n", 5, NULL) == WEFT_OK);
    /* the names seed 42 tries first, each a link to the victim */
    for (int i = 0; i < 3; i++) {
        planted[i] = weft_out_tmp_name(target, weft_hash64(42 + (uint64_t)i));
        CHECK(symlink(victim, planted[i]) == 0);
    }
    int fd = weft_out_tmp_create(target, 0600, 42, &name);
    CHECK(fd >= 0);
    if (fd >= 0) {
        CHECK(write(fd, "new\n", 4) == 4);
        close(fd);
    }
    for (int i = 0; i < 3; i++) {
        struct stat st;
        CHECK(lstat(planted[i], &st) == 0 && S_ISLNK(st.st_mode));
        CHECK(name == NULL || strcmp(name, planted[i]) != 0);
        unlink(planted[i]);
        free(planted[i]);
    }
    CHECK(weft_read_file(victim, &data, &len, NULL) == WEFT_OK);
    CHECK_STR(data, "keep\n");
    WEFT_FREE(data);
    if (name) unlink(name);
    free(name);

    /* modes: new from the umask, old kept */
    mode_t old = umask(027);
    CHECK(weft_write_file(target, 0, "a", 1, NULL) == WEFT_OK);
    struct stat st;
    CHECK(stat(target, &st) == 0 && (st.st_mode & 0777) == 0640);
    CHECK(chmod(target, 0604) == 0);
    CHECK(weft_write_file(target, 0, "b", 1, NULL) == WEFT_OK);
    CHECK(stat(target, &st) == 0 && (st.st_mode & 0777) == 0604);
    umask(old);

    /* through a link (relative, two hops) to its target; the links stay links */
    char *l1 = weft_asprintf("%s/l1", dir), *l2 = weft_asprintf("%s/l2", dir);
    CHECK(symlink("t.txt", l2) == 0 && symlink("l2", l1) == 0);
    CHECK(weft_write_file(l1, 0, "c", 1, NULL) == WEFT_OK);
    CHECK(lstat(l1, &st) == 0 && S_ISLNK(st.st_mode));
    CHECK(weft_read_file(target, &data, &len, NULL) == WEFT_OK);
    CHECK_STR(data, "c");
    WEFT_FREE(data);

    /* an abandoned output: the target as it was, no temporary left */
    weft_out *o = NULL;
    CHECK(weft_out_open(target, 0, &o, NULL) == WEFT_OK);
    if (o) fputs("half", weft_out_file(o));
    weft_out_abort(o);
    CHECK(weft_read_file(target, &data, &len, NULL) == WEFT_OK);
    CHECK_STR(data, "c");
    WEFT_FREE(data);

    /* a directory cannot be the output */
    weft_diag *d = weft_diag_new();
    CHECK(weft_write_file(dir, 0, "x", 1, d) == WEFT_ERR_SYSTEM);
    CHECK(weft_diag_size(d) == 1 && strstr(weft_diag_get(d, 0)->msg, "directory") != NULL);
    weft_diag_free(d);

    unlink(l1), unlink(l2), unlink(target), unlink(victim);
    CHECK(rmdir(dir) == 0); /* nothing else left behind */
    free(l1), free(l2), free(target), free(victim);
}

int main(void) {
    CHECK_STR(weft_result_str(WEFT_OK), "success");
    CHECK_STR(weft_result_str(WEFT_ERR_TIMEOUT), "timed out");
    CHECK_STR(weft_result_str((weft_result)999), "unknown result");
    test_diag();
    test_env();
    test_log();
    test_out();
    CHECK_DONE();
}
