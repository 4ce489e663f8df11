/* signal.c: signal() and raise() with one disposition per signal for the whole application,
 * as POSIX requires. Belongs in libnom, moved when its owner is done.
 *
 * Why here: newlib's signal()/raise() keep the dispositions in the calling thread's struct
 * _reent, and libnom gives every thread its own (__DYNAMIC_REENT__), so a handler installed by
 * one thread is invisible to the others. memcached installs its SIGINT handler in main() and
 * raises SIGINT from a worker thread (the `shutdown` command): with newlib's table the worker
 * finds SIG_DFL and the application ends with 130 instead of running the handler, which exits
 * 0. Defining both functions here keeps newlib's signal.o out of the link (nothing else in
 * newlib references it; abort() calls raise(), which becomes this one).
 *
 * nom delivers no asynchronous signals (libnom/README.md), so raise() is the only way a handler
 * runs: synchronously, in the raising thread, as POSIX specifies for raise(). A handler stays
 * installed after it runs (BSD semantics, as glibc's signal()). The default action is the one
 * libnom's kill() takes (the application ends with 128 + sig), except for the signals whose
 * default is to be ignored. */
#include <errno.h>
#include <signal.h>
#include <unistd.h>

static _sig_func_ptr dispositions[NSIG];

static int catchable(int sig)
{
    return sig > 0 && sig < NSIG && sig != SIGKILL && sig != SIGSTOP;
}

static int ignored_by_default(int sig)
{
    return sig == SIGCHLD || sig == SIGURG || sig == SIGWINCH;
}

_sig_func_ptr signal(int sig, _sig_func_ptr handler)
{
    if (!catchable(sig)) {
        errno = EINVAL;
        return SIG_ERR;
    }
    return __atomic_exchange_n(&dispositions[sig], handler, __ATOMIC_ACQ_REL);
}

int raise(int sig)
{
    if (sig <= 0 || sig >= NSIG) {
        errno = EINVAL;
        return -1;
    }
    _sig_func_ptr handler = __atomic_load_n(&dispositions[sig], __ATOMIC_ACQUIRE);
    if (handler == SIG_IGN || (handler == SIG_DFL && ignored_by_default(sig)))
        return 0;
    if (handler == SIG_DFL)
        return kill(getpid(), sig); /* libnom: ends the application with 128 + sig */
    handler(sig);
    return 0;
}
