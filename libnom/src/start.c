/* start.c: from the kernel's start-up stack to main(): libnom's initialization order, and the
 * console primitives used before (and beneath) stdio. */
#include <stdlib.h>
#include <string.h>
#include <nom/bb.h>
#include <nom/syscall.h>
#include <nom/time.h>
#include "libnom.h"

uint32_t nom_app_id;
char **environ;
uint64_t nom_start_tsc;

/* Unprototyped on purpose: applications define main() with none, two or three parameters
 * (C11 5.1.2.2.1, and the Unix envp), and under link-time optimization a prototype here that
 * differs from theirs is a type mismatch GCC warns about at every link. */
int main();
void __libc_init_array(void);
void __libc_fini_array(void);

uint32_t nom_self_id(void)
{
    return nom_app_id;
}

void nom_console_puts(const char *s)
{
    nom_sys_console_write(s, strlen(s));
}

char *nom_fmt_hex(char *buf, uint64_t v)
{
    static const char digits[] = "0123456789abcdef";
    buf[0] = '0';
    buf[1] = 'x';
    for (int i = 0; i < 16; i++)
        buf[2 + i] = digits[(v >> (60 - 4 * i)) & 0xf];
    buf[18] = 0;
    return buf;
}

char *nom_fmt_dec(char *buf, uint64_t v)
{
    char tmp[21];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (int i = 0; i < n; i++)
        buf[i] = tmp[n - 1 - i];
    buf[n] = 0;
    return buf;
}

void nom_panic(const char *what)
{
    static const char head[] = "nom: libnom panic: ";
    char line[256];
    size_t n = strnlen(what, sizeof line - sizeof head);
    memcpy(line, head, sizeof head - 1);
    memcpy(line + sizeof head - 1, what, n);
    line[sizeof head - 1 + n] = '\n';
    console_flush();
    nom_sys_console_write(line, sizeof head + n); /* one line, one system call */
    nom_sys_exit(134);
}

static __attribute__((noreturn)) void start_main(void *arg)
{
    struct nom_start_info *si = arg;
    upcall_init();
    fd_init();
    atexit(__libc_fini_array);
    __libc_init_array();
    exit(main((int)si->argc, si->argv, si->envp));
}

/* Order matters: the heap before anything mallocs; the main thread (and its stack) before
 * the upcall handler, which attributes faults to threads; upcalls before anything arms a
 * timer. */
__attribute__((noreturn)) void nom_start(struct nom_start_info *si)
{
    nom_start_tsc = nom_tsc();
    nom_app_id = si->app_id;
    environ = si->envp;
    heap_init();
    thread_start_main(start_main, si);
}
