/* demo_model.h: the built-in demo model and its input (see demo_model.c). */
#ifndef RD_AN_DEMO_MODEL_H
#define RD_AN_DEMO_MODEL_H

#include "rknn_diag/simulator.h"

/** Writes the demo model (ONNX, opset 13) to path. */
rd_status an_demo_model_write(const char *path, rd_error *err);
/** Writes the demo input, float32 [1,3,32,32] in the graph's layout, to path (.npy). */
rd_status an_demo_input_write(const char *path, rd_error *err);

#endif
