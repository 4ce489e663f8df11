/* docstore_builtin.c: the nom document store (docstore.h): files linked into the image, since
 * a nom application has no file system, or made at their first opening (builtin_made). Every
 * document is memory-resident, so responses are sent straight from memory without a copy. */
#include "docstore.h"
#include "docstore_builtin.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Each document's media type, looked up once at start: mime.c's scan of the extension and its
 * table took ~110 instructions of every request (issue 16, tools/bench/per_request.py). */
static const char **doc_types;

int docstore_init(const char *root)
{
    if (root != NULL)
        return -EINVAL;
    if (doc_types == NULL && nhttpd_builtin_count > 0) {
        doc_types = malloc(nhttpd_builtin_count * sizeof *doc_types);
        if (doc_types == NULL)
            return -ENOMEM;
        for (size_t i = 0; i < nhttpd_builtin_count; i++)
            doc_types[i] = docstore_content_type(nhttpd_builtin_docs[i].path);
    }
    return 0;
}

/* size bytes of splitmix64 (Steele, Lea and Flood, OOPSLA 2014) from seed, each output
 * little-endian: mkwww.py's splitmix64_bytes, which wrote the same bytes into the www tree. */
static void make_splitmix64(uint8_t *out, uint64_t size, uint64_t seed)
{
    uint64_t x = seed;
    for (uint64_t off = 0; off < size; off += 8) {
        x += 0x9E3779B97F4A7C15ull;
        uint64_t z = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        memcpy(out + off, &z, size - off < 8 ? size - off : 8); /* x86: little-endian */
    }
}

/* The table is sorted by path length, then by path (mkwww.py), so a binary search finds a
 * document's index, or -1, comparing lengths first: most probes need no more, and the one that
 * does compares bytes whose number it knows. With a strlen of the path and a strcmp on every
 * probe, finding "/index.html" cost 169 instructions of each request; now 72 (issue 16). */
static ptrdiff_t find(const char *path, size_t n)
{
    size_t lo = 0, hi = nhttpd_builtin_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2, len = nhttpd_builtin_docs[mid].path_len;
        int c = n != len ? (n < len ? -1 : 1) : memcmp(path, nhttpd_builtin_docs[mid].path, n);
        if (c == 0)
            return (ptrdiff_t)mid;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return -1;
}

/* A directory's path ("/", "/a/") names its index.html. */
static ptrdiff_t find_index(const char *dir, size_t n)
{
    static const char index_name[] = "index.html";
    char full[1024];
    if (n + sizeof index_name > sizeof full)
        return -1;
    memcpy(full, dir, n); /* by hand: snprintf costs ~200 insns a request */
    memcpy(full + n, index_name, sizeof index_name);
    return find(full, n + sizeof index_name - 1);
}

int docstore_open(const char *path, size_t len, struct doc *doc)
{
    ptrdiff_t i = len == 0 ? -1 : path[len - 1] == '/' ? find_index(path, len) : find(path, len);
    if (i < 0 || doc_types == NULL)
        return -ENOENT;
    const struct builtin_doc *d = &nhttpd_builtin_docs[i];
    if (d->made != NULL && !d->made->done) { /* about 5 ms for large.bin under TCG, once */
        make_splitmix64(d->made->buffer, d->size, d->made->seed);
        d->made->done = 1;
    }
    *doc = (struct doc){.size = d->size, .content_type = doc_types[i], .bytes = d->bytes,
                        .handle = -1, .pin = NULL};
    return 0;
}

ssize_t docstore_read(const struct doc *doc, uint64_t off, void *buf, size_t len)
{
    if (off >= doc->size)
        return 0;
    if (len > doc->size - off)
        len = (size_t)(doc->size - off);
    memcpy(buf, doc->bytes + off, len);
    return (ssize_t)len;
}

void docstore_close(struct doc *doc)
{
    doc->bytes = NULL;
}
