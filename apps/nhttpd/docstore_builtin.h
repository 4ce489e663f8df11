/* docstore_builtin.h: the table of documents built into a nom image. mkwww.py generates it
 * (paths absolute, sorted by length and then by their bytes) from the www directory;
 * docstore_builtin.c serves it. */
#ifndef NHTTPD_DOCSTORE_BUILTIN_H
#define NHTTPD_DOCSTORE_BUILTIN_H

#include <stddef.h>
#include <stdint.h>

/* A document nhttpd makes at its first opening instead of carrying it in the image (mkwww.py:
 * large.bin): the splitmix64 stream from seed (docstore_builtin.c), into buffer. */
struct builtin_made {
    uint8_t *buffer; /* the document's size, in .bss */
    uint64_t seed;
    int done;
};

struct builtin_doc {
    const char *path; /* "/index.html" */
    size_t path_len;  /* 11 */
    const uint8_t *bytes;
    uint64_t size;
    struct builtin_made *made; /* NULL: bytes are in the image */
};

extern const struct builtin_doc nhttpd_builtin_docs[];
extern const size_t nhttpd_builtin_count;

#endif /* NHTTPD_DOCSTORE_BUILTIN_H */
