/* dfg: a static dataflow-graph compiler and executor. This header includes
 * the whole public API. */
#ifndef DFG_H
#define DFG_H

#include "dfg/allocator.h"
#include "dfg/atomic_file.h"
#include "dfg/attrs.h"
#include "dfg/bench.h"
#include "dfg/builder.h"
#include "dfg/collective.h"
#include "dfg/compile.h"
#include "dfg/cuda_backend.h"
#include "dfg/dtype.h"
#include "dfg/finite_training.h"
#include "dfg/graph.h"
#include "dfg/models.h"
#include "dfg/onnx.h"
#include "dfg/onnx_save.h"
#include "dfg/program.h"
#include "dfg/regular_file.h"
#include "dfg/report.h"
#include "dfg/session.h"
#include "dfg/status.h"
#include "dfg/training.h"
#include "dfg/trainer.h"
#include "dfg/training_checkpoint.h"

#endif
