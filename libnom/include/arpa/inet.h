/*
 * <arpa/inet.h> for nom: address conversions. They are implemented by net/ (net/inet.c, on
 * lwIP's parser and printer; IPv4), linked by every application that links the network stack.
 */
#ifndef NOM_ARPA_INET_H
#define NOM_ARPA_INET_H

#include <netinet/in.h>
#include <sys/cdefs.h>

__BEGIN_DECLS
/* Text to binary: 1 on success, 0 if src is not an address of af, -1 with EAFNOSUPPORT. */
int inet_pton(int af, const char *src, void *dst);
/* Binary to text: dst, or NULL with EAFNOSUPPORT or ENOSPC (size too small). */
const char *inet_ntop(int af, const void *src, char *dst, socklen_t size);
/* Dotted quad to network-order address; INADDR_NONE if malformed. */
in_addr_t inet_addr(const char *cp);
/* Dotted quad to *inp; 1 on success, 0 if malformed. */
int inet_aton(const char *cp, struct in_addr *inp);
/* Network-order address to a dotted quad in a per-thread buffer. */
char *inet_ntoa(struct in_addr in);
__END_DECLS

#endif /* NOM_ARPA_INET_H */
