/* weft_xml_guard.h — what weft's libxml2 readers (ir/xml_read.c, tools/topo.c) do about libxml2
 * itself: its messages become the reader's diagnostics, and a <!DOCTYPE> stops the parser. Not
 * installed: an interface between weft's own layers. */
#ifndef WEFT_XML_GUARD_H
#define WEFT_XML_GUARD_H

#include "weft_common.h"

#include <libxml/parser.h>

typedef struct weft_xml_guard {
    /* Set by the reader: where libxml2's messages go, as "malformed XML: ...", with who. */
    void (*report)(void *who, weft_severity sev, long line, const char *msg);
    void *who;
    /* Set by the guard. */
    int stopped;     /* a <!DOCTYPE> halted libxml2 (a file that carries one is refused: no
                        entity expansion games) */
    long doctype_at; /* its line */
    int nerr;        /* libxml2's errors reported */
    xmlStructuredErrorFunc saved_fn;
    void *saved_ctx;
} weft_xml_guard;

/* Installs g on ctxt, whose _private must point to a struct whose first member is g, and, until
 * weft_xml_guard_end, as the thread's handler of the errors raised outside the parser context
 * (encoding, I/O). */
void weft_xml_guard_begin(weft_xml_guard *g, xmlParserCtxtPtr ctxt);
/* Gives the thread its own handler back. */
void weft_xml_guard_end(weft_xml_guard *g);
/* After the parse (doc: what libxml2 built, NULL when nothing): 0 when there is a document to
 * read; else -1, after reporting why where libxml2 did not: the <!DOCTYPE> (as doctype says, at
 * its line) or "malformed XML". */
int weft_xml_guard_check(weft_xml_guard *g, const void *doc, const char *doctype);

#endif
