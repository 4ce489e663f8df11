/*
 * libnom's <sys/select.h>: newlib's, with FD_SETSIZE raised from 64 to 1024, as on Linux
 * (memcached and libevent keep hundreds of sockets). libnom's descriptor table has 4096 slots;
 * select() covers the first FD_SETSIZE of them (EINVAL beyond), poll() covers all.
 * select() and pselect() are libnom's (src/poll.c) and cover every kind of descriptor.
 */
#ifndef NOM_SYS_SELECT_H
#define NOM_SYS_SELECT_H

#ifndef FD_SETSIZE
#define FD_SETSIZE 1024
#endif
#include_next <sys/select.h>

#endif /* NOM_SYS_SELECT_H */
