/* Compile options for a training graph whose loss output is named "loss",
 * shared by the tests of several rooms. */
#ifndef DFG_TEST_TRAINING_OPTIONS_H
#define DFG_TEST_TRAINING_OPTIONS_H

#include "dfg/dfg.h"

/* *t and *o set to their defaults, t->loss = "loss", o->training = t. */
static inline void training_compile_options(dfg_training_options *t,
                                            dfg_compile_options *o)
{
    dfg_training_options_init(t);
    t->loss = "loss";
    dfg_compile_options_init(o);
    o->training = t;
}

/* g compiled into *p (NULL on an error) as an Adam step at learning rate
 * 0.001 within budget_bytes (0: none); g is destroyed. */
static inline dfg_status training_compile_adam(dfg_graph *g,
                                               uint64_t budget_bytes,
                                               dfg_program **p)
{
    dfg_training_options t;
    dfg_compile_options o;
    training_compile_options(&t, &o);
    t.optimizer = DFG_OPTIMIZER_ADAM;
    t.learning_rate = 0.001f;
    t.memory_budget_bytes = budget_bytes;
    *p = NULL;
    dfg_status st = dfg_compile(g, &o, p);
    dfg_graph_destroy(g);
    return st;
}

#endif
