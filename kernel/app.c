/* app.c: applications. Each boot module is an application: a static ELF image loaded into its
 * own address space, started in ring 3 with argc/argv/envp from the module command line
 * (abi.h, struct nom_start_info). An application ends by exiting or by being killed; either way
 * only it goes, its devices are quiesced first, and the kernel says so on the console. */
#include "defs.h"
#include "app.h"
#include "pci.h"

#define CMDLINE_MAX 1024
#define MAX_WORDS 64

struct app apps[MAX_APPS];
static bool exit_when_idle;
static int napps_started;

struct app *app_by_id(uint32_t id) {
    return id >= 1 && id <= MAX_APPS && apps[id - 1].used ? &apps[id - 1] : NULL;
}

/* Publishes an application's row and the CPU owners on the bulletin board. */
void app_publish(struct app *a) {
    struct nom_bb *bb = bb_begin_write();
    struct nom_bb_app *row = &bb->apps[a->id - 1];
    row->id = a->id;
    row->state = a->state;
    strncpy0(row->name, a->name, sizeof row->name);
    row->cores = a->live_ctxs;
    row->mem_limit_pages = (uint32_t)a->mem_limit;
    row->mem_pages = a->mem_pages;
    row->exit_status = a->exit_status;
    row->cpu_ns = tsc_to_ns(a->cpu_tsc);
    if (bb->napps < a->id)
        bb->napps = a->id;
    bb->mem_free_bytes = frame_count_free() * PAGE_SIZE;
    for (int i = 0; i < ncpus; i++) {
        uint32_t owner = NOM_NO_OWNER;
        for (int j = 0; j < MAX_APPS; j++)
            for (struct ctx *c = apps[j].ctxs; c; c = c->app_next)
                if (c->cpu == i && c->state != CTX_DEAD)
                    owner = owner == NOM_NO_OWNER || owner == apps[j].id ? apps[j].id : NOM_NO_OWNER;
        bb->cpus[i].owner = owner;
    }
    bb_end_write();
}

/* Just the CPU time of a's row: called whenever one of its contexts leaves a CPU. */
void app_publish_cpu_time(struct app *a) {
    struct nom_bb *bb = bb_begin_write();
    bb->apps[a->id - 1].cpu_ns = tsc_to_ns(a->cpu_tsc);
    bb_end_write();
}

/* Writes into an application's memory through the direct map, ignoring its write protection
 * (loading read-only segments). The range must be mapped. */
static void write_app_memory(struct app *a, uint64_t va, const void *src, uint64_t len) {
    while (len) {
        uint64_t off = va & (PAGE_SIZE - 1), n = PAGE_SIZE - off < len ? PAGE_SIZE - off : len;
        uint64_t *pte = vm_lookup(a->pml4, va);
        memcpy((uint8_t *)P2V(*pte & PTE_ADDR) + off, src, n);
        va += n;
        src = (const uint8_t *)src + n;
        len -= n;
    }
}

/* May a take npages more frames? Within its limit, and never the kernel's last frames: an
 * application that exhausts memory gets -ENOMEM, the kernel keeps working. */
bool app_may_take(const struct app *a, uint64_t npages) {
    return npages <= a->mem_limit - a->mem_pages &&
           npages + MEM_KERNEL_RESERVE <= frame_count_free();
}

static int map_fresh(struct app *a, uint64_t va, uint64_t flags) {
    uint64_t *pte = vm_lookup(a->pml4, va);
    if (pte && (*pte & PTE_P)) { /* two segments share this page: merge their permissions */
        *pte |= flags & PTE_W;
        if (!(flags & PTE_NX))
            *pte &= ~PTE_NX;
        return 0;
    }
    uint64_t pa = app_may_take(a, 1) ? frame_alloc() : 0;
    if (!pa)
        return -NOM_ENOMEM;
    if (vm_map_page(a->pml4, va, pa, flags | PTE_P | PTE_U | PTE_SW_FRAME) < 0) {
        frame_free(pa);
        return -NOM_ENOMEM;
    }
    a->mem_pages++;
    return 0;
}

static const char *load_image(struct app *a, const struct boot_module *m, uint64_t *entry) {
    struct elf_segment segs[ELF_MAX_SEGMENTS];
    int n;
    const uint8_t *image = P2V(m->start);
    const char *err = elf_parse(image, m->end - m->start, NOM_USER_MIN, NOM_DEVICE_WINDOW, segs,
                                &n, entry);
    if (err)
        return err;
    for (int i = 0; i < n; i++) {
        uint64_t flags = ((segs[i].flags & 2) ? PTE_W : 0) | ((segs[i].flags & 1) ? 0 : PTE_NX);
        for (uint64_t va = PAGE_ROUND_DOWN(segs[i].vaddr); va < segs[i].vaddr + segs[i].memsz; va += PAGE_SIZE)
            if (map_fresh(a, va, flags) < 0)
                return "out of memory";
        write_app_memory(a, segs[i].vaddr, image + segs[i].offset, segs[i].filesz);
    }
    return NULL;
}

static bool is_env_word(const char *w) {
    if (!((*w >= 'A' && *w <= 'Z') || (*w >= 'a' && *w <= 'z') || *w == '_'))
        return false;
    for (; *w && *w != '='; w++)
        if (!((*w >= 'A' && *w <= 'Z') || (*w >= 'a' && *w <= 'z') || (*w >= '0' && *w <= '9') || *w == '_'))
            return false;
    return *w == '=';
}

struct cmdline {
    char buf[CMDLINE_MAX];
    char *argv[MAX_WORDS], *envp[MAX_WORDS];
    int argc, envc;
    bool publisher, may_notify;
    uint64_t mem_limit_mib; /* 0: all memory */
    int cpu; /* -1: any */
};

/* `[nom.FLAG ...] [VAR=value ...] NAME ARG ...` (abi.h). Returns an error or NULL. */
static const char *parse_cmdline(const char *line, struct cmdline *cl) {
    strncpy0(cl->buf, line, sizeof cl->buf);
    cl->argc = cl->envc = 0;
    cl->publisher = cl->may_notify = false;
    cl->mem_limit_mib = 0;
    cl->cpu = -1;
    char *p = cl->buf;
    while (*p) {
        while (*p == ' ' || *p == '\t') *p++ = 0;
        if (!*p) break;
        char *w = p;
        while (*p && *p != ' ' && *p != '\t') p++;
        if (*p) *p++ = 0;
        if (cl->argc == 0 && cl->envc == 0 && strncmp(w, "nom.", 4) == 0) {
            if (strncmp(w, "nom.price-publisher", 20) == 0)
                cl->publisher = true;
            else if (strncmp(w, "nom.notify", 11) == 0)
                cl->may_notify = true;
            else if (strncmp(w, "nom.mem-limit=", 14) == 0)
                cl->mem_limit_mib = parse_u64(w + 14, NULL);
            else if (strncmp(w, "nom.cpu=", 8) == 0)
                cl->cpu = (int)parse_u64(w + 8, NULL);
            else
                return "unknown nom. flag";
        } else if (cl->argc == 0 && is_env_word(w)) {
            if (cl->envc == MAX_WORDS - 1) return "too many environment words";
            cl->envp[cl->envc++] = w;
        } else {
            if (cl->argc == MAX_WORDS - 1) return "too many arguments";
            cl->argv[cl->argc++] = w;
        }
    }
    return cl->argc ? NULL : "no application name";
}

/* Lays out strings, argv, envp and struct nom_start_info at the top of the stack; returns rsp. */
static uint64_t build_start_stack(struct app *a, const struct cmdline *cl) {
    uint64_t sp = NOM_STACK_TOP;
    uint64_t argv_va[MAX_WORDS], envp_va[MAX_WORDS];
    for (int i = 0; i < cl->argc; i++) {
        uint64_t n = strlen(cl->argv[i]) + 1;
        sp -= n;
        write_app_memory(a, sp, cl->argv[i], n);
        argv_va[i] = sp;
    }
    for (int i = 0; i < cl->envc; i++) {
        uint64_t n = strlen(cl->envp[i]) + 1;
        sp -= n;
        write_app_memory(a, sp, cl->envp[i], n);
        envp_va[i] = sp;
    }
    argv_va[cl->argc] = envp_va[cl->envc] = 0;
    sp &= ~15ull;
    sp -= (cl->envc + 1) * 8;
    uint64_t envp_at = sp;
    write_app_memory(a, sp, envp_va, (cl->envc + 1) * 8);
    sp -= (cl->argc + 1) * 8;
    uint64_t argv_at = sp;
    write_app_memory(a, sp, argv_va, (cl->argc + 1) * 8);
    sp = (sp - sizeof(struct nom_start_info)) & ~15ull;
    struct nom_start_info si = {.argc = cl->argc, .argv = (char **)argv_at,
                                .envp = (char **)envp_at, .app_id = a->id, .cpu = 0};
    write_app_memory(a, sp, &si, sizeof si);
    return sp;
}

static struct app *app_alloc(const char *name) {
    for (int i = 0; i < MAX_APPS; i++) {
        if (!apps[i].used && apps[i].state == NOM_APP_EMPTY) {
            struct app *a = &apps[i];
            memset(a, 0, sizeof *a);
            a->used = true;
            a->id = i + 1;
            strncpy0(a->name, name, sizeof a->name);
            return a;
        }
    }
    return NULL;
}

static void app_start(const struct boot_module *m, struct cmdline *cl) {
    const char *err = parse_cmdline(m->cmdline, cl);
    if (err) {
        kprintf("nom: module '%s' not started: %s\n", m->cmdline, err);
        return;
    }
    struct app *a = app_alloc(cl->argv[0]);
    if (!a) {
        kprintf("nom: app %s not started: too many applications\n", cl->argv[0]);
        return;
    }
    a->price_publisher = cl->publisher;
    a->may_notify = cl->may_notify;
    a->mem_limit = frame_count_total();
    if (cl->mem_limit_mib && cl->mem_limit_mib < a->mem_limit / 256)
        a->mem_limit = cl->mem_limit_mib * 256;
    a->pml4 = vm_new_address_space();
    uint64_t entry = 0;
    err = a->pml4 ? load_image(a, m, &entry) : "out of memory";
    for (uint64_t i = 0; !err && i < NOM_STACK_PAGES; i++)
        if (map_fresh(a, NOM_STACK_TOP - (i + 1) * PAGE_SIZE, PTE_W | PTE_NX) < 0)
            err = "out of memory for the stack";
    for (uint64_t i = 0; !err && i < NOM_BB_PAGES; i++)
        if (vm_map_page(a->pml4, NOM_BB_ADDR + i * PAGE_SIZE, bb_phys() + i * PAGE_SIZE,
                        PTE_P | PTE_U | PTE_NX) < 0)
            err = "out of memory for the bulletin board";
    int cpu = cl->cpu >= 0 && cl->cpu < ncpus ? cl->cpu : sched_pick_cpu(false);
    struct ctx *c = NULL;
    if (!err) {
        uint64_t sp = build_start_stack(a, cl);
        c = ctx_create(a, cpu, entry, sp, sp);
        if (!c)
            err = "out of memory for a context";
    }
    if (err) {
        kprintf("nom: app %s not started: %s\n", a->name, err);
        if (a->pml4)
            vm_free_address_space(a->pml4);
        a->used = false;
        return;
    }
    a->state = NOM_APP_RUNNING;
    napps_started++;
    kprintf("nom: app %s started (id %u, cpu %d%s%s)\n", a->name, a->id, cpu,
            a->price_publisher ? ", price publisher" : "", a->may_notify ? ", may notify" : "");
    app_publish(a);
    sched_add(c);
}

void apps_start_modules(const struct boot_info *bi) {
    static struct cmdline cl;
    for (const char *p = bi->cmdline; *p; p++)
        if (strncmp(p, "exit-when-idle", 14) == 0)
            exit_when_idle = true;
    for (int i = 0; i < bi->nmodules; i++)
        app_start(&bi->modules[i], &cl);
    if (napps_started == 0)
        kprintf("nom: no application to run\n");
}

/* After the last application ends: with `exit-when-idle` on the kernel command line (tests),
 * QEMU exits with status 0 if every application exited 0, else 1. */
static void check_all_ended(void) {
    int worst = 0;
    for (int i = 0; i < MAX_APPS; i++) {
        if (apps[i].used)
            return;
        if (apps[i].state == NOM_APP_KILLED || (apps[i].state == NOM_APP_EXITED && apps[i].exit_status))
            worst = 1;
    }
    kprintf("nom: all applications ended\n");
    if (exit_when_idle)
        qemu_exit(worst);
}

void app_reap_context(struct ctx *c) {
    struct app *a = c->app;
    for (struct ctx **pp = &a->ctxs; *pp; pp = &(*pp)->app_next) {
        if (*pp == c) {
            *pp = c->app_next;
            break;
        }
    }
    device_ctx_gone(c);
    ctx_free(c);
    if (a->ctxs == NULL && a->used) {
        sched_forget_app(a);
        vm_free_address_space(a->pml4);
        iommu_app_gone(a);
        if (a->io_bitmap)
            frame_free_contig(V2P(a->io_bitmap), 2);
        a->io_bitmap = NULL;
        a->used = false;
        a->live_ctxs = 0;
        app_publish(a);
        check_all_ended();
    }
}

/* Stops every context of a: the running ones are reaped by their CPU once it has switched away. */
static void app_end(struct app *a, enum nom_app_state state) {
    a->dying = true;
    a->state = state;
    device_release_all(a);
    struct ctx *next;
    for (struct ctx *c = a->ctxs; c; c = next) {
        next = c->app_next;
        enum ctx_state was = c->state;
        c->state = CTX_DEAD;
        if (was == CTX_RUNNING) {
            if (c->cpu != (int)this_cpu()->index)
                sched_kick_cpu(c->cpu);
        } else {
            if (was == CTX_RUNNABLE)
                sched_remove(c);
            app_reap_context(c);
        }
    }
    a->live_ctxs = 0;
    if (a->used)
        app_publish(a);
}

void app_exit(struct app *a, int64_t status) {
    if (a->dying)
        return;
    a->exit_status = status;
    kprintf("nom: app %s exited %ld (cpu time %lu ms)\n", a->name, status,
            tsc_to_ns(a->cpu_tsc + rdtsc() - this_cpu()->current->run_since) / 1000000);
    app_end(a, NOM_APP_EXITED);
}

void app_kill(struct app *a, const char *fmt, ...) {
    if (a->dying)
        return;
    char reason[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    kprintf("nom: app %s killed: %s\n", a->name, reason);
    a->exit_status = -1;
    app_end(a, NOM_APP_KILLED);
}
