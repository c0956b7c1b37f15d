/* The bundled example models, by name (include/dfg/models.h). */
#include "dfg/models.h"

#include <string.h>
#include "models/model_builder.h"
#include "util/error.h"

typedef struct model_entry {
    const char *name;
    const char *description;
    dfg_status (*build)(dfg_model_ctx *m);
} model_entry;

static const model_entry models[] = {
    {"mlp", "64-128-64-10 perceptron with relu and softmax, batch 32 "
            "(8x8 digits)", dfg_model_build_mlp},
    {"cnn", "residual CNN: conv-bn-relu stem, 3 residual blocks, global "
            "pooling, gemm, softmax; input [32,1,8,8]", dfg_model_build_cnn},
    {"transformer", "one pre-LN transformer block: 64 tokens, d_model 128, "
                    "4 heads, gelu MLP of 512", dfg_model_build_transformer},
};

#define N_MODELS ((int)(sizeof models / sizeof models[0]))

/* Every model's weights come from this seed, so a name always means the
 * same numbers. */
#define DFG_MODEL_SEED 0x9E3779B97F4A7C15ULL

static const model_entry *find_model(const char *name)
{
    for (int i = 0; name && i < N_MODELS; i++)
        if (strcmp(models[i].name, name) == 0)
            return &models[i];
    return NULL;
}

const char *const *dfg_model_names(void)
{
    static const char *const names[] = {"mlp", "cnn", "transformer", NULL};
    _Static_assert(sizeof names / sizeof names[0] == N_MODELS + 1,
                   "dfg_model_names must list every model");
    return names;
}

const char *dfg_model_description(const char *name)
{
    const model_entry *entry = find_model(name);
    return entry ? entry->description : NULL;
}

dfg_status dfg_model_build(const char *name, const dfg_allocator *allocator,
                           dfg_graph **out)
{
    if (!out)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_model_build: out is NULL");
    *out = NULL;
    const model_entry *entry = find_model(name);
    if (!entry)
        return dfg_error(DFG_ERR_NOT_FOUND,
                         "unknown model '%s' (bundled models: mlp, cnn, "
                         "transformer; or give a .dfgp or .onnx file)",
                         name ? name : "(null)");
    dfg_model_ctx m = {.allocator = allocator, .rng_state = DFG_MODEL_SEED};
    dfg_status s = dfg_graph_create(allocator, &m.graph);
    if (s != DFG_OK)
        return s;
    s = entry->build(&m);
    if (s != DFG_OK) {
        dfg_graph_destroy(m.graph);
        return dfg_error_prefix(s, "model '%s'", entry->name);
    }
    *out = m.graph;
    return DFG_OK;
}
