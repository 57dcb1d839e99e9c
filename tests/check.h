/* check.h — the few assertion macros weft's C unit tests use; a failed check prints file:line. */
#ifndef WEFT_TESTS_CHECK_H
#define WEFT_TESTS_CHECK_H
#include <stdio.h>
#include <string.h>

static int check_failures;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            check_failures++;                                                                      \
        }                                                                                          \
    } while (0)
#define CHECK_STR(a, b)                                                                            \
    do {                                                                                           \
        const char *ca_ = (a), *cb_ = (b);                                                         \
        if (ca_ == NULL || cb_ == NULL || strcmp(ca_, cb_) != 0) {                                 \
            fprintf(stderr, "%s:%d: expected \"%s\"\n  got \"%s\"\n", __FILE__, __LINE__,          \
                    cb_ ? cb_ : "(null)", ca_ ? ca_ : "(null)");                                   \
            check_failures++;                                                                      \
        }                                                                                          \
    } while (0)
#define CHECK_DONE()                                                                               \
    do {                                                                                           \
        if (check_failures) fprintf(stderr, "%d check(s) failed\n", check_failures);               \
        return check_failures ? 1 : 0;                                                             \
    } while (0)
#endif
