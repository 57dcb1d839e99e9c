/* eval.c — evaluating a parsed program for given parameters into operations in program order. */
#include "cc_internal.h"

#include <stdlib.h>
#include <string.h>

/* A name bound in a block; prev is the binding of the same name it shadows (-1 when none), so
 * that lookups follow one chain instead of scanning every binding. */
typedef struct binding {
    int32_t sym, prev;
    int64_t value;
    /* a parameter that holds a name (param PROTO = LL; -D PROTO=LL) instead of a number: the
     * name, for the header fields that take one; NULL for a number */
    const char *atom;
} binding;

/* A distinct name of the program: where it is bound, defined, declared. */
typedef struct symbol {
    const char *name;
    int32_t head;    /* latest binding in env, -1 when unbound */
    int32_t def;     /* index in defs, -1 when no def has this name */
    int32_t scratch; /* scratch buffer index, -1 when none */
    int32_t stamp;   /* scratch mark for duplicate checks */
} symbol;

/* A loop iteration or call being evaluated; materialised into program.frames only when an
 * operation or a diagnostic refers to it, so that long loops cost no memory. */
typedef struct evframe {
    uint8_t is_call;
    const char *name;
    int64_t value;
    int64_t args[8];
    int nargs;
    weft_lang_loc loc;
    int32_t mat;
} evframe;

typedef struct define {
    char *name;
    int64_t value;
    char *atom;       /* -D NAME=IDENT: the name it gives (else NULL) */
    const char *text; /* NAME=VALUE as given, for messages */
    int used;
} define;

typedef struct evaluator {
    weft_cc_program *p;
    weft_diag *d;
    weft_map symmap; /* hash of a name -> symbol index (probing on a hash collision) */
    symbol *syms;
    size_t nsyms, capsyms;
    binding *env;
    size_t nenv, capenv;
    size_t nglobal; /* env[0 .. nglobal) are top-level names */
    size_t base;    /* first binding of the current call; 0 at top level */
    evframe stack[2 * CC_MAX_CALL_DEPTH + 512];
    int nstack;
    int call_depth;
    const weft_lang_node **defs;
    size_t ndefs, capdefs;
    define *defines;
    size_t ndefines;
    /* the work budget: every expression node evaluated, statement executed, loop iteration,
     * call and chunk an operation covers costs one unit (docs/language.md, limits) */
    int64_t work, calls, iterations;
    int64_t remote_ops, remote_moves; /* x instances: steps and moves the schedule has at least */
    int errors;
    int stop;        /* give up: the header is unusable or a limit was hit */
    int header_seen; /* the algorithm block was evaluated (successfully or not) */
    int header_ok;
    int32_t body_line; /* line of the first body statement, 0 before it */
    const weft_lang_node *header_fields[16];
} evaluator;

/* ---- diagnostics ------------------------------------------------------------------------ */

static int32_t materialise(evaluator *e, int i) {
    if (i < 0) return -1;
    evframe *f = &e->stack[i];
    if (f->mat >= 0) return f->mat;
    int32_t parent = materialise(e, i - 1);
    weft_cc_program *p = e->p;
    if (weft_grow((void **)&p->frames, &p->capframes, p->nframes, sizeof *p->frames) != 0)
        return -1;
    cc_frame *cf = &p->frames[p->nframes];
    memset(cf, 0, sizeof *cf);
    cf->parent = parent;
    cf->is_call = f->is_call;
    cf->name = f->name;
    cf->value = f->value;
    cf->loc = f->loc;
    if (f->is_call) {
        char buf[256];
        int m = snprintf(buf, sizeof buf, "(");
        for (int k = 0; k < f->nargs && m < (int)sizeof buf; k++)
            m += snprintf(buf + m, sizeof buf - (size_t)m, "%s%lld", k ? ", " : "",
                          (long long)f->args[k]);
        if (m < (int)sizeof buf) snprintf(buf + m, sizeof buf - (size_t)m, ")");
        cf->args = weft_strdup(buf);
    }
    f->mat = (int32_t)p->nframes++;
    return f->mat;
}

static void err(evaluator *e, weft_lang_loc loc, const char *fmt, ...) WEFT_PRINTF(3, 4);
static void err(evaluator *e, weft_lang_loc loc, const char *fmt, ...) {
    e->errors++;
    /* a repeat (the same error in the next iteration) is only counted: recording its frames
     * would cost memory per repeat */
    if (!cc_report_wanted(e->p, loc, WEFT_SEV_ERROR)) return;
    va_list ap;
    va_start(ap, fmt);
    cc_vreport_new(e->p, e->d, WEFT_SEV_ERROR, loc, materialise(e, e->nstack - 1), fmt, ap);
    va_end(ap);
}

static int line_of(evaluator *e, weft_lang_loc loc) {
    int line, col;
    weft_lang_linecol(e->p->src->sources, loc.file, loc.start, &line, &col);
    return line;
}

/* ---- names ------------------------------------------------------------------------------ */

/* The symbol of name, created when absent and create is set; -1 when absent (or when memory
 * runs out, which stops evaluation). */
static int32_t symbol_of(evaluator *e, const char *name, int create) {
    uint64_t h = weft_hash_bytes(name, strlen(name));
    for (uint64_t k = 0;; k++) {
        uint64_t *v =
            create ? weft_map_put(&e->symmap, h + k, NULL) : weft_map_get(&e->symmap, h + k);
        if (v == NULL) {
            if (create) e->stop = 1;
            return -1;
        }
        if (*v == 0) { /* just inserted: the values are symbol index + 1 */
            if (weft_grow((void **)&e->syms, &e->capsyms, e->nsyms, sizeof *e->syms) != 0) {
                e->stop = 1;
                return -1;
            }
            e->syms[e->nsyms] = (symbol){name, -1, -1, -1, -1};
            *v = ++e->nsyms;
            return (int32_t)(*v - 1);
        }
        if (strcmp(e->syms[*v - 1].name, name) == 0) return (int32_t)(*v - 1);
        /* another name with the same hash: probe the next key */
    }
}

/* The binding visible under name, or -1: the current call's bindings, then the top-level ones
 * (env[0 .. nglobal)) when inside a call. */
static int32_t visible(const evaluator *e, int32_t sym) {
    for (int32_t i = e->syms[sym].head; i >= 0; i = e->env[i].prev)
        if ((size_t)i >= e->base || (size_t)i < e->nglobal) return i;
    return -1;
}

/* The binding visible under name, or NULL. */
static const binding *find_binding(evaluator *e, const char *name) {
    int32_t sym = symbol_of(e, name, 0);
    int32_t i = sym < 0 ? -1 : visible(e, sym);
    return i < 0 ? NULL : &e->env[i];
}

static int lookup(evaluator *e, const char *name, int64_t *v) {
    const binding *b = find_binding(e, name);
    if (b == NULL) return 0;
    *v = b->value;
    return 1;
}

static const weft_lang_node *find_def(evaluator *e, const char *name) {
    int32_t sym = symbol_of(e, name, 0);
    return sym >= 0 && e->syms[sym].def >= 0 ? e->defs[e->syms[sym].def] : NULL;
}

/* Binds name in the block whose first binding is env[scope]; rejects a second definition in
 * the same block. */
static int bind_atom(evaluator *e, size_t scope, const char *name, int64_t v, const char *atom,
                     weft_lang_loc loc) {
    int32_t sym = symbol_of(e, name, 1);
    if (sym < 0) return -1;
    int32_t head = e->syms[sym].head;
    if (head >= 0 && (size_t)head >= scope) {
        err(e, loc, "'%s' is already defined in this block", name);
        return -1;
    }
    if (e->nenv >= INT32_MAX ||
        weft_grow((void **)&e->env, &e->capenv, e->nenv, sizeof *e->env) != 0) {
        e->stop = 1;
        return -1;
    }
    e->env[e->nenv] = (binding){sym, head, v, atom};
    e->syms[sym].head = (int32_t)e->nenv++;
    return 0;
}

static int bind(evaluator *e, size_t scope, const char *name, int64_t v, weft_lang_loc loc) {
    return bind_atom(e, scope, name, v, NULL, loc);
}

/* Ends the bindings from env[scope] on (the end of a block or call). */
static void unbind(evaluator *e, size_t scope) {
    while (e->nenv > scope) {
        const binding *b = &e->env[--e->nenv];
        e->syms[b->sym].head = b->prev;
    }
}

/* Charges units of work; past the budget evaluation stops with an error at loc that names the
 * limit and what used it up. */
static int charge(evaluator *e, int64_t units, weft_lang_loc loc) {
    if (e->stop) return -1;
    e->work += units;
    if (e->work <= CC_MAX_WORK) return 0;
    err(e, loc,
        "evaluation stopped at its limit of %lld units of work (%lld calls, %lld loop "
        "iterations, %zu operations so far; a unit is an expression, a statement, an iteration "
        "or a chunk an operation covers, a call is %d)",
        (long long)CC_MAX_WORK, (long long)e->calls, (long long)e->iterations, e->p->nops,
        CC_CALL_WORK);
    e->stop = 1;
    return -1;
}

/* ---- expressions ------------------------------------------------------------------------ */

#define BUILTINS(X)                                                                                \
    X(MIN, "min", 2)                                                                               \
    X(MAX, "max", 2)                                                                               \
    X(ABS, "abs", 1)                                                                               \
    X(POW, "pow", 2)                                                                               \
    X(LOG2, "log2", 1)                                                                             \
    X(XOR, "xor", 2)

enum {
#define WEFT_X_(id, n, a) BI_##id,
    BUILTINS(WEFT_X_)
#undef WEFT_X_
        BI_COUNT
};

static const char *const builtin_names[] = {BUILTINS(WEFT_X_COL2)};
static const int builtin_nargs[] = {BUILTINS(WEFT_X_COL3)};

static int builtin_index(const char *name) {
    return weft_name_find(builtin_names, BI_COUNT, name, 0);
}

static int eval(evaluator *e, const weft_lang_node *n, int64_t *out);

static int overflow(evaluator *e, const weft_lang_node *n) {
    err(e, n->loc, "integer overflow");
    return -1;
}

static int eval_func(evaluator *e, const weft_lang_node *n, int64_t *out) {
    int bi = builtin_index(n->name);
    if (bi < 0) {
        if (find_def(e, n->name))
            err(e, n->loc, "'%s' is a def, which has no value; call it as a statement", n->name);
        else
            err(e, n->loc, "undefined function '%s'", n->name);
        return -1;
    }
    if (n->nkids != builtin_nargs[bi]) {
        err(e, n->loc, "%s() takes %d argument%s (got %d)", n->name, builtin_nargs[bi],
            builtin_nargs[bi] == 1 ? "" : "s", (int)n->nkids);
        return -1;
    }
    int64_t a = 0, b = 0;
    if (eval(e, n->kids[0], &a) != 0) return -1;
    if (n->nkids > 1 && eval(e, n->kids[1], &b) != 0) return -1;
    switch (bi) {
    case BI_MIN: *out = a < b ? a : b; return 0;
    case BI_MAX: *out = a > b ? a : b; return 0;
    case BI_ABS:
        if (a == INT64_MIN) return overflow(e, n);
        *out = a < 0 ? -a : a;
        return 0;
    case BI_POW: {
        if (b < 0) {
            err(e, n->kids[1]->loc, "pow() needs an exponent >= 0 (got %lld)", (long long)b);
            return -1;
        }
        int64_t r = 1;
        if (a == 0 || a == 1) {
            r = b == 0 ? 1 : a;
        } else if (a == -1) {
            r = b % 2 ? -1 : 1;
        } else {
            /* |a| >= 2 overflows within 64 multiplications */
            for (int64_t i = 0; i < b; i++)
                if (__builtin_mul_overflow(r, a, &r)) return overflow(e, n);
        }
        *out = r;
        return 0;
    }
    case BI_LOG2: {
        if (a < 1) {
            err(e, n->kids[0]->loc, "log2() needs a value >= 1 (got %lld)", (long long)a);
            return -1;
        }
        int64_t r = 0;
        while (a > 1) {
            a >>= 1;
            r++;
        }
        *out = r;
        return 0;
    }
    case BI_XOR: *out = a ^ b; return 0;
    default: return -1;
    }
}

static int eval_binary(evaluator *e, const weft_lang_node *n, int64_t *out) {
    int64_t a, b;
    if (eval(e, n->a, &a) != 0) return -1;
    if (n->op == WEFT_LANG_OP_AND && !a) {
        *out = 0;
        return 0;
    }
    if (n->op == WEFT_LANG_OP_OR && a) {
        *out = 1;
        return 0;
    }
    if (eval(e, n->b, &b) != 0) return -1;
    switch (n->op) {
    case WEFT_LANG_OP_ADD:
        if (__builtin_add_overflow(a, b, out)) return overflow(e, n);
        return 0;
    case WEFT_LANG_OP_SUB:
        if (__builtin_sub_overflow(a, b, out)) return overflow(e, n);
        return 0;
    case WEFT_LANG_OP_MUL:
        if (__builtin_mul_overflow(a, b, out)) return overflow(e, n);
        return 0;
    case WEFT_LANG_OP_DIV:
    case WEFT_LANG_OP_MOD: {
        if (b == 0) {
            err(e, n->loc, "%s by zero", n->op == WEFT_LANG_OP_DIV ? "division" : "modulo");
            return -1;
        }
        if (a == INT64_MIN && b == -1) return overflow(e, n);
        /* floor division and the matching modulo, as in Python: (i - 1) % N stays >= 0 */
        int64_t q = a / b, r = a % b;
        if (r != 0 && ((r < 0) != (b < 0))) {
            q--;
            r += b;
        }
        *out = n->op == WEFT_LANG_OP_DIV ? q : r;
        return 0;
    }
    case WEFT_LANG_OP_EQ: *out = a == b; return 0;
    case WEFT_LANG_OP_NE: *out = a != b; return 0;
    case WEFT_LANG_OP_LT: *out = a < b; return 0;
    case WEFT_LANG_OP_LE: *out = a <= b; return 0;
    case WEFT_LANG_OP_GT: *out = a > b; return 0;
    case WEFT_LANG_OP_GE: *out = a >= b; return 0;
    case WEFT_LANG_OP_AND:
    case WEFT_LANG_OP_OR: *out = b != 0; return 0;
    default: err(e, n->loc, "internal error: bad binary operator"); return -1;
    }
}

static int eval(evaluator *e, const weft_lang_node *n, int64_t *out) {
    if (++e->work > CC_MAX_WORK && charge(e, 0, n->loc) != 0) return -1;
    switch (n->kind) {
    case WEFT_LANG_INT: *out = n->ival; return 0;
    case WEFT_LANG_NAME: {
        const binding *b = find_binding(e, n->name);
        if (b && b->atom) {
            err(e, n->loc, "'%s' holds the name '%s', not a number", n->name, b->atom);
            return -1;
        }
        if (b) {
            *out = b->value;
            return 0;
        }
        if (strcmp(n->name, "input") == 0 || strcmp(n->name, "output") == 0)
            err(e, n->loc, "'%s' is a buffer, not a value", n->name);
        else
            err(e, n->loc, "undefined name '%s'", n->name);
        return -1;
    }
    case WEFT_LANG_UNARY: {
        int64_t a;
        if (eval(e, n->a, &a) != 0) return -1;
        if (n->op == WEFT_LANG_OP_NOT) {
            *out = !a;
            return 0;
        }
        if (a == INT64_MIN) return overflow(e, n);
        *out = -a;
        return 0;
    }
    case WEFT_LANG_BINARY: return eval_binary(e, n, out);
    case WEFT_LANG_COND: {
        int64_t c;
        if (eval(e, n->a, &c) != 0) return -1;
        return eval(e, c ? n->b : n->c, out);
    }
    case WEFT_LANG_FUNC: return eval_func(e, n, out);
    default: err(e, n->loc, "internal error: not an expression"); return -1;
    }
}

/* Whether name is one a header field takes (a protocol or a collective): in a parameter's
 * default such a name is the value; any other unbound name stays an error there. */
static int known_name(const char *name) {
    return weft_proto_from_name(name) >= 0 || weft_coll_from_name(name) >= 0;
}

/* A value that may be a name: a parameter holding one, a name no binding has (the name itself:
 * LL, allreduce; with any_name 0 only the known names), c ? a : b over those; anything else is
 * a number. *atom is the name (else NULL), *via the parameter it came through (else NULL). */
static int eval_value(evaluator *e, const weft_lang_node *n, int any_name, int64_t *v,
                      const char **atom, const char **via) {
    *atom = NULL;
    if (n->kind == WEFT_LANG_NAME) {
        const binding *b = find_binding(e, n->name);
        if (b && b->atom) {
            *atom = b->atom;
            if (via) *via = n->name;
            return 0;
        }
        if (b == NULL && strcmp(n->name, "input") != 0 && strcmp(n->name, "output") != 0 &&
            (any_name || known_name(n->name))) {
            *atom = n->name;
            return 0;
        }
    } else if (n->kind == WEFT_LANG_COND) {
        int64_t c;
        if (++e->work > CC_MAX_WORK && charge(e, 0, n->loc) != 0) return -1;
        if (eval(e, n->a, &c) != 0) return -1;
        return eval_value(e, c ? n->b : n->c, any_name, v, atom, via);
    }
    return eval(e, n, v);
}

/* ---- chunk references ------------------------------------------------------------------- */

static int find_buffer(evaluator *e, const weft_lang_node *n) {
    if (strcmp(n->name, "input") == 0) return CC_BUF_INPUT;
    if (strcmp(n->name, "output") == 0) return CC_BUF_OUTPUT;
    int32_t sym = symbol_of(e, n->name, 0);
    if (sym >= 0 && e->syms[sym].scratch >= 0) return CC_BUF_SCRATCH0 + e->syms[sym].scratch;
    int64_t v;
    if (lookup(e, n->name, &v))
        err(e, n->loc, "'%s' is a value, not a buffer (buffers: input, output and scratch)",
            n->name);
    else
        err(e, n->loc, "undefined buffer '%s' (declare it with 'scratch %s[SIZE];')", n->name,
            n->name);
    return -1;
}

/* A span's bounds: *single when it is one index (then *hi is not set: lo + 1 may not exist). */
static int eval_span(evaluator *e, const weft_lang_node *s, int64_t *lo, int64_t *hi, int *single) {
    *single = s->b == NULL;
    if (eval(e, s->a, lo) != 0) return -1;
    if (*single) return 0;
    if (eval(e, s->b, hi) != 0) return -1;
    if (*hi <= *lo) {
        err(e, s->loc, "empty range %lld..%lld", (long long)*lo, (long long)*hi);
        return -1;
    }
    return 0;
}

/* Evaluates buffer[rank span][index span]; a rank range only when allow_ranks. Every bound is
 * compared, never computed with, so any 64-bit value is reported as it was written. */
static int eval_chunk(evaluator *e, const weft_lang_node *n, int allow_ranks, cc_term *t) {
    int buf = find_buffer(e, n);
    int64_t rlo, rhi = 0, ilo, ihi = 0;
    int rone, ione;
    int bad = buf < 0;
    if (eval_span(e, n->a, &rlo, &rhi, &rone) != 0) bad = 1;
    if (eval_span(e, n->b, &ilo, &ihi, &ione) != 0) bad = 1;
    if (bad) return -1;
    const char *bn = cc_buf_name(e->p, buf);
    int32_t nr = e->p->nranks, size = cc_buf_size(e->p, buf);
    if (!rone && !allow_ranks) {
        err(e, n->a->loc, "a rank range is allowed only in 'ensure'; name one rank here");
        return -1;
    }
    if (rone ? rlo < 0 || rlo >= nr : rlo < 0 || rhi > nr) {
        if (!rone)
            err(e, n->a->loc, "ranks %lld..%lld are out of range 0..%d", (long long)rlo,
                (long long)rhi, nr - 1);
        else
            err(e, n->a->loc, "rank %lld is out of range 0..%d", (long long)rlo, nr - 1);
        return -1;
    }
    if (ilo < 0) {
        err(e, n->b->loc, "chunk index %lld is negative", (long long)ilo);
        return -1;
    }
    if (ione ? ilo >= size : ihi > size) {
        if (!ione)
            err(e, n->b->loc, "%s[%lld][%lld..%lld] is past the end of %s (%d chunk%s)", bn,
                (long long)rlo, (long long)ilo, (long long)ihi, bn, size, size == 1 ? "" : "s");
        else
            err(e, n->b->loc, "%s[%lld][%lld] is past the end of %s (%d chunk%s)", bn,
                (long long)rlo, (long long)ilo, bn, size, size == 1 ? "" : "s");
        return -1;
    }
    /* in range: each bound fits the buffer's int32 sizes */
    t->buf = buf;
    t->rank_lo = (int32_t)rlo;
    t->rank_hi = (int32_t)(rone ? rlo + 1 : rhi);
    t->off = (int32_t)ilo;
    t->cnt = (int32_t)((ione ? ilo + 1 : ihi) - ilo);
    return 0;
}

/* ---- operations ------------------------------------------------------------------------- */

static const char *const hint_names[] = {
#define WEFT_X_(id, n) n,
    CC_HINTS(WEFT_X_)
#undef WEFT_X_
};

static cc_op *new_op(evaluator *e, const weft_lang_node *n) {
    weft_cc_program *p = e->p;
    if (p->nops >= CC_MAX_OPS) {
        err(e, n->loc, "the program has more than %d operations; giving up", CC_MAX_OPS);
        e->stop = 1;
        return NULL;
    }
    if (weft_grow((void **)&p->ops, &p->capops, p->nops, sizeof *p->ops) != 0) {
        e->stop = 1;
        return NULL;
    }
    cc_op *op = &p->ops[p->nops];
    memset(op, 0, sizeof *op);
    for (int h = 0; h < CC_HINT_COUNT; h++)
        op->hint[h] = -1;
    return op;
}

static int eval_hints(evaluator *e, const weft_lang_node *n, cc_op *op, int remote, int rank) {
    int bad = 0;
    for (int32_t i = 0; i < n->nkids; i++) {
        const weft_lang_node *h = n->kids[i];
        int k = -1;
        for (int j = 0; j < CC_HINT_COUNT; j++)
            if (strcmp(hint_names[j], h->name) == 0) k = j;
        if (k < 0) {
            err(e, h->loc, "unknown hint '%s' (expected chan, sendtb, recvtb or tb)", h->name);
            bad = 1;
            continue;
        }
        if (op->hint[k] >= 0 || op->hint_loc[k].end > 0) {
            err(e, h->loc, "hint '%s' is given twice", h->name);
            bad = 1;
            continue;
        }
        int64_t v;
        op->hint_loc[k] = h->loc;
        if (eval(e, h->a, &v) != 0) {
            bad = 1;
            continue;
        }
        if (k == CC_HINT_CHAN && (v < 0 || v >= CC_MAX_CHANNELS)) {
            err(e, h->loc, "chan=%lld is out of range 0..%d", (long long)v, CC_MAX_CHANNELS - 1);
            bad = 1;
        } else if (k != CC_HINT_CHAN && (v < 0 || v > 65535)) {
            err(e, h->loc, "%s=%lld is out of range 0..65535", h->name, (long long)v);
            bad = 1;
        } else if (!remote && (k == CC_HINT_SENDTB || k == CC_HINT_RECVTB)) {
            err(e, h->loc,
                "%s= applies to operations between two ranks; this one stays on rank "
                "%d (use tb=)",
                h->name, rank);
            bad = 1;
        } else {
            op->hint[k] = (int32_t)v;
        }
    }
    if (!bad && op->hint[CC_HINT_TB] >= 0 &&
        (op->hint[CC_HINT_SENDTB] >= 0 || op->hint[CC_HINT_RECVTB] >= 0)) {
        err(e, op->hint_loc[CC_HINT_TB], "tb= cannot be combined with sendtb= or recvtb=");
        bad = 1;
    }
    if (!bad && remote && op->hint[CC_HINT_TB] >= 0) {
        op->hint[CC_HINT_SENDTB] = op->hint[CC_HINT_RECVTB] = op->hint[CC_HINT_TB];
        op->hint_loc[CC_HINT_SENDTB] = op->hint_loc[CC_HINT_RECVTB] = op->hint_loc[CC_HINT_TB];
        op->hint[CC_HINT_TB] = -1;
    }
    return bad ? -1 : 0;
}

static void exec_op(evaluator *e, const weft_lang_node *n) {
    cc_term s, t;
    int bad = eval_chunk(e, n->a, 0, &s) != 0;
    if (eval_chunk(e, n->b, 0, &t) != 0) bad = 1;
    if (bad) return;
    if (s.cnt != t.cnt) {
        err(e, n->loc, "the source has %d chunk%s but the destination has %d", s.cnt,
            s.cnt == 1 ? "" : "s", t.cnt);
        return;
    }
    /* checking and lowering walk every chunk of every operation */
    if (charge(e, s.cnt, n->loc) != 0) return;
    if (s.rank_lo != t.rank_lo) {
        /* each operation between two ranks is at least one step of the schedule (its receive),
         * in every instance */
        e->remote_ops += e->p->instances;
        e->remote_moves += (int64_t)s.cnt * e->p->instances;
        if (e->remote_ops > WEFT_IR_MAX_STEPS || e->remote_moves > WEFT_IR_MAX_MOVES) {
            err(e, n->loc,
                "the schedule would be too large: %lld operations between ranks moving %lld "
                "chunks%s, each a step at least; weft verifies and runs at most %d steps moving "
                "%d chunks",
                (long long)e->remote_ops, (long long)e->remote_moves,
                e->p->instances > 1 ? " (instances counted)" : "", WEFT_IR_MAX_STEPS,
                WEFT_IR_MAX_MOVES);
            e->stop = 1;
            return;
        }
    }
    cc_op *op = new_op(e, n);
    if (op == NULL) return;
    op->kind = n->kind == WEFT_LANG_COPY ? CC_OP_COPY : CC_OP_REDUCE;
    op->src = (cc_ref){s.buf, s.rank_lo, s.off, s.cnt};
    op->dst = (cc_ref){t.buf, t.rank_lo, t.off, t.cnt};
    op->loc = n->loc;
    if (eval_hints(e, n, op, s.rank_lo != t.rank_lo, s.rank_lo) != 0) return;
    op->frame = materialise(e, e->nstack - 1);
    e->p->nops++;
}

static void exec_ensure(evaluator *e, const weft_lang_node *n) {
    cc_term c;
    if (eval_chunk(e, n->a, 0, &c) != 0) return;
    weft_cc_program *p = e->p;
    size_t first = p->nterms;
    int bad = 0;
    for (int32_t i = 0; i < n->nkids; i++) {
        cc_term t;
        if (eval_chunk(e, n->kids[i], 1, &t) != 0) {
            bad = 1;
            continue;
        }
        if (t.cnt != c.cnt) {
            err(e, n->kids[i]->loc, "this term has %d chunk%s but %s has %d", t.cnt,
                t.cnt == 1 ? "" : "s", cc_buf_name(p, c.buf), c.cnt);
            bad = 1;
            continue;
        }
        /* checking lists every contribution a term names, per chunk */
        if (charge(e, (int64_t)(t.rank_hi - t.rank_lo) * t.cnt, n->kids[i]->loc) != 0) {
            p->nterms = first;
            return;
        }
        if (weft_grow((void **)&p->terms, &p->capterms, p->nterms, sizeof *p->terms) != 0) {
            e->stop = 1;
            return;
        }
        p->terms[p->nterms++] = t;
    }
    if (bad) {
        p->nterms = first;
        return;
    }
    cc_op *op = new_op(e, n);
    if (op == NULL) return;
    op->kind = CC_OP_ENSURE;
    op->dst = (cc_ref){c.buf, c.rank_lo, c.off, c.cnt};
    op->src = op->dst;
    op->loc = n->loc;
    op->term0 = (int32_t)first;
    op->nterms = (int32_t)(p->nterms - first);
    op->frame = materialise(e, e->nstack - 1);
    p->nops++;
}

/* ---- statements ------------------------------------------------------------------------- */

static void exec_block(evaluator *e, const weft_lang_node *b);

static int push_frame(evaluator *e, uint8_t is_call, const char *name, weft_lang_loc loc) {
    if (e->nstack >= (int)(sizeof e->stack / sizeof *e->stack)) {
        err(e, loc, "blocks nested too deeply");
        e->stop = 1;
        return -1;
    }
    evframe *f = &e->stack[e->nstack++];
    memset(f, 0, sizeof *f);
    f->is_call = is_call;
    f->name = name;
    f->loc = loc;
    f->mat = -1;
    return 0;
}

static void exec_for(evaluator *e, const weft_lang_node *n) {
    int64_t lo, hi;
    int bad = eval(e, n->a, &lo) != 0;
    if (eval(e, n->b, &hi) != 0) bad = 1;
    if (bad || push_frame(e, 0, n->name, n->loc) != 0) return;
    evframe *f = &e->stack[e->nstack - 1];
    for (int64_t v = lo; v < hi && !e->stop; v++) {
        if (charge(e, 1, n->loc) != 0) break;
        if (++e->iterations > CC_MAX_ITERATIONS) {
            err(e, n->loc, "the program runs more than %lld loop iterations; giving up",
                (long long)CC_MAX_ITERATIONS);
            e->stop = 1;
            break;
        }
        f->value = v;
        f->mat = -1;
        size_t scope = e->nenv;
        if (bind(e, scope, n->name, v, n->loc) != 0) break;
        exec_block(e, n->c);
        unbind(e, scope);
    }
    e->nstack--;
}

static void exec_call(evaluator *e, const weft_lang_node *n) {
    const weft_lang_node *def = find_def(e, n->name);
    if (def == NULL) {
        if (builtin_index(n->name) >= 0)
            err(e, n->loc,
                "%s() is a built-in function; it gives a value and cannot be a "
                "statement",
                n->name);
        else
            err(e, n->loc, "undefined def '%s'", n->name);
        return;
    }
    if (n->nkids != def->nkids) {
        err(e, n->loc, "%s() takes %d argument%s (got %d)", n->name, (int)def->nkids,
            def->nkids == 1 ? "" : "s", (int)n->nkids);
        return;
    }
    e->calls++;
    if (charge(e, CC_CALL_WORK, n->loc) != 0) return;
    if (e->call_depth >= CC_MAX_CALL_DEPTH) {
        err(e, n->loc, "calls nested more than %d deep", CC_MAX_CALL_DEPTH);
        e->stop = 1;
        return;
    }
    int64_t small[8];
    int64_t *args = n->nkids <= 8 ? small : calloc((size_t)n->nkids, sizeof *args);
    if (args == NULL) {
        e->stop = 1;
        return;
    }
    int bad = 0;
    for (int32_t i = 0; i < n->nkids; i++)
        if (eval(e, n->kids[i], &args[i]) != 0) bad = 1;
    if (bad || push_frame(e, 1, def->name, n->loc) != 0) {
        if (args != small) free(args);
        return;
    }
    evframe *f = &e->stack[e->nstack - 1];
    for (int32_t i = 0; i < n->nkids && i < 8; i++)
        f->args[i] = args[i];
    f->nargs = n->nkids < 8 ? (int)n->nkids : 8;
    size_t saved_base = e->base, scope = e->nenv;
    e->base = e->nenv;
    e->call_depth++;
    for (int32_t i = 0; i < def->nkids; i++)
        if (bind(e, scope, def->kids[i]->name, args[i], def->kids[i]->loc) != 0) bad = 1;
    if (!bad) exec_block(e, def->a);
    e->call_depth--;
    unbind(e, scope);
    e->base = saved_base;
    e->nstack--;
    if (args != small) free(args);
}

/* A failed requirement stops evaluation: the program says it does not apply to these
 * parameters, so nothing after it means anything (and could be arbitrarily expensive). */
static void exec_require(evaluator *e, const weft_lang_node *n) {
    int64_t v;
    if (eval(e, n->a, &v) != 0 || v) return;
    e->stop = 1;
    if (n->name) {
        err(e, n->loc, "requirement failed: %s", n->name);
    } else {
        /* the condition as written is the clearest message */
        int len = 0;
        const char *text = cc_source_text(e->p, n->a->loc, &len);
        err(e, n->loc, "requirement failed: %.*s%s", len > 200 ? 200 : len, text,
            len > 200 ? "..." : "");
    }
}

static void exec_stmt(evaluator *e, const weft_lang_node *n, size_t scope) {
    if (charge(e, 1, n->loc) != 0) return;
    switch (n->kind) {
    case WEFT_LANG_LET: {
        int64_t v;
        if (eval(e, n->a, &v) == 0) bind(e, scope, n->name, v, n->loc);
        return;
    }
    case WEFT_LANG_FOR: exec_for(e, n); return;
    case WEFT_LANG_IF: {
        int64_t c;
        if (eval(e, n->a, &c) != 0) return;
        const weft_lang_node *b = c ? n->b : n->c;
        if (b == NULL) return;
        if (b->kind == WEFT_LANG_IF) {
            exec_stmt(e, b, scope);
        } else {
            size_t inner = e->nenv;
            exec_block(e, b);
            unbind(e, inner);
        }
        return;
    }
    case WEFT_LANG_COPY:
    case WEFT_LANG_REDUCE: exec_op(e, n); return;
    case WEFT_LANG_ENSURE: exec_ensure(e, n); return;
    case WEFT_LANG_REQUIRE: exec_require(e, n); return;
    case WEFT_LANG_CALL: exec_call(e, n); return;
    default: err(e, n->loc, "internal error: unexpected %s", weft_lang_kind_name(n->kind)); return;
    }
}

static void exec_block(evaluator *e, const weft_lang_node *b) {
    size_t scope = e->nenv;
    for (int32_t i = 0; i < b->nkids && !e->stop; i++)
        exec_stmt(e, b->kids[i], scope);
    unbind(e, scope);
}

/* ---- the header ------------------------------------------------------------------------- */

/* X(id, name, kind): kind 0 = takes a name, 1 = takes an integer, 2 = a flag */
#define FIELDS(X)                                                                                  \
    X(COLLECTIVE, "collective", 0)                                                                 \
    X(RANKS, "ranks", 1)                                                                           \
    X(CHUNKS, "chunks", 1)                                                                         \
    X(PROTOCOL, "protocol", 0)                                                                     \
    X(INPLACE, "inplace", 2)                                                                       \
    X(OUTOFPLACE, "outofplace", 2)                                                                 \
    X(INSTANCES, "instances", 1)                                                                   \
    X(MINBYTES, "minbytes", 1)                                                                     \
    X(MAXBYTES, "maxbytes", 1)                                                                     \
    X(GRAPHMAXBYTES, "graphmaxbytes", 1)                                                           \
    X(ROOT, "root", 1)                                                                             \
    X(EAGER, "eager", 2)                                                                           \
    X(GRAPH, "graph", 2)                                                                           \
    X(REGISTERED, "registered", 2)                                                                 \
    X(UNREGISTERED, "unregistered", 2)

enum {
#define WEFT_X_(id, n, k) F_##id,
    FIELDS(WEFT_X_)
#undef WEFT_X_
        F_COUNT
};

static const char *const field_names[] = {FIELDS(WEFT_X_COL2)};
static const int field_kinds[] = {FIELDS(WEFT_X_COL3)};

static const int user_colls[] = {
    WEFT_COLL_ALLREDUCE, WEFT_COLL_ALLGATHER, WEFT_COLL_REDUCESCATTER,
    WEFT_COLL_ALLTOALL,  WEFT_COLL_BROADCAST, WEFT_COLL_REDUCE,
    WEFT_COLL_GATHER,    WEFT_COLL_SCATTER,   WEFT_COLL_CUSTOM,
};

static int field_int(evaluator *e, const weft_lang_node *f, int64_t lo, int64_t hi, int64_t *v) {
    if (eval(e, f->a, v) != 0) return -1;
    if (*v < lo || *v > hi) {
        if (hi == INT64_MAX)
            err(e, f->a->loc, "%s must be >= %lld (got %lld)", f->name, (long long)lo,
                (long long)*v);
        else
            err(e, f->a->loc, "%s must be in %lld..%lld (got %lld)", f->name, (long long)lo,
                (long long)hi, (long long)*v);
        return -1;
    }
    return 0;
}

static void exec_header(evaluator *e, const weft_lang_node *n) {
    weft_cc_program *p = e->p;
    const weft_lang_node **given = e->header_fields;
    const char *names[F_COUNT] = {0}; /* what each name field evaluated to */
    char vias[F_COUNT][80] = {{0}};
    int errs = e->errors;
    e->header_seen = 1;
    p->header_loc = n->loc;
    p->name = weft_strdup(n->name);
    memset(e->header_fields, 0, sizeof e->header_fields);
    for (int32_t i = 0; i < n->nkids; i++) {
        const weft_lang_node *f = n->kids[i];
        int k = weft_name_find(field_names, F_COUNT, f->name, 0);
        if (k < 0) {
            err(e, f->loc,
                "unknown header field '%s' (expected collective, ranks, chunks, "
                "protocol, inplace, outofplace, instances, minbytes, maxbytes, graphmaxbytes, "
                "root, eager, graph, registered or unregistered)",
                f->name);
            continue;
        }
        if (given[k]) {
            int line, col;
            weft_lang_linecol(p->src->sources, given[k]->loc.file, given[k]->loc.start, &line,
                              &col);
            err(e, f->loc, "'%s' is given twice (first at %d:%d)", f->name, line, col);
            continue;
        }
        given[k] = f;
        if (field_kinds[k] == 2 && f->a) {
            err(e, f->a->loc, "'%s' takes no value", f->name);
        } else if (field_kinds[k] != 2 && f->a == NULL) {
            err(e, f->loc, "'%s' needs a value", f->name);
            given[k] = NULL;
        } else if (field_kinds[k] == 0) {
            /* a name, or an expression over parameters that gives one */
            int64_t num;
            const char *via = NULL;
            names[k] = NULL;
            if (eval_value(e, f->a, 1, &num, &names[k], &via) != 0) {
                given[k] = NULL;
            } else if (names[k] == NULL) {
                err(e, f->a->loc, "'%s' takes a name, not a number (got %lld)", f->name,
                    (long long)num);
                given[k] = NULL;
            } else if (via) {
                snprintf(vias[k], sizeof vias[k], ", the value of parameter %s", via);
            }
        }
    }
    int64_t v;
    int coll_ok = 0;
    if (!given[F_COLLECTIVE] || !given[F_RANKS])
        err(e, n->loc, "missing %s in the algorithm block",
            !given[F_COLLECTIVE] && !given[F_RANKS] ? "'collective' and 'ranks'"
            : !given[F_COLLECTIVE]                  ? "'collective'"
                                                    : "'ranks'");
    if (given[F_COLLECTIVE]) {
        const weft_lang_node *f = given[F_COLLECTIVE];
        const char *name = names[F_COLLECTIVE];
        int c = weft_coll_from_name(name), ok = 0;
        for (size_t i = 0; i < sizeof user_colls / sizeof *user_colls; i++)
            if (c == user_colls[i] && strcmp(name, "reduce_scatter") != 0) ok = 1;
        if (!ok)
            err(e, f->a->loc,
                "unknown collective '%s'%s (expected allreduce, allgather, "
                "reducescatter, alltoall, broadcast, reduce, gather, scatter or "
                "custom)",
                name, vias[F_COLLECTIVE]);
        else
            p->coll = (weft_coll)c, coll_ok = 1;
        p->coll_loc = f->loc;
    }
    if (given[F_RANKS] && field_int(e, given[F_RANKS], 1, WEFT_IR_MAX_RANKS, &v) == 0)
        p->nranks = (int32_t)v;
    p->chunks = 1;
    if (given[F_CHUNKS] && field_int(e, given[F_CHUNKS], 1, WEFT_IR_MAX_CHUNKS, &v) == 0)
        p->chunks = (int32_t)v;
    p->proto = WEFT_PROTO_SIMPLE;
    if (given[F_PROTOCOL]) {
        int pr = weft_proto_from_name(names[F_PROTOCOL]);
        if (pr < 0)
            err(e, given[F_PROTOCOL]->a->loc,
                "unknown protocol '%s'%s (expected Simple, LL or LL128)", names[F_PROTOCOL],
                vias[F_PROTOCOL]);
        else
            p->proto = (weft_proto)pr;
    }
    p->inplace = given[F_INPLACE] != NULL;
    p->outofplace = given[F_OUTOFPLACE] != NULL || !p->inplace;
    /* the launch modes it serves: eager and/or graph, on unregistered and/or registered
     * buffers; a pair that names neither means both */
    int eager = given[F_EAGER] != NULL, graph = given[F_GRAPH] != NULL;
    int reg = given[F_REGISTERED] != NULL, unreg = given[F_UNREGISTERED] != NULL;
    if (!eager && !graph) eager = graph = 1;
    if (!reg && !unreg) reg = unreg = 1;
    p->launch = 0;
    for (int l = 0; l < WEFT_LAUNCH_COUNT; l++) {
        int g = weft_launch_graph((weft_launch)l), r = weft_launch_registered((weft_launch)l);
        if ((g ? graph : eager) && (r ? reg : unreg)) p->launch |= (uint8_t)(1u << l);
    }
    p->instances = 1;
    if (given[F_INSTANCES] && field_int(e, given[F_INSTANCES], 1, CC_MAX_CHANNELS, &v) == 0)
        p->instances = (int32_t)v;
    if (given[F_MINBYTES] && field_int(e, given[F_MINBYTES], 0, INT64_MAX, &v) == 0)
        p->min_bytes = v;
    if (given[F_MAXBYTES] && field_int(e, given[F_MAXBYTES], 1, INT64_MAX, &v) == 0) {
        p->max_bytes = v;
        if (v < p->min_bytes)
            err(e, given[F_MAXBYTES]->a->loc, "maxbytes (%lld) is below minbytes (%lld)",
                (long long)v, (long long)p->min_bytes);
    }
    /* captured calls' own bound: where NCCL's captured kernels overtake the algorithm at sizes
     * its eager calls still win (the library's figures are in its files) */
    if (given[F_GRAPHMAXBYTES] && field_int(e, given[F_GRAPHMAXBYTES], 1, INT64_MAX, &v) == 0) {
        p->graph_max_bytes = v;
        if (v < p->min_bytes)
            err(e, given[F_GRAPHMAXBYTES]->a->loc, "graphmaxbytes (%lld) is below minbytes (%lld)",
                (long long)v, (long long)p->min_bytes);
        else if (p->max_bytes != 0 && v > p->max_bytes)
            err(e, given[F_GRAPHMAXBYTES]->a->loc, "graphmaxbytes (%lld) is above maxbytes (%lld)",
                (long long)v, (long long)p->max_bytes);
        else if (!graph)
            err(e, given[F_GRAPHMAXBYTES]->a->loc,
                "graphmaxbytes bounds calls captured in CUDA graphs, which this algorithm does "
                "not serve ('eager' alone)");
    }
    if (given[F_ROOT]) {
        if (coll_ok && !weft_coll_rooted(p->coll))
            err(e, given[F_ROOT]->loc,
                "'root' applies only to broadcast, reduce, gather and scatter");
        else if (p->nranks > 0 && field_int(e, given[F_ROOT], 0, p->nranks - 1, &v) == 0)
            p->root = (int32_t)v;
    }
    if (e->errors != errs) return;
    /* what the schedule's header and buffers will be: within the IR's limits (weft_ir.h), or
     * nothing downstream accepts it */
    int32_t k = p->chunks, nr = p->nranks, I = p->instances;
    int64_t big = (int64_t)nr * k;
    int large_in = weft_coll_large(p->coll, WEFT_BUF_INPUT);
    int large_out = weft_coll_large(p->coll, WEFT_BUF_OUTPUT);
    int64_t in = large_in ? big : k, out = large_out ? big : k;
    int64_t per_loop = (large_in || large_out ? big : k) * I;
    if (per_loop > WEFT_IR_MAX_CHUNKS) {
        err(e, n->loc,
            "too many chunks: %d ranks x %d chunks x %d instances make nchunksperloop %lld; "
            "weft handles at most %d",
            nr, k, I, (long long)per_loop, WEFT_IR_MAX_CHUNKS);
        return;
    }
    if ((in + out) * nr * I > CC_MAX_LOCATIONS) {
        err(e, n->loc,
            "buffers too large: %d ranks x %lld chunks (input and output) x %d instances; weft "
            "handles at most %d chunks over all ranks",
            nr, (long long)(in + out), I, CC_MAX_LOCATIONS);
        return;
    }
    p->in_chunks = (int32_t)in;
    p->out_chunks = (int32_t)out;
    e->header_ok = 1;
}

static void exec_scratch(evaluator *e, const weft_lang_node *n) {
    weft_cc_program *p = e->p;
    int64_t v;
    if (strcmp(n->name, "input") == 0 || strcmp(n->name, "output") == 0) {
        err(e, n->loc, "'%s' is predefined; choose another name for a scratch buffer", n->name);
        return;
    }
    int32_t sym = symbol_of(e, n->name, 1);
    if (sym < 0) return;
    if (e->syms[sym].scratch >= 0) {
        err(e, n->loc, "scratch buffer '%s' is declared twice", n->name);
        return;
    }
    if (eval(e, n->a, &v) != 0) return;
    if (v < 1 || v > WEFT_IR_MAX_CHUNKS) {
        err(e, n->a->loc, "scratch size must be in 1..%d (got %lld)", WEFT_IR_MAX_CHUNKS,
            (long long)v);
        return;
    }
    int64_t total = (int64_t)p->scratch_total + v;
    int64_t all = (p->in_chunks + p->out_chunks + total) * p->nranks * p->instances;
    if (all > CC_MAX_LOCATIONS) {
        err(e, n->loc,
            "buffers too large: scratch would make %lld chunks over all ranks%s; weft handles "
            "at most %d",
            (long long)all, p->instances > 1 ? " and instances" : "", CC_MAX_LOCATIONS);
        return;
    }
    if (weft_grow((void **)&p->scratch, &p->capscratch, (size_t)p->nscratch, sizeof *p->scratch) !=
        0) {
        e->stop = 1;
        return;
    }
    e->syms[sym].scratch = p->nscratch;
    cc_scratch *s = &p->scratch[p->nscratch++];
    s->name = n->name;
    s->size = (int32_t)v;
    s->base = p->scratch_total;
    s->loc = n->loc;
    p->scratch_total = (int32_t)total;
}

/* ---- parameters and the top level -------------------------------------------------------- */

static int parse_define(evaluator *e, const char *s, define *out) {
    const char *eq = strchr(s, '=');
    const char *path = weft_lang_source_path(e->p->src->sources, 0);
    if (eq == NULL || eq == s) {
        weft_diag_add(e->d, WEFT_SEV_ERROR, path, 0, 0, "-D %s: expected NAME=VALUE", s);
        return -1;
    }
    const char *v = eq + 1;
    out->text = s;
    out->atom = NULL;
    out->used = 0;
    if ((*v >= 'A' && *v <= 'Z') || (*v >= 'a' && *v <= 'z') || *v == '_') {
        /* a name, for a parameter that header fields such as protocol take */
        size_t n = strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
        if (v[n] != '\0') {
            weft_diag_add(e->d, WEFT_SEV_ERROR, path, 0, 0,
                          "-D %s: VALUE must be an integer or a name", s);
            return -1;
        }
        out->name = weft_asprintf("%.*s", (int)(eq - s), s);
        out->atom = weft_strdup(v);
        out->value = 0;
        return out->name && out->atom ? 0 : -1;
    }
    int neg = 0;
    if (*v == '-' || *v == '+') neg = *v++ == '-';
    char *end;
    int base = (v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) ? 16 : 10;
    unsigned long long u = strtoull(v, &end, base);
    unsigned long long mult = 1;
    if (*end == 'K')
        mult = 1024ULL, end++;
    else if (*end == 'M')
        mult = 1024ULL * 1024, end++;
    else if (*end == 'G')
        mult = 1024ULL * 1024 * 1024, end++;
    if (end == v || *end != '\0' || (v[0] < '0' || v[0] > '9') ||
        u > (unsigned long long)INT64_MAX / mult) {
        weft_diag_add(e->d, WEFT_SEV_ERROR, path, 0, 0, "-D %s: VALUE must be an integer or a name",
                      s);
        return -1;
    }
    out->name = weft_asprintf("%.*s", (int)(eq - s), s);
    out->value = (int64_t)(u * mult) * (neg ? -1 : 1);
    return out->name ? 0 : -1;
}

static void collect_defs(evaluator *e, const weft_lang_node *file) {
    for (int32_t i = 0; i < file->nkids; i++) {
        const weft_lang_node *it = file->kids[i];
        if (it->kind == WEFT_LANG_INCLUDE && it->a) collect_defs(e, it->a);
        if (it->kind != WEFT_LANG_DEF) continue;
        const weft_lang_node *prev = find_def(e, it->name);
        if (prev) {
            int line, col;
            weft_lang_linecol(e->p->src->sources, prev->loc.file, prev->loc.start, &line, &col);
            err(e, it->loc, "def '%s' is defined twice (first at %s:%d:%d)", it->name,
                weft_lang_source_path(e->p->src->sources, prev->loc.file), line, col);
            continue;
        }
        if (builtin_index(it->name) >= 0) {
            err(e, it->loc, "'%s' is a built-in function and cannot be redefined", it->name);
            continue;
        }
        for (int32_t a = 0; a < it->nkids; a++) {
            int32_t ps = symbol_of(e, it->kids[a]->name, 1);
            if (ps < 0) return;
            if (e->syms[ps].stamp == (int32_t)e->ndefs)
                err(e, it->kids[a]->loc, "parameter '%s' is listed twice", it->kids[a]->name);
            e->syms[ps].stamp = (int32_t)e->ndefs;
        }
        int32_t sym = symbol_of(e, it->name, 1);
        if (sym < 0) return;
        if (e->ndefs >= INT32_MAX ||
            weft_grow((void **)&e->defs, &e->capdefs, e->ndefs, sizeof *e->defs) != 0) {
            e->stop = 1;
            return;
        }
        e->syms[sym].def = (int32_t)e->ndefs;
        e->defs[e->ndefs++] = it;
    }
}

static void exec_param(evaluator *e, const weft_lang_node *n) {
    int64_t v = 0, dummy;
    const char *atom = NULL;
    if (lookup(e, n->name, &dummy)) {
        err(e, n->loc, "'%s' is already defined", n->name);
        return;
    }
    define *def = NULL;
    for (size_t i = 0; i < e->ndefines; i++)
        if (strcmp(e->defines[i].name, n->name) == 0) def = &e->defines[i];
    if (def) {
        def->used = 1;
        v = def->value;
        atom = def->atom;
    } else if (n->a == NULL) {
        err(e, n->loc, "parameter '%s' has no default; pass -D %s=VALUE", n->name, n->name);
        e->stop = 1;
        return;
    } else if (eval_value(e, n->a, 0, &v, &atom, NULL) != 0) {
        e->stop = 1;
        return;
    }
    if (bind_atom(e, 0, n->name, v, atom, n->loc) == 0) e->nglobal = e->nenv;
}

static int is_body(const weft_lang_node *n) {
    return n->kind == WEFT_LANG_FOR || n->kind == WEFT_LANG_IF || n->kind == WEFT_LANG_COPY ||
           n->kind == WEFT_LANG_REDUCE || n->kind == WEFT_LANG_ENSURE || n->kind == WEFT_LANG_CALL;
}

static void exec_top(evaluator *e, const weft_lang_node *file) {
    for (int32_t i = 0; i < file->nkids && !e->stop; i++) {
        const weft_lang_node *n = file->kids[i];
        int decl = n->kind == WEFT_LANG_PARAM || n->kind == WEFT_LANG_ALGORITHM ||
                   n->kind == WEFT_LANG_SCRATCH;
        if (decl && e->body_line) {
            err(e, n->loc, "'%s' must come before the first statement (line %d)",
                n->kind == WEFT_LANG_PARAM       ? "param"
                : n->kind == WEFT_LANG_ALGORITHM ? "algorithm"
                                                 : "scratch",
                (int)e->body_line);
            if (n->kind == WEFT_LANG_ALGORITHM) e->stop = 1;
            continue;
        }
        if (is_body(n) && !e->body_line) {
            e->body_line = line_of(e, n->loc);
            if (!e->header_seen) {
                err(e, n->loc, "the 'algorithm' block must come before the first statement");
                e->stop = 1;
                return;
            }
        }
        if (n->kind == WEFT_LANG_SCRATCH && !e->header_seen) {
            err(e, n->loc,
                "'scratch' must come after the 'algorithm' block (its size is per rank)");
            e->stop = 1;
            return;
        }
        if ((is_body(n) || n->kind == WEFT_LANG_SCRATCH) && !e->header_ok) {
            e->stop = 1; /* the header's errors are already reported */
            return;
        }
        switch (n->kind) {
        case WEFT_LANG_PARAM: exec_param(e, n); break;
        case WEFT_LANG_ALGORITHM:
            if (e->header_seen) {
                err(e, n->loc, "a file has one 'algorithm' block");
                break;
            }
            exec_header(e, n);
            break;
        case WEFT_LANG_SCRATCH: exec_scratch(e, n); break;
        case WEFT_LANG_DEF:
        case WEFT_LANG_INCLUDE: break;
        case WEFT_LANG_LET: {
            int64_t v;
            if (eval(e, n->a, &v) == 0 && bind(e, 0, n->name, v, n->loc) == 0) e->nglobal = e->nenv;
            break;
        }
        default: exec_stmt(e, n, 0); break;
        }
    }
}

weft_result weft_cc_eval(const weft_lang_program *prog, const weft_cc_options *opts,
                         weft_cc_program **out, weft_diag *d) {
    weft_result res = WEFT_OK;
    evaluator e;
    memset(&e, 0, sizeof e);
    *out = NULL;
    weft_cc_program *p = calloc(1, sizeof *p);
    WEFT_CHECK_ALLOC(p);
    p->src = prog;
    if (cc_seen_new(p) != 0) WEFT_FAIL(WEFT_ERR_NOMEM);
    p->coll = WEFT_COLL_CUSTOM;
    p->coll_loc = p->header_loc = (weft_lang_loc){-1, 0, 0};
    e.p = p;
    e.d = d;
    if (prog == NULL || prog->root == NULL) WEFT_FAIL(WEFT_ERR_USAGE);
    if (opts && opts->ndefines) {
        e.defines = calloc(opts->ndefines, sizeof *e.defines);
        WEFT_CHECK_ALLOC(e.defines);
        for (size_t i = 0; i < opts->ndefines; i++) {
            if (parse_define(&e, opts->defines[i], &e.defines[e.ndefines]) != 0) {
                e.errors++;
                continue;
            }
            for (size_t j = 0; j < e.ndefines; j++)
                if (strcmp(e.defines[j].name, e.defines[e.ndefines].name) == 0) {
                    weft_diag_add(d, WEFT_SEV_ERROR, weft_lang_source_path(prog->sources, 0), 0, 0,
                                  "-D %s is given twice", e.defines[j].name);
                    e.errors++;
                }
            e.ndefines++;
        }
        /* a -D for a name the file does not declare is almost always a typo */
        for (size_t i = 0; i < e.ndefines; i++) {
            int found = 0;
            for (int32_t k = 0; k < prog->root->nkids; k++)
                if (prog->root->kids[k]->kind == WEFT_LANG_PARAM &&
                    strcmp(prog->root->kids[k]->name, e.defines[i].name) == 0)
                    found = 1;
            if (!found) {
                const char *names[64];
                int nn = 0;
                for (int32_t k = 0; k < prog->root->nkids && nn < 64; k++)
                    if (prog->root->kids[k]->kind == WEFT_LANG_PARAM)
                        names[nn++] = prog->root->kids[k]->name;
                const char *dym = weft_did_you_mean(e.defines[i].name, names, nn);
                weft_diag_add(d, WEFT_SEV_ERROR, weft_lang_source_path(prog->sources, 0), 0, 0,
                              "-D %s: no parameter '%s' in this file%s%s%s", e.defines[i].text,
                              e.defines[i].name, dym ? "; did you mean '" : "", dym ? dym : "",
                              dym ? "'?" : "");
                e.errors++;
            }
        }
    }
    if (e.errors == 0) {
        collect_defs(&e, prog->root);
        exec_top(&e, prog->root);
        if (!e.header_seen && !e.stop && e.errors == 0)
            err(&e, (weft_lang_loc){0, 0, 0}, "missing 'algorithm' block");
    }
    cc_flush_suppressed(p, d);
    if (e.stop && e.errors == 0) WEFT_FAIL(WEFT_ERR_NOMEM);
    if (e.errors > 0) WEFT_FAIL(WEFT_ERR_INPUT);
    *out = p;
    p = NULL;
fail:
    for (size_t i = 0; i < e.ndefines; i++) {
        free(e.defines[i].name);
        free(e.defines[i].atom);
    }
    free(e.defines);
    free(e.env);
    free(e.defs);
    free(e.syms);
    weft_map_free(&e.symmap);
    weft_cc_program_free(p);
    return res;
}
