/* The start of a test that needs the CUDA backend on a device (suite
 * 'cuda'). Such a test links libdfg statically and the CUDA module's
 * archive, so it registers the backend (dfg/cuda_backend.h) instead of
 * opening libdfg-cuda.so. */
#ifndef DFG_TEST_CUDA_TEST_DEVICE_H
#define DFG_TEST_CUDA_TEST_DEVICE_H

/* 0 when sessions can run on the cuda backend; else prints why and
 * returns the exit status: 77 (skipped) without the backend or a device,
 * 1 if registering it failed. */
int cuda_test_device_ready(void);

/* dfg_compile_options_init's options made for the cuda backend
 * (dfg_compile_options_for), as `dfgc compile --device cuda` makes
 * them; fails the test if that fails. */
struct dfg_compile_options;
void cuda_test_compile_options(struct dfg_compile_options *options);

#endif
