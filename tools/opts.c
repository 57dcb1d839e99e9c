/* opts.c — the weft CLI's one option parser over the commands' tables (opts.h), and what is
 * generated from the same tables: --help, the man pages and the bash completion. */
#include "opts.h"

#include "weft_ir.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const char *const weft_opt_type_words[] = {WEFT_DTYPES(WEFT_X_COL2) NULL};
const char *const weft_opt_op_words[] = {WEFT_REDOPS(WEFT_X_COL2) NULL};

/* --help, which every command takes: a table of its own (man_options reads to its end) */
static const weft_opt help_opts[] = {WEFT_OPT_FLAG('h', "help", "print the help and exit"), {0}};
#define help_opt (help_opts[0])

/* ---- messages ---------------------------------------------------------------------------- */
/* What precedes a command's name where it is said: "weft " ("weft compile"), or nothing for a
 * program of its own ("weft_bench"). */
static const char *cmd_prefix(const weft_cmd_spec *s) {
    return s->own_program ? "" : "weft ";
}

static void vmsg(FILE *f, const weft_cmd_spec *spec, const char *fmt, va_list ap) {
    if (f == NULL) return;
    fprintf(f, "%s%s: ", cmd_prefix(spec), spec->name);
    vfprintf(f, fmt, ap);
    fputc('\n', f);
}

static int usage_v(FILE *f, const weft_cmd_spec *spec, const char *fmt, va_list ap) {
    char buf[1024];
    vsnprintf(buf, sizeof buf, fmt, ap);
    if (f == NULL) return 2;
    if (strstr(buf, "did you mean"))
        fprintf(f, "%s%s: %s\n", cmd_prefix(spec), spec->name, buf);
    else
        fprintf(f, "%s%s: %s (%s%s --help tells more)\n", cmd_prefix(spec), spec->name, buf,
                cmd_prefix(spec), spec->name);
    return 2;
}

int weft_usage_error(const weft_cmd_spec *spec, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    usage_v(stderr, spec, fmt, ap);
    va_end(ap);
    return 2;
}

int weft_getopt_usage(weft_getopt *g, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    usage_v(g->err, g->spec, fmt, ap);
    va_end(ap);
    g->exit_code = 2;
    return 2;
}

static int fail(weft_getopt *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(weft_getopt *g, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vmsg(g->err, g->spec, fmt, ap);
    va_end(ap);
    g->exit_code = 2;
    g->i = g->argc; /* a later call ends at once */
    g->bundle = 0;
    return WEFT_OPT_EXIT;
}

/* How the user named the option just matched: "--ranks" or "-n". */
static void opt_display(const weft_opt *o, int as_short, char *buf, size_t n) {
    if (as_short || o->name == NULL)
        snprintf(buf, n, "-%c", o->shortname);
    else
        snprintf(buf, n, "--%s", o->name);
}

int weft_opt_error(weft_getopt *g, const char *fmt, ...) {
    char what[1024], name[80];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    opt_display(g->opt, g->as_short, name, sizeof name);
    fail(g, "%s: %s", name, what);
    return 2;
}

weft_result weft_cmd_report(const weft_cmd_spec *spec, const char *what, weft_result r,
                            weft_diag *d, weft_severity level) {
    weft_diag_print(d, stderr, level);
    weft_diag_clear(d);
    if (r != WEFT_OK && r != WEFT_ERR_INPUT)
        fprintf(stderr, "%s%s: %s: %s\n", cmd_prefix(spec), spec->name, what, weft_result_str(r));
    return r;
}

int weft_cmd_unavailable(const weft_cmd_spec *spec, int argc, char **argv) {
    weft_getopt g;
    weft_getopt_init(&g, spec, argc, argv);
    for (int c; (c = weft_getopt_next(&g)) != WEFT_OPT_END;)
        if (c == WEFT_OPT_EXIT) return g.exit_code;
    fprintf(stderr, "%s%s: this weft was built without the runtime layer (no nccl.h)\n",
            cmd_prefix(spec), spec->name);
    return 2;
}

/* ---- values ------------------------------------------------------------------------------ */
int weft_parse_size(const char *s, unsigned long long lo, unsigned long long hi,
                    unsigned long long *out) {
    char *end;
    if (!isdigit((unsigned char)*s)) return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10), mult = 1;
    if (errno) return -1;
    if (*end == 'K' || *end == 'k')
        mult = 1ull << 10, end++;
    else if (*end == 'M' || *end == 'm')
        mult = 1ull << 20, end++;
    else if (*end == 'G' || *end == 'g')
        mult = 1ull << 30, end++;
    if (*end == 'B' || *end == 'b') end++;
    if (*end != '\0' || (mult > 1 && v > ~0ull / mult)) return -1;
    v *= mult;
    if (v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

static void words_str(const char *const *w, char *buf, size_t n) {
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; w[i] && len + 1 < n; i++)
        len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? ", " : "", w[i]);
}

static int word_index(const char *const *w, const char *s, size_t len) {
    for (int i = 0; w[i]; i++)
        if (strlen(w[i]) == len && strncmp(w[i], s, len) == 0) return i;
    return -1;
}

static int bad_word(weft_getopt *g, const char *s, size_t len) {
    char all[512], one[128];
    int n = 0;
    while (g->opt->words[n])
        n++;
    snprintf(one, sizeof one, "%.*s", (int)(len < 100 ? len : 100), s);
    words_str(g->opt->words, all, sizeof all);
    const char *dym = weft_did_you_mean(one, g->opt->words, n);
    if (dym) return weft_opt_error(g, "unknown value '%s'; did you mean '%s'?", one, dym);
    return weft_opt_error(g, "unknown value '%s' (one of %s)", one, all);
}

/* Checks and converts the value of g->opt. */
static int take_value(weft_getopt *g, const char *v) {
    const weft_opt *o = g->opt;
    char *end;
    g->arg = v;
    switch (o->arg) {
    case WEFT_ARG_NONE: break;
    case WEFT_ARG_STR: break;
    case WEFT_ARG_FILE:
    case WEFT_ARG_ALGO:
    case WEFT_ARG_OUT:
    case WEFT_ARG_DIR:
    case WEFT_ARG_PATHS:
        if (*v == '\0') return weft_opt_error(g, "an empty name"), WEFT_OPT_EXIT;
        break;
    case WEFT_ARG_INT: {
        errno = 0;
        long long x = strtoll(v, &end, 10);
        if (end == v || *end != '\0' || isspace((unsigned char)*v))
            return weft_opt_error(g, "'%s' is not a whole number", v), WEFT_OPT_EXIT;
        if (errno || x < o->lo || (x > 0 && (unsigned long long)x > o->hi))
            return weft_opt_error(g, "%s is out of range (%lld to %llu)", v, o->lo, o->hi),
                   WEFT_OPT_EXIT;
        g->num = x;
        break;
    }
    case WEFT_ARG_SIZE:
        if (weft_parse_size(v, 0, ~0ull, &g->unum) != 0)
            return weft_opt_error(g, "'%s' is not a size (bytes, or with a K, M or G suffix)", v),
                   WEFT_OPT_EXIT;
        if (g->unum < (unsigned long long)o->lo || g->unum > o->hi)
            return weft_opt_error(g, "%s is out of range (%llu to %llu bytes)", v,
                                  (unsigned long long)o->lo, o->hi),
                   WEFT_OPT_EXIT;
        break;
    case WEFT_ARG_REAL:
        errno = 0;
        g->real = strtod(v, &end);
        if (end == v || *end != '\0' || errno || !isfinite(g->real) || isspace((unsigned char)*v))
            return weft_opt_error(g, "'%s' is not a number", v), WEFT_OPT_EXIT;
        if (g->real < o->rlo || g->real > o->rhi)
            return weft_opt_error(g, "%s is out of range (%g to %g)", v, o->rlo, o->rhi),
                   WEFT_OPT_EXIT;
        break;
    case WEFT_ARG_WORD:
        if ((g->num = o->lookup ? o->lookup(v) : word_index(o->words, v, strlen(v))) < 0)
            return bad_word(g, v, strlen(v)), WEFT_OPT_EXIT;
        break;
    case WEFT_ARG_LIST:
        g->num = 0;
        for (const char *p = v; *p;) {
            size_t len = strcspn(p, ",");
            int k = word_index(o->words, p, len);
            if (k < 0) return bad_word(g, p, len), WEFT_OPT_EXIT;
            g->num |= 1ll << k;
            p += len + (p[len] == ',');
        }
        if (g->num == 0) return weft_opt_error(g, "an empty list"), WEFT_OPT_EXIT;
        break;
    }
    return o->id;
}

/* ---- the parser -------------------------------------------------------------------------- */
void weft_getopt_init(weft_getopt *g, const weft_cmd_spec *spec, int argc, char **argv) {
    memset(g, 0, sizeof *g);
    g->spec = spec;
    g->argc = argc;
    g->argv = argv;
    g->out = stdout;
    g->err = stderr;
    g->i = 1;
    g->operands = argv + 1;
}

static const weft_opt *find_long(const weft_cmd_spec *s, const char *name, size_t len) {
    for (const weft_opt *o = s->opts; o && o->id; o++)
        if (o->name && strlen(o->name) == len && strncmp(o->name, name, len) == 0) return o;
    if (len == 4 && strncmp(name, "help", 4) == 0) return &help_opt;
    return NULL;
}

static const weft_opt *find_short(const weft_cmd_spec *s, char c) {
    for (const weft_opt *o = s->opts; o && o->id; o++)
        if (o->shortname == c) return o;
    return c == 'h' ? &help_opt : NULL;
}

/* "unknown option" with the closest long option when there is one. */
static int unknown(weft_getopt *g, const char *a) {
    const char *names[256];
    char buf[256][64];
    int n = 0;
    for (const weft_opt *o = g->spec->opts; o && o->id && n < 255; o++)
        if (o->name) {
            snprintf(buf[n], sizeof buf[n], "--%s", o->name);
            names[n] = buf[n];
            n++;
        }
    names[n++] = "--help";
    char typed[128];
    snprintf(typed, sizeof typed, "%.*s", (int)strcspn(a, "="), a);
    /* -ranks for --ranks: one dash too few */
    char two[130];
    snprintf(two, sizeof two, "-%s", typed);
    const char *dym =
        typed[1] != '-' && strlen(typed) > 2 ? weft_did_you_mean(two, names, n) : NULL;
    if (dym == NULL) dym = weft_did_you_mean(typed, names, n);
    if (dym) return fail(g, "unknown option '%s'; did you mean '%s'?", typed, dym);
    return fail(g, "unknown option '%s' (%s%s --help lists the options)", typed,
                cmd_prefix(g->spec), g->spec->name);
}

static int matched(weft_getopt *g, const weft_opt *o, int as_short, const char *value) {
    g->opt = o;
    g->as_short = as_short;
    g->arg = NULL;
    if (o == &help_opt) {
        if (g->out) weft_cmd_help(g->spec, g->out);
        g->exit_code = 0;
        g->i = g->argc;
        g->bundle = 0;
        return WEFT_OPT_EXIT;
    }
    if (o->arg == WEFT_ARG_NONE) return o->id;
    return take_value(g, value);
}

static int next_option(weft_getopt *g) {
    for (;;) {
        if (g->bundle) {
            /* inside -abc: the next letter */
            const char *a = g->argv[g->i];
            char c = a[g->bundle];
            const weft_opt *o = find_short(g->spec, c);
            if (o == NULL) {
                /* the whole word when it is its first letter: -ranks for --ranks */
                char typed[3] = {'-', c, '\0'};
                int whole = g->bundle == 1 && a[2] != '\0';
                g->bundle = 0;
                return unknown(g, whole ? a : typed);
            }
            if (o->arg == WEFT_ARG_NONE) {
                if (a[++g->bundle] == '\0') g->bundle = 0, g->i++;
                return matched(g, o, 1, NULL);
            }
            const char *v = a + g->bundle + 1;
            g->bundle = 0;
            g->i++;
            if (*v == '\0') {
                if (g->i >= g->argc) {
                    g->opt = o;
                    return fail(g, "-%c needs a value (%s)", c, o->meta ? o->meta : "");
                }
                v = g->argv[g->i++];
            }
            return matched(g, o, 1, v);
        }
        if (g->i >= g->argc) return WEFT_OPT_END;
        char *a = g->argv[g->i];
        if (g->done || a[0] != '-' || a[1] == '\0') {
            g->operands[g->noperands++] = a;
            g->i++;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            g->done = 1;
            g->i++;
            continue;
        }
        if (a[1] != '-') {
            g->bundle = 1;
            continue;
        }
        const char *name = a + 2, *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        const weft_opt *o = find_long(g->spec, name, len);
        if (o == NULL) return unknown(g, a);
        g->i++;
        if (o->arg == WEFT_ARG_NONE) {
            if (eq) return fail(g, "--%s takes no value (got '%s')", o->name, eq + 1);
            return matched(g, o, 0, NULL);
        }
        const char *v = eq ? eq + 1 : NULL;
        if (v == NULL) {
            if (g->i >= g->argc)
                return fail(g, "--%s needs a value (%s)", o->name, o->meta ? o->meta : "");
            v = g->argv[g->i++];
        }
        return matched(g, o, 0, v);
    }
}

int weft_getopt_next(weft_getopt *g) {
    for (;;) {
        int c = next_option(g);
        if (c < 0 || !g->opt->define) return c;
        if (weft_grow((void **)&g->defines, &g->defines_cap, g->ndefines, sizeof *g->defines)) {
            if (g->err)
                fprintf(g->err, "%s%s: out of memory\n", cmd_prefix(g->spec), g->spec->name);
            g->exit_code = 1;
            g->i = g->argc;
            g->bundle = 0;
            return WEFT_OPT_EXIT;
        }
        g->defines[g->ndefines++] = g->arg;
    }
}

void weft_getopt_free(weft_getopt *g) {
    free(g->defines);
    g->defines = NULL;
    g->ndefines = g->defines_cap = 0;
}

/* ---- --help ------------------------------------------------------------------------------ */
static void opt_names(const weft_opt *o, char *buf, size_t n) {
    size_t len = 0;
    if (o->shortname) len += (size_t)snprintf(buf + len, n - len, "-%c", o->shortname);
    if (o->name)
        len += (size_t)snprintf(buf + len, n - len, "%s--%s", o->shortname ? ", " : "", o->name);
    if (o->arg != WEFT_ARG_NONE && len < n)
        snprintf(buf + len, n - len, "%s%s", o->name ? "=" : " ", o->meta ? o->meta : "VALUE");
}

#define HELP_COL 24

static void help_option(const weft_opt *o, FILE *out) {
    char names[128];
    opt_names(o, names, sizeof names);
    int w = fprintf(out, "  %s", names);
    const char *h = o->help ? o->help : "";
    if (w >= HELP_COL - 1) {
        fputc('\n', out);
        w = 0;
    }
    fprintf(out, "%*s", HELP_COL - w, "");
    for (const char *p = h; *p; p++) {
        fputc(*p, out);
        if (*p == '\n' && p[1]) fprintf(out, "%*s", HELP_COL, "");
    }
    fputc('\n', out);
}

static void help_usage(const weft_cmd_spec *s, FILE *out, int first) {
    const char *p = s->synopsis ? s->synopsis : "";
    int line = 0;
    while (*p || line == 0) {
        size_t len = strcspn(p, "\n");
        if (p[0] == ' ')
            fprintf(out, "%.*s\n", (int)len, p);
        else
            fprintf(out, "%s %s%s%s%.*s\n", first && line == 0 ? "usage:" : "      ", cmd_prefix(s),
                    s->name, len ? " " : "", (int)len, p);
        line++;
        p += len + (p[len] == '\n');
    }
}

void weft_cmd_help(const weft_cmd_spec *s, FILE *out) {
    int first = 1;
    if (s->subs) {
        for (const weft_cmd_spec *const *sub = s->subs; *sub; sub++, first = 0)
            help_usage(*sub, out, first);
    } else {
        help_usage(s, out, 1);
    }
    if (s->description) fprintf(out, "\n%s\n", s->description);
    if (s->subs) {
        fprintf(out, "\ncommands:\n");
        for (const weft_cmd_spec *const *sub = s->subs; *sub; sub++)
            fprintf(out, "  %-12s %s\n", strchr((*sub)->name, ' ') + 1, (*sub)->summary);
        fprintf(out, "\n`weft %s COMMAND --help` describes each.\n", s->name);
    } else {
        fprintf(out, "\noptions:\n");
        for (const weft_opt *o = s->opts; o && o->id; o++)
            help_option(o, out);
        help_option(&help_opt, out);
    }
    if (s->exit_status) fprintf(out, "\nExit codes: %s\n", s->exit_status);
}

/* ---- man pages ----------------------------------------------------------------------------- */
/* Where the installed documentation lies ("<prefix>/share/weft/docs"): the texts name it by its
 * path in the repository, "docs/shim.md", which a man page reader does not have. */
static const char *man_docs;

static void roff_text(FILE *out, const char *s, size_t n);

/* Whether s[i..] is a repository path into docs/ starting a word. */
static int docs_ref(const char *s, size_t i, size_t n) {
    return man_docs && i + 5 <= n && strncmp(s + i, "docs/", 5) == 0 &&
           (i == 0 || strchr(" (\"\n", s[i - 1]) != NULL);
}

/* roff: backslashes and hyphens escaped, a control character at a line's start defused, docs/
 * paths turned into installed ones. */
static void roff_text(FILE *out, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (docs_ref(s, i, n)) {
            const char *d = man_docs;
            man_docs = NULL; /* no recursion into the prefix's own text */
            roff_text(out, d, strlen(d));
            man_docs = d;
            fputc('/', out);
            i += 4;
        } else if (c == '\\')
            fputs("\\e", out);
        else if (c == '-')
            fputs("\\-", out);
        else if ((c == '.' || c == '\'') && (i == 0 || s[i - 1] == '\n'))
            fputs("\\&", out), fputc(c, out);
        else
            fputc(c, out);
    }
}

/* Paragraphs: lines joined, a blank line starts another (.PP); lines that start with two spaces
 * are kept as they are (.nf). */
static void roff_paragraphs(FILE *out, const char *text) {
    int verbatim = 0, fresh = 1;
    for (const char *p = text; p && *p;) {
        size_t len = strcspn(p, "\n");
        int blank = len == 0, indented = len >= 2 && p[0] == ' ' && p[1] == ' ';
        if (blank) {
            if (verbatim) fputs(".fi\n", out), verbatim = 0;
            if (!fresh) fputs(".PP\n", out);
            fresh = 1;
        } else {
            if (indented && !verbatim) fputs(".nf\n", out), verbatim = 1;
            if (!indented && verbatim) fputs(".fi\n", out), verbatim = 0;
            roff_text(out, p, len);
            fputc('\n', out);
            fresh = 0;
        }
        p += len + (p[len] == '\n');
    }
    if (verbatim) fputs(".fi\n", out);
}

static void man_upper(FILE *out, const char *name) {
    for (const char *p = name; *p; p++)
        fputc(*p == ' ' ? '-' : toupper((unsigned char)*p), out);
}

static void man_options(FILE *out, const weft_opt *opts) {
    for (const weft_opt *o = opts; o && o->id; o++) {
        fputs(".TP\n", out);
        if (o->shortname) fprintf(out, "\\fB\\-%c\\fR", o->shortname);
        if (o->name) {
            fprintf(out, "%s\\fB", o->shortname ? ", " : "");
            roff_text(out, "--", 2);
            roff_text(out, o->name, strlen(o->name));
            fputs("\\fR", out);
        }
        if (o->arg != WEFT_ARG_NONE) {
            const char *m = o->meta ? o->meta : "VALUE";
            fprintf(out, "%s\\fI", o->name ? "=" : " ");
            roff_text(out, m, strlen(m));
            fputs("\\fR", out);
        }
        fputc('\n', out);
        const char *h = o->help ? o->help : "";
        for (const char *p = h; *p;) {
            size_t len = strcspn(p, "\n");
            roff_text(out, p, len);
            fputc('\n', out);
            p += len + (p[len] == '\n');
        }
    }
}

static void man_synopsis(FILE *out, const weft_cmd_spec *s) {
    const char *p = s->synopsis ? s->synopsis : "";
    fprintf(out, "\\fBweft %s\\fR", s->name);
    while (*p) {
        size_t len = strcspn(p, "\n");
        size_t skip = 0;
        while (skip < len && p[skip] == ' ')
            skip++;
        if (p[0] != ' ' && p != s->synopsis) fprintf(out, "\n.br\n\\fBweft %s\\fR", s->name);
        fputc(' ', out);
        roff_text(out, p + skip, len - skip);
        p += len + (p[len] == '\n');
    }
    fputc('\n', out);
}

void weft_cmd_man(const weft_cmd_spec *s, const char *version, const char *docs, FILE *out) {
    man_docs = docs;
    fputs(".TH ", out);
    man_upper(out, "weft ");
    man_upper(out, s->name);
    fprintf(out, " 1 \"\" \"weft %s\" \"weft manual\"\n.SH NAME\nweft\\-", version);
    for (const char *p = s->name; *p; p++)
        fputc(*p == ' ' ? '-' : *p, out);
    fputs(" \\- ", out);
    roff_text(out, s->summary, strlen(s->summary));
    fputs("\n.SH SYNOPSIS\n", out);
    if (s->subs)
        for (const weft_cmd_spec *const *sub = s->subs; *sub; sub++) {
            man_synopsis(out, *sub);
            if (sub[1]) fputs(".br\n", out);
        }
    else
        man_synopsis(out, s);
    fputs(".SH DESCRIPTION\n", out);
    roff_paragraphs(out, s->description);
    if (s->subs) {
        fputs(".SH COMMANDS\n", out);
        for (const weft_cmd_spec *const *sub = s->subs; *sub; sub++) {
            fprintf(out, ".SS \"weft %s\"\n", (*sub)->name);
            roff_paragraphs(out, (*sub)->description ? (*sub)->description : (*sub)->summary);
            man_options(out, (*sub)->opts);
        }
        fputs(".SH OPTIONS\n", out);
    } else {
        fputs(".SH OPTIONS\n", out);
        man_options(out, s->opts);
    }
    man_options(out, help_opts);
    if (s->exit_status) {
        fputs(".SH EXIT STATUS\n", out);
        roff_text(out, s->exit_status, strlen(s->exit_status));
        fputc('\n', out);
    }
    if (docs) {
        fputs(".SH FILES\n.TP\n", out);
        roff_text(out, docs, strlen(docs));
        fputs("/\nweft's documentation, installed with it (the prefix is the folder above "
              "bin/weft)\n",
              out);
    }
    fputs(".SH SEE ALSO\n\\fBweft\\fR(1)\n", out);
    man_docs = NULL;
}

/* ---- bash completion --------------------------------------------------------------------- */
static void comp_words(FILE *out, const char *const *w) {
    for (int i = 0; w && w[i]; i++)
        fprintf(out, "%s%s", i ? " " : "", w[i]);
}

static const char *comp_kind(weft_arg a) {
    static const char *const kinds[] = {
#define WEFT_X_(n, c) c,
        WEFT_ARGS(WEFT_X_)
#undef WEFT_X_
    };
    return *kinds[a] ? kinds[a] : "none";
}

static void comp_command(FILE *out, const weft_cmd_spec *s) {
    fputs("    '", out);
    for (const char *p = s->name; *p; p++)
        fputc(*p == ' ' ? '_' : *p, out);
    fputs("')\n        opts='", out);
    int n = 0;
    for (const weft_opt *o = s->opts; o && o->id; o++) {
        if (o->name) fprintf(out, "%s--%s", n++ ? " " : "", o->name);
        if (o->shortname) fprintf(out, "%s-%c", n++ ? " " : "", o->shortname);
    }
    fprintf(out, "%s--help -h'\n        case \"$opt\" in\n", n ? " " : "");
    for (const weft_opt *o = s->opts; o && o->id; o++) {
        if (o->arg == WEFT_ARG_NONE) continue;
        fputs("        ", out);
        if (o->name) fprintf(out, "--%s", o->name);
        if (o->shortname) fprintf(out, "%s-%c", o->name ? "|" : "", o->shortname);
        fprintf(out, ") kind=%s words='", comp_kind(o->arg));
        comp_words(out, o->words);
        fputs("' ;;\n", out);
    }
    fprintf(out, "        esac\n        okind=%s owords='",
            comp_kind(s->operands == WEFT_ARG_NONE ? WEFT_ARG_STR : s->operands));
    comp_words(out, s->operand_words);
    fputs("' ;;\n", out);
}

void weft_cmd_completion(const weft_cmd_spec *const *specs, FILE *out) {
    fputs("# bash completion of weft, generated from its option tables (tools/opts.c): do not\n"
          "# edit. Installed as share/bash-completion/completions/weft; or: source this file.\n"
          "_weft_values() {\n"
          "    case $1 in\n"
          "    file) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- \"$cur\")) ;;\n"
          "    algo) compopt -o filenames 2>/dev/null\n"
          "        COMPREPLY=($(compgen -d -- \"$cur\"; compgen -f -X '!*.xml' -- \"$cur\";\n"
          "            compgen -f -X '!*.weft' -- \"$cur\")) ;;\n"
          "    dir) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- \"$cur\")) ;;\n"
          "    words) COMPREPLY=($(compgen -W \"$2\" -- \"$cur\")) ;;\n"
          "    *) COMPREPLY=() ;;\n"
          "    esac\n"
          "}\n"
          "_weft() {\n"
          "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} opt eq=\n"
          "    # --opt=value: bash splits the word at '='\n"
          "    if [ \"$cur\" = = ]; then opt=$prev cur= eq=1\n"
          "    elif [ \"$prev\" = = ] && [ \"$COMP_CWORD\" -ge 3 ]; then "
          "opt=${COMP_WORDS[COMP_CWORD-2]} eq=1\n"
          "    else opt=$prev; fi\n"
          "    if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
          "        COMPREPLY=($(compgen -W '",
          out);
    for (int i = 0; specs[i]; i++)
        fprintf(out, "%s ", specs[i]->name);
    fputs("--help --version' -- \"$cur\"))\n"
          "        return 0\n"
          "    fi\n"
          "    local cmd=${COMP_WORDS[1]} opts kind= words okind owords\n",
          out);
    for (int i = 0; specs[i]; i++) {
        if (!specs[i]->subs) continue;
        fprintf(out,
                "    if [ \"$cmd\" = %s ]; then\n"
                "        if [ \"$COMP_CWORD\" -eq 2 ]; then\n"
                "            COMPREPLY=($(compgen -W '",
                specs[i]->name);
        for (const weft_cmd_spec *const *sub = specs[i]->subs; *sub; sub++)
            fprintf(out, "%s ", strchr((*sub)->name, ' ') + 1);
        fprintf(out,
                "--help' -- \"$cur\"))\n"
                "            return 0\n"
                "        fi\n"
                "        cmd=%s_${COMP_WORDS[2]}\n"
                "    fi\n",
                specs[i]->name);
    }
    fputs("    case \"$cmd\" in\n", out);
    for (int i = 0; specs[i]; i++) {
        if (specs[i]->subs)
            for (const weft_cmd_spec *const *sub = specs[i]->subs; *sub; sub++)
                comp_command(out, *sub);
        else
            comp_command(out, specs[i]);
    }
    fputs("    *) return 0 ;;\n"
          "    esac\n"
          "    if [ -n \"$kind\" ]; then _weft_values \"$kind\" \"$words\"; return 0; fi\n"
          "    # a flag takes no value: --flag= has nothing to complete (not the operands)\n"
          "    if [ -n \"$eq\" ]; then COMPREPLY=(); return 0; fi\n"
          "    if [[ $cur == -* ]]; then\n"
          "        COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
          "        return 0\n"
          "    fi\n"
          "    _weft_values \"$okind\" \"$owords\"\n"
          "}\n"
          "complete -F _weft weft\n",
          out);
}
