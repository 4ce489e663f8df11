/* expect.h: the contract check of nom's libFuzzer harnesses (tools/fuzz/README.md): a broken
 * promise is a crash with its place and condition, so libFuzzer keeps the input. */
#ifndef NOM_FUZZ_EXPECT_H
#define NOM_FUZZ_EXPECT_H

#include <stdio.h>
#include <stdlib.h>

#define EXPECT(cond)                                                                        \
    do {                                                                                    \
        if (!(cond)) {                                                                      \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond);                      \
            abort();                                                                        \
        }                                                                                   \
    } while (0)

#endif
