/* console.c: descriptors 0, 1 and 2 are the serial console (NOM_SYS_CONSOLE_WRITE). There is
 * no console input on nom: reading stdin gives end-of-file. */
#include <errno.h>
#include <poll.h>
#include <sys/stat.h>
#include <nom/fd.h>
#include <nom/syscall.h>
#include "fdtable.h"
#include "libnom.h"

int fd_kind_is_pipe(const struct nom_file_ops *ops); /* pipe.c */

static ssize_t console_read(void *priv, void *buf, size_t n)
{
    (void)priv, (void)buf, (void)n;
    return 0;
}

static ssize_t console_write(void *priv, const void *buf, size_t n)
{
    (void)priv;
    int64_t r = nom_sys_console_write(buf, n);
    return r < 0 ? -nom_errno_from(r) : (ssize_t)r;
}

static short console_poll(void *priv)
{
    (void)priv;
    return POLLIN | POLLOUT;
}

static const struct nom_file_ops console_ops = {
    .read = console_read, .write = console_write, .poll = console_poll,
};

unsigned fd_kind_mode(const struct nom_file_ops *ops)
{
    if (ops == &console_ops)
        return S_IFCHR;
    return fd_kind_is_pipe(ops) ? S_IFIFO : S_IFSOCK;
}

void fd_init(void)
{
    for (int fd = 0; fd < 3; fd++)
        if (nom_fd_install(&console_ops, NULL) != fd)
            nom_panic("cannot install the console descriptors");
}
