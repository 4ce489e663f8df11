/*
 * libnom's <sys/select.h>: newlib's, with FD_SETSIZE raised from 64 to 1024 (libnom's
 * descriptor table has 1024 slots; memcached and libevent keep hundreds of sockets).
 * select() and pselect() are libnom's (src/poll.c) and cover every kind of descriptor.
 */
#ifndef NOM_SYS_SELECT_H
#define NOM_SYS_SELECT_H

#ifndef FD_SETSIZE
#define FD_SETSIZE 1024
#endif
#include_next <sys/select.h>

#endif /* NOM_SYS_SELECT_H */
