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
/** True when every file under a is identical in b and b has nothing more (no temporary file left behind). */
bool at_trees_equal(const char *a, const char *b);
/** Counts regular files under dir, recursively. */
int at_count_files(const char *dir);
/** Joins into a static-free malloc'ed path. */
char *at_join(const char *a, const char *b);
/** Removes a folder tree. */
void at_rm_rf(const char *path);

/** A log collected from callbacks (the board's threads and the client write to it). */
typedef struct at_log {
    pthread_mutex_t lock;
    char text[16384];
} at_log;
void at_log_init(at_log *l);
/** An rd_adb_log_fn appending a line to the at_log given as user. */
void at_log_cb(void *user, const char *msg);
/** True when the log holds part (under the lock). */
bool at_log_has(at_log *l, const char *part);

/** A fake board in this process serving dir/root, with our client's key folder dir/home. */
typedef struct at_board {
    char *dir;   /* the test's folder */
    char *root;  /* the board's / */
    char *home;  /* HOME of our client (its ~/.android/adbkey) */
    char *dumps; /* root/userdata/dumps */
    rd_board *board;
    char addr[64];
    at_log log; /* the board's log */
} at_board;
/**
 * Makes the folders (and at_make_dump_tree when tree), then starts the board with opt, whose
 * root and log are filled in; opt->home, when NULL, becomes dir/home, so the board accepts the key
 * our client creates there. false (reason on stderr) when it cannot start.
 */
bool at_board_start(at_board *fx, const char *tag, rd_board_options *opt, bool tree);
void at_board_stop(at_board *fx);
/** Opens fx's board over TCP as our client with HOME dir/home; log may be NULL. */
rd_status at_board_open(at_board *fx, int timeout_ms, at_log *log, rd_adb **dev, rd_error *err);

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
