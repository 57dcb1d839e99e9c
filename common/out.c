/* out.c — writing output files the way every weft writer does: through symbolic links, into
 * FIFOs and devices as a stream, and regular files replaced whole through a new temporary
 * beside them, with the mode a new file gets from the umask or the old file had. */
#include "weft_common.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct weft_out {
    FILE *f;
    char *path;   /* as given, for messages */
    char *target; /* where the bytes go: path with its symbolic links followed */
    char *tmp;    /* the temporary renamed over target at the end; NULL when streaming */
    int is_stdout;
};

/* The file a chain of symbolic links ends at (relative links are relative to their folder), or
 * path itself when it is not a link; NULL with errno set (ELOOP past 40 links). */
static char *follow_links(const char *path) {
    char *cur = weft_strdup(path);
    for (int hops = 0; cur; hops++) {
        struct stat st;
        if (lstat(cur, &st) != 0) {
            if (errno == ENOENT) return cur; /* a new file (perhaps a dangling link's target) */
            break;
        }
        if (!S_ISLNK(st.st_mode)) return cur;
        if (hops == 40) {
            errno = ELOOP;
            break;
        }
        char buf[PATH_MAX];
        ssize_t n = readlink(cur, buf, sizeof buf - 1);
        if (n < 0) break;
        buf[n] = '\0';
        char *next;
        const char *slash = strrchr(cur, '/');
        if (buf[0] == '/' || slash == NULL)
            next = weft_strdup(buf);
        else
            next = weft_asprintf("%.*s/%s", (int)(slash - cur), cur, buf);
        free(cur);
        cur = next;
    }
    int e = errno;
    free(cur);
    errno = e;
    return NULL;
}

char *weft_out_tmp_name(const char *target, uint64_t r) {
    static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    char suffix[9];
    for (int i = 0; i < 8; i++, r /= 62)
        suffix[i] = digits[r % 62];
    suffix[8] = '\0';
    return weft_asprintf("%s.tmp.%s", target, suffix);
}

int weft_out_tmp_create(const char *target, unsigned mode, uint64_t seed, char **name) {
    *name = NULL;
    for (int attempt = 0; attempt < 100; attempt++) {
        char *n = weft_out_tmp_name(target, weft_hash64(seed + (uint64_t)attempt));
        if (n == NULL) {
            errno = ENOMEM;
            return -1;
        }
        /* O_EXCL: never an existing file, and never through a link planted at the name */
        int fd = open(n, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd >= 0) {
            *name = n;
            return fd;
        }
        int e = errno;
        free(n);
        errno = e;
        if (e != EEXIST) return -1;
    }
    return -1;
}

static uint64_t random_seed(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    static uint64_t count;
    uint64_t s = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ ((uint64_t)getpid() << 48);
    return s + __atomic_add_fetch(&count, 0x9e3779b97f4a7c15ull, __ATOMIC_RELAXED);
}

static void out_free(weft_out *o) {
    if (o == NULL) return;
    free(o->path);
    free(o->target);
    free(o->tmp);
    free(o);
}

weft_result weft_out_open(const char *path, unsigned flags, weft_out **out, weft_diag *d) {
    weft_result res = WEFT_OK;
    weft_out *o = calloc(1, sizeof *o);
    int fd = -1;
    struct stat st;
    *out = NULL;
    WEFT_CHECK_ALLOC(o);
    if ((flags & WEFT_OUT_STDOUT) && (path == NULL || strcmp(path, "-") == 0)) {
        o->f = stdout;
        o->is_stdout = 1;
        WEFT_CHECK_ALLOC(o->path = weft_strdup("<stdout>"));
        *out = o;
        return WEFT_OK;
    }
    WEFT_CHECK_ALLOC(o->path = weft_strdup(path));
    if ((o->target = follow_links(path)) == NULL) {
        if (errno == ENOMEM) WEFT_FAIL(WEFT_ERR_NOMEM);
        weft_diag_add(d, WEFT_SEV_ERROR, path, 0, 0, "cannot write: %s", strerror(errno));
        WEFT_FAIL(WEFT_ERR_SYSTEM);
    }
    int exists = stat(o->target, &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) {
        weft_diag_add(d, WEFT_SEV_ERROR, path, 0, 0, "cannot write: it is a directory");
        errno = EISDIR;
        WEFT_FAIL(WEFT_ERR_SYSTEM);
    }
    if (exists && !S_ISREG(st.st_mode)) {
        /* a FIFO, a device, a socket: written as a stream, never replaced */
        fd = open(o->target, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    } else {
        /* a new file gets 0666 less the umask (open applies it), an old one its own mode */
        fd = weft_out_tmp_create(o->target, exists ? 0600 : 0666, random_seed(), &o->tmp);
        if (fd >= 0 && exists) {
            if (fchown(fd, st.st_uid, st.st_gid) != 0) {
                /* not ours to give away: the file becomes the writer's, as with any editor */
            }
            if (fchmod(fd, st.st_mode & 07777) != 0) {
                weft_diag_add(d, WEFT_SEV_ERROR, path, 0, 0, "cannot keep its mode: %s",
                              strerror(errno));
                WEFT_FAIL(WEFT_ERR_SYSTEM);
            }
        }
    }
    if (fd < 0) {
        if (o->tmp == NULL && !(exists && !S_ISREG(st.st_mode)))
            weft_diag_add(d, WEFT_SEV_ERROR, path, 0, 0,
                          "cannot write: cannot create a temporary file beside it: %s",
                          strerror(errno));
        else
            weft_diag_add(d, WEFT_SEV_ERROR, path, 0, 0, "cannot write: %s", strerror(errno));
        WEFT_FAIL(WEFT_ERR_SYSTEM);
    }
    if ((o->f = fdopen(fd, "w")) == NULL) WEFT_FAIL(WEFT_ERR_NOMEM);
    fd = -1;
    *out = o;
    return WEFT_OK;
fail:;
    int e = errno; /* for callers without a weft_diag */
    if (fd >= 0) close(fd);
    if (o && o->tmp) unlink(o->tmp);
    out_free(o);
    errno = e;
    return res;
}

FILE *weft_out_file(const weft_out *o) {
    return o->f;
}

const char *weft_out_path(const weft_out *o) {
    return o->path;
}

weft_result weft_out_close(weft_out *o, weft_diag *d) {
    if (o == NULL) return WEFT_OK;
    weft_result res = WEFT_OK;
    /* a write that failed before this flush left the stream's error flag, not its errno */
    int e = 0, earlier = ferror(o->f);
    errno = 0;
    if (fflush(o->f) != 0) e = errno ? errno : -1;
    if (earlier && e == 0) e = -1;
    if (!o->is_stdout && fclose(o->f) != 0 && e == 0) e = errno ? errno : -1;
    if (e == 0 && o->tmp && rename(o->tmp, o->target) != 0) e = errno;
    if (e != 0) {
        weft_diag_add(d, WEFT_SEV_ERROR, o->path, 0, 0, "cannot write%s%s", e > 0 ? ": " : "",
                      e > 0 ? strerror(e) : " (a write failed: a full disk?)");
        res = WEFT_ERR_SYSTEM;
        if (o->tmp) unlink(o->tmp);
        if (o->is_stdout) clearerr(o->f); /* said here: not again at exit */
    }
    out_free(o);
    if (e != 0) errno = e > 0 ? e : EIO; /* for callers that report it themselves */
    return res;
}

void weft_out_abort(weft_out *o) {
    if (o == NULL) return;
    if (o->is_stdout)
        fflush(o->f);
    else
        fclose(o->f);
    if (o->tmp) unlink(o->tmp);
    out_free(o);
}

weft_result weft_write_file(const char *path, unsigned flags, const void *data, size_t len,
                            weft_diag *d) {
    weft_out *o = NULL;
    weft_result r = weft_out_open(path, flags, &o, d);
    if (r != WEFT_OK) return r;
    fwrite(data, 1, len, weft_out_file(o)); /* an error shows in weft_out_close */
    return weft_out_close(o, d);
}
