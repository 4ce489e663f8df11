/*
 * <sys/uio.h> for nom (newlib has none): scatter/gather I/O. readv/writev are libnom's and work
 * on every descriptor (src/fd.c); sockets' sendmsg/recvmsg use struct iovec too.
 */
#ifndef NOM_SYS_UIO_H
#define NOM_SYS_UIO_H

#include <sys/cdefs.h>
#include <sys/types.h>

struct iovec {
    void *iov_base;
    size_t iov_len;
};

#define IOV_MAX 1024
#define UIO_MAXIOV IOV_MAX

__BEGIN_DECLS
/* Like read/write over each buffer in turn; stops early at a short transfer. Errors as
 * read/write, plus EINVAL for iovcnt outside [0, IOV_MAX]. */
ssize_t readv(int fd, const struct iovec *iov, int iovcnt);
ssize_t writev(int fd, const struct iovec *iov, int iovcnt);
__END_DECLS

#endif /* NOM_SYS_UIO_H */
