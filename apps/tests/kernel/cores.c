/* cores: can an application acquire a second core and run a context there, then release it?
 * The second context counts in shared memory and releases its core; the first waits for it. */
#include "ktest.h"

static volatile uint64_t counter, second_cpu_done;
static uint8_t second_stack[16384] __attribute__((aligned(16)));

void second_context(uint64_t arg) {
    for (uint64_t i = 0; i < arg; i++)
        counter++;
    second_cpu_done = 1;
    SYS(NOM_SYS_CORE_RELEASE, 0);
    for (;;) ;
}

int ktest_main(int argc, char **argv, struct nom_start_info *info) {
    (void)argc, (void)argv;
    int64_t cpu = SYS(NOM_SYS_CORE_ACQUIRE, second_context, second_stack + sizeof second_stack, 1000000);
    int64_t none = SYS(NOM_SYS_CORE_ACQUIRE, second_context, second_stack + sizeof second_stack, 1);
    uint64_t deadline = kt_rdtsc() + kt_tsc_hz() * 30;
    while (!second_cpu_done && kt_rdtsc() < deadline)
        ;
    kt_printf("cores: first on cpu %u, second on cpu %ld, third acquire %ld, counter %lu\n",
              info->cpu, cpu, none, counter);
    return cpu >= 0 && cpu != (int64_t)info->cpu && none == -NOM_EBUSY && counter == 1000000 ? 0 : 1;
}
