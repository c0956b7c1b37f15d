/* Training checkpoints: a training session's whole weights region (the
 * weights, the optimizer state and step counter, the gradient
 * accumulators) and the caller's position in its loop, saved to a file
 * and restored into a session of the same program, so that a run
 * resumed from the file goes on bit for bit as if it had not stopped
 * (docs/training.md, "Checkpoints").
 *
 * The file (version 1, little-endian): a 64-byte header, then the
 * weights region's bytes.
 *   0  "DFGCKPT\0"    8  u32 version (1)     12 u32 CRC-32 of the header
 *                                               with this field 0
 *   16 u64 region bytes                      24 u32 CRC-32 of the region
 *   28 u32 the program's weights fingerprint (names, types, offsets)
 *   32 i64 epoch   40 i64 step   48 u64 rng_state   56 u64 seed
 * A file is untrusted: the magic, version, both CRCs, the size and the
 * fingerprint are checked before any byte reaches the session, and a
 * file that fails any check leaves the session as it was. */
#ifndef DFG_TRAINING_CHECKPOINT_H
#define DFG_TRAINING_CHECKPOINT_H

#include <stdint.h>
#include "dfg/session.h"
#include "dfg/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where the training loop stands; dfg stores it and gives it back, the
 * meaning of each field is the caller's (dfgc: epochs and steps done,
 * its shuffling generator's state, its seed). */
typedef struct dfg_checkpoint_position {
    int64_t epoch;
    int64_t step;
    uint64_t rng_state;
    uint64_t seed;
} dfg_checkpoint_position;

/* Writes session's weights region and *position to path, atomically
 * (include/dfg/atomic_file.h): the old file stays whole until the new
 * one is. The session must have a weights region of its own (a training
 * session); a device session's region is downloaded first. */
dfg_status dfg_checkpoint_save(dfg_session *session,
                               const dfg_checkpoint_position *position,
                               const char *path);

/* Reads path, checks it (DFG_ERR_FORMAT naming what is wrong: not a
 * checkpoint, another version, a CRC mismatch, a size or program that
 * is not the session's, a seed other than `seed`: the data of a run
 * resumed with another seed would not be the data the run had) and only
 * then copies its region into session's and sets *position. */
dfg_status dfg_checkpoint_load(dfg_session *session, const char *path,
                               uint64_t seed,
                               dfg_checkpoint_position *position);

#ifdef __cplusplus
}
#endif
#endif
