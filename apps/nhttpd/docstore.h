/*
 * docstore.h: where nhttpd's documents come from, one interface with two backends.
 *
 * Contract: paths handed to the store are normalized absolute paths (http_normalize_path):
 * they start with '/', contain no "." or ".." segments and no NUL. A path ending in '/' names
 * that directory's index.html. An open document stays valid and unchanged until it is closed,
 * whatever happens to the store meanwhile. Documents are read-only.
 *
 * Backends (one is linked into each binary):
 *  - docstore_dir.c (Linux): files under a root directory. Small files are kept in memory,
 *    revalidated against the file at most once a second, so the usual request costs no system
 *    call; larger files are read in chunks from an open file descriptor.
 *  - docstore_builtin.c (nom, which has no file system): files built into the application
 *    image by mkwww.py; every document is memory-resident.
 */
#ifndef NHTTPD_DOCSTORE_H
#define NHTTPD_DOCSTORE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct doc {
    uint64_t size;
    const char *content_type;
    /* The whole document when it is memory-resident (then nhttpd sends it without a copy),
     * NULL when it must be read with docstore_read. */
    const uint8_t *bytes;
    int handle; /* backend-private; -1 when bytes != NULL */
    void *pin;  /* backend-private: keeps a cached copy alive while the document is open */
};

/* Opens the store. root: a directory (dir backend); the builtin backend takes only NULL.
 * Returns 0, or -errno: -ENOENT/-ENOTDIR/-EACCES (dir: root unusable), -EINVAL (builtin:
 * a root was given, but nom has no directories), -ENOMEM. */
int docstore_init(const char *root);

/* Opens the document at a normalized path of len bytes (path[len] is NUL). Returns 0, -ENOENT
 * (no such document, or not a regular file), -EACCES (not readable), -EMFILE/-ENFILE/-ENOMEM
 * (out of resources). */
int docstore_open(const char *path, size_t len, struct doc *doc);

/* Copies up to len bytes of a document that is not memory-resident, from offset off, into buf.
 * Returns the bytes copied (0 only at or past the end), or -errno from the read. */
ssize_t docstore_read(const struct doc *doc, uint64_t off, void *buf, size_t len);

/* Closes an open document. Never fails. */
void docstore_close(struct doc *doc);

/* The media type nhttpd sends for a path, from its extension ("application/octet-stream" if
 * none is known). Shared by both backends (mime.c). */
const char *docstore_content_type(const char *path);

#endif /* NHTTPD_DOCSTORE_H */
