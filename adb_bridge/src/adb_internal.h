/*
 * adb_internal.h: what the adb_bridge sources share: packet encoding, the two transport vtables
 * (packet transports: USB, TCP, the in-memory fake; byte streams: one service over a packet
 * connection or the adb server's socket), the connection, sync and shell layers, auth and socket
 * helpers.
 */
#ifndef RD_ADB_INTERNAL_H
#define RD_ADB_INTERNAL_H

#include "rknn_diag/adb.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- packets (packet.c) ---- */

#define ADB_HEADER_SIZE 24
#define ADB_VERSION_MIN 0x01000000u
#define ADB_VERSION 0x01000001u
#define ADB_MAX_PAYLOAD_V1 4096u
#define ADB_TOKEN_SIZE 20
#define ADB_AUTH_TOKEN 1
#define ADB_AUTH_SIGNATURE 2
#define ADB_AUTH_RSAPUBLICKEY 3

#define ADB_MKID(a, b, c, d) ((uint32_t)(a) | ((uint32_t)(b) << 8) | ((uint32_t)(c) << 16) | ((uint32_t)(d) << 24))
#define A_SYNC ADB_MKID('S', 'Y', 'N', 'C')
#define A_CNXN ADB_MKID('C', 'N', 'X', 'N')
#define A_AUTH ADB_MKID('A', 'U', 'T', 'H')
#define A_OPEN ADB_MKID('O', 'P', 'E', 'N')
#define A_OKAY ADB_MKID('O', 'K', 'A', 'Y')
#define A_WRTE ADB_MKID('W', 'R', 'T', 'E')
#define A_CLSE ADB_MKID('C', 'L', 'S', 'E')
#define A_STLS ADB_MKID('S', 'T', 'L', 'S')

#define ADB_HOST_FEATURES "shell_v2,cmd,stat_v2,ls_v2"

typedef struct adb_header {
    uint32_t command;
    uint32_t arg0;
    uint32_t arg1;
    uint32_t data_length;
    uint32_t data_check; /* byte sum of the payload; 0 from version 0x01000001 on */
    uint32_t magic;      /* command ^ 0xffffffff */
} adb_header;

uint32_t adb_checksum(const uint8_t *p, size_t n);
void adb_header_encode(const adb_header *h, uint8_t out[ADB_HEADER_SIZE]);
/** Decodes and validates a header: known command, magic, data_length <= max_payload. */
rd_status adb_header_decode(const uint8_t in[ADB_HEADER_SIZE], uint32_t max_payload, adb_header *h, rd_error *err);
/** "CNXN" etc. for messages; buf gets at least 12 bytes. */
const char *adb_command_name(uint32_t cmd, char buf[12]);

static inline uint32_t adb_get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline uint64_t adb_get_u64(const uint8_t *p)
{
    return (uint64_t)adb_get_u32(p) | ((uint64_t)adb_get_u32(p + 4) << 32);
}
static inline void adb_put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}
static inline void adb_put_u64(uint8_t *p, uint64_t v)
{
    adb_put_u32(p, (uint32_t)v);
    adb_put_u32(p + 4, (uint32_t)(v >> 32));
}

/* ---- time and sockets (net.c) ---- */

int64_t adb_now_ms(void);
/** Milliseconds left until deadline (>= 0). */
int adb_ms_left(int64_t deadline);
/** Connects a TCP socket to host:port within timeout_ms. */
rd_status adb_tcp_connect(const char *host, int port, int timeout_ms, int *out_fd, rd_error *err);
/** Splits "host:port" (port required, 1..65535). host_buf gets the host part. */
rd_status adb_split_host_port(const char *text, char *host_buf, size_t host_cap, int *port, rd_error *err);
/** Reads exactly n bytes; each wait is bounded by timeout_ms. EOF is RD_E_DEVICE "connection
 * closed". */
rd_status adb_fd_read_exact(int fd, void *buf, size_t n, int timeout_ms, const char *what, rd_error *err);
/** Reads what is available (at least 1 byte, or *got = 0 at EOF), waiting at most timeout_ms. */
rd_status adb_fd_read_some(int fd, void *buf, size_t cap, size_t *got, int timeout_ms, const char *what, rd_error *err);
rd_status adb_fd_write_all(int fd, const void *buf, size_t n, int timeout_ms, const char *what, rd_error *err);

/* ---- packet transports: USB, TCP, the fake (style.md: a vtable with a fake member) ---- */

typedef struct adb_ptransport adb_ptransport;
typedef struct adb_ptransport_ops {
    const char *name; /* "usb", "tcp", "fake" */
    /** Sends one packet: the 24-byte header, then the payload (USB: separate transfers + ZLP rule).
     */
    rd_status (*write_packet)(adb_ptransport *t, const uint8_t hdr[ADB_HEADER_SIZE], const uint8_t *payload, size_t n,
                              int timeout_ms, rd_error *err);
    /** Reads exactly n bytes (a header or a whole payload). */
    rd_status (*read_exact)(adb_ptransport *t, uint8_t *buf, size_t n, int timeout_ms, rd_error *err);
    void (*destroy)(adb_ptransport *t);
} adb_ptransport_ops;
struct adb_ptransport {
    const adb_ptransport_ops *ops;
};

rd_status adb_tcp_transport_create(const char *host_port, int timeout_ms, adb_ptransport **out, rd_error *err);
/** A transport whose reads come from a fixed byte string and whose writes are discarded (fuzzing,
 * tests). */
adb_ptransport *adb_fake_transport_create(const uint8_t *replies, size_t n);

/* ---- byte streams: one open service ---- */

typedef struct adb_stream adb_stream;
typedef struct adb_stream_ops {
    /** Reads at least 1 byte, or *got = 0 at the end of the stream. */
    rd_status (*read)(adb_stream *s, uint8_t *buf, size_t cap, size_t *got, rd_error *err);
    rd_status (*write)(adb_stream *s, const uint8_t *buf, size_t n, rd_error *err);
    void (*close)(adb_stream *s);
} adb_stream_ops;
struct adb_stream {
    const adb_stream_ops *ops;
};

/** Reads exactly n bytes; the end of the stream before that is RD_E_DEVICE naming what. */
rd_status adb_stream_read_exact(adb_stream *s, void *buf, size_t n, const char *what, rd_error *err);
/** A stream over a socket (the adb server after a transport switch); takes ownership of fd. */
adb_stream *adb_fd_stream_create(int fd, int timeout_ms);
/** A stream reading from memory, writes discarded (fuzzing the sync parser). */
adb_stream *adb_mem_stream_create(const uint8_t *data, size_t n);

/* ---- connection over a packet transport (conn.c) ---- */

typedef struct adb_keys adb_keys;

typedef struct adb_conn {
    adb_ptransport *t; /* owned */
    uint32_t version;  /* negotiated: min(ours, peer's) */
    uint32_t max_send; /* min(peer's maxdata, ours) */
    uint32_t max_recv; /* what we advertised */
    int timeout_ms;
    uint32_t next_id; /* next local stream id */
    char *banner;     /* the device's CNXN banner */
    char serial[128];
    rd_adb_log_fn log;
    void *log_user;
    uint8_t *rx; /* payload buffer of max_recv bytes */
} adb_conn;

/** Takes ownership of t (destroyed on failure too). keys may be NULL when the board asks for none.
 */
rd_status adb_conn_connect(adb_ptransport *t, const rd_adb_options *opt, int timeout_ms, adb_conn **out, rd_error *err);
void adb_conn_destroy(adb_conn *c);
rd_status adb_conn_send(adb_conn *c, uint32_t cmd, uint32_t arg0, uint32_t arg1, const uint8_t *data, size_t n,
                        rd_error *err);
/** Receives one packet; its payload is c->rx (valid until the next receive). */
rd_status adb_conn_recv(adb_conn *c, adb_header *h, rd_error *err);
/** Opens a service ("sync:", "shell,v2,raw:ls"). RD_E_UNSUPPORTED when the device refuses it. */
rd_status adb_conn_open(adb_conn *c, const char *service, adb_stream **out, rd_error *err);
/** Parses "device::ro.product.model=x;features=a,b" into features (may be empty) and a description.
 */
void adb_banner_parse(const char *banner, char *features, size_t fcap, char *desc, size_t dcap);

/* ---- auth (auth.c) ---- */

/**
 * Loads ADB_VENDOR_KEYS then <home>/.android/adbkey (home NULL: $HOME), creating the latter (0600,
 * with adbkey.pub; both or neither) when absent. Unusable vendor keys are skipped with a log line;
 * an unusable user key is skipped too when vendor keys loaded (it is then not offered), else it is
 * the error (RD_E_AUTH saying what is wrong with the file and what to do). Never prompts.
 */
rd_status adb_keys_load(const char *home, rd_adb_log_fn log, void *user, adb_keys **out, rd_error *err);
/** <home>/.android/adbkey into buf (home NULL: $HOME, else the user's home folder, as adb). */
rd_status adb_user_key_path(const char *home, char *buf, size_t cap, rd_error *err);
/** The user's public key in Android's text form, from adbkey (created with adbkey.pub when
 * absent); malloc'ed. */
rd_status adb_user_public_key(const char *home, char **out, rd_error *err);
/**
 * Reads public keys in adbd's adb_keys format (one "<base64 RSAPublicKey> comment" per line, what
 * adbkey.pub holds; blank lines and '#' comments allowed). Other lines are skipped with a log line;
 * a file with no key is RD_E_INVAL. *out: n malloc'ed base64 strings, freed by adb_pubkeys_free.
 */
rd_status adb_pubkeys_read(const char *path, rd_adb_log_fn log, void *user, char ***out, size_t *n_out, rd_error *err);
void adb_pubkeys_free(char **keys, size_t n);
/** adb_pubkeys_read's parser, on text of len bytes (name for messages). */
rd_status adb_pubkeys_parse(const char *text, size_t len, const char *name, rd_adb_log_fn log, void *user, char ***out,
                            size_t *n_out, rd_error *err);
/** Parses a PEM RSA private key (an EVP_PKEY * in *out, the caller frees it); never asks for a
 * passphrase. RD_E_AUTH saying what is wrong (empty, encrypted, not PEM, not RSA) and what to do.
 */
rd_status adb_key_parse(const char *text, size_t len, const char *name, void **out, rd_error *err);
void adb_keys_free(adb_keys *k);
size_t adb_keys_count(const adb_keys *k);
/** Signs a token with key i as adb does; sig has room for 512 bytes. */
rd_status adb_keys_sign(const adb_keys *k, size_t i, const uint8_t *token, size_t token_len, uint8_t *sig,
                        size_t *sig_len, rd_error *err);
/** The user key's public key in Android's text form ("<base64> user@host"), malloc'ed. */
rd_status adb_keys_public_text(const adb_keys *k, char **out, rd_error *err);
/** Encodes an RSA public key (an EVP_PKEY *) as Android's 524-byte RSAPublicKey struct. */
rd_status adb_pubkey_encode(const void *evp_pkey, uint8_t out[524], rd_error *err);
/** Verifies sig over token against a public key in Android's text form (the fake board). */
bool adb_pubkey_verify(const char *pub_text, const uint8_t *token, size_t token_len, const uint8_t *sig,
                       size_t sig_len);

/* ---- sync client (sync.c) ---- */

#define SYNC_STAT ADB_MKID('S', 'T', 'A', 'T')
#define SYNC_STA2 ADB_MKID('S', 'T', 'A', '2')
#define SYNC_LST2 ADB_MKID('L', 'S', 'T', '2')
#define SYNC_LIST ADB_MKID('L', 'I', 'S', 'T')
#define SYNC_LIS2 ADB_MKID('L', 'I', 'S', '2')
#define SYNC_DENT ADB_MKID('D', 'E', 'N', 'T')
#define SYNC_DNT2 ADB_MKID('D', 'N', 'T', '2')
#define SYNC_SEND ADB_MKID('S', 'E', 'N', 'D')
#define SYNC_RECV ADB_MKID('R', 'E', 'C', 'V')
#define SYNC_DONE ADB_MKID('D', 'O', 'N', 'E')
#define SYNC_DATA ADB_MKID('D', 'A', 'T', 'A')
#define SYNC_OKAY ADB_MKID('O', 'K', 'A', 'Y')
#define SYNC_FAIL ADB_MKID('F', 'A', 'I', 'L')
#define SYNC_QUIT ADB_MKID('Q', 'U', 'I', 'T')

rd_status adb_sync_request(adb_stream *s, uint32_t id, const char *path, rd_error *err);
rd_status adb_sync_stat(adb_stream *s, bool v2, const char *path, rd_adb_stat *out, rd_error *err);
typedef rd_status (*adb_dirent_fn)(void *user, const rd_adb_dirent *d, rd_error *err);
rd_status adb_sync_list(adb_stream *s, bool v2, const char *path, adb_dirent_fn fn, void *user, rd_error *err);
/** Receives a file into fd. max_size: a larger file is an error (UINT64_MAX: no bound).
 * *failed_by_board is set when the board answered FAIL (the service is then gone and must be
 * reopened). */
typedef rd_status (*adb_chunk_fn)(void *user, const uint8_t *data, size_t n, rd_error *err);
rd_status adb_sync_recv(adb_stream *s, const char *path, uint64_t max_size, adb_chunk_fn fn, void *user,
                        uint64_t *out_bytes, bool *failed_by_board, rd_error *err);
/** Sends data from fd as path with mode; mtime is sent with DONE. */
typedef rd_status (*adb_fill_fn)(void *user, uint8_t *buf, size_t cap, size_t *got, rd_error *err);
rd_status adb_sync_send(adb_stream *s, const char *path, uint32_t mode, int64_t mtime, adb_fill_fn fill, void *user,
                        rd_error *err);
rd_status adb_sync_quit(adb_stream *s, rd_error *err);

/** True when name can be joined under a local folder: not empty, ".", "..", and has no '/', '\\' or
 * NUL. Says nothing about length: whether the local file system stores the name is found out when
 * the file is created. */
bool adb_safe_name(const char *name, size_t len);
/** The last component of a '/'-separated path (trailing '/' ignored) into buf. */
const char *adb_base_name(const char *path, char *buf, size_t cap);

/* Files written on the host (pulled files, adbkey, adbkey.pub) go through rd_atomic_file
 * (rknn_diag/simulator.h); folders through rd_dir_make. */
#define ADB_LOCAL_PATH_MAX 4096
#define ADB_NAME_MAX 255 /* the longest file name Linux file systems store */

/* ---- growing byte queues (queue.c) ---- */

/**
 * Room for n more bytes at the end of the byte queue (*buf)[*off..*len) of *cap bytes: the bytes before *off
 * (consumed) are dropped when room is short, then the buffer doubles (from first) until n fit. Returns where
 * they go (*buf + *len), or NULL without memory (the queue untouched but for the dropped bytes).
 */
uint8_t *adb_queue_room(uint8_t **buf, size_t *off, size_t *len, size_t *cap, size_t n, size_t first);

/* ---- growing text (text.c) ---- */

typedef struct adb_text {
    char *buf; /* NUL-terminated once anything was added; malloc'ed */
    size_t len, cap;
    bool oom; /* an allocation failed or the text would pass its limit: nothing more is added */
} adb_text;
/** Appends n bytes, keeping the text at most limit bytes of storage. */
void adb_text_add(adb_text *t, const void *data, size_t n, size_t limit);

/* ---- the handle (device.c) ---- */

struct rd_adb {
    rd_adb_transport kind;
    adb_conn *conn;  /* USB or TCP */
    int server_port; /* server mode */
    char serial[128];
    char features[512];
    int timeout_ms;
    adb_stream *sync; /* cached sync service, NULL when closed */
    rd_adb_log_fn log;
    void *log_user;
};

bool adb_has_feature(const char *features, const char *name);
/** Opens a service on the device. */
rd_status adb_open_service(rd_adb *dev, const char *service, adb_stream **out, rd_error *err);
/** The cached sync service, opened on first use. */
rd_status adb_sync_get(rd_adb *dev, adb_stream **out, rd_error *err);
/** Closes the cached sync service (after a FAIL the board has ended it). */
void adb_sync_drop(rd_adb *dev);
void adb_logf(rd_adb_log_fn log, void *user, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/** adb_logf with the arguments in ap. */
void adb_vlogf(rd_adb_log_fn log, void *user, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));

/* ---- the adb server (transport_server.c) ---- */

int adb_server_port(const rd_adb_options *opt);
/** One host query ("host:devices-l") answered with OKAY + hex4 + text; *out malloc'ed. */
rd_status adb_server_query(int port, const char *service, int timeout_ms, char **out, rd_error *err);
/** Opens a socket switched to the device (host:transport:SERIAL or host:transport-any) and the
 * service. */
rd_status adb_server_open(int port, const char *serial, const char *service, int timeout_ms, adb_stream **out,
                          rd_error *err);

/* ---- USB (transport_usb.c) ---- */

typedef struct adb_usb_found {
    char serial[128];
    char path[64]; /* "usb:1-2.3" */
    bool busy;     /* claimed by another process (an adb server) */
} adb_usb_found;

/** Lists ADB interfaces; *out malloc'ed. libusb unavailable: 0 devices, RD_OK. */
rd_status adb_usb_list(adb_usb_found **out, size_t *n, rd_error *err);
/** Opens the device with this serial (NULL: the only one). RD_E_DEVICE + busy when claimed
 * elsewhere. */
rd_status adb_usb_transport_create(const char *serial, int timeout_ms, adb_ptransport **out, bool *busy,
                                   char *serial_out, size_t serial_cap, rd_error *err);

#endif
