/*
 * rknn_diag/adb.h: talking to Rockchip boards over ADB without Android's tools.
 *
 * One packet layer over three transports (USB with libusb, TCP host:port, the adb server's smart
 * sockets), RSA authentication with ~/.android/adbkey, the sync service (stat, list, pull, push)
 * and the shell service with exit status; plus the fake board (an ADB device over TCP serving a
 * local folder).
 *
 *     rd_error err;
 *     rd_adb *dev = NULL;
 *     rd_adb_options opt = { .transport = RD_ADB_AUTO, .timeout_ms = 10000 };
 *     if (rd_adb_open(&opt, &dev, &err) != RD_OK) { puts(err.msg); return 3; }
 *     rd_adb_pull(dev, "/userdata/dumps", "out", NULL, NULL, &err);
 *     int code; rd_adb_shell(dev, "ls /userdata", NULL, NULL, &code, &err);
 *     rd_adb_close(dev);
 *
 * Conventions are the simulator's (rknn_diag/simulator.h): functions return rd_status and fill the
 * rd_error given last (may be NULL); nothing prints; every wait is bounded by the timeout; no
 * private key material ever appears in a message. Handles are not thread-safe: use one per thread.
 */
#ifndef RKNN_DIAG_ADB_H
#define RKNN_DIAG_ADB_H

#include "rknn_diag/simulator.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------------
 * Limits and protocol constants
 */

#define RD_ADB_MAX_PAYLOAD (1024u * 1024u) /* what we advertise and accept per packet */
#define RD_ADB_SYNC_DATA_MAX (64u * 1024u) /* largest sync DATA chunk */
#define RD_ADB_PATH_MAX 1024u              /* longest remote path the sync service accepts */
#define RD_ADB_DEFAULT_TIMEOUT_MS 10000
#define RD_ADB_DEFAULT_SERVER_PORT 5037
#define RD_ADB_DEFAULT_DUMP_DIR "/userdata/dumps"

/* ---------------------------------------------------------------------------------------------------
 * Opening a board
 */

typedef enum rd_adb_transport {
    RD_ADB_AUTO = 0, /* --connect if given, else USB, else the adb server (also when USB is busy) */
    RD_ADB_USB,      /* libusb: interface class 0xff/0x42/0x01 */
    RD_ADB_TCP,      /* host:port, like `adb connect` */
    RD_ADB_SERVER,   /* the adb server's smart sockets on 127.0.0.1:server_port */
} rd_adb_transport;

/** Log callback: progress notes such as "accept the key on the board". msg has no newline. */
typedef void (*rd_adb_log_fn)(void *user, const char *msg);

typedef struct rd_adb_options {
    rd_adb_transport transport;
    const char *serial;  /* device to pick; NULL: ANDROID_SERIAL, else the only device */
    const char *connect; /* "host:port" for RD_ADB_TCP (and AUTO: used when set) */
    int server_port;     /* 0: ANDROID_ADB_SERVER_PORT, else 5037 */
    int timeout_ms;      /* bound on every wait; 0: RD_ADB_DEFAULT_TIMEOUT_MS */
    const char *home;    /* folder holding .android/adbkey; NULL: $HOME */
    rd_adb_log_fn log;   /* may be NULL */
    void *log_user;
} rd_adb_options;

typedef struct rd_adb rd_adb;

/**
 * Connects to a board. On success *out is a handle the caller closes with rd_adb_close.
 * RD_E_NOTFOUND: no device; RD_E_AUTH: the board did not accept our key in time; RD_E_TIMEOUT;
 * RD_E_DEVICE: protocol violation; RD_E_INVAL: bad options (several devices and no serial, ...).
 */
rd_status rd_adb_open(const rd_adb_options *opt, rd_adb **out, rd_error *err);

/** Closes the connection and frees the handle. NULL is allowed. */
void rd_adb_close(rd_adb *dev);

/** How the handle is connected: "usb", "tcp" or "server", and the device serial (owned by dev). */
const char *rd_adb_transport_name(const rd_adb *dev);
const char *rd_adb_serial(const rd_adb *dev);

/** The device's feature list ("shell_v2,cmd,stat_v2,ls_v2"), owned by dev; "" if unknown. */
const char *rd_adb_features(const rd_adb *dev);

/* ---------------------------------------------------------------------------------------------------
 * Devices
 */

typedef struct rd_adb_device_info {
    char serial[128];      /* "0123456789ABCDEF", "127.0.0.1:5555", "usb:1-2" */
    char state[32];        /* "device", "unauthorized", "offline", "busy" (USB claimed by a server) */
    char transport[16];    /* "usb", "tcp", "server" */
    char description[256]; /* product/model details when known */
} rd_adb_device_info;

/**
 * Lists boards on every transport: USB (libusb), the adb server (if one is running) and
 * opt->connect if set. *out is malloc'ed (caller frees), *n_out its count. A transport that is
 * unavailable (no server running) contributes nothing; only allocation failure is an error.
 */
rd_status rd_adb_devices(const rd_adb_options *opt, rd_adb_device_info **out, size_t *n_out, rd_error *err);

/* ---------------------------------------------------------------------------------------------------
 * Files (the sync service)
 */

typedef struct rd_adb_stat {
    bool exists;
    uint32_t mode; /* st_mode bits as the board reports them (S_IFDIR, S_IFREG, permissions) */
    uint64_t size; /* bytes; truncated to 32 bits by boards without stat_v2 */
    int64_t mtime; /* seconds since the epoch */
    uint64_t dev;  /* device and inode on the board (stat_v2 only; both 0 when unknown) */
    uint64_t ino;
} rd_adb_stat;

typedef struct rd_adb_dirent {
    char *name; /* malloc'ed, never "." or ".." */
    uint32_t mode;
    uint64_t size;
    int64_t mtime;
    uint64_t dev; /* of the entry itself (lstat), ls_v2 only; both 0 when unknown */
    uint64_t ino;
} rd_adb_dirent;

/** Stats a remote path (follows symlinks where the board supports stat_v2). Missing: exists false,
 * RD_OK. */
rd_status rd_adb_stat_path(rd_adb *dev, const char *path, rd_adb_stat *out, rd_error *err);

/**
 * Lists a remote folder (without "." and ".."). *out is a malloc'ed array of n entries; free it
 * with rd_adb_dirents_free. Names the board sends that contain '/' or are empty stay in the list:
 * callers that build local paths must check them (rd_adb_pull does).
 */
rd_status rd_adb_list(rd_adb *dev, const char *path, rd_adb_dirent **out, size_t *n, rd_error *err);
void rd_adb_dirents_free(rd_adb_dirent *list, size_t n);

/** Progress: the file being copied, its bytes done and total, and bytes done over the whole copy.
 */
typedef struct rd_adb_progress {
    const char *path; /* remote path of the current file */
    uint64_t file_done;
    uint64_t file_total;
    uint64_t all_done;
    uint64_t all_total; /* 0 when unknown */
    unsigned files_done;
    unsigned files_total;
    bool file_finished; /* this call reports the end of a file */
} rd_adb_progress;
typedef void (*rd_adb_progress_fn)(void *user, const rd_adb_progress *p);

/**
 * Copies a remote file or folder (recursively) to local, placed as `adb pull` places it: when local
 * is an existing folder the copy lands in local/<basename of remote>, else at local itself.
 *
 * - Each file is received into a temporary file with a short unique name in its folder and renamed
 *   to its name only when exactly the announced number of bytes arrived (a board sending fewer or
 *   more is an error, and nothing is kept under the file's name). Boards without stat_v2 announce
 *   32-bit sizes: their files are held to that size too, and a file whose size is unknown (a link
 *   followed on such a board) to at most 4 GiB.
 * - Names the board lists with '/', "..", NUL or empty are refused (RD_E_DEVICE), so nothing is
 *   written outside the destination.
 * - The listing follows links to folders as adb does, but visits each folder once (device and inode
 *   from stat_v2/ls_v2): a link back to a folder already visited is skipped with a log line. Depth
 *   (64), entries (1,000,000) and the time of the whole listing (the handle's timeout) are bounded.
 * - A file that cannot be stored under its name here (longer than 255 bytes, refused by the local
 *   file system) or that arrives short fails alone: it is logged, the other files are still pulled,
 *   and the call then returns the first such failure with the count. Transport and protocol errors
 *   stop the pull at once.
 * - A RECV the board FAILs is retried once on a fresh sync service. A missing remote dump folder
 *   gets the usual fix in the message.
 */
rd_status rd_adb_pull(rd_adb *dev, const char *remote, const char *local, rd_adb_progress_fn progress, void *user,
                      rd_error *err);

/**
 * Copies a local file or folder to remote, placed as `adb push` does: when remote is an existing
 * folder the copy lands in remote/<basename of local>.
 */
rd_status rd_adb_push(rd_adb *dev, const char *local, const char *remote, rd_adb_progress_fn progress, void *user,
                      rd_error *err);

/* ---------------------------------------------------------------------------------------------------
 * Shell
 */

/** Output callback: stream 1 stdout, 2 stderr; data is not NUL-terminated. */
typedef void (*rd_adb_output_fn)(void *user, int stream, const char *data, size_t n);

/**
 * Runs cmd with `sh -c` on the board. Output goes to out_fn (NULL: discarded). *exit_code receives
 * the command's exit status when the board has shell_v2, else 0 (the old protocol has none;
 * *exit_known false then). exit_known may be NULL.
 */
rd_status rd_adb_shell(rd_adb *dev, const char *cmd, rd_adb_output_fn out_fn, void *user, int *exit_code,
                       rd_error *err);
rd_status rd_adb_shell_ex(rd_adb *dev, const char *cmd, rd_adb_output_fn out_fn, void *user, int *exit_code,
                          bool *exit_known, rd_error *err);

/** Convenience: runs cmd and captures stdout and stderr together in a malloc'ed NUL-terminated
 * string. */
rd_status rd_adb_shell_capture(rd_adb *dev, const char *cmd, char **out_text, size_t *out_len, int *exit_code,
                               rd_error *err);

/* ---------------------------------------------------------------------------------------------------
 * The fake board: an ADB device over TCP serving a local folder as the board's file system.
 *
 * Safe by default (docs/board.md, "Security"): it listens on 127.0.0.1, accepts only hosts that
 * sign with a key it was given (default: this user's ~/.android/adbkey.pub, as a real adbd's
 * adb_keys), resolves the sync service's paths inside the folder (links and ".." never leave it),
 * and runs shell commands never as root, without new privileges and, where the system allows, with
 * the folder as the only writable place.
 */

typedef struct rd_board_options {
    int port;               /* TCP port; 0 picks a free one (see rd_board_port) */
    const char *bind;       /* IPv4 or IPv6 address to listen on; NULL: "127.0.0.1" */
    const char *root;       /* the board's "/" (remote /userdata/dumps is root/userdata/dumps) */
    bool no_auth;           /* accept every host without a key: anyone who reaches the port runs
                               shell commands (logged as a warning) */
    const char *adb_keys;   /* public keys accepted, one per line as in adbkey.pub (adbd's adb_keys
                               format); NULL: <home>/.android/adbkey.pub, created with the key pair
                               when absent */
    const char *home;       /* for the default key; NULL: $HOME */
    int accept_new_keys_ms; /* > 0: a public key a host offers is "accepted by the user" after this
                               long (tests of the prompt flow; lets anyone in); 0: never */
    uint32_t version;       /* protocol version announced; 0: 0x01000001 */
    uint32_t max_payload;   /* max payload announced; 0: 1 MiB */
    const char *features;   /* NULL: "shell_v2,cmd,stat_v2,ls_v2" */
    const char *faults;     /* comma-separated, see rd_board_fault_help(); NULL or "" for none */
    rd_adb_log_fn log;      /* connection log, warnings and how commands are confined; may be NULL */
    void *log_user;
} rd_board_options;

typedef struct rd_board rd_board;

/** One line per fault the board can inject, for --help. */
const char *rd_board_fault_help(void);

/** Checks a fault list without starting anything (RD_E_INVAL with the bad item named). */
rd_status rd_board_faults_check(const char *faults, rd_error *err);

/**
 * Starts the board in a background thread; it listens before this returns. Started as root, it
 * hands the served folder's root-owned entries to the id its commands run as (see docs/board.md).
 * RD_E_INVAL: bad options or a keys file without a key; RD_E_IO: cannot listen, or commands could
 * not run confined; RD_E_AUTH: the default key is unusable (the message says what to do).
 */
rd_status rd_board_start(const rd_board_options *opt, rd_board **out, rd_error *err);

/** The port the board listens on. */
int rd_board_port(const rd_board *b);

/** "ADDRESS:PORT" the board listens on ("[::1]:PORT" for IPv6), owned by b. */
const char *rd_board_address(const rd_board *b);

/** Stops listening, closes every connection, ends running shell commands, joins threads and frees.
 */
void rd_board_stop(rd_board *b);

#ifdef __cplusplus
}
#endif

#endif
