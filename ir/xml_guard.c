/* xml_guard.c — libxml2's messages and a <!DOCTYPE>, alike for every reader of weft's
 * (weft_xml_guard.h). */
#include "weft_xml_guard.h"

#include <libxml/SAX2.h>
#include <libxml/xmlerror.h>
#include <stdio.h>
#include <string.h>

/* libxml2's messages would otherwise go to stderr; they become diagnostics of the file. */
static void xml_message(weft_xml_guard *g, xmlErrorPtr e) {
    if (g == NULL || e == NULL) return;
    char msg[256];
    snprintf(msg, sizeof msg, "%s", e->message ? e->message : "unknown error");
    size_t n = strlen(msg);
    while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
        msg[--n] = '\0';
    char text[300];
    snprintf(text, sizeof text, "malformed XML: %s", msg);
    weft_severity sev = e->level == XML_ERR_WARNING ? WEFT_SEV_WARNING : WEFT_SEV_ERROR;
    if (sev == WEFT_SEV_ERROR) g->nerr++;
    g->report(g->who, sev, e->line, text);
}

/* Errors of the parser itself arrive with the parser context (SAX handlers need it as their
 * user data), those raised elsewhere (encoding, I/O) with the guard. */
static void on_parser_error(void *ctx, xmlErrorPtr e) {
    xmlParserCtxtPtr ctxt = ctx;
    xml_message(ctxt ? ctxt->_private : NULL, e);
}
static void on_global_error(void *ctx, xmlErrorPtr e) {
    xml_message(ctx, e);
}

/* weft's files never carry a DTD; refusing one before libxml2 reads it rules out entity
 * expansion games. */
static void on_internal_subset(void *ctx, const xmlChar *name, const xmlChar *ext,
                               const xmlChar *sys) {
    (void)name, (void)ext, (void)sys;
    xmlParserCtxtPtr ctxt = ctx;
    weft_xml_guard *g = ctxt->_private;
    g->stopped = 1;
    g->doctype_at = xmlSAX2GetLineNumber(ctxt);
    if (g->doctype_at < 1) g->doctype_at = 1;
    xmlStopParser(ctxt);
}

void weft_xml_guard_begin(weft_xml_guard *g, xmlParserCtxtPtr ctxt) {
    g->stopped = 0;
    g->doctype_at = 0;
    g->nerr = 0;
    ctxt->sax->serror = on_parser_error;
    ctxt->sax->internalSubset = on_internal_subset;
    g->saved_fn = xmlStructuredError;
    g->saved_ctx = xmlStructuredErrorContext;
    xmlSetStructuredErrorFunc(g, on_global_error);
}

void weft_xml_guard_end(weft_xml_guard *g) {
    xmlSetStructuredErrorFunc(g->saved_ctx, g->saved_fn);
}

int weft_xml_guard_check(weft_xml_guard *g, const void *doc, const char *doctype) {
    if (g->stopped) {
        g->report(g->who, WEFT_SEV_ERROR, g->doctype_at, doctype);
        return -1;
    }
    if (doc == NULL) {
        if (g->nerr == 0) g->report(g->who, WEFT_SEV_ERROR, 0, "malformed XML");
        return -1;
    }
    return 0;
}
