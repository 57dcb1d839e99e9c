/* machine.c — this machine's fingerprint for tuning tables: GPUs and NVLinks from NVML (loaded
 * with dlopen, as NCCL does, so that nothing links against the driver), the process's NCCL
 * version, weft's version, the launcher's ranks per node. */
#include "weft_tune_table.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#ifndef WEFT_VERSION_STRING
#define WEFT_VERSION_STRING "unknown"
#endif

/* The NVML ABI weft uses (nvml.h is not needed at build time; these are stable since CUDA 10). */
typedef int nvml_ret;
typedef void *nvml_dev;
typedef struct nvml_pci {
    char bus_id_legacy[16];
    unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[32];
} nvml_pci;

#define NVML_MAX_LINKS  18 /* NVML_NVLINK_MAX_LINKS */
#define NVML_DEV_GPU    0  /* nvmlIntNvLinkDeviceType_t */
#define NVML_DEV_SWITCH 2
#define NVML_MAX_GPUS   64
#define NVML_NAME_BYTES 96

typedef struct nvml {
    void *lib;
    nvml_ret (*init)(void);
    nvml_ret (*shutdown)(void);
    nvml_ret (*count)(unsigned *);
    nvml_ret (*handle)(unsigned, nvml_dev *);
    nvml_ret (*name)(nvml_dev, char *, unsigned);
    nvml_ret (*pci)(nvml_dev, nvml_pci *);
    nvml_ret (*link_state)(nvml_dev, unsigned, int *);
    nvml_ret (*remote_pci)(nvml_dev, unsigned, nvml_pci *);
    nvml_ret (*remote_type)(nvml_dev, unsigned, int *); /* optional (NVML >= 11.3) */
} nvml;

static int nvml_open(nvml *n) {
    memset(n, 0, sizeof *n);
    n->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (n->lib == NULL) return -1;
#define SYM(field, name) *(void **)&n->field = dlsym(n->lib, name)
    SYM(init, "nvmlInit_v2");
    SYM(shutdown, "nvmlShutdown");
    SYM(count, "nvmlDeviceGetCount_v2");
    SYM(handle, "nvmlDeviceGetHandleByIndex_v2");
    SYM(name, "nvmlDeviceGetName");
    SYM(pci, "nvmlDeviceGetPciInfo_v3");
    SYM(link_state, "nvmlDeviceGetNvLinkState");
    SYM(remote_pci, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
    SYM(remote_type, "nvmlDeviceGetNvLinkRemoteDeviceType");
#undef SYM
    if (!n->init || !n->shutdown || !n->count || !n->handle || !n->name || n->init() != 0) {
        dlclose(n->lib);
        n->lib = NULL;
        return -1;
    }
    return 0;
}

static void nvml_close(nvml *n) {
    if (n->lib == NULL) return;
    n->shutdown();
    dlclose(n->lib);
    n->lib = NULL;
}

/* The GPUs' model(s) and count, and a canonical summary of their NVLinks: "NVSwitch, 18 NVLinks
 * per GPU", "NVLink: 0-1 x4, 0-2 x4, ... (GPU pairs)", or "no NVLink (PCIe)"; mixed systems list
 * both per GPU. */
static void detect_gpus(weft_machine *m) {
    nvml n;
    if (nvml_open(&n) != 0) return;
    unsigned count = 0;
    if (n.count(&count) != 0 || count == 0) goto done;
    if (count > NVML_MAX_GPUS) count = NVML_MAX_GPUS;
    nvml_dev dev[NVML_MAX_GPUS];
    char busid[NVML_MAX_GPUS][32];
    char names[NVML_MAX_GPUS][NVML_NAME_BYTES];
    for (unsigned g = 0; g < count; g++) {
        nvml_pci p;
        if (n.handle(g, &dev[g]) != 0 || n.name(dev[g], names[g], NVML_NAME_BYTES) != 0) goto done;
        names[g][NVML_NAME_BYTES - 1] = '\0';
        busid[g][0] = '\0';
        if (n.pci && n.pci(dev[g], &p) == 0) snprintf(busid[g], sizeof busid[g], "%s", p.bus_id);
    }
    /* model: one name, or the distinct ones joined in GPU order */
    char model[4 * NVML_NAME_BYTES] = "";
    for (unsigned g = 0; g < count; g++) {
        int seen = 0;
        for (unsigned h = 0; h < g; h++)
            seen |= strcmp(names[h], names[g]) == 0;
        if (seen) continue;
        size_t len = strlen(model);
        snprintf(model + len, sizeof model - len, "%s%s", len ? " + " : "", names[g]);
    }
    m->gpu = weft_strdup(model);
    m->gpus = (int)count;

    /* links: per GPU, how many go to each other GPU and how many to switches */
    static int pair[NVML_MAX_GPUS][NVML_MAX_GPUS];
    int to_switch[NVML_MAX_GPUS] = {0}, any = 0;
    memset(pair, 0, sizeof pair);
    if (n.link_state && n.remote_pci) {
        for (unsigned g = 0; g < count; g++)
            for (unsigned l = 0; l < NVML_MAX_LINKS; l++) {
                int active = 0;
                nvml_pci rp;
                if (n.link_state(dev[g], l, &active) != 0 || !active) continue;
                any = 1;
                int type = -1, peer = -1;
                if (n.remote_type) n.remote_type(dev[g], l, &type);
                if (type != NVML_DEV_SWITCH && n.remote_pci(dev[g], l, &rp) == 0)
                    for (unsigned h = 0; h < count; h++)
                        if (h != g && busid[h][0] && strcasecmp(busid[h], rp.bus_id) == 0)
                            peer = (int)h;
                if (peer >= 0)
                    pair[g][peer]++;
                else
                    to_switch[g]++;
            }
    }
    char topo[4096] = "";
    size_t len = 0;
#define PUT(...)                                                                                   \
    do {                                                                                           \
        if (len < sizeof topo)                                                                     \
            len += (size_t)snprintf(topo + len, sizeof topo - len, __VA_ARGS__);                   \
    } while (0)
    int uniform_switch = any;
    for (unsigned g = 0; g < count; g++) {
        if (to_switch[g] != to_switch[0] || to_switch[g] == 0) uniform_switch = 0;
        for (unsigned h = 0; h < count; h++)
            if (pair[g][h]) uniform_switch = 0;
    }
    if (!any) {
        PUT("no NVLink (PCIe)");
    } else if (uniform_switch) {
        PUT("NVSwitch, %d NVLinks per GPU", to_switch[0]);
    } else {
        PUT("NVLink:");
        const char *sep = " ";
        for (unsigned g = 0; g < count; g++)
            for (unsigned h = g + 1; h < count; h++)
                if (pair[g][h]) {
                    PUT("%s%u-%u x%d", sep, g, h, pair[g][h]);
                    sep = ", ";
                }
        for (unsigned g = 0; g < count; g++)
            if (to_switch[g]) {
                PUT("%s%u-switch x%d", sep, g, to_switch[g]);
                sep = ", ";
            }
    }
#undef PUT
    m->topology = weft_strdup(topo);
done:
    nvml_close(&n);
}

static int detect_nccl(void) {
    int (*get)(int *) = NULL;
    *(void **)&get = dlsym(RTLD_DEFAULT, "ncclGetVersion");
    int v = 0;
    if (get == NULL || get(&v) != 0) return 0;
    return v;
}

void weft_machine_detect(weft_machine *m) {
    memset(m, 0, sizeof *m);
    detect_gpus(m);
    m->nccl = detect_nccl();
    m->weft = weft_strdup(WEFT_VERSION_STRING);
    long long rpn = weft_env_int(WEFT_ENV_LOCAL_RANKS, 0);
    if (rpn > 0 && rpn < (1 << 20)) {
        m->rpn[0] = (int)rpn;
        m->nrpn = 1;
    }
}
