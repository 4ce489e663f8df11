/*
 * platform.h: the little nhttpd needs that differs between Linux and nom.
 *
 * Contract: everything else in nhttpd is portable C11 + POSIX sockets + poll. Exactly one of
 * platform_linux.c and platform_nom.c is linked. platform_start runs first, before any socket
 * call; the other functions may be called any time after it.
 */
#ifndef NHTTPD_PLATFORM_H
#define NHTTPD_PLATFORM_H

#include <stdint.h>

struct json;

/* Brings the platform up: on nom the network (nom_net_start: NIC, lwIP, addressing), on Linux
 * signal and fd-limit settings. Removes the options it consumed from argv (updating *argc) and
 * leaves nhttpd's own. Returns 0, or -1 after printing why it failed. */
int platform_start(int *argc, char **argv);

/* A monotonic clock in ticks, and its rate (ticks per second, > 0). */
uint64_t platform_ticks(void);
uint64_t platform_ticks_per_sec(void);

/* Adds the platform's members to the /nom/stats object being written: "platform", the
 * batching delay in use, the bandwidth price the application sees, and (nom only) "driver". */
void platform_stats_json(struct json *j);

/* Adds the read-only export of the bulletin board (GET /nom/board) to the object being
 * written: "platform", then on nom "board" (one consistent snapshot: memory, prices, and every
 * application's row, keyed by slot and id); Linux has no board and writes null. */
void platform_board_json(struct json *j);

#endif /* NHTTPD_PLATFORM_H */
