/* Saving a trained model as ONNX (docs/training.md, "Keeping the
 * result"): the model file the user trained, with each initializer that
 * the training program holds under the same name replaced by the
 * trained bytes, so that ONNX Runtime (or dfg) runs the trained model.
 *
 * The graph is the user's own, node for node, in eval form: an eval-mode
 * export stays as it is; in a training-mode export a
 * BatchNormalization's training_mode becomes 0 and its running-statistics
 * outputs are dropped (one the graph reads is refused, DFG_ERR_UNSUPPORTED),
 * and a Dropout's training_mode input is dropped (false). A batch
 * normalization's running mean and variance, which a training program
 * updates in place, are saved like any other initializer. Trained data is written as raw_data inside the
 * model (no external data files: a model over protobuf's 2 GiB limit is
 * refused). */
#ifndef DFG_ONNX_SAVE_H
#define DFG_ONNX_SAVE_H

#include <stdint.h>
#include "dfg/program.h"
#include "dfg/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Reads the ONNX model at model_path (untrusted: malformed bytes are
 * DFG_ERR_FORMAT), replaces each f32 initializer whose name is a weight
 * of program with the same element count by that weight's bytes in
 * `weights` (program's weights region in host memory, as
 * dfg_session_weights_region gives it for a CPU training session), and
 * writes the model to out_path atomically (include/dfg/atomic_file.h).
 * Every other initializer is kept as it was; one kept that holds its
 * data in an external file is refused (DFG_ERR_UNSUPPORTED naming it),
 * since out_path may lie elsewhere, and so is a trained weight the
 * program stores in a blocked layout (its bytes are not in ONNX's
 * order). *replaced (may be NULL) receives the
 * count replaced. Nothing is owned past the call. */
dfg_status dfg_onnx_save_trained(const char *model_path,
                                 const dfg_program *program,
                                 const void *weights, const char *out_path,
                                 int32_t *replaced);

#ifdef __cplusplus
}
#endif
#endif
