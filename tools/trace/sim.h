/* sim.h — the timing model of the interpreter, without a GPU: runs a schedule's thread blocks
 * slice by slice (a step waits for its dependency, its message and its FIFO credit, then moves
 * its bytes at its protocol's and its link's rate) and returns every step execution, when it ran
 * and what released it, and the critical path. `weft estimate` prices schedules with it; the
 * trace tests (tests/trace/trace_sim.c) make synthetic traces from it. Deterministic. */
#ifndef WEFT_SIM_H
#define WEFT_SIM_H

#include "weft_trace.h"
#include "weft_ir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What one protocol costs (docs/estimate.md). */
typedef struct weft_sim_proto {
    double lat_ns;   /* a message: from the end of its sending step to its data at the receiver */
    double step_ns;  /* the fixed cost of one step execution (one slice) */
    double cta_Bpns; /* bytes per ns one CTA moves with this protocol */
    double wire_eff; /* the payload's share of what crosses the link (LL: 8 of 16 bytes) */
} weft_sim_proto;

/* What connects one rank to another when the links differ (weft estimate --topo): the pair's
 * bandwidth in place of link_Bpns, a latency added to each message's, and the sender's port the
 * pair's sends share in place of gpu_Bpns (a GPU's NVLinks; its PCIe link, which its transfers
 * to the network cross too). */
enum { WEFT_SIM_PORT_NVLINK, WEFT_SIM_PORT_PCIE, WEFT_SIM_PORTS };
typedef struct weft_sim_link {
    double Bpns;   /* one direction, bytes per ns; 0: no limit */
    double lat_ns; /* added to the protocol's lat_ns */
    int32_t port;  /* WEFT_SIM_PORT_* of the sender */
} weft_sim_link;

typedef struct weft_sim_model {
    int64_t count; /* elements per rank segment (NCCL's count) */
    int32_t dtype; /* weft_dtype */
    int32_t niter; /* slices per chunk; 0: as the runtime cuts a call (its slots, its CTA groups) */
    int32_t slots; /* messages a connection holds before its sender waits */
    int64_t sig_ns;        /* a dependency's release between tbs of a rank, and a credit's return */
    int64_t launch_ns;     /* from the call to the CTAs' start (the kernel launch) */
    int64_t cta_ns;        /* ... and this more per CTA the launch starts on a rank */
    int64_t tb_stagger_ns; /* tb b of a rank starts b * this after its first */
    int64_t step_gap_ns;   /* a tb's own time between two step executions */
    double link_Bpns;      /* one direction of one peer pair, bytes per ns; 0: no limit */
    double gpu_Bpns;  /* all of a rank's sends together (its NVLink ports, a switch); 0: none */
    int32_t max_ctas; /* CTAs per rank a launch may take (the runtime's groups); 0: 128 */
    weft_sim_proto proto[WEFT_PROTO_COUNT];
    int32_t late_rank; /* this rank (-1: none) enters the call late_ns later */
    int64_t late_ns;
    /* NULL: every pair is link_Bpns and all of a rank's sends share gpu_Bpns. Else links_n x
     * links_n links (links_n the schedule's ranks), [from * links_n + to], and per rank and port
     * what its sends through that port share, [rank * WEFT_SIM_PORTS + port] (0: no limit);
     * both owned by the caller. */
    const weft_sim_link *links;
    const double *port_Bpns;
    int32_t links_n;
} weft_sim_model;

/* The calibrated defaults (2 GPUs over NVLink, docs/estimate.md) for count elements of dtype. */
void weft_sim_model_default(weft_sim_model *m);

/* What released a step execution: the call's start, the previous step of its tb, its dependency
 * on another tb, its message's data, or its FIFO's credit. */
enum { WEFT_SIM_START, WEFT_SIM_PROGRAM, WEFT_SIM_DEP, WEFT_SIM_DATA, WEFT_SIM_CREDIT };

/* One step execution (XML step `step` on slice `iter`); times in ns. */
typedef struct weft_sim_exec {
    int32_t step, iter;
    int64_t t0, t1;
    int64_t dep, data, credit; /* its waits, as the device measures them */
    int64_t bytes;             /* payload it moved */
    int64_t post;              /* progress it posts (-1: none) */
    int64_t smsg, rmsg;        /* message it sent / received on its connection (-1: none) */
    int32_t why;               /* WEFT_SIM_*: what released it */
    int32_t from_tb, from_x;   /* the execution that released it: sim.tbs[from_tb].e[from_x] */
} weft_sim_exec;

typedef struct weft_sim_tb {
    int32_t rank, tb, n; /* n = slices x the tb's steps */
    weft_sim_exec *e;
    int64_t begin, free_at; /* when it started; when it could start another step */
} weft_sim_tb;

typedef struct weft_sim {
    weft_sim_tb *tbs; /* every tb of every rank, rank-major */
    size_t ntbs;
    int64_t start, end;   /* the call's start (before the launch) and its last step's end */
    int64_t chunk_elems;  /* elements (bytes for collectives that do not reduce) per chunk */
    int64_t slice_elems;  /* ... per slice a step moves */
    int32_t niter, group; /* slices per chunk the model ran; CTAs per tb the runtime would use */
    int32_t elem_bytes;
} weft_sim;

/* The steps of tb b of rank r as the model walks them, each XML step with its dependency
 * resolved: the trace's step table of an unfused schedule (nsrc 1, xml_step its own index), so
 * a synthetic trace records what the model ran. steps holds the tb's nsteps. */
void weft_sim_tb_steps(const weft_algo *a, int32_t r, int32_t b, weft_trace_step *steps);

/* Runs one call of a (validated) from time start. A deadlock (a pass that places nothing) is
 * WEFT_ERR_INPUT with the rank, tb and execution in d. On WEFT_OK *out is owned by the caller
 * (weft_sim_free). */
weft_result weft_sim_run(const weft_algo *a, const weft_sim_model *m, int64_t start, weft_sim *out,
                         weft_diag *d);
void weft_sim_free(weft_sim *s);

/* One execution on the critical path. */
typedef struct weft_sim_hop {
    int32_t tb, x; /* sim.tbs[tb].e[x] */
} weft_sim_hop;
/* The chain of releases that ends at the execution that ends last, in time order (malloc'd). */
weft_result weft_sim_critical_path(const weft_sim *s, weft_sim_hop **path, size_t *n);

#ifdef __cplusplus
}
#endif
#endif
