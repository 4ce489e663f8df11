/* netdb.c: the pre-getaddrinfo lookups (NetPIPE's NPtcp uses them) over what nom has: numeric
 * addresses (inet_aton, inet.c) and a four-line protocol table. No resolver, no files. */
#include <arpa/inet.h>
#include <netdb.h>
#include <string.h>

int h_errno;

static char *no_aliases[] = { NULL };
static struct protoent protocols[] = {
    { "ip", no_aliases, IPPROTO_IP },
    { "icmp", no_aliases, IPPROTO_ICMP },
    { "tcp", no_aliases, IPPROTO_TCP },
    { "udp", no_aliases, IPPROTO_UDP },
};

struct protoent *getprotobyname(const char *name)
{
    for (unsigned i = 0; i < sizeof protocols / sizeof protocols[0]; i++)
        if (strcmp(protocols[i].p_name, name) == 0)
            return &protocols[i];
    return NULL;
}

struct protoent *getprotobynumber(int proto)
{
    for (unsigned i = 0; i < sizeof protocols / sizeof protocols[0]; i++)
        if (protocols[i].p_proto == proto)
            return &protocols[i];
    return NULL;
}

struct hostent *gethostbyname(const char *name)
{
    static struct in_addr addr;
    static char *addr_list[] = { (char *)&addr, NULL };
    static char host_name[64];
    static struct hostent host = { host_name, no_aliases, AF_INET, sizeof addr, addr_list };
    if (strcmp(name, "localhost") == 0)
        addr.s_addr = htonl(INADDR_LOOPBACK);
    else if (!inet_aton(name, &addr)) {
        h_errno = HOST_NOT_FOUND;
        return NULL;
    }
    strncpy(host_name, name, sizeof host_name - 1);
    return &host;
}
