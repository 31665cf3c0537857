/* options.c - reading a command line (options.h). */
#define _GNU_SOURCE
#include "options.h"
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int np_cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "nanoprof %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see nanoprof %s --help)\n", cmd);
    va_end(ap);
    return 2;
}

/* The long options whose names start with the LEN bytes of NAME: the one
 * named exactly in *EXACT (or NULL), how many in all. */
static size_t long_matches(const struct np_cli_option *opts, const char *name, size_t len,
                           const struct np_cli_option **exact, const struct np_cli_option **any)
{
    size_t n = 0;
    *exact = *any = NULL;
    for (const struct np_cli_option *o = opts; o->id; o++) {
        if (!o->name || strncmp(o->name, name, len) != 0)
            continue;
        if (!o->name[len])
            *exact = o;
        *any = o;
        n++;
    }
    return n;
}

/* What getopt refused in ARG, a long option ("--name" or "--name=value"). */
static int long_error(const struct np_cli *c, const char *arg, bool missing)
{
    const char *name = arg + 2, *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    if (missing)
        return np_cli_usage_error(c->cmd, "option '--%.*s' needs a value", (int)len, name);
    const struct np_cli_option *exact, *any;
    size_t n = long_matches(c->options, name, len, &exact, &any);
    if (len == 4 && !strncmp(name, "help", 4))
        n = 1, exact = any = NULL; /* --help=... */
    if (n > 1 && !exact)
        return np_cli_usage_error(c->cmd, "option '--%.*s' is ambiguous", (int)len, name);
    if (n && eq)
        return np_cli_usage_error(c->cmd, "option '--%s' takes no value", exact ? exact->name : any ? any->name : "help");
    return np_cli_usage_error(c->cmd, "unknown option '%s'", arg);
}

int np_cli_parse(const struct np_cli *c, void *ctx, int argc, char **argv, int *first)
{
    struct option longopts[NP_CLI_MAX_OPTIONS + 2];
    char shortopts[3 * NP_CLI_MAX_OPTIONS + 8];
    size_t nl = 0, ns = 0;
    /* "-": arguments come back in order (as 1), whatever POSIXLY_CORRECT
     * says; NP_CLI_PERMUTE gathers them itself */
    shortopts[ns++] = c->order == NP_CLI_UNTIL_ARGUMENT ? '+' : '-';
    shortopts[ns++] = ':'; /* a missing value is ':', not '?' */
    shortopts[ns++] = 'h';
    for (const struct np_cli_option *o = c->options; o && o->id && nl < NP_CLI_MAX_OPTIONS; o++) {
        int has = o->value == NP_CLI_VALUE ? required_argument
                  : o->value == NP_CLI_OPTIONAL_VALUE ? optional_argument : no_argument;
        if (o->name)
            longopts[nl++] = (struct option){ o->name, has, NULL, o->id };
        if (o->letter) {
            shortopts[ns++] = o->letter;
            if (o->value != NP_CLI_NO_VALUE)
                shortopts[ns++] = ':';
            if (o->value == NP_CLI_OPTIONAL_VALUE)
                shortopts[ns++] = ':';
        }
    }
    longopts[nl++] = (struct option){ "help", no_argument, NULL, 'h' };
    memset(&longopts[nl], 0, sizeof longopts[nl]);
    shortopts[ns] = 0;

    char **args = NULL; /* NP_CLI_PERMUTE: the arguments, in order */
    int nargs = 0;
    if (c->order == NP_CLI_PERMUTE && !(args = malloc((size_t)argc * sizeof *args))) {
        fprintf(stderr, "nanoprof %s: out of memory\n", c->cmd);
        return 1;
    }
    optind = 0; /* glibc: start over, whatever ran before */
    opterr = 0;
    int opt, rc = 0;
    while (!rc && (opt = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
        const char *arg = optind > 0 && optind <= argc ? argv[optind - 1] : "";
        bool is_long = arg[0] == '-' && arg[1] == '-' && arg[2];
        if (opt == 1) {
            if (args)
                args[nargs++] = optarg;
            else
                rc = c->argument ? c->argument(ctx, optarg)
                                 : np_cli_usage_error(c->cmd, "unexpected argument '%s'", optarg);
        } else if (opt == 'h') {
            c->usage(stdout);
            rc = NP_CLI_HELP;
        } else if (opt == ':' || opt == '?') {
            /* a short option's letter is optopt; a long one's text is the
             * argument just read */
            bool short_one = optopt > 0 && optopt < NP_CLI_OWN && !(is_long && optopt == 'h');
            if (is_long && (!short_one || opt == ':' || optopt == 0))
                rc = long_error(c, arg, opt == ':');
            else if (opt == ':')
                rc = np_cli_usage_error(c->cmd, "option '-%c' needs a value", optopt);
            else
                rc = np_cli_usage_error(c->cmd, "unknown option '-%c'", optopt);
        } else {
            rc = c->option(ctx, opt, optarg);
        }
    }
    /* after "--", arguments only (NP_CLI_UNTIL_ARGUMENT leaves them) */
    for (; !rc && c->order != NP_CLI_UNTIL_ARGUMENT && optind < argc; optind++) {
        if (args)
            args[nargs++] = argv[optind];
        else
            rc = c->argument ? c->argument(ctx, argv[optind])
                             : np_cli_usage_error(c->cmd, "unexpected argument '%s'", argv[optind]);
    }
    if (!rc && args) {
        /* the options are read: their slots take the arguments, in order */
        for (int i = 0; i < nargs; i++)
            argv[argc - nargs + i] = args[i];
        optind = argc - nargs;
    }
    free(args);
    if (first)
        *first = optind;
    return rc;
}

/* ---- -F and -N --------------------------------------------------------------- */

static const char *plural(uint64_t n)
{
    return n == 1 ? "" : "s";
}

size_t np_cli_say_unmatched(const char *cmd, const char *prefix, const char *what, const struct np_pattern_use *uses,
                            size_t n, unsigned files, bool held, size_t functions)
{
    size_t said = 0;
    for (size_t i = 0; i < n; i++) {
        const struct np_pattern_use *u = &uses[i];
        /* without the trace's functions (record), only a pattern that
         * matches nothing in files that were searched */
        if (u->functions || (!held && (!files || u->in_files)))
            continue;
        fprintf(stderr, "nanoprof %s: %s-%c '%s': ", cmd, prefix, u->exclude ? 'N' : 'F', u->text);
        if (u->in_files)
            fprintf(stderr, "matches %" PRIu64 " function%s of %s's ELF files, but none the trace has calls of "
                            "(it holds %zu function%s)\n",
                    u->in_files, plural(u->in_files), what, functions, plural(functions));
        else if (!files)
            fprintf(stderr, "matches no function of %s (searched: %zu function%s it holds; its ELF files could "
                            "not be read)\n",
                    what, functions, plural(functions));
        else if (held)
            fprintf(stderr, "matches no function of %s (searched: %zu function%s it holds, and the symbol tables "
                            "of its %u ELF file%s)\n",
                    what, functions, plural(functions), files, plural(files));
        else
            fprintf(stderr, "matches no function of %s (searched: the symbol tables of %u ELF file%s)\n", what,
                    files, plural(files));
        said++;
    }
    return said;
}
