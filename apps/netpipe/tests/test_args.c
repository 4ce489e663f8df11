/* test_args.c: host cases of port/np_args.c, one per question, selected by name on the command
 * line (tests/test_args.py runs each); prints "PASS NAME" or a failure and exits non-zero. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "np_args.h"

/* argv words of one receiver, as a space-joined string (argv[0] left out). */
static const char *joined(const struct np_server *s)
{
    static char buf[512];
    buf[0] = '\0';
    for (int i = 1; i < s->argc; i++) {
        strcat(buf, i > 1 ? " " : "");
        strcat(buf, s->argv[i]);
    }
    CHECK(s->argv[s->argc] == NULL);
    return buf;
}

static int parse(char **argv, struct np_cmdline *cmd)
{
    int argc = 0;
    while (argv[argc])
        argc++;
    return np_args_parse(argc, argv, cmd);
}

/* Is a plain NPtcp command line one receiver with exactly its options? */
static void plain_is_one_receiver(void)
{
    char *argv[] = {"NPtcp", "-P", "5002", "-l", "1024", NULL};
    struct np_cmdline cmd;
    CHECK(parse(argv, &cmd) == 0);
    CHECK(cmd.nservers == 1 && !cmd.repeat && !cmd.quiet);
    CHECK(strcmp(cmd.servers[0].argv[0], "NPtcp") == 0);
    CHECK(strcmp(joined(&cmd.servers[0]), "-P 5002 -l 1024") == 0);
    np_args_free(&cmd);
}

/* Is a command line without options one receiver with NetPIPE's defaults? */
static void no_options_is_default_receiver(void)
{
    char *argv[] = {"NPtcp", NULL};
    struct np_cmdline cmd;
    CHECK(parse(argv, &cmd) == 0);
    CHECK(cmd.nservers == 1 && cmd.servers[0].argc == 1);
    np_args_free(&cmd);
}

/* Does --and split receivers, and do --repeat and --quiet anywhere apply to all, never
 * reaching NPtcp? */
static void and_splits_repeat_anywhere(void)
{
    char *argv[] = {"NPtcp", "-P", "5002", "--quiet", "--and", "-s", "--repeat", "-P", "5003",
                    NULL};
    struct np_cmdline cmd;
    CHECK(parse(argv, &cmd) == 0);
    CHECK(cmd.nservers == 2 && cmd.repeat && cmd.quiet);
    CHECK(strcmp(joined(&cmd.servers[0]), "-P 5002") == 0);
    CHECK(strcmp(joined(&cmd.servers[1]), "-s -P 5003") == 0);
    CHECK(strcmp(cmd.servers[1].argv[0], "NPtcp") == 0);
    np_args_free(&cmd);
}

/* Is an empty option set (--and first, last, doubled, or around --repeat alone) refused? */
static void empty_sets_are_refused(void)
{
    char *first[] = {"NPtcp", "--and", "-P", "5003", NULL};
    char *last[] = {"NPtcp", "-P", "5002", "--and", NULL};
    char *doubled[] = {"NPtcp", "-P", "5002", "--and", "--and", "-s", NULL};
    char *repeat_only[] = {"NPtcp", "--repeat", "--and", "-s", NULL};
    struct np_cmdline cmd;
    CHECK(parse(first, &cmd) == -EINVAL);
    CHECK(parse(last, &cmd) == -EINVAL);
    CHECK(parse(doubled, &cmd) == -EINVAL);
    CHECK(parse(repeat_only, &cmd) == -EINVAL);
}

static const struct {
    const char *name;
    void (*run)(void);
} cases[] = {
    {"plain_is_one_receiver", plain_is_one_receiver},
    {"no_options_is_default_receiver", no_options_is_default_receiver},
    {"and_splits_repeat_anywhere", and_splits_repeat_anywhere},
    {"empty_sets_are_refused", empty_sets_are_refused},
};

/* One case in a frame of its own: the loop's index must not live across check.h's setjmp. */
static void run_case(size_t i)
{
    CHECK_RUN(cases[i].name, cases[i].run());
}

/* `test_args --list` names the cases; `test_args [NAME]` runs NAME (or every case) and says
 * "PASS NAME" or "FAIL NAME: where" for each (check.h): nomvm.hostcases reads both. */
int main(int argc, char **argv)
{
    bool list = argc > 1 && strcmp(argv[1], "--list") == 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (list) {
            printf("%s\n", cases[i].name);
            continue;
        }
        if (argc > 1 && strcmp(argv[1], cases[i].name) != 0)
            continue;
        run_case(i);
    }
    return failures != 0;
}
