/* adapt_stack.c: where the network stack registers its knob and counter for the controller
 * (nom/adapt.h, struct nom_adapt_stack). A file of its own so that a stack registering itself
 * does not pull the controller, the price library and libm into applications that never adapt. */
#include <stddef.h>

#include <nom/adapt.h>

static const struct nom_adapt_stack *registered;

void nom_adapt_stack_register(const struct nom_adapt_stack *stack)
{
    registered = stack;
}

const struct nom_adapt_stack *nom_adapt_stack(void)
{
    return registered;
}
