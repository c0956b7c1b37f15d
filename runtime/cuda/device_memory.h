/* Device allocations of the CUDA backend, counted so that tests can check
 * that sessions allocate device memory only when they are created. */
#ifndef DFG_CUDA_DEVICE_MEMORY_H
#define DFG_CUDA_DEVICE_MEMORY_H

/* cudaMalloc calls the backend has made in this process (never decreases). */
long dfg_cuda_device_allocations(void);

#endif
