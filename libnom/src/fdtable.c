/* fdtable.c: the descriptor table's data structure (see fdtable.h). Pure code. */
#include <errno.h>
#include <stdlib.h>
#include "fdtable.h"

static int lowest_free(struct nom_fdtable *t, int from)
{
    for (int fd = from < 0 ? 0 : from; fd < NOM_FD_MAX; fd++)
        if (!t->slot[fd])
            return fd;
    return -EMFILE;
}

int fdtable_install(struct nom_fdtable *t, const struct nom_file_ops *ops, void *priv)
{
    int fd = lowest_free(t, 0);
    if (fd < 0)
        return fd;
    struct nom_file *f = malloc(sizeof *f);
    if (!f)
        return -ENOMEM;
    *f = (struct nom_file){ ops, priv, 1, 0 };
    t->slot[fd] = f;
    return fd;
}

struct nom_file *fdtable_remove(struct nom_fdtable *t, int fd)
{
    struct nom_file *f = fdtable_get(t, fd);
    if (f)
        t->slot[fd] = NULL;
    return f;
}

int fdtable_dup(struct nom_fdtable *t, int fd, int to, int exact)
{
    struct nom_file *f = fdtable_get(t, fd);
    if (!f)
        return -EBADF;
    if (to < 0 || to >= NOM_FD_MAX)
        return -EINVAL;
    int nfd = exact ? (t->slot[to] ? -EBADF : to) : lowest_free(t, to);
    if (nfd < 0)
        return nfd;
    f->refs++;
    t->slot[nfd] = f;
    return nfd;
}

void fdtable_file_free(struct nom_file *f)
{
    free(f);
}
