/* idle.c: an application with nothing to do for a second, waiting in four ways at once (a
 * sleeping thread, a timed condition wait, a poll with a timeout, main joining them). The
 * kernel's "cpu time" at exit tells whether libnom blocked the core (a few ms) or spun. */
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static void *sleeper(void *arg)
{
    (void)arg;
    sleep(1);
    return NULL;
}

static void *cond_waiter(void *arg)
{
    (void)arg;
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t c = PTHREAD_COND_INITIALIZER;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 1;
    pthread_mutex_lock(&m);
    pthread_cond_timedwait(&c, &m, &until);
    pthread_mutex_unlock(&m);
    return NULL;
}

static void *poller(void *arg)
{
    (void)arg;
    int fds[2];
    pipe(fds);
    struct pollfd p = { fds[0], POLLIN, 0 };
    poll(&p, 1, 1000);
    return NULL;
}

int main(void)
{
    pthread_t t[3];
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    pthread_create(&t[0], NULL, sleeper, NULL);
    pthread_create(&t[1], NULL, cond_waiter, NULL);
    pthread_create(&t[2], NULL, poller, NULL);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("idle: waited %ld ms\n", (long)((b.tv_sec - a.tv_sec) * 1000 +
                                           (b.tv_nsec - a.tv_nsec) / 1000000));
    return 0;
}
