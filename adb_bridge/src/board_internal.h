/*
 * board_internal.h: the fake board (board-emulate). One thread accepts TCP connections; each
 * connection runs its own thread with a poll loop over the socket, its shell pipes and the stop
 * pipe. Streams produce their output lazily (a RECV reads the next 64 KiB only when the previous
 * WRTE was OKAYed), so a 200 MB pull needs no more memory than one payload.
 */
#ifndef RD_ADB_BOARD_INTERNAL_H
#define RD_ADB_BOARD_INTERNAL_H

#include "adb_internal.h"

#include <pthread.h>
#include <sys/stat.h>
#include <sys/types.h>

#define BOARD_MAX_STREAMS 32
#define BOARD_EVIL_MAX 4

typedef struct board_faults {
    int64_t drop_after;  /* close the connection after this many bytes sent; -1: never */
    int corrupt_wrte;    /* corrupt the magic of the Nth WRTE we send; 0: never */
    int oversize_wrte;   /* replace the Nth WRTE by one larger than announced; 0: never */
    bool stall;          /* stop answering at the first RECV */
    int recv_fail;       /* FAIL the first N RECVs (over all connections) */
    bool unauthorized;   /* never accept a key */
    bool grow;           /* RECV sends 100 bytes more than the file holds */
    int64_t short_after; /* RECV sends at most this many bytes of a file, then DONE; -1: all */
    bool zero_size;      /* listings and stats announce 0 bytes for every file */
    bool no_inode;       /* stat_v2 and ls_v2 answers carry device and inode 0 */
    int slow_list_ms;    /* each folder listing waits this long first */
    int n_evil;          /* extra LIST entries with these names (a RECV of one gives "evil\n") */
    char evil[BOARD_EVIL_MAX][RD_ADB_PATH_MAX + 1];
    uint32_t max_payload; /* from tiny / max-payload:N; 0: unset */
    uint32_t version;     /* from v1; 0: unset */
} board_faults;

/* How shell commands are confined (board_sandbox.c); fixed at start. */
typedef struct board_sandbox {
    bool drop; /* started as root: commands run as uid/gid */
    uid_t uid;
    gid_t gid;
    bool adopt;       /* uid is a throwaway id: the tree's root-owned entries were handed to it */
    bool read_search; /* commands keep CAP_DAC_READ_SEARCH (the folder is out of uid's reach) */
    bool mount_ns;    /* everything but the served folder is read-only for commands */
    bool user_ns;     /* the mount namespace needs a user namespace (not root) */
    char uid_map[32], gid_map[32];
    char probe_outside[4096]; /* a file the probe must not be able to write in the namespace */
    char note[640];           /* what the confinement is, for the start log */
} board_sandbox;

typedef struct board_thread {
    pthread_t th;
    bool done; /* set by the thread under the board lock */
    bool joined;
} board_thread;

struct rd_board {
    char *root;
    int root_fd;  /* O_PATH of root; board paths resolve beneath it (board_fs.c) */
    bool in_root; /* openat2(RESOLVE_IN_ROOT) works here; else links are not followed */
    board_sandbox sandbox;
    char *features;
    bool auth;
    int accept_new_keys_ms; /* > 0: an offered key is accepted after this long; 0: never */
    uint32_t version, max_payload;
    board_faults faults;
    rd_adb_log_fn log;
    void *log_user;
    int listen_fd;
    int port;
    int stop_pipe[2];
    pthread_t accept_th;
    pthread_mutex_t lock; /* guards threads, trusted, recv_failed */
    board_thread *threads;
    size_t n_threads, cap_threads;
    char **trusted; /* public keys accepted (base64 of Android's RSAPublicKey) */
    size_t n_trusted;
    char bind_text[80]; /* "127.0.0.1:PORT" or "[::1]:PORT" */
    bool loopback;      /* bound to a loopback address */
    int recv_failed;
};

enum { BS_SYNC = 1, BS_SHELL };

typedef struct bstream {
    uint32_t lid, rid;
    int kind;
    bool awaiting_okay;
    bool closing; /* send CLSE once the output is drained */
    uint8_t *out;
    size_t out_len, out_off, out_cap;
    /* sync */
    uint8_t *in;
    size_t in_len, in_cap;
    int recv_fd;        /* file being sent by RECV, -1 when none */
    uint64_t recv_sent; /* its bytes sent so far */
    int send_fd;        /* file being written by SEND, -1 when none */
    /* shell */
    pid_t pid;
    int out_fd, err_fd;
    bool v2;
    bool exited;
} bstream;

typedef struct bconn {
    rd_board *b;
    int fd;
    uint32_t version, max_send, own_max;
    bool online;
    bool dead;
    bool stalled;
    uint64_t bytes_sent;
    int wrte_count;
    uint8_t token[ADB_TOKEN_SIZE];
    char *offered_key;
    int64_t accept_at; /* 0: no key waiting */
    uint8_t *rx;
    bstream *streams[BOARD_MAX_STREAMS];
    uint32_t next_id;
    char peer[64];
} bconn;

void board_log(const rd_board *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** Sends one packet with the board's faults applied; marks the connection dead on failure. */
void board_send(bconn *c, uint32_t cmd, uint32_t arg0, uint32_t arg1, const uint8_t *data, size_t n);
/** Appends bytes to a stream's output; false on allocation failure (the stream is then closed). */
bool bstream_out(bstream *s, const void *data, size_t n);
/** Room for n more output bytes at the returned pointer (commit by adding to out_len); NULL: no
 * memory. */
uint8_t *bstream_reserve(bstream *s, size_t n);
void bstream_free(bstream *s);

/** Rewrites the board paths of a shell command to paths inside root (board_paths.c, docs/adb.md:
 * which words are board paths); malloc'ed, NULL when out of memory. */
char *board_map_command(const char *root, const char *cmd);

/* the file system the sync service sees (board_fs.c) */
bool board_fs_init(rd_board *b, rd_error *err);
/** Opens a board path beneath the root (links and ".." never leave it); -1 with errno. */
int board_fs_open(const rd_board *b, const char *path, int flags, unsigned mode);
int board_fs_stat(const rd_board *b, const char *path, bool follow, struct stat *st);
/** Creates (truncates) a file for SEND, making its folders; handed to the shell's user. */
int board_fs_create(const rd_board *b, const char *path, unsigned mode);

/* confinement of shell commands (board_sandbox.c) */
/** Decides and probes the confinement; as root, hands the served tree to the shell's user. */
rd_status board_sandbox_init(board_sandbox *sb, const char *root, rd_error *err);
/** In a child between fork and exec (system calls only): 0, or the errno of what failed. */
int board_sandbox_enter(const board_sandbox *sb, const char *root);
/** Hands a file the board (as root) created to the shell's user. */
void board_sandbox_adopt(const board_sandbox *sb, int fd);
void board_sandbox_adopt_at(const board_sandbox *sb, int dir, const char *name);

/* connection threads (board_conn.c runs them, board.c starts and joins them) */
void *board_conn_main(void *arg);
/** Called by a connection thread as it ends, so the accept thread can join it. */
void board_thread_done(rd_board *b, pthread_t self);

/* sync (board_sync.c) */
void board_sync_feed(bconn *c, bstream *s, const uint8_t *data, size_t n);
/** Produces more output for a RECV in progress, and handles queued requests after it. */
void board_sync_produce(bconn *c, bstream *s);

/* shell (board_shell.c) */
bool board_shell_start(bconn *c, bstream *s, const char *cmd, bool v2);
/** Reads available shell output; reaps the child when its pipes are closed. */
void board_shell_poll(bconn *c, bstream *s, bool out_ready, bool err_ready);
void board_shell_kill(bstream *s);

#endif
