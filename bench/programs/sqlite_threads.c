/* sqlite_threads.c - SQLite (the amalgamation, fetched by
 * bench/fetch_sources.sh) in T threads at once, each with a database of
 * its own: a table of R rows inserted in one transaction, an index, and
 * queries over it. What `make bench` records to count lost calls
 * (bench/record_loss.sh). Prints "sqlite T threads: checksum C". */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include "sqlite3.h"

static int rows = 20000;

static void check(int rc, sqlite3 *db, const char *what)
{
    if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
        fprintf(stderr, "sqlite_threads: %s: %s\n", what, sqlite3_errmsg(db));
        exit(1);
    }
}

static void *work(void *arg)
{
    long id = (long)arg;
    sqlite3 *db;
    sqlite3_stmt *st;
    check(sqlite3_open(":memory:", &db), NULL, "open");
    check(sqlite3_exec(db, "CREATE TABLE t(k INTEGER PRIMARY KEY, name TEXT, v INTEGER)", 0, 0, 0), db, "create");
    check(sqlite3_exec(db, "BEGIN", 0, 0, 0), db, "begin");
    check(sqlite3_prepare_v2(db, "INSERT INTO t(name, v) VALUES (?1, ?2)", -1, &st, 0), db, "prepare");
    unsigned seed = (unsigned)id * 2654435761u + 1;
    for (int i = 0; i < rows; i++) {
        char name[32];
        seed = seed * 1103515245u + 12345u;
        snprintf(name, sizeof name, "n%08x", seed);
        sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int(st, 2, (int)(seed >> 8) % 1000);
        check(sqlite3_step(st), db, "insert");
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    check(sqlite3_exec(db, "COMMIT", 0, 0, 0), db, "commit");
    check(sqlite3_exec(db, "CREATE INDEX tv ON t(v)", 0, 0, 0), db, "index");
    long sum = 0;
    check(sqlite3_prepare_v2(db, "SELECT count(*), sum(v) FROM t WHERE v BETWEEN ?1 AND ?2 AND name LIKE 'n1%'",
                             -1, &st, 0), db, "prepare");
    for (int q = 0; q < 200; q++) {
        sqlite3_bind_int(st, 1, q * 5);
        sqlite3_bind_int(st, 2, q * 5 + 50);
        while (sqlite3_step(st) == SQLITE_ROW)
            sum += sqlite3_column_int(st, 0) + sqlite3_column_int64(st, 1);
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return (void *)sum;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 4;
    if (argc > 2)
        rows = atoi(argv[2]);
    if (n < 1 || n > 64 || rows < 1)
        return 2;
    pthread_t th[64];
    long total = 0;
    for (long i = 0; i < n; i++)
        pthread_create(&th[i], NULL, work, (void *)i);
    for (int i = 0; i < n; i++) {
        void *r;
        pthread_join(th[i], &r);
        total += (long)r;
    }
    printf("sqlite %d threads: checksum %ld\n", n, total);
    return 0;
}
