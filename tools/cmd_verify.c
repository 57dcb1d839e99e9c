/* cmd_verify.c — `weft verify`: proves XML algorithms correct, deadlock-free and race-free
 * offline, or says exactly where they go wrong. */
#include "cli.h"
#include "commands.h"
#include "weft_compiler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void verify_usage(FILE *out) {
    fprintf(
        out,
        "usage: weft verify [options] FILE.xml|FILE.weft...\n\n"
        "Proves for every rank and each call mode a file declares (in-place, out-of-place)\n"
        "that the schedule computes its collective (every output chunk holds each required\n"
        "input chunk exactly once), cannot deadlock in any interleaving, has no data race\n"
        "between thread blocks, and stays inside its buffers. Findings name the rank, tb and\n"
        "step with its line; in(q,x) is input chunk x of rank q, out(q,y) and scratch(q,x)\n"
        "what an output or scratch chunk held before the call. A .weft source is compiled\n"
        "first (with the -D parameters). See docs/verify.md.\n\n"
        "options:\n"
        "  -D NAME=VALUE     set a parameter of .weft sources; repeatable\n"
        "  --fifo N          connection buffers of N messages for the bounded-buffer deadlock\n"
        "                    check (default 2; 1 is the strictest, 0 skips it)\n"
        "  --max-reports N   findings shown per kind and mode (default 8)\n"
        "  --zero-copy       also prove it safe when transfers read the sender's source and\n"
        "                    write the receiver's destination in place, at any time between\n"
        "                    the start of the send and the end of the receive\n"
        "  -q, --quiet       print nothing for files that verify\n"
        "  -v, --verbose     also print info notes, and every peer pair in the summary\n"
        "  -h, --help        this text\n\n"
        "Exit codes: 0 every file verified, 1 a file failed or is unreadable, 2 usage error.\n");
}

static int parse_int(const char *s, int lo, int *out) {
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < lo || v > 1000000) return -1;
    *out = (int)v;
    return 0;
}

int weft_cmd_verify(int argc, char **argv) {
    int quiet = 0, verbose = 0, nfiles = 0, rc = WEFT_EXIT_OK, opts_done = 0;
    weft_verify_opts vo;
    weft_verify_opts_init(&vo);
    char **files = calloc((size_t)argc + 1, sizeof *files);
    const char **defines = calloc((size_t)argc + 1, sizeof *defines);
    size_t ndef = 0;
    if (files == NULL || defines == NULL) {
        free(defines);
        fprintf(stderr, "weft verify: out of memory\n");
        return WEFT_EXIT_INPUT;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int v;
        if (opts_done || a[0] != '-' || a[1] == '\0') {
            files[nfiles++] = argv[i];
        } else if (strcmp(a, "--") == 0) {
            opts_done = 1;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            verify_usage(stdout);
            free(files);
            free(defines);
            return WEFT_EXIT_OK;
        } else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
            quiet = 1;
        } else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
            verbose = 1;
        } else if ((v = weft_cli_define(argc, argv, &i, defines, &ndef)) != 0) {
            if (v < 0) {
                fprintf(stderr, "weft verify: -D needs NAME=VALUE\n");
                free(files);
                free(defines);
                return WEFT_EXIT_USAGE;
            }
        } else if (strcmp(a, "--zero-copy") == 0) {
            vo.direct_transfers = 1;
        } else if ((strcmp(a, "--fifo") == 0 || strcmp(a, "--max-reports") == 0) && i + 1 < argc) {
            int is_fifo = strcmp(a, "--fifo") == 0;
            if (parse_int(argv[++i], is_fifo ? 0 : 1, &v) != 0) {
                fprintf(stderr, "weft verify: %s wants a number %s, not '%s'\n", a,
                        is_fifo ? ">= 0" : ">= 1", argv[i]);
                free(files);
                free(defines);
                return WEFT_EXIT_USAGE;
            }
            if (is_fifo)
                vo.fifo_slots = v;
            else
                vo.max_reports = v;
        } else {
            fprintf(stderr, "weft verify: unknown option or missing value '%s'\n", a);
            verify_usage(stderr);
            free(files);
            free(defines);
            return WEFT_EXIT_USAGE;
        }
    }
    if (nfiles == 0) {
        fprintf(stderr, "weft verify: no input file\n");
        verify_usage(stderr);
        free(files);
        free(defines);
        return WEFT_EXIT_USAGE;
    }
    weft_severity level =
        verbose || weft_log_level_get() >= WEFT_LOG_INFO ? WEFT_SEV_INFO : WEFT_SEV_NOTE;
    for (int i = 0; i < nfiles; i++) {
        const char *path = files[i];
        weft_diag *d = weft_diag_new();
        weft_algo *a = NULL;
        weft_verify_summary sum;
        memset(&sum, 0, sizeof sum);
        weft_cc_options co = {defines, ndef, NULL, 0};
        weft_result r = d ? weft_cc_load_file(path, &co, &a, d) : WEFT_ERR_NOMEM;
        if (r == WEFT_OK) r = weft_ir_verify(a, &vo, d, &sum);
        fflush(stdout);
        weft_diag_print(d, stderr, level);
        fflush(stderr);
        if (r == WEFT_OK) {
            if (!quiet) {
                printf("%s: verified %s (%s%s%s) on %d ranks\n", path, weft_coll_name(a->coll),
                       a->inplace ? "in-place" : "", a->inplace && a->outofplace ? ", " : "",
                       a->outofplace ? "out-of-place" : "", a->ngpus);
                weft_verify_summary_print(&sum, stdout, verbose ? 1 << 30 : 16);
            }
        } else {
            if (a != NULL && r == WEFT_ERR_INPUT) {
                fprintf(stderr, "%s: verification failed:", path);
                const char *sep = " ";
                for (int c = 0; c < WEFT_VERIFY_CLASS_COUNT; c++)
                    if (sum.errors[c]) {
                        fprintf(stderr, "%s%lld %s", sep, (long long)sum.errors[c],
                                weft_verify_class_name((weft_verify_class)c));
                        sep = ", ";
                    }
                fprintf(stderr, "\n");
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
    free(files);
    free(defines);
    return rc;
}
