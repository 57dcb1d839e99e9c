/* env.c — the one place weft reads environment variables: cached, aliased, logged when set. */
#include "common_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

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

const char *weft_env_get_quiet(weft_env_id id, int *first) {
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
    const char *v = weft_env_get_quiet(id, &first);
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
