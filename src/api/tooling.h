/* tooling.h — what the cxla command-line tool (tools/) uses of cxla's insides beyond the
 * public cxla.h: its one stated interface, so that the CLI's reach into the library is written
 * in one place (tests/layers.sh checks that tools/ includes nothing else of src/). Programs of
 * users should need only cxla.h; what a tool needs here and a user might too is a candidate for
 * the public API.
 *
 * What the CLI uses and why:
 *  - flags (core/flags.h, core/context.h): CLI options are cxla flags (cx_flags_is_flag,
 *    cx_flags_help) and --emit-ptx compiles with the context's flags; the trace is written
 *    before the tool exits (cx_context_flush_trace);
 *  - the backend registry (runtime/executable.h): --help lists the backends this build has and
 *    the ones it lacks; `run` moves literals into and out of buffers instead of copying them
 *    (cx_buffer_adopt_literal, cx_buffer_take_literal), so its peak memory is the run's data;
 *  - --check and --check-each (ir/literal.h, ir/literal_diff.h, ir/clone.h, ir/verify.h,
 *    passes/error_bound.h): element-wise comparison with tolerances and the error-bound
 *    analysis, a module cut at one instruction to name the first that differs;
 *  - --list-passes (passes/pass.h): the pipeline's steps;
 *  - --emit-ptx (backend/gpu/gpu_build.h): the GPU build without a GPU;
 *  - files, string buffers and modules (util/file.h, text/hlo.h): reading inputs, building
 *    messages, freeing what it made. */
#ifndef CX_TOOLING_H
#define CX_TOOLING_H
#include "backend/gpu/gpu_build.h"
#include "core/context.h"
#include "core/flags.h"
#include "ir/clone.h"
#include "ir/literal.h"
#include "ir/literal_diff.h"
#include "ir/verify.h"
#include "passes/error_bound.h"
#include "passes/pass.h"
#include "runtime/executable.h"
#include "text/hlo.h"
#include "util/file.h"

#endif
