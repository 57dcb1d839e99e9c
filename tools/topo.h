/* topo.h — the machine's topology as NCCL dumps it (NCCL_TOPO_DUMP_FILE): its GPUs, how each
 * pair of them is connected, its network devices, each link priced with NCCL's own figures;
 * and where a schedule's ranks sit on it. `weft verify --topo` warns about the links a schedule
 * assumes but the machine lacks; `weft estimate --topo` prices each peer pair by its link. */
#ifndef WEFT_TOOLS_TOPO_H
#define WEFT_TOOLS_TOPO_H

#include "weft_ir.h"

#include <stdio.h>

/* How two GPUs reach each other, nearest first (NCCL's path types, src/include/graph.h): NVLink
 * (a direct link, or both GPUs' links into NVSwitches), PCIe through one switch, through
 * several, through the CPU's host bridge, across CPUs (the sockets' interconnect), and between
 * nodes over the network (ranks of different nodes). */
#define WEFT_TOPO_KINDS(X)                                                                         \
    X(NVL, "NVLink")                                                                               \
    X(PIX, "PCIe through one switch")                                                              \
    X(PXB, "PCIe through several switches")                                                        \
    X(PHB, "PCIe through the CPU")                                                                 \
    X(SYS, "PCIe across CPUs")                                                                     \
    X(NET, "network")

typedef enum weft_topo_kind {
#define WEFT_X_(n, s) WEFT_TOPO_##n,
    WEFT_TOPO_KINDS(WEFT_X_)
#undef WEFT_X_
        WEFT_TOPO_KIND_COUNT
} weft_topo_kind;

const char *weft_topo_kind_name(weft_topo_kind k); /* "NVL", "PHB", ... (NCCL's words) */
const char *weft_topo_kind_text(weft_topo_kind k); /* "NVLink", "PCIe through the CPU", ... */

/* One direction of the connection between two ranks. */
typedef struct weft_topo_link {
    weft_topo_kind kind;
    double gbps;       /* GB/s (10^9 bytes per second), the narrowest hop of the path */
    int32_t nvlinks;   /* NVL: the NVLink lanes the figure counts */
    int32_t nvswitch;  /* NVL: 1 through NVSwitches, 0 a direct link */
    double net_lat_us; /* NET: the network devices' own latency (the dump's `latency`) */
    const char *nic;   /* NET: the sender's network device (owned by the topology) */
} weft_topo_link;

typedef struct weft_topo_gpu {
    char busid[32];
    int32_t dev, rank, sm, line;
    int32_t cpu;     /* index of its CPU (NUMA node) in the file's order */
    double nvl_gbps; /* all its NVLinks together */
    double pci_gbps; /* its PCIe link */
    int32_t nic;     /* its nearest network device, -1: none */
} weft_topo_gpu;

typedef struct weft_topo_nic {
    char name[64];
    int32_t dev, cpu, line;
    double gbps, lat_us;
} weft_topo_nic;

typedef struct weft_topo weft_topo;

/* Reads NCCL's topology dump (<system version="1">; NCCL's src/graph/xml.cc writes it): errors
 * as file:line. *out is owned by the caller (weft_topo_free). */
weft_result weft_topo_read_file(const char *path, weft_topo **out, weft_diag *d);
weft_result weft_topo_read_memory(const char *data, size_t len, const char *name, weft_topo **out,
                                  weft_diag *d);
void weft_topo_free(weft_topo *t);

const char *weft_topo_file(const weft_topo *t);
int32_t weft_topo_ngpus(const weft_topo *t);
int32_t weft_topo_nnics(const weft_topo *t);
/* The dump's GPUs in the order of their `rank`: local GPU g of a node is gpu(g). */
const weft_topo_gpu *weft_topo_gpu_at(const weft_topo *t, int32_t g);
const weft_topo_nic *weft_topo_nic_at(const weft_topo *t, int32_t i);

/* Where the ranks of a job of nranks sit: the dump describes one node of G GPUs; rank r runs on
 * node r / G, on its GPU r % G (the GPU with the (r % G)-th smallest `rank`; a dump of a job of
 * G ranks names them 0 .. G-1), as NCCL numbers ranks and as weft's runtime requires across
 * nodes (nodes of equal size, consecutive ranks). A job of more than G ranks needs whole nodes
 * and a network device in the dump; else an error in d (file names the schedule) and
 * WEFT_ERR_INPUT. */
weft_result weft_topo_fit(const weft_topo *t, int32_t nranks, const char *file, weft_diag *d);

/* The link from rank a to rank b (a != b) of a job that fits. */
weft_topo_link weft_topo_between(const weft_topo *t, int32_t a, int32_t b);

/* "NVLink (18 lanes through NVSwitch), 370.8 GB/s" */
void weft_topo_link_str(const weft_topo_link *l, char *buf, size_t n);

/* NCCL's hardware latency of a hop of this kind for protocol p (us; its tuner's ring figures,
 * src/graph/tuning.cc), without a network device's own latency. */
double weft_topo_hw_lat_us(weft_topo_kind k, weft_proto p);

/* Whether rank src of a has a send step to rank dst. */
int weft_topo_sends(const weft_algo *a, int32_t src, int32_t dst);

/* The rule of `weft verify --topo` (docs/verify.md, "The machine's topology"): a schedule's
 * ranks on one node talk through the interpreter's loads and stores into each other's memory,
 * which assumes NVLink between them; a warning in d for each pair (src, dst) that sends on one
 * node with no NVLink between their GPUs, at the line of the first tb carrying it. Ranks on
 * different nodes go through the network phases (NCCL's transports): no warning. a must fit
 * (weft_topo_fit). Returns the number of warnings. */
int weft_topo_check(const weft_topo *t, const weft_algo *a, weft_diag *d);

/* The links a's ranks send on, grouped by what they are ("12 pairs: NVLink (18 lanes through
 * NVSwitch), 370.8 GB/s"), each line after indent; with every_pair, each pair on its own line
 * instead. */
void weft_topo_print_links(const weft_topo *t, const weft_algo *a, FILE *out, const char *indent,
                           int every_pair);

/* One line: "FILE: 4 GPUs (sm_90) on one node, 2 network devices" */
void weft_topo_print_summary(const weft_topo *t, int32_t nranks, FILE *out);

#endif
