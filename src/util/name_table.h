/* A set of unique names (open addressing on a string hash), mapping each
 * name to an int32 index. Keys are borrowed: the caller keeps the strings
 * alive while they are in the table. */
#ifndef DFG_NAME_TABLE_H
#define DFG_NAME_TABLE_H

#include <stdint.h>
#include "dfg/allocator.h"

typedef struct dfg_name_table {
    const dfg_allocator *allocator;
    const char **keys;
    int32_t *values;
    int64_t capacity; /* power of two, or 0 */
    int64_t count;
} dfg_name_table;

void dfg_name_table_init(dfg_name_table *table, const dfg_allocator *allocator);
void dfg_name_table_free(dfg_name_table *table);
/* Index stored for name, or -1. */
int32_t dfg_name_table_find(const dfg_name_table *table, const char *name);
/* Adds name -> value (name must not be present); 0, or -1 out of memory. */
int dfg_name_table_insert(dfg_name_table *table, const char *name,
                          int32_t value);
/* Removes name if present. */
void dfg_name_table_remove(dfg_name_table *table, const char *name);
/* table as a copy of src (table initialised, empty) whose keys are other
 * strings equal to src's: the key of index v is key_of(ctx, v). No name
 * is hashed again. 0, or -1 out of memory (table left empty). */
int dfg_name_table_copy(dfg_name_table *table, const dfg_name_table *src,
                        const char *(*key_of)(const void *ctx, int32_t v),
                        const void *ctx);
/* Every index v stored becomes new_index[v] (the keys stay). */
void dfg_name_table_renumber(dfg_name_table *table, const int32_t *new_index);

#endif
