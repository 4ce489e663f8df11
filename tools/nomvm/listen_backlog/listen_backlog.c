/* Preloaded into the QEMU that tools/nomvm starts with user networking (LD_PRELOAD).
 *
 * Why: QEMU's user networking is libslirp, and libslirp 4.7 (Debian 12's libslirp0) listens on
 * every forwarded host port with a backlog of one (socket.c, tcp_listen: listen(s, 1)). When a
 * client opens several connections at once (memcslap --concurrency=4, wrk -c8 before its first
 * request), the host kernel's accept queue for that port overflows before QEMU's main loop
 * accepts, the SYN is dropped (TcpExtListenOverflows) and the client's connect waits for its
 * SYN retransmission: one second. The guest never sees those connections late; the delay is the
 * host side's. Raising the backlog here, instead of patching and building libslirp, keeps the
 * stock QEMU and libslirp that `make run` promises.
 *
 * What: every listen() of the process gets a backlog of at least MIN_BACKLOG; the kernel caps it
 * at net.core.somaxconn. Nothing else changes. */
#include <dlfcn.h>
#include <errno.h>
#include <sys/socket.h>

enum { MIN_BACKLOG = SOMAXCONN };

int listen(int fd, int backlog)
{
    static int (*real_listen)(int, int);
    if (!real_listen) {
        real_listen = (int (*)(int, int))dlsym(RTLD_NEXT, "listen");
        if (!real_listen) {
            errno = ENOSYS;
            return -1;
        }
    }
    return real_listen(fd, backlog < MIN_BACKLOG ? MIN_BACKLOG : backlog);
}
