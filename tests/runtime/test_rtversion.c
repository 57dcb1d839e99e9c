/* test_rtversion.c — the device path refuses a libnccl whose version does not fit the headers
 * weft was built with, with a message that says what to do (no GPU needed). */
#include "check.h"
#include "comm_internal.h"

static const char *first_msg(weft_diag *d) {
    return weft_diag_size(d) ? weft_diag_get(d, 0)->msg : "";
}

int main(void) {
    weft_diag *d = weft_diag_new();
    CHECK(weft_rt_check_version(NCCL_VERSION_CODE, d) == WEFT_OK);
    CHECK(weft_rt_check_version(NCCL_VERSION_CODE + 1, d) == WEFT_OK ||
          NCCL_VERSION_CODE % 100 == 99);
    CHECK(weft_diag_size(d) == 0);
    CHECK(weft_rt_check_version(22803, d) == WEFT_ERR_UNSUPPORTED);
    char want[512];
    snprintf(want, sizeof want,
             "weft: the loaded libnccl 2.28.3 is older than the NCCL %d.%d.%d headers weft was "
             "built with; its device code cannot run there, so the GPU runtime is off (NCCL runs "
             "every collective)",
             NCCL_VERSION_CODE / 10000, NCCL_VERSION_CODE / 100 % 100, NCCL_VERSION_CODE % 100);
    CHECK_STR(first_msg(d), want);
    weft_diag_clear(d);
    CHECK(weft_rt_check_version(22900, d) == WEFT_ERR_UNSUPPORTED);
    snprintf(want, sizeof want,
             "weft: the loaded libnccl 2.29.0 has another device API than the NCCL %d.%d it was "
             "built with; the GPU runtime is off (NCCL runs every collective)",
             NCCL_VERSION_CODE / 10000, NCCL_VERSION_CODE / 100 % 100);
    CHECK_STR(first_msg(d), want);
    weft_diag_free(d);
    CHECK_DONE();
}
