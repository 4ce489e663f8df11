/* conns.h: how many TCP connections are active, as the stack sees them (inside net/adapt). */
#ifndef NOM_ADAPT_CONNS_H
#define NOM_ADAPT_CONNS_H

/* Connections in ESTABLISHED that received a segment in about the last second (nom/adapt.h,
 * "Load class"). Scheduler or thread context; takes the stack lock. Never fails. */
unsigned adapt_active_conns(void);

#endif /* NOM_ADAPT_CONNS_H */
