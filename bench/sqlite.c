/* sqlite.c - a real program nobody here wrote: SQLite (the amalgamation,
 * fetched by bench/fetch_sources.sh and built by bench/sqlite.sh the way
 * CMake builds fib.c and wordfreq.c, one variant per kind of hooks).
 *
 * Each run opens an in-memory database, inserts 2000 rows in one
 * transaction through a prepared statement, builds an index, runs 40
 * range queries with LIKE over it, and closes the database. Only
 * SQLite's own code is instrumented (this file is not), so the hooks see
 * its calls: about 1.4 million per run, from some 600 functions of every
 * size. sqlite3_initialize runs in the set-up, so that every run makes the
 * same calls. */
#define WORK_NAME "sqlite"
#include "harness.h"
#include "sqlite3.h"

#define ROWS 2000
#define QUERIES 40

BENCH_NOPROF static void work_setup(void)
{
    if (sqlite3_initialize() != SQLITE_OK)
        exit(1);
}

BENCH_NOPROF static void check(int rc, sqlite3 *db)
{
    if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
        fprintf(stderr, "sqlite: %s\n", db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
        exit(1);
    }
}

BENCH_NOPROF static uint64_t work_run(void)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    uint64_t sum = 0;
    check(sqlite3_open(":memory:", &db), NULL);
    check(sqlite3_exec(db, "CREATE TABLE t(k INTEGER PRIMARY KEY, name TEXT, v INTEGER)", 0, 0, 0), db);
    check(sqlite3_exec(db, "BEGIN", 0, 0, 0), db);
    check(sqlite3_prepare_v2(db, "INSERT INTO t(name, v) VALUES (?1, ?2)", -1, &st, 0), db);
    unsigned seed = 12345;
    for (int i = 0; i < ROWS; i++) {
        char name[32];
        seed = seed * 1103515245u + 12345u;
        snprintf(name, sizeof name, "n%08x", seed);
        sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int(st, 2, (int)((seed >> 8) % 1000));
        check(sqlite3_step(st), db);
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    check(sqlite3_exec(db, "COMMIT", 0, 0, 0), db);
    check(sqlite3_exec(db, "CREATE INDEX tv ON t(v)", 0, 0, 0), db);
    check(sqlite3_prepare_v2(db, "SELECT count(*), sum(v) FROM t WHERE v BETWEEN ?1 AND ?2 AND name LIKE 'n1%'",
                             -1, &st, 0), db);
    for (int q = 0; q < QUERIES; q++) {
        sqlite3_bind_int(st, 1, q * 25);
        sqlite3_bind_int(st, 2, q * 25 + 50);
        while (sqlite3_step(st) == SQLITE_ROW)
            sum = sum * 31 + (uint64_t)sqlite3_column_int(st, 0) + (uint64_t)sqlite3_column_int64(st, 1);
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    check(sqlite3_close(db), NULL);
    return sum;
}
