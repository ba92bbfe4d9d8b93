/* store_fixture.h — what the store tests share (test_store.c,
 * test_store_refuse.c, test_store_query.c): a temporary run folder and
 * helpers that assert each store call succeeds. */
#ifndef KS_TEST_STORE_FIXTURE_H
#define KS_TEST_STORE_FIXTURE_H

#include "store/store.h"

typedef struct fixture {
  char dir[512];
  char db[600];
} fixture;

/* A fresh folder under $TMPDIR (else /tmp) and its ksearch.db path. */
void fx_init(fixture *f);
/* Removes the database, its WAL, shm and lock files, and the folder. */
void fx_done(fixture *f);
/* Opens for writing; asserts success. */
ks_store *open_ok(const char *db, bool create);
/* Adds a candidate of node "n1"; returns its id. */
int64_t add_cand(ks_store *s, const char *hash, const char *params,
                 const char *source);
/* Begins and finishes an evaluation of cand; returns its id. */
int64_t add_eval(ks_store *s, int64_t cand, const char *status, bool correct,
                 double score);
/* The integer the query's first row starts with; asserts there is one. */
int64_t query_int(sqlite3 *db, const char *sql);

#endif
