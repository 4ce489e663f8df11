/* rtc.c: the wall clock at boot, from the CMOS real-time clock (MC146818: registers 0x00-0x09,
 * status A bit 7 = update in progress, status B bit 2 = binary, bit 1 = 24-hour). Published on
 * the bulletin board as boot_unix_ns so applications have CLOCK_REALTIME without a system call. */
#include "defs.h"

static uint8_t cmos(uint8_t reg) {
    outb(0x70, reg);
    return inb(0x71);
}

static uint32_t bcd(uint8_t v, bool binary) {
    return binary ? v : (v & 0x0f) + (v >> 4) * 10;
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian; Howard Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, uint32_t m, uint32_t d) {
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    uint32_t yoe = (uint32_t)(y - era * 400);
    uint32_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    uint32_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

uint64_t rtc_unix_seconds(void) {
    uint8_t r[7], again[7];
    static const uint8_t regs[7] = {0x00, 0x02, 0x04, 0x07, 0x08, 0x09, 0x32};
    do { /* read twice, outside an update, until both reads agree */
        while (cmos(0x0a) & 0x80)
            ;
        for (int i = 0; i < 7; i++) r[i] = cmos(regs[i]);
        while (cmos(0x0a) & 0x80)
            ;
        for (int i = 0; i < 7; i++) again[i] = cmos(regs[i]);
    } while (memcmp(r, again, sizeof r) != 0);
    uint8_t status_b = cmos(0x0b);
    bool binary = status_b & 0x04, h24 = status_b & 0x02;
    uint32_t hour = bcd(r[2] & 0x7f, binary);
    if (!h24 && (r[2] & 0x80))
        hour = (hour % 12) + 12;
    uint32_t century = bcd(r[6], binary);
    uint32_t year = bcd(r[5], binary) + (century >= 19 && century <= 30 ? century * 100 : 2000);
    int64_t days = days_from_civil(year, bcd(r[4], binary), bcd(r[3], binary));
    return (uint64_t)(days * 86400 + hour * 3600 + bcd(r[1], binary) * 60 + bcd(r[0], binary));
}
