/* docstore_dir.c: the Linux document store (docstore.h): files under a root directory.
 *
 * Files up to CACHE_MAX_FILE bytes are cached in memory in a small direct-mapped table and
 * revalidated with one fstatat at most every REVALIDATE_MS, so serving the 175-byte index
 * (the paper's workload) costs no system call but the socket's: the Linux comparison then
 * measures the stack, not open/read/close. Larger files are read in chunks from their fd. */
#include "docstore.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CACHE_SLOTS 64
#define CACHE_MAX_FILE (64 * 1024)
#define REVALIDATE_MS 1000

/* A cached file's bytes, shared by the cache slot and every open document (refcounted). */
struct blob {
    unsigned refs;
    uint64_t size;
    uint8_t bytes[];
};

struct slot {
    char *path; /* relative to the root; NULL: empty */
    struct blob *blob;
    struct timespec mtime;
    ino_t ino;
    off_t size;
    uint64_t checked_ms;
};

static int root_fd = -1;
static struct slot cache[CACHE_SLOTS];

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int docstore_init(const char *root)
{
    if (root == NULL)
        return -EINVAL;
    root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    return root_fd < 0 ? -errno : 0;
}

static void blob_unref(struct blob *b)
{
    if (b != NULL && --b->refs == 0)
        free(b);
}

static void slot_evict(struct slot *s)
{
    free(s->path);
    blob_unref(s->blob);
    memset(s, 0, sizeof *s);
}

static struct slot *slot_for(const char *rel)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (const char *p = rel; *p; p++)
        h = (h ^ (uint8_t)*p) * 16777619u;
    return &cache[h % CACHE_SLOTS];
}

static bool same_file(const struct slot *s, const struct stat *st)
{
    return s->ino == st->st_ino && s->size == st->st_size &&
           s->mtime.tv_sec == st->st_mtim.tv_sec && s->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

static void doc_from_slot(struct slot *s, const char *rel, struct doc *doc)
{
    s->blob->refs++;
    *doc = (struct doc){.size = s->blob->size, .content_type = docstore_content_type(rel),
                        .bytes = s->blob->bytes, .handle = -1, .pin = s->blob};
}

/* Reads a whole small file into a new cache entry. Returns 0 or -errno. */
static int slot_fill(struct slot *s, const char *rel, int fd, const struct stat *st)
{
    struct blob *b = malloc(sizeof *b + (size_t)st->st_size);
    char *path = strdup(rel);
    if (b == NULL || path == NULL) {
        free(b);
        free(path);
        return -ENOMEM;
    }
    size_t got = 0;
    while (got < (size_t)st->st_size) {
        ssize_t n = pread(fd, b->bytes + got, (size_t)st->st_size - got, (off_t)got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int err = n < 0 ? -errno : 0;
            free(b);
            free(path);
            if (err != 0)
                return err;
            break; /* shrank under us: a later revalidation will notice */
        }
        got += (size_t)n;
    }
    if (got < (size_t)st->st_size)
        return -EAGAIN;
    slot_evict(s);
    b->refs = 1;
    b->size = got;
    *s = (struct slot){.path = path, .blob = b, .mtime = st->st_mtim, .ino = st->st_ino,
                       .size = st->st_size, .checked_ms = now_ms()};
    return 0;
}

/* A cached entry still matching the file, or NULL. */
static struct slot *cached(const char *rel)
{
    struct slot *s = slot_for(rel);
    struct stat st;
    if (s->path == NULL || strcmp(s->path, rel) != 0)
        return NULL;
    uint64_t now = now_ms();
    if (now - s->checked_ms < REVALIDATE_MS)
        return s;
    if (fstatat(root_fd, rel, &st, 0) == 0 && S_ISREG(st.st_mode) && same_file(s, &st)) {
        s->checked_ms = now;
        return s;
    }
    slot_evict(s);
    return NULL;
}

static int open_file(const char *rel, struct doc *doc)
{
    struct stat st;
    int fd = openat(root_fd, rel, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return errno == ENOTDIR || errno == ELOOP || errno == ENAMETOOLONG ? -ENOENT : -errno;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return -ENOENT;
    }
    if (st.st_size <= CACHE_MAX_FILE) {
        struct slot *s = slot_for(rel);
        int r = slot_fill(s, rel, fd, &st);
        close(fd);
        if (r == 0)
            doc_from_slot(s, rel, doc);
        return r;
    }
    *doc = (struct doc){.size = (uint64_t)st.st_size, .content_type = docstore_content_type(rel),
                        .bytes = NULL, .handle = fd, .pin = NULL};
    return 0;
}

int docstore_open(const char *path, size_t len, struct doc *doc)
{
    char rel[PATH_MAX];
    /* path is normalized (docstore.h), so rel stays under the root; "dir/" means its index. */
    int w = snprintf(rel, sizeof rel, "%s%s", path + 1,
                     len == 0 || path[len - 1] == '/' ? "index.html" : "");
    if (w < 0 || (size_t)w >= sizeof rel)
        return -ENOENT;
    struct slot *s = cached(rel);
    if (s != NULL) {
        doc_from_slot(s, rel, doc);
        return 0;
    }
    return open_file(rel, doc);
}

ssize_t docstore_read(const struct doc *doc, uint64_t off, void *buf, size_t len)
{
    for (;;) {
        ssize_t n = pread(doc->handle, buf, len, (off_t)off);
        if (n >= 0 || errno != EINTR)
            return n < 0 ? -errno : n;
    }
}

void docstore_close(struct doc *doc)
{
    blob_unref(doc->pin);
    if (doc->handle >= 0)
        close(doc->handle);
    doc->pin = NULL;
    doc->handle = -1;
    doc->bytes = NULL;
}
