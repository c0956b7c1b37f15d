#include "tests/support/json_tree.h"

#include <stdlib.h>
#include <string.h>
#include "util/text_escape.h"

typedef struct parser {
    const char *at;
    int depth;
} parser;

#define JSON_MAX_DEPTH 64

static void skip_space(parser *p)
{
    while (*p->at == ' ' || *p->at == '\t' || *p->at == '\n' || *p->at == '\r')
        p->at++;
}

static int append(char **buf, size_t *len, size_t *cap, const char *s,
                  size_t n)
{
    if (*len + n + 1 > *cap) {
        size_t new_cap = (*cap + n + 16) * 2;
        char *grown = realloc(*buf, new_cap);
        if (!grown)
            return -1;
        *buf = grown;
        *cap = new_cap;
    }
    memcpy(*buf + *len, s, n);
    *len += n;
    (*buf)[*len] = '\0';
    return 0;
}

static int hex4(const char *s, unsigned *out)
{
    *out = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        unsigned v;
        if (c >= '0' && c <= '9') v = (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') v = (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v = (unsigned)(c - 'A' + 10);
        else return -1;
        *out = *out * 16 + v;
    }
    return 0;
}

static size_t encode_utf8(unsigned code, char out[4])
{
    if (code < 0x80) { out[0] = (char)code; return 1; }
    if (code < 0x800) {
        out[0] = (char)(0xC0 | (code >> 6));
        out[1] = (char)(0x80 | (code & 0x3F));
        return 2;
    }
    if (code < 0x10000) {
        out[0] = (char)(0xE0 | (code >> 12));
        out[1] = (char)(0x80 | ((code >> 6) & 0x3F));
        out[2] = (char)(0x80 | (code & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (code >> 18));
    out[1] = (char)(0x80 | ((code >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((code >> 6) & 0x3F));
    out[3] = (char)(0x80 | (code & 0x3F));
    return 4;
}

/* A string literal at p->at; returns the decoded bytes or NULL. */
static char *parse_string(parser *p)
{
    if (*p->at != '"')
        return NULL;
    p->at++;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    if (append(&buf, &len, &cap, "", 0) != 0)
        return NULL;
    for (;;) {
        unsigned char c = (unsigned char)*p->at;
        if (c == '"') {
            p->at++;
            return buf;
        }
        if (c < 0x20)
            break; /* control characters (and the end) must be escaped */
        if (c != '\\') {
            size_t n = dfg_utf8_sequence_length(p->at);
            if (n == 0 || append(&buf, &len, &cap, p->at, n) != 0)
                break;
            p->at += n;
            continue;
        }
        char e = p->at[1], out[4];
        const char *simple = strchr("\"\\/bfnrt", e);
        if (e && simple) {
            static const char decoded[] = "\"\\/\b\f\n\r\t";
            if (append(&buf, &len, &cap, &decoded[simple - "\"\\/bfnrt"], 1))
                break;
            p->at += 2;
            continue;
        }
        unsigned code;
        if (e != 'u' || hex4(p->at + 2, &code) != 0)
            break;
        p->at += 6;
        if (code >= 0xD800 && code <= 0xDBFF) {
            unsigned low;
            if (p->at[0] != '\\' || p->at[1] != 'u' ||
                hex4(p->at + 2, &low) != 0 || low < 0xDC00 || low > 0xDFFF)
                break;
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
            p->at += 6;
        } else if (code >= 0xDC00 && code <= 0xDFFF) {
            break;
        }
        if (append(&buf, &len, &cap, out, encode_utf8(code, out)) != 0)
            break;
    }
    free(buf);
    return NULL;
}

static int parse_number(parser *p, json_node *node)
{
    const char *start = p->at, *s = p->at;
    if (*s == '-')
        s++;
    if (*s == '0') {
        s++;
    } else if (*s >= '1' && *s <= '9') {
        while (*s >= '0' && *s <= '9')
            s++;
    } else {
        return -1;
    }
    if (*s == '.') {
        s++;
        if (!(*s >= '0' && *s <= '9'))
            return -1;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-')
            s++;
        if (!(*s >= '0' && *s <= '9'))
            return -1;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    node->type = JSON_NUMBER;
    node->text = strndup(start, (size_t)(s - start));
    if (!node->text)
        return -1;
    node->number = strtod(node->text, NULL);
    p->at = s;
    return 0;
}

static int parse_value(parser *p, json_node *node);

/* Members of an array or object up to the closing bracket. */
static int parse_children(parser *p, json_node *node, char close, int keyed)
{
    size_t cap = 0;
    p->at++;
    skip_space(p);
    if (*p->at == close) {
        p->at++;
        return 0;
    }
    for (;;) {
        if (node->n_children == cap) {
            cap = cap ? cap * 2 : 8;
            json_node *grown = realloc(node->children, cap * sizeof *grown);
            if (!grown)
                return -1;
            node->children = grown;
        }
        json_node *child = &node->children[node->n_children];
        memset(child, 0, sizeof *child);
        node->n_children++;
        skip_space(p);
        if (keyed) {
            child->key = parse_string(p);
            if (!child->key)
                return -1;
            skip_space(p);
            if (*p->at != ':')
                return -1;
            p->at++;
        }
        if (parse_value(p, child) != 0)
            return -1;
        skip_space(p);
        if (*p->at == ',') {
            p->at++;
            continue;
        }
        if (*p->at != close)
            return -1;
        p->at++;
        return 0;
    }
}

static int parse_value(parser *p, json_node *node)
{
    skip_space(p);
    if (++p->depth > JSON_MAX_DEPTH)
        return -1;
    int result = 0;
    switch (*p->at) {
    case '{':
        node->type = JSON_OBJECT;
        result = parse_children(p, node, '}', 1);
        break;
    case '[':
        node->type = JSON_ARRAY;
        result = parse_children(p, node, ']', 0);
        break;
    case '"':
        node->type = JSON_STRING;
        node->text = parse_string(p);
        result = node->text ? 0 : -1;
        break;
    default:
        if (strncmp(p->at, "null", 4) == 0) {
            node->type = JSON_NULL;
            p->at += 4;
        } else if (strncmp(p->at, "true", 4) == 0) {
            node->type = JSON_BOOL;
            node->boolean = 1;
            p->at += 4;
        } else if (strncmp(p->at, "false", 5) == 0) {
            node->type = JSON_BOOL;
            p->at += 5;
        } else {
            result = parse_number(p, node);
        }
    }
    p->depth--;
    return result;
}

static void free_children(json_node *node)
{
    for (size_t i = 0; i < node->n_children; i++)
        free_children(&node->children[i]);
    free(node->children);
    free(node->key);
    free(node->text);
}

json_node *json_parse(const char *text)
{
    json_node *root = calloc(1, sizeof *root);
    parser p = {.at = text};
    if (!root)
        return NULL;
    int result = parse_value(&p, root);
    skip_space(&p);
    if (result != 0 || *p.at != '\0') {
        json_free(root);
        return NULL;
    }
    return root;
}

void json_free(json_node *node)
{
    if (!node)
        return;
    free_children(node);
    free(node);
}

const json_node *json_get(const json_node *object, const char *key)
{
    if (!object || object->type != JSON_OBJECT)
        return NULL;
    for (size_t i = 0; i < object->n_children; i++)
        if (strcmp(object->children[i].key, key) == 0)
            return &object->children[i];
    return NULL;
}

int json_is_integer(const json_node *node)
{
    return node && node->type == JSON_NUMBER &&
           strpbrk(node->text, ".eE") == NULL;
}

int64_t json_integer(const json_node *node)
{
    return strtoll(node->text, NULL, 10);
}
