/* Weights in the layout a oneDNN primitive chose, reordered once per
 * process for every session that reads the same plain bytes in place (the
 * program's weights): eight sessions of one program hold one blocked copy
 * of each conv weight, not eight.
 *
 * Entries are found by the plain bytes' address and the chosen layout, so
 * only bytes that never change while a session holds them may be shared:
 * a program's weights read in place (dfg_kernel_args.shared_inputs), which
 * outlive every session of the program. Once the copy is made, plain bytes
 * that may go (a mapped .dfgp's pages, or the bytes of a program its
 * session took over, dfg_kernel_args.droppable_inputs) leave the resident
 * set.
 *
 * Lifetime: dfg_dnnl_weights_acquire returns a reference to an entry,
 * made by the first caller (under a process-wide lock, so sessions may be
 * created on many threads) and freed by the last dfg_dnnl_weights_release.
 * The copies are anonymous mappings (zeroed pages, each resident once
 * written), not memory from a session's allocator: no
 * one session owns them. */
#ifndef DFG_CPU_DNNL_WEIGHTS_H
#define DFG_CPU_DNNL_WEIGHTS_H

#include <dnnl.h>
#include <stdint.h>
#include "dfg/status.h"

typedef struct dfg_dnnl_weights dfg_dnnl_weights;

/* A reference to plain (laid out as plain_md) reordered to chosen_md on
 * engine. shared: plain is a program's bytes read in place
 * (dfg_kernel_args.shared_inputs), and the entry is the one every caller
 * of the same plain bytes and layout holds; 0: bytes that may change (a
 * session's own weights region, which dfg_session_copy_weights
 * overwrites), reordered into an entry of this caller's own, which no
 * later caller finds. drop_plain: plain's pages may leave memory once
 * copied (dfg_kernel_args.droppable_inputs). *data receives the
 * reordered bytes, valid until the release. */
dfg_status dfg_dnnl_weights_acquire(dnnl_engine_t engine,
                                    const dnnl_memory_desc_t *plain_md,
                                    const void *plain,
                                    const dnnl_memory_desc_t *chosen_md,
                                    int shared, int drop_plain,
                                    dfg_dnnl_weights **out, void **data);
/* Turns a weight's plain bytes into the plain bytes a primitive's weights
 * start from (to, laid out as to_md), before they are reordered: the
 * Winograd transform of a 3x3 conv's weights (winograd_conv.h). */
typedef void (*dfg_dnnl_weights_transform)(const void *plain,
                                           const dnnl_memory_desc_t *to_md,
                                           void *to);

/* As dfg_dnnl_weights_acquire, for plain (plain_bytes of them) turned by
 * transform into transformed_md's layout, then reordered to chosen_md
 * (where the two are one layout, transformed straight into it).
 * by_rows: 1 if transform turns each index of dimension 0 on its own
 * (plain's bytes of index r are its r-th plain_bytes / dims[0]) and
 * writes where to_md's offset0 says: then, transformed straight into
 * chosen_md with drop_plain, it runs a slice of dimension 0 at a time
 * (a sub-memory of chosen_md), dropping plain's pages as it goes, as a
 * reorder would.
 * A shared entry is found by plain and chosen_md, as any other. */
dfg_status dfg_dnnl_weights_acquire_transformed(
    dnnl_engine_t engine, dfg_dnnl_weights_transform transform, int by_rows,
    const dnnl_memory_desc_t *transformed_md, const void *plain,
    size_t plain_bytes, const dnnl_memory_desc_t *chosen_md, int shared,
    int drop_plain, dfg_dnnl_weights **out, void **data);
/* NULL is ignored. */
void dfg_dnnl_weights_release(dfg_dnnl_weights *weights);

/* Drops the plain pages of weights (if they may go) again: reading
 * a neighbour in place brings back the whole folio (up to 2 MiB) it lies
 * in, dropped pages included. NULL is ignored. */
void dfg_dnnl_weights_drop_plain(const dfg_dnnl_weights *weights);

/* Bytes of reordered weights held now, for tests and reports. */
int64_t dfg_dnnl_weights_held_bytes(void);
/* The same (*copies), with the plain bytes those copies were made from
 * (*plain): what a session that drops plain pages no longer holds; and
 * the most bytes held beside the copies while one was made (*overlap:
 * its plain bytes before they went, a transform's staging), over the
 * process's copies so far. */
void dfg_dnnl_weights_held(int64_t *copies, int64_t *plain,
                           int64_t *overlap);

#endif
