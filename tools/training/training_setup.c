/* The training options of dfgc's commands (training_setup.h). */
#include "tools/training/training_setup.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tools/cli.h"
#include "tools/compile_options.h"
#include "tools/memory_limit_cli.h"
#include "tools/model_source.h"
#include "tools/commands.h"

void dfgc_training_setup_init(dfgc_training_setup *s)
{
    memset(s, 0, sizeof *s);
    dfg_training_options_init(&s->training);
    s->training.optimizer = DFG_OPTIMIZER_ADAM;
    s->training.learning_rate = 0.003f;
    s->training.loss = "loss";
    s->loss = DFG_LOSS_CROSS_ENTROPY;
}

/* OPTION's value: a number in [low, high), or one above 0 when low is 0
 * and positive is set. 1, or -1 after a usage error. */
static int parse_number(const char *command, const char *option,
                        const char *text, float high, int positive, float *out)
{
    char *end;
    float x = strtof(text, &end);
    if (end == text || *end != '\0' || !(x >= 0.0f && x < high) ||
        (positive && x == 0.0f))
        return dfgc_usage_error(command, "%s '%s' is not a number in %s0, "
                                "%g)", option, text, positive ? "(" : "[",
                                (double)high), -1;
    *out = x;
    return 1;
}

/* BYTES, NKiB, NMiB, NGiB or N% (of the arena without a budget). */
static int parse_budget(const char *command, const char *text,
                        dfg_training_options *t)
{
    size_t n = strlen(text);
    if (n > 1 && text[n - 1] == '%') {
        char *end;
        float percent = strtof(text, &end);
        if (end != text + n - 1 || !(percent > 0.0f && percent <= 100.0f))
            return dfgc_usage_error(command, "--memory-budget '%s': a percent "
                                    "must lie in (0, 100]", text), -1;
        t->memory_budget_percent = percent;
        return 1;
    }
    uint64_t bytes;
    /* At most 2^63 - 1: the planner's sizes are int64_t. */
    if (dfg_parse_bytes(text, &bytes) != 0 || bytes > INT64_MAX)
        return dfgc_usage_error(command, "--memory-budget wants BYTES, NKiB, "
                                "NMiB, NGiB (above 0, below 2^63 bytes) or "
                                "N%%, not '%s'", text), -1;
    t->memory_budget_bytes = bytes;
    return 1;
}

/* --lr, --weight-decay, --momentum, then --classes; as
 * dfgc_training_option. */
static int hyper_option(const char *command, int argc, char **argv, int *i,
                        dfgc_training_setup *s)
{
    static const char *const names[] = {"--lr", "--weight-decay", "--momentum"};
    float *targets[] = {&s->training.learning_rate, &s->training.weight_decay,
                        &s->training.momentum};
    const float high[] = {INFINITY, INFINITY, 1.0f};
    const char *value;
    for (int k = 0; k < 3; k++) {
        int found = dfgc_option_value(command, argc, argv, i, names[k], &value);
        s->lr_given |= found == 1 && k == 0;
        if (found == 1)
            return parse_number(command, names[k], value, high[k], k == 0,
                                targets[k]);
        if (found != 0)
            return found;
    }
    int found = dfgc_option_value(command, argc, argv, i, "--classes", &value);
    if (found == 1) {
        uint64_t classes;
        if (dfgc_parse_u64(command, "--classes", value, 1, 1u << 24,
                           &classes) != 0)
            return -1;
        s->classes = (int64_t)classes;
    }
    return found;
}

int dfgc_training_option(const char *command, int argc, char **argv, int *i,
                         dfgc_training_setup *s)
{
    const char *value;
    int found = dfgc_precision_option(command, argc, argv, i, &s->precision,
                                      NULL);
    if (found != 0)
        return found;
    found = dfgc_option_value(command, argc, argv, i, "--memory-budget",
                              &value);
    if (found != 0)
        return found < 0 ? -1 : parse_budget(command, value, &s->training);
    found = dfgc_option_value(command, argc, argv, i, "--memory-limit",
                              &value);
    if (found == 1) {
        uint64_t limit;
        if (dfg_parse_bytes(value, &limit) != 0)
            return dfgc_usage_error(command, "--memory-limit wants BYTES, "
                                    "NMiB or NGiB above 0, not '%s'",
                                    value), -1;
        dfgc_set_memory_limit(limit);
    }
    if (found != 0)
        return found;
    found = dfgc_option_value(command, argc, argv, i, "--loss", &value);
    if (found == 1 && dfg_loss_from_name(value, &s->loss) != 0)
        return dfgc_usage_error(command, "unknown loss '%s' (cross_entropy, "
                                "mse)", value), -1;
    if (found != 0)
        return found;
    found = dfgc_option_value(command, argc, argv, i, "--optimizer", &value);
    if (found == 1) {
        if (dfg_optimizer_from_name(value, &s->training.optimizer) != 0)
            return dfgc_usage_error(command, "unknown optimizer '%s' (sgd, "
                                    "adam, adamw)", value), -1;
        if (!s->lr_given)
            s->training.learning_rate =
                s->training.optimizer == DFG_OPTIMIZER_SGD ? 0.05f : 0.003f;
    }
    return found != 0 ? found : hyper_option(command, argc, argv, i, s);
}

dfg_status dfgc_training_graph(const char *model, dfgc_training_setup *s,
                               dfg_graph **out)
{
    dfg_status st = dfgc_load_graph(model, 1, out);
    if (st != DFG_OK)
        return st;
    st = dfg_graph_add_loss(*out, s->loss, &s->classes);
    if (st != DFG_OK) {
        dfg_graph_destroy(*out);
        *out = NULL;
    }
    return st;
}
