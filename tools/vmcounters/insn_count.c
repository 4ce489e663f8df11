/* insn_count: a QEMU (7.2) TCG plugin counting the guest instructions executed, per vCPU.
 *
 * Why: under TCG the emulator's speed says nothing about a guest's cost on real hardware; the
 * number of guest instructions per request does (DESIGN.md, "Use TCG here"; paper section 6).
 *
 * How: at translation, each translation block (TB) gets code that adds its instruction count
 * to the executing vCPU's counter when it runs. With one vCPU started (every lab guest) that
 * is an inline add to its counter, emitted into the block: no call. A callback per block (the
 * way with several vCPUs, each adding to its own counter) was about 4.5 % of a loaded vCPU
 * thread's host time, which no cost model accounts for (perf of the vCPU under memcached
 * "many", nom issue 11). Counting per TB is exact except for a TB left in the middle by an
 * exception or interrupt, which counts whole. Each counter is written only by its own vCPU
 * thread, so readers never lock.
 *
 * Output: a text file, one line per dump, "MONO_NS TOTAL NVCPUS C0 C1 ... IDLE SPINS", where
 * MONO_NS is CLOCK_MONOTONIC in ns (Python's time.monotonic_ns()) and IDLE, SPINS are the idle
 * polling's share (below), summed over vCPUs. A dump is written every interval_ms
 * milliseconds by a thread of ours, and a last one prefixed "final " when QEMU exits.
 * Arguments: -plugin libinsncount.so,out=PATH[,interval_ms=N][,profile=PPATH] (N = 0: only the
 * final line).
 *
 * Profile (optional): where the instructions went. Every translation block keeps its own
 * execution count; at exit PPATH gets one line per translation, "VADDR NINSNS EXECS IDLE"
 * (VADDR in hex, the block's first guest-virtual address; IDLE: how many of the EXECS began
 * inside an idle turn that reached its end mark, below), which guestprofile.py maps to the
 * guest ELFs' symbols. A block is attributed whole to the function it starts in (a call ends a
 * block), and whole to idle or work by where it began: the block holding a begin mark counts
 * as work, the one holding an end mark as idle, so the profile's idle part differs from IDLE's
 * exact count by those blocks' instructions on the far side of their mark. It costs one more
 * counter update per block executed, so it is off unless asked for.
 *
 * Idle polling, apart from work: a guest marks each empty turn of its idle poll loop with two
 * no-op instructions, IDLE_BEGIN_MARK at the turn's start and IDLE_END_MARK once the turn has
 * found nothing (libnom's sched.c; a turn that finds work has no end mark and counts as work).
 * The instructions executed between a begin and its end mark are added to IDLE and each end
 * mark to SPINS (marks included). Exact, except for a block left early by an exception or
 * interrupt, as for the total.
 * Snapshots while QEMU runs: when a file PPATH.mark exists (checked at each periodic dump),
 * the profile so far goes to the path written in it, and the mark is removed; the difference
 * of two snapshots is the profile of the time between them (guestprofile.py).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define MAX_VCPUS 256

static uint64_t insns[MAX_VCPUS];  /* insns[i] is written only by vCPU i's thread */
/* Idle polling (see the top), each written only by its vCPU's thread like insns. */
static uint64_t idle_insns[MAX_VCPUS], idle_spins[MAX_VCPUS], idle_from[MAX_VCPUS];

/* The marks: `nopl DISP32(%rax,%rax,1)` (0f 1f 84 00 + disp32), a multi-byte no-op that compilers
 * never emit with these displacements ("NOMi", "NOMw" little-endian). Their one other copy is
 * libnom's sched.c (NOM_IDLE_BEGIN_MARK, NOM_IDLE_END_MARK). */
static const uint8_t IDLE_BEGIN_MARK[8] = { 0x0f, 0x1f, 0x84, 0x00, 'N', 'O', 'M', 'i' };
static const uint8_t IDLE_END_MARK[8] = { 0x0f, 0x1f, 0x84, 0x00, 'N', 'O', 'M', 'w' };
static int nvcpus;
/* Whether the machine starts one vCPU. The lab's VMs also allow an absent second one
 * (tools/nomvm/vm.py smp_option: maxcpus=2, so that TCG keeps the guest's memory barriers);
 * none is ever plugged in, so one thread writes the counters. */
static int one_vcpu;
static FILE *out;
static unsigned interval_ms;
static pthread_t dumper;
static int dumper_running;
static pthread_mutex_t stop_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t stop_cond = PTHREAD_COND_INITIALIZER;
static int stopping;

/* One translation block, for the profile. */
struct tb_profile {
    uint64_t vaddr, ninsns;
    uint64_t execs, idle_execs; /* relaxed atomics, by whichever vCPU runs it */
    struct tb_profile *next;
};
static FILE *profile_out;
/* The blocks begun since vCPU i's last idle begin mark: a turn is idle only once its end mark
 * runs (a turn that finds work has none), so they become idle executions then, or are
 * forgotten at the next begin. A turn is ~30-60 blocks; one longer than TURN_LOG counts its
 * excess as work. */
#define TURN_LOG 1024
static struct tb_profile *turn_log[MAX_VCPUS][TURN_LOG];
static unsigned turn_len[MAX_VCPUS];
static char profile_mark[4096]; /* PPATH.mark */
static struct tb_profile *profiles; /* every translation, newest first */
static pthread_mutex_t profiles_lock = PTHREAD_MUTEX_INITIALIZER;
static void snapshot_if_marked(void);

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Writes one line; the caller serializes (the dumper thread, then the exit callback alone). */
static void dump_line(const char *prefix)
{
    uint64_t now[MAX_VCPUS], total = 0, idle = 0, spins = 0;
    for (int i = 0; i < nvcpus; i++) {
        now[i] = __atomic_load_n(&insns[i], __ATOMIC_RELAXED);
        total += now[i];
        idle += __atomic_load_n(&idle_insns[i], __ATOMIC_RELAXED);
        spins += __atomic_load_n(&idle_spins[i], __ATOMIC_RELAXED);
    }
    fprintf(out, "%s%" PRIu64 " %" PRIu64 " %d", prefix, mono_ns(), total, nvcpus);
    for (int i = 0; i < nvcpus; i++)
        fprintf(out, " %" PRIu64, now[i]);
    fprintf(out, " %" PRIu64 " %" PRIu64 "\n", idle, spins);
    fflush(out);
}

static void *dump_periodically(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&stop_lock);
    while (!stopping) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);  /* pthread_cond_timedwait's default clock */
        until.tv_sec += interval_ms / 1000;
        until.tv_nsec += (long)(interval_ms % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        if (pthread_cond_timedwait(&stop_cond, &stop_lock, &until) == ETIMEDOUT && !stopping) {
            dump_line("");
            if (profile_out)
                snapshot_if_marked();
        }
    }
    pthread_mutex_unlock(&stop_lock);
    return NULL;
}

static void tb_executed(unsigned int vcpu, void *n_insns)
{
    if (vcpu < MAX_VCPUS)
        __atomic_store_n(&insns[vcpu], insns[vcpu] + (uintptr_t)n_insns, __ATOMIC_RELAXED);
}

static void tb_executed_profiled(unsigned int vcpu, void *profile)
{
    struct tb_profile *p = profile;
    if (vcpu < MAX_VCPUS)
        __atomic_store_n(&insns[vcpu], insns[vcpu] + p->ninsns, __ATOMIC_RELAXED);
    __atomic_fetch_add(&p->execs, 1, __ATOMIC_RELAXED);
    if (vcpu < MAX_VCPUS && idle_from[vcpu] != 0 && turn_len[vcpu] < TURN_LOG)
        turn_log[vcpu][turn_len[vcpu]++] = p; /* idle if its turn reaches the end mark */
}

/* A block's count is added when it starts, before its marks run: `rest` (the instructions of
 * the block from the begin mark on, or after the end mark) corrects for that, so that exactly
 * the instructions from a begin mark to its end mark, both included, are idle. */
static void idle_begin(unsigned int vcpu, void *rest)
{
    if (vcpu < MAX_VCPUS) {
        idle_from[vcpu] = insns[vcpu] - (uintptr_t)rest;
        turn_len[vcpu] = 0;
    }
}

static void idle_end(unsigned int vcpu, void *rest)
{
    if (vcpu >= MAX_VCPUS || idle_from[vcpu] == 0) /* an end without a begin counts nothing */
        return;
    uint64_t upto = insns[vcpu] - (uintptr_t)rest;
    __atomic_store_n(&idle_insns[vcpu], idle_insns[vcpu] + (upto - idle_from[vcpu]),
                     __ATOMIC_RELAXED);
    __atomic_store_n(&idle_spins[vcpu], idle_spins[vcpu] + 1, __ATOMIC_RELAXED);
    idle_from[vcpu] = 0;
    for (unsigned i = 0; i < turn_len[vcpu]; i++)
        __atomic_fetch_add(&turn_log[vcpu][i]->idle_execs, 1, __ATOMIC_RELAXED);
    turn_len[vcpu] = 0;
}

static int is_mark(const struct qemu_plugin_insn *insn, const uint8_t mark[8])
{
    return qemu_plugin_insn_size(insn) == 8 && memcmp(qemu_plugin_insn_data(insn), mark, 8) == 0;
}

/* Gives the idle marks of a block their callbacks: only they pay one, every other
 * instruction is counted by its block's. */
static void watch_idle_marks(struct qemu_plugin_tb *tb)
{
    size_t n = qemu_plugin_tb_n_insns(tb);
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        if (is_mark(insn, IDLE_BEGIN_MARK))
            qemu_plugin_register_vcpu_insn_exec_cb(insn, idle_begin, QEMU_PLUGIN_CB_NO_REGS,
                                                   (void *)(uintptr_t)(n - i));
        else if (is_mark(insn, IDLE_END_MARK))
            qemu_plugin_register_vcpu_insn_exec_cb(insn, idle_end, QEMU_PLUGIN_CB_NO_REGS,
                                                   (void *)(uintptr_t)(n - i - 1));
    }
}

static void tb_translated(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    watch_idle_marks(tb);
    uintptr_t n = qemu_plugin_tb_n_insns(tb);
    struct tb_profile *p = profile_out ? calloc(1, sizeof *p) : NULL;
    if (p == NULL) { /* no profile asked for (or no memory: counted in the total only) */
        if (one_vcpu)
            qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &insns[0], n);
        else
            qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_executed, QEMU_PLUGIN_CB_NO_REGS,
                                                 (void *)n);
        return;
    }
    p->vaddr = qemu_plugin_tb_vaddr(tb);
    p->ninsns = n;
    pthread_mutex_lock(&profiles_lock);
    p->next = profiles;
    profiles = p;
    pthread_mutex_unlock(&profiles_lock);
    qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_executed_profiled, QEMU_PLUGIN_CB_NO_REGS, p);
}

static void write_profile_to(FILE *f)
{
    pthread_mutex_lock(&profiles_lock);
    struct tb_profile *head = profiles; /* newer ones are not in this snapshot */
    pthread_mutex_unlock(&profiles_lock);
    for (struct tb_profile *p = head; p != NULL; p = p->next) {
        uint64_t execs = __atomic_load_n(&p->execs, __ATOMIC_RELAXED);
        uint64_t idle = __atomic_load_n(&p->idle_execs, __ATOMIC_RELAXED);
        if (execs)
            fprintf(f, "%" PRIx64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", p->vaddr, p->ninsns,
                    execs, idle);
    }
}

/* A snapshot asked for by a mark file (see the top): its content names the output. */
static void snapshot_if_marked(void)
{
    char target[4096];
    FILE *mark = fopen(profile_mark, "r");
    if (!mark)
        return;
    size_t n = fread(target, 1, sizeof target - 1, mark);
    fclose(mark);
    target[n] = '\0';
    target[strcspn(target, "\n")] = '\0';
    char partial[sizeof target + 8];
    snprintf(partial, sizeof partial, "%s.part", target);
    FILE *f = fopen(partial, "w");
    if (f) {
        write_profile_to(f);
        fclose(f);
        rename(partial, target); /* whole or absent: the reader waits for the name */
    } else {
        fprintf(stderr, "insn_count: cannot write %s: %s\n", partial, strerror(errno));
    }
    unlink(profile_mark);
}

static void at_exit(qemu_plugin_id_t id, void *unused)
{
    (void)id;
    (void)unused;
    if (dumper_running) {
        pthread_mutex_lock(&stop_lock);
        stopping = 1;
        pthread_cond_signal(&stop_cond);
        pthread_mutex_unlock(&stop_lock);
        pthread_join(dumper, NULL);
    }
    dump_line("final ");
    fclose(out);
    if (profile_out) {
        write_profile_to(profile_out);
        fclose(profile_out);
    }
}

/* Parses "out=PATH", "interval_ms=N" and "profile=PPATH"; returns 0, or -1 after saying what
 * is wrong. */
static int parse_args(int argc, char **argv, const char **path, const char **profile_path)
{
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "out=", 4) == 0) {
            *path = argv[i] + 4;
        } else if (strncmp(argv[i], "interval_ms=", 12) == 0) {
            interval_ms = (unsigned)strtoul(argv[i] + 12, NULL, 10);
        } else if (strncmp(argv[i], "profile=", 8) == 0) {
            *profile_path = argv[i] + 8;
        } else {
            fprintf(stderr, "insn_count: unknown argument %s\n", argv[i]);
            return -1;
        }
    }
    if (!*path) {
        fprintf(stderr, "insn_count: out=PATH is required\n");
        return -1;
    }
    return 0;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
                                           int argc, char **argv)
{
    const char *path = NULL, *profile_path = NULL;
    if (parse_args(argc, argv, &path, &profile_path) != 0)
        return -1;
    nvcpus = info->system_emulation ? info->system.max_vcpus : 1;
    one_vcpu = info->system_emulation && info->system.smp_vcpus == 1;
    if (nvcpus > MAX_VCPUS) {
        fprintf(stderr, "insn_count: %d vCPUs, at most %d supported\n", nvcpus, MAX_VCPUS);
        return -1;
    }
    out = fopen(path, "w");
    if (!out) {
        fprintf(stderr, "insn_count: cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (profile_path && !(profile_out = fopen(profile_path, "w"))) {
        fprintf(stderr, "insn_count: cannot open %s: %s\n", profile_path, strerror(errno));
        return -1;
    }
    if (profile_path)
        snprintf(profile_mark, sizeof profile_mark, "%s.mark", profile_path);
    if (interval_ms > 0 && pthread_create(&dumper, NULL, dump_periodically, NULL) == 0)
        dumper_running = 1;
    qemu_plugin_register_vcpu_tb_trans_cb(id, tb_translated);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    return 0;
}
