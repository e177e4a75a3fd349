/* adb_test_util.h: helpers shared by the adb_bridge tests: dump-like trees, tree comparison, a
 * board. */
#ifndef RD_ADB_TEST_UTIL_H
#define RD_ADB_TEST_UTIL_H

#include "rknn_diag/adb.h"

#include <stdbool.h>
#include <pthread.h>
#include <stddef.h>

/** Writes a file of n pseudo-random bytes (seeded); false on failure. */
bool at_write_file(const char *path, size_t n, unsigned seed);
/** Creates root/userdata/dumps with files of edge-case sizes and a nested folder. */
bool at_make_dump_tree(const char *root);
/** True when every file under a is identical in b and b has nothing more (no .part left behind). */
bool at_trees_equal(const char *a, const char *b);
/** Counts regular files under dir, recursively. */
int at_count_files(const char *dir);
/** Joins into a static-free malloc'ed path. */
char *at_join(const char *a, const char *b);
/** Removes a folder tree. */
void at_rm_rf(const char *path);

/** A scripted adb server on 127.0.0.1 (a thread serving n_conns connections): host:devices,
 * host:devices-l, host-serial:board-1:features/get-state, host:transport:board-1 + "echo:", FAILs.
 */
typedef struct at_server {
    int listen_fd;
    int port;
    int n_conns;
    pthread_t th;
} at_server;
bool at_server_start(at_server *s, int n_conns);
void at_server_stop(at_server *s);

#endif
