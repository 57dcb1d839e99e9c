/* opts.h — the weft CLI's option tables: one table per command, read by one parser (--opt=value,
 * --opt value, -ovalue, -abc, --, range-checked numbers, did-you-mean), by --help, and by the
 * generators of the man pages and the bash completion, so that the four cannot disagree. */
#ifndef WEFT_TOOLS_OPTS_H
#define WEFT_TOOLS_OPTS_H

#include "weft_common.h"

#include <stdio.h>

/* What an option's value (or a command's operands) is: how it is checked, what the parser
 * stores, and what the completion offers. */
#define WEFT_ARGS(X)                                                                               \
    X(NONE, "")      /* a flag: no value */                                                        \
    X(STR, "")       /* any text, unchecked */                                                     \
    X(FILE, "file")  /* a file read ("-": standard input where the command says so) */             \
    X(ALGO, "algo")  /* an algorithm file read (.xml, .weft; "-" where the command says so) */     \
    X(OUT, "file")   /* a file written ("-": standard output) */                                   \
    X(DIR, "dir")    /* a folder */                                                                \
    X(PATHS, "file") /* colon-separated folders and files */                                       \
    X(INT, "")       /* an integer in [lo, hi]: g->num */                                          \
    X(SIZE, "")      /* bytes, K/M/G suffixes (powers of 1024), in [lo, hi]: g->unum */            \
    X(REAL, "")      /* a number in [rlo, rhi]: g->real */                                         \
    X(WORD, "words") /* one of words: g->num is its index */                                       \
    X(LIST, "words") /* comma-separated words: g->num has bit i for words[i] */

typedef enum weft_arg {
#define WEFT_X_(n, c) WEFT_ARG_##n,
    WEFT_ARGS(WEFT_X_)
#undef WEFT_X_
} weft_arg;

/* One option. id is what the parser returns for it: the short letter when there is one,
 * else a number >= 256. A table ends with an entry whose id is 0; tables are written with the
 * WEFT_OPT_* entry macros below. */
typedef struct weft_opt {
    int id;
    char shortname;   /* 0: none */
    const char *name; /* the long name without "--"; NULL: none */
    weft_arg arg;
    const char *meta;         /* the value's name in --help and man ("FILE", "N"); NULL for flags */
    const char *help;         /* lines separated by '\n', each at most 56 columns */
    long long lo;             /* INT: smallest; SIZE: smallest (unsigned) */
    unsigned long long hi;    /* INT and SIZE: largest */
    double rlo, rhi;          /* REAL: the range, inclusive */
    const char *const *words; /* WORD, LIST: the choices, NULL-terminated */
    /* WORD: the value of a name when the names have aliases or ignore case (the IR's
     * weft_dtype_from_name...), -1 when unknown; NULL: the index in words */
    int (*lookup)(const char *name);
    /* 1: a -D NAME=VALUE of .weft sources, which the parser keeps (weft_getopt.defines) rather
     * than returning */
    int define;
} weft_opt;

/* The entry form of a table, one macro per kind of value, so that an option is one line or two:
 * KEY is what the parser returns for it and, when it is a character, its short option (-K); an
 * option with no short one has a KEY >= 256 (an enum of the command's). NAME is the long name
 * without "--" (NULL: none), META the value's name in --help and man ("FILE", "N"), HELP lines
 * separated by '\n', each at most 56 columns. */
#define WEFT_OPT_(KEY, NAME, ARG, META, HELP)                                                      \
    .id = (KEY), .shortname = (char)((KEY) < 256 ? (KEY) : 0), .name = (NAME), .arg = (ARG),       \
    .meta = (META), .help = (HELP)
#define WEFT_OPT_FLAG(KEY, NAME, HELP)                                                             \
    { WEFT_OPT_(KEY, NAME, WEFT_ARG_NONE, NULL, HELP) }
/* A value of kind STR, FILE, ALGO, OUT, DIR or PATHS (WEFT_ARGS above): checked only for
 * being named (not empty) where it names a file. */
#define WEFT_OPT_TEXT(KIND, KEY, NAME, META, HELP)                                                 \
    { WEFT_OPT_(KEY, NAME, WEFT_ARG_##KIND, META, HELP) }
/* Numbers in [LO, HI]: INT and SIZE (bytes) whole, REAL any. */
#define WEFT_OPT_INT(KEY, NAME, META, LO, HI, HELP)                                                \
    { WEFT_OPT_(KEY, NAME, WEFT_ARG_INT, META, HELP), .lo = (LO), .hi = (HI) }
#define WEFT_OPT_SIZE(KEY, NAME, META, LO, HI, HELP)                                               \
    { WEFT_OPT_(KEY, NAME, WEFT_ARG_SIZE, META, HELP), .lo = (LO), .hi = (HI) }
#define WEFT_OPT_REAL(KEY, NAME, META, LO, HI, HELP)                                               \
    { WEFT_OPT_(KEY, NAME, WEFT_ARG_REAL, META, HELP), .rlo = (LO), .rhi = (HI) }
/* One of WORDS (LOOKUP: the value of a name, see weft_opt.lookup; NULL: its index), or LIST:
 * comma-separated words. */
#define WEFT_OPT_WORD(KEY, NAME, META, WORDS, LOOKUP, HELP)                                        \
    { WEFT_OPT_(KEY, NAME, WEFT_ARG_WORD, META, HELP), .words = (WORDS), .lookup = (LOOKUP) }
#define WEFT_OPT_LIST(KEY, NAME, META, WORDS, HELP)                                                \
    { WEFT_OPT_(KEY, NAME, WEFT_ARG_LIST, META, HELP), .words = (WORDS) }

/* Options several commands share, so that they all say them alike. -D NAME=VALUE of the
 * commands that take a .weft source wherever a schedule is (compiled with weft_cc_load_file): */
#define WEFT_OPT_DEFINE WEFT_OPT_DEFINE_HELP("set a parameter of .weft sources; repeatable")
#define WEFT_OPT_DEFINE_HELP(HELP)                                                                 \
    { WEFT_OPT_('D', "define", WEFT_ARG_STR, "NAME=VALUE", HELP), .define = 1 }

/* --type and --op of the commands that describe a call: the IR's names (and their aliases,
 * through its lookups), one word list each. */
extern const char *const weft_opt_type_words[];
extern const char *const weft_opt_op_words[];
#define WEFT_OPT_TYPE(KEY, HELP)                                                                   \
    WEFT_OPT_WORD(KEY, "type", "T", weft_opt_type_words, weft_dtype_from_name, HELP)
#define WEFT_OPT_OP(KEY, HELP)                                                                     \
    WEFT_OPT_WORD(KEY, "op", "OP", weft_opt_op_words, weft_redop_from_name, HELP)

/* One command (or subcommand: "trace merge"). Texts are pre-wrapped at 80 columns: --help
 * prints them as they are; the man page joins each paragraph's lines, keeping lines that start
 * with two spaces as they are. */
typedef struct weft_cmd_spec {
    const char *name;        /* "compile", "trace merge" */
    const char *summary;     /* one line, lower case, no period (weft --help, man NAME) */
    const char *synopsis;    /* after "weft NAME ": options and operands; '\n' starts another
                                usage line */
    const char *description; /* paragraphs separated by a blank line */
    const weft_opt *opts;    /* ends with {0}; --help (-h) is added by the parser */
    weft_arg operands;       /* what the operands are, for the completion */
    const char *const *operand_words;        /* WORD operands (collectives) */
    const char *exit_status;                 /* "0 ok, 1 ..., 2 usage error." */
    const struct weft_cmd_spec *const *subs; /* subcommands, NULL-terminated, or NULL */
    /* 1: NAME is a program of its own on the same parser (weft_bench), said as "NAME" where
     * weft's commands are "weft NAME" (usage lines, messages); no man page or completion */
    int own_program;
} weft_cmd_spec;

/* The parser's state: weft_getopt_init, then weft_getopt_next until it returns WEFT_OPT_END
 * (operands are then argv[1 .. 1 + noperands), in their order) or WEFT_OPT_EXIT (return
 * exit_code: 0 after --help, 2 after a usage error already reported on err). */
enum { WEFT_OPT_END = -1, WEFT_OPT_EXIT = -2 };

typedef struct weft_getopt {
    const weft_cmd_spec *spec;
    int argc;
    char **argv;
    FILE *out, *err; /* --help and messages; NULL discards them (ranks but the first) */
    int i, bundle;   /* next argv index; position inside a bundle of short options */
    int done;        /* after "--": everything is an operand */
    char **operands; /* argv + 1; operands are moved there as they are met */
    int noperands;
    int exit_code;
    const weft_opt *opt;     /* the option just returned */
    int as_short;            /* it was written -x, not --name */
    const char *arg;         /* its value as written (NULL for flags) */
    long long num;           /* INT, WORD, LIST */
    unsigned long long unum; /* SIZE */
    double real;             /* REAL */
    /* The -D values (WEFT_OPT_DEFINE) met so far, in their order, as weft_cc_options takes
     * them; weft_getopt_free frees them. Out of memory for them, weft_getopt_next says so and
     * returns WEFT_OPT_EXIT with exit_code 1. */
    const char **defines;
    size_t ndefines, defines_cap;
} weft_getopt;

void weft_getopt_init(weft_getopt *g, const weft_cmd_spec *spec, int argc, char **argv);
int weft_getopt_next(weft_getopt *g);
void weft_getopt_free(weft_getopt *g);

/* A usage error found after parsing: prints "weft NAME: message (weft NAME --help ...)" on one
 * line to stderr and returns 2 (WEFT_EXIT_USAGE). */
int weft_usage_error(const weft_cmd_spec *spec, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* As weft_usage_error, said on g->err (nothing when it is NULL). */
int weft_getopt_usage(weft_getopt *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* As weft_usage_error for the value of the option just returned (g->opt), from inside the loop:
 * "weft NAME: --opt: message" to g->err; returns 2 (WEFT_EXIT_USAGE), for the command to
 * return. */
int weft_opt_error(weft_getopt *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* What a command says after a step on `what` (a file): d's diagnostics to stderr from level up
 * (then d is emptied), and a failure they do not tell (any but WEFT_ERR_INPUT, whose diagnostics
 * are the message) as "weft NAME: WHAT: result". Returns r. */
weft_result weft_cmd_report(const weft_cmd_spec *spec, const char *what, weft_result r,
                            weft_diag *d, weft_severity level);

/* A command this build lacks (weft select and weft tune, which need the runtime layer, in a
 * build without nccl.h): its command line is still read (--help, usage errors), then "weft NAME:
 * this weft was built without the runtime layer (no nccl.h)" on stderr. Returns the exit code: 0
 * after --help, else 2. */
int weft_cmd_unavailable(const weft_cmd_spec *spec, int argc, char **argv);

/* Parses a size as the SIZE options do ("64K", "1M", "3G"): 0 when it is one in [lo, hi]. */
int weft_parse_size(const char *s, unsigned long long lo, unsigned long long hi,
                    unsigned long long *out);

/* --help of a command, to out. */
void weft_cmd_help(const weft_cmd_spec *spec, FILE *out);
/* The man page weft-NAME(1) (spaces in NAME become '-'), to out; version and date go into .TH.
 * docs: where the documentation is installed ("<prefix>/share/weft/docs"), which the page names
 * instead of the repository's docs/ paths; NULL keeps those. */
void weft_cmd_man(const weft_cmd_spec *spec, const char *version, const char *docs, FILE *out);
/* The bash completion of every command of specs (NULL-terminated), to out. */
void weft_cmd_completion(const weft_cmd_spec *const *specs, FILE *out);

#endif
