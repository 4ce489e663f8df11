/* late_profile: diagnostic TCG plugin (issue 11 item 4). Release points rel=HEX (TB starts)
 * split vCPU 0's run into gaps. Mark functions markrx=HEX / marktx=HEX (called by a
 * diagnostic driver build when it releases a batch >= 5 us late) attribute the TBs of the gap
 * before the last release point ("prev") and of the current one up to the mark ("cur").
 * Records only while the file arm=PATH exists (checked every 1024 release points). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>
#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

enum { RXP, RXC, TXP, TXC, NK };
struct tbp { uint64_t vaddr, ninsns, c[NK]; struct tbp *next; };
static struct tbp *all;
static uint64_t rel[16]; static int nrel; static uint64_t markrx, marktx;
static const char *out_path, *arm_path; static int armed; static uint64_t rel_seen;
#define CAP (4u << 20)
static struct tbp **ring[2]; static uint64_t *tsc[2]; static uint32_t n[2]; static int cur; /* ring[cur] = current gap */
static uint64_t ins[2], start[2]; static int done[2][2]; /* done[gap][rx/tx] */
static uint64_t overflow, marks[2];
#define NG (1u << 20)
struct rec { uint64_t kind, pw, pi, cw, ci, step, before, after, big; };
static struct rec *recs; static uint32_t nrecs;

static uint64_t mono(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000000000ull + t.tv_nsec; }

static inline void push(struct tbp *t)
{
    ins[cur] += t->ninsns;
    if (n[cur] < CAP) { tsc[cur][n[cur]] = __rdtsc(); ring[cur][n[cur]++] = t; } else overflow++;
}

static void tb_cb(unsigned vcpu, void *ud) { if (!vcpu) push(ud); }

static void rel_cb(unsigned vcpu, void *ud)
{
    if (vcpu) return;
    if (arm_path && (rel_seen++ & 1023) == 0) armed = access(arm_path, F_OK) == 0;
    uint64_t now = mono();
    int prev = cur; cur ^= 1;
    (void)prev;
    n[cur] = 0; ins[cur] = 0; start[cur] = now; done[cur][0] = done[cur][1] = 0;
    push(ud);
}

static void mark(int tx)
{
    if (arm_path && !armed) return;
    uint64_t now = mono();
    marks[tx]++;
    int p = cur ^ 1;
    if (!done[cur][tx]) { /* each (gap, kind) once */
        done[cur][tx] = 1;
        for (uint32_t i = 0; i < n[p]; i++) ring[p][i]->c[tx ? TXP : RXP]++;
        for (uint32_t i = 0; i < n[cur]; i++) ring[cur][i]->c[tx ? TXC : RXC]++;
        /* the largest step between consecutive TBs over prev and cur, and the sum of steps >= 20k cycles */
        uint64_t step = 0, before = 0, after = 0, big = 0;
        for (int g = 0; g < 2; g++) {
            int r = g ? cur : p;
            for (uint32_t i = 1; i < n[r]; i++) {
                uint64_t d = tsc[r][i] - tsc[r][i - 1];
                if (d >= 20000) big += d;
                if (d > step) { step = d; before = ring[r][i - 1]->vaddr; after = ring[r][i]->vaddr; }
            }
        }
        if (nrecs < NG) recs[nrecs++] = (struct rec){ tx, start[cur] - start[p], ins[p], now - start[cur], ins[cur], step, before, after, big };
    }
}
static void mrx_cb(unsigned vcpu, void *ud) { if (!vcpu) { push(ud); mark(0); } }
static void mtx_cb(unsigned vcpu, void *ud) { if (!vcpu) { push(ud); mark(1); } }

static void trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    struct tbp *t = calloc(1, sizeof *t);
    t->vaddr = qemu_plugin_tb_vaddr(tb);
    t->ninsns = qemu_plugin_tb_n_insns(tb);
    t->next = all; all = t;
    void (*cb)(unsigned, void *) = tb_cb;
    for (int i = 0; i < nrel; i++) if (rel[i] == t->vaddr) cb = rel_cb;
    if (t->vaddr == markrx) cb = mrx_cb;
    if (t->vaddr == marktx) cb = mtx_cb;
    qemu_plugin_register_vcpu_tb_exec_cb(tb, cb, QEMU_PLUGIN_CB_NO_REGS, t);
}

static void at_exit(qemu_plugin_id_t id, void *p)
{
    (void)id; (void)p;
    FILE *f = fopen(out_path, "w");
    if (!f) return;
    fprintf(f, "# marks rx %" PRIu64 " tx %" PRIu64 " overflow %" PRIu64 " recs %u\n", marks[0], marks[1], overflow, nrecs);
    for (uint32_t i = 0; i < nrecs; i++)
        fprintf(f, "R %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIx64 " %" PRIx64 " %" PRIu64 "\n", recs[i].kind, recs[i].pw, recs[i].pi, recs[i].cw, recs[i].ci, recs[i].step, recs[i].before, recs[i].after, recs[i].big);
    static const char *names[NK] = { "rxprev", "rxcur", "txprev", "txcur" };
    for (struct tbp *t = all; t; t = t->next)
        for (int k = 0; k < NK; k++)
            if (t->c[k]) fprintf(f, "P %s %" PRIx64 " %" PRIu64 " %" PRIu64 "\n", names[k], t->vaddr, t->ninsns, t->c[k]);
    fclose(f);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
    (void)info;
    for (int i = 0; i < argc; i++) {
        char *v = strchr(argv[i], '=');
        if (!v) return -1;
        *v++ = 0;
        if (!strcmp(argv[i], "out")) out_path = strdup(v);
        else if (!strcmp(argv[i], "arm")) arm_path = strdup(v);
        else if (!strcmp(argv[i], "rel") && nrel < 16) rel[nrel++] = strtoull(v, NULL, 16);
        else if (!strcmp(argv[i], "markrx")) markrx = strtoull(v, NULL, 16);
        else if (!strcmp(argv[i], "marktx")) marktx = strtoull(v, NULL, 16);
        else return -1;
    }
    if (!out_path || !nrel) return -1;
    ring[0] = malloc(sizeof *ring[0] * CAP); ring[1] = malloc(sizeof *ring[1] * CAP);
    tsc[0] = malloc(sizeof *tsc[0] * CAP); tsc[1] = malloc(sizeof *tsc[1] * CAP);
    recs = malloc(sizeof *recs * NG);
    qemu_plugin_register_vcpu_tb_trans_cb(id, trans);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    return 0;
}
