/* check.h: the one harness of nom's host C unit tests (libnom, drivers, net, apps, tools;
 * tools/nomvm/hostcases.py runs the programs). A case is a function; CHECK(cond) is its check.
 *
 *   CHECK(cond)         if cond is false: inside CHECK_RUN, the case stops there (longjmp back
 *                       to CHECK_RUN, whatever the case function returns); outside any case,
 *                       the program prints "FAIL: file:line: cond" and exits 1.
 *   CHECK_RUN(name, call)  runs the statement call (usually a case function's call) as the case
 *                       name: prints "PASS name", or "FAIL name: file:line: cond" and counts
 *                       it in failures.
 *   RUN(fn)             CHECK_RUN(#fn, fn()) for a case named after its function.
 *   CHECK_CASES(table)  at file scope after a table of cases (an array of structs with .name
 *                       and .fn): defines check_cases_main(argc, argv), the usual main of a
 *                       program of named cases: `prog --list` prints the names, `prog NAME`
 *                       runs that case, `prog` runs them all; it returns main's status (0 all
 *                       passed, 1 one failed, 2 no such case).
 * EXPECT is CHECK's older name, kept for the cases written with it.
 * A program exits non-zero if failures > 0 (hostcases reads the verdict lines). Why a
 * jump: the cases of different programs return int, void or nothing useful, and every one of
 * them can use the same CHECK without a convention for "failed" in its return value. */
#ifndef CHECK_H
#define CHECK_H
#include <setjmp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
static char check_why[256];
static jmp_buf check_env;
static int check_in_case;

/* Records where a check failed; ends the case (or the program, outside a case). */
static inline void check_failed(const char *file, int line, const char *cond)
{
    snprintf(check_why, sizeof check_why, "%s:%d: %s", file, line, cond);
    if (check_in_case)
        longjmp(check_env, 1);
    printf("FAIL: %s\n", check_why);
    fflush(stdout);
    exit(1);
}

#define CHECK(cond)                                                                          \
    do {                                                                                     \
        if (!(cond))                                                                         \
            check_failed(__FILE__, __LINE__, #cond);                                         \
    } while (0)

#define CHECK_RUN(name, call)                                                                \
    do {                                                                                     \
        check_in_case = 1;                                                                   \
        if (setjmp(check_env) == 0) {                                                        \
            call;                                                                            \
            printf("PASS %s\n", (name));                                                     \
        } else {                                                                             \
            printf("FAIL %s: %s\n", (name), check_why);                                      \
            failures++;                                                                      \
        }                                                                                    \
        check_in_case = 0;                                                                   \
        fflush(stdout);                                                                      \
    } while (0)

#define EXPECT(cond) CHECK(cond)

/* check_cases_main's body: name(i) and run(i) reach case i of n (each case runs in run's own
 * frame, so no variable of this loop lives across CHECK_RUN's setjmp). */
static inline int check_main_(int argc, char **argv, size_t n, const char *(*name)(size_t),
                              void (*run)(size_t))
{
    size_t ran = 0;
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        for (size_t i = 0; i < n; i++)
            printf("%s\n", name(i));
        return 0;
    }
    for (size_t i = 0; argc <= 2 && i < n; i++) {
        if (argc == 1 || strcmp(argv[1], name(i)) == 0) {
            run(i);
            ran++;
        }
    }
    if (ran == 0) {
        fprintf(stderr, "usage: %s [--list | CASE]\n", argv[0]);
        return 2;
    }
    return failures != 0;
}

#define CHECK_CASES(table)                                                                   \
    static const char *check_case_name_(size_t i) { return (table)[i].name; }                \
    static void check_case_run_(size_t i) { CHECK_RUN((table)[i].name, (table)[i].fn()); }   \
    static int check_cases_main(int argc, char **argv)                                       \
    {                                                                                        \
        return check_main_(argc, argv, sizeof(table) / sizeof(table)[0], check_case_name_,    \
                           check_case_run_);                                                 \
    }
#define RUN(fn) CHECK_RUN(#fn, fn())

#endif
