/* <sys/un.h> for nom: the Unix-domain address type with Linux's layout. nom has no file
 * system, so such sockets are not supported (socket(AF_UNIX) fails with EAFNOSUPPORT); the
 * type exists because ported programs compile code paths that mention it. */
#ifndef NOM_SYS_UN_H
#define NOM_SYS_UN_H

#include <sys/socket.h>

struct sockaddr_un {
    sa_family_t sun_family;
    char sun_path[108];
};

#endif /* NOM_SYS_UN_H */
