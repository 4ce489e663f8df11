/* <netinet/tcp.h> for nom: TCP socket options with Linux's values (see <sys/socket.h>). */
#ifndef NOM_NETINET_TCP_H
#define NOM_NETINET_TCP_H

#define TCP_NODELAY 1
#define TCP_MAXSEG 2
#define TCP_CORK 3
#define TCP_KEEPIDLE 4
#define TCP_KEEPINTVL 5
#define TCP_KEEPCNT 6

#endif /* NOM_NETINET_TCP_H */
