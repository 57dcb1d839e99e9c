/* parse.c — reading a program: the main file, its includes, and the checks on included files. */
#include "lang_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_INCLUDE_DEPTH 32

typedef struct reader {
    weft_lang_sources *sources;
    const char *const *dirs;
    size_t ndirs;
    weft_diag *d;
    int errors;
    int nomem;
    char *stack[MAX_INCLUDE_DEPTH + 1]; /* canonical paths of the files being read */
    int depth;
    char **seen; /* canonical paths of every file read */
    size_t nseen, capseen;
    size_t budget; /* source bytes the program may still read (WEFT_LANG_MAX_SOURCE_BYTES) */
} reader;

static weft_lang_node *read_text(reader *r, const char *path, char *text, size_t len, int included);

static char *dir_of(const char *path) {
    const char *slash = strrchr(path, '/');
    if (slash == NULL) return weft_strdup(".");
    if (slash == path) return weft_strdup("/");
    return weft_asprintf("%.*s", (int)(slash - path), path);
}

static char *canonical(const char *path) {
    char buf[PATH_MAX];
    return realpath(path, buf) ? weft_strdup(buf) : weft_strdup(path);
}

/* The file `name` names, relative to the including file's folder and then each -I folder. */
static char *find_include(reader *r, const char *from, const char *name) {
    if (name[0] == '/') return access(name, R_OK) == 0 ? weft_strdup(name) : NULL;
    char *dir = dir_of(from);
    char *cand = dir == NULL             ? NULL
                 : strcmp(dir, ".") == 0 ? weft_strdup(name)
                                         : weft_asprintf("%s/%s", dir, name);
    free(dir);
    if (cand && access(cand, R_OK) == 0) return cand;
    free(cand);
    for (size_t i = 0; i < r->ndirs; i++) {
        cand = weft_asprintf("%s/%s", r->dirs[i], name);
        if (cand && access(cand, R_OK) == 0) return cand;
        free(cand);
    }
    return NULL;
}

static void report(reader *r, weft_lang_loc loc, const char *fmt, const char *arg) {
    r->errors++;
    weft_lang_report(r->d, r->sources, WEFT_SEV_ERROR, loc, fmt, arg);
}

static void resolve_includes(reader *r, weft_lang_node *file, const char *path, int included) {
    for (int32_t i = 0; i < file->nkids; i++) {
        weft_lang_node *it = file->kids[i];
        if (included && it->kind != WEFT_LANG_INCLUDE && it->kind != WEFT_LANG_DEF) {
            report(r, it->loc, "an included file may contain only 'def' and 'include' (found '%s')",
                   weft_lang_kind_name(it->kind));
            continue;
        }
        if (it->kind != WEFT_LANG_INCLUDE) continue;
        char *found = find_include(r, path, it->name);
        if (found == NULL) {
            report(r, it->loc, "cannot find included file '%s'", it->name);
            continue;
        }
        char *canon = canonical(found);
        int cycle = 0, seen = 0;
        for (int k = 0; canon && k < r->depth; k++)
            if (strcmp(r->stack[k], canon) == 0) cycle = 1;
        for (size_t k = 0; canon && k < r->nseen; k++)
            if (strcmp(r->seen[k], canon) == 0) seen = 1;
        if (canon == NULL) {
            r->nomem = 1;
        } else if (cycle) {
            report(r, it->loc, "include cycle: '%s' is already being read", it->name);
        } else if (!seen) {
            if (r->depth >= MAX_INCLUDE_DEPTH) {
                report(r, it->loc, "includes nested too deeply at '%s'", it->name);
            } else {
                char *text = NULL;
                size_t len = 0;
                weft_result rr = weft_read_file_max(found, r->budget, 0, &text, &len, r->d);
                if (rr == WEFT_ERR_NOMEM) {
                    r->nomem = 1;
                } else if (rr != WEFT_OK) {
                    report(r, it->loc, "cannot read included file '%s'", it->name);
                } else {
                    r->budget -= len;
                    it->a = read_text(r, found, text, len, 1);
                }
            }
        }
        free(canon);
        free(found);
    }
}

/* Parses one file (taking ownership of text) and the files it includes. */
static weft_lang_node *read_text(reader *r, const char *path, char *text, size_t len,
                                 int included) {
    int32_t file = weft_lang_sources_add(r->sources, path, text, len);
    if (file < 0) {
        r->nomem = 1;
        return NULL;
    }
    char *canon = canonical(path);
    if (canon == NULL || weft_grow((void **)&r->seen, &r->capseen, r->nseen, sizeof *r->seen)) {
        free(canon);
        r->nomem = 1;
        return NULL;
    }
    r->seen[r->nseen++] = canon;
    r->stack[r->depth++] = canon;
    weft_lang_parser p;
    memset(&p, 0, sizeof p);
    p.sources = r->sources;
    p.file = file;
    p.d = r->d;
    size_t tlen = 0;
    const char *t = weft_lang_source_text(r->sources, file, &tlen);
    int rc = weft_lang_parse_text(&p, t, tlen);
    if (p.nomem) r->nomem = 1;
    r->errors += p.nerrors;
    if (rc != 0 && p.nerrors == 0 && !p.nomem) {
        weft_lang_loc at = {file, 0, 0};
        report(r, at, "%s", "cannot parse this file");
    }
    weft_lang_node *root = p.root;
    if (root) resolve_includes(r, root, path, included);
    r->depth--;
    return root;
}

static weft_result read_program(const char *path, char *text, size_t len, const char *const *dirs,
                                size_t ndirs, weft_lang_program **out, weft_diag *d) {
    weft_result res = WEFT_OK;
    reader r;
    memset(&r, 0, sizeof r);
    r.dirs = dirs;
    r.ndirs = ndirs;
    r.d = d;
    r.budget = WEFT_LANG_MAX_SOURCE_BYTES - len;
    weft_lang_program *prog = calloc(1, sizeof *prog);
    *out = NULL;
    if (prog == NULL) {
        free(text);
        WEFT_FAIL(WEFT_ERR_NOMEM);
    }
    r.sources = prog->sources = weft_lang_sources_new();
    if (r.sources == NULL) {
        free(text);
        WEFT_FAIL(WEFT_ERR_NOMEM);
    }
    prog->root = read_text(&r, path, text, len, 0);
    *out = prog;
    prog = NULL;
    if (r.nomem) WEFT_FAIL(WEFT_ERR_NOMEM);
    if (r.errors > 0 || (*out)->root == NULL) WEFT_FAIL(WEFT_ERR_INPUT);
fail:
    for (size_t i = 0; i < r.nseen; i++)
        free(r.seen[i]);
    free(r.seen);
    weft_lang_program_free(prog);
    return res;
}

weft_result weft_lang_parse_file(const char *path, const char *const *include_dirs,
                                 size_t n_include_dirs, weft_lang_program **out, weft_diag *d) {
    char *text = NULL;
    size_t len = 0;
    *out = NULL;
    weft_result res =
        weft_read_file_max(path, WEFT_LANG_MAX_SOURCE_BYTES, WEFT_READ_STDIN, &text, &len, d);
    if (res != WEFT_OK) return res;
    return read_program(weft_read_name(path), text, len, include_dirs, n_include_dirs, out, d);
}

weft_result weft_lang_parse_string(const char *text, size_t len, const char *name,
                                   const char *const *include_dirs, size_t n_include_dirs,
                                   weft_lang_program **out, weft_diag *d) {
    *out = NULL;
    if (len > WEFT_LANG_MAX_SOURCE_BYTES) {
        weft_diag_add(d, WEFT_SEV_ERROR, name ? name : "<string>", 0, 0,
                      "file too large (%zu bytes; the limit is %d)", len,
                      WEFT_LANG_MAX_SOURCE_BYTES);
        return WEFT_ERR_INPUT;
    }
    char *copy = malloc(len + 1);
    if (copy == NULL) return WEFT_ERR_NOMEM;
    memcpy(copy, text, len);
    copy[len] = '\0';
    return read_program(name ? name : "<string>", copy, len, include_dirs, n_include_dirs, out, d);
}

void weft_lang_program_free(weft_lang_program *p) {
    if (p == NULL) return;
    weft_lang_node_free(p->root);
    weft_lang_sources_free(p->sources);
    free(p);
}
