/* datadir.h — where the weft executable finds what is installed beside it (share/weft). */
#ifndef WEFT_TOOLS_DATADIR_H
#define WEFT_TOOLS_DATADIR_H

/* rel in the folder of this executable (build/tools, or the installation's bin) when it exists;
 * NULL otherwise or when memory runs out. Owned by the caller. */
char *weft_exe_sibling(const char *rel);

/* DATADIR/weft/sub of the installation this executable belongs to, found from the executable's
 * own folder (so an installed tree can be moved), when that exists; NULL otherwise (a weft run
 * from its build tree) or when memory runs out. Owned by the caller. */
char *weft_data_path(const char *sub);

/* The algorithms a command loads when it is given none, one rule for `weft select`, `weft
 * library` and the others: $WEFT_ALGO_DIR (alias MSCCL_ALGO_DIR) when set, else the library
 * installed with this weft (DATADIR/weft/algorithms), else ./algorithms when it exists (a
 * checkout), else NULL: nothing to load. *from says which (for -v and messages). Owned by the
 * caller. */
char *weft_default_algos(const char **from);

#endif
