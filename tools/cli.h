/* cli.h — what several `weft` commands parse alike: -D NAME=VALUE, the parameters of a .weft
 * source given wherever a schedule is (the commands load it with weft_cc_load_file). */
#ifndef WEFT_TOOLS_CLI_H
#define WEFT_TOOLS_CLI_H

#include <stddef.h>

/* argv[*i] as "-D NAME=VALUE" (advancing *i past the value) or "-DNAME=VALUE": appends the
 * NAME=VALUE to defines (room for argc entries) and returns 1; 0 when argv[*i] is no -D; -1
 * when -D is last (the caller reports the usage error). */
int weft_cli_define(int argc, char **argv, int *i, const char **defines, size_t *ndefines);

#endif
