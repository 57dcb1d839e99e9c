/* test_verify_unit.c — element operations (half/bfloat16 rounding exhaustively, integer
 * wrapping, avg), and the verifier and executor on schedules built in memory: ring allreduce of
 * several sizes, a correct schedule for every collective and root in both call modes, a race
 * that only messages order, and the summary figures. */
#include "check.h"
#include "gen.h"
#include "weft_elemops.h"
#include "weft_ir.h"

#include <math.h>

static void test_half(void) {
    int bad = 0;
    for (uint32_t h = 0; h < 0x10000u; h++) {
        float f = weft_half_to_float((uint16_t)h);
        uint16_t back = weft_float_to_half(f);
        if ((h & 0x7c00u) == 0x7c00u && (h & 0x3ffu)) {
            if ((back & 0x7c00u) != 0x7c00u || !(back & 0x3ffu)) bad++; /* NaN stays NaN */
        } else if (back != h) {
            bad++;
        }
    }
    CHECK(bad == 0);
    /* between each pair of neighbours: the midpoint goes to the even one, anything off it to
     * the nearer one (subnormals, normals, and the last finite value against infinity) */
    bad = 0;
    for (uint32_t h = 0; h < 0x7c00u; h++) {
        float a = weft_half_to_float((uint16_t)h), b = weft_half_to_float((uint16_t)(h + 1));
        if (h == 0x7bffu) b = 65536.0f; /* where the next value would be: the tie to infinity */
        float mid = (a + b) / 2;        /* exact: one more bit than a half has */
        uint16_t even = (h & 1u) ? (uint16_t)(h + 1) : (uint16_t)h;
        if (weft_float_to_half(mid) != even) bad++;
        if (weft_float_to_half(nextafterf(mid, 0.0f)) != h) bad++;
        if (weft_float_to_half(nextafterf(mid, INFINITY)) != h + 1) bad++;
        if (weft_float_to_half(-mid) != (even | 0x8000u)) bad++;
    }
    CHECK(bad == 0);
    CHECK(weft_float_to_half(1e10f) == 0x7c00u);
    CHECK(weft_float_to_half(-INFINITY) == 0xfc00u);
    CHECK(weft_float_to_half(1e-10f) == 0);
    CHECK(weft_float_to_half(65504.0f) == 0x7bffu);
    CHECK(weft_half_to_float(0x3c00u) == 1.0f);
    CHECK(weft_half_to_float(0x0001u) == 5.9604644775390625e-8f);
}

static void test_bf16(void) {
    int bad = 0;
    for (uint32_t h = 0; h < 0x10000u; h++) {
        float f = weft_bf16_to_float((uint16_t)h);
        uint16_t back = weft_float_to_bf16(f);
        int nan = (h & 0x7f80u) == 0x7f80u && (h & 0x7fu);
        if (nan ? !((back & 0x7f80u) == 0x7f80u && (back & 0x7fu)) : back != h) bad++;
    }
    CHECK(bad == 0);
    bad = 0;
    for (uint32_t h = 0; h < 0x7f80u; h++) {
        float a = weft_bf16_to_float((uint16_t)h), b = weft_bf16_to_float((uint16_t)(h + 1));
        float mid =
            h == 0x7f7fu ? a + (a - weft_bf16_to_float((uint16_t)(h - 1))) / 2 : a + (b - a) / 2;
        uint16_t even = (h & 1u) ? (uint16_t)(h + 1) : (uint16_t)h;
        if (weft_float_to_bf16(mid) != even) bad++;
        if (weft_float_to_bf16(nextafterf(mid, 0.0f)) != h) bad++;
        if (weft_float_to_bf16(nextafterf(mid, INFINITY)) != h + 1) bad++;
    }
    CHECK(bad == 0);
}

static void test_elem_ops(void) {
    CHECK(weft_elem_i8(WEFT_OP_SUM, 100, 100) == -56);
    CHECK(weft_elem_u8(WEFT_OP_PROD, 16, 16) == 0);
    CHECK(weft_elem_i8(WEFT_OP_PROD, -128, -1) == -128);
    CHECK(weft_elem_i32(WEFT_OP_MIN, -5, 3) == -5);
    CHECK(weft_elem_u32(WEFT_OP_MAX, 0xffffffffu, 3) == 0xffffffffu);
    CHECK(weft_elem_i64(WEFT_OP_SUM, INT64_MAX, 1) == INT64_MIN);
    CHECK(weft_elem_u64(WEFT_OP_AVG, 3, 4) == 7); /* avg combines as sum */
    CHECK(weft_elem_f32(WEFT_OP_MIN, NAN, 2.0f) == 2.0f);
    CHECK(weft_elem_f64(WEFT_OP_MAX, 1.0, NAN) == 1.0);
    /* half: 2048 + 1 is a tie between 2048 and 2050: ties to even gives 2048 */
    CHECK(weft_elem_f16(WEFT_OP_SUM, weft_float_to_half(2048.0f), weft_float_to_half(1.0f)) ==
          weft_float_to_half(2048.0f));
    CHECK(weft_elem_f16(WEFT_OP_SUM, weft_float_to_half(2048.0f), weft_float_to_half(3.0f)) ==
          weft_float_to_half(2052.0f));
    CHECK(weft_elem_bf16(WEFT_OP_PROD, weft_float_to_bf16(3.0f), weft_float_to_bf16(-0.5f)) ==
          weft_float_to_bf16(-1.5f));
    int8_t i8[2] = {-7, 7};
    weft_elem_div(WEFT_DTYPE_INT8, i8, 2, 2);
    CHECK(i8[0] == -3 && i8[1] == 3); /* truncation toward zero */
    uint16_t h[1] = {weft_float_to_half(3.0f)};
    weft_elem_div(WEFT_DTYPE_HALF, h, 1, 4);
    CHECK(h[0] == weft_float_to_half(0.75f));
    int32_t a[3] = {1, 2, 3}, b[3] = {10, 20, 30};
    weft_elem_reduce(WEFT_DTYPE_INT32, WEFT_OP_SUM, a, a, b, 3);
    CHECK(a[0] == 11 && a[1] == 22 && a[2] == 33);
    CHECK(weft_dtype_from_name("bf16") == WEFT_DTYPE_BFLOAT16);
    CHECK(weft_dtype_from_name("Float16") == WEFT_DTYPE_HALF);
    CHECK(weft_dtype_from_name("uint64") == WEFT_DTYPE_UINT64);
    CHECK(weft_dtype_from_name("complex") == -1);
    CHECK(weft_redop_from_name("avg") == WEFT_OP_AVG);
    CHECK(weft_redop_from_name("xor") == -1);
    CHECK_STR(weft_dtype_name(WEFT_DTYPE_BFLOAT16), "bfloat16");
    CHECK_STR(weft_redop_name(WEFT_OP_PROD), "prod");
    CHECK_STR(weft_verify_class_name(WEFT_VERIFY_FIFO_DEADLOCK), "fifo-deadlock");
}

/* Verifies a (must pass), then runs it in both modes on a few counts, types and orders. */
static void check_good(weft_algo *a, const char *what) {
    weft_diag *d = weft_diag_new();
    weft_verify_summary sum;
    if (a == NULL) {
        fprintf(stderr, "%s: not built\n", what);
        check_failures++;
        weft_diag_free(d);
        return;
    }
    if (weft_ir_verify(a, NULL, d, &sum) != WEFT_OK) {
        fprintf(stderr, "%s: verification failed\n", what);
        weft_diag_print(d, stderr, WEFT_SEV_NOTE);
        check_failures++;
    }
    CHECK(sum.modes == 3);
    weft_verify_summary_free(&sum);
    int32_t k = weft_algo_chunks_per_seg(a);
    int64_t counts[] = {1, k, 2 * (int64_t)k + 1, 100};
    static const weft_dtype types[] = {WEFT_DTYPE_INT32, WEFT_DTYPE_HALF, WEFT_DTYPE_UINT8,
                                       WEFT_DTYPE_DOUBLE};
    static const weft_redop ops[] = {WEFT_OP_SUM, WEFT_OP_PROD, WEFT_OP_MAX, WEFT_OP_AVG};
    int i = 0;
    for (int mode = 0; mode < 2; mode++)
        for (size_t c = 0; c < 4; c++, i++) {
            weft_exec_opts eo;
            weft_exec_opts_init(&eo);
            eo.inplace = (uint8_t)(mode == 0);
            eo.count = counts[c];
            eo.dtype = types[c];
            eo.op = ops[(c + (size_t)mode) % 4];
            eo.sched_seed = (uint64_t)i;
            eo.fifo_slots = i % 2 ? 2 : 0;
            weft_diag_clear(d);
            if (weft_ir_exec(a, &eo, d, NULL) != WEFT_OK) {
                fprintf(stderr, "%s: %s count %lld: wrong\n", what,
                        mode ? "out-of-place" : "in-place", (long long)eo.count);
                weft_diag_print(d, stderr, WEFT_SEV_NOTE);
                check_failures++;
            }
        }
    weft_diag_free(d);
    weft_algo_free(a);
}

static void test_generated(void) {
    static const int32_t sizes[] = {2, 3, 4, 5, 8};
    char what[96];
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        for (int32_t nch = 1; nch <= 2; nch++) {
            snprintf(what, sizeof what, "ring allreduce %d ranks %d channels", sizes[i], nch);
            check_good(gen_ring_allreduce(sizes[i], nch), what);
        }
    for (int32_t n = 2; n <= 6; n += 2) {
        snprintf(what, sizeof what, "allpairs allreduce %d ranks", n);
        check_good(gen_allpairs_allreduce(n), what);
    }
    static const weft_coll colls[] = {
        WEFT_COLL_ALLREDUCE, WEFT_COLL_ALLGATHER, WEFT_COLL_REDUCESCATTER, WEFT_COLL_ALLTOALL,
        WEFT_COLL_BROADCAST, WEFT_COLL_REDUCE,    WEFT_COLL_GATHER,        WEFT_COLL_SCATTER};
    for (size_t c = 0; c < sizeof colls / sizeof *colls; c++)
        for (int32_t n = 2; n <= 5; n += 3)
            for (int32_t root = 0; root < n; root += n - 1) {
                if (!weft_coll_rooted(colls[c]) && root > 0) continue;
                snprintf(what, sizeof what, "%s %d ranks root %d", weft_coll_name(colls[c]), n,
                         root);
                check_good(gen_simple(colls[c], n, root), what);
            }
}

static void test_summary(void) {
    const int32_t N = 6;
    weft_algo *a = gen_ring_allreduce(N, 1);
    weft_diag *d = weft_diag_new();
    weft_verify_summary sum;
    CHECK(a != NULL && weft_ir_verify(a, NULL, d, &sum) == WEFT_OK);
    CHECK(sum.nranks == N && sum.ntbs == N && sum.nsteps == N * (2 * N - 1));
    CHECK(sum.critical_path == 2 * N - 1);
    CHECK(sum.min_fifo == 2);
    CHECK(sum.chunks_moved == N * (2 * N - 2));
    /* a ring: N pairs, i -> i+1, sorted */
    CHECK(sum.pairs && sum.npairs == N && sum.pairs[0].src == 0 && sum.pairs[0].dst == 1 &&
          sum.pairs[0].chunks == 2 * N - 2 && sum.pairs[N - 1].src == N - 1 &&
          sum.pairs[N - 1].dst == 0);
    weft_verify_summary_free(&sum);
    /* one message of buffering is not enough for a ring that sends before it receives */
    weft_verify_opts vo;
    weft_verify_opts_init(&vo);
    vo.fifo_slots = 1;
    weft_diag_clear(d);
    CHECK(weft_ir_verify(a, &vo, d, &sum) == WEFT_ERR_INPUT);
    CHECK(sum.errors[WEFT_VERIFY_FIFO_DEADLOCK] == 1 && sum.errors[WEFT_VERIFY_RACE] == 0);
    weft_verify_summary_free(&sum);
    /* ... and the executor stalls there, listing every blocked tb */
    weft_exec_opts eo;
    weft_exec_opts_init(&eo);
    eo.inplace = 1;
    eo.fifo_slots = 1;
    weft_exec_report rep;
    weft_diag_clear(d);
    CHECK(weft_ir_exec(a, &eo, d, &rep) == WEFT_ERR_INPUT);
    CHECK(rep.stalled && rep.steps_run == N);
    CHECK(weft_diag_count(d, WEFT_SEV_NOTE) == (size_t)N);
    weft_diag_free(d);
    weft_algo_free(a);
}

/* In-place alltoall on 2 ranks where rank 0 sends chunk 1 from one tb and receives into it
 * from another: no dependency orders them, but rank 1 only sends after it has received, so
 * the message chain does. Without that chain it is a race. */
static weft_algo *alltoall_chain(int chained) {
    weft_algo *a = weft_algo_new("chain", WEFT_COLL_ALLTOALL, 2, 2);
    a->nchannels = 1;
    a->inplace = 1;
    a->outofplace = 0;
    gen_chunks(a, 1);
    weft_tb *s0 = weft_gpu_add_tb(&a->gpus[0], 1, -1, 0);
    weft_tb *r0 = weft_gpu_add_tb(&a->gpus[0], -1, 1, 0);
    gen_add(s0, WEFT_STEP_SEND, GI, 1, GI, 1, 1);
    gen_add(r0, WEFT_STEP_RECV, GO, 1, GO, 1, 1);
    weft_tb *t1 = weft_gpu_add_tb(&a->gpus[1], 0, 0, 0);
    if (chained) {
        gen_add(t1, WEFT_STEP_RECV, GS, 0, GS, 0, 1);
        gen_add(t1, WEFT_STEP_SEND, GI, 0, GI, 0, 1);
        gen_add(t1, WEFT_STEP_CPY, GS, 0, GO, 0, 1);
    } else {
        gen_add(t1, WEFT_STEP_SEND, GI, 0, GI, 0, 1);
        gen_add(t1, WEFT_STEP_RECV, GO, 0, GO, 0, 1);
    }
    return a;
}

static void test_chain_race(void) {
    weft_diag *d = weft_diag_new();
    weft_verify_summary sum;
    weft_algo *a = alltoall_chain(1);
    CHECK(weft_ir_verify(a, NULL, d, &sum) == WEFT_OK);
    weft_diag_print(d, stderr, WEFT_SEV_NOTE);
    weft_verify_summary_free(&sum);
    weft_algo_free(a);
    a = alltoall_chain(0);
    weft_diag_clear(d);
    CHECK(weft_ir_verify(a, NULL, d, &sum) == WEFT_ERR_INPUT);
    CHECK(sum.errors[WEFT_VERIFY_RACE] == 1 && sum.errors[WEFT_VERIFY_POSTCONDITION] == 0);
    CHECK(weft_diag_size(d) == 1);
    char *msg = weft_diag_size(d) ? weft_diag_format(weft_diag_get(d, 0)) : NULL;
    CHECK_STR(msg, "error: rank 0 tb 1 step 0: writes output chunk 1, which rank 0 tb 0 step 0 "
                   "reads as input chunk 1, and no dependency or message orders the two steps");
    free(msg);
    weft_verify_summary_free(&sum);
    weft_algo_free(a);
    weft_diag_free(d);
}

/* A large ring: the verifier's data structures at 64 ranks (the benchmark times it). */
static void test_large_ring(void) {
    weft_algo *a = gen_ring_allreduce(64, 2);
    weft_diag *d = weft_diag_new();
    weft_verify_summary sum;
    CHECK(a && weft_ir_verify(a, NULL, d, &sum) == WEFT_OK);
    CHECK(sum.critical_path == 2 * 64 - 1);
    weft_diag_print(d, stderr, WEFT_SEV_NOTE);
    weft_verify_summary_free(&sum);
    weft_diag_free(d);
    weft_algo_free(a);
}

int main(void) {
    test_half();
    test_bf16();
    test_elem_ops();
    test_generated();
    test_summary();
    test_chain_race();
    test_large_ring();
    CHECK_DONE();
}
