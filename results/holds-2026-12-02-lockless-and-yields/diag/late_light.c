/* late_light: low-overhead version of late_profile: inline instruction counter, callbacks
 * only at release points (rel=) and late marks (markrx=, marktx=). Per mark: kind, prev gap
 * wall ns and insns, cur gap wall ns and insns, and the TB vaddr of the release point that
 * began prev and cur. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;
static uint64_t rel[16]; static int nrel; static uint64_t markrx, marktx;
static const char *out_path, *arm_path; static int armed; static uint64_t rel_seen;
static uint64_t insns; /* inline-added by every TB (vCPU 0 only machine) */
static uint64_t g_start[2], g_ins[2], g_at[2]; static int cur; static int done[2][2];
struct rec { uint64_t kind, pw, pi, cw, ci, pat, cat, p0, now; };
#define NG (1u << 20)
static struct rec *recs; static uint32_t nrecs;
static uint64_t hist_w[32], hist_i[32];
static uint64_t mono(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000000000ull + t.tv_nsec; }
static int lg(uint64_t x) { int b = 0; while (x > 1 && b < 31) { x >>= 1; b++; } return b; }

static void rel_cb(unsigned vcpu, void *ud)
{
    if (vcpu) return;
    if (arm_path && (rel_seen++ & 1023) == 0) armed = access(arm_path, F_OK) == 0;
    uint64_t now = mono();
    if (armed && g_start[cur]) { hist_w[lg(now - g_start[cur])]++; hist_i[lg(insns - g_ins[cur])]++; }
    cur ^= 1;
    g_start[cur] = now; g_ins[cur] = insns; g_at[cur] = (uint64_t)(uintptr_t)ud; done[cur][0] = done[cur][1] = 0;
}
static void mark(int tx)
{
    if (arm_path && !armed) return;
    if (done[cur][tx]) return;
    done[cur][tx] = 1;
    uint64_t now = mono(); int p = cur ^ 1;
    if (nrecs < NG) recs[nrecs++] = (struct rec){ tx, g_start[cur] - g_start[p], g_ins[cur] - g_ins[p], now - g_start[cur], insns - g_ins[cur], g_at[p], g_at[cur], g_start[p], now };
}
static void mrx_cb(unsigned vcpu, void *ud) { (void)ud; if (!vcpu) mark(0); }
static void mtx_cb(unsigned vcpu, void *ud) { (void)ud; if (!vcpu) mark(1); }

static void trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    uint64_t va = qemu_plugin_tb_vaddr(tb);
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &insns, qemu_plugin_tb_n_insns(tb));
    for (int i = 0; i < nrel; i++) if (rel[i] == va) qemu_plugin_register_vcpu_tb_exec_cb(tb, rel_cb, QEMU_PLUGIN_CB_NO_REGS, (void *)(uintptr_t)va);
    if (va == markrx) qemu_plugin_register_vcpu_tb_exec_cb(tb, mrx_cb, QEMU_PLUGIN_CB_NO_REGS, NULL);
    if (va == marktx) qemu_plugin_register_vcpu_tb_exec_cb(tb, mtx_cb, QEMU_PLUGIN_CB_NO_REGS, NULL);
}
static void at_exit(qemu_plugin_id_t id, void *p)
{
    (void)id; (void)p;
    FILE *f = fopen(out_path, "w");
    if (!f) return;
    fprintf(f, "# recs %u\n", nrecs);
    for (int i = 0; i < 32; i++) if (hist_w[i] || hist_i[i]) fprintf(f, "H %d %" PRIu64 " %" PRIu64 "\n", i, hist_w[i], hist_i[i]);
    for (uint32_t i = 0; i < nrecs; i++)
        fprintf(f, "R %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIx64 " %" PRIx64 " %" PRIu64 " %" PRIu64 "\n", recs[i].kind, recs[i].pw, recs[i].pi, recs[i].cw, recs[i].ci, recs[i].pat, recs[i].cat, recs[i].p0, recs[i].now);
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
    recs = malloc(sizeof *recs * NG);
    qemu_plugin_register_vcpu_tb_trans_cb(id, trans);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    return 0;
}
