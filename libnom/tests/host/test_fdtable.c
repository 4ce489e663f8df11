/* test_fdtable.c: the descriptor table (src/fdtable.c): lowest free descriptor, dup sharing,
 * exact dup, a full table. */
#include <errno.h>
#include "check.h"
#include "fdtable.h"

static const struct nom_file_ops kind_a, kind_b;

static int lowest_free_descriptor_is_used(void)
{
    static struct nom_fdtable t;
    CHECK(fdtable_install(&t, &kind_a, NULL) == 0);
    CHECK(fdtable_install(&t, &kind_a, NULL) == 1);
    CHECK(fdtable_install(&t, &kind_b, NULL) == 2);
    struct nom_file *f = fdtable_remove(&t, 1);
    CHECK(f && f->ops == &kind_a && fdtable_get(&t, 1) == NULL);
    fdtable_file_free(f);
    CHECK(fdtable_install(&t, &kind_b, (void *)7) == 1 && fdtable_get(&t, 1)->priv == (void *)7);
    CHECK(fdtable_get(&t, -1) == NULL && fdtable_get(&t, NOM_FD_MAX) == NULL);
    return 1;
}

static int dup_shares_the_open_file(void)
{
    static struct nom_fdtable t;
    int fd = fdtable_install(&t, &kind_a, NULL);
    int d = fdtable_dup(&t, fd, 0, 0);
    CHECK(d == 1 && fdtable_get(&t, d) == fdtable_get(&t, fd) && fdtable_get(&t, fd)->refs == 2);
    fdtable_get(&t, d)->status = 42; /* O_NONBLOCK is shared by dups (POSIX) */
    CHECK(fdtable_get(&t, fd)->status == 42);
    CHECK(fdtable_dup(&t, fd, 10, 1) == 10);
    CHECK(fdtable_dup(&t, fd, 10, 1) == -EBADF); /* exact slot taken */
    CHECK(fdtable_dup(&t, 5, 0, 0) == -EBADF);
    CHECK(fdtable_dup(&t, fd, NOM_FD_MAX, 0) == -EINVAL);
    return 1;
}

static int full_table_says_emfile(void)
{
    static struct nom_fdtable t;
    for (int i = 0; i < NOM_FD_MAX; i++)
        CHECK(fdtable_install(&t, &kind_a, NULL) == i);
    CHECK(fdtable_install(&t, &kind_a, NULL) == -EMFILE);
    CHECK(fdtable_dup(&t, 0, 0, 0) == -EMFILE);
    for (int i = 0; i < NOM_FD_MAX; i++)
        fdtable_file_free(fdtable_remove(&t, i));
    return 1;
}

int main(void)
{
    RUN(lowest_free_descriptor_is_used);
    RUN(dup_shares_the_open_file);
    RUN(full_table_says_emfile);
    return failures != 0;
}
