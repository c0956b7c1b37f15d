/* dfgc's compile options (--planner, --align, --blas-workspace, --shapes,
 * --const, --no-onednn, --no-fuse, --precision). */
#ifndef DFGC_COMPILE_OPTIONS_H
#define DFGC_COMPILE_OPTIONS_H

#include "dfg/dfg.h"

/* The usage lines of the limits dfgc_compile_option parses. */
#define DFGC_LIMITS_USAGE                                                    \
    "--memory-limit BYTES|NMiB|NGiB\n"                                     \
    "                 keep the predicted peak of the whole process under\n" \
    "                 it (docs/memory-prediction.md), or fail saying what\n"\
    "                 does not fit\n"                                        \
    "--max-arena-bytes N\n"                                                  \
    "                 refuse a plan whose arena needs more than N bytes\n"   \
    "                 (default 34359738368 = 32 GiB; 0: no limit)\n"         \
    "--max-weight-bytes N\n"                                                 \
    "                 refuse an ONNX model whose weights declare more than\n"\
    "                 N bytes, before reading any (default 68719476736 =\n" \
    "                 64 GiB; 0: no limit)\n"

/* The usage lines of --const (model_source.h), --planner and --align. */
#define DFGC_PLAN_USAGE                                                      \
    "--const NAME=FILE ONNX input NAME is a constant with FILE's value (a\n"\
    "                 TensorProto .pb, or raw values of its declared type);\n"\
    "                 shapes that depend on it fold, the program lacks it\n"\
    "--planner NAME   no_reuse, greedy_size, greedy_breadth, hill_climb or\n"\
    "                 smallest (default: every planner, the smallest arena)\n"\
    "--align N        offset alignment in bytes, a power of two (256)\n"

/* The usage lines of the kernel choices dfgc_compile_option parses. */
#define DFGC_KERNEL_USAGE                                                    \
    "--no-onednn      plan no scratch for the CPU backend's oneDNN\n"        \
    "                 convolutions and matmuls: they run on the reference\n" \
    "                 kernels\n"                                              \
    "--no-fuse        keep each activation, residual add, layer norm and\n" \
    "                 GELU its own step (fused by default, inference)\n"     \
    "--no-fuse-attention keep attention's products, scale, mask and\n"     \
    "                 softmax their own steps (fused by default, inference)\n"\
    "--no-layouts     keep every tensor plain NCHW (by default activations\n"\
    "                 between oneDNN convolutions stay blocked, and with\n"  \
    "                 --device cuda at f16 or bf16 between convolutions\n"   \
    "                 nhwc (channels last), inference)\n"                    \
    "--no-share-weights keep every weight equal to another (byte for byte\n"\
    "                 or transposed) apart (held once by default, inference)\n"\
    "--no-tiling      never run the first layers band by band of rows\n"  \
    "                 (with --prefer memory they do where that lowers the\n"\
    "                 arena at most 10% more FLOPs, CPU inference)\n"     \
    "--prefer speed|memory|smallest\n"                                       \
    "                 memory: plan at the lower bound without library\n"     \
    "                 scratch, a step keeping oneDNN's scratch only where\n" \
    "                 it fits under it (inference), and of the programs\n"   \
    "                 that runs (blocked layouts or plain, untiled, the\n"  \
    "                 blocked ones tiled too) keep the smallest arena\n"    \
    "                 among those costing at most 10% more to run than\n"   \
    "                 the fastest (FLOPs, a conv or matmul on dfg's\n"      \
    "                 kernels in place of oneDNN's counting six times,\n" \
    "                 one the bands of a tiled program move off\n"        \
    "                 Winograd twice, and the steps, copies and filter\n" \
    "                 reads tiling adds, once per thread (OpenMP's);\n"   \
    "                 of arenas within 1/16 of the smallest the\n"         \
    "                 cheaper); smallest: the smallest\n"                  \
    "                 arena whatever runs it (slower where it leaves\n"      \
    "                 oneDNN); speed (default): keep oneDNN's scratch\n"     \
    "                 wherever it wants it\n"

/* Parses the compile options every compiling subcommand accepts:
 * --prefer speed|memory|smallest, --planner NAME, --align N (a power of two), --no-onednn (no scratch
 * planned for the CPU backend's oneDNN convolutions: they run on the
 * reference kernels), --no-fuse (no fused conv post-ops, layer norms or
 * GELUs), --max-arena-bytes N (0: no limit), --max-weight-bytes N (an
 * ONNX model's, 0: no limit), ... Returns 1 if argv[*i] was
 * one of them (consumed as dfgc_option_value does), 0 if not, and -1 after
 * printing a usage error for a bad value. */
int dfgc_compile_option(const char *command, int argc, char **argv, int *i,
                        dfg_compile_options *options);

/* --precision f32|bf16 into *precision, and where tf32 is not NULL
 * (inference) tf32 (f32 with *tf32 = 1) and f16, returning as
 * dfgc_compile_option does. */
int dfgc_precision_option(const char *command, int argc, char **argv, int *i,
                          dfg_dtype *precision, int *tf32);

#endif
