/* test_kernels_built.c — the kernels a build compiled (CMake's WEFT_KERNELS and
 * WEFT_KERNELS_TRACED, passed here as arguments) are exactly those the runtime reports built, so
 * that a call whose kernel is missing is refused (NCCL serves it) and every other runs. No GPU
 * needed: the table holds the kernels' host stubs.
 *
 *   test_kernels_built SELECTION TRACED      e.g. "float:sum,copy" 0, or all 1 */
#include "check.h"
#include "kernels_internal.h"

#include <string.h>

/* Whether the comma-separated selection names the call (written apart from the shards' parser:
 * a mistake in either shows here). */
static int named(const char *sel, weft_dtype t, weft_redop op, int reduces) {
    char want[64];
    if (strcmp(sel, "all") == 0) return 1;
    if (!reduces)
        snprintf(want, sizeof want, "copy");
    else
        snprintf(want, sizeof want, "%s:%s", weft_dtype_name(t),
                 weft_redop_name(op == WEFT_OP_AVG ? WEFT_OP_SUM : op));
    size_t n = strlen(want);
    for (const char *p = sel; p; p = strchr(p, ',')) {
        if (*p == ',') p++;
        if (strncmp(p, want, n) == 0 && (p[n] == ',' || p[n] == 0)) return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: test_kernels_built SELECTION TRACED\n");
        return 2;
    }
    const char *sel = argv[1];
    int traced = strcmp(argv[2], "1") == 0 || strcmp(argv[2], "ON") == 0;
    int built = 0;
    for (int t = 0; t < WEFT_DTYPE_COUNT; t++) {
        for (int op = 0; op < WEFT_OP_COUNT; op++) {
            for (int reduces = 0; reduces < 2; reduces++) {
                int ki = weft_rt_kernel_index((weft_dtype)t, (weft_redop)op, reduces);
                CHECK(ki >= 0 && ki < WEFT_RT_NKERNELS);
                /* the slot serves every call that maps to it: built if any of them is named */
                int want = 0;
                for (int t2 = 0; t2 < WEFT_DTYPE_COUNT; t2++)
                    for (int op2 = 0; op2 < WEFT_OP_COUNT; op2++)
                        if (weft_rt_kernel_index((weft_dtype)t2, (weft_redop)op2, reduces) == ki &&
                            named(sel, (weft_dtype)t2, (weft_redop)op2, reduces))
                            want = 1;
                if (weft_rt_kernel_built(ki, WEFT_RT_KV_PLAIN) != want ||
                    weft_rt_kernel_built(ki, WEFT_RT_KV_TRACED) != (want && traced))
                    fprintf(stderr, "%s %s %s: slot %d built %d/%d, want %d/%d\n",
                            weft_dtype_name((weft_dtype)t), weft_redop_name((weft_redop)op),
                            reduces ? "reducing" : "copy", ki,
                            weft_rt_kernel_built(ki, WEFT_RT_KV_PLAIN),
                            weft_rt_kernel_built(ki, WEFT_RT_KV_TRACED), want, want && traced);
                CHECK(weft_rt_kernel_built(ki, WEFT_RT_KV_PLAIN) == want);
                CHECK(weft_rt_kernel_built(ki, WEFT_RT_KV_TRACED) == (want && traced));
                CHECK(weft_rt_kernel_built(ki, WEFT_RT_KV_LL) == want); /* with every plain one */
                built += want;
            }
        }
    }
    CHECK(built > 0);
    CHECK(!weft_rt_kernel_built(-1, WEFT_RT_KV_PLAIN) &&
          !weft_rt_kernel_built(WEFT_RT_NKERNELS, WEFT_RT_KV_PLAIN));
    CHECK_DONE();
}
