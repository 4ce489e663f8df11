/*
 * libnom's <sys/features.h>: newlib's, plus the POSIX options nom provides. newlib announces
 * threads, timers and the monotonic clock only for hosts it knows (RTEMS, Cygwin); libnom
 * implements them (pthread.h, time.h's clock_gettime/nanosleep), so their feature macros are
 * set here and newlib's own headers then declare CLOCK_MONOTONIC, clock_gettime and friends.
 */
#ifndef NOM_SYS_FEATURES_H
#define NOM_SYS_FEATURES_H

#include_next <sys/features.h>

#define _POSIX_THREADS 200809L
#define _POSIX_THREAD_ATTR_STACKSIZE 200809L
#define _POSIX_THREAD_SAFE_FUNCTIONS 200809L
#define _POSIX_READER_WRITER_LOCKS 200809L
#define _POSIX_TIMEOUTS 200809L
#define _POSIX_TIMERS 200809L
#define _POSIX_MONOTONIC_CLOCK 200809L
#define _POSIX_CLOCK_SELECTION 200809L
#define _UNIX98_THREAD_MUTEX_ATTRIBUTES 1

#endif /* NOM_SYS_FEATURES_H */
