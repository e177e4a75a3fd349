/* test_fs.c: the file helpers every reader and writer goes through (fs_read.c, fs_write.c, fs_dir.c):
 * planted links never followed, no shared temporary files, nothing under a final name after a failure,
 * FIFOs and devices refused at once, paths from data confined to their folder, folders cleared without
 * following links. */
#include "rd_test.h"
#include "rknn_diag/simulator.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define FS_PROMPT_SECONDS 2.0 /* a refusal must come at once, not after a wait */

/* Entries of dir whose name starts with '.' (other than . and ..): our temporary files. */
static int hidden_entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        n += e->d_name[0] == '.' && strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    if (d)
        closedir(d);
    return n;
}

static void test_write_basics(void)
{
    char *dir = rd_test_tmpdir("fs-write");
    char *path = rd_test_join(dir, "out.txt");
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_file_write_atomic(path, "hello\n", 6, NULL, &err), RD_OK);
    CU_ASSERT_TRUE(rd_test_file_is(path, "hello\n"));
    struct stat sb;
    mode_t mask = umask(022);
    umask(mask);
    CU_ASSERT_EQUAL_FATAL(stat(path, &sb), 0);
    CU_ASSERT_EQUAL(sb.st_mode & 0777, 0644 & ~mask);
    CU_ASSERT_EQUAL(hidden_entries(dir), 0);
    /* replacing, streaming, a private mode */
    rd_atomic_file *f;
    rd_write_options priv = {.mode = 0600, .durable = true};
    CU_ASSERT_EQUAL_FATAL(rd_atomic_file_open(path, &priv, &f, &err), RD_OK);
    CU_ASSERT_EQUAL(hidden_entries(dir), 1);
    CU_ASSERT_TRUE(rd_test_file_is(path, "hello\n")); /* nothing under the final name before commit */
    fprintf(rd_atomic_file_stream(f), "%d layers\n", 3);
    CU_ASSERT_EQUAL(rd_atomic_file_write(f, "end\n", 4, &err), RD_OK);
    CU_ASSERT_EQUAL(rd_atomic_file_commit(f, &err), RD_OK);
    CU_ASSERT_TRUE(rd_test_file_is(path, "3 layers\nend\n"));
    CU_ASSERT_EQUAL(stat(path, &sb), 0);
    CU_ASSERT_EQUAL(sb.st_mode & 0777, 0600 & ~mask);
    CU_ASSERT_EQUAL(hidden_entries(dir), 0);
    /* abort: the old file stays, no temporary */
    CU_ASSERT_EQUAL_FATAL(rd_atomic_file_open(path, NULL, &f, &err), RD_OK);
    fputs("half", rd_atomic_file_stream(f));
    rd_atomic_file_abort(f);
    CU_ASSERT_TRUE(rd_test_file_is(path, "3 layers\nend\n"));
    CU_ASSERT_EQUAL(hidden_entries(dir), 0);
    /* exclusive: never replaces */
    rd_write_options once = {.exclusive = true};
    CU_ASSERT_EQUAL(rd_file_write_atomic(path, "new", 3, &once, &err), RD_E_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "exists already"));
    CU_ASSERT_TRUE(rd_test_file_is(path, "3 layers\nend\n"));
    CU_ASSERT_EQUAL(hidden_entries(dir), 0);
    /* a name of 255 bytes still gets a temporary file that fits */
    char name[256];
    memset(name, 'n', 255);
    name[255] = '\0';
    char *longp = rd_test_join(dir, name);
    CU_ASSERT_EQUAL(rd_file_write_atomic(longp, "x", 1, NULL, &err), RD_OK);
    CU_ASSERT_TRUE(rd_test_file_is(longp, "x"));
    /* bad targets */
    char *missing = rd_test_join(dir, "no/such/x.txt");
    CU_ASSERT_EQUAL(rd_file_write_atomic(missing, "x", 1, NULL, &err), RD_E_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no/such/x.txt"));
    CU_ASSERT_EQUAL(rd_file_write_atomic(dir, "x", 1, NULL, &err), RD_E_IO); /* a folder is in the way */
    char *slash = rd_test_join(dir, "");
    CU_ASSERT_EQUAL(rd_file_write_atomic(slash, "x", 1, NULL, &err), RD_E_INVAL);
    CU_ASSERT_EQUAL(hidden_entries(dir), 0);
    free(slash);
    free(missing);
    free(longp);
    free(path);
    free(dir);
}

/* A planted link under every temporary name a writer ever used, and under the final name: the victim it
   points to is never written. */
static void test_planted_links(void)
{
    char *dir = rd_test_tmpdir("fs-links");
    char *victim = rd_test_join(dir, "victim");
    char *out = rd_test_join(dir, "out");
    mkdir(out, 0755);
    rd_test_write_text(victim, "precious");
    static const char *const traps[] = {"error_analysis.txt.tmp", "error_analysis.txt.tmp.1234", "error_analysis.txt"};
    char pidname[64];
    snprintf(pidname, sizeof pidname, "error_analysis.txt.tmp.%ld", (long)getpid());
    for (size_t i = 0; i < sizeof traps / sizeof traps[0] + 1; i++) {
        char *link = rd_test_join(out, i < 3 ? traps[i] : pidname);
        CU_ASSERT_EQUAL(symlink(victim, link), 0);
        free(link);
    }
    char *path = rd_test_join(out, "error_analysis.txt");
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_file_write_atomic(path, "table\n", 6, NULL, &err), RD_OK);
    CU_ASSERT_TRUE(rd_test_file_is(victim, "precious"));
    struct stat sb;
    CU_ASSERT_EQUAL(lstat(path, &sb), 0);
    CU_ASSERT_TRUE(S_ISREG(sb.st_mode)); /* the link under the final name was replaced, not followed */
    CU_ASSERT_TRUE(rd_test_file_is(path, "table\n"));
    /* a folder rknn-diag makes inside an output folder is never a planted link */
    char *golden = rd_test_join(out, "golden");
    CU_ASSERT_EQUAL(symlink(dir, golden), 0);
    CU_ASSERT_EQUAL(rd_dir_make(golden, RD_DIR_OWN, &err), RD_E_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "symbolic link"));
    CU_ASSERT_EQUAL(rd_dir_make(golden, 0, &err), RD_OK); /* the user's own path may be a link */
    char *deep = rd_test_join(out, "a/b/c");
    CU_ASSERT_EQUAL(rd_dir_make(deep, RD_DIR_PARENTS | RD_DIR_OWN, &err), RD_OK);
    CU_ASSERT_EQUAL(stat(deep, &sb), 0);
    CU_ASSERT_TRUE(S_ISDIR(sb.st_mode));
    CU_ASSERT_EQUAL(rd_dir_make(victim, 0, &err), RD_E_IO); /* a file in the way */
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "not a folder"));
    free(deep);
    free(golden);
    free(path);
    free(out);
    free(victim);
    free(dir);
}

typedef struct writer_arg {
    const char *path;
    char fill;
    rd_atomic_file *f;
    rd_status st;
} writer_arg;

static void *write_big(void *p)
{
    writer_arg *w = p;
    char block[4096];
    memset(block, w->fill, sizeof block);
    for (int i = 0; i < 256 && w->st == RD_OK; i++)
        w->st = rd_atomic_file_write(w->f, block, sizeof block, NULL);
    if (w->st == RD_OK)
        w->st = rd_atomic_file_commit(w->f, NULL);
    else
        rd_atomic_file_abort(w->f);
    return NULL;
}

/* Two runs writing the same file of one folder at once: two temporary files, and the final file is one
   whole version, never a mix. */
static void test_concurrent_writers(void)
{
    char *dir = rd_test_tmpdir("fs-concurrent");
    char *path = rd_test_join(dir, "report.json");
    writer_arg w[2] = {{.path = path, .fill = 'a'}, {.path = path, .fill = 'b'}};
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_atomic_file_open(path, NULL, &w[0].f, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(rd_atomic_file_open(path, NULL, &w[1].f, &err), RD_OK);
    CU_ASSERT_EQUAL(hidden_entries(dir), 2); /* one temporary file each */
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, write_big, &w[i]), 0);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    CU_ASSERT_EQUAL(w[0].st, RD_OK);
    CU_ASSERT_EQUAL(w[1].st, RD_OK);
    size_t len;
    char *got = rd_test_read_file(path, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(got);
    CU_ASSERT_EQUAL(len, (size_t)256 * 4096);
    size_t same = 0;
    for (size_t i = 0; i < len; i++)
        same += got[i] == got[0];
    CU_ASSERT_EQUAL(same, len);
    CU_ASSERT_EQUAL(hidden_entries(dir), 0);
    free(got);
    free(path);
    free(dir);
}

/* A write that fails half way (the file size limit, as a full disk would) leaves nothing under the final
   name and no temporary file; an older file there is kept whole. Runs in a child: the limit is per process. */
static void test_failed_write_leaves_nothing(void)
{
    char *dir = rd_test_tmpdir("fs-fail");
    char *fresh = rd_test_join(dir, "fresh.npy"), *old = rd_test_join(dir, "old.npy");
    rd_test_write_text(old, "old version");
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {.rlim_cur = 4096, .rlim_max = 4096};
        setrlimit(RLIMIT_FSIZE, &rl);
        static char big[1 << 16];
        rd_error err;
        int bad = 0;
        bad += rd_file_write_atomic(fresh, big, sizeof big, NULL, &err) != RD_E_IO;
        bad += strstr(err.msg, "fresh.npy") == NULL;
        bad += rd_file_write_atomic(old, big, sizeof big, NULL, &err) != RD_E_IO;
        rd_atomic_file *f;
        if (rd_atomic_file_open(fresh, NULL, &f, &err) == RD_OK) {
            for (int i = 0; i < 64; i++)
                fwrite(big, 1, 1024, rd_atomic_file_stream(f));
            bad += rd_atomic_file_commit(f, &err) != RD_E_IO;
        } else {
            bad++;
        }
        _exit(bad);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CU_ASSERT_TRUE(WIFEXITED(status));
    CU_ASSERT_EQUAL(WEXITSTATUS(status), 0);
    CU_ASSERT_NOT_EQUAL(access(fresh, F_OK), 0);
    CU_ASSERT_TRUE(rd_test_file_is(old, "old version"));
    CU_ASSERT_EQUAL(hidden_entries(dir), 0);
    free(fresh);
    free(old);
    free(dir);
}

/* Every kind of non-regular input is refused at once with what it is; the size cap and missing files. */
static void test_open_read_refusals(void)
{
    char *dir = rd_test_tmpdir("fs-read");
    char *fifo = rd_test_join(dir, "model.onnx"), *file = rd_test_join(dir, "data.bin"),
         *link = rd_test_join(dir, "link.bin");
    CU_ASSERT_EQUAL_FATAL(mkfifo(fifo, 0600), 0);
    rd_test_write_text(file, "0123456789");
    CU_ASSERT_EQUAL(symlink(file, link), 0);
    rd_error err;
    int fd = -1;
    uint64_t size = 0;
    alarm(20); /* a regression that blocks on the FIFO ends the binary instead of hanging CTest */
    double t0 = rd_test_seconds();
    CU_ASSERT_EQUAL(rd_file_open_read(fifo, 0, 1 << 20, &fd, &size, &err), RD_E_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, fifo));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "FIFO"));
    char *buf;
    size_t len;
    CU_ASSERT_EQUAL(rd_file_read_all(NULL, fifo, 1 << 20, &buf, &len, &err), RD_E_IO);
    CU_ASSERT_EQUAL(rd_file_read_all(dir, "model.onnx", 1 << 20, &buf, &len, &err), RD_E_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "FIFO"));
    CU_ASSERT(rd_test_seconds() - t0 < FS_PROMPT_SECONDS);
    alarm(0);
    CU_ASSERT_EQUAL(rd_file_open_read(dir, 0, 1 << 20, &fd, NULL, &err), RD_E_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "a folder"));
    CU_ASSERT_EQUAL(rd_file_open_read("/dev/null", 0, 1 << 20, &fd, NULL, &err), RD_E_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "character device"));
    CU_ASSERT_EQUAL(rd_file_open_read(file, 0, 9, &fd, NULL, &err), RD_E_LIMIT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "10 bytes"));
    CU_ASSERT_EQUAL(rd_file_open_read(link, RD_FILE_NOFOLLOW, 100, &fd, NULL, &err), RD_E_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "symbolic link"));
    char *missing = rd_test_join(dir, "missing");
    CU_ASSERT_EQUAL(rd_file_open_read(missing, 0, 100, &fd, NULL, &err), RD_E_NOTFOUND);
    /* the good cases */
    CU_ASSERT_EQUAL_FATAL(rd_file_open_read(link, 0, 100, &fd, &size, &err), RD_OK);
    CU_ASSERT_EQUAL(size, 10);
    close(fd);
    CU_ASSERT_EQUAL_FATAL(rd_file_read_all(NULL, file, 10, &buf, &len, &err), RD_OK);
    CU_ASSERT_EQUAL(len, 10);
    CU_ASSERT_EQUAL(buf[10], '\0');
    free(buf);
    FILE *f;
    CU_ASSERT_EQUAL_FATAL(rd_file_fopen_read(file, 0, 100, &f, &err), RD_OK);
    char line[32];
    CU_ASSERT_PTR_NOT_NULL(fgets(line, sizeof line, f));
    CU_ASSERT_STRING_EQUAL(line, "0123456789");
    fclose(f);
    free(missing);
    free(fifo);
    free(file);
    free(link);
    free(dir);
}

/* Paths that come from data stay inside their folder. */
static void test_open_within(void)
{
    char *dir = rd_test_tmpdir("fs-within");
    char *root = rd_test_join(dir, "model"), *outside = rd_test_join(dir, "secret.bin"),
         *sub = rd_test_join(dir, "model/weights");
    mkdir(root, 0755);
    mkdir(sub, 0755);
    rd_test_write_text(outside, "secret");
    char *w = rd_test_join(sub, "w.bin");
    rd_test_write_text(w, "weights");
    char *l1 = rd_test_join(root, "escape.bin"), *l2 = rd_test_join(root, "linkdir"),
         *l3 = rd_test_join(sub, "inner.bin");
    CU_ASSERT_EQUAL(symlink(outside, l1), 0);
    CU_ASSERT_EQUAL(symlink(dir, l2), 0);
    CU_ASSERT_EQUAL(symlink("w.bin", l3), 0); /* even a link that stays inside is not followed */
    struct {
        const char *rel;
        rd_status want;
        const char *says;
    } cases[] = {
        {"weights/w.bin", RD_OK, NULL},
        {"./weights/./w.bin", RD_OK, NULL},
        {"../secret.bin", RD_E_PARSE, "not a relative path inside"},
        {"weights/../../secret.bin", RD_E_PARSE, "not a relative path inside"},
        {"weights/..", RD_E_PARSE, "not a relative path inside"},
        {"/etc/passwd", RD_E_PARSE, "absolute"},
        {"", RD_E_PARSE, "absolute"},
        {"weights//w.bin", RD_E_PARSE, "empty components"},
        {"escape.bin", RD_E_IO, "symbolic link"},
        {"linkdir/secret.bin", RD_E_IO, "symbolic link"},
        {"weights/inner.bin", RD_E_IO, "symbolic link"},
        {"weights/missing.bin", RD_E_NOTFOUND, "missing.bin"},
        {"weights", RD_E_IO, "a folder"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *buf = NULL;
        size_t len = 0;
        rd_error err;
        rd_error_clear(&err);
        rd_status st = rd_file_read_all(root, cases[i].rel, 1 << 20, &buf, &len, &err);
        CU_ASSERT_EQUAL(st, cases[i].want);
        if (st != cases[i].want)
            fprintf(stderr, "case '%s': %d (%s)\n", cases[i].rel, st, err.msg);
        if (st == RD_OK)
            CU_ASSERT_STRING_EQUAL(buf, "weights");
        if (cases[i].says)
            CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, cases[i].says));
        free(buf);
    }
    free(l1);
    free(l2);
    free(l3);
    free(w);
    free(sub);
    free(outside);
    free(root);
    free(dir);
}

/* Clearing a folder removes links inside it, never what they point to; a linked folder is refused. */
static void test_remove_tree(void)
{
    char *dir = rd_test_tmpdir("fs-tree");
    char *keep = rd_test_join(dir, "keep"), *kept = rd_test_join(dir, "keep/file.npy");
    mkdir(keep, 0755);
    rd_test_write_text(kept, "keep me");
    char *tree = rd_test_join(dir, "board_dumps");
    mkdir(tree, 0755);
    char *a = rd_test_join(tree, "000_InputOperator.npy"), *sub = rd_test_join(tree, "dumps"),
         *deep = rd_test_join(tree, "dumps/x.npy");
    rd_test_write_text(a, "a");
    mkdir(sub, 0755);
    rd_test_write_text(deep, "x");
    char *l1 = rd_test_join(tree, "to_keep"), *l2 = rd_test_join(tree, "dumps/to_file"),
         *fifo = rd_test_join(tree, "pipe");
    CU_ASSERT_EQUAL(symlink(keep, l1), 0);
    CU_ASSERT_EQUAL(symlink(kept, l2), 0);
    CU_ASSERT_EQUAL(mkfifo(fifo, 0600), 0);
    rd_error err;
    CU_ASSERT_EQUAL(rd_dir_remove_tree(tree, &err), RD_OK);
    CU_ASSERT_NOT_EQUAL(access(tree, F_OK), 0);
    CU_ASSERT_TRUE(rd_test_file_is(kept, "keep me"));
    CU_ASSERT_EQUAL(rd_dir_remove_tree(tree, &err), RD_OK); /* missing is fine */
    /* the folder itself a link: refused, its target untouched */
    CU_ASSERT_EQUAL(symlink(keep, tree), 0);
    CU_ASSERT_EQUAL(rd_dir_remove_tree(tree, &err), RD_E_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "symbolic link"));
    CU_ASSERT_TRUE(rd_test_file_is(kept, "keep me"));
    /* deeper than the bound: refused, not recursed forever */
    unlink(tree);
    char path[8192];
    snprintf(path, sizeof path, "%s", tree);
    for (int i = 0; i < RD_MAX_TREE_DEPTH + 2; i++) {
        CU_ASSERT_EQUAL_FATAL(mkdir(path, 0755), 0);
        size_t n = strlen(path);
        snprintf(path + n, sizeof path - n, "/d");
    }
    CU_ASSERT_EQUAL(rd_dir_remove_tree(tree, &err), RD_E_LIMIT);
    free(l1);
    free(l2);
    free(fifo);
    free(a);
    free(sub);
    free(deep);
    free(tree);
    free(kept);
    free(keep);
    free(dir);
}

RD_TEST_REGISTER(register_fs)
{
    RD_SUITE("fs", {"atomic write", test_write_basics}, {"planted links", test_planted_links},
             {"concurrent writers", test_concurrent_writers},
             {"failed write leaves nothing", test_failed_write_leaves_nothing},
             {"open for reading refuses", test_open_read_refusals}, {"paths confined to a folder", test_open_within},
             {"remove tree", test_remove_tree});
}
