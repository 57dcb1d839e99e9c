/* bench_verify.c — how long `weft verify` takes as schedules grow: ring allreduce of 8 to 256
 * ranks (1 and 4 channels), direct alltoall and the other generated collectives at 256 ranks,
 * and the 8-rank allpairs conformance file; plus the CPU executor on a 64-rank ring. Not a test:
 * prints the best of 3 wall and CPU times (this machine is shared: CPU time is the steadier
 * figure) and the peak memory so far.
 *   bench_verify [--quick] [FILE.xml...]   (files are timed too) */
#include "gen.h"
#include "weft_ir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static long peak_mib(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss / 1024;
}

/* Times weft_ir_verify on a (best of `reps`); prints one line. Returns 0 when it verified. */
static int bench_one(const char *what, const weft_algo *a, int reps) {
    double best = 1e30, best_cpu = 1e30;
    weft_verify_summary sum;
    memset(&sum, 0, sizeof sum);
    int ok = 1;
    for (int i = 0; i < reps; i++) {
        weft_diag *d = weft_diag_new();
        weft_verify_summary_free(&sum);
        double t0 = now(), c0 = cpu_now();
        weft_result r = weft_ir_verify(a, NULL, d, &sum);
        double t = now() - t0, ct = cpu_now() - c0;
        if (ct < best_cpu) best_cpu = ct;
        if (r != WEFT_OK) {
            ok = 0;
            weft_diag_print(d, stderr, WEFT_SEV_NOTE);
        }
        weft_diag_free(d);
        if (t < best) best = t;
    }
    printf("%-34s %4d ranks %6lld tbs %7lld steps  wall %7.3f s  cpu %7.3f s  cp %4lld  "
           "peak %ld MiB%s\n",
           what, a->ngpus, (long long)sum.ntbs, (long long)sum.nsteps, best, best_cpu,
           (long long)sum.critical_path, peak_mib(), ok ? "" : "  FAILED");
    weft_verify_summary_free(&sum);
    return ok ? 0 : 1;
}

int main(int argc, char **argv) {
    int quick = 0, bad = 0;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--quick") == 0) quick = 1;
    int reps = quick ? 1 : 3;
    static const int32_t ring_sizes[] = {8, 64, 128, 256};
    char what[96];
    for (size_t i = 0; i < sizeof ring_sizes / sizeof *ring_sizes; i++)
        for (int32_t nch = 1; nch <= 4; nch *= 4) {
            if (quick && ring_sizes[i] > 64) continue;
            weft_algo *a = gen_ring_allreduce(ring_sizes[i], nch);
            if (a == NULL) return 1;
            snprintf(what, sizeof what, "ring allreduce, %d channel%s", nch, nch == 1 ? "" : "s");
            bad |= bench_one(what, a, reps);
            weft_algo_free(a);
        }
    for (int32_t n = 64; n <= 256; n *= 4) {
        if (quick && n > 64) continue;
        weft_algo *a = gen_allpairs_allreduce(n);
        if (a == NULL) return 1;
        bad |= bench_one("allpairs allreduce (deps, scratch)", a, reps);
        weft_algo_free(a);
    }
    static const weft_coll colls[] = {WEFT_COLL_ALLTOALL,      WEFT_COLL_ALLGATHER,
                                      WEFT_COLL_REDUCESCATTER, WEFT_COLL_BROADCAST,
                                      WEFT_COLL_GATHER,        WEFT_COLL_SCATTER};
    for (size_t c = 0; c < sizeof colls / sizeof *colls; c++) {
        weft_algo *a = gen_simple(colls[c], quick ? 64 : 256, 0);
        if (a == NULL) return 1;
        snprintf(what, sizeof what, "%s (gen_simple)", weft_coll_name(colls[c]));
        bad |= bench_one(what, a, reps);
        weft_algo_free(a);
    }
    /* the 8-rank allpairs conformance file, and any files named on the command line */
    const char *shared = getenv("WEFT_SHARED_DIR");
    char *ap =
        shared
            ? weft_asprintf("%s/conformance/generated/allreduce_allpairs_8gpu_1inst_LL.xml", shared)
            : NULL;
    for (int i = 0; i <= argc; i++) {
        const char *path = i == 0 ? ap : i < argc && argv[i][0] != '-' ? argv[i] : NULL;
        if (path == NULL) continue;
        weft_algo *a = NULL;
        weft_diag *d = weft_diag_new();
        double t0 = now();
        if (weft_ir_read_file(path, &a, d) != WEFT_OK) {
            weft_diag_print(d, stderr, WEFT_SEV_ERROR);
            weft_diag_free(d);
            continue;
        }
        double tr = now() - t0;
        const char *base = strrchr(path, '/');
        snprintf(what, sizeof what, "%s", base ? base + 1 : path);
        bad |= bench_one(what, a, reps);
        printf("%-34s (reading the file: %.3f s)\n", "", tr);
        weft_algo_free(a);
        weft_diag_free(d);
    }
    free(ap);
    /* the executor, for scale: a 64-rank ring on 1M floats per rank */
    {
        weft_algo *a = gen_ring_allreduce(64, 1);
        weft_exec_opts eo;
        weft_exec_opts_init(&eo);
        eo.count = quick ? 1 << 16 : 1 << 20;
        eo.inplace = 1;
        weft_exec_report rep;
        double t0 = now(), c0 = cpu_now();
        weft_result r = weft_ir_exec(a, &eo, NULL, &rep);
        double t = now() - t0, ct = cpu_now() - c0;
        printf("%-34s %4d ranks count %lld float sum: wall %.3f s cpu %.3f s (%s), peak %ld "
               "MiB\n",
               "cpu executor, ring allreduce", a->ngpus, (long long)eo.count, t, ct,
               r == WEFT_OK ? "right" : "WRONG", peak_mib());
        bad |= r != WEFT_OK;
        weft_algo_free(a);
    }
    return bad;
}
