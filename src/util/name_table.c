#include "util/name_table.h"

#include <string.h>
#include "util/memory.h"

static uint64_t hash_name(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

void dfg_name_table_init(dfg_name_table *table, const dfg_allocator *allocator)
{
    memset(table, 0, sizeof *table);
    table->allocator = allocator;
}

void dfg_name_table_free(dfg_name_table *table)
{
    dfg_free(table->allocator, table->keys);
    dfg_free(table->allocator, table->values);
    table->keys = NULL;
    table->values = NULL;
    table->capacity = table->count = 0;
}

static int64_t find_slot(const dfg_name_table *table, const char *name)
{
    int64_t mask = table->capacity - 1;
    int64_t i = (int64_t)(hash_name(name) & (uint64_t)mask);
    while (table->keys[i] && strcmp(table->keys[i], name) != 0)
        i = (i + 1) & mask;
    return i;
}

int32_t dfg_name_table_find(const dfg_name_table *table, const char *name)
{
    if (table->capacity == 0)
        return -1;
    int64_t i = find_slot(table, name);
    return table->keys[i] ? table->values[i] : -1;
}

static int grow(dfg_name_table *table)
{
    int64_t capacity = table->capacity ? table->capacity * 2 : 64;
    const char **keys = dfg_calloc(table->allocator, (size_t)capacity, sizeof *keys);
    int32_t *values = dfg_calloc(table->allocator, (size_t)capacity, sizeof *values);
    if (!keys || !values) {
        dfg_free(table->allocator, keys);
        dfg_free(table->allocator, values);
        return -1;
    }
    dfg_name_table old = *table;
    table->keys = keys;
    table->values = values;
    table->capacity = capacity;
    for (int64_t i = 0; i < old.capacity; i++) {
        if (old.keys[i]) {
            int64_t slot = find_slot(table, old.keys[i]);
            table->keys[slot] = old.keys[i];
            table->values[slot] = old.values[i];
        }
    }
    dfg_free(table->allocator, old.keys);
    dfg_free(table->allocator, old.values);
    return 0;
}

int dfg_name_table_insert(dfg_name_table *table, const char *name, int32_t value)
{
    if ((table->count + 1) * 2 > table->capacity && grow(table) != 0)
        return -1;
    int64_t i = find_slot(table, name);
    table->keys[i] = name;
    table->values[i] = value;
    table->count++;
    return 0;
}

void dfg_name_table_remove(dfg_name_table *table, const char *name)
{
    if (table->capacity == 0)
        return;
    int64_t mask = table->capacity - 1;
    int64_t i = find_slot(table, name);
    if (!table->keys[i])
        return;
    table->keys[i] = NULL;
    table->count--;
    /* Re-insert the rest of the probe run so lookups still find them. */
    for (int64_t j = (i + 1) & mask; table->keys[j]; j = (j + 1) & mask) {
        const char *key = table->keys[j];
        int32_t value = table->values[j];
        table->keys[j] = NULL;
        int64_t slot = find_slot(table, key);
        table->keys[slot] = key;
        table->values[slot] = value;
    }
}

int dfg_name_table_copy(dfg_name_table *table, const dfg_name_table *src,
                        const char *(*key_of)(const void *ctx, int32_t v),
                        const void *ctx)
{
    if (src->capacity == 0)
        return 0;
    table->keys = dfg_calloc(table->allocator, (size_t)src->capacity,
                             sizeof *table->keys);
    table->values = dfg_calloc(table->allocator, (size_t)src->capacity,
                               sizeof *table->values);
    if (!table->keys || !table->values) {
        dfg_name_table_free(table);
        return -1;
    }
    table->capacity = src->capacity;
    table->count = src->count;
    /* Equal strings hash alike: every key keeps its slot. */
    for (int64_t i = 0; i < src->capacity; i++)
        if (src->keys[i]) {
            table->keys[i] = key_of(ctx, src->values[i]);
            table->values[i] = src->values[i];
        }
    return 0;
}

void dfg_name_table_renumber(dfg_name_table *table, const int32_t *new_index)
{
    for (int64_t i = 0; i < table->capacity; i++)
        if (table->keys[i])
            table->values[i] = new_index[table->values[i]];
}
