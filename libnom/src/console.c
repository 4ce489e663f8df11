/* console.c: descriptors 0, 1 and 2 are the serial console (NOM_SYS_CONSOLE_WRITE). There is
 * no console input on nom: reading stdin gives end-of-file.
 *
 * Lines leave whole. Every application shares the one serial console and the kernel prints
 * each system call's bytes together, so a line written in pieces (newlib flushes a fully
 * buffered stdout in BUFSIZ blocks; programs build a line with several write()s) let another
 * application's output land in its middle. The writer below keeps an unfinished line and sends
 * complete lines with one system call; only a line longer than PENDING_MAX goes out in pieces,
 * and what is left goes out at exit (console_flush). Why here and not a line lock in the
 * kernel: the kernel would have to hold the console from an application's first byte until
 * its newline, and one that never writes the newline (or is killed first) would silence all
 * the others; buffering in the writer costs one copy of a partial line and nobody waits. */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/stat.h>
#include <nom/fd.h>
#include <nom/sched.h>
#include <nom/syscall.h>
#include "fdtable.h"
#include "libnom.h"

#define PENDING_MAX 512

/* The unfinished line of descriptors 1 and 2 (one buffer: their order is kept). Threads share
 * it: changed only with preemption off. */
static char pending[PENDING_MAX];
static size_t npending;

int fd_kind_is_pipe(const struct nom_file_ops *ops); /* pipe.c */

static ssize_t console_read(void *priv, void *buf, size_t n)
{
    (void)priv, (void)buf, (void)n;
    return 0;
}

/* Sends the pending bytes, then s[0, n), as one system call when they fit together. */
static int64_t send_after_pending(const char *s, size_t n)
{
    int64_t r = 0;
    if (npending + n <= PENDING_MAX) {
        memcpy(pending + npending, s, n);
        r = nom_sys_console_write(pending, npending + n);
    } else {
        if (npending)
            nom_sys_console_write(pending, npending);
        if (n)
            r = nom_sys_console_write(s, n);
    }
    npending = 0;
    return r;
}

static ssize_t console_write(void *priv, const void *buf, size_t n)
{
    (void)priv;
    const char *s = buf;
    size_t whole = n; /* through the last newline */
    while (whole > 0 && s[whole - 1] != '\n')
        whole--;
    int64_t r = 0;
    nom_preempt_disable();
    if (whole)
        r = send_after_pending(s, whole);
    if (r >= 0 && n > whole) {
        if (npending + (n - whole) > PENDING_MAX)
            r = send_after_pending(s + whole, n - whole); /* too long to keep whole */
        else {
            memcpy(pending + npending, s + whole, n - whole);
            npending += n - whole;
        }
    }
    nom_preempt_enable();
    return r < 0 ? -nom_errno_from(r) : (ssize_t)n;
}

void console_flush(void)
{
    nom_preempt_disable();
    if (npending)
        send_after_pending("", 0);
    nom_preempt_enable();
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
    if (fd_kind_is_epoll(ops))
        return 0; /* Linux's epoll is an anonymous inode: no file type bits */
    return fd_kind_is_pipe(ops) ? S_IFIFO : S_IFSOCK;
}

void fd_init(void)
{
    for (int fd = 0; fd < 3; fd++)
        if (nom_fd_install(&console_ops, NULL) != fd)
            nom_panic("cannot install the console descriptors");
}
