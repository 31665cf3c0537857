/* main.c - the nanoprof command: dispatches to one file per subcommand. */
#include <stdio.h>
#include <string.h>
#include "nanoprof/nanoprof.h"

static void usage(FILE *out)
{
    fputs("usage: nanoprof [--version] [--help] <command> [<args>]\n"
          "\n"
          "nanoprof profiles C programs. This release provides the runtime\n"
          "library (link with `pkg-config --cflags --libs nanoprof`); the\n"
          "recording and analysis commands come next.\n"
          "\n"
          "options:\n"
          "  --version   print the version and exit\n"
          "  --help      print this help and exit\n",
          out);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
        printf("nanoprof %s\n", NP_VERSION_STRING);
        return 0;
    }
    fprintf(stderr, "nanoprof: unknown command or option '%s' (see nanoprof --help)\n", argv[1]);
    return 2;
}
