/* cmd_tune.c — `weft tune`: measuring needs MPI, CUDA and NCCL, which this CLI does not link, so
 * it hands the command line to the weft-tune program installed beside it (same process, same
 * environment: it works under mpirun); --plot-only draws a table here. */
#include "commands.h"
#include "datadir.h"
#include "weft_common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* weft_svg shows tune/ anyway */
#if __has_include("tune.h") && __has_include("weft_select.h")
#include "tune.h"

/* weft-tune in the folder of this executable (build/tools, or the install's bin), or NULL. */
static char *measuring_program(void) {
    char *p = weft_exe_sibling("weft-tune");
    if (p && access(p, X_OK) != 0) {
        free(p);
        p = NULL;
    }
    return p;
}

static int plot_only(const tune_opts *o) {
    weft_diag *d = weft_diag_new();
    weft_tune_table *t = NULL;
    char *out = o->out ? weft_strdup(o->out) : tune_plot_path(o->plot_only);
    int rc = WEFT_EXIT_INPUT;
    if (d == NULL || out == NULL) goto done;
    if (weft_tune_read_file(o->plot_only, &t, d) == WEFT_OK && tune_plot(t, out, d) == WEFT_OK) {
        printf("wrote %s\n", out);
        rc = WEFT_EXIT_OK;
    }
done:
    weft_diag_print(d, stderr, WEFT_SEV_NOTE);
    weft_diag_free(d);
    weft_tune_table_free(t);
    free(out);
    return rc;
}

int weft_cmd_tune(int argc, char **argv) {
    tune_opts o;
    int pr = tune_opts_parse(argc, argv, &o, stderr);
    if (pr == 1) return WEFT_EXIT_OK;
    if (pr != 0) return WEFT_EXIT_USAGE;
    if (o.plot_only) return plot_only(&o);
    /* Before weft-tune and MPI start: without a GPU, CUDA's first error and MPI's abort notices
     * would say it less clearly, once per rank. */
    char why[256];
    if (weft_runtime_gpus(why, sizeof why) < 1) {
        if (weft_env_int(WEFT_ENV_WORLD_RANK, 0) == 0)
            fprintf(stderr, "weft tune: no GPU (%s)\n", why);
        return WEFT_EXIT_INPUT;
    }
    char *prog = measuring_program();
    if (prog == NULL) {
        fprintf(stderr,
                "weft tune: measuring needs the weft-tune program beside this weft, built when "
                "CUDA, NCCL >= 2.28 (with nccl_device.h) and MPI are found; this build has none. "
                "Configure on a machine that has them (a GPU is not needed to build) and run\n"
                "  mpirun -np N build/tools/weft tune ...   (or build/tools/weft-tune ...)\n");
        return WEFT_EXIT_INPUT;
    }
    argv[0] = prog;
    execv(prog, argv);
    fprintf(stderr, "weft tune: cannot run %s: %s\n", prog, strerror(errno));
    free(prog);
    return WEFT_EXIT_INPUT;
}
#else
int weft_cmd_tune(int argc, char **argv) {
    return weft_cmd_unavailable(&weft_spec_tune, argc, argv);
}
#endif
