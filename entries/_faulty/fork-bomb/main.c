/* The classic fork bomb (expected verdict: cpu_limit for the whole tree, or timeout). */
#include <unistd.h>

int main(void) {
    for (;;) fork();
}
