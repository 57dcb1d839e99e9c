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
    long doctype_at; /* its line, as libxml2 counts it */
    xmlStructuredErrorFunc saved_fn;
    void *saved_ctx;
} weft_xml_guard;

/* Installs g on ctxt, whose _private must point to a struct whose first member is g, and, until
 * weft_xml_guard_end, as the thread's handler of the errors raised outside the parser context
 * (encoding, I/O). */
void weft_xml_guard_begin(weft_xml_guard *g, xmlParserCtxtPtr ctxt);
/* Gives the thread its own handler back. */
void weft_xml_guard_end(weft_xml_guard *g);

#endif
