/* load_trace.c: the load detector (nom/learn.h's nom_load_concurrency, nom/adapt.h's meter)
 * over a recorded trace. Reads one sample a line on stdin, "conns in_flight snapshots" (a
 * trace's columns 2-4, test_load_traces.py cuts them), and prints the class after each, the
 * meter starting "single" as the controller does. With --connections-only it ignores the
 * counted requests in flight (the detector before them, for comparison). */
#include <stdio.h>
#include <string.h>

#include <nom/adapt.h>
#include <nom/learn.h>

int main(int argc, char **argv)
{
    int conns_only = argc > 1 && strcmp(argv[1], "--connections-only") == 0;
    struct nom_load_meter m;
    struct nom_load_signals s = {0};
    nom_load_meter_init(&m, NOM_LOAD_SINGLE);
    while (scanf("%u %lf %u", &s.active_conns, &s.in_flight, &s.snapshots) == 3) {
        if (conns_only)
            s.snapshots = 0;
        nom_load_meter_sample(&m, nom_load_concurrency(&s));
        printf("%s\n", nom_load_name(m.cls));
    }
    return 0;
}
