/* cmd_plan.c — `weft plan`: how a schedule runs on ranks spread over nodes: its GPU phases (CTAs
 * per rank, protocol, messages inside nodes) and network phases (NCCL transfers), proven. */
#include "commands.h"
#include "weft_compiler.h"
#include "weft_ir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_GPN = 256, OPT_RANKS, OPT_NODE_MAP, OPT_STEPS, OPT_CPU, OPT_COUNT };

static const weft_opt plan_opts[] = {
    WEFT_OPT_INT(OPT_GPN, "gpus-per-node", "G", 1, 8192,
                 "GPUs per node (required unless --node-map is given)"),
    WEFT_OPT_INT(OPT_RANKS, "ranks", "N", 1, 8192,
                 "the rank count (an XML file must have N ranks)"),
    WEFT_OPT_TEXT(STR, OPT_NODE_MAP, "node-map", "LIST",
                  "the node of each rank, comma-separated (e.g.\n"
                  "0,0,1,1)"),
    WEFT_OPT_FLAG(OPT_STEPS, "steps", "list every phase's steps and every transfer"),
    WEFT_OPT_FLAG(OPT_CPU, "cpu",
                  "also run the phased schedule on the CPU executor\n"
                  "with real data (every buffer mode)"),
    WEFT_OPT_INT(OPT_COUNT, "count", "N", 1, 1ull << 32,
                 "elements per rank for --cpu (default 1000)"),
    WEFT_OPT_DEFINE,
    {0}};

const weft_cmd_spec weft_spec_plan = {
    .name = "plan",
    .summary = "the GPU and network phases a schedule runs in across nodes, proven",
    .synopsis = "FILE.xml|FILE.weft --gpus-per-node G [--ranks N] [--steps]\n"
                "                 [--node-map LIST] [--cpu [--count N]] [-D NAME=VALUE]...",
    .description =
        "Cuts a schedule into the phases libweft_nccl.so runs on a communicator whose\n"
        "ranks sit on several nodes: GPU phases (weft's kernel, messages inside a node\n"
        "over NVLink) and network phases between them (one NCCL group of send/recv per\n"
        "phase, between staging areas), prints them, and proves the cut: the phases,\n"
        "joined back into one schedule, implement the collective, cannot deadlock and\n"
        "have no race (docs/runtime.md, \"Across nodes\"). Ranks n*G .. n*G+G-1 share node\n"
        "n, as NCCL's LSA teams do. A .weft source is compiled with N and G set (when it\n"
        "declares them).",
    .opts = plan_opts,
    .operands = WEFT_ARG_ALGO,
    .exit_status = "0 the cut is proven, 1 the input or the cut is wrong, 2 usage error.",
};

/* The schedule to cut: the one loader every command uses; a .weft source also gets N=ranks and
 * G=gpn when it declares them. */
static weft_result load(const char *path, int ranks, int gpn, const char **defines, size_t ndef,
                        weft_algo **a, weft_diag *d) {
    char dn[32], dg[32];
    char *declared = weft_cc_is_source(path) ? weft_cc_declared_params(path) : NULL;
    const char **all = calloc(ndef + 3, sizeof *all);
    if (all == NULL) {
        free(declared);
        return WEFT_ERR_NOMEM;
    }
    size_t n = 0;
    for (size_t i = 0; i < ndef; i++)
        all[n++] = defines[i];
    if (ranks > 0 && weft_cc_declares(declared, "N")) {
        snprintf(dn, sizeof dn, "N=%d", ranks);
        all[n++] = dn;
    }
    if (gpn > 0 && weft_cc_declares(declared, "G")) {
        snprintf(dg, sizeof dg, "G=%d", gpn);
        all[n++] = dg;
    }
    weft_cc_options o = {all, n, NULL, 0};
    weft_result r = weft_cc_load_file(path, &o, a, d);
    free(all);
    free(declared);
    return r;
}

/* "0,0,1,1" into node[0..n). */
static int parse_map(const char *s, int32_t **out, int *n) {
    int cap = 1;
    for (const char *p = s; *p; p++)
        cap += *p == ',';
    int32_t *v = calloc((size_t)cap, sizeof *v);
    if (v == NULL) return -1;
    int k = 0;
    const char *p = s;
    while (*p) {
        char *end;
        long x = strtol(p, &end, 10);
        if (end == p || x < 0 || x > 1000000 || (*end != ',' && *end != '\0')) {
            free(v);
            return -1;
        }
        v[k++] = (int32_t)x;
        p = *end ? end + 1 : end;
    }
    *out = v;
    *n = k;
    return 0;
}

static int run_cpu(const weft_algo *orig, const weft_algo *joined, long long count) {
    int bad = 0;
    for (int mode = 0; mode < 2; mode++) {
        if (mode == 0 ? !orig->inplace : !orig->outofplace) continue;
        weft_exec_opts o;
        weft_exec_opts_init(&o);
        o.count = count;
        o.inplace = (uint8_t)(mode == 0);
        weft_exec_report rep;
        weft_diag *d = weft_diag_new();
        weft_result r = d ? weft_ir_exec(joined, &o, d, &rep) : WEFT_ERR_NOMEM;
        weft_diag_print(d, stderr, WEFT_SEV_NOTE);
        weft_diag_free(d);
        printf("cpu: %s, count %lld: %s\n", mode == 0 ? "in-place" : "out-of-place", count,
               r == WEFT_OK ? "every rank's output equals the reference" : weft_result_str(r));
        bad |= r != WEFT_OK;
    }
    return bad;
}

int weft_cmd_plan(int argc, char **argv) {
    const char *file = NULL, *map = NULL;
    int ranks = 0, gpn = 0, steps = 0, cpu = 0, rc = WEFT_EXIT_OK;
    long long count = 1000;
    weft_algo *a = NULL, *joined = NULL;
    weft_phased *p = NULL;
    int32_t *node = NULL;
    weft_getopt g;
    weft_getopt_init(&g, &weft_spec_plan, argc, argv);
    weft_diag *d = weft_diag_new();
    if (d == NULL) {
        fprintf(stderr, "weft plan: out of memory\n");
        rc = WEFT_EXIT_INPUT;
        goto done;
    }
    for (int c; (c = weft_getopt_next(&g)) != WEFT_OPT_END;) {
        switch (c) {
        case WEFT_OPT_EXIT: rc = g.exit_code; goto done;
        case OPT_STEPS: steps = 1; break;
        case OPT_CPU: cpu = 1; break;
        case OPT_RANKS: ranks = (int)g.num; break;
        case OPT_GPN: gpn = (int)g.num; break;
        case OPT_COUNT: count = g.num; break;
        case OPT_NODE_MAP: map = g.arg; break;
        }
    }
    if (g.noperands != 1) {
        rc = g.noperands
                 ? weft_usage_error(&weft_spec_plan, "unexpected argument '%s'", g.operands[1])
                 : weft_usage_error(&weft_spec_plan, "no input file");
        goto done;
    }
    file = g.operands[0];
    if (gpn == 0 && map == NULL) {
        rc = weft_usage_error(&weft_spec_plan, "--gpus-per-node G (or --node-map) is required");
        goto done;
    }
    weft_result r = load(file, ranks, gpn, g.defines, g.ndefines, &a, d);
    if (r != WEFT_OK) {
        weft_cmd_report(&weft_spec_plan, file, r, d, WEFT_SEV_NOTE);
        rc = WEFT_EXIT_INPUT;
        goto done;
    }
    if (ranks > 0 && a->ngpus != ranks) {
        fprintf(stderr, "weft plan: %s has %d ranks, not %d\n", file, a->ngpus, ranks);
        rc = WEFT_EXIT_INPUT;
        goto done;
    }
    int nmap = 0;
    if (map) {
        if (parse_map(map, &node, &nmap) != 0 || nmap != a->ngpus) {
            fprintf(stderr, "weft plan: --node-map wants %d comma-separated node numbers\n",
                    a->ngpus);
            rc = WEFT_EXIT_USAGE;
            goto done;
        }
    } else {
        if (a->ngpus % gpn != 0) {
            fprintf(stderr, "weft plan: %d ranks are not whole nodes of %d GPUs\n", a->ngpus, gpn);
            rc = WEFT_EXIT_USAGE;
            goto done;
        }
        node = calloc((size_t)a->ngpus, sizeof *node);
        if (node == NULL) {
            rc = WEFT_EXIT_INPUT;
            goto done;
        }
        for (int q = 0; q < a->ngpus; q++)
            node[q] = q / gpn;
    }
    weft_diag_clear(d);
    int32_t nph = 0;
    r = weft_phase_cut_max(a, node, WEFT_IR_MAX_PHASES, &p, &nph, d);
    if (r == WEFT_ERR_UNSUPPORTED) { /* counted, not built */
        fprintf(stderr,
                "weft plan: %s: '%s' runs in %d GPU phases on these nodes, more than the %d weft "
                "runs (libweft_nccl.so leaves its calls to NCCL)\n",
                file, a->name, nph, WEFT_IR_MAX_PHASES);
        rc = WEFT_EXIT_INPUT;
        goto done;
    }
    if (r == WEFT_OK) r = weft_phase_show(a, p, stdout, steps);
    fflush(stdout);
    if (r == WEFT_OK) {
        weft_verify_opts vo;
        weft_verify_opts_init(&vo);
        weft_verify_summary sum;
        r = weft_phase_verify(a, p, &vo, d, &sum);
        weft_diag_print(d, stderr, WEFT_SEV_NOTE);
        if (r == WEFT_OK)
            printf("proven: the phases implement %s (%s%s%s), cannot deadlock with connections "
                   "of %d messages, and have no race\n",
                   weft_coll_name(a->coll), a->inplace ? "in-place" : "",
                   a->inplace && a->outofplace ? ", " : "", a->outofplace ? "out-of-place" : "",
                   vo.fifo_slots);
        else if (r == WEFT_ERR_INPUT)
            fprintf(stderr, "weft plan: %s: the cut does not verify\n", file);
        weft_verify_summary_free(&sum);
    } else {
        weft_diag_print(d, stderr, WEFT_SEV_NOTE);
    }
    if (r == WEFT_OK && cpu) {
        weft_diag_clear(d);
        r = weft_phase_join(p, &joined, d);
        weft_diag_print(d, stderr, WEFT_SEV_NOTE);
        if (r == WEFT_OK && run_cpu(a, joined, count)) r = WEFT_ERR_INPUT;
    }
    if (r != WEFT_OK) {
        if (r != WEFT_ERR_INPUT) fprintf(stderr, "weft plan: %s\n", weft_result_str(r));
        rc = WEFT_EXIT_INPUT;
    }
done:
    weft_algo_free(joined);
    weft_phased_free(p);
    weft_algo_free(a);
    free(node);
    weft_getopt_free(&g);
    weft_diag_free(d);
    return rc;
}
