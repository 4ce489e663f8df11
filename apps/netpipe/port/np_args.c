/* np_args.c: splits nom's NPtcp command line into receivers (np_args.h). Plain C, no nom
 * dependency: tests/test_args.py runs it on the host. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "np_args.h"

#define REPEAT "--repeat"
#define QUIET "--quiet"
#define AND "--and"

/* The set that starts at argv[first] and ends before the next --and (or at argc), without
 * --repeat and --quiet, into *out with argv[0] in front. Returns the index after the set, or
 * -ENOMEM. */
static int take_set(int argc, char **argv, int first, struct np_server *out)
{
    out->argv = calloc((size_t)(argc - first) + 2, sizeof *out->argv);
    if (!out->argv)
        return -ENOMEM;
    out->argv[0] = argv[0];
    out->argc = 1;
    int i = first;
    for (; i < argc && strcmp(argv[i], AND) != 0; i++)
        if (strcmp(argv[i], REPEAT) != 0 && strcmp(argv[i], QUIET) != 0)
            out->argv[out->argc++] = argv[i];
    out->argv[out->argc] = NULL;
    return i;
}

void np_args_free(struct np_cmdline *out)
{
    for (int i = 0; i < out->nservers; i++)
        free(out->servers[i].argv);
    free(out->servers);
    out->servers = NULL;
    out->nservers = 0;
}

int np_args_parse(int argc, char **argv, struct np_cmdline *out)
{
    int sets = 1;
    out->repeat = out->quiet = 0;
    for (int i = 1; i < argc; i++) {
        sets += strcmp(argv[i], AND) == 0;
        out->repeat |= strcmp(argv[i], REPEAT) == 0;
        out->quiet |= strcmp(argv[i], QUIET) == 0;
    }
    out->nservers = 0;
    out->servers = calloc((size_t)sets, sizeof *out->servers);
    if (!out->servers)
        return -ENOMEM;
    for (int next = 1; out->nservers < sets; next++) {
        struct np_server *s = &out->servers[out->nservers];
        int end = take_set(argc, argv, next, s);
        if (end < 0) {
            np_args_free(out);
            return end;
        }
        out->nservers++;
        /* An empty set: nothing but nom's words between two --and (or an edge), and there
         * was an --and, so the user meant a receiver there. */
        if (s->argc == 1 && sets > 1) {
            np_args_free(out);
            return -EINVAL;
        }
        next = end;
    }
    return 0;
}
