/* hello.c: the smallest libnom application: stdio with a float, argv and the environment. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    printf("hello from libnom: argc=%d argv[0]=%s pi=%.5f GREETING=%s\n", argc, argv[0],
           3.14159265, getenv("GREETING") ? getenv("GREETING") : "(unset)");
    return 7;
}
