/* test_plan.c — the runtime's plans without a GPU: FIFO configuration, window layout,
 * connection ends, device step tables (fused reductions, dependency numbering), call geometry,
 * eligibility and its messages. */
#include "check.h"
#include "gen.h"
#include "runtime_internal.h"
#include "weft_rt_cfg.h"

#include <stdlib.h>
#include <string.h>

static weft_algo *gen(const char *spec) {
    gen_params p;
    if (gen_parse(spec, &p) != 0) return NULL;
    return gen_algo(&p);
}

static void test_cfg(void) {
    weft_rt_cfg c;
    memset(&c, 0, sizeof c);
    char why[256];
    CHECK(weft_rt_cfg_parse(&c, "Simple=4x64K,LL=2x1024", why, sizeof why) == WEFT_OK);
    CHECK(c.nslots[WEFT_RT_PROTO_SIMPLE] == 4 && c.slot_bytes[WEFT_RT_PROTO_SIMPLE] == 65536);
    CHECK(c.nslots[WEFT_RT_PROTO_LL] == 2 && c.slot_bytes[WEFT_RT_PROTO_LL] == 1024);
    CHECK(weft_rt_cfg_parse(&c, "LL=3x1M", why, sizeof why) == WEFT_OK);
    CHECK(c.nslots[WEFT_RT_PROTO_LL] == 3 && c.slot_bytes[WEFT_RT_PROTO_LL] == (1 << 20));
    CHECK(c.nslots[WEFT_RT_PROTO_SIMPLE] == 4); /* untouched */
    CHECK(weft_rt_cfg_parse(&c, "Simple=4x100", why, sizeof why) == WEFT_ERR_INPUT);
    CHECK_STR(why,
              "Simple=4x100: slots must be 1..1024 and slot bytes a multiple of 256 up to 64M");
    CHECK(weft_rt_cfg_parse(&c, "LL128=2x1K", why, sizeof why) == WEFT_OK);
    CHECK(c.nslots[WEFT_RT_PROTO_LL128] == 2 && c.slot_bytes[WEFT_RT_PROTO_LL128] == 1024);
    CHECK(weft_rt_cfg_parse(&c, "LL64=1x1K", why, sizeof why) == WEFT_ERR_INPUT);
    CHECK_STR(why, "expected Simple=, LL= or LL128=NxBYTES at 'LL64=1x1K'");
    CHECK(weft_rt_cfg_parse(&c, "Simple=8x128K/32K", why, sizeof why) == WEFT_OK);
    CHECK(c.slot_bytes[WEFT_RT_PROTO_SIMPLE] == 131072 &&
          c.slice_bytes[WEFT_RT_PROTO_SIMPLE] == 32768);
    CHECK(weft_rt_cfg_parse(&c, "Simple=8x128K/30", why, sizeof why) == WEFT_ERR_INPUT);
    CHECK_STR(why, "Simple=8x128K/30: the slice must be a multiple of 16 bytes");
    c.slice_bytes[WEFT_RT_PROTO_SIMPLE] = 0;
    CHECK(weft_rt_cfg_parse(&c, "LL=4", why, sizeof why) == WEFT_ERR_INPUT);
    CHECK_STR(why, "expected NxBYTES after LL=");
    weft_rt_cfg d;
    weft_rt_cfg_default(&d);
    CHECK(d.nslots[WEFT_RT_PROTO_SIMPLE] == 8 && d.slot_bytes[WEFT_RT_PROTO_SIMPLE] == 131072);
    CHECK(d.timeout_ns == (int64_t)WEFT_RT_DEFAULT_TIMEOUT_MS * 1000000);
    /* the protocol table's rows (weft_ir.h); LL128 runs as itself, never collapsed */
    CHECK(d.nslots[WEFT_RT_PROTO_LL] == 8 && d.slot_bytes[WEFT_RT_PROTO_LL] == 32768);
    CHECK(d.collapse_bytes[WEFT_RT_PROTO_LL] == 256 << 10);
    CHECK(d.collapse_bytes[WEFT_RT_PROTO_SIMPLE] == 0);
    CHECK(d.nslots[WEFT_RT_PROTO_LL128] == 8 && d.slot_bytes[WEFT_RT_PROTO_LL128] == 65536);
    CHECK(d.collapse_bytes[WEFT_RT_PROTO_LL128] == 0);
    CHECK(weft_proto_runs_as(WEFT_PROTO_LL128) == WEFT_PROTO_LL128);
    CHECK(weft_proto_slot_data(WEFT_PROTO_LL, 32768) == 16384);
    CHECK(weft_proto_slot_data(WEFT_PROTO_LL128, 32768) == 30720);
    /* LL128 gives each chunk of a message whole 128-byte lines: 3 chunks of 85 lines */
    CHECK(weft_proto_chunk_data(WEFT_PROTO_LL128, 32768, 3) == 85 * 120);
    CHECK(weft_proto_chunk_data(WEFT_PROTO_LL, 32768, 3) == 16384 / 3);
    CHECK(weft_proto_lines(WEFT_PROTO_LL128));
    CHECK(weft_proto_slot_data(WEFT_PROTO_SIMPLE, 32768) == 32768);
    CHECK(weft_proto_lines(WEFT_PROTO_LL) && !weft_proto_lines(WEFT_PROTO_SIMPLE));
    weft_algo *a = gen("ar_direct:n=2:ch=1:proto=LL");
    CHECK(a != NULL);
    if (a) {
        a->proto = WEFT_PROTO_LL128;
        CHECK(weft_plan_proto(a) == WEFT_RT_PROTO_LL128);
        a->proto = WEFT_PROTO_SIMPLE;
        CHECK(weft_plan_proto(a) == WEFT_RT_PROTO_SIMPLE);
        weft_algo_free(a);
    }
}

/* Prepares a for 2 ranks with at most max_ctas CTAs per rank (the group size follows). */
static void prep(const weft_algo *a, int max_ctas, weft_algo_plan *p) {
    char why[256] = "";
    CHECK(weft_plan_prepare(a, 2, max_ctas, p, why, sizeof why) == WEFT_OK);
}

static void test_layout_and_conns(void) {
    weft_algo *a = gen("ar_direct:n=2:ch=2:proto=Simple");
    weft_algo *b = gen("ar_ring:n=2:ch=3:proto=LL");
    weft_rt_cfg c;
    weft_rt_cfg_default(&c);
    weft_algo_plan pa, pb;
    prep(a, 4, &pa); /* 4 tbs: groups of 1 */
    prep(b, 3, &pb);
    CHECK(pa.kmax == 1 && pb.kmax == 1 && pa.maxtbs == 4);
    weft_layout l;
    CHECK(weft_layout_init(&l, 2, 2) == WEFT_OK);
    CHECK(weft_layout_add(&l, 0, &pa) == WEFT_OK);
    CHECK(weft_layout_add(&l, 1, &pb) == WEFT_OK);
    CHECK(weft_layout_add(&l, 0, &pa) == WEFT_OK); /* keys are a set */
    CHECK(weft_layout_finish(&l, &c) == WEFT_OK);
    CHECK(l.nkeys == 5);
    weft_layout big;
    weft_layout_init(&big, 2, 600); /* arrival words outgrow the first page */
    CHECK(weft_layout_add(&big, 1, &pb) == WEFT_OK && weft_layout_finish(&big, &c) == WEFT_OK);
    CHECK(big.tail_off[0] == 8192);
    weft_layout_free(&big);
    /* Sorted by protocol, distance, channel. */
    CHECK(l.keys[0].proto == WEFT_RT_PROTO_SIMPLE && l.keys[0].chan == 0 && l.keys[0].d == 1);
    CHECK(l.keys[2].proto == WEFT_RT_PROTO_LL && l.keys[2].chan == 0);
    CHECK(weft_layout_find(&l, 1, 2, WEFT_RT_PROTO_LL) == 4);
    CHECK(weft_layout_find(&l, 1, 2, WEFT_RT_PROTO_SIMPLE) == -1);
    CHECK(l.tail_off[0] == 4096 && l.head_off[0] == 4096 + 128);
    /* The direct-transfer words of the Simple all-pairs algorithm (the LL ring has none), then
     * the FIFOs. */
    CHECK(pa.mode[0].direct && !pa.mode[1].sched && !pb.mode[0].direct);
    CHECK(l.dflag_off[0] == 8192 && l.dflag_off[1] == 0 && l.dflag_tbs[0] == 4);
    CHECK(l.slot_off[0] == 12288);
    CHECK(l.slot_off[1] == 12288 + (size_t)8 * 131072);
    CHECK(l.slot_off[2] == 12288 + (size_t)16 * 131072);
    CHECK(l.bytes == 12288 + (size_t)16 * 131072 + (size_t)3 * 8 * 32768);
    CHECK(l.pos_words == 5 * 4);
    for (int i = 0; i < l.nkeys; i++)
        CHECK(l.slot_off[i] % 4096 == 0);

    /* Connection ends: what rank 0 writes is what rank 1 reads. */
    char *win[2] = {(char *)0x100000000ull, (char *)0x200000000ull};
    uint64_t pos0[20], pos1[20];
    weft_dconn s0[5], r0[5], s1[5], r1[5];
    weft_layout_conns(&l, &c, 0, win, pos0, s0, r0);
    weft_layout_conns(&l, &c, 1, win, pos1, s1, r1);
    for (int i = 0; i < 5; i++) {
        CHECK(s0[i].slots == r1[i].slots && s0[i].tail == r1[i].tail && s0[i].head == r1[i].head);
        CHECK(s1[i].slots == r0[i].slots && s1[i].tail == r0[i].tail && s1[i].head == r0[i].head);
        CHECK(s0[i].peer == 1 && r0[i].peer == 1 && s1[i].peer == 0);
        CHECK(r1[i].slots >= win[1] && r1[i].slots < win[1] + l.bytes);
        CHECK((char *)s0[i].head >= win[0] && (char *)s0[i].head < win[0] + l.bytes);
        CHECK(s0[i].pos == &pos0[4 * i] && r0[i].pos == &pos0[4 * i + 2]);
    }

    CHECK(weft_plan_build(&pa, &l, 8) == WEFT_OK);
    const weft_mode_plan *m = weft_plan_mode(&pa, 0);
    CHECK(m != NULL && pa.k == 2 && pa.maxcnt == 1 && pa.proto == WEFT_RT_PROTO_SIMPLE);
    if (m) {
        CHECK(m->ranks[0].ntbs == 4);
        CHECK(m->ranks[0].tbs[0].sconn == 0 && m->ranks[0].tbs[0].rconn == -1);
        CHECK(m->ranks[0].tbs[1].sconn == -1 && m->ranks[0].tbs[1].rconn == 0);
        CHECK(m->ranks[0].tbs[3].rconn == 1);
        CHECK(m->ranks[1].uses_buf[0] && m->ranks[1].uses_buf[1] && !m->ranks[1].uses_buf[2]);
        /* Records: one stride, the tb's connection ends and steps in place; a receive names
         * the sender's chunk, and both ends of a direct connection find the same words. */
        int32_t rb = weft_plan_rec_bytes(&m->ranks[0]);
        CHECK(rb == (int32_t)(sizeof(weft_drec) + sizeof(weft_dstep) + 15) / 16 * 16);
        /* as long as the rank's table: its tb records, then its runner's (collapsed form) */
        char *recs = calloc(1, weft_plan_table_bytes(&m->ranks[0]));
        char *recs1 = calloc(1, weft_plan_table_bytes(&m->ranks[1]));
        CHECK(recs && recs1 && weft_plan_table_bytes(&m->ranks[0]) > 4 * (size_t)rb);
        if (!recs || !recs1) abort();
        weft_plan_records(&pa, 0, m, &l, 0, win, s0, r0, recs);
        weft_plan_records(&pa, 0, m, &l, 1, win, s1, r1, recs1);
        const weft_drec *rec1 = (const weft_drec *)(void *)(recs + rb);
        CHECK(rec1->tb.rconn == 0 && rec1->rc.slots == r0[0].slots && rec1->sc.slots == NULL);
        const weft_dstep *st1 = (const weft_dstep *)(rec1 + 1);
        CHECK(st1->type == WEFT_STEP_RRC && st1->pbuf == WEFT_BUF_INPUT && st1->poff == 0);
        const weft_drec *snd0 = (const weft_drec *)(void *)(recs1 + 0);
        CHECK(rec1->rc.direct && snd0->sc.direct);
        CHECK(rec1->rc.ready == snd0->sc.ready && rec1->rc.done == snd0->sc.done);
        CHECK((char *)rec1->rc.ready >= win[0] && (char *)snd0->sc.done >= win[1]);
        free(recs);
        free(recs1);
    }
    weft_plan_free(&pa);
    weft_plan_free(&pb);

    /* An algorithm whose keys the layout lacks is an internal error, not a crash. */
    weft_algo *x = gen("ar_direct:n=2:ch=4:proto=Simple");
    weft_algo_plan px;
    prep(x, 8, &px);
    CHECK(weft_plan_build(&px, &l, 8) == WEFT_ERR_INTERNAL);
    weft_plan_free(&px);
    weft_algo_free(x);
    weft_layout_free(&l);
    weft_algo_free(a);
    weft_algo_free(b);
}

/* Groups: a tb runs on up to max_ctas / tbs CTAs (at most WEFT_RT_MAX_GROUP), each with its own
 * FIFO and counters; a rank with more tbs than CTAs is refused. */
static void test_groups(void) {
    weft_algo *a = gen("ar_direct:n=2:ch=1:proto=Simple");
    weft_rt_cfg c;
    weft_rt_cfg_default(&c);
    weft_algo_plan p;
    prep(a, 9, &p);
    CHECK(p.maxtbs == 2 && p.kmax == 4);
    weft_plan_free(&p);
    prep(a, 1000, &p);
    CHECK(p.kmax == WEFT_RT_MAX_GROUP);
    weft_layout l;
    weft_layout_init(&l, 2, 1);
    CHECK(weft_layout_add(&l, 0, &p) == WEFT_OK && weft_layout_finish(&l, &c) == WEFT_OK);
    CHECK(l.nkeys == 1 && l.members[0] == WEFT_RT_MAX_GROUP);
    CHECK(l.head_off[0] == l.tail_off[0] + WEFT_RT_MAX_GROUP * WEFT_RT_LINE);
    CHECK(l.bytes - l.slot_off[0] == (size_t)WEFT_RT_MAX_GROUP * 8 * 131072);
    weft_layout_free(&l);
    weft_plan_free(&p);
    char why[256];
    CHECK(weft_plan_prepare(a, 2, 1, &p, why, sizeof why) == WEFT_ERR_UNSUPPORTED);
    CHECK_STR(why, "rank with 2 thread blocks; a launch runs at most 1 CTAs per rank here (all "
                   "at once)");
    weft_algo_free(a);
}

/* Out of place, a dependency that only guards in-place aliasing is dropped (when the verifier
 * agrees); in place it stays. */
static void test_modes(void) {
    weft_algo *a = gen("ar_direct:n=2:ch=1:proto=LL:inplace=1");
    int has_dep = 0;
    for (int t = 0; t < a->gpus[0].ntbs; t++)
        for (int s = 0; s < a->gpus[0].tbs[t].nsteps; s++)
            has_dep |= a->gpus[0].tbs[t].steps[s].depid >= 0;
    CHECK(has_dep && a->inplace && a->outofplace);
    weft_algo_plan p;
    prep(a, 8, &p);
    CHECK(p.mode[0].dropped > 0 && p.mode[0].own != NULL && p.mode[1].dropped == 0);
    CHECK(!p.mode[0].direct && !p.mode[1].direct); /* LL: never direct */
    const weft_algo *o = p.mode[0].sched;
    for (int t = 0; t < o->gpus[0].ntbs; t++)
        for (int s = 0; s < o->gpus[0].tbs[t].nsteps; s++)
            CHECK(o->gpus[0].tbs[t].steps[s].depid < 0);
    weft_plan_free(&p);
    weft_algo_free(a);
}

static void step(weft_tb *t, weft_step_type ty, weft_buf sb, int so, weft_buf db, int dof, int cnt,
                 int depid, int deps, int hasdep) {
    weft_step s = {ty, sb, db, so, dof, cnt, depid, deps, (uint8_t)hasdep, 0};
    weft_tb_add_step(t, &s);
}

/* The library's direct all-gather on n ranks as compiled: tb 0 copies the rank's block into its
 * place in the output, then sends it to the first peer; the other sends wait for that copy (in
 * place it writes what they read). */
static weft_algo *ag_direct(int n) {
    weft_algo *a = weft_algo_new("ag", WEFT_COLL_ALLGATHER, n, n);
    a->inplace = a->outofplace = 1;
    a->nchannels = 1;
    for (int r = 0; r < n; r++) {
        weft_gpu *g = &a->gpus[r];
        g->i_chunks = 1, g->o_chunks = n;
        int first = 1;
        for (int q = 0; q < n; q++) {
            if (q == r) continue;
            weft_tb *ts = weft_gpu_add_tb(g, q, -1, 0);
            if (first) step(ts, WEFT_STEP_CPY, WEFT_BUF_INPUT, 0, WEFT_BUF_OUTPUT, r, 1, -1, -1, 1);
            step(ts, WEFT_STEP_SEND, WEFT_BUF_INPUT, 0, WEFT_BUF_OUTPUT, 0, 1, first ? -1 : 0,
                 first ? -1 : 0, 0);
            first = 0;
            weft_tb *tr = weft_gpu_add_tb(g, -1, q, 0);
            step(tr, WEFT_STEP_RECV, WEFT_BUF_INPUT, 0, WEFT_BUF_OUTPUT, q, 1, -1, -1, 0);
        }
    }
    return a;
}

/* A 2-rank all-to-all, in place only: tb 0 sends the peer's block, then copies the rank's own
 * block onto itself; the receive into the peer's block waits for that copy, directly or (via_nop)
 * behind a nop of a tb of its own that waits for it. */
static weft_algo *a2a_in_place(const char *name, int via_nop) {
    weft_algo *b = weft_algo_new(name, WEFT_COLL_ALLTOALL, 2, 2);
    b->inplace = 1;
    b->nchannels = 1;
    for (int r = 0; r < 2; r++) {
        weft_gpu *g = &b->gpus[r];
        g->i_chunks = g->o_chunks = 2;
        weft_tb *t0 = weft_gpu_add_tb(g, 1 - r, -1, 0);
        step(t0, WEFT_STEP_SEND, WEFT_BUF_INPUT, 1 - r, WEFT_BUF_OUTPUT, 0, 1, -1, -1, 0);
        step(t0, WEFT_STEP_CPY, WEFT_BUF_INPUT, r, WEFT_BUF_OUTPUT, r, 1, -1, -1, 1);
        if (via_nop) {
            weft_tb *t1 = weft_gpu_add_tb(g, -1, -1, 0);
            step(t1, WEFT_STEP_NOP, WEFT_BUF_INPUT, -1, WEFT_BUF_INPUT, -1, 0, 0, 1, 1);
        }
        weft_tb *tr = weft_gpu_add_tb(g, -1, 1 - r, 0);
        step(tr, WEFT_STEP_RECV, WEFT_BUF_INPUT, 0, WEFT_BUF_OUTPUT, 1 - r, 1, via_nop ? 1 : 0,
             via_nop ? 0 : 1, 0);
    }
    return b;
}

/* In place, a copy onto itself is a nop and the sends no longer wait for it (the verifier
 * agrees); out of place the same waits guard nothing either. Where the awaited tb did something
 * before the copy that the waiting step's memory meets, the wait stays. */
static void test_in_place_self_copy(void) {
    const int n = 3;
    weft_algo *a = ag_direct(n);
    weft_algo_plan p;
    char why[256] = "";
    CHECK(weft_plan_prepare(a, n, 64, &p, why, sizeof why) == WEFT_OK);
    if (why[0]) fprintf(stderr, "why: %s\n", why);
    const weft_mode_plan *ip = &p.mode[1], *op = &p.mode[0];
    CHECK(ip->own != NULL && ip->sched == ip->own && ip->skipped == n &&
          ip->dropped == n * (n - 2));
    CHECK(op->skipped == 0 && op->dropped == n * (n - 2));
    for (int r = 0; r < n; r++) {
        const weft_gpu *g = &ip->sched->gpus[r];
        CHECK(g->tbs[0].steps[0].type == WEFT_STEP_NOP && g->tbs[0].steps[0].cnt == 0);
        for (int t = 0; t < g->ntbs; t++)
            for (int s = 0; s < g->tbs[t].nsteps; s++)
                CHECK(g->tbs[t].steps[s].depid < 0 && !g->tbs[t].steps[s].hasdep);
        /* out of place the copy moves the block */
        CHECK(op->sched->gpus[r].tbs[0].steps[0].type == WEFT_STEP_CPY);
    }
    weft_plan_free(&p);
    /* an all-to-all in place: tb 0 sends the peer's block before its copy of its own block onto
     * itself, and the receive into the peer's block waits for the copy, so also for the send
     * that reads what it overwrites: its wait is kept */
    weft_algo *b = a2a_in_place("keep", 0);
    CHECK(weft_plan_prepare(b, 2, 64, &p, why, sizeof why) == WEFT_OK);
    CHECK(p.mode[1].skipped == 2 && p.mode[1].dropped == 0);
    CHECK(p.mode[1].sched->gpus[0].tbs[1].steps[0].depid == 0);
    weft_plan_free(&p);
    weft_algo_free(b);
    /* the same with the receive behind a nop of another tb that waits for the copy: that wait
     * guards nothing of its own tb, but the receive's order behind the send rests on it, so the
     * verifier refuses the schedule without it and the copies alone are skipped */
    b = a2a_in_place("pass_on", 1);
    CHECK(weft_plan_prepare(b, 2, 64, &p, why, sizeof why) == WEFT_OK);
    CHECK(p.mode[1].own != NULL && p.mode[1].skipped == 2 && p.mode[1].dropped == 0);
    CHECK(p.mode[1].sched->gpus[0].tbs[0].steps[1].type == WEFT_STEP_NOP &&
          p.mode[1].sched->gpus[0].tbs[1].steps[0].depid == 0);
    weft_plan_free(&p);
    weft_algo_free(b);
    weft_algo_free(a);
}

/* Runs of `re` into one destination become one multi-source step; dependencies keep their
 * original step numbering. */
static void test_fusion(void) {
    weft_algo *a = weft_algo_new("fuse", WEFT_COLL_ALLREDUCE, 2, 4);
    a->inplace = 1;
    a->outofplace = 1;
    for (int r = 0; r < 2; r++) {
        weft_gpu *g = &a->gpus[r];
        g->i_chunks = g->o_chunks = 4;
        g->s_chunks = 4;
        weft_tb *t0 = weft_gpu_add_tb(g, 1 - r, 1 - r, 0);
        step(t0, WEFT_STEP_SEND, WEFT_BUF_INPUT, 0, WEFT_BUF_SCRATCH, 0, 4, -1, -1, 0);
        step(t0, WEFT_STEP_RECV, WEFT_BUF_INPUT, 0, WEFT_BUF_SCRATCH, 0, 4, -1, -1, 1);
        weft_tb *t1 = weft_gpu_add_tb(g, -1, -1, 0);
        step(t1, WEFT_STEP_CPY, WEFT_BUF_INPUT, 0, WEFT_BUF_OUTPUT, 0, 4, 0, 1, 0);
        step(t1, WEFT_STEP_RE, WEFT_BUF_SCRATCH, 0, WEFT_BUF_OUTPUT, 1, 1, -1, -1, 0);
        step(t1, WEFT_STEP_RE, WEFT_BUF_SCRATCH, 1, WEFT_BUF_OUTPUT, 1, 1, -1, -1, 0);
        step(t1, WEFT_STEP_RE, WEFT_BUF_SCRATCH, 2, WEFT_BUF_OUTPUT, 1, 1, -1, -1, 1);
        step(t1, WEFT_STEP_RE, WEFT_BUF_SCRATCH, 3, WEFT_BUF_OUTPUT, 1, 1, -1, -1, 0);
        /* In-place, input 2 is output 2: no fusing a source that the run writes. */
        step(t1, WEFT_STEP_RE, WEFT_BUF_SCRATCH, 0, WEFT_BUF_OUTPUT, 2, 1, -1, -1, 0);
        step(t1, WEFT_STEP_RE, WEFT_BUF_INPUT, 2, WEFT_BUF_OUTPUT, 2, 1, -1, -1, 0);
        weft_tb *t2 = weft_gpu_add_tb(g, -1, -1, 1);
        step(t2, WEFT_STEP_NOP, WEFT_BUF_INPUT, -1, WEFT_BUF_INPUT, -1, 0, 1, 3, 0);
    }
    a->nchannels = 2;
    weft_rt_cfg c;
    weft_rt_cfg_default(&c);
    weft_algo_plan p;
    prep(a, 3, &p);
    weft_layout l;
    weft_layout_init(&l, 2, 1);
    CHECK(weft_layout_add(&l, 0, &p) == WEFT_OK && weft_layout_finish(&l, &c) == WEFT_OK);
    CHECK(weft_plan_build(&p, &l, 8) == WEFT_OK);
    const weft_mode_plan *m = weft_plan_mode(&p, 1);
    if (m) {
        const weft_rank_plan *rp = &m->ranks[0];
        CHECK(rp->ntbs == 3);
        CHECK(rp->tbs[1].nsteps == 5 && rp->tbs[1].nsteps_orig == 7);
        const weft_dstep *s = rp->steps + rp->tbs[1].first;
        CHECK(s[0].type == WEFT_STEP_CPY && s[0].depid == 0 && s[0].dep_stride == 2 &&
              s[0].dep_target == 2);
        CHECK(s[1].type == WEFT_STEP_RE && s[1].nsrc == 3 && s[1].orig == 1 && s[1].post == 4);
        CHECK(rp->xsrc[s[1].xsrc + 2].buf == WEFT_BUF_SCRATCH && rp->xsrc[s[1].xsrc + 2].off == 2);
        CHECK(s[2].nsrc == 1 && s[2].orig == 4 && s[2].post == 0);
        CHECK(s[3].nsrc == 1 && s[3].orig == 5);
        CHECK(s[4].nsrc == 1 && s[4].orig == 6);
        CHECK(rp->steps[rp->tbs[0].first + 1].post == 2);
        const weft_dstep *n = rp->steps + rp->tbs[2].first;
        CHECK(n->type == WEFT_STEP_NOP && n->depid == 1 && n->dep_stride == 7 &&
              n->dep_target == 4);
        CHECK(rp->uses_buf[0] && rp->uses_buf[1] && rp->uses_buf[2]);
    }
    weft_plan_free(&p);
    weft_layout_free(&l);
    weft_algo_free(a);
}

/* Schedule a verified, then prepared and built for its rank count on a layout of its own
 * (FIFOs of 8 messages), as attach does. */
static void verified_plan(const weft_algo *a, const weft_rt_cfg *c, weft_algo_plan *p,
                          weft_layout *l) {
    weft_diag *d = weft_diag_new();
    CHECK(weft_ir_verify(a, NULL, d, NULL) == WEFT_OK);
    weft_diag_print(d, stderr, WEFT_SEV_ERROR);
    weft_diag_free(d);
    char why[256] = "";
    CHECK(weft_plan_prepare(a, a->ngpus, 64, p, why, sizeof why) == WEFT_OK);
    weft_layout_init(l, a->ngpus, 1);
    CHECK(weft_layout_add(l, 0, p) == WEFT_OK && weft_layout_finish(l, c) == WEFT_OK);
    CHECK(weft_plan_build(p, l, 8) == WEFT_OK);
}

/* A one-shot allreduce on 3 ranks: each rank receives from both peers, the second receive
 * reducing into what the first wrote. The chain becomes one fused receive on the second tb; the
 * first keeps a marker that waits for it. */
static weft_algo *oneshot3(void) {
    weft_algo *a = weft_algo_new("oneshot3", WEFT_COLL_ALLREDUCE, 3, 1);
    a->inplace = 0;
    a->outofplace = 1;
    for (int r = 0; r < 3; r++) {
        weft_gpu *g = &a->gpus[r];
        g->i_chunks = g->o_chunks = 1;
        int p1 = (r + 1) % 3, p2 = (r + 2) % 3;
        weft_tb *s1 = weft_gpu_add_tb(g, p1, -1, 0);
        step(s1, WEFT_STEP_SEND, WEFT_BUF_INPUT, 0, WEFT_BUF_INPUT, 0, 1, -1, -1, 0);
        weft_tb *s2 = weft_gpu_add_tb(g, p2, -1, 0);
        step(s2, WEFT_STEP_SEND, WEFT_BUF_INPUT, 0, WEFT_BUF_INPUT, 0, 1, -1, -1, 0);
        weft_tb *r1 = weft_gpu_add_tb(g, -1, p1, 0);
        step(r1, WEFT_STEP_RRC, WEFT_BUF_INPUT, 0, WEFT_BUF_OUTPUT, 0, 1, -1, -1, 1);
        weft_tb *r2 = weft_gpu_add_tb(g, -1, p2, 0);
        step(r2, WEFT_STEP_RRC, WEFT_BUF_OUTPUT, 0, WEFT_BUF_OUTPUT, 0, 1, 2, 0, 0);
    }
    a->nchannels = 1;
    return a;
}

/* LL128 steps move one connection each way (interp.h, ll128_step): the planner fuses no
 * receives and collapses no rank of an LL128 algorithm; where LL128 may not run, the plan runs as
 * LL and fuses as LL's (weft_plan_gate_proto, before the layout keys its connections). */
static void test_ll128_plan(void) {
    weft_algo *a = oneshot3();
    a->proto = WEFT_PROTO_LL128;
    weft_rt_cfg c;
    weft_rt_cfg_default(&c);
    weft_algo_plan p;
    weft_layout l;
    verified_plan(a, &c, &p, &l);
    CHECK(p.proto == WEFT_RT_PROTO_LL128 && p.mode[0].fused == 0 && !p.mode[0].collapsed);
    const weft_rank_plan *rp = &p.mode[0].ranks[1];
    for (int32_t i = 0; i < rp->nsteps; i++)
        CHECK(!(rp->steps[i].flags & (WEFT_DSTEP_F_FOLD | WEFT_DSTEP_F_ELSEWHERE)));
    CHECK(weft_plan_gate_proto(&p, 1) == 0 && p.proto == WEFT_RT_PROTO_LL128);
    /* the registry proves it with the FIFO it may run with: LL's where that is smaller */
    setenv("WEFT_FIFO", "LL=2x32K,LL128=8x64K", 1);
    weft_env_reset();
    CHECK(weft_rt_fifo_slots(a) == 2);
    setenv("WEFT_FIFO", "LL=8x32K,LL128=4x64K", 1);
    weft_env_reset();
    CHECK(weft_rt_fifo_slots(a) == 4);
    unsetenv("WEFT_FIFO");
    weft_env_reset();
    weft_plan_free(&p);
    weft_layout_free(&l);
    char why[256] = "";
    CHECK(weft_plan_prepare(a, 3, 64, &p, why, sizeof why) == WEFT_OK);
    CHECK(weft_plan_gate_proto(&p, 0) == 1 && p.proto == WEFT_RT_PROTO_LL);
    weft_layout_init(&l, 3, 1);
    CHECK(weft_layout_add(&l, 0, &p) == WEFT_OK && weft_layout_finish(&l, &c) == WEFT_OK);
    CHECK(l.keys[0].proto == WEFT_RT_PROTO_LL);
    CHECK(weft_plan_build(&p, &l, 8) == WEFT_OK && p.mode[0].fused == 3);
    weft_plan_free(&p);
    weft_layout_free(&l);
    weft_algo_free(a);
}

static void test_fused_receive(void) {
    weft_algo *a = oneshot3();
    weft_rt_cfg c;
    weft_rt_cfg_default(&c);
    weft_algo_plan p;
    char why[256] = "";
    weft_layout l;
    verified_plan(a, &c, &p, &l);
    CHECK(p.mode[0].fused == 3); /* one chain per rank */
    const weft_rank_plan *rp = &p.mode[0].ranks[1];
    const weft_dstep *x1 = rp->steps + rp->tbs[2].first, *x2 = rp->steps + rp->tbs[3].first;
    CHECK(x1->flags == WEFT_DSTEP_F_ELSEWHERE && x1->depid == 3 && x1->dep_target == 1);
    /* a fold: the first link's source, then each message in the chain's order */
    CHECK((x2->flags & WEFT_DSTEP_F_FOLD) && x2->nrecv == 3 && x2->depid == -1 && x2->post == 1);
    const weft_drecv *e = rp->xrecv + x2->xrecv;
    CHECK(e[0].tb == -1 && e[0].pbuf == WEFT_BUF_INPUT && e[0].poff == 0);
    CHECK(e[1].tb == 2 && e[2].tb == 3 && e[1].per == 1 && e[1].k == 0 && e[1].ord == 0);

    /* The collapsed form of rank 1: one runner after the tb records; one send to both peers,
     * then one fold of the input and both messages into the output. */
    CHECK(p.mode[0].collapsed && rp->crun == 4 && rp->nrec == 5 && rp->tbs[4].runner == 1);
    const weft_dstep *y = rp->steps + rp->tbs[4].first;
    CHECK(rp->tbs[4].nsteps == 2);
    CHECK(y[0].type == WEFT_STEP_SEND && y[0].nsend == 2 && (y[0].flags & WEFT_DSTEP_F_XCONN));
    /* its entries (relative to its own part of the table) name its four connections */
    const weft_drecv *xb = rp->xrecv + rp->tbs[4].xbase;
    CHECK(rp->tbs[4].nconn == 4 && rp->tbs[4].nent == 5);
    CHECK(xb[y[0].xsend].tb == 0 && xb[y[0].xsend + 1].tb == 1);
    CHECK(xb[y[0].xsend].conn != xb[y[0].xsend + 1].conn);
    CHECK((y[1].flags & WEFT_DSTEP_F_FOLD) && y[1].nrecv == 3 && y[1].dstbuf == WEFT_BUF_OUTPUT);
    CHECK(!(y[1].flags & (WEFT_DSTEP_F_NODST | WEFT_DSTEP_F_DST2)));
    e = xb + y[1].xrecv;
    CHECK(e[0].tb == -1 && e[1].tb == 2 && e[2].tb == 3);
    /* the runner's record after the tbs' own, as long as it needs: steps, connections, entries */
    CHECK(weft_plan_table_bytes(rp) ==
          4 * (size_t)weft_plan_rec_bytes(rp) +
              (sizeof(weft_drec) + 2 * sizeof(weft_dstep) + 15) / 16 * 16 +
              (4 * sizeof(weft_rconn) + 15) / 16 * 16 + (5 * sizeof(weft_drecv) + 15) / 16 * 16);
    weft_call_geom g;
    CHECK(weft_call_geometry(&p, &c, 0, 100, 4, 1, 0, &g) == WEFT_OK);
    c.collapse_bytes[p.proto] = 400; /* 100 floats in one chunk */
    /* Fused, each rank's chain is one step: nothing to gain, so calls run as written unless
     * collapsing is forced. */
    CHECK(p.mode[0].collapse_gain == 0);
    CHECK(!weft_plan_use_collapsed(&p, &p.mode[0], &g, &c, 0));
    c.collapse_always = 1;
    CHECK(weft_plan_use_collapsed(&p, &p.mode[0], &g, &c, 0));
    CHECK(!weft_plan_use_collapsed(&p, &p.mode[0], &g, &c, 1)); /* traced: as written */
    c.collapse_bytes[p.proto] = 399;
    CHECK(!weft_plan_use_collapsed(&p, &p.mode[0], &g, &c, 0));
    weft_plan_free(&p);
    /* A FIFO of one message: the fused plan still completes (each message is its own). */
    CHECK(weft_plan_prepare(a, 3, 64, &p, why, sizeof why) == WEFT_OK);
    CHECK(weft_plan_build(&p, &l, 1) == WEFT_OK && p.mode[0].fused == 3);
    weft_plan_free(&p);
    weft_layout_free(&l);
    weft_algo_free(a);
}

/* A one-shot allreduce on 3 ranks whose chain cannot fuse (a plain receive into scratch starts
 * it, the local operand comes last, then the copy out): tb 3 waits on tb 2, tb 4 on tb 3. In
 * place (inplace: the only mode), the copy overwrites the input both sends read, so tb 4 first
 * waits for them. */
static weft_algo *unfusable3(int inplace) {
    weft_algo *a = weft_algo_new("unfusable3", WEFT_COLL_ALLREDUCE, 3, 1);
    a->proto = WEFT_PROTO_LL;
    a->inplace = inplace;
    a->outofplace = !inplace;
    for (int r = 0; r < 3; r++) {
        weft_gpu *g = &a->gpus[r];
        g->i_chunks = g->o_chunks = g->s_chunks = 1;
        int p1 = (r + 1) % 3, p2 = (r + 2) % 3;
        step(weft_gpu_add_tb(g, p1, -1, 0), WEFT_STEP_SEND, WEFT_BUF_INPUT, 0, WEFT_BUF_INPUT, 0, 1,
             -1, -1, inplace);
        step(weft_gpu_add_tb(g, p2, -1, 0), WEFT_STEP_SEND, WEFT_BUF_INPUT, 0, WEFT_BUF_INPUT, 0, 1,
             -1, -1, inplace);
        step(weft_gpu_add_tb(g, -1, p1, 0), WEFT_STEP_RECV, WEFT_BUF_SCRATCH, 0, WEFT_BUF_SCRATCH,
             0, 1, -1, -1, 1);
        step(weft_gpu_add_tb(g, -1, p2, 0), WEFT_STEP_RRC, WEFT_BUF_SCRATCH, 0, WEFT_BUF_SCRATCH, 0,
             1, 2, 0, 1);
        weft_tb *t = weft_gpu_add_tb(g, -1, -1, 0);
        if (inplace) {
            step(t, WEFT_STEP_NOP, WEFT_BUF_INPUT, 0, WEFT_BUF_INPUT, 0, 0, 0, 0, 0);
            step(t, WEFT_STEP_NOP, WEFT_BUF_INPUT, 0, WEFT_BUF_INPUT, 0, 0, 1, 0, 0);
        }
        step(t, WEFT_STEP_RE, WEFT_BUF_INPUT, 0, WEFT_BUF_SCRATCH, 0, 1, 3, 0, 0);
        step(t, WEFT_STEP_CPY, WEFT_BUF_SCRATCH, 0, WEFT_BUF_OUTPUT, 0, 1, -1, -1, 0);
    }
    a->nchannels = 1;
    return a;
}

/* In place, a fold's closing copy writes the memory a local operand is read from, at the same
 * chunk (the output over the input): the fold reads every element before the same thread writes
 * it, so the copy still folds in (a second destination) instead of running as a step of its own
 * after the fold (the library's one-shot allreduce in place, on ranks >= 2). */
static void test_closing_copy_in_place(void) {
    weft_algo *a = unfusable3(1);
    weft_rt_cfg c;
    weft_rt_cfg_default(&c);
    weft_algo_plan p;
    weft_layout l;
    verified_plan(a, &c, &p, &l);
    const weft_mode_plan *m = weft_plan_mode(&p, 1);
    CHECK(m != NULL && m->collapsed);
    if (m && m->collapsed) {
        const weft_rank_plan *rp = &m->ranks[1];
        const weft_dtb *t = &rp->tbs[rp->crun];
        const weft_dstep *y = rp->steps + t->first;
        /* one send to both peers, then the fold into scratch that also writes the output */
        CHECK(t->nsteps == 2 && y[0].type == WEFT_STEP_SEND && y[0].nsend == 2);
        CHECK((y[1].flags & WEFT_DSTEP_F_FOLD) && (y[1].flags & WEFT_DSTEP_F_DST2) &&
              y[1].dst2buf == WEFT_BUF_OUTPUT && y[1].dst2off == 0);
    }
    weft_plan_free(&p);
    weft_layout_free(&l);
    weft_algo_free(a);
}

/* Where collapsing pays: the longest chain of waits between a rank's thread blocks. */
static void test_collapse_gain(void) {
    weft_rt_cfg c;
    weft_rt_cfg_default(&c);
    weft_algo *u = unfusable3(0);
    weft_diag *d = weft_diag_new();
    CHECK(weft_ir_verify(u, NULL, d, NULL) == WEFT_OK);
    weft_diag_free(d);
    struct {
        weft_algo *a;
        int nranks, gain; /* expected collapse_gain (out of place) */
    } cases[] = {
        {u, 3, 1},
        {gen("ag_direct:n=4:ch=1:proto=LL:inplace=0"), 4, 0}, /* independent thread blocks */
        {gen("a2a_direct:n=4:ch=2:proto=LL"), 4, 0},
        {gen("bcast_chain:n=4:ch=1:proto=LL:inplace=0:root=0"), 4, 0}, /* one hand-off */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        weft_algo *a = cases[i].a;
        CHECK(a != NULL);
        if (a == NULL) continue;
        weft_algo_plan p;
        char why[256] = "";
        CHECK(weft_plan_prepare(a, cases[i].nranks, 64, &p, why, sizeof why) == WEFT_OK);
        weft_layout l;
        weft_layout_init(&l, cases[i].nranks, 1);
        CHECK(weft_layout_add(&l, 0, &p) == WEFT_OK && weft_layout_finish(&l, &c) == WEFT_OK);
        CHECK(weft_plan_build(&p, &l, 8) == WEFT_OK);
        CHECK(p.mode[0].collapsed);
        if (p.mode[0].collapse_gain != cases[i].gain)
            fprintf(stderr, "%s: collapse_gain %d, expected %d\n", a->name, p.mode[0].collapse_gain,
                    cases[i].gain);
        CHECK(p.mode[0].collapse_gain == cases[i].gain);
        weft_call_geom g;
        CHECK(weft_call_geometry(&p, &c, 0, 64, 4, weft_coll_reduces(a->coll), 0, &g) == WEFT_OK);
        CHECK(weft_plan_use_collapsed(&p, &p.mode[0], &g, &c, 0) == (cases[i].gain > 0));
        weft_plan_free(&p);
        weft_layout_free(&l);
        weft_algo_free(a);
    }
    /* WEFT_COLLAPSE: "always" forces it, at every size or the given ones. */
    char why[256];
    CHECK(weft_rt_cfg_parse_collapse(&c, "always", why, sizeof why) == WEFT_OK);
    CHECK(c.collapse_always && c.collapse_bytes[WEFT_RT_PROTO_SIMPLE] == INT64_MAX);
    CHECK(weft_rt_cfg_parse_collapse(&c, "always,LL=1K", why, sizeof why) == WEFT_OK);
    CHECK(c.collapse_always && c.collapse_bytes[WEFT_RT_PROTO_LL] == 1024);
    CHECK(weft_rt_cfg_parse_collapse(&c, "LL=2K,Simple=0", why, sizeof why) == WEFT_OK);
    CHECK(!c.collapse_always && c.collapse_bytes[WEFT_RT_PROTO_LL] == 2048);
    CHECK(weft_rt_cfg_parse_collapse(&c, "alwaysLL=1", why, sizeof why) == WEFT_ERR_INPUT);
    CHECK_STR(why, "expected [always,]BYTES or [always,]Simple=BYTES,LL=BYTES at 'alwaysLL=1'");
}

/* WEFT_DSTEP_F_DEPLATE: a dependency that only orders a step's stores (an in-place receive
 * waiting for the send of the chunk it overwrites) may be taken late, on LL only; one that
 * guards a read (a reduce of what another tb received into scratch) may not. */
static void test_dep_late(void) {
    weft_rt_cfg c;
    weft_rt_cfg_default(&c);
    struct {
        const char *spec;
        int inplace, late; /* late: every waiting step may wait late (else: some may not) */
    } cases[] = {
        {"ar_direct:n=2:ch=1:proto=LL:inplace=1", 1, 1},
        {"ar_direct:n=2:ch=2:proto=LL:inplace=1", 1, 1},
        {"ar_direct:n=2:ch=1:proto=Simple:inplace=1", 1, 0},
        {"ar_staged:n=3:ch=1:proto=LL", 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        weft_algo *a = gen(cases[i].spec);
        CHECK(a != NULL);
        if (a == NULL) continue;
        weft_algo_plan p;
        char why[256] = "";
        CHECK(weft_plan_prepare(a, a->ngpus, 64, &p, why, sizeof why) == WEFT_OK);
        weft_layout l;
        weft_layout_init(&l, a->ngpus, 1);
        CHECK(weft_layout_add(&l, 0, &p) == WEFT_OK && weft_layout_finish(&l, &c) == WEFT_OK);
        CHECK(weft_plan_build(&p, &l, 8) == WEFT_OK);
        const weft_mode_plan *m = weft_plan_mode(&p, cases[i].inplace);
        CHECK(m != NULL);
        int waits = 0, late = 0;
        for (int32_t r = 0; m && r < a->ngpus; r++)
            for (int32_t s = 0; s < m->ranks[r].nsteps; s++) {
                const weft_dstep *d = &m->ranks[r].steps[s];
                if (d->depid < 0) continue;
                waits++;
                late += (d->flags & WEFT_DSTEP_F_DEPLATE) != 0;
            }
        if (waits == 0 || (cases[i].late ? late != waits : late == waits))
            fprintf(stderr, "%s: %d of %d waiting steps late\n", cases[i].spec, late, waits);
        CHECK(waits > 0);
        CHECK(cases[i].late ? late == waits : late < waits);
        weft_plan_free(&p);
        weft_layout_free(&l);
        weft_algo_free(a);
    }
}

static void test_geometry(void) {
    weft_algo *a = gen("ar_ring:n=2:ch=1:proto=Simple");
    weft_algo *g = gen("ag_ring:n=2:ch=1:proto=LL");
    weft_rt_cfg c;
    weft_rt_cfg_default(&c);
    weft_algo_plan p, q;
    prep(a, 1, &p); /* groups of 1 first */
    prep(g, 1, &q);
    weft_call_geom m;
    CHECK(weft_call_geometry(&p, &c, 1, 1000, 4, 1, 0, &m) == WEFT_OK);
    CHECK(m.kelem == 4 && m.count == 1000 && m.C == 500 && m.E == 500 && m.niter == 1);
    CHECK(weft_call_geometry(&p, &c, 1, 1001, 4, 1, 0, &m) == WEFT_OK);
    CHECK(m.C == 501 && m.E == 504 && m.niter == 1);
    CHECK(weft_call_geometry(&p, &c, 1, 100000000, 4, 1, 0, &m) == WEFT_OK);
    CHECK(m.C == 50000000 && m.E == 32768 && m.niter == 1526);
    c.slice_bytes[WEFT_RT_PROTO_SIMPLE] = 16384;
    CHECK(weft_call_geometry(&p, &c, 1, 100000000, 4, 1, 0, &m) == WEFT_OK);
    CHECK(m.E == 4096 && m.niter == 12208);
    CHECK(weft_call_geometry(&p, &c, 1, 1000, 4, 1, 0, &m) == WEFT_OK);
    CHECK(m.E == 500 && m.niter == 1);
    c.slice_bytes[WEFT_RT_PROTO_SIMPLE] = 0;
    CHECK(weft_call_geometry(&p, &c, 1, 3, 2, 1, 0, &m) == WEFT_OK);
    CHECK(m.C == 2 && m.E == 8 && m.niter == 1);
    /* allgather moves bytes: k = 1, a chunk is the whole per-rank count. */
    CHECK(weft_call_geometry(&q, &c, 0, 1001, 4, 0, 0, &m) == WEFT_OK);
    CHECK(m.kelem == 1 && m.count == 4004 && m.C == 4004 && m.E == 4016 && m.niter == 1);
    CHECK(weft_call_geometry(&q, &c, 0, 1 << 20, 4, 0, 0, &m) == WEFT_OK);
    CHECK(m.E == 16384 && m.niter == 256);
    CHECK(weft_call_geometry(&q, &c, 0, 0, 4, 0, 0, &m) == WEFT_ERR_UNSUPPORTED);
    CHECK(m.K == 0);
    /* Groups: members split the iterations; a chunk that fits one slot is cut so that every
     * member has a slice, but not below the protocol's least slice: 16 KB of data in Simple,
     * 2 KB (one line a thread) in LL. */
    weft_plan_free(&p);
    prep(a, 8, &p);
    CHECK(p.kmax == 8);
    CHECK(weft_call_geometry(&p, &c, 1, 100000000, 4, 1, 0, &m) == WEFT_OK);
    CHECK(m.E == 32768 && m.niter == 1526 && m.K == 8 && m.niter0 == 191);
    CHECK(weft_call_geometry(&p, &c, 1, 100000, 4, 1, 0, &m) == WEFT_OK);
    CHECK(m.C == 50000 && m.E == 6252 && m.niter == 8 && m.K == 8 && m.niter0 == 1);
    CHECK(weft_call_geometry(&p, &c, 1, 1000, 4, 1, 0, &m) == WEFT_OK);
    CHECK(m.E == 500 && m.niter == 1 && m.K == 1);
    CHECK(weft_call_geometry(&p, &c, 1, 20000, 4, 1, 0, &m) == WEFT_OK);
    CHECK(m.C == 10000 && m.E == 4096 && m.niter == 3 && m.K == 3);
    weft_plan_free(&q);
    prep(g, 8, &q);
    CHECK(q.kmax == 8);
    /* 32 KB a rank: eight members of 4 KB (in Simple's 16 KB, two) */
    CHECK(weft_call_geometry(&q, &c, 0, 8192, 4, 0, 0, &m) == WEFT_OK);
    CHECK(m.C == 32768 && m.E == 4096 && m.niter == 8 && m.K == 8 && m.niter0 == 1);
    /* 8 KB: four members of the least slice, 2 KB, and not eight of 1 KB */
    CHECK(weft_call_geometry(&q, &c, 0, 2048, 4, 0, 0, &m) == WEFT_OK);
    CHECK(m.C == 8192 && m.E == 2048 && m.niter == 4 && m.K == 4);
    /* a chunk below the least slice stays whole */
    CHECK(weft_call_geometry(&q, &c, 0, 300, 4, 0, 0, &m) == WEFT_OK);
    CHECK(m.E == 1200 && m.niter == 1 && m.K == 1);
    weft_plan_free(&p);
    weft_plan_free(&q);
    weft_algo_free(a);
    weft_algo_free(g);
}

static void test_eligibility(void) {
    char why[512];
    weft_algo *a = gen("ar_ring:n=2:ch=1:proto=Simple");
    CHECK(!weft_plan_eligible(a, 4, why, sizeof why));
    CHECK_STR(why, "written for 2 ranks, the communicator has 4");
    CHECK(weft_plan_eligible(a, 2, why, sizeof why));
    /* A receiver that expects a different message. */
    a->gpus[1].tbs[0].steps[2].cnt = 1;
    a->gpus[1].tbs[0].steps[1].cnt = 1;
    a->gpus[0].tbs[0].steps[1].cnt = 1;
    weft_step extra = {WEFT_STEP_RECV, WEFT_BUF_INPUT, WEFT_BUF_OUTPUT, 0, 0, 1, -1, -1, 0, 0};
    weft_tb_add_step(&a->gpus[1].tbs[0], &extra);
    CHECK(!weft_plan_eligible(a, 2, why, sizeof why));
    CHECK_STR(why, "rank 0 tb 0 and rank 1 tb 0 disagree on the number of messages on channel 0");
    weft_algo_free(a);

    a = gen("ar_direct:n=2:ch=1:proto=Simple");
    a->gpus[0].tbs[0].steps[0].cnt = 1;
    a->gpus[1].tbs[1].steps[0].srcoff = 0;
    CHECK(weft_plan_eligible(a, 2, why, sizeof why));
    a->gpus[0].tbs[0].chan = 0;
    a->gpus[1].tbs[1].chan = 0;
    weft_tb *t = weft_gpu_add_tb(&a->gpus[0], 1, -1, 0);
    (void)t;
    CHECK(!weft_plan_eligible(a, 2, why, sizeof why));
    CHECK_STR(why, "not structurally valid (run weft verify)");
    weft_algo_free(a);

    a = gen("ag_ring:n=2:ch=1:proto=Simple");
    a->gpus[0].tbs[0].steps[0].type = WEFT_STEP_RE;
    CHECK(!weft_plan_eligible(a, 2, why, sizeof why));
    CHECK_STR(why, "rank 0 tb 0 step 0 reduces, but allgather does not reduce");
    weft_algo_free(a);

    a = gen("ar_direct:n=2:ch=1:proto=Simple");
    a->gpus[1].tbs[1].steps[0].cnt = 1;
    a->gpus[1].tbs[0].steps[0].cnt = 1;
    a->nchunksperloop = 2;
    for (int r = 0; r < 2; r++)
        a->gpus[r].i_chunks = a->gpus[r].o_chunks = 2;
    a->gpus[0].tbs[0].steps[0].cnt = 2;
    CHECK(!weft_plan_eligible(a, 2, why, sizeof why));
    CHECK_STR(why, "message 0 from rank 0 to rank 1 on channel 0: rank 0 tb 0 step 0 sends 2 "
                   "chunks, rank 1 tb 1 step 0 receives 1");
    weft_algo_free(a);

    a = weft_algo_new("norecv", WEFT_COLL_ALLREDUCE, 2, 1);
    a->nchannels = 1;
    for (int r = 0; r < 2; r++)
        a->gpus[r].i_chunks = a->gpus[r].o_chunks = 1;
    weft_tb *s = weft_gpu_add_tb(&a->gpus[0], 1, -1, 0);
    step(s, WEFT_STEP_SEND, WEFT_BUF_INPUT, 0, WEFT_BUF_OUTPUT, 0, 1, -1, -1, 0);
    weft_tb *r1 = weft_gpu_add_tb(&a->gpus[1], -1, -1, 0);
    step(r1, WEFT_STEP_CPY, WEFT_BUF_INPUT, 0, WEFT_BUF_OUTPUT, 0, 1, -1, -1, 0);
    CHECK(!weft_plan_eligible(a, 2, why, sizeof why));
    CHECK_STR(why, "rank 0 tb 0 sends to rank 1 on channel 0, but no tb of rank 1 receives from "
                   "rank 0 on that channel");
    weft_algo_free(a);

    CHECK(weft_rt_kernel_index(WEFT_DTYPE_INT8, WEFT_OP_SUM, 1) ==
          weft_rt_kernel_index(WEFT_DTYPE_UINT8, WEFT_OP_SUM, 1));
    CHECK(weft_rt_kernel_index(WEFT_DTYPE_INT8, WEFT_OP_MAX, 1) !=
          weft_rt_kernel_index(WEFT_DTYPE_UINT8, WEFT_OP_MAX, 1));
    CHECK(weft_rt_kernel_index(WEFT_DTYPE_BFLOAT16, WEFT_OP_MIN, 1) == 34);
    CHECK(weft_rt_kernel_index(WEFT_DTYPE_DOUBLE, WEFT_OP_AVG, 1) ==
          weft_rt_kernel_index(WEFT_DTYPE_DOUBLE, WEFT_OP_SUM, 1));
    CHECK(weft_rt_kernel_index(WEFT_DTYPE_DOUBLE, WEFT_OP_MAX, 0) == 0);
}

/* The one-hop form (hop.c): the one-shot shapes have it, with every fold in the schedule's order
 * and the pushes each rank's peers take; shapes that forward or send partial sums, or in which a
 * pair exchanges one way only, do not, and say why; Simple schedules are left to the
 * interpreter. */
static void test_hop(void) {
    weft_rt_cfg c;
    weft_rt_cfg_default(&c);
    c.hop = 1;
    struct {
        const char *spec;
        int hop;
        const char *why;
    } cases[] = {
        {"ar_oneshot:n=4:ch=1:proto=LL", 1, ""},
        {"ar_direct:n=2:ch=2:proto=LL", 1, ""},
        {"ag_direct:n=3:ch=1:proto=LL", 1, ""},
        {"a2a_direct:n=4:ch=1:proto=LL", 1, ""},
        {"ar_ring:n=4:ch=1:proto=LL", 0, "partial reduction"},
        {"ag_ring:n=4:ch=1:proto=LL", 0, "forwards"},
        {"rs_ring:n=4:ch=1:proto=LL", 0, "partial reduction"},
        {"bcast_chain:n=2:ch=1:proto=LL", 0, "not the other way round"},
        {"bcast_chain:n=3:ch=1:proto=LL", 0, "forwards"},
        {"ar_direct:n=2:ch=2:proto=Simple", 0, "Simple"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        weft_algo *a = gen(cases[i].spec);
        CHECK(a != NULL);
        if (!a) continue;
        weft_algo_plan p;
        char why[256] = "";
        CHECK(weft_plan_prepare(a, a->ngpus, 64, &p, why, sizeof why) == WEFT_OK);
        const weft_mode_plan *m = weft_plan_mode(&p, 0);
        CHECK(m != NULL && (m->hop != NULL) == cases[i].hop);
        if (m && !cases[i].hop && !strstr(m->hop_why, cases[i].why)) {
            fprintf(stderr, "%s: one-hop refusal \"%s\", want \"%s\"\n", cases[i].spec, m->hop_why,
                    cases[i].why);
            CHECK(0);
        }
        int32_t nb = 0, S = 0, nt = 0;
        if (m && m->hop) {
            /* every rank of the 4-rank one-shot pushes its input to each of the three others and
             * folds its output from all four inputs in the order of its receive chain: the
             * previous rank's and its own, then rank r - 2's and r - 3's */
            if (i == 0)
                for (int32_t r = 0; r < 4; r++) {
                    weft_hop_hdr hd;
                    memcpy(&hd, m->hop->tab[r], sizeof hd);
                    CHECK(hd.nsend == 3 && hd.nfold == 1 && hd.nop == 4);
                    CHECK(hd.peers == (0xfu & ~(1u << r)));
                    const weft_hop_op *op =
                        (const weft_hop_op *)(const void *)(m->hop->tab[r] + sizeof hd +
                                                            3 * sizeof(weft_hop_send) +
                                                            sizeof(weft_hop_fold));
                    for (int32_t q = 0; q < 4; q++)
                        CHECK(op[q].peer == (q == 1 ? -1 : (r + 4 - (q ? q : 1)) % 4));
                }
            CHECK(weft_hop_call(m, &p, &c, 2, 4, 1, 0, &nb, &S, &nt) == 1);
            CHECK(nb == 1 && S == 8 && nt == 32);
            CHECK(weft_hop_call(m, &p, &c, 2, 4, 1, 1, &nb, &S, &nt) == 0); /* traced */
            /* large calls: more CTAs, until a CTA's lines no longer fit its area */
            CHECK(weft_hop_call(m, &p, &c, 8192, 4, 1, 0, &nb, &S, &nt) == 1 && nb > 1);
            CHECK(weft_hop_call(m, &p, &c, (size_t)1 << 26, 4, 1, 0, &nb, &S, &nt) == 0);
            c.hop = 0;
            CHECK(weft_hop_call(m, &p, &c, 2, 4, 1, 0, &nb, &S, &nt) == 0);
            c.hop = -1; /* auto: 3 ranks or more */
            CHECK(weft_hop_call(m, &p, &c, 2, 4, 1, 0, &nb, &S, &nt) == (a->ngpus >= 3));
            c.hop = 1;
        }
        weft_plan_free(&p);
        weft_algo_free(a);
    }
}

/* A one-hop schedule that parks what it receives in scratch: read back within the call it is a
 * way station and the one-hop form exists; left there (a GPU phase's staging across nodes is its
 * output) the form is refused, since the one-hop kernel writes user buffers only. */
static void test_hop_scratch(void) {
    for (int readback = 0; readback < 2; readback++) {
        weft_algo *a = weft_algo_new("park", WEFT_COLL_ALLGATHER, 2, 2);
        CHECK(a != NULL);
        if (!a) return;
        a->proto = WEFT_PROTO_LL;
        a->inplace = 0;
        for (int32_t r = 0; r < 2; r++) {
            weft_gpu *g = &a->gpus[r];
            g->i_chunks = 1, g->o_chunks = 2, g->s_chunks = 1;
            weft_tb *ts = weft_gpu_add_tb(g, 1 - r, -1, 0);
            weft_step st = weft_step_make(WEFT_STEP_SEND, WEFT_BUF_INPUT, 0, WEFT_BUF_INPUT, 0, 1);
            weft_tb_add_step(ts, &st);
            weft_tb *tr = weft_gpu_add_tb(g, -1, 1 - r, 0);
            st = weft_step_make(WEFT_STEP_RECV, WEFT_BUF_SCRATCH, 0, WEFT_BUF_SCRATCH, 0, 1);
            weft_tb_add_step(tr, &st);
            if (readback) {
                st = weft_step_make(WEFT_STEP_CPY, WEFT_BUF_SCRATCH, 0, WEFT_BUF_OUTPUT, 1 - r, 1);
                weft_tb_add_step(tr, &st);
            }
            st = weft_step_make(WEFT_STEP_CPY, WEFT_BUF_INPUT, 0, WEFT_BUF_OUTPUT, r, 1);
            weft_tb_add_step(ts, &st);
        }
        char why[256] = "";
        weft_hop_plan *h = weft_hop_build(a, 0, 2, 1, why, sizeof why);
        CHECK((h != NULL) == readback);
        if (!readback && !strstr(why, "leaves data in scratch")) {
            fprintf(stderr, "scratch left: one-hop refusal \"%s\"\n", why);
            CHECK(0);
        }
        weft_hop_free(h);
        weft_algo_free(a);
    }
}

int main(void) {
    test_cfg();
    test_layout_and_conns();
    test_groups();
    test_modes();
    test_in_place_self_copy();
    test_fusion();
    test_fused_receive();
    test_ll128_plan();
    test_collapse_gain();
    test_closing_copy_in_place();
    test_dep_late();
    test_geometry();
    test_eligibility();
    test_hop();
    test_hop_scratch();
    CHECK_DONE();
}
