/*
 * fake_libnom.h: a host stand-in for the parts of libnom the network stack uses (nom/sched.h,
 * nom/fd.h, nom/time.h), so net/ runs in one host process per simulated machine.
 *
 * One thread, and the scheduler's rule kept: whenever that thread would block (nom_fd_wait,
 * nom_sleep_until), the idle hooks and due timers run, and when they find nothing the process
 * sleeps in poll(2) on the wires registered with fake_sched_watch() until the earliest timer.
 * Descriptors live in a table of our own; the test program reads and writes them with
 * fake_read/fake_write/fake_close/fake_poll, the host build of net/ calls nomfake_fcntl.
 */
#ifndef NOM_NET_FAKE_LIBNOM_H
#define NOM_NET_FAKE_LIBNOM_H

#include <poll.h>
#include <stdint.h>
#include <sys/types.h>

/* Makes the idle loop also wake when host descriptor hostfd is readable. */
void fake_sched_watch(int hostfd);

ssize_t fake_read(int fd, void *buf, size_t n);
ssize_t fake_write(int fd, const void *buf, size_t n);
int fake_close(int fd);
/* poll(2) over the fake table; timeout_ms < 0: forever. */
int fake_poll(struct pollfd *fds, unsigned nfds, int timeout_ms);
int nomfake_fcntl(int fd, int cmd, ...);
/* ioctl(2) over the fake table: the file kind's ioctl op. */
int fake_ioctl(int fd, unsigned long request, void *arg);
/* Runs the stack for ms milliseconds (idle hooks, timers). */
void fake_run_ms(unsigned ms);
/* How many times nom_fd_event() was called. */
uint64_t fake_fd_events(void);

#endif
