/*
 * np_args.h: nom's own words on NPtcp's command line (apps/netpipe/README.md, "Command line").
 *
 *   NPtcp [net/'s options] [--batching-delay=US] [--repeat] [--quiet] [NPtcp options]
 *         [--and NPtcp options]...
 *
 * Contract. NPtcp's options are NetPIPE's, unchanged, so that a host NPtcp given the same options
 * talks to nom's. nom adds: --batching-delay=US (W, net/'s option: nom_net_start() takes it out
 * of argv before these functions see it), --repeat (serve run after
 * run: NetPIPE's receiver serves one transmitter and ends) and --and (starts another receiver's
 * option set: each set is one NetPIPE receiver, all running at once, e.g. ping-pong on 5002 and
 * streaming on 5003) and --quiet (drop NetPIPE's own console output, np_run.h). --repeat and
 * --quiet may stand anywhere and apply to every set. Both functions only rearrange argv's
 * pointers; the strings stay argv's (never freed).
 */
#ifndef NP_ARGS_H
#define NP_ARGS_H

/* One receiver's command line: argv[0] is the program's name, argv[argc] is NULL. */
struct np_server {
    int argc;
    char **argv;
};

struct np_cmdline {
    int repeat;                 /* --repeat given */
    int quiet;                  /* --quiet given */
    int nservers;               /* at least 1 */
    struct np_server *servers;  /* nservers entries, malloc'd with their argv arrays */
};

/* Splits argv (net/'s options already removed) into receivers at each --and and takes
 * --repeat and --quiet out. A command line without options is one receiver with NetPIPE's defaults.
 * Returns 0; -EINVAL when a set is empty (--and first, last or doubled); -ENOMEM. */
int np_args_parse(int argc, char **argv, struct np_cmdline *out);

/* Frees what np_args_parse() allocated (not argv's strings) and empties *cmd. Never fails. */
void np_args_free(struct np_cmdline *cmd);

#endif /* NP_ARGS_H */
