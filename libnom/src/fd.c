/* fd.c: the one descriptor table (nom/fd.h) and the POSIX calls that go through it. A
 * descriptor points to an open file (shared by dup), which holds the kind's ops and priv and
 * the status flags (O_NONBLOCK). Kinds are non-blocking; blocking is done here, once, by
 * waiting on the table's wait queue until the kind's poll() reports readiness. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <nom/fd.h>
#include <nom/sched.h>
#include "fdtable.h"
#include "libnom.h"

static struct nom_fdtable table;
static struct nom_waitq fd_events;
static uint64_t fd_event_seq; /* events signalled so far (fd_event_files): transfer's test */

struct nom_fdtable *fd_table(void) { return &table; }

static int fail(int err)
{
    errno = err;
    return -1;
}

int nom_fd_install(const struct nom_file_ops *ops, void *priv)
{
    preempt_off();
    int fd = fdtable_install(&table, ops, priv);
    preempt_on();
    return fd;
}

void *nom_fd_priv(int fd, const struct nom_file_ops *ops)
{
    struct nom_file *f = fdtable_get(&table, fd);
    return f && f->ops == ops ? f->priv : NULL;
}

void fd_event_files(const void *const *privs, size_t n)
{
    preempt_off(); /* epoll's lists, as every epoll call holds it */
    for (size_t i = 0; i < n; i++)
        epoll_file_event(privs[i]);
    fd_event_seq++;
    preempt_on();
    sched_wake_ready(&fd_events); /* once: poll()'s waiters look at every file anyway */
}

void nom_fd_event(const void *priv)
{
    fd_event_files(&priv, priv ? 1 : 0);
}

int nom_fd_nonblocking(int fd)
{
    struct nom_file *f = fdtable_get(&table, fd);
    return f ? (f->status & O_NONBLOCK) != 0 : -EBADF;
}

int fd_wait_event(uint64_t deadline_tsc, int (*ready)(void *), void *arg)
{
    return sched_wait_ready(&fd_events, deadline_tsc, ready, arg);
}

struct fd_interest {
    int fd;
    short events;
    int seen; /* fd_ready_test's last answer: the waker's, when it woke us */
};

/* The revents of one descriptor for events; -EBADF if it is not open. */
static int fd_ready(const struct fd_interest *in)
{
    struct nom_file *f = fdtable_get(&table, in->fd);
    if (!f)
        return -EBADF;
    short rev = f->ops->poll ? f->ops->poll(f->priv) : (POLLIN | POLLOUT);
    return rev & (in->events | POLLERR | POLLHUP | POLLNVAL);
}

static int fd_ready_test(void *arg)
{
    struct fd_interest *in = arg;
    return (in->seen = fd_ready(in)) != 0;
}

/* Waits, preemption off, until the file is ready for in->events or the deadline passes;
 * ret is its readiness when the wait starts (0: not ready). Woken by an event, the waiter
 * takes the readiness its waker found (sched_wake_ready ran fd_ready_test to decide to wake
 * it) instead of asking the file again: one readiness call per blocking wait less (issue 16).
 * The caller retries its operation anyway, so readiness taken meanwhile by another thread
 * costs only that retry. */
static int fd_wait_from(struct fd_interest *in, int ret, uint64_t deadline_tsc)
{
    while (ret == 0) {
        in->seen = 0;
        if (fd_wait_event(deadline_tsc, fd_ready_test, in) != 0)
            return -ETIMEDOUT;
        ret = in->seen ? in->seen : fd_ready(in);
    }
    return ret;
}

int nom_fd_wait(int fd, short events, uint64_t deadline_tsc)
{
    struct fd_interest in = { fd, events, 0 };
    preempt_off();
    int ret = fd_wait_from(&in, fd_ready(&in), deadline_tsc);
    preempt_on();
    return ret;
}

/* The last reference went: epoll sets forget the file first, as Linux's do at its last close
 * (the kind's close may free what their poll would read), then the kind closes it. Out of
 * line, so that file_put's common case stays inlined in read and write. */
static __attribute__((noinline)) int file_release(struct nom_file *f)
{
    preempt_off();
    epoll_file_gone(f);
    preempt_on();
    int r = f->ops->close ? f->ops->close(f->priv) : 0;
    fdtable_file_free(f);
    return r;
}

static int file_put(struct nom_file *f)
{
    preempt_off();
    int last = --f->refs == 0;
    preempt_on();
    return last ? file_release(f) : 0;
}

static inline __attribute__((always_inline)) ssize_t file_op(struct nom_file *f, void *buf,
                                                          size_t n, int writing)
{
    if (writing)
        return f->ops->write ? f->ops->write(f->priv, buf, n) : -EINVAL;
    return f->ops->read ? f->ops->read(f->priv, buf, n) : -EINVAL;
}

/* transfer's answer when it waited for a blocking read (see there): try again. */
#define TRANSFER_WAITED (-(ssize_t)0x7fffffff)

/* Out of line, so that transfer's common path keeps its few registers (inlined, the wait made
 * every transfer save and restore more of them: +48 instructions per NetPIPE message). */
static __attribute__((noinline)) ssize_t wait_readable(int fd, int ask_first)
{
    struct fd_interest in = { fd, POLLIN, 0 };
    int w = fd_wait_from(&in, ask_first ? fd_ready(&in) : 0, 0);
    return w < 0 ? w : TRANSFER_WAITED;
}

/* One attempt of a read or write; -EAGAIN when it would block. The operation holds a
 * reference to the open file, so that another thread closing the descriptor meanwhile cannot
 * free the file under it (the last reference closes it). A kind whose ops run with preemption
 * off (NOM_FILE_PREEMPT_OFF: sockets) is called inside the table lookup's own preempt_off,
 * with no reference taken: no other thread runs until it returns, and a socket call saves a
 * reference, a release and two preemption toggles (issue 16).
 *
 * With read_waits, a blocking read of such a kind that would block also waits here, still
 * inside that preempt_off, and returns TRANSFER_WAITED: nothing ran since the kind said
 * -EAGAIN, so unless it signalled an event during the call (a socket's read ends its stack's
 * batch, which can take in data), the file is known not readable (nom/fd.h's promise) and the
 * wait starts without asking the file first: a readiness call less per blocking read, about
 * 50 instructions per NetPIPE message (issue 16). Writes keep the general path: a socket's
 * write can say -EAGAIN (lwIP's heap exhausted) while its poll reports POLLOUT. Inline, so
 * that read's and write's copies hold only their own case (one shared copy saved and restored
 * more registers than either needs). */
static inline __attribute__((always_inline)) ssize_t transfer(int fd, void *buf, size_t n,
                                                              int writing, int *nonblocking,
                                                              int read_waits)
{
    preempt_off();
    struct nom_file *f = fdtable_get(&table, fd);
    if (f && (f->ops->flags & NOM_FILE_PREEMPT_OFF)) {
        *nonblocking = (f->status & O_NONBLOCK) != 0;
        uint64_t seq = fd_event_seq;
        ssize_t r = file_op(f, buf, n, writing);
        if (r == -EAGAIN && read_waits && !*nonblocking)
            r = wait_readable(fd, seq != fd_event_seq);
        preempt_on();
        return r;
    }
    if (f)
        f->refs++;
    preempt_on();
    if (!f)
        return -EBADF;
    ssize_t r = file_op(f, buf, n, writing);
    *nonblocking = (f->status & O_NONBLOCK) != 0;
    file_put(f);
    return r;
}

ssize_t read(int fd, void *buf, size_t n)
{
    int nonblocking;
    for (;;) {
        ssize_t r = transfer(fd, buf, n, 0, &nonblocking, 1);
        if (r >= 0)
            return r;
        if (r == TRANSFER_WAITED)
            continue;
        if (r != -EAGAIN || nonblocking)
            return fail((int)-r);
        int w = nom_fd_wait(fd, POLLIN, 0);
        if (w < 0)
            return fail(-w);
    }
}

/* A blocking write transfers everything (POSIX; pipes then stay atomic up to PIPE_BUF). */
ssize_t write(int fd, const void *buf, size_t n)
{
    size_t done = 0;
    int nonblocking;
    for (;;) {
        ssize_t r = transfer(fd, (char *)buf + done, n - done, 1, &nonblocking, 0);
        if (r >= 0)
            done += (size_t)r;
        else if (r != -EAGAIN || nonblocking)
            return done ? (ssize_t)done : fail((int)-r);
        if (done == n || nonblocking)
            return (ssize_t)done;
        int w = nom_fd_wait(fd, POLLOUT, 0);
        if (w < 0)
            return done ? (ssize_t)done : fail(-w);
    }
}

/* Scatter/gather as a sequence of reads or writes. A blocking writev writes everything, as
 * write does; readv blocks only until some data came (POSIX read semantics), so once it has
 * data it only takes what is already there. */
static ssize_t iov_transfer(int fd, const struct iovec *iov, int iovcnt, int writing)
{
    if (iovcnt < 0 || iovcnt > IOV_MAX)
        return fail(EINVAL);
    ssize_t total = 0;
    int nonblocking;
    for (int i = 0; i < iovcnt; i++) {
        if (iov[i].iov_len == 0)
            continue;
        ssize_t r;
        if (writing)
            r = write(fd, iov[i].iov_base, iov[i].iov_len);
        else if (total == 0)
            r = read(fd, iov[i].iov_base, iov[i].iov_len);
        else if ((r = transfer(fd, iov[i].iov_base, iov[i].iov_len, 0, &nonblocking, 0)) < 0)
            break;
        if (r < 0)
            return total ? total : -1;
        total += r;
        if ((size_t)r < iov[i].iov_len)
            break;
    }
    return total;
}

ssize_t readv(int fd, const struct iovec *iov, int iovcnt)
{
    return iov_transfer(fd, iov, iovcnt, 0);
}

ssize_t writev(int fd, const struct iovec *iov, int iovcnt)
{
    return iov_transfer(fd, iov, iovcnt, 1);
}

int close(int fd)
{
    preempt_off();
    struct nom_file *f = fdtable_remove(&table, fd);
    preempt_on();
    if (!f)
        return fail(EBADF);
    int r = file_put(f);
    nom_fd_event(NULL); /* pollers of a closed descriptor must see POLLNVAL */
    return r < 0 ? fail(-r) : 0;
}

int dup(int fd)
{
    preempt_off();
    int r = fdtable_dup(&table, fd, 0, 0);
    preempt_on();
    return r < 0 ? fail(-r) : r;
}

int dup2(int fd, int to)
{
    if (fd == to)
        return fdtable_get(&table, fd) ? to : fail(EBADF);
    if (to >= 0 && to < NOM_FD_MAX && fdtable_get(&table, to))
        close(to);
    preempt_off();
    int r = fdtable_dup(&table, fd, to, 1);
    preempt_on();
    return r < 0 ? fail(-r) : r;
}

int fcntl(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    long arg = va_arg(ap, long);
    va_end(ap);
    struct nom_file *f = fdtable_get(&table, fd);
    if (!f)
        return fail(EBADF);
    switch (cmd) {
    case F_GETFL:
        return f->status | O_RDWR;
    case F_SETFL:
        f->status = (int)(arg & O_NONBLOCK);
        return 0;
    case F_GETFD:
    case F_SETFD:
        return 0; /* no exec on nom: FD_CLOEXEC has no effect */
    case F_DUPFD: {
        preempt_off();
        int r = fdtable_dup(&table, fd, (int)arg, 0);
        preempt_on();
        return r < 0 ? fail(-r) : r;
    }
    default:
        if (!f->ops->fcntl)
            return fail(EINVAL);
        int r = f->ops->fcntl(f->priv, cmd, arg);
        return r < 0 ? fail(-r) : r;
    }
}

int ioctl(int fd, unsigned long request, ...)
{
    va_list ap;
    va_start(ap, request);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    struct nom_file *f = fdtable_get(&table, fd);
    if (!f)
        return fail(EBADF);
    if (request == FIONBIO) {
        f->status = *(int *)arg ? O_NONBLOCK : 0;
        return 0;
    }
    if (!f->ops->ioctl)
        return fail(ENOTTY);
    int r = f->ops->ioctl(f->priv, request, arg);
    return r < 0 ? fail(-r) : r;
}

off_t lseek(int fd, off_t off, int whence)
{
    (void)off;
    (void)whence;
    return fdtable_get(&table, fd) ? fail(ESPIPE) : fail(EBADF);
}

/* st_mode by kind: the console is a character device, pipes are FIFOs, and every other kind
 * (net/'s sockets are the only other kind) is a socket. */
int fstat(int fd, struct stat *st)
{
    struct nom_file *f = fdtable_get(&table, fd);
    if (!f)
        return fail(EBADF);
    *st = (struct stat){ 0 };
    st->st_mode = fd_kind_mode(f->ops) | 0600;
    st->st_blksize = 4096;
    return 0;
}

int isatty(int fd)
{
    struct nom_file *f = fdtable_get(&table, fd);
    if (!f)
        return fail(EBADF);
    return S_ISCHR(fd_kind_mode(f->ops)) ? 1 : fail(ENOTTY);
}
