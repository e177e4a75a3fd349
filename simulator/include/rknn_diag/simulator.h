/*
 * rknn_diag/simulator.h: the numerics library of rknn-diag.
 *
 * Tensors and dtypes, .npy I/O, ONNX loading, the graph and the layer-by-layer executor whose observer
 * sees every tensor the moment it is produced.
 *
 *     rd_error err;
 *     rd_model *m = NULL;
 *     if (rd_model_load("model.onnx", NULL, &m, &err) != RD_OK) { puts(err.msg); return 3; }
 *     rd_tensor in;
 *     rd_npy_load("input.npy", &in, &err);
 *     rd_run_options opt = { .observer = print_layer, .user = NULL };
 *     rd_tensor out[4];
 *     rd_model_run(m, &in, 1, &opt, out, 4, &err);
 *
 * Conventions: every function that can fail returns an rd_status and fills the rd_error given as its
 * last argument (which may be NULL). Messages name the file, node, tensor or byte offset concerned and
 * carry no trailing newline. Nothing here prints, aborts or exits, and there is no global mutable state.
 */
#ifndef RKNN_DIAG_SIMULATOR_H
#define RKNN_DIAG_SIMULATOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------------
 * Status and errors
 */

typedef enum rd_status {
    RD_OK = 0,
    RD_E_INVAL,       /* invalid argument or content found in an input (a model, a file, an API call): exit 3 */
    RD_E_PARSE,       /* malformed outside data (model, .npy, YAML, packet, ...) */
    RD_E_UNSUPPORTED, /* valid input that this version does not implement (op, dtype, feature) */
    RD_E_NOMEM,       /* allocation failed */
    RD_E_IO,          /* file system or socket error */
    RD_E_DEVICE,      /* the board or transport misbehaved */
    RD_E_TIMEOUT,     /* a wait ran past its bound */
    RD_E_LIMIT,       /* a size limit (RD_MAX_*) would be exceeded */
    RD_E_AUTH,        /* the board refused our key */
    RD_E_NOTFOUND,    /* a named thing (file, tensor, device) does not exist */
    RD_E_GATE,        /* an accuracy gate failed (exit code 1) */
    RD_E_USAGE,       /* the command line itself is wrong: an unknown, malformed, missing or conflicting option
                         or argument, found without reading any input (exit code 2); raised by option parsers
                         and by library functions that parse option text (HOST:PORT, a fault list) */
    RD_STATUS_COUNT
} rd_status;

#define RD_ERROR_MSG_MAX 1024

typedef struct rd_error {
    rd_status code;
    char msg[RD_ERROR_MSG_MAX];
} rd_error;

/** Short stable name of a status ("ok", "parse error", ...). Never NULL. */
const char *rd_status_str(rd_status code);

/** Sets err (if not NULL) to code and the formatted message; returns code. */
rd_status rd_errorf(rd_error *err, rd_status code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/** Prefixes err->msg with formatted context and ": "; returns err->code. For failure paths only: with err
    NULL (the caller kept no message, so the code is lost too) it returns RD_E_INVAL, never RD_OK. */
rd_status rd_error_prefix(rd_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** Clears err to RD_OK and an empty message. */
void rd_error_clear(rd_error *err);

/** The process exit code the design gives a status: 0 ok, 1 RD_E_GATE, 2 RD_E_USAGE, 3 every other failure
    (an input file, a model, a board). */
int rd_status_exit_code(rd_status code);

/* ---------------------------------------------------------------------------------------------------
 * Limits: named so that fuzzers and tests can reason about them. Sizes from outside data are checked
 * against these before any allocation.
 */

#define RD_MAX_RANK 8
#define RD_MAX_TENSOR_BYTES ((uint64_t)4 << 30) /* 4 GiB for one tensor */
#define RD_MAX_MODEL_BYTES ((uint64_t)4 << 30)  /* 4 GiB for one .onnx file */
#define RD_MAX_NODES (1 << 21)                  /* 2,097,152 nodes in one graph (Constant nodes included) */
#define RD_MAX_VALUES (1 << 23)                 /* 8,388,608 distinct tensor names in one graph */
#define RD_MAX_TREE_DEPTH 64                    /* folders below a folder rd_dir_remove_tree walks */

/* ---------------------------------------------------------------------------------------------------
 * Names from outside (tensor and node names of a model, file names on a board) made safe to show: the
 * escapes of docs/security.md. Printable characters of any language stay; C0 and C1 controls, DEL, the
 * bidirectional controls and invalid UTF-8 bytes are spelled \n \r \t \xHH \uHHHH.
 */

typedef enum rd_escape_style {
    RD_ESC_DISPLAY = 0, /* for terminals, logs and HTML: a backslash stays a backslash */
    RD_ESC_QUOTED = 1,  /* also \\ and \": the inside of a "..." that rd_text_unescape reads back exactly */
} rd_escape_style;

#define RD_TEXT_SHOWN_MAX 512 /* a good size for rd_text_shown's buffer */

/** True when s (len bytes) changes under style. */
bool rd_text_needs_escape(const char *s, size_t len, rd_escape_style style);

/** Writes s (len bytes) escaped into out (cap bytes, always NUL-terminated when cap > 0, cut before the
    first escape or character that does not fit whole); returns the full escaped length, as snprintf. */
size_t rd_text_escape(const char *s, size_t len, rd_escape_style style, char *out, size_t cap);

/** The display form of the NUL-terminated s in buf, ending in "..." when cut; returns buf ("(null)" for NULL).
    For printf arguments: printf("%s", rd_text_shown(name, buf, sizeof buf)). */
const char *rd_text_shown(const char *s, char *buf, size_t cap);

/** rd_text_shown into a buffer that lives until the end of the enclosing block (a compound literal):
    printf("layer %s\n", RD_TEXT_SHOWN(name)). Names longer than RD_TEXT_SHOWN_MAX - 4 bytes end in "...". */
#define RD_TEXT_SHOWN(s) rd_text_shown((s), (char[RD_TEXT_SHOWN_MAX]){0}, RD_TEXT_SHOWN_MAX)

/** True when s (len bytes) is valid UTF-8 (no stray, overlong, surrogate or cut sequence). */
bool rd_text_utf8_valid(const char *s, size_t len);

/** A copy of s (len bytes) in which each byte of an invalid UTF-8 sequence is U+FFFD, the replacement
    character: what JSON output needs (docs/report-schema.md). malloc'ed, NUL-terminated, *out_len bytes (may
    be NULL); NULL on allocation failure. */
char *rd_text_utf8_repaired(const char *s, size_t len, size_t *out_len);

/** JSON text (a writer's output, where anything but ASCII is inside strings) made valid UTF-8 and safe to
    print: rd_text_utf8_repaired, and each C1 control, bidirectional control and line separator written as
    the JSON escape \uHHHH (the same string to every JSON reader). malloc'ed as rd_text_utf8_repaired. */
char *rd_text_json_safe(const char *json, size_t len, size_t *out_len);

/** True when text starts (after blanks) with one well-formed JSON value nested at most max_depth deep, checked
    without allocating: a reader whose cJSON parse returned NULL on such a text ran out of memory, and says so
    instead of "not valid JSON". At least as strict as cJSON (no BOM, no control characters in strings, no lone
    surrogate escapes, numbers of at most 63 characters), so a text it accepts is one cJSON parses. */
bool rd_json_well_formed(const char *text, size_t len, int max_depth);

/** Reads back the inside of a quoted name (RD_ESC_QUOTED) into a new malloc'ed string owned by the caller
    (*out_len bytes, may be NULL). RD_E_PARSE for an unknown or malformed escape or a NUL byte. */
rd_status rd_text_unescape(const char *s, size_t len, char **out, size_t *out_len, rd_error *err);

/* ---------------------------------------------------------------------------------------------------
 * Files (fs_read.c, fs_write.c, fs_dir.c; docs/security.md). Every outside file rknn-diag reads is
 * opened through rd_file_open_read (or a function built on it), and every file it writes goes through
 * rd_atomic_file: a unique temporary file beside the target, created with O_EXCL|O_NOFOLLOW, written,
 * fsync'ed and renamed over the final name, so a planted symbolic link is never followed, two runs into
 * one folder never share a temporary file, and a failed write leaves nothing under the final name. The
 * test check_file_io fails when a source of simulator/, reports/ or analyzer/ opens, renames or
 * removes files another way.
 *
 *     rd_atomic_file *f;
 *     if (rd_atomic_file_open("out/notes.txt", NULL, &f, &err) != RD_OK) return err.code;
 *     fprintf(rd_atomic_file_stream(f), "%d layers\n", n);
 *     return rd_atomic_file_commit(f, &err);      // or rd_atomic_file_abort(f) on a failure of yours
 */

#define RD_FILE_NOFOLLOW 1u /* rd_file_open_read: refuse a path whose last component is a symbolic link */

/**
 * Opens path for reading without ever blocking: open(O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC), then
 * fstat; anything but a regular file is refused with RD_E_IO and a message naming the file and what it
 * is ("a FIFO (named pipe)", "a folder", "a character device", ...), so a FIFO given as an input never
 * hangs; then O_NONBLOCK is cleared. A file above max_bytes is RD_E_LIMIT, a missing one RD_E_NOTFOUND.
 * With RD_FILE_NOFOLLOW a symbolic link is refused (RD_E_IO). *out_fd (close it) and *out_size (may be
 * NULL) are set on success only.
 */
rd_status rd_file_open_read(const char *path, unsigned flags, uint64_t max_bytes, int *out_fd, uint64_t *out_size,
                            rd_error *err);

/**
 * Opens rel inside folder dir for reading without leaving it: rel must be relative and free of ".."
 * components (RD_E_PARSE otherwise), and every component is opened with O_NOFOLLOW from dir, so no
 * symbolic link inside dir is followed (RD_E_IO naming the link). dir itself is the caller's and may be a
 * link. Then the checks of rd_file_open_read. Used for paths that come from data (ONNX external data,
 * index.json, map_name_to_file.txt).
 */
rd_status rd_file_open_within(const char *dir, const char *rel, uint64_t max_bytes, int *out_fd, uint64_t *out_size,
                              rd_error *err);

/** rd_file_open_read as a stdio stream (fclose it). */
rd_status rd_file_fopen_read(const char *path, unsigned flags, uint64_t max_bytes, FILE **out, rd_error *err);

/**
 * Reads a whole file into a new malloc'ed buffer with a NUL after the last byte (*out_len excludes it);
 * dir NULL reads path as given (rd_file_open_read), otherwise path is confined to dir
 * (rd_file_open_within). The caller frees *out_buf.
 */
rd_status rd_file_read_all(const char *dir, const char *path, uint64_t max_bytes, char **out_buf, size_t *out_len,
                           rd_error *err);

typedef struct rd_write_options {
    unsigned mode;  /* permission bits, before the umask; 0 means 0644 */
    bool durable;   /* also fsync the folder after the rename (keys, files a later run relies on) */
    bool exclusive; /* never replace: RD_E_IO when the final name exists (a key created once) */
} rd_write_options;

typedef struct rd_atomic_file rd_atomic_file;

/**
 * Starts writing path: creates a temporary file ".NAME.XXXXXXXX.tmp" in path's folder (unique, O_EXCL |
 * O_NOFOLLOW, mode 0644 or opt->mode less the umask). opt may be NULL. Nothing appears under path until
 * rd_atomic_file_commit. *out is freed by commit or abort, whichever comes first.
 */
rd_status rd_atomic_file_open(const char *path, const rd_write_options *opt, rd_atomic_file **out, rd_error *err);

/** The stdio stream of the temporary file, for writers that format with fprintf. Valid until commit/abort. */
FILE *rd_atomic_file_stream(rd_atomic_file *f);

/** Appends len bytes; RD_E_IO naming the final path on failure (the file must then be aborted). */
rd_status rd_atomic_file_write(rd_atomic_file *f, const void *buf, size_t len, rd_error *err);

/**
 * Flushes, checks every earlier write, fsyncs, and renames the temporary file over path (fsync of the
 * folder with opt->durable). On any failure the temporary file is removed and path is left as it was.
 * Frees f in every case.
 */
rd_status rd_atomic_file_commit(rd_atomic_file *f, rd_error *err);

/** Removes the temporary file and frees f; path is left as it was. NULL does nothing. */
void rd_atomic_file_abort(rd_atomic_file *f);

/** Writes a whole buffer to path through rd_atomic_file (opt may be NULL). */
rd_status rd_file_write_atomic(const char *path, const void *buf, size_t len, const rd_write_options *opt,
                               rd_error *err);

#define RD_DIR_PARENTS 1u /* rd_dir_make: create missing parents too (mkdir -p) */
#define RD_DIR_OWN                                                                     \
    2u /* rd_dir_make: a folder rknn-diag makes inside an output folder: when the name \
          exists as a symbolic link it is refused, not followed */

/**
 * Creates folder path (mode 0777 less the umask); an existing folder is fine, an existing file is
 * RD_E_IO. Parents (RD_DIR_PARENTS) and a path given by the user may go through links; with RD_DIR_OWN
 * the last component must be a real folder.
 */
rd_status rd_dir_make(const char *path, unsigned flags, rd_error *err);

/**
 * Removes path and everything under it without following symbolic links: a link inside is removed,
 * never what it points to; files are removed relative to an open folder (unlinkat), so a folder swapped
 * for a link while we work is not entered. path itself being a symbolic link is refused (RD_E_IO: a
 * folder rknn-diag clears must be its own). A missing path is fine. Deeper than RD_MAX_TREE_DEPTH
 * is RD_E_LIMIT.
 */
rd_status rd_dir_remove_tree(const char *path, rd_error *err);

/**
 * Removes the folder path whose files the caller knows by name (name_of writes name k of n into buf), allocating
 * nothing, so it works when memory ran out too; files it does not name are left to rd_dir_remove_tree. Links are
 * removed, never followed.
 */
rd_status rd_dir_remove_named(const char *path, size_t n, void (*name_of)(void *user, size_t k, char *buf, size_t len),
                              void *user, rd_error *err);

/* ---------------------------------------------------------------------------------------------------
 * Dtypes. Values are ONNX's TensorProto.DataType numbers so that they map one to one.
 */

typedef enum rd_dtype {
    RD_DT_UNDEFINED = 0,
    RD_DT_F32 = 1,
    RD_DT_U8 = 2,
    RD_DT_I8 = 3,
    RD_DT_U16 = 4,
    RD_DT_I16 = 5,
    RD_DT_I32 = 6,
    RD_DT_I64 = 7,
    RD_DT_STRING = 8,
    RD_DT_BOOL = 9,
    RD_DT_F16 = 10,
    RD_DT_F64 = 11,
    RD_DT_U32 = 12,
    RD_DT_U64 = 13,
    RD_DT_BF16 = 16,
    RD_DT_COUNT = 24 /* table size: ONNX numbers 17..23 (float8, int4, ...) are known but unsupported */
} rd_dtype;

typedef struct rd_dtype_info {
    const char *name; /* ONNX-style name: "float32", "float16", "int8", ... */
    const char *npy;  /* numpy descr in little-endian form ("<f4", "|i1"), NULL if none */
    size_t size;      /* bytes per element, 0 if not a fixed-size numeric type */
    bool is_float;    /* floating point */
    bool is_signed;   /* signed integer or float */
    bool supported;   /* tensors of this dtype can be held and computed on */
} rd_dtype_info;

/** Facts about a dtype. Never NULL: unknown values get an entry with supported == false. */
const rd_dtype_info *rd_dtype_get(rd_dtype dt);

/** Convenience: the name of a dtype ("float32"); "dtype(N)" style names are not produced. */
const char *rd_dtype_name(rd_dtype dt);

/* IEEE half precision conversion, round to nearest even, overflow to inf, NaN kept. */
uint16_t rd_f32_to_f16(float f);
float rd_f16_to_f32(uint16_t h);
uint16_t rd_f32_to_bf16(float f);
float rd_bf16_to_f32(uint16_t h);

/* ---------------------------------------------------------------------------------------------------
 * Tensors: a plain struct. A tensor owns its data when it was allocated by rd_tensor_alloc (or
 * returned by a function documented to give ownership); rd_tensor_fini frees it.
 */

typedef struct rd_tensor {
    rd_dtype dtype;
    int rank;                  /* 0 for a scalar */
    int64_t dims[RD_MAX_RANK]; /* dims[0..rank-1], each >= 0 */
    void *data;                /* numel * dtype size bytes, row-major; NULL when numel == 0 */
} rd_tensor;

/** Number of elements (1 for a scalar, 0 if any dim is 0). */
int64_t rd_tensor_numel(const rd_tensor *t);

/** Bytes of data. */
size_t rd_tensor_nbytes(const rd_tensor *t);

/** Checks dims and computes numel*size against RD_MAX_TENSOR_BYTES without overflow. */
rd_status rd_shape_bytes(rd_dtype dt, int rank, const int64_t *dims, size_t *out_bytes, rd_error *err);

/** Allocates zeroed data for the given shape; t is overwritten (not freed first). */
rd_status rd_tensor_alloc(rd_tensor *t, rd_dtype dt, int rank, const int64_t *dims, rd_error *err);

/** Deep copy of src into dst (dst overwritten). */
rd_status rd_tensor_clone(rd_tensor *dst, const rd_tensor *src, rd_error *err);

/** Converts any numeric tensor to a new float32 tensor (dst overwritten). */
rd_status rd_tensor_to_f32(rd_tensor *dst, const rd_tensor *src, rd_error *err);

/** Frees data and resets t to an empty float32 scalar with no data. NULL is allowed. */
void rd_tensor_fini(rd_tensor *t);

/** Formats the shape as "1x3x224x224" ("scalar" for rank 0) into buf. Returns buf. */
const char *rd_shape_str(const rd_tensor *t, char *buf, size_t len);

/** The same for a declared shape: a dim named in dim_params (may be NULL) by its name, another negative one "?",
    rank 0 "scalar", an unknown rank (< 0) "?". Returns buf. */
const char *rd_dims_str(int rank, const int64_t *dims, const char *const *dim_params, char *buf, size_t len);

/* ---------------------------------------------------------------------------------------------------
 * .npy files: versions 1.0, 2.0 and 3.0; dtypes <f4 <f2 <f8 |i1 |u1 <i2 <u2 <i4 <u4 <i8 <u8 |b1
 * ('>' byte order converted); C and Fortran order (Fortran is transposed to C order on load);
 * 0-d and empty arrays.
 */

/** Parses an .npy image in memory. On success out owns new data. name is used in messages. The data must
    end where buf ends (bytes after it are RD_E_PARSE). */
rd_status rd_npy_parse(const void *buf, size_t len, const char *name, rd_tensor *out, rd_error *err);

/** Loads an .npy file: the header is read and checked first (dtype and shape held, data size equal to what
    is left in the file), then the data once, into out's own buffer. On success out owns new data. */
rd_status rd_npy_load(const char *path, rd_tensor *out, rd_error *err);

/** What a caller that knows the tensor expects of an .npy, checked on the header before the data is read. */
typedef struct rd_npy_expect {
    rd_dtype dtype;            /* RD_DT_UNDEFINED: any */
    int rank;                  /* -1: any */
    int64_t dims[RD_MAX_RANK]; /* dims[0..rank-1]; -1: any */
    int64_t numel;             /* 0: any; else the element count in whatever arrangement (a layout to convert) */
    const char *what;          /* for messages ("graph input 'image'"); NULL: "the caller" */
} rd_npy_expect;

/** rd_npy_load refusing, before reading the data, a file whose dtype or shape differs from want (RD_E_INVAL,
    naming the file, both shapes and want->what). want may be NULL. */
rd_status rd_npy_load_expect(const char *path, const rd_npy_expect *want, rd_tensor *out, rd_error *err);

/** rd_npy_load_expect of an .npy named in data (index.json): rel is opened inside dir (rd_file_open_within: no
    absolute path, no '..', no symbolic link followed), and its header is checked before any data is read. */
rd_status rd_npy_load_within(const char *dir, const char *rel, const rd_npy_expect *want, rd_tensor *out,
                             rd_error *err);

/** Serialises t as an .npy (version 1.0, C order) into a new malloc'ed buffer owned by the caller. */
rd_status rd_npy_write(const rd_tensor *t, void **out_buf, size_t *out_len, rd_error *err);

/** Saves t to path, through a temporary file renamed into place. */
rd_status rd_npy_save(const char *path, const rd_tensor *t, rd_error *err);

/** Parses a serialized ONNX TensorProto (a test_data_set_*.pb file). out owns new data. */
rd_status rd_tensorproto_parse(const void *buf, size_t len, const char *name, rd_tensor *out, char **out_name,
                               rd_error *err);

/**
 * Protobuf bytes of any schema (a protobuf-c descriptor: the model frontends' Caffe and TensorFlow files)
 * unpacked as the ONNX loader unpacks its own: a memory budget proportional to len and a nesting bound
 * checked on the wire bytes first. what names the format in messages ("not a valid Caffe protobuf ...").
 * RD_E_PARSE for malformed bytes, RD_E_LIMIT for size or depth. Free with rd_pb_msg_free.
 */
struct ProtobufCMessageDescriptor;
struct ProtobufCMessage;
typedef struct rd_pb_msg rd_pb_msg;
rd_status rd_pb_unpack(const struct ProtobufCMessageDescriptor *desc, const void *buf, size_t len, const char *what,
                       rd_pb_msg **out, rd_error *err);
/** The unpacked message (cast it to the generated type of desc); valid until rd_pb_msg_free. */
const struct ProtobufCMessage *rd_pb_msg_get(const rd_pb_msg *m);
void rd_pb_msg_free(rd_pb_msg *m);

/** Loads a TensorProto file; out_name (may be NULL) receives a malloc'ed tensor name. */
rd_status rd_tensorproto_load(const char *path, rd_tensor *out, char **out_name, rd_error *err);

/** Loads an IDX file (MNIST's format), plain or gzip-compressed. out owns new data. */
rd_status rd_idx_load(const char *path, rd_tensor *out, rd_error *err);

/* ---------------------------------------------------------------------------------------------------
 * Models: an ONNX graph, loaded, checked, topologically ordered, shape-inferred and constant-folded.
 */

typedef struct rd_model rd_model;

typedef struct rd_input_shape {
    const char *name; /* graph input name */
    int rank;
    int64_t dims[RD_MAX_RANK];
} rd_input_shape;

typedef struct rd_load_options {
    const rd_input_shape *input_shapes; /* overrides for symbolic or fixed input dims (may be NULL) */
    size_t n_input_shapes;
    const char *input_shapes_from; /* what messages call them; NULL: "--input-shape", the command line, whose
                                      mistakes are RD_E_USAGE; otherwise (a config file's list) RD_E_INVAL */
    bool allow_unsupported_ops;    /* load even if some ops are unknown (for inspect) */
    size_t max_nodes;              /* 0: RD_MAX_NODES; a lower limit (tests, fuzzers), never a higher one */
    size_t max_values;             /* 0: RD_MAX_VALUES; likewise */
    bool replace_fixed_dims;       /* input_shapes may change fixed dims too, as RKNN's input_size_list does
                                      (else only symbolic ones; the model's own value_info must not pin the
                                      old shapes: write it with rd_onnx_rewrite.drop_shapes) */
} rd_load_options;

/** Loads an ONNX model file; external data is read relative to the file's folder. */
rd_status rd_model_load(const char *path, const rd_load_options *opt, rd_model **out, rd_error *err);

/** Loads an ONNX model from memory; base_dir (may be NULL) is where external data is looked up. */
rd_status rd_model_load_mem(const void *buf, size_t len, const char *name, const char *base_dir,
                            const rd_load_options *opt, rd_model **out, rd_error *err);

void rd_model_destroy(rd_model *m);

/** A value (tensor) of the graph as known after loading. */
typedef struct rd_value_info {
    const char *name;
    rd_dtype dtype;
    int rank;                            /* -1 when unknown */
    int64_t dims[RD_MAX_RANK];           /* -1 for a dim not known before running */
    const char *dim_params[RD_MAX_RANK]; /* symbolic names of graph input dims, else NULL */
    bool is_constant;                    /* initializer, Constant node or folded at load */
    int producer;                        /* node index, -1 for graph inputs and initializers */
} rd_value_info;

typedef struct rd_node_info {
    const char *name; /* node name (may be "" in the model; never NULL) */
    const char *op_type;
    const char *domain; /* "" for the default domain */
    int opset;          /* opset version of the node's domain */
    int n_inputs, n_outputs;
    const int *inputs;  /* value indices, -1 for an omitted optional input */
    const int *outputs; /* value indices */
    bool supported;     /* an operator implementation exists */
    bool folded;        /* computed at load time (all inputs constant) */
    int64_t macs;       /* multiply-accumulates, 0 where not meaningful or unknown */
} rd_node_info;

int rd_model_ir_version(const rd_model *m);
int rd_model_opset(const rd_model *m, const char *domain); /* "" for the default domain; 0 if absent */
const char *rd_model_producer(const rd_model *m);
size_t rd_model_input_count(const rd_model *m);
size_t rd_model_output_count(const rd_model *m);
int rd_model_input(const rd_model *m, size_t i);  /* value index of real graph input i */
int rd_model_output(const rd_model *m, size_t i); /* value index of graph output i */
size_t rd_model_value_count(const rd_model *m);
size_t rd_model_node_count(const rd_model *m); /* nodes in execution (topological) order */
void rd_model_value(const rd_model *m, size_t i, rd_value_info *out);
void rd_model_node(const rd_model *m, size_t i, rd_node_info *out);
int rd_model_find_value(const rd_model *m, const char *name); /* -1 if absent */
/** A node's INTS attribute (Transpose's perm): true and *out_v (owned by m) when present with that type. */
bool rd_model_node_attr_ints(const rd_model *m, size_t node, const char *name, const int64_t **out_v, size_t *out_n);
/** Total number of weight elements (initializers and Constant nodes). */
int64_t rd_model_param_count(const rd_model *m);
/** The constant data of a value, or NULL when it is not constant. */
const rd_tensor *rd_model_constant(const rd_model *m, size_t value);
/** Attribute name of node i as an int / a float; false (out untouched) when absent or of another type. */
bool rd_model_node_attr_int(const rd_model *m, size_t node, const char *name, int64_t *out);
bool rd_model_node_attr_float(const rd_model *m, size_t node, const char *name, float *out);

/* ---------------------------------------------------------------------------------------------------
 * ONNX writer: builds a model in memory and serialises it (fixtures, the demo model, QDQ export,
 * onnx-edit). It writes what it is given without validating the graph, so tests can build broken
 * models on purpose; rd_model_load is the checker.
 *
 *     rd_onnx_builder *b = rd_onnx_builder_create(8, 17);
 *     const int64_t xdims[4] = {-1, 3, 224, 224};
 *     const char *const xparams[4] = {"batch", NULL, NULL, NULL};
 *     rd_onnx_add_input(b, "x", RD_DT_F32, 4, xdims, xparams);
 *     rd_onnx_add_initializer(b, "w", &w, RD_ONNX_RAW);
 *     rd_onnx_node *n = rd_onnx_add_node(b, "Conv", "conv1", (const char *const[]){"x", "w"}, 2,
 *                                        (const char *const[]){"y"}, 1);
 *     rd_onnx_attr_ints(n, "pads", (const int64_t[]){1, 1, 1, 1}, 4);
 *     rd_onnx_add_output(b, "y", RD_DT_F32, -1, NULL, NULL);
 *     rd_status st = rd_onnx_builder_save(b, "model.onnx", &err);
 *     rd_onnx_builder_destroy(b);
 *
 * Errors are sticky: every add/attr/set function returns a status and the builder keeps the first
 * failure (out of memory, a NULL name, an unsupported dtype), which rd_onnx_builder_write and
 * rd_onnx_builder_save report. Callers may check once, at the end. Functions accept a NULL builder or
 * node (after a failed add) and then do nothing but return an error.
 */

typedef struct rd_onnx_builder rd_onnx_builder;
typedef struct rd_onnx_node rd_onnx_node; /* a node of a builder, owned by it */

/** Where tensor data is written. */
typedef enum rd_onnx_storage {
    RD_ONNX_RAW = 0,   /* raw_data, little-endian (what exporters write) */
    RD_ONNX_TYPED = 1, /* the typed field the spec assigns: float_data, int32_data (also int8/16, uint8/16,
                          bool, float16 and bfloat16 bits), int64_data, double_data, uint64_data */
} rd_onnx_storage;

/**
 * A new empty model with the given IR version and default-domain opset (0: no opset_import entry,
 * as in IR 1/2 files). Producer is "rknn-diag". NULL when out of memory. Free with _destroy.
 */
rd_onnx_builder *rd_onnx_builder_create(int ir_version, int opset);
void rd_onnx_builder_destroy(rd_onnx_builder *b);

rd_status rd_onnx_set_producer(rd_onnx_builder *b, const char *name, const char *version);
rd_status rd_onnx_set_graph_name(rd_onnx_builder *b, const char *name);
/** Imports another operator set ("com.microsoft", 1). */
rd_status rd_onnx_add_opset(rd_onnx_builder *b, const char *domain, int version);

/**
 * Declares a graph input, output or intermediate value. rank -1 writes no shape; otherwise dims[i]
 * >= 0 is a fixed dim, and a negative dims[i] is symbolic when dim_params[i] names it, unknown when
 * not. dtype is written as its ONNX number. dim_params may be NULL; dims may be NULL when rank <= 0.
 */
rd_status rd_onnx_add_input(rd_onnx_builder *b, const char *name, rd_dtype dtype, int rank, const int64_t *dims,
                            const char *const *dim_params);
rd_status rd_onnx_add_output(rd_onnx_builder *b, const char *name, rd_dtype dtype, int rank, const int64_t *dims,
                             const char *const *dim_params);
rd_status rd_onnx_add_value_info(rd_onnx_builder *b, const char *name, rd_dtype dtype, int rank, const int64_t *dims,
                                 const char *const *dim_params);

/** Adds an initializer holding a copy of t (any supported dtype but string). */
rd_status rd_onnx_add_initializer(rd_onnx_builder *b, const char *name, const rd_tensor *t, rd_onnx_storage storage);

/**
 * Adds an initializer written exactly as given: any ONNX data_type number (int4, float8, ...), any
 * dims (negative ones included) and len bytes of raw_data (data may be NULL when len is 0). For dtypes
 * rd_tensor cannot hold, and for deliberately malformed test models.
 */
rd_status rd_onnx_add_initializer_raw(rd_onnx_builder *b, const char *name, int data_type, int rank,
                                      const int64_t *dims, const void *data, size_t len);

/**
 * Adds an initializer whose data lives in an external file (data_location EXTERNAL). Only the
 * reference is written; the caller writes the file. offset or length < 0 leaves that key out.
 */
rd_status rd_onnx_add_initializer_external(rd_onnx_builder *b, const char *name, rd_dtype dtype, int rank,
                                           const int64_t *dims, const char *location, int64_t offset, int64_t length);

/**
 * Appends a node. NULL entries of inputs/outputs are written as "" (an omitted optional input or
 * output); name may be NULL. Returns the node for attributes, or NULL on failure (sticky).
 */
rd_onnx_node *rd_onnx_add_node(rd_onnx_builder *b, const char *op_type, const char *name, const char *const *inputs,
                               int n_inputs, const char *const *outputs, int n_outputs);
rd_status rd_onnx_node_set_domain(rd_onnx_node *n, const char *domain);

rd_status rd_onnx_attr_int(rd_onnx_node *n, const char *name, int64_t v);
rd_status rd_onnx_attr_float(rd_onnx_node *n, const char *name, float v);
rd_status rd_onnx_attr_string(rd_onnx_node *n, const char *name, const char *v);
rd_status rd_onnx_attr_ints(rd_onnx_node *n, const char *name, const int64_t *v, size_t count);
rd_status rd_onnx_attr_floats(rd_onnx_node *n, const char *name, const float *v, size_t count);
rd_status rd_onnx_attr_strings(rd_onnx_node *n, const char *name, const char *const *v, size_t count);
rd_status rd_onnx_attr_tensor(rd_onnx_node *n, const char *name, const rd_tensor *t, rd_onnx_storage storage);

/** The builder's sticky status, with its message copied into err. */
rd_status rd_onnx_builder_status(const rd_onnx_builder *b, rd_error *err);

/** Serialises the model into a new malloc'ed buffer owned by the caller. */
rd_status rd_onnx_builder_write(const rd_onnx_builder *b, void **out_buf, size_t *out_len, rd_error *err);

/** Saves the model to path, through a temporary file renamed into place. */
rd_status rd_onnx_builder_save(const rd_onnx_builder *b, const char *path, rd_error *err);

/**
 * Writes a loaded model back as ONNX: opsets, inputs, outputs and known value shapes, initializers,
 * Constant-node values (as Constant nodes) and every node with its attributes, in execution order.
 * Values folded at load are not written as constants: the nodes that compute them are kept.
 */
rd_status rd_onnx_model_write(const rd_model *m, void **out_buf, size_t *out_len, rd_error *err);
rd_status rd_onnx_model_save(const rd_model *m, const char *path, rd_error *err);

/** What rd_onnx_builder_add_model leaves out or renames (a model tool's edit: onnx-edit). */
typedef struct rd_onnx_copy_options {
    const bool *drop_node;          /* rd_model_node_count(m) flags: true leaves node i out; may be NULL */
    const char *const *value_names; /* rd_model_value_count(m) entries: the name value i is written under
                                       wherever nodes read or write it, NULL to keep; may be NULL */
    bool no_io;                     /* leave out the graph inputs and outputs: the caller declares them */
} rd_onnx_copy_options;

/**
 * Appends a loaded model to b (created with rd_model_ir_version(m) and opset 0), as rd_onnx_model_write
 * writes it: producer, opset imports, graph inputs and outputs (unless opt->no_io), initializers,
 * Constant nodes, the nodes not dropped (in execution order, with their attributes) and the known
 * shapes of intermediate values (not those of dropped nodes' outputs). opt may be NULL (a plain copy).
 * Nodes the caller adds before or after keep their place, so the node list stays topologically sorted
 * when inserted layers go before (inputs) or after (outputs) the copy. Returns the builder's status.
 */
rd_status rd_onnx_builder_add_model(rd_onnx_builder *b, const rd_model *m, const rd_onnx_copy_options *opt,
                                    rd_error *err);

/**
 * What rd_onnx_model_rewrite changes while writing a loaded model back (the model tools: prune,
 * convert's subgraph cut). All fields may be zero/NULL: the result is then rd_onnx_model_write's.
 */
typedef struct rd_onnx_rewrite {
    const char *const *replace_names; /* constants (initializers, Constant-node values) written with new data */
    const rd_tensor *replace_tensors; /* n_replace tensors, any shape */
    size_t n_replace;
    bool drop_shapes;          /* no value_info for intermediate values (their shapes changed) */
    const char *const *inputs; /* cut: these values become the graph inputs (inferred dtype and shape) */
    size_t n_inputs;
    const char *const *outputs; /* cut: these values become the graph outputs */
    size_t n_outputs;
} rd_onnx_rewrite;

/**
 * rd_onnx_model_write with changes. With a cut (n_inputs or n_outputs > 0) only the nodes and constants
 * the outputs need are written, searching back from the outputs and stopping at the inputs; without
 * n_inputs the original inputs that are needed stay. RD_E_NOTFOUND for an unknown name, RD_E_INVAL for
 * a cut input that is a constant or a needed tensor that is neither a cut input nor computable.
 */
rd_status rd_onnx_model_rewrite(const rd_model *m, const rd_onnx_rewrite *rw, void **out_buf, size_t *out_len,
                                rd_error *err);

/** Serialises t as a TensorProto (raw_data) named name: the test_data_set_*.pb format. */
rd_status rd_tensorproto_write(const rd_tensor *t, const char *name, void **out_buf, size_t *out_len, rd_error *err);
rd_status rd_tensorproto_save(const char *path, const rd_tensor *t, const char *name, rd_error *err);

/* End of the ONNX writer section.
 * --------------------------------------------------------------------------------------------------- */

/* ---------------------------------------------------------------------------------------------------
 * Running. The observer is called for every tensor the moment it exists: first for every constant
 * value that a node produced or that was folded at load (node index of its producer, or -1 for
 * initializers when report_initializers is set), then for each node output in execution order. The
 * tensor passed is valid during the call only: copy what you keep. Returning an error stops the run.
 */

typedef struct rd_observed {
    const char *name; /* the raw ONNX tensor name */
    int value;        /* value index */
    int node;         /* producing node index, -1 for inputs and initializers */
    const char *node_name;
    const char *op_type; /* "" for inputs and initializers */
    const rd_tensor *tensor;
} rd_observed;

typedef rd_status (*rd_observer_fn)(void *user, const rd_observed *ev, rd_error *err);

/*
 * Threads. The kernels split each layer into tiles (output channel blocks, rows, GEMM column blocks) whose
 * bounds depend on the layer's shape only, and each output element is computed by the same operations
 * whatever thread runs its tile: results are bit-identical for any thread count. A pool is made once (per
 * command) and handed to every run; a pool busy with another run makes the second run compute on its own
 * thread, so one pool may be shared by concurrent runs.
 */
typedef struct rd_pool rd_pool;

/** CPUs this process may run on (sched_getaffinity), at least 1: the default thread count. */
int rd_cpu_count(void);

/**
 * A pool of `threads` threads in all, the caller included (threads - 1 are started; 0 means rd_cpu_count(),
 * 1 starts none). Destroy it with rd_pool_destroy once no run uses it. RD_E_INVAL beyond 1024 threads,
 * RD_E_NOMEM when a thread cannot be started.
 */
rd_status rd_pool_create(int threads, rd_pool **out, rd_error *err);
void rd_pool_destroy(rd_pool *p);
/** The thread count of p (1 for NULL). */
int rd_pool_threads(const rd_pool *p);
/** One task of rd_pool_for: worker is in [0, rd_pool_threads(pool)), for per-worker scratch. */
typedef void (*rd_pool_task_fn)(void *arg, int64_t task, int worker);
/**
 * Runs fn for every task in [0, n_tasks) on the pool's threads (the caller's among them) and returns when all
 * have finished; inline when pool is NULL or busy with another run. For the caller's own work between runs
 * (an observer's statistics): cut it into tasks by its size only, never by the thread count, and the result
 * does not depend on the thread count either.
 */
void rd_pool_for(rd_pool *pool, int64_t n_tasks, rd_pool_task_fn fn, void *arg);

/*
 * Buffers kept between runs. A run allocates every layer's output and the kernels' scratch afresh and
 * frees them at the end, so the next run takes its pages from the kernel again (page faults were a third
 * of a small model's time). Handed to run after run (rd_run_options.buffers), these keep the freed blocks
 * and give them back to later allocations of the same size: once the second run is done, a model whose
 * shapes do not change allocates nothing new. They hold at most what one run allocated in all (the
 * largest such total seen), never a graph output (those are the caller's). Only for code that runs
 * repeatedly; one run at a time per object (one per worker thread). Contents do not affect results.
 */
typedef struct rd_run_buffers rd_run_buffers;
rd_status rd_run_buffers_create(rd_run_buffers **out, rd_error *err);
void rd_run_buffers_destroy(rd_run_buffers *b);
/** Bytes b holds now (blocks and scratch), for statistics and tests; 0 for NULL. */
size_t rd_run_buffers_bytes(const rd_run_buffers *b);

typedef struct rd_run_options {
    rd_observer_fn observer; /* may be NULL */
    void *user;
    bool observe_inputs;      /* also report the graph inputs */
    bool report_initializers; /* also report initializers (weights) */
    int threads;              /* without a pool: 0 or 1 = one thread, N > 1 = a pool made for this run */
    rd_pool *pool;            /* the kernels' threads (may be NULL); wins over threads */
    rd_run_buffers *buffers;  /* memory kept from the previous run (may be NULL: none kept) */
} rd_run_options;

/**
 * Runs the model on n_inputs tensors given in graph input order (as rd_model_input). Graph outputs
 * are written to outputs[0..n_outputs-1] (n_outputs may be less than the model's output count, or 0
 * with outputs NULL); the caller finalises them with rd_tensor_fini.
 */
rd_status rd_model_run(rd_model *m, const rd_tensor *inputs, size_t n_inputs, const rd_run_options *opt,
                       rd_tensor *outputs, size_t n_outputs, rd_error *err);

/* ---------------------------------------------------------------------------------------------------
 * Simulation: the model after an NPU toolchain's compiler passes, run at FP16, INT8 (w8a8) or hybrid
 * precision. docs/numerics.md gives every rule. Tensors are observed as float32 (dequantized).
 *
 *     rd_sim_options so = {.precision = RD_PREC_INT8, .optimization_level = 3};
 *     rd_sim *s;
 *     rd_sim_create(model, &so, &s, &err);
 *     rd_calibrate(s, dataset_inputs, n_samples, &copt, &err);   // or rd_sim_set_range per tensor
 *     rd_sim_run(s, inputs, n_in, &ropt, outputs, n_out, &err);
 */

typedef enum rd_prec {
    RD_PREC_FP32 = 0,
    RD_PREC_FP16 = 1,
    RD_PREC_INT8 = 2,
    RD_PREC_INT16 = 3,
} rd_prec;

const char *rd_prec_name(rd_prec p); /* "float32", "float16", "int8", "int16" */

typedef struct rd_sim rd_sim;

typedef struct rd_sim_options {
    rd_prec precision;       /* RD_PREC_FP16 for a float16 build, RD_PREC_INT8 for w8a8, RD_PREC_INT16 for
                                w16a16i / w8a16 / w16a16i_dfp (rd_sim_options_for_dtype) */
    int optimization_level;  /* 0..3 (docs/numerics.md); 3 is RKNN's default */
    bool per_tensor_weights; /* quantized_method "layer" instead of "channel" */
    int weight_bits;         /* weights of the int16 layers: 16 (0 means 16), 8 (w8a16) or 4 (w4a16) */
    bool dfp;                /* int16 tensors and weights on power-of-two scales, zero point 0 (w16a16i_dfp) */
    bool asymmetric_weights; /* int8 weights asymmetric per channel (scale and zero point from each channel's
                                range, as the .rknn files of RKNN-Toolkit2 hold them); false: symmetric, zero
                                point 0 (docs/numerics.md, "Weights") */
} rd_sim_options;

/** Applies the compiler passes to a private copy of m (which the caller keeps and may destroy later). */
rd_status rd_sim_create(const rd_model *m, const rd_sim_options *opt, rd_sim **out, rd_error *err);
void rd_sim_destroy(rd_sim *s);

/** The optimised graph (read-only): value and node indices below refer to it. */
const rd_model *rd_sim_model(const rd_sim *s);

/** What the passes did with a tensor name of the original model. */
typedef struct rd_sim_tensor {
    int value;         /* index in the optimised graph, -1 if the tensor no longer exists */
    int fused_into;    /* value it was fused into (blank row in reports), -1 if not fused */
    bool materialized; /* held at its precision (false: a fused producer's output) */
    rd_prec precision; /* precision it is held in when materialised */
    bool quantized;    /* parameters of its precision set (by calibration, a cfg or rd_sim_set_range):
                          int8 ones, or int16 ones when precision is RD_PREC_INT16 */
    float scale;       /* activation parameters when quantized (of the tensor's precision) */
    int32_t zero_point;
    float min, max;   /* the range they came from */
    bool via_float16; /* output of one of RKNN's float16 ops inside an int8 model (Softmax): computed in
                         float16 and rounded to half, then held at `precision` (int8 for its readers, RKNN's
                         exDataConvert; float16 for a graph output) */
    /* Fusion groups (RKNN's passes at optimization level 3, or rd_sim_set_group). The strings are owned by
       s and stay valid until the next rd_sim_set_group, rd_sim_clear_groups, rd_sim_set_row_op or
       rd_sim_destroy. */
    int group_out;      /* the value holding the result of the group computing this tensor: the tensor itself
                           when materialised, the group's output for a fused-away one; -1 for a tensor that
                           no longer exists */
    const char *npu_op; /* the NPU op type of that group, as the board's layer table and dump names print it
                           (ConvExSwish, ConvAdd, ConvClip, Conv, exSoftmax13, ...); NULL for graph inputs and
                           constants */
    const char *row_op; /* the op type RKNN's accuracy_analysis prints in this tensor's [OpType] row: the
                           producer after RKNN's graph rewrites (Conv for a Gemm or a GlobalAveragePool,
                           Reshape for a Squeeze, exSwish, exSoftmax13); NULL for graph inputs, constants and
                           tensors folded away */
} rd_sim_tensor;

/** Looks a tensor of the original model up; RD_E_NOTFOUND with the closest names if unknown. */
rd_status rd_sim_tensor_get(const rd_sim *s, const char *name, rd_sim_tensor *out, rd_error *err);

/**
 * Declares one fused group as a built model has it (the next step: a .rknn's nodes, a build log's layer
 * table), replacing what the passes decided for those tensors: `out` is the tensor the group materialises,
 * inner[0..n_inner) the tensors inside it that are never materialised (not rounded to int8 or float16), npu_op
 * its NPU op type. The group's nodes are the producers of out and of the inner tensors; each of them takes
 * npu_op and computes at out's precision. Checks: every name exists and is produced by a node of the graph;
 * no inner tensor is a graph output or read by a node outside the group; out is not inside another group.
 * A tensor already inside another group must be released first (rd_sim_clear_groups). RD_E_NOTFOUND for an
 * unknown name (with the closest ones), RD_E_INVAL naming the tensor and the reader for a group that is not
 * closed. Invalidates rd_sim_prefix recordings.
 */
rd_status rd_sim_set_group(rd_sim *s, const char *npu_op, const char *out, const char *const *inner, size_t n_inner,
                           rd_error *err);
/** Makes every tensor of the optimised graph materialised again and every node its own group (NPU op = the
    op type of its row): the starting point for rd_sim_set_group from a built model. Folds (BatchNormalization,
    bias Adds) and row op types stay. */
rd_status rd_sim_clear_groups(rd_sim *s, rd_error *err);
/** Sets the op type of the row of tensor (that of its producer, shared by the producer's other outputs). */
rd_status rd_sim_set_row_op(rd_sim *s, const char *tensor, const char *op_type, rd_error *err);

/** Sets an activation's INT8 and INT16 parameters from a range (RKNN's rule and its int16 widening, dfp in a
    w16a16i_dfp simulation; docs/numerics.md) and keeps the range. */
rd_status rd_sim_set_range(rd_sim *s, const char *name, float min, float max, rd_error *err);
/** Sets an activation's INT8 parameters exactly (imported from a .quantization.cfg); its int16 parameters
    are derived from the int8 grid's range [scale * (-128 - zp), scale * (127 - zp)]. */
rd_status rd_sim_set_qparams(rd_sim *s, const char *name, float scale, int32_t zero_point, rd_error *err);
/** Sets an activation's INT16 parameters exactly (zero point in [-32768, 32767]); its int8 parameters are
    derived from the int16 grid's range. */
rd_status rd_sim_set_qparams16(rd_sim *s, const char *name, float scale, int32_t zero_point, rd_error *err);
/** Forces a tensor (and the layer producing it) to a precision: hybrid quantization. */
rd_status rd_sim_set_precision(rd_sim *s, const char *name, rd_prec p, rd_error *err);
/** Makes the layer producing a tensor compute in float16 (rounded to half) before the tensor is held at its
    precision (set it first with rd_sim_set_precision, which clears this): RKNN's float16 op with an
    exDataConvert after it, as a built model has it (rd_sim_tensor.via_float16). */
rd_status rd_sim_set_via_float16(rd_sim *s, const char *name, bool on, rd_error *err);

/** The weights of an integer layer (Conv, ConvTranspose, Gemm, MatMul with a constant float weight): int8
    ones, or those of an int16 layer (bits, q16). */
typedef struct rd_sim_weights {
    int value;                 /* the weight's value index (the node's input 1) */
    int axis;                  /* output-channel axis of the weight tensor */
    int64_t group;             /* ConvTranspose: channels split by groups over axis 0 (1 otherwise) */
    int n_scale;               /* 1 (per tensor) or one per output channel */
    const float *scale;        /* owned by s: valid until the next rd_sim_set_weight_scales or destroy */
    const int32_t *zero_point; /* n_scale zero points of asymmetric int8 weights (same lifetime); NULL when all
                                  are 0 (symmetric weights, and always for int16 layers) */
    const int8_t *q;           /* the int8 codes, in the weight's layout; same lifetime (NULL when bits > 8
                                  or the layer is an int16 one: see q16) */
    int bits;                  /* 8 for an int8 layer; an int16 layer's weight width (16, 8 for w8a16, 4 for
                                  w4a16) */
    const int16_t *q16;        /* an int16 layer's codes (any width), in the weight's layout; NULL otherwise */
} rd_sim_weights;

/**
 * The weights of node (an optimised-graph index), quantized on first use as a run would.
 * RD_E_NOTFOUND when the node is not an int8 or int16 Conv/ConvTranspose/Gemm/MatMul with a constant weight.
 */
rd_status rd_sim_weights_get(rd_sim *s, int node, rd_sim_weights *out, rd_error *err);

/**
 * Imports weight scales (symmetric, zero point 0): name is a weight tensor of the optimised graph (every
 * integer layer reading it) or the name of such a node. n is 1 (per tensor) or the channel count.
 */
rd_status rd_sim_set_weight_scales(rd_sim *s, const char *name, const float *scales, int n, rd_error *err);
/**
 * Imports an int8 layer's weight quantization as a built model holds it (a .rknn: asymmetric per channel):
 * name as rd_sim_set_weight_scales; n scales and zero points (1, or one per output channel; scales positive
 * and finite, zero points in -128..127). codes (may be NULL) are the int8 codes themselves, n_codes = the
 * weight's element count, in the float weight's layout: they replace what quantizing the float weight with
 * these parameters gives (a built model whose codes differ from ours). RD_E_INVAL for counts or values out
 * of range, naming the layer; RD_E_NOTFOUND as rd_sim_set_weight_scales.
 */
rd_status rd_sim_set_weight_quant(rd_sim *s, const char *name, const float *scales, const int32_t *zero_points, int n,
                                  const int8_t *codes, size_t n_codes, rd_error *err);

/**
 * The same for scales written for `bits`-bit weights (8 or 16, the cfg entry's dtype): a layer whose
 * weights end up with another width (a tensor moved to int16 after the file was written) ignores them and
 * quantizes its weights from their values.
 */
rd_status rd_sim_set_weight_scales_bits(rd_sim *s, const char *name, const float *scales, int n, int bits,
                                        rd_error *err);

/**
 * Writes the optimised graph as ONNX with QuantizeLinear/DequantizeLinear pairs carrying the
 * simulation's parameters (docs/numerics.md, "QDQ export"): every materialised int8 activation and graph
 * input, int8 weights through DequantizeLinear (per channel: opset raised to 13 where safe), Conv biases
 * as int32, float16 tensors through Cast (float16 layers read their constants rounded to half). The
 * buffer is malloc'ed, owned by the caller; notes (may be NULL) receives what was changed (opset raised,
 * weights kept in float).
 */
struct rd_warn_sink;
rd_status rd_sim_export_qdq(rd_sim *s, void **out_buf, size_t *out_len, const struct rd_warn_sink *notes,
                            rd_error *err);

/** How rd_sim_export_qdq_form writes the layers the INT8 simulator computes in int32. */
typedef enum rd_qdq_form {
    RD_QDQ_FORM_QDQ = 0, /* Conv/Gemm/MatMul on DequantizeLinear weights: the runtime accumulates in float */
    RD_QDQ_FORM_INTEGER, /* ConvInteger/MatMulInteger on uint8 codes, int32 bias Added, the accumulator
                            scaled back in double as the simulator does: the runtime reproduces it exactly */
} rd_qdq_form;

/**
 * rd_sim_export_qdq in the given form. In RD_QDQ_FORM_INTEGER, a layer that has no integer ONNX
 * operator (ConvTranspose, Gemm with transA, ...) stays in QDQ form, and notes says which and why.
 */
rd_status rd_sim_export_qdq_form(rd_sim *s, rd_qdq_form form, void **out_buf, size_t *out_len,
                                 const struct rd_warn_sink *notes, rd_error *err);

/** The precision node (an optimised-graph index) computes in: that of the tensor its fused group
    materialises, float16 for RKNN's float16 ops inside an int8 model (rd_sim_tensor.via_float16). */
rd_prec rd_sim_node_precision(const rd_sim *s, int node);

/**
 * RKNN's exDataConvert of tensor name to precision p, in place on n values x, as the simulation converts
 * it for a reader computing at p: RD_PREC_FP16 rounds to half; RD_PREC_INT8 puts the values on the tensor's
 * own int8 grid (its parameters must be set: RD_E_INVAL otherwise); other precisions change nothing.
 */
rd_status rd_sim_convert(const rd_sim *s, const char *name, rd_prec p, float *x, int64_t n, rd_error *err);

/** Per-layer facts gathered by the last rd_sim_run (reset at each run). */
typedef struct rd_sim_layer_stats {
    int64_t fp16_overflow;    /* values that became inf when rounded to float16 */
    int64_t fp16_first_index; /* flat index of the first, -1 if none */
    double fp16_max_abs;      /* largest magnitude before rounding */
    int64_t saturated;        /* int8 values clamped at -128 or 127 */
    int64_t rounded_to_zero;  /* non-zero values that quantized to the zero point */
    int64_t count;            /* elements */
} rd_sim_layer_stats;

/** Stats of value (an optimised-graph index) from the last run; zeroed if none. */
void rd_sim_layer_stats_get(const rd_sim *s, int value, rd_sim_layer_stats *out);

/** Runs the simulation; inputs and outputs as rd_model_run (float32 graph tensors). */
rd_status rd_sim_run(rd_sim *s, const rd_tensor *inputs, size_t n_inputs, const rd_run_options *opt, rd_tensor *outputs,
                     size_t n_outputs, rd_error *err);

/**
 * The threads of s's runs whose options name no pool, and of rd_sim_analyze (NULL: one thread; rd_calibrate
 * has its own, rd_calib_options.threads, one sample per thread). s does not own pool: destroy it after s, or set
 * another first. Results do not depend on it.
 */
void rd_sim_set_pool(rd_sim *s, rd_pool *pool);
/** The pool set by rd_sim_set_pool (NULL: none), for the caller's float32 reference runs of the same command. */
rd_pool *rd_sim_pool(const rd_sim *s);

/*
 * Prefix reuse: a search that measures many configurations of one simulation on the same inputs need not
 * recompute what did not change. A recording (rd_sim_prefix, one per input sample) keeps the activations
 * of one run as the following nodes read them, with the configuration they were made with; a later run
 * starts at the first node (in topological order) that reads or writes a tensor whose precision or int8
 * parameters differ from the recording's, seeding the live tensors from it. Outputs and layer stats are
 * bit-identical to rd_sim_run's. Weight scales and faults set after the recording, other inputs or another
 * simulation void it (a full run); the thread count does not matter (results do not depend on it).
 *
 * Memory: the recording holds the float32 outputs of a prefix of the nodes, up to max_bytes (outputs nobody
 * reads are not kept): at most the sum of one run's activations (27 MB for ultraface_rfb320). A smaller
 * cap records only the first nodes, and runs then resume no later than where it stops. A tentative run
 * (RD_PREFIX_TRY) holds what it computed in a second area of up to max_bytes until the next run, so the
 * peak is twice max_bytes.
 *
 *     rd_sim_prefix *p;
 *     rd_sim_prefix_create(256u << 20, &p, &err);
 *     rd_sim_run_prefix(s, p, RD_PREFIX_RECORD, in, n_in, &ro, outs, n_out, &err);  // the baseline
 *     rd_sim_set_precision(s, "late_tensor", RD_PREC_FP16, &err);
 *     rd_sim_run_prefix(s, p, RD_PREFIX_TRY, in, n_in, &ro, outs, n_out, &err);     // from its producer
 *     rd_sim_prefix_commit(p);   // keep it: the baseline is now the set with late_tensor in float16
 */
typedef struct rd_sim_prefix rd_sim_prefix;

/** An empty recording holding at most max_bytes of activations (0: never records). Free with destroy. */
rd_status rd_sim_prefix_create(size_t max_bytes, rd_sim_prefix **out, rd_error *err);
/** Frees the recording. NULL is allowed. Destroy it before the simulation it recorded. */
void rd_sim_prefix_destroy(rd_sim_prefix *p);

typedef struct rd_sim_prefix_stats {
    size_t bytes;            /* activations held now (recording and tentative run) */
    int nodes_recorded;      /* resume is possible at nodes 0..this (optimised-graph node indices) */
    uint64_t runs;           /* rd_sim_run_prefix calls so far */
    uint64_t nodes_computed; /* nodes those runs computed */
    uint64_t nodes_reused;   /* nodes they took from the recording (computed + reused: full runs' count) */
} rd_sim_prefix_stats;

void rd_sim_prefix_stats_get(const rd_sim_prefix *p, rd_sim_prefix_stats *out);

typedef enum rd_prefix_mode {
    RD_PREFIX_USE = 0, /* resume from the recording, leave it as it is */
    RD_PREFIX_RECORD,  /* resume, and this run replaces the recording */
    RD_PREFIX_TRY,     /* resume, and keep this run aside for rd_sim_prefix_commit (a RECORD when
                          there is no usable recording) */
    /* or'ed with one of the above: the run leaves the simulation's layer stats alone (read them with
       rd_sim_prefix_layer_stats_get), so runs through different recordings may proceed on several threads
       at once, after rd_sim_prepare and while nobody changes the simulation */
    RD_PREFIX_CONCURRENT = 0x100,
} rd_prefix_mode;

/**
 * rd_sim_run, starting from p's recording where it matches (see above). Every call first drops the
 * previous tentative run. p NULL, or an observer in opt (every node must be shown): a plain rd_sim_run.
 * On failure outputs are freed; a failed RECORD leaves p without a recording (the next run is a full one).
 */
rd_status rd_sim_run_prefix(rd_sim *s, rd_sim_prefix *p, rd_prefix_mode mode, const rd_tensor *inputs, size_t n_inputs,
                            const rd_run_options *opt, rd_tensor *outputs, size_t n_outputs, rd_error *err);

/** Stats of value from the last rd_sim_run_prefix through p (as rd_sim_layer_stats_get); zeroed if none. */
void rd_sim_prefix_layer_stats_get(const rd_sim_prefix *p, int value, rd_sim_layer_stats *out);

/**
 * Prepares what runs otherwise prepare on first use, for every node at its present precision (float16
 * copies of constants, int8 weights). Afterwards runs only read the simulation until its configuration
 * changes: RD_PREFIX_CONCURRENT runs may then share it across threads.
 */
rd_status rd_sim_prepare(rd_sim *s, rd_error *err);

/**
 * Makes the last run, if it was a successful RD_PREFIX_TRY, the recording (its activations are moved, not
 * copied). Returns false when there was none to keep (then the recording is unchanged). NULL is allowed.
 */
bool rd_sim_prefix_commit(rd_sim_prefix *p);

/**
 * One tensor of an analysis (rd_sim_analyze). All three tensors are float32 of the same shape, valid
 * during the call only: golden (the float32 reference), entire (the simulation end to end) and single
 * (this layer simulated alone on the golden values of its inputs held at their precision). For graph
 * inputs single is the input held at its precision. Not materialised tensors (a fused producer's
 * output) are reported too, with materialized false.
 */
typedef struct rd_sim_event {
    const char *name;
    int value;           /* optimised-graph value index (rd_sim_layer_stats_get) */
    int node;            /* producing node, -1 for graph inputs */
    const char *op_type; /* "" for graph inputs */
    bool materialized;
    const rd_tensor *golden;
    const rd_tensor *entire;
    const rd_tensor *single;
    const rd_tensor *runtime;    /* the board's tensor (rd_sim_analyze_ex with a runtime), NULL if not dumped */
    const rd_tensor *single_sim; /* this layer simulated on the board's own inputs, NULL when any is missing */
} rd_sim_event;

typedef rd_status (*rd_sim_event_fn)(void *user, const rd_sim_event *ev, rd_error *err);

/**
 * The board's value of an optimised-graph value (float32, the value's shape), or NULL when the board did
 * not dump it. The tensor must stay valid until the analysis returns.
 */
typedef const rd_tensor *(*rd_runtime_fn)(void *user, int value);

/**
 * Runs golden, entire and single together, node by node, streaming each tensor to fn and freeing it
 * after its last consumer (never all activations at once). The golden is computed on the optimised
 * graph: the original model's values except where BatchNormalization was folded (float rounding).
 */
rd_status rd_sim_analyze(rd_sim *s, const rd_tensor *inputs, size_t n_inputs, rd_sim_event_fn fn, void *user,
                         rd_error *err);

/**
 * rd_sim_analyze with the board's tensors: each event also carries runtime (runtime(runtime_user, value))
 * and single_sim, the layer's simulation fed the board's values of its inputs held at their precision
 * (RKNN's runtime_error.single_sim): where the board departs from the simulator for this layer alone.
 */
rd_status rd_sim_analyze_ex(rd_sim *s, const rd_tensor *inputs, size_t n_inputs, rd_sim_event_fn fn, void *user,
                            rd_runtime_fn runtime, void *runtime_user, rd_error *err);

/**
 * Faults of an emulated board (rknn-diag board-run, docs/board.md): one materialised tensor computed
 * wrongly, as an NPU runtime bug would. Applied where the tensor materialises, after its normal rounding,
 * so every later layer (and rd_sim_analyze's single pass) sees the faulty values.
 */
typedef enum rd_sim_fault_kind {
    RD_FAULT_GAIN = 0,      /* values x1.25, then held at the tensor's precision again (int8 grid) */
    RD_FAULT_SATURATE,      /* clamped to half its int8 range each side of 0: an accumulator saturating early */
    RD_FAULT_SWAP_CHANNELS, /* channels 0 and 1 of axis 1 exchanged */
    RD_FAULT_FP16,          /* rounded to float16 where it should be int8 codes */
    RD_FAULT_COUNT
} rd_sim_fault_kind;

/** "gain", "saturate", "swap-channels", "fp16". */
const char *rd_sim_fault_name(rd_sim_fault_kind k);
/** The inverse of rd_sim_fault_name; RD_E_INVAL listing the valid names. */
rd_status rd_sim_fault_parse(const char *name, rd_sim_fault_kind *out, rd_error *err);

/**
 * Injects a fault into tensor (a name of the original or optimised graph) for every later run.
 * RD_E_NOTFOUND for an unknown name (with the closest ones); RD_E_INVAL for a tensor that is not a
 * materialised float activation (fused away: the message names the tensor to use instead). Several
 * faults on one tensor apply in the order added. A swap needs 2 channels on axis 1: checked at run time.
 */
rd_status rd_sim_add_fault(rd_sim *s, const char *tensor, rd_sim_fault_kind kind, rd_error *err);

/** True when value (an optimised-graph index) has a fault of kind. */
bool rd_sim_has_fault(const rd_sim *s, int value, rd_sim_fault_kind kind);

/* ---------------------------------------------------------------------------------------------------
 * Calibration: activation ranges of every materialised tensor of a simulation over a dataset, streamed
 * (running min/max and histograms, never stored activations), on several threads.
 */

typedef enum rd_calib_method {
    RD_CALIB_NORMAL = 0, /* min/max */
    RD_CALIB_KL = 1,     /* kl_divergence: histogram threshold minimising KL divergence */
    RD_CALIB_MMSE = 2,   /* clipping range minimising quantize-dequantize squared error */
} rd_calib_method;

typedef void (*rd_progress_fn)(void *user, size_t done, size_t total);

typedef struct rd_calib_options {
    rd_calib_method method;
    int threads;             /* samples at once; 0 = rd_cpu_count() */
    rd_progress_fn progress; /* may be NULL; called from the calling thread */
    void *progress_user;
} rd_calib_options;

/**
 * Supplies sample k: fills inputs[0..n_inputs-1] (float32 graph tensors, already preprocessed) with
 * tensors the calibration frees. Called from worker threads: must be thread-safe.
 */
typedef rd_status (*rd_sample_fn)(void *user, size_t k, rd_tensor *inputs, rd_error *err);

/**
 * Calibrates s on n_samples samples: runs the optimised graph in float32 on each, gathers the ranges
 * (and histograms) of every materialised tensor, graph inputs included, and sets their INT8 parameters
 * with rd_sim_set_range. Results do not depend on the thread count.
 */
rd_status rd_calibrate(rd_sim *s, rd_sample_fn get_sample, void *user, size_t n_samples, const rd_calib_options *opt,
                       rd_error *err);

/* ---------------------------------------------------------------------------------------------------
 * RKNN inputs: images and .npy files read as RKNN-Toolkit2 reads calibration and accuracy inputs, and
 * dataset.txt lists. See docs/inputs.md.
 *
 *     rd_input_spec spec = RD_INPUT_SPEC_DEFAULT;        // NHWC .npy, mean 0, std 1, no RGB2BGR
 *     spec.n_mean = 3; spec.mean[0] = 123.675f; ...
 *     int64_t dims[4] = {1, 3, 224, 224};
 *     rd_tensor x;
 *     rd_input_prepare("cat.jpg", &spec, 4, dims, NULL, &x, &err);  // float32 1x3x224x224
 */

#define RD_DEFAULT_IMAGE_PIXELS                                                                             \
    ((uint64_t)1 << 26)                         /* 67 M pixels (8192 x 8192): photos of phones and cameras; \
                                                 larger images are refused unless the caller raises it */
#define RD_MAX_IMAGE_PIXELS ((uint64_t)1 << 28) /* 268 M pixels: the most any caller may allow */
#define RD_MAX_IMAGE_FILE_BYTES ((size_t)1 << 30)
#define RD_MAX_INPUT_CHANNELS 64 /* mean_values/std_values entries per input */
#define RD_MAX_MODEL_INPUTS 32   /* inputs per model in configs and dataset lines */
#define RD_MAX_DATASET_BYTES ((size_t)64 << 20)
#define RD_MAX_DATASET_SAMPLES ((size_t)1 << 20)

/** Callback receiving warnings (a resize, a colour conversion). msg is valid during the call only. */
typedef void (*rd_warn_fn)(void *user, const char *msg);
typedef struct rd_warn_sink {
    rd_warn_fn fn; /* may be NULL: warnings are dropped */
    void *user;
} rd_warn_sink;

/**
 * Decodes a PNG, JPEG or BMP image (recognised by its first bytes, not its name) into a new uint8
 * tensor of shape H x W x C in RGB order, C = 1 for grey images and 3 otherwise (alpha is dropped, as
 * OpenCV's imread does; 16-bit samples keep their high byte). max_pixels bounds W*H (0 means
 * RD_DEFAULT_IMAGE_PIXELS, larger values are capped at RD_MAX_IMAGE_PIXELS); the dimensions in the
 * header are checked before any pixel buffer exists, so a small file claiming a huge picture costs
 * nothing. name is used in messages. RD_E_PARSE for undecodable or truncated data,
 * RD_E_LIMIT for absurd dimensions, RD_E_UNSUPPORTED for valid but unhandled variants (CMYK JPEG,
 * RLE BMP). On success out owns new data.
 */
rd_status rd_image_parse(const void *buf, size_t len, const char *name, uint64_t max_pixels, rd_tensor *out,
                         rd_error *err);

/** rd_image_parse on a file's contents, with the default pixel bound. */
rd_status rd_image_load(const char *path, rd_tensor *out, rd_error *err);
/** The same with a pixel bound (0: RD_DEFAULT_IMAGE_PIXELS), as rd_image_parse. */
rd_status rd_image_load_max(const char *path, uint64_t max_pixels, rd_tensor *out, rd_error *err);

/** True when path names an image by extension (.png .jpg .jpeg .bmp, any case); .npy is not one. */
bool rd_path_is_image(const char *path);

typedef enum rd_input_layout {
    RD_LAYOUT_NHWC = 0, /* .npy files are NHWC (rank 4) or HWC (rank 3), as RKNN reads them */
    RD_LAYOUT_NCHW = 1, /* .npy files are already in the graph's NCHW layout (--input-layout nchw) */
} rd_input_layout;

/** How one model input is prepared: RKNN's mean_values, std_values and quant_img_RGB2BGR. */
typedef struct rd_input_spec {
    rd_input_layout layout;
    size_t n_mean; /* 0: all 0; otherwise must equal the input's channel count */
    float mean[RD_MAX_INPUT_CHANNELS];
    size_t n_std; /* 0: all 1; otherwise must equal the input's channel count */
    float std[RD_MAX_INPUT_CHANNELS];
    bool rgb2bgr;              /* swap channels 0 and 2 of 3-channel images before mean/std */
    uint64_t max_image_pixels; /* bound on W*H of images (0: RD_DEFAULT_IMAGE_PIXELS; --max-image-pixels) */
} rd_input_spec;

#define RD_INPUT_SPEC_DEFAULT ((rd_input_spec){.layout = RD_LAYOUT_NHWC})

/**
 * Turns a source tensor into the graph input of shape dims (rank 4 NCHW with N == 1 for images;
 * any rank for .npy data). src is either a decoded image (is_image: uint8 HWC from rd_image_parse)
 * or .npy data (any numeric dtype, layout per spec). Images: grey to 3 channels (or RGB to grey with
 * ITU-R 601 weights) where the model wants it, bilinear resize with half-pixel centres (OpenCV's
 * INTER_LINEAR, align_corners false) when the size differs, each reported through warn; then RGB2BGR,
 * then (x - mean) / std per channel. .npy data is never resized: a shape that fits only the other
 * layout is an RD_E_PARSE naming --input-layout; mean/std of the wrong length are RD_E_PARSE too.
 * name is used in messages. out is a new float32 tensor.
 */
rd_status rd_input_prepare_tensor(const rd_tensor *src, bool is_image, const char *name, const rd_input_spec *spec,
                                  int rank, const int64_t *dims, const rd_warn_sink *warn, rd_tensor *out,
                                  rd_error *err);

/** Loads path (an image by extension, otherwise .npy) and prepares it as rd_input_prepare_tensor. */
rd_status rd_input_prepare(const char *path, const rd_input_spec *spec, int rank, const int64_t *dims,
                           const rd_warn_sink *warn, rd_tensor *out, rd_error *err);

/**
 * A dataset.txt list: one sample per line, n_inputs paths per sample separated by spaces or tabs,
 * relative paths resolved against the list's folder. Empty lines and lines whose first non-blank
 * character is '#' are skipped; a first line "# rknn-diag: layout=graph" sets graph_layout. lines[i] is the 1-based
 * line of sample i, for messages.
 */
typedef struct rd_dataset {
    char *path; /* the list file, for messages */
    size_t n_samples;
    size_t n_inputs;   /* paths per sample */
    char **paths;      /* n_samples * n_inputs resolved paths, sample-major */
    int *lines;        /* n_samples line numbers */
    bool graph_layout; /* first line "# rknn-diag: layout=graph": .npy files are graph tensors
                          (read as --input-layout nchw), as onnx-edit --dataset writes them */
} rd_dataset;

/**
 * Loads a dataset list. n_inputs 0 takes the count of the first sample and requires it everywhere.
 * Checks that every named file exists (RD_E_NOTFOUND naming list, line and path); a line with the
 * wrong number of paths is RD_E_PARSE, and so is a list without samples. out is empty after a failure
 * (rd_dataset_fini is harmless either way).
 */
rd_status rd_dataset_load(const char *path, size_t n_inputs, rd_dataset *out, rd_error *err);

/** Parses a list in memory; base_dir resolves relative paths (NULL: keep them); check_files stats each. */
rd_status rd_dataset_parse(const char *buf, size_t len, const char *name, const char *base_dir, size_t n_inputs,
                           bool check_files, rd_dataset *out, rd_error *err);

void rd_dataset_fini(rd_dataset *ds);

/** Path of input i of sample s. */
const char *rd_dataset_path(const rd_dataset *ds, size_t sample, size_t input);

/* ---------------------------------------------------------------------------------------------------
 * RKNN configuration: target platforms, quantization dtypes, algorithms and methods, and the
 * rknn_convert model config (model_config.yml). See docs/config.md.
 */

/** Quantization dtypes (RKNN's quantized_dtype). RD_QDT_FLOAT32 is our unquantized reference. */
typedef enum rd_qdtype {
    RD_QDT_FLOAT32 = 0,
    RD_QDT_W8A8,
    RD_QDT_FLOAT16,
    RD_QDT_W8A16,
    RD_QDT_W4A16,
    RD_QDT_W16A16I,
    RD_QDT_W16A16I_DFP,
    RD_QDT_COUNT
} rd_qdtype;

typedef enum rd_qalgo {
    RD_QALGO_NORMAL = 0,
    RD_QALGO_KL_DIVERGENCE,
    RD_QALGO_MMSE,
    RD_QALGO_GDQ,
    RD_QALGO_COUNT
} rd_qalgo;

typedef enum rd_qmethod { RD_QMETHOD_CHANNEL = 0, RD_QMETHOD_LAYER, RD_QMETHOD_GROUP, RD_QMETHOD_COUNT } rd_qmethod;

/** Canonical names: "w8a8", "float16", ...; "normal", "kl_divergence", ...; "channel", "layer", "group". */
const char *rd_qdtype_name(rd_qdtype dt);
const char *rd_qalgo_name(rd_qalgo a);
const char *rd_qmethod_name(rd_qmethod m);

/** RKNN dtype names and aliases (asymmetric_quantized-8 = w8a8). RD_E_INVAL listing the valid names. */
rd_status rd_qdtype_parse(const char *name, rd_qdtype *out, rd_error *err);
/**
 * The simulation options of a dtype (precision, weight_bits, dfp; the other fields left as they are):
 * float32, float16, w8a8, w16a16i, w8a16, w4a16 (int4 weights per channel or tensor), w16a16i_dfp.
 */
rd_status rd_sim_options_for_dtype(rd_qdtype dt, rd_sim_options *o, rd_error *err);
/** The options s was created with. */
const rd_sim_options *rd_sim_get_options(const rd_sim *s);

/** `run --precision`: fp32, fp16 (= float16), int8 (= w8a8), int16 (= w16a16i), or any rd_qdtype_parse name. */
rd_status rd_precision_parse(const char *name, rd_qdtype *out, rd_error *err);
rd_status rd_qalgo_parse(const char *name, rd_qalgo *out, rd_error *err);
/** channel, layer, or group{SIZE} (group128); *out_group_size gets SIZE (0 otherwise; may be NULL). */
rd_status rd_qmethod_parse(const char *name, rd_qmethod *out, int *out_group_size, rd_error *err);

/** A target chip profile (RKNN's target_platform). */
typedef struct rd_platform_info {
    const char *name;       /* "rk3588" */
    unsigned dtypes;        /* bit (1u << rd_qdtype) for each supported dtype */
    const char *dump_dir;   /* default RKNN_DUMP_DIR on the board */
    bool dump_dir_inferred; /* true where rknn-formats.md does not state it for this chip */
    int c2_int8, c2_f16;    /* NC1HWC2 C2 for int8 and float16/int16 dumps; 0 when not documented */
} rd_platform_info;

size_t rd_platform_count(void);
const rd_platform_info *rd_platform_get(size_t i);
/** Case-insensitive lookup ("RK3588" works); NULL if unknown. */
const rd_platform_info *rd_platform_find(const char *name);
bool rd_platform_supports(const rd_platform_info *p, rd_qdtype dt);

/** One shape (input_size_list entries, dynamic_input shapes). */
typedef struct rd_dims {
    int rank;
    int64_t dims[RD_MAX_RANK];
} rd_dims;

/** Per-channel values of one input (mean_values or std_values). */
typedef struct rd_channel_values {
    size_t n;
    float v[RD_MAX_INPUT_CHANNELS];
} rd_channel_values;

/** An rknn_convert model config. Lines are 1-based positions in the file (0: key absent). */
typedef struct rd_rknn_config {
    char *path;            /* the .yml file */
    char *name;            /* models.name */
    char *framework;       /* models.platform: "onnx", "pytorch", ... */
    char *model_file_path; /* resolved against the .yml's folder */
    bool quantize;
    char *dataset;         /* resolved against the .yml's folder; NULL when absent */
    char *target_platform; /* configs.target_platform (rknn.config option); NULL when absent */
    rd_qdtype dtype;       /* quantized_dtype (w8a8 by default when quantize, float16 otherwise) */
    rd_qalgo algorithm;
    rd_qmethod method;
    int group_size;         /* for RD_QMETHOD_GROUP */
    int optimization_level; /* 0..3, 3 by default */
    size_t n_mean;          /* inputs given in mean_values */
    rd_channel_values mean[RD_MAX_MODEL_INPUTS];
    size_t n_std;
    rd_channel_values std[RD_MAX_MODEL_INPUTS];
    size_t n_rgb2bgr; /* entries given in quant_img_RGB2BGR (0: absent) */
    bool rgb2bgr_all; /* a single bool was given: rgb2bgr[] holds it for every input */
    bool rgb2bgr[RD_MAX_MODEL_INPUTS];
    size_t n_input_size_list; /* subgraphs.input_size_list */
    rd_dims *input_size_list;
    size_t n_sub_inputs, n_sub_outputs;
    char **sub_inputs, **sub_outputs; /* subgraphs.inputs and .outputs */
    char *custom_string;
    size_t n_dynamic_sets, n_dynamic_per_set; /* dynamic_input: sets of per-input shapes */
    rd_dims *dynamic_input;                   /* n_dynamic_sets * n_dynamic_per_set */
    bool model_pruning;                       /* configs.model_pruning: lossless pruning before the analysis */
    char **notes;   /* "file:line: ..." for keys accepted without effect and unknown keys (ignored) */
    size_t n_notes; /* at most RD_RKNN_CONFIG_MAX_NOTES */
    int line_models, line_target_platform, line_dtype, line_algorithm, line_method, line_mean, line_std, line_rgb2bgr,
        line_dataset, line_optimization_level, line_dynamic_input, line_input_size_list, line_subgraphs,
        line_model_pruning;
} rd_rknn_config;

#define RD_RKNN_CONFIG_MAX_NOTES 64

/** Resets c to the defaults (w8a8/normal/channel/level 3, no strings) without freeing. */
void rd_rknn_config_init(rd_rknn_config *c);

/**
 * Loads a model_config.yml. Wrong types and YAML syntax errors are RD_E_PARSE with "file:line[:col]" and
 * the key; bad names (dtype, algorithm, method) RD_E_PARSE too. Every rknn.config() option of
 * RKNN-Toolkit2 is known: applied, accepted with a note when it cannot change a result, or refused
 * (RD_E_UNSUPPORTED, saying why) when set to something that is not simulated. Unknown keys are notes
 * (out->notes), not errors. out is initialised even on failure; finalise with rd_rknn_config_fini.
 */
rd_status rd_rknn_config_load(const char *path, rd_rknn_config *out, rd_error *err);
/** The same from memory; name is used in messages and its folder resolves relative paths. */
rd_status rd_rknn_config_parse(const char *buf, size_t len, const char *name, rd_rknn_config *out, rd_error *err);
void rd_rknn_config_fini(rd_rknn_config *c);

/**
 * Checks a config against a target platform (NULL: configs.target_platform if present, else no
 * platform check) and the model's input channel counts (channels may be NULL when unknown). Checks
 * that the platform exists and supports the dtype, mean/std lengths, gdq only with w4a16/w8a16 and
 * group only with w4a16. RD_E_INVAL or RD_E_UNSUPPORTED naming file and line.
 */
rd_status rd_rknn_config_validate(const rd_rknn_config *c, const char *platform, const int64_t *channels,
                                  size_t n_inputs, rd_error *err);

/** Fills spec (layout left as given) for input i from the config's mean, std and RGB2BGR. */
rd_status rd_rknn_config_input_spec(const rd_rknn_config *c, size_t input, rd_input_spec *spec, rd_error *err);

/* ---------------------------------------------------------------------------------------------------
 * Quantization config: RKNN's hybrid quantization file (<model>.quantization.cfg). See
 * docs/quantization-cfg.md.
 */

#define RD_MAX_QCFG_BYTES ((size_t)256 << 20)

/** A forced precision in custom_quantize_layers. */
typedef struct rd_qcfg_layer {
    char *name;
    rd_dtype dtype; /* RD_DT_F16, RD_DT_I8 or RD_DT_I16 */
    int line;
} rd_qcfg_layer;

/** Which lists a rd_qcfg_param carries (bits). */
enum {
    RD_QCFG_HAS_MIN = 1u << 0,
    RD_QCFG_HAS_MAX = 1u << 1,
    RD_QCFG_HAS_SCALE = 1u << 2,
    RD_QCFG_HAS_ZERO_POINT = 1u << 3,
    RD_QCFG_HAS_ORI_MIN = 1u << 4,
    RD_QCFG_HAS_ORI_MAX = 1u << 5,
};

/** The parameters of one tensor in quantize_parameters. */
typedef struct rd_qcfg_param {
    char *name;
    char *qtype;                                  /* "asymmetric_quantized", ...; NULL when absent */
    rd_qmethod method;                            /* layer (one entry) or channel (one per channel) */
    rd_dtype dtype;                               /* RD_DT_I8, RD_DT_U8, RD_DT_I16, RD_DT_F16, RD_DT_F32 */
    unsigned has;                                 /* RD_QCFG_HAS_* */
    size_t n;                                     /* entries in every present list */
    float *min, *max, *scale, *ori_min, *ori_max; /* n each or NULL when absent */
    int32_t *zero_point;
    int line;
} rd_qcfg_param;

typedef struct rd_qcfg {
    size_t n_layers;
    rd_qcfg_layer *layers; /* custom_quantize_layers in file order */
    size_t n_params;
    rd_qcfg_param *params; /* quantize_parameters in file order */
    size_t *sorted;        /* params indices sorted by name (for lookup) */
} rd_qcfg;

/** Zeroes a qcfg. */
void rd_qcfg_init(rd_qcfg *q);
/** Loads a .quantization.cfg. Elision lines made only of "…" or "..." (as in RKNN's manual) are
 *  skipped. Names given twice, unknown keys, wrong types and list lengths that disagree are RD_E_PARSE
 *  naming file, line and tensor. q is initialised even on failure. */
rd_status rd_qcfg_load(const char *path, rd_qcfg *q, rd_error *err);
rd_status rd_qcfg_parse(const char *buf, size_t len, const char *name, rd_qcfg *q, rd_error *err);
/** Serialises in RKNN's layout into a new malloc'ed NUL-terminated buffer owned by the caller. */
rd_status rd_qcfg_write(const rd_qcfg *q, char **out_buf, size_t *out_len, rd_error *err);
/** Writes to path through a temporary file renamed into place. */
rd_status rd_qcfg_save(const char *path, const rd_qcfg *q, rd_error *err);
void rd_qcfg_fini(rd_qcfg *q);
/** The parameters of a tensor, or NULL. */
const rd_qcfg_param *rd_qcfg_find(const rd_qcfg *q, const char *name);
/** The forced precision of a tensor, or NULL. */
const rd_qcfg_layer *rd_qcfg_find_layer(const rd_qcfg *q, const char *name);
/** Building: appends a copy of p (name and arrays copied) / a custom layer. Refuses duplicate names. */
rd_status rd_qcfg_add_param(rd_qcfg *q, const rd_qcfg_param *p, rd_error *err);
rd_status rd_qcfg_add_layer(rd_qcfg *q, const char *name, rd_dtype dtype, rd_error *err);

/* ---------------------------------------------------------------------------------------------------
 * Operators known to this build: the operator table (docs/internals/ops.md), sorted by domain and name.
 * Every fact about an operator lives in its table entry; tools (pruning, `inspect`, `ops`) ask it here.
 */

/** The weight input of an operator with integer kernels, and where its output channels lie. */
typedef enum rd_op_weight {
    RD_OP_WEIGHT_NONE = 0,
    RD_OP_WEIGHT_CONV,   /* input 1 [M, C/group, k...]: output channels on axis 0 */
    RD_OP_WEIGHT_CONV_T, /* input 1 [C, M/group, k...]: output channels on axis 1, split by `group` */
    RD_OP_WEIGHT_GEMM,   /* input 1 [K, N] (transB 0: channels on axis 1) or [N, K] (transB 1: axis 0) */
    RD_OP_WEIGHT_MATMUL, /* input 1 [..., K, N]: channels on the last axis, one scale when 1-D; input 1
                            may also be an activation (a product of two int8 tensors) */
} rd_op_weight;

/** How an operator's float outputs are held in an int8 model: its int8 boundary rule (docs/numerics.md). */
typedef enum rd_op_qrule {
    RD_OP_Q_REQUANT = 0, /* its own calibrated parameters; requantized where it materialises */
    RD_OP_Q_PASS,        /* input 0's parameters: the values stay on that grid (MaxPool, Resize, layout) */
    RD_OP_Q_UNION,       /* the union of its inputs' ranges; each input is rescaled into it (Concat) */
    RD_OP_Q_FLOAT16,     /* computed in float16 with int8 -> float16 -> int8 conversions around (Softmax) */
    RD_OP_Q_NONE,        /* its outputs are never float (shapes, indices, masks): nothing to quantize */
} rd_op_qrule;

/** What an operator does to channels (axis 1), for lossless pruning (docs/prune.md). */
typedef enum rd_op_prune {
    RD_OP_PRUNE_STOP = 0,            /* keeps every channel of its inputs and outputs */
    RD_OP_PRUNE_CHANNELWISE,         /* output channel c comes from input 0's channel c alone, and 0 stays 0 */
    RD_OP_PRUNE_CHANNELWISE_BOUNDED, /* the same while its bounds (min, max) hold 0 (Clip) */
    RD_OP_PRUNE_WEIGHTS,             /* all-zero weights make zero channels; input channels drop with their weights */
    RD_OP_PRUNE_AFFINE,              /* one scale and shift per channel (BatchNormalization) */
    RD_OP_PRUNE_ADD,                 /* output channel c from channel c of both inputs */
    RD_OP_PRUNE_CONCAT,              /* concatenates its inputs' channels (on axis 1) */
} rd_op_prune;

typedef struct rd_op_info {
    const char *name;
    const char *domain;
    int since;           /* first opset version covered */
    int until;           /* last opset version the operator exists in, 0 while it is current */
    bool fp16_kernel;    /* a float16 kernel of its own (otherwise float32 on half values) */
    bool int8_kernel;    /* an integer kernel at int8 (otherwise float32 on dequantized values) */
    bool int16_kernel;   /* an integer kernel at int16 */
    bool has_macs;       /* MACs are counted (rd_node_info.macs; 0 means the shapes are unknown) */
    int weight_input;    /* input holding the quantized weight, 0 when none */
    rd_op_weight weight; /* that weight's channel rule */
    rd_op_qrule qrule;   /* int8 boundary rule */
    rd_op_prune prune;   /* channel rule for pruning */
    const char *npu_op;  /* the op type RKNN's compiler makes of it ("Conv" for Gemm, "Reshape" for
                            Squeeze); the name itself when it keeps it */
} rd_op_info;

size_t rd_op_count(void);
/** Entry i of the table (sorted by domain, then name); zeroed when i is out of range. */
void rd_op_get(size_t i, rd_op_info *out);
/** The entry of an operator ("" or "ai.onnx" for the default domain); false (out zeroed) when unknown. */
bool rd_op_find(const char *domain, const char *op_type, rd_op_info *out);
bool rd_op_supported(const char *domain, const char *op_type);

/** The OpenBLAS kernel in use ("Haswell", "Zen", ...): benchmarks name it. */
const char *rd_blas_kernel(void);

/** The library version string ("0.1.0"). */
const char *rd_version(void);

#ifdef __cplusplus
}
#endif
#endif /* RKNN_DIAG_SIMULATOR_H */
