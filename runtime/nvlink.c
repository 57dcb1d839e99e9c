/* nvlink.c — whether LL128 may run on a device: its lines cross whole only within one GPU's L2
 * and over NVLink, so the runtime runs LL128 algorithms as LL128 where the GPU is sm_90 or newer
 * and NVML shows NVLink between it and every other GPU of the node (directly or through
 * NVSwitch), elsewhere as LL (weft_rt_cfg.ll128, WEFT_LL128). NVML is opened at run time: a
 * machine without it runs LL128 as LL. */
#include "comm_internal.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/* The part of NVML's interface this asks (nvml.h, NVML 11+; not a build dependency). */
typedef int nvml_ret;
typedef struct nvml_dev_st *nvml_dev;
typedef struct nvml_pci {
    char bus_id_legacy[16];
    unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[32];
} nvml_pci;
#define NVML_MAX_LINKS   18
#define NVML_LINK_SWITCH 2 /* NVML_NVLINK_DEVICE_TYPE_SWITCH */

typedef struct nvml_fns {
    nvml_ret (*init)(void);
    nvml_ret (*count)(unsigned *);
    nvml_ret (*by_index)(unsigned, nvml_dev *);
    nvml_ret (*by_bus)(const char *, nvml_dev *);
    nvml_ret (*pci)(nvml_dev, nvml_pci *);
    nvml_ret (*link_state)(nvml_dev, unsigned, int *);
    nvml_ret (*link_type)(nvml_dev, unsigned, int *);
    nvml_ret (*link_pci)(nvml_dev, unsigned, nvml_pci *);
} nvml_fns;

static int nvml_open(nvml_fns *f) {
    void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) return 0;
    *(void **)&f->init = dlsym(h, "nvmlInit_v2");
    *(void **)&f->count = dlsym(h, "nvmlDeviceGetCount_v2");
    *(void **)&f->by_index = dlsym(h, "nvmlDeviceGetHandleByIndex_v2");
    *(void **)&f->by_bus = dlsym(h, "nvmlDeviceGetHandleByPciBusId_v2");
    *(void **)&f->pci = dlsym(h, "nvmlDeviceGetPciInfo_v3");
    *(void **)&f->link_state = dlsym(h, "nvmlDeviceGetNvLinkState");
    *(void **)&f->link_type = dlsym(h, "nvmlDeviceGetNvLinkRemoteDeviceType");
    *(void **)&f->link_pci = dlsym(h, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
    /* never closed: NVML keeps state for the process */
    return f->init && f->count && f->by_index && f->by_bus && f->pci && f->link_state &&
           f->link_type && f->link_pci && f->init() == 0;
}

static int same_pci(const nvml_pci *a, const nvml_pci *b) {
    return a->domain == b->domain && a->bus == b->bus && a->device == b->device;
}

/* Whether NVLink joins device dev to every other GPU NVML sees; why says what decided. */
static int nvlink_all(int dev, char *why, size_t len) {
    nvml_fns f;
    memset(&f, 0, sizeof f);
    char bus[32];
    nvml_dev me, other;
    nvml_pci mine, peers[NVML_MAX_LINKS], p;
    unsigned n = 0;
    int npeers = 0, active = 0, sw = 0;
    if (!nvml_open(&f)) return snprintf(why, len, "NVML is not available"), 0;
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, dev) != cudaSuccess || f.by_bus(bus, &me) != 0 ||
        f.pci(me, &mine) != 0 || f.count(&n) != 0)
        return snprintf(why, len, "NVML does not know device %d", dev), 0;
    for (unsigned l = 0; l < NVML_MAX_LINKS; l++) {
        int on = 0, type = 0;
        if (f.link_state(me, l, &on) != 0 || !on) continue;
        active++;
        if (f.link_type(me, l, &type) == 0 && type == NVML_LINK_SWITCH)
            sw = 1;
        else if (f.link_pci(me, l, &peers[npeers]) == 0)
            npeers++;
    }
    if (sw) return snprintf(why, len, "NVSwitch (%d NVLinks)", active), 1;
    for (unsigned i = 0; i < n; i++) {
        int linked = 0;
        if (f.by_index(i, &other) != 0 || f.pci(other, &p) != 0 || same_pci(&p, &mine)) continue;
        for (int k = 0; k < npeers && !linked; k++)
            linked = same_pci(&peers[k], &p);
        if (!linked)
            return snprintf(why, len, "GPU %s is not an NVLink peer of %s", p.bus_id, bus), 0;
    }
    return snprintf(why, len, "NVLink to every GPU of the node (%d NVLinks)", active), 1;
}

int weft_rt_ll128_auto(int dev, int loopback) {
    enum { MAXDEV = 64 };
    static int cache[2][MAXDEV]; /* 0 unknown, 1 no, 2 yes */
    int *slot = dev >= 0 && dev < MAXDEV ? &cache[loopback != 0][dev] : NULL;
    int got = slot ? __atomic_load_n(slot, __ATOMIC_RELAXED) : 0;
    if (got) return got == 2;
    char why[160] = "";
    int major = 0, on = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess)
        snprintf(why, sizeof why, "device %d unknown", dev);
    else if (major < 9)
        snprintf(why, sizeof why, "sm_%d0 (LL128 runs on sm_90 and newer)", major);
    else if (loopback)
        on = 1, snprintf(why, sizeof why, "every rank on one GPU");
    else
        on = nvlink_all(dev, why, sizeof why);
    WEFT_INFO(WEFT_SUBSYS_INIT, "weft: device %d: LL128 algorithms run as %s: %s", dev,
              on ? "LL128" : "LL", why);
    if (slot) __atomic_store_n(slot, on ? 2 : 1, __ATOMIC_RELAXED);
    return on;
}
