/* exit_guest: a multiboot guest that drives a known number of each kind of exit-equivalent, so
 * that the test (test_ledger.py) can check the kvmcost ledger: ROUNDS virtio kicks, ROUNDS
 * port writes, ROUNDS self-IPIs and ROUNDS LAPIC-timer interrupts each waited for with HLT,
 * every interrupt with its EOI, and ROUNDS PAUSEs (counted, never charged). Or, when the host writes CLOCK instead of GO, the clock check
 * (test_clock.py): the guest's TSC over 10 ms of the PIT and over 10 ms of the LAPIC timer
 * (each the least of CLOCK_REPEAT, as a preempted vCPU thread only lengthens them), and over
 * CLOCK_KICKS kicks, stored in clock_ticks[] before the guest ends; clock_ticks[3] is the TSC
 * from READY to the host's word (the host may stop and continue the VM in between).
 *
 * The firmware before it exits too, a number that varies between boots, so the guest does its
 * set-up, sets handshake[0] = READY and spins on handshake[1] (memory only: no exit) until
 * the host has taken a ledger snapshot and written GO there through the shared RAM file; the
 * final ledger minus the snapshot is then this guest's doing alone. It ends through
 * isa-debug-exit with 0 (QEMU status 1); 1: no virtio-net, 2: its notify area is above
 * 4 GiB, 3: an interrupt or exception nobody asked for.
 *
 * 32-bit protected mode as multiboot leaves it, no paging (entry: exit_entry.S). xAPIC registers by MMIO at
 * 0xfee00000 (Intel SDM vol. 3, 11.4.1); TCG in QEMU 7.2 has no x2APIC.
 */
#include <stdint.h>

#define ROUNDS 100
#define READY 0x52454459u
#define GO 0x474f2121u
#define CLOCK 0x434c4f4bu
#define CLOCK_KICKS 10
#define CLOCK_REPEAT 3

#define IPI_VECTOR 0x40
#define TIMER_VECTOR 0x41
#define LAPIC ((volatile uint32_t *)0xfee00000)
#define LAPIC_EOI (0xb0 / 4)
#define LAPIC_SVR (0xf0 / 4)
#define LAPIC_ICR_LOW (0x300 / 4)
#define LAPIC_LVT_TIMER (0x320 / 4)
#define LAPIC_TIMER_INITIAL (0x380 / 4)
#define LAPIC_TIMER_CURRENT (0x390 / 4)
#define LVT_MASKED (1u << 16)
#define PIT_10MS 11932          /* 1.193182 MHz x 10 ms */
#define LAPIC_TIMER_DIVIDE (0x3e0 / 4)
#define DIVIDE_BY_1 0xb
#define LAPIC_10MS 10000000u    /* QEMU's APIC clock is 1 GHz (of virtual time) */
#define ICR_SELF (1u << 18)     /* destination shorthand: self */
#define ICR_ASSERT (1u << 14)
#define TIMER_TICKS 5000        /* 5 us of QEMU's 1 GHz APIC clock (its reset divider is 1) */

volatile uint32_t handshake[2];  /* the test finds it with nm */
volatile uint64_t clock_ticks[4];  /* CLOCK: TSC over the PIT's 10 ms, the LAPIC's, the kicks,
                                     * READY to the word */
static uint64_t ready_tsc, word_tsc;
static volatile uint32_t ipis, timer_interrupts;

struct gate {
    uint16_t offset_low, selector;
    uint8_t zero, type;
    uint16_t offset_high;
} __attribute__((packed));
static struct gate idt[256];

void ipi_entry(void), timer_entry(void), unexpected_entry(void);  /* exit_entry.S */

static inline void outb(uint16_t port, uint8_t v) { __asm__ volatile("outb %0, %1" :: "a"(v), "Nd"(port)); }
static inline void outl(uint16_t port, uint32_t v) { __asm__ volatile("outl %0, %1" :: "a"(v), "Nd"(port)); }
static inline uint32_t inl(uint16_t port)
{
    uint32_t v;
    __asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port));
    return v;
}

void guest_exit(uint8_t code)
{
    outb(0xf4, code);
}

void on_ipi(void)
{
    ipis++;
    LAPIC[LAPIC_EOI] = 0;
}

void on_timer(void)
{
    timer_interrupts++;
    LAPIC[LAPIC_EOI] = 0;
}

static void set_gate(int vector, void (*entry)(void), uint16_t cs)
{
    uint32_t at = (uint32_t)entry;
    idt[vector] = (struct gate){ at & 0xffff, cs, 0, 0x8e, at >> 16 };  /* interrupt gate */
}

static void load_idt(void)
{
    uint16_t cs;
    __asm__ volatile("mov %%cs, %0" : "=r"(cs));
    for (int v = 0; v < 256; v++)
        set_gate(v, unexpected_entry, cs);
    set_gate(IPI_VECTOR, ipi_entry, cs);
    set_gate(TIMER_VECTOR, timer_entry, cs);
    struct { uint16_t limit; uint32_t base; } __attribute__((packed)) idtr = { sizeof idt - 1, (uint32_t)idt };
    __asm__ volatile("lidt %0" :: "m"(idtr));
}

/* Configuration dword of bus 0, device dev (mechanism #1, ports CF8/CFC). */
static uint32_t config_read(uint32_t dev, uint32_t off)
{
    outl(0xcf8, 0x80000000u | dev << 11 | (off & 0xfc));
    return inl(0xcfc);
}

/* The queue-0 doorbell of the first modern virtio-net (1af4:1041): its notify capability
 * (virtio 1.x 4.1.4.4) names a BAR and an offset; QEMU gives queue 0 notify offset 0. */
static volatile uint16_t *find_doorbell(void)
{
    uint32_t dev = 0;
    while (dev < 32 && config_read(dev, 0) != 0x10411af4)
        dev++;
    if (dev == 32)
        guest_exit(1);
    outl(0xcfc, config_read(dev, 4) | 0x2);  /* memory space on (CF8 still selects it) */
    uint32_t cap = config_read(dev, 0x34) & 0xff;
    while (cap && (config_read(dev, cap) & 0xff0000ffu) != 0x02000009u)  /* vendor, notify */
        cap = config_read(dev, cap) >> 8 & 0xff;
    uint32_t bar = 0x10 + 4 * (config_read(dev, cap + 4) & 0xff);
    if (!cap || ((config_read(dev, bar) & 6) == 4 && config_read(dev, bar + 4)))
        guest_exit(2);
    return (volatile uint16_t *)((config_read(dev, bar) & ~0xfu) + config_read(dev, cap + 8));
}

static inline uint64_t rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return (uint64_t)hi << 32 | lo;
}

static uint32_t wait_for_go(void)
{
    ready_tsc = rdtsc();
    handshake[0] = READY;
    while (handshake[1] != GO && handshake[1] != CLOCK)
        ;
    word_tsc = rdtsc();
    return handshake[1];
}

static inline uint8_t inb(uint16_t port)
{
    uint8_t v;
    __asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
    return v;
}

/* TSC ticks over 10 ms of PIT channel 2 (mode 0: OUT rises at the terminal count, read in
 * port 0x61 bit 5), the way an OS calibrates its TSC. */
static uint64_t tsc_over_pit(void)
{
    outb(0x61, (inb(0x61) & ~0x02) | 0x01);  /* gate channel 2 on, speaker off */
    outb(0x43, 0xb0);                         /* channel 2, lo/hi byte, mode 0 */
    outb(0x42, PIT_10MS & 0xff);
    outb(0x42, PIT_10MS >> 8);
    uint64_t t0 = rdtsc();
    while (!(inb(0x61) & 0x20))
        ;
    return rdtsc() - t0;
}

/* TSC ticks over 10 ms of the LAPIC timer's count (masked, so no interrupt). */
static uint64_t tsc_over_lapic(void)
{
    LAPIC[LAPIC_TIMER_DIVIDE] = DIVIDE_BY_1;
    LAPIC[LAPIC_LVT_TIMER] = LVT_MASKED | TIMER_VECTOR;
    LAPIC[LAPIC_TIMER_INITIAL] = 0xffffffffu;
    uint64_t t0 = rdtsc();
    while (0xffffffffu - LAPIC[LAPIC_TIMER_CURRENT] < LAPIC_10MS)
        ;
    uint64_t t1 = rdtsc();
    LAPIC[LAPIC_TIMER_INITIAL] = 0;
    return t1 - t0;
}

/* A virtio driver's full barrier before its kick (it orders its store of avail->idx before its
 * load of avail_event), both ways x86 code spells it: `lock or $0,(%esp)` (GCC's
 * __atomic_thread_fence(__ATOMIC_SEQ_CST), Linux's mb()) and MFENCE. test_barriers.py checks
 * that QEMU makes both host barriers on every guest clock (patches/0012). */
static inline void full_fences(void)
{
    __asm__ volatile("lock orl $0, (%%esp)\n\tmfence" ::: "memory");
}

/* The clock check: what the guest's TSC says of the PIT, the LAPIC timer and charged kicks. */
static void clock_check(volatile uint16_t *doorbell)
{
    clock_ticks[0] = clock_ticks[1] = ~0ull;
    for (int i = 0; i < CLOCK_REPEAT; i++) {
        uint64_t pit = tsc_over_pit(), lapic = tsc_over_lapic();
        clock_ticks[0] = pit < clock_ticks[0] ? pit : clock_ticks[0];
        clock_ticks[1] = lapic < clock_ticks[1] ? lapic : clock_ticks[1];
    }
    uint64_t t0 = rdtsc();
    for (int i = 0; i < CLOCK_KICKS; i++) {
        full_fences();
        *doorbell = 0;
    }
    clock_ticks[2] = rdtsc() - t0;
    clock_ticks[3] = word_tsc - ready_tsc;
    guest_exit(0);
}

void guest_main(void)
{
    load_idt();
    outb(0x21, 0xff);  /* both 8259s masked: only the LAPIC interrupts */
    outb(0xa1, 0xff);
    LAPIC[LAPIC_SVR] = 0x100 | 0xff;  /* APIC software enable, spurious vector 0xff */
    volatile uint16_t *doorbell = find_doorbell();
    if (wait_for_go() == CLOCK)
        clock_check(doorbell);

    for (int i = 0; i < ROUNDS; i++)
        *doorbell = 0;               /* kick: queue 0 */
    for (int i = 0; i < ROUNDS; i++)
        outb(0x80, (uint8_t)i);      /* pio: the POST port */
    for (int i = 0; i < ROUNDS; i++)
        __asm__ volatile("pause");   /* pause: counted, and the guest goes on past it */
    for (uint32_t i = 0; i < ROUNDS; i++) {
        LAPIC[LAPIC_ICR_LOW] = ICR_SELF | ICR_ASSERT | IPI_VECTOR;  /* lapic_icr */
        __asm__ volatile("sti");
        while (ipis == i)            /* irq_ipi, then lapic_eoi in on_ipi */
            ;
        __asm__ volatile("cli");
    }
    for (uint32_t i = 0; i < ROUNDS; i++) {
        LAPIC[LAPIC_LVT_TIMER] = TIMER_VECTOR;        /* lapic_timer: one-shot, unmasked */
        LAPIC[LAPIC_TIMER_INITIAL] = TIMER_TICKS;     /* lapic_timer: armed */
        while (timer_interrupts == i)  /* sti;hlt: the interrupt wakes the HLT (hlt) */
            __asm__ volatile("sti; hlt; cli");
    }
    guest_exit(0);
}
