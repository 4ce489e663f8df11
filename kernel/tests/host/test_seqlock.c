/* Does the bulletin board's seqlock (seqlock.h) ever hand a reader a torn copy? One writer
 * thread rewrites a record whose fields must all be equal; reader threads copy it through the
 * seqlock and check every copy. Prints one verdict line per case. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "seqlock.h"

#define FIELDS 64
#define WRITES 200000

static struct { volatile uint64_t gen; volatile uint64_t v[FIELDS]; } rec;
static volatile int done;

static void *writer(void *arg) {
    (void)arg;
    for (uint64_t i = 1; i <= WRITES; i++) {
        seqlock_write_begin(&rec.gen);
        for (int f = 0; f < FIELDS; f++)
            rec.v[f] = i;
        seqlock_write_end(&rec.gen);
    }
    done = 1;
    return NULL;
}

struct result { long reads, torn, retries; };

static void *reader(void *arg) {
    struct result *r = arg;
    uint64_t copy[FIELDS];
    while (!done) {
        uint64_t g;
        do {
            g = seqlock_read_begin(&rec.gen);
            for (int f = 0; f < FIELDS; f++)
                copy[f] = rec.v[f];
            r->retries++;
        } while (seqlock_read_retry(&rec.gen, g));
        r->retries--;
        r->reads++;
        for (int f = 1; f < FIELDS; f++)
            if (copy[f] != copy[0]) {
                r->torn++;
                break;
            }
    }
    return NULL;
}

int main(void) {
    pthread_t w, rd[2];
    struct result res[2];
    memset(res, 0, sizeof res);
    pthread_create(&w, NULL, writer, NULL);
    for (int i = 0; i < 2; i++)
        pthread_create(&rd[i], NULL, reader, &res[i]);
    pthread_join(w, NULL);
    for (int i = 0; i < 2; i++)
        pthread_join(rd[i], NULL);
    long reads = res[0].reads + res[1].reads, torn = res[0].torn + res[1].torn;
    printf("%s no_torn_reads (%ld reads, %ld retries)\n", torn == 0 && reads > 0 ? "PASS" : "FAIL",
           reads, res[0].retries + res[1].retries);
    printf("%s generation_even_after_writes\n", rec.gen == 2 * WRITES ? "PASS" : "FAIL");
    return 0;
}
