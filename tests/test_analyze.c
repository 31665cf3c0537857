/* test_analyze.c - the trace reader, symbols and the model, with exact
 * numbers: traces written by trace_builder against this executable's own
 * functions (tb_sample_trace), read back through np_model_load. */
#define _GNU_SOURCE
#include <dirent.h>
#include <inttypes.h>
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <elf.h>
#include <link.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "analyze/events_decode.h"
#include "analyze/gmon_bb.h"
#include "analyze/model.h"
#include "analyze/trace_read.h"
#include "analyze/stacks.h"
#include "analyze/symbols.h"
#include "analyze/textfmt.h"
#include "common/trace_format.h"
#include "timeline.h"
#include "trace_builder.h"

static char dir[256];        /* a fresh directory per test */
static char diags[8192];     /* diagnostic lines of the last load */
static int ndiags;
static struct tb_sample fns;

static void on_diag(void *ctx, enum np_diag_level level, const char *line)
{
    (void)ctx;
    size_t n = strlen(diags);
    snprintf(diags + n, sizeof diags - n, "%s%s\n",
             level == NP_DIAG_WARNING ? "W " : level == NP_DIAG_NOTE ? "N " : "E ", line);
    ndiags++;
}

static const struct np_trace_hooks hooks = { NULL, on_diag, NULL };

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "%s/np_analyze_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    assert_non_null(mkdtemp(dir));
    tb_sample_functions(&fns);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[512];
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.') {
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
    if (d)
        closedir(d);
    rmdir(dir);
    return 0;
}

static const char *file_in_dir(const char *name)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return path;
}

static struct np_model *load(const char *path, const struct np_model_options *opt, struct np_trace_summary *sum)
{
    struct np_model *m;
    diags[0] = 0;
    ndiags = 0;
    np_model_load(path, opt, &hooks, &m, sum);
    assert_non_null(m);
    return m;
}

static const struct np_function *fn(const struct np_model *m, const char *name)
{
    size_t n;
    const struct np_function *f = np_model_functions(m, &n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(f[i].name, name) == 0)
            return &f[i];
    return NULL;
}

static uint32_t fn_index(const struct np_model *m, const char *name)
{
    size_t n;
    const struct np_function *f = np_model_functions(m, &n);
    const struct np_function *x = fn(m, name);
    assert_non_null(x);
    return (uint32_t)(x - f);
}

/* calls, total, self of NAME; -1 for "not in the profile" */
static void expect_fn(const struct np_model *m, const char *name, long calls, uint64_t total, uint64_t self)
{
    const struct np_function *f = fn(m, name);
    if (calls < 0) {
        if (f && f->calls)
            fail_msg("%s should not be in the profile (%lu calls)", name, (unsigned long)f->calls);
        return;
    }
    if (!f)
        fail_msg("no function %s", name);
    if (f->calls != (uint64_t)calls || f->total_ns != total || f->self_ns != self)
        fail_msg("%s: calls %lu total %lu self %lu, want %ld %lu %lu", name, (unsigned long)f->calls,
                 (unsigned long)f->total_ns, (unsigned long)f->self_ns, calls, (unsigned long)total,
                 (unsigned long)self);
}

/* The invariant: self times add up to the threads' totals, and both to
 * the tree roots'. Returns the sum. */
static uint64_t check_self_sum(const struct np_model *m)
{
    size_t nf, nt, nn;
    const struct np_function *f = np_model_functions(m, &nf);
    const struct np_thread *t = np_model_threads(m, &nt);
    const struct np_node *node = np_model_nodes(m, &nn);
    uint64_t self = 0, total = 0, roots = 0, node_self = 0;
    for (size_t i = 0; i < nf; i++)
        self += f[i].self_ns;
    for (size_t i = 0; i < nt; i++) {
        total += t[i].total_ns;
        roots += node[t[i].root].total_ns;
    }
    for (size_t i = 0; i < nn; i++)
        node_self += node[i].self_ns;
    assert_int_equal(self, total);
    assert_int_equal(roots, total);
    assert_int_equal(node_self, total);
    return total;
}

static void write_sample(const char *name, bool with_end)
{
    struct tb b;
    tb_init(&b);
    tb_sample_trace(&b, &fns, with_end);
    assert_int_equal(tb_write(&b, file_in_dir(name)), 0);
    tb_free(&b);
}

/* ---- the sample trace, exact ------------------------------------------------ */

static void sample_profile(void **state)
{
    (void)state;
    write_sample("4242.npt", true);
    struct np_trace_summary sum;
    struct np_model *m = load(dir, NULL, &sum);
    assert_int_equal(sum.status, NP_TRACE_OK);
    assert_int_equal(ndiags, 0);
    assert_int_equal(sum.files, 1);
    assert_int_equal(sum.files_read, 1);
    assert_int_equal(sum.files_unfinished, 0);
    expect_fn(m, "sample_main", 1, 100, 50);
    expect_fn(m, "sample_helper", 1, 50, 20); /* static: from .symtab */
    expect_fn(m, "sample_leaf", 1, 30, 30);
    expect_fn(m, "sample_fib", 4, 100, 100); /* recursion counted once */
    expect_fn(m, "sample_square", 2, 50, 40);
    expect_fn(m, "0x10", 1, 10, 10);         /* outside every module */
    expect_fn(m, "sample_twice", 1, 40, 30); /* open at the end */
    const struct np_function *fib = fn(m, "sample_fib"), *sq = fn(m, "sample_square");
    assert_int_equal(fib->min_ns, 5);
    assert_int_equal(fib->max_ns, 100);
    assert_int_equal(fib->sum_ns, 145);
    assert_int_equal(np_function_avg_ns(fib), 36);
    assert_int_equal(sq->min_ns, 10);
    assert_int_equal(sq->max_ns, 40);
    assert_int_equal(sq->switched_ns, 5);
    assert_int_equal(sq->self_switched_ns, 5);
    assert_int_equal(check_self_sum(m), 280);

    size_t n;
    const struct np_thread *t = np_model_threads(m, &n);
    assert_int_equal(n, 2);
    assert_int_equal(t[0].tid, 100);
    assert_string_equal(t[0].name, "main");
    assert_int_equal(t[0].total_ns, 200);
    assert_int_equal(t[0].calls, 7);
    assert_int_equal(t[0].first_ns, 1000000000ull); /* tick 1000 = start */
    assert_int_equal(t[0].last_ns, 1000000300ull);  /* END's 1 ns per tick, not INFO's 2 */
    assert_int_equal(t[1].tid, 101);
    assert_string_equal(t[1].name, "worker");
    assert_int_equal(t[1].total_ns, 80);
    assert_int_equal(t[1].switched_ns, 5);

    const struct np_process *p = np_model_processes(m, &n);
    assert_int_equal(n, 1);
    assert_int_equal(p->pid, 4242);
    assert_true(p->complete);
    assert_int_equal(p->events_lost, 0);
    assert_int_equal(p->end_ns, 1000002000ull);
    assert_int_equal(p->argc, 3);
    assert_string_equal(p->argv[2], "a,b \"c\"");
    assert_string_equal(p->clock, "monotonic");
    np_model_free(m);
}

static void sample_symbols(void **state)
{
    (void)state;
    write_sample("4242.npt", true);
    struct np_model *m = load(dir, NULL, &(struct np_trace_summary){ 0 });
    const struct np_function *h = fn(m, "sample_helper");
    struct tb_self self;
    tb_self(&self);
    assert_non_null(h);
    assert_string_equal(h->module, self.path);
    assert_int_equal(h->address, fns.helper - self.bias);
    assert_null(fn(m, "0x10")->module);
    /* this file is built with -g: the declaration's line from DWARF */
    assert_non_null(h->file);
    assert_non_null(strstr(h->file, "trace_builder.c"));
    assert_int_equal(h->line, fns.helper_line);
    np_model_free(m);
}

/* ---- the vDSO ------------------------------------------------------------------ */

static int vdso_warnings;
static char vdso_warning[256];
static void on_vdso_warning(void *ctx, const char *line)
{
    (void)ctx;
    vdso_warnings++;
    snprintf(vdso_warning, sizeof vdso_warning, "%s", line);
}

/* Whether some address of M names a function starting "__vdso_". */
static bool names_vdso(const struct np_trace_module *m)
{
    struct np_symbols *s = np_symbols_new(on_vdso_warning, NULL);
    struct np_addrspace *a = np_addrspace_new(s);
    assert_int_equal(np_addrspace_map(a, m), 0);
    bool found = false;
    for (uint64_t pc = m->start; pc < m->end && !found; pc += 4) {
        struct np_symbol sym;
        np_addrspace_lookup(a, pc, &sym);
        found = sym.name && !strncmp(sym.name, "__vdso_", 7);
    }
    np_addrspace_free(a);
    np_symbols_free(s);
    return found;
}

/* The kernel's vDSO has no file: a MODULE "[vdso]" recorded under this
 * kernel (the same build-id) is named from this process's own; one
 * recorded under another kernel gives addresses, and one line says so. */
static void vdso_symbols(void **state)
{
    (void)state;
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)(uintptr_t)getauxval(AT_SYSINFO_EHDR);
    if (!eh)
        skip();
    /* its code's range and build-id, read here from its program headers */
    const ElfW(Phdr) *ph = (const ElfW(Phdr) *)((const char *)eh + eh->e_phoff);
    uint64_t base = (uint64_t)(uintptr_t)eh, lo = UINT64_MAX, hi = 0;
    uint8_t id[64];
    size_t idlen = 0;
    for (int i = 0; i < eh->e_phnum; i++) {
        if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X)) {
            lo = ph[i].p_vaddr < lo ? ph[i].p_vaddr : lo;
            hi = ph[i].p_vaddr + ph[i].p_memsz > hi ? ph[i].p_vaddr + ph[i].p_memsz : hi;
        }
        for (const char *p = (const char *)eh + ph[i].p_offset, *e = p + ph[i].p_filesz;
             ph[i].p_type == PT_NOTE && p + 12 <= e;) {
            const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
            const char *desc = p + 12 + ((n->n_namesz + 3) & ~3u);
            if (n->n_type == NT_GNU_BUILD_ID && n->n_descsz <= sizeof id) {
                memcpy(id, desc, n->n_descsz);
                idlen = n->n_descsz;
            }
            p = desc + ((n->n_descsz + 3) & ~3u);
        }
    }
    assert_true(hi > lo && idlen > 0);
    struct np_trace_module m = { base, base + lo, base + hi, id, idlen, "[vdso]" };
    vdso_warnings = 0;
    assert_true(names_vdso(&m));
    assert_int_equal(vdso_warnings, 0);
    id[0] ^= 1; /* another kernel's */
    assert_false(names_vdso(&m));
    assert_int_equal(vdso_warnings, 1);
    assert_non_null(strstr(vdso_warning, "[vdso]: recorded under another kernel"));
}

/* A function known by a versioned name only (versioned_fn@@V1 in .symtab,
 * beside a local alias: glibc's are so in its debug file) is named without
 * its version. */
static void versioned_names(void **state)
{
    (void)state;
    void *h = dlopen(NP_VERSIONED_LIB, RTLD_NOW);
    assert_non_null(h);
    void *fn = dlsym(h, "versioned_fn");
    struct link_map *lm = NULL;
    assert_non_null(fn);
    assert_int_equal(dlinfo(h, RTLD_DI_LINKMAP, &lm), 0);
    struct np_trace_module m = { lm->l_addr, (uint64_t)(uintptr_t)fn, (uint64_t)(uintptr_t)fn + 1, NULL, 0,
                                 NP_VERSIONED_LIB };
    struct np_symbols *s = np_symbols_new(on_vdso_warning, NULL);
    struct np_addrspace *a = np_addrspace_new(s);
    assert_int_equal(np_addrspace_map(a, &m), 0);
    struct np_symbol sym;
    np_addrspace_lookup(a, (uint64_t)(uintptr_t)fn, &sym);
    assert_non_null(sym.name);
    assert_string_equal(sym.name, "versioned_fn");
    np_addrspace_free(a);
    np_symbols_free(s);
    dlclose(h);
}

static const struct np_arc *arc(const struct np_model *m, uint32_t caller, uint32_t callee)
{
    size_t n;
    const struct np_arc *a = np_model_arcs(m, &n);
    for (size_t i = 0; i < n; i++)
        if (a[i].caller == caller && a[i].callee == callee)
            return &a[i];
    fail_msg("no arc %u -> %u", caller, callee);
    return NULL;
}

static void sample_graph_and_tree(void **state)
{
    (void)state;
    write_sample("4242.npt", true);
    struct timeline tl;
    timeline_init(&tl);
    struct np_model_options opt = { .listener = &tl.listener };
    struct np_model *m = load(dir, &opt, &(struct np_trace_summary){ 0 });
    uint32_t main_ = fn_index(m, "sample_main"), helper = fn_index(m, "sample_helper"),
             fib = fn_index(m, "sample_fib"), twice = fn_index(m, "sample_twice"),
             square = fn_index(m, "sample_square");
    assert_int_equal(arc(m, NP_NONE, main_)->calls, 1);
    assert_int_equal(arc(m, main_, helper)->total_ns, 50);
    assert_int_equal(arc(m, fib, fib)->calls, 3);
    assert_int_equal(arc(m, fib, fib)->total_ns, 45);
    assert_int_equal(arc(m, fib, fib)->outer_ns, 0); /* recursion: in the outer call's */
    assert_int_equal(arc(m, NP_NONE, fib)->calls, 1);
    assert_int_equal(arc(m, NP_NONE, fib)->outer_ns, 100);
    assert_int_equal(arc(m, main_, helper)->outer_ns, 50);
    assert_int_equal(arc(m, twice, square)->total_ns, 10);
    assert_int_equal(arc(m, NP_NONE, square)->switched_ns, 5);

    /* tree of thread 100: root -> main -> helper -> leaf; root -> fib -> fib (2) -> fib */
    size_t n;
    const struct np_node *nodes = np_model_nodes(m, &n);
    const struct np_thread *t = np_model_threads(m, &n);
    const struct np_node *root = &nodes[t[0].root];
    assert_int_equal(root->function, NP_NONE);
    assert_int_equal(root->total_ns, 200);
    assert_int_equal(root->calls, 2);
    const struct np_node *a = &nodes[root->first_child], *b = &nodes[a->next_sibling];
    assert_int_equal(a->function, main_);
    assert_int_equal(a->self_ns, 50);
    assert_int_equal(nodes[a->first_child].function, helper);
    assert_int_equal(nodes[nodes[a->first_child].first_child].depth, 3);
    assert_int_equal(b->function, fib);
    assert_int_equal(b->next_sibling, NP_NONE);
    const struct np_node *b2 = &nodes[b->first_child];
    assert_int_equal(b2->calls, 2);
    assert_int_equal(b2->total_ns, 35);
    assert_int_equal(b2->self_ns, 25);
    assert_int_equal(nodes[b2->first_child].calls, 1);
    assert_int_equal(nodes[b2->first_child].first_child, NP_NONE);

    /* timeline: 11 calls told, as they nest; by thread then start */
    assert_null(timeline_check(&tl));
    timeline_sort(&tl);
    const struct np_call *c = tl.calls;
    n = tl.n;
    assert_int_equal(n, 11);
    assert_int_equal(c[0].function, main_);
    assert_int_equal(c[0].start_ns, 1000000000ull);
    assert_int_equal(c[0].duration_ns, 100);
    assert_int_equal(c[2].depth, 2);
    assert_int_equal(c[7].thread, 1);
    for (size_t i = 1; i < n; i++)
        assert_true(c[i - 1].thread < c[i].thread ||
                    (c[i - 1].thread == c[i].thread && c[i - 1].start_ns <= c[i].start_ns));
    np_model_free(m);
    timeline_free(&tl);
}

/* No END: a warning, INFO's 2 ns per tick, calls closed at the last event. */
static void sample_without_end(void **state)
{
    (void)state;
    write_sample("4242.npt", false);
    struct np_trace_summary sum;
    struct np_model *m = load(dir, NULL, &sum);
    assert_int_equal(sum.status, NP_TRACE_OK);
    assert_int_equal(sum.files_unfinished, 1);
    assert_int_equal(ndiags, 1);
    assert_non_null(strstr(diags, "W "));
    assert_non_null(strstr(diags, "no END chunk"));
    expect_fn(m, "sample_main", 1, 200, 100);
    expect_fn(m, "sample_twice", 1, 80, 60);
    size_t n;
    assert_false(np_model_processes(m, &n)->complete);
    assert_int_equal(np_model_processes(m, &n)->end_ns, 1000000000ull + 2 * 1100);
    /* the cut closed twice, open on the worker; the main thread had nothing open */
    const struct np_thread *t = np_model_threads(m, &n);
    assert_int_equal(n, 2);
    assert_int_equal(t[0].closed_at_cut, 0);
    assert_int_equal(t[1].closed_at_cut, 1);
    assert_int_equal(t[0].closed_at_loss + t[1].closed_at_loss, 0);
    check_self_sum(m);
    np_model_free(m);
}

/* ---- options ------------------------------------------------------------------- */

static struct np_model *load_with(const char *opt1, enum np_model_opt k1, const char *opt2, enum np_model_opt k2,
                                  struct np_model_options *o)
{
    char err[128];
    memset(o, 0, sizeof *o);
    if (opt1)
        assert_int_equal(np_model_option(o, k1, opt1, err, sizeof err), 0);
    if (opt2)
        assert_int_equal(np_model_option(o, k2, opt2, err, sizeof err), 0);
    write_sample("4242.npt", true);
    return load(dir, o, &(struct np_trace_summary){ 0 });
}

static void filter_exclude(void **state)
{
    (void)state;
    struct np_model_options o;
    struct np_model *m = load_with("*helper", NP_MODEL_OPT_EXCLUDE, "0x*", NP_MODEL_OPT_EXCLUDE, &o);
    expect_fn(m, "sample_main", 1, 100, 100); /* helper's time stays in main */
    expect_fn(m, "sample_helper", -1, 0, 0);
    expect_fn(m, "sample_leaf", -1, 0, 0);    /* called from helper: dropped too */
    expect_fn(m, "sample_square", 2, 50, 50);
    expect_fn(m, "0x10", -1, 0, 0);
    expect_fn(m, "sample_fib", 4, 100, 100);
    assert_int_equal(check_self_sum(m), 280);
    np_model_free(m);
    np_model_options_free(&o);
}

static void filter_include(void **state)
{
    (void)state;
    struct np_model_options o;
    struct np_model *m = load_with("sample_helper", NP_MODEL_OPT_INCLUDE, "sample_tw?ce", NP_MODEL_OPT_INCLUDE, &o);
    expect_fn(m, "sample_main", -1, 0, 0);
    expect_fn(m, "sample_helper", 1, 50, 20);
    expect_fn(m, "sample_leaf", 1, 30, 30);
    expect_fn(m, "sample_twice", 1, 40, 30);
    expect_fn(m, "sample_square", 1, 10, 10); /* the call inside twice only */
    expect_fn(m, "sample_fib", -1, 0, 0);
    assert_int_equal(check_self_sum(m), 90);
    size_t n;
    const struct np_node *nodes = np_model_nodes(m, &n);
    const struct np_thread *t = np_model_threads(m, &n);
    assert_int_equal(nodes[nodes[t[0].root].first_child].function, fn_index(m, "sample_helper"));
    np_model_free(m);
    np_model_options_free(&o);
}

static void filter_depth_and_tid(void **state)
{
    (void)state;
    struct np_model_options o;
    struct np_model *m = load_with("1", NP_MODEL_OPT_DEPTH, "100", NP_MODEL_OPT_TID, &o);
    expect_fn(m, "sample_main", 1, 100, 100);
    expect_fn(m, "sample_helper", -1, 0, 0);
    expect_fn(m, "sample_fib", 1, 100, 100);
    expect_fn(m, "sample_square", -1, 0, 0); /* thread 101 */
    size_t n;
    np_model_threads(m, &n);
    assert_int_equal(n, 1);
    assert_int_equal(check_self_sum(m), 200);
    np_model_free(m);
    np_model_options_free(&o);
}

static void filter_min_duration(void **state)
{
    (void)state;
    struct np_model_options o;
    struct np_model *m = load_with("30ns", NP_MODEL_OPT_MIN_DURATION, NULL, 0, &o);
    expect_fn(m, "sample_leaf", 1, 30, 30);
    expect_fn(m, "sample_fib", 2, 100, 100); /* the 10 and 5 ns calls are dropped */
    expect_fn(m, "sample_square", 1, 40, 40);
    expect_fn(m, "0x10", -1, 0, 0);
    assert_int_equal(check_self_sum(m), 280);
    /* the nodes of dropped calls are unlinked */
    size_t n;
    const struct np_node *nodes = np_model_nodes(m, &n);
    const struct np_thread *t = np_model_threads(m, &n);
    const struct np_node *fib1 = &nodes[nodes[nodes[t[0].root].first_child].next_sibling];
    assert_int_equal(nodes[fib1->first_child].calls, 1);
    assert_int_equal(nodes[fib1->first_child].first_child, NP_NONE);
    np_model_free(m);
    np_model_options_free(&o);
}

static void exclude_switched_time(void **state)
{
    (void)state;
    write_sample("4242.npt", true);
    struct np_model_options o = { .exclude_switched = true };
    struct np_model *m = load(dir, &o, &(struct np_trace_summary){ 0 });
    expect_fn(m, "sample_square", 2, 45, 35);
    assert_int_equal(check_self_sum(m), 275);
    np_model_free(m);
}

static void option_errors(void **state)
{
    (void)state;
    struct np_model_options o = { 0 };
    char err[128];
    assert_int_equal(np_model_option(&o, NP_MODEL_OPT_TID, "1,2,3", err, sizeof err), 0);
    assert_int_equal(o.ntids, 3);
    assert_int_equal(np_model_option(&o, NP_MODEL_OPT_TID, "1,,2", err, sizeof err), -1);
    assert_non_null(strstr(err, "thread list"));
    assert_int_equal(np_model_option(&o, NP_MODEL_OPT_TID, "x", err, sizeof err), -1);
    assert_int_equal(np_model_option(&o, NP_MODEL_OPT_DEPTH, "0", err, sizeof err), -1);
    assert_int_equal(np_model_option(&o, NP_MODEL_OPT_DEPTH, "3x", err, sizeof err), -1);
    assert_int_equal(np_model_option(&o, NP_MODEL_OPT_MIN_DURATION, "1.5us", err, sizeof err), 0);
    assert_int_equal(o.min_duration_ns, 1500);
    assert_int_equal(np_model_option(&o, NP_MODEL_OPT_MIN_DURATION, "2 ms", err, sizeof err), -1);
    assert_int_equal(np_model_option(&o, NP_MODEL_OPT_MIN_DURATION, "-1", err, sizeof err), -1);
    np_model_options_free(&o);
}

/* ---- the listener: the timeline told as it is read --------------------------- */

/* What TL was told agrees with the finished model M: the promises held,
 * each function's calls and summed durations are the model's, every call
 * lasts at least MIN_NS. */
static void timeline_agrees(const struct timeline *tl, const struct np_model *m, uint64_t min_ns)
{
    const char *bad = timeline_check(tl);
    if (bad)
        fail_msg("%s", bad);
    size_t nf, nt;
    const struct np_function *f = np_model_functions(m, &nf);
    const struct np_thread *t = np_model_threads(m, &nt);
    uint64_t *calls = calloc(nf + 1, sizeof *calls), *sum = calloc(nf + 1, sizeof *sum), threads = 0;
    for (size_t i = 0; i < tl->n; i++) {
        const struct np_call *c = &tl->calls[i];
        assert_true(c->function < nf && c->thread < nt);
        assert_true(c->duration_ns >= min_ns);
        calls[c->function]++;
        sum[c->function] += c->duration_ns;
    }
    for (size_t i = 0; i < nf; i++)
        if (calls[i] != f[i].calls || sum[i] != f[i].sum_ns)
            fail_msg("%s: %lu calls told, %lu ns; the model has %lu, %lu ns", f[i].name, (unsigned long)calls[i],
                     (unsigned long)sum[i], (unsigned long)f[i].calls, (unsigned long)f[i].sum_ns);
    for (size_t i = 0; i < nt; i++)
        threads += t[i].calls;
    assert_int_equal(threads, tl->n);
    free(calls);
    free(sum);
}

/* Every option, alone and together, on the sample: the listener is told
 * exactly the calls the model keeps, nested and in time order. */
static void listener_tells_kept_calls(void **state)
{
    (void)state;
    write_sample("4242.npt", true);
    static const struct {
        const char *a, *b;
        enum np_model_opt ka, kb;
        bool exclude_switched;
    } cases[] = {
        { NULL, NULL, 0, 0, false },
        { "31", NULL, NP_MODEL_OPT_MIN_DURATION, 0, false },
        { "30", NULL, NP_MODEL_OPT_MIN_DURATION, 0, false }, /* leaf: 30 exactly */
        { "10", NULL, NP_MODEL_OPT_MIN_DURATION, 0, true },
        { "40", NULL, NP_MODEL_OPT_MIN_DURATION, 0, true },  /* square: 40, 35 switched in */
        { NULL, NULL, 0, 0, true },
        { "sample_helper", "50", NP_MODEL_OPT_INCLUDE, NP_MODEL_OPT_MIN_DURATION, false },
        { "sample_fib", "2", NP_MODEL_OPT_EXCLUDE, NP_MODEL_OPT_DEPTH, false },
        { "2", "20", NP_MODEL_OPT_DEPTH, NP_MODEL_OPT_MIN_DURATION, false },
        { "101", "1000", NP_MODEL_OPT_TID, NP_MODEL_OPT_MIN_DURATION, false }, /* nothing that long */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct np_model_options o = { 0 };
        char err[128];
        if (cases[i].a)
            assert_int_equal(np_model_option(&o, cases[i].ka, cases[i].a, err, sizeof err), 0);
        if (cases[i].b)
            assert_int_equal(np_model_option(&o, cases[i].kb, cases[i].b, err, sizeof err), 0);
        o.exclude_switched = cases[i].exclude_switched;
        struct timeline tl;
        timeline_init(&tl);
        tl.exclude_switched = o.exclude_switched;
        o.listener = &tl.listener;
        struct np_model *m = load(dir, &o, &(struct np_trace_summary){ 0 });
        timeline_agrees(&tl, m, o.min_duration_ns);
        if (i == 1) /* main and helper, told once they had run 31 ns, in their first chunk */
            assert_true(tl.n == 5 && tl.calls[0].function == fn_index(m, "sample_main") &&
                        tl.calls[1].function == fn_index(m, "sample_helper") &&
                        tl.calls[2].function == fn_index(m, "sample_square"));
        np_model_free(m);
        timeline_free(&tl);
        np_model_options_free(&o);
    }
}

/* Random traces (several threads whose chunks interleave, calls left
 * open across chunks, LOST, SWITCH, exits with nothing open) under
 * random options: what is told is what is kept. */
static void listener_random_traces(void **state)
{
    (void)state;
    const uint64_t addrs[] = { fns.main, fns.helper, fns.leaf, fns.fib, fns.square, fns.twice };
    static char *globs[] = { "sample_fib", "sample_[hl]*", "sample_main" };
    uint32_t seed = 4242;
#define RND(n) ((seed = seed * 1103515245u + 12345u) >> 8) % (n)
    for (int round = 0; round < 300; round++) {
        struct tb b;
        tb_init(&b);
        tb_header(&b);
        tb_info(&b, 1, 0, 1.0, 0, 0, "c", 0, NULL);
        tb_module_self(&b);
        uint64_t tick[3] = { 0, 5, 9 };
        unsigned depth[3] = { 0 };
        for (int chunk = 0; chunk < 6; chunk++) {
            unsigned t = RND(3);
            tb_events_begin(&b, 10 + t, tick[t]);
            for (int e = 0, n = 1 + (int)RND(40); e < n; e++) {
                tick[t] += RND(12);
                unsigned what = RND(100);
                if (what < 45 || !depth[t]) {
                    tb_enter(&b, tick[t], addrs[RND(6)]);
                    depth[t]++;
                } else if (what < 94) {
                    tb_exit(&b, tick[t]);
                    depth[t]--;
                } else if (what < 97) {
                    tb_switch(&b, tick[t], RND(20));
                } else if (what < 99) {
                    tb_lost(&b, tick[t], 1 + RND(3));
                    depth[t] = 0;
                } else {
                    tb_exit(&b, tick[t]); /* perhaps with nothing open */
                    depth[t] -= depth[t] > 0;
                }
            }
            tb_events_end(&b, RND(2) ? NP_COMPRESS_ZSTD : NP_COMPRESS_NONE);
        }
        if (RND(2))
            tb_end(&b, tick[0] + tick[1] + tick[2], 0, 1.0);
        assert_int_equal(tb_write(&b, file_in_dir("1.npt")), 0);
        tb_free(&b);
        struct np_model_options o = { 0 };
        o.min_duration_ns = RND(3) ? RND(30) : 0;
        o.exclude_switched = RND(3) == 0;
        o.max_depth = RND(3) ? 0 : 1 + RND(4);
        if (RND(4) == 0)
            o.exclude = &globs[RND(3)], o.nexclude = 1;
        if (RND(4) == 0)
            o.include = &globs[RND(3)], o.ninclude = 1;
        struct timeline tl;
        timeline_init(&tl);
        tl.exclude_switched = o.exclude_switched;
        o.listener = &tl.listener;
        struct np_trace_summary sum;
        struct np_model *m = load(dir, &o, &sum);
        assert_true(sum.status <= NP_TRACE_ETRUNC);
        timeline_agrees(&tl, m, o.min_duration_ns);
        np_model_free(m);
        timeline_free(&tl);
    }
#undef RND
}

/* A listener that stops the reading at its STOP_AT-th begin. */
struct stopping {
    unsigned begins, ends, stop_at;
    bool after;              /* told something after it stopped */
};

static int stopping_begin(void *ctx, const struct np_model *m, const struct np_call *c)
{
    (void)m, (void)c;
    struct stopping *s = ctx;
    s->after |= s->begins >= s->stop_at;
    return ++s->begins == s->stop_at;
}

static int stopping_end(void *ctx, const struct np_model *m, const struct np_call *c)
{
    (void)m, (void)c;
    struct stopping *s = ctx;
    s->after |= s->begins >= s->stop_at;
    s->ends++;
    return 0;
}

/* A listener that stops: nothing more is told, not even the ends of the
 * calls open, and the next file is not read. */
static void listener_stops_reading(void **state)
{
    (void)state;
    write_sample("1.npt", true);
    write_sample("2.npt", true);
    static const unsigned stops[] = { 1, 2, 3, 4, 11, 12 }; /* 11 calls a file */
    for (size_t i = 0; i < sizeof stops / sizeof *stops; i++) {
        unsigned at = stops[i];
        struct stopping st = { .stop_at = at };
        const struct np_call_listener l = { &st, stopping_begin, stopping_end, NULL };
        struct np_model_options o = { .listener = &l };
        struct np_trace_summary sum;
        struct np_model *m = load(dir, &o, &sum);
        assert_int_equal(sum.status, NP_TRACE_ESTOP);
        assert_int_equal(sum.files_read, at <= 11 ? 1 : 2);
        assert_int_equal(st.begins, at);
        assert_false(st.after);
        np_model_free(m);
    }
}

/* ---- event rules --------------------------------------------------------------- */

/* A trace of pid 1 at 1 ns a tick, clock "c", the running executable as
 * its module: what the event-rule tests write their events after. */
static void begin_trace(struct tb *b)
{
    tb_init(b);
    tb_header(b);
    tb_info(b, 1, 0, 1.0, 0, 0, "c", 0, NULL);
    tb_module_self(b);
}

static void lost_closes_open_calls(void **state)
{
    (void)state;
    struct tb b;
    begin_trace(&b);
    tb_events_begin(&b, 7, 0);
    tb_enter(&b, 0, fns.main);
    tb_enter(&b, 10, fns.leaf);
    tb_lost(&b, 25, 3);    /* main and leaf end here */
    tb_exit(&b, 30);       /* nothing open: ignored */
    tb_enter(&b, 40, fns.leaf);
    tb_exit(&b, 45);
    tb_events_end(&b, NP_COMPRESS_NONE);
    tb_end(&b, 50, 3, 1.0);
    tb_write(&b, file_in_dir("1.npt"));
    tb_free(&b);
    struct np_model *m = load(dir, NULL, &(struct np_trace_summary){ 0 });
    expect_fn(m, "sample_main", 1, 25, 10);
    expect_fn(m, "sample_leaf", 2, 20, 20);
    size_t n;
    assert_int_equal(np_model_threads(m, &n)->lost, 3);
    assert_int_equal(np_model_threads(m, &n)->closed_at_loss, 2);
    assert_int_equal(np_model_threads(m, &n)->closed_at_cut, 0);
    assert_int_equal(np_model_threads(m, &n)->unmatched_exits, 0); /* the loss said it */
    check_self_sum(m);
    np_model_free(m);
}

/* Returns with no call open: counted as calls that began before
 * recording while nothing was lost; after a LOST they are the loss's
 * (said with it), not counted again. */
static void exits_before_recording(void **state)
{
    (void)state;
    struct tb b;
    begin_trace(&b);
    tb_events_begin(&b, 7, 0);
    tb_exit(&b, 5);        /* began before recording */
    tb_enter(&b, 10, fns.leaf);
    tb_exit(&b, 20);
    tb_exit(&b, 30);       /* began before recording */
    tb_enter(&b, 40, fns.main);
    tb_lost(&b, 50, 1);    /* main closes here */
    tb_exit(&b, 60);       /* main's, after the loss: not counted */
    tb_events_end(&b, NP_COMPRESS_NONE);
    tb_end(&b, 70, 1, 1.0);
    tb_write(&b, file_in_dir("1.npt"));
    tb_free(&b);
    struct np_model *m = load(dir, NULL, &(struct np_trace_summary){ 0 });
    expect_fn(m, "sample_leaf", 1, 10, 10);
    expect_fn(m, "sample_main", 1, 10, 10);
    size_t n;
    assert_int_equal(np_model_threads(m, &n)->unmatched_exits, 2);
    assert_int_equal(np_model_threads(m, &n)->closed_at_loss, 1);
    np_model_free(m);
}

/* Recursion through two functions: the arcs' outer_ns count each
 * function's time once, so that the arcs into it add up to its total,
 * from calls and from samples alike. */
static void indirect_recursion_arcs(void **state)
{
    (void)state;
    struct tb b;
    begin_trace(&b);
    tb_sampling(&b, 0, 1000, NP_UNWIND_FP, NP_SAMPLING_CPU_TIME | NP_SAMPLING_RETURN_ADDRS, 1000000, 128);
    tb_events_begin(&b, 1, 0);
    /* 0 fib { 10 helper { 20 fib { 30 helper { } 50 } 60 } 70 } 80 */
    tb_enter(&b, 0, fns.fib);
    tb_enter(&b, 10, fns.helper);
    tb_enter(&b, 20, fns.fib);
    tb_enter(&b, 30, fns.helper);
    tb_sample(&b, 35, (const uint64_t[]){ fns.helper, fns.fib + 1, fns.helper + 1, fns.fib + 1 }, 4, 0, 0);
    tb_exit(&b, 40);
    tb_exit(&b, 50);
    tb_exit(&b, 60);
    tb_exit(&b, 70);
    tb_events_end(&b, NP_COMPRESS_NONE);
    tb_end(&b, 80, 0, 1.0);
    tb_write(&b, file_in_dir("1.npt"));
    tb_free(&b);
    struct np_model *m = load(dir, NULL, &(struct np_trace_summary){ 0 });
    uint32_t fib = fn_index(m, "sample_fib"), helper = fn_index(m, "sample_helper");
    expect_fn(m, "sample_fib", 2, 70, 40);
    expect_fn(m, "sample_helper", 2, 50, 30);
    assert_int_equal(arc(m, NP_NONE, fib)->outer_ns, 70);
    assert_int_equal(arc(m, fib, helper)->calls, 2);
    assert_int_equal(arc(m, fib, helper)->total_ns, 60);
    assert_int_equal(arc(m, fib, helper)->outer_ns, 50);
    assert_int_equal(arc(m, helper, fib)->total_ns, 30);
    assert_int_equal(arc(m, helper, fib)->outer_ns, 0);
    np_model_free(m);

    struct np_model_options opt = { .from_samples = true };
    m = load(dir, &opt, &(struct np_trace_summary){ 0 });
    fib = fn_index(m, "sample_fib"), helper = fn_index(m, "sample_helper");
    assert_int_equal(arc(m, NP_NONE, fib)->outer_ns, 1000000);
    assert_int_equal(arc(m, fib, helper)->total_ns, 1000000); /* on the path twice, counted once */
    assert_int_equal(arc(m, fib, helper)->outer_ns, 1000000);
    assert_int_equal(arc(m, helper, fib)->outer_ns, 0);
    np_model_free(m);
}

/* np_stacks: a run of 110 calls of fib is one frame above the first,
 * whose callees from different levels meet as one path each (helper
 * called at levels 20 and 60, with leaf both times and square once). */
static void stacks_merge_runs(void **state)
{
    (void)state;
    struct tb b;
    begin_trace(&b);
    tb_events_begin(&b, 1, 0);
    uint64_t t = 0;
    for (int level = 1; level <= 110; level++) {
        tb_enter(&b, t++, fns.fib);
        if (level == 20 || level == 60) {
            tb_enter(&b, t++, fns.helper);
            tb_enter(&b, t++, fns.leaf);
            tb_exit(&b, t++);
            if (level == 60) {
                tb_enter(&b, t++, fns.square);
                tb_exit(&b, t++);
            }
            tb_exit(&b, t++);
        }
    }
    for (int level = 1; level <= 110; level++)
        tb_exit(&b, t++);
    tb_events_end(&b, NP_COMPRESS_NONE);
    tb_end(&b, t, 0, 1.0);
    tb_write(&b, file_in_dir("1.npt"));
    tb_free(&b);
    struct np_model *m = load(dir, NULL, &(struct np_trace_summary){ 0 });
    struct np_stacks s;
    assert_int_equal(np_stacks_build(&s, m), 0);
    assert_int_equal(s.recursions, 1);
    assert_int_equal(s.deeper, 0);
    /* thread, fib, fib [recursion x109], helper, leaf, square */
    assert_int_equal(s.n, 6);
    const struct np_stack_frame *f = s.frames;
    uint32_t head = f[s.roots[0]].first_child, run = f[head].first_child, helper = f[run].first_child;
    char name[NP_STACK_NAME_MAX];
    assert_string_equal(np_stack_name(&s, m, head, name, sizeof name), "sample_fib");
    assert_string_equal(np_stack_name(&s, m, run, name, sizeof name), "sample_fib [recursion x109]");
    assert_int_equal(f[run].kind, NP_STACK_RECURSION);
    assert_int_equal(f[run].calls, 109);
    assert_int_equal(f[run].next_sibling, NP_NONE); /* the first fib's only callee: the run */
    assert_int_equal(f[run].total_ns, f[head].total_ns - f[head].self_ns);
    assert_int_equal(f[helper].function, fn_index(m, "sample_helper"));
    assert_int_equal(f[helper].calls, 2);
    assert_int_equal(f[helper].next_sibling, NP_NONE);
    uint32_t leaf = f[helper].first_child, square = f[leaf].next_sibling;
    assert_int_equal(f[leaf].function, fn_index(m, "sample_leaf"));
    assert_int_equal(f[leaf].calls, 2);
    assert_int_equal(f[square].function, fn_index(m, "sample_square"));
    assert_int_equal(f[square].calls, 1);
    assert_int_equal(f[square].next_sibling, NP_NONE);
    uint64_t self = 0, calls = 0;
    for (size_t i = 0; i < s.n; i++)
        if (f[i].kind != NP_STACK_THREAD)
            self += f[i].self_ns, calls += f[i].calls;
    assert_int_equal(self, np_model_threads(m, &(size_t){ 0 })[0].total_ns);
    assert_int_equal(calls, 110 + 2 + 2 + 1);
    np_stacks_free(&s);
    np_model_free(m);
}

/* Copies the running executable to PATH. */
static void copy_self(const char *path)
{
    FILE *in = fopen("/proc/self/exe", "rb"), *out = fopen(path, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    assert_int_equal(fclose(out), 0);
}

/* ---- C++ names ---------------------------------------------------------------------- */

/* C functions under C++ names (what g++ calls scale(int), scale(double)
 * and Parser::parse(char const*) const), so that this program's own
 * symbols are mangled ones. */
int cxx_scale_int(int x) __asm__("_Z5scalei");
double cxx_scale_double(double x) __asm__("_Z5scaled");
int cxx_parse(const void *self, const char *s) __asm__("_ZNK6Parser5parseEPKc");
__attribute__((noinline)) int cxx_scale_int(int x) { return 2 * x; }
__attribute__((noinline)) double cxx_scale_double(double x) { return 1.5 * x; }
__attribute__((noinline)) int cxx_parse(const void *self, const char *s) { return self && s ? 1 : 0; }

/* scale(int) 3 calls, scale(double) 1, Parser::parse 2 */
static void write_cxx_trace(void)
{
    const uint64_t si = (uint64_t)(uintptr_t)cxx_scale_int, sd = (uint64_t)(uintptr_t)cxx_scale_double,
                   parse = (uint64_t)(uintptr_t)cxx_parse;
    const uint64_t order[] = { si, sd, parse, si, parse, si };
    struct tb t;
    tb_init(&t);
    tb_header(&t);
    tb_info(&t, 1, 0, 1.0, 0, 0, "c", 0, NULL);
    tb_module_self(&t);
    tb_events_begin(&t, 1, 0);
    for (uint64_t i = 0; i < sizeof order / sizeof *order; i++) {
        tb_enter(&t, 10 * i, order[i]);
        tb_exit(&t, 10 * i + 5);
    }
    tb_events_end(&t, NP_COMPRESS_NONE);
    tb_end(&t, 100, 0, 1.0);
    tb_write(&t, file_in_dir("1.npt"));
    tb_free(&t);
}

/* Demangled in the model: short names, overloads told apart by their
 * signatures, every name kept; the filters match any of them;
 * no_demangle leaves them as they are. */
static void cxx_names(void **state)
{
    (void)state;
    write_cxx_trace();
    struct np_model *m = load(dir, NULL, &(struct np_trace_summary){ 0 });
    const struct np_function *si = fn(m, "scale(int)"), *sd = fn(m, "scale(double)"), *p = fn(m, "Parser::parse");
    assert_non_null(si);
    assert_non_null(sd);
    assert_non_null(p);
    assert_int_equal(si->calls, 3);
    assert_int_equal(sd->calls, 1);
    assert_int_equal(p->calls, 2);
    assert_string_equal(si->symbol, "scale");
    assert_string_equal(si->signature, "scale(int)");
    assert_string_equal(si->mangled, "_Z5scalei");
    assert_string_equal(p->symbol, "Parser::parse");
    assert_string_equal(p->signature, "Parser::parse(char const*) const");
    assert_string_equal(p->mangled, "_ZNK6Parser5parseEPKc");
    assert_true(np_function_matches(p, "Parser::*"));
    assert_true(np_function_matches(p, "Parser::parse(char const\\*) const"));
    assert_true(np_function_matches(p, "_ZNK6Parser5parse*"));
    assert_false(np_function_matches(p, "parse"));
    assert_true(np_function_matches(si, "scale"));
    assert_true(np_function_matches(si, "scale(int)"));
    assert_false(np_function_matches(si, "scale(double)"));
    np_model_free(m);

    struct np_model_options o = { 0 };
    char err[256];
    assert_int_equal(np_model_option(&o, NP_MODEL_OPT_INCLUDE, "scale(double)", err, sizeof err), 0);
    assert_int_equal(np_model_option(&o, NP_MODEL_OPT_INCLUDE, "_ZNK6Parser*", err, sizeof err), 0);
    m = load(dir, &o, &(struct np_trace_summary){ 0 });
    expect_fn(m, "scale(int)", -1, 0, 0);
    expect_fn(m, "scale(double)", 1, 5, 5);
    expect_fn(m, "Parser::parse", 2, 10, 10);
    np_model_free(m);
    np_model_options_free(&o);

    o = (struct np_model_options){ .no_demangle = true };
    m = load(dir, &o, &(struct np_trace_summary){ 0 });
    expect_fn(m, "_Z5scalei", 3, 15, 15);
    expect_fn(m, "_Z5scaled", 1, 5, 5);
    expect_fn(m, "_ZNK6Parser5parseEPKc", 2, 10, 10);
    p = fn(m, "_ZNK6Parser5parseEPKc");
    assert_ptr_equal(p->symbol, p->name);
    assert_ptr_equal(p->signature, p->name);
    assert_ptr_equal(p->mangled, p->name);
    assert_null(fn(m, "scale(int)"));
    np_model_free(m);
}

/* A function named by its short name, signature or mangled name (the
 * emulator's --thread-switch). */
static void cxx_address_of(void **state)
{
    (void)state;
    struct tb_self self;
    tb_self(&self);
    struct np_trace_module mod = { self.bias, self.start, self.end, self.build_id, self.build_id_len, self.path };
    struct np_symbols *syms = np_symbols_new(NULL, NULL);
    struct np_addrspace *as = syms ? np_addrspace_new(syms) : NULL;
    assert_non_null(as);
    assert_int_equal(np_addrspace_map(as, &mod), 0);
    const uint64_t parse = (uint64_t)(uintptr_t)cxx_parse;
    assert_int_equal(np_addrspace_address_of(as, "Parser::parse"), parse);
    assert_int_equal(np_addrspace_address_of(as, "Parser::parse(char const*) const"), parse);
    assert_int_equal(np_addrspace_address_of(as, "_ZNK6Parser5parseEPKc"), parse);
    assert_int_equal(np_addrspace_address_of(as, "scale(double)"), (uint64_t)(uintptr_t)cxx_scale_double);
    assert_int_equal(np_addrspace_address_of(as, "Parser::nothing"), 0);
    np_addrspace_free(as);
    np_symbols_free(syms);
}

/* One symbol in three modules, two of them with one file name: each is
 * named with the least that tells it apart from the others (model.h). */
static void same_symbol_named_apart(void **state)
{
    (void)state;
    char a[512], b[512], pa[600], pb[600];
    snprintf(a, sizeof a, "%s/a", dir);
    snprintf(b, sizeof b, "%s/b", dir);
    assert_int_equal(mkdir(a, 0777), 0);
    assert_int_equal(mkdir(b, 0777), 0);
    snprintf(pa, sizeof pa, "%s/twin.elf", a);
    snprintf(pb, sizeof pb, "%s/twin.elf", b);
    copy_self(pa);
    copy_self(pb);
    struct tb_self self;
    tb_self(&self);
    const uint64_t off[3] = { 0, 0x10000000u, 0x20000000u };
    struct tb t;
    tb_init(&t);
    tb_header(&t);
    tb_info(&t, 1, 0, 1.0, 0, 0, "c", 0, NULL);
    tb_module_self(&t);
    for (int i = 1; i < 3; i++)
        tb_module(&t, self.bias + off[i], self.start + off[i], self.end + off[i], self.build_id, self.build_id_len,
                  i == 1 ? pa : pb);
    tb_events_begin(&t, 1, 0);
    for (int i = 0; i < 3; i++) {
        tb_enter(&t, 10 * (uint64_t)i, fns.main + off[i]);
        tb_exit(&t, 10 * (uint64_t)i + 5);
    }
    tb_enter(&t, 40, fns.leaf);
    tb_exit(&t, 41);
    tb_events_end(&t, NP_COMPRESS_NONE);
    tb_end(&t, 50, 0, 1.0);
    tb_write(&t, file_in_dir("1.npt"));
    tb_free(&t);
    struct np_model *m = load(file_in_dir("1.npt"), NULL, &(struct np_trace_summary){ 0 });
    const char *base = strrchr(self.path, '/');
    char want[3][4200];
    uint64_t elf = fns.main - self.bias;
    snprintf(want[0], sizeof want[0], "sample_main [%s]", base ? base + 1 : self.path);
    snprintf(want[1], sizeof want[1], "sample_main [%s:0x%" PRIx64 "]", pa, elf);
    snprintf(want[2], sizeof want[2], "sample_main [%s:0x%" PRIx64 "]", pb, elf);
    for (int i = 0; i < 3; i++) {
        const struct np_function *f = fn(m, want[i]);
        if (!f)
            fail_msg("no function named %s", want[i]);
        assert_string_equal(f->symbol, "sample_main");
        assert_int_equal(f->calls, 1);
    }
    const struct np_function *leaf = fn(m, "sample_leaf");
    assert_non_null(leaf);
    assert_ptr_equal(leaf->symbol, leaf->name); /* one module: its name alone */
    np_model_free(m);
    unlink(pa);
    unlink(pb);
    rmdir(a);
    rmdir(b);
}

/* tb_lossy_trace: what was lost, per thread and per process; threads
 * without calls stay in the model; from samples, LOSTs still count. */
static void losses_counted(void **state)
{
    (void)state;
    struct tb b;
    tb_init(&b);
    tb_lossy_trace(&b, &fns);
    tb_write(&b, file_in_dir("4646.npt"));
    tb_free(&b);
    struct np_model *m = load(dir, NULL, &(struct np_trace_summary){ 0 });
    expect_fn(m, "sample_main", 1, 30, 10);
    expect_fn(m, "sample_helper", 1, 20, 15);
    expect_fn(m, "sample_leaf", 2, 15, 15);
    expect_fn(m, "sample_square", 1, 10, 10);
    size_t n;
    const struct np_process *p = np_model_processes(m, &n);
    assert_int_equal(n, 1);
    assert_true(p->complete);
    assert_int_equal(p->events_lost, 270);
    const struct np_thread *t = np_model_threads(m, &n);
    assert_int_equal(n, 4);
    static const uint32_t tid[] = { 300, 301, 302, 303 };
    static const uint64_t calls[] = { 4, 1, 0, 0 }, lost[] = { 20, 0, 150, 0 }, closed[] = { 2, 0, 0, 0 },
                          total[] = { 40, 10, 0, 0 };
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(t[i].tid, tid[i]);
        assert_int_equal(t[i].calls, calls[i]);
        assert_int_equal(t[i].lost, lost[i]);
        assert_int_equal(t[i].closed_at_loss, closed[i]);
        assert_int_equal(t[i].closed_at_cut, 0);
        assert_int_equal(t[i].total_ns, total[i]);
    }
    check_self_sum(m);
    np_model_free(m);

    struct np_model_options o = { .from_samples = true };
    m = load(dir, &o, &(struct np_trace_summary){ 0 });
    t = np_model_threads(m, &n);
    assert_int_equal(n, 4);
    assert_int_equal(t[0].lost + t[2].lost, 170);
    np_model_free(m);
}

/* Times that run backwards count as the previous time: no negative
 * durations, the invariant holds. */
static void time_never_runs_backwards(void **state)
{
    (void)state;
    struct tb b;
    tb_init(&b);
    tb_header(&b);
    tb_info(&b, 1, 0, 1.0, 0, 0, "c", 0, NULL);
    tb_events_begin(&b, 7, 100);
    tb_enter(&b, 100, 0x1000);
    tb_enter(&b, 120, 0x2000);
    tb_events_end(&b, NP_COMPRESS_NONE);
    tb_events_begin(&b, 7, 50); /* a chunk from an earlier base */
    tb_exit(&b, 60);
    tb_switch(&b, 70, 1000);    /* longer than the time since the last event */
    tb_exit(&b, 200);
    tb_events_end(&b, NP_COMPRESS_NONE);
    tb_write(&b, file_in_dir("1.npt"));
    tb_free(&b);
    struct np_model *m = load(dir, NULL, &(struct np_trace_summary){ 0 });
    expect_fn(m, "0x2000", 1, 0, 0);
    expect_fn(m, "0x1000", 1, 100, 100);
    assert_int_equal(fn(m, "0x1000")->switched_ns, 0);
    check_self_sum(m);
    np_model_free(m);
}

/* Processes by pid then exec number; the same function in two processes
 * is one row. */
static void directory_order(void **state)
{
    (void)state;
    static const uint32_t pids[] = { 100, 20, 100 };
    static const char *const names[] = { "100.npt", "20.npt", "100.1.npt" };
    for (int i = 0; i < 3; i++) {
        struct tb b;
        tb_init(&b);
        tb_header(&b);
        tb_info(&b, pids[i], 1, 1.0, 0, (uint64_t)i, "c", 0, NULL);
        tb_module_self(&b);
        tb_events_begin(&b, pids[i], 0);
        tb_enter(&b, 0, fns.leaf);
        tb_exit(&b, 10);
        tb_events_end(&b, NP_COMPRESS_ZSTD);
        tb_end(&b, 10, 0, 1.0);
        tb_write(&b, file_in_dir(names[i]));
        tb_free(&b);
    }
    tb_write_prefix(&(struct tb){ 0 }, file_in_dir("notes.txt"), 0); /* ignored: not .npt */
    struct np_trace_summary sum;
    struct np_model *m = load(dir, NULL, &sum);
    assert_int_equal(sum.status, NP_TRACE_OK);
    assert_int_equal(sum.files, 3);
    size_t n;
    const struct np_process *p = np_model_processes(m, &n);
    assert_int_equal(n, 3);
    assert_int_equal(p[0].pid, 20);
    assert_non_null(strstr(p[1].file, "/100.npt"));
    assert_non_null(strstr(p[2].file, "/100.1.npt"));
    expect_fn(m, "sample_leaf", 3, 30, 30);
    size_t nt;
    np_model_threads(m, &nt);
    assert_int_equal(nt, 3); /* tid 100 before and after exec: two threads */
    np_model_free(m);
}

/* ---- symbols ------------------------------------------------------------------- */

static void build_id_mismatch(void **state)
{
    (void)state;
    struct tb_self self;
    tb_self(&self);
    struct tb b;
    tb_init(&b);
    tb_header(&b);
    tb_info(&b, 1, 0, 1.0, 0, 0, "c", 0, NULL);
    tb_module(&b, self.bias, self.start, self.end, "\x01\x02\x03", 3, self.path);
    tb_module(&b, self.bias, self.start, self.end, "\x01\x02\x03", 3, self.path); /* said once */
    tb_module(&b, 0, 0x100000, 0x200000, "", 0, "/nonexistent/libgone.so");
    tb_module(&b, 0, 0x300000, 0x300100, "", 0, "[vdso]"); /* quietly nameless */
    tb_module(&b, 0, 0x400000, 0x400100, "", 0, "/nonexistent/\nnewline.so");
    tb_events_begin(&b, 1, 0);
    tb_enter(&b, 0, fns.leaf);
    tb_enter(&b, 1, 0x100040);
    tb_exit(&b, 2);
    tb_enter(&b, 3, 0x300010);
    tb_exit(&b, 4);
    tb_exit(&b, 5);
    tb_events_end(&b, NP_COMPRESS_NONE);
    tb_end(&b, 5, 0, 1.0);
    tb_write(&b, file_in_dir("1.npt"));
    tb_free(&b);
    struct np_model *m = load(dir, NULL, &(struct np_trace_summary){ 0 });
    char hex[32];
    snprintf(hex, sizeof hex, "0x%llx", (unsigned long long)fns.leaf);
    expect_fn(m, hex, 1, 5, 3);
    expect_fn(m, "0x100040", 1, 1, 1);
    assert_string_equal(fn(m, "0x100040")->module, "/nonexistent/libgone.so");
    assert_int_equal(fn(m, "0x100040")->address, 0x100040);
    assert_int_equal(ndiags, 3);
    assert_non_null(strstr(diags, "build-id differs"));
    assert_non_null(strstr(diags, "libgone.so: cannot read symbols"));
    assert_non_null(strstr(diags, "W /nonexistent/?newline.so: cannot read symbols")); /* one line */
    np_model_free(m);
}

/* ---- bad input ------------------------------------------------------------------ */

static void expect_error(int status, const char *path, const char *needle)
{
    struct np_trace_summary sum;
    struct np_model *m = load(path, NULL, &sum);
    assert_int_equal(sum.status, status);
    if (!strstr(sum.message, needle) || !strstr(diags, needle))
        fail_msg("no '%s' in '%s' / '%s'", needle, sum.message, diags);
    assert_non_null(strstr(sum.message, path));
    assert_null(strchr(sum.message, '\n'));
    np_model_free(m);
}

static void missing_path_and_empty_dir(void **state)
{
    (void)state;
    expect_error(NP_TRACE_ENOENT, file_in_dir("nope"), "No such file");
    expect_error(NP_TRACE_EEMPTY, dir, "no .npt trace files");
}

static void unknown_version(void **state)
{
    (void)state;
    struct tb b;
    tb_init(&b);
    tb_header_version(&b, 3);
    tb_info(&b, 1, 0, 1.0, 0, 0, "c", 0, NULL);
    tb_write(&b, file_in_dir("1.npt"));
    tb_free(&b);
    expect_error(NP_TRACE_EVERSION, file_in_dir("1.npt"), "offset 8: trace format version 3; this nanoprof reads "
                                                          "versions 1 to 2");
}

static void not_a_trace(void **state)
{
    (void)state;
    FILE *f = fopen(file_in_dir("1.npt"), "w");
    fputs("hello, I am a text file\n", f);
    fclose(f);
    expect_error(NP_TRACE_ENOTTRACE, file_in_dir("1.npt"), "not a nanoprof trace");
    expect_error(NP_TRACE_ENOTTRACE, "/dev/null", "not a regular file");
}

/* FIFOs, as a trace file or as a module, cannot make the reader block. */
static void fifos_do_not_block(void **state)
{
    (void)state;
    assert_int_equal(mkfifo(file_in_dir("5.npt"), 0600), 0);
    assert_int_equal(mkfifo(file_in_dir("fifo.so"), 0600), 0);
    struct tb b;
    tb_init(&b);
    tb_header(&b);
    tb_info(&b, 6, 0, 1.0, 0, 0, "c", 0, NULL);
    tb_module(&b, 0, 0x1000, 0x2000, "", 0, file_in_dir("fifo.so"));
    tb_events_begin(&b, 6, 0);
    tb_enter(&b, 0, 0x1100);
    tb_exit(&b, 10);
    tb_events_end(&b, NP_COMPRESS_NONE);
    tb_end(&b, 10, 0, 1.0);
    tb_write(&b, file_in_dir("6.npt"));
    tb_free(&b);
    struct np_trace_summary sum;
    struct np_model *m = load(dir, NULL, &sum);
    assert_int_equal(sum.status, NP_TRACE_ENOTTRACE);
    assert_non_null(strstr(diags, "5.npt: not a regular file"));
    assert_non_null(strstr(diags, "fifo.so: cannot read symbols (not a regular file)"));
    expect_fn(m, "0x1100", 1, 10, 10);
    np_model_free(m);
}

/* A well-formed start, then one bad chunk (of a file of VERSION): its
 * error, and the events before it delivered. Its checksum is right: the
 * writer wrote it so. */
static void bad_chunk_in(uint16_t version, const char *needle, void (*damage)(struct tb *b))
{
    struct tb b;
    tb_init(&b);
    tb_header_version(&b, version);
    tb_info(&b, 1, 0, 1.0, 0, 0, "c", 0, NULL);
    tb_events_begin(&b, 7, 0);
    tb_enter(&b, 0, 0x1000);
    tb_exit(&b, 10);
    tb_events_end(&b, NP_COMPRESS_NONE);
    damage(&b);
    tb_end(&b, 10, 0, 1.0);
    tb_write(&b, file_in_dir("1.npt"));
    tb_free(&b);
    struct np_trace_summary sum;
    struct np_model *m = load(file_in_dir("1.npt"), NULL, &sum);
    assert_int_equal(sum.status, NP_TRACE_ECORRUPT);
    if (!strstr(sum.message, needle))
        fail_msg("no '%s' in '%s'", needle, sum.message);
    assert_non_null(strstr(sum.message, "offset "));
    expect_fn(m, "0x1000", 1, 10, 10);
    np_model_free(m);
}

static void bad_chunk(const char *needle, void (*damage)(struct tb *b))
{
    bad_chunk_in(NP_TRACE_VERSION, needle, damage);
}

static void bad_varint(struct tb *b)
{
    static const uint8_t eleven[11] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };
    tb_events_begin(b, 7, 20);
    tb_exit(b, 20); /* nothing open: ignored */
    tb_event_bytes(b, eleven, sizeof eleven, 1);
    tb_events_end(b, NP_COMPRESS_NONE);
}

static void cut_values(struct tb *b) /* a VALUES record with nothing after its kind */
{
    tb_events_begin(b, 7, 20);
    tb_event_kind(b, 20, 7);
    tb_events_end(b, NP_COMPRESS_NONE);
}

static void values_again_first(struct tb *b) /* a VALUES record AGAIN, the chunk's first */
{
    static const uint8_t again[] = { NP_EV_VALUES, NP_VALUES_AGAIN | 1 << 1, 0 };
    tb_events_begin(b, 7, 20);
    tb_event_bytes(b, again, sizeof again, 1);
    tb_events_end(b, NP_COMPRESS_NONE);
}

static void values_again_count(struct tb *b) /* AGAIN with two values after one of one */
{
    static const uint8_t first[] = { NP_EV_VALUES, 1 << 1, 1, NP_VAL_INT, 2 };
    static const uint8_t again[] = { NP_EV_VALUES, NP_VALUES_AGAIN | 2 << 1, 0, 0 };
    tb_events_begin(b, 7, 20);
    tb_event_bytes(b, first, sizeof first, 1);
    tb_event_bytes(b, again, sizeof again, 1);
    tb_events_end(b, NP_COMPRESS_NONE);
}

static void bad_zstd(struct tb *b)
{
    static const uint8_t junk[] = { 0x28, 0xb5, 0x2f, 0xfd, 0x20, 0x04, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
    tb_events_chunk(b, 7, 20, 2, NP_COMPRESS_ZSTD, 4, junk, sizeof junk);
}

static void count_lies(struct tb *b)
{
    static const uint8_t one_exit[] = { NP_EV_EXIT };
    tb_events_chunk(b, 7, 20, 2, NP_COMPRESS_NONE, 1, one_exit, 1);
}

static void short_module(struct tb *b)
{
    tb_chunk(b, NP_CHUNK_MODULE, "12345678", 8);
}

static void huge_chunk(struct tb *b)
{
    uint8_t h[NP_TRACE_CHUNK_HEADER] = { 0 };
    np_put_u32(h, NP_CHUNK_THREAD);
    np_put_u32(h + 4, NP_TRACE_CHUNK_MAX + 1);
    tb_raw(b, h, np_trace_chunk_header_size(b->version));
}

static void module_backwards(struct tb *b)
{
    tb_module(b, 0, 0x2000, 0x1000, "", 0, "/lib/two\nlines.so");
}

static void blocks_short(struct tb *b)
{
    tb_chunk(b, NP_CHUNK_BLOCKS, "12345678", 8);
}

static void blocks_count_lies(struct tb *b)
{
    tb_blocks(b, 0, 3, (const uint64_t[]){ 0x1000, 1, 0x2000, 2 }, 2);
}

static void blocks_ragged(struct tb *b)
{
    tb_blocks(b, 0, 1, (const uint64_t[]){ 0x1000, 1 }, 1); /* a good one first */
    /* one more byte inside the chunk than its entries use */
    uint8_t payload[12 + 17] = { 0 };
    payload[8] = 1;
    tb_chunk(b, NP_CHUNK_BLOCKS, payload, sizeof payload);
}

static void sample_zero_frames(struct tb *b)
{
    tb_events_begin(b, 7, 20);
    tb_sample(b, 20, NULL, 0, 1, 0);
    tb_events_end(b, NP_COMPRESS_NONE);
}

static void sample_too_deep(struct tb *b)
{
    static uint64_t frames[NP_SAMPLE_MAX_FRAMES + 1];
    tb_events_begin(b, 7, 20);
    tb_sample(b, 20, frames, NP_SAMPLE_MAX_FRAMES + 1, 0, 0);
    tb_events_end(b, NP_COMPRESS_NONE);
}

static void sample_cut(struct tb *b)
{
    static const uint8_t cut[] = { NP_EV_SAMPLE, 3, 0, 0, 0x80 }; /* 3 frames, the first cut */
    tb_events_begin(b, 7, 20);
    tb_event_bytes(b, cut, sizeof cut, 1);
    tb_events_end(b, NP_COMPRESS_NONE);
}

static void sampling_short(struct tb *b)
{
    tb_chunk(b, NP_CHUNK_SAMPLING, "123456789012345678", 18);
}

static void sampling_no_frames(struct tb *b)
{
    tb_sampling(b, 0, 997, NP_UNWIND_FP, 0, 1003009, 0);
}

static void sampling_no_period(struct tb *b)
{
    tb_sampling(b, 0, 997, NP_UNWIND_FP, 0, 0, 128);
}

static void bad_chunks(void **state)
{
    (void)state;
    bad_chunk("SAMPLE of no frames with an overrun in SAMPLE event 0 of 1", sample_zero_frames);
    bad_chunk("SAMPLE frame count out of range", sample_too_deep);
    bad_chunk("corrupt varint in SAMPLE event 0 of 1", sample_cut);
    bad_chunk("SAMPLING chunk of 18 bytes is too short", sampling_short);
    bad_chunk("SAMPLING max_frames 0 (1 to 256)", sampling_no_frames);
    bad_chunk("SAMPLING at 997 Hz with a period of 0 ns", sampling_no_period);
    bad_chunk("corrupt varint in event 1 of 2", bad_varint);
    bad_chunk("corrupt varint in VALUES event", cut_values);
    bad_chunk("a repeat of a VALUES record the chunk has not had in VALUES event 0 of 1", values_again_first);
    bad_chunk("a repeat of a VALUES record of another count in VALUES event 1 of 2", values_again_count);
    bad_chunk("zstd", bad_zstd);
    bad_chunk("claims 2 events in 1 bytes", count_lies);
    bad_chunk("MODULE chunk of 8 bytes is too short", short_module);
    /* without checksums a chunk that claims too much cannot be skipped */
    bad_chunk_in(NP_TRACE_VERSION_V1, "claims 67108865 bytes, over the 67108864-byte limit", huge_chunk);
    /* a path from the file cannot make the message two lines */
    bad_chunk("MODULE /lib/two?lines.so: start 0x2000 after end 0x1000", module_backwards);
    bad_chunk("BLOCKS chunk of 8 bytes is shorter than its 12-byte header", blocks_short);
    bad_chunk("BLOCKS claims 3 blocks in 32 bytes (16 each)", blocks_count_lies);
    bad_chunk("BLOCKS claims 1 blocks in 17 bytes (16 each)", blocks_ragged);
}

/* ---- damage: checksums, resynchronisation, counts that cannot be ------------------ */

/* The offset of chunk N of the image B (0: INFO). */
static size_t chunk_at(const struct tb *b, int n)
{
    size_t hs = np_trace_chunk_header_size(b->version ? b->version : NP_TRACE_VERSION), at = NP_TRACE_HEADER_SIZE;
    for (int i = 0; i < n; i++)
        at += hs + np_get_u32(b->data + at + 4);
    return at;
}

/* Two threads, calls open across chunks (ticks are ns), in a file of
 * VERSION:
 *   chunk 1, thread 7: 0 0x1000 { 10 0x2000 } 20
 *   chunk 2, thread 8: 5 0x3000 } 15
 *   chunk 3, thread 7: 30 0x2000 } 40; 50 0x4000 {
 *   chunk 4, thread 7: } 60; 70 0x2000 } 80; } 90 (0x1000's end)
 *   chunk 5, thread 8: 100 0x3000 } 110
 *   chunk 6: END at 200 (chunk 0: INFO). */
static void two_threads(struct tb *b, uint16_t version)
{
    tb_init(b);
    tb_header_version(b, version);
    tb_info(b, 1, 0, 1.0, 0, 0, "c", 0, NULL);
    tb_events_begin(b, 7, 0);
    tb_enter(b, 0, 0x1000);
    tb_enter(b, 10, 0x2000);
    tb_exit(b, 20);
    tb_events_end(b, NP_COMPRESS_NONE);
    tb_events_begin(b, 8, 5);
    tb_enter(b, 5, 0x3000);
    tb_exit(b, 15);
    tb_events_end(b, NP_COMPRESS_ZSTD);
    tb_events_begin(b, 7, 30);
    tb_enter(b, 30, 0x2000);
    tb_exit(b, 40);
    tb_enter(b, 50, 0x4000);
    tb_events_end(b, NP_COMPRESS_NONE);
    tb_events_begin(b, 7, 60);
    tb_exit(b, 60);
    tb_enter(b, 70, 0x2000);
    tb_exit(b, 80);
    tb_exit(b, 90);
    tb_events_end(b, NP_COMPRESS_ZSTD);
    tb_events_begin(b, 8, 100);
    tb_enter(b, 100, 0x3000);
    tb_exit(b, 110);
    tb_events_end(b, NP_COMPRESS_NONE);
    tb_end(b, 200, 0, 1.0);
}

static const struct np_thread *thread_of_tid(const struct np_model *m, uint32_t tid)
{
    size_t n;
    const struct np_thread *t = np_model_threads(m, &n);
    for (size_t i = 0; i < n; i++)
        if (t[i].tid == tid)
            return &t[i];
    fail_msg("no thread %u", tid);
    return NULL;
}

static void expect_two_threads_whole(const struct np_model *m)
{
    expect_fn(m, "0x1000", 1, 90, 50);
    expect_fn(m, "0x2000", 3, 30, 30);
    expect_fn(m, "0x4000", 1, 10, 10);
    expect_fn(m, "0x3000", 2, 20, 20);
    assert_int_equal(thread_of_tid(m, 7)->closed_at_loss, 0);
}

/* Chunk 3 skipped: thread 7's open call ends at the thread's last event
 * before it (20), closed at the loss point; then 0x2000 is an outermost
 * call; 0x4000 never began; thread 8 is whole. */
static void expect_without_chunk3(const struct np_model *m)
{
    expect_fn(m, "0x1000", 1, 20, 10);
    expect_fn(m, "0x2000", 2, 20, 20);
    expect_fn(m, "0x4000", -1, 0, 0);
    expect_fn(m, "0x3000", 2, 20, 20);
    const struct np_thread *t7 = thread_of_tid(m, 7), *t8 = thread_of_tid(m, 8);
    assert_int_equal(t7->closed_at_loss, 1);
    assert_int_equal(t7->lost, 0);
    assert_int_equal(t7->total_ns, 30);
    assert_int_equal(t8->closed_at_loss, 0);
    assert_int_equal(t8->calls, 2);
    check_self_sum(m);
}

/* Loads the image B with byte AT xor MASK; the summary in *SUM. */
static struct np_model *load_flipped(struct tb *b, size_t at, uint8_t mask, struct np_trace_summary *sum)
{
    b->data[at] ^= mask;
    tb_write(b, file_in_dir("1.npt"));
    b->data[at] ^= mask;
    return load(file_in_dir("1.npt"), NULL, sum);
}

static void expect_diags(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void expect_diags(const char *fmt, ...)
{
    char want[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(want, sizeof want, fmt, ap);
    va_end(ap);
    if (strcmp(diags, want) != 0)
        fail_msg("said:\n%swant:\n%s", diags, want);
}

/* A damaged chunk in the middle of a trace of several: said in one line
 * (file, offset, kind), counted, skipped; the rest is read exactly,
 * whether the damage is in the payload, the checksum, the type or the
 * length (then the next chunk is found by its checksum). */
static void damaged_chunk_skipped(void **state)
{
    (void)state;
    struct tb b;
    two_threads(&b, NP_TRACE_VERSION);
    const char *path = file_in_dir("1.npt");
    struct np_trace_summary sum;
    struct np_model *m = load_flipped(&b, 0, 0, &sum);
    assert_int_equal(sum.status, NP_TRACE_OK);
    assert_string_equal(diags, "");
    expect_two_threads_whole(m);
    np_model_free(m);

    size_t c3 = chunk_at(&b, 3), c4 = chunk_at(&b, 4), n3 = c4 - c3;
    /* a bit of the stream, of the checksum: the length holds */
    const size_t at[] = { c3 + NP_TRACE_CHUNK_HEADER + 21 + 1, c3 + 9 };
    for (int i = 0; i < 2; i++) {
        m = load_flipped(&b, at[i], 0x04, &sum);
        assert_int_equal(sum.status, NP_TRACE_OK);
        assert_int_equal(sum.chunks_damaged, 1);
        assert_int_equal(sum.bytes_damaged, n3);
        assert_int_equal(sum.files_unfinished, 0);
        expect_diags("W %s: offset %zu: damaged EVENTS chunk of thread 7 (checksum mismatch): skipped its %zu "
                     "bytes\n", path, c3, n3);
        expect_without_chunk3(m);
        np_model_free(m);
    }
    /* the type: any thread's chunk it may have been, every thread's
     * calls close there (thread 8 has none open) */
    m = load_flipped(&b, c3 + 3, 0x10, &sum);
    assert_int_equal(sum.chunks_damaged, 1);
    expect_diags("W %s: offset %zu: damaged chunk of unknown type 268435460 (checksum mismatch): skipped its %zu "
                 "bytes\n", path, c3, n3);
    expect_without_chunk3(m);
    np_model_free(m);
    /* the length: one byte more, which ends inside the next chunk; it is
     * found where its checksum holds */
    m = load_flipped(&b, c3 + 4, 0x01, &sum);
    assert_int_equal(sum.chunks_damaged, 1);
    assert_int_equal(sum.bytes_damaged, n3);
    expect_diags("W %s: offset %zu: damaged EVENTS chunk of thread 7 (checksum mismatch, and no chunk after its "
                 "length): skipped %zu bytes, to the next whole chunk at offset %zu\n", path, c3, n3, c4);
    expect_without_chunk3(m);
    np_model_free(m);
    /* a length past the end of the file, over the limit */
    const unsigned byte[] = { 2, 3 };
    const uint8_t masks[] = { 0x01, 0x80 };
    const char *why[] = { "past the end of the file", "over the limit" };
    for (int i = 0; i < 2; i++) {
        uint32_t len = np_get_u32(b.data + c3 + 4) ^ (uint32_t)masks[i] << 8 * byte[i];
        m = load_flipped(&b, c3 + 4 + byte[i], masks[i], &sum);
        expect_diags("W %s: offset %zu: damaged EVENTS chunk of thread 7 (it claims %" PRIu32 " bytes, %s): "
                     "skipped %zu bytes, to the next whole chunk at offset %zu\n", path, c3, len, why[i], n3, c4);
        expect_without_chunk3(m);
        np_model_free(m);
    }
    /* two damaged chunks in a row: the first one's length leads to no
     * whole chunk, so both are skipped as one, to the next whole chunk;
     * thread 8 had no event yet: every thread's calls close there */
    size_t c2 = chunk_at(&b, 2);
    b.data[c2 + 20] ^= 1;
    m = load_flipped(&b, c3 + 20, 1, &sum);
    b.data[c2 + 20] ^= 1;
    assert_int_equal(sum.chunks_damaged, 1);
    assert_int_equal(sum.bytes_damaged, c4 - c2);
    expect_diags("W %s: offset %zu: damaged EVENTS chunk (checksum mismatch, and no chunk after its length): "
                 "skipped %zu bytes, to the next whole chunk at offset %zu\n", path, c2, c4 - c2, c4);
    expect_fn(m, "0x3000", 1, 10, 10);
    expect_fn(m, "0x1000", 1, 20, 10);
    np_model_free(m);
    tb_free(&b);
}

/* Damage everywhere (hostile input): a plausible chunk header every 12
 * bytes, each claiming half a MiB with a checksum that fails. Looking
 * for the next good chunk checksums at most a few times the file's bytes,
 * so this reads at once (it would take hours otherwise); all of it is one
 * damaged stretch, to the end. */
static void hostile_resync(void **state)
{
    (void)state;
    struct tb b;
    tb_init(&b);
    tb_header(&b);
    tb_info(&b, 1, 0, 1.0, 0, 0, "c", 0, NULL);
    size_t start = b.len;
    uint8_t h[NP_TRACE_CHUNK_HEADER] = { 0 };
    np_put_u32(h, NP_CHUNK_EVENTS);
    np_put_u32(h + 4, 512u << 10);
    for (int i = 0; i < (2 << 20) / NP_TRACE_CHUNK_HEADER; i++)
        tb_raw(&b, h, sizeof h);
    tb_write(&b, file_in_dir("1.npt"));
    struct np_trace_summary sum;
    struct np_model *m = load(file_in_dir("1.npt"), NULL, &sum);
    assert_int_equal(sum.status, NP_TRACE_OK);
    assert_int_equal(sum.chunks_damaged, 1);
    assert_int_equal(sum.bytes_damaged, b.len - start);
    assert_non_null(strstr(diags, "to the end of the file, where no whole chunk follows"));
    np_model_free(m);
    tb_free(&b);
}

/* Damage where a file has nothing to go on with: the header or INFO, an
 * error of the file; END, the file reads as one without END. */
static void damaged_header_info_end(void **state)
{
    (void)state;
    struct tb b;
    two_threads(&b, NP_TRACE_VERSION);
    const char *path = file_in_dir("1.npt");
    struct np_trace_summary sum;
    struct np_model *m = load_flipped(&b, 10, 0x01, &sum);
    assert_int_equal(sum.status, NP_TRACE_ECORRUPT);
    assert_non_null(strstr(sum.message, ": offset 12: damaged file header (checksum mismatch)"));
    np_model_free(m);
    m = load_flipped(&b, chunk_at(&b, 0) + 20, 0x01, &sum);
    assert_int_equal(sum.status, NP_TRACE_ECORRUPT);
    assert_non_null(strstr(sum.message, ": offset 16: damaged INFO chunk (checksum mismatch): the file cannot be read"));
    assert_int_equal(sum.files_read, 0);
    np_model_free(m);
    size_t c6 = chunk_at(&b, 6);
    m = load_flipped(&b, c6 + 14, 0x01, &sum);
    assert_int_equal(sum.status, NP_TRACE_OK);
    assert_int_equal(sum.files_unfinished, 1);
    expect_diags("W %s: offset %zu: damaged END chunk (checksum mismatch): skipped its %zu bytes\n"
                 "W %s: no END chunk: the program did not exit normally, or its END was damaged; using what it "
                 "recorded\n", path, c6, b.len - c6, path);
    expect_two_threads_whole(m);
    np_model_free(m);
    tb_free(&b);
}

/* Version 1 is read as ever, and said to carry no checksums. */
static void version_1_read(void **state)
{
    (void)state;
    struct tb b;
    two_threads(&b, NP_TRACE_VERSION_V1);
    assert_int_equal(np_get_u16(b.data + 8), 1);
    assert_int_equal(np_get_u32(b.data + 12), 0);
    assert_int_equal(chunk_at(&b, 7), b.len); /* 8-byte chunk headers */
    tb_write(&b, file_in_dir("1.npt"));
    struct np_trace_summary sum;
    struct np_model *m = load(file_in_dir("1.npt"), NULL, &sum);
    assert_int_equal(sum.status, NP_TRACE_OK);
    assert_int_equal(sum.files_unchecked, 1);
    expect_diags("N %s: trace format version 1: chunks carry no checksums, damage may go unseen\n",
                 file_in_dir("1.npt"));
    expect_two_threads_whole(m);
    np_model_free(m);
    /* the writers write version 2 */
    tb_free(&b);
    two_threads(&b, NP_TRACE_VERSION);
    assert_int_equal(NP_TRACE_VERSION, 2);
    tb_write(&b, file_in_dir("1.npt"));
    m = load(file_in_dir("1.npt"), NULL, &sum);
    assert_int_equal(sum.files_unchecked, 0);
    np_model_free(m);
    tb_free(&b);
}

/* A loss count that cannot be true (more events than the thread, or the
 * process, can have written in its time: one a ns) is damage, said and
 * not counted: a LOST record ends its chunk's reading there (its thread's
 * open calls close), END's count is left out. In version 1 too, where no
 * checksum finds the flipped bit. */
static void impossible_losses(void **state)
{
    (void)state;
    const uint64_t huge = UINT64_C(1) << 56;
    const char *path = file_in_dir("1.npt");
    for (uint16_t version = NP_TRACE_VERSION_V1; version <= NP_TRACE_VERSION; version++) {
        struct tb b;
        tb_init(&b);
        tb_header_version(&b, version);
        tb_info(&b, 1, 0, 1.0, 0, 0, "c", 0, NULL);
        tb_events_begin(&b, 7, 0);
        tb_enter(&b, 0, 0x1000);
        tb_enter(&b, 10, 0x2000);
        tb_exit(&b, 20);
        tb_lost(&b, 25, 25); /* at most 26 by then: it stands */
        tb_enter(&b, 30, 0x2000);
        tb_lost(&b, 40, huge); /* at stream byte 3 + 3 + 1 + 2 + 2 */
        tb_exit(&b, 50);
        tb_exit(&b, 60);
        tb_events_end(&b, NP_COMPRESS_NONE);
        size_t end = b.len;
        tb_end(&b, 100, huge, 1.0);
        tb_write(&b, path);
        struct np_trace_summary sum;
        struct np_model *m = load(path, NULL, &sum);
        assert_int_equal(sum.status, NP_TRACE_OK);
        assert_int_equal(sum.chunks_damaged, 2);
        char note[1024] = "", want[4096];
        if (version == NP_TRACE_VERSION_V1) /* its note first */
            snprintf(note, sizeof note, "N %s: trace format version 1: chunks carry no checksums, damage may go "
                                        "unseen\n", path);
        snprintf(want, sizeof want,
                 "%sW %s: offset %zu: damaged EVENTS chunk of thread 7: a LOST record of %" PRIu64 " events, more "
                 "than the thread can have written by then: skipped its 3 events from there\n"
                 "W %s: offset %zu: damaged END chunk: %" PRIu64 " events lost, more than its 1 thread can have "
                 "written: not counted\n",
                 note, path, chunk_at(&b, 1) + np_trace_chunk_header_size(version) + 21 + 11, huge, path,
                 end + np_trace_chunk_header_size(version) + 8, huge);
        if (strcmp(diags, want))
            fail_msg("version %u said:\n%swant:\n%s", version, diags, want);
        size_t n;
        const struct np_process *p = np_model_processes(m, &n);
        assert_int_equal(p->events_lost, 0);
        const struct np_thread *t = thread_of_tid(m, 7);
        assert_int_equal(t->lost, 25);
        /* 0x1000 closed at the true LOST (25); the second 0x2000, open
         * at the damage, at the thread's last event before it (30: the
         * LOST record's own time may be what is damaged) */
        assert_int_equal(t->closed_at_loss, 2);
        expect_fn(m, "0x2000", 2, 10, 10);
        expect_fn(m, "0x1000", 1, 25, 15);
        np_model_free(m);
        tb_free(&b);
    }
}

/* ---- basic blocks ------------------------------------------------------------------ */

static const struct np_block *block_of(const struct np_model *m, const char *function)
{
    size_t n;
    const struct np_block *b = np_model_blocks(m, &n);
    uint32_t f = fn_index(m, function);
    const struct np_block *found = NULL;
    for (size_t i = 0; i < n; i++)
        if (b[i].function == f) {
            assert_null(found); /* one block per function in this trace */
            found = &b[i];
        }
    assert_non_null(found);
    return found;
}

/* tb_blocks_trace: counts add over chunks, lines and functions resolve,
 * -N drops a function's blocks, -F keeps only the matching ones. */
static void blocks_counts(void **state)
{
    (void)state;
    struct tb b;
    tb_init(&b);
    tb_blocks_trace(&b, &fns);
    tb_write(&b, file_in_dir("4343.npt"));
    tb_free(&b);
    struct np_trace_summary sum;
    struct np_model *m = load(dir, NULL, &sum);
    assert_int_equal(sum.status, NP_TRACE_OK);
    size_t n, np;
    np_model_blocks(m, &n);
    assert_int_equal(n, 3);
    const struct np_process *p = np_model_processes(m, &np);
    assert_int_equal(np, 1);
    assert_int_equal(p[0].blocks_lost, 7);
    const struct np_block *fib = block_of(m, "sample_fib");
    assert_int_equal(fib->count, 10);
    assert_int_equal(fib->line, fns.fib_line);
    assert_non_null(strstr(fib->file, "trace_builder.c"));
    assert_int_equal(block_of(m, "sample_leaf")->count, 4);
    const struct np_block *unknown = block_of(m, "0x10");
    assert_int_equal(unknown->count, 2);
    assert_int_equal(unknown->line, 0);
    assert_int_equal(fn(m, "sample_fib")->calls, 0); /* blocks are not calls */
    np_model_free(m);

    char *globs[] = { "sample_fib" };
    struct np_model_options opt = { .exclude = globs, .nexclude = 1 };
    m = load(dir, &opt, &sum);
    np_model_blocks(m, &n);
    assert_int_equal(n, 2);
    block_of(m, "sample_leaf");
    np_model_free(m);
    struct np_model_options only = { .include = globs, .ninclude = 1 };
    m = load(dir, &only, &sum);
    np_model_blocks(m, &n);
    assert_int_equal(n, 1);
    assert_int_equal(block_of(m, "sample_fib")->count, 10);

    /* gmon.out's BB records: the executable's blocks by address */
    struct np_gmon_bb *bb;
    assert_int_equal(np_gmon_bb_counts(m, fn(m, "sample_fib")->module, &bb, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(bb[0].address, fn(m, "sample_fib")->address);
    assert_int_equal(bb[0].count, 10);
    free(bb);
    np_model_free(m);
}

/* ---- samples -------------------------------------------------------------------------- */

struct sample_seen {
    uint32_t tid;
    uint64_t time_ns, periods, skipped;
    unsigned n;
    uint64_t frames[4];
};

struct samples_seen {
    struct sample_seen s[8];
    int n;
    struct np_trace_sampling sampling[2];
    int nsampling;
    int enters;
};

static int seen_sample(void *ctx, uint32_t tid, uint64_t time_ns, const uint64_t *frames, unsigned n,
                       uint64_t periods, uint64_t skipped)
{
    struct samples_seen *v = ctx;
    assert_true(v->n < 8 && n <= 4);
    struct sample_seen *x = &v->s[v->n++];
    x->tid = tid;
    x->time_ns = time_ns;
    x->periods = periods;
    x->skipped = skipped;
    x->n = n;
    memcpy(x->frames, frames, n * sizeof *frames);
    return 0;
}

static int seen_sampling(void *ctx, const struct np_trace_sampling *s)
{
    struct samples_seen *v = ctx;
    assert_true(v->nsampling < 2);
    v->sampling[v->nsampling++] = *s;
    return 0;
}

static int seen_enter(void *ctx, uint32_t tid, uint64_t time_ns, uint64_t address)
{
    (void)tid, (void)time_ns, (void)address;
    ((struct samples_seen *)ctx)->enters++;
    return 0;
}

/* SAMPLING and SAMPLE decode exactly: times, frames (deltas from the
 * previous PC of the chunk, then from the frame before, both ways), the
 * periods (1 + overrun) and skipped counts; in plain and zstd chunks,
 * mixed with calls. */
static void samples_decode(void **state)
{
    (void)state;
    static const uint64_t s1[] = { 0x401000, 0x402010, 0x7f0000001234 };
    static const uint64_t s2[] = { 0x400ff0 };
    static const uint64_t s3[] = { 0x7f0000000010, 0x401000, 0x400000, 0x400008 };
    struct tb b;
    tb_init(&b);
    tb_header(&b);
    tb_info(&b, 5, 1, 2.0, 1000, 1000000000ull, "tsc", 0, NULL);
    tb_sampling(&b, 1000, 997, NP_UNWIND_FP, NP_SAMPLING_CPU_TIME | NP_SAMPLING_RETURN_ADDRS, 1003009, 128);
    tb_events_begin(&b, 5, 1000);
    tb_enter(&b, 1000, 0x401000);
    tb_sample(&b, 1010, s1, 3, 0, 0);
    tb_sample(&b, 1020, s2, 1, 3, 2);
    tb_exit(&b, 1030);
    tb_events_end(&b, NP_COMPRESS_NONE);
    tb_events_begin(&b, 6, 1040);
    tb_sample(&b, 1040, s3, 4, 0, 7);
    tb_sample(&b, 1045, NULL, 0, 0, 5); /* no frames: the periods skipped alone */
    tb_sample(&b, 1046, s2, 1, 0, 0);   /* its PC from s3's */
    tb_events_end(&b, NP_COMPRESS_ZSTD);
    tb_sampling(&b, 1050, 0, NP_UNWIND_FP, 0, 0, 128);
    tb_end(&b, 1100, 0, 2.0);
    tb_write(&b, file_in_dir("5.npt"));
    tb_free(&b);

    struct samples_seen v = { .n = 0 };
    struct np_event_sink sink = { .ctx = &v, .enter = seen_enter, .sample = seen_sample, .sampling = seen_sampling };
    struct np_trace_summary sum;
    assert_int_equal(np_trace_read(file_in_dir("5.npt"), &sink, NULL, &sum), NP_TRACE_OK);
    assert_int_equal(sum.events, 7);
    assert_int_equal(v.enters, 1);
    assert_int_equal(v.nsampling, 2);
    assert_int_equal(v.sampling[0].time_ns, 1000000000ull);
    assert_int_equal(v.sampling[0].hz, 997);
    assert_int_equal(v.sampling[0].unwinder, NP_UNWIND_FP);
    assert_int_equal(v.sampling[0].flags, NP_SAMPLING_CPU_TIME | NP_SAMPLING_RETURN_ADDRS);
    assert_int_equal(v.sampling[0].period_ns, 1003009);
    assert_int_equal(v.sampling[0].max_frames, 128);
    assert_int_equal(v.sampling[1].time_ns, 1000000100ull);
    assert_int_equal(v.sampling[1].hz, 0);
    assert_int_equal(v.n, 5);
    static const struct { uint32_t tid; uint64_t time, periods, skipped; unsigned n; const uint64_t *f; } want[] = {
        { 5, 1000000020ull, 1, 0, 3, s1 }, { 5, 1000000040ull, 4, 2, 1, s2 }, { 6, 1000000080ull, 1, 7, 4, s3 },
        { 6, 1000000090ull, 0, 5, 0, s3 },  { 6, 1000000092ull, 1, 0, 1, s2 }
    };
    for (int i = 0; i < 5; i++) {
        assert_int_equal(v.s[i].tid, want[i].tid);
        assert_int_equal(v.s[i].time_ns, want[i].time);
        assert_int_equal(v.s[i].periods, want[i].periods);
        assert_int_equal(v.s[i].skipped, want[i].skipped);
        assert_int_equal(v.s[i].n, want[i].n);
        assert_memory_equal(v.s[i].frames, want[i].f, want[i].n * sizeof(uint64_t));
    }
    /* the model, which does not ask for samples, reads the calls as ever */
    struct np_trace_summary msum;
    struct np_model *m = load(file_in_dir("5.npt"), NULL, &msum);
    assert_int_equal(msum.status, NP_TRACE_OK);
    expect_fn(m, "0x401000", 1, 60, 60);
    np_model_free(m);
}

/* ---- samples in the model ------------------------------------------------------ */

static struct np_model *load_samples(bool with_calls, const struct np_model_options *opt)
{
    struct tb b;
    tb_init(&b);
    tb_samples_trace(&b, &fns, with_calls);
    assert_int_equal(tb_write(&b, file_in_dir("4545.npt")), 0);
    tb_free(&b);
    struct np_trace_summary sum;
    struct np_model *m = load(file_in_dir("4545.npt"), opt, &sum);
    assert_int_equal(sum.status, NP_TRACE_OK);
    return m;
}

/* The samples trace with calls, under OPT reset to one option. */
static struct np_model *load_samples_with(struct np_model_options *opt, enum np_model_opt which, const char *value)
{
    char err[128];
    np_model_options_free(opt);
    assert_int_equal(np_model_option(opt, which, value, err, sizeof err), 0);
    return load_samples(true, opt);
}

/* The PC row of function NAME (NULL: the PC in no module at ADDRESS). */
static const struct np_sample_pc *pc_of(const struct np_model *m, const char *name, uint64_t address)
{
    size_t n;
    const struct np_sample_pc *pc = np_model_sample_pcs(m, &n);
    for (size_t i = 0; i < n; i++) {
        if (!name && pc[i].function == NP_NONE && !pc[i].module && pc[i].address == address)
            return &pc[i];
        if (name && fn(m, name) && pc[i].function == fn_index(m, name))
            return &pc[i];
    }
    return NULL;
}

static void expect_sampling(const struct np_model *m, uint64_t samples, uint64_t periods, uint64_t skipped)
{
    const struct np_model_sampling *s = np_model_sampling(m);
    assert_int_equal(s->hz, 1000);
    assert_int_equal(s->period_ns, 1000000);
    assert_true(s->cpu_time);
    assert_int_equal(s->unwinder, NP_UNWIND_FP);
    assert_int_equal(s->samples, samples);
    assert_int_equal(s->periods, periods);
    assert_int_equal(s->skipped, skipped);
}

static void samples_pcs(void **state)
{
    (void)state;
    struct np_model *m = load_samples(true, NULL);
    expect_sampling(m, 8, 9, 5);
    size_t n;
    np_model_sample_pcs(m, &n);
    assert_int_equal(n, 4);
    static const struct { const char *name; uint64_t samples, periods; } want[] = {
        { "sample_leaf", 3, 4 }, { "sample_square", 3, 3 }, { "sample_fib", 1, 1 }
    };
    for (size_t i = 0; i < 3; i++) {
        const struct np_sample_pc *pc = pc_of(m, want[i].name, 0);
        const struct np_function *f = fn(m, want[i].name);
        assert_non_null(pc);
        assert_string_equal(pc->module, f->module);
        assert_int_equal(pc->address, f->address); /* the PCs are the functions' entries */
        assert_int_equal(pc->samples, want[i].samples);
        assert_int_equal(pc->periods, want[i].periods);
    }
    const struct np_sample_pc *unknown = pc_of(m, NULL, 0x10);
    assert_non_null(unknown);
    assert_int_equal(unknown->samples, 1);
    /* calls in the trace: their exact profile, the samples beside it */
    assert_false(np_model_estimated(m));
    expect_fn(m, "sample_main", 1, 5500, 5500);
    expect_fn(m, "sample_leaf", -1, 0, 0);
    np_model_free(m);

    /* filters: threads, then stacks inside / not inside functions */
    struct np_model_options opt = { 0 };
    m = load_samples_with(&opt, NP_MODEL_OPT_TID, "201");
    expect_sampling(m, 3, 3, 3);
    assert_int_equal(pc_of(m, "sample_square", 0)->samples, 2);
    assert_null(pc_of(m, "sample_leaf", 0));
    np_model_free(m);
    m = load_samples_with(&opt, NP_MODEL_OPT_EXCLUDE, "sample_help*");
    expect_sampling(m, 5, 5, 5);
    assert_null(pc_of(m, "sample_leaf", 0));
    np_model_free(m);
    m = load_samples_with(&opt, NP_MODEL_OPT_INCLUDE, "sample_twice");
    expect_sampling(m, 3, 3, 5);
    assert_int_equal(pc_of(m, "sample_square", 0)->samples, 2);
    np_model_free(m);
    np_model_options_free(&opt);
}

/* The arc CALLER -> CALLEE (NULL: a thread's root). */
static const struct np_arc *arc_of(const struct np_model *m, const char *caller, const char *callee)
{
    size_t n;
    const struct np_arc *a = np_model_arcs(m, &n);
    uint32_t from = caller ? fn_index(m, caller) : NP_NONE, to = fn_index(m, callee);
    for (size_t i = 0; i < n; i++)
        if (a[i].caller == from && a[i].callee == to)
            return &a[i];
    return NULL;
}

static void expect_arc(const struct np_model *m, const char *caller, const char *callee, uint64_t calls,
                       uint64_t total)
{
    const struct np_arc *a = arc_of(m, caller, callee);
    if (!a || a->calls != calls || a->total_ns != total)
        fail_msg("arc %s -> %s: %lu calls %lu ns, want %lu %lu", caller ? caller : "root", callee,
                 a ? (unsigned long)a->calls : 0, a ? (unsigned long)a->total_ns : 0, (unsigned long)calls,
                 (unsigned long)total);
}

#define MS 1000000ull

static void samples_profile(void **state)
{
    (void)state;
    /* samples only: the profile comes from them, on its own */
    struct np_model *m = load_samples(false, NULL);
    assert_true(np_model_estimated(m));
    expect_fn(m, "sample_main", 5, 6 * MS, 0);
    expect_fn(m, "sample_helper", 3, 4 * MS, 0);
    expect_fn(m, "sample_leaf", 3, 4 * MS, 4 * MS);
    expect_fn(m, "sample_square", 3, 3 * MS, 3 * MS);
    expect_fn(m, "sample_fib", 1, 1 * MS, 1 * MS); /* in the stack twice, counted once */
    expect_fn(m, "sample_twice", 3, 3 * MS, 0);
    expect_fn(m, "0x10", 1, 1 * MS, 1 * MS);
    assert_int_equal(fn(m, "sample_leaf")->min_ns, 0);
    assert_int_equal(fn(m, "sample_leaf")->max_ns, 0);
    assert_int_equal(check_self_sum(m), 9 * MS);
    expect_arc(m, NULL, "sample_main", 5, 6 * MS);
    expect_arc(m, "sample_main", "sample_helper", 3, 4 * MS);
    expect_arc(m, "sample_helper", "sample_leaf", 3, 4 * MS);
    expect_arc(m, "sample_main", "sample_fib", 1, 1 * MS);
    expect_arc(m, "sample_fib", "sample_fib", 1, 1 * MS);
    expect_arc(m, "sample_twice", "sample_square", 2, 2 * MS);
    expect_arc(m, NULL, "sample_twice", 3, 3 * MS);
    size_t nt, nn;
    const struct np_thread *t = np_model_threads(m, &nt);
    const struct np_node *node = np_model_nodes(m, &nn);
    assert_int_equal(nt, 2);
    assert_int_equal(t[0].tid, 200);
    assert_int_equal(t[0].calls, 5);
    assert_int_equal(t[0].total_ns, 6 * MS);
    assert_int_equal(t[0].first_ns, 1000001000ull);
    assert_int_equal(t[0].last_ns, 1000005000ull);
    assert_int_equal(t[1].calls, 3);
    assert_int_equal(t[1].total_ns, 3 * MS);
    /* the tree of thread 200: main (helper (leaf), square, fib (fib)) */
    const struct np_node *main_node = &node[node[t[0].root].first_child];
    assert_int_equal(main_node->function, fn_index(m, "sample_main"));
    assert_int_equal(main_node->calls, 5);
    assert_int_equal(main_node->total_ns, 6 * MS);
    assert_int_equal(main_node->next_sibling, NP_NONE);
    static const char *const kids[] = { "sample_helper", "sample_square", "sample_fib" };
    static const uint64_t kid_calls[] = { 3, 1, 1 }, kid_total[] = { 4 * MS, 1 * MS, 1 * MS },
                          kid_self[] = { 0, 1 * MS, 0 };
    uint32_t k = main_node->first_child;
    for (int i = 0; i < 3; k = node[k].next_sibling, i++) {
        assert_int_not_equal(k, NP_NONE);
        assert_int_equal(node[k].function, fn_index(m, kids[i]));
        assert_int_equal(node[k].calls, kid_calls[i]);
        assert_int_equal(node[k].total_ns, kid_total[i]);
        assert_int_equal(node[k].self_ns, kid_self[i]);
    }
    assert_int_equal(k, NP_NONE);
    np_model_free(m);

    /* calls and samples: from the samples when asked, the calls ignored;
     * the timeline is the samples' */
    struct timeline tl;
    timeline_init(&tl);
    struct np_model_options opt = { .from_samples = true, .listener = &tl.listener };
    m = load_samples(true, &opt);
    assert_true(np_model_estimated(m));
    assert_null(timeline_check(&tl));
    assert_int_equal(tl.n, 9);
    timeline_free(&tl);
    opt.listener = NULL;
    expect_fn(m, "sample_main", 5, 6 * MS, 0);
    assert_int_equal(check_self_sum(m), 9 * MS);
    np_model_free(m);

    /* -F: the paths start at the included function; --depth cuts them */
    char err[128];
    assert_int_equal(np_model_option(&opt, NP_MODEL_OPT_INCLUDE, "sample_fib", err, sizeof err), 0);
    m = load_samples(false, &opt);
    expect_fn(m, "sample_main", -1, 0, 0);
    expect_fn(m, "sample_fib", 1, 1 * MS, 1 * MS);
    expect_arc(m, NULL, "sample_fib", 1, 1 * MS);
    expect_arc(m, "sample_fib", "sample_fib", 1, 1 * MS);
    assert_int_equal(arc(m, fn_index(m, "sample_fib"), fn_index(m, "sample_fib"))->outer_ns, 0);
    assert_int_equal(arc(m, NP_NONE, fn_index(m, "sample_fib"))->outer_ns, 1 * MS);
    assert_int_equal(check_self_sum(m), 1 * MS);
    np_model_free(m);
    np_model_options_free(&opt);
    opt.from_samples = true;
    assert_int_equal(np_model_option(&opt, NP_MODEL_OPT_DEPTH, "2", err, sizeof err), 0);
    m = load_samples(false, &opt);
    expect_fn(m, "sample_main", 5, 6 * MS, 0);
    expect_fn(m, "sample_helper", 3, 4 * MS, 4 * MS); /* leaf's samples: its caller's self */
    expect_fn(m, "sample_leaf", -1, 0, 0);
    expect_fn(m, "sample_square", 3, 3 * MS, 3 * MS);
    expect_fn(m, "sample_fib", 1, 1 * MS, 1 * MS);
    expect_arc(m, "sample_main", "sample_fib", 1, 1 * MS);
    assert_null(arc_of(m, "sample_fib", "sample_fib"));
    assert_int_equal(check_self_sum(m), 9 * MS);
    np_model_free(m);
    np_model_options_free(&opt);
}

/* The timeline estimated from samples never goes back in time and nests
 * as the samples did: a sample whose stack shares nothing with the one
 * just before begins its calls where those ended (not where its period
 * would, earlier); calls of no duration (samples at one time) come in the
 * order they began, before a sibling that begins at the same time; a
 * sample earlier than the one before it counts as at that one's time. */
static void samples_timeline_in_order(void **state)
{
    (void)state;
    const uint64_t leaf[] = { fns.leaf, fns.helper + 1, fns.main + 1 },
                   fib[] = { fns.fib, fns.fib + 1, fns.main + 1 }, wsquare[] = { fns.square, fns.twice + 1 },
                   square[] = { fns.square, fns.main + 1 }, unknown[] = { 0x10, fns.twice + 1 },
                   main_only[] = { fns.main };
    struct tb b;
    tb_init(&b);
    tb_header(&b);
    tb_info(&b, 4545, 1, 1.0, 0, 1000000000ull, "monotonic", 0, NULL);
    tb_module_self(&b);
    /* a period of 100 ns: samples 50 ns apart are contiguous */
    tb_sampling(&b, 0, 10000000, NP_UNWIND_FP, NP_SAMPLING_CPU_TIME | NP_SAMPLING_RETURN_ADDRS, 100, 128);
    tb_events_begin(&b, 200, 0);
    tb_sample(&b, 1000, leaf, 3, 0, 0);
    tb_sample(&b, 1100, fib, 3, 0, 0);
    tb_sample(&b, 1150, wsquare, 2, 0, 0); /* nothing in common, 50 ns on */
    tb_sample(&b, 1150, square, 2, 0, 0);  /* three at one time */
    tb_sample(&b, 1150, unknown, 2, 0, 0);
    tb_sample(&b, 1250, unknown, 2, 0, 0);
    tb_events_end(&b, NP_COMPRESS_NONE);
    tb_events_begin(&b, 200, 1200);
    tb_sample(&b, 1200, unknown, 2, 0, 0); /* before the last: at 1250 */
    tb_sample(&b, 1300, main_only, 1, 0, 0);
    tb_events_end(&b, NP_COMPRESS_NONE);
    tb_end(&b, 2000, 0, 1.0);
    assert_int_equal(tb_write(&b, file_in_dir("4545.npt")), 0);
    tb_free(&b);
    struct timeline tl;
    timeline_init(&tl);
    struct np_model_options opt = { .listener = &tl.listener };
    struct np_trace_summary sum;
    struct np_model *m = load(file_in_dir("4545.npt"), &opt, &sum);
    assert_int_equal(sum.status, NP_TRACE_OK);
    assert_true(np_model_estimated(m));
    const char *bad = timeline_check(&tl);
    if (bad)
        fail_msg("%s", bad);
    static const struct {
        const char *fn;
        uint32_t depth;
        uint64_t start, duration;
    } want[] = {
        { "sample_main", 0, 900, 200 },   { "sample_helper", 1, 900, 100 }, { "sample_leaf", 2, 900, 100 },
        { "sample_fib", 1, 1000, 100 },   { "sample_fib", 2, 1000, 100 },   { "sample_twice", 0, 1100, 50 },
        { "sample_square", 1, 1100, 50 }, { "sample_main", 0, 1150, 0 },    { "sample_square", 1, 1150, 0 },
        { "sample_twice", 0, 1150, 100 }, { "0x10", 1, 1150, 100 },         { "sample_main", 0, 1250, 50 },
    };
    size_t n = sizeof want / sizeof *want, nf;
    const struct np_function *f = np_model_functions(m, &nf);
    for (size_t i = 0; i < tl.n && i < n; i++) {
        const struct np_call *c = &tl.calls[i];
        if (strcmp(f[c->function].name, want[i].fn) || c->depth != want[i].depth ||
            c->start_ns != 1000000000ull + want[i].start || c->duration_ns != want[i].duration)
            fail_msg("call %zu: %s depth %u at %lu for %lu, want %s depth %u at %lu for %lu", i,
                     f[c->function].name, c->depth, (unsigned long)(c->start_ns - 1000000000ull),
                     (unsigned long)c->duration_ns, want[i].fn, want[i].depth, (unsigned long)want[i].start,
                     (unsigned long)want[i].duration);
    }
    assert_int_equal(tl.n, n);
    timeline_free(&tl);
    np_model_free(m);
}

/* ---- every cut, random damage ------------------------------------------------------ */

/* A sink that records events, to compare a damaged read with the whole. */
struct ev {
    int kind;
    uint32_t tid;
    uint64_t t, x;
};
struct recorder {
    struct ev *ev;
    size_t n, cap;
};

static int rec(struct recorder *r, int kind, uint32_t tid, uint64_t t, uint64_t x)
{
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 64;
        r->ev = realloc(r->ev, r->cap * sizeof *r->ev);
        assert_non_null(r->ev);
    }
    r->ev[r->n++] = (struct ev){ kind, tid, t, x };
    return 0;
}
static int rec_enter(void *c, uint32_t tid, uint64_t t, uint64_t a) { return rec(c, 0, tid, t, a); }
static int rec_exit(void *c, uint32_t tid, uint64_t t) { return rec(c, 1, tid, t, 0); }
static int rec_lost(void *c, uint32_t tid, uint64_t t, uint64_t n) { return rec(c, 2, tid, t, n); }
static int rec_switch(void *c, uint32_t tid, uint64_t t, uint64_t d) { return rec(c, 3, tid, t, d); }

static int read_events(const char *path, struct recorder *r, struct np_trace_summary *sum)
{
    struct np_event_sink sink = { .ctx = r, .enter = rec_enter, .exit = rec_exit, .lost = rec_lost,
                                  .switch_out = rec_switch };
    r->n = 0;
    return np_trace_read(path, &sink, NULL, sum);
}

/* The sample trace (with END) built in B and written to NAME in the test's
 * directory; returns its path. */
static const char *sample_file(struct tb *b, const char *name)
{
    tb_init(b);
    tb_sample_trace(b, &fns, true);
    const char *path = file_in_dir(name);
    tb_write(b, path);
    return path;
}

/* Times as np_tick_time gives them, whichever way a batch is converted:
 * at once while decoding (ticks after the start, small enough), or with
 * care (before the start, past 2^63 ns, wrapping past 2^64 ticks). Each
 * chunk holds enough events for the fast path to serve most of them. */
static void times_every_way(void **state)
{
    (void)state;
    const double nspt = 0.37;
    const uint64_t start_tick = 5000000, start_ns = UINT64_C(1700000000000000000);
    /* each chunk's first tick, and its step between events */
    const uint64_t first[] = { 1000, 6000000, (UINT64_C(1) << 63) / 37 * 100 - 20000, UINT64_MAX - 30000 };
    const uint64_t step = 7;
    enum { PER_CHUNK = 4000 };
    struct tb b;
    tb_init(&b);
    tb_header(&b);
    tb_info(&b, 1, 0, nspt, start_tick, start_ns, "test", 0, NULL);
    uint64_t ticks[4 * PER_CHUNK];
    size_t nt = 0;
    for (int c = 0; c < 4; c++) {
        tb_events_begin(&b, 7, first[c]);
        uint64_t t = first[c];
        for (int i = 0; i < PER_CHUNK; i++, t += step) {
            if (i % 2)
                tb_exit(&b, t);
            else
                tb_enter(&b, t, 0x1000);
            ticks[nt++] = t;
        }
        tb_events_end(&b, c % 2 ? NP_COMPRESS_ZSTD : NP_COMPRESS_NONE);
    }
    const char *path = file_in_dir("times.npt");
    tb_write(&b, path);
    struct recorder r = { 0 };
    struct np_trace_summary sum;
    assert_int_equal(read_events(path, &r, &sum), NP_TRACE_OK);
    assert_int_equal(r.n, nt);
    struct np_trace_process p = { .ns_per_tick = nspt, .start_tick = start_tick, .start_ns = start_ns };
    for (size_t i = 0; i < nt; i++)
        if (r.ev[i].t != np_tick_time(&p, ticks[i]))
            fail_msg("event %zu (tick %llu): %llu ns, not %llu", i, (unsigned long long)ticks[i],
                     (unsigned long long)r.ev[i].t, (unsigned long long)np_tick_time(&p, ticks[i]));
    free(r.ev);
    tb_free(&b);
}

static void every_cut(void **state)
{
    (void)state;
    struct tb b;
    const char *path = sample_file(&b, "cut.npt");
    struct recorder whole = { 0 }, part = { 0 };
    struct np_trace_summary sum;
    assert_int_equal(read_events(path, &whole, &sum), NP_TRACE_OK);
    assert_int_equal(whole.n, 22);
    for (size_t len = 0; len < b.len; len++) {
        tb_write_prefix(&b, path, len);
        int st = read_events(path, &part, &sum);
        /* a cut is a warning (truncated), or an END-less file; at 0, an
         * empty file, said so (an error: nothing was written) */
        if (len == 0 && (st != NP_TRACE_ENOTTRACE || !strstr(sum.message, ": empty trace file: ")))
            fail_msg("cut at 0: status %d (%s)", st, sum.message);
        if (len && st != NP_TRACE_ETRUNC && !(st == NP_TRACE_OK && sum.files_unfinished == 1))
            fail_msg("cut at %zu: status %d (%s)", len, st, sum.message);
        /* INFO alone says ns_per_tick 2: compare the events' order and
         * addresses, which do not depend on it */
        assert_true(part.n <= whole.n);
        for (size_t i = 0; i < part.n; i++)
            if (part.ev[i].kind != whole.ev[i].kind || part.ev[i].tid != whole.ev[i].tid ||
                (part.ev[i].kind == 0 && part.ev[i].x != whole.ev[i].x))
                fail_msg("cut at %zu: event %zu differs", len, i);
        /* and the model copes with every prefix */
        struct np_model *m = load(path, NULL, &sum);
        check_self_sum(m);
        np_model_free(m);
    }
    free(whole.ev);
    free(part.ev);
    tb_free(&b);
}

/* Rounds of random damage: fewer under the sanitizers, each of whose
 * loads takes several times as long. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define DAMAGE_ROUNDS 600
#else
#define DAMAGE_ROUNDS 3000
#endif

static void random_damage(void **state)
{
    (void)state;
    struct tb b;
    const char *path = sample_file(&b, "bad.npt");
    uint8_t *copy = malloc(b.len);
    uint32_t seed = 12345;
    int errors = 0;
    for (int round = 0; round < DAMAGE_ROUNDS; round++) {
        memcpy(copy, b.data, b.len);
        int flips = 1 + round % 3;
        for (int i = 0; i < flips; i++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = (seed >> 8) % b.len;
            copy[at] ^= (uint8_t)(1u + (seed >> 20) % 255u);
        }
        struct tb damaged = { .data = copy, .len = b.len };
        tb_write(&damaged, path);
        struct np_trace_summary sum;
        struct np_model *m = load(path, NULL, &sum);
        if (sum.status) {
            assert_non_null(strstr(sum.message, path));
            assert_null(strchr(sum.message, '\n'));
            if (sum.status != NP_TRACE_ENOMEM && !strstr(sum.message, ": offset "))
                fail_msg("round %d: no offset in '%s'", round, sum.message);
        }
        /* every damaged chunk said, with its offset */
        if (sum.chunks_damaged && !strstr(diags, ": damaged "))
            fail_msg("round %d: %u damaged chunks, said: %s", round, sum.chunks_damaged, diags);
        errors += sum.status || sum.chunks_damaged;
        check_self_sum(m);
        np_model_free(m);
    }
    assert_int_equal(errors, DAMAGE_ROUNDS); /* the checksums see all of it */
    free(copy);
    tb_free(&b);
}

/* S through np_xml_text (at most MAX characters), as a string to free. */
static char *xml_text(const char *s, size_t max)
{
    char *buf;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    np_xml_text(f, s, max);
    fclose(f);
    return buf;
}

static void xml_text_escapes(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        size_t max;
        const char *out;
    } cases[] = {
        { "plain", SIZE_MAX, "plain" },
        { "a<b>&\"c'", SIZE_MAX, "a&lt;b&gt;&amp;&quot;c&#39;" },
        { "tab\tnl\ndel\x7f", SIZE_MAX, "tab?nl?del?" },
        { "\xff\xc3(", SIZE_MAX, "\xef\xbf\xbd\xef\xbf\xbd(" },    /* a stray byte, a cut sequence */
        { "\xef\xbf\xbe\xef\xbf\xbf", SIZE_MAX, "\xef\xbf\xbd\xef\xbf\xbd" }, /* U+FFFE, U+FFFF */
        { "\xed\xa0\x80", SIZE_MAX, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" },  /* a surrogate */
        { "\xc3\xa9t\xc3\xa9", SIZE_MAX, "\xc3\xa9t\xc3\xa9" },
        { "\xc3\xa9t\xc3\xa9", 2, "\xc3\xa9t" }, /* characters, not bytes */
        { "<<<", 2, "&lt;&lt;" },
        { "", 3, "" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *out = xml_text(cases[i].in, cases[i].max);
        assert_string_equal(out, cases[i].out);
        free(out);
    }
    assert_int_equal(np_utf8_chars("\xc3\xa9t\xff\xef\xbf\xbe"), 4);
    assert_int_equal(np_utf8_chars(""), 0);
}

/* ---- runs of events ------------------------------------------------------------ */

/* The model fed one callback per event: its sink without the runs. */
static struct np_model *load_per_event(const char *path, const struct np_model_options *opt,
                                       struct np_trace_summary *sum)
{
    struct np_symbols *syms = np_symbols_new(NULL, NULL);
    struct np_model *m = np_model_new(opt, syms);
    assert_non_null(m);
    struct np_event_sink sink = np_model_sink(m);
    assert_non_null(sink.events);
    sink.events = NULL;
    np_trace_read(path, &sink, NULL, sum);
    assert_int_equal(np_model_finish(m), 0);
    np_symbols_free(syms);
    return m;
}

static int same_string(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

/* Every array of A and B holds the same values. */
static void same_models(const struct np_model *a, const struct np_model *b)
{
    size_t na, nb;
    const struct np_thread *ta = np_model_threads(a, &na), *tb_ = np_model_threads(b, &nb);
    assert_int_equal(na, nb);
    for (size_t i = 0; i < na; i++) {
        const struct np_thread *x = &ta[i], *y = &tb_[i];
        assert_true(x->process == y->process && x->tid == y->tid && same_string(x->name, y->name) &&
                    x->first_ns == y->first_ns && x->last_ns == y->last_ns && x->calls == y->calls &&
                    x->total_ns == y->total_ns && x->switched_ns == y->switched_ns && x->lost == y->lost &&
                    x->dropped == y->dropped && x->root == y->root);
    }
    const struct np_function *fa = np_model_functions(a, &na), *fb = np_model_functions(b, &nb);
    assert_int_equal(na, nb);
    for (size_t i = 0; i < na; i++) {
        const struct np_function *x = &fa[i], *y = &fb[i];
        assert_true(same_string(x->name, y->name) && same_string(x->module, y->module) && x->calls == y->calls &&
                    x->total_ns == y->total_ns && x->self_ns == y->self_ns && x->sum_ns == y->sum_ns &&
                    x->min_ns == y->min_ns && x->max_ns == y->max_ns && x->switched_ns == y->switched_ns &&
                    x->self_switched_ns == y->self_switched_ns);
    }
    const struct np_arc *aa = np_model_arcs(a, &na), *ab = np_model_arcs(b, &nb);
    assert_int_equal(na, nb);
    for (size_t i = 0; i < na; i++)
        assert_true(aa[i].caller == ab[i].caller && aa[i].callee == ab[i].callee && aa[i].calls == ab[i].calls &&
                    aa[i].total_ns == ab[i].total_ns && aa[i].switched_ns == ab[i].switched_ns);
    const struct np_node *da = np_model_nodes(a, &na), *db = np_model_nodes(b, &nb);
    assert_int_equal(na, nb);
    for (size_t i = 0; i < na; i++)
        assert_true(da[i].parent == db[i].parent && da[i].function == db[i].function &&
                    da[i].first_child == db[i].first_child && da[i].next_sibling == db[i].next_sibling &&
                    da[i].calls == db[i].calls && da[i].total_ns == db[i].total_ns &&
                    da[i].self_ns == db[i].self_ns && da[i].switched_ns == db[i].switched_ns);
}

/* A and B told the same calls in the same order. */
static void same_timelines(const struct timeline *a, const struct timeline *b)
{
    assert_null(timeline_check(a));
    assert_null(timeline_check(b));
    assert_int_equal(a->n, b->n);
    for (size_t i = 0; i < a->n; i++) {
        const struct np_call *x = &a->calls[i], *y = &b->calls[i];
        assert_true(x->thread == y->thread && x->node == y->node && x->depth == y->depth &&
                    x->start_ns == y->start_ns && x->duration_ns == y->duration_ns &&
                    x->switched_ns == y->switched_ns);
    }
}

/* The model gives the same numbers from runs of events (np_model_load)
 * and from one callback per event, with and without filters, on the
 * sample and on damaged copies of it. */
static void runs_match_callbacks(void **state)
{
    (void)state;
    struct tb b;
    const char *path = sample_file(&b, "runs.npt");
    uint8_t *copy = malloc(b.len);
    char *exclude[] = { "sample_leaf" };
    const struct np_model_options plain = { 0 },
                                  filtered = { .exclude = exclude, .nexclude = 1, .min_duration_ns = 10 };
    uint32_t seed = 777;
    for (int round = 0; round < 400; round++) {
        memcpy(copy, b.data, b.len);
        for (int i = 0; round && i < 1 + round % 3; i++) { /* round 0: the sample itself */
            seed = seed * 1103515245u + 12345u;
            copy[(seed >> 8) % b.len] ^= (uint8_t)(1u + (seed >> 20) % 255u);
        }
        struct tb damaged = { .data = copy, .len = b.len };
        tb_write(&damaged, path);
        struct np_model_options o1 = round % 2 ? filtered : plain, o2 = o1;
        struct timeline t1, t2;
        timeline_init(&t1);
        timeline_init(&t2);
        o1.listener = &t1.listener;
        o2.listener = &t2.listener;
        struct np_trace_summary s1, s2;
        struct np_model *runs = load(path, &o1, &s1), *single = load_per_event(path, &o2, &s2);
        assert_int_equal(s1.status, s2.status);
        assert_string_equal(s1.message, s2.message);
        assert_int_equal(s1.events, s2.events);
        if (round == 0)
            assert_int_equal(s1.events, 22);
        same_models(runs, single);
        same_timelines(&t1, &t2);
        np_model_free(runs);
        np_model_free(single);
        timeline_free(&t1);
        timeline_free(&t2);
    }
    free(copy);
    tb_free(&b);
}

/* A sink that stops at its event number stop_at, by runs or one by one. */
struct stopper {
    size_t seen, stop_at;
};

static int stop_one(void *ctx)
{
    struct stopper *s = ctx;
    return s->seen++ == s->stop_at ? NP_TRACE_ESTOP : 0;
}
static int stop_enter(void *c, uint32_t tid, uint64_t t, uint64_t a) { (void)tid, (void)t, (void)a; return stop_one(c); }
static int stop_exit(void *c, uint32_t tid, uint64_t t) { (void)tid, (void)t; return stop_one(c); }
static int stop_lost(void *c, uint32_t tid, uint64_t t, uint64_t n) { (void)tid, (void)t, (void)n; return stop_one(c); }
static int stop_switch(void *c, uint32_t tid, uint64_t t, uint64_t d) { (void)tid, (void)t, (void)d; return stop_one(c); }

static int stop_run(void *ctx, uint32_t tid, const struct np_event *ev, size_t n, size_t *done)
{
    struct stopper *s = ctx;
    (void)tid, (void)ev;
    if (s->seen + n > s->stop_at) {
        *done = s->stop_at - s->seen;
        s->seen = s->stop_at + 1;
        return NP_TRACE_ESTOP;
    }
    s->seen += n;
    *done = n;
    return 0;
}

/* A run that stops is reported as the event that stopped it would be. */
static void run_stops_like_callbacks(void **state)
{
    (void)state;
    struct tb b;
    const char *path = sample_file(&b, "stop.npt");
    for (size_t k = 0; k < 22; k++) {
        struct stopper one = { 0, k }, run = { 0, k };
        struct np_event_sink by_one = { .ctx = &one, .enter = stop_enter, .exit = stop_exit, .lost = stop_lost,
                                        .switch_out = stop_switch },
                             by_run = { .ctx = &run, .events = stop_run };
        struct np_trace_summary s1, s2;
        assert_int_equal(np_trace_read(path, &by_one, NULL, &s1), NP_TRACE_ESTOP);
        assert_int_equal(np_trace_read(path, &by_run, NULL, &s2), NP_TRACE_ESTOP);
        assert_int_equal(s1.events, k);
        assert_int_equal(s2.events, k);
        assert_string_equal(s1.message, s2.message);
        assert_non_null(strstr(s2.message, ": offset "));
    }
    tb_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(sample_profile, setup, teardown),
        cmocka_unit_test_setup_teardown(sample_symbols, setup, teardown),
        cmocka_unit_test(vdso_symbols),
        cmocka_unit_test(versioned_names),
        cmocka_unit_test_setup_teardown(sample_graph_and_tree, setup, teardown),
        cmocka_unit_test_setup_teardown(sample_without_end, setup, teardown),
        cmocka_unit_test_setup_teardown(filter_exclude, setup, teardown),
        cmocka_unit_test_setup_teardown(filter_include, setup, teardown),
        cmocka_unit_test_setup_teardown(filter_depth_and_tid, setup, teardown),
        cmocka_unit_test_setup_teardown(filter_min_duration, setup, teardown),
        cmocka_unit_test_setup_teardown(exclude_switched_time, setup, teardown),
        cmocka_unit_test_setup_teardown(option_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(listener_tells_kept_calls, setup, teardown),
        cmocka_unit_test_setup_teardown(listener_random_traces, setup, teardown),
        cmocka_unit_test_setup_teardown(listener_stops_reading, setup, teardown),
        cmocka_unit_test_setup_teardown(lost_closes_open_calls, setup, teardown),
        cmocka_unit_test_setup_teardown(exits_before_recording, setup, teardown),
        cmocka_unit_test_setup_teardown(losses_counted, setup, teardown),
        cmocka_unit_test_setup_teardown(same_symbol_named_apart, setup, teardown),
        cmocka_unit_test_setup_teardown(cxx_names, setup, teardown),
        cmocka_unit_test(cxx_address_of),
        cmocka_unit_test_setup_teardown(indirect_recursion_arcs, setup, teardown),
        cmocka_unit_test_setup_teardown(stacks_merge_runs, setup, teardown),
        cmocka_unit_test_setup_teardown(time_never_runs_backwards, setup, teardown),
        cmocka_unit_test_setup_teardown(directory_order, setup, teardown),
        cmocka_unit_test_setup_teardown(build_id_mismatch, setup, teardown),
        cmocka_unit_test_setup_teardown(missing_path_and_empty_dir, setup, teardown),
        cmocka_unit_test_setup_teardown(unknown_version, setup, teardown),
        cmocka_unit_test_setup_teardown(not_a_trace, setup, teardown),
        cmocka_unit_test_setup_teardown(fifos_do_not_block, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_chunks, setup, teardown),
        cmocka_unit_test_setup_teardown(damaged_chunk_skipped, setup, teardown),
        cmocka_unit_test_setup_teardown(damaged_header_info_end, setup, teardown),
        cmocka_unit_test_setup_teardown(hostile_resync, setup, teardown),
        cmocka_unit_test_setup_teardown(version_1_read, setup, teardown),
        cmocka_unit_test_setup_teardown(impossible_losses, setup, teardown),
        cmocka_unit_test_setup_teardown(blocks_counts, setup, teardown),
        cmocka_unit_test_setup_teardown(samples_decode, setup, teardown),
        cmocka_unit_test_setup_teardown(samples_pcs, setup, teardown),
        cmocka_unit_test_setup_teardown(samples_profile, setup, teardown),
        cmocka_unit_test_setup_teardown(samples_timeline_in_order, setup, teardown),
        cmocka_unit_test_setup_teardown(times_every_way, setup, teardown),
        cmocka_unit_test_setup_teardown(every_cut, setup, teardown),
        cmocka_unit_test_setup_teardown(random_damage, setup, teardown),
        cmocka_unit_test(xml_text_escapes),
        cmocka_unit_test_setup_teardown(runs_match_callbacks, setup, teardown),
        cmocka_unit_test_setup_teardown(run_stops_like_callbacks, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
