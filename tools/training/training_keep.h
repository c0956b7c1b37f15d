/* Keeping what 'dfgc train' trains: --checkpoint (weights, optimizer
 * state and position after every epoch), --resume (going on from one,
 * bit for bit) and --save (the trained model as ONNX), over the library's
 * dfg/training_checkpoint.h and dfg/onnx_save.h. */
#ifndef DFGC_TRAINING_KEEP_H
#define DFGC_TRAINING_KEEP_H

#include <stdint.h>
#include <stdio.h>
#include "dfg/dfg.h"

typedef struct dfgc_keep_paths {
    const char *checkpoint; /* --checkpoint FILE, or NULL */
    const char *resume;     /* --resume FILE, or NULL */
    const char *save;       /* --save FILE.onnx, or NULL */
} dfgc_keep_paths;

/* With --resume, loads it into session and sets *epochs_done (0 without
 * it); a checkpoint made with another seed is refused (DFG_ERR_FORMAT):
 * its data, shuffled or drawn from the seed, would differ. *rng_state
 * receives the checkpoint's (unchanged without --resume). A checkpoint's
 * epoch count is the caller's to bound. */
dfg_status dfgc_keep_resume(const dfgc_keep_paths *paths, dfg_session *session,
                            uint64_t seed, int64_t *epochs_done,
                            uint64_t *rng_state);

/* With --checkpoint, saves session after `epochs_done` epochs. */
dfg_status dfgc_keep_checkpoint(const dfgc_keep_paths *paths,
                                dfg_session *session, int64_t epochs_done,
                                uint64_t rng_state, uint64_t seed);

/* With --save, writes model (an ONNX file) with session's trained
 * weights, telling log (may be NULL) how many initializers it replaced. */
dfg_status dfgc_keep_save(const dfgc_keep_paths *paths, const char *model,
                          dfg_session *session, FILE *log);

#endif
