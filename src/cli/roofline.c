/* roofline.c (cli) — `ksearch roofline`: prints this machine's measured
 * memory bandwidth and peak FLOP/s for a backend (DESIGN.md: Command line),
 * measuring them on first use and reading the per-machine cache after.
 * The work is in backend/roofline.c; this file parses options and prints.
 */
#include "backend/roofline.h"
#include "backend/opencl/ocl.h"
#include "util/util.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const USAGE =
    "usage: ksearch roofline [--backend B] [--threads N] [--remeasure] "
    "[--json]\n"
    "       ksearch roofline --backend opencl --list [--json]\n"
    "\n"
    "Measured streaming memory bandwidth and peak FP32 FLOP/s of this\n"
    "machine, cached per machine after the first measurement.\n"
    "\n"
    "  --backend B   backend to measure (default c; available: c, opencl, "
    "cuda)\n"
    "  --threads N   threads to measure with (default: online CPUs)\n"
    "  --remeasure   ignore the cache, measure again and rewrite it\n"
    "  --list        list the OpenCL devices (--device N / "
    "KSEARCH_OPENCL_DEVICE=N\n"
    "                picks one for eval, run and roofline)\n"
    "  --json        print one JSON object on stdout\n"
    "  --help        this text\n";

static const char *const VALID =
    "valid options: --backend B, --threads N, --remeasure, --list, --json, "
    "--help";

/* `--backend opencl --list`: every OpenCL device, the chosen one marked. */
static int list_opencl(bool as_json) {
  ks_ocl_dev devs[KS_OCL_MAX_DEVICES];
  int n = 0;
  ks_err err = {0};
  if (ks_ocl_devices_info(devs, KS_OCL_MAX_DEVICES, &n, &err)) {
    fprintf(stderr, "ksearch roofline: %s\n", err.msg);
    return ks_exit_code(err.code);
  }
  ks_ocl_dev chosen;
  int pick = ks_ocl_choose(devs, n, &chosen, &err) == KS_OK ? chosen.index : -1;
  json_t *arr = json_array();
  for (int i = 0; i < n; i++) {
    const ks_ocl_dev *d = &devs[i];
    if (as_json)
      json_array_append_new(
          arr,
          json_pack("{s:i, s:s, s:s, s:s, s:i, s:I, s:I, s:b}", "index",
                    d->index, "name", d->name, "platform", d->platform_name,
                    "identity", d->identity, "compute_units",
                    (int)d->compute_units, "max_work_group_size",
                    (json_int_t)d->max_wg, "local_mem_bytes",
                    (json_int_t)d->local_mem, "chosen", d->index == pick));
    else
      printf("%s %d: %s (%s), %u compute units, work-groups up to %zu, %llu "
             "KiB local memory\n",
             d->index == pick ? "*" : " ", d->index, d->name, d->platform_name,
             d->compute_units, d->max_wg,
             (unsigned long long)(d->local_mem >> 10));
  }
  if (as_json) {
    json_t *o = json_pack("{s:o}", "devices", arr);
    char *text = json_dumps(o, JSON_INDENT(2));
    printf("%s\n", text ? text : "{}");
    free(text);
    json_decref(o);
  } else {
    json_decref(arr);
    printf("(* = the device used; choose with --device N or "
           "KSEARCH_OPENCL_DEVICE=N)\n");
  }
  if (pick < 0)
    fprintf(stderr, "ksearch roofline: %s\n", err.msg);
  return pick < 0 ? ks_exit_code(err.code) : 0;
}

static void print_table(const ks_roofline *r, const char *path) {
  double balance =
      r->bandwidth_gbps > 0 ? r->peak_gflops / r->bandwidth_gbps : 0;
  char when[64] = "?";
  time_t t = (time_t)r->measured_at;
  struct tm tm;
  if (localtime_r(&t, &tm))
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
  printf("roofline  backend %s, %s, %d thread%s, %s\n", r->backend, r->device,
         r->threads, r->threads == 1 ? "" : "s", r->isa);
  printf("  read       %9.1f GB/s\n", r->read_gbps);
  printf("  write      %9.1f GB/s\n", r->write_gbps);
  printf("  copy       %9.1f GB/s\n", r->copy_gbps);
  printf("  triad      %9.1f GB/s\n", r->triad_gbps);
  printf("  bandwidth  %9.1f GB/s      memory ceiling: max(read, copy, "
         "triad)\n",
         r->bandwidth_gbps);
  printf("  peak       %9.1f GFLOP/s   FP32 vector FMA\n", r->peak_gflops);
  if (r->l2_gbps > 0 || r->tc_gflops > 0) { /* GPUs (cuda) */
    printf("  L2         %9.1f GB/s\n", r->l2_gbps);
    printf("  bf16 mma   %9.1f GFLOP/s   tensor cores (mma.sync)\n",
           r->tc_gflops);
    printf("  SM clock   %9.1f MHz       seen while measuring\n",
           r->sm_clock_mhz);
  }
  printf("  balance    %9.2f flop/byte peak / bandwidth\n", balance);
  printf("%s %s; cached in %s\n", r->source, when, path);
  printf("this is the cached figure (for the analysis, the planner and "
         "display); evaluations on host memory take their ceiling from the "
         "probe measured beside each timing\n");
}

static int print_json(const ks_roofline *r, const char *path) {
  json_t *j = ks_roofline_to_json(r);
  if (!j)
    return 3;
  json_object_set_new(j, "machine_balance",
                      json_real(r->bandwidth_gbps > 0
                                    ? r->peak_gflops / r->bandwidth_gbps
                                    : 0));
  json_object_set_new(j, "cache_file", json_string(path));
  char *text = json_dumps(j, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
  json_decref(j);
  if (!text)
    return 3;
  printf("%s\n", text);
  free(text);
  return 0;
}

int ks_cmd_roofline(int argc, char **argv) {
  static const struct option opts[] = {
      {"backend", required_argument, NULL, 'b'},
      {"threads", required_argument, NULL, 't'},
      {"remeasure", no_argument, NULL, 'r'},
      {"list", no_argument, NULL, 'l'},
      {"json", no_argument, NULL, 'j'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  const char *backend = "c";
  int threads = 0;
  bool remeasure = false, as_json = false, list = false;
  optind = 1;
  opterr = 0; /* our own messages name the option and the valid ones */
  int c;
  while ((c = getopt_long(argc, argv, ":b:t:h", opts, NULL)) != -1) {
    switch (c) {
    case 'b': backend = optarg; break;
    case 't': {
      char *end;
      long v = strtol(optarg, &end, 10);
      if (!*optarg || *end || v < 1 || v > 4096) {
        fprintf(stderr,
                "ksearch roofline: --threads \"%s\": expected a whole number "
                "from 1 to 4096\n",
                optarg);
        return 2;
      }
      threads = (int)v;
      break;
    }
    case 'r': remeasure = true; break;
    case 'l': list = true; break;
    case 'j': as_json = true; break;
    case 'h': fputs(USAGE, stdout); return 0;
    case ':':
      fprintf(stderr, "ksearch roofline: option %s needs a value; %s\n",
              argv[optind - 1], VALID);
      return 2;
    default:
      fprintf(stderr, "ksearch roofline: unknown option '%s'; %s\n",
              optopt ? (char[]){'-', (char)optopt, 0} : argv[optind - 1],
              VALID);
      return 2;
    }
  }
  if (optind < argc) {
    fprintf(stderr,
            "ksearch roofline: unexpected argument '%s'; it takes options "
            "only (%s)\n",
            argv[optind], VALID);
    return 2;
  }
  if (list) {
    if (strcmp(backend, "opencl")) {
      fprintf(stderr, "ksearch roofline: --list lists OpenCL devices; use "
                      "--backend opencl --list\n");
      return 2;
    }
    return list_opencl(as_json);
  }
  if (threads <= 0)
    threads = ks_nproc();

  ks_err err = {0};
  char path[PATH_MAX];
  ks_code rc =
      ks_roofline_cache_path(backend, threads, path, sizeof path, &err);
  if (!rc && (remeasure || !ks_file_exists(path)))
    fprintf(stderr,
            "ksearch: measuring the %s roofline with %d thread%s (a few "
            "seconds)...\n",
            backend, threads, threads == 1 ? "" : "s");
  ks_roofline r;
  if (!rc)
    rc = ks_roofline_get(backend, threads, remeasure, &r, &err);
  if (rc) {
    fprintf(stderr, "ksearch roofline: %s\n", err.msg);
    return ks_exit_code(rc);
  }
  if (as_json)
    return print_json(&r, path);
  print_table(&r, path);
  return 0;
}
