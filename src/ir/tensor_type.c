#include "ir/tensor_type.h"

#include <stdio.h>
#include <string.h>

int dfg_mul_checked(int64_t a, int64_t b, int64_t *out)
{
    if (a < 0 || b < 0)
        return -1;
    if (a != 0 && b > INT64_MAX / a)
        return -1;
    *out = a * b;
    return 0;
}

int64_t dfg_align_up(int64_t value, int64_t alignment)
{
    return (value + alignment - 1) & ~(alignment - 1);
}

int64_t dfg_layout_channels(const dfg_type *type)
{
    int64_t block = dfg_layout_block(type->layout);
    int64_t c = type->shape[1];
    if (type->rank != 4 || block <= 1 || c <= 0 || c > DFG_MAX_ELEMENTS)
        return type->rank >= 2 ? c : 0;
    return (c + block - 1) / block * block;
}

int64_t dfg_type_numel(const dfg_type *type)
{
    int64_t n = 1;
    if (type->rank < 0 || type->rank > DFG_MAX_RANK)
        return -1;
    for (int32_t i = 0; i < type->rank; i++) {
        int64_t dim = i == 1 ? dfg_layout_channels(type) : type->shape[i];
        if (dfg_mul_checked(n, dim, &n) != 0 ||
            n > DFG_MAX_ELEMENTS)
            return -1;
    }
    return n;
}

int64_t dfg_type_bytes(const dfg_type *type)
{
    int64_t n = dfg_type_numel(type);
    size_t size = dfg_dtype_size(type->dtype);
    if (n < 0 || size == 0)
        return -1;
    return n * (int64_t)size;
}

int dfg_type_equal(const dfg_type *a, const dfg_type *b)
{
    if (a->dtype != b->dtype || a->rank != b->rank)
        return 0;
    return memcmp(a->shape, b->shape, (size_t)a->rank * sizeof a->shape[0]) == 0;
}

const char *dfg_layout_name(int32_t layout)
{
    switch (layout) {
    case DFG_LAYOUT_PLAIN:
        return "plain";
    case DFG_LAYOUT_NCHW8C:
        return "nChw8c";
    case DFG_LAYOUT_NCHW16C:
        return "nChw16c";
    case DFG_LAYOUT_NHWC:
        return "nhwc";
    default:
        return NULL;
    }
}

int64_t dfg_layout_block(int32_t layout)
{
    switch (layout) {
    case DFG_LAYOUT_PLAIN:
        return 1;
    case DFG_LAYOUT_NCHW8C:
        return 8;
    case DFG_LAYOUT_NCHW16C:
        return 16;
    default:
        return 0;
    }
}

const char *dfg_type_format(const dfg_type *type, char *buf, size_t size)
{
    size_t used = 0;
    if (size == 0)
        return buf;
    buf[0] = '\0';
    used += (size_t)snprintf(buf, size, "[");
    for (int32_t i = 0; i < type->rank && i < DFG_MAX_RANK && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%lld",
                                 i ? "," : "", (long long)type->shape[i]);
    if (used < size)
        used += (size_t)snprintf(buf + used, size - used, "] %s",
                                 dfg_dtype_name(type->dtype));
    if (type->layout != DFG_LAYOUT_PLAIN && used < size) {
        const char *layout = dfg_layout_name(type->layout);
        snprintf(buf + used, size - used, " %s", layout ? layout : "?");
    }
    return buf;
}
