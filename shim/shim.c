/* shim.c — libweft_nccl.so: exports the NCCL C API; collectives an algorithm fits run on weft,
 * everything else goes to the real NCCL unchanged. */
#include "report.h"
#include "shim_internal.h"
#include "weft_select.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define SHIM_EXPORT __attribute__((visibility("default")))

/* ---- re-entry guard ----------------------------------------------------------------------- *
 * libnccl calls a few of its own public functions through its PLT (ncclBcast calls
 * ncclBroadcast, ncclCommInitAll calls ncclGetUniqueId, ...); with this library first in the
 * lookup order those calls land here. Whatever this thread calls while it is inside NCCL or
 * inside weft goes straight to NCCL: no selection, no group or communicator bookkeeping. */
static _Thread_local int tls_in_nccl;

#define REAL_CALL(res, fn, args)                                                                   \
    do {                                                                                           \
        const shim_real *n_ = shim_real_get();                                                     \
        if (n_->fn == NULL) {                                                                      \
            (res) = shim_missing_res(SHIM_FN_##fn);                                                \
        } else {                                                                                   \
            tls_in_nccl++;                                                                         \
            (res) = n_->fn args;                                                                   \
            tls_in_nccl--;                                                                         \
        }                                                                                          \
    } while (0)

/* ---- pass-through functions: generated from the table ------------------------------------- */
#define SHIM_CALL_RES(fn, args) return n_->fn args
#define SHIM_CALL_STR(fn, args) return n_->fn args
#define SHIM_CALL_VOID(fn, args)                                                                   \
    n_->fn args;                                                                                   \
    return
#define SHIM_MISSING_RES(fn) return shim_missing_res(SHIM_FN_##fn)
#define SHIM_MISSING_STR(fn) return shim_missing_str(SHIM_FN_##fn)
#define SHIM_MISSING_VOID(fn)                                                                      \
    shim_missing_void(SHIM_FN_##fn);                                                               \
    return

#define SHIM_DEFINE_PASS(rk, name, params, args)                                                   \
    SHIM_EXPORT WEFT_NCCL_RET_##rk pnccl##name params {                                            \
        const shim_real *n_ = shim_real_get();                                                     \
        if (n_->name == NULL) {                                                                    \
            SHIM_MISSING_##rk(name);                                                               \
        }                                                                                          \
        SHIM_CALL_##rk(name, args);                                                                \
    }
#define SHIM_DEFINE_OWN(rk, name, params, args)
#define SHIM_DEFINE_COLL(rk, name, params, args)
#define WEFT_X_(rk, how, name, params, args) SHIM_DEFINE_##how(rk, name, params, args)
WEFT_NCCL_API(WEFT_X_)
#undef WEFT_X_

/* ncclX is a weak alias of pncclX, as in libnccl: a profiling layer that defines ncclX and calls
 * pncclX still reaches weft. */
#define WEFT_X_(rk, how, name, params, args)                                                       \
    SHIM_EXPORT WEFT_NCCL_RET_##rk nccl##name params __attribute__((weak, alias("pnccl" #name)));
WEFT_NCCL_API(WEFT_X_)
#undef WEFT_X_

/* ---- process state ------------------------------------------------------------------------ */
static pthread_once_t shim_once = PTHREAD_ONCE_INIT;
static int shim_serving;         /* set once: weft may serve calls in this process */
static const char *shim_off_why; /* static: why not, for WEFT_REPORT */
static weft_registry *shim_reg;  /* the files, loaded once, kept for the life of the process */
static weft_nccl_api shim_api;   /* the real NCCL as the runtime sees it */

/* Problems with algorithm files: errors, and the notes saying a file was skipped, at WARN;
 * warnings (limits of other MSCCL runtimes, algorithms that can never be selected) at INFO. */
static void log_diag(const weft_diag *d) {
    for (size_t i = 0; i < weft_diag_size(d); i++) {
        const weft_diag_entry *e = weft_diag_get(d, i);
        char *s = weft_diag_format(e);
        if (s == NULL) continue;
        if (e->sev == WEFT_SEV_ERROR || e->sev == WEFT_SEV_NOTE)
            WEFT_WARN("%s", s);
        else
            WEFT_INFO(WEFT_SUBSYS_INIT, "%s", s);
        free(s);
    }
}

static void log_algos(const weft_registry *reg, const char *what) {
    for (size_t i = 0; i < weft_registry_size(reg); i++) {
        const weft_algo *a = weft_registry_get(reg, i);
        char range[96];
        int o;
        if (a->max_bytes)
            o = snprintf(range, sizeof range, "[%lld, %lld]", (long long)a->min_bytes,
                         (long long)a->max_bytes);
        else
            o = snprintf(range, sizeof range, "[%lld, unbounded]", (long long)a->min_bytes);
        if (a->graph_max_bytes && o > 0 && o < (int)sizeof range)
            snprintf(range + o, sizeof range - (size_t)o, ", in CUDA graphs up to %lld",
                     (long long)a->graph_max_bytes);
        WEFT_INFO(WEFT_SUBSYS_INIT,
                  "%salgorithm %zu: '%s' %s on %d ranks, %s, %s%s%s, bytes %s (%s)", what, i,
                  a->name, weft_coll_name(a->coll), (int)a->ngpus, weft_proto_name(a->proto),
                  a->inplace ? "in-place" : "", a->inplace && a->outofplace ? " and " : "",
                  a->outofplace ? "out-of-place" : "", range, a->file ? a->file : "in memory");
    }
}

static void shim_init(void) {
    const shim_real *n = shim_real_get();
    /* Checked before anything touches NCCL, so that these runs make exactly the application's
     * NCCL calls and no others. */
    shim_off_why = "the real NCCL was not found";
    if (weft_env_int(WEFT_ENV_DISABLE, 0) != 0) {
        shim_off_why = "WEFT_DISABLE is set";
        WEFT_INFO(WEFT_SUBSYS_INIT, "WEFT_DISABLE is set: every call goes to NCCL (%s)", n->path);
        return;
    }
    const char *dir = weft_env_get(WEFT_ENV_ALGO_DIR);
    if (!*dir) {
        shim_off_why = "WEFT_ALGO_DIR is not set";
        WEFT_INFO(WEFT_SUBSYS_INIT, "WEFT_ALGO_DIR is not set: every call goes to NCCL (%s)",
                  n->path);
        return;
    }
    if (!n->found) return; /* already reported */
    int version = 0;
    if (n->GetVersion(&version) != ncclSuccess || !weft_nccl_version_supported(version)) {
        char advice[640];
        shim_off_why = "this NCCL's version is outside weft's range (see the WARN)";
        WEFT_WARN("weft is off, every call goes to NCCL (%s): %s", n->path,
                  weft_nccl_version_advice(version, advice, sizeof advice));
        return;
    }
    /* The runtime gets NCCL first: from then on the log's [dev] is the thread's device. */
#define WEFT_X_(ret, name, args) shim_api.name = n->name;
    WEFT_NCCL_FUNCS(WEFT_X_)
#undef WEFT_X_
    shim_api.DevCommCreate = n->DevCommCreate;
    shim_api.DevCommDestroy = n->DevCommDestroy;
    shim_api.TeamLsa = n->TeamLsa;
    weft_shim_backend.set_nccl_api(&shim_api);
    /* NCCL's "NCCL version" line: logged from WEFT_DEBUG=VERSION up */
    weft_log(WEFT_LOG_VERSION, WEFT_SUBSYS_INIT,
             "weft %s: libweft_nccl.so over NCCL %d from %s, runtime '%s'", WEFT_VERSION_STRING,
             version, n->path, weft_shim_backend.name);
    weft_diag *d = weft_diag_new();
    if (weft_registry_new(&shim_reg) != WEFT_OK || d == NULL ||
        weft_registry_load(shim_reg, dir, d) != WEFT_OK) {
        WEFT_WARN("cannot load algorithms from %s (out of memory): every call goes to NCCL", dir);
        shim_off_why = "out of memory loading the algorithms";
        weft_registry_free(shim_reg);
        shim_reg = NULL;
        weft_diag_free(d);
        return;
    }
    log_diag(d);
    weft_diag_free(d);
    log_algos(shim_reg, "");
    if (weft_registry_size(shim_reg) == 0) {
        shim_off_why = "no algorithm loaded from WEFT_ALGO_DIR";
        WEFT_INFO(WEFT_SUBSYS_INIT, "no algorithm loaded from %s: every call goes to NCCL", dir);
        return;
    }
    shim_serving = 1;
}

/* Whether weft takes part at all; decided once, identically on every rank of a job that shares
 * its environment. */
static int shim_on(void) {
    pthread_once(&shim_once, shim_init);
    return shim_serving;
}

/* ---- communicators ------------------------------------------------------------------------ */
typedef struct shim_comm {
    ncclComm_t comm;
    weft_comm *owned;         /* weft's state for it, released at finalize/destroy */
    weft_comm *serve;         /* == owned while weft may serve calls; NULL after a failure */
    const weft_registry *reg; /* the algorithms for its rank count */
    const char *why;          /* static: why NCCL serves every call when serve is NULL */
    int nranks, rank, dev, blocking;
    int revoked; /* its teardown must not be collective */
    /* what the algorithms for it can serve at all, so that other calls go to NCCL without the
     * runtime's selection: a bit per collective, and (without a tuning table, whose ranges
     * replace the files') the union of their byte ranges per collective */
    unsigned colls;
    int ranged;
    unsigned long long lo[WEFT_COLL_COUNT], hi[WEFT_COLL_COUNT];
    pthread_mutex_t seen_lock; /* decisions already logged at INFO (see log_decision) */
    uint64_t *seen;
    size_t nseen, capseen;
    struct shim_comm *next;
} shim_comm;

#define SHIM_BUCKETS 256
static shim_comm *comm_table[SHIM_BUCKETS];
static pthread_rwlock_t comm_lock = PTHREAD_RWLOCK_INITIALIZER;
/* Bumped by every insert and remove: a thread's last lookup stays valid while it is unchanged,
 * so the calls of a training loop find their communicator without taking the lock. */
static unsigned long comm_gen;
static _Thread_local struct {
    ncclComm_t comm;
    shim_comm *e;
    unsigned long gen;
} tls_last;

static unsigned comm_bucket(ncclComm_t c) {
    uintptr_t x = (uintptr_t)c;
    x ^= x >> 17;
    x *= 0x9E3779B97F4A7C15ull;
    return (unsigned)(x >> 56) % SHIM_BUCKETS;
}

static shim_comm *comm_find(ncclComm_t c) {
    unsigned long gen = __atomic_load_n(&comm_gen, __ATOMIC_ACQUIRE);
    if (tls_last.comm == c && tls_last.gen == gen && c != NULL) return tls_last.e;
    pthread_rwlock_rdlock(&comm_lock);
    gen = __atomic_load_n(&comm_gen, __ATOMIC_RELAXED); /* stable under the lock */
    shim_comm *e = comm_table[comm_bucket(c)];
    while (e && e->comm != c)
        e = e->next;
    pthread_rwlock_unlock(&comm_lock);
    tls_last.comm = c;
    tls_last.e = e;
    tls_last.gen = gen;
    return e;
}

static shim_comm *comm_remove(ncclComm_t c) {
    pthread_rwlock_wrlock(&comm_lock);
    shim_comm **p = &comm_table[comm_bucket(c)];
    while (*p && (*p)->comm != c)
        p = &(*p)->next;
    shim_comm *e = *p;
    if (e) *p = e->next;
    __atomic_add_fetch(&comm_gen, 1, __ATOMIC_RELEASE);
    pthread_rwlock_unlock(&comm_lock);
    return e;
}

static void comm_free(shim_comm *e) {
    if (e == NULL) return;
    pthread_mutex_destroy(&e->seen_lock);
    free(e->seen);
    free(e);
}

static void comm_insert(shim_comm *e) {
    comm_free(comm_remove(e->comm)); /* a stale entry for a reused address */
    pthread_rwlock_wrlock(&comm_lock);
    unsigned b = comm_bucket(e->comm);
    e->next = comm_table[b];
    comm_table[b] = e;
    __atomic_add_fetch(&comm_gen, 1, __ATOMIC_RELEASE);
    pthread_rwlock_unlock(&comm_lock);
}

/* why is read by callers on any thread while another may change it. */
static void set_why(shim_comm *e, const char *why) {
    __atomic_store_n(&e->why, why, __ATOMIC_RELEASE);
}

static const char *get_why(shim_comm *e) {
    return __atomic_load_n(&e->why, __ATOMIC_ACQUIRE);
}

static weft_comm *comm_serving(shim_comm *e) {
    return e ? __atomic_load_n(&e->serve, __ATOMIC_ACQUIRE) : NULL;
}

/* The algorithms for each rank count met so far: the loaded files' algorithms of that size and
 * the instances of parameterized .weft sources (weft_registry_for_ranks), built once at the first
 * communicator of that size (at the same point on every rank) and kept for the process. */
#define SHIM_MAX_SIZES 64
static pthread_mutex_t sizes_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    int nranks, gpn;    /* ranks, GPUs per node */
    weft_registry *reg; /* NULL: nothing for this size */
} sizes[SHIM_MAX_SIZES];
static int nsizes;

static const weft_registry *registry_for(int nranks, int gpn) {
    const weft_registry *found = NULL;
    pthread_mutex_lock(&sizes_lock);
    for (int i = 0; i < nsizes; i++)
        if (sizes[i].nranks == nranks && sizes[i].gpn == gpn) {
            found = sizes[i].reg;
            goto done;
        }
    if (nsizes == SHIM_MAX_SIZES) {
        WEFT_INFO(WEFT_SUBSYS_INIT, "more than %d communicator sizes: NCCL serves the others",
                  SHIM_MAX_SIZES);
        goto done;
    }
    weft_registry *r = NULL;
    weft_diag *d = weft_diag_new();
    char what[48];
    if (d == NULL || weft_registry_for_nodes(shim_reg, nranks, gpn, &r, d) != WEFT_OK) {
        WEFT_WARN("out of memory instantiating algorithms for %d ranks: NCCL serves them", nranks);
    } else {
        log_diag(d);
        if (gpn < nranks)
            snprintf(what, sizeof what, "for %d ranks in nodes of %d: ", nranks, gpn);
        else
            snprintf(what, sizeof what, "for %d ranks: ", nranks);
        log_algos(r, what);
        /* across nodes, which policy decides: a table measured on this node shape, or the
         * default (the files' own ranges, NCCL the rest) */
        size_t ns = gpn < nranks ? weft_registry_shape_sections(r, nranks) : 0;
        if (gpn < nranks && ns > 0)
            WEFT_INFO(WEFT_SUBSYS_INIT,
                      "%sthe tuning table's %zu sections for this node shape decide the calls they "
                      "cover",
                      what, ns);
        else if (gpn < nranks)
            WEFT_INFO(WEFT_SUBSYS_INIT, "%s" WEFT_SELECT_POLICY_NODES, what);
        if (weft_registry_size(r) == 0) {
            weft_registry_free(r);
            r = NULL;
        }
    }
    weft_diag_free(d);
    sizes[nsizes].nranks = nranks;
    sizes[nsizes].gpn = gpn;
    sizes[nsizes++].reg = r;
    found = r;
done:
    pthread_mutex_unlock(&sizes_lock);
    return found;
}

/* NCCL's default for config.blocking when a config leaves it undefined. */
static int env_blocking(void) {
    return weft_env_int(WEFT_ENV_NCCL_COMM_BLOCKING, 1) != 0;
}

/* config.blocking of a new communicator; inherited is the parent's, or -1 for NCCL's default. */
static int config_blocking(const ncclConfig_t *config, int inherited) {
    if (config && config->blocking != NCCL_CONFIG_UNDEF_INT) return config->blocking != 0;
    if (config == NULL && inherited >= 0) return inherited;
    return env_blocking();
}

/* One collective attach of communicators of one size; reports each one's outcome. */
static void attach_group(int n, ncclComm_t *comms, shim_comm **entries, const weft_registry *reg,
                         weft_comm **out, const char *how) {
    weft_diag *d = weft_diag_new();
    for (int i = 0; i < n; i++)
        out[i] = NULL;
    tls_in_nccl++;
    weft_result res = weft_shim_backend.attach(n, comms, reg, out, d);
    tls_in_nccl--;
    for (int i = 0; i < n; i++) {
        shim_comm *e = entries[i];
        if (res == WEFT_OK && out[i] != NULL) {
            e->owned = out[i];
            __atomic_store_n(&e->serve, out[i], __ATOMIC_RELEASE);
            WEFT_INFO(WEFT_SUBSYS_INIT,
                      "communicator %p rank %d of %d (device %d), from %s: weft attached",
                      (void *)e->comm, e->rank, e->nranks, e->dev, how);
            continue;
        }
        const char *first = NULL;
        if (d && weft_diag_size(d) > 0) first = weft_diag_get(d, 0)->msg;
        set_why(e, "weft could not attach to this communicator");
        if (res == WEFT_ERR_UNSUPPORTED)
            WEFT_INFO(WEFT_SUBSYS_INIT,
                      "communicator %p rank %d of %d (device %d): weft does not support it (%s); "
                      "NCCL serves every call on it",
                      (void *)e->comm, e->rank, e->nranks, e->dev, first ? first : "no reason");
        else
            WEFT_WARN("communicator %p rank %d of %d (device %d): weft could not attach (%s%s%s); "
                      "NCCL serves every call on it",
                      (void *)e->comm, e->rank, e->nranks, e->dev, weft_result_str(res),
                      first ? ": " : "", first ? first : "");
    }
    if (res != WEFT_OK && d && weft_diag_size(d) > 1) {
        for (size_t i = 1; i < weft_diag_size(d); i++) {
            char *s = weft_diag_format(weft_diag_get(d, i));
            if (s) WEFT_INFO(WEFT_SUBSYS_INIT, "  %s", s);
            free(s);
        }
    }
    weft_diag_free(d);
}

/* What e's algorithms can serve at all (shim_comm.colls, .lo, .hi): computed once, read on
 * every call. */
static void comm_filter(shim_comm *e) {
    e->colls = 0;
    e->ranged = weft_registry_table(e->reg) == NULL;
    for (int c = 0; c < WEFT_COLL_COUNT; c++)
        e->lo[c] = ~0ull, e->hi[c] = 0;
    for (size_t i = 0; i < weft_registry_size(e->reg); i++) {
        const weft_algo *a = weft_registry_get(e->reg, i);
        if ((unsigned)a->coll >= WEFT_COLL_COUNT) continue;
        e->colls |= 1u << a->coll;
        unsigned long long lo = a->min_bytes > 0 ? (unsigned long long)a->min_bytes : 0;
        unsigned long long hi = a->max_bytes > 0 ? (unsigned long long)a->max_bytes : ~0ull;
        if (lo < e->lo[a->coll]) e->lo[a->coll] = lo;
        if (hi > e->hi[a->coll]) e->hi[a->coll] = hi;
    }
}

/* Attaches weft to communicators that were just created (all of one ncclGroupEnd or
 * ncclCommInitAll together: the attach is collective, and a thread driving several GPUs must
 * attach their communicators in one call). Every outcome leaves the application's
 * communicators working: a failure means NCCL serves every call on them. */
static void attach_comms(int n, const ncclComm_t *comms, const int *blocking, const char *how) {
    const shim_real *r = shim_real_get();
    ncclComm_t *todo = calloc((size_t)n, sizeof *todo);
    shim_comm **entries = calloc(2 * (size_t)n, sizeof *entries);
    weft_comm **out = calloc((size_t)n, sizeof *out);
    int ntodo = 0;
    if (todo == NULL || entries == NULL || out == NULL) {
        WEFT_WARN("out of memory attaching weft after %s: NCCL serves these communicators", how);
        goto done;
    }
    for (int i = 0; i < n; i++) {
        if (comms[i] == NULL) continue;
        shim_comm *e = calloc(1, sizeof *e);
        if (e == NULL) {
            WEFT_WARN("out of memory: NCCL serves communicator %p", (void *)comms[i]);
            continue;
        }
        pthread_mutex_init(&e->seen_lock, NULL);
        e->comm = comms[i];
        e->blocking = blocking[i];
        e->nranks = e->rank = e->dev = -1;
        tls_in_nccl++;
        if (r->CommCount) r->CommCount(comms[i], &e->nranks);
        if (r->CommUserRank) r->CommUserRank(comms[i], &e->rank);
        if (r->CommCuDevice) r->CommCuDevice(comms[i], &e->dev);
        /* the node structure from NCCL's LSA team: the registry is made for it */
        int gpn = e->nranks;
        weft_diag *qd = e->nranks >= 1 ? weft_diag_new() : NULL;
        weft_result qr =
            qd ? weft_mn_query(&shim_api, comms[i], &e->nranks, &e->rank, &gpn, qd) : WEFT_OK;
        tls_in_nccl--;
        if (qr != WEFT_OK) log_diag(qd);
        weft_diag_free(qd);
        if (!e->blocking)
            e->why = "non-blocking communicator (config.blocking=0): weft is not attached";
        else if (e->nranks < 1)
            e->why = "NCCL did not report the communicator's size";
        else if (qr != WEFT_OK)
            e->why = "NCCL's nodes have a shape weft does not serve (see the log)";
        else if ((e->reg = registry_for(e->nranks, gpn)) == NULL)
            e->why = "no algorithm loaded for this rank count";
        if (e->reg) comm_filter(e);
        comm_insert(e);
        if (e->why) {
            WEFT_INFO(WEFT_SUBSYS_INIT, "communicator %p rank %d of %d (device %d), from %s: %s",
                      (void *)e->comm, e->rank, e->nranks, e->dev, how, e->why);
            continue;
        }
        entries[ntodo] = e;
        todo[ntodo++] = comms[i];
    }
    /* one attach per rank count (communicators of one size share a registry), in order */
    for (int first = 0; first < ntodo; first++) {
        if (entries[first] == NULL) continue;
        const weft_registry *reg = entries[first]->reg;
        int m = 0;
        shim_comm **group = entries + ntodo; /* the second half of entries */
        for (int i = first; i < ntodo; i++) {
            if (entries[i] == NULL || entries[i]->reg != reg) continue;
            group[m] = entries[i];
            todo[m++] = entries[i]->comm;
            if (i != first) entries[i] = NULL;
        }
        entries[first] = NULL;
        attach_group(m, todo, group, reg, out, how);
    }
done:
    free(todo);
    free(entries);
    free(out);
}

/* Releases weft's state of a communicator at a collective point (finalize, destroy). */
static void detach_entry(shim_comm *e, const char *how) {
    if (e == NULL || e->owned == NULL) return;
    __atomic_store_n(&e->serve, NULL, __ATOMIC_RELEASE);
    tls_in_nccl++;
    weft_result res = weft_shim_backend.detach(e->owned);
    tls_in_nccl--;
    e->owned = NULL;
    if (res != WEFT_OK)
        WEFT_WARN("communicator %p: releasing weft's state at %s failed (%s)", (void *)e->comm, how,
                  weft_result_str(res));
    else
        WEFT_INFO(WEFT_SUBSYS_INIT, "communicator %p: weft detached at %s", (void *)e->comm, how);
}

/* ---- groups ------------------------------------------------------------------------------- *
 * Inside ncclGroupStart/End NCCL only records operations and launches them all at the outermost
 * ncclGroupEnd. weft does the same with the calls it serves: it records them and launches them,
 * in call order, right after the real outermost ncclGroupEnd has launched NCCL's part. Every
 * rank does this in the same order, so nothing waits on a peer that has not launched, and no
 * operation of the group overtakes one that NCCL would have run before it (NCCL gives the
 * operations of one group no order among themselves). Communicators created inside a group
 * exist only after its ncclGroupEnd: weft attaches them there, all in one call. */
typedef struct shim_op {
    shim_fn fn;
    weft_coll coll;
    const void *send;
    void *recv;
    size_t count;
    ncclDataType_t dtype;
    ncclRedOp_t op;
    int root;
    ncclComm_t comm;
    cudaStream_t stream;
} shim_op;

typedef struct shim_deferred {
    shim_op op;
    weft_call call;
} shim_deferred;

/* A window registered inside a group: NCCL fills *win at the outermost ncclGroupEnd. */
typedef struct shim_window {
    ncclComm_t comm;
    void *buff;
    size_t size;
    ncclWindow_t *win;
} shim_window;
static _Thread_local shim_window *tls_wins;
static _Thread_local size_t tls_nwins, tls_capwins;

static _Thread_local int tls_depth;
static _Thread_local shim_deferred *tls_ops;
static _Thread_local size_t tls_nops, tls_capops;
static _Thread_local ncclComm_t *tls_new;
static _Thread_local int *tls_new_blocking;
static _Thread_local size_t tls_nnew, tls_capnew, tls_capnewb;

/* ---- collectives -------------------------------------------------------------------------- */
/* The call as NCCL's collective (a COLL row of nccl_api.h, its args in its parameters' names). */
static ncclResult_t real_op(const shim_op *o) {
    ncclResult_t r = ncclInternalError;
    const void *sendbuff = o->send;
    void *recvbuff = o->recv, *buff = o->recv;
    size_t count = o->count, sendcount = o->count, recvcount = o->count;
    ncclDataType_t datatype = o->dtype;
    ncclRedOp_t op = o->op;
    int root = o->root;
    ncclComm_t comm = o->comm;
    cudaStream_t stream = o->stream;
    switch (o->fn) {
#define SHIM_REAL_PASS(name, args)
#define SHIM_REAL_OWN(name, args)
#define SHIM_REAL_COLL(name, args)                                                                 \
    case SHIM_FN_##name:                                                                           \
        REAL_CALL(r, name, args);                                                                  \
        break;
#define WEFT_X_(rk, how, name, params, args) SHIM_REAL_##how(name, args)
        WEFT_NCCL_API(WEFT_X_)
#undef WEFT_X_
    default: break;
    }
    return r;
}

static const char *type_name(ncclDataType_t t) {
    if ((unsigned)t < WEFT_DTYPE_COUNT) return weft_dtype_name((weft_dtype)t);
    if (t == ncclFloat8e4m3) return "fp8e4m3";
    if (t == ncclFloat8e5m2) return "fp8e5m2";
    return "unknown type";
}

static size_t type_size(ncclDataType_t t) {
    if ((unsigned)t < WEFT_DTYPE_COUNT) return (size_t)weft_dtype_size((weft_dtype)t);
    if (t == ncclFloat8e4m3 || t == ncclFloat8e5m2) return 1;
    return 0;
}

static const char *op_name(ncclRedOp_t op) {
    if ((unsigned)op < WEFT_OP_COUNT) return weft_redop_name((weft_redop)op);
    return "PreMulSum/user op";
}

/* The bytes selection compares (weft_coll_footprint). */
static unsigned long long op_bytes(const shim_op *o, int nranks) {
    return weft_coll_footprint(o->coll, (uint64_t)o->count, (uint64_t)type_size(o->dtype), nranks);
}

/* One line per distinct decision at INFO (so that a benchmark's log says which sizes weft
 * served without a line per call), every call at TRACE. */
#define SHIM_SEEN_MAX 4096

static int first_time(shim_comm *e, uint64_t key) {
    if (e == NULL) return 1;
    int first = 0;
    pthread_mutex_lock(&e->seen_lock);
    size_t i = 0;
    for (; i < e->nseen; i++)
        if (e->seen[i] == key) break;
    if (i == e->nseen && e->nseen < SHIM_SEEN_MAX &&
        weft_grow((void **)&e->seen, &e->capseen, e->nseen, sizeof *e->seen) == 0) {
        e->seen[e->nseen++] = key;
        first = 1;
        if (e->nseen == SHIM_SEEN_MAX)
            WEFT_INFO(WEFT_SUBSYS_COLL,
                      "communicator %p: %d distinct calls seen; further ones are logged at TRACE "
                      "only",
                      (void *)e->comm, SHIM_SEEN_MAX);
    }
    pthread_mutex_unlock(&e->seen_lock);
    return first;
}

static uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    return h;
}

/* flags: the call's WEFT_CALL_GRAPH and WEFT_CALL_REGISTERED as selection saw them, or
 * LAUNCH_UNKNOWN where the call never reached selection. */
#define LAUNCH_UNKNOWN (~0u)
static void log_decision(shim_comm *e, const shim_op *o, int inplace, int grouped, unsigned flags,
                         const char *served, const char *why) {
    if (!weft_log_enabled(WEFT_LOG_INFO, WEFT_SUBSYS_COLL)) return;
    int every = weft_log_enabled(WEFT_LOG_TRACE, WEFT_SUBSYS_COLL);
    if (!every) {
        uint64_t key = mix(
            mix(mix(mix(mix(mix(mix(0, (uint64_t)o->fn), (uint64_t)o->count), (uint64_t)o->dtype),
                        (uint64_t)o->op),
                    (uint64_t)inplace),
                (uint64_t)o->root),
            mix((uint64_t)(uintptr_t)(served ? served : why), (uint64_t)flags));
        if (!first_time(e, key)) return;
    }
    char root[32] = "", mode[48] = "";
    if (weft_coll_rooted(o->coll)) snprintf(root, sizeof root, " root %d", o->root);
    if (flags != LAUNCH_UNKNOWN)
        snprintf(mode, sizeof mode, " [%s, %s buffers]",
                 weft_call_flag_word(WEFT_CALL_GRAPH, flags),
                 weft_call_flag_word(WEFT_CALL_REGISTERED, flags));
    weft_log(
        every ? WEFT_LOG_TRACE : WEFT_LOG_INFO, WEFT_SUBSYS_COLL,
        "%s count %zu %s%s%s %s%s bytes %llu comm %p rank %d of %d -> %s%s%s%s%s",
        shim_fn_name(o->fn), o->count, type_name(o->dtype), weft_coll_reduces(o->coll) ? " " : "",
        weft_coll_reduces(o->coll) ? op_name(o->op) : "", inplace ? "in-place" : "out-of-place",
        root, op_bytes(o, e ? e->nranks : 0), (void *)o->comm, e ? e->rank : -1, e ? e->nranks : -1,
        served ? "weft '" : "NCCL: ", served ? served : why, served ? "'" : "", mode,
        grouped ? " (after ncclGroupEnd)" : "");
}

/* NCCL's in-place definitions; a pointer sum that would wrap is simply not in place. */
static int op_inplace(const shim_op *o, int rank) {
    int32_t si, so; /* the segments at which each lies in their one memory (weft_buf_mem) */
    weft_buf_mem(o->coll, 1, rank, WEFT_BUF_INPUT, &si);
    weft_buf_mem(o->coll, 1, rank, WEFT_BUF_OUTPUT, &so);
    unsigned long long seg = (unsigned long long)o->count * type_size(o->dtype);
    uintptr_t s = (uintptr_t)o->send, r = (uintptr_t)o->recv;
    unsigned long long ds = seg * (unsigned long long)si, dr = seg * (unsigned long long)so;
    return s >= ds && r >= dr && s - ds == r - dr;
}

/* Builds the weft call, or says why NCCL must take it. */
static const char *make_call(const shim_op *o, const shim_comm *e, weft_call *c) {
    if (type_size(o->dtype) == 0) return "unknown data type (NCCL reports the error)";
    /* The buffers NCCL requires, those the rank has out of place (weft_buf_exists); a NULL one
     * is NCCL's to report. */
    int need_send = weft_buf_exists(o->coll, o->root, 0, e->rank, WEFT_BUF_INPUT);
    int need_recv = weft_buf_exists(o->coll, o->root, 0, e->rank, WEFT_BUF_OUTPUT);
    if ((need_send && o->send == NULL) || (need_recv && o->recv == NULL))
        return "NULL buffer (NCCL reports the error)";
    memset(c, 0, sizeof *c);
    c->coll = o->coll;
    c->count = o->count;
    c->nranks = e->nranks;
    c->root = weft_coll_rooted(o->coll) ? o->root : 0;
    c->inplace = op_inplace(o, e->rank);
    c->dtype = (weft_dtype)o->dtype;
    c->op = (weft_redop)o->op;
    if (!weft_coll_reduces(o->coll)) {
        /* Data is moved, not combined: any type is its bytes (fp8 as uint8). */
        c->op = WEFT_OP_SUM;
        if (o->dtype == ncclFloat8e4m3 || o->dtype == ncclFloat8e5m2) c->dtype = WEFT_DTYPE_UINT8;
    }
    return NULL;
}

/* weft could not run a call it selected: NCCL serves this communicator from now on. */
static void comm_failed(shim_comm *e, weft_result res) {
    weft_comm *expect = __atomic_load_n(&e->serve, __ATOMIC_ACQUIRE);
    if (expect == NULL || !__atomic_compare_exchange_n(&e->serve, &expect, NULL, 0,
                                                       __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return;
    set_why(e, "an earlier weft launch failed on this communicator");
    WEFT_WARN("communicator %p rank %d of %d (device %d): a weft launch failed (%s); NCCL "
              "serves every call on it from now on",
              (void *)e->comm, e->rank, e->nranks, e->dev, weft_result_str(res));
}

/* WEFT_REPORT: the call's outcome in its communicator's table (report.c). */
static void report(const shim_comm *e, const shim_op *o, unsigned flags, const char *served,
                   const char *why) {
    if (!shim_report_enabled()) return;
    int launch = flags == LAUNCH_UNKNOWN ? -1
                                         : (int)weft_launch_of((flags & WEFT_CALL_GRAPH) != 0,
                                                               (flags & WEFT_CALL_REGISTERED) != 0);
    shim_report_call(o->comm, e ? e->rank : -1, e ? e->nranks : -1, o->coll,
                     op_bytes(o, e ? e->nranks : 0), launch, served, why);
}

static ncclResult_t launch_now(shim_comm *e, weft_comm *wc, const shim_op *o, const weft_call *c,
                               int grouped) {
    const char *served = NULL;
    tls_in_nccl++;
    weft_result res = weft_shim_backend.launch(wc, c, o->send, o->recv, o->stream, &served);
    tls_in_nccl--;
    if (res == WEFT_OK) {
        log_decision(e, o, c->inplace, grouped, c->flags, served ? served : "?", NULL);
        report(e, o, c->flags, served ? served : "?", NULL);
        return ncclSuccess;
    }
    const char *why = "the runtime has no fitting algorithm on this communicator";
    if (res == WEFT_ERR_UNSUPPORTED)
        log_decision(e, o, c->inplace, grouped, c->flags, NULL, why);
    else
        comm_failed(e, res), why = "the weft launch failed";
    report(e, o, c->flags, NULL, why);
    return real_op(o);
}

static int defer_op(const shim_op *o, const weft_call *c) {
    if (weft_grow((void **)&tls_ops, &tls_capops, tls_nops, sizeof *tls_ops) != 0) return 0;
    tls_ops[tls_nops].op = *o;
    tls_ops[tls_nops].call = *c;
    tls_nops++;
    return 1;
}

/* Why no algorithm of e can serve o whatever the runtime would say (NULL: ask it): the
 * collective is none of theirs, or the size is outside all of their ranges. */
static const char *filtered(const shim_comm *e, const shim_op *o) {
    if (!(e->colls & (1u << o->coll))) return "no algorithm for this collective";
    if (e->ranged && o->count > 0) {
        unsigned long long b = op_bytes(o, e->nranks);
        if (b < e->lo[o->coll] || b > e->hi[o->coll])
            return "message size outside the [minBytes, maxBytes] of every fitting algorithm";
    }
    return NULL;
}

/* The hot path: a call weft does not serve costs a thread-local lookup, a few comparisons and
 * NCCL's own call (no allocation, no lock, no environment read). An empty call (nccl-tests'
 * smallest size) goes to NCCL before any of that: nothing moves, and NCCL returns at once. */
static ncclResult_t serve(const shim_op *o) {
    if (tls_in_nccl) return real_op(o);
    if (o->count == 0 || !shim_on()) {
        report(NULL, o, LAUNCH_UNKNOWN, NULL,
               o->count == 0 ? "empty call (count 0)" : shim_off_why);
        return real_op(o);
    }
    shim_comm *e = comm_find(o->comm);
    weft_comm *wc = comm_serving(e);
    weft_call call;
    const char *why = NULL;
    unsigned flags = LAUNCH_UNKNOWN;
    if (wc == NULL)
        why = e ? get_why(e)
                : "communicator not attached (weft did not see it created, or its group has "
                  "not ended)";
    else if ((why = make_call(o, e, &call)) == NULL && (why = filtered(e, o)) == NULL) {
        /* selected once, here: the launch runs the algorithm named in the call */
        int ai = weft_shim_backend.select(wc, &call, o->send, o->recv, o->stream, &why);
        flags = call.flags;
        if (ai >= 0) {
            call.algo = ai + 1;
            if (tls_depth > 0 && defer_op(o, &call)) return ncclSuccess;
            return launch_now(e, wc, o, &call, 0);
        }
    }
    if (weft_log_enabled(WEFT_LOG_INFO, WEFT_SUBSYS_COLL))
        log_decision(e, o, e ? op_inplace(o, e->rank) : o->send == o->recv, 0, flags, NULL,
                     why ? why : "no algorithm fits");
    report(e, o, flags, NULL, why ? why : "no algorithm fits");
    return real_op(o);
}

/* Collective entry points: the COLL rows of nccl_api.h, each a shim_op of its parameters
 * (SHIM_OP_<name>: collective, send, recv, count, type, op, root) that serve() runs. */
#define SHIM_OP_AllReduce WEFT_COLL_ALLREDUCE, sendbuff, recvbuff, count, datatype, op, 0
#define SHIM_OP_AllGather WEFT_COLL_ALLGATHER, sendbuff, recvbuff, sendcount, datatype, ncclSum, 0
#define SHIM_OP_ReduceScatter                                                                      \
    WEFT_COLL_REDUCESCATTER, sendbuff, recvbuff, recvcount, datatype, op, 0
#define SHIM_OP_AlltoAll  WEFT_COLL_ALLTOALL, sendbuff, recvbuff, count, datatype, ncclSum, 0
#define SHIM_OP_Broadcast WEFT_COLL_BROADCAST, sendbuff, recvbuff, count, datatype, ncclSum, root
#define SHIM_OP_Bcast     WEFT_COLL_BROADCAST, buff, buff, count, datatype, ncclSum, root
#define SHIM_OP_Reduce    WEFT_COLL_REDUCE, sendbuff, recvbuff, count, datatype, op, root
#define SHIM_OP_Gather    WEFT_COLL_GATHER, sendbuff, recvbuff, count, datatype, ncclSum, root
#define SHIM_OP_Scatter   WEFT_COLL_SCATTER, sendbuff, recvbuff, count, datatype, ncclSum, root
#define SHIM_DEFINE_PASS_(rk, name, params, args)
#define SHIM_DEFINE_OWN_(rk, name, params, args)
#define SHIM_DEFINE_COLL_(rk, name, params, args)                                                  \
    SHIM_EXPORT ncclResult_t pnccl##name params {                                                  \
        shim_op o = {SHIM_FN_##name, SHIM_OP_##name, comm, stream};                                \
        return serve(&o);                                                                          \
    }
#define WEFT_X_(rk, how, name, params, args) SHIM_DEFINE_##how##_(rk, name, params, args)
WEFT_NCCL_API(WEFT_X_)
#undef WEFT_X_

/* ---- group brackets ----------------------------------------------------------------------- */
static void new_comms_clear(void) {
    free(tls_new);
    free(tls_new_blocking);
    tls_new = NULL;
    tls_new_blocking = NULL;
    tls_nnew = tls_capnew = tls_capnewb = 0;
}

/* A communicator NCCL just created (r is the creating call's result). */
static void comm_created(ncclComm_t c, ncclResult_t r, int blocking, const char *how) {
    if (c == NULL || (r != ncclSuccess && r != ncclInProgress)) return;
    if (r == ncclInProgress) blocking = 0;
    if (tls_depth > 0) {
        if (weft_grow((void **)&tls_new, &tls_capnew, tls_nnew, sizeof *tls_new) == 0 &&
            weft_grow((void **)&tls_new_blocking, &tls_capnewb, tls_nnew,
                      sizeof *tls_new_blocking) == 0) {
            tls_new[tls_nnew] = c;
            tls_new_blocking[tls_nnew++] = blocking;
        } else {
            WEFT_WARN("out of memory: NCCL serves communicator %p", (void *)c);
        }
        return;
    }
    attach_comms(1, &c, &blocking, how);
}

/* After the real outermost ncclGroupEnd returned r: attach the communicators it created, then
 * launch the calls weft serves, in call order. */
static void window_seen(ncclComm_t comm, void *buff, size_t size, ncclWindow_t win);

static ncclResult_t group_finish(ncclResult_t r, int simulated) {
    if (tls_nnew == 0 && tls_nops == 0 && tls_new == NULL && tls_ops == NULL && tls_nwins == 0)
        return r; /* send/recv and calls NCCL serves: nothing of weft's in the group */
    if (tls_nnew > 0) {
        if (r == ncclSuccess)
            attach_comms((int)tls_nnew, tls_new, tls_new_blocking, "ncclGroupEnd");
        else
            WEFT_INFO(WEFT_SUBSYS_INIT,
                      "ncclGroupEnd returned %d: weft attaches none of the %zu communicators "
                      "created in the group",
                      (int)r, tls_nnew);
    }
    new_comms_clear();
    /* the group's windows, now that NCCL has registered them (before the group's calls: they
     * may lie in them) */
    for (size_t i = 0; i < tls_nwins && !simulated && (r == ncclSuccess || r == ncclInProgress);
         i++)
        window_seen(tls_wins[i].comm, tls_wins[i].buff, tls_wins[i].size, *tls_wins[i].win);
    free(tls_wins);
    tls_wins = NULL;
    tls_nwins = tls_capwins = 0;
    ncclResult_t first = ncclSuccess;
    size_t n = tls_nops;
    shim_deferred *ops = tls_ops;
    tls_ops = NULL;
    tls_nops = tls_capops = 0;
    if (simulated || (r != ncclSuccess && r != ncclInProgress)) {
        if (n > 0)
            WEFT_INFO(WEFT_SUBSYS_COLL,
                      "%s: the %zu calls weft would have served in the group are not launched",
                      simulated ? "ncclGroupSimulateEnd" : "ncclGroupEnd failed", n);
    } else {
        for (size_t i = 0; i < n; i++) {
            shim_comm *e = comm_find(ops[i].op.comm);
            weft_comm *wc = comm_serving(e);
            if (wc == NULL) report(e, &ops[i].op, ops[i].call.flags, NULL, e ? get_why(e) : NULL);
            ncclResult_t x =
                wc ? launch_now(e, wc, &ops[i].op, &ops[i].call, 1) : real_op(&ops[i].op);
            if (x != ncclSuccess && first == ncclSuccess) first = x;
        }
    }
    free(ops);
    return r != ncclSuccess ? r : first;
}

SHIM_EXPORT ncclResult_t pncclGroupStart(void) {
    ncclResult_t r;
    int track = !tls_in_nccl && shim_on(); /* weft defers the group's collectives */
    REAL_CALL(r, GroupStart, ());
    if (track && r == ncclSuccess) tls_depth++;
    return r;
}

SHIM_EXPORT ncclResult_t pncclGroupEnd(void) {
    ncclResult_t r;
    int track = !tls_in_nccl && shim_on();
    REAL_CALL(r, GroupEnd, ());
    if (!track || tls_depth == 0) return r; /* unmatched: NCCL has said so */
    if (--tls_depth > 0) return r;
    return group_finish(r, 0);
}

SHIM_EXPORT ncclResult_t pncclGroupSimulateEnd(ncclSimInfo_t *simInfo) {
    ncclResult_t r;
    if (tls_in_nccl || !shim_on()) {
        REAL_CALL(r, GroupSimulateEnd, (simInfo));
        return r;
    }
    REAL_CALL(r, GroupSimulateEnd, (simInfo));
    if (tls_depth == 0) return r;
    if (--tls_depth > 0) return r;
    return group_finish(r, 1);
}

/* ---- the application's windows ----------------------------------------------------------- *
 * Symmetric windows let weft read peers' buffers in place (direct transfers) and tell calls on
 * registered buffers (a launch mode: NCCL runs its symmetric kernels there) from the others:
 * weft learns of each window once NCCL has registered it on this rank, which in a group is at
 * the outermost ncclGroupEnd (nccl-tests -R 2 registers so): those are kept until then. */
static void window_seen(ncclComm_t comm, void *buff, size_t size, ncclWindow_t win) {
    shim_comm *e = comm_find(comm);
    weft_comm *wc = comm_serving(e);
    if (wc == NULL || win == NULL) return;
    tls_in_nccl++;
    weft_result res = weft_shim_backend.window_register(wc, buff, size, win);
    tls_in_nccl--;
    if (res != WEFT_OK)
        WEFT_WARN("communicator %p rank %d: window %p (%zu bytes) not usable by weft (%s): calls "
                  "in it run through FIFOs here, and wait for ranks that read in place",
                  (void *)comm, e->rank, buff, size, weft_result_str(res));
}

SHIM_EXPORT ncclResult_t pncclCommWindowRegister(ncclComm_t comm, void *buff, size_t size,
                                                 ncclWindow_t *win, int winFlags) {
    ncclResult_t r;
    REAL_CALL(r, CommWindowRegister, (comm, buff, size, win, winFlags));
    if (tls_in_nccl || !shim_on() || r != ncclSuccess || win == NULL ||
        !(winFlags & NCCL_WIN_COLL_SYMMETRIC))
        return r;
    if (tls_depth > 0) { /* NCCL fills *win at the group's end */
        if (weft_grow((void **)&tls_wins, &tls_capwins, tls_nwins, sizeof *tls_wins) == 0)
            tls_wins[tls_nwins++] = (shim_window){comm, buff, size, win};
        else
            WEFT_WARN("out of memory: window %p of communicator %p is not weft's", buff,
                      (void *)comm);
        return r;
    }
    window_seen(comm, buff, size, *win);
    return r;
}

SHIM_EXPORT ncclResult_t pncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
    ncclResult_t r;
    if (!tls_in_nccl && shim_on()) {
        shim_comm *e = comm_find(comm);
        weft_comm *wc = comm_serving(e);
        if (wc && win) {
            tls_in_nccl++;
            weft_shim_backend.window_deregister(wc, win);
            tls_in_nccl--;
        }
    }
    REAL_CALL(r, CommWindowDeregister, (comm, win));
    return r;
}

/* ---- communicator creation ---------------------------------------------------------------- */
SHIM_EXPORT ncclResult_t pncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId,
                                           int rank) {
    ncclResult_t r;
    REAL_CALL(r, CommInitRank, (comm, nranks, commId, rank));
    if (tls_in_nccl || !shim_on() || comm == NULL) return r;
    comm_created(*comm, r, config_blocking(NULL, -1), "ncclCommInitRank");
    return r;
}

SHIM_EXPORT ncclResult_t pncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId commId,
                                                 int rank, ncclConfig_t *config) {
    ncclResult_t r;
    REAL_CALL(r, CommInitRankConfig, (comm, nranks, commId, rank, config));
    if (tls_in_nccl || !shim_on() || comm == NULL) return r;
    comm_created(*comm, r, config_blocking(config, -1), "ncclCommInitRankConfig");
    return r;
}

SHIM_EXPORT ncclResult_t pncclCommInitRankScalable(ncclComm_t *newcomm, int nranks, int myrank,
                                                   int nId, ncclUniqueId *commIds,
                                                   ncclConfig_t *config) {
    ncclResult_t r;
    REAL_CALL(r, CommInitRankScalable, (newcomm, nranks, myrank, nId, commIds, config));
    if (tls_in_nccl || !shim_on() || newcomm == NULL) return r;
    comm_created(*newcomm, r, config_blocking(config, -1), "ncclCommInitRankScalable");
    return r;
}

SHIM_EXPORT ncclResult_t pncclCommInitAll(ncclComm_t *comm, int ndev, const int *devlist) {
    ncclResult_t r;
    REAL_CALL(r, CommInitAll, (comm, ndev, devlist));
    if (tls_in_nccl || !shim_on() || comm == NULL || ndev < 1 || r != ncclSuccess) return r;
    if (tls_depth > 0) {
        for (int i = 0; i < ndev; i++)
            comm_created(comm[i], r, 1, "ncclCommInitAll");
        return r;
    }
    int *blocking = malloc((size_t)ndev * sizeof *blocking);
    if (blocking == NULL) {
        WEFT_WARN("out of memory: NCCL serves the communicators of ncclCommInitAll");
        return r;
    }
    for (int i = 0; i < ndev; i++)
        blocking[i] = 1; /* ncclCommInitAll has no config */
    attach_comms(ndev, comm, blocking, "ncclCommInitAll");
    free(blocking);
    return r;
}

static int parent_blocking(ncclComm_t parent) {
    shim_comm *e = comm_find(parent);
    return e ? e->blocking : -1;
}

SHIM_EXPORT ncclResult_t pncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
                                        ncclConfig_t *config) {
    ncclResult_t r;
    REAL_CALL(r, CommSplit, (comm, color, key, newcomm, config));
    if (tls_in_nccl || !shim_on() || newcomm == NULL) return r;
    comm_created(*newcomm, r, config_blocking(config, parent_blocking(comm)), "ncclCommSplit");
    return r;
}

SHIM_EXPORT ncclResult_t pncclCommShrink(ncclComm_t comm, int *excludeRanksList,
                                         int excludeRanksCount, ncclComm_t *newcomm,
                                         ncclConfig_t *config, int shrinkFlags) {
    ncclResult_t r;
    REAL_CALL(r, CommShrink,
              (comm, excludeRanksList, excludeRanksCount, newcomm, config, shrinkFlags));
    if (tls_in_nccl || !shim_on() || newcomm == NULL) return r;
    comm_created(*newcomm, r, config_blocking(config, parent_blocking(comm)), "ncclCommShrink");
    return r;
}

/* ---- communicator teardown ---------------------------------------------------------------- *
 * weft's collective teardown runs only at a collective point it can trust: ncclCommFinalize
 * outside a group (every rank calls it, and the communicator still works). Everywhere else weft
 * stops serving at once and releases its state locally after the real call, with no collective
 * step, so that nothing can wait for a peer: ncclCommDestroy (a rank may exit without it, and a
 * thread driving several GPUs destroys their communicators one after the other),
 * ncclCommFinalize inside a group (the real finalize runs at ncclGroupEnd and frees what a
 * collective teardown would need), ncclCommAbort and ncclCommRevoke (peers may be gone). */
static void release_locally(shim_comm *e, const char *how) {
    if (e->owned == NULL) return;
    weft_comm *owned = e->owned;
    e->owned = NULL;
    if (weft_shim_backend.abort == NULL) {
        WEFT_INFO(WEFT_SUBSYS_INIT,
                  "communicator %p: %s; weft's state for it is left to the process (the runtime "
                  "has no local release)",
                  (void *)e->comm, how);
        return;
    }
    tls_in_nccl++;
    weft_result res = weft_shim_backend.abort(owned);
    tls_in_nccl--;
    if (res != WEFT_OK)
        WEFT_WARN("communicator %p: releasing weft's state at %s failed (%s)", (void *)e->comm, how,
                  weft_result_str(res));
    else
        WEFT_INFO(WEFT_SUBSYS_INIT, "communicator %p: weft's state released locally at %s",
                  (void *)e->comm, how);
}

SHIM_EXPORT ncclResult_t pncclCommFinalize(ncclComm_t comm) {
    ncclResult_t r;
    if (!tls_in_nccl && shim_on()) {
        shim_comm *e = comm_find(comm);
        if (e && e->owned && !e->revoked) {
            if (tls_depth == 0) detach_entry(e, "ncclCommFinalize");
            __atomic_store_n(&e->serve, NULL, __ATOMIC_RELEASE);
            set_why(e, "communicator finalized");
        }
    }
    REAL_CALL(r, CommFinalize, (comm));
    return r;
}

/* ncclCommDestroy and ncclCommAbort: weft stops serving the communicator, NCCL ends it, then weft
 * releases what it held there. */
static ncclResult_t comm_end(ncclComm_t comm, int abort) {
    ncclResult_t r;
    shim_comm *e = NULL;
    if (!tls_in_nccl && shim_on() && comm != NULL) {
        e = comm_remove(comm);
        if (e) __atomic_store_n(&e->serve, NULL, __ATOMIC_RELEASE);
    }
    if (abort)
        REAL_CALL(r, CommAbort, (comm));
    else
        REAL_CALL(r, CommDestroy, (comm));
    if (e) release_locally(e, abort ? "ncclCommAbort" : "ncclCommDestroy");
    comm_free(e);
    if (!tls_in_nccl) shim_report_end(comm, abort ? "at ncclCommAbort" : "at ncclCommDestroy");
    return r;
}

SHIM_EXPORT ncclResult_t pncclCommDestroy(ncclComm_t comm) {
    return comm_end(comm, 0);
}

SHIM_EXPORT ncclResult_t pncclCommAbort(ncclComm_t comm) {
    return comm_end(comm, 1);
}

SHIM_EXPORT ncclResult_t pncclCommRevoke(ncclComm_t comm, int revokeFlags) {
    ncclResult_t r;
    if (!tls_in_nccl && shim_on() && comm != NULL) {
        shim_comm *e = comm_find(comm);
        if (e) {
            __atomic_store_n(&e->serve, NULL, __ATOMIC_RELEASE);
            e->revoked = 1;
            set_why(e, "communicator revoked");
        }
    }
    REAL_CALL(r, CommRevoke, (comm, revokeFlags));
    return r;
}
