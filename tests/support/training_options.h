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

#endif
