/* nom_main.c: NPtcp's entry on nom. It brings up the application's private network stack (net/,
 * paper 3.6: --ip, --gw, --nic, --batching-delay leave argv there), splits the rest into
 * receivers (np_args.h: --and, --repeat) and runs each receiver in a thread of its own, calling
 * NetPIPE's unmodified main once per run (np_run.h).
 *
 * NetPIPE's receiver serves one transmitter and ends; a nom application that ends is gone, so
 * with --repeat each receiver starts its next run as soon as one ends, whatever the run's
 * status (a transmitter killed mid-run ends the run, not the receiver). A run that ends before
 * any transmitter came (a bad option, a port in use) would fail the same way again: that
 * receiver stops. The application ends when every receiver has stopped, with the first non-zero
 * status (0 if none). Every run's end is one console line:
 * "NPtcp: receiver K: run N ended, status S".
 *
 * Unless the command line fixes W (--batching-delay=US), the profit-maximizing controller runs
 * (nom/adapt.h: --utility=, --adapt, --adapt-mode= leave argv there) with NetPIPE's offline
 * profile (profile/profile.json, measured by tools/profile/sweep.py --app netpipe: streaming as
 * "many", ping-pong as "single"), or learns W online from its own throughput and round trips,
 * seeded from that profile (--adapt-mode=online, libnom/src/profit/README.md). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <nom/adapt.h>
#include <nom/net.h>

#include "np_args.h"
#include "np_run.h"

struct receiver {
    pthread_t thread;
    char label[24];
    struct np_server cmd;
    int repeat;
    int status; /* the last run's */
};

static void *serve(void *arg)
{
    struct receiver *r = arg;
    for (unsigned run = 1;; run++) {
        struct np_run_result res;
        np_run(r->label, run, r->cmd.argc, r->cmd.argv, &res);
        r->status = res.status;
        if (!np_quiet || res.status != 0)
            np_say("NPtcp: %s: run %u ended, status %d\n", r->label, run, res.status);
        if (!r->repeat)
            break;
        if (!res.served) {
            np_say("NPtcp: %s: stops: its run ended before a transmitter came\n", r->label);
            break;
        }
    }
    return NULL;
}

/* Starts one thread per receiver and waits for them all; returns the application's status. */
static int serve_all(const struct np_cmdline *cmd)
{
    struct receiver *rs = calloc((size_t)cmd->nservers, sizeof *rs);
    if (!rs)
        return EX_OSERR;
    int started = 0, status = 0;
    for (; started < cmd->nservers; started++) {
        struct receiver *r = &rs[started];
        snprintf(r->label, sizeof r->label, "receiver %d", started + 1);
        r->cmd = cmd->servers[started];
        r->repeat = cmd->repeat;
        if (pthread_create(&r->thread, NULL, serve, r) != 0) {
            np_say("NPtcp: cannot start %s\n", r->label);
            status = EX_OSERR;
            break;
        }
    }
    for (int i = 0; i < started; i++) {
        pthread_join(rs[i].thread, NULL);
        if (status == 0)
            status = rs[i].status;
    }
    free(rs);
    return status;
}

int main(int argc, char **argv)
{
    int rc = nom_net_start(&argc, argv);
    if (rc != 0) {
        np_say("NPtcp: network start failed: %s\n", strerror(-rc));
        return rc == -EINVAL ? EX_USAGE : EX_OSERR;
    }
    /* The static variants: W fixed by --batching-delay=US, which the stack took (nom/net.h). */
    const struct nom_adapt_stack *stack = nom_adapt_stack();
    int fixed_w = stack && stack->fixed_batching_delay_us && stack->fixed_batching_delay_us() >= 0;
    if (!fixed_w && (rc = nom_adapt_start(&argc, argv, &nom_adapt_profile)) != 0) {
        np_say("NPtcp: the controller did not start: %s\n", strerror(-rc));
        return rc == -EINVAL ? EX_USAGE : EX_OSERR;
    }
    struct np_cmdline cmd;
    rc = np_args_parse(argc, argv, &cmd);
    if (rc == -EINVAL) {
        np_say("NPtcp: usage: NPtcp [--repeat] [NPtcp options] [--and NPtcp options]...: "
               "a receiver's option set is empty\n");
        return EX_USAGE;
    }
    if (rc != 0) {
        np_say("NPtcp: out of memory reading the command line\n");
        return EX_OSERR;
    }
    np_quiet = cmd.quiet;
    return serve_all(&cmd);
}
