/*
 * board.c: the fake board's life cycle: options and faults, the keys it accepts, the listening
 * socket (127.0.0.1 unless told), the accept thread and connection threads.
 */
#include "board_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

const char *rd_board_fault_help(void)
{
    return "  drop:N          close the connection after N bytes sent\n"
           "  corrupt[:N]     corrupt the header of the Nth data packet (default 2)\n"
           "  oversize[:N]    make the Nth data packet larger than announced (default 2)\n"
           "  stall           stop answering at the first file read (RECV)\n"
           "  recv-fail[:N]   answer FAIL to the first N file reads (default 1)\n"
           "  tiny            announce a maximum payload of 256 bytes\n"
           "  max-payload:N   announce a maximum payload of N bytes\n"
           "  unauthorized    require a key and never accept one\n"
           "  v1              speak protocol version 0x01000000 (checksums on every packet)\n"
           "  evil-name:NAME  add an entry NAME to every folder listing (e.g. ../../x, a/b, /abs)\n"
           "  grow            send 100 bytes more than each file holds\n"
           "  short[:N]       send only the first N bytes of each file (default 1000)\n"
           "  zero-size       announce 0 bytes for every file (as a broken old board)\n"
           "  no-inode        leave device and inode out of stat_v2/ls_v2 answers\n"
           "  long-name:N     add an entry with an N-byte name (1..1024) to every listing\n"
           "  slow-list:MS    wait MS ms (1..10000) before answering each folder listing\n";
}

static bool parse_num(const char *s, size_t len, long min, long max, long *out)
{
    if (len == 0 || len > 18)
        return false;
    long v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (s[i] - '0');
    }
    if (v < min || v > max)
        return false;
    *out = v;
    return true;
}

static rd_status parse_faults(const char *text, board_faults *f, rd_error *err)
{
    memset(f, 0, sizeof *f);
    f->drop_after = -1;
    f->short_after = -1;
    const char *p = text ? text : "";
    while (*p) {
        size_t len = strcspn(p, ",");
        const char *colon = memchr(p, ':', len);
        size_t nl = colon ? (size_t)(colon - p) : len;
        const char *arg = colon ? colon + 1 : NULL;
        size_t al = colon ? len - nl - 1 : 0;
        long v = 0;
#define IS(name) (nl == strlen(name) && strncmp(p, name, nl) == 0)
        if (IS("drop") && arg && parse_num(arg, al, 0, 1L << 40, &v))
            f->drop_after = v;
        else if (IS("corrupt") && (!arg || parse_num(arg, al, 1, 1000000, &v)))
            f->corrupt_wrte = arg ? (int)v : 2;
        else if (IS("oversize") && (!arg || parse_num(arg, al, 1, 1000000, &v)))
            f->oversize_wrte = arg ? (int)v : 2;
        else if (IS("stall") && !arg)
            f->stall = true;
        else if (IS("recv-fail") && (!arg || parse_num(arg, al, 1, 1000000, &v)))
            f->recv_fail = arg ? (int)v : 1;
        else if (IS("tiny") && !arg)
            f->max_payload = 256;
        else if (IS("max-payload") && arg && parse_num(arg, al, 256, RD_ADB_MAX_PAYLOAD, &v))
            f->max_payload = (uint32_t)v;
        else if (IS("unauthorized") && !arg)
            f->unauthorized = true;
        else if (IS("v1") && !arg)
            f->version = ADB_VERSION_MIN;
        else if (IS("grow") && !arg)
            f->grow = true;
        else if (IS("short") && (!arg || parse_num(arg, al, 0, 1L << 40, &v)))
            f->short_after = arg ? v : 1000;
        else if (IS("zero-size") && !arg)
            f->zero_size = true;
        else if (IS("no-inode") && !arg)
            f->no_inode = true;
        else if (IS("slow-list") && arg && parse_num(arg, al, 1, 10000, &v))
            f->slow_list_ms = (int)v;
        else if (IS("evil-name") && arg && al > 0 && al < sizeof f->evil[0] && f->n_evil < BOARD_EVIL_MAX) {
            memcpy(f->evil[f->n_evil], arg, al);
            f->evil[f->n_evil++][al] = '\0';
        } else if (IS("long-name") && arg && parse_num(arg, al, 1, RD_ADB_PATH_MAX, &v) && f->n_evil < BOARD_EVIL_MAX) {
            memset(f->evil[f->n_evil], 'L', (size_t)v);
            f->evil[f->n_evil++][v] = '\0';
        } else
            return rd_errorf(err, RD_E_USAGE, "unknown or malformed fault '%.*s'; known faults:\n%s", (int)len, p,
                             rd_board_fault_help());
#undef IS
        p += len;
        if (*p == ',')
            p++;
    }
    return RD_OK;
}

rd_status rd_board_faults_check(const char *faults, rd_error *err)
{
    board_faults f;
    return parse_faults(faults, &f, err);
}

void board_log(const rd_board *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    adb_vlogf(b->log, b->log_user, fmt, ap);
    va_end(ap);
}

static void reap_threads(rd_board *b, bool all)
{
    pthread_mutex_lock(&b->lock);
    for (size_t i = 0; i < b->n_threads; i++) {
        board_thread *t = &b->threads[i];
        if (t->joined || (!all && !t->done))
            continue;
        pthread_mutex_unlock(&b->lock);
        pthread_join(t->th, NULL);
        pthread_mutex_lock(&b->lock);
        t->joined = true;
    }
    /* compact */
    size_t k = 0;
    for (size_t i = 0; i < b->n_threads; i++)
        if (!b->threads[i].joined)
            b->threads[k++] = b->threads[i];
    b->n_threads = k;
    pthread_mutex_unlock(&b->lock);
}

void board_thread_done(rd_board *b, pthread_t self)
{
    pthread_mutex_lock(&b->lock);
    for (size_t i = 0; i < b->n_threads; i++)
        if (pthread_equal(b->threads[i].th, self))
            b->threads[i].done = true;
    pthread_mutex_unlock(&b->lock);
}

static void *accept_main(void *arg)
{
    rd_board *b = arg;
    for (;;) {
        struct pollfd pf[2] = {{.fd = b->listen_fd, .events = POLLIN}, {.fd = b->stop_pipe[0], .events = POLLIN}};
        int pr = poll(pf, 2, 1000);
        if (pr < 0 && errno != EINTR)
            break;
        if (pf[1].revents)
            break;
        reap_threads(b, false);
        if (pr <= 0 || !(pf[0].revents & POLLIN))
            continue;
        int fd = accept4(b->listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        bconn *c = calloc(1, sizeof *c);
        if (!c) {
            close(fd);
            continue;
        }
        c->b = b;
        c->fd = fd;
        pthread_mutex_lock(&b->lock);
        if (b->n_threads == b->cap_threads) {
            size_t cap = b->cap_threads ? b->cap_threads * 2 : 8;
            board_thread *nt = realloc(b->threads, cap * sizeof *nt);
            if (!nt) {
                pthread_mutex_unlock(&b->lock);
                close(fd);
                free(c);
                continue;
            }
            b->threads = nt;
            b->cap_threads = cap;
        }
        board_thread *t = &b->threads[b->n_threads];
        memset(t, 0, sizeof *t);
        if (pthread_create(&t->th, NULL, board_conn_main, c) != 0) {
            pthread_mutex_unlock(&b->lock);
            close(fd);
            free(c);
            continue;
        }
        b->n_threads++;
        pthread_mutex_unlock(&b->lock);
    }
    return NULL;
}

static void board_free(rd_board *b)
{
    if (!b)
        return;
    if (b->listen_fd >= 0)
        close(b->listen_fd);
    if (b->stop_pipe[0] >= 0)
        close(b->stop_pipe[0]);
    if (b->stop_pipe[1] >= 0)
        close(b->stop_pipe[1]);
    if (b->root_fd >= 0)
        close(b->root_fd);
    adb_pubkeys_free(b->trusted, b->n_trusted);
    free(b->threads);
    free(b->root);
    free(b->features);
    pthread_mutex_destroy(&b->lock);
    free(b);
}

/* The keys the board accepts: the given file, or the user's own adbkey.pub (as adbd's adb_keys),
 * made with the key pair when there is none. */
static rd_status load_trusted(rd_board *b, const rd_board_options *opt, rd_error *err)
{
    char path[4200];
    if (opt->adb_keys)
        return adb_pubkeys_read(opt->adb_keys, b->log, b->log_user, &b->trusted, &b->n_trusted, err);
    rd_status st = adb_user_key_path(opt->home, path, sizeof path - 4, err);
    if (st != RD_OK)
        return rd_error_prefix(err, "the board's default key (give --adb-keys FILE)");
    bool have_key = access(path, F_OK) == 0; /* a .pub without its key is left from a failure */
    strcat(path, ".pub");
    if (have_key && access(path, F_OK) == 0)
        return adb_pubkeys_read(path, b->log, b->log_user, &b->trusted, &b->n_trusted, err);
    char *pub = NULL;
    st = adb_user_public_key(opt->home, &pub, err);
    if (st != RD_OK)
        return rd_error_prefix(err, "the board's default key (give --adb-keys FILE)");
    b->trusted = malloc(sizeof *b->trusted);
    char *k = b->trusted ? strndup(pub, strcspn(pub, " ")) : NULL;
    free(pub);
    if (!k)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    b->trusted[b->n_trusted++] = k;
    return RD_OK;
}

/* Binds the listening socket to addr (an IPv4 or IPv6 literal) and port. */
static rd_status listen_on(rd_board *b, const char *addr, int port, rd_error *err)
{
    struct sockaddr_storage ss = {0};
    socklen_t sl;
    struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, addr, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)port);
        sl = sizeof *v4;
    } else if (inet_pton(AF_INET6, addr, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)port);
        sl = sizeof *v6;
    } else {
        return rd_errorf(err, RD_E_INVAL, "--bind '%s' is not an IPv4 or IPv6 address (such as 127.0.0.1 or ::1)",
                         addr);
    }
    b->listen_fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    if (b->listen_fd >= 0)
        setsockopt(b->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (b->listen_fd < 0 || bind(b->listen_fd, (struct sockaddr *)&ss, sl) != 0 || listen(b->listen_fd, 16) != 0 ||
        getsockname(b->listen_fd, (struct sockaddr *)&ss, &sl) != 0)
        return rd_errorf(err, RD_E_IO, "cannot listen on %s port %d: %s", addr, port, strerror(errno));
    b->port = ntohs(ss.ss_family == AF_INET ? v4->sin_port : v6->sin6_port);
    snprintf(b->bind_text, sizeof b->bind_text, ss.ss_family == AF_INET ? "%s:%d" : "[%s]:%d", addr, b->port);
    b->loopback =
        ss.ss_family == AF_INET ? (ntohl(v4->sin_addr.s_addr) >> 24) == 127 : IN6_IS_ADDR_LOOPBACK(&v6->sin6_addr);
    return RD_OK;
}

rd_status rd_board_start(const rd_board_options *opt, rd_board **out, rd_error *err)
{
    if (!opt || !opt->root || !out)
        return rd_errorf(err, RD_E_INVAL, "board-emulate needs a root folder");
    struct stat st;
    if (stat(opt->root, &st) != 0 || !S_ISDIR(st.st_mode))
        return rd_errorf(err, RD_E_NOTFOUND, "board root '%s' is not a folder", opt->root);
    rd_board *b = calloc(1, sizeof *b);
    if (!b)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    b->listen_fd = b->root_fd = -1;
    b->stop_pipe[0] = b->stop_pipe[1] = -1;
    pthread_mutex_init(&b->lock, NULL);
    b->log = opt->log;
    b->log_user = opt->log_user;
    rd_status rs = parse_faults(opt->faults, &b->faults, err);
    if (rs != RD_OK) {
        board_free(b);
        return rs;
    }
    b->root = realpath(opt->root, NULL);
    b->features = strdup(opt->features ? opt->features : ADB_HOST_FEATURES);
    if (!b->root || !b->features) {
        board_free(b);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    b->auth = !opt->no_auth || b->faults.unauthorized;
    b->accept_new_keys_ms = opt->accept_new_keys_ms > 0 ? opt->accept_new_keys_ms : 0;
    b->version = b->faults.version ? b->faults.version : opt->version ? opt->version : ADB_VERSION;
    b->max_payload = b->faults.max_payload ? b->faults.max_payload
                     : opt->max_payload    ? opt->max_payload
                                           : RD_ADB_MAX_PAYLOAD;
    if (b->max_payload < 256 || b->max_payload > RD_ADB_MAX_PAYLOAD) {
        board_free(b);
        return rd_errorf(err, RD_E_INVAL, "max payload must be 256..%u bytes", RD_ADB_MAX_PAYLOAD);
    }
    if ((b->auth && !b->faults.unauthorized && (rs = load_trusted(b, opt, err)) != RD_OK) || !board_fs_init(b, err) ||
        (rs = board_sandbox_init(&b->sandbox, b->root, err)) != RD_OK ||
        (rs = listen_on(b, opt->bind ? opt->bind : "127.0.0.1", opt->port, err)) != RD_OK) {
        board_free(b);
        return rs != RD_OK ? rs : RD_E_IO;
    }
    if (pipe2(b->stop_pipe, O_CLOEXEC) != 0 || pthread_create(&b->accept_th, NULL, accept_main, b) != 0) {
        board_free(b);
        return rd_errorf(err, RD_E_IO, "cannot start the board's thread");
    }
    board_log(b, "board on %s serving %s (version 0x%08x, max payload %u)", b->bind_text, b->root, b->version,
              b->max_payload);
    if (!b->auth)
        board_log(b,
                  "WARNING: authentication is off: any program that can reach %s runs shell "
                  "commands and reads and writes %s",
                  b->bind_text, b->root);
    else if (!b->faults.unauthorized)
        board_log(b, "accepting %zu key%s%s%s", b->n_trusted, b->n_trusted == 1 ? "" : "s",
                  opt->adb_keys ? " from " : " (this user's ~/.android/adbkey.pub)",
                  opt->adb_keys ? opt->adb_keys : "");
    if (b->accept_new_keys_ms)
        board_log(b,
                  "WARNING: a key a host offers is accepted after %d ms (--accept-new-keys): "
                  "any program that can reach %s gets in",
                  b->accept_new_keys_ms, b->bind_text);
    if (!b->loopback)
        board_log(b, "WARNING: listening on %s: other machines can reach this board", b->bind_text);
    board_log(b, "%s", b->sandbox.note);
    *out = b;
    return RD_OK;
}

int rd_board_port(const rd_board *b)
{
    return b ? b->port : 0;
}

const char *rd_board_address(const rd_board *b)
{
    return b ? b->bind_text : "";
}

void rd_board_stop(rd_board *b)
{
    if (!b)
        return;
    char x = 1;
    ssize_t w = write(b->stop_pipe[1], &x, 1);
    (void)w;
    pthread_join(b->accept_th, NULL);
    reap_threads(b, true);
    board_free(b);
}
