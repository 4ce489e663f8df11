/*
 * <poll.h> for nom (newlib has none): poll() over libnom's one descriptor table (pipes,
 * console, sockets alike). Constants have Linux's values, which ported code may hardcode.
 */
#ifndef NOM_POLL_H
#define NOM_POLL_H

#include <sys/cdefs.h>

#define POLLIN     0x001
#define POLLPRI    0x002
#define POLLOUT    0x004
#define POLLERR    0x008
#define POLLHUP    0x010
#define POLLNVAL   0x020
#define POLLRDNORM 0x040
#define POLLRDBAND 0x080
#define POLLWRNORM 0x100
#define POLLWRBAND 0x200

typedef unsigned long nfds_t;

struct pollfd {
    int fd;
    short events;
    short revents;
};

__BEGIN_DECLS
/* Waits up to timeout ms (-1: forever) for events on fds; returns how many have revents.
 * -1 with EINVAL (nfds too large) or EFAULT. */
int poll(struct pollfd *fds, nfds_t nfds, int timeout);
__END_DECLS

#endif /* NOM_POLL_H */
