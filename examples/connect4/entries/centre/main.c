/* A json-protocol entry: one process per game; reads one JSON object per line
 * and answers each {"type": "turn", ...} with {"move": "<column>"}. */
#include <stdio.h>
#include <string.h>

static char line[1 << 16], position[1 << 12];

/* the "position" string of a turn message, unescaped (a position holds \n, \" and \\) */
static int read_position(void) {
    const char *p = strstr(line, "\"position\"");
    size_t n = 0;
    if (!p || !(p = strchr(p + 10, '"'))) return 0;
    for (p++; *p && *p != '"' && n + 1 < sizeof position; p++) {
        if (*p == '\\' && p[1]) {
            p++;
            position[n++] = *p == 'n' ? '\n' : *p;
        } else {
            position[n++] = *p;
        }
    }
    position[n] = 0;
    return 1;
}

int main(void) {
    while (fgets(line, sizeof line, stdin)) {
        if (strstr(line, "\"end\"")) break;
        if (!strstr(line, "\"turn\"") || !read_position()) continue; /* "start" needs no answer */
        const char *top = strchr(position, '\n'); /* line 1 is the mark to move */
        if (!top) return 1;
        top++;
        int width = (int)strcspn(top, "\n"), move = 0;
        for (int off = 0; off < width && !move; off++)
            for (int sign = -1; sign <= 1 && !move; sign += 2) {
                int x = width / 2 + sign * off;
                if (x >= 0 && x < width && top[x] == '.') move = x + 1;
            }
        printf("{\"move\": \"%d\"}\n", move);
        fflush(stdout);
    }
    return 0;
}
