/* tls.c: __thread variables (issue 3 beyond the conformance set): each thread starts from the
 * initial values and keeps its own copies across switches and preemption. Prints
 * "tls: ok" or "tls: FAIL ...". A program of its own, as only programs with thread-local data
 * pay for it (an FS-base switch per thread switch). */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
#include <nom/sched.h>

static __thread int counter = 42;
static __thread char scratch[256];
static __thread long zeroed;

static void *worker(void *arg)
{
    long id = (long)arg, bad = 0;
    bad += counter != 42 || zeroed != 0 || scratch[100] != 0;
    for (int i = 0; i < 1000; i++) {
        counter += (int)id;
        scratch[i % 256] = (char)id;
        zeroed += id;
        if (i % 10 == 0)
            nom_yield();
    }
    bad += counter != 42 + 1000 * (int)id || zeroed != 1000 * id || scratch[7] != (char)id;
    return (void *)bad;
}

int main(void)
{
    pthread_t t[8];
    long bad = 0;
    for (long i = 0; i < 8; i++)
        pthread_create(&t[i], NULL, worker, (void *)(i + 1));
    for (int i = 0; i < 8; i++) {
        void *r;
        pthread_join(t[i], &r);
        bad += (long)r;
    }
    bad += counter != 42;
    printf(bad ? "tls: FAIL %ld wrong values\n" : "tls: ok\n", bad);
    return bad != 0;
}
