/*
 * gpu-macros-cuda.h - the kernel dialect of gpu-kernels.h spelled in CUDA C++.
 * Included by gpu-cuda.cu before gpu-kernels.h; the constant mask is one __constant__
 * symbol that the host layer fills before a launch that takes a CONSTANT argument.
 */
#define KERNEL extern "C" __global__
#define GLOBAL
#define RESTRICT __restrict__
#define DEVICE_FN static __device__ __forceinline__
#define SHARED_ARRAY(type, name, n) __shared__ type name[n]
#define SHARED_PTR
#define BARRIER() __syncthreads()
/* A kernel's most threads per block and fewest resident blocks per SM: caps its registers. */
#define LAUNCH_BOUNDS(threads, blocks) __launch_bounds__(threads, blocks)
/* Four floats to p, which is 16-byte aligned. */
#define STORE4(p, a, b, c, d) (*(float4 *)(p) = make_float4((a), (b), (c), (d)))
/* A kernel's most registers per thread (the 64-thread GEMM: 200 keeps 5 blocks per SM). */
#define MAX_REGS(n) __maxnreg__(n)
/* Before a loop of constant trip count: unroll it fully, so that arrays it indexes stay in
 * registers. */
#define UNROLL _Pragma("unroll")
#define LID(d) ((i64)((d) == 0 ? threadIdx.x : (d) == 1 ? threadIdx.y : threadIdx.z))
#define LSIZE(d) ((i64)((d) == 0 ? blockDim.x : (d) == 1 ? blockDim.y : blockDim.z))
#define GROUP(d) ((i64)((d) == 0 ? blockIdx.x : (d) == 1 ? blockIdx.y : blockIdx.z))
#define NGROUPS(d) ((i64)((d) == 0 ? gridDim.x : (d) == 1 ? gridDim.y : gridDim.z))
typedef long long i64;
/* No parameters: dynamic shared memory is sized at launch, the mask lives in a symbol. */
#define DYN_LOCAL_PARAM
#define DYN_LOCAL_DECL extern __shared__ float dyn_local[];
#define CMASK_PARAM
#define CMASK(i) fconv_cmask[i]
__constant__ float fconv_cmask[FCONV_GPU_CONSTANT_FLOATS];
