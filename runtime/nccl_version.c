/* nccl_version.c — which libnccl versions weft's device code runs on (WEFT_NCCL_VERSION_MIN/END
 * in weft_runtime.h), and the words every part of weft uses to say so. */
#include "weft_runtime.h"

#include <stdio.h>

/* Where users get an NCCL of the supported minor most easily, when one is known. */
#if NCCL_MAJOR == 2 && NCCL_MINOR == 28
#define PIP_NCCL " (PyTorch's pip nvidia-nccl-cu12 2.28.9: its lib folder first on LD_LIBRARY_PATH)"
#else
#define PIP_NCCL ""
#endif

int weft_nccl_version_supported(int version) {
    return version >= WEFT_NCCL_VERSION_MIN && version < WEFT_NCCL_VERSION_END;
}

/* NCCL_VERSION's two encodings: X*1000+Y*100+Z up to 2.8, X*10000+Y*100+Z from 2.9 on. */
static void decode(int v, int *x, int *y, int *z) {
    if (v >= 20900) {
        *x = v / 10000, *y = v / 100 % 100, *z = v % 100;
    } else {
        *x = v / 1000, *y = v / 100 % 10, *z = v % 100;
    }
}

const char *weft_nccl_version_str(int version, char *buf, size_t len) {
    int x, y, z;
    decode(version, &x, &y, &z);
    snprintf(buf, len, "%d.%d.%d", x, y, z);
    return buf;
}

const char *weft_nccl_range_str(char *buf, size_t len) {
    int x, y, z;
    decode(WEFT_NCCL_VERSION_MIN, &x, &y, &z);
    snprintf(buf, len, "%d.%d.%d to %d.%d.x", x, y, z, x, y);
    return buf;
}

const char *weft_nccl_version_advice(int version, char *buf, size_t len) {
    char v[32], range[48];
    int x, y, z;
    decode(WEFT_NCCL_VERSION_MIN, &x, &y, &z);
    weft_nccl_version_str(version, v, sizeof v);
    weft_nccl_range_str(range, sizeof range);
    if (version < WEFT_NCCL_VERSION_MIN)
        snprintf(buf, len,
                 "NCCL %s is older than the device API weft was built for (weft supports NCCL "
                 "%s): use NCCL %d.%d.%d or a later %d.%d.x" PIP_NCCL
                 ", or rebuild weft against this NCCL's headers",
                 v, range, x, y, z, x, y);
    else
        snprintf(buf, len,
                 "NCCL %s is newer than the device API weft was built for (weft supports NCCL "
                 "%s): use NCCL %d.%d.x for weft" PIP_NCCL
                 "; weft's device code does not yet run on the device API of 2.29 and later "
                 "(docs/install.md, \"Newer NCCL\")",
                 v, range, x, y);
    return buf;
}
