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
#include <sys/types.h>

#define BOARD_MAX_STREAMS 32
#define BOARD_EVIL_MAX 4

typedef struct board_faults {
    int64_t drop_after; /* close the connection after this many bytes sent; -1: never */
    int corrupt_wrte;   /* corrupt the magic of the Nth WRTE we send; 0: never */
    int oversize_wrte;  /* replace the Nth WRTE by one larger than announced; 0: never */
    bool stall;         /* stop answering at the first RECV */
    int recv_fail;      /* FAIL the first N RECVs (over all connections) */
    bool unauthorized;  /* never accept a key */
    bool grow;          /* RECV sends 100 bytes more than the file holds */
    int n_evil;         /* extra LIST entries with these names */
    char evil[BOARD_EVIL_MAX][64];
    uint32_t max_payload; /* from tiny / max-payload:N; 0: unset */
    uint32_t version;     /* from v1; 0: unset */
} board_faults;

typedef struct board_thread {
    pthread_t th;
    bool done; /* set by the thread under the board lock */
    bool joined;
} board_thread;

struct rd_board {
    char *root;
    char *features;
    bool auth;
    int accept_delay_ms;
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
    char **trusted; /* public keys accepted so far (Android text form) */
    size_t n_trusted;
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
    int recv_fd; /* file being sent by RECV, -1 when none */
    int send_fd; /* file being written by SEND, -1 when none */
    char *send_path;
    uint32_t send_mode;
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
void board_send(bconn *c, uint32_t cmd, uint32_t arg0, uint32_t arg1, const uint8_t *data,
                size_t n);
/** Appends bytes to a stream's output; false on allocation failure (the stream is then closed). */
bool bstream_out(bstream *s, const void *data, size_t n);
/** Room for n more output bytes at the returned pointer (commit by adding to out_len); NULL: no
 * memory. */
uint8_t *bstream_reserve(bstream *s, size_t n);
void bstream_free(bstream *s);

/** Maps a board path under root; false when it has a ".." component or is too long. */
bool board_map_path(const char *root, const char *path, char *out, size_t cap);
/** Rewrites absolute paths in a shell command whose first component lives under root (or is a
 * well-known board folder) to point inside root; malloc'ed. */
char *board_map_command(const char *root, const char *cmd);

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
