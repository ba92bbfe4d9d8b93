/* cli.h — one function per command (src/cli/<command>.c), each taking the
 * command's own argv (argv[0] is the command name) and returning the process
 * exit code of DESIGN.md: 0 done, 1 candidate failed, 2 bad input, 3
 * environment. main.c only dispatches. */
#ifndef KS_CLI_H
#define KS_CLI_H

int ks_cmd_tasks(int argc, char **argv);
int ks_cmd_eval(int argc, char **argv);
int ks_cmd_run(int argc, char **argv);
int ks_cmd_report(int argc, char **argv);
int ks_cmd_show(int argc, char **argv);
int ks_cmd_roofline(int argc, char **argv);
int ks_cmd_translate(int argc, char **argv);
int ks_cmd_worker(int argc, char **argv);
int ks_cmd_export(int argc, char **argv);

/* Prints "ksearch: <msg>" for an error and returns its exit code. */
int ks_cli_fail(int code, const char *msg);

#endif
