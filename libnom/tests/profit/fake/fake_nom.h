/* fake_nom.h: what the host test sets and reads of the fakes (fake_nom.c) standing in for
 * libnom (scheduler, timers), the price subscription, the network stack and the console. */
#ifndef FAKE_NOM_H
#define FAKE_NOM_H

#include <stdint.h>
#include <nom/abi.h>

extern struct nom_bb_price fake_price;       /* board price slot 0 */
extern struct nom_bb_app_report fake_report; /* the last NOM_SYS_APP_REPORT */
extern unsigned fake_reports;
extern unsigned fake_conns;                  /* the stack's active connections */
extern unsigned fake_in_flight;              /* its requests in flight (fake_count_in_flight) */
extern int fake_net_up;                      /* 0: the stack's set W -> -ENODEV */
extern uint32_t fake_w_us;                   /* the stack's W */
extern long fake_fixed_w_us;                 /* the W the command line fixed, -1: none */
extern unsigned fake_w_sets;
extern uint64_t fake_idle_poll_us;           /* the last idle poll budget set, 0: none */
extern char fake_console[8192];

/* Resets every fake (net up and registered, W 0, no price, empty console). */
void fake_reset(void);
/* Publishes price usd $/Gbit in slot 0 (sequence + 1). */
void fake_publish(double usd);
/* Registers a stack that counts requests in flight (fake_in_flight); fake_reset's does not. */
void fake_count_in_flight(void);
/* Runs the armed timer's callback once (the "clock" reaching its deadline); 0 if none armed. */
int fake_fire_timer(void);
/* Runs it through one controller sample (NOM_ADAPT_SAMPLE_MS of snapshots); 0 if it stopped. */
int fake_sample(void);
/* Delivers notification bits as nom/price.h's subscription would; 0 if nothing subscribed. */
int fake_notify(uint64_t bits);

#endif /* FAKE_NOM_H */
