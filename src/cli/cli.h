/* cli.h - the nanoprof command's subcommands: one file each, one line each
 * in the table of main.c. */
#ifndef NP_CLI_H
#define NP_CLI_H

/* Each returns the process exit status: 0 success, 1 failure, 2 usage. */
struct np_command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv); /* argv[0] is the subcommand name */
};

/* `nanoprof report ARGV...` printing to OUT: `emu --report` shows its run's
 * flat profile on stderr, the firmware's console having stdout. */
#include <stdio.h>
int np_cmd_report_to(FILE *out, int argc, char **argv);

#endif
