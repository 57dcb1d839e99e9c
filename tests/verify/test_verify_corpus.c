/* test_verify_corpus.c — every conformance file verifies, and runs correctly on the CPU executor
 * for counts that are and are not multiples of the chunk count (1, below k, k, k+1, ...), every
 * data type and op, each declared call mode, several interleavings and buffer sizes. */
#include "check.h"
#include "gen.h"
#include "weft_ir.h"

static const struct {
    weft_dtype t;
    weft_redop op;
} type_ops[] = {
    {WEFT_DTYPE_INT32, WEFT_OP_SUM},  {WEFT_DTYPE_FLOAT, WEFT_OP_SUM},
    {WEFT_DTYPE_HALF, WEFT_OP_PROD},  {WEFT_DTYPE_BFLOAT16, WEFT_OP_MAX},
    {WEFT_DTYPE_INT8, WEFT_OP_MIN},   {WEFT_DTYPE_UINT64, WEFT_OP_AVG},
    {WEFT_DTYPE_DOUBLE, WEFT_OP_AVG}, {WEFT_DTYPE_UINT8, WEFT_OP_SUM},
    {WEFT_DTYPE_INT64, WEFT_OP_PROD}, {WEFT_DTYPE_UINT32, WEFT_OP_MAX},
    {WEFT_DTYPE_HALF, WEFT_OP_SUM},   {WEFT_DTYPE_BFLOAT16, WEFT_OP_AVG},
};

static int nruns;

static void run_file(const char *path) {
    weft_diag *d = weft_diag_new();
    weft_algo *a = NULL;
    weft_verify_summary sum;
    memset(&sum, 0, sizeof sum);
    if (weft_ir_read_file(path, &a, d) != WEFT_OK) {
        fprintf(stderr, "%s: read failed\n", path);
        weft_diag_print(d, stderr, WEFT_SEV_NOTE);
        check_failures++;
        goto done;
    }
    weft_diag_clear(d);
    if (weft_ir_verify(a, NULL, d, &sum) != WEFT_OK) {
        fprintf(stderr, "%s: verification failed\n", path);
        weft_diag_print(d, stderr, WEFT_SEV_NOTE);
        check_failures++;
    }
    CHECK(sum.critical_path > 0 && sum.min_fifo >= 1 && sum.min_fifo <= 2);
    int32_t k = weft_algo_chunks_per_seg(a);
    int64_t counts[] = {1, k - 1, k, k + 1, 3 * (int64_t)k + 1, 257};
    int i = 0;
    for (int mode = 0; mode < 2; mode++) {
        if (mode == 0 ? !a->inplace : !a->outofplace) continue;
        for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
            if (counts[c] < 1) continue;
            for (size_t t = 0; t < sizeof type_ops / sizeof *type_ops; t++, i++) {
                weft_exec_opts eo;
                weft_exec_opts_init(&eo);
                eo.count = counts[c];
                eo.dtype = type_ops[t].t;
                eo.op = type_ops[t].op;
                eo.inplace = (uint8_t)(mode == 0);
                eo.seed = (uint64_t)i + 1;
                eo.sched_seed = (uint64_t)(i % 4); /* round robin, and three random orders */
                eo.fifo_slots = i % 3 == 0 ? 0 : sum.min_fifo + (i % 3 == 2);
                weft_diag_clear(d);
                nruns++;
                if (weft_ir_exec(a, &eo, d, NULL) != WEFT_OK) {
                    fprintf(stderr, "%s: %s count %lld %s %s sched %llu fifo %d: wrong\n", path,
                            mode == 0 ? "in-place" : "out-of-place", (long long)eo.count,
                            weft_dtype_name(eo.dtype), weft_redop_name(eo.op),
                            (unsigned long long)eo.sched_seed, eo.fifo_slots);
                    weft_diag_print(d, stderr, WEFT_SEV_NOTE);
                    check_failures++;
                }
            }
        }
    }
done:
    weft_verify_summary_free(&sum);
    weft_algo_free(a);
    weft_diag_free(d);
}

int main(void) {
    size_t n = 0;
    char **files = gen_corpus(&n);
    if (files == NULL) {
        fprintf(stderr, "WEFT_SHARED_DIR/conformance not found: skipped\n");
        return 77;
    }
    for (size_t i = 0; i < n; i++)
        run_file(files[i]);
    CHECK(n >= 18);
    printf("%zu conformance files verified; %d executor runs\n", n, nruns);
    gen_free_list(files, n);
    CHECK_DONE();
}
