/* main.c - the nanoprof command: dispatches to one file per subcommand. */
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "nanoprof/nanoprof.h"

/* Subcommands, one line each (their files declare the function). */
int np_cmd_report(int argc, char **argv);
int np_cmd_record(int argc, char **argv);
int np_cmd_graph(int argc, char **argv);
int np_cmd_tree(int argc, char **argv);
int np_cmd_replay(int argc, char **argv);
int np_cmd_dump(int argc, char **argv);
int np_cmd_flame(int argc, char **argv);
int np_cmd_blocks(int argc, char **argv);
int np_cmd_emu(int argc, char **argv);
int np_cmd_import(int argc, char **argv);
static const struct np_command commands[] = {
    { "record", "run a program and record every call into a trace", np_cmd_record },
    { "report", "the flat profile: time and calls per function", np_cmd_report },
    { "graph", "the call graph, as gprof prints it: callers and callees per function", np_cmd_graph },
    { "tree", "the call tree of each thread: calls and times per path", np_cmd_tree },
    { "replay", "every call in the order it was made, with its time", np_cmd_replay },
    { "dump", "the profile in another tool's format (Chrome trace, folded stacks, callgrind, gmon.out)", np_cmd_dump },
    { "flame", "the call tree as an SVG flame graph", np_cmd_flame },
    { "blocks", "basic-block counts per function and source line", np_cmd_blocks },
    { "emu", "run ARM firmware in the emulator and record its exact call tree", np_cmd_emu },
    { "import", "a trace recorded on a Cortex-M target, from its captured output", np_cmd_import },
    { NULL, NULL, NULL }
};

static void usage(FILE *out)
{
    fputs("usage: nanoprof [--version] [--help] <command> [<args>]\n"
          "\n"
          "nanoprof profiles C programs: built with -finstrument-functions (every call),\n"
          "with -fsanitize-coverage=trace-pc (basic blocks), or as they are (sampling).\n"
          "\n"
          "commands:\n",
          out);
    for (const struct np_command *c = commands; c->name; c++)
        fprintf(out, "  %-10s %s\n", c->name, c->summary);
    fputs("\n"
          "options:\n"
          "  --version   print the version and exit\n"
          "  --help      print this help and exit\n"
          "\n"
          "`nanoprof <command> --help` describes each command.\n",
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
    for (const struct np_command *c = commands; c->name; c++)
        if (strcmp(argv[1], c->name) == 0)
            return c->run(argc - 1, argv + 1);
    fprintf(stderr, "nanoprof: unknown command or option '%s' (see nanoprof --help)\n", argv[1]);
    return 2;
}
