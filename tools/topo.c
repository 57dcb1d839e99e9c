/* topo.c — NCCL's topology dump read on libxml2 (file:line errors), each pair of GPUs priced as
 * NCCL's src/graph/topo.cc prices its links, and the rule of `weft verify --topo` (topo.h). */
#include "topo.h"
#include "weft_xml_guard.h"

#include <libxml/SAX2.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* A dump is a few KB per GPU and NIC; an NVL72 rack's is well under 1 MB. */
#define TOPO_MAX_BYTES ((size_t)16 << 20)
/* Past this many errors the rest of the file is unlikely to say anything new. */
#define MAX_ERRORS 20

/* NCCL's figures (src/graph/topo.h), GB/s: one NVLink lane by compute capability, the CPUs'
 * interconnect by CPU, and what it uses when it knows of no limit. */
#define SM100_NVLINK_BW 40.1
#define SM90_NVLINK_BW  20.6
#define SM86_NVLINK_BW  12.0
#define SM80_NVLINK_BW  20.0
#define SM70_NVLINK_BW  20.0
#define SM60_NVLINK_BW  18.0
#define LOC_BW          5000.0
#define AMD_BW          16.0
#define BDW_QPI_BW      6.0
#define SKL_QPI_BW      10.0
#define SRP_QPI_BW      22.0
#define ERP_QPI_BW      40.0
#define ZPI_BW          6.0
#define YONGFENG_ZPI_BW 9.0
#define P9_BW           32.0
#define ARM_BW          6.0

/* NVLink targets by PCI class (NCCL's kvDictPciClass, matched as a prefix; anything else it
 * takes for an NVSwitch). */
#define CLASS_NVSWITCH "0x068000"
#define CLASS_CPU      "0x068001"
#define CLASS_GPU      "0x03"
#define CLASS_BRIDGE   "0x060400"

/* A <pci> element: a switch (bridge), a GPU's or a NIC's slot; its link is the one to its
 * parent (a <pci> or the CPU). */
typedef struct pnode {
    int32_t parent; /* index in pci, -1: the CPU */
    int32_t cpu;
    int32_t bridge; /* a PCIe switch: counts as a hop */
    double gbps;
} pnode;

typedef struct nvl {
    int32_t gpu;    /* the GPU it leaves */
    int32_t to_gpu; /* 1: a GPU, target; 0: an NVSwitch; -1: the CPU (ignored) */
    int64_t target; /* the target's bus id */
    int32_t count;
} nvl;

typedef struct cpu {
    double inter_gbps; /* to another CPU */
} cpu;

struct weft_topo {
    char *file;
    int32_t ngpus, nnics, ncpus, npci, nnvl;
    weft_topo_gpu *gpus; /* by rank once read */
    int32_t *gpu_pci;    /* per gpu: its <pci> */
    int64_t *gpu_bus;
    weft_topo_nic *nics;
    int32_t *nic_pci; /* per nic: its <pci>, -1 directly under its CPU */
    cpu *cpus;
    pnode *pci;
    nvl *nvls;
    size_t cap_gpu, cap_gpu_pci, cap_gpu_bus, cap_nic, cap_nic_pci, cap_cpu, cap_pci, cap_nvl;
    /* the job weft_topo_fit last placed: nodes of G = ngpus */
    int32_t nranks;
};

static const char *const kind_names[] = {
#define WEFT_X_(n, s) #n,
    WEFT_TOPO_KINDS(WEFT_X_)
#undef WEFT_X_
};
static const char *const kind_texts[] = {
#define WEFT_X_(n, s) s,
    WEFT_TOPO_KINDS(WEFT_X_)
#undef WEFT_X_
};

const char *weft_topo_kind_name(weft_topo_kind k) {
    return (unsigned)k < WEFT_TOPO_KIND_COUNT ? kind_names[k] : "?";
}
const char *weft_topo_kind_text(weft_topo_kind k) {
    return (unsigned)k < WEFT_TOPO_KIND_COUNT ? kind_texts[k] : "?";
}

double weft_topo_hw_lat_us(weft_topo_kind k, weft_proto p) {
    /* NCCL's hwLatencies, ring column (LL, LL128, Simple); weft prices LL128 as LL (a flag per
     * line, polled as LL's) */
    static const double lat[3][3] = {{0.6, 1.9, 3.4}, {1.0, 2.5, 5.7}, {2.7, 4.0, 14.0}};
    int hw = k == WEFT_TOPO_NVL ? 0 : k == WEFT_TOPO_NET ? 2 : 1;
    int pr = p == WEFT_PROTO_SIMPLE ? 2 : 0;
    return lat[hw][pr];
}

static double nvlink_lane_gbps(int sm) {
    return sm >= 100  ? SM100_NVLINK_BW
           : sm >= 90 ? SM90_NVLINK_BW
           : sm == 86 ? SM86_NVLINK_BW
           : sm >= 80 ? SM80_NVLINK_BW
           : sm >= 70 ? SM70_NVLINK_BW
           : sm >= 60 ? SM60_NVLINK_BW
                      : SM80_NVLINK_BW;
}

/* PCIe per-lane rates as the kernel writes them, in 100 Mb/s (NCCL's kvDictPciGen); a rate it
 * does not know is Gen3's. */
static double pci_lane_rate(const char *s) {
    static const struct {
        const char *s;
        int v;
    } gen[] = {{"2.5 GT/s", 15},        {"5 GT/s", 30},         {"8 GT/s", 60},
               {"16 GT/s", 120},        {"32 GT/s", 240},       {"2.5 GT/s PCIe", 15},
               {"5.0 GT/s PCIe", 30},   {"8.0 GT/s PCIe", 60},  {"16.0 GT/s PCIe", 120},
               {"32.0 GT/s PCIe", 240}, {"64.0 GT/s PCIe", 480}};
    for (size_t i = 0; i < sizeof gen / sizeof *gen; i++)
        if (strncmp(s, gen[i].s, strlen(gen[i].s)) == 0) return gen[i].v;
    return 60;
}

/* ---- reading --------------------------------------------------------------------------- */

typedef struct reader {
    weft_xml_guard guard; /* first: ctxt->_private points to the reader */
    const char *file;
    weft_diag *d;
    int nerr;
    weft_topo *t;
    weft_result res; /* an allocation failure while walking */
} reader;

static void report(reader *r, weft_severity sev, long line, const char *fmt, ...) WEFT_PRINTF(4, 5);
static void report(reader *r, weft_severity sev, long line, const char *fmt, ...) {
    if (sev == WEFT_SEV_ERROR && ++r->nerr > MAX_ERRORS) return;
    va_list ap;
    va_start(ap, fmt);
    weft_diag_vadd(r->d, sev, r->file, line > 0 && line < INT_MAX ? (int)line : 0, 0, fmt, ap);
    va_end(ap);
    if (sev == WEFT_SEV_ERROR && r->nerr == MAX_ERRORS)
        weft_diag_add(r->d, WEFT_SEV_NOTE, r->file, 0, 0, "too many errors, stopping here");
}

/* libxml2's messages, from the guard. */
static void on_xml_message(void *who, weft_severity sev, long line, const char *msg) {
    report(who, sev, line, "%s", msg);
}

static int is(const xmlNode *n, const char *name) {
    return n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, name) == 0;
}

static long line_of(const xmlNode *n) {
    return xmlGetLineNo(n);
}

/* The attribute's value (malloc'd by libxml2: xmlFree), or NULL; a required one missing is an
 * error. */
static char *attr(reader *r, const xmlNode *n, const char *name, int required) {
    xmlChar *v = xmlGetProp(n, (const xmlChar *)name);
    if (v == NULL && required)
        report(r, WEFT_SEV_ERROR, line_of(n), "<%s> is missing attribute '%s'",
               (const char *)n->name, name);
    return (char *)v;
}

/* An integer attribute as NCCL reads them (strtol base 0: decimal or 0x hex); def when absent
 * and not required. 0 on success. */
static int attr_int(reader *r, const xmlNode *n, const char *name, int required, long def,
                    long *out) {
    char *v = attr(r, n, name, required);
    *out = def;
    if (v == NULL) return required ? -1 : 0;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 0);
    int ok = end != v && *end == '\0' && errno == 0 && x >= INT_MIN && x <= INT_MAX;
    if (!ok)
        report(r, WEFT_SEV_ERROR, line_of(n), "<%s> attribute '%s' is not an integer: \"%s\"",
               (const char *)n->name, name, v);
    else
        *out = x;
    xmlFree(v);
    return ok ? 0 : -1;
}

/* A bus id ("0000:19:00.0") as NCCL compares them: its hex digits as one number. */
static int busid_parse(const char *s, int64_t *out) {
    uint64_t v = 0;
    int digits = 0;
    for (; *s; s++) {
        if (*s == ':' || *s == '.') continue;
        if (!isxdigit((unsigned char)*s) || digits == 15) return -1;
        v = v * 16 + (uint64_t)(isdigit((unsigned char)*s) ? *s - '0' : tolower(*s) - 'a' + 10);
        digits++;
    }
    *out = (int64_t)v;
    return digits ? 0 : -1;
}

static int grow(reader *r, void **p, size_t *cap, size_t n, size_t sz) {
    if (weft_grow(p, cap, n, sz) != 0) {
        r->res = WEFT_ERR_NOMEM;
        return -1;
    }
    return 0;
}

static void read_nic(reader *r, const xmlNode *nic, int32_t cpu_i, int32_t pci_i) {
    weft_topo *t = r->t;
    for (const xmlNode *c = nic->children; c; c = c->next) {
        if (!is(c, "net")) continue;
        /* NCCL skips a <net> without dev, and one marked as no network device (net="0": a GIN
         * or collective plugin's) */
        long dev, speed, net;
        char *has_dev = attr(r, c, "dev", 0);
        if (has_dev == NULL) continue;
        xmlFree(has_dev);
        if (attr_int(r, c, "dev", 1, 0, &dev) != 0 || attr_int(r, c, "net", 0, 1, &net) != 0 ||
            attr_int(r, c, "speed", 0, 0, &speed) != 0)
            continue;
        if (!net) continue;
        if (grow(r, (void **)&t->nics, &t->cap_nic, (size_t)t->nnics, sizeof *t->nics) ||
            grow(r, (void **)&t->nic_pci, &t->cap_nic_pci, (size_t)t->nnics, sizeof *t->nic_pci))
            return;
        weft_topo_nic *x = &t->nics[t->nnics];
        memset(x, 0, sizeof *x);
        char *name = attr(r, c, "name", 0);
        snprintf(x->name, sizeof x->name, "%s", name ? name : "");
        if (name) xmlFree(name);
        x->dev = (int32_t)dev, x->cpu = cpu_i, x->line = (int32_t)line_of(c);
        /* Mb/s; NCCL takes 10 Gb/s for a device that reports none (speed -1) */
        x->gbps = (speed <= 0 ? 10000 : (double)speed) / 8000.0;
        char *lat = attr(r, c, "latency", 0);
        if (lat) {
            char *end;
            double v = strtod(lat, &end);
            if (end == lat || *end != '\0' || !(v >= 0) || v > 1e6)
                report(r, WEFT_SEV_ERROR, line_of(c),
                       "<net> attribute 'latency' is not a latency in microseconds: \"%s\"", lat);
            else
                x->lat_us = v;
            xmlFree(lat);
        }
        t->nic_pci[t->nnics++] = pci_i;
    }
}

static void read_gpu(reader *r, const xmlNode *g, int32_t cpu_i, int32_t pci_i, const char *busid,
                     long bus_line) {
    weft_topo *t = r->t;
    long rank, sm, dev;
    /* NCCL leaves out a GPU without a rank (not one of the job's) */
    char *has_rank = attr(r, g, "rank", 0);
    if (has_rank == NULL) return;
    xmlFree(has_rank);
    int bad = attr_int(r, g, "rank", 1, 0, &rank) | attr_int(r, g, "sm", 1, 0, &sm) |
              attr_int(r, g, "dev", 1, 0, &dev);
    int64_t bus = 0;
    if (busid == NULL) { /* its <pci> said so */
        bad = -1;
    } else if (busid_parse(busid, &bus) != 0) {
        report(r, WEFT_SEV_ERROR, bus_line, "<pci> attribute 'busid' is not a PCI bus id: \"%s\"",
               busid);
        bad = -1;
    }
    if (bad) return;
    if (rank < 0) {
        report(r, WEFT_SEV_ERROR, line_of(g), "<gpu> attribute 'rank' is negative: %ld", rank);
        return;
    }
    if (grow(r, (void **)&t->gpus, &t->cap_gpu, (size_t)t->ngpus, sizeof *t->gpus) ||
        grow(r, (void **)&t->gpu_pci, &t->cap_gpu_pci, (size_t)t->ngpus, sizeof *t->gpu_pci) ||
        grow(r, (void **)&t->gpu_bus, &t->cap_gpu_bus, (size_t)t->ngpus, sizeof *t->gpu_bus))
        return;
    int32_t gi = t->ngpus++;
    weft_topo_gpu *x = &t->gpus[gi];
    memset(x, 0, sizeof *x);
    snprintf(x->busid, sizeof x->busid, "%s", busid);
    x->rank = (int32_t)rank, x->sm = (int32_t)sm, x->dev = (int32_t)dev;
    x->line = (int32_t)line_of(g), x->cpu = cpu_i, x->nic = -1;
    x->pci_gbps = t->pci[pci_i].gbps;
    t->gpu_pci[gi] = pci_i;
    t->gpu_bus[gi] = bus;
    for (const xmlNode *c = g->children; c; c = c->next) {
        if (!is(c, "nvlink")) continue;
        long count;
        char *target = attr(r, c, "target", 1), *tclass = attr(r, c, "tclass", 1);
        int ok = attr_int(r, c, "count", 1, 0, &count) == 0 && target && tclass;
        if (ok && count < 0) {
            report(r, WEFT_SEV_ERROR, line_of(c), "<nvlink> attribute 'count' is negative: %ld",
                   count);
            ok = 0;
        }
        nvl v = {gi, 0, 0, (int32_t)count};
        if (ok) {
            v.to_gpu = strncmp(tclass, CLASS_CPU, strlen(CLASS_CPU)) == 0   ? -1
                       : strncmp(tclass, CLASS_GPU, strlen(CLASS_GPU)) == 0 ? 1
                                                                            : 0;
            /* a target hidden from a VM ("fffffff:ffff:ff") is an NVSwitch's, as NCCL says */
            if (v.to_gpu == 1 && busid_parse(target, &v.target) != 0) {
                report(r, WEFT_SEV_ERROR, line_of(c),
                       "<nvlink> attribute 'target' is not a PCI bus id: \"%s\"", target);
                ok = 0;
            }
        }
        if (target) xmlFree(target);
        if (tclass) xmlFree(tclass);
        if (!ok || v.to_gpu < 0) continue;
        if (grow(r, (void **)&t->nvls, &t->cap_nvl, (size_t)t->nnvl, sizeof *t->nvls)) return;
        t->nvls[t->nnvl++] = v;
        x->nvl_gbps += (double)count * nvlink_lane_gbps(x->sm);
    }
}

/* <pci> and what is under it; parent: the enclosing <pci>, -1 for the CPU. */
static void read_pci(reader *r, const xmlNode *p, int32_t cpu_i, int32_t parent, int depth) {
    weft_topo *t = r->t;
    if (r->res != WEFT_OK || r->nerr > MAX_ERRORS) return;
    if (depth > 64) {
        report(r, WEFT_SEV_ERROR, line_of(p), "<pci> nested more than 64 deep");
        return;
    }
    long width;
    char *busid = attr(r, p, "busid", 1), *cls = attr(r, p, "class", 1);
    char *speed = attr(r, p, "link_speed", 1);
    int ok = attr_int(r, p, "link_width", 1, 0, &width) == 0 && busid && cls && speed;
    if (ok && width < 0) {
        report(r, WEFT_SEV_ERROR, line_of(p), "<pci> attribute 'link_width' is negative: %ld",
               width);
        ok = 0;
    }
    /* what is inside a <pci> in error is still read, for its own errors */
    if (!grow(r, (void **)&t->pci, &t->cap_pci, (size_t)t->npci, sizeof *t->pci)) {
        int32_t me = t->npci++;
        /* NCCL: a width of 0 (not in /sys) is x16; lanes x 100 Mb/s per lane, in GB/s */
        t->pci[me] =
            (pnode){parent, cpu_i, cls && strncmp(cls, CLASS_BRIDGE, strlen(CLASS_BRIDGE)) == 0,
                    ok ? (double)(width ? width : 16) * pci_lane_rate(speed) / 80.0 : 0};
        for (const xmlNode *c = p->children; c; c = c->next) {
            if (is(c, "pci"))
                read_pci(r, c, cpu_i, me, depth + 1);
            else if (is(c, "gpu"))
                read_gpu(r, c, cpu_i, me, busid, line_of(p));
            else if (is(c, "nic"))
                read_nic(r, c, cpu_i, me);
        }
    }
    if (busid) xmlFree(busid);
    if (cls) xmlFree(cls);
    if (speed) xmlFree(speed);
}

/* The CPUs' interconnect as NCCL prices it (ncclTopoGetInterCpuBw). */
static double inter_cpu_gbps(reader *r, const xmlNode *c) {
    char *arch = attr(r, c, "arch", 0), *vendor = attr(r, c, "vendor", 0);
    long family = 0, model = 0;
    attr_int(r, c, "familyid", 0, 0, &family);
    attr_int(r, c, "modelid", 0, 0, &model);
    double bw = LOC_BW;
    if (arch && strcmp(arch, "ppc64") == 0) bw = P9_BW;
    if (arch && strcmp(arch, "arm64") == 0) bw = ARM_BW;
    if (arch && strcmp(arch, "x86_64") == 0 && vendor) {
        if (strcmp(vendor, "GenuineIntel") == 0)
            bw = family == 6 && model >= 0xCF   ? ERP_QPI_BW
                 : family == 6 && model >= 0x8F ? SRP_QPI_BW
                 : family == 6 && model >= 0x55 ? SKL_QPI_BW
                                                : BDW_QPI_BW;
        else if (strcmp(vendor, "AuthenticAMD") == 0)
            bw = AMD_BW;
        else if (strcmp(vendor, "CentaurHauls") == 0 || strcmp(vendor, "  Shanghai  ") == 0)
            bw = family == 7 && model == 0x5B ? YONGFENG_ZPI_BW : ZPI_BW;
    }
    if (arch) xmlFree(arch);
    if (vendor) xmlFree(vendor);
    return bw;
}

static void read_system(reader *r, const xmlNode *sys) {
    weft_topo *t = r->t;
    long version;
    if (attr_int(r, sys, "version", 1, 0, &version) == 0 && version != 1)
        report(r, WEFT_SEV_ERROR, line_of(sys),
               "<system version=\"%ld\">: NCCL's topology dump is version 1", version);
    for (const xmlNode *c = sys->children; c; c = c->next) {
        if (!is(c, "cpu")) continue;
        if (grow(r, (void **)&t->cpus, &t->cap_cpu, (size_t)t->ncpus, sizeof *t->cpus)) return;
        int32_t ci = t->ncpus++;
        t->cpus[ci].inter_gbps = inter_cpu_gbps(r, c);
        for (const xmlNode *s = c->children; s; s = s->next) {
            if (is(s, "pci"))
                read_pci(r, s, ci, -1, 0);
            else if (is(s, "nic"))
                read_nic(r, s, ci, -1);
        }
    }
}

/* ---- paths ----------------------------------------------------------------------------- */

/* The PCIe path between two <pci> elements (-1: the CPU itself) of CPUs ca and cb: its kind
 * (PIX .. SYS) and its narrowest hop. */
static weft_topo_kind pci_path(const weft_topo *t, int32_t a, int32_t ca, int32_t b, int32_t cb,
                               double *gbps) {
    double bw = LOC_BW;
    if (ca != cb) {
        for (int32_t x = a; x >= 0; x = t->pci[x].parent)
            if (t->pci[x].gbps < bw) bw = t->pci[x].gbps;
        for (int32_t x = b; x >= 0; x = t->pci[x].parent)
            if (t->pci[x].gbps < bw) bw = t->pci[x].gbps;
        if (t->cpus[ca].inter_gbps < bw) bw = t->cpus[ca].inter_gbps;
        *gbps = bw;
        return WEFT_TOPO_SYS;
    }
    /* the lowest common ancestor: a's ancestors (itself included) against b's */
    int32_t lca = -1;
    for (int32_t x = a; x >= 0 && lca < 0; x = t->pci[x].parent)
        for (int32_t y = b; y >= 0; y = t->pci[y].parent)
            if (x == y) {
                lca = x;
                break;
            }
    int bridges = lca >= 0 && t->pci[lca].bridge;
    for (int k = 0; k < 2; k++)
        for (int32_t x = k ? b : a; x >= 0 && x != lca; x = t->pci[x].parent) {
            if (t->pci[x].gbps < bw) bw = t->pci[x].gbps;
            if (x != (k ? b : a) && t->pci[x].bridge) bridges++;
        }
    *gbps = bw;
    return lca < 0 ? WEFT_TOPO_PHB : bridges <= 1 ? WEFT_TOPO_PIX : WEFT_TOPO_PXB;
}

/* Between two GPUs of one node (local indexes). */
static weft_topo_link local_link(const weft_topo *t, int32_t a, int32_t b) {
    weft_topo_link l = {WEFT_TOPO_NVL, 0, 0, 0, 0, NULL};
    int64_t direct = 0, nvs_a = 0, nvs_b = 0; /* lanes summed over elements: no overflow */
    for (int32_t i = 0; i < t->nnvl; i++) {
        const nvl *v = &t->nvls[i];
        if (v->gpu == a && v->to_gpu == 1 && v->target == t->gpu_bus[b]) direct += v->count;
        if (v->gpu == a && v->to_gpu == 0) nvs_a += v->count;
        if (v->gpu == b && v->to_gpu == 0) nvs_b += v->count;
    }
    double lane_a = nvlink_lane_gbps(t->gpus[a].sm), lane_b = nvlink_lane_gbps(t->gpus[b].sm);
    if (direct > 0) {
        l.nvlinks = direct < INT32_MAX ? (int32_t)direct : INT32_MAX;
        l.gbps = (double)direct * lane_a;
        return l;
    }
    if (nvs_a > 0 && nvs_b > 0) {
        /* through the switches: the side with fewer lanes into them is the limit */
        l.nvswitch = 1;
        int64_t lanes = nvs_a < nvs_b ? nvs_a : nvs_b;
        l.nvlinks = lanes < INT32_MAX ? (int32_t)lanes : INT32_MAX;
        double ga = (double)nvs_a * lane_a, gb = (double)nvs_b * lane_b;
        l.gbps = ga < gb ? ga : gb;
        return l;
    }
    l.kind = pci_path(t, t->gpu_pci[a], t->gpus[a].cpu, t->gpu_pci[b], t->gpus[b].cpu, &l.gbps);
    return l;
}

/* Each GPU's nearest network device: the nearest kind of path, then the widest, then the first
 * in the file (NCCL spreads GPUs over equally near devices; weft takes one). */
static void nearest_nics(weft_topo *t) {
    for (int32_t g = 0; g < t->ngpus; g++) {
        weft_topo_kind best = WEFT_TOPO_KIND_COUNT;
        double best_bw = 0;
        for (int32_t n = 0; n < t->nnics; n++) {
            double bw;
            weft_topo_kind k =
                pci_path(t, t->gpu_pci[g], t->gpus[g].cpu, t->nic_pci[n], t->nics[n].cpu, &bw);
            if (t->nics[n].gbps < bw) bw = t->nics[n].gbps;
            if (k < best || (k == best && bw > best_bw)) {
                best = k, best_bw = bw;
                t->gpus[g].nic = n;
            }
        }
    }
}

/* GPUs in order of their rank; their indexes in gpu_pci, gpu_bus, nvls follow. */
static int by_rank(const void *x, const void *y) {
    const int32_t *a = x, *b = y;
    return (a[0] > b[0]) - (a[0] < b[0]);
}

static weft_result sort_gpus(reader *r) {
    weft_result res = WEFT_OK;
    weft_topo *t = r->t;
    int32_t n = t->ngpus, *key = malloc((size_t)(n + 1) * 2 * sizeof *key), *pos = NULL;
    weft_topo_gpu *g = malloc((size_t)(n + 1) * sizeof *g);
    int32_t *gp = malloc((size_t)(n + 1) * sizeof *gp);
    int64_t *gb = malloc((size_t)(n + 1) * sizeof *gb);
    pos = malloc((size_t)(n + 1) * sizeof *pos);
    WEFT_CHECK_ALLOC(key);
    WEFT_CHECK_ALLOC(g);
    WEFT_CHECK_ALLOC(gp);
    WEFT_CHECK_ALLOC(gb);
    WEFT_CHECK_ALLOC(pos);
    for (int32_t i = 0; i < n; i++)
        key[2 * i] = t->gpus[i].rank, key[2 * i + 1] = i;
    qsort(key, (size_t)n, 2 * sizeof *key, by_rank);
    for (int32_t i = 0; i < n; i++) {
        int32_t o = key[2 * i + 1];
        if (i > 0 && key[2 * i] == key[2 * i - 2])
            report(r, WEFT_SEV_ERROR, t->gpus[o].line,
                   "a second GPU of rank %d (the first on line %d)", key[2 * i],
                   t->gpus[key[2 * i - 1]].line);
        g[i] = t->gpus[o], gp[i] = t->gpu_pci[o], gb[i] = t->gpu_bus[o];
        pos[o] = i;
    }
    for (int32_t i = 0; i < t->nnvl; i++)
        t->nvls[i].gpu = pos[t->nvls[i].gpu];
    memcpy(t->gpus, g, (size_t)n * sizeof *g);
    memcpy(t->gpu_pci, gp, (size_t)n * sizeof *gp);
    memcpy(t->gpu_bus, gb, (size_t)n * sizeof *gb);
fail:
    free(key), free(g), free(gp), free(gb), free(pos);
    return res;
}

weft_result weft_topo_read_memory(const char *data, size_t len, const char *name, weft_topo **out,
                                  weft_diag *d) {
    weft_result res = WEFT_OK;
    xmlParserCtxtPtr ctxt = NULL;
    xmlDocPtr doc = NULL;
    reader r = {.guard = {.report = on_xml_message, .who = &r}, .file = name, .d = d};
    *out = NULL;
    if (len > INT_MAX) {
        report(&r, WEFT_SEV_ERROR, 0, "too large for a topology dump");
        WEFT_FAIL(WEFT_ERR_INPUT);
    }
    r.t = calloc(1, sizeof *r.t);
    WEFT_CHECK_ALLOC(r.t);
    r.t->file = weft_strdup(name);
    WEFT_CHECK_ALLOC(r.t->file);
    xmlInitParser();
    ctxt = xmlNewParserCtxt();
    WEFT_CHECK_ALLOC(ctxt);
    ctxt->_private = &r;
    weft_xml_guard_begin(&r.guard, ctxt);
    doc =
        xmlCtxtReadMemory(ctxt, data, (int)len, name, NULL, XML_PARSE_NONET | XML_PARSE_BIG_LINES);
    weft_xml_guard_end(&r.guard);
    if (weft_xml_guard_check(&r.guard, doc, "<!DOCTYPE> has no place in NCCL's topology dump"))
        WEFT_FAIL(WEFT_ERR_INPUT);
    const xmlNode *root = xmlDocGetRootElement(doc);
    if (root == NULL || !is(root, "system")) {
        report(&r, WEFT_SEV_ERROR, root ? line_of(root) : 0,
               "not NCCL's topology dump: the root element is <%s>, not <system> (NCCL writes it "
               "where NCCL_TOPO_DUMP_FILE says)",
               root ? (const char *)root->name : "");
        WEFT_FAIL(WEFT_ERR_INPUT);
    }
    read_system(&r, root);
    WEFT_CHECK(r.res);
    if (r.nerr == 0 && r.t->ngpus == 0)
        report(&r, WEFT_SEV_ERROR, line_of(root), "the dump lists no GPU with a rank");
    if (r.nerr) WEFT_FAIL(WEFT_ERR_INPUT);
    WEFT_CHECK(sort_gpus(&r));
    if (r.nerr) WEFT_FAIL(WEFT_ERR_INPUT);
    nearest_nics(r.t);
    *out = r.t;
    r.t = NULL;
fail:
    weft_topo_free(r.t);
    if (doc) xmlFreeDoc(doc);
    if (ctxt) xmlFreeParserCtxt(ctxt);
    return res;
}

weft_result weft_topo_read_file(const char *path, weft_topo **out, weft_diag *d) {
    weft_result res = WEFT_OK;
    char *data = NULL;
    size_t len = 0;
    *out = NULL;
    WEFT_CHECK(weft_read_file_max(path, TOPO_MAX_BYTES, 0, &data, &len, d));
    WEFT_CHECK(weft_topo_read_memory(data, len, path, out, d));
fail:
    free(data);
    return res;
}

void weft_topo_free(weft_topo *t) {
    if (t == NULL) return;
    free(t->file);
    free(t->gpus), free(t->gpu_pci), free(t->gpu_bus);
    free(t->nics), free(t->nic_pci);
    free(t->cpus), free(t->pci), free(t->nvls);
    free(t);
}

const char *weft_topo_file(const weft_topo *t) {
    return t->file;
}
int32_t weft_topo_ngpus(const weft_topo *t) {
    return t->ngpus;
}
int32_t weft_topo_nnics(const weft_topo *t) {
    return t->nnics;
}
const weft_topo_gpu *weft_topo_gpu_at(const weft_topo *t, int32_t g) {
    return g >= 0 && g < t->ngpus ? &t->gpus[g] : NULL;
}
const weft_topo_nic *weft_topo_nic_at(const weft_topo *t, int32_t i) {
    return i >= 0 && i < t->nnics ? &t->nics[i] : NULL;
}

/* ---- a job on the machine -------------------------------------------------------------- */

weft_result weft_topo_fit(const weft_topo *t, int32_t nranks, const char *file, weft_diag *d) {
    int32_t g = t->ngpus;
    if (nranks <= g) return WEFT_OK;
    if (nranks % g != 0) {
        weft_diag_add(d, WEFT_SEV_ERROR, file, 0, 0,
                      "%d ranks do not fill nodes of %d GPUs (the machine of %s): weft runs a "
                      "schedule across nodes of equal size",
                      nranks, g, t->file);
        return WEFT_ERR_INPUT;
    }
    if (t->nnics == 0) {
        weft_diag_add(d, WEFT_SEV_ERROR, file, 0, 0,
                      "%d ranks on nodes of %d GPUs, but %s lists no network device to reach "
                      "ranks %d-%d on other nodes",
                      nranks, g, t->file, g, nranks - 1);
        return WEFT_ERR_INPUT;
    }
    return WEFT_OK;
}

weft_topo_link weft_topo_between(const weft_topo *t, int32_t a, int32_t b) {
    int32_t g = t->ngpus, ga = a % g, gb = b % g;
    if (a / g == b / g) return local_link(t, ga, gb);
    /* other nodes have this one's layout: each side leaves through its GPU's nearest NIC */
    weft_topo_link l = {WEFT_TOPO_NET, 0, 0, 0, 0, NULL};
    int32_t na = t->gpus[ga].nic, nb = t->gpus[gb].nic;
    if (na < 0 || nb < 0) return l;
    double bwa, bwb;
    pci_path(t, t->gpu_pci[ga], t->gpus[ga].cpu, t->nic_pci[na], t->nics[na].cpu, &bwa);
    pci_path(t, t->gpu_pci[gb], t->gpus[gb].cpu, t->nic_pci[nb], t->nics[nb].cpu, &bwb);
    l.nic = t->nics[na].name;
    l.gbps = t->nics[na].gbps;
    if (t->nics[nb].gbps < l.gbps) l.gbps = t->nics[nb].gbps;
    if (bwa < l.gbps) l.gbps = bwa;
    if (bwb < l.gbps) l.gbps = bwb;
    l.net_lat_us =
        t->nics[na].lat_us > t->nics[nb].lat_us ? t->nics[na].lat_us : t->nics[nb].lat_us;
    return l;
}

void weft_topo_link_str(const weft_topo_link *l, char *buf, size_t n) {
    if (l->kind == WEFT_TOPO_NVL)
        snprintf(buf, n, "NVLink (%d lane%s%s), %.4g GB/s", l->nvlinks, l->nvlinks == 1 ? "" : "s",
                 l->nvswitch ? " through NVSwitch" : " direct", l->gbps);
    else if (l->kind == WEFT_TOPO_NET && l->net_lat_us > 0)
        snprintf(buf, n, "network (%s, latency %.2f us), %.4g GB/s", l->nic ? l->nic : "?",
                 l->net_lat_us, l->gbps);
    else if (l->kind == WEFT_TOPO_NET)
        snprintf(buf, n, "network (%s), %.4g GB/s", l->nic ? l->nic : "?", l->gbps);
    else
        snprintf(buf, n, "%s (%s), %.4g GB/s", weft_topo_kind_text(l->kind),
                 weft_topo_kind_name(l->kind), l->gbps);
}

int weft_topo_sends(const weft_algo *a, int32_t src, int32_t dst) {
    const weft_gpu *g = &a->gpus[src];
    for (int32_t b = 0; b < g->ntbs; b++) {
        if (g->tbs[b].send != dst) continue;
        for (int32_t s = 0; s < g->tbs[b].nsteps; s++)
            if (weft_step_flags(g->tbs[b].steps[s].type) & WEFT_STEP_F_SEND) return 1;
    }
    return 0;
}

/* Per pair (src * ngpus + dst): 1 + the first tb of src with a send step to dst, 0 when src
 * sends nothing there. One pass over the steps, whatever the rank count. NULL: no memory. */
static int32_t *send_pairs(const weft_algo *a) {
    size_t N = (size_t)a->ngpus;
    int32_t *p = calloc(N * N + 1, sizeof *p);
    if (p == NULL) return NULL;
    for (int32_t r = 0; r < a->ngpus; r++)
        for (int32_t b = a->gpus[r].ntbs - 1; b >= 0; b--) {
            const weft_tb *tb = &a->gpus[r].tbs[b];
            if (tb->send < 0 || tb->send >= a->ngpus) continue;
            for (int32_t s = 0; s < tb->nsteps; s++)
                if (weft_step_flags(tb->steps[s].type) & WEFT_STEP_F_SEND) {
                    p[(size_t)r * N + (size_t)tb->send] = b + 1;
                    break;
                }
        }
    return p;
}

int weft_topo_check(const weft_topo *t, const weft_algo *a, weft_diag *d) {
    int n = 0, G = t->ngpus, N = a->ngpus;
    int32_t *pairs = send_pairs(a);
    if (pairs == NULL) return 0;
    for (int32_t s = 0; s < N; s++)
        for (int32_t r = 0; r < N; r++) {
            int32_t tb = pairs[(size_t)s * (size_t)N + (size_t)r];
            if (s == r || s / G != r / G || tb == 0) continue;
            weft_topo_link l = weft_topo_between(t, s, r);
            if (l.kind == WEFT_TOPO_NVL) continue;
            const weft_topo_gpu *gs = &t->gpus[s % G], *gr = &t->gpus[r % G];
            weft_diag_add(d, WEFT_SEV_WARNING, a->file, a->gpus[s].tbs[tb - 1].line, 0,
                          "rank %d -> rank %d: no NVLink between GPU %d (%s) and GPU %d (%s) in "
                          "%s: %s (%s); the interpreter's loads and stores into the peer's "
                          "memory cross it at %.4g GB/s",
                          s, r, gs->dev, gs->busid, gr->dev, gr->busid, t->file,
                          weft_topo_kind_text(l.kind), weft_topo_kind_name(l.kind), l.gbps);
            n++;
        }
    free(pairs);
    return n;
}

void weft_topo_print_links(const weft_topo *t, const weft_algo *a, FILE *out, const char *indent,
                           int every_pair) {
    enum { MAX_KINDS = 32 };
    char what[MAX_KINDS][160];
    int count[MAX_KINDS], nk = 0, other = 0;
    int32_t N = a->ngpus, *pairs = send_pairs(a);
    if (pairs == NULL) return;
    for (int32_t s = 0; s < N; s++)
        for (int32_t r = 0; r < N; r++) {
            if (s == r || pairs[(size_t)s * (size_t)N + (size_t)r] == 0) continue;
            weft_topo_link l = weft_topo_between(t, s, r);
            char w[160];
            weft_topo_link_str(&l, w, sizeof w);
            if (every_pair) {
                fprintf(out, "%srank %d -> %d: %s\n", indent, s, r, w);
                continue;
            }
            /* pairs alike are counted together, in the order their first appears */
            int k = 0;
            while (k < nk && strcmp(what[k], w) != 0)
                k++;
            if (k == nk && nk == MAX_KINDS) {
                other++;
                continue;
            }
            if (k == nk) snprintf(what[nk], sizeof what[nk], "%s", w), count[nk++] = 0;
            count[k]++;
        }
    for (int k = 0; k < nk; k++)
        fprintf(out, "%s%d pair%s: %s\n", indent, count[k], count[k] == 1 ? "" : "s", what[k]);
    if (other) fprintf(out, "%s%d pairs more over other links\n", indent, other);
    free(pairs);
}

void weft_topo_print_summary(const weft_topo *t, int32_t nranks, FILE *out) {
    int32_t G = t->ngpus, smlo = INT_MAX, smhi = 0;
    for (int32_t g = 0; g < G; g++) {
        if (t->gpus[g].sm < smlo) smlo = t->gpus[g].sm;
        if (t->gpus[g].sm > smhi) smhi = t->gpus[g].sm;
    }
    fprintf(out, "topology %s: %d GPU%s (sm_%d%s", t->file, G, G == 1 ? "" : "s", smlo,
            smhi != smlo ? "+" : "");
    if (nranks > G)
        fprintf(out, ") per node, %d nodes", nranks / G);
    else if (nranks < G)
        fprintf(out, "), %d ranks on its first %d", nranks, nranks);
    else
        fprintf(out, ") on one node");
    fprintf(out, ", %d network device%s", t->nnics, t->nnics == 1 ? "" : "s");
    for (int32_t i = 0; i < t->nnics && i < 4; i++)
        fprintf(out, "%s%s %.4g GB/s", i ? ", " : " (", t->nics[i].name, t->nics[i].gbps);
    fprintf(out, "%s\n", t->nnics > 4 ? ", ...)" : t->nnics ? ")" : "");
}
