/* signal.c: signal() and raise() with one disposition per signal for the whole application
 * (POSIX), replacing newlib's, which keeps them in each thread's struct _reent: with libnom's
 * per-thread _reent a handler installed by main would be invisible to the thread that raises
 * (memcached's `shutdown` raises SIGINT from a worker). nom delivers no asynchronous signals
 * (paper 5), so raise() and kill() of oneself are the only ways a handler runs: synchronously,
 * in the calling thread. A handler stays installed after it runs (BSD/glibc signal()). The
 * default action ends the application with 128 + sig, except for the signals whose default
 * is to be ignored. Defining both functions keeps newlib's signal.o out of the link. */
#include <errno.h>
#include <signal.h>
#include <nom/syscall.h>

static _sig_func_ptr dispositions[NSIG];

_sig_func_ptr signal(int sig, _sig_func_ptr handler)
{
    if (sig <= 0 || sig >= NSIG || sig == SIGKILL || sig == SIGSTOP) {
        errno = EINVAL;
        return SIG_ERR;
    }
    return __atomic_exchange_n(&dispositions[sig], handler, __ATOMIC_ACQ_REL);
}

static int ignored_by_default(int sig)
{
    return sig == SIGCHLD || sig == SIGURG || sig == SIGWINCH;
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
        nom_sys_exit(128 + sig);
    handler(sig);
    return 0;
}
