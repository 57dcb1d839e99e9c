/* file.c — reading input files: regular files only (or standard input), bounded in size, errors
 * as diagnostics naming the file. */
#include "weft_common.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *weft_file_kind(unsigned st_mode) {
    mode_t m = (mode_t)st_mode;
    if (S_ISREG(m)) return "a regular file";
    if (S_ISDIR(m)) return "a directory";
    if (S_ISFIFO(m)) return "a FIFO";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISSOCK(m)) return "a socket";
    return "not a regular file";
}

const char *weft_read_name(const char *path) {
    return strcmp(path, "-") == 0 ? "<stdin>" : path;
}

weft_result weft_read_file_max(const char *path, size_t max_bytes, unsigned flags, char **data,
                               size_t *len, weft_diag *d) {
    weft_result res = WEFT_OK;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    int fd = -1, own = 1;
    struct stat st;
    *data = NULL;
    if (len) *len = 0;
    if ((flags & WEFT_READ_STDIN) && strcmp(path, "-") == 0) {
        fd = 0;
        own = 0;
        path = weft_read_name(path);
    } else {
        /* O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it */
        fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) {
            weft_diag_add(d, WEFT_SEV_ERROR, path, 0, 0, "cannot open: %s", strerror(errno));
            WEFT_FAIL(WEFT_ERR_INPUT);
        }
    }
    if (fstat(fd, &st) != 0) {
        weft_diag_add(d, WEFT_SEV_ERROR, path, 0, 0, "cannot read: %s", strerror(errno));
        WEFT_FAIL(WEFT_ERR_INPUT);
    }
    if (own && !S_ISREG(st.st_mode)) {
        weft_diag_add(d, WEFT_SEV_ERROR, path, 0, 0, "not a regular file (it is %s)",
                      weft_file_kind((unsigned)st.st_mode));
        WEFT_FAIL(WEFT_ERR_INPUT);
    }
    if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > (uint64_t)max_bytes) {
        weft_diag_add(d, WEFT_SEV_ERROR, path, 0, 0,
                      "file too large (%lld bytes; the limit is %zu)", (long long)st.st_size,
                      max_bytes);
        WEFT_FAIL(WEFT_ERR_INPUT);
    }
    if (own) {
        int fl = fcntl(fd, F_GETFL);
        if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    }
    for (;;) {
        /* room for what is left under the limit, one byte past it, and the terminator */
        if (n == cap || cap - n < 2) {
            size_t want = cap ? 2 * cap : (S_ISREG(st.st_mode) ? (size_t)st.st_size + 2 : 65536);
            if (want < 65536) want = 65536;
            if (want > max_bytes + 2) want = max_bytes + 2;
            if (want <= cap) want = cap + 2;
            char *p = realloc(buf, want);
            if (p == NULL) WEFT_FAIL(WEFT_ERR_NOMEM);
            buf = p;
            cap = want;
        }
        ssize_t got = read(fd, buf + n, cap - n - 1);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            weft_diag_add(d, WEFT_SEV_ERROR, path, 0, 0, "read error: %s", strerror(errno));
            WEFT_FAIL(WEFT_ERR_INPUT);
        }
        if (got == 0) break;
        n += (size_t)got;
        if (n > max_bytes) {
            weft_diag_add(d, WEFT_SEV_ERROR, path, 0, 0,
                          "file too large (more than %zu bytes; the limit)", max_bytes);
            WEFT_FAIL(WEFT_ERR_INPUT);
        }
    }
    if (buf == NULL && (buf = malloc(1)) == NULL) WEFT_FAIL(WEFT_ERR_NOMEM);
    buf[n] = '\0';
    *data = buf;
    if (len) *len = n;
    buf = NULL;
fail:
    free(buf);
    if (own && fd >= 0) close(fd);
    return res;
}

weft_result weft_read_file(const char *path, char **data, size_t *len, weft_diag *d) {
    return weft_read_file_max(path, WEFT_READ_MAX_BYTES, 0, data, len, d);
}
