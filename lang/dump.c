/* dump.c — the syntax tree as indented S-expressions (`weft compile --emit=ast`). */
#include "weft_lang.h"

static void expr(const weft_lang_node *n, FILE *out);

/* An operand: every one is a space, then the expression. */
static void arg(const weft_lang_node *n, FILE *out) {
    fputc(' ', out);
    expr(n, out);
}

static void list(const weft_lang_node *n, FILE *out) {
    for (int32_t i = 0; i < n->nkids; i++)
        arg(n->kids[i], out);
}

/* A chunk reference's operand: an index, or a range (.. A B). */
static void span(const weft_lang_node *n, FILE *out) {
    if (n->b == NULL) {
        arg(n->a, out);
        return;
    }
    fputs(" (..", out);
    arg(n->a, out);
    arg(n->b, out);
    fputc(')', out);
}

/* Expressions, chunk references and hints print on one line. */
static void expr(const weft_lang_node *n, FILE *out) {
    if (n == NULL) {
        fputs("()", out);
        return;
    }
    switch (n->kind) {
    case WEFT_LANG_INT: fprintf(out, "%lld", (long long)n->ival); return;
    case WEFT_LANG_NAME: fputs(n->name, out); return;
    case WEFT_LANG_UNARY:
    case WEFT_LANG_BINARY:
        fprintf(out, "(%s", weft_lang_op_str(n->op));
        arg(n->a, out);
        if (n->b) arg(n->b, out);
        fputc(')', out);
        return;
    case WEFT_LANG_COND:
        fputs("(?", out);
        arg(n->a, out);
        arg(n->b, out);
        arg(n->c, out);
        fputc(')', out);
        return;
    case WEFT_LANG_FUNC:
        fprintf(out, "(%s", n->name);
        list(n, out);
        fputc(')', out);
        return;
    case WEFT_LANG_CHUNK:
        fprintf(out, "(%s", n->name);
        span(n->a, out);
        span(n->b, out);
        fputc(')', out);
        return;
    case WEFT_LANG_HINT:
        fprintf(out, "(%s", n->name);
        arg(n->a, out);
        fputc(')', out);
        return;
    default: fprintf(out, "(%s)", weft_lang_kind_name(n->kind)); return;
    }
}

static void stmt(const weft_lang_node *n, int ind, FILE *out);

static void block(const weft_lang_node *n, int ind, FILE *out) {
    for (int32_t i = 0; n && i < n->nkids; i++) {
        fputc('\n', out);
        stmt(n->kids[i], ind, out);
    }
}

static void stmt(const weft_lang_node *n, int ind, FILE *out) {
    fprintf(out, "%*s(%s", ind, "", weft_lang_kind_name(n->kind));
    switch (n->kind) {
    case WEFT_LANG_FILE: block(n, ind + 2, out); break;
    case WEFT_LANG_PARAM:
    case WEFT_LANG_LET:
    case WEFT_LANG_SCRATCH:
    case WEFT_LANG_FIELD:
        fprintf(out, " %s", n->name);
        if (n->a) arg(n->a, out);
        break;
    case WEFT_LANG_ALGORITHM:
        fprintf(out, " %s", n->name);
        block(n, ind + 2, out);
        break;
    case WEFT_LANG_DEF:
        fprintf(out, " %s (", n->name);
        for (int32_t i = 0; i < n->nkids; i++)
            fprintf(out, "%s%s", i ? " " : "", n->kids[i]->name);
        fputc(')', out);
        block(n->a, ind + 2, out);
        break;
    case WEFT_LANG_INCLUDE:
        fprintf(out, " \"%s\"", n->name);
        if (n->a) {
            fputc('\n', out);
            stmt(n->a, ind + 2, out);
        }
        break;
    case WEFT_LANG_FOR:
        fprintf(out, " %s", n->name);
        arg(n->a, out);
        arg(n->b, out);
        block(n->c, ind + 2, out);
        break;
    case WEFT_LANG_IF:
        arg(n->a, out);
        block(n->b, ind + 2, out);
        if (n->c) {
            fprintf(out, "\n%*s(else", ind + 2, "");
            if (n->c->kind == WEFT_LANG_IF) {
                fputc('\n', out);
                stmt(n->c, ind + 4, out);
            } else {
                block(n->c, ind + 4, out);
            }
            fputc(')', out);
        }
        break;
    case WEFT_LANG_COPY:
    case WEFT_LANG_REDUCE:
        arg(n->a, out);
        arg(n->b, out);
        list(n, out);
        break;
    case WEFT_LANG_ENSURE:
        arg(n->a, out);
        list(n, out);
        break;
    case WEFT_LANG_REQUIRE:
        arg(n->a, out);
        if (n->name) fprintf(out, " \"%s\"", n->name);
        break;
    case WEFT_LANG_CALL:
        fprintf(out, " %s", n->name);
        list(n, out);
        break;
    default: break;
    }
    fputc(')', out);
}

weft_result weft_lang_dump(const weft_lang_program *p, FILE *out) {
    if (p == NULL || p->root == NULL) return WEFT_ERR_USAGE;
    stmt(p->root, 0, out);
    fputc('\n', out);
    return ferror(out) ? WEFT_ERR_SYSTEM : WEFT_OK;
}
