/* test_task_bad.c — malformed tasks (src/task/task.c). Every one must be
 * rejected as bad input (exit code 2) with a message naming the file, the
 * JSON path and the fix: syntax, missing and unknown names, sizes, inits,
 * identifiers, and (issue 13) values out of their dtype's range and wrong
 * types. Fixture: task_fixture.h. */
#include "llm/context.h"
#include "task/expr.h"
#include "task/inputs.h"
#include "task_fixture.h"
#include "util/util.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------- malformed */

Test(task, bad_invalid_json) {
  tt_bad("{'name': 't1',\n 'class': }", "line 2", "column", "invalid JSON",
         "fix the JSON", NULL);
}

Test(task, bad_duplicate_json_keys) {
  tt_bad("{'name': 't1',\n 'name': 't2'}", "line 2", "duplicate",
         "each key once", NULL);
}

Test(task, bad_top_level_not_object) {
  tt_bad("[1, 2]", "top level", "object", NULL);
}

Test(task, bad_unknown_axis_in_shape) {
  tt_bad(TT_HEAD TT_AXES
         "'inputs': {'x': {'shape': ['rows', 'colz'], 'dtype': 'float32'}}, "
         "" TT_OUT TT_REF TT_WL,
         "inputs.x.shape[1]", "colz", "declare it under \"axes\"", NULL);
}

Test(task, bad_workload_missing_axis) {
  tt_bad(TT_HEAD TT_AXES TT_IN TT_OUT TT_REF
         "'workloads': [{'rows': 4, 'cols': 8}, {'rows': 4}]}",
         "workloads[1]", "\"cols\"", "every var axis needs a size", NULL);
}

Test(task, bad_workload_unknown_axis) {
  tt_bad(TT_HEAD TT_AXES TT_IN TT_OUT TT_REF
         "'workloads': [{'rows': 4, 'cols': 8, 'batch': 2}]}",
         "workloads[0].batch", "unknown axis", "declared under \"axes\"", NULL);
}

Test(task, bad_unsupported_dtype) {
  tt_bad(TT_HEAD TT_AXES
         "'inputs': {'x': {'shape': ['rows', 'cols'], 'dtype': 'float64'}}, "
         "" TT_OUT TT_REF TT_WL,
         "inputs.x.dtype", "float64", "use one of float32", NULL);
}

Test(task, bad_missing_dtype) {
  tt_bad(TT_HEAD TT_AXES TT_IN
         "'outputs': {'y': {'shape': ['rows', 'cols']}}, " TT_REF TT_WL,
         "outputs.y.dtype", "missing", "use one of", NULL);
}

Test(task, bad_missing_reference_file) {
  tt_bad(TT_HEAD TT_AXES TT_IN TT_OUT "'reference': 'ref_missing.c', " TT_WL,
         "reference", "ref_missing.c", "does not exist",
         "create it or fix the path", NULL);
}

Test(task, bad_missing_reference_key) {
  tt_bad(TT_HEAD TT_AXES TT_IN TT_OUT TT_WL, "reference: missing",
         "reference.c", NULL);
}

Test(task, bad_cost_syntax_error) {
  tt_bad(TT_HEAD TT_AXES TT_IN TT_OUT TT_REF
         "'cost': {'bytes': '4*(rows*cols'}, " TT_WL,
         "cost.bytes", "column", "4*(rows*cols",
         "write arithmetic over the axes", NULL);
}

Test(task, bad_cost_unknown_name) {
  tt_bad(TT_HEAD TT_AXES TT_IN TT_OUT TT_REF
         "'cost': {'bytes': '4*rows*cols', 'flops': '2*rows*colz'}, " TT_WL,
         "cost.flops", "'colz'", "column 8", "rows", "cols", "known", NULL);
}

Test(task, bad_cost_not_string) {
  tt_bad(TT_HEAD TT_AXES TT_IN TT_OUT TT_REF "'cost': {'bytes': 42}, " TT_WL,
         "cost.bytes", "string expression", NULL);
}

Test(task, bad_zero_size) {
  tt_bad(TT_HEAD TT_AXES TT_IN TT_OUT TT_REF
         "'workloads': [{'rows': 0, 'cols': 8}]}",
         "workloads[0].rows", "positive integers", NULL);
}

Test(task, bad_negative_size) {
  tt_bad(TT_HEAD TT_AXES TT_IN TT_OUT TT_REF
         "'workloads': [{'rows': 4, 'cols': 8}, {'rows': 4, 'cols': -3}]}",
         "workloads[1].cols", "positive integers", NULL);
}

Test(task, bad_fractional_size) {
  tt_bad(TT_HEAD TT_AXES TT_IN TT_OUT TT_REF
         "'workloads': [{'rows': 4.5, 'cols': 8}]}",
         "workloads[0].rows", "positive integers", NULL);
}

Test(task, bad_workload_too_large) {
  tt_bad(TT_HEAD TT_AXES TT_IN TT_OUT TT_REF
         "'workloads': [{'rows': 1000000, 'cols': 1000000}]}",
         "workloads[0]", "GiB", "use smaller sizes", NULL);
}

/* 2^32 * 2^32 elements wraps to 0 in int64 arithmetic; it must still be
 * rejected as too large. */
Test(task, bad_workload_size_overflow) {
  tt_bad(TT_HEAD TT_AXES TT_IN TT_OUT TT_REF
         "'workloads': [{'rows': 4294967296, 'cols': 4294967296}]}",
         "workloads[0]", "use smaller sizes", NULL);
}

Test(task, bad_workload_empty) {
  tt_bad(TT_HEAD TT_AXES TT_IN TT_OUT TT_REF "'workloads': []}", "workloads",
         "missing or empty", "e.g.", NULL);
}

Test(task, bad_const_axis_without_value) {
  tt_bad(TT_HEAD
         "'axes': {'rows': {'type': 'var'}, 'cols': {'type': 'const'}}, "
         "" TT_IN TT_OUT TT_REF "'workloads': [{'rows': 4}]}",
         "axes.cols.value", "const axis needs a positive integer value", NULL);
}

Test(task, bad_const_axis_in_workload_differs) {
  tt_bad(TT_HEAD "'axes': {'rows': {'type': 'var'}, 'cols': {'type': "
                 "'const', 'value': 8}}, " TT_IN TT_OUT TT_REF
                 "'workloads': [{'rows': 4, 'cols': 9}]}",
         "workloads[0].cols", "const axis is 8", "remove it", NULL);
}

Test(task, bad_axis_type) {
  tt_bad(TT_HEAD "'axes': {'rows': {'type': 'variable'}, 'cols': {'type': "
                 "'var'}}, " TT_IN TT_OUT TT_REF TT_WL,
         "axes.rows.type", "\"var\", \"const\" or \"derived\"", NULL);
}

Test(task, bad_duplicate_input_output_name) {
  tt_bad(TT_HEAD TT_AXES TT_IN
         "'outputs': {'x': {'shape': ['rows', 'cols'], 'dtype': 'float32'}}, "
         "" TT_REF TT_WL,
         "\"x\"", "used twice", "rename one", NULL);
}

Test(task, bad_duplicate_tensor_axis_name) {
  tt_bad(TT_HEAD TT_AXES
         "'inputs': {'rows': {'shape': ['rows', 'cols'], 'dtype': "
         "'float32'}}, " TT_OUT TT_REF TT_WL,
         "\"rows\"", "used twice", "rename one", NULL);
}

Test(task, bad_duplicate_scalar_axis_name) {
  tt_bad(TT_HEAD TT_AXES "'scalars': {'cols': {'dtype': 'float32', 'value': "
                         "1}}, " TT_IN TT_OUT TT_REF TT_WL,
         "\"cols\"", "used twice", "rename one", NULL);
}

Test(task, bad_duplicate_scalar_output_name) {
  tt_bad(TT_HEAD TT_AXES "'scalars': {'y': {'dtype': 'int32', 'value': 1}}, "
                         "" TT_IN TT_OUT TT_REF TT_WL,
         "\"y\"", "used twice", "rename one", NULL);
}

Test(task, bad_init_string) {
  tt_bad(TT_HEAD TT_AXES
         "'inputs': {'x': {'shape': ['rows', 'cols'], 'dtype': 'float32', "
         "'init': 'gaussian'}}, " TT_OUT TT_REF TT_WL,
         "inputs.x.init", "gaussian", "use one of normal", NULL);
}

Test(task, bad_init_trailing_text) {
  tt_bad(TT_HEAD TT_AXES
         "'inputs': {'x': {'shape': ['rows', 'cols'], 'dtype': 'float32', "
         "'init': 'uniform(0,1) extra'}}, " TT_OUT TT_REF TT_WL,
         "inputs.x.init", "use one of", NULL);
}

Test(task, bad_init_not_string) {
  tt_bad(TT_HEAD TT_AXES
         "'inputs': {'x': {'shape': ['rows', 'cols'], 'dtype': 'float32', "
         "'init': 3}}, " TT_OUT TT_REF TT_WL,
         "inputs.x.init", "string", NULL);
}

Test(task, bad_integer_tensor_normal_init) {
  tt_bad(TT_HEAD TT_AXES
         "'inputs': {'x': {'shape': ['rows', 'cols'], 'dtype': 'int32', "
         "'init': 'normal'}}, " TT_OUT TT_REF TT_WL,
         "inputs.x.init", "integer tensor", "randint(a,b) or permutation",
         NULL);
}

Test(task, bad_integer_tensor_default_init) {
  /* no init means normal, which an integer tensor cannot hold */
  tt_bad(TT_HEAD TT_AXES
         "'inputs': {'x': {'shape': ['rows', 'cols'], 'dtype': 'uint8'}}, "
         "" TT_OUT TT_REF TT_WL,
         "inputs.x.init", "randint(a,b)", NULL);
}

Test(task, bad_uniform_reversed) {
  tt_bad(TT_HEAD TT_AXES
         "'inputs': {'x': {'shape': ['rows', 'cols'], 'dtype': 'float32', "
         "'init': 'uniform(1, -1)'}}, " TT_OUT TT_REF TT_WL,
         "inputs.x.init", "a > b", "smaller bound first", NULL);
}

Test(task, bad_randint_reversed) {
  tt_bad(TT_HEAD TT_AXES
         "'inputs': {'x': {'shape': ['rows', 'cols'], 'dtype': 'int64', "
         "'init': 'randint(5,2)'}}, " TT_OUT TT_REF TT_WL,
         "inputs.x.init", "smaller bound first", NULL);
}

Test(task, bad_normal_nonpositive_std) {
  tt_bad(TT_HEAD TT_AXES
         "'inputs': {'x': {'shape': ['rows', 'cols'], 'dtype': 'float32', "
         "'init': 'normal(0, 0)'}}, " TT_OUT TT_REF TT_WL,
         "inputs.x.init", "positive standard deviation", NULL);
}

Test(task, bad_task_name_not_identifier) {
  tt_bad("{'name': 'my-task', 'class': 'x', " TT_AXES TT_IN TT_OUT TT_REF TT_WL,
         "name", "C identifier", "e.g. \"rmsnorm\"", NULL);
}

Test(task, bad_tensor_name_not_identifier) {
  tt_bad(TT_HEAD TT_AXES
         "'inputs': {'1x': {'shape': ['rows', 'cols'], 'dtype': 'float32'}}, "
         "" TT_OUT TT_REF TT_WL,
         "inputs.1x", "C identifiers", NULL);
}

Test(task, bad_axis_name_not_identifier) {
  tt_bad(TT_HEAD "'axes': {'my rows': {'type': 'var'}}, " TT_IN TT_OUT TT_REF
                 "" TT_WL,
         "axes.my rows", "C identifiers", NULL);
}

Test(task, bad_scalar_name_not_identifier) {
  tt_bad(TT_HEAD TT_AXES "'scalars': {'e-ps': {'dtype': 'float32', 'value': "
                         "1}}, " TT_IN TT_OUT TT_REF TT_WL,
         "scalars.e-ps", "C identifiers", NULL);
}

Test(task, bad_scalar_dtype_and_value) {
  tt_bad(TT_HEAD TT_AXES "'scalars': {'eps': {'dtype': 'float16', 'value': "
                         "1}}, " TT_IN TT_OUT TT_REF TT_WL,
         "scalars.eps.dtype", "float32, int32 or int64", NULL);
  tt_bad(TT_HEAD TT_AXES "'scalars': {'eps': {'dtype': 'float32'}}, " TT_IN
                         "" TT_OUT TT_REF TT_WL,
         "scalars.eps.value", "give a number", NULL);
}

Test(task, bad_missing_class_axes_inputs) {
  tt_bad("{'name': 't1', " TT_AXES TT_IN TT_OUT TT_REF TT_WL, "class",
         "e.g. \"row_reduction\"", NULL);
  tt_bad(TT_HEAD TT_IN TT_OUT TT_REF TT_WL, "axes", "missing or empty", NULL);
  tt_bad(TT_HEAD TT_AXES TT_OUT TT_REF TT_WL, "inputs", "missing or empty",
         NULL);
  tt_bad(TT_HEAD TT_AXES TT_IN TT_REF TT_WL, "outputs", "missing or empty",
         NULL);
}

Test(task, bad_shape_not_list) {
  tt_bad(TT_HEAD TT_AXES "'inputs': {'x': {'shape': 'rows', 'dtype': "
                         "'float32'}}, " TT_OUT TT_REF TT_WL,
         "inputs.x.shape", "list of axis names", NULL);
}

Test(task, bad_tolerance) {
  tt_bad(TT_HEAD TT_AXES TT_IN TT_OUT TT_REF
         "'tolerance': {'float32': {'atol': -1, 'rtol': 0}}, " TT_WL,
         "tolerance.float32", "non-negative", NULL);
  tt_bad(TT_HEAD TT_AXES TT_IN TT_OUT TT_REF
         "'tolerance': {'fp32': {'atol': 1, 'rtol': 0}}, " TT_WL,
         "tolerance.fp32", "use float32", NULL);
}

/* ------------------------------------------- issue 13: ranges and types */

Test(task, bad_scalar_out_of_its_dtype_range) {
  tt_bad(TT_HEAD TT_AXES
         "'scalars': {'k': {'dtype': 'int32', 'value': 1e308}}, " TT_IN TT_OUT
             TT_REF TT_WL,
         "scalars.k.value", "int32", NULL);
  tt_bad(TT_HEAD TT_AXES "'scalars': {'k': {'dtype': 'int32', 'value': "
                         "9223372036854775807}}, " TT_IN TT_OUT TT_REF TT_WL,
         "scalars.k.value", "outside", NULL);
  tt_bad(TT_HEAD TT_AXES
         "'scalars': {'k': {'dtype': 'int64', 'value': 1e300}}, " TT_IN TT_OUT
             TT_REF TT_WL,
         "scalars.k.value", "int64", NULL);
  tt_bad(TT_HEAD TT_AXES
         "'scalars': {'k': {'dtype': 'float32', 'value': 1e300}}, " TT_IN TT_OUT
             TT_REF TT_WL,
         "scalars.k.value", "float32", NULL);
  tt_bad(TT_HEAD TT_AXES
         "'scalars': {'k': {'dtype': 'int32', 'value': 1.5}}, " TT_IN TT_OUT
             TT_REF TT_WL,
         "scalars.k.value", "whole number", NULL);
  ks_task t;
  tt_load_ok(
      TT_HEAD TT_AXES
      "'scalars': {'k': {'dtype': 'int32', 'value': -2147483648}}, " TT_IN
          TT_OUT TT_REF TT_WL,
      &t);
  ks_task_free(&t);
}

Test(task, bad_init_bounds_out_of_range) {
  tt_bad(TT_HEAD TT_AXES
         "'inputs': {'x': {'shape': ['rows', 'cols'], 'dtype': 'int32', "
         "'init': 'randint(0,99999999999999999999)'}}, " TT_OUT TT_REF TT_WL,
         "inputs.x.init", "int32", NULL);
  tt_bad(TT_HEAD TT_AXES
         "'inputs': {'x': {'shape': ['rows', 'cols'], 'dtype': 'float32', "
         "'init': 'uniform(0,1e400)'}}, " TT_OUT TT_REF TT_WL,
         "inputs.x.init", "float32", NULL);
  tt_bad(TT_HEAD TT_AXES
         "'inputs': {'x': {'shape': ['rows', 'cols'], 'dtype': 'uint8', "
         "'init': 'randint(0,256)'}}, " TT_OUT TT_REF TT_WL,
         "inputs.x.init", "uint8", NULL);
  tt_bad(TT_HEAD TT_AXES
         "'inputs': {'x': {'shape': ['rows', 'cols'], 'dtype': 'int32', "
         "'init': 'randint(0.5,3)'}}, " TT_OUT TT_REF TT_WL,
         "inputs.x.init", "whole-number", NULL);
}

Test(task, wrong_type_is_not_reported_as_missing) {
  tt_bad(
      TT_HEAD TT_AXES
      "'inputs': {'x': {'shape': ['rows', 'cols'], 'dtype': 5}}, " TT_OUT TT_REF
          TT_WL,
      "inputs.x.dtype", "must be a string, not a number", NULL);
  tt_bad(
      TT_HEAD TT_AXES
      "'inputs': {'x': {'shape': 'rows', 'dtype': 'float32'}}, " TT_OUT TT_REF
          TT_WL,
      "inputs.x.shape", "must be a list, not a string", NULL);
  tt_bad("{'name': 7, 'class': 'row_reduction', " TT_AXES TT_IN TT_OUT TT_REF
             TT_WL,
         "name: must be a string, not a number", NULL);
  tt_bad(TT_HEAD TT_AXES TT_IN TT_OUT "'reference': ['reference.c'], " TT_WL,
         "reference: must be a string, not a list", NULL);
  tt_bad(TT_HEAD TT_AXES
         "'scalars': {'k': {'dtype': 'int32', 'value': '3'}}, " TT_IN TT_OUT
             TT_REF TT_WL,
         "scalars.k.value", "must be a number, not a string", NULL);
}

Test(task, reference_must_be_a_regular_file) {
  tt_bad(TT_HEAD TT_AXES TT_IN TT_OUT "'reference': '/dev/stdin', " TT_WL,
         "reference", "/dev/stdin", "not a regular file", NULL);
  tt_bad(TT_HEAD TT_AXES TT_IN TT_OUT "'reference': '.', " TT_WL, "reference",
         "not a regular file", NULL);
}

Test(task, c_keywords_are_not_names) {
  tt_bad("{'name': 'int', 'class': 'row_reduction', " TT_AXES TT_IN TT_OUT
             TT_REF TT_WL,
         "name", "\"int\"", "C keyword", NULL);
  tt_bad(TT_HEAD TT_AXES "'inputs': {'for': {'shape': ['rows', 'cols'], "
                         "'dtype': 'float32'}}, " TT_OUT TT_REF TT_WL,
         "inputs.for", "keyword", NULL);
  tt_bad(TT_HEAD "'axes': {'rows': {'type': 'var'}, 'cols': {'type': 'var'}, "
                 "'while': {'type': 'var'}}, " TT_IN TT_OUT TT_REF TT_WL,
         "axes.while", "keyword", NULL);
}
