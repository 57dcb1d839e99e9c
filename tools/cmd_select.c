/* cmd_select.c — `weft select`: which loaded algorithm serves a collective call, and why not, as
 * libweft_nccl.so decides it, without a GPU. */
#include "commands.h"
#include "datadir.h"
#include "weft_common.h"
#include "weft_ir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The collectives weft serves (the table's runnable column), for --help and completion. */
#define SEL_IF_1(x) x,
#define SEL_IF_0(x)
#define SEL_COLL_(id, name, a, b, c, d, runnable, e) SEL_IF_##runnable(name)
static const char *const coll_words[] = {WEFT_COLLS(SEL_COLL_) NULL};

enum {
    OPT_RANKS = 256,
    OPT_GPN,
    OPT_BYTES,
    OPT_SWEEP,
    OPT_TYPE,
    OPT_OP,
    OPT_INPLACE,
    OPT_OUTOFPLACE,
    OPT_BOTH,
    OPT_ROOT,
    OPT_TABLE,
    OPT_NO_TABLE,
    OPT_GRAPH,
    OPT_REGISTERED,
    OPT_COMPAT
};

static const weft_opt select_opts[] = {
    WEFT_OPT_TEXT(PATHS, 'd', "algos", "PATHS",
                  "colon-separated folders and files of algorithms\n"
                  "(default $WEFT_ALGO_DIR)"),
    WEFT_OPT_INT(OPT_RANKS, "ranks", "N", 1, 8192, "the communicator's rank count (default 2)"),
    WEFT_OPT_INT(OPT_GPN, "gpus-per-node", "G", 1, 8192,
                 "ranks n*G .. n*G+G-1 on node n (default: one node)"),
    WEFT_OPT_SIZE(OPT_BYTES, "bytes", "B", 0, 1ull << 47,
                  "the call's size as selection counts it (default\n"
                  "1M)"),
    WEFT_OPT_FLAG(OPT_SWEEP, "sweep", "every size from 8 B to 1 GB, doubling"),
    WEFT_OPT_TYPE(OPT_TYPE, "the data type (default float)"),
    WEFT_OPT_OP(OPT_OP, "the reduction (default sum)"),
    WEFT_OPT_FLAG(OPT_INPLACE, "inplace", "an in-place call"),
    WEFT_OPT_FLAG(OPT_OUTOFPLACE, "outofplace", "an out-of-place call (default)"),
    WEFT_OPT_FLAG(OPT_BOTH, "both", "both"),
    WEFT_OPT_INT(OPT_ROOT, "root", "R", 0, 8191, "the root of a rooted collective (default 0)"),
    WEFT_OPT_TEXT(FILE, OPT_TABLE, "table", "FILE",
                  "answer from this tuning table, as on the machine\n"
                  "that made it"),
    WEFT_OPT_FLAG(OPT_NO_TABLE, "no-table", "answer from the files' own size ranges"),
    WEFT_OPT_FLAG(OPT_GRAPH, "graph", "a call captured in a CUDA graph"),
    WEFT_OPT_FLAG(OPT_REGISTERED, "registered",
                  "a call on buffers registered as symmetric windows"),
    WEFT_OPT_FLAG(OPT_COMPAT, "compat",
                  "also warn where a file exceeds what MSCCL's and\n"
                  "RCCL's loaders accept (channels, thread\n"
                  "blocks)"),
    WEFT_OPT_FLAG('v', "verbose",
                  "say how each choice was made: the ranking of the\n"
                  "algorithms that fit, with their keys"),
    {0}};

const weft_cmd_spec weft_spec_select = {
    .name = "select",
    .summary = "which loaded algorithm serves a collective call, or why NCCL does",
    .synopsis = "[-d PATHS] COLL [--ranks N] [--gpus-per-node G] [--bytes B | --sweep]\n"
                "                   [--type T] [--op OP] [--inplace | --outofplace | --both] "
                "[--root R]\n"
                "                   [--table FILE | --no-table] [--graph] [--registered] "
                "[--compat] [-v]",
    .description =
        "Loads the algorithms of PATHS (colon-separated folders and files; default\n"
        "$WEFT_ALGO_DIR, else the library installed with this weft, else ./algorithms;\n"
        ".weft sources with a parameter N are compiled for N ranks) and prints, for a call of\n"
        "collective COLL, the algorithm libweft_nccl.so selects, or why NCCL serves it. B is the\n"
        "call's size as selection counts it (docs/shim.md); K, M and G suffixes are powers of\n"
        "1024. --sweep prints every size from 8 B to 1 GB, doubling. Defaults: 2 ranks, float,\n"
        "sum, out-of-place, root 0.\n"
        "--gpus-per-node G puts ranks n*G .. n*G+G-1 on node n, as NCCL's LSA teams (default:\n"
        "one node); sources with a parameter G are compiled with it, and across nodes only\n"
        "algorithms written for them serve. Given G, each choice also shows how it runs: its\n"
        "GPU phases (CTAs per rank, protocol) and network phases (NCCL send/recv: peers and\n"
        "bytes per rank), as `weft plan` does.\n"
        "A tuning table (weft tune) decides where it covers the call, as in libweft_nccl.so:\n"
        "$WEFT_TUNE_FILE, or weft-tune.txt in a folder of PATHS (its machine compared with this\n"
        "one's as far as it can be known here), or --table FILE (answered as on the machine that\n"
        "made it: not compared); each answer then says which range of the table decided and what\n"
        "was measured there. --graph and --registered ask about calls captured in CUDA graphs and\n"
        "on buffers registered as symmetric windows (the table measures them apart); --no-table\n"
        "answers from the files' own size ranges. --compat adds the warnings about limits of\n"
        "MSCCL's and RCCL's loaders that weft itself does not have.\n"
        "Where several algorithms fit a call in their own size ranges (and no tuning table names\n"
        "one), the one that sends the fewest bytes across the network serves (from its cut into\n"
        "phases; on one node they tie), else the first in load order. `weft estimate`'s timing\n"
        "model does not rank them: it is calibrated on one node of 2 GPUs (docs/estimate.md);\n"
        "`weft tune` measures instead.\n"
        "-v says how each choice was made: that ranking with each candidate's keys, and across\n"
        "nodes without a table section for the node shape, the policy that applies.\n"
        "It also says for every file of the collective why it does or does not serve each call: "
        "the\n"
        "`require` that rules it out for this communicator (file:line:col and its message, often\n"
        "a gate such as SERVE), the node shape, or its size range, buffer mode or root; without\n"
        "-v a last line counts the files ruled out for this communicator.",
    .opts = select_opts,
    .operands = WEFT_ARG_WORD,
    .operand_words = coll_words,
    .exit_status = "0 ok, 1 an algorithm or table file is wrong (still answers without it), 2 "
                   "usage.",
};

#if __has_include("weft_runtime.h")
#include "weft_select.h"
#include "weft_tune_table.h"

static const char *file_base(const char *path) {
    const char *s = path ? strrchr(path, '/') : NULL;
    return s ? s + 1 : path;
}

/* What the table says about the call and why: its range, and what was measured there. */
static void explain(const weft_tune_table *t, const weft_registry *r, const weft_call *c, int i) {
    char what[128], lo[32], hi[32];
    int gpn = weft_tune_shape(c->nranks, weft_registry_gpus_per_node(r));
    const weft_tune_section *s = weft_tune_find(t, c->coll, c->nranks, gpn, c->inplace, c->flags);
    const char *path = t->path ? t->path : "the table";
    if (s == NULL) {
        weft_tune_section sk = {.coll = c->coll,
                                .ranks = c->nranks,
                                .gpn = gpn,
                                .inplace = weft_coll_rooted(c->coll) ? 0 : c->inplace,
                                .flags = c->flags};
        weft_tune_section_str(&sk, what, sizeof what);
        printf("  %s has no section for %s: the files' own size ranges decide\n", path, what);
        return;
    }
    uint64_t bytes = weft_tune_call_bytes(c);
    const weft_tune_range *g = weft_tune_range_of(s, bytes);
    if (g == NULL) return;
    weft_tune_bytes_str(g->lo, lo, sizeof lo);
    if (g->hi == WEFT_TUNE_INF)
        snprintf(hi, sizeof hi, "inf");
    else
        weft_tune_bytes_str(g->hi + 1, hi, sizeof hi);
    const char *who = g->choice < 0 ? "NCCL" : t->algos[g->choice].id;
    printf("  %s:%d: sizes [%s, %s) -> %s", path, g->line, lo, hi, who);
    if (g->choice >= 0) {
        const weft_tune_algo *ta = &t->algos[g->choice];
        const weft_algo *a = i >= 0 ? weft_registry_get(r, (size_t)i) : NULL;
        int followed = a && a->name && strcmp(a->name, ta->name) == 0 && a->file &&
                       strcmp(file_base(a->file), ta->file) == 0;
        if (!followed)
            printf(" (not loaded here, changed since it was measured, or not for this call: the "
                   "files' own size ranges decided)");
    }
    putchar('\n');
    const weft_tune_row *row = weft_tune_row_of(s, bytes);
    if (row == NULL || row->bytes < g->lo || row->bytes > g->hi) return;
    weft_tune_bytes_str(row->bytes, lo, sizeof lo);
    printf("  measured at %s: NCCL %.2f us", lo, row->nccl_us);
    for (size_t k = 0; k < row->nm; k++) {
        const weft_tune_meas *m = &row->m[k];
        if (m->status == WEFT_TUNE_OK)
            printf(", %s %.2f us (%.3fx NCCL's time, 95%% interval %.3f-%.3f)",
                   t->algos[m->algo].id, m->us, m->ratio, m->lo, m->hi);
        else
            printf(", %s %s", t->algos[m->algo].id,
                   m->status == WEFT_TUNE_WRONG ? "wrong result" : "unsupported");
    }
    printf("; %d rounds\n", row->rounds);
    for (const char *n = row->note; n && *n;) { /* weft tune's verification through the shim */
        size_t len = strcspn(n, "\n");
        printf("  %.*s\n", (int)len, n);
        n += len + (n[len] == '\n');
    }
}

static void print_bytes(unsigned long long b) {
    if (b >= (1ull << 30) && b % (1ull << 30) == 0)
        printf("%llu GB", b >> 30);
    else if (b >= (1ull << 20) && b % (1ull << 20) == 0)
        printf("%llu MB", b >> 20);
    else if (b >= 1024 && b % 1024 == 0)
        printf("%llu KB", b >> 10);
    else
        printf("%llu B", b);
}

/* "GPU phases: 9, 1-2, 9 CTAs per rank (Simple); network phases (NCCL send/recv): 1 peer and
 * 64 KB per rank, 1 peer and 64 KB per rank" for the selected algorithm at this call. */
static void show_phases(const weft_algo *a, const weft_phased *p, const weft_call *c) {
    unsigned long long chunk =
        (unsigned long long)((c->count + (size_t)weft_algo_chunks_per_seg(a) - 1) /
                             (size_t)weft_algo_chunks_per_seg(a)) *
        (unsigned long long)weft_dtype_size(c->dtype);
    int nph = p ? p->nphases : 1;
    printf("    %d GPU phase%s: ", nph, nph == 1 ? "" : "s");
    for (int ph = 0; ph < nph; ph++) {
        const weft_algo *g = p ? p->gpu[ph] : a;
        int lo = 1 << 30, hi = 0;
        for (int r = 0; r < g->ngpus; r++) {
            if (g->gpus[r].ntbs < lo) lo = g->gpus[r].ntbs;
            if (g->gpus[r].ntbs > hi) hi = g->gpus[r].ntbs;
        }
        printf(lo == hi ? "%s%d" : "%s%d-%d", ph ? ", " : "", lo, hi);
    }
    printf(" CTAs per rank (%s)", weft_proto_name(weft_proto_runs_as(a->proto)));
    if (nph > 1) {
        printf("; %d network phase%s (NCCL send/recv): ", nph - 1, nph == 2 ? "" : "s");
        for (int ph = 0; ph + 1 < nph; ph++) {
            int peers = 0;
            long long chunks = 0;
            for (int r = 0; r < p->nranks; r++) {
                int np = 0;
                long long nc = 0;
                for (int x = 0; x < p->nxfers[ph]; x++)
                    if (p->xfers[ph][x].src == r) np++, nc += p->xfers[ph][x].cnt;
                if (np > peers) peers = np;
                if (nc > chunks) chunks = nc;
            }
            printf("%s%d peer%s and ", ph ? ", " : "", peers, peers == 1 ? "" : "s");
            print_bytes((unsigned long long)chunks * chunk);
        }
        printf(" per rank");
    }
    printf("\n");
}

/* -v: how the choice was made — which key ranked the algorithms that fit, each with its keys —
 * and, across nodes without a table section for the node shape, the policy that applies. */
static void reasons(const weft_registry *r, const weft_call *c, const weft_select_expl *e) {
    if (e->chosen >= 0 && e->basis != WEFT_SELECT_TABLE) {
        if (e->ncands > 1)
            printf("  why: %zu algorithms fit the call in their own size ranges; ranked by %s:\n",
                   e->ncands, weft_select_basis_str(e->basis));
        else
            printf("  why: %s\n", weft_select_basis_str(e->basis));
        for (size_t k = 0; e->ncands > 1 && k < e->ncands; k++) {
            const weft_select_cand *x = &e->cands[k];
            const weft_algo *a = weft_registry_get(r, (size_t)x->algo);
            char net[32];
            printf("    %zu. '%s' (%s)", k + 1, a->name, a->file ? a->file : "in memory");
            if (x->est_us >= 0) printf(": estimated %.2f us", x->est_us);
            if (x->net_bytes == UINT64_MAX) {
                printf("%s more than 16 EB across the network", x->est_us >= 0 ? "," : ":");
            } else {
                weft_tune_bytes_str(x->net_bytes, net, sizeof net);
                printf("%s %s across the network", x->est_us >= 0 ? "," : ":", net);
            }
            printf("%s\n", k == 0 ? " <- serves" : "");
        }
    } else if (e->chosen >= 0) {
        printf("  why: %s\n", weft_select_basis_str(e->basis));
    }
    if (e->gpus_per_node < c->nranks && e->section == NULL)
        printf("  policy across nodes (%d nodes of %d GPU%s): " WEFT_SELECT_POLICY_NODES "\n",
               c->nranks / e->gpus_per_node, e->gpus_per_node, e->gpus_per_node == 1 ? "" : "s");
}

/* Per file of the collective, why it serves this call or not (-v). */
static void explain_files(const weft_registry *base, const weft_registry *r, const weft_call *c,
                          const weft_diag *made, size_t made_from) {
    weft_registry_why *w = NULL;
    size_t n = 0;
    if (weft_registry_explain(base, r, c, made, made_from, &w, &n) != WEFT_OK) return;
    for (size_t i = 0; i < n; i++) {
        printf("    %s", w[i].file);
        if (w[i].line > 0) printf(":%d", w[i].line);
        if (w[i].line > 0 && w[i].col > 0) printf(":%d", w[i].col);
        printf(": %s\n", w[i].why);
    }
    weft_registry_why_free(w, n);
}

/* How many files of the call's collective nothing is built from for this communicator. */
static size_t ruled_out(const weft_registry *base, const weft_registry *r, const weft_call *c,
                        const weft_diag *made, size_t made_from) {
    weft_registry_why *w = NULL;
    size_t n = 0, k = 0;
    if (weft_registry_explain(base, r, c, made, made_from, &w, &n) != WEFT_OK) return 0;
    for (size_t i = 0; i < n; i++)
        k += w[i].verdict == WEFT_WHY_RULED_OUT;
    weft_registry_why_free(w, n);
    return k;
}

static void one(const weft_registry *r, weft_call c, unsigned long long bytes, int phases,
                int verbose) {
    const weft_tune_table *t = weft_registry_table(r);
    weft_select_expl e;
    int i = weft_registry_select_explain(r, &c, NULL, &e);
    const char *why = e.why;

    /* across nodes a file of this rank count may still be left out (its node shape, more GPU
     * phases than weft runs): the line after the answers counts them, -v says why */
    if (weft_registry_size(r) == 0)
        why = phases ? "no algorithm for this rank count on these nodes"
                     : "no algorithm for this rank count";
    printf("%s, %d ranks, %llu B (%zu x %s)", weft_coll_name(c.coll), c.nranks, bytes, c.count,
           weft_dtype_name(c.dtype));
    if (weft_coll_reduces(c.coll)) printf(", %s", weft_redop_name(c.op));
    if (weft_coll_rooted(c.coll)) printf(", root %d", c.root);
    printf(", %s", c.inplace ? "in-place" : "out-of-place");
    if (t || c.flags)
        printf(", %s, %s", weft_call_flag_word(WEFT_CALL_GRAPH, c.flags),
               weft_call_flag_word(WEFT_CALL_REGISTERED, c.flags));
    printf(" -> ");
    if (i >= 0) {
        const weft_algo *a = weft_registry_get(r, (size_t)i);
        printf("weft '%s' (%s)\n", a->name, a->file ? a->file : "in memory");
        if (phases) show_phases(a, weft_registry_phases(r, (size_t)i), &c);
    } else {
        printf("NCCL: %s\n", why);
    }
    if (t) explain(t, r, &c, i);
    if (verbose) reasons(r, &c, &e);
}

static void describe_table(const weft_tune_table *t, int compared) {
    const weft_machine *m = &t->machine;
    char nccl[32];
    weft_machine_nccl_str(m->nccl, nccl, sizeof nccl);
    printf("# tuning table %s: measured on %d x %s (%s), NCCL %s, weft %s", t->path ? t->path : "",
           m->gpus, m->gpu ? m->gpu : "unknown GPU", m->topology ? m->topology : "topology unknown",
           nccl, m->weft ? m->weft : "unknown");
    for (int k = 0; k < m->nrpn; k++)
        printf("%s%d", k ? ", " : ", ranks per node ", m->rpn[k]);
    printf("; %s\n", compared ? "this machine agrees as far as it can be known here"
                              : "--table: answered as on that machine, not compared with this one");
}

int weft_cmd_select(int argc, char **argv) {
    const char *paths = NULL;
    const char *coll_s = NULL;
    unsigned long long bytes = 1 << 20;
    int ranks = 2, type = WEFT_DTYPE_FLOAT, op = WEFT_OP_SUM, root = 0, sweep = 0, gpn = 0;
    int modes = 2; /* bit 0 in-place, bit 1 out-of-place */
    const char *table = NULL;
    int no_table = 0;
    unsigned flags = 0;
    int compat = 0, verbose = 0;
    weft_getopt g;
    weft_getopt_init(&g, &weft_spec_select, argc, argv);
    for (int c; (c = weft_getopt_next(&g)) != WEFT_OPT_END;) {
        switch (c) {
        case WEFT_OPT_EXIT: return g.exit_code;
        case OPT_INPLACE: modes = 1; break;
        case OPT_OUTOFPLACE: modes = 2; break;
        case OPT_BOTH: modes = 3; break;
        case OPT_SWEEP: sweep = 1; break;
        case OPT_NO_TABLE: no_table = 1; break;
        case OPT_GRAPH: flags |= WEFT_CALL_GRAPH; break;
        case OPT_REGISTERED: flags |= WEFT_CALL_REGISTERED; break;
        case OPT_COMPAT: compat = 1; break;
        case 'v': verbose = 1; break;
        case 'd': paths = g.arg; break;
        case OPT_TABLE: table = g.arg; break;
        case OPT_RANKS: ranks = (int)g.num; break;
        case OPT_GPN: gpn = (int)g.num; break;
        case OPT_ROOT: root = (int)g.num; break;
        case OPT_BYTES: bytes = g.unum; break;
        case OPT_TYPE: type = (int)g.num; break;
        case OPT_OP: op = (int)g.num; break;
        }
    }
    if (g.noperands > 1)
        return weft_usage_error(&weft_spec_select, "one collective at a time ('%s' and '%s')",
                                g.operands[0], g.operands[1]);
    coll_s = g.noperands ? g.operands[0] : NULL;
    int coll = coll_s ? weft_coll_from_name(coll_s) : -1;
    if (coll < 0 || !weft_coll_runnable((weft_coll)coll)) {
        int n = 0;
        while (coll_words[n])
            n++;
        const char *dym = coll_s ? weft_did_you_mean(coll_s, coll_words, n) : NULL;
        if (coll_s == NULL) return weft_usage_error(&weft_spec_select, "which collective?");
        if (dym)
            return weft_usage_error(&weft_spec_select,
                                    "not a collective weft serves: '%s'; did you mean '%s'?",
                                    coll_s, dym);
        return weft_usage_error(&weft_spec_select, "not a collective weft serves: '%s'", coll_s);
    }
    if (root >= ranks)
        return weft_usage_error(&weft_spec_select, "--root %d is not a rank of %d", root, ranks);
    if (table && no_table) {
        fprintf(stderr, "weft select: --table and --no-table exclude each other\n");
        return WEFT_EXIT_USAGE;
    }
    if (gpn > 0 && ranks % gpn != 0) {
        fprintf(stderr, "weft select: %d ranks are not whole nodes of %d GPUs\n", ranks, gpn);
        return WEFT_EXIT_USAGE;
    }
    /* no -d: the one default (datadir.h): $WEFT_ALGO_DIR, the installed library, ./algorithms */
    const char *from = "-d";
    char *defpaths = NULL;
    if (paths == NULL) {
        defpaths = weft_default_algos(&from);
        paths = defpaths ? defpaths : "";
        if (defpaths == NULL)
            fprintf(stderr, "weft select: no algorithms loaded: %s; NCCL serves every call\n",
                    from);
    }
    if (verbose && defpaths) printf("algorithms: %s (%s)\n", paths, from);
    weft_registry *r = NULL;
    weft_diag *d = weft_diag_new();
    if (d == NULL || weft_registry_new(&r) != WEFT_OK ||
        weft_registry_load_ex(r, paths, table || no_table ? WEFT_REGISTRY_NO_TABLE : 0, d) !=
            WEFT_OK) {
        fprintf(stderr, "weft select: out of memory\n");
        weft_diag_free(d);
        weft_registry_free(r);
        free(defpaths);
        return WEFT_EXIT_INPUT;
    }
    free(defpaths);
    defpaths = NULL;
    paths = NULL;
    int compared = weft_registry_table(r) != NULL;
    if (table) {
        weft_tune_table *t = NULL;
        if (weft_tune_read_file(table, &t, d) == WEFT_OK) {
            if (weft_registry_set_table(r, t, d) != WEFT_OK) {
                fprintf(stderr, "weft select: out of memory\n");
                weft_diag_free(d);
                weft_registry_free(r);
                return WEFT_EXIT_INPUT;
            }
        } else {
            weft_diag_add(d, WEFT_SEV_NOTE, table, 0, 0,
                          "tuning table ignored: it cannot be read; the algorithm files' own size "
                          "ranges apply");
        }
    }
    /* the algorithms for this communicator, as libweft_nccl.so builds them (.weft sources with
     * parameters N and G are compiled for it; across nodes every algorithm is cut into phases) */
    weft_registry *base = r;
    r = NULL;
    size_t made_from = weft_diag_size(d);
    if (weft_registry_for_nodes(base, ranks, gpn > 0 ? gpn : ranks, &r, d) != WEFT_OK) {
        fprintf(stderr, "weft select: out of memory\n");
        weft_diag_free(d);
        weft_registry_free(base);
        return WEFT_EXIT_INPUT;
    }
    /* the MSCCL and RCCL loaders' limits are no limits of weft's: only when asked (printed, and
     * kept for explain_files: dropping shifts the entries after made_from, so print a copy) */
    weft_diag *shown = weft_diag_new();
    if (shown) {
        weft_diag_append(shown, d);
        if (!compat) weft_diag_drop(shown, WEFT_DIAG_COMPAT);
        weft_diag_print(shown, stderr, WEFT_SEV_NOTE);
        weft_diag_free(shown);
    }
    int status = weft_diag_count(d, WEFT_SEV_ERROR) ? WEFT_EXIT_INPUT : WEFT_EXIT_OK;
    if (weft_registry_table(r)) describe_table(weft_registry_table(r), compared);
    /* the count of a call of b bytes (weft_coll_footprint) */
    unsigned long long per =
        weft_coll_footprint((weft_coll)coll, 1, (uint64_t)weft_dtype_size((weft_dtype)type), ranks);
    unsigned long long lo = sweep ? 8 : bytes, hi = sweep ? 1ull << 30 : bytes;
    for (unsigned long long b = lo; b <= hi; b *= 2) {
        for (int m = 0; m < 2; m++) {
            if (!(modes & (1 << m))) continue;
            weft_call c = {(weft_coll)coll,
                           (weft_dtype)type,
                           (weft_redop)op,
                           (size_t)(b / per),
                           m == 0,
                           root,
                           ranks,
                           flags,
                           0};
            one(r, c, b, gpn > 0, verbose);
            if (verbose) explain_files(base, r, &c, d, made_from);
        }
        if (b == 0) break;
    }
    weft_call first = {
        (weft_coll)coll, (weft_dtype)type, (weft_redop)op, 1, 0, root, ranks, flags, 0};
    size_t out = verbose ? 0 : ruled_out(base, r, &first, d, made_from);
    if (out > 0)
        printf("%zu %s file%s ruled out on %d ranks", out, weft_coll_name((weft_coll)coll),
               out == 1 ? " is" : "s are", ranks);
    if (out > 0 && gpn > 0 && gpn < ranks) printf(" in nodes of %d GPUs", gpn);
    if (out > 0)
        printf(" (a require, a gate such as SERVE, or the node shape): weft select -v says why\n");
    weft_diag_free(d);
    weft_registry_free(base);
    weft_registry_free(r);
    return status;
}
#else
int weft_cmd_select(int argc, char **argv) {
    return weft_cmd_unavailable(&weft_spec_select, argc, argv);
}
#endif
