/* A strict, minimal JSON parser for the tests: it checks that a report is
 * valid JSON (RFC 8259 grammar, valid UTF-8, no trailing text) and gives
 * a tree to query. Not part of the library. */
#ifndef DFG_TEST_JSON_TREE_H
#define DFG_TEST_JSON_TREE_H

#include <stddef.h>
#include <stdint.h>

typedef enum json_type {
    JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT
} json_type;

typedef struct json_node {
    json_type type;
    char *key;                 /* member name inside an object, else NULL */
    char *text;                /* string: decoded; number: as written */
    int boolean;
    double number;
    size_t n_children;
    struct json_node *children;
} json_node;

/* Parses text (NUL-terminated); NULL if it is not valid JSON. */
json_node *json_parse(const char *text);
void json_free(json_node *node);

/* The member `key` of an object, or NULL. */
const json_node *json_get(const json_node *object, const char *key);
/* 1 if a number is written as an integer (no fraction or exponent). */
int json_is_integer(const json_node *node);
/* The integer a number node spells, exactly. */
int64_t json_integer(const json_node *node);

#endif
