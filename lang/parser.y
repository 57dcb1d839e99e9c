/* parser.y — the weft grammar (docs/language.md has the EBNF); every action is one builder call. */
%code requires {
#include "lang_internal.h"
typedef void *yyscan_t;
}

%code provides {
int weft_lang_yylex(WEFT_LANG_YYSTYPE *lval, WEFT_LANG_YYLTYPE *lloc, yyscan_t scanner);
}

%code {
#include <stdlib.h>
#include <string.h>

#define T(k) WEFT_LANG_##k
#define OP(o) WEFT_LANG_OP_##o

static void weft_lang_yyerror(WEFT_LANG_YYLTYPE *loc, yyscan_t scanner, weft_lang_parser *p,
                              const char *msg);

#define YYLLOC_DEFAULT(Cur, Rhs, N)                                                               \
    do {                                                                                          \
        if (N) {                                                                                  \
            (Cur).start = YYRHSLOC(Rhs, 1).start;                                                 \
            (Cur).end = YYRHSLOC(Rhs, N).end;                                                     \
        } else {                                                                                  \
            (Cur).start = (Cur).end = YYRHSLOC(Rhs, 0).end;                                       \
        }                                                                                         \
    } while (0)
}

%define api.pure full
%define api.prefix {weft_lang_yy}
%define api.token.prefix {TOK_}
%define parse.error custom
%define parse.lac full
%locations
%expect 0
%param {yyscan_t scanner}
%parse-param {weft_lang_parser *p}

%union {
    int64_t ival;
    char *str;
    weft_lang_node *node;
}

%token END 0 "end of file"
%token <str> IDENT "identifier"
%token <str> STRING "string"
%token <ival> INT "integer"
%token PARAM "param" ALGORITHM "algorithm" SCRATCH "scratch" DEF "def" INCLUDE "include"
%token LET "let" FOR "for" IN "in" IF "if" ELSE "else" COPY "copy" REDUCE "reduce"
%token ENSURE "ensure" REQUIRE "require"
%token EQ "==" NE "!=" LE "<=" GE ">=" AND "&&" OR "||" ARROW "->" DOTDOT ".."

%type <node> items item param algorithm fields field scratch def idents include block stmts
%type <node> stmt ifstmt hints chunk span terms expr args
%type <str> name

%destructor { free($$); } <str>
%destructor { weft_lang_node_free($$); } <node>

%right '?' ':'
%left OR
%left AND
%nonassoc EQ NE '<' LE '>' GE
%left '+' '-'
%left '*' '/' '%'
%precedence UNARY

%%

file:
    items                       { p->root = $1; }
    ;

items:
    %empty                      { $$ = weft_lang_node_new(p, T(FILE), @$); }
  | items item                  { $$ = weft_lang_append(p, $1, $2); }
  ;

item:
    param | algorithm | scratch | def | include | stmt
  ;

param:
    "param" IDENT '=' expr ';'  { $$ = weft_lang_tree(p, T(PARAM), $2, $4, NULL, NULL, @$); }
  | "param" IDENT ';'           { $$ = weft_lang_tree(p, T(PARAM), $2, NULL, NULL, NULL, @$); }
  ;

algorithm:
    "algorithm" name '{' fields '}'
                                { $$ = weft_lang_at(p, weft_lang_adopt(weft_lang_leaf(p, T(ALGORITHM), $2, @$), $4), @$); }
  ;

name:
    IDENT | STRING
  ;

fields:
    %empty                      { $$ = weft_lang_node_new(p, T(BLOCK), @$); }
  | fields field                { $$ = weft_lang_append(p, $1, $2); }
  ;

field:
    IDENT expr ';'              { $$ = weft_lang_tree(p, T(FIELD), $1, $2, NULL, NULL, @$); }
  | IDENT ';'                   { $$ = weft_lang_tree(p, T(FIELD), $1, NULL, NULL, NULL, @$); }
  | IDENT "reduce" ';'          { $$ = weft_lang_tree(p, T(FIELD), $1, weft_lang_leaf(p, T(NAME), weft_strdup("reduce"), @2), NULL, NULL, @$); }
  | error ';'                   { $$ = NULL; }
  ;

scratch:
    "scratch" IDENT '[' expr ']' ';'
                                { $$ = weft_lang_tree(p, T(SCRATCH), $2, $4, NULL, NULL, @$); }
  ;

def:
    "def" IDENT '(' ')' block   { $$ = weft_lang_tree(p, T(DEF), $2, $5, NULL, NULL, @$); }
  | "def" IDENT '(' idents ')' block
                                { $$ = weft_lang_adopt(weft_lang_tree(p, T(DEF), $2, $6, NULL, NULL, @$), $4); }
  ;

idents:
    IDENT                       { $$ = weft_lang_append(p, weft_lang_node_new(p, T(BLOCK), @$), weft_lang_leaf(p, T(NAME), $1, @1)); }
  | idents ',' IDENT            { $$ = weft_lang_append(p, $1, weft_lang_leaf(p, T(NAME), $3, @3)); }
  ;

include:
    "include" STRING ';'        { $$ = weft_lang_leaf(p, T(INCLUDE), $2, @$); }
  ;

block:
    '{' stmts '}'               { $$ = weft_lang_at(p, $2, @$); }
  ;

stmts:
    %empty                      { $$ = weft_lang_node_new(p, T(BLOCK), @$); }
  | stmts stmt                  { $$ = weft_lang_append(p, $1, $2); }
  ;

stmt:
    "let" IDENT '=' expr ';'    { $$ = weft_lang_tree(p, T(LET), $2, $4, NULL, NULL, @$); }
  | "for" IDENT "in" expr ".." expr block
                                { $$ = weft_lang_tree(p, T(FOR), $2, $4, $6, $7, @$); }
  | ifstmt
  | "copy" chunk "->" chunk hints ';'
                                { $$ = weft_lang_adopt(weft_lang_tree(p, T(COPY), NULL, $2, $4, NULL, @$), $5); }
  | "reduce" chunk "->" chunk hints ';'
                                { $$ = weft_lang_adopt(weft_lang_tree(p, T(REDUCE), NULL, $2, $4, NULL, @$), $5); }
  | "ensure" chunk "==" terms ';'
                                { $$ = weft_lang_adopt(weft_lang_tree(p, T(ENSURE), NULL, $2, NULL, NULL, @$), $4); }
  | "require" expr ';'          { $$ = weft_lang_tree(p, T(REQUIRE), NULL, $2, NULL, NULL, @$); }
  | "require" expr ',' STRING ';'
                                { $$ = weft_lang_tree(p, T(REQUIRE), $4, $2, NULL, NULL, @$); }
  | IDENT '(' ')' ';'           { $$ = weft_lang_leaf(p, T(CALL), $1, @$); }
  | IDENT '(' args ')' ';'      { $$ = weft_lang_at(p, weft_lang_adopt(weft_lang_leaf(p, T(CALL), $1, @$), $3), @$); }
  | error ';'                   { $$ = NULL; }
  ;

ifstmt:
    "if" expr block             { $$ = weft_lang_tree(p, T(IF), NULL, $2, $3, NULL, @$); }
  | "if" expr block "else" block
                                { $$ = weft_lang_tree(p, T(IF), NULL, $2, $3, $5, @$); }
  | "if" expr block "else" ifstmt
                                { $$ = weft_lang_tree(p, T(IF), NULL, $2, $3, $5, @$); }
  ;

hints:
    %empty                      { $$ = weft_lang_node_new(p, T(BLOCK), @$); }
  | hints IDENT '=' expr        { $$ = weft_lang_append(p, $1, weft_lang_tree(p, T(HINT), $2, $4, NULL, NULL, @2)); }
  ;

chunk:
    IDENT '[' span ']' '[' span ']'
                                { $$ = weft_lang_tree(p, T(CHUNK), $1, $3, $6, NULL, @$); }
  ;

span:
    expr                        { $$ = weft_lang_tree(p, T(SPAN), NULL, $1, NULL, NULL, @$); }
  | expr ".." expr              { $$ = weft_lang_tree(p, T(SPAN), NULL, $1, $3, NULL, @$); }
  ;

terms:
    chunk                       { $$ = weft_lang_append(p, weft_lang_node_new(p, T(BLOCK), @$), $1); }
  | terms '+' chunk             { $$ = weft_lang_append(p, $1, $3); }
  ;

expr:
    INT                         { $$ = weft_lang_int(p, $1, @$); }
  | IDENT                       { $$ = weft_lang_leaf(p, T(NAME), $1, @$); }
  | IDENT '(' ')'               { $$ = weft_lang_leaf(p, T(FUNC), $1, @$); }
  | IDENT '(' args ')'          { $$ = weft_lang_at(p, weft_lang_adopt(weft_lang_leaf(p, T(FUNC), $1, @$), $3), @$); }
  | '(' expr ')'                { $$ = weft_lang_at(p, $2, @$); }
  | '-' expr %prec UNARY        { $$ = weft_lang_unary(p, OP(NEG), $2, @$); }
  | '!' expr %prec UNARY        { $$ = weft_lang_unary(p, OP(NOT), $2, @$); }
  | expr '+' expr               { $$ = weft_lang_binary(p, OP(ADD), $1, $3, @$); }
  | expr '-' expr               { $$ = weft_lang_binary(p, OP(SUB), $1, $3, @$); }
  | expr '*' expr               { $$ = weft_lang_binary(p, OP(MUL), $1, $3, @$); }
  | expr '/' expr               { $$ = weft_lang_binary(p, OP(DIV), $1, $3, @$); }
  | expr '%' expr               { $$ = weft_lang_binary(p, OP(MOD), $1, $3, @$); }
  | expr "==" expr              { $$ = weft_lang_binary(p, OP(EQ), $1, $3, @$); }
  | expr "!=" expr              { $$ = weft_lang_binary(p, OP(NE), $1, $3, @$); }
  | expr '<' expr               { $$ = weft_lang_binary(p, OP(LT), $1, $3, @$); }
  | expr "<=" expr              { $$ = weft_lang_binary(p, OP(LE), $1, $3, @$); }
  | expr '>' expr               { $$ = weft_lang_binary(p, OP(GT), $1, $3, @$); }
  | expr ">=" expr              { $$ = weft_lang_binary(p, OP(GE), $1, $3, @$); }
  | expr "&&" expr              { $$ = weft_lang_binary(p, OP(AND), $1, $3, @$); }
  | expr "||" expr              { $$ = weft_lang_binary(p, OP(OR), $1, $3, @$); }
  | expr '?' expr ':' expr      { $$ = weft_lang_tree(p, T(COND), NULL, $1, $3, $5, @$); }
  ;

args:
    expr                        { $$ = weft_lang_append(p, weft_lang_node_new(p, T(BLOCK), @$), $1); }
  | args ',' expr               { $$ = weft_lang_append(p, $1, $3); }
  ;

%%

/* How a token is named in a message: keywords and punctuation in single quotes; identifiers,
 * numbers and strings by their kind. */
static void symbol_text(yysymbol_kind_t sym, char *buf, size_t n) {
    const char *name = yysymbol_name(sym);
    if (sym == YYSYMBOL_IDENT || sym == YYSYMBOL_INT || sym == YYSYMBOL_STRING ||
        sym == YYSYMBOL_YYEOF || sym == YYSYMBOL_YYerror || sym == YYSYMBOL_YYUNDEF ||
        name[0] == '\'')
        snprintf(buf, n, "%s", name);
    else
        snprintf(buf, n, "'%s'", name);
}

/* Binary operators can follow almost any expression; listing them all hides what matters. */
static int is_operator(yysymbol_kind_t sym) {
    switch (sym) {
    case YYSYMBOL_EQ: case YYSYMBOL_NE: case YYSYMBOL_LE: case YYSYMBOL_GE: case YYSYMBOL_AND:
    case YYSYMBOL_OR: return 1;
    default: break;
    }
    const char *name = yysymbol_name(sym);
    return name[0] == '\'' && name[1] && name[2] == '\'' && strchr("+-*/%<>?", name[1]);
}

static int is_comparison(yysymbol_kind_t sym) {
    const char *name = yysymbol_name(sym);
    return sym == YYSYMBOL_EQ || sym == YYSYMBOL_NE || sym == YYSYMBOL_LE || sym == YYSYMBOL_GE ||
           strcmp(name, "'<'") == 0 || strcmp(name, "'>'") == 0;
}

static int yyreport_syntax_error(const yypcontext_t *ctx, yyscan_t scanner, weft_lang_parser *p) {
    (void)scanner;
    enum { MAXEXP = 6, ALL = YYNTOKENS };
    yysymbol_kind_t all[ALL], exp[ALL];
    int nall = yypcontext_expected_tokens(ctx, all, ALL), nexp = 0, ops = 0;
    /* a long list is shown without the binary operators, which are then summarised */
    for (int i = 0; i < nall; i++) {
        if (nall > MAXEXP && is_operator(all[i]))
            ops = 1;
        else
            exp[nexp++] = all[i];
    }
    yysymbol_kind_t got = yypcontext_token(ctx);
    const WEFT_LANG_YYLTYPE *loc = yypcontext_location(ctx);
    size_t len = 0;
    const char *text = weft_lang_source_text(p->sources, p->file, &len);
    char msg[512], tok[96];
    if (got == YYSYMBOL_IDENT || got == YYSYMBOL_INT) {
        int32_t s = loc->start, e = loc->end;
        if (e - s > 40) e = s + 40;
        snprintf(tok, sizeof tok, "%s '%.*s'", got == YYSYMBOL_IDENT ? "identifier" : "integer",
                 (int)(e - s), text + s);
    } else {
        symbol_text(got, tok, sizeof tok);
    }
    int m = snprintf(msg, sizeof msg, "syntax error: unexpected %s", tok);
    if (nexp > 0 && nexp <= MAXEXP) {
        m += snprintf(msg + m, sizeof msg - (size_t)m, ", expecting ");
        for (int i = 0; i < nexp && m < (int)sizeof msg; i++) {
            char t[64];
            symbol_text(exp[i], t, sizeof t);
            m += snprintf(msg + m, sizeof msg - (size_t)m, "%s%s",
                          i == 0 ? "" : i == nexp - 1 && !ops ? " or " : ", ", t);
        }
        if (ops && m < (int)sizeof msg)
            m += snprintf(msg + m, sizeof msg - (size_t)m, " or an operator");
    }
    if (is_comparison(got) && ops && m < (int)sizeof msg)
        m += snprintf(msg + m, sizeof msg - (size_t)m,
                      " (comparisons do not chain: write a < b && b < c)");
    if (got == YYSYMBOL_YYEOF && p->nopen > 0 && p->nopen <= WEFT_LANG_MAX_NEST) {
        int line, col;
        int32_t at = p->open_at[p->nopen - 1];
        weft_lang_linecol(p->sources, p->file, at, &line, &col);
        if (m < (int)sizeof msg)
            snprintf(msg + m, sizeof msg - (size_t)m, " (to close '%c' at %d:%d)",
                     p->open_ch[p->nopen - 1], line, col);
    }
    weft_lang_parse_error(p, *loc, "%s", msg);
    return 0;
}

static void weft_lang_yyerror(WEFT_LANG_YYLTYPE *loc, yyscan_t scanner, weft_lang_parser *p,
                              const char *msg) {
    (void)scanner;
    /* with custom error reporting the only message left is bison's stack overflow */
    if (strcmp(msg, "memory exhausted") == 0) msg = "nested too deeply";
    weft_lang_parse_error(p, *loc, "%s", msg);
}

int weft_lang_yylex_init_extra(weft_lang_parser *extra, yyscan_t *scanner);
int weft_lang_yylex_destroy(yyscan_t scanner);
void *weft_lang_yy_scan_bytes(const char *bytes, int len, yyscan_t scanner);

int weft_lang_parse_text(weft_lang_parser *p, const char *text, size_t len) {
    yyscan_t scanner;
    if (len > INT32_MAX) {
        weft_lang_yyltype at = {0, 0};
        weft_lang_parse_error(p, at, "file is too large");
        return 1;
    }
    if (weft_lang_yylex_init_extra(p, &scanner) != 0) {
        p->nomem = 1;
        return 1;
    }
    /* flex takes a NUL byte for the possible end of its buffer and rescans the token so far to
     * find out (quadratic in a run of NULs): it gets a copy with NULs as 0x01, another byte
     * that begins no token. Messages quote the source, which keeps its NULs. */
    char *copy = NULL;
    if (memchr(text, '\0', len) != NULL) {
        copy = malloc(len + 1);
        if (copy == NULL) {
            weft_lang_yylex_destroy(scanner);
            p->nomem = 1;
            return 1;
        }
        for (size_t i = 0; i < len; i++)
            copy[i] = text[i] ? text[i] : '\x01';
        text = copy;
    }
    int rc = 1;
    if (weft_lang_yy_scan_bytes(text, (int)len, scanner) != NULL)
        rc = weft_lang_yyparse(scanner, p);
    else
        p->nomem = 1;
    weft_lang_yylex_destroy(scanner);
    free(copy);
    return rc;
}
