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
foreach(algo direct mec winograd fft separable)
  fconv_add_c_test(test_algo_${algo} tests/unit/test_algo_${algo}.c)
endforeach()
fconv_add_c_test(test_io_npy tests/unit/test_io_npy.c)
fconv_add_c_test(test_io_image tests/unit/test_io_image.c)

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

# `cmake --install` gives a tree that find_package(fastconv) and pkg-config can use.
add_test(NAME install COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/tests/install/check-install.sh
  ${CMAKE_BINARY_DIR} ${CMAKE_CURRENT_SOURCE_DIR})
set_tests_properties(install PROPERTIES LABELS install)
