/* Dereferences a null pointer (expected verdict: crash, signal 11). */
#include <stdio.h>

int main(void) {
    volatile int *nowhere = NULL;
    *nowhere = 42;
    puts("unreachable");
    return 0;
}
