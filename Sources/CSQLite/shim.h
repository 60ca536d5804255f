#ifndef REPD_CSQLITE_SHIM_H
#define REPD_CSQLITE_SHIM_H
/* The system's SQLite (libsqlite3), for repd's on-board event journal. */
#include <sqlite3.h>
#endif
