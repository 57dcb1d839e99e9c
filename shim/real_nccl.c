/* real_nccl.c — finds the real NCCL behind libweft_nccl.so and resolves its entry points. */
#define _GNU_SOURCE /* RTLD_NEXT, RTLD_NOLOAD, dladdr */
#include "shim_internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static shim_real real;
static pthread_once_t real_once = PTHREAD_ONCE_INIT;

static const char *const fn_names[] = {
#define WEFT_X_(rk, how, name, params, args) "nccl" #name,
    WEFT_NCCL_API(WEFT_X_)
#undef WEFT_X_
};

const char *shim_fn_name(shim_fn fn) {
    return (unsigned)fn < SHIM_FN_COUNT ? fn_names[fn] : "?";
}

/* The library a symbol address belongs to, or NULL. */
static const void *object_base(const void *addr, const char **file) {
    Dl_info info;
    if (addr == NULL || dladdr(addr, &info) == 0) return NULL;
    if (file) *file = info.dli_fname;
    return info.dli_fbase;
}

/* The handle of the library that defines the first pncclGetVersion after this one, so that
 * every entry point comes from the same NCCL even when a process has two. */
static void *next_nccl(const char **why) {
    void *p = dlsym(RTLD_NEXT, "pncclGetVersion");
    if (p == NULL) {
        /* Linked without libnccl (only libweft_nccl): load the NCCL the dynamic linker finds. */
        void *h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_GLOBAL);
        if (h == NULL) *why = "no libnccl.so.2 is loaded in the process or found by the linker";
        return h;
    }
    const char *file = NULL;
    if (object_base(p, &file) == NULL || file == NULL) return RTLD_NEXT;
    void *h = dlopen(file, RTLD_NOW | RTLD_NOLOAD);
    return h ? h : RTLD_NEXT;
}

static void resolve(void) {
    const char *why = NULL;
    const char *lib = weft_env_get(WEFT_ENV_NCCL_LIB);
    void *h;
    if (*lib) {
        /* An explicit choice: when it cannot be loaded, no other NCCL is guessed. */
        h = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);
        if (h == NULL) why = dlerror();
    } else {
        h = next_nccl(&why);
    }
    /* POSIX guarantees that a dlsym result converts to a function pointer; memcpy says so
     * without a cast between object and function pointer types. */
#define WEFT_X_(rk, how, name, params, args)                                                       \
    if (h) {                                                                                       \
        void *s_ = dlsym(h, "pnccl" #name);                                                        \
        memcpy(&real.name, &s_, sizeof s_);                                                        \
    }
    WEFT_NCCL_API(WEFT_X_)
#undef WEFT_X_
    if (h) {
        real.DevCommCreate = dlsym(h, "pncclDevCommCreate");
        real.DevCommDestroy = dlsym(h, "pncclDevCommDestroy");
        real.TeamLsa = dlsym(h, "pncclTeamLsa");
    }
    const char *file = NULL;
    const void *self = object_base((const void *)&resolve, NULL);
    void *gv = NULL;
    memcpy(&gv, &real.GetVersion, sizeof gv);
    const void *base = object_base(gv, &file);
    if (h && real.GetVersion == NULL) why = "it has no pncclGetVersion";
    if (h && base != NULL && base == self)
        why = "it resolves to libweft_nccl.so itself (is the shim installed as libnccl.so.2?)";
    if (why || h == NULL) {
        memset(&real, 0, sizeof real);
        WEFT_WARN("cannot find the real NCCL%s%s: %s; every NCCL call fails with "
                  "ncclSystemError (set WEFT_NCCL_LIB to the path of libnccl.so.2)",
                  *lib ? " at WEFT_NCCL_LIB=" : "", lib, why ? why : "unknown reason");
        return;
    }
    snprintf(real.path, sizeof real.path, "%s", file ? file : (*lib ? lib : "libnccl.so.2"));
    real.found = 1;
}

const shim_real *shim_real_get(void) {
    pthread_once(&real_once, resolve);
    return &real;
}

static unsigned char missing_warned[SHIM_FN_COUNT];

static int missing_first(shim_fn fn) {
    if ((unsigned)fn >= SHIM_FN_COUNT) return 0;
    return __atomic_exchange_n(&missing_warned[fn], 1, __ATOMIC_RELAXED) == 0;
}

ncclResult_t shim_missing_res(shim_fn fn) {
    if (!shim_real_get()->found) return ncclSystemError;
    if (missing_first(fn)) {
        int v = 0;
        real.GetVersion(&v);
        WEFT_WARN("%s: the real NCCL (%s, version %d) does not provide it; returning "
                  "ncclInvalidUsage",
                  shim_fn_name(fn), real.path, v);
    }
    return ncclInvalidUsage;
}

const char *shim_missing_str(shim_fn fn) {
    (void)shim_missing_res(fn);
    return shim_real_get()->found ? "function not provided by this NCCL (libweft_nccl.so)"
                                  : "the real NCCL was not found (libweft_nccl.so)";
}

void shim_missing_void(shim_fn fn) {
    (void)shim_missing_res(fn);
}
