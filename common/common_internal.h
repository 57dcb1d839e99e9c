/* common_internal.h — internals shared by the files of common/ only. */
#ifndef WEFT_COMMON_INTERNAL_H
#define WEFT_COMMON_INTERNAL_H
#include "weft_common.h"
/* Reads and caches an environment variable without logging it (the logger's own bootstrap);
 * *first, when not NULL, says whether this call did the read. */
const char *weft_env_get_quiet(weft_env_id id, int *first);
#endif
