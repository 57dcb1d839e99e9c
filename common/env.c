/* env.c — the environment and the log, which configure each other: the one place weft reads
 * environment variables (cached, aliased, logged when set), leveled logging to stderr or
 * WEFT_DEBUG_FILE in the "host:pid weft LEVEL msg" shape, and the failure trail of the CHECK
 * macros. */
#include "weft_common.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static const struct {
    const char *name, *alias;
} env_table[] = {
#define WEFT_X_(id, n, a, h) {n, a},
    WEFT_ENV_VARS(WEFT_X_)
#undef WEFT_X_
};

static pthread_mutex_t env_lock = PTHREAD_MUTEX_INITIALIZER;
static char *env_value[WEFT_ENV_COUNT];
static unsigned char env_cached[WEFT_ENV_COUNT];
static unsigned char env_from_alias[WEFT_ENV_COUNT];

const char *weft_env_name(weft_env_id id) {
    return (unsigned)id < WEFT_ENV_COUNT ? env_table[id].name : "?";
}

/* Reads and caches an environment variable without logging it (the logger's own bootstrap);
 * *first, when not NULL, says whether this call did the read. */
static const char *env_get_quiet(weft_env_id id, int *first) {
    if ((unsigned)id >= WEFT_ENV_COUNT) return "";
    pthread_mutex_lock(&env_lock);
    if (first) *first = 0;
    if (!env_cached[id]) {
        const char *v = getenv(env_table[id].name);
        env_from_alias[id] = 0;
        if ((v == NULL || *v == '\0') && env_table[id].alias) {
            v = getenv(env_table[id].alias);
            env_from_alias[id] = v != NULL && *v != '\0';
        }
        env_value[id] = weft_strdup(v ? v : "");
        env_cached[id] = 1;
        if (first) *first = 1;
    }
    const char *r = env_value[id] ? env_value[id] : "";
    pthread_mutex_unlock(&env_lock);
    return r;
}

const char *weft_env_get(weft_env_id id) {
    int first = 0;
    const char *v = env_get_quiet(id, &first);
    if (first && *v) {
        if (env_from_alias[id])
            WEFT_INFO("%s set by environment to %s (as %s)", env_table[id].alias, v,
                      env_table[id].name);
        else
            WEFT_INFO("%s set by environment to %s", env_table[id].name, v);
    }
    return v;
}

int weft_env_is_set(weft_env_id id) {
    return *weft_env_get(id) != '\0';
}

long long weft_env_int(weft_env_id id, long long def) {
    const char *v = weft_env_get(id);
    if (*v == '\0') return def;
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 0);
    if (errno || *end != '\0') {
        WEFT_WARN("%s=%s is not an integer; using %lld", weft_env_name(id), v, def);
        return def;
    }
    return x;
}

void weft_env_reset(void) {
    pthread_mutex_lock(&env_lock);
    for (int i = 0; i < WEFT_ENV_COUNT; i++) {
        free(env_value[i]);
        env_value[i] = NULL;
        env_cached[i] = 0;
    }
    pthread_mutex_unlock(&env_lock);
    weft_log_reset();
}

/* ---- the log ----------------------------------------------------------------------------- */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static int log_ready;
static weft_log_level log_level = WEFT_LOG_WARN;
static FILE *log_out;
static char log_host[64];

static const char *const level_names[] = {
#define WEFT_X_(n, t) t,
    WEFT_LOG_LEVELS(WEFT_X_)
#undef WEFT_X_
};

/* Expands %h (host) and %p (pid) as NCCL_DEBUG_FILE does, so per-rank files are easy. */
static FILE *open_log_file(const char *pattern) {
    char path[4096];
    size_t o = 0;
    for (const char *p = pattern; *p && o + 64 < sizeof path; p++) {
        if (p[0] == '%' && p[1] == 'h') {
            o += (size_t)snprintf(path + o, sizeof path - o, "%s", log_host);
            p++;
        } else if (p[0] == '%' && p[1] == 'p') {
            o += (size_t)snprintf(path + o, sizeof path - o, "%d", (int)getpid());
            p++;
        } else {
            path[o++] = *p;
        }
    }
    path[o] = '\0';
    return fopen(path, "a");
}

static void log_init_locked(void) {
    if (log_ready) return;
    gethostname(log_host, sizeof log_host - 1);
    const char *lvl = env_get_quiet(WEFT_ENV_DEBUG, NULL);
    log_level = WEFT_LOG_WARN;
    for (int i = 0; i < (int)(sizeof level_names / sizeof *level_names); i++)
        if (strcasecmp(lvl, level_names[i]) == 0) log_level = (weft_log_level)i;
    if (strcasecmp(lvl, "VERSION") == 0) log_level = WEFT_LOG_WARN;
    const char *file = env_get_quiet(WEFT_ENV_DEBUG_FILE, NULL);
    log_out = NULL;
    if (*file) log_out = open_log_file(file);
    if (log_out) setvbuf(log_out, NULL, _IOLBF, 0);
    log_ready = 1;
}

weft_log_level weft_log_level_get(void) {
    if (!__atomic_load_n(&log_ready, __ATOMIC_ACQUIRE)) {
        pthread_mutex_lock(&log_lock);
        int fresh = !log_ready;
        log_init_locked();
        pthread_mutex_unlock(&log_lock);
        if (fresh) {
            const char *lvl = env_get_quiet(WEFT_ENV_DEBUG, NULL);
            const char *file = env_get_quiet(WEFT_ENV_DEBUG_FILE, NULL);
            if (*lvl) weft_log(WEFT_LOG_INFO, "WEFT_DEBUG set by environment to %s", lvl);
            if (*file) weft_log(WEFT_LOG_INFO, "WEFT_DEBUG_FILE set by environment to %s", file);
        }
    }
    return log_level;
}

void weft_log(weft_log_level lvl, const char *fmt, ...) {
    if (lvl == WEFT_LOG_NONE || lvl > weft_log_level_get()) return;
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&log_lock);
    FILE *out = log_out ? log_out : stderr;
    fprintf(out, "%s:%d weft %s %s\n", log_host, (int)getpid(), level_names[lvl], msg);
    fflush(out);
    pthread_mutex_unlock(&log_lock);
}

void weft_log_reset(void) {
    pthread_mutex_lock(&log_lock);
    if (log_out) fclose(log_out);
    log_out = NULL;
    __atomic_store_n(&log_ready, 0, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&log_lock);
}

void weft_trace_failure(const char *file, int line, weft_result r) {
    WEFT_TRACE("%s:%d -> %s", file, line, weft_result_str(r));
}
