/*
 * nom/fault.h: what libnom does with page faults (paper 3.4: the application, not the kernel,
 * handles its page faults).
 *
 * Contract: a fault inside the heap (below the break), inside a thread's stack reservation
 * above its guard page, or inside the main stack's growth area is handled by mapping zeroed
 * pages and retrying the access, invisibly. Any other fault is "real": libnom prints one
 * report line to the console,
 *   nom: fault: <kind> at 0x<addr> rip 0x<rip> thread <id> (<name>): <cause>
 * and then, by the policy below, ends the application with status 139 (the default, like
 * SIGSEGV) or ends only the faulting thread (its pthread_join value is NOM_THREAD_FAULTED;
 * the main thread's fault always ends the application).
 */
#ifndef NOM_FAULT_H
#define NOM_FAULT_H

enum nom_fault_policy {
    NOM_FAULT_EXIT = 0,       /* report, then exit(139) */
    NOM_FAULT_END_THREAD = 1, /* report, then end the faulting (non-main) thread */
};

#define NOM_THREAD_FAULTED ((void *)-2l)

/* Sets the policy for real faults. */
void nom_fault_policy_set(enum nom_fault_policy policy);
/* Number of real faults reported so far. */
unsigned long nom_fault_count(void);

#endif /* NOM_FAULT_H */
