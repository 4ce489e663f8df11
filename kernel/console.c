/* console.c: the kernel log on COM1 (16550 UART at 0x3f8), kprintf and panic. Applications'
 * console_write goes through the same lock so lines from different CPUs do not interleave. */
#include "defs.h"

#define COM1 0x3f8

static volatile int console_lock;

void console_init(void) {
    outb(COM1 + 1, 0x00); /* no interrupts */
    outb(COM1 + 3, 0x80); /* DLAB */
    outb(COM1 + 0, 0x01); /* 115200 baud */
    outb(COM1 + 1, 0x00);
    outb(COM1 + 3, 0x03); /* 8N1 */
    outb(COM1 + 2, 0xc7); /* FIFO on */
    outb(COM1 + 4, 0x03);
}

static void uart_putc(char c) {
    for (int i = 0; i < 100000 && !(inb(COM1 + 5) & 0x20); i++)
        ;
    outb(COM1, (uint8_t)c);
}

void console_write(const char *s, size_t n) {
    uint64_t flags;
    __asm__ volatile("pushfq; popq %0; cli" : "=r"(flags));
    while (__atomic_exchange_n(&console_lock, 1, __ATOMIC_ACQUIRE))
        __asm__ volatile("pause");
    for (size_t i = 0; i < n; i++)
        uart_putc(s[i]);
    __atomic_store_n(&console_lock, 0, __ATOMIC_RELEASE);
    if (flags & 0x200)
        __asm__ volatile("sti");
}

void kprintf(const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    console_write(buf, n < (int)sizeof buf ? (size_t)n : sizeof buf - 1);
}

/* isa-debug-exit (QEMU): the VM ends with status (value << 1) | 1. */
void qemu_exit(uint32_t value) {
    outl(0xf4, value);
}

_Noreturn void panic(const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    __asm__ volatile("cli");
    kprintf("nom: PANIC: %s\n", buf);
    qemu_exit(0x7f);
    for (;;)
        __asm__ volatile("cli; hlt");
}
