/*
 * <net/if.h> for nom: interface names. A nom application's network interfaces are its NICs,
 * driven by its own stack (net/), and have no names in any namespace: if_nametoindex() finds
 * none (returns 0 with ENXIO), if_indextoname() likewise (NULL with ENXIO). libevent needs the
 * declarations for IPv6 scope ids. Implemented in src/process.c.
 */
#ifndef NOM_NET_IF_H
#define NOM_NET_IF_H

#include <sys/cdefs.h>

#define IF_NAMESIZE 16
#define IFNAMSIZ IF_NAMESIZE

__BEGIN_DECLS
unsigned if_nametoindex(const char *name);
char *if_indextoname(unsigned index, char *name);
__END_DECLS

#endif /* NOM_NET_IF_H */
