/* addrinfo.c: getaddrinfo/freeaddrinfo/gai_strerror for numeric IPv4 hosts and ports
 * (issue 4: no DNS; "localhost" is the one name, as every hosts file has it). */
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <netdb.h>

/* One allocation per result: the addrinfo, its sockaddr_in and the canonical name. */
struct addrinfo_block {
    struct addrinfo ai;
    struct sockaddr_in sin;
};

static int parse_port(const char *service, int flags, uint16_t *port)
{
    char *end;
    long v;
    (void)flags;
    if (service == NULL) {
        *port = 0;
        return 0;
    }
    v = strtol(service, &end, 10);
    if (*service == '\0' || *end != '\0' || v < 0 || v > 65535)
        return EAI_SERVICE; /* no services database */
    *port = (uint16_t)v;
    return 0;
}

static int parse_host(const char *node, int flags, struct in_addr *addr)
{
    if (node == NULL) {
        addr->s_addr = htonl((flags & AI_PASSIVE) ? INADDR_ANY : INADDR_LOOPBACK);
        return 0;
    }
    if (inet_aton(node, addr))
        return 0;
    if (!(flags & AI_NUMERICHOST) && strcmp(node, "localhost") == 0) {
        addr->s_addr = htonl(INADDR_LOOPBACK);
        return 0;
    }
    return EAI_NONAME;
}

static struct addrinfo *new_result(int socktype, int protocol, struct in_addr addr,
                                   uint16_t port, const char *canon)
{
    struct addrinfo_block *b = calloc(1, sizeof *b);
    if (b == NULL)
        return NULL;
    b->sin.sin_family = AF_INET;
    b->sin.sin_port = htons(port);
    b->sin.sin_addr = addr;
    b->ai.ai_family = AF_INET;
    b->ai.ai_socktype = socktype;
    b->ai.ai_protocol = protocol;
    b->ai.ai_addrlen = sizeof b->sin;
    b->ai.ai_addr = (struct sockaddr *)&b->sin;
    if (canon != NULL && (b->ai.ai_canonname = strdup(canon)) == NULL) {
        free(b);
        return NULL;
    }
    return &b->ai;
}

int getaddrinfo(const char *node, const char *service,
                                     const struct addrinfo *hints, struct addrinfo **res)
{
    static const struct addrinfo none;
    const struct addrinfo *h = hints ? hints : &none;
    static const int types[2][2] = { { SOCK_STREAM, IPPROTO_TCP }, { SOCK_DGRAM, IPPROTO_UDP } };
    struct addrinfo *head = NULL, **tail = &head;
    struct in_addr addr;
    uint16_t port;
    int r;

    if (node == NULL && service == NULL)
        return EAI_NONAME;
    if (h->ai_family != AF_UNSPEC && h->ai_family != AF_INET)
        return EAI_FAMILY;
    if (h->ai_socktype != 0 && h->ai_socktype != SOCK_STREAM && h->ai_socktype != SOCK_DGRAM)
        return EAI_SOCKTYPE;
    if ((r = parse_host(node, h->ai_flags, &addr)) != 0 ||
        (r = parse_port(service, h->ai_flags, &port)) != 0)
        return r;
    for (int i = 0; i < 2; i++) {
        if (h->ai_socktype != 0 && h->ai_socktype != types[i][0])
            continue;
        *tail = new_result(types[i][0], types[i][1], addr, port,
                           (h->ai_flags & AI_CANONNAME) && head == NULL ? node : NULL);
        if (*tail == NULL) {
            freeaddrinfo(head);
            return EAI_MEMORY;
        }
        tail = &(*tail)->ai_next;
    }
    *res = head;
    return 0;
}

void freeaddrinfo(struct addrinfo *ai)
{
    while (ai != NULL) {
        struct addrinfo *next = ai->ai_next;
        free(ai->ai_canonname);
        free(ai); /* the head of its addrinfo_block */
        ai = next;
    }
}

const char *gai_strerror(int code)
{
    switch (code) {
    case 0:            return "Success";
    case EAI_NONAME:   return "Name does not resolve (numeric hosts only)";
    case EAI_SERVICE:  return "Service not supported (numeric ports only)";
    case EAI_FAMILY:   return "Address family not supported";
    case EAI_SOCKTYPE: return "Socket type not supported";
    case EAI_MEMORY:   return "Out of memory";
    case EAI_AGAIN:    return "Temporary failure in name resolution";
    case EAI_FAIL:     return "Non-recoverable failure in name resolution";
    case EAI_BADFLAGS: return "Invalid flags";
    default:           return "Unknown error";
    }
}
