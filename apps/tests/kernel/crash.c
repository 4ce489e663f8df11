/* crash: each mode breaks a rule; the kernel must end this application only and say why.
 * argv[1]: writebb | kernelmem | jump0 | div0 | badstack (upcall stack not mapped). */
#include "ktest.h"

static struct nom_upcall_ctl ctl;
void on_upcall(struct nom_upcall_frame *f) { SYS(NOM_SYS_UPCALL_RETURN, f); }

int ktest_main(int argc, char **argv, struct nom_start_info *info) {
    (void)info;
    const char *mode = argc > 1 ? argv[1] : "";
    kt_printf("crash: %s\n", mode);
    if (!kt_strcmp(mode, "writebb")) {
        *(volatile uint64_t *)NOM_BB_ADDR = 0; /* read-only */
    } else if (!kt_strcmp(mode, "kernelmem")) {
        kt_printf("crash: read %lx\n", *(volatile uint64_t *)0xffffffff80100000ull);
    } else if (!kt_strcmp(mode, "jump0")) {
        ((void (*)(void))0)();
    } else if (!kt_strcmp(mode, "div0")) {
        uint32_t q, zero = 0;
        __asm__ volatile("divl %2" : "=a"(q) : "a"(100), "r"(zero), "d"(0)); /* #DE */
        kt_printf("crash: %u\n", q);
    } else if (!kt_strcmp(mode, "badstack")) {
        SYS(NOM_SYS_UPCALL_REGISTER, on_upcall, 0x30000000, &ctl); /* nothing mapped there */
        *(volatile int *)0x40000000 = 1;                         /* fault: upcall cannot be pushed */
    }
    kt_printf("crash: %s did not crash\n", mode);
    return 0;
}
