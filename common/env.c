/* env.c — the environment and the log, which configure each other: the one place weft reads
 * environment variables (cached, aliased, logged when set), logging filtered by level and
 * subsystem to stderr or WEFT_DEBUG_FILE in NCCL's "host:pid:tid [dev] weft LEVEL msg" shape,
 * and the failure trail of the CHECK macros. */
#include "weft_common.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

static const struct {
    const char *name, *alias, *help;
    int kind;
} env_table[] = {
#define WEFT_X_(id, n, a, h, k) {n, a, h, k},
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
const char *weft_env_help(weft_env_id id) {
    return (unsigned)id < WEFT_ENV_COUNT ? env_table[id].help : "";
}
int weft_env_kind(weft_env_id id) {
    return (unsigned)id < WEFT_ENV_COUNT ? env_table[id].kind : WEFT_ENVK_TEXT;
}

static int env_integer(const char *v, long long lo) {
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    return end != v && *end == '\0' && !errno && x >= lo;
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
            WEFT_INFO(WEFT_SUBSYS_ENV, "%s set by environment to %s (as %s)", env_table[id].alias,
                      v, env_table[id].name);
        else
            WEFT_INFO(WEFT_SUBSYS_ENV, "%s set by environment to %s", env_table[id].name, v);
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
static unsigned log_mask = WEFT_SUBSYS_ALL;
static FILE *log_out;
static char log_host[64];
static int (*log_device_fn)(void);

static const char *const level_names[] = {
#define WEFT_X_(n, t) t,
    WEFT_LOG_LEVELS(WEFT_X_)
#undef WEFT_X_
};
static const char *const subsys_names[] = {WEFT_LOG_SUBSYSTEMS(WEFT_X_COL2)};
#define NLEVELS ((int)(sizeof level_names / sizeof *level_names))

const char *weft_log_subsys_name(weft_log_subsys_id id) {
    return weft_name_of(subsys_names, WEFT_SUBSYS_COUNT, (int)id);
}

/* NCCL_DEBUG_SUBSYS's grammar: names separated by commas, case ignored, ALL for every one; a
 * leading ^ turns the list into the ones left out. */
unsigned weft_log_subsys_parse(const char *spec, char **bad) {
    if (bad) *bad = NULL;
    int invert = spec[0] == '^';
    if (invert) spec++;
    unsigned mask = 0;
    weft_sb unknown = {0};
    const char *p = spec;
    while (*p) {
        size_t n = strcspn(p, ",");
        char name[32];
        if (n > 0 && n < sizeof name) {
            memcpy(name, p, n);
            name[n] = '\0';
            int k = weft_name_find(subsys_names, WEFT_SUBSYS_COUNT, name, 1);
            if (k >= 0)
                mask |= 1u << k;
            else if (strcasecmp(name, "ALL") == 0)
                mask |= WEFT_SUBSYS_ALL;
            else
                weft_sb_printf(&unknown, "%s%s", unknown.n ? "," : "", name);
        } else if (n > 0) {
            weft_sb_printf(&unknown, "%s%.*s", unknown.n ? "," : "", (int)n, p);
        }
        p += n;
        if (*p == ',') p++;
    }
    if (bad && unknown.n) *bad = weft_strdup(weft_sb_str(&unknown));
    free(unknown.p);
    return invert ? WEFT_SUBSYS_ALL & ~mask : mask;
}

void weft_log_set_device_fn(int (*fn)(void)) {
    __atomic_store_n(&log_device_fn, fn, __ATOMIC_RELEASE);
}

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

/* What the settings' bootstrap found wrong, said once the log can be written. */
typedef struct log_complaints {
    int bad_level;
    char *bad_subsys;
} log_complaints;

static void log_init_locked(log_complaints *c) {
    if (log_ready) return;
    gethostname(log_host, sizeof log_host - 1);
    const char *lvl = env_get_quiet(WEFT_ENV_DEBUG, NULL);
    log_level = WEFT_LOG_WARN;
    if (*lvl) {
        int k = weft_name_find(level_names, NLEVELS, lvl, 1);
        if (k >= 0)
            log_level = (weft_log_level)k;
        else
            c->bad_level = 1;
    }
    const char *subsys = env_get_quiet(WEFT_ENV_DEBUG_SUBSYS, NULL);
    log_mask = *subsys ? weft_log_subsys_parse(subsys, &c->bad_subsys) : WEFT_SUBSYS_ALL;
    const char *file = env_get_quiet(WEFT_ENV_DEBUG_FILE, NULL);
    log_out = NULL;
    if (*file) log_out = open_log_file(file);
    if (log_out) setvbuf(log_out, NULL, _IOLBF, 0);
    __atomic_store_n(&log_ready, 1, __ATOMIC_RELEASE);
}

/* The log's own variables are read before the log exists (weft_env_get would log through it),
 * so they are logged here, once, like every other variable. */
static void log_settings(const log_complaints *c) {
    static const weft_env_id own[] = {WEFT_ENV_DEBUG, WEFT_ENV_DEBUG_SUBSYS, WEFT_ENV_DEBUG_FILE};
    for (size_t i = 0; i < sizeof own / sizeof *own; i++) {
        const char *v = env_get_quiet(own[i], NULL);
        if (*v) WEFT_INFO(WEFT_SUBSYS_ENV, "%s set by environment to %s", weft_env_name(own[i]), v);
    }
    if (c->bad_level)
        WEFT_WARN("WEFT_DEBUG=%s is not a level (NONE, VERSION, WARN, INFO, TRACE); using WARN",
                  env_get_quiet(WEFT_ENV_DEBUG, NULL));
    if (c->bad_subsys) {
        weft_sb known = {0};
        for (int i = 0; i < WEFT_SUBSYS_COUNT; i++)
            weft_sb_printf(&known, "%s, ", subsys_names[i]);
        WEFT_WARN("WEFT_DEBUG_SUBSYS: %s ignored: not a subsystem (%sALL)", c->bad_subsys,
                  weft_sb_str(&known));
        free(known.p);
    }
}

static void log_ensure(void) {
    if (__atomic_load_n(&log_ready, __ATOMIC_ACQUIRE)) return;
    log_complaints c = {0, NULL};
    pthread_mutex_lock(&log_lock);
    int fresh = !log_ready;
    log_init_locked(&c);
    pthread_mutex_unlock(&log_lock);
    if (fresh) log_settings(&c);
    free(c.bad_subsys);
}

weft_log_level weft_log_level_get(void) {
    log_ensure();
    return log_level;
}

unsigned weft_log_subsys_get(void) {
    log_ensure();
    return log_mask;
}

int weft_log_enabled(weft_log_level lvl, unsigned subsys) {
    log_ensure();
    if (lvl == WEFT_LOG_NONE || lvl > log_level) return 0;
    /* as NCCL: warnings and the version line whatever the subsystems */
    return lvl <= WEFT_LOG_WARN || (subsys & log_mask) != 0;
}

static void log_line(const char *level, const char *msg) {
    int (*devfn)(void) = __atomic_load_n(&log_device_fn, __ATOMIC_ACQUIRE);
    int dev = devfn ? devfn() : -1;
    char devs[16] = "-";
    if (dev >= 0) snprintf(devs, sizeof devs, "%d", dev);
    long tid = (long)syscall(SYS_gettid);
    pthread_mutex_lock(&log_lock);
    FILE *out = log_out ? log_out : stderr;
    fprintf(out, "%s:%d:%ld [%s] weft %s %s\n", log_host, (int)getpid(), tid, devs, level, msg);
    fflush(out);
    pthread_mutex_unlock(&log_lock);
}

void weft_log(weft_log_level lvl, unsigned subsys, const char *fmt, ...) {
    if (!weft_log_enabled(lvl, subsys)) return;
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    log_line(weft_name_of(level_names, NLEVELS, lvl), msg);
}

void weft_log_report(const char *fmt, ...) {
    log_ensure();
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    log_line("REPORT", msg);
}

void weft_log_reset(void) {
    pthread_mutex_lock(&log_lock);
    if (log_out) fclose(log_out);
    log_out = NULL;
    __atomic_store_n(&log_ready, 0, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&log_lock);
}

void weft_trace_failure(const char *file, int line, weft_result r) {
    WEFT_TRACE(WEFT_SUBSYS_CALL, "%s:%d -> %s", file, line, weft_result_str(r));
}

const char *weft_env_check(weft_env_id id, const char *v) {
    if (v == NULL || *v == '\0') return NULL;
    switch (weft_env_kind(id)) {
    case WEFT_ENVK_FLAG: return strcmp(v, "0") == 0 || strcmp(v, "1") == 0 ? NULL : "not 0 or 1";
    case WEFT_ENVK_MS: return env_integer(v, 0) ? NULL : "not a whole number of milliseconds >= 0";
    case WEFT_ENVK_COUNT: return env_integer(v, 1) ? NULL : "not a whole number >= 1";
    case WEFT_ENVK_LEVEL:
        return weft_name_find(level_names, NLEVELS, v, 1) >= 0
                   ? NULL
                   : "not a level (NONE, VERSION, WARN, INFO, TRACE)";
    case WEFT_ENVK_SUBSYS: {
        char *bad = NULL;
        weft_log_subsys_parse(v, &bad);
        int ok = bad == NULL;
        free(bad);
        return ok ? NULL : "names a subsystem weft does not have (INIT,COLL,ENV,PLAN,REG,...; ALL)";
    }
    case WEFT_ENVK_AUTO01:
        return strcmp(v, "auto") == 0 || strcmp(v, "0") == 0 || strcmp(v, "1") == 0
                   ? NULL
                   : "not auto, 0 or 1";
    default: return NULL;
    }
}
