/* docstore_builtin.c: the nom document store (docstore.h): files linked into the image, since
 * a nom application has no file system. Every document is memory-resident, so responses are
 * sent straight from the image without a copy. */
#include "docstore.h"
#include "docstore_builtin.h"

#include <errno.h>
#include <string.h>

int docstore_init(const char *root)
{
    return root == NULL ? 0 : -EINVAL;
}

/* The table is sorted by path (mkwww.py), so a binary search finds a document. */
static const struct builtin_doc *find(const char *path)
{
    size_t lo = 0, hi = nhttpd_builtin_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(path, nhttpd_builtin_docs[mid].path);
        if (c == 0)
            return &nhttpd_builtin_docs[mid];
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

int docstore_open(const char *path, struct doc *doc)
{
    static const char index_name[] = "index.html";
    char full[1024];
    size_t n = strlen(path), extra = n > 0 && path[n - 1] == '/' ? sizeof index_name - 1 : 0;
    const struct builtin_doc *d = NULL;
    if (n > 0 && n + extra < sizeof full) { /* by hand: snprintf costs ~200 insns a request */
        memcpy(full, path, n);
        memcpy(full + n, index_name, extra);
        full[n + extra] = '\0';
        d = find(full);
    }
    if (d == NULL)
        return -ENOENT;
    *doc = (struct doc){.size = d->size, .content_type = docstore_content_type(full),
                        .bytes = d->bytes, .handle = -1, .pin = NULL};
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
