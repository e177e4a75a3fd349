/*
 * frontend.c: the loader seam. rd_frontend_load reads a model file, recognises its format by content and hands
 * it to its frontend, which writes the equivalent ONNX graph; that graph is loaded by rd_model_load_mem as an
 * .onnx file would be (rknn_diag/frontends.h). ONNX files go straight to rd_model_load.
 */
#include "fe_internal.h"
#include "caffe.h"
#include "darknet.h"
#include "tf_lower.h"
#include "tflite.h"

#include <stdio.h>
#include <strings.h>

static const char *const format_names[RD_FORMAT_COUNT] = {
    [RD_FORMAT_UNKNOWN] = "unknown",       [RD_FORMAT_ONNX] = "onnx",   [RD_FORMAT_TFLITE] = "tflite",
    [RD_FORMAT_DARKNET] = "darknet",       [RD_FORMAT_CAFFE] = "caffe", [RD_FORMAT_PYTORCH] = "pytorch",
    [RD_FORMAT_TENSORFLOW] = "tensorflow",
};

const char *rd_model_format_name(rd_model_format f)
{
    return f > RD_FORMAT_UNKNOWN && f < RD_FORMAT_COUNT ? format_names[f] : "unknown";
}

rd_status rd_model_format_parse(const char *name, rd_model_format *out, rd_error *err)
{
    for (int f = RD_FORMAT_UNKNOWN + 1; f < RD_FORMAT_COUNT; f++)
        if (name && strcasecmp(name, format_names[f]) == 0) {
            *out = (rd_model_format)f;
            return RD_OK;
        }
    char list[200] = "";
    size_t used = 0;
    for (int f = RD_FORMAT_UNKNOWN + 1; f < RD_FORMAT_COUNT && used < sizeof list; f++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "", format_names[f]);
    return rd_errorf(err, RD_E_INVAL, "unknown model platform '%s' (rknn-diag reads %s)", name ? name : "", list);
}

rd_model_format rd_model_format_detect(const void *buf, size_t len)
{
    const unsigned char *b = buf;
    if (len >= 8 && memcmp(b + 4, "TFL3", 4) == 0)
        return RD_FORMAT_TFLITE;
    if (len >= 4 && memcmp(b, "PK\x03\x04", 4) == 0) /* TorchScript is a ZIP archive (torch.jit.save) */
        return RD_FORMAT_PYTORCH;
    if (len >= 2 && b[0] == 0x80 && b[1] >= 2 && b[1] <= 5) /* a pickle: torch.save's legacy format */
        return RD_FORMAT_PYTORCH;
    if (len >= 2 && b[0] == 0x08) /* ModelProto field 1 (ir_version), a varint: what every exporter writes first */
        return RD_FORMAT_ONNX;
    if (tf_looks_like_graphdef(buf, len))
        return RD_FORMAT_TENSORFLOW;
    if (dn_looks_like_cfg(buf, len))
        return RD_FORMAT_DARKNET;
    if (ct_looks_like_text(buf, len))
        return RD_FORMAT_CAFFE;
    return RD_FORMAT_UNKNOWN;
}

static void info_set(rd_frontend_info *info, rd_model_format f, bool quantized, bool model_precision,
                     const char *detail)
{
    if (!info)
        return;
    memset(info, 0, sizeof *info);
    info->format = f;
    info->quantized = quantized;
    info->model_precision = model_precision;
    snprintf(info->detail, sizeof info->detail, "%s", detail);
}

rd_status rd_tflite_to_onnx(const void *buf, size_t len, const char *name, const rd_frontend_options *fo,
                            void **out_buf, size_t *out_len, rd_frontend_info *info, rd_error *err)
{
    *out_buf = NULL;
    *out_len = 0;
    bool mp = fo && fo->model_precision;
    tfl_model m;
    rd_status st = tfl_model_parse(buf, len, name, &m, err);
    if (st != RD_OK)
        return st;
    if (mp && !m.quantized) {
        tfl_model_fini(&m);
        return rd_errorf(err, RD_E_UNSUPPORTED,
                         "%s: --precision model runs a quantized model with its own "
                         "quantization, and this TFLite model is not quantized (use fp32, fp16, int8 or int16)",
                         name);
    }
    char detail[160];
    snprintf(detail, sizeof detail, "TFLite schema %u, %zu operators, %zu tensors%s%s", m.version, m.n_ops, m.n_tensors,
             m.quantized ? ", quantized" : ", float",
             m.quantized ? (mp ? " (run with its own quantization)" : " (run dequantized in float32)") : "");
    info_set(info, RD_FORMAT_TFLITE, m.quantized, mp, detail);
    st = tfl_lower(&m, mp, out_buf, out_len, err);
    tfl_model_fini(&m);
    return st;
}

/* Darknet (a .cfg and its .weights) and Caffe (a .prototxt and its .caffemodel): a text parsed into a document,
   translated with the weights, freed. */
static rd_status text_and_weights_to_onnx(rd_model_format f, const void *text, size_t text_len, const char *text_name,
                                          const void *weights, size_t weights_len, const char *weights_name,
                                          void **out_buf, size_t *out_len, rd_frontend_info *info, rd_error *err)
{
    *out_buf = NULL;
    *out_len = 0;
    const bool darknet = f == RD_FORMAT_DARKNET;
    union {
        dn_cfg cfg;
        ct_doc prototxt;
    } doc;
    rd_status st = darknet ? dn_cfg_parse(text, text_len, text_name, &doc.cfg, err)
                           : ct_parse(text, text_len, text_name, &doc.prototxt, err);
    if (st != RD_OK)
        return st;
    char detail[160] = "";
    if (darknet) {
        st = dn_lower(&doc.cfg, weights, weights_len, weights_name, out_buf, out_len, detail, sizeof detail, err);
        dn_cfg_fini(&doc.cfg);
    } else {
        st = caffe_lower(&doc.prototxt, weights, weights_len, weights_name, out_buf, out_len, detail, sizeof detail,
                         err);
        ct_fini(&doc.prototxt);
    }
    info_set(info, f, false, false, detail);
    return st;
}

rd_status rd_darknet_to_onnx(const void *cfg, size_t cfg_len, const char *cfg_name, const void *weights,
                             size_t weights_len, const char *weights_name, void **out_buf, size_t *out_len,
                             rd_frontend_info *info, rd_error *err)
{
    return text_and_weights_to_onnx(RD_FORMAT_DARKNET, cfg, cfg_len, cfg_name, weights, weights_len, weights_name,
                                    out_buf, out_len, info, err);
}

rd_status rd_caffe_to_onnx(const void *prototxt, size_t prototxt_len, const char *prototxt_name, const void *caffemodel,
                           size_t caffemodel_len, const char *caffemodel_name, void **out_buf, size_t *out_len,
                           rd_frontend_info *info, rd_error *err)
{
    return text_and_weights_to_onnx(RD_FORMAT_CAFFE, prototxt, prototxt_len, prototxt_name, caffemodel, caffemodel_len,
                                    caffemodel_name, out_buf, out_len, info, err);
}

/* The weights beside a model: its name with ext instead of its extension (or with ext appended). */
static char *beside(const char *path, const char *ext)
{
    const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
    size_t stem = dot && (!slash || dot > slash) ? (size_t)(dot - path) : strlen(path);
    size_t n = stem + strlen(ext) + 1;
    char *w = malloc(n);
    if (w)
        snprintf(w, n, "%.*s%s", (int)stem, path, ext);
    return w;
}

/* A two-file format: the weights given or beside the model, then its converter. */
static rd_status load_pair(rd_model_format f, const char *path, const char *model, size_t model_len,
                           const rd_frontend_options *fo, void **onnx, size_t *onnx_len, rd_frontend_info *info,
                           rd_error *err)
{
    const char *ext = f == RD_FORMAT_DARKNET ? ".weights" : ".caffemodel";
    char *wpath = fo && fo->weights ? strdup(fo->weights) : beside(path, ext);
    if (!wpath)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    char *w = NULL;
    size_t wlen = 0;
    rd_status st = rd_file_read_all(NULL, wpath, RD_MAX_MODEL_BYTES, &w, &wlen, err);
    if (st != RD_OK)
        rd_error_prefix(err, "%s: its weights%s", path,
                        fo && fo->weights        ? ""
                        : f == RD_FORMAT_DARKNET ? " (the .weights beside the .cfg)"
                                                 : " (the .caffemodel beside the .prototxt)");
    else if (f == RD_FORMAT_DARKNET)
        st = rd_darknet_to_onnx(model, model_len, path, w, wlen, wpath, onnx, onnx_len, info, err);
    else
        st = rd_caffe_to_onnx(model, model_len, path, w, wlen, wpath, onnx, onnx_len, info, err);
    free(w);
    free(wpath);
    return st;
}

/* A TorchScript model exported with the shapes of fo (input_size_list) and then lo (--input-shape, by name). */
static rd_status pytorch_export(const char *path, const rd_frontend_options *fo, const rd_load_options *lo, void **onnx,
                                size_t *onnx_len, rd_frontend_info *info, rd_error *err)
{
    size_t n_fo = fo ? fo->n_input_sizes : 0, n_lo = lo ? lo->n_input_shapes : 0;
    rd_input_shape *all = malloc((n_fo + n_lo + 1) * sizeof *all);
    if (!all)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    if (n_fo)
        memcpy(all, fo->input_sizes, n_fo * sizeof *all);
    if (n_lo)
        memcpy(all + n_fo, lo->input_shapes, n_lo * sizeof *all);
    rd_status st = rd_pytorch_to_onnx(path, fo, all, n_fo + n_lo, onnx, onnx_len, info, err);
    free(all);
    return st;
}

/* The folder of path, for ONNX external data ("." for a bare name). */
static char *folder_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

rd_status rd_frontend_load(const char *path, const rd_frontend_options *fo, const rd_load_options *lo, rd_model **out,
                           rd_frontend_info *info, rd_error *err)
{
    *out = NULL;
    info_set(info, RD_FORMAT_UNKNOWN, false, false, "");
    char *buf = NULL;
    size_t len = 0;
    rd_status st = rd_file_read_all(NULL, path, RD_MAX_MODEL_BYTES, &buf, &len, err);
    if (st != RD_OK)
        return st;
    rd_model_format f = rd_model_format_detect(buf, len);
    rd_model_format expect = fo ? fo->expect : RD_FORMAT_UNKNOWN;
    rd_model_format as = f == RD_FORMAT_UNKNOWN ? RD_FORMAT_ONNX : f; /* unknown bytes: ONNX's parser judges */
    /* an ONNX file is taken whatever the platform: it is what every frontend writes (convert's OUT/NAME.onnx given
       back with its model_config.yml) */
    if (expect != RD_FORMAT_UNKNOWN && expect != as && as != RD_FORMAT_ONNX) {
        free(buf);
        return rd_errorf(err, RD_E_PARSE, "%s: the model config says platform %s, but the file is %s", path,
                         rd_model_format_name(expect),
                         f == RD_FORMAT_UNKNOWN ? "of no format rknn-diag recognises" : rd_model_format_name(f));
    }
    void *onnx = NULL;
    size_t onnx_len = 0;
    if (as != RD_FORMAT_ONNX && as != RD_FORMAT_TFLITE && fo && fo->model_precision) {
        st = rd_errorf(err, RD_E_UNSUPPORTED,
                       "%s: --precision model needs a quantized TFLite model; a %s model runs at "
                       "fp32, fp16, int8 or int16",
                       path, rd_model_format_name(as));
    } else if (as == RD_FORMAT_TFLITE) {
        st = rd_tflite_to_onnx(buf, len, path, fo, &onnx, &onnx_len, info, err);
    } else if (as == RD_FORMAT_DARKNET || as == RD_FORMAT_CAFFE) {
        st = load_pair(as, path, buf, len, fo, &onnx, &onnx_len, info, err);
    } else if (as == RD_FORMAT_TENSORFLOW) {
        st = rd_tf_to_onnx(buf, len, path, fo, &onnx, &onnx_len, info, err);
    } else if (as == RD_FORMAT_PYTORCH) {
        st = pytorch_export(path, fo, lo, &onnx, &onnx_len, info, err);
    } else {
        if (fo && fo->model_precision)
            st = rd_errorf(err, RD_E_UNSUPPORTED,
                           "%s: --precision model needs a quantized TFLite model; an ONNX "
                           "model runs at fp32, fp16, int8 or int16",
                           path);
        info_set(info, RD_FORMAT_ONNX, false, false, "ONNX");
    }
    char *dir = st == RD_OK ? folder_of(path) : NULL;
    if (st == RD_OK && !dir)
        st = rd_errorf(err, RD_E_NOMEM, "out of memory");
    if (st == RD_OK)
        st = onnx ? rd_model_load_mem(onnx, onnx_len, path, dir, lo, out, err)
                  : rd_model_load_mem(buf, len, path, dir, lo, out, err);
    if (st == RD_E_PARSE && f == RD_FORMAT_UNKNOWN && err) { /* bytes of no format we know: say which we read */
        size_t n = strlen(err->msg);
        snprintf(err->msg + n, sizeof err->msg - n,
                 "; nor is it TFLite, a TensorFlow GraphDef, a Darknet .cfg, a "
                 "Caffe .prototxt or a TorchScript .pt (docs/frontends.md lists the formats rknn-diag reads)");
    }
    if (st == RD_OK && info && as == RD_FORMAT_ONNX)
        snprintf(info->detail, sizeof info->detail, "ONNX (IR %d, opset %d)", rd_model_ir_version(*out),
                 rd_model_opset(*out, ""));
    free(dir);
    free(onnx);
    free(buf);
    return st;
}
