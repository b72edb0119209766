/*
 * gpu-macros-opencl.h - the kernel dialect of gpu-kernels.h spelled in OpenCL C 1.2.
 * Prepended (as text) to gpu-kernels.h when the OpenCL host layer builds its program.
 */
#define KERNEL __kernel
#define GLOBAL __global
#define RESTRICT restrict
#define DEVICE_FN static inline
#define SHARED_ARRAY(type, name, n) __local type name[n]
#define SHARED_PTR __local
#define BARRIER() barrier(CLK_LOCAL_MEM_FENCE)
/* A kernel's block size, fixed (OpenCL has no register cap to ask for). */
#define LAUNCH_BOUNDS(threads, blocks) __attribute__((reqd_work_group_size(threads, 1, 1)))
/* Four floats to p (vstore4 asks only a float's alignment; the CUDA form asks 16 bytes). */
#define STORE4(p, a, b, c, d) vstore4((float4)((a), (b), (c), (d)), 0, (p))
/* No register cap to ask for in OpenCL. */
#define MAX_REGS(n)
/* Before a loop of constant trip count: unroll it fully, so that arrays it indexes stay in
 * registers. */
#define UNROLL _Pragma("unroll")
#define LID(d) ((i64)get_local_id(d))
#define LSIZE(d) ((i64)get_local_size(d))
#define GROUP(d) ((i64)get_group_id(d))
#define NGROUPS(d) ((i64)get_num_groups(d))
typedef long i64;
/* Dynamic local memory and the constant mask are trailing kernel parameters in OpenCL. */
#define DYN_LOCAL_PARAM , __local float *dyn_local
#define DYN_LOCAL_DECL
#define CMASK_PARAM , __constant float *cmask
#define CMASK(i) cmask[i]
