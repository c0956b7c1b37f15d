/* The .npz reader (npz.h). The whole file is read into memory and its zip
 * local headers are walked in order; the central directory is not needed
 * for stored entries, whose sizes the local header (or its zip64 extra
 * field) gives. */
#include "tools/training/npz.h"
#include "tools/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define LOCAL_HEADER 0x04034b50u
#define LOCAL_HEADER_BYTES 30
#define ZIP64_EXTRA 0x0001u
#define NPZ_MAX_BYTES ((int64_t)1 << 40)

static uint32_t le16(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static uint32_t le32(const unsigned char *p)
{
    return le16(p) | le16(p + 2) << 16;
}

static uint64_t le64(const unsigned char *p)
{
    return le32(p) | (uint64_t)le32(p + 4) << 32;
}

/* The whole file at path, malloc'd. */
static int read_all(const char *path, unsigned char **bytes, size_t *size)
{
    FILE *f;
    if (dfg_fopen_regular_file(path, &f) != DFG_OK)
        return dfgc_error("%s", dfg_last_error());
    long end = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (end < 0 || end > NPZ_MAX_BYTES || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return dfgc_error("%s: cannot read it (or larger than 1 TiB)", path);
    }
    *size = (size_t)end;
    *bytes = malloc(*size + 1);
    int ok = *bytes && fread(*bytes, 1, *size, f) == *size;
    fclose(f);
    if (!ok) {
        free(*bytes); /* free(NULL) when malloc failed */
        *bytes = NULL;
        return dfgc_error("%s: cannot read its %zu bytes", path, *size);
    }
    return 0;
}

/* 1 if the archive ends in its end-of-central-directory record (22 bytes
 * and the comment it sizes), as a complete zip does: a truncated file
 * whose entries x and y survived would otherwise read as whole. */
static int has_end_record(const unsigned char *b, size_t size)
{
    for (size_t back = 22; back <= size && back <= 22 + 65535; back++) {
        const unsigned char *r = b + size - back;
        if (le32(r) == 0x06054b50u && 22 + le16(r + 20) == back)
            return 1;
    }
    return 0;
}

/* One zip entry: its name and where its stored bytes are. */
typedef struct zip_entry {
    const char *name;
    size_t name_len;
    uint32_t method;     /* 0 stored, 8 deflated */
    size_t offset, size; /* of the data in the file */
    uint64_t usize;      /* the data's size once inflated */
    uint32_t crc;        /* CRC-32 of the inflated data */
} zip_entry;

/* Sizes from a zip64 extra field, for the 32-bit fields set to ~0. */
static int zip64_sizes(const unsigned char *extra, size_t len, uint64_t *usize,
                       uint64_t *csize)
{
    for (size_t at = 0; at + 4 <= len;) {
        uint32_t id = le16(extra + at), n = le16(extra + at + 2);
        if (at + 4 + n > len)
            return -1;
        if (id == ZIP64_EXTRA) {
            const unsigned char *p = extra + at + 4;
            size_t need = (*usize == 0xffffffffu) * 8 + (*csize == 0xffffffffu) * 8;
            if (n < need)
                return -1;
            if (*usize == 0xffffffffu) {
                *usize = le64(p);
                p += 8;
            }
            if (*csize == 0xffffffffu)
                *csize = le64(p);
            return 0;
        }
        at += 4 + n;
    }
    return *usize == 0xffffffffu || *csize == 0xffffffffu ? -1 : 0;
}

/* The entry whose local header is at *at; *at moves past its data. 1 at
 * the end of the local headers (the central directory), 0 on an entry,
 * -1 on a malformed one. */
static int next_entry(const unsigned char *b, size_t size, size_t *at,
                      zip_entry *e)
{
    if (*at + 4 > size)
        return -1;
    if (le32(b + *at) != LOCAL_HEADER)
        return 1;
    if (*at + LOCAL_HEADER_BYTES > size)
        return -1;
    const unsigned char *h = b + *at;
    uint32_t flags = le16(h + 6), name_len = le16(h + 26), extra_len = le16(h + 28);
    uint64_t csize = le32(h + 18), usize = le32(h + 22);
    size_t data = *at + LOCAL_HEADER_BYTES + name_len + extra_len;
    if (data > size || (flags & 1u) ||
        zip64_sizes(h + LOCAL_HEADER_BYTES + name_len, extra_len, &usize,
                    &csize) != 0)
        return -1;
    e->name = (const char *)h + LOCAL_HEADER_BYTES;
    e->name_len = name_len;
    e->method = le16(h + 8);
    /* Sizes after the data (flag bit 3) are not read here: refused. */
    if ((flags & 8u) && csize == 0)
        return -1;
    if (csize > size - data || (e->method == 0 && usize != csize))
        return -1;
    e->offset = data;
    e->size = (size_t)csize;
    e->usize = usize;
    e->crc = le32(h + 14);
    *at = data + (size_t)csize;
    return 0;
}

/* Finds entry NAME.npy. */
static int find_entry(const char *path, const unsigned char *b, size_t size,
                      const char *name, zip_entry *e)
{
    size_t want = strlen(name), at = 0;
    for (;;) {
        int r = next_entry(b, size, &at, e);
        if (r < 0)
            return dfgc_error("%s: not a readable .npz (a zip archive of .npy "
                              "files, as numpy.savez writes): malformed or "
                              "truncated zip entry at byte %zu", path, at);
        if (r > 0)
            return dfgc_error("%s: has no array '%s' (entry '%s.npy')", path,
                              name, name);
        if (e->name_len == want + 4 && memcmp(e->name, name, want) == 0 &&
            memcmp(e->name + want, ".npy", 4) == 0)
            break;
    }
    if (e->method != 0 && e->method != 8)
        return dfgc_error("%s: '%s.npy' is compressed with zip method %u "
                          "(stored and deflated entries only, as numpy.savez "
                          "and numpy.savez_compressed write)", path, name,
                          (unsigned)e->method);
    return 0;
}

/* The value text after 'key': in a .npy header dict, or NULL. */
static const char *header_value(const char *header, const char *key)
{
    const char *at = strstr(header, key);
    if (!at)
        return NULL;
    at += strlen(key);
    while (*at == ' ')
        at++;
    return *at == ':' ? at + 1 + strspn(at + 1, " ") : NULL;
}

/* "(2, 3)", "(5,)" or "()" into out's shape and count. */
static int parse_shape(const char *text, dfgc_array *out)
{
    if (*text++ != '(')
        return -1;
    out->rank = 0;
    out->count = 1;
    while (*text != ')') {
        char *end;
        if (out->rank == DFGC_NPY_MAX_RANK || *text < '0' || *text > '9')
            return -1;
        long long d = strtoll(text, &end, 10);
        if (d < 0 || (d > 0 && out->count > INT64_MAX / d))
            return -1;
        out->shape[out->rank++] = d;
        out->count *= d;
        text = end + strspn(end, " ");
        if (*text == ',')
            text += 1 + strspn(text + 1, " ");
        else if (*text != ')')
            return -1;
    }
    return 0;
}

/* The .npy header of an entry: dtype, order and shape. */
static int parse_npy_header(const char *header, dfgc_array *out)
{
    const char *descr = header_value(header, "'descr'");
    const char *order = header_value(header, "'fortran_order'");
    const char *shape = header_value(header, "'shape'");
    if (!descr || !order || !shape)
        return -1;
    if (strncmp(descr, "'<f4'", 5) == 0)
        out->dtype = DFG_F32;
    else if (strncmp(descr, "'<i8'", 5) == 0)
        out->dtype = DFG_I64;
    else
        return -2;
    if (strncmp(order, "False", 5) != 0)
        return -3;
    return parse_shape(shape, out);
}

/* The array in an entry's bytes. */
static int parse_npy(const char *path, const char *name, const unsigned char *b,
                     size_t size, dfgc_array *out)
{
    static const unsigned char magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
    if (size < 10 || memcmp(b, magic, 6) != 0 || b[6] < 1 || b[6] > 3)
        return dfgc_error("%s: '%s.npy' is not a .npy array (version 1-3)",
                          path, name);
    size_t header_len = b[6] == 1 ? le16(b + 8) : (size < 12 ? SIZE_MAX : le32(b + 8));
    size_t start = b[6] == 1 ? 10 : 12;
    if (header_len > size - start || header_len > 65536)
        return dfgc_error("%s: '%s.npy' has a truncated header", path, name);
    char header[65537];
    size_t stored_len = header_len;
    memcpy(header, b + start, header_len);
    /* The header ends in spaces and a newline: not part of a message. */
    while (header_len > 0 && (header[header_len - 1] == '\n' ||
                              header[header_len - 1] == ' '))
        header_len--;
    header[header_len] = '\0';
    int r = parse_npy_header(header, out);
    if (r == -2)
        return dfgc_error("%s: '%s.npy' must hold float32 ('<f4') or int64 "
                          "('<i8') little-endian values: its header is %s",
                          path, name, header);
    if (r == -3)
        return dfgc_error("%s: '%s.npy' is in Fortran order; save a "
                          "C-ordered array (numpy.ascontiguousarray)", path, name);
    if (r != 0)
        return dfgc_error("%s: '%s.npy' has a malformed header: %s", path,
                          name, header);
    size_t body = size - start - stored_len;
    if ((uint64_t)out->count > body ||
        (size_t)out->count * (out->dtype == DFG_F32 ? 4 : 8) != body)
        return dfgc_error("%s: '%s.npy' holds %zu bytes of data, its shape "
                          "needs %lld values", path, name, body,
                          (long long)out->count);
    out->data = malloc(body + 1);
    if (!out->data)
        return dfgc_error("%s: out of memory for '%s'", path, name);
    memcpy(out->data, b + start + stored_len, body);
    return 0;
}

/* A deflated entry's bytes, malloc'd: exactly e->usize of them. */
static int inflate_entry(const char *path, const char *name,
                         const unsigned char *b, const zip_entry *e,
                         unsigned char **out)
{
    *out = e->usize <= (uint64_t)NPZ_MAX_BYTES ? malloc((size_t)e->usize + 1)
                                               : NULL;
    if (!*out)
        return dfgc_error("%s: '%s.npy' inflates to %llu bytes: out of memory",
                          path, name, (unsigned long long)e->usize);
    z_stream z;
    memset(&z, 0, sizeof z);
    int r = inflateInit2(&z, -MAX_WBITS); /* raw deflate, as zip stores it */
    size_t in = 0, produced = 0;
    while (r == Z_OK) {
        /* zlib counts in uInt: feed and drain at most 1 GiB at a time. */
        size_t in_chunk = e->size - in < (1u << 30) ? e->size - in : (1u << 30);
        size_t out_room = (size_t)e->usize + 1 - produced;
        z.next_in = (unsigned char *)b + e->offset + in;
        z.avail_in = (uInt)in_chunk;
        z.next_out = *out + produced;
        z.avail_out = (uInt)(out_room < (1u << 30) ? out_room : (1u << 30));
        uInt had_in = z.avail_in, had_out = z.avail_out;
        r = inflate(&z, Z_NO_FLUSH);
        in += had_in - z.avail_in;
        produced += had_out - z.avail_out;
        if (r == Z_OK && had_in == z.avail_in && had_out == z.avail_out)
            r = Z_BUF_ERROR; /* no progress: the input ended early */
    }
    inflateEnd(&z);
    if (r != Z_STREAM_END || produced != e->usize) {
        free(*out);
        *out = NULL;
        return dfgc_error("%s: '%s.npy' is not valid deflated data of %llu "
                          "bytes (truncated or corrupt)", path, name,
                          (unsigned long long)e->usize);
    }
    return 0;
}

int dfgc_npz_read(const char *path, const char *name, dfgc_array *out)
{
    memset(out, 0, sizeof *out);
    unsigned char *bytes = NULL;
    size_t size = 0;
    zip_entry e = {NULL, 0, 0, 0, 0, 0, 0};
    int r = read_all(path, &bytes, &size);
    if (r == 0 && !has_end_record(bytes, size))
        r = dfgc_error("%s: not a complete .npz (a zip archive of .npy files, "
                       "as numpy.savez writes): truncated, or not a zip "
                       "archive", path);
    if (r == 0)
        r = find_entry(path, bytes, size, name, &e);
    unsigned char *inflated = NULL;
    if (r == 0 && e.method == 8)
        r = inflate_entry(path, name, bytes, &e, &inflated);
    const unsigned char *data = inflated ? inflated : bytes + e.offset;
    if (r == 0 && crc32_z(0, data, (z_size_t)e.usize) != e.crc)
        r = dfgc_error("%s: '%s.npy' fails its CRC-32 check (corrupted)",
                       path, name);
    if (r == 0)
        r = parse_npy(path, name, data, (size_t)e.usize, out);
    free(inflated);
    free(bytes);
    return r;
}
