/* cfg.c — the runtime's configuration: its defaults, with WEFT_FIFO, WEFT_COLLAPSE, WEFT_MAX_CTAS,
 * WEFT_TIMEOUT_MS, WEFT_COOPERATIVE, WEFT_LATENCY_KERNEL, WEFT_HOP and WEFT_LL128 applied (read
 * through weft_env_*), and the parsers of the FIFO and collapse specs, and what the registry and
 * `weft env` ask of them (weft_rt_cfg.h). Pure host code, tested without a GPU. */
#include "runtime_internal.h"
#include "weft_rt_cfg.h"

#include <stdlib.h>
#include <string.h>

/* The runtime protocol named by s[0, n) (WEFT_FIFO, WEFT_COLLAPSE), or -1: one the interpreter
 * runs as itself (a protocol that runs as another is set through that one). */
static int rt_proto_named(const char *s, size_t n) {
    for (int p = 0; p < WEFT_RT_PROTO_COUNT; p++) {
        const char *name = weft_proto_name((weft_proto)p);
        if (strlen(name) == n && strncmp(s, name, n) == 0) return p;
    }
    return -1;
}

weft_result weft_rt_cfg_parse(weft_rt_cfg *cfg, const char *spec, char *why, size_t whylen) {
    weft_rt_cfg c = *cfg;
    const char *s = spec;
    while (*s) {
        size_t nl = strcspn(s, "=");
        int p = rt_proto_named(s, nl);
        if (p < 0 || s[nl] != '=') {
            weft_rt_why(why, whylen, "expected Simple=, LL= or LL128=NxBYTES at '%s'", s);
            return WEFT_ERR_INPUT;
        }
        char *end;
        long n = strtol(s + nl + 1, &end, 10);
        if (*end != 'x') {
            weft_rt_why(why, whylen, "expected NxBYTES after %.*s=", (int)nl, s);
            return WEFT_ERR_INPUT;
        }
        long long b = strtoll(end + 1, &end, 10), sl = 0;
        if (*end == 'K' || *end == 'k')
            b <<= 10, end++;
        else if (*end == 'M' || *end == 'm')
            b <<= 20, end++;
        if (*end == '/') {
            sl = strtoll(end + 1, &end, 10);
            if (*end == 'K' || *end == 'k')
                sl <<= 10, end++;
            else if (*end == 'M' || *end == 'm')
                sl <<= 20, end++;
            if (sl < 16 || sl % 16) {
                weft_rt_why(why, whylen, "%.*s: the slice must be a multiple of 16 bytes",
                            (int)strcspn(s, ","), s);
                return WEFT_ERR_INPUT;
            }
        }
        if (n < 1 || n > 1024 || b < 256 || b > (64 << 20) || b % 256) {
            weft_rt_why(why, whylen,
                        "%.*s: slots must be 1..1024 and slot bytes a multiple of 256 up to 64M",
                        (int)strcspn(s, ","), s);
            return WEFT_ERR_INPUT;
        }
        c.nslots[p] = (int32_t)n;
        c.slot_bytes[p] = (int32_t)b;
        c.slice_bytes[p] = (int32_t)sl;
        if (*end == ',')
            end++;
        else if (*end != '\0') {
            weft_rt_why(why, whylen, "unexpected '%s'", end);
            return WEFT_ERR_INPUT;
        }
        s = end;
    }
    *cfg = c;
    return WEFT_OK;
}

/* A byte size with an optional K, M or G; -1 when malformed. */
static long long parse_size(const char *s, char **end) {
    if (*s < '0' || *s > '9') return -1;
    long long v = strtoll(s, end, 10);
    int sh = **end == 'K' || **end == 'k'   ? 10
             : **end == 'M' || **end == 'm' ? 20
             : **end == 'G' || **end == 'g' ? 30
                                            : 0;
    if (sh) (*end)++;
    if (v < 0 || v > (1ll << (62 - sh))) return -1;
    return v << sh;
}

weft_result weft_rt_cfg_parse_collapse(weft_rt_cfg *cfg, const char *spec, char *why,
                                       size_t whylen) {
    weft_rt_cfg c = *cfg;
    char *end;
    c.collapse_always = strncmp(spec, "always", 6) == 0 && (spec[6] == ',' || spec[6] == '\0');
    if (c.collapse_always) {
        spec += 6 + (spec[6] == ',');
        if (*spec == '\0') { /* "always": every size as well */
            for (int p = 0; p < WEFT_RT_PROTO_COUNT; p++)
                c.collapse_bytes[p] = INT64_MAX;
            *cfg = c;
            return WEFT_OK;
        }
    }
    long long all = parse_size(spec, &end);
    if (all >= 0 && *end == '\0') {
        for (int p = 0; p < WEFT_RT_PROTO_COUNT; p++)
            c.collapse_bytes[p] = all;
        *cfg = c;
        return WEFT_OK;
    }
    for (const char *s = spec; *s;) {
        size_t nl = strcspn(s, "=");
        int p = rt_proto_named(s, nl);
        long long v = p >= 0 && s[nl] == '=' ? parse_size(s + nl + 1, &end) : -1;
        if (v < 0 || (*end != ',' && *end != '\0')) {
            weft_rt_why(why, whylen,
                        "expected [always,]BYTES or [always,]Simple=BYTES,LL=BYTES at '%s'", s);
            return WEFT_ERR_INPUT;
        }
        c.collapse_bytes[p] = v;
        s = *end == ',' ? end + 1 : end;
    }
    *cfg = c;
    return WEFT_OK;
}

void weft_rt_cfg_default(weft_rt_cfg *cfg) {
    memset(cfg, 0, sizeof *cfg);
    for (int p = 0; p < WEFT_RT_PROTO_COUNT; p++)
        weft_proto_defaults((weft_proto)p, &cfg->nslots[p], &cfg->slot_bytes[p],
                            &cfg->collapse_bytes[p]);
    cfg->nthreads = WEFT_RT_NTHREADS;
    long long mc = weft_env_int(WEFT_ENV_MAX_CTAS, WEFT_RT_DEFAULT_MAX_CTAS);
    cfg->max_ctas = mc >= 1 && mc <= 4096 ? (int32_t)mc : WEFT_RT_DEFAULT_MAX_CTAS;
    if (mc != cfg->max_ctas) WEFT_WARN("WEFT_MAX_CTAS=%lld ignored: expected 1..4096", mc);
    long long ms = weft_env_int(WEFT_ENV_TIMEOUT_MS, WEFT_RT_DEFAULT_TIMEOUT_MS);
    cfg->timeout_ns = ms > 0 ? ms * 1000000 : 0;
    const char *co = weft_env_get(WEFT_ENV_COOPERATIVE);
    cfg->cooperative = strcmp(co, "1") == 0 ? 1 : strcmp(co, "0") == 0 ? 0 : -1;
    if (*co && cfg->cooperative < 0 && strcmp(co, "auto") != 0)
        WEFT_WARN("WEFT_COOPERATIVE=%s ignored: expected 0, 1 or auto", co);
    cfg->latency_kernel = weft_env_int(WEFT_ENV_LATENCY_KERNEL, 1) != 0;
    const char *hop = weft_env_get(WEFT_ENV_HOP);
    cfg->hop = strcmp(hop, "1") == 0 ? 1 : strcmp(hop, "0") == 0 ? 0 : -1;
    if (*hop && cfg->hop < 0 && strcmp(hop, "auto") != 0)
        WEFT_WARN("WEFT_HOP=%s ignored: expected 0, 1 or auto", hop);
    const char *l128 = weft_env_get(WEFT_ENV_LL128);
    cfg->ll128 = strcmp(l128, "1") == 0 ? 1 : strcmp(l128, "0") == 0 ? 0 : -1;
    if (*l128 && cfg->ll128 < 0 && strcmp(l128, "auto") != 0)
        WEFT_WARN("WEFT_LL128=%s ignored: expected 0, 1 or auto", l128);
    const char *f = weft_env_get(WEFT_ENV_FIFO);
    char why[256];
    if (*f && weft_rt_cfg_parse(cfg, f, why, sizeof why) != WEFT_OK)
        WEFT_WARN("WEFT_FIFO=%s ignored: %s", f, why);
    const char *k = weft_env_get(WEFT_ENV_COLLAPSE);
    if (*k && weft_rt_cfg_parse_collapse(cfg, k, why, sizeof why) != WEFT_OK)
        WEFT_WARN("WEFT_COLLAPSE=%s ignored: %s", k, why);
}

int32_t weft_rt_fifo_slots(const weft_algo *a) {
    weft_rt_cfg cfg;
    weft_rt_cfg_default(&cfg);
    int32_t p = weft_plan_proto(a), n = cfg.nslots[p], g = cfg.nslots[weft_plan_proto_gated(p)];
    /* the plan may run as its gated protocol (weft_plan_gate_proto): proven with the smaller FIFO
     */
    return g < n ? g : n;
}

weft_result weft_rt_env_check(weft_env_id id, const char *value, char *why, size_t whylen) {
    weft_rt_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    if (id == WEFT_ENV_FIFO) return weft_rt_cfg_parse(&cfg, value, why, whylen);
    if (id == WEFT_ENV_COLLAPSE) return weft_rt_cfg_parse_collapse(&cfg, value, why, whylen);
    return WEFT_OK;
}
