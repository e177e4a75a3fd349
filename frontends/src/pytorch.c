/*
 * pytorch.c: a TorchScript .pt exported to ONNX by the user's own PyTorch, as RKNN-Toolkit2's load_pytorch
 * does (it requires torch too). rknn-diag runs `python3 -c EXPORT_SCRIPT` (no shell) in a fresh private
 * folder under $TMPDIR, with the model's path, the output path, the opset and the input shapes as arguments;
 * the script loads the model with torch.jit.load on the CPU, feeds zeros of the given shapes (float32) in
 * forward's argument order, and writes the ONNX with torch.onnx.export: inputs named after forward's
 * arguments, outputs "output" (or output_0, output_1, ... for a tuple), layers named by their module path
 * (PyTorch's own scope names, /features/0/Conv). The ONNX bytes are read back and the folder removed.
 *
 * Bounded: the export may take RD_FE_PYTORCH_TIMEOUT_S seconds (then the process is killed), its output is
 * at most RD_MAX_MODEL_BYTES, its log is read up to 64 KiB. The script's exit code says what failed (no
 * torch, not TorchScript, shapes), and its last line of standard error is the message.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* posix_spawn_file_actions_addchdir_np, mkdtemp, realpath */
#endif
#include "fe_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define RD_FE_PYTORCH_TIMEOUT_S 900
#define PT_OPSET "13"
#define PT_LOG_MAX ((size_t)64 << 10)

/* Exit codes of the script: what the C side reports. */
enum { PT_NO_TORCH = 10, PT_NOT_SCRIPT = 11, PT_SHAPES = 12, PT_EXPORT = 13 };

static const char export_script[] =
    "import sys\n"
    "def fail(code, msg):\n"
    "    sys.stderr.write('\\n' + ' '.join(str(msg).split()) + '\\n')\n"
    "    sys.exit(code)\n"
    "try:\n"
    "    import torch\n"
    "except Exception as e:\n"
    "    fail(10, '%s (%s)' % (e, sys.executable))\n"
    "path, out, opset, spec = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]\n"
    "try:\n"
    "    m = torch.jit.load(path, map_location='cpu')\n"
    "except Exception as e:\n"
    "    fail(11, str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__)\n"
    "m.eval()\n"
    "args = [a.name for a in m.forward.schema.arguments[1:]]\n"
    "shapes = {}\n"
    "for item in filter(None, spec.split(';')):\n"
    "    name, dims = item.split('=', 1)\n"
    "    if name.startswith('#'):\n"
    "        k = int(name[1:])\n"
    "        if k >= len(args):\n"
    "            fail(12, 'input_size_list gives shape %d; forward(%s) takes %d argument%s' % (k + 1,\n"
    "                 ', '.join(args), len(args), '' if len(args) == 1 else 's'))\n"
    "        name = args[k]\n"
    "    shapes[name] = [int(d) for d in dims.split(',') if d]\n"
    "missing = [a for a in args if a not in shapes]\n"
    "unknown = [n for n in shapes if n not in args]\n"
    "if missing or unknown:\n"
    "    why = (['missing: ' + ', '.join(missing)] if missing else []) + \\\n"
    "          (['not arguments of forward: ' + ', '.join(unknown)] if unknown else [])\n"
    "    fail(12, 'forward(%s) needs the shape of every argument: give --input-shape %s (%s)' % (', '.join(args),\n"
    "         ' '.join('%s=1,3,224,224' % a for a in (missing or args)), '; '.join(why)))\n"
    "try:\n"
    "    inputs = tuple(torch.zeros(shapes[a]) for a in args)\n"
    "    with torch.no_grad():\n"
    "        y = m(*inputs)\n"
    "    n_out = len(y) if isinstance(y, (tuple, list)) else 1\n"
    "    names = ['output'] if n_out == 1 else ['output_%d' % i for i in range(n_out)]\n"
    "    torch.onnx.export(m, inputs, out, opset_version=opset, input_names=args, output_names=names,\n"
    "                      do_constant_folding=True)\n"
    "except Exception as e:\n"
    "    fail(13, '%s: %s' % (type(e).__name__, str(e).strip().splitlines()[0] if str(e).strip() else ''))\n"
    "sys.stdout.write('PyTorch %s\\n' % torch.__version__)\n";

/* "name=d0,d1;#1=d0,...;..." for the script: "#K" for the K-th shape without a name (argument K of forward). */
static rd_status shape_spec(const rd_input_shape *shapes, size_t n, char **out, rd_error *err)
{
    size_t cap = 16 + n * (RD_MAX_RANK * 21 + 32), used = 0;
    for (size_t i = 0; i < n; i++)
        cap += strlen(shapes[i].name ? shapes[i].name : "");
    char *s = malloc(cap);
    if (!s)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    s[0] = '\0';
    for (size_t i = 0, k = 0; i < n; i++) {
        const char *nm = shapes[i].name;
        if (nm && (!nm[0] || nm[0] == '#' || strpbrk(nm, ";="))) {
            free(s);
            return rd_errorf(err, RD_E_INVAL, "input name '%s': empty, or with '#', ';' or '='", nm);
        }
        if (nm)
            used += (size_t)snprintf(s + used, cap - used, "%s%s=", i ? ";" : "", nm);
        else
            used += (size_t)snprintf(s + used, cap - used, "%s#%zu=", i ? ";" : "", k++);
        for (int d = 0; d < shapes[i].rank; d++)
            used += (size_t)snprintf(s + used, cap - used, "%s%lld", d ? "," : "", (long long)shapes[i].dims[d]);
    }
    *out = s;
    return RD_OK;
}

/* The last non-empty line of the log (the script's message or Python's own error). */
static void last_line(const char *log_path, char *out, size_t cap)
{
    out[0] = '\0';
    char *buf = NULL;
    size_t len = 0;
    rd_error e;
    if (rd_file_read_all(NULL, log_path, PT_LOG_MAX, &buf, &len, &e) != RD_OK) {
        /* longer than the cap or unreadable: nothing to quote */
        return;
    }
    while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == ' '))
        len--;
    size_t b = len;
    while (b && buf[b - 1] != '\n')
        b--;
    snprintf(out, cap, "%.*s", (int)(len - b), buf + b);
    free(buf);
}

/* Runs argv with stdout and stderr to log_path, in dir; waits at most timeout_s. *code: its exit status. */
static rd_status run_python(char *const argv[], const char *dir, const char *log_path, int timeout_s, int *code,
                            rd_error *err)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, log_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    posix_spawn_file_actions_addchdir_np(&fa, dir);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return rd_errorf(err, RD_E_NOTFOUND, "cannot run %s: %s", argv[0], strerror(rc));
    struct timespec tick = {0, 20 * 1000 * 1000};
    for (long waited_ms = 0;; waited_ms += 20) {
        int status;
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) {
            *code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
            return RD_OK;
        }
        if (w < 0 && errno != EINTR)
            return rd_errorf(err, RD_E_IO, "waiting for %s: %s", argv[0], strerror(errno));
        if (waited_ms >= (long)timeout_s * 1000) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            return rd_errorf(err, RD_E_LIMIT, "%s did not finish the export in %d s (killed)", argv[0], timeout_s);
        }
        nanosleep(&tick, NULL);
    }
}

rd_status rd_pytorch_to_onnx(const char *path, const rd_frontend_options *fo, const rd_input_shape *shapes,
                             size_t n_shapes, void **out_buf, size_t *out_len, rd_frontend_info *info, rd_error *err)
{
    *out_buf = NULL;
    *out_len = 0;
    const char *python = fo && fo->python ? fo->python : getenv("RKNN_DIAG_PYTHON");
    if (!python || !python[0])
        python = "python3";
    const char *tmp = getenv("TMPDIR");
    char dir[4096];
    if (snprintf(dir, sizeof dir, "%s/rknn-diag-pt-XXXXXX", tmp && tmp[0] ? tmp : "/tmp") >= (int)sizeof dir)
        return rd_errorf(err, RD_E_INVAL, "TMPDIR is too long");
    char *abs = realpath(path, NULL); /* the script runs in the temporary folder */
    if (!abs)
        return rd_errorf(err, RD_E_NOTFOUND, "%s: %s", path, strerror(errno));
    char *spec = NULL;
    rd_status st = shape_spec(shapes, n_shapes, &spec, err);
    if (st == RD_OK && !mkdtemp(dir))
        st =
            rd_errorf(err, RD_E_IO, "%s: cannot make a temporary folder for the ONNX export: %s", dir, strerror(errno));
    if (st != RD_OK) {
        free(abs);
        free(spec);
        return st;
    }
    char onnx_path[4200], log_path[4200];
    snprintf(onnx_path, sizeof onnx_path, "%s/export.onnx", dir);
    snprintf(log_path, sizeof log_path, "%s/export.log", dir);
    char *argv[] = {(char *)python, "-c", (char *)export_script, abs, onnx_path, PT_OPSET, spec, NULL};
    int code = -1;
    st = run_python(argv, dir, log_path, RD_FE_PYTORCH_TIMEOUT_S, &code, err);
    char msg[RD_ERROR_MSG_MAX / 2];
    last_line(log_path, msg, sizeof msg);
    if (st == RD_OK && code == 0) {
        char *buf = NULL;
        st = rd_file_read_all(NULL, onnx_path, RD_MAX_MODEL_BYTES, &buf, out_len, err);
        *out_buf = buf;
        char detail[160];
        snprintf(detail, sizeof detail, "TorchScript, exported to ONNX opset " PT_OPSET " by %s (%s)", msg, python);
        if (info) {
            memset(info, 0, sizeof *info);
            info->format = RD_FORMAT_PYTORCH;
            snprintf(info->detail, sizeof info->detail, "%s", detail);
        }
    } else if (st == RD_OK && code == PT_NO_TORCH) {
        st = rd_errorf(err, RD_E_UNSUPPORTED,
                       "%s: a PyTorch model needs PyTorch to export it to ONNX, and %s cannot "
                       "import torch: install it (Debian: apt-get install python3-torch; or pip install torch), or "
                       "name another Python in RKNN_DIAG_PYTHON [%s]",
                       path, python, msg);
    } else if (st == RD_OK && code == PT_NOT_SCRIPT) {
        st = rd_errorf(err, RD_E_PARSE,
                       "%s: not a TorchScript model torch.jit.load reads (a state_dict or a pickled "
                       "module? save it with torch.jit.trace(model, x).save(...)): %s",
                       path, msg);
    } else if (st == RD_OK && code == PT_SHAPES) {
        st = rd_errorf(err, RD_E_INVAL, "%s: %s", path, msg);
    } else if (st == RD_OK) {
        st = rd_errorf(err, RD_E_UNSUPPORTED, "%s: PyTorch's ONNX export (opset " PT_OPSET ") failed (%s exit %d): %s",
                       path, python, code, msg[0] ? msg : "no message");
    } else {
        rd_error_prefix(err, "%s: exporting to ONNX", path);
    }
    unlink(onnx_path);
    unlink(log_path);
    rmdir(dir); /* fails only if the export left other files: they stay, in a folder of the user's own */
    free(abs);
    free(spec);
    if (st != RD_OK) {
        free(*out_buf);
        *out_buf = NULL;
        *out_len = 0;
    }
    return st;
}
