/*
 * <sys/ioctl.h> for nom: ioctl() on libnom's descriptors (src/fd.c), with Linux's request
 * numbers. FIONBIO is the table's own (it sets O_NONBLOCK like fcntl); every other request
 * goes to the descriptor's kind (nom/fd.h ioctl op; sockets answer FIONREAD), or fails with
 * ENOTTY.
 */
#ifndef NOM_SYS_IOCTL_H
#define NOM_SYS_IOCTL_H

#include <sys/cdefs.h>

#define FIONREAD 0x541B
#define FIONBIO 0x5421

__BEGIN_DECLS
int ioctl(int fd, unsigned long request, ...);
__END_DECLS

#endif /* NOM_SYS_IOCTL_H */
