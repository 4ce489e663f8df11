/* pfault: are page faults upcalls to the application's own handler? The handler maps a page
 * where a fault hit an unmapped address, and makes a read-only page writable, then resumes the
 * faulting instruction. */
#include "ktest.h"

static uint8_t upcall_stack[8192] __attribute__((aligned(16)));
static struct nom_upcall_ctl ctl;
static volatile int faults;

void on_upcall(struct nom_upcall_frame *f) {
    if (f->type == NOM_UPCALL_PAGE_FAULT) {
        uint64_t page = f->arg0 & ~4095ull;
        faults++;
        if (f->arg1 & 1) /* present: a protection fault */
            SYS(NOM_SYS_MEM_PROTECT, page, 1, NOM_MAP_READ | NOM_MAP_WRITE);
        else
            SYS(NOM_SYS_MEM_MAP, page, 1, NOM_MAP_READ | NOM_MAP_WRITE);
    }
    SYS(NOM_SYS_UPCALL_RETURN, f);
}

int ktest_main(int argc, char **argv, struct nom_start_info *info) {
    (void)argc, (void)argv, (void)info;
    SYS(NOM_SYS_UPCALL_REGISTER, on_upcall, upcall_stack + sizeof upcall_stack, &ctl);
    volatile uint64_t *p = (volatile uint64_t *)0x10000000;
    *p = 42;                                     /* not mapped: the handler maps it */
    SYS(NOM_SYS_MEM_MAP, 0x10001000, 1, NOM_MAP_READ);
    volatile uint64_t *q = (volatile uint64_t *)0x10001000;
    *q = 7;                                      /* read-only: the handler unprotects it */
    kt_printf("pfault: value %lu and %lu after %d faults handled\n", *p, *q, faults);
    return *p == 42 && *q == 7 && faults == 2 ? 0 : 1;
}
