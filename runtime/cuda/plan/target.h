/* What programs for the CUDA backend need from the compiler
 * (dfg_backend_target, include/dfg/session.h). Host data: in libdfg, read
 * by the module's backend table and by the CPU tests' emulator. */
#ifndef DFG_CUDA_TARGET_H
#define DFG_CUDA_TARGET_H

#include "dfg/program.h"

/* No blocked layouts; 16-bit convolutions channels-last where cuDNN
 * takes them (conv_layout: dfg_cuda_conv_layout, dnn_mapping.h); cuBLAS's
 * scratch planned in each product step (DFG_DEFAULT_BLAS_WORKSPACE),
 * offsets aligned to at least 16 bytes: the element-wise kernels load
 * float4 where operands allow. */
extern const dfg_target dfg_cuda_target;

#endif
