/* ast.c — building and freeing the syntax tree; the grammar's actions call only these. */
#include "lang_internal.h"

#include <stdlib.h>
#include <string.h>

static const char *const kind_names[] = {WEFT_LANG_NODES(WEFT_X_COL2)};
static const char *const op_strs[] = {WEFT_LANG_OPS(WEFT_X_COL2)};

const char *weft_lang_kind_name(weft_lang_kind k) {
    return weft_name_of(kind_names, WEFT_LANG_KIND_COUNT, k);
}

const char *weft_lang_op_str(weft_lang_op op) {
    return weft_name_of(op_strs, WEFT_LANG_OP_COUNT, op);
}

weft_lang_node *weft_lang_node_new(weft_lang_parser *p, weft_lang_kind kind,
                                   weft_lang_yyltype loc) {
    weft_lang_node *n = calloc(1, sizeof *n);
    if (n == NULL) {
        p->nomem = 1;
        return NULL;
    }
    n->kind = kind;
    n->loc.file = p->file;
    n->loc.start = loc.start;
    n->loc.end = loc.end;
    return n;
}

weft_lang_node *weft_lang_leaf(weft_lang_parser *p, weft_lang_kind kind, char *name,
                               weft_lang_yyltype loc) {
    weft_lang_node *n = weft_lang_node_new(p, kind, loc);
    if (n == NULL) {
        free(name);
        return NULL;
    }
    n->name = name;
    return n;
}

weft_lang_node *weft_lang_int(weft_lang_parser *p, int64_t v, weft_lang_yyltype loc) {
    weft_lang_node *n = weft_lang_node_new(p, WEFT_LANG_INT, loc);
    if (n) n->ival = v;
    return n;
}

weft_lang_node *weft_lang_tree(weft_lang_parser *p, weft_lang_kind kind, char *name,
                               weft_lang_node *a, weft_lang_node *b, weft_lang_node *c,
                               weft_lang_yyltype loc) {
    weft_lang_node *n = weft_lang_node_new(p, kind, loc);
    if (n == NULL) {
        free(name);
        weft_lang_node_free(a);
        weft_lang_node_free(b);
        weft_lang_node_free(c);
        return NULL;
    }
    n->name = name;
    n->a = a;
    n->b = b;
    n->c = c;
    int32_t d = 0;
    if (a && a->depth > d) d = a->depth;
    if (b && b->depth > d) d = b->depth;
    if (c && c->depth > d) d = c->depth;
    n->depth = d + 1;
    if (n->depth > WEFT_LANG_MAX_DEPTH) {
        if (!p->too_deep) {
            p->too_deep = 1;
            weft_lang_parse_error(p, loc, "nested too deeply (more than %d levels)",
                                  WEFT_LANG_MAX_DEPTH);
        }
        weft_lang_node_free(n);
        return NULL;
    }
    return n;
}

weft_lang_node *weft_lang_binary(weft_lang_parser *p, weft_lang_op op, weft_lang_node *a,
                                 weft_lang_node *b, weft_lang_yyltype loc) {
    weft_lang_node *n = weft_lang_tree(p, WEFT_LANG_BINARY, NULL, a, b, NULL, loc);
    if (n) n->op = op;
    return n;
}

weft_lang_node *weft_lang_unary(weft_lang_parser *p, weft_lang_op op, weft_lang_node *a,
                                weft_lang_yyltype loc) {
    weft_lang_node *n = weft_lang_tree(p, WEFT_LANG_UNARY, NULL, a, NULL, NULL, loc);
    if (n) n->op = op;
    return n;
}

weft_lang_node *weft_lang_append(weft_lang_parser *p, weft_lang_node *list, weft_lang_node *kid) {
    if (kid == NULL) return list;
    if (list == NULL) {
        weft_lang_node_free(kid);
        return NULL;
    }
    if (list->nkids == list->capkids) {
        int32_t cap = list->capkids ? 2 * list->capkids : 4;
        weft_lang_node **v = realloc(list->kids, (size_t)cap * sizeof *v);
        if (v == NULL) {
            p->nomem = 1;
            weft_lang_node_free(kid);
            return list;
        }
        list->kids = v;
        list->capkids = cap;
    }
    list->kids[list->nkids++] = kid;
    if (kid->depth + 1 > list->depth) list->depth = kid->depth + 1;
    return list;
}

weft_lang_node *weft_lang_adopt(weft_lang_node *to, weft_lang_node *from) {
    if (to == NULL || from == NULL) {
        weft_lang_node_free(from);
        return to;
    }
    free(to->kids);
    to->kids = from->kids;
    to->nkids = from->nkids;
    to->capkids = from->capkids;
    if (from->depth > to->depth) to->depth = from->depth;
    from->kids = NULL;
    from->nkids = from->capkids = 0;
    weft_lang_node_free(from);
    return to;
}

weft_lang_node *weft_lang_at(weft_lang_parser *p, weft_lang_node *n, weft_lang_yyltype loc) {
    if (n) {
        n->loc.file = p->file;
        n->loc.start = loc.start;
        n->loc.end = loc.end;
    }
    return n;
}

void weft_lang_node_free(weft_lang_node *n) {
    if (n == NULL) return;
    free(n->name);
    weft_lang_node_free(n->a);
    weft_lang_node_free(n->b);
    weft_lang_node_free(n->c);
    for (int32_t i = 0; i < n->nkids; i++)
        weft_lang_node_free(n->kids[i]);
    free(n->kids);
    free(n);
}
