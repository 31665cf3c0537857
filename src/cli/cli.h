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

#endif
