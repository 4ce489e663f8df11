/* <sys/poll.h>: the same as <poll.h> (some ports include this one). */
#include <poll.h>
