# The fastconv command-line tool: one file per subcommand.
add_executable(fastconv_cli
  cli/main.c
  cli/args.c
  cli/kernels.c
  cli/cmd-filter.c
  cli/cmd-conv2d.c
  cli/cmd-conv1d.c
  cli/cmd-bench.c
  cli/cmd-info.c
  # UMI applications (block matching, stereo, bilateral) and their shared helpers
  cli/frames.c
  cli/umi-sad.c
  cli/cmd-match.c
  cli/cmd-stereo.c
  cli/cmd-bilateral.c
  # benchmark suite and tuning (wisdom)
  cli/bench-shapes.c
  cli/cmd-bench-suite.c
  cli/cmd-tune.c
)
set_target_properties(fastconv_cli PROPERTIES OUTPUT_NAME fastconv)
target_include_directories(fastconv_cli PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/cli)
target_link_libraries(fastconv_cli PRIVATE fastconv_static fastconv_io ${FCONV_LINK_LIBS})
install(TARGETS fastconv_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
