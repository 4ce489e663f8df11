/* fdtable.h: the descriptor table's data structure (pure code, unit-tested on the host):
 * NOM_FD_MAX slots pointing to reference-counted open files. Callers serialize (fd.c holds
 * preemption off around changes). */
#ifndef NOM_FDTABLE_H
#define NOM_FDTABLE_H

#include <stdint.h>
#include <nom/fd.h>

/* Servers keep thousands of connections (nhttpd's tests open 4,000); select() sees only the
 * first FD_SETSIZE (1024) descriptors, as on Linux, poll() sees them all. */
#define NOM_FD_MAX 4096

struct nom_file {
    const struct nom_file_ops *ops;
    void *priv;
    int refs;   /* descriptors pointing here */
    int status; /* O_NONBLOCK */
};

struct nom_fdtable {
    struct nom_file *slot[NOM_FD_MAX];
};

/* Lowest free descriptor for a new file; fd, or -EMFILE / -ENOMEM. */
int fdtable_install(struct nom_fdtable *t, const struct nom_file_ops *ops, void *priv);
/* The open file of fd, or NULL. Inline: every read, write and readiness test looks one up
 * (six times per NetPIPE message; issue 16). */
static inline struct nom_file *fdtable_get(struct nom_fdtable *t, int fd)
{
    return (unsigned)fd < NOM_FD_MAX ? t->slot[fd] : NULL;
}
/* Detaches fd; returns its file (caller drops the reference) or NULL. */
struct nom_file *fdtable_remove(struct nom_fdtable *t, int fd);
/* New descriptor for fd's file: exactly `to` if exact (must be free), else the lowest >= to.
 * fd, or -EBADF / -EMFILE / -EINVAL. */
int fdtable_dup(struct nom_fdtable *t, int fd, int to, int exact);
/* Frees an open file whose last reference is gone. */
void fdtable_file_free(struct nom_file *f);

/* fd.c / pipe.c / console.c: st_mode file type of a kind. */
unsigned fd_kind_mode(const struct nom_file_ops *ops);
/* fd.c: waits on the table's event queue until ready(arg), evaluated at each
 * nom_fd_event(), says so (poll.c). 0 or -ETIMEDOUT. */
int fd_wait_event(uint64_t deadline_tsc, int (*ready)(void *), void *arg);
struct nom_fdtable *fd_table(void);
/* fd.c: nom_fd_event() for n files at once (a socketpair's pipe makes two ends' readiness):
 * each one's epoll sets, then one wake of the table's waiters. */
void fd_event_files(const void *const *privs, size_t n);

/* epoll.c: a readiness bit of priv's file(s) may have been gained (nom_fd_event); f's last
 * descriptor was closed (called with preemption off); whether ops is epoll's kind. */
void epoll_file_event(const void *priv);
void epoll_file_gone(const struct nom_file *f);
int fd_kind_is_epoll(const struct nom_file_ops *ops);

#endif /* NOM_FDTABLE_H */
