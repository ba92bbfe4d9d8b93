/* schema.c — the tables of a run database (DESIGN.md: Store), in one place.
 *
 * STRICT tables so a wrong type is an error, not a silent conversion; JSON
 * columns are checked with json_valid. store.c creates these in one
 * transaction together with PRAGMA application_id and user_version, so a
 * database is either empty or complete. Changing anything here means bumping
 * KS_STORE_SCHEMA_VERSION (store.h) and teaching store.c to migrate.
 * evaluations.job_id (version 2) names the broker job of a distributed
 * evaluation: unique, so a result delivered twice is recorded once.
 * Node ids in candidates/evaluations are not foreign keys: world-model nodes
 * may be deleted or replaced while the evidence about them stays.
 */
#include "store/store.h"

const char ks_store_schema_sql[] =
    "CREATE TABLE runs (\n"
    "  id INTEGER PRIMARY KEY CHECK (id = 1),\n"
    "  task_name TEXT NOT NULL,\n"
    "  task_hash TEXT NOT NULL,\n"
    "  backend TEXT NOT NULL,\n"
    "  seed INTEGER NOT NULL,\n"
    "  config_json TEXT NOT NULL CHECK (json_valid(config_json)),\n"
    "  created REAL NOT NULL,\n"
    "  updated REAL NOT NULL,\n"
    "  stopped_because TEXT\n"
    ") STRICT;\n"
    "CREATE TABLE task_snapshot (\n"
    "  id INTEGER PRIMARY KEY CHECK (id = 1),\n"
    "  task_json TEXT NOT NULL,\n"
    "  reference_source TEXT NOT NULL,\n"
    "  created REAL NOT NULL\n"
    ") STRICT;\n"
    "CREATE TABLE nodes (\n"
    "  id TEXT PRIMARY KEY,\n"
    "  json TEXT NOT NULL CHECK (json_valid(json)),\n"
    "  updated REAL NOT NULL\n"
    ") STRICT;\n"
    "CREATE TABLE candidates (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  node_id TEXT,\n"
    "  source TEXT NOT NULL,\n"
    "  params_json TEXT NOT NULL CHECK (json_valid(params_json)),\n"
    "  hash TEXT NOT NULL,\n"
    "  created REAL NOT NULL,\n"
    "  UNIQUE (hash, params_json)\n"
    ") STRICT;\n"
    "CREATE TABLE builds (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  candidate_id INTEGER NOT NULL REFERENCES candidates(id),\n"
    "  ok INTEGER NOT NULL CHECK (ok IN (0, 1)),\n"
    "  seconds REAL NOT NULL,\n"
    "  log TEXT NOT NULL,\n"
    "  artifact TEXT,\n"
    "  created REAL NOT NULL\n"
    ") STRICT;\n"
    "CREATE INDEX builds_candidate ON builds(candidate_id);\n"
    "CREATE TABLE evaluations (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  candidate_id INTEGER NOT NULL REFERENCES candidates(id),\n"
    "  node_id TEXT,\n"
    "  status TEXT NOT NULL CHECK (status <> ''),\n"
    "  correct INTEGER NOT NULL DEFAULT 0 CHECK (correct IN (0, 1)),\n"
    "  score REAL,\n"
    "  result_json TEXT CHECK (result_json IS NULL OR "
    "json_valid(result_json)),\n"
    "  started REAL NOT NULL,\n"
    "  finished REAL,\n"
    "  job_id TEXT\n"
    ") STRICT;\n"
    "CREATE INDEX evaluations_candidate ON evaluations(candidate_id);\n"
    "CREATE UNIQUE INDEX evaluations_job ON evaluations(job_id);\n"
    "CREATE INDEX evaluations_status ON evaluations(status);\n"
    "CREATE TABLE measurements (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  evaluation_id INTEGER NOT NULL REFERENCES evaluations(id),\n"
    "  workload INTEGER NOT NULL CHECK (workload >= 0),\n"
    "  axes_json TEXT NOT NULL CHECK (json_valid(axes_json)),\n"
    "  time_ns_median REAL,\n"
    "  time_ns_iqr REAL,\n"
    "  gbps REAL,\n"
    "  roofline_fraction REAL,\n"
    "  speedup REAL,\n"
    "  UNIQUE (evaluation_id, workload)\n"
    ") STRICT;\n"
    "CREATE TABLE llm_calls (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  role TEXT NOT NULL,\n"
    "  model TEXT NOT NULL,\n"
    "  request_json TEXT NOT NULL CHECK (json_valid(request_json)),\n"
    "  response_text TEXT,\n"
    "  prompt_tokens INTEGER,\n"
    "  completion_tokens INTEGER,\n"
    "  latency_s REAL,\n"
    "  status TEXT NOT NULL,\n"
    "  created REAL NOT NULL\n"
    ") STRICT;\n"
    "CREATE TABLE events (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  time REAL NOT NULL,\n"
    "  kind TEXT NOT NULL,\n"
    "  json TEXT NOT NULL CHECK (json_valid(json))\n"
    ") STRICT;\n";

/* Version 1 -> 2: the job id of distributed evaluations. */
/* Turns an empty current-schema database into the version-1 form, so that
 * an unmigrated file can be checked against it (store_check.c): the
 * inverse of ks_store_migrate_v2_sql. */
const char ks_store_schema_v1_sql[] =
    "DROP INDEX evaluations_job;\n"
    "ALTER TABLE evaluations DROP COLUMN job_id;\n";

const char ks_store_migrate_v2_sql[] =
    "ALTER TABLE evaluations ADD COLUMN job_id TEXT;\n"
    "CREATE UNIQUE INDEX evaluations_job ON evaluations(job_id);\n"
    "PRAGMA user_version = 2;\n";
