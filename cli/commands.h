/*
 * commands.h — the subcommands of the fastconv tool, one file each. Each takes the
 * arguments after its name (argv[0] is the subcommand) and returns the exit code.
 */
#ifndef FCONV_CLI_COMMANDS_H
#define FCONV_CLI_COMMANDS_H

int cmd_filter(int argc, char **argv);
int cmd_conv2d(int argc, char **argv);
int cmd_conv1d(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_info(int argc, char **argv);
/* UMI applications */
int cmd_match(int argc, char **argv);
int cmd_stereo(int argc, char **argv);
int cmd_bilateral(int argc, char **argv);
/* Benchmark suite and tuning (issue 4b): cmd-bench-suite.c (`bench suite`), cmd-tune.c */
int cmd_bench_suite(int argc, char **argv);
int cmd_tune(int argc, char **argv);

/* After getopt_long returned '?' or ':': print which option was wrong. Returns CLI_EXIT_USAGE. */
int cli_report_getopt_error(const char *command, char **argv, int c);

#endif
