/*
 * <netdb.h> for nom: name and service translation with Linux's layouts and constants. nom has
 * no resolver: getaddrinfo handles numeric hosts and services (and a NULL host with
 * AI_PASSIVE, and "localhost"); anything else fails with EAI_NONAME. Implemented by net/
 * (net/addrinfo.c) with the rest of the socket API. The older calls NetPIPE uses,
 * gethostbyname (numeric IPv4 and "localhost" only) and getprotobyname/-bynumber (ip, icmp,
 * tcp, udp), are libnom's (src/netdb.c).
 */
#ifndef NOM_NETDB_H
#define NOM_NETDB_H

#include <netinet/in.h>
#include <sys/cdefs.h>
#include <sys/socket.h>

struct addrinfo {
    int ai_flags;
    int ai_family;
    int ai_socktype;
    int ai_protocol;
    socklen_t ai_addrlen;
    struct sockaddr *ai_addr;
    char *ai_canonname;
    struct addrinfo *ai_next;
};

struct hostent {
    char *h_name;
    char **h_aliases;
    int h_addrtype;
    int h_length;
    char **h_addr_list;
};
#define h_addr h_addr_list[0]

struct servent {
    char *s_name;
    char **s_aliases;
    int s_port;
    char *s_proto;
};

struct protoent {
    char *p_name;
    char **p_aliases;
    int p_proto;
};

#define AI_PASSIVE 0x0001
#define AI_CANONNAME 0x0002
#define AI_NUMERICHOST 0x0004
#define AI_V4MAPPED 0x0008
#define AI_ALL 0x0010
#define AI_ADDRCONFIG 0x0020
#define AI_NUMERICSERV 0x0400

#define NI_NUMERICHOST 1
#define NI_NUMERICSERV 2
#define NI_NOFQDN 4
#define NI_NAMEREQD 8
#define NI_DGRAM 16
#define NI_MAXHOST 1025
#define NI_MAXSERV 32

#define EAI_BADFLAGS -1
#define EAI_NONAME -2
#define EAI_AGAIN -3
#define EAI_FAIL -4
#define EAI_FAMILY -6
#define EAI_SOCKTYPE -7
#define EAI_SERVICE -8
#define EAI_MEMORY -10
#define EAI_SYSTEM -11
#define EAI_OVERFLOW -12

#define HOST_NOT_FOUND 1
#define TRY_AGAIN 2
#define NO_RECOVERY 3
#define NO_DATA 4

__BEGIN_DECLS
/* 0, or an EAI_* code (EAI_NONAME for names needing a resolver). Free with freeaddrinfo. */
int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
                struct addrinfo **res);
void freeaddrinfo(struct addrinfo *res);
/* Text for an EAI_* code. */
const char *gai_strerror(int code);
/* A dotted quad or "localhost" as a static hostent; NULL with h_errno HOST_NOT_FOUND for
 * anything else (no resolver on nom). Not thread-safe (POSIX allows it). */
struct hostent *gethostbyname(const char *name);
/* The protocol table's ip, icmp, tcp and udp entries; NULL if not one of them. */
struct protoent *getprotobyname(const char *name);
struct protoent *getprotobynumber(int proto);
extern int h_errno;
__END_DECLS

#endif /* NOM_NETDB_H */
