/* Whether a 'cuda' suite test can run here (see cuda_test_device.h). */
#include "tests/cuda/cuda_test_device.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "dfg/dfg.h"

int cuda_test_device_ready(void)
{
#ifdef DFG_HAVE_CUDA
    if (dfg_cuda_backend_register() != DFG_OK) {
        printf("%s\n", dfg_last_error());
        return 1;
    }
#endif
    const dfg_backend *cuda = NULL;
    if (dfg_backend_find("cuda", &cuda) != DFG_OK) {
        printf("skipped: the cuda backend is not built (nvcc or cuBLAS not "
               "found, or -Dcuda=disabled): %s\n", dfg_last_error());
        return 77;
    }
    if (!dfg_backend_available(cuda)) {
        printf("skipped: %s\n", dfg_last_error());
        return 77;
    }
    return 0;
}

void cuda_test_compile_options(dfg_compile_options *options)
{
    const dfg_backend *cuda = NULL;
    dfg_compile_options_init(options);
    if (dfg_backend_find("cuda", &cuda) != DFG_OK ||
        dfg_compile_options_for(options, dfg_backend_target(cuda)) != DFG_OK)
        fail_msg("compile options for cuda: %s", dfg_last_error());
}
