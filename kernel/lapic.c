/* lapic.c: the local APIC (xAPIC, memory mapped; Intel SDM vol. 3 ch. 10), its one-shot timer,
 * IPIs, and the TSC frequency. Both clocks are calibrated against the PIT (8254, 1.193182 MHz),
 * the one clock whose rate is known on every PC. The TSC frequency goes on the bulletin board so
 * applications keep time without system calls. */
#include "defs.h"
#include "cpu.h"

#define LAPIC_ID       0x020
#define LAPIC_EOI      0x0b0
#define LAPIC_SVR      0x0f0
#define LAPIC_ICR_LO   0x300
#define LAPIC_ICR_HI   0x310
#define LAPIC_LVT_TIMER 0x320
#define LAPIC_TIMER_INIT 0x380
#define LAPIC_TIMER_CUR  0x390
#define LAPIC_TIMER_DIV  0x3e0
#define PIT_HZ 1193182ull
/* 10 ms: the count's end is seen within one poll of port 0x61 (a few us, also under TCG), so
 * the rates are good to about 0.05%; 25 ms cost 15 ms more of every boot (issue 16). */
#define CALIBRATE_MS 10

static volatile uint32_t *lapic;
static uint64_t tsc_freq, lapic_timer_hz;

static uint32_t lapic_read(uint32_t reg) { return lapic[reg / 4]; }
/* No read-back after the write (xv6 reads LAPIC_ID "to wait for the write to finish"): the
 * local APIC is the core's own and its register writes take effect in order, as Linux's
 * native_apic_mem_write assumes; under KVM without APICv each read is one more exit, a third of
 * nom's exits under load (issue 11's ledger: every EOI and timer write came in pairs). */
static void lapic_write(uint32_t reg, uint32_t v) { lapic[reg / 4] = v; }

uint32_t lapic_id(void) { return lapic_read(LAPIC_ID) >> 24; }
void lapic_eoi(void) { lapic_write(LAPIC_EOI, 0); }
uint64_t tsc_hz(void) { return tsc_freq; }

uint64_t tsc_to_ns(uint64_t ticks) {
    return muldiv64(ticks, 1000000000ull, tsc_freq);
}

void udelay(uint64_t us) {
    uint64_t end = rdtsc() + muldiv64(us, tsc_freq, 1000000ull);
    while (rdtsc() < end)
        __asm__ volatile("pause");
}

/* Counts TSC ticks and LAPIC timer ticks over CALIBRATE_MS of PIT channel 2. */
static void calibrate(void) {
    uint32_t pit_count = (uint32_t)(PIT_HZ * CALIBRATE_MS / 1000);
    outb(0x61, (inb(0x61) & ~0x02) | 0x01); /* gate channel 2 on, speaker off */
    outb(0x43, 0xb0);                        /* channel 2, lo/hi byte, mode 0 */
    outb(0x42, pit_count & 0xff);
    outb(0x42, pit_count >> 8);
    uint8_t gate = inb(0x61) & ~0x01;
    outb(0x61, gate);
    outb(0x61, gate | 0x01);                 /* restart the count */
    lapic_write(LAPIC_TIMER_DIV, 0x3);       /* divide by 16 */
    lapic_write(LAPIC_TIMER_INIT, 0xffffffff);
    uint64_t t0 = rdtsc();
    while (!(inb(0x61) & 0x20))
        ;
    uint64_t t1 = rdtsc();
    uint32_t lapic_ticks = 0xffffffff - lapic_read(LAPIC_TIMER_CUR);
    lapic_write(LAPIC_TIMER_INIT, 0);
    /* over pit_count / PIT_HZ seconds exactly (CALIBRATE_MS rounded to whole PIT ticks) */
    tsc_freq = muldiv64(t1 - t0, PIT_HZ, pit_count);
    lapic_timer_hz = muldiv64(lapic_ticks, PIT_HZ, pit_count);
}

void lapic_init_this(void) {
    lapic_write(LAPIC_SVR, 0x100 | VEC_SPURIOUS); /* enable */
    lapic_write(LAPIC_TIMER_DIV, 0x3);
    lapic_write(LAPIC_LVT_TIMER, VEC_TIMER);      /* one-shot */
    lapic_write(LAPIC_TIMER_INIT, 0);
}

/* The legacy 8259 PICs would deliver the PIT on vectors 8-15, where exceptions live: remap
 * them out of the way and mask every line; nom uses only the LAPIC and MSI-X. */
static void pic_disable(void) {
    static const uint8_t init[2][4] = {{0x11, 0x20, 0x04, 0x01}, {0x11, 0x28, 0x02, 0x01}};
    for (int i = 0; i < 4; i++) {
        outb(0x20 + (i ? 1 : 0), init[0][i]);
        outb(0xa0 + (i ? 1 : 0), init[1][i]);
    }
    outb(0x21, 0xff);
    outb(0xa1, 0xff);
}

void lapic_init_boot(uint64_t lapic_phys) {
    pic_disable();
    lapic = vm_map_mmio(lapic_phys, PAGE_SIZE);
    if (!lapic)
        panic("no memory to map the local APIC");
    wrmsr(0x1b, rdmsr(0x1b) | (1 << 11)); /* APIC global enable */
    lapic_init_this();
    calibrate();
    kprintf("nom: tsc %lu Hz, lapic timer %lu Hz\n", tsc_freq, lapic_timer_hz);
    if (!tsc_freq || !lapic_timer_hz)
        panic("clock calibration failed");
}

/* Arms this CPU's timer for a TSC deadline (0 stops it). */
void lapic_timer_deadline(uint64_t deadline) {
    if (!deadline) {
        lapic_write(LAPIC_TIMER_INIT, 0);
        return;
    }
    uint64_t now = rdtsc();
    uint64_t delta = deadline > now ? deadline - now : 0;
    uint64_t count = muldiv64(delta, lapic_timer_hz, tsc_freq); /* lapic_timer_hz < tsc_freq */
    if (count == 0)
        count = 1;
    if (count > 0xffffffffu)
        count = 0xffffffffu; /* fires early; the tick re-arms for what is left */
    lapic_write(LAPIC_TIMER_INIT, (uint32_t)count);
}

static void icr_wait(void) {
    for (int i = 0; i < 1000000 && (lapic_read(LAPIC_ICR_LO) & (1 << 12)); i++)
        __asm__ volatile("pause");
}

void lapic_send_ipi(uint32_t apic_id, uint32_t vector) {
    icr_wait();
    lapic_write(LAPIC_ICR_HI, apic_id << 24);
    lapic_write(LAPIC_ICR_LO, vector); /* fixed delivery, physical destination */
}

/* INIT, then two STARTUPs at start_page * 4096 (SDM 8.4.4.1). The MP specification's 10 ms
 * after INIT and 200 us after each STARTUP are for the discrete APICs of its day: Linux waits
 * 0 and 10 us on Intel family 6 and AMD family 0xf and later (smpboot.c,
 * smp_quirk_init_udelay), and so does nom; 10 ms of every AP's start (issue 16). */
void lapic_send_init_sipi(uint32_t apic_id, uint32_t start_page) {
    bool modern = cpu_modern_ap_start();
    icr_wait();
    lapic_write(LAPIC_ICR_HI, apic_id << 24);
    lapic_write(LAPIC_ICR_LO, 0x4500);
    if (!modern)
        udelay(10000);
    for (int i = 0; i < 2; i++) {
        icr_wait();
        lapic_write(LAPIC_ICR_HI, apic_id << 24);
        lapic_write(LAPIC_ICR_LO, 0x4600 | start_page);
        udelay(modern ? 10 : 200);
    }
}
