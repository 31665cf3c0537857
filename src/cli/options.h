/* options.h - the one way every subcommand reads its command line
 * (record, emu, import, and the views through view.h): a table of
 * options per command, read by getopt_long, so that every command takes
 * -x VALUE, -xVALUE, --name VALUE and --name=VALUE alike (and an
 * unambiguous abbreviation of a long name), -h and --help, and says
 * every usage error the same way, in one line on stderr with status 2:
 *     nanoprof CMD: unknown option '-X' (see nanoprof CMD --help)
 *     nanoprof CMD: option '--output' needs a value (see nanoprof CMD --help)
 * A command's handler checks each value as it comes and says what is
 * wrong with it through np_cli_usage_error.
 *
 * What record and the views share about their options lives here too:
 * the line that says a -F or -N pattern matched no function. */
#ifndef NP_CLI_OPTIONS_H
#define NP_CLI_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "analyze/patterns.h"

enum np_cli_value {
    NP_CLI_NO_VALUE,
    NP_CLI_VALUE,          /* required: the next argument, or after '=' (or attached to -x) */
    NP_CLI_OPTIONAL_VALUE  /* only as --name=VALUE (a long option) */
};

/* One option. ID is what the handler is told: the short name when there
 * is one, else a number from NP_CLI_OWN up. */
struct np_cli_option {
    const char *name;      /* the long name without "--", or NULL */
    char letter;           /* the short name, or 0 */
    enum np_cli_value value;
    int id;
};
enum { NP_CLI_OWN = 256 };

enum np_cli_order {
    NP_CLI_PERMUTE,        /* options and arguments in any order */
    NP_CLI_UNTIL_ARGUMENT, /* options end at the first argument (or "--"): what
                              follows is a program's own (record, emu) */
    NP_CLI_IN_ORDER        /* arguments handed to ARGUMENT in order, among options */
};

struct np_cli {
    const char *cmd;                     /* "record": how every line starts */
    const struct np_cli_option *options; /* ending with an entry whose id is 0;
                                            -h and --help need no entry */
    enum np_cli_order order;
    void (*usage)(FILE *out);            /* the text of --help */
    /* Option ID with VALUE (NULL when it has none): 0, or 2 after a usage
     * error it said. */
    int (*option)(void *ctx, int id, const char *value);
    /* NP_CLI_IN_ORDER: an argument (0, or 2 after a usage error it said). */
    int (*argument)(void *ctx, const char *arg);
};

/* The status np_cli_parse returns after --help: the command exits 0. */
#define NP_CLI_HELP (-1)
/* At most this many options in a table. */
#define NP_CLI_MAX_OPTIONS 64

/* Reads ARGV (argv[0]: the command's name). Returns 0 with *FIRST (may be
 * NULL) the index of the first argument the options left (NP_CLI_PERMUTE
 * gathers them there, NP_CLI_UNTIL_ARGUMENT stops at it; argc when none),
 * NP_CLI_HELP after printing --help on stdout, or 2 after a usage error
 * (said). */
int np_cli_parse(const struct np_cli *c, void *ctx, int argc, char **argv, int *first);

/* "nanoprof CMD: <FMT...> (see nanoprof CMD --help)" on stderr; returns 2. */
int np_cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- -F and -N --------------------------------------------------------------- */

/* The options every command that filters by function takes: -F, --filter
 * and -N, --notrace, each with a pattern (common/name_match.h). */
#define NP_CLI_FILTER_OPTIONS { "filter", 'F', NP_CLI_VALUE, 'F' }, { "notrace", 'N', NP_CLI_VALUE, 'N' }

/* Says, one line each on stderr, every pattern of USES[0..N) that matched
 * no function:
 *   nanoprof CMD: PREFIX-F 'luaH_*': matches no function of WHAT (searched:
 *   [FUNCTIONS functions it holds, and ]the symbol tables of its FILES ELF files)
 * WHAT names what was searched ("PROG or the libraries it loaded", "the
 * trace"). HELD: USES counted the FUNCTIONS functions the trace holds (a
 * view's model); a pattern that matches functions of the files but none
 * of those is then said too. Without them (record), a pattern is said
 * only when FILES files were searched. Returns how many lines were said. */
size_t np_cli_say_unmatched(const char *cmd, const char *prefix, const char *what, const struct np_pattern_use *uses,
                            size_t n, unsigned files, bool held, size_t functions);

#endif
