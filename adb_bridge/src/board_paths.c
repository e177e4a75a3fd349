/*
 * board_paths.c: which words of a shell command are board paths, and their rewriting into the
 * served folder. The fake board's shell runs on the host, so `ls /userdata/dumps` must become
 * `ls 'ROOT'/userdata/dumps`, while the path of a host program it runs (the rknn-diag binary, which
 * may live under /tmp or /srv, or in a folder whose name has a space) must stay as it is.
 *
 * A word (or the part of it after '=', or a quoted string) that starts with '/' is a board path
 * when it exists under ROOT, or when its first component is one of ROOT's top-level entries (unless
 * it is a file that exists on the host and not under ROOT: a host program), or when it does not
 * exist on the host. Quotes are followed, so a quoted path with spaces is one path, and the root is
 * inserted quoted for the context it lands in, so a root with spaces or quotes stays one word.
 */
#include "board_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAPPED_MAX (16u << 20) /* a rewritten command; commands are at most 4 KiB (one OPEN) */

static void put(adb_text *b, const char *s, size_t n)
{
    adb_text_add(b, s, n, MAPPED_MAX);
}

/* The root, quoted for where it lands: outside quotes, inside '...' or inside "...". */
static void put_root(adb_text *b, const char *root, char quote)
{
    if (quote == 0)
        put(b, "'", 1);
    for (const char *r = root; *r; r++) {
        if (*r == '\'' && quote != '"')
            put(b, "'\\''", 4);
        else if (quote == '"' && strchr("\"$`\\", *r)) {
            put(b, "\\", 1);
            put(b, r, 1);
        } else
            put(b, r, 1);
    }
    if (quote == 0)
        put(b, "'", 1);
}

static bool is_board_path(const char *root, const char *path, size_t len)
{
    char host[4096], under[8192], top[4400];
    if (len < 2 || len >= sizeof host)
        return false; /* "/" alone stays the host's */
    memcpy(host, path, len);
    host[len] = '\0';
    struct stat st;
    snprintf(under, sizeof under, "%s%s", root, host);
    if (lstat(under, &st) == 0)
        return true;
    size_t first = strcspn(host + 1, "/");
    snprintf(top, sizeof top, "%s/%.*s", root, (int)first, host + 1);
    bool on_host = lstat(host, &st) == 0;
    if (lstat(top, &(struct stat){0}) == 0)
        return !(on_host && S_ISREG(st.st_mode));
    return !on_host;
}

/* Where a path that starts at cmd[i] ends, for the quoting context it is in. */
static size_t path_end(const char *cmd, size_t i, char quote)
{
    const char *stop = quote == '\'' ? "'" : quote == '"' ? "\"$`\\" : " \t\n;&|()<>`'\"$\\";
    return i + strcspn(cmd + i, stop);
}

char *board_map_command(const char *root, const char *cmd)
{
    adb_text b = {0};
    put(&b, "", 0);
    char quote = 0;
    bool word_start = true;
    for (size_t i = 0; cmd[i];) {
        char ch = cmd[i];
        if (ch == '/' && word_start) {
            size_t end = path_end(cmd, i, quote);
            if (is_board_path(root, cmd + i, end - i))
                put_root(&b, root, quote);
            put(&b, cmd + i, end - i);
            i = end;
            word_start = false;
            continue;
        }
        if (ch == '\\' && quote != '\'' && cmd[i + 1]) { /* an escaped character */
            put(&b, cmd + i, 2);
            i += 2;
            word_start = false;
            continue;
        }
        bool was_start = word_start;
        if (quote == 0 && (ch == '\'' || ch == '"')) {
            quote = ch;
            word_start = was_start; /* a path may start right after an opening quote */
        } else if (quote != 0 && ch == quote) {
            quote = 0;
            word_start = false;
        } else {
            word_start = quote == 0 && strchr(" \t\n;&|()<>`=", ch);
        }
        put(&b, cmd + i, 1);
        i++;
    }
    if (b.oom) {
        free(b.buf);
        return NULL;
    }
    return b.buf;
}
