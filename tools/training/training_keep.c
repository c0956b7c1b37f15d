/* Checkpoints, resuming and the saved ONNX model of dfgc train
 * (training_keep.h). */
#include "tools/training/training_keep.h"

dfg_status dfgc_keep_resume(const dfgc_keep_paths *paths, dfg_session *session,
                            uint64_t seed, int64_t *epochs_done,
                            uint64_t *rng_state)
{
    *epochs_done = 0;
    if (!paths->resume)
        return DFG_OK;
    dfg_checkpoint_position at;
    dfg_status st = dfg_checkpoint_load(session, paths->resume, seed, &at);
    if (st != DFG_OK)
        return st;
    *epochs_done = at.epoch;
    *rng_state = at.rng_state;
    return DFG_OK;
}

dfg_status dfgc_keep_checkpoint(const dfgc_keep_paths *paths,
                                dfg_session *session, int64_t epochs_done,
                                uint64_t rng_state, uint64_t seed)
{
    if (!paths->checkpoint)
        return DFG_OK;
    dfg_checkpoint_position at = {epochs_done, epochs_done, rng_state, seed};
    return dfg_checkpoint_save(session, &at, paths->checkpoint);
}

dfg_status dfgc_keep_save(const dfgc_keep_paths *paths, const char *model,
                          dfg_session *session, FILE *log)
{
    if (!paths->save)
        return DFG_OK;
    void *weights;
    size_t bytes;
    dfg_status st = dfg_session_weights_region(session, &weights, &bytes);
    int32_t replaced = 0;
    if (st == DFG_OK)
        st = dfg_onnx_save_trained(model, dfg_session_program(session), weights,
                                   paths->save, &replaced);
    if (st == DFG_OK && log)
        fprintf(log, "saved %s: %d trained initializers\n", paths->save,
                (int)replaced);
    return st;
}
