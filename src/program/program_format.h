/* The layout of program files (.dfgp), shared by the writer
 * (program_save.c) and the reader (program_load.c). docs/program-format.md
 * describes it for people; this header is the single source for code.
 *
 * Everything is little-endian. The file is a 24-byte header, a section
 * table, and the sections, each at an aligned offset (below) with a CRC-32
 * in the table. */
#ifndef DFG_PROGRAM_FORMAT_H
#define DFG_PROGRAM_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include "program/program.h"
#include "util/byte_reader.h"
#include "util/byte_writer.h"

#define DFG_FILE_MAGIC "DFGP"
#define DFG_FILE_VERSION 5u
/* The oldest version this build still reads (version 1 lacks the
 * attributes of resize and top_k). */
#define DFG_FILE_OLDEST_VERSION 1u
#define DFG_FILE_HEADER_BYTES 24u         /* magic, version, n_sections,
                                             table CRC, file size */
#define DFG_FILE_SECTION_ENTRY_BYTES 32u  /* type, flags, offset, size,
                                             CRC, reserved */
#define DFG_FILE_SECTION_ALIGNMENT 64u
/* From version 3 on the weights section starts on a page boundary, so a
 * mapped file's weights share no page with the rest and every offset the
 * plan aligned stays aligned in memory. */
#define DFG_FILE_WEIGHTS_ALIGNMENT 4096u
#define DFG_FILE_TENSOR_RECORD_BYTES 120u
#define DFG_FILE_STEP_HEADER_BYTES 32u    /* before operands and attrs */
#define DFG_FILE_PLAN_BYTES 144u
/* A version 5 plan section written before tiled execution's figures
 * (then 0: not known). */
#define DFG_FILE_PLAN_BYTES_WITHOUT_TILING 120u
/* A version 5 plan section written before its math flags (then 0: strict
 * f32 products). */
#define DFG_FILE_PLAN_BYTES_WITHOUT_MATH 112u
/* The math flags word of a version 5 plan section: bit 0 TF32
 * (dfg_program.allow_tf32), bit 1 f16 and bit 2 bf16 inference
 * (dfg_program.half_products); the other bits are 0. */
#define DFG_MATH_TF32 1u
#define DFG_MATH_F16 2u
#define DFG_MATH_BF16 4u
static inline uint32_t dfg_program_math_flags(const dfg_program *p)
{
    return (p->allow_tf32 ? DFG_MATH_TF32 : 0u) |
           (p->half_products == DFG_F16 ? DFG_MATH_F16 : 0u) |
           (p->half_products == DFG_BF16 ? DFG_MATH_BF16 : 0u);
}
/* A plan section written before version 5 added the CPU features the
 * layouts were chosen for (dfg_program.layout_isa, then ""). */
#define DFG_FILE_PLAN_BYTES_WITHOUT_LAYOUT_ISA 96u
/* A plan section written before the workspace rule's name was added (it
 * then loads as "": compiled without a backend's rule). */
#define DFG_FILE_PLAN_BYTES_WITHOUT_RULE 80u
/* A plan section written before the recorded-order lower bound was added
 * (it then loads as 0: not recorded). */
#define DFG_FILE_PLAN_BYTES_WITHOUT_RECORDED_BOUND 72u
#define DFG_FILE_COUNT_HEADER_BYTES 8u    /* count + reserved */

/* Sanity limits, checked before anything is allocated. */
#define DFG_FILE_MAX_SECTIONS 16u
#define DFG_FILE_MAX_TENSORS ((uint32_t)1 << 24)
#define DFG_FILE_MAX_STEPS ((uint32_t)1 << 24)
#define DFG_FILE_MAX_OPERANDS 4096u       /* inputs of one step */
#define DFG_FILE_MAX_REGION_BYTES ((int64_t)1 << 48)
/* dfg_program_load refuses larger files before reading them. */
#define DFG_FILE_MAX_BYTES ((uint64_t)1 << 36)

/* Section types; each appears exactly once. New types go at the end. */
typedef enum dfg_file_section {
    DFG_SECTION_STRINGS = 1, /* NUL-terminated names, referenced by offset */
    DFG_SECTION_TENSORS,     /* count, then fixed-size tensor records */
    DFG_SECTION_STEPS,       /* count, then variable-size step records */
    DFG_SECTION_IO,          /* input and output tensor indices */
    DFG_SECTION_PLAN,        /* region sizes and plan statistics */
    DFG_SECTION_WEIGHTS,     /* the weights region, byte for byte */
    DFG_SECTION_END
} dfg_file_section;

#define DFG_FILE_N_SECTIONS (DFG_SECTION_END - DFG_SECTION_STRINGS)

/* The first file version that can hold op (its attributes or its enum
 * value are newer than version 1; silu and hardswish came with 4,
 * reorder and the tensors' layouts with 5). */
static inline uint32_t dfg_file_version_of_op(dfg_op op)
{
    return op >= DFG_OP_REORDER ? 5u
           : op >= DFG_OP_SILU  ? 4u
           : op >= DFG_OP_RESIZE ? 2u
                                 : 1u;
}

/* The first file version that can hold step (its op, or its attributes:
 * fused post-ops, and a matmul's fused bias or residual, need version
 * 4). */
static inline uint32_t dfg_file_version_of_step(const dfg_program_step *step)
{
    return step->attrs.n_post_ops > 0 ||
                   (step->op == DFG_OP_MATMUL && step->n_inputs > 2)
               ? 4u
               : dfg_file_version_of_op(step->op);
}

/* The alignment of a section's offset in a file of `version`. */
static inline uint32_t dfg_file_section_alignment(uint32_t version,
                                                  uint32_t section)
{
    return section == DFG_SECTION_WEIGHTS && version >= 3u
               ? DFG_FILE_WEIGHTS_ALIGNMENT
               : DFG_FILE_SECTION_ALIGNMENT;
}

/* Attributes are stored field by field (never as a raw struct), in the
 * order of this list; arrays with a count field store only `count`
 * entries, after the count has been stored and checked. */
void dfg_attrs_encode(dfg_byte_writer *w, uint32_t version,
                      const dfg_attrs *attrs);
/* Decodes the fields a file of `version` stores (the others keep their
 * dfg_attrs_init() defaults). Fails (returns -1) when the bytes run out,
 * a count exceeds its array or an enum is out of range; *attrs is then
 * partly filled. */
int dfg_attrs_decode(dfg_byte_reader *r, uint32_t version, dfg_attrs *attrs);
/* The fewest bytes an encoded dfg_attrs of `version` takes (every count
 * 0). */
size_t dfg_attrs_min_encoded_bytes(uint32_t version);

/* The whole file in memory; *data is allocated with allocator (NULL:
 * malloc) and owned by the caller. */
dfg_status dfg_program_serialize(const dfg_program *program,
                                 const dfg_allocator *allocator,
                                 uint8_t **data, size_t *size);

/* The same in an older format (DFG_FILE_OLDEST_VERSION up to
 * DFG_FILE_VERSION), so that tests can check that old files still load;
 * DFG_ERR_INVALID_ARGUMENT if a step's op is newer than the version. */
dfg_status dfg_program_serialize_version(const dfg_program *program,
                                         uint32_t version,
                                         const dfg_allocator *allocator,
                                         uint8_t **data, size_t *size);

/* Checks every fact the runtime relies on in a program built by a loader:
 * indices, types, sizes, offsets, operand counts, shape and workspace
 * rules, aliasing and the plan statistics (program_validate.c).
 * DFG_ERR_FORMAT with a message naming the tensor or step. */
dfg_status dfg_program_validate(const dfg_program *program);

#endif
