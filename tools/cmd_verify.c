/* cmd_verify.c — `weft verify`: proves XML algorithms correct, deadlock-free and race-free
 * offline, or says exactly where they go wrong. */
#include "commands.h"
#include "topo.h"
#include "weft_compiler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_FIFO = 256, OPT_MAX_REPORTS, OPT_ZERO_COPY, OPT_TOPO };

static const weft_opt verify_opts[] = {
    WEFT_OPT_INT(OPT_FIFO, "fifo", "N", 0, 1000000,
                 "connection buffers of N messages for the bounded-\n"
                 "buffer deadlock check (default 2; 1 is the\n"
                 "strictest, 0 skips it)"),
    WEFT_OPT_INT(OPT_MAX_REPORTS, "max-reports", "N", 1, 1000000,
                 "findings shown per kind and mode (default 8)"),
    WEFT_OPT_FLAG(OPT_ZERO_COPY, "zero-copy",
                  "also prove it safe when transfers read the\n"
                  "sender's source and write the receiver's\n"
                  "destination in place, at any time between the\n"
                  "start of the send and the end of the receive"),
    WEFT_OPT_TEXT(FILE, OPT_TOPO, "topo", "FILE",
                  "the machine's topology as NCCL dumps it\n"
                  "(NCCL_TOPO_DUMP_FILE): warn where ranks of one node\n"
                  "send with no NVLink between their GPUs"),
    WEFT_OPT_FLAG('q', "quiet", "print nothing for files that verify"),
    WEFT_OPT_FLAG('v', "verbose",
                  "also print info notes, and every peer pair in the\n"
                  "summary"),
    WEFT_OPT_DEFINE,
    {0}};

const weft_cmd_spec weft_spec_verify = {
    .name = "verify",
    .summary = "prove XML algorithms correct, deadlock-free and race-free, offline",
    .synopsis = "[options] FILE.xml|FILE.weft...",
    .description =
        "Proves for every rank and each call mode a file declares (in-place, out-of-place)\n"
        "that the schedule computes its collective (every output chunk holds each required\n"
        "input chunk exactly once), cannot deadlock in any interleaving, has no data race\n"
        "between thread blocks, and stays inside its buffers. Findings name the rank, tb and\n"
        "step with its line; in(q,x) is input chunk x of rank q, out(q,y) and scratch(q,x)\n"
        "what an output or scratch chunk held before the call. FILE - reads standard input; a\n"
        ".weft source is compiled first (with the -D parameters).\n"
        "\n"
        "With --topo, rank r runs on GPU r % G of node r / G of the machine the dump\n"
        "describes (G GPUs, in the order of their NCCL rank); a warning names each pair of\n"
        "ranks on one node that sends with no NVLink between their GPUs (weft's interpreter\n"
        "reads and writes its peers' memory directly), and the summary lists the links the\n"
        "schedule sends on.\n"
        "See docs/verify.md.",
    .opts = verify_opts,
    .operands = WEFT_ARG_ALGO,
    .exit_status = "0 every file verified, 1 a file failed or is unreadable, 2 usage error.",
};

int weft_cmd_verify(int argc, char **argv) {
    int quiet = 0, verbose = 0, rc = WEFT_EXIT_OK;
    const char *topo_file = NULL;
    weft_topo *topo = NULL;
    weft_verify_opts vo;
    weft_verify_opts_init(&vo);
    weft_getopt g;
    weft_getopt_init(&g, &weft_spec_verify, argc, argv);
    for (int c; (c = weft_getopt_next(&g)) != WEFT_OPT_END;) {
        switch (c) {
        case WEFT_OPT_EXIT: weft_getopt_free(&g); return g.exit_code;
        case 'q': quiet = 1; break;
        case 'v': verbose = 1; break;
        case OPT_ZERO_COPY: vo.direct_transfers = 1; break;
        case OPT_FIFO: vo.fifo_slots = (int)g.num; break;
        case OPT_MAX_REPORTS: vo.max_reports = (int)g.num; break;
        case OPT_TOPO: topo_file = g.arg; break;
        }
    }
    int nfiles = g.noperands;
    char **files = g.operands;
    if (nfiles == 0) {
        weft_getopt_free(&g);
        return weft_usage_error(&weft_spec_verify, "no input file");
    }
    weft_severity level =
        verbose || weft_log_level_get() >= WEFT_LOG_INFO ? WEFT_SEV_INFO : WEFT_SEV_NOTE;
    if (topo_file) {
        weft_diag *td = weft_diag_new();
        weft_result r = td ? weft_topo_read_file(topo_file, &topo, td) : WEFT_ERR_NOMEM;
        weft_cmd_report(&weft_spec_verify, topo_file, r, td, level);
        weft_diag_free(td);
        if (r != WEFT_OK) {
            weft_getopt_free(&g);
            return WEFT_EXIT_INPUT;
        }
    }
    weft_cc_options co = {g.defines, g.ndefines, NULL, 0};
    for (int i = 0; i < nfiles; i++) {
        const char *path = files[i];
        weft_diag *d = weft_diag_new();
        weft_algo *a = NULL;
        weft_verify_summary sum;
        memset(&sum, 0, sizeof sum);
        weft_result r = d ? weft_cc_load_file(path, &co, &a, d) : WEFT_ERR_NOMEM;
        if (r == WEFT_OK) r = weft_ir_verify(a, &vo, d, &sum);
        /* the machine's links after the proof: its findings come first, and a schedule that
         * does not fit the machine fails as a wrong one does */
        int fits = 1;
        if (topo && a != NULL && (r == WEFT_OK || r == WEFT_ERR_INPUT)) {
            fits = weft_topo_fit(topo, a->ngpus, path, d) == WEFT_OK;
            if (fits)
                weft_topo_check(topo, a, d);
            else if (r == WEFT_OK)
                r = WEFT_ERR_INPUT;
        }
        fflush(stdout);
        weft_diag_print(d, stderr, level);
        fflush(stderr);
        if (r == WEFT_OK) {
            if (!quiet) {
                printf("%s: verified %s (%s%s%s) on %d ranks\n", path, weft_coll_name(a->coll),
                       a->inplace ? "in-place" : "", a->inplace && a->outofplace ? ", " : "",
                       a->outofplace ? "out-of-place" : "", a->ngpus);
                weft_verify_summary_print(&sum, stdout, verbose ? 1 << 30 : 16);
                if (topo) {
                    weft_topo_print_summary(topo, a->ngpus, stdout);
                    weft_topo_print_links(topo, a, stdout, "  ", verbose);
                }
            }
        } else {
            int failed = 0;
            for (int c = 0; c < WEFT_VERIFY_CLASS_COUNT; c++)
                failed |= sum.errors[c] != 0;
            if (a != NULL && r == WEFT_ERR_INPUT && (failed || fits)) {
                fprintf(stderr, "%s: verification failed:", path);
                const char *sep = " ";
                for (int c = 0; c < WEFT_VERIFY_CLASS_COUNT; c++)
                    if (sum.errors[c]) {
                        fprintf(stderr, "%s%lld %s", sep, (long long)sum.errors[c],
                                weft_verify_class_name((weft_verify_class)c));
                        sep = ", ";
                    }
                fprintf(stderr, "\n");
            }
            if (!fits) {
                fprintf(stderr, "%s: does not fit the machine of %s\n", path, weft_topo_file(topo));
            } else if (r != WEFT_ERR_INPUT) {
                fprintf(stderr, "weft verify: %s: %s\n", path, weft_result_str(r));
            }
            rc = WEFT_EXIT_INPUT;
        }
        fflush(stdout);
        weft_verify_summary_free(&sum);
        weft_algo_free(a);
        weft_diag_free(d);
    }
    weft_topo_free(topo);
    weft_getopt_free(&g);
    return rc;
}
