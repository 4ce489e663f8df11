/*
 * nom/fd.h: libnom's one file-descriptor table. Pipes, the console and (from net/) sockets are
 * all "file kinds" in it, so read/write/close/poll/select/fcntl cover every descriptor
 * (memcached wakes its threads through a pipe watched by libevent next to its sockets).
 *
 * Contract for a file kind: every op is NON-BLOCKING and returns >= 0 or a negated errno
 * (-EAGAIN when it would block). libnom's read()/write() turn -EAGAIN into blocking for
 * descriptors without O_NONBLOCK by waiting until poll() reports readiness; a kind calls
 * nom_fd_event(priv) whenever its readiness may have gained a bit (data arrived, space freed,
 * peer closed), from any context but the raw upcall: it must not miss a gained bit, since
 * epoll asks a file again only after such an event (level-triggered sets keep a ready file
 * until it is found not ready), and may report more (a call that gains nothing costs only
 * the waiters' checks). poll() returns the current POLLIN / POLLOUT / POLLERR / POLLHUP bits,
 * must be cheap and must not block; libnom calls it with preemption disabled (poll, select,
 * epoll and blocking I/O check readiness and start waiting atomically), so it needs no lock of
 * its own against the core's other threads. close() is called once, when the last descriptor
 * referring to the file is closed. ioctl and fcntl may be NULL (-ENOTTY / -EINVAL);
 * O_NONBLOCK is kept by the table (F_GETFL/F_SETFL), and a kind may ask for it with
 * nom_fd_nonblocking(). The other ops run in thread context with preemption enabled, except
 * read and write of a kind that sets NOM_FILE_PREEMPT_OFF in flags: those run with preemption
 * disabled (they must neither block nor enable it), which is what such a kind would do inside
 * them anyway (sockets run the stack so), and libnom then calls them without taking a
 * reference to the open file: no other thread can close it while preemption stays off.
 * Such a kind also promises that its read says -EAGAIN only when its poll would report none
 * of POLLIN, POLLERR and POLLHUP, unless it signalled an event (nom_fd_event) during the call:
 * a blocking read then waits without polling first (fd.c).
 */
#ifndef NOM_FD_H
#define NOM_FD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct nom_file_ops {
    ssize_t (*read)(void *priv, void *buf, size_t n);
    ssize_t (*write)(void *priv, const void *buf, size_t n);
    int (*close)(void *priv);
    short (*poll)(void *priv);
    int (*ioctl)(void *priv, unsigned long request, void *arg);
    int (*fcntl)(void *priv, int cmd, long arg);
    unsigned flags; /* NOM_FILE_* */
};

/* read and write run with preemption disabled (the contract above). */
#define NOM_FILE_PREEMPT_OFF 1u

/* Installs a file in the lowest free descriptor; returns it, or -EMFILE (table full). */
int nom_fd_install(const struct nom_file_ops *ops, void *priv);
/* The file's priv if fd is open and of kind ops, else NULL. */
void *nom_fd_priv(int fd, const struct nom_file_ops *ops);
/* Readiness of the file(s) with this priv may have gained a bit (NULL: of no one file, e.g. a
 * descriptor closed): epoll sets watching them take them as candidates, and threads in
 * poll/select/blocking I/O look again. */
void nom_fd_event(const void *priv);
/* 1 if fd has O_NONBLOCK, 0 if not, -EBADF. */
int nom_fd_nonblocking(int fd);
/* Blocks until fd's poll() has one of events (or POLLERR/POLLHUP/POLLNVAL) or the TSC reaches
 * deadline_tsc (0: never). Returns the revents (> 0), -ETIMEDOUT, or -EBADF. */
int nom_fd_wait(int fd, short events, uint64_t deadline_tsc);

#endif /* NOM_FD_H */
