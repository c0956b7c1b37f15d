/* libFuzzer target for dfg_onnx_import_memory (scripts/fuzz-onnx-import
 * builds and runs it with clang, AddressSanitizer and UBSan).
 *
 * Each input is imported as an ONNX model, with external data refused
 * (no base directory). A model that imports is also compiled, so that
 * whatever the importer accepts is safe for the passes behind it; the
 * program is checked by the plan verifier. Any crash, hang, leak or
 * sanitizer report is a finding. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include "dfg/dfg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dfg_graph *graph = NULL;
    if (dfg_onnx_import_memory(data, size, NULL, NULL, &graph) != DFG_OK)
        return 0;
    dfg_program *program = NULL;
    if (dfg_compile(graph, NULL, &program) == DFG_OK) {
        if (dfg_program_verify(program) != DFG_OK)
            abort();
        dfg_program_destroy(program);
    }
    dfg_graph_destroy(graph);
    return 0;
}
