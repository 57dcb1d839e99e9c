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

#endif
