/* time.c: clocks from the TSC (abi.h: invariant TSC, frequency on the bulletin board) and the
 * POSIX time functions over them; sleeping goes through the scheduler (nom/sched.h). */
#include <errno.h>
#include <sys/time.h>
#include <sys/times.h>
#include <time.h>
#include <unistd.h>
#include <nom/bb.h>
#include <nom/sched.h>
#include <nom/time.h>

/* CLOCK_REALTIME is the wall-clock time the kernel read from the RTC at boot (the board's
 * boot_unix_ns) plus the monotonic time since, plus this offset, which clock_settime and
 * settimeofday adjust (e.g. from the price provider's timestamps). */
static int64_t realtime_offset_ns;

uint64_t nom_tsc_hz(void)
{
    return nom_bb()->tsc_hz;
}

/* Conversions use 32.32 fixed-point factors computed once from tsc_hz, so that reading the
 * clock costs a multiplication, not a 128-bit division (libgcc's, in software). The factors
 * are monotone, so converted times never go backwards. */
static uint64_t ns_per_tick_fp, ticks_per_ns_fp;

static void compute_factors(void)
{
    uint64_t hz = nom_tsc_hz();
    ticks_per_ns_fp = (uint64_t)(((unsigned __int128)hz << 32) / 1000000000u);
    ns_per_tick_fp = (uint64_t)(((unsigned __int128)1000000000u << 32) / hz);
}

static uint64_t fp_mul(uint64_t x, uint64_t fp)
{
    unsigned __int128 r = ((unsigned __int128)x * fp) >> 32;
    return r > UINT64_MAX ? UINT64_MAX : (uint64_t)r;
}

uint64_t nom_tsc_to_ns(uint64_t ticks)
{
    if (!ns_per_tick_fp)
        compute_factors();
    return fp_mul(ticks, ns_per_tick_fp);
}

uint64_t nom_ns_to_tsc(uint64_t ns)
{
    if (!ticks_per_ns_fp)
        compute_factors();
    return fp_mul(ns, ticks_per_ns_fp);
}

uint64_t nom_us_to_tsc(uint64_t us)
{
    return nom_ns_to_tsc(us > UINT64_MAX / 1000 ? UINT64_MAX : us * 1000);
}

uint64_t nom_now_ns(void)
{
    uint64_t t = nom_tsc(), boot = nom_bb()->boot_tsc;
    return nom_tsc_to_ns(t > boot ? t - boot : 0);
}

uint64_t nom_ns_to_deadline(uint64_t ns)
{
    uint64_t d = nom_bb()->boot_tsc + nom_ns_to_tsc(ns);
    return d < nom_bb()->boot_tsc ? UINT64_MAX : d;
}

/* CLOCK_REALTIME minus CLOCK_MONOTONIC. */
static uint64_t realtime_base_ns(void)
{
    return nom_bb()->boot_unix_ns + (uint64_t)realtime_offset_ns;
}

static uint64_t realtime_ns(void)
{
    return nom_now_ns() + realtime_base_ns();
}

static void ns_to_timespec(uint64_t ns, struct timespec *ts)
{
    ts->tv_sec = (time_t)(ns / 1000000000ull);
    ts->tv_nsec = (long)(ns % 1000000000ull);
}

int clock_gettime(clockid_t clock, struct timespec *ts)
{
    switch (clock) {
    case CLOCK_MONOTONIC:
        ns_to_timespec(nom_now_ns(), ts);
        return 0;
    case CLOCK_REALTIME:
        ns_to_timespec(realtime_ns(), ts);
        return 0;
    default:
        errno = EINVAL;
        return -1;
    }
}

int clock_settime(clockid_t clock, const struct timespec *ts)
{
    if (clock != CLOCK_REALTIME || ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000l) {
        errno = EINVAL;
        return -1;
    }
    uint64_t want = (uint64_t)ts->tv_sec * 1000000000ull + (uint64_t)ts->tv_nsec;
    realtime_offset_ns = (int64_t)(want - nom_now_ns() - nom_bb()->boot_unix_ns);
    return 0;
}

int clock_getres(clockid_t clock, struct timespec *res)
{
    if (clock != CLOCK_MONOTONIC && clock != CLOCK_REALTIME) {
        errno = EINVAL;
        return -1;
    }
    if (res)
        ns_to_timespec(1000000000ull / nom_tsc_hz() + 1, res);
    return 0;
}

int gettimeofday(struct timeval *tv, void *tz)
{
    (void)tz;
    uint64_t ns = realtime_ns();
    tv->tv_sec = (time_t)(ns / 1000000000ull);
    tv->tv_usec = (suseconds_t)(ns / 1000 % 1000000);
    return 0;
}

int settimeofday(const struct timeval *tv, const struct timezone *tz)
{
    (void)tz;
    struct timespec ts = { tv->tv_sec, tv->tv_usec * 1000 };
    return clock_settime(CLOCK_REALTIME, &ts);
}

/* Sleeping blocks the calling user thread only (the core runs others, or blocks). */
int nanosleep(const struct timespec *req, struct timespec *rem)
{
    if (req->tv_nsec < 0 || req->tv_nsec >= 1000000000l || req->tv_sec < 0) {
        errno = EINVAL;
        return -1;
    }
    uint64_t ns = (uint64_t)req->tv_sec * 1000000000ull + (uint64_t)req->tv_nsec;
    nom_sleep_until(nom_ns_to_deadline(nom_now_ns() + ns));
    if (rem)
        rem->tv_sec = 0, rem->tv_nsec = 0;
    return 0;
}

int clock_nanosleep(clockid_t clock, int flags, const struct timespec *req, struct timespec *rem)
{
    if (!(flags & TIMER_ABSTIME))
        return nanosleep(req, rem) ? errno : 0;
    uint64_t want = (uint64_t)req->tv_sec * 1000000000ull + (uint64_t)req->tv_nsec;
    if (clock == CLOCK_REALTIME)
        want -= realtime_base_ns();
    else if (clock != CLOCK_MONOTONIC)
        return EINVAL;
    nom_sleep_until(nom_ns_to_deadline(want));
    return 0;
}

int usleep(useconds_t us)
{
    nom_sleep_until(nom_tsc() + nom_us_to_tsc(us));
    return 0;
}

unsigned sleep(unsigned s)
{
    nom_sleep_until(nom_tsc() + nom_us_to_tsc((uint64_t)s * 1000000));
    return 0;
}

/* Process times: nom does not account CPU time per application, so all of the monotonic
 * time counts as user time of this process. */
clock_t times(struct tms *t)
{
    clock_t ticks = (clock_t)(nom_now_ns() / (1000000000ull / CLOCKS_PER_SEC));
    if (t) {
        t->tms_utime = ticks;
        t->tms_stime = 0;
        t->tms_cutime = 0;
        t->tms_cstime = 0;
    }
    return ticks;
}
