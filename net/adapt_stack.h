/* adapt_stack.h: the stack's side of libnom's controller (adapt_stack.c, nom/adapt.h). */
#ifndef NET_ADAPT_STACK_H
#define NET_ADAPT_STACK_H

/* Registers lwIP's connection count and the driver's batching delay with the controller
 * (nom_adapt_stack_register); nom_net_start calls it once the stack runs. Never fails. */
void net_adapt_stack_register(long fixed_w_us);

#endif /* NET_ADAPT_STACK_H */
