/* multinode_rank.c — what one rank runs of an algorithm cut into phases: which GPU phases its node
 * works in, its NCCL operations per network phase; the node structure from NCCL's LSA team; the
 * peer window table. Host code, tested without a GPU. */
#include "multinode_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void weft_mn_algo_free(weft_mn_algo *m) {
    if (m == NULL) return;
    for (int32_t ph = 0; ph + 1 < m->nphases; ph++)
        if (m->ops) free(m->ops[ph]);
    free(m->active);
    free(m->nops);
    free(m->ops);
    free(m->slot);
    memset(m, 0, sizeof *m);
}

static int node_active(const weft_phased *p, int32_t ph, int32_t node) {
    const weft_algo *g = p->gpu[ph];
    for (int32_t r = 0; r < p->nranks; r++)
        if (p->node[r] == node)
            for (int32_t t = 0; t < g->gpus[r].ntbs; t++)
                for (int32_t s = 0; s < g->gpus[r].tbs[t].nsteps; s++)
                    if (g->gpus[r].tbs[t].steps[s].type != WEFT_STEP_NOP) return 1;
    return 0;
}

weft_result weft_mn_algo_set_rank(weft_mn_algo *m, int32_t rank) {
    weft_result res = WEFT_OK;
    const weft_phased *p = m->phased;
    if (rank < 0 || rank >= p->nranks) return WEFT_ERR_USAGE;
    m->rank = rank;
    m->sent_chunks = m->recv_chunks = 0;
    for (int32_t ph = 0; ph < m->nphases; ph++)
        m->active[ph] = (uint8_t)node_active(p, ph, p->node[rank]);
    for (int32_t ph = 0; ph + 1 < m->nphases; ph++) {
        free(m->ops[ph]);
        m->nops[ph] = 0;
        m->ops[ph] = calloc((size_t)p->nxfers[ph] + 1, sizeof **m->ops);
        WEFT_CHECK_ALLOC(m->ops[ph]);
        /* the cut's transfers are sorted by (src, dst): sends by destination come out in peer
         * order; receives are gathered in a second pass, by source */
        for (int pass = 0; pass < 2; pass++)
            for (int32_t i = 0; i < p->nxfers[ph]; i++) {
                const weft_phase_xfer *x = &p->xfers[ph][i];
                if (pass == 0 ? x->src != rank : x->dst != rank) continue;
                weft_mn_op *o = &m->ops[ph][m->nops[ph]++];
                o->send = pass == 0;
                o->peer = pass == 0 ? x->dst : x->src;
                o->off = pass == 0 ? x->soff : x->doff;
                o->cnt = x->cnt;
                if (pass == 0)
                    m->sent_chunks += x->cnt;
                else
                    m->recv_chunks += x->cnt;
            }
    }
fail:
    return res;
}

weft_result weft_mn_algo_build(const weft_algo *a, const weft_phased *p, int32_t rank,
                               weft_mn_algo *out) {
    weft_result res = WEFT_OK;
    memset(out, 0, sizeof *out);
    if (a == NULL || p == NULL || rank < 0 || rank >= p->nranks || p->nphases < 1)
        return WEFT_ERR_USAGE;
    int32_t nph = p->nphases;
    out->algo = a;
    out->phased = p;
    out->nphases = nph;
    out->gpu = (const weft_algo *const *)p->gpu;
    out->active = calloc((size_t)nph, 1);
    out->nops = calloc((size_t)nph, sizeof *out->nops);
    out->ops = calloc((size_t)nph, sizeof *out->ops);
    out->slot = malloc((size_t)nph * sizeof *out->slot);
    WEFT_CHECK_ALLOC(out->active);
    WEFT_CHECK_ALLOC(out->nops);
    WEFT_CHECK_ALLOC(out->ops);
    WEFT_CHECK_ALLOC(out->slot);
    for (int32_t ph = 0; ph < nph; ph++)
        out->slot[ph] = -1;
    WEFT_CHECK(weft_mn_algo_set_rank(out, rank));
    return WEFT_OK;
fail:
    weft_mn_algo_free(out);
    return res;
}

size_t weft_mn_chunk_bytes(const weft_algo *a, size_t count, int32_t dtype_bytes) {
    int32_t k = weft_algo_chunks_per_seg(a);
    if (k < 1 || dtype_bytes < 1) return 0;
    return (size_t)weft_chunk_elems((int64_t)count, k) * (size_t)dtype_bytes;
}

void weft_mn_phase_name(const weft_mn_algo *m, int32_t phase, int network, char *buf, size_t len) {
    if (network)
        snprintf(buf, len, "network phase %d of %d of '%s'", phase, m->nphases - 1, m->algo->name);
    else
        snprintf(buf, len, "GPU phase %d of %d of '%s'", phase, m->nphases, m->algo->name);
}

int weft_mn_gpus_per_node(int nranks, int rank, int lsa_rank, int lsa_size, int lsa_stride,
                          char *why, size_t whylen) {
    const char *bad = NULL;
    if (nranks < 1 || rank < 0 || rank >= nranks || lsa_size < 1 || lsa_size > nranks)
        bad = "NCCL reported an LSA team that does not fit the communicator";
    else if (lsa_size > 1 && lsa_stride != 1)
        bad = "NCCL's LSA team is not consecutive ranks";
    else if (nranks % lsa_size != 0)
        bad = "the nodes have different numbers of GPUs";
    else if (lsa_rank != rank % lsa_size)
        bad = "the ranks of a node are not numbered n*G .. n*G+G-1";
    if (bad) {
        if (why && whylen)
            snprintf(why, whylen, "%s (rank %d of %d, LSA rank %d of %d, stride %d)", bad, rank,
                     nranks, lsa_rank, lsa_size, lsa_stride);
        return 0;
    }
    return lsa_size;
}

void weft_mn_peer_table(int32_t nranks, int32_t gpn, int32_t rank, char **win) {
    int32_t base = rank / gpn * gpn;
    for (int32_t q = 0; q < nranks; q++)
        if (q < base || q >= base + gpn) win[q] = win[rank];
}
