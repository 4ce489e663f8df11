/* tests/fake/nom/syscall.h: the host stand-in for libnom's system call wrappers that the
 * controller uses (found before libnom's header on the host test's include path). */
#ifndef NOM_SYSCALL_H
#define NOM_SYSCALL_H

#include <stdint.h>
#include <nom/abi.h>

/* Records the report (fake_nom.h: fake_report); returns 0. */
int64_t nom_sys_app_report(const struct nom_bb_app_report *report);
/* Appends to the fake console (fake_console); returns len. */
int64_t nom_sys_console_write(const char *buf, uint64_t len);

#endif /* NOM_SYSCALL_H */
