/*
 * np_run.h: one NetPIPE (NPtcp) run as a function call, in a thread of a nom application that
 * outlives the run.
 *
 * Contract. NetPIPE is linked unmodified except that its objects' references to main, exit,
 * socket, accept, listen, close, malloc, calloc, free and its output calls are renamed to the
 * np_nptcp_* names below (objcopy --redefine-syms=port/nptcp.syms; nothing else in the
 * application is affected). So np_run() calls NetPIPE's main and comes back whether NetPIPE
 * returns or calls exit(), and then closes the sockets and frees the memory the run left behind
 * (on Linux, the end of the process does that; on nom an application that exits is gone).
 *
 * Several threads may each run NetPIPE at once (one receiver each): NetPIPE keeps its state in
 * main's locals, except getopt's globals, so option parsing is serialized by a lock held from
 * the start of a run until its first socket() (or its end), and tcp.c's `doing_reset`, which
 * only changes what a transmitter retries and whether a receiver prints its buffer sizes.
 * A run that accepted a transmitter and then waits more than 10 s for it to reconnect (streaming
 * resets the connection after every trial) ends with status 76 (EX_PROTOCOL): its transmitter
 * is gone. One run per thread at a time. "NPtcp: LABEL: run N listening" goes to the console
 * at a run's first listen(): the receiver is ready for a transmitter (with np_quiet, run 1 only).
 *
 * NetPIPE's own output calls (printf, fprintf, puts, putchar, fputc, fwrite, perror) are renamed
 * the same way (np_output.c): with np_quiet set, what NetPIPE writes to stdout and stderr is
 * dropped, as the Linux guest sends its NPtcp's output to /dev/null.
 */
#ifndef NP_RUN_H
#define NP_RUN_H

#include <stddef.h>
#include <stdio.h>
#include <sys/socket.h>

struct np_run_result {
    int status; /* main's return value or exit()'s argument */
    int served; /* non-zero: the run accepted a connection (a transmitter came) */
};

/* Non-zero: NetPIPE's console output is dropped, and so are the per-run lines of runs after
 * the first but for abnormal ends (--quiet, np_args.h). Set before the first np_run(). */
extern int np_quiet;

/* Runs NetPIPE's main(argc, argv) once in the calling thread (argv is copied: getopt permutes
 * it); label and run number name it in messages. Never fails: NetPIPE's own errors are in
 * result->status (a bookkeeping overflow here is status 70, EX_SOFTWARE, with a message). */
void np_run(const char *label, unsigned run, int argc, char **argv, struct np_run_result *result);

/* Writes one formatted line to stderr with a single write(), so that it reaches the console
 * whole, whatever other threads and applications print meanwhile. Never fails (a line that
 * cannot be written is lost). */
void np_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* What NetPIPE's objects call instead (the renames above); outside np_run() each behaves as the
 * function it stands for. */
int np_nptcp_main(int argc, char **argv); /* NetPIPE's own main, renamed */
_Noreturn void np_nptcp_exit(int status);
int np_nptcp_socket(int domain, int type, int protocol);
int np_nptcp_accept(int fd, struct sockaddr *addr, socklen_t *len);
int np_nptcp_listen(int fd, int backlog);
int np_nptcp_close(int fd);
void *np_nptcp_malloc(size_t size);
void *np_nptcp_calloc(size_t n, size_t size);
void np_nptcp_free(void *p);
int np_nptcp_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int np_nptcp_fprintf(FILE *stream, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int np_nptcp_puts(const char *s);
int np_nptcp_putchar(int c);
int np_nptcp_fputc(int c, FILE *stream);
size_t np_nptcp_fwrite(const void *p, size_t size, size_t n, FILE *stream);
void np_nptcp_perror(const char *s);

#endif /* NP_RUN_H */
