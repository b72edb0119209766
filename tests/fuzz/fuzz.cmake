# Fuzz harnesses (tests/fuzz/fuzz_*.c).
#  - FCONV_FUZZ=ON (clang only): every library, I/O and CLI source is instrumented with
#    -fsanitize=fuzzer-no-link,address,undefined and each harness links libFuzzer
#    (targets fuzz_npy, fuzz_image, fuzz_cli_args, fuzz_plan); scripts/fuzz.sh drives them.
#  - Otherwise, with the tests: the same harnesses are linked with replay-main.c and ctest
#    replays the committed corpus/ and regressions/ of each (tests fuzz_replay_<name>).
option(FCONV_FUZZ "Build the libFuzzer harnesses (clang; ASan + UBSan)" OFF)

set(FCONV_FUZZ_HARNESSES npy image cli_args plan)
set(FCONV_FUZZ_DIR ${CMAKE_CURRENT_SOURCE_DIR}/tests/fuzz)

function(fconv_fuzz_target name main_kind)
  set(sources ${FCONV_FUZZ_DIR}/fuzz_${name}.c)
  if(name STREQUAL "cli_args")
    list(APPEND sources ${CMAKE_CURRENT_SOURCE_DIR}/cli/args.c ${CMAKE_CURRENT_SOURCE_DIR}/cli/kernels.c)
  endif()
  if(main_kind STREQUAL "replay")
    set(target fuzz_replay_${name})
    list(APPEND sources ${FCONV_FUZZ_DIR}/replay-main.c)
  else()
    set(target fuzz_${name})
  endif()
  add_executable(${target} ${sources})
  target_include_directories(${target} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src
    ${CMAKE_CURRENT_SOURCE_DIR}/cli)
  target_link_libraries(${target} PRIVATE fastconv_static fastconv_io ${FCONV_LINK_LIBS})
  if(main_kind STREQUAL "libfuzzer")
    target_compile_options(${target} PRIVATE -fsanitize=fuzzer,address,undefined)
    target_link_options(${target} PRIVATE -fsanitize=fuzzer,address,undefined)
  else()
    add_test(NAME ${target} COMMAND ${target} ${FCONV_FUZZ_DIR}/corpus/${name}
      ${FCONV_FUZZ_DIR}/regressions/${name})
    set_tests_properties(${target} PROPERTIES LABELS unit ENVIRONMENT "OMP_WAIT_POLICY=passive")
  endif()
endfunction()

if(FCONV_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "FCONV_FUZZ needs clang (libFuzzer): configure with CC=clang")
  endif()
  # Coverage instrumentation + sanitizers for everything the harnesses reach.
  # C only: a CUDA source of the library goes through nvcc, which takes other flags.
  set(FCONV_FUZZ_FLAGS $<$<COMPILE_LANGUAGE:C>:-fsanitize=fuzzer-no-link,address,undefined
    -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g>)
  target_compile_options(fastconv_objects PRIVATE ${FCONV_FUZZ_FLAGS})
  target_compile_options(fastconv_io PRIVATE ${FCONV_FUZZ_FLAGS})
  # The per-ISA SIMD kernels without UBSan's pointer-overflow check: on their unrolled,
  # inlined blocks it made clang take 146-259 s per direct-rows object (30 s without it),
  # most of CI's fuzz phase. ASan still checks every access they make, and the GCC ASan +
  # UBSan build's unit tests keep the check on every ISA's kernels.
  foreach(src ${FCONV_KERNEL_SOURCES})
    if(src MATCHES "/isa-kernels/")
      set_property(SOURCE ${src} APPEND PROPERTY COMPILE_OPTIONS -fno-sanitize=pointer-overflow)
    endif()
  endforeach()
  foreach(h ${FCONV_FUZZ_HARNESSES})
    fconv_fuzz_target(${h} libfuzzer)
    target_compile_options(fuzz_${h} PRIVATE -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g)
  endforeach()
elseif(FCONV_BUILD_TESTS)
  foreach(h ${FCONV_FUZZ_HARNESSES})
    fconv_fuzz_target(${h} replay)
  endforeach()
endif()
