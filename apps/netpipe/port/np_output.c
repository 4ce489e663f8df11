/* np_output.c: NetPIPE's console output, dropped with --quiet (np_run.h). The Linux guest sends
 * its NPtcp's output to /dev/null; on nom every byte goes to the serial console, which costs
 * the guest a port write per byte (a VM exit each under hardware KVM), so an experiment's
 * figures would count NetPIPE's chatter against nom. Only the console streams are dropped. */
#include <stdarg.h>
#include <stdio.h>

#include "np_run.h"

int np_quiet;

static int dropped(FILE *stream)
{
    return np_quiet && (stream == stdout || stream == stderr);
}

int np_nptcp_printf(const char *fmt, ...)
{
    if (dropped(stdout))
        return 0;
    va_list ap;
    va_start(ap, fmt);
    int n = vprintf(fmt, ap);
    va_end(ap);
    return n;
}

int np_nptcp_fprintf(FILE *stream, const char *fmt, ...)
{
    if (dropped(stream))
        return 0;
    va_list ap;
    va_start(ap, fmt);
    int n = vfprintf(stream, fmt, ap);
    va_end(ap);
    return n;
}

int np_nptcp_puts(const char *s)
{
    return dropped(stdout) ? 0 : puts(s);
}

int np_nptcp_putchar(int c)
{
    return dropped(stdout) ? c : putchar(c);
}

int np_nptcp_fputc(int c, FILE *stream)
{
    return dropped(stream) ? c : fputc(c, stream);
}

size_t np_nptcp_fwrite(const void *p, size_t size, size_t n, FILE *stream)
{
    return dropped(stream) ? n : fwrite(p, size, n, stream);
}

void np_nptcp_perror(const char *s)
{
    if (!dropped(stderr))
        perror(s);
}
