/* syslog.c: the system log is the serial console (include/syslog.h). One formatted line per
 * message, written with one system call so that lines of different threads do not mix. */
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <nom/syscall.h>

static const char *log_ident = "app";
static int log_mask = 0xff;

void openlog(const char *ident, int option, int facility)
{
    (void)option, (void)facility;
    if (ident)
        log_ident = ident;
}

void closelog(void) {}

int setlogmask(int mask)
{
    int old = log_mask;
    if (mask)
        log_mask = mask;
    return old;
}

void vsyslog(int priority, const char *format, va_list ap)
{
    char line[512];
    if (!(log_mask & LOG_MASK(LOG_PRI(priority))))
        return;
    int n = snprintf(line, sizeof line, "%s: ", log_ident);
    n += vsnprintf(line + n, sizeof line - (size_t)n - 1, format, ap);
    if (n > (int)sizeof line - 2)
        n = (int)sizeof line - 2;
    if (n == 0 || line[n - 1] != '\n')
        line[n++] = '\n';
    nom_sys_console_write(line, (uint64_t)n);
}

void syslog(int priority, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    vsyslog(priority, format, ap);
    va_end(ap);
}
