/* cli.c — option parsing shared by several `weft` commands (cli.h). */
#include "cli.h"

#include <string.h>

int weft_cli_define(int argc, char **argv, int *i, const char **defines, size_t *ndefines) {
    const char *a = argv[*i];
    if (strncmp(a, "-D", 2) != 0) return 0;
    if (a[2] != '\0') {
        defines[(*ndefines)++] = a + 2;
        return 1;
    }
    if (*i + 1 >= argc) return -1;
    defines[(*ndefines)++] = argv[++*i];
    return 1;
}
