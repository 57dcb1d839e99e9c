/* export_anchor.c — gives libweft.so one source of its own; the layers are linked in whole. */
#include "weft_common.h"
WEFT_API const char *weft_version(void);
const char *weft_version(void) {
    return "0.1.0";
}
