/* DFG_HOST_DEVICE marks a function callable from host C code and from CUDA
 * device code, so that per-element math and index arithmetic are written
 * once: nvcc sees __host__ __device__, a C compiler sees nothing. */
#ifndef DFG_MATH_HOST_DEVICE_H
#define DFG_MATH_HOST_DEVICE_H

#ifdef __CUDACC__
#define DFG_HOST_DEVICE __host__ __device__
#else
#define DFG_HOST_DEVICE
#endif

#endif
