/* gen.h — schedules built in memory for the verifier's tests and benchmark: ring allreduce of
 * any size and channel count, and simple correct schedules for every collective (both call
 * modes), plus the listing of the conformance corpus. Header only (static inline functions). */
#ifndef WEFT_TESTS_VERIFY_GEN_H
#define WEFT_TESTS_VERIFY_GEN_H

#include "weft_ir.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

/* Appends a step to tb; returns 0 or -1 (allocation). */
static inline int gen_add(weft_tb *tb, weft_step_type t, weft_buf sb, int32_t so, weft_buf db,
                          int32_t dof, int32_t cnt) {
    weft_step s = weft_step_make(t, sb, so, db, dof, cnt);
    return weft_tb_add_step(tb, &s) < 0 ? -1 : 0;
}

#define GI WEFT_BUF_INPUT
#define GO WEFT_BUF_OUTPUT
#define GS WEFT_BUF_SCRATCH

static inline int gen_mod(int a, int n) {
    return ((a % n) + n) % n;
}

/* Sets chunk counts of every gpu from the collective. */
static inline void gen_chunks(weft_algo *a, int32_t s_chunks) {
    int32_t k = weft_algo_chunks_per_seg(a), N = a->ngpus;
    for (int32_t r = 0; r < N; r++) {
        a->gpus[r].i_chunks = weft_coll_large(a->coll, WEFT_BUF_INPUT) ? N * k : k;
        a->gpus[r].o_chunks = weft_coll_large(a->coll, WEFT_BUF_OUTPUT) ? N * k : k;
        a->gpus[r].s_chunks = s_chunks;
    }
}

/* Ring allreduce as msccl-tools' allreduce_a100_ring writes it: per channel one tb per rank,
 * N chunks per channel, reduce-scatter then allgather around the ring; valid in both modes. */
static inline weft_algo *gen_ring_allreduce(int32_t N, int32_t nch) {
    weft_algo *a = weft_algo_new("ring", WEFT_COLL_ALLREDUCE, N, N * nch);
    if (a == NULL) return NULL;
    a->nchannels = nch;
    a->inplace = a->outofplace = 1;
    gen_chunks(a, 0);
    for (int32_t r = 0; r < N; r++)
        for (int32_t c = 0; c < nch; c++) {
            weft_tb *tb = weft_gpu_add_tb(&a->gpus[r], (r + 1) % N, gen_mod(r - 1, N), c);
            if (tb == NULL) goto fail;
            int32_t base = c * N, e = 0;
            e |= gen_add(tb, WEFT_STEP_SEND, GI, base + r, GI, base + r, 1);
            for (int32_t t = 1; t <= N - 2; t++) {
                int32_t x = base + gen_mod(r - t, N);
                e |= gen_add(tb, WEFT_STEP_RRS, GI, x, GI, x, 1);
            }
            int32_t x = base + (r + 1) % N;
            e |= gen_add(tb, WEFT_STEP_RRCS, GI, x, GO, x, 1);
            for (int32_t t = 1; t <= N - 2; t++) {
                x = base + gen_mod(r + 1 - t, N);
                e |= gen_add(tb, WEFT_STEP_RCS, GO, x, GO, x, 1);
            }
            x = base + (r + 2) % N;
            e |= gen_add(tb, WEFT_STEP_RECV, GO, x, GO, x, 1);
            if (e) goto fail;
        }
    return a;
fail:
    weft_algo_free(a);
    return NULL;
}

/* Allpairs allreduce (in-place and out-of-place): rank r owns chunk r; per peer q one tb sends
 * chunk q to q, receives q's copy of chunk r into scratch, later sends the reduced chunk r and
 * receives chunk q back; one local tb reduces the scratch copies into the output, each after
 * its receive (a dependency). Many tbs per rank, ordered by dependencies. */
static inline weft_algo *gen_allpairs_allreduce(int32_t N) {
    weft_algo *a = weft_algo_new("allpairs", WEFT_COLL_ALLREDUCE, N, N);
    if (a == NULL) return NULL;
    a->nchannels = 1;
    a->inplace = a->outofplace = 1;
    gen_chunks(a, N);
    for (int32_t r = 0; r < N; r++) {
        weft_gpu *g = &a->gpus[r];
        int e = 0;
        for (int32_t q = 0; q < N; q++) {
            if (q == r) continue;
            weft_tb *tb = weft_gpu_add_tb(g, q, q, 0);
            if (tb == NULL) goto fail;
            e |= gen_add(tb, WEFT_STEP_SEND, GI, q, GI, q, 1);
            e |= gen_add(tb, WEFT_STEP_RECV, GS, q, GS, q, 1);
            e |= gen_add(tb, WEFT_STEP_SEND, GO, r, GO, r, 1);
            e |= gen_add(tb, WEFT_STEP_RECV, GO, q, GO, q, 1);
            if (e) goto fail;
            tb->steps[1].hasdep = 1;
        }
        /* the local tb: o[r] = i[r] + every s[q], each after its receive */
        weft_tb *lt = weft_gpu_add_tb(g, -1, -1, 0);
        if (lt == NULL || gen_add(lt, WEFT_STEP_CPY, GI, r, GO, r, 1)) goto fail;
        for (int32_t q = 0; q < N; q++) {
            if (q == r) continue;
            weft_step st = weft_step_make(WEFT_STEP_RE, GS, q, GO, r, 1);
            st.depid = q < r ? q : q - 1;
            st.deps = 1;
            if (weft_tb_add_step(lt, &st) < 0) goto fail;
        }
        int32_t lid = lt->id, last = lt->nsteps - 1;
        lt->steps[last].hasdep = 1;
        /* the sends of the reduced chunk wait for the last reduction */
        for (int32_t t = 0; t < lid; t++) {
            g->tbs[t].steps[2].depid = lid;
            g->tbs[t].steps[2].deps = last;
        }
    }
    return a;
fail:
    weft_algo_free(a);
    return NULL;
}

/* Simple correct schedules (k = 1 chunk per segment, both call modes) for each collective on
 * N >= 2 ranks; root = the root rank of the rooted ones. */
static inline weft_algo *gen_simple(weft_coll coll, int32_t N, int32_t root) {
    int32_t mult =
        (weft_coll_large(coll, WEFT_BUF_INPUT) || weft_coll_large(coll, WEFT_BUF_OUTPUT)) ? N : 1;
    weft_algo *a = weft_algo_new("simple", coll, N, mult);
    if (a == NULL) return NULL;
    a->nchannels = coll == WEFT_COLL_ALLREDUCE && N > 1 ? 2 : 1;
    a->inplace = a->outofplace = 1;
    a->root = weft_coll_rooted(coll) ? root : 0;
    gen_chunks(a, 0);
    int e = 0;
    for (int32_t r = 0; r < N && !e; r++) {
        weft_gpu *g = &a->gpus[r];
        int32_t next = (r + 1) % N, prev = gen_mod(r - 1, N);
        weft_tb *tb = NULL;
        switch (coll) {
        case WEFT_COLL_ALLREDUCE: { /* a reducing chain to rank N-1, and back */
            int first = r == 0, last = r == N - 1;
            if (N == 1) {
                tb = weft_gpu_add_tb(g, -1, -1, 0);
                e |= !tb || gen_add(tb, WEFT_STEP_CPY, GI, 0, GO, 0, 1);
                break;
            }
            /* up: 0 -> 1 -> ... -> N-1 reducing; down: N-1 -> ... -> 0 copying */
            tb = weft_gpu_add_tb(g, last ? -1 : next, first ? -1 : prev, 0);
            weft_tb *tb2 = weft_gpu_add_tb(g, first ? -1 : prev, last ? -1 : next, 1);
            e |= !tb || !tb2;
            if (e) break;
            if (first)
                e |= gen_add(tb, WEFT_STEP_SEND, GI, 0, GI, 0, 1);
            else if (!last)
                e |= gen_add(tb, WEFT_STEP_RRS, GI, 0, GI, 0, 1);
            else {
                e |= gen_add(tb, WEFT_STEP_RRC, GI, 0, GO, 0, 1);
                tb->steps[0].hasdep = 1;
                e |= gen_add(tb2, WEFT_STEP_SEND, GO, 0, GO, 0, 1);
                tb2->steps[0].depid = 0;
                tb2->steps[0].deps = 0;
                break;
            }
            if (first)
                e |= gen_add(tb2, WEFT_STEP_RECV, GO, 0, GO, 0, 1);
            else
                e |= gen_add(tb2, WEFT_STEP_RCS, GO, 0, GO, 0, 1);
            /* the down path writes the output, which in-place is the input the up path
               reads: wait for it */
            tb->steps[0].hasdep = 1;
            tb2->steps[0].depid = 0;
            tb2->steps[0].deps = 0;
            break;
        }
        case WEFT_COLL_ALLGATHER: /* ring */
            tb = weft_gpu_add_tb(g, next, prev, 0);
            e |= !tb || gen_add(tb, WEFT_STEP_SEND, GI, 0, GI, 0, 1);
            for (int32_t t = 1; t <= N - 2 && !e; t++)
                e |= gen_add(tb, WEFT_STEP_RCS, GO, gen_mod(r - t, N), GO, gen_mod(r - t, N), 1);
            if (N > 1 && !e) e |= gen_add(tb, WEFT_STEP_RECV, GO, next, GO, next, 1);
            e |= gen_add(tb, WEFT_STEP_CPY, GI, 0, GO, r, 1);
            break;
        case WEFT_COLL_REDUCESCATTER: /* ring: chunk c starts at rank c+1, ends at rank c */
            tb = weft_gpu_add_tb(g, next, prev, 0);
            if (!tb) {
                e = 1;
                break;
            }
            if (N == 1) {
                e |= gen_add(tb, WEFT_STEP_CPY, GI, 0, GO, 0, 1);
                tb->send = tb->recv = -1;
                break;
            }
            e |= gen_add(tb, WEFT_STEP_SEND, GI, prev, GI, prev, 1);
            for (int32_t t = 1; t <= N - 2 && !e; t++)
                e |= gen_add(tb, WEFT_STEP_RRS, GI, gen_mod(r - 1 - t, N), GI,
                             gen_mod(r - 1 - t, N), 1);
            e |= gen_add(tb, WEFT_STEP_RRC, GI, r, GO, 0, 1);
            break;
        case WEFT_COLL_ALLTOALL: /* one tb per peer: send, then receive */
            for (int32_t q = 0; q < N && !e; q++) {
                if (q == r) continue;
                tb = weft_gpu_add_tb(g, q, q, 0);
                e |= !tb || gen_add(tb, WEFT_STEP_SEND, GI, q, GI, q, 1) ||
                     gen_add(tb, WEFT_STEP_RECV, GO, q, GO, q, 1);
            }
            tb = weft_gpu_add_tb(g, -1, -1, 0);
            e |= !tb || gen_add(tb, WEFT_STEP_CPY, GI, r, GO, r, 1);
            break;
        case WEFT_COLL_BROADCAST: { /* a chain from the root */
            int32_t pos = gen_mod(r - root, N);
            int has_next = pos < N - 1, is_root = pos == 0;
            tb = weft_gpu_add_tb(g, has_next ? next : -1, is_root ? -1 : prev, 0);
            if (!tb) {
                e = 1;
                break;
            }
            if (is_root) {
                if (has_next) e |= gen_add(tb, WEFT_STEP_SEND, GI, 0, GI, 0, 1);
                e |= gen_add(tb, WEFT_STEP_CPY, GI, 0, GO, 0, 1);
            } else {
                e |= gen_add(tb, has_next ? WEFT_STEP_RCS : WEFT_STEP_RECV, GO, 0, GO, 0, 1);
            }
            break;
        }
        case WEFT_COLL_REDUCE: {                    /* a chain ending at the root */
            int32_t pos = gen_mod(r - root - 1, N); /* root last */
            int first = pos == 0, is_root = r == root;
            tb = weft_gpu_add_tb(g, is_root ? -1 : next, first ? -1 : prev, 0);
            if (!tb) {
                e = 1;
                break;
            }
            if (N == 1)
                e |= gen_add(tb, WEFT_STEP_CPY, GI, 0, GO, 0, 1);
            else if (first)
                e |= gen_add(tb, WEFT_STEP_SEND, GI, 0, GI, 0, 1);
            else if (!is_root)
                e |= gen_add(tb, WEFT_STEP_RRS, GI, 0, GI, 0, 1);
            else
                e |= gen_add(tb, WEFT_STEP_RRC, GI, 0, GO, 0, 1);
            break;
        }
        case WEFT_COLL_GATHER:
            if (r != root) {
                tb = weft_gpu_add_tb(g, root, -1, 0);
                e |= !tb || gen_add(tb, WEFT_STEP_SEND, GI, 0, GI, 0, 1);
                break;
            }
            for (int32_t q = 0; q < N && !e; q++) {
                if (q == root) continue;
                tb = weft_gpu_add_tb(g, -1, q, 0);
                e |= !tb || gen_add(tb, WEFT_STEP_RECV, GO, q, GO, q, 1);
            }
            tb = weft_gpu_add_tb(g, -1, -1, 0);
            e |= !tb || gen_add(tb, WEFT_STEP_CPY, GI, 0, GO, root, 1);
            break;
        case WEFT_COLL_SCATTER:
            if (r != root) {
                tb = weft_gpu_add_tb(g, -1, root, 0);
                e |= !tb || gen_add(tb, WEFT_STEP_RECV, GO, 0, GO, 0, 1);
                break;
            }
            for (int32_t q = 0; q < N && !e; q++) {
                if (q == root) continue;
                tb = weft_gpu_add_tb(g, q, -1, 0);
                e |= !tb || gen_add(tb, WEFT_STEP_SEND, GI, q, GI, q, 1);
            }
            tb = weft_gpu_add_tb(g, -1, -1, 0);
            e |= !tb || gen_add(tb, WEFT_STEP_CPY, GI, root, GO, 0, 1);
            break;
        default: e = 1; break;
        }
    }
    if (e) {
        weft_algo_free(a);
        return NULL;
    }
    return a;
}

/* The conformance corpus: sorted paths under $WEFT_SHARED_DIR/conformance/{generated,legacy,
 * shipped}; NULL when the folder is absent (the caller skips). Free with gen_free_list. */
static inline int gen_cmp_str(const void *x, const void *y) {
    return strcmp(*(char *const *)x, *(char *const *)y);
}

static inline char **gen_corpus(size_t *n) {
    const char *shared = getenv("WEFT_SHARED_DIR");
    static const char *const subs[] = {"generated", "legacy", "shipped"};
    char **v = NULL;
    size_t cap = 0;
    *n = 0;
    if (shared == NULL || *shared == '\0') return NULL;
    for (size_t s = 0; s < sizeof subs / sizeof *subs; s++) {
        char *dir = weft_asprintf("%s/conformance/%s", shared, subs[s]);
        DIR *dp = dir ? opendir(dir) : NULL;
        if (dp == NULL) {
            free(dir);
            continue;
        }
        struct dirent *de;
        while ((de = readdir(dp)) != NULL) {
            size_t len = strlen(de->d_name);
            if (len < 5 || strcmp(de->d_name + len - 4, ".xml") != 0) continue;
            if (*n + 1 >= cap) {
                cap = cap ? cap * 2 : 32;
                char **nv = realloc(v, cap * sizeof *v);
                if (nv == NULL) break;
                v = nv;
            }
            v[(*n)++] = weft_asprintf("%s/%s", dir, de->d_name);
        }
        closedir(dp);
        free(dir);
    }
    if (*n == 0) {
        free(v);
        return NULL;
    }
    qsort(v, *n, sizeof *v, gen_cmp_str);
    return v;
}

static inline void gen_free_list(char **v, size_t n) {
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

#endif
