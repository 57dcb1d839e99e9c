/* app.c — a program built against an installed weft (tests/install): compiles a library file from
 * the installed share/weft, verifies it and, when the installed headers include the runtime's,
 * loads it into a registry as libweft_nccl.so would. */
#include <stdio.h>
#include <stdlib.h>

#include <weft_compiler.h>
#ifdef APP_RUNTIME
#include <weft_runtime.h>
#endif

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: app FILE.weft [NAME=VALUE]...\n");
        return 2;
    }
    weft_cc_options o = {(const char *const *)argv + 2, (size_t)argc - 2, NULL, 0};
    weft_diag *d = weft_diag_new();
    weft_algo *a = NULL;
    int rc = 1;
    if (weft_cc_compile_file(argv[1], &o, &a, d) != WEFT_OK ||
        weft_ir_verify(a, NULL, d, NULL) != WEFT_OK)
        goto out;
    printf("%s: %s on %d ranks, %lld steps, verified\n", a->name, weft_coll_name(a->coll),
           (int)a->ngpus, (long long)weft_algo_nsteps(a));
#ifdef APP_RUNTIME
    weft_registry *r = NULL;
    if (weft_registry_new(&r) != WEFT_OK) goto out;
    weft_result res = weft_registry_add(r, a, d);
    a = NULL; /* the registry owns it, also on failure */
    if (res == WEFT_OK) printf("registry: %zu algorithm\n", weft_registry_size(r));
    weft_registry_free(r);
    if (res != WEFT_OK) goto out;
#endif
    rc = 0;
out:
    weft_diag_print(d, stderr, WEFT_SEV_WARNING);
    weft_algo_free(a);
    weft_diag_free(d);
    return rc;
}
