/* bench.c: costs of libnom's primitives, measured in the guest with the TSC. Prints
 * "bench NAME NS ns/op" lines (tests/test_guest.py checks they are all there; it never judges
 * the numbers, which under TCG measure the emulator as much as libnom). */
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <nom/sched.h>
#include <nom/syscall.h>
#include <nom/time.h>

static void report(const char *name, uint64_t t0, long ops)
{
    uint64_t ns = nom_tsc_to_ns(nom_tsc() - t0);
    printf("bench %s %.1f ns/op\n", name, (double)ns / (double)ops);
}

static void bench_clock(void)
{
    enum { N = 200000 };
    struct timespec ts;
    uint64_t t0 = nom_tsc();
    for (int i = 0; i < N; i++)
        clock_gettime(CLOCK_MONOTONIC, &ts);
    report("clock_gettime", t0, N);
}

static void bench_syscall(void)
{
    enum { N = 20000 };
    uint64_t t0 = nom_tsc();
    for (int i = 0; i < N; i++)
        nom_sys_virt_to_phys((uint64_t)&t0);
    report("syscall_virt_to_phys", t0, N);
    static char page[4096] __attribute__((aligned(4096)));
    (void)page;
    t0 = nom_tsc();
    for (int i = 0; i < N / 10; i++) {
        nom_sys_mem_map(0x580000000000ull, 4, NOM_MAP_READ | NOM_MAP_WRITE);
        nom_sys_mem_unmap(0x580000000000ull, 4);
    }
    report("mem_map_unmap_4_pages", t0, N / 10);
}

static void bench_mutex(void)
{
    enum { N = 200000 };
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    uint64_t t0 = nom_tsc();
    for (int i = 0; i < N; i++) {
        pthread_mutex_lock(&m);
        pthread_mutex_unlock(&m);
    }
    report("mutex_lock_unlock", t0, N);
}

static void bench_malloc(void)
{
    enum { N = 200000 };
    uint64_t t0 = nom_tsc();
    for (int i = 0; i < N; i++) {
        void *volatile p = malloc(64);
        free(p);
    }
    report("malloc_free_64", t0, N);
}

enum { SWITCHES = 100000 };
static void *yielder(void *arg)
{
    (void)arg;
    for (int i = 0; i < SWITCHES / 2; i++)
        nom_yield();
    return NULL;
}

static void bench_switch(void)
{
    pthread_t a, b;
    pthread_create(&a, NULL, yielder, NULL);
    pthread_create(&b, NULL, yielder, NULL);
    uint64_t t0 = nom_tsc();
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    report("thread_switch_yield", t0, SWITCHES);
}

static pthread_mutex_t pm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pc = PTHREAD_COND_INITIALIZER;
static int turn;
enum { ROUNDS = 20000 };

static void *ponger(void *arg)
{
    int me = (int)(long)arg;
    pthread_mutex_lock(&pm);
    for (int i = 0; i < ROUNDS; i++) {
        while (turn != me)
            pthread_cond_wait(&pc, &pm);
        turn = !me;
        pthread_cond_signal(&pc);
    }
    pthread_mutex_unlock(&pm);
    return NULL;
}

static void bench_condvar(void)
{
    pthread_t a, b;
    uint64_t t0 = nom_tsc();
    pthread_create(&a, NULL, ponger, (void *)0l);
    pthread_create(&b, NULL, ponger, (void *)1l);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    report("condvar_round_trip", t0, ROUNDS);
}

static int ping[2], pong[2];

static void *echo(void *arg)
{
    (void)arg;
    char c;
    for (int i = 0; i < ROUNDS; i++) {
        read(ping[0], &c, 1);
        write(pong[1], &c, 1);
    }
    return NULL;
}

static void bench_pipe(void)
{
    pthread_t t;
    char c = 'x';
    pipe(ping);
    pipe(pong);
    pthread_create(&t, NULL, echo, NULL);
    uint64_t t0 = nom_tsc();
    for (int i = 0; i < ROUNDS; i++) {
        write(ping[1], &c, 1);
        read(pong[0], &c, 1);
    }
    report("pipe_round_trip", t0, ROUNDS);
    pthread_join(t, NULL);
}

/* The same round trip while 16 other threads sit in poll() on pipes nobody writes (memcached's
 * worker threads, idle in libevent): what each descriptor event costs the bystanders. */
static void *idle_poller(void *arg)
{
    struct pollfd p = { *(int *)arg, POLLIN, 0 };
    poll(&p, 1, -1);
    return NULL;
}

static void bench_pipe_with_pollers(void)
{
    enum { POLLERS = 16 };
    static int quiet[POLLERS][2];
    pthread_t t[POLLERS];
    for (int i = 0; i < POLLERS; i++) {
        pipe(quiet[i]);
        pthread_create(&t[i], NULL, idle_poller, &quiet[i][0]);
    }
    usleep(1000); /* let them all reach poll() */
    pthread_t e;
    char c = 'x';
    pthread_create(&e, NULL, echo, NULL);
    uint64_t t0 = nom_tsc();
    for (int i = 0; i < ROUNDS; i++) {
        write(ping[1], &c, 1);
        read(pong[0], &c, 1);
    }
    report("pipe_round_trip_16_idle_pollers", t0, ROUNDS);
    pthread_join(e, NULL);
    for (int i = 0; i < POLLERS; i++) {
        write(quiet[i][1], &c, 1);
        pthread_join(t[i], NULL);
    }
}

static void *nothing(void *arg) { return arg; }

static void bench_create_join(void)
{
    enum { N = 5000 };
    uint64_t t0 = nom_tsc();
    for (int i = 0; i < N; i++) {
        pthread_t t;
        pthread_create(&t, NULL, nothing, NULL);
        pthread_join(t, NULL);
    }
    report("thread_create_join", t0, N);
}

static void bench_sleep(void)
{
    enum { N = 200 };
    uint64_t t0 = nom_tsc();
    for (int i = 0; i < N; i++)
        usleep(100);
    report("usleep_100us", t0, N);
}

int main(void)
{
    bench_clock();
    bench_syscall();
    bench_mutex();
    bench_malloc();
    bench_switch();
    bench_condvar();
    bench_pipe();
    bench_pipe_with_pollers();
    bench_create_join();
    bench_sleep();
    printf("bench done\n");
    return 0;
}
