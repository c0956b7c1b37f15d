/* The ONNX op mapping: for each supported ONNX op type, a function that
 * reads the current node (im->node) and records dfg ops for it, binding
 * its outputs. Each src/onnx/onnx_ops_*.c file holds one family and
 * exports its rows; dfg_onnx_find_op() searches them all. */
#ifndef DFG_ONNX_OPS_H
#define DFG_ONNX_OPS_H

#include "onnx/onnx_importer.h"

typedef struct dfg_onnx_op dfg_onnx_op;
typedef dfg_status (*dfg_onnx_op_import)(dfg_onnx_importer *im,
                                         const dfg_onnx_op *op);

struct dfg_onnx_op {
    const char *onnx_type;
    dfg_onnx_op_import import;
    const char *dfg_op;  /* for mappings shared by several rows */
};

/* Each family's rows, ended by a row with onnx_type NULL. */
extern const dfg_onnx_op dfg_onnx_ops_elementwise[];
extern const dfg_onnx_op dfg_onnx_ops_activation[];
extern const dfg_onnx_op dfg_onnx_ops_logic[];
extern const dfg_onnx_op dfg_onnx_ops_nn[];
extern const dfg_onnx_op dfg_onnx_ops_layout[];
extern const dfg_onnx_op dfg_onnx_ops_reduce[];
extern const dfg_onnx_op dfg_onnx_ops_constant[];
extern const dfg_onnx_op dfg_onnx_ops_resize[];
extern const dfg_onnx_op dfg_onnx_ops_top_k[];
extern const dfg_onnx_op dfg_onnx_ops_conv_transpose[];
extern const dfg_onnx_op dfg_onnx_ops_loss[];
extern const dfg_onnx_op dfg_onnx_ops_quantize[];
extern const dfg_onnx_op dfg_onnx_ops_recurrent[];
extern const dfg_onnx_op dfg_onnx_ops_einsum[];

/* The row for an op type of the default domain, or NULL. */
const dfg_onnx_op *dfg_onnx_find_op(const char *onnx_type);

/* Shared by the families: reads input i (must be present), records
 * dfg_op on inputs 0..n_in-1 as they are, binds output 0. */
dfg_status dfg_onnx_import_direct(dfg_onnx_importer *im,
                                  const dfg_onnx_op *op);
/* Pad x in mode 'edge' or 'reflect' (onnx_pad_modes.c): pads holds the
 * begins of every axis, then the ends. */
dfg_status dfg_onnx_pad_mode(dfg_onnx_importer *im, int32_t x,
                             const char *mode, const int64_t *pads,
                             int32_t *out);
/* Fails unless input i is present; *out gets its entry. */
dfg_status dfg_onnx_required_input(dfg_onnx_importer *im, int32_t i,
                                   int32_t *out);

#endif
