/*
 * <syslog.h> for nom: system log messages go to the serial console (there is no log daemon),
 * one line each, "<ident>: <message>". Priorities and facilities have their usual values;
 * setlogmask filters by priority as POSIX says. Implemented in src/syslog.c.
 */
#ifndef NOM_SYSLOG_H
#define NOM_SYSLOG_H

#include <stdarg.h>
#include <sys/cdefs.h>

#define LOG_EMERG 0
#define LOG_ALERT 1
#define LOG_CRIT 2
#define LOG_ERR 3
#define LOG_WARNING 4
#define LOG_NOTICE 5
#define LOG_INFO 6
#define LOG_DEBUG 7
#define LOG_PRIMASK 0x07
#define LOG_PRI(p) ((p) & LOG_PRIMASK)
#define LOG_MASK(pri) (1 << (pri))
#define LOG_UPTO(pri) ((1 << ((pri) + 1)) - 1)

#define LOG_KERN (0 << 3)
#define LOG_USER (1 << 3)
#define LOG_DAEMON (3 << 3)
#define LOG_LOCAL0 (16 << 3)

#define LOG_PID 0x01
#define LOG_CONS 0x02
#define LOG_NDELAY 0x08
#define LOG_NOWAIT 0x10
#define LOG_PERROR 0x20

__BEGIN_DECLS
void openlog(const char *ident, int option, int facility);
void syslog(int priority, const char *format, ...) __attribute__((format(printf, 2, 3)));
void vsyslog(int priority, const char *format, va_list ap);
void closelog(void);
int setlogmask(int mask);
__END_DECLS

#endif /* NOM_SYSLOG_H */
