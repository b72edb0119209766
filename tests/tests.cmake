# C unit tests (tests/unit, one program per area, framework: tests/unit/test.h) and the
# Python conformance tests (tests/python, pytest against numpy/scipy), all run by ctest.
function(fconv_add_c_test name)
  add_executable(${name} ${ARGN})
  target_include_directories(${name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/tests/unit
    ${CMAKE_CURRENT_SOURCE_DIR}/src)
  target_link_libraries(${name} PRIVATE fastconv_static fastconv_io ${FCONV_LINK_LIBS})
  add_test(NAME ${name} COMMAND ${name})
  # Passive waiting: spinning OpenMP workers slow everything else on a 2-core machine.
  set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77 LABELS unit
    ENVIRONMENT "OMP_WAIT_POLICY=passive")
endfunction()

fconv_add_c_test(test_api tests/unit/test_api.c)
fconv_add_c_test(test_reference tests/unit/test_reference.c)
fconv_add_c_test(test_algorithms tests/unit/test_algorithms.c)
# Algorithm-specific tests (transforms, factorisation, tiling edge cases): one file each.
foreach(algo direct mec winograd fft separable implicit_gemm)
  fconv_add_c_test(test_algo_${algo} tests/unit/test_algo_${algo}.c)
endforeach()
fconv_add_c_test(test_io_npy tests/unit/test_io_npy.c)
# ---- GPU backend (docs/gpu.md): OpenCL on PoCL in CI; CUDA tests skip (77) without a GPU ----
if(FCONV_OPENCL OR FCONV_CUDA)
  fconv_add_c_test(test_gpu tests/unit/test_gpu.c)
  set_tests_properties(test_gpu PROPERTIES
    ENVIRONMENT "OMP_WAIT_POLICY=passive;POCL_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/pocl-cache")
  add_test(NAME test_gpu_cuda COMMAND test_gpu cuda)
  set_tests_properties(test_gpu_cuda PROPERTIES SKIP_RETURN_CODE 77 LABELS unit
    ENVIRONMENT "POCL_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/pocl-cache")
  # The UMI operator on the device (src/umi/umi-gpu.c) against its CPU executor.
  fconv_add_c_test(test_umi_gpu tests/unit/test_umi_gpu.c)
  set_tests_properties(test_umi_gpu PROPERTIES SKIP_RETURN_CODE 77
    ENVIRONMENT "OMP_WAIT_POLICY=passive;POCL_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/pocl-cache")
  add_test(NAME test_umi_gpu_cuda COMMAND test_umi_gpu cuda)
  set_tests_properties(test_umi_gpu_cuda PROPERTIES SKIP_RETURN_CODE 77 LABELS unit
    ENVIRONMENT "POCL_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/pocl-cache")
endif()
# Wisdom and FCONV_PLAN_MEASURE (issue 4b).
fconv_add_c_test(test_wisdom tests/unit/test_wisdom.c)
fconv_add_c_test(test_io_image tests/unit/test_io_image.c)
# The UMI operator (src/umi): against conv2d/filter2d and plain loops; every validation error.
fconv_add_c_test(test_umi tests/unit/test_umi.c)
fconv_add_c_test(test_umi_validate tests/unit/test_umi_validate.c)
# ABSDIFF, and the box-sum SAD of stereo/match (cli/umi-sad.c) against the direct UMI SAD.
fconv_add_c_test(test_umi_sad tests/unit/test_umi_sad.c cli/umi-sad.c)
target_include_directories(test_umi_sad PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/cli)

# ---- SIMD kernels and ISA dispatch (issue 4a) ----
# Each kernel against float64 and scalar on every ISA the host runs (others reported skipped).
fconv_add_c_test(test_kernels_direct tests/unit/test_kernels_direct.c)
fconv_add_c_test(test_kernels_gemm tests/unit/test_kernels_gemm.c)
fconv_add_c_test(test_kernels_im2col tests/unit/test_kernels_im2col.c)
fconv_add_c_test(test_kernels_fft_rows tests/unit/test_kernels_fft_rows.c)
fconv_add_c_test(test_kernels_fft_cols tests/unit/test_kernels_fft_cols.c)
fconv_add_c_test(test_kernels_winograd tests/unit/test_kernels_winograd.c)
fconv_add_c_test(test_kernels_layout tests/unit/test_kernels_layout.c)
# The algorithm tests again with the kernels capped to each ISA (FCONV_ISA); the plain runs
# above take the best ISA. An ISA the host cannot run falls back to the best it can.
foreach(isa scalar avx2)
  foreach(t test_algorithms test_algo_direct test_algo_separable test_algo_implicit_gemm test_algo_mec)
    add_test(NAME ${t}_${isa} COMMAND ${t})
    set_tests_properties(${t}_${isa} PROPERTIES SKIP_RETURN_CODE 77 LABELS unit
      ENVIRONMENT "OMP_WAIT_POLICY=passive;FCONV_ISA=${isa}")
  endforeach()
endforeach()
# The GEMM-based algorithms (im2col, MEC, Winograd) on fastconv's own GEMM instead of OpenBLAS.
add_test(NAME test_algorithms_gemm_packed COMMAND test_algorithms)
set_tests_properties(test_algorithms_gemm_packed PROPERTIES SKIP_RETURN_CODE 77 LABELS unit
  ENVIRONMENT "OMP_WAIT_POLICY=passive;FCONV_GEMM=packed")
# ---- end of SIMD kernels and ISA dispatch ----

# The README's C example (the ```c block after the marker comment) must compile warning-free
# and run: it is extracted at configure time, so README.md is its only copy.
file(READ ${CMAKE_CURRENT_SOURCE_DIR}/README.md FCONV_README)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/README.md)
string(FIND "${FCONV_README}" "<!-- The block below is compiled" FCONV_EXAMPLE_AT)
if(FCONV_EXAMPLE_AT EQUAL -1)
  message(FATAL_ERROR "README.md: the compiled C example's marker comment is missing")
endif()
string(SUBSTRING "${FCONV_README}" ${FCONV_EXAMPLE_AT} -1 FCONV_EXAMPLE)
string(FIND "${FCONV_EXAMPLE}" "```c\n" FCONV_EXAMPLE_AT)
math(EXPR FCONV_EXAMPLE_AT "${FCONV_EXAMPLE_AT} + 5")
string(SUBSTRING "${FCONV_EXAMPLE}" ${FCONV_EXAMPLE_AT} -1 FCONV_EXAMPLE)
string(FIND "${FCONV_EXAMPLE}" "```" FCONV_EXAMPLE_END)
string(SUBSTRING "${FCONV_EXAMPLE}" 0 ${FCONV_EXAMPLE_END} FCONV_EXAMPLE)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/example_readme.c "${FCONV_EXAMPLE}")
add_executable(example_readme ${CMAKE_CURRENT_BINARY_DIR}/example_readme.c)
target_link_libraries(example_readme PRIVATE fastconv)
add_test(NAME example_readme COMMAND example_readme)
set_tests_properties(example_readme PROPERTIES LABELS unit)

# Python conformance tests: the library through ctypes and the CLI on files.
find_program(FCONV_PYTHON3 NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(FCONV_PYTHON3 AND FCONV_BUILD_CLI)
  add_test(NAME conformance
    COMMAND ${FCONV_PYTHON3} -m pytest -q -p no:cacheprovider ${CMAKE_CURRENT_SOURCE_DIR}/tests/python)
  set_tests_properties(conformance PROPERTIES LABELS python
    ENVIRONMENT "OMP_WAIT_POLICY=passive;FASTCONV_LIB=$<TARGET_FILE:fastconv>;FASTCONV_CLI=$<TARGET_FILE:fastconv_cli>;FASTCONV_SOURCE_DIR=${CMAKE_CURRENT_SOURCE_DIR}")
endif()

# The conformance suite again on the OpenCL device (PoCL in CI), plus the CLI's --device
# smoke test (test_conv2d_threads, which names the CPU reference, skips itself there).
if(FCONV_PYTHON3 AND FCONV_BUILD_CLI AND FCONV_OPENCL)
  add_test(NAME conformance_opencl
    COMMAND ${FCONV_PYTHON3} -m pytest -q -p no:cacheprovider
      ${CMAKE_CURRENT_SOURCE_DIR}/tests/python/test_conformance.py
      ${CMAKE_CURRENT_SOURCE_DIR}/tests/python/test_gpu_cli.py)
  set_tests_properties(conformance_opencl PROPERTIES LABELS python
    ENVIRONMENT "OMP_WAIT_POLICY=passive;FASTCONV_TEST_DEVICE=opencl;POCL_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/pocl-cache;FASTCONV_LIB=$<TARGET_FILE:fastconv>;FASTCONV_CLI=$<TARGET_FILE:fastconv_cli>;FASTCONV_SOURCE_DIR=${CMAKE_CURRENT_SOURCE_DIR}")
endif()

# `cmake --install` gives a tree that find_package(fastconv) and pkg-config can use.
add_test(NAME install COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/tests/install/check-install.sh
  ${CMAKE_BINARY_DIR} ${CMAKE_CURRENT_SOURCE_DIR})
set_tests_properties(install PROPERTIES LABELS install)

# ---- reliability (tests/unit/test_reliability_*.c, docs/reliability.md) ----------------------
# Memory budget, threads and determinism, soak (LSan in the sanitizer build), and allocation
# failure through an LD_PRELOAD shim that fails the Nth allocation made by the library.
foreach(area budget threads soak enomem)
  fconv_add_c_test(test_reliability_${area} tests/unit/test_reliability_${area}.c)
endforeach()
add_library(fconv_fault_malloc SHARED tests/unit/fault-malloc.c)
# The shim sits below the sanitizers' own allocator: never instrument it.
target_compile_options(fconv_fault_malloc PRIVATE -fno-sanitize=all)
target_link_options(fconv_fault_malloc PRIVATE -fno-sanitize=all)
target_link_libraries(fconv_fault_malloc PRIVATE ${CMAKE_DL_LIBS})
target_link_libraries(test_reliability_enomem PRIVATE ${CMAKE_DL_LIBS})
# verify_asan_link_order=0: the shim is preloaded ahead of libasan on purpose.
set_tests_properties(test_reliability_enomem PROPERTIES ENVIRONMENT
  "OMP_WAIT_POLICY=passive;LD_PRELOAD=$<TARGET_FILE:fconv_fault_malloc>;ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=1")
# ---- end reliability ---------------------------------------------------------------------------
